// segred/cuda/detail/tile_sort_reduce.cuh -- the deterministic path for sums
// and means of one column over unsorted ids into segments whose totals fit
// in one block's shared memory (past small_m_reduce.cuh's few segments).
//
// The device-wide sort (sort_reduce.cuh) moves every row through memory
// several times; here each row is read once. Each block takes a fixed run of
// tiles of 4096 rows; it sorts each tile by id in shared memory (cub's block
// radix sort, on as few key bits as M needs), sums each tile's run of equal
// ids by a block scan of fixed shape, and adds each run's total into
// block-private totals in shared memory: a sorted tile holds each id in one
// run, so no two threads add to the same total and the tiles add in their
// order. The blocks' totals are then combined, per segment, in block order
// by a second kernel, and the shared finish kernel writes the outputs. Tile
// and grid shapes depend on n only, so the bits are the same on every run
// (and on every device).
#pragma once

#include <cuda_runtime.h>

#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include <cstdint>
#include <type_traits>

#include "../../core/numeric.hpp"
#include "../../core/options.hpp"
#include "../../core/views.hpp"
#include "launch.cuh"
#include "scatter_kernels.cuh"
#include "temp_buffer.cuh"

namespace segred {
namespace cuda {
namespace detail {

constexpr int tile_sort_threads = 256;
constexpr int tile_sort_items = 16;  // rows a thread, a tile
constexpr std::int64_t tile_sort_rows = std::int64_t(tile_sort_threads) * tile_sort_items;
constexpr std::int64_t tile_sort_max_blocks = 256;  // bounds the blocks' partial totals to 256 * M
// Bits a radix pass: 5 sorts 15-bit keys in three passes where cub's
// default 4 takes four (H200, 2^26 rows into 16384 sums: 789 GB/s against
// 685; 6 bits 688, 512 threads of 8 rows 588).
constexpr int tile_sort_radix_bits = 5;

// Ids sort as 16-bit keys; a tile's rows past n take the key M, which sorts
// last and is skipped, so M itself must be a key.
constexpr std::int64_t tile_sort_max_segments = 65535;

// The run still open at a thread's end: its total and rows, and whether it
// started within the thread (head) or continues an earlier thread's.
template <class A>
struct open_run {
    A sum;
    unsigned rows;
    bool head;
};

// The segmented scan's operator: a run that starts in b discards a's.
struct join_open_runs {
    template <class X>
    __device__ X operator()(const X& a, const X& b) const {
        return b.head ? b : X{a.sum + b.sum, a.rows + b.rows, a.head};
    }
};

inline namespace SEGRED_ABI_NS {

// Block b folds tiles [b * tiles_per_block, (b + 1) * tiles_per_block) into
// part_sum / part_count [b * M + s]. ids are in [0, M) (checked or
// promised); end_bit: key bits that hold every id and M.
//
// claimed (null: every row of every tile) says, per tile, what
// tile_claim_reduce.cuh left to this kernel: 0, nothing; 1 + c, the rows
// past each id's first c in the sort's order (the rows the claim's rounds
// did not add). Then used[b] says, on entry, whether the claim's block b
// left totals in row b (the same tiles as this block b), which this block's
// are added to, in that order; on exit, whether row b holds totals. A block
// with no rows to add leaves both as they are.
template <class T, class A, class I, bool Counted>
SEGRED_KERNEL void __launch_bounds__(tile_sort_threads, 2)
    tile_sort_fold_kernel(const T* values, const I* ids, std::int64_t n, int M, int end_bit,
                          std::int64_t tiles_per_block, const unsigned char* claimed, A* part_sum,
                          unsigned* part_count, unsigned char* used) {
    using key = unsigned short;
    using block_sort = cub::BlockRadixSort<key, tile_sort_threads, tile_sort_items, A, tile_sort_radix_bits>;
    using block_scan = cub::BlockScan<open_run<A>, tile_sort_threads>;
    __shared__ union {
        typename block_sort::TempStorage sort;
        typename block_scan::TempStorage scan;
    } temp;
    __shared__ key first_key[tile_sort_threads], last_key[tile_sort_threads];
    extern __shared__ unsigned long long tile_sort_shared[];
    A* sums = reinterpret_cast<A*>(tile_sort_shared);               // [M]
    unsigned* counts = reinterpret_cast<unsigned*>(sums + M);       // [M] when Counted; A is 4 or 8 bytes
    const int t = threadIdx.x;
    for (int s = t; s < M; s += tile_sort_threads) {
        sums[s] = A(0);
        if (Counted) counts[s] = 0;
    }
    const std::int64_t tiles = (n + tile_sort_rows - 1) / tile_sort_rows;
    const std::int64_t first = std::int64_t(blockIdx.x) * tiles_per_block;
    const std::int64_t last = first + tiles_per_block < tiles ? first + tiles_per_block : tiles;
    auto add_run = [&](key k, A sum, unsigned rows) {
        if (k >= M) return;  // rows past n
        sums[k] += sum;
        if (Counted) counts[k] += rows;
    };
    bool any = false;
    for (std::int64_t tile = first; tile < last; ++tile) {
        if (claimed && claimed[tile] == 0) continue;
        const unsigned skip = claimed ? claimed[tile] - 1u : 0u;  // rows of each id already added
        any = true;
        // Striped loads (coalesced): thread t's item j is row t + j * threads
        // of the tile. The sort is stable in this fixed order of items, not
        // in row order: the same on every run, which is all that is needed.
        key k[tile_sort_items];
        A v[tile_sort_items];
        const std::int64_t base = tile * tile_sort_rows + t;
#pragma unroll
        for (int j = 0; j < tile_sort_items; ++j) {
            const std::int64_t row = base + std::int64_t(j) * tile_sort_threads;
            k[j] = row < n ? static_cast<key>(ids[row]) : static_cast<key>(M);
            v[j] = row < n ? segred::detail::convert<A>(values[row]) : A(0);
        }
        __syncthreads();  // the previous tile's scan (sharing temp) and adds are done; the totals are zeroed
        block_sort(temp.sort).Sort(k, v, 0, end_bit);  // blocked: thread t holds sorted items t * items, ...
        first_key[t] = k[0];
        last_key[t] = k[tile_sort_items - 1];
        __syncthreads();
        const bool head0 = t == 0 || k[0] != last_key[t - 1];
        open_run<A> mine{A(0), 0, false};
        unsigned take = ~0u;  // bit j: item j's row is added here
        if (skip > 0) {
            // An item's place in its run (the sort is stable, so the claim's
            // order): a scan of the runs' rows alone. The first `skip` of
            // each run add nothing: no value, no row.
#pragma unroll
            for (int j = 0; j < tile_sort_items; ++j) {
                if (j == 0 ? head0 : k[j] != k[j - 1]) mine = {A(0), 0, true};
                ++mine.rows;
            }
            open_run<A> rows_before;
            block_scan(temp.scan).ExclusiveScan(mine, rows_before, join_open_runs{});
            unsigned place = head0 ? 0u : rows_before.rows;
#pragma unroll
            for (int j = 0; j < tile_sort_items; ++j) {
                if (j > 0 && k[j] != k[j - 1]) place = 0;
                if (place++ < skip) {
                    take &= ~(1u << j);
                    v[j] = A(0);
                }
            }
            mine = {A(0), 0, false};
            __syncthreads();  // temp.scan again
        }
#pragma unroll
        for (int j = 0; j < tile_sort_items; ++j) {
            if (j == 0 ? head0 : k[j] != k[j - 1]) mine = {A(0), 0, true};
            mine.sum += v[j];
            mine.rows += take >> j & 1u;
        }
        open_run<A> before;
        block_scan(temp.scan).ExclusiveScan(mine, before, join_open_runs{});
        // Each run is added once, by the thread where it ends.
        A sum = head0 ? A(0) : before.sum;
        unsigned rows = head0 ? 0u : before.rows;
#pragma unroll
        for (int j = 0; j < tile_sort_items; ++j) {
            if (j > 0 && k[j] != k[j - 1]) {
                add_run(k[j - 1], sum, rows);
                sum = A(0);
                rows = 0;
            }
            sum += v[j];
            rows += take >> j & 1u;
        }
        if (t == tile_sort_threads - 1 || first_key[t + 1] != k[tile_sort_items - 1])
            add_run(k[tile_sort_items - 1], sum, rows);
    }
    if (claimed && !any) return;  // block-uniform
    const bool add = claimed && used[blockIdx.x];
    __syncthreads();  // every thread has read used[b]
    A* row_sum = part_sum + std::int64_t(blockIdx.x) * M;
    unsigned* row_count = Counted ? part_count + std::int64_t(blockIdx.x) * M : nullptr;
    for (int s = t; s < M; s += tile_sort_threads) {
        row_sum[s] = add ? row_sum[s] + sums[s] : sums[s];
        if (Counted) row_count[s] = add ? row_count[s] + counts[s] : counts[s];
    }
    if (claimed && t == 0) used[blockIdx.x] = 1;
}

// Segment s's total over the fold blocks, added in block order (thread s
// alone: the order is fixed, and neighbouring threads read neighbouring
// segments, so each block's partials are read coalesced). used (null: all)
// says which blocks wrote totals.
template <class A, bool Counted>
SEGRED_KERNEL void tile_sort_combine_kernel(const A* part_sum, const unsigned* part_count, std::int64_t blocks,
                                            const unsigned char* used, std::int64_t M, A* acc,
                                            unsigned long long* counts) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < M; s += stride) {
        A a = A(0);
        unsigned long long c = 0;
        for (std::int64_t b = 0; b < blocks; ++b) {
            if (used && !used[b]) continue;
            a += part_sum[b * M + s];
            if (Counted) c += part_count[b * M + s];
        }
        acc[s] = a;
        if (Counted) counts[s] = c;
    }
}

} // namespace SEGRED_ABI_NS

// Shared memory for the block-private totals of M segments.
template <class A>
std::size_t tile_sort_shared(std::int64_t M, bool counted) {
    return static_cast<std::size_t>(M) * (sizeof(A) + (counted ? sizeof(unsigned) : 0));
}

// Whether the sorted-tile path takes these (one column, deterministic: the
// caller checks): sum or mean, M below the 16-bit keys' limit, and the
// totals within what a block can opt into.
template <class T, class I, class R>
bool tile_sort_applies(std::int64_t M, const options& opts) {
    using A = segred::detail::accum_t<T>;
    constexpr bool sums = std::is_same<R, segred::sum>::value || std::is_same<R, segred::mean>::value;
    if (!sums || M <= 0 || M > tile_sort_max_segments) return false;
    const bool counted = !sum_needs_no_counts<R>(opts);
    const std::size_t limit =
        counted ? private_shared_limit(tile_sort_fold_kernel<T, A, I, true>, true)
                : private_shared_limit(tile_sort_fold_kernel<T, A, I, false>, true);
    return tile_sort_shared<A>(M, counted) <= limit;
}

// A fixed run of tiles for each of at most tile_sort_max_blocks blocks: a
// function of n (and the tile) only, so the blocks' totals, and the order in
// which they are combined, are the same on every run and device.
struct fixed_tile_grid {
    std::int64_t tiles;  // in all
    std::int64_t tiles_per_block;
    std::int64_t blocks;
};

inline fixed_tile_grid plan_fixed_tiles(std::int64_t n, std::int64_t tile_rows) {
    const std::int64_t tiles = (n + tile_rows - 1) / tile_rows;
    const std::int64_t tiles_per_block = (tiles + tile_sort_max_blocks - 1) / tile_sort_max_blocks;
    return {tiles, tiles_per_block, (tiles + tiles_per_block - 1) / tiles_per_block};
}

// The blocks' totals part_sum / part_count [blocks][M] (part_count null when
// not counted; used, null when all blocks wrote theirs) added per segment in
// block order, then the outputs written.
template <class T, class A, class O, class R>
void combine_blocks_then_finish(const par_t& p, const A* part_sum, const unsigned* part_count, std::int64_t blocks,
                                const unsigned char* used, std::int64_t M, rows_view<O> out, const R& r,
                                const options& opts) {
    temp_buffer<A> acc(p, M);
    temp_buffer<unsigned long long> counts(p, part_count ? M : 0);
    if (part_count)
        tile_sort_combine_kernel<A, true><<<grid_for(M), block_threads, 0, p.stream>>>(
            part_sum, part_count, blocks, used, M, acc.get(), counts.get());
    else
        tile_sort_combine_kernel<A, false><<<grid_for(M), block_threads, 0, p.stream>>>(
            part_sum, nullptr, blocks, used, M, acc.get(), nullptr);
    SEGRED_CUDA_CHECK(cudaGetLastError());
    finish_scatter_kernel<T><<<grid_for(M), block_threads, 0, p.stream>>>(acc.get(), counts.get(), M, out, r, opts);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

// The fold kernel over grid's tiles (claimed, used: see the kernel).
template <class I, class T, class A>
void sort_tiles(const par_t& p, rows_view<const T> values, const I* ids, std::int64_t M, fixed_tile_grid grid,
                bool counted, const unsigned char* claimed, A* part_sum, unsigned* part_count, unsigned char* used) {
    int end_bit = 1;
    while ((std::int64_t(1) << end_bit) <= M) ++end_bit;  // keys lie in [0, M]
    const std::size_t shared = tile_sort_shared<A>(M, counted);
    auto fold = [&](auto kernel) {
        allow_dynamic_shared(kernel, shared);
        kernel<<<static_cast<unsigned>(grid.blocks), tile_sort_threads, shared, p.stream>>>(
            values.data, ids, values.n, static_cast<int>(M), end_bit, grid.tiles_per_block, claimed, part_sum,
            part_count, used);
        SEGRED_CUDA_CHECK(cudaGetLastError());
    };
    if (counted)
        fold(tile_sort_fold_kernel<T, A, I, true>);
    else
        fold(tile_sort_fold_kernel<T, A, I, false>);
}

// ids: n valid ids in [0, M), tile_sort_applies(M, opts), n > 0.
template <class I, class T, class O, class R>
void tile_sort_then_finish(const par_t& p, rows_view<const T> values, const I* ids, std::int64_t M,
                           rows_view<O> out, const R& r, const options& opts) {
    using A = segred::detail::accum_t<T>;
    const fixed_tile_grid grid = plan_fixed_tiles(values.n, tile_sort_rows);
    const bool counted = !sum_needs_no_counts<R>(opts);
    temp_buffer<A> part_sum(p, grid.blocks * M);
    temp_buffer<unsigned> part_count(p, counted ? grid.blocks * M : 0);
    sort_tiles(p, values, ids, M, grid, counted, nullptr, part_sum.get(), part_count.get(), nullptr);
    combine_blocks_then_finish<T>(p, part_sum.get(), counted ? part_count.get() : nullptr, grid.blocks, nullptr, M,
                                  out, r, opts);
}

} // namespace detail
} // namespace cuda
} // namespace segred
