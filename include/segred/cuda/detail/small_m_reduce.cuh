// segred/cuda/detail/small_m_reduce.cuh -- the deterministic path for sums
// and means of one column over unsorted ids into few segments.
//
// Sorting the rows by id (sort_reduce.cuh) costs several passes over them; at
// small M the atomic path runs in shared memory near copy speed, which a sort
// cannot approach. Here every thread owns a private total and count per
// segment in shared memory instead (laid out [segment][thread], so a thread
// always hits its own bank: no atomics, no conflicts). Each block folds a
// fixed chunk of rows, thread t taking rows t, t + threads, ... in order; the
// block's thread totals are combined in a fixed order into one partial per
// segment; the partials are combined, per segment, in a fixed order by a
// second kernel; and the shared finish kernel writes the outputs. Chunk and
// block sizes are constants, so the bits are the same on every run.
#pragma once

#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

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

constexpr int small_m_threads = 128;                           // threads of the fold kernel
constexpr std::int64_t small_m_chunk = 256 * small_m_threads;  // rows per block: 256 a thread
constexpr std::size_t small_m_shared_bytes = 96 * 1024;        // private totals per block, at most
constexpr int small_m_combine_threads = 256;                   // threads per segment of the combine

// Whether M segments of accumulator A fit the private totals.
template <class A>
constexpr std::int64_t small_m_max_segments() {
    return static_cast<std::int64_t>(small_m_shared_bytes / (small_m_threads * (sizeof(A) + sizeof(unsigned))));
}

inline namespace SEGRED_ABI_NS {

// Block b folds rows [b * chunk, (b + 1) * chunk) into part_sum / part_count
// [b * M + s]. ids are in [0, M) (checked or promised).
template <class T, class A, class I>
SEGRED_KERNEL void __launch_bounds__(small_m_threads)
    small_m_fold_kernel(const T* values, const I* ids, std::int64_t n, int M, A* part_sum, unsigned* part_count) {
    extern __shared__ unsigned char small_m_shared[];
    A* sums = reinterpret_cast<A*>(small_m_shared);                               // [M][threads]
    unsigned* counts = reinterpret_cast<unsigned*>(sums + M * small_m_threads);  // [M][threads]
    const int t = threadIdx.x;
    for (int j = t; j < M * small_m_threads; j += small_m_threads) {
        sums[j] = A(0);
        counts[j] = 0;
    }
    __syncthreads();
    const std::int64_t lo = std::int64_t(blockIdx.x) * small_m_chunk;
    const std::int64_t hi = lo + small_m_chunk < n ? lo + small_m_chunk : n;
    // Eight rows' loads are issued before their adds: the adds go through
    // shared memory the compiler cannot prove distinct, so without this each
    // row's loads would wait for the previous row's add.
    constexpr int ahead = 8;
    std::int64_t i = lo + t;
    for (; i + (ahead - 1) * small_m_threads < hi; i += ahead * small_m_threads) {
        I k[ahead];
        T v[ahead];
#pragma unroll
        for (int u = 0; u < ahead; ++u) {
            k[u] = ids[i + u * small_m_threads];
            v[u] = values[i + u * small_m_threads];
        }
#pragma unroll
        for (int u = 0; u < ahead; ++u) {
            const int at = static_cast<int>(k[u]) * small_m_threads + t;
            sums[at] += segred::detail::convert<A>(v[u]);
            counts[at] += 1;
        }
    }
    for (; i < hi; i += small_m_threads) {
        const int at = static_cast<int>(ids[i]) * small_m_threads + t;
        sums[at] += segred::detail::convert<A>(values[i]);
        counts[at] += 1;
    }
    __syncthreads();
    // Warp w combines segments w, w + warps, ...: lane l adds threads l,
    // l + 32, l + 64, l + 96 in that order, then the lanes by a fixed
    // halving tree.
    const int lane = t % 32, warps = small_m_threads / 32;
    for (int s = t / 32; s < M; s += warps) {
        A a = sums[s * small_m_threads + lane];
        unsigned c = counts[s * small_m_threads + lane];
#pragma unroll
        for (int q = 1; q < small_m_threads / 32; ++q) {
            a += sums[s * small_m_threads + lane + 32 * q];
            c += counts[s * small_m_threads + lane + 32 * q];
        }
#pragma unroll
        for (int off = 16; off >= 1; off /= 2) {
            a += __shfl_down_sync(0xffffffffu, a, off);
            c += __shfl_down_sync(0xffffffffu, c, off);
        }
        if (lane == 0) {
            part_sum[std::int64_t(blockIdx.x) * M + s] = a;
            part_count[std::int64_t(blockIdx.x) * M + s] = c;
        }
    }
}

// Block s combines segment s's partials of every fold block: thread t adds
// blocks t, t + threads, ... in order, then cub's block reduction (a fixed
// order for a fixed block size).
template <class A>
SEGRED_KERNEL void __launch_bounds__(small_m_combine_threads)
    small_m_combine_kernel(const A* part_sum, const unsigned* part_count, std::int64_t blocks, int M, A* acc,
                           unsigned long long* counts) {
    const int s = blockIdx.x;
    A a = A(0);
    unsigned long long c = 0;
    for (std::int64_t b = threadIdx.x; b < blocks; b += small_m_combine_threads) {
        a += part_sum[b * M + s];
        c += part_count[b * M + s];
    }
    using sum_reduce = cub::BlockReduce<A, small_m_combine_threads>;
    using count_reduce = cub::BlockReduce<unsigned long long, small_m_combine_threads>;
    __shared__ typename sum_reduce::TempStorage sum_temp;
    __shared__ typename count_reduce::TempStorage count_temp;
    const A total = sum_reduce(sum_temp).Sum(a);
    const unsigned long long rows = count_reduce(count_temp).Sum(c);
    if (threadIdx.x == 0) {
        acc[s] = total;
        counts[s] = rows;
    }
}

} // namespace SEGRED_ABI_NS

// Shared memory of the fold kernel for M segments.
template <class A>
std::size_t small_m_shared(std::int64_t M) {
    return static_cast<std::size_t>(M) * small_m_threads * (sizeof(A) + sizeof(unsigned));
}

// Whether the small-M path takes these (one column: the caller checks): sum
// or mean (counts alone are exact on the sort path too, and cost no values),
// M within the private totals, and those within what this device lets a
// block opt into.
template <class T, class R>
bool small_m_applies(std::int64_t M) {
    using A = segred::detail::accum_t<T>;
    constexpr bool sums = std::is_same<R, segred::sum>::value || std::is_same<R, segred::mean>::value;
    if (!sums || M <= 0 || M > small_m_max_segments<A>()) return false;
    return small_m_shared<A>(M) <= static_cast<std::size_t>(device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin));
}

// ids: n valid ids in [0, M), 0 < M <= small_m_max_segments, n > 0.
template <class I, class T, class O, class R>
void small_m_then_finish(const par_t& p, rows_view<const T> values, const I* ids, std::int64_t M, rows_view<O> out,
                         const R& r, const options& opts) {
    using A = segred::detail::accum_t<T>;
    const std::int64_t n = values.n;
    const std::int64_t blocks = (n + small_m_chunk - 1) / small_m_chunk;
    const int m = static_cast<int>(M);
    temp_buffer<A> part_sum(p, blocks * M);
    temp_buffer<unsigned> part_count(p, blocks * M);
    temp_buffer<A> acc(p, M);
    temp_buffer<unsigned long long> counts(p, M);
    const std::size_t shared = small_m_shared<A>(M);
    const auto fold = small_m_fold_kernel<T, A, I>;
    allow_dynamic_shared(fold, shared);  // small_m_applies: shared fits the opt-in limit
    fold<<<static_cast<unsigned>(blocks), small_m_threads, shared, p.stream>>>(values.data, ids, n, m, part_sum.get(),
                                                                             part_count.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    small_m_combine_kernel<A><<<static_cast<unsigned>(M), small_m_combine_threads, 0, p.stream>>>(
        part_sum.get(), part_count.get(), blocks, m, acc.get(), counts.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    finish_scatter_kernel<T><<<grid_for(M * out.width), block_threads, 0, p.stream>>>(acc.get(), counts.get(), M,
                                                                                      out, r, opts);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

} // namespace detail
} // namespace cuda
} // namespace segred
