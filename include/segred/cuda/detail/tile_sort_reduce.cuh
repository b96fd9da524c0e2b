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
template <class T, class A, class I, bool Counted>
SEGRED_KERNEL void __launch_bounds__(tile_sort_threads, 2)
    tile_sort_fold_kernel(const T* values, const I* ids, std::int64_t n, int M, int end_bit,
                          std::int64_t tiles_per_block, A* part_sum, unsigned* part_count) {
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
    for (std::int64_t tile = first; tile < last; ++tile) {
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
#pragma unroll
        for (int j = 0; j < tile_sort_items; ++j) {
            if (j == 0 ? head0 : k[j] != k[j - 1]) mine = {A(0), 0, true};
            mine.sum += v[j];
            ++mine.rows;
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
            ++rows;
        }
        if (t == tile_sort_threads - 1 || first_key[t + 1] != k[tile_sort_items - 1])
            add_run(k[tile_sort_items - 1], sum, rows);
    }
    __syncthreads();
    for (int s = t; s < M; s += tile_sort_threads) {
        part_sum[std::int64_t(blockIdx.x) * M + s] = sums[s];
        if (Counted) part_count[std::int64_t(blockIdx.x) * M + s] = counts[s];
    }
}

// Segment s's total over the fold blocks, added in block order (thread s
// alone: the order is fixed, and neighbouring threads read neighbouring
// segments, so each block's partials are read coalesced).
template <class A, bool Counted>
SEGRED_KERNEL void tile_sort_combine_kernel(const A* part_sum, const unsigned* part_count, std::int64_t blocks,
                                            std::int64_t M, A* acc, unsigned long long* counts) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < M; s += stride) {
        A a = A(0);
        unsigned long long c = 0;
        for (std::int64_t b = 0; b < blocks; ++b) {
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

// ids: n valid ids in [0, M), tile_sort_applies(M, opts), n > 0.
template <class I, class T, class O, class R>
void tile_sort_then_finish(const par_t& p, rows_view<const T> values, const I* ids, std::int64_t M,
                           rows_view<O> out, const R& r, const options& opts) {
    using A = segred::detail::accum_t<T>;
    const std::int64_t n = values.n;
    const std::int64_t tiles = (n + tile_sort_rows - 1) / tile_sort_rows;
    const std::int64_t tiles_per_block = (tiles + tile_sort_max_blocks - 1) / tile_sort_max_blocks;
    const std::int64_t blocks = (tiles + tiles_per_block - 1) / tiles_per_block;
    int end_bit = 1;
    while ((std::int64_t(1) << end_bit) <= M) ++end_bit;  // keys lie in [0, M]
    const bool counted = !sum_needs_no_counts<R>(opts);
    temp_buffer<A> part_sum(p, blocks * M);
    temp_buffer<unsigned> part_count(p, counted ? blocks * M : 0);
    temp_buffer<A> acc(p, M);
    temp_buffer<unsigned long long> counts(p, counted ? M : 0);
    const std::size_t shared = tile_sort_shared<A>(M, counted);
    auto fold = [&](auto kernel) {
        if (shared > private_shared_limit(kernel, false)) opt_in_whole_shared_limit(kernel);
        kernel<<<static_cast<unsigned>(blocks), tile_sort_threads, shared, p.stream>>>(
            values.data, ids, n, static_cast<int>(M), end_bit, tiles_per_block, part_sum.get(), part_count.get());
        SEGRED_CUDA_CHECK(cudaGetLastError());
    };
    if (counted) {
        fold(tile_sort_fold_kernel<T, A, I, true>);
        tile_sort_combine_kernel<A, true><<<grid_for(M), block_threads, 0, p.stream>>>(
            part_sum.get(), part_count.get(), blocks, M, acc.get(), counts.get());
    } else {
        fold(tile_sort_fold_kernel<T, A, I, false>);
        tile_sort_combine_kernel<A, false><<<grid_for(M), block_threads, 0, p.stream>>>(
            part_sum.get(), nullptr, blocks, M, acc.get(), nullptr);
    }
    SEGRED_CUDA_CHECK(cudaGetLastError());
    finish_scatter_kernel<T><<<grid_for(M), block_threads, 0, p.stream>>>(acc.get(), counts.get(), M, out, r, opts);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

} // namespace detail
} // namespace cuda
} // namespace segred
