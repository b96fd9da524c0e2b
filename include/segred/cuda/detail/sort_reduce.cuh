// segred/cuda/detail/sort_reduce.cuh -- the deterministic path for sums,
// means and counts of one column over unsorted ids: the values are
// radix-sorted by id (stably, on as few key bits as M needs), then reduced as
// sorted ids by the tile reduction.
//
// Moving the values with the keys, rather than sorting (id, row) pairs into a
// permutation and gathering the values through it, reads each segment's
// values contiguously: the sort moves 8 bytes a row per pass instead of 12
// and the reduction reads in order instead of through the permutation. A
// stable sort keeps each segment's rows in row order and the tile shapes are
// fixed, so the bits are the same on every run.
#pragma once

#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>

#include <cstdint>

#include "../../core/options.hpp"
#include "../../core/views.hpp"
#include "cub_call.cuh"
#include "temp_buffer.cuh"
#include "tile_reduce.cuh"

namespace segred {
namespace cuda {
namespace detail {

// ids: n valid ids in [0, M) (checked, or promised by unchecked), M > 0.
// Signed ids sort correctly on their low bits: every id is non-negative.
template <class I, class T, class O, class R>
void sort_then_reduce(const par_t& p, rows_view<const T> values, const I* ids, std::int64_t M, rows_view<O> out,
                      const R& r, const options& opts) {
    const std::int64_t n = values.n;
    int end_bit = 1;
    while (end_bit < 63 && (std::int64_t(1) << end_bit) < M) ++end_bit;  // ids lie in [0, M)
    temp_buffer<I> keys(p, n);
    temp_buffer<T> sorted(p, n);
    I* ko = keys.get();
    T* vo = sorted.get();
    cub_call(p, "cub::DeviceRadixSort::SortPairs", [&](void* t, std::size_t& bytes) {
        return cub::DeviceRadixSort::SortPairs(t, bytes, ids, ko, values.data, vo, n, 0, end_bit, p.stream);
    });
    tile_reduce<I>(p, rows_view<const T>{vo, n, 1}, id_keys<I>{ko}, M, out, r, opts);
}

} // namespace detail
} // namespace cuda
} // namespace segred
