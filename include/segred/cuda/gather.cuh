// segred/cuda/gather.cuh -- gather on the GPU (its backward, a scatter-add,
// runs through segment_reduce's atomic path). Synchronizes only under the
// check policy, to read the verdict of the id scan.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../core/numeric.hpp"
#include "../core/options.hpp"
#include "../core/views.hpp"
#include "detail/launch.cuh"
#include "detail/validate.cuh"
#include "policy.cuh"

namespace segred {
namespace cuda {
namespace detail {
inline namespace SEGRED_ABI_NS {

template <class T, class I, class O>
SEGRED_KERNEL void gather_kernel(rows_view<const T> src, const I* ids, rows_view<O> out, O fill) {
    const std::int64_t F = out.width, total = out.n * F;
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const std::int64_t i = idx / F, f = idx - i * F;
        const std::int64_t k = static_cast<std::int64_t>(ids[i]);
        out.data[idx] = (k >= 0 && k < src.n) ? segred::detail::to_output<O>(src(k, f)) : fill;
    }
}

} // namespace SEGRED_ABI_NS
} // namespace detail

template <class T, class I, class O>
void gather_impl(const par_t& p, rows_view<const T> src, rows_view<const I> id_vec, rows_view<O> out,
                 const options& opts) {
    if (opts.bounds_mode == bounds_policy::check) detail::check_ids(p, "gather", "ids", id_vec.data, id_vec.n, src.n);
    if (out.size() == 0) return;
    O fill = segred::detail::to_output<O>(0);
    if (opts.fill_mode == fill_kind::nan) fill = segred::detail::to_output<O>(segred::detail::quiet_nan<double>());
    if (opts.fill_mode == fill_kind::constant) fill = segred::detail::to_output<O>(opts.fill_value);
    detail::gather_kernel<<<detail::grid_for(out.size()), detail::block_threads, 0, p.stream>>>(src, id_vec.data, out,
                                                                                               fill);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

} // namespace cuda
} // namespace segred
