// segred/cuda/gather_segment_reduce.cuh -- the fused gather-then-reduce on
// the GPU: the layout over positions gets one more indirection, position k ->
// data row idx[k], so the gathered rows are never materialized. Under drop,
// positions whose idx is out of range leave their segments: a flag scan gives
// every kept position its new place and every segment its new start.
#pragma once

#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>

#include <cstdint>

#include "../core/options.hpp"
#include "../core/views.hpp"
#include "detail/cub_call.cuh"
#include "detail/launch.cuh"
#include "detail/layout.cuh"
#include "detail/reduce_kernels.cuh"
#include "detail/reduce_layout.cuh"
#include "detail/temp_buffer.cuh"
#include "detail/validate.cuh"
#include "policy.cuh"

namespace segred {
namespace cuda {
namespace detail {
inline namespace SEGRED_ABI_NS {

// through[k] = idx[row of position k], or -1 where that is out of [0, rows).
template <class I>
SEGRED_KERNEL void route_kernel(const std::int64_t* perm, const I* idx, std::int64_t npos, std::int64_t rows,
                                std::int64_t* through, std::int64_t* keep) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k <= npos; k += stride) {
        if (k == npos) {
            keep[k] = 0;
            continue;
        }
        const std::int64_t r = static_cast<std::int64_t>(idx[position_row(perm, k)]);
        const bool ok = r >= 0 && r < rows;
        through[k] = ok ? r : -1;
        keep[k] = ok ? 1 : 0;
    }
}

// Kept position k moves to place[k]; segment s starts at place[starts[s]].
template <class Int = std::int64_t>
SEGRED_KERNEL void compact_perm_kernel(const std::int64_t* through, const std::int64_t* place, std::int64_t npos,
                                       std::int64_t* perm) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < npos; k += stride)
        if (through[k] >= 0) perm[place[k]] = through[k];
}

template <class Int = std::int64_t>
SEGRED_KERNEL void compact_starts_kernel(const std::int64_t* starts, const std::int64_t* place, std::int64_t M,
                                         std::int64_t* new_starts) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s <= M; s += stride)
        new_starts[s] = place[starts[s]];
}

} // namespace SEGRED_ABI_NS
} // namespace detail

template <class T, class I, class Seg, class O, class R>
void gather_segment_reduce_impl(const par_t& p, const char* fn, rows_view<const T> data, rows_view<const I> idx,
                                const Seg& seg, rows_view<O> out, const R& r, const options& opts) {
    detail::device_layout L = detail::build_layout(p, fn, seg, idx.n, opts.bounds_mode);
    if (opts.bounds_mode == bounds_policy::check) detail::check_ids(p, fn, "idx", idx.data, idx.n, data.n);
    const std::int64_t npos = idx.n;
    detail::temp_buffer<std::int64_t> through(p, npos), keep(p, npos + 1), perm(p, npos);
    detail::route_kernel<<<detail::grid_for(npos + 1), detail::block_threads, 0, p.stream>>>(
        L.perm, idx.data, npos, data.n, through.get(), keep.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    if (opts.bounds_mode != bounds_policy::drop) {
        L.perm = through.get();  // every position valid: the routed rows as they are
        detail::reduce_layout(p, data, L, out, r, opts);
        return;
    }
    detail::temp_buffer<std::int64_t> place(p, npos + 1), new_starts(p, L.M + 1);
    std::int64_t* k_in = keep.get();
    std::int64_t* k_out = place.get();
    const std::int64_t count = npos + 1;
    detail::cub_call(p, "cub::DeviceScan::ExclusiveSum", [&](void* t, std::size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(t, bytes, k_in, k_out, count, p.stream);
    });
    detail::compact_perm_kernel<<<detail::grid_for(npos), detail::block_threads, 0, p.stream>>>(
        through.get(), place.get(), npos, perm.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    detail::compact_starts_kernel<<<detail::grid_for(L.M + 1), detail::block_threads, 0, p.stream>>>(
        L.starts, place.get(), L.M, new_starts.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    L.starts = new_starts.get();
    L.perm = perm.get();
    detail::reduce_layout(p, data, L, out, r, opts);
}

} // namespace cuda
} // namespace segred
