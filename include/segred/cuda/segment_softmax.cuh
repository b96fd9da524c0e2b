// segred/cuda/segment_softmax.cuh -- softmax within segments on the GPU.
//
// Pass 1 reduces each segment to its log-sum-exp per column (the layout
// reduction with the logsumexp reducer); pass 2 maps every position to
// exp(v - lse) in place of its row. Rows in no segment (offsets that skip
// rows, rows dropped by bounds::drop) are first set to the fill value.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "../core/numeric.hpp"
#include "../core/options.hpp"
#include "../core/reducers.hpp"
#include "../core/views.hpp"
#include "detail/fill.cuh"
#include "detail/launch.cuh"
#include "detail/layout.cuh"
#include "detail/reduce_kernels.cuh"
#include "detail/reduce_layout.cuh"
#include "policy.cuh"

namespace segred {
namespace cuda {
namespace detail {
inline namespace SEGRED_ABI_NS {

template <class T, class A, class O>
SEGRED_KERNEL void softmax_positions_kernel(rows_view<const T> values, const std::int64_t* starts,
                                            const std::int64_t* perm, std::int64_t M, const A* lse,
                                            rows_view<O> out) {
    const std::int64_t F = values.width;
    const std::int64_t first = starts[0];
    const std::int64_t total = (starts[M] - first) * F;
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const std::int64_t k = first + idx / F, f = idx % F;
        // The segment holding position k: the last non-empty one starting at or before k.
        const std::int64_t s = last_at_most(starts, M, k);
        const std::int64_t row = position_row(perm, k);
        const A x = segred::detail::convert<A>(values(row, f)) - lse[s * F + f];
        out(row, f) = segred::detail::to_output<O>(std::exp(x));
    }
}

} // namespace SEGRED_ABI_NS
} // namespace detail

template <class T, class Seg, class O>
void segment_softmax_impl(const par_t& p, rows_view<const T> values, const Seg& seg, rows_view<O> out,
                          const options& opts) {
    using A = segred::detail::real_t<T>;
    const std::int64_t F = values.width;
    const detail::device_layout L = detail::build_layout(p, "segment_softmax", seg, values.n, opts.bounds_mode);
    if (!L.covers_every_row && out.size() > 0) {
        O fill = segred::detail::to_output<O>(0);
        if (opts.fill_mode == fill_kind::nan) fill = segred::detail::to_output<O>(segred::detail::quiet_nan<double>());
        if (opts.fill_mode == fill_kind::constant) fill = segred::detail::to_output<O>(opts.fill_value);
        detail::fill_kernel<<<detail::grid_for(out.size()), detail::block_threads, 0, p.stream>>>(out.data, out.size(),
                                                                                                 fill);
        SEGRED_CUDA_CHECK(cudaGetLastError());
    }
    if (L.M == 0 || values.n == 0) return;
    detail::temp_buffer<A> lse(p, L.M * F);
    detail::reduce_layout(p, values, L, rows_view<A>{lse.get(), L.M, F}, logsumexp{}, options{});
    detail::softmax_positions_kernel<<<detail::grid_for(values.size()), detail::block_threads, 0, p.stream>>>(
        values, L.starts, L.perm, L.M, lse.get(), out);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

} // namespace cuda
} // namespace segred
