// segred/cuda/detail/reduce_layout.cuh -- host side of the layout
// reduction: sizes the pieces and launches the three kernels. No
// synchronization: piece counts stay on the device, and grids are sized
// from upper bounds known on the host.
#pragma once

#include <cub/device/device_scan.cuh>

#include <cstdint>

#include "cub_call.cuh"
#include "launch.cuh"
#include "layout.cuh"
#include "reduce_kernels.cuh"
#include "temp_buffer.cuh"

namespace segred {
namespace cuda {
namespace detail {

template <class T, class O, class R>
void reduce_layout(const par_t& p, rows_view<const T> values, const device_layout& L, rows_view<O> out, const R& r,
                   const options& opts) {
    using S = state_t<R, T>;
    const std::int64_t M = L.M, F = out.width;
    if (M == 0) return;
    short_segments_kernel<<<grid_for(M * F), block_threads, 0, p.stream>>>(values, L.starts, L.perm, M, out, r, opts);
    SEGRED_CUDA_CHECK(cudaGetLastError());

    // Positions never exceed the rows, which bounds every count below.
    const std::int64_t n = values.n;
    if (n <= short_segment) return;  // no segment can be long
    const std::int64_t P = piece_rows(F);
    temp_buffer<std::int64_t> npieces(p, M + 1), nparts(p, M + 1), piece_start(p, M + 1), part_start(p, M + 1);
    count_pieces_kernel<<<grid_for(M + 1), block_threads, 0, p.stream>>>(L.starts, M, P, npieces.get(),
                                                                         nparts.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    const std::int64_t count = M + 1;
    for (auto io : {std::make_pair(npieces.get(), piece_start.get()), std::make_pair(nparts.get(), part_start.get())}) {
        cub_call(p, "cub::DeviceScan::ExclusiveSum", [&](void* t, std::size_t& bytes) {
            return cub::DeviceScan::ExclusiveSum(t, bytes, io.first, io.second, count, p.stream);
        });
    }
    // A segment of len > short_segment has ceil(len / P) <= len / P + 1 pieces.
    const std::int64_t max_pieces = n / P + n / (short_segment + 1) + 1;
    // A multi-piece segment has len > P, so ceil(len / P) < 2 len / P slots.
    const std::int64_t max_parts = 2 * n / P + 1;
    temp_buffer<S> partial(p, max_parts * F);
    temp_buffer<std::int64_t> multi_list(p, n / P + 1);
    temp_buffer<unsigned long long> multi_count(p, 1);
    SEGRED_CUDA_CHECK(cudaMemsetAsync(multi_count.get(), 0, sizeof(unsigned long long), p.stream));
    pieces_kernel<T, O, R, S><<<grid_for(max_pieces * 32), block_threads, 0, p.stream>>>(
        values, L.starts, L.perm, M, out, r, opts, piece_start.get(), part_start.get(), P, partial.get(),
        multi_list.get(), multi_count.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    combine_pieces_kernel<T, O, R, S><<<grid_for(n / P + 1, 1), block_threads, 0, p.stream>>>(
        L.starts, out, r, opts, piece_start.get(), part_start.get(), partial.get(), multi_list.get(),
        multi_count.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

} // namespace detail
} // namespace cuda
} // namespace segred
