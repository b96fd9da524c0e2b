// segred/cuda/detail/reduce_layout.cuh -- host side of the layout
// reduction: launches the segment pass and, for giant segments, the piece
// and combine passes. No synchronization: the giant list and its size stay on
// the device, and grids are sized from bounds known on the host.
#pragma once

#include <cstdint>

#include "launch.cuh"
#include "layout.cuh"
#include "reduce_kernels.cuh"
#include "temp_buffer.cuh"

namespace segred {
namespace cuda {
namespace detail {

// Reduce M segments given by `starts` (array_starts or fixed_starts) over
// positions, position k standing for row perm[k] (or k when perm is null).
template <class T, class O, class R, class Starts>
void reduce_positions(const par_t& p, rows_view<const T> values, Starts starts, const std::int64_t* perm,
                      std::int64_t M, rows_view<O> out, const R& r, const options& opts) {
    using S = state_t<R, T>;
    if (M == 0) return;
    const std::int64_t F = out.width, n = values.n;
    // Positions never exceed the rows, which bounds the giant segments.
    const std::int64_t max_giants = n / giant_segment + 1;
    temp_buffer<std::int64_t> giant_list(p, max_giants), piece_offset(p, max_giants + 1);
    temp_buffer<unsigned long long> giant_count(p, 1);
    SEGRED_CUDA_CHECK(cudaMemsetAsync(giant_count.get(), 0, sizeof(unsigned long long), p.stream));
    if (F >= narrow_width)
        wide_segments_kernel<T, O, R, S><<<grid_for(M * 32), block_threads, 0, p.stream>>>(
            values, starts, perm, M, out, r, opts, giant_list.get(), giant_count.get());
    else
        segments_kernel<T, O, R, S><<<grid_for((M + 31) / 32 * 32), block_threads, 0, p.stream>>>(
            values, starts, perm, M, out, r, opts, giant_list.get(), giant_count.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    if (n <= giant_segment) return;  // no segment can be giant

    const std::int64_t P = piece_rows(F);
    const std::int64_t max_pieces = n / P + max_giants;
    temp_buffer<S> partial(p, max_pieces * F);
    giant_plan_kernel<<<1, block_threads, 0, p.stream>>>(starts, giant_list.get(), giant_count.get(), P,
                                                         piece_offset.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    giant_pieces_kernel<T, R, S><<<grid_for(max_pieces * 32), block_threads, 0, p.stream>>>(
        values, starts, perm, F, r, giant_list.get(), giant_count.get(), piece_offset.get(), P, partial.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    giant_combine_kernel<T, O, R, S><<<grid_for(max_giants, 1), block_threads, 0, p.stream>>>(
        starts, out, r, opts, giant_list.get(), giant_count.get(), piece_offset.get(), partial.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

template <class T, class O, class R>
void reduce_layout(const par_t& p, rows_view<const T> values, const device_layout& L, rows_view<O> out, const R& r,
                   const options& opts) {
    reduce_positions(p, values, array_starts{L.starts}, L.perm, L.M, out, r, opts);
}

} // namespace detail
} // namespace cuda
} // namespace segred
