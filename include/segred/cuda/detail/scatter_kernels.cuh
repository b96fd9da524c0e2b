// segred/cuda/detail/scatter_kernels.cuh -- the atomic path for sum, mean
// and count over unsorted ids (index_add_, bincount, gather_backward).
//
// Each thread walks a short run of consecutive rows for one column and
// merges rows with equal ids before it adds, so all-equal or clustered ids do
// not hammer one address. When the accumulators fit in shared memory, each
// block accumulates privately there and adds its totals to global memory
// once. Atomic float addition makes the last bits order-dependent: the
// `deterministic` option takes the sorted path instead.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "../../core/finalize.hpp"
#include "../../core/numeric.hpp"
#include "../../core/reducers.hpp"
#include "launch.cuh"

namespace segred {
namespace cuda {
namespace detail {

constexpr std::int64_t scatter_run = 16;  // consecutive rows per thread
constexpr std::size_t shared_accumulator_bytes = 32 * 1024;

template <class R> struct is_atomic_reducer : std::false_type {};
template <> struct is_atomic_reducer<segred::sum> : std::true_type {};
template <> struct is_atomic_reducer<segred::mean> : std::true_type {};
template <> struct is_atomic_reducer<segred::count> : std::true_type {};

inline namespace SEGRED_ABI_NS {

template <class A>
__device__ void atomic_add(A* addr, A v) {
    if constexpr (std::is_integral<A>::value) {
        atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v));
    } else {
        atomicAdd(addr, v);
    }
}

// Row i's segment, or -1 for a row to skip (drop).
template <class I>
struct id_or_skip {
    const I* ids;
    std::int64_t M;
    __device__ std::int64_t operator()(std::int64_t i) const {
        const std::int64_t k = static_cast<std::int64_t>(ids[i]);
        return (k >= 0 && k < M) ? k : -1;
    }
};
template <class I>
struct subscript_or_skip {
    subscripts_desc<I> d;
    __device__ std::int64_t operator()(std::int64_t i) const { return d.linear_index(i); }
};

// Walk work item idx = (run, column): rows [run * scatter_run, ...) of one
// column, adding each maximal stretch of equal ids with one add(id, sum, n).
template <bool Sums, class T, class A, class SegOf, class Add>
__device__ void scatter_run_of_rows(rows_view<const T> values, SegOf seg_of, std::int64_t F, std::int64_t idx,
                                    Add&& add) {
    const std::int64_t run = idx / F, f = idx - run * F;
    const std::int64_t i0 = run * scatter_run;
    const std::int64_t i1 = i0 + scatter_run < values.n ? i0 + scatter_run : values.n;
    std::int64_t cur = -1, cnt = 0;
    A acc = A(0);
    for (std::int64_t i = i0; i < i1; ++i) {
        const std::int64_t k = seg_of(i);
        if (k != cur) {
            if (cur >= 0) add(cur, f, acc, cnt);
            cur = k;
            acc = A(0);
            cnt = 0;
        }
        if (k >= 0) {
            if (Sums) acc += segred::detail::convert<A>(values(i, f));
            ++cnt;
        }
    }
    if (cur >= 0) add(cur, f, acc, cnt);
}

template <bool Sums, class T, class A, class SegOf>
SEGRED_KERNEL void scatter_global_kernel(rows_view<const T> values, SegOf seg_of, std::int64_t F, A* acc,
                                         unsigned long long* counts) {
    const std::int64_t total = (values.n + scatter_run - 1) / scatter_run * F;
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        scatter_run_of_rows<Sums, T, A>(values, seg_of, F, idx,
                                        [&](std::int64_t k, std::int64_t f, A a, std::int64_t c) {
                                            if (Sums) atomic_add(acc + k * F + f, a);
                                            if (f == 0) atomicAdd(counts + k, static_cast<unsigned long long>(c));
                                        });
    }
}

// Block-private accumulators in shared memory: [M] counts, then [M * F] A
// (counts first: 8-byte words keep the A array aligned for any A).
template <bool Sums, class T, class A, class SegOf>
SEGRED_KERNEL void scatter_shared_kernel(rows_view<const T> values, SegOf seg_of, std::int64_t M, std::int64_t F,
                                         A* acc, unsigned long long* counts) {
    extern __shared__ unsigned long long shared_words[];
    unsigned long long* scnt = shared_words;
    A* sacc = reinterpret_cast<A*>(shared_words + M);
    const std::int64_t cells = Sums ? M * F : 0;
    for (std::int64_t e = threadIdx.x; e < cells; e += blockDim.x) sacc[e] = A(0);
    for (std::int64_t e = threadIdx.x; e < M; e += blockDim.x) scnt[e] = 0;
    __syncthreads();
    const std::int64_t total = (values.n + scatter_run - 1) / scatter_run * F;
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        scatter_run_of_rows<Sums, T, A>(values, seg_of, F, idx,
                                        [&](std::int64_t k, std::int64_t f, A a, std::int64_t c) {
                                            if (Sums) atomic_add(sacc + k * F + f, a);
                                            if (f == 0) atomicAdd(scnt + k, static_cast<unsigned long long>(c));
                                        });
    }
    __syncthreads();
    for (std::int64_t e = threadIdx.x; e < cells; e += blockDim.x)
        if (sacc[e] != A(0)) atomic_add(acc + e, sacc[e]);
    for (std::int64_t e = threadIdx.x; e < M; e += blockDim.x)
        if (scnt[e] != 0) atomicAdd(counts + e, scnt[e]);
}

template <class R, class T, class A>
__device__ state_t<R, T> state_from_totals(A acc, std::int64_t cnt) {
    if constexpr (std::is_same<R, segred::sum>::value) {
        return acc;
    } else if constexpr (std::is_same<R, segred::mean>::value) {
        return {acc, cnt};
    } else {
        return cnt;
    }
}

template <class T, class O, class R, class A>
SEGRED_KERNEL void finish_scatter_kernel(const A* acc, const unsigned long long* counts, std::int64_t M,
                                         rows_view<O> out, R r, options opts) {
    const std::int64_t F = out.width;
    const std::int64_t total = M * F;
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const std::int64_t s = idx / F, f = idx - s * F;
        const std::int64_t cnt = static_cast<std::int64_t>(counts[s]);
        const A a = acc ? acc[idx] : A(0);
        segred::detail::write_result<T>(r, opts, out, s, f, state_from_totals<R, T>(a, cnt), cnt);
        if (f == 0 && opts.counts_out) opts.counts_out[s] = cnt;
    }
}

} // namespace SEGRED_ABI_NS
} // namespace detail
} // namespace cuda
} // namespace segred
