// segred/cuda/detail/extremum_scatter.cuh -- min / max / argmin / argmax over
// unsorted ids by atomics, without sorting.
//
// Each (value, row) is packed into one 64-bit key whose unsigned order is the
// reducer's order (extremum_key.cuh). A segment's winner is then the
// atomicMax of its keys: the same whatever order the atomics land in, so this
// path is deterministic. Key 0 marks an empty segment. The output value is
// unpacked from the winning key, or read back from its row where the key
// does not hold it (zeros and NaN). One column into more keys than the L2
// holds partitions the rows by id first (bucket_extremum.cuh).
//
// Applies to compare types of at most 32 bits (float, fp16/bf16 through
// float, integers up to 32 bits) and fewer than 2^32 - 1 rows; other cases,
// and counts(), take the sorted path.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../core/finalize.hpp"
#include "../../core/numeric.hpp"
#include "../../core/reducers.hpp"
#include "bucket_extremum.cuh"
#include "extremum_key.cuh"
#include "launch.cuh"
#include "temp_buffer.cuh"

namespace segred {
namespace cuda {
namespace detail {

// Max (true) or min (false), and whether the state keeps the row; void for
// reducers this path does not take.
template <class R> struct extremum_kind { static constexpr bool applies = false; };
template <> struct extremum_kind<segred::max> { static constexpr bool applies = true, is_max = true; };
template <> struct extremum_kind<segred::min> { static constexpr bool applies = true, is_max = false; };
template <> struct extremum_kind<segred::argmax> { static constexpr bool applies = true, is_max = true; };
template <> struct extremum_kind<segred::argmin> { static constexpr bool applies = true, is_max = false; };
template <> struct extremum_kind<segred::detail::max_with_arg> { static constexpr bool applies = true, is_max = true; };
template <> struct extremum_kind<segred::detail::min_with_arg> { static constexpr bool applies = true, is_max = false; };

template <class T, class R>
constexpr bool extremum_scatter_applies() {
    using C = segred::detail::compare_t<T>;
    return extremum_kind<R>::applies && sizeof(C) <= 4 && (std::is_floating_point<C>::value || std::is_integral<C>::value);
}

constexpr std::size_t shared_key_bytes = 32 * 1024;

inline namespace SEGRED_ABI_NS {

// Rows in a grid-stride loop over (row, column). Shared: block-private keys
// first (M * F fits in shared memory), merged into global keys at the end.
// A key is only sent to atomicMax when it beats what is already there: for a
// hot segment almost every row stops at that read. only_if (null: always):
// a verdict of the device, the kernel doing nothing where *only_if is 0.
template <bool Max, bool Shared, class T, class SegOf>
SEGRED_KERNEL void __launch_bounds__(block_threads)
    extremum_scatter_kernel(rows_view<const T> values, SegOf seg_of, std::int64_t cells,
                            unsigned long long* keys, const unsigned* only_if) {
    using C = segred::detail::compare_t<T>;
    if (only_if != nullptr && *only_if == 0) return;
    extern __shared__ unsigned long long shared_keys[];
    unsigned long long* target = Shared ? shared_keys : keys;
    if (Shared) {
        for (std::int64_t e = threadIdx.x; e < cells; e += blockDim.x) shared_keys[e] = 0;
        __syncthreads();
    }
    const std::int64_t F = values.width, total = values.n * F;
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
        const std::int64_t i = e / F, f = e - i * F;
        const std::int64_t k = seg_of(i);
        if (k < 0) continue;
        const unsigned long long key = extremum_key<Max>(segred::detail::convert<C>(values.data[e]), i);
        unsigned long long* addr = target + k * F + f;
        if (key > *addr) atomicMax(addr, key);
    }
    if (Shared) {
        __syncthreads();
        for (std::int64_t e = threadIdx.x; e < cells; e += blockDim.x) {
            const unsigned long long key = shared_keys[e];
            if (key != 0 && key > keys[e]) atomicMax(keys + e, key);
        }
    }
}

template <class T, class O, class R>
SEGRED_KERNEL void finish_extremum_kernel(const unsigned long long* keys, std::int64_t M, rows_view<const T> values,
                                          rows_view<O> out, R r, options opts) {
    using C = segred::detail::compare_t<T>;
    const std::int64_t F = out.width, total = M * F;
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
        const std::int64_t s = e / F, f = e - s * F;
        const unsigned long long key = keys[e];
        state_t<R, T> st = r.template init<T>();
        if (key != 0) {
            const std::int64_t row = key_row(key);
            // Unpacked where the key holds the value: a read at a random
            // row costs a 32-byte sector for 4 bytes.
            C c;
            if (!key_value<extremum_kind<R>::is_max>(key, c)) c = segred::detail::convert<C>(values(row, f));
            if constexpr (R::has_arg) {
                st.value = c;
                st.row = row;
            } else {
                st = c;
            }
        }
        segred::detail::write_result<T>(r, opts, out, s, f, st, key != 0 ? 1 : 0);
    }
}

} // namespace SEGRED_ABI_NS

// Whether the atomic extremum path takes this call.
template <class T, class R>
bool extremum_scatter_fits(rows_view<const T> values, const options& opts) {
    if constexpr (extremum_scatter_applies<T, R>()) {
        return opts.counts_out == nullptr && values.n < std::int64_t(0xffffffffll);
    } else {
        (void)values;
        (void)opts;
        return false;
    }
}

template <class T, class O, class R, class SegOf>
void extremum_scatter(const par_t& p, rows_view<const T> values, SegOf seg_of, std::int64_t M, rows_view<O> out,
                      const R& r, const options& opts) {
    constexpr bool is_max = extremum_kind<R>::is_max;
    const std::int64_t cells = M * out.width;
    temp_buffer<unsigned long long> keys(p, cells);
    SEGRED_CUDA_CHECK(cudaMemsetAsync(keys.get(), 0, static_cast<std::size_t>(cells) * sizeof(unsigned long long),
                                      p.stream));
    const std::int64_t work = values.n * values.width;
    const std::size_t shared_bytes = static_cast<std::size_t>(cells) * sizeof(unsigned long long);
    const auto atomic_keys = [&](const unsigned* only_if) {
        if (shared_bytes <= shared_key_bytes)
            extremum_scatter_kernel<is_max, true, T><<<grid_for(work), block_threads, shared_bytes, p.stream>>>(
                values, seg_of, cells, keys.get(), only_if);
        else
            extremum_scatter_kernel<is_max, false, T><<<grid_for(work), block_threads, 0, p.stream>>>(
                values, seg_of, cells, keys.get(), only_if);
        SEGRED_CUDA_CHECK(cudaGetLastError());
    };
    if (work > 0 && !(values.width == 1 && bucket_extremum<is_max>(p, values, seg_of, M, keys.get(), atomic_keys)))
        atomic_keys(nullptr);
    finish_extremum_kernel<T><<<grid_for(cells), block_threads, 0, p.stream>>>(keys.get(), M, values, out, r, opts);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

} // namespace detail
} // namespace cuda
} // namespace segred
