// segred/cuda/segment_reduce.cuh -- segment_reduce / accumarray / bincount /
// gather_backward on the GPU.
//
// Synchronization: none, except that the `check` bounds policy (the
// default) reads its verdict back to the host before anything is written,
// so it waits for the stream once per descriptor scan. `drop` and
// `unchecked` never synchronize.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "../core/descriptors.hpp"
#include "../core/numeric.hpp"
#include "../core/options.hpp"
#include "../core/reducers.hpp"
#include "../core/views.hpp"
#include "detail/layout.cuh"
#include "detail/reduce_layout.cuh"
#include "detail/scatter_kernels.cuh"
#include "detail/validate.cuh"
#include "policy.cuh"

namespace segred {
namespace cuda {
namespace detail {

template <class T, class O, class R, class SegOf>
void scatter_reduce(const par_t& p, rows_view<const T> values, SegOf seg_of, std::int64_t M, rows_view<O> out,
                    const R& r, const options& opts) {
    using A = segred::detail::accum_t<T>;
    constexpr bool sums = !std::is_same<R, segred::count>::value;
    const std::int64_t F = out.width;
    temp_buffer<A> acc(p, sums ? M * F : 0);
    temp_buffer<unsigned long long> counts(p, M);
    if (sums) SEGRED_CUDA_CHECK(cudaMemsetAsync(acc.get(), 0, static_cast<std::size_t>(M * F) * sizeof(A), p.stream));
    SEGRED_CUDA_CHECK(cudaMemsetAsync(counts.get(), 0, static_cast<std::size_t>(M) * sizeof(unsigned long long),
                                      p.stream));
    const std::int64_t work = scatter_work(values.n, F);
    const std::size_t shared_bytes =
        static_cast<std::size_t>(sums ? M * F : 0) * sizeof(A) + static_cast<std::size_t>(M) * sizeof(unsigned long long);
    if (values.n > 0) {
        if (shared_bytes <= shared_accumulator_bytes) {
            scatter_shared_kernel<sums, T, A><<<grid_for(work), block_threads, shared_bytes, p.stream>>>(
                values, seg_of, M, F, acc.get(), counts.get());
        } else {
            scatter_global_kernel<sums, T, A><<<grid_for(work), block_threads, 0, p.stream>>>(values, seg_of, F,
                                                                                            acc.get(), counts.get());
        }
        SEGRED_CUDA_CHECK(cudaGetLastError());
    }
    finish_scatter_kernel<T><<<grid_for(M * F), block_threads, 0, p.stream>>>(acc.get(), counts.get(), M, out, r,
                                                                              opts);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

} // namespace detail

template <class T, class Seg, class O, class R>
void segment_reduce_impl(const par_t& p, const char* fn, rows_view<const T> values, const Seg& seg,
                         rows_view<O> out, const R& r, const options& opts) {
    constexpr bool unsorted = Seg::kind == segment_kind::ids || Seg::kind == segment_kind::subscripts;
    if constexpr (unsorted && detail::is_atomic_reducer<R>::value) {
        if (!opts.deterministic_mode) {
            if constexpr (Seg::kind == segment_kind::ids) {
                if (opts.bounds_mode == bounds_policy::check) detail::check_ids(p, fn, "ids", seg.ptr, values.n, seg.M);
                detail::scatter_reduce(p, values, detail::segment_of_row<Seg>{seg}, seg.M, out, r, opts);
            } else {
                if (opts.bounds_mode == bounds_policy::check) detail::check_subscripts(p, fn, seg, values.n);
                detail::scatter_reduce(p, values, detail::segment_of_row<Seg>{seg}, seg.num_segments(), out, r, opts);
            }
            return;
        }
    }
    if constexpr (Seg::kind == segment_kind::fixed) {
        // Fixed segments need no layout in memory: starts are s * size.
        detail::reduce_positions(p, values, detail::fixed_starts{seg.size}, nullptr, seg.M, out, r, opts);
    } else {
        const detail::device_layout L = detail::build_layout(p, fn, seg, values.n, opts.bounds_mode);
        detail::reduce_layout(p, values, L, out, r, opts);
    }
}

} // namespace cuda
} // namespace segred
