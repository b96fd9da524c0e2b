// segred/cuda/detail/bucket_extremum.cuh -- unsorted min / max / argmin /
// argmax of one column into more keys than the L2 holds: rows partitioned
// by id into buckets (bucket_scatter.cuh's passes 1 to 3, each row carrying
// its packed key, extremum_key.cuh), then each bucket's keys kept in shared
// memory.
//
// Why: past the L2, the atomic path's atomicMax on a segment's 8-byte key
// is a read-modify-write of a 32-byte sector in device memory for every row
// (H200, 2^26 uniform rows into 2^24 fp32 maxima: 202 GB/s of model bytes,
// 0.05 of a copy, below torch's `scatter_reduce` by a plain atomic scatter).
// Here every row's atomicMax lands in shared memory and each bucket's keys
// reach device memory once, in order; rows of hot buckets (more than 1/64
// of the rows: skewed ids) are added by the tile pass itself, into keys
// that stay in the L2. Where a sample of the rows finds few distinct ids in
// no runs (Zipf ids: distinct_sample.cuh), the atomic kernel adds the rows
// and the passes find nothing to do. The winner is the greatest key, so
// either way gives the same bits as the atomic kernel alone.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "../../core/numeric.hpp"
#include "../../core/views.hpp"
#include "bucket_scatter.cuh"
#include "distinct_sample.cuh"
#include "extremum_key.cuh"
#include "launch.cuh"

namespace segred {
namespace cuda {
namespace detail {

inline namespace SEGRED_ABI_NS {

// A row's packed key: what pass 3 carries (make), and what pass 1 adds for
// a tile in runs, and pass 3 for a row of a hot bucket, into the segment's
// key in device memory (add). A key is sent to atomicMax only when it beats
// the one there: a run's later rows mostly stop at that read.
template <bool Max, class T>
struct extremum_rows {
    using type = unsigned long long;
    static constexpr bool carried = true;
    __device__ static type make(const T& v, std::int64_t row) {
        return extremum_key<Max>(segred::detail::convert<segred::detail::compare_t<T>>(v), row);
    }
    __device__ static void add(type* keys, std::int64_t k, const T& v, std::int64_t row) {
        const type key = make(v, row);
        if (key > keys[k]) atomicMax(keys + k, key);
    }
};

// Pass 4: partitioned rows [chunk * blockIdx.x, ...), bucket by bucket, each
// bucket's keys in shared memory ([2^shift] of them), then each key that
// beats the segment's key in device memory sent there by atomicMax (another
// block's chunk may hold rows of the same bucket, and pass 1 may have added
// tiles in runs). Eight rows a thread in flight, as in bucket_sum_kernel.
// Buckets of 2^14 keys (bucket_shared_bytes), one block an SM: buckets of
// 2^13 keys, two blocks an SM, took 1.3x the time, as their twice as many
// buckets left pass 3 writing half as many rows a bucket at a time (H200,
// 2^26 uniform rows into 2^24 fp32 maxima). A template (on nothing) so the
// header defines it once per program.
template <class Key = unsigned long long>
SEGRED_KERNEL void __launch_bounds__(bucket_sum_threads, 1)
    bucket_extremum_kernel(const std::uint16_t* part_ids, const Key* part_keys, const unsigned* starts, int shift,
                           int buckets, std::int64_t M, Key* keys) {
    extern __shared__ unsigned long long shared_words[];
    Key* cell = shared_words;
    const unsigned cells = 1u << shift;
    const std::int64_t total = starts[buckets];
    const std::int64_t lo = std::int64_t(blockIdx.x) * bucket_chunk_rows;
    if (lo >= total) return;
    const std::int64_t hi = lo + bucket_chunk_rows < total ? lo + bucket_chunk_rows : total;
    for_each_bucket_in_chunk(starts, buckets, lo, hi, [&](int b, std::int64_t r0, std::int64_t r1) {
        if (bucket_is_hot(starts, b, static_cast<unsigned>(total))) return;  // added by pass 3
        for (unsigned e = threadIdx.x; e < cells; e += blockDim.x) cell[e] = 0;
        __syncthreads();
        constexpr int ahead = 8;
        for (std::int64_t i = r0 + threadIdx.x; i < r1; i += ahead * std::int64_t(blockDim.x)) {
            unsigned e[ahead];
            Key key[ahead];
#pragma unroll
            for (int j = 0; j < ahead; ++j) {
                const std::int64_t q = i + j * std::int64_t(blockDim.x);
                e[j] = q < r1 ? part_ids[q] : 0u;
                key[j] = q < r1 ? part_keys[q] : 0ull;
            }
#pragma unroll
            for (int j = 0; j < ahead; ++j)
                if (key[j] > cell[e[j]]) atomicMax(cell + e[j], key[j]);  // key 0: no row
        }
        __syncthreads();
        const std::int64_t id0 = std::int64_t(b) << shift;
        for (unsigned e = threadIdx.x; e < cells && id0 + e < M; e += blockDim.x) {
            const Key key = cell[e];
            if (key != 0 && key > keys[id0 + e]) atomicMax(keys + id0 + e, key);
        }
        __syncthreads();  // the next bucket zeroes the cells
    });
}

} // namespace SEGRED_ABI_NS

// Where a sample of the rows (distinct_sample.cuh) holds fewer distinct ids
// than this share of its rows, and its ids are not in runs as the counting
// pass judges a tile's (run_tile_heads), the atomic kernel adds the rows
// and these passes find nothing to do. H200, 2^26 rows into 2^23 to 2^26
// maxima, the sample's share of distinct ids and the atomic kernel's time
// over the passes': Zipf(1.1) ids 0.26-0.29, 0.44-0.58x; half the rows on
// one id 0.50, 1.1-1.4x; Zipf(0.9) 0.60-0.70, 0.94-1.15x; rows on 2^19 ids
// of M 0.76, 0.60-0.98x (here the passes stay: a miss).
constexpr double few_distinct_share = 0.4;

// One column of values into keys[M] (zeroed, or holding keys already)
// through the passes above, or through atomic_kernel(only_if) where the
// sample finds few distinct ids (a launch of the atomic kernel that adds
// the rows where *only_if is not 0, and else does nothing): launched, and
// true; false where plan_buckets declines (the keys fit in three quarters
// of the L2), and nothing done but a sample. Fewer than 2^32 - 1 rows
// (extremum_scatter_fits).
template <bool Max, class T, class SegOf, class AtomicKernel>
bool bucket_extremum(const par_t& p, rows_view<const T> values, SegOf seg_of, std::int64_t M,
                     unsigned long long* keys, AtomicKernel&& atomic_kernel) {
    using rows_t = extremum_rows<Max, T>;
    const auto kernel = bucket_extremum_kernel<>;
    constexpr std::size_t per_id = sizeof(unsigned long long);
    const bucket_plan plan =
        plan_buckets(values.n, M, per_id, static_cast<std::size_t>(M) * per_id,
                     std::min(bucket_shared_bytes, private_shared_limit(kernel, true)),
                     static_cast<std::size_t>(device_attribute(cudaDevAttrL2CacheSize)));
    if (plan.buckets == 0) return false;
    const distinct_sample sample(p, seg_of, values.n, distinct_question{few_distinct_share, run_tile_heads});
    bucketed_rows<unsigned long long> rows;
    if (!partition_into_buckets<rows_t, false, rows_t, rows_t>(p, values, seg_of, plan, keys, count_sink{}, rows,
                                                               sample.verdict()))
        return false;
    atomic_kernel(sample.verdict());
    const std::size_t bytes = (std::size_t(1) << plan.shift) * per_id;
    allow_dynamic_shared(kernel, bytes);
    kernel<<<static_cast<unsigned>((values.n + bucket_chunk_rows - 1) / bucket_chunk_rows), bucket_sum_threads, bytes,
             p.stream>>>(rows.ids.get(), rows.payloads.get(), rows.starts.get(), plan.shift,
                         static_cast<int>(plan.buckets), M, keys);
    SEGRED_CUDA_CHECK(cudaGetLastError());
    return true;
}

} // namespace detail
} // namespace cuda
} // namespace segred
