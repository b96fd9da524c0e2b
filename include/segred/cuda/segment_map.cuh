// segred/cuda/segment_map.cuh -- the CUDA backend's row-wise primitives of
// core/backend.hpp: segment_map_impl, fill_impl and make_scratch, on which
// the backend-neutral backward front-ends are built.
//
// Synchronization as everywhere: only the check policy's validation waits
// for the stream.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../core/backend.hpp"
#include "../core/descriptors.hpp"
#include "../core/options.hpp"
#include "../core/views.hpp"
#include "detail/fill.cuh"
#include "detail/launch.cuh"
#include "detail/layout.cuh"
#include "detail/reduce_kernels.cuh"
#include "detail/temp_buffer.cuh"
#include "detail/validate.cuh"
#include "policy.cuh"

namespace segred {
namespace cuda {
namespace detail {
inline namespace SEGRED_ABI_NS {

// Per-row descriptors: each row knows its segment (-1: dropped).
template <class Seg, class F>
SEGRED_KERNEL void map_each_row_kernel(Seg seg, std::int64_t n, F f) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        f(i, segred::detail::row_segment(seg, i));
}

// Contiguous segments from starts (offsets, lengths, fixed): rows before
// starts[0] or from starts[M] on are in no segment.
template <class Starts, class F>
SEGRED_KERNEL void map_by_starts_kernel(Starts starts, const std::int64_t* table, std::int64_t M, std::int64_t n,
                                        F f) {
    const std::int64_t first = M > 0 ? starts(0) : 0, last = M > 0 ? starts(M) : 0;
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        std::int64_t s = -1;
        if (i >= first && i < last) s = table ? last_at_most(table, M, i) : i / starts(1);
        f(i, s);
    }
}

} // namespace SEGRED_ABI_NS
} // namespace detail

template <class T>
detail::temp_buffer<T> make_scratch(const par_t& p, std::int64_t count) {
    return detail::temp_buffer<T>(p, count);
}

template <class O>
void fill_impl(const par_t& p, rows_view<O> out, O value) {
    if (out.size() == 0) return;
    detail::fill_kernel<<<detail::grid_for(out.size()), detail::block_threads, 0, p.stream>>>(out.data, out.size(),
                                                                                             value);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

// f(row, s) once for every row in [0, n), s its segment or -1; the
// descriptor is validated first exactly as segment_reduce validates it.
template <class Seg, class F>
void segment_map_impl(const par_t& p, const char* fn, const Seg& seg, std::int64_t n, const F& f,
                      const options& opts) {
    const bool check = opts.bounds_mode == bounds_policy::check;
    if constexpr (Seg::kind == segment_kind::ids || Seg::kind == segment_kind::sorted_ids ||
                  Seg::kind == segment_kind::subscripts) {
        if constexpr (Seg::kind == segment_kind::ids) {
            if (check) detail::check_ids(p, fn, "ids", seg.ptr, n, seg.M);
        } else if constexpr (Seg::kind == segment_kind::sorted_ids) {
            if (check) detail::check_sorted_ids(p, fn, seg, n);
        } else {
            if (check) detail::check_subscripts(p, fn, seg, n);
        }
        if (n == 0) return;
        detail::map_each_row_kernel<<<detail::grid_for(n), detail::block_threads, 0, p.stream>>>(seg, n, f);
        SEGRED_CUDA_CHECK(cudaGetLastError());
    } else if constexpr (Seg::kind == segment_kind::fixed) {
        if (n == 0) return;
        detail::map_by_starts_kernel<<<detail::grid_for(n), detail::block_threads, 0, p.stream>>>(
            detail::fixed_starts{seg.size}, static_cast<const std::int64_t*>(nullptr), seg.M, n, f);
        SEGRED_CUDA_CHECK(cudaGetLastError());
    } else {
        const detail::device_layout L = detail::build_layout(p, fn, seg, n, opts.bounds_mode);
        if (n == 0) return;
        detail::map_by_starts_kernel<<<detail::grid_for(n), detail::block_threads, 0, p.stream>>>(
            detail::array_starts{L.starts}, L.starts, L.M, n, f);
        SEGRED_CUDA_CHECK(cudaGetLastError());
    }
}

} // namespace cuda
} // namespace segred
