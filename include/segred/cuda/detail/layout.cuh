// segred/cuda/detail/layout.cuh -- every segment descriptor turned into one
// device shape: segment s is positions [starts[s], starts[s+1]), position k
// stands for value row perm[k] (or k itself when perm is null).
//
// Sorted forms use the rows in place. Unsorted ids and N-D subscripts are
// radix-sorted (stably, on as few key bits as M needs) into a permutation,
// which keeps each segment's rows in increasing order: the reduction order,
// and so every result bit, is fixed run to run.
#pragma once

#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include <cuda/std/functional>

#include <cstdint>
#include <type_traits>

#include "../../core/backend.hpp"
#include "../../core/descriptors.hpp"
#include "../../core/options.hpp"
#include "cub_call.cuh"
#include "launch.cuh"
#include "lengths_scan.cuh"
#include "temp_buffer.cuh"
#include "validate.cuh"

namespace segred {
namespace cuda {
namespace detail {

struct device_layout {
    std::int64_t M = 0;
    const std::int64_t* starts = nullptr;  // [M + 1] on the device
    const std::int64_t* perm = nullptr;    // null: position k is row k
    bool covers_every_row = true;          // false: some rows may be in no segment
    temp_buffer<std::int64_t> own_starts, own_perm;
};

inline namespace SEGRED_ABI_NS {

template <class I>
SEGRED_KERNEL void offsets_to_starts_kernel(const I* off, std::int64_t M, std::int64_t n, bool clamp,
                                            std::int64_t* starts) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s <= M; s += stride) {
        std::int64_t v = static_cast<std::int64_t>(off[s]);
        if (clamp) v = v < 0 ? 0 : (v > n ? n : v);
        starts[s] = v;
    }
}

// lengths[s] as an int64 for s < M (negative as 0 under drop), 0 for s = M:
// what the exclusive scan into M + 1 starts reads, straight from the
// caller's lengths (an int64 copy of them first cost a write and a read of
// 8 bytes a segment, as much as the values at one-row segments).
template <class I>
struct length_at {
    const I* len;
    std::int64_t M;
    bool clamp;
    __host__ __device__ std::int64_t operator()(std::int64_t s) const {
        const std::int64_t v = s < M ? static_cast<std::int64_t>(len[s]) : 0;
        return clamp && v < 0 ? 0 : v;
    }
};

template <class J>
SEGRED_KERNEL void clamp_kernel(J* v, std::int64_t count, std::int64_t hi) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        if (v[i] > hi) v[i] = hi;
}

// A start as a 32-bit int, saturated at INT32_MAX: starts from lengths are
// non-decreasing, so saturated ones stay so, and with fewer than INT32_MAX
// rows a sum that reaches the saturation can never pass for the row count.
struct saturated_int32 {
    __host__ __device__ std::int32_t operator()(std::int64_t v) const {
        return v < INT32_MAX ? static_cast<std::int32_t>(v) : INT32_MAX;
    }
};

// A template (on nothing) so the header defines it once per program, not once per TU.
template <class Int = std::int64_t>
SEGRED_KERNEL void fixed_starts_kernel(std::int64_t size, std::int64_t M, std::int64_t* starts) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s <= M; s += stride)
        starts[s] = s * size;
}

// starts[s] = first position whose key is >= s, for s in [0, M], from keys
// sorted and lying in [0, M]. Pass 1, per position i: where the key steps up
// from prev to cur, the segments (prev, cur] start at i; a short gap is filled
// right there, a long one only at cur (its empty segments stay -1, from the
// memset). Pass 2 gives each segment still at -1 its start by binary search,
// so a huge gap of empty segments costs no serial loop.
constexpr std::int64_t gap_fill_limit = 64;

template <class K>
SEGRED_KERNEL void starts_at_steps_kernel(const K* keys, std::int64_t n, std::int64_t M, std::int64_t* starts) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i <= n; i += stride) {
        const std::int64_t prev = i == 0 ? -1 : static_cast<std::int64_t>(keys[i - 1]);
        const std::int64_t cur = i == n ? M : static_cast<std::int64_t>(keys[i]);
        if (cur == prev) continue;
        if (cur - prev <= gap_fill_limit) {
            for (std::int64_t s = prev + 1; s <= cur; ++s) starts[s] = i;
        } else {
            starts[cur] = i;
        }
    }
}

template <class K>
SEGRED_KERNEL void starts_in_gaps_kernel(const K* keys, std::int64_t n, std::int64_t M, std::int64_t* starts) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s <= M; s += stride) {
        if (starts[s] >= 0) continue;
        std::int64_t lo = 0, hi = n;
        while (lo < hi) {
            const std::int64_t mid = lo + (hi - lo) / 2;
            if (static_cast<std::int64_t>(keys[mid]) < s) lo = mid + 1; else hi = mid;
        }
        starts[s] = lo;
    }
}

template <class K>
void starts_from_sorted_keys(const par_t& p, const K* keys, std::int64_t n, std::int64_t M, std::int64_t* starts) {
    SEGRED_CUDA_CHECK(cudaMemsetAsync(starts, 0xff, static_cast<std::size_t>(M + 1) * sizeof(std::int64_t), p.stream));
    starts_at_steps_kernel<<<grid_for(n + 1), block_threads, 0, p.stream>>>(keys, n, M, starts);
    SEGRED_CUDA_CHECK(cudaGetLastError());
    starts_in_gaps_kernel<<<grid_for(M + 1), block_threads, 0, p.stream>>>(keys, n, M, starts);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

// Sort key of row i: its segment, or M for a row that belongs nowhere (it
// sorts past every segment and is never read).
template <class Seg>
struct sort_key {
    Seg seg;
    std::int64_t M;
    __device__ std::int64_t operator()(std::int64_t i) const {
        const std::int64_t k = segred::detail::row_segment(seg, i);
        return k >= 0 ? k : M;
    }
};

template <class KeyOf, class K>
SEGRED_KERNEL void make_keys_kernel(KeyOf key_of, std::int64_t n, K* keys, std::int64_t* rows) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        keys[i] = static_cast<K>(key_of(i));
        rows[i] = i;
    }
}

} // namespace SEGRED_ABI_NS

template <class I>
device_layout build_layout(const par_t& p, const char* fn, const offsets_desc<I>& d, std::int64_t n,
                           bounds_policy b) {
    device_layout L;
    L.M = d.M;
    L.covers_every_row = false;  // offsets may start after row 0 or end before n
    if (d.ptr == nullptr) {       // M == 0, n == 0
        L.own_starts = temp_buffer<std::int64_t>(p, 1);
        SEGRED_CUDA_CHECK(cudaMemsetAsync(L.own_starts.get(), 0, sizeof(std::int64_t), p.stream));
        L.starts = L.own_starts.get();
        return L;
    }
    if (b == bounds_policy::check) check_offsets(p, fn, d, n);
    if (b != bounds_policy::drop && std::is_same<I, std::int64_t>::value) {
        L.starts = reinterpret_cast<const std::int64_t*>(d.ptr);
        return L;
    }
    const bool drop = b == bounds_policy::drop;
    L.own_starts = temp_buffer<std::int64_t>(p, d.M + 1);
    temp_buffer<std::int64_t> clamped(p, drop ? d.M + 1 : 0);
    std::int64_t* first = drop ? clamped.get() : L.own_starts.get();
    offsets_to_starts_kernel<<<grid_for(d.M + 1), block_threads, 0, p.stream>>>(d.ptr, d.M, n, drop, first);
    SEGRED_CUDA_CHECK(cudaGetLastError());
    if (drop) {
        // A decreasing offset empties the segments it would have reversed.
        std::int64_t* out = L.own_starts.get();
        const std::int64_t count = d.M + 1;
        cub_call(p, "cub::DeviceScan::InclusiveScan", [&](void* t, std::size_t& bytes) {
            return cub::DeviceScan::InclusiveScan(t, bytes, first, out, max_of{}, count, p.stream);
        });
    }
    L.starts = L.own_starts.get();
    return L;
}

// The M + 1 starts of lengths, by an exclusive scan into out: int64, or
// int32 saturated at INT32_MAX where n < INT32_MAX (lengths_to_starts32).
// int32 lengths into int32 starts take the one-pass scan of
// lengths_scan.cuh (H200, 2^26 one-row segments: 1.36x CUB's scan below);
// the others CUB's scan in 64-bit sums.
// Under check, negative lengths and then a sum other than n throw (the exact
// sum named), judged after the scan with one read back (validate.cuh: it
// used to take two); under drop, negative lengths count as 0 and starts
// past n are clamped to it.
template <class J, class I>
void scan_lengths(const par_t& p, const char* fn, const lengths_desc<I>& d, std::int64_t n, bounds_policy b, J* out) {
    static_assert(std::is_same<J, std::int64_t>::value || std::is_same<J, std::int32_t>::value, "int64 or int32");
    const std::int64_t count = d.M + 1;
    if constexpr (std::is_same<J, std::int32_t>::value && std::is_same<I, std::int32_t>::value) {
        // Saturated at INT32_MAX, or under drop at n (drop's clamp of the
        // starts, which the other scans take from clamp_kernel).
        scan_lengths_into_int32(p, d.ptr, d.M, b == bounds_policy::drop ? n : std::int64_t(INT32_MAX), out);
    } else {
        const auto in = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0),
                                                        length_at<I>{d.ptr, d.M, b == bounds_policy::drop});
        if constexpr (std::is_same<J, std::int64_t>::value) {
            cub_call(p, "cub::DeviceScan::ExclusiveSum", [&](void* t, std::size_t& bytes) {
                return cub::DeviceScan::ExclusiveSum(t, bytes, in, out, count, p.stream);
            });
        } else {
            const auto to = thrust::make_transform_output_iterator(out, saturated_int32{});
            cub_call(p, "cub::DeviceScan::ExclusiveScan", [&](void* t, std::size_t& bytes) {
                return cub::DeviceScan::ExclusiveScan(t, bytes, in, to, ::cuda::std::plus<std::int64_t>{},
                                                      std::int64_t(0), count, p.stream);
            });
        }
        if (b == bounds_policy::drop) {
            clamp_kernel<<<grid_for(count), block_threads, 0, p.stream>>>(out, count, n);
            SEGRED_CUDA_CHECK(cudaGetLastError());
        }
    }
    if (b == bounds_policy::check) {
        const std::int64_t total = checked_lengths_sum(p, fn, d, out);
        if (total == n) return;
        if constexpr (std::is_same<J, std::int32_t>::value) {
            // The sum may be saturated: the 64-bit scan throws naming the
            // exact one.
            temp_buffer<std::int64_t> exact(p, d.M + 1);
            scan_lengths(p, fn, d, n, b, exact.get());
        }
        segred::detail::fail_lengths_sum(fn, total, n);
    }
}

template <class I>
device_layout build_layout(const par_t& p, const char* fn, const lengths_desc<I>& d, std::int64_t n,
                           bounds_policy b) {
    device_layout L;
    L.M = d.M;
    L.covers_every_row = b != bounds_policy::drop;
    L.own_starts = temp_buffer<std::int64_t>(p, d.M + 1);
    scan_lengths(p, fn, d, n, b, L.own_starts.get());
    L.starts = L.own_starts.get();
    return L;
}

// Whether starts of n rows fit the 32-bit ints of lengths_to_starts32.
inline bool starts32_fit(std::int64_t n) { return n < INT32_MAX; }

// Lengths as M + 1 32-bit starts, for n rows with starts32_fit(n): the
// offsets the one-column passes read in place, in half the bytes of a
// layout's int64 starts, which the scan writes and the passes read (H200,
// 2^26 floats: 1.08x on one-row segments, 1.14x on two-row, 1.02-1.10x
// from 4 to 32 rows and on mixed lengths).
template <class I>
temp_buffer<std::int32_t> lengths_to_starts32(const par_t& p, const char* fn, const lengths_desc<I>& d,
                                              std::int64_t n, bounds_policy b) {
    temp_buffer<std::int32_t> starts(p, d.M + 1);
    scan_lengths(p, fn, d, n, b, starts.get());
    return starts;
}

inline device_layout build_layout(const par_t& p, const char*, const fixed_desc& d, std::int64_t, bounds_policy) {
    device_layout L;
    L.M = d.M;
    L.own_starts = temp_buffer<std::int64_t>(p, d.M + 1);
    fixed_starts_kernel<<<grid_for(d.M + 1), block_threads, 0, p.stream>>>(d.size, d.M, L.own_starts.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    L.starts = L.own_starts.get();
    return L;
}

// Unsorted rows: sort (key, row) pairs by key; starts from the sorted keys.
template <class KeyOf>
device_layout sort_layout(const par_t& p, KeyOf key_of, std::int64_t n, std::int64_t M, bool may_drop) {
    device_layout L;
    L.M = M;
    L.covers_every_row = !may_drop;
    L.own_starts = temp_buffer<std::int64_t>(p, M + 1);
    L.starts = L.own_starts.get();
    if (n == 0 || M == 0) {
        // No positions at all: every start is 0 (rows, if any, are dropped).
        SEGRED_CUDA_CHECK(
            cudaMemsetAsync(L.own_starts.get(), 0, static_cast<std::size_t>(M + 1) * sizeof(std::int64_t), p.stream));
        return L;
    }
    int end_bit = 0;
    while (end_bit < 63 && (std::int64_t(1) << end_bit) <= M) ++end_bit;  // keys lie in [0, M]
    L.own_perm = temp_buffer<std::int64_t>(p, n);
    temp_buffer<std::int64_t> rows(p, n);
    auto run = [&](auto key_type_tag) {
        using K = decltype(key_type_tag);
        temp_buffer<K> keys_in(p, n), keys_out(p, n);
        make_keys_kernel<<<grid_for(n), block_threads, 0, p.stream>>>(key_of, n, keys_in.get(), rows.get());
        SEGRED_CUDA_CHECK(cudaGetLastError());
        const K* ki = keys_in.get();
        K* ko = keys_out.get();
        const std::int64_t* vi = rows.get();
        std::int64_t* vo = L.own_perm.get();
        cub_call(p, "cub::DeviceRadixSort::SortPairs", [&](void* t, std::size_t& bytes) {
            return cub::DeviceRadixSort::SortPairs(t, bytes, ki, ko, vi, vo, n, 0, end_bit, p.stream);
        });
        starts_from_sorted_keys(p, static_cast<const K*>(ko), n, M, L.own_starts.get());
    };
    if (M < (std::int64_t(1) << 32) - 1) run(std::uint32_t{}); else run(std::uint64_t{});
    L.perm = L.own_perm.get();
    return L;
}

template <class I>
device_layout build_layout(const par_t& p, const char* fn, const ids_desc<I>& d, std::int64_t n, bounds_policy b) {
    if (b == bounds_policy::check) check_ids(p, fn, "ids", d.ptr, n, d.M);
    return sort_layout(p, sort_key<ids_desc<I>>{d, d.M}, n, d.M, b == bounds_policy::drop);
}

template <class I>
device_layout build_layout(const par_t& p, const char* fn, const subscripts_desc<I>& d, std::int64_t n,
                           bounds_policy b) {
    if (b == bounds_policy::check) check_subscripts(p, fn, d, n);
    const std::int64_t M = d.num_segments();
    return sort_layout(p, sort_key<subscripts_desc<I>>{d, M}, n, M, b == bounds_policy::drop);
}

template <class I>
device_layout build_layout(const par_t& p, const char* fn, const sorted_ids_desc<I>& d, std::int64_t n,
                           bounds_policy b) {
    // Under drop, order is only a hint (as on the host): rows go to their own
    // id, so the rows are sorted like unsorted ids; no read-back is needed.
    if (b == bounds_policy::drop) return sort_layout(p, sort_key<sorted_ids_desc<I>>{d, d.M}, n, d.M, true);
    if (b == bounds_policy::check) check_sorted_ids(p, fn, d, n);
    device_layout L;
    L.M = d.M;
    L.own_starts = temp_buffer<std::int64_t>(p, d.M + 1);
    starts_from_sorted_keys(p, d.ptr, n, d.M, L.own_starts.get());
    L.starts = L.own_starts.get();
    return L;
}

} // namespace detail
} // namespace cuda
} // namespace segred
