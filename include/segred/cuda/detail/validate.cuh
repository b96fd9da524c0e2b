// segred/cuda/detail/validate.cuh -- the check policy on the GPU: find the
// first bad position with a parallel scan, read it back (this synchronizes
// the stream, which is why only `check` does it) and throw the same message
// the host backend gives.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "../../core/checks.hpp"
#include "../../core/descriptors.hpp"
#include "launch.cuh"
#include "temp_buffer.cuh"

namespace segred {
namespace cuda {
namespace detail {
inline namespace SEGRED_ABI_NS {

// The grid's smallest i in [0, n) with bad(i), into *first (set to ~0
// before the launch).
template <class Pred>
__device__ void find_first_bad(std::int64_t n, const Pred& bad, unsigned long long* first) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (bad(i)) {
            atomicMin(first, static_cast<unsigned long long>(i));
            return;  // this thread's later positions are larger
        }
    }
}

template <class Pred>
SEGRED_KERNEL void first_bad_kernel(std::int64_t n, Pred bad, unsigned long long* first) {
    find_first_bad(n, bad, first);
}

template <class I>
struct id_out_of_range {
    const I* ids;
    std::int64_t M;
    __device__ bool operator()(std::int64_t i) const {
        const std::int64_t k = static_cast<std::int64_t>(ids[i]);
        return k < 0 || k >= M;
    }
};

template <class I>
struct is_negative {
    const I* p;
    __device__ bool operator()(std::int64_t i) const { return p[i] < 0; }
};

// Position i+1 is below position i (offsets: i in [0, M)).
template <class I>
struct next_decreases {
    const I* p;
    __device__ bool operator()(std::int64_t i) const { return p[i + 1] < p[i]; }
};

// Row i of sorted ids is out of range or below row i - 1.
template <class I>
struct bad_sorted_id {
    const I* ids;
    std::int64_t M;
    __device__ bool operator()(std::int64_t i) const {
        const std::int64_t k = static_cast<std::int64_t>(ids[i]);
        return k < 0 || k >= M || (i > 0 && ids[i] < ids[i - 1]);
    }
};

template <class I>
struct bad_subscript_row {
    subscripts_desc<I> d;
    __device__ bool operator()(std::int64_t i) const { return d.linear_index(i) < 0; }
};

// All that check_offsets needs to know, read back in one copy.
struct offsets_verdict {
    unsigned long long first_decrease;  // i with offsets[i + 1] < offsets[i], the smallest; ~0 if none
    long long first, last;              // offsets[0] and offsets[M]
};

template <class I>
SEGRED_KERNEL void offsets_verdict_kernel(const I* offsets, std::int64_t M, offsets_verdict* verdict) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        verdict->first = static_cast<long long>(offsets[0]);
        verdict->last = static_cast<long long>(offsets[M]);
    }
    find_first_bad(M, next_decreases<I>{offsets}, &verdict->first_decrease);
}

// All that the check of lengths needs to know, read back in one copy.
struct lengths_verdict {
    unsigned long long first_negative;  // ~0 if none
    long long total;                    // starts[M]: the lengths' sum
};

template <class I, class J>
SEGRED_KERNEL void lengths_verdict_kernel(const I* lengths, std::int64_t M, const J* starts,
                                          lengths_verdict* verdict) {
    if (blockIdx.x == 0 && threadIdx.x == 0) verdict->total = static_cast<long long>(starts[M]);
    find_first_bad(M, is_negative<I>{lengths}, &verdict->first_negative);
}

} // namespace SEGRED_ABI_NS

// A check's verdict: a V in device memory with every byte 0xff (~0: nothing
// found yet), `launch(grid, verdict)` run over n positions, and the verdict
// read back in one copy (one wait for the stream).
template <class V, class Launch>
V verdict_of(const par_t& p, std::int64_t n, const Launch& launch) {
    temp_buffer<V> verdict(p, 1);
    SEGRED_CUDA_CHECK(cudaMemsetAsync(verdict.get(), 0xff, sizeof(V), p.stream));
    launch(std::max(grid_for(n), 1u), verdict.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    return read_back(p, verdict.get());
}

// Smallest i in [0, n) with bad(i), or -1.
template <class Pred>
std::int64_t first_bad(const par_t& p, std::int64_t n, Pred bad) {
    if (n <= 0) return -1;
    const unsigned long long v = verdict_of<unsigned long long>(p, n, [&](unsigned grid, unsigned long long* first) {
        first_bad_kernel<<<grid, block_threads, 0, p.stream>>>(n, bad, first);
    });
    return v == ~0ull ? -1 : static_cast<std::int64_t>(v);
}

template <class I>
std::int64_t value_at(const par_t& p, const I* ptr, std::int64_t i) {
    return static_cast<std::int64_t>(read_back(p, ptr + i));
}

template <class I>
void check_ids(const par_t& p, const char* fn, const char* arg, const I* ids, std::int64_t n, std::int64_t M) {
    const std::int64_t bad = first_bad(p, n, id_out_of_range<I>{ids, M});
    if (bad >= 0) segred::detail::fail_out_of_range(fn, arg, bad, value_at(p, ids, bad), M);
}

// One kernel and one copy back (one wait for the stream) for the three
// rules, judged on the host in the order the host backend checks them; the
// values named in a message are read afterwards, on the way to the throw.
// A copy back for each rule (three waits) cost small calls most of their
// time (docs/PERFORMANCE.md).
template <class I>
void check_offsets(const par_t& p, const char* fn, const offsets_desc<I>& d, std::int64_t n) {
    if (d.ptr == nullptr) return;  // M == 0 and n == 0
    const offsets_verdict v = verdict_of<offsets_verdict>(p, d.M, [&](unsigned grid, offsets_verdict* verdict) {
        offsets_verdict_kernel<<<grid, block_threads, 0, p.stream>>>(d.ptr, d.M, verdict);
    });
    if (v.first < 0) segred::detail::fail_negative(fn, "offsets", 0, v.first);
    if (v.first_decrease != ~0ull) {
        const std::int64_t bad = static_cast<std::int64_t>(v.first_decrease);
        segred::detail::fail_decreasing(fn, "offsets", bad + 1, value_at(p, d.ptr, bad + 1), value_at(p, d.ptr, bad));
    }
    if (v.last > n) segred::detail::fail_past_end(fn, d.M, v.last, n);
}

// The check of lengths, after their scan into `starts` (which takes negative
// lengths without harm: as 0, or in 64-bit sums): the first negative length
// and the sum, read back at once. Returns the sum; throws on a negative
// length.
template <class I, class J>
std::int64_t checked_lengths_sum(const par_t& p, const char* fn, const lengths_desc<I>& d, const J* starts) {
    const lengths_verdict v = verdict_of<lengths_verdict>(p, d.M, [&](unsigned grid, lengths_verdict* verdict) {
        lengths_verdict_kernel<<<grid, block_threads, 0, p.stream>>>(d.ptr, d.M, starts, verdict);
    });
    if (v.first_negative != ~0ull) {
        const std::int64_t bad = static_cast<std::int64_t>(v.first_negative);
        segred::detail::fail_negative(fn, "lengths", bad, value_at(p, d.ptr, bad));
    }
    return static_cast<std::int64_t>(v.total);
}

template <class I>
void check_sorted_ids(const par_t& p, const char* fn, const sorted_ids_desc<I>& d, std::int64_t n) {
    // One scan for both rules, so the message names the first bad row.
    const std::int64_t bad = first_bad(p, n, bad_sorted_id<I>{d.ptr, d.M});
    if (bad < 0) return;
    const std::int64_t v = value_at(p, d.ptr, bad);
    if (v < 0 || v >= d.M) segred::detail::fail_out_of_range(fn, "sorted_ids", bad, v, d.M);
    segred::detail::fail_decreasing(fn, "sorted_ids", bad, v, value_at(p, d.ptr, bad - 1));
}

template <class I>
void check_subscripts(const par_t& p, const char* fn, const subscripts_desc<I>& d, std::int64_t n) {
    const std::int64_t bad = first_bad(p, n, bad_subscript_row<I>{d});
    if (bad < 0) return;
    for (int dim = 0; dim < d.ndim; ++dim) {
        const std::int64_t v = value_at(p, d.ptr, bad * d.ndim + dim);
        if (v < 0 || v >= d.shape[dim]) segred::detail::fail_subscript(fn, bad, dim, v, d.shape[dim]);
    }
}

} // namespace detail
} // namespace cuda
} // namespace segred
