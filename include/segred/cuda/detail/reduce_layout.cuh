// segred/cuda/detail/reduce_layout.cuh -- host side of the layout
// reduction: launches the segment pass and, for giant segments, the piece
// and combine passes. No synchronization: the giant list and its size stay on
// the device, and grids are sized from bounds known on the host.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "launch.cuh"
#include "layout.cuh"
#include "reduce_kernels.cuh"
#include "segment_columns.cuh"
#include "temp_buffer.cuh"

namespace segred {
namespace cuda {
namespace detail {

// Which pass reduces the segments, from their average length on the host
// (no read-back): a thread per unit (segment_columns_kernel, or its
// narrow-state twin for one value a thread, or for one column its staged
// twin, column_stage_plan_for) where segments are short, a
// warp per segment (warp_segments_kernel) where the average
// segment holds unit_max_vectors vectors or more (G a row: each lane of a
// warp then gets several), or unit_max_avg_rows rows or more whatever its
// width (a warp of units then walks the long segments of its 32 / G units
// one after another). H200, 2^26 floats, the public call: 16 columns (G = 4)
// in 32-row segments 93 against 101 us; 64 columns (G = 16) 96.5 against
// 90.7 us with units, but in 4-row segments 115 against 170; the kernel
// alone, 16 columns in 1024-row segments 154 us with units against 76. The
// arg forms keep V (value, row) states a thread and take units below fewer
// vectors (16 floats a row in 32-row segments: 148 against 134 us; 12
// floats 142 against 171).
constexpr std::int64_t unit_max_avg_rows = 64;
constexpr std::int64_t unit_max_vectors = 192;
constexpr std::int64_t unit_max_arg_vectors = 112;
// Rows up to which a unit's thread folds its segment alone; longer
// segments take the whole warp (H200: 32 to 1024 rows alike on fixed
// lengths; 0.75x with 16 on 0..64-row segments).
constexpr std::int64_t unit_alone_rows = 128;
constexpr std::int64_t unit_share_rows = 4;
// One column takes units (not the tile reduction) from 6 rows a segment on
// average, up to column_unit_max_avg_rows (below); a thread alone below 16
// (H200, 2^26 floats from int32 offsets: 8 rows 132 us against 164 tiled;
// 12 rows 109 against 271; uniform in 0..32 / 0..128 rows 156 / 157 against
// 313 / 223; two threads a unit at 8 rows 230 us), two from 16 (32 rows:
// 151 against 272 alone, where the segments' 128-byte strides meet in the
// caches).
// Since the tiles of 2- to 16-row segments, the units still win from 6 rows
// (H100, offsets and lengths, fp32 / fp64 / fp16 sums and argmax: fixed 6
// and 7 rows 1.11-1.25x, uniform 3..11 rows 1.10-1.33x, 0..14 1.05-1.14x,
// 0..12 0.97-1.04x) but not at 4 (0.88-1.06x).
constexpr std::int64_t unit_min_avg_rows_one_column = 6;
// One column from starts in place (no permutation) takes units below 80
// rows a segment on average, the arg forms below 72, where rows of several
// columns stop at unit_max_avg_rows. Past 64 rows the tiles of computed keys
// were taking them, and within the segment pass a warp a segment (H100,
// offsets and lengths, units against those: fp32 / fp64 / fp16 sums over
// uniform 0..128 rows 1.22-2.21x, 0..136 1.15-1.50x, 32..112 and 48..96
// 1.21-2.22x, fixed 64 to 76 rows 1.07-2.18x; argmax over 32..112 and
// 48..96 rows 1.44-1.58x, 0..128 1.31-1.35x, but 0..136 0.97-0.99x and
// 0..144 to 0..160 0.78-0.85x; sums over 0..160 rows 0.96-1.09x).
constexpr std::int64_t unit_max_avg_rows_one_column = 80;
constexpr std::int64_t unit_max_avg_rows_arg_one_column = 72;
template <class R>
constexpr std::int64_t column_unit_max_avg_rows() {
    return R::has_arg ? unit_max_avg_rows_arg_one_column : unit_max_avg_rows_one_column;
}
constexpr std::int64_t unit_share_rows_one_column = 16;
// The arg forms of one column take two threads a unit only from 128 bytes
// of values a segment on average (32 floats, 16 doubles), where a thread
// alone meets the strides' collisions: H200, 2^26 values from int32
// offsets, float argmax over 32-row segments 169 us against 281 alone, 48
// rows 149 against 168; double argmin over 16 and 32 rows 1.12x and 1.19x;
// but float argmax over 16 and 24 rows 0.81x and 0.77x (their (value, row)
// states cost a 16-byte shuffle).
constexpr std::int64_t unit_share_bytes_arg_one_column = 128;

// One column's units with their block's rows staged (column_stage.cuh):
// tiles of at least stage_tile_bytes of values on average (up to
// stage_max_steps steps of block_threads segments), with room for 5/4 of
// their average rows, and not more than stage_max_bytes a block. H200, 2^26
// values from int32 offsets, against the units reading device memory:
// float sums over fixed 16- to 48-row segments 1.09-1.63x (32 rows: 0.66
// of a copy), uniform 0..64 rows 1.11x, argmax there 1.80x, double sums
// 1.1-1.35x; tiles of 8 KiB (one step at 8 rows) 0.79-0.93x, and of 64 KiB
// 0.67-0.95x.
constexpr std::size_t stage_tile_bytes = 32 * 1024;
constexpr int stage_max_steps = 4;
constexpr std::size_t stage_max_bytes = 96 * 1024;
// Staged from 16 rows or 64 bytes a segment on average, whichever is fewer
// rows; below, a thread reads its few rows as fast from device memory.
constexpr std::int64_t stage_min_avg_rows = 16;
constexpr std::int64_t stage_min_avg_bytes = 64;

// The stage of n rows in M segments; no rows where it would take more than
// stage_max_bytes.
template <class T>
column_stage_plan column_stage_plan_for(std::int64_t n, std::int64_t M) {
    using C = column_stage<T>;
    const std::int64_t avg = (n + M - 1) / M;
    const std::int64_t min_avg = std::min<std::int64_t>(stage_min_avg_rows, stage_min_avg_bytes / sizeof(T));
    if (avg < min_avg || avg > std::int64_t(stage_max_bytes / sizeof(T)) / block_threads) return {0, 1};
    const std::int64_t step_rows = std::max<std::int64_t>(avg, 1) * block_threads;
    const std::int64_t tile_rows = std::int64_t(stage_tile_bytes / sizeof(T));
    const std::int64_t steps = std::min<std::int64_t>(stage_max_steps, std::max<std::int64_t>(1, tile_rows / step_rows));
    const std::int64_t wanted = step_rows * steps * 5 / 4 + C::group;
    const std::int64_t elems = (wanted + C::group - 1) / C::group * C::group;
    if (C::bytes(elems) > stage_max_bytes) return {0, 1};
    return {elems, static_cast<int>(steps)};
}

// Whether n rows of one column in M segments (starts read in place, or
// made monotone) go to units.
template <class R>
bool column_units_apply(std::int64_t n, std::int64_t M) {
    return M > 0 && n >= M * unit_min_avg_rows_one_column && n < M * column_unit_max_avg_rows<R>();
}

// Whether one column of fixed segments of `size` rows of T goes to units
// instead of the tiles of computed keys: no starts to read, so each thread
// loads its segment's rows at once. H200, 2^26 values, the public call,
// units against tiles: float sums, max and means over 3, 6, 8, 12 and 24
// rows 1.13-1.77x (argmax 1.33-1.82x), over 2 rows 1.10-1.21x; double sums
// 1.28-1.68x at every size from 2 to 32; fp16 sums over 3 to 12 and 24
// rows 1.13-2.09x. The tiles keep what they do best: power-of-two sizes
// from 16 rows of values of at most 4 bytes (chunked tiles, a 16-byte load
// for several rows: units 0.96-1.07x for floats, 0.72-0.73x for fp16),
// 4-row float segments (0.94-0.96x) and 2-row fp16 ones (0.76x).
template <class T>
constexpr bool fixed_units_apply(std::int64_t size) {
    if (size < 2 || size >= unit_max_avg_rows) return false;
    const bool power_of_two = (size & (size - 1)) == 0;
    if (sizeof(T) <= 4 && power_of_two && size >= 16) return false;
    return !(sizeof(T) == 4 && size == 4) && !(sizeof(T) == 2 && size == 2);
}

// The pass over every segment: listed giants aside, each segment's result
// is written.
template <class T, class O, class R, class S, class Starts>
void launch_segment_pass(const par_t& p, rows_view<const T> values, Starts starts, const std::int64_t* perm,
                         std::int64_t M, rows_view<O> out, const R& r, const options& opts, giant_entry* giant_list,
                         unsigned long long* giant_count) {
    const std::int64_t F = out.width, n = values.n;
    constexpr int V = vector_elems<T>;
    const bool vectors = V > 1 && rows_in_vectors(values, F);
    const std::int64_t G = vectors ? F / V : F;
    const std::int64_t max_vectors = R::has_arg ? unit_max_arg_vectors : unit_max_vectors;
    const std::int64_t max_avg_rows =
        F == 1 && perm == nullptr ? column_unit_max_avg_rows<R>() : unit_max_avg_rows;
    const bool units = n <= M * max_avg_rows && n * G < M * max_vectors;
    if (!units) {
        auto launch_warps = [&](auto contiguous) {  // std::true_type or std::false_type
            warp_segments_kernel<decltype(contiguous)::value, T, O, R, S>
                <<<grid_for(M * 32), block_threads, 0, p.stream>>>(values, starts, perm, M, out, r, opts,
                                                                   giant_list, giant_count);
        };
        if constexpr (V > 1) {
            if (one_contiguous_column(values, perm, F)) return launch_warps(std::true_type{});
        }
        return launch_warps(std::false_type{});
    }
    // Two threads to a unit, each taking every other row, where rows are
    // under 8 vectors wide and segments average 8 rows or more: a step then
    // reads two rows of each segment side by side (H200, 2^26 floats,
    // 4 columns in 32-row segments 92 against 129 us; 16 columns 1.02-1.06x;
    // 8 threads to a unit 99 us). G must be a power of two, so that a
    // segment's 2G threads never straddle two warps (their shuffle stays in
    // one). Not for the arg forms of several columns (argmax 0.64-0.85x),
    // nor for states the combining shuffles cannot move.
    const bool pairs = G * 2 <= 8 && (G & (G - 1)) == 0;
    const std::int64_t share_rows = F > 1        ? 2 * unit_share_rows
                                    : R::has_arg ? unit_share_bytes_arg_one_column / std::int64_t(sizeof(T))
                                                 : unit_share_rows_one_column;
    const int share =
        (!R::has_arg || F == 1) && std::is_trivially_copyable<S>::value && pairs && n >= M * share_rows ? 2 : 1;
    const unsigned grid = grid_for((M * G * share + 31) / 32 * 32);
    if constexpr (V > 1) {
        if (vectors) {
            segment_columns_kernel<V, T, O, R, S><<<grid, block_threads, 0, p.stream>>>(
                values, starts, perm, M, out, r, opts, share, unit_alone_rows, giant_list, giant_count);
            return;
        }
    }
    if constexpr (column_stage<T>::applies) {
        const bool aligned = reinterpret_cast<std::uintptr_t>(values.data) % column_stage<T>::align == 0;
        const column_stage_plan plan =
            F == 1 && perm == nullptr && aligned ? column_stage_plan_for<T>(n, M) : column_stage_plan{0, 1};
        const auto kernel = segment_column_staged_kernel<T, O, R, S, Starts>;
        const std::size_t bytes = column_stage<T>::bytes(plan.elems);
        if (plan.elems > 0 && bytes <= private_shared_limit(kernel, true)) {
            allow_dynamic_shared(kernel, bytes);
            const std::int64_t tiles = (M + plan.steps * block_threads - 1) / (plan.steps * block_threads);
            kernel<<<grid_for(tiles, 1), block_threads, bytes, p.stream>>>(values, starts, M, out, r, opts,
                                                                           unit_alone_rows, giant_list, giant_count,
                                                                           plan);
            return;
        }
    }
    if constexpr (sizeof(S) <= 4) {
        segment_columns_narrow_state_kernel<1, T, O, R, S><<<grid, block_threads, 0, p.stream>>>(
            values, starts, perm, M, out, r, opts, share, unit_alone_rows, giant_list, giant_count);
    } else {
        segment_columns_kernel<1, T, O, R, S><<<grid, block_threads, 0, p.stream>>>(
            values, starts, perm, M, out, r, opts, share, unit_alone_rows, giant_list, giant_count);
    }
}

// Blocks of the giant pieces pass: four an SM at most, one wave that
// grid-strides over the pieces. Each block must be scheduled to find the
// list empty where no segment was giant (H200, 2^22 rows of 16 floats: 1 us
// of 82 against sixteen an SM; as fast on giants, one an SM 1.2x slower).
inline unsigned pieces_grid(std::int64_t max_pieces) {
    const unsigned wave = static_cast<unsigned>(device_attribute(cudaDevAttrMultiProcessorCount)) * 4;
    return std::min(grid_for(max_pieces * 32), wave);
}

// Reduce M segments given by `starts` (array_starts, offset_starts or
// fixed_starts) over positions, position k standing for row perm[k] (or k
// when perm is null). longest: a bound on the longest segment known on the
// host (fixed segments' size), else the rows; the piece passes are launched
// only where it lets a segment be giant.
template <class T, class O, class R, class Starts>
void reduce_positions_as(const par_t& p, rows_view<const T> values, Starts starts, const std::int64_t* perm,
                         std::int64_t M, rows_view<O> out, const R& r, const options& opts, std::int64_t longest) {
    using S = state_t<R, T>;
    if (M == 0) return;
    const std::int64_t F = out.width, n = values.n;
    // Positions never exceed the rows, which bounds the giant segments.
    const std::int64_t max_giants = n / giant_rows(F) + 1;
    if (longest < 0 || longest > n) longest = n;
    temp_buffer<giant_entry> giant_list(p, max_giants);
    temp_buffer<std::int64_t> piece_offset(p, max_giants + 1);
    temp_buffer<unsigned long long> giant_count(p, 1);
    SEGRED_CUDA_CHECK(cudaMemsetAsync(giant_count.get(), 0, sizeof(unsigned long long), p.stream));
    launch_segment_pass<T, O, R, S>(p, values, starts, perm, M, out, r, opts, giant_list.get(), giant_count.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    if (longest <= giant_rows(F)) return;  // no segment can be giant

    const std::int64_t P = piece_rows(F);
    const std::int64_t max_pieces = n / P + max_giants;
    temp_buffer<S> partial(p, max_pieces * F);
    // Each pass launched as a dependent of the one before (launch_dependent):
    // where none was listed, they only find the count at 0.
    launch_dependent(p, 1, block_threads, giant_plan_kernel<>, giant_list.get(), giant_count.get(), P,
                     piece_offset.get());
    launch_dependent(p, pieces_grid(max_pieces), block_threads, giant_pieces_kernel<T, R, S>, values, perm, F, r,
                     giant_list.get(), giant_count.get(), piece_offset.get(), P, partial.get());
    launch_dependent(p, grid_for(max_giants, 1), block_threads, giant_combine_kernel<T, O, R, S>, out, r, opts,
                     giant_list.get(), giant_count.get(), piece_offset.get(), partial.get());
}

// Every writer of these passes is given its segment's positions, so a mean
// goes as a sum over them (with_row_divided_mean): one value of state, which
// takes the narrow-state units (H200, 2^26 floats in one column from int32
// offsets: 1.05-1.16x its sum-and-count state on fixed 8- to 24-row and
// uniform lengths, 0.93-0.98x on fixed 32 and 48 rows).
template <class T, class O, class R, class Starts>
void reduce_positions(const par_t& p, rows_view<const T> values, Starts starts, const std::int64_t* perm,
                      std::int64_t M, rows_view<O> out, const R& r, const options& opts,
                      std::int64_t longest = -1) {
    with_row_divided_mean(
        r, [&](const auto& rr) { reduce_positions_as(p, values, starts, perm, M, out, rr, opts, longest); });
}

template <class T, class O, class R>
void reduce_layout(const par_t& p, rows_view<const T> values, const device_layout& L, rows_view<O> out, const R& r,
                   const options& opts) {
    reduce_positions(p, values, array_starts{L.starts}, L.perm, L.M, out, r, opts);
}

} // namespace detail
} // namespace cuda
} // namespace segred
