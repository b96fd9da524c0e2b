// segred/cuda/detail/segment_columns.cuh -- the segment pass over a device
// layout: a thread per segment and V consecutive columns.
//
// A unit is (segment s, columns [c, c + V)); units are numbered s * G + c / V
// with G = F / V vectors a row, and consecutive threads take consecutive
// units. A thread folds its unit's rows alone when the segment has at most
// `alone_rows` of them, V columns in one load, with no combining tree. At
// each row step a warp then reads whole rows of 32 / G consecutive segments
// (a contiguous stretch where G >= 32), and M * G threads are in flight.
// With `share` = 2 (rows of a power of two below 8 vectors), two threads G
// apart in one warp take a unit, each every other row, and combine by one
// shuffle.
// The warp per segment that this replaces (lanes across the rows of one
// segment, then a tree) walked its segments one after another, each behind
// its starts' load: H200, 2^26 floats in 32-row segments, 0.31-0.79 of a
// copy at widths 4 to 64, below torch's segment_reduce.
//
// A longer segment is reduced by the whole warp holding its first unit
// (warp_reduce_range: lanes across its rows or columns); a giant one is only
// listed, for the piece passes (reduce_kernels.cuh).
//
// One column (V = G = 1) of 16 rows or 64 bytes a segment on average or
// more takes the staged twin (segment_column_staged_kernel): each block's
// rows are copied into shared memory first, and the threads fold from
// there (column_stage.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../core/finalize.hpp"
#include "../../core/options.hpp"
#include "../../core/views.hpp"
#include "column_stage.cuh"
#include "launch.cuh"
#include "reduce_kernels.cuh"

namespace segred {
namespace cuda {
namespace detail {
inline namespace SEGRED_ABI_NS {

// V columns of `row` from column c: one 16-byte load where V says so.
template <int V, class T>
__device__ row_vector<V, T> load_columns(const rows_view<const T>& values, std::int64_t row, std::int64_t c) {
    if constexpr (V == 1) {
        return row_vector<1, T>{{values(row, c)}};
    } else {
        return load_row_vector<V>(values.data + row * values.width + c);
    }
}

// Whether a unit's V results can go out in 16-byte stores: V outputs fill
// whole stores, every unit's first column lies at a multiple of V (out's
// width is one) on 16-byte-aligned data, and each result is a plain store
// (no accumulate, no arg out beside it).
template <int V, class O, class R>
__device__ bool stores_in_vectors(const rows_view<O>& out, const options& opts) {
    if constexpr (V == 1 || (V * sizeof(O)) % 16 != 0) {
        return false;
    } else {
        const bool arg_out = R::has_arg && opts.arg_ptr != nullptr;
        return !opts.accumulate_into && !arg_out && out.width % V == 0 &&
               (reinterpret_cast<std::uintptr_t>(out.data) & 15) == 0;
    }
}

// Columns [c, c + V) of segment s, whose `rows` rows reduced to st. One
// 16-byte store for four floats: stored a column at a time, a warp's
// results reached each 32-byte sector in four partial writes (H200, 2^26
// floats at width 16 in one-row segments: 0.58 of a copy).
template <int V, class T, class O, class R, class S>
__device__ void write_unit(const R& r, const options& opts, const rows_view<O>& out, std::int64_t s, std::int64_t c,
                           const S (&st)[V], std::int64_t rows, bool vector_stores) {
    if constexpr (V > 1 && (V * sizeof(O)) % 16 == 0) {
        if (vector_stores) {
            O o[V];
            for (int j = 0; j < V; ++j)
                o[j] = rows == 0 ? segred::detail::empty_value<T, O>(r, opts)
                                 : segred::detail::finalized<O>(r, st[j], [&] { return rows; });
            uint4* to = reinterpret_cast<uint4*>(&out(s, c));
            for (int w = 0; w < static_cast<int>(V * sizeof(O) / 16); ++w) {
                uint4 raw;
                memcpy(&raw, reinterpret_cast<const char*>(o) + 16 * w, sizeof raw);
                to[w] = raw;
            }
            if (c == 0 && opts.counts_out) opts.counts_out[s] = rows;
            return;
        }
    }
    for (int j = 0; j < V; ++j) write_segment<T>(r, opts, out, s, c + j, st[j], rows);
}

// The pass itself, shared by the kernels below (they differ in their launch
// bounds, and Staged in where an alone thread reads its rows).
//
// Staged (one column, V = G = share = 1, no permutation): a block takes
// plan.steps * block_threads consecutive segments at a time (a tile), all
// its threads through every step. The rows of a tile's segments, from the
// start of its first to the end of its last, are copied into the dynamic
// shared memory (column_stage.cuh) where they fit plan.elems, while the
// threads read their starts; its alone threads then fold from there. A
// tile whose segments hold more rows (as around a giant) reads device
// memory as the unstaged pass does. (Two stages, the next tile's copies in
// flight while one folds, ran 0.75-0.95x: half the blocks an SM.)
template <bool Staged, int V, class T, class O, class R, class S, class Starts>
__device__ __forceinline__ void segment_columns_pass(rows_view<const T> values, Starts starts, const std::int64_t* perm,
                                                     std::int64_t M, rows_view<O> out, R r, options opts, int share,
                                                     std::int64_t alone_rows, giant_entry* giant_list,
                                                     unsigned long long* giant_count, column_stage_plan plan) {
    __shared__ S lanes[warps_per_block][32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const std::int64_t F = out.width, G = F / V, GQ = G * share, threads = M * GQ;
    // Below 2^32 threads (all but the largest calls) a 32-bit division.
    const bool narrow = threads <= std::int64_t(0xffffffffu);
    const bool vector_stores = stores_in_vectors<V, O, R>(out, opts);
    // Unit u: its starts read, then before_fold(), its fold (from `stage`
    // where its tile's rows hold the segment), its results written, and the
    // longer segments of its warp reduced by the warp.
    auto unit = [&](std::int64_t u, column_stage_span tile_rows, const T* stage, auto before_fold) {
        const bool valid = u < threads;
        std::int64_t s = 0;
        if (valid)
            s = narrow ? static_cast<std::int64_t>(static_cast<std::uint32_t>(u) / static_cast<std::uint32_t>(GQ))
                       : u / GQ;
        // This thread's place among its segment's GQ: q * G + its vector.
        const int at = valid ? static_cast<int>(u - s * GQ) : 0;
        const int q = share == 1 ? 0 : at / static_cast<int>(G);
        const std::int64_t c = static_cast<std::int64_t>(at - q * static_cast<int>(G)) * V;
        const std::int64_t b = valid ? starts(s) : 0, e = valid ? starts(s + 1) : 0, len = e - b;
        const bool alone = valid && len <= alone_rows;
        S st[V];
        for (int j = 0; j < V; ++j) st[j] = r.template init<T>();
        before_fold();
        bool staged_here = false;
        if constexpr (Staged) {
            staged_here = tile_rows.staged && alone && b >= tile_rows.r0 && e <= tile_rows.r1;
            if (staged_here) {
                const int k0 = static_cast<int>(b - tile_rows.first), k1 = static_cast<int>(e - tile_rows.first);
                fold_column_stage(stage, k0, k1, [&](const T& x, int k) { r.update(st[0], x, tile_rows.first + k); });
            }
        }
        if (alone && !staged_here) {
#pragma unroll 4
            for (std::int64_t k = b + q; k < e; k += share) {
                const std::int64_t row = position_row(perm, k);
                const row_vector<V, T> x = load_columns<V>(values, row, c);
                for (int j = 0; j < V; ++j) r.update(st[j], x.e[j], row);
            }
        }
        if constexpr (std::is_trivially_copyable<S>::value) {
            // The share's lanes of one vector lie G apart; a fixed tree.
            for (int half = share / 2; half >= 1; half /= 2) {
                for (int j = 0; j < V; ++j) {
                    const S other = shuffle_down(st[j], half * static_cast<int>(G));
                    if (q < half) r.combine(st[j], other);
                }
            }
        }
        if (alone && q == 0) write_unit<V, T>(r, opts, out, s, c, st, len, vector_stores);
        const bool first = valid && c == 0 && q == 0;
        const std::int64_t giant = giant_rows(F);
        if (first && len > giant) list_giant(giant_list, giant_count, s, b, e);
        unsigned together = __ballot_sync(0xffffffffu, first && len > alone_rows && len <= giant);
        while (together) {
            const int j = __ffs(together) - 1;
            together &= together - 1;
            const std::int64_t sj = __shfl_sync(0xffffffffu, s, j);
            const std::int64_t bj = __shfl_sync(0xffffffffu, b, j), ej = __shfl_sync(0xffffffffu, e, j);
            warp_reduce_range<T>(values, perm, bj, ej, F, r, lanes[warp], [&](std::int64_t f, const S& x) {
                write_segment<T>(r, opts, out, sj, f, x, ej - bj);
            });
        }
    };
    if constexpr (!Staged) {
        const std::int64_t stride = std::int64_t(gridDim.x) * block_threads;
        for (std::int64_t base = (std::int64_t(blockIdx.x) * warps_per_block + warp) * 32; base < threads;
             base += stride)
            unit(base + lane, column_stage_span{}, nullptr, [] {});
    } else {
        static_assert(V == 1, "one column a thread");
        extern __shared__ unsigned long long column_stage_words[];
        __shared__ std::int64_t span[2];
        const T* stage = reinterpret_cast<const T*>(column_stage_words);
        const std::int64_t tile_units = std::int64_t(plan.steps) * block_threads;
        const std::int64_t stride = std::int64_t(gridDim.x) * tile_units;
        for (std::int64_t tile = std::int64_t(blockIdx.x) * tile_units; tile < threads; tile += stride) {
            const std::int64_t end = tile + tile_units < threads ? tile + tile_units : threads;
            const column_stage_span rows = start_column_stage(values.data, values.n, starts, tile, end, plan.elems,
                                                              span, reinterpret_cast<T*>(column_stage_words));
            for (int step = 0; step < plan.steps; ++step) {
                unit(tile + step * block_threads + threadIdx.x, rows, stage, [&] {
                    if (step == 0) {  // the tile's rows in, behind its first step's starts
                        __pipeline_wait_prior(0);
                        __syncthreads();
                    }
                });
            }
        }
    }
}

#define SEGRED_SEGMENT_COLUMNS_PARAMS                                                                           \
    rows_view<const T> values, Starts starts, const std::int64_t* perm, std::int64_t M, rows_view<O> out, R r, \
        options opts, int share, std::int64_t alone_rows, giant_entry *giant_list, unsigned long long *giant_count
#define SEGRED_SEGMENT_COLUMNS_ARGS \
    values, starts, perm, M, out, r, opts, share, alone_rows, giant_list, giant_count

// Four blocks an SM, at most 64 registers, stated: with no minimum, ptxas
// held the double sum of one column (V = 1) to 48 registers and spilled 32
// bytes (0.89-0.91x), once the staged pass came beside it.
constexpr int unit_blocks = 4;

template <int V, class T, class O, class R, class S, class Starts>
SEGRED_KERNEL void __launch_bounds__(block_threads, unit_blocks) segment_columns_kernel(SEGRED_SEGMENT_COLUMNS_PARAMS) {
    segment_columns_pass<false, V, T, O, R, S>(SEGRED_SEGMENT_COLUMNS_ARGS, column_stage_plan{0, 1});
}

// Units of one value a thread (V = 1) whose state is 4 bytes or less (sums
// of float, half and bfloat16, float means as sums; min and max of float),
// held to 40 registers
// so that six blocks an SM are resident instead of four: their loads wait
// behind the starts' loads, and more threads in flight hide that. H200,
// 2^26 floats in one column from int32 offsets, sums: 1.07-1.12x on fixed
// 8- to 24-row segments, 1.13-1.22x on lengths uniform in 0..16 to 0..64
// and 20 giants among 8..40 rows, but 0.93x on fixed 32-row ones (0.97x
// at 48); max 1.05-1.14x everywhere; rows of 3 floats in 4-row segments
// 1.15-1.18x. Larger states spill at 40 registers and keep
// segment_columns_kernel: argmax, argmin and double sums 0.86-0.92x on
// some fixed lengths (1.1-1.26x on uniform ones), and means with their
// sum-and-count state 0.86-0.99x (hence means as sums, reduce_layout.cuh).
constexpr int unit_narrow_state_blocks = 6;

template <int V, class T, class O, class R, class S, class Starts>
SEGRED_KERNEL void __launch_bounds__(block_threads, unit_narrow_state_blocks)
    segment_columns_narrow_state_kernel(SEGRED_SEGMENT_COLUMNS_PARAMS) {
    segment_columns_pass<false, V, T, O, R, S>(SEGRED_SEGMENT_COLUMNS_ARGS, column_stage_plan{0, 1});
}

// One column with its block's rows staged (column_stage.cuh), one thread a
// segment, plan.elems rows of dynamic shared memory a block. Held to four
// blocks an SM, as segment_columns_kernel: with no minimum ptxas took 40 to
// 48 registers and spilled for max and argmax (fixed 24- to 48-row
// segments 1.06-1.09x faster with the bound, H200).
template <class T, class O, class R, class S, class Starts>
SEGRED_KERNEL void __launch_bounds__(block_threads, unit_blocks)
    segment_column_staged_kernel(rows_view<const T> values, Starts starts, std::int64_t M, rows_view<O> out, R r,
                                 options opts, std::int64_t alone_rows, giant_entry* giant_list,
                                 unsigned long long* giant_count, column_stage_plan plan) {
    segment_columns_pass<true, 1, T, O, R, S>(values, starts, nullptr, M, out, r, opts, 1, alone_rows, giant_list,
                                              giant_count, plan);
}

#undef SEGRED_SEGMENT_COLUMNS_PARAMS
#undef SEGRED_SEGMENT_COLUMNS_ARGS

} // namespace SEGRED_ABI_NS
} // namespace detail
} // namespace cuda
} // namespace segred
