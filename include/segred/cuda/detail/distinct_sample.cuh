// segred/cuda/detail/distinct_sample.cuh -- whether a sample of a call's
// rows holds few distinct ids, in no runs, judged on the device, so that a
// path can be chosen without the host waiting for the device.
//
// Why: past the L2, the bucketed extremum (bucket_extremum.cuh) moves every
// row twice more so that its atomics land in shared memory; where few ids
// take most rows (Zipf ids), the atomic kernel's keys of those ids stay in
// the L2 and it takes about half the time of the passes (H200, 2^26 rows of
// Zipf(1.1) ids into 2^24 fp32 maxima: 0.68 ms against 1.25). Where the ids
// come in runs (all equal, sorted), the passes' counting pass adds the rows
// a run at a time, faster than the atomic kernel (0.32 ms against 0.47).
//
// The sample: runs of sample_run_rows consecutive rows, spread evenly over
// the rows (every row where there are no more than the sample's rows), at
// most sample_runs runs, and at most a row a 32-byte sector of the L2. An id
// that repeats within a sample of S of the n rows has about 2n / S rows in
// all, so the ids that repeat are at most S / 2: in the L2 where they take a
// sector each (a key, or a few neighbours' keys). Where most rows repeat,
// the atomic kernel's read-modify-writes mostly stay in the L2.
//
// Each sampled id sets a bit of a bitmap of 2^sample_bits_log2 bits at a
// hash of the id, and a row whose atomicOr finds its bit clear counts it.
// The distinct ids are estimated from the bits set by linear counting,
// D = -B ln(1 - set / B), within a percent at the sample's at most 2^18
// ids in 2^21 bits. The sample is that small to keep its cost down (H200,
// ncu: the kernel took 22-32 µs over 2^20 rows, 17 µs over 2^18; a call
// pays 20-26 µs for the sample in all, launches and memset included).
// A row skips the bitmap where its block has seen its hash already (a
// small table in shared memory, kept by plain stores: a row skips only on
// finding its own hash, which a row that went on stored), and a row whose
// read finds its bit set skips the atomic: the rows of one hot id would
// otherwise queue on one word (half of 2^20 sampled rows on one id took
// 0.13-0.40 ms without them). The last block to finish writes the
// verdict, one word in device memory for later kernels on the stream.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "launch.cuh"
#include "temp_buffer.cuh"

namespace segred {
namespace cuda {
namespace detail {

constexpr int sample_run_rows = 4096;
constexpr std::int64_t sample_runs = 64;
constexpr int sample_bits_log2 = 21;  // 256 KiB of bitmap
constexpr int sample_threads = 512;

// What the sample asks: few distinct ids (fewer than few_share of the
// sampled rows; out-of-range ids are not sampled) in no runs (more than
// 1 / run_heads of the sampled rows start a run: their id differs from the
// row before's).
struct distinct_question {
    double few_share;
    unsigned run_heads;
};

// Counters of distinct_sample_kernel (zeroed before it runs) and its verdict:
// 1 where the sample holds few distinct ids in no runs, else 0.
struct distinct_tally {
    unsigned sampled, heads, bits_set, blocks_done, verdict;
};

inline namespace SEGRED_ABI_NS {

// One block a run: [blockIdx.x * stride, + sample_run_rows) of the n rows.
// Each thread loads its rows' ids and the ids before them (the same lines,
// mostly), drops those its block has seen, reads the others' bitmap words,
// then sets the bits found clear.
template <class SegOf>
SEGRED_KERNEL void __launch_bounds__(sample_threads)
    distinct_sample_kernel(SegOf seg_of, std::int64_t n, std::int64_t stride, distinct_question q,
                           unsigned* bitmap, distinct_tally* tally) {
    constexpr int R = sample_run_rows / sample_threads;
    constexpr unsigned seen_slots = 2048, none = ~0u;  // hashes are below 2^sample_bits_log2
    __shared__ unsigned seen[seen_slots];
    for (unsigned e = threadIdx.x; e < seen_slots; e += blockDim.x) seen[e] = none;
    const std::int64_t first = std::int64_t(blockIdx.x) * stride, r0 = first + threadIdx.x;
    std::int64_t k[R];
    unsigned heads = 0;
#pragma unroll
    for (int j = 0; j < R; ++j) {
        const std::int64_t i = r0 + j * sample_threads;
        k[j] = i < n ? static_cast<std::int64_t>(seg_of(i)) : -1;
        if (k[j] >= 0 && (i == first || static_cast<std::int64_t>(seg_of(i - 1)) != k[j])) ++heads;
    }
    __syncthreads();
    unsigned h[R], sampled = 0;
#pragma unroll
    for (int j = 0; j < R; ++j) {
        h[j] = none;
        if (k[j] < 0) continue;
        ++sampled;
        // Fibonacci hashing: the high bits of the id times 2^64 / phi.
        const unsigned hash = static_cast<unsigned>((static_cast<std::uint64_t>(k[j]) * 0x9E3779B97F4A7C15ull) >>
                                                    (64 - sample_bits_log2));
        unsigned& slot = seen[hash % seen_slots];
        if (slot == hash) continue;
        slot = hash;
        h[j] = hash;
    }
    unsigned word[R];
#pragma unroll
    for (int j = 0; j < R; ++j) word[j] = h[j] != none ? bitmap[h[j] >> 5] : ~0u;
    unsigned set = 0;
#pragma unroll
    for (int j = 0; j < R; ++j) {
        const unsigned bit = 1u << (h[j] & 31u);
        if ((word[j] & bit) == 0 && (atomicOr(bitmap + (h[j] >> 5), bit) & bit) == 0) ++set;
    }
    sampled = __reduce_add_sync(0xffffffffu, sampled);
    heads = __reduce_add_sync(0xffffffffu, heads);
    set = __reduce_add_sync(0xffffffffu, set);
    if (threadIdx.x % 32 == 0 && sampled != 0) {
        atomicAdd(&tally->sampled, sampled);
        atomicAdd(&tally->heads, heads);
        if (set != 0) atomicAdd(&tally->bits_set, set);
    }
    __syncthreads();  // every warp of the block has added
    if (threadIdx.x != 0) return;
    __threadfence();
    if (atomicAdd(&tally->blocks_done, 1u) != gridDim.x - 1) return;
    __threadfence();  // the other blocks' counts, fenced before their tickets
    const double bits = double(1u << sample_bits_log2);
    const double rows = double(atomicAdd(&tally->sampled, 0u));
    const double distinct = -bits * log1p(-double(atomicAdd(&tally->bits_set, 0u)) / bits);
    const bool in_runs = double(atomicAdd(&tally->heads, 0u)) * q.run_heads <= rows;
    tally->verdict = distinct < q.few_share * rows && !in_runs ? 1u : 0u;
}

} // namespace SEGRED_ABI_NS

// Launches the sample over the n rows (n > 0) on p.stream; verdict() is
// the device word it writes. Its counters and bitmap share one allocation
// and one memset: each costs the stream microseconds that every call pays.
class distinct_sample {
public:
    template <class SegOf>
    distinct_sample(const par_t& p, SegOf seg_of, std::int64_t n, distinct_question q)
        : words_(p, tally_words + bitmap_words) {
        SEGRED_CUDA_CHECK(cudaMemsetAsync(words_.get(), 0, (tally_words + bitmap_words) * sizeof(unsigned), p.stream));
        const std::int64_t sectors = device_attribute(cudaDevAttrL2CacheSize) / 32;
        const std::int64_t most_runs = std::max<std::int64_t>(1, std::min(sample_runs, sectors / sample_run_rows));
        const bool all = n <= most_runs * sample_run_rows;
        const std::int64_t stride = all ? sample_run_rows : n / most_runs;
        const std::int64_t runs = all ? (n + sample_run_rows - 1) / sample_run_rows : most_runs;
        distinct_sample_kernel<<<static_cast<unsigned>(runs), sample_threads, 0, p.stream>>>(
            seg_of, n, stride, q, words_.get() + tally_words, tally());
        SEGRED_CUDA_CHECK(cudaGetLastError());
    }
    // 1 where the sample held few distinct ids in no runs, else 0.
    const unsigned* verdict() const { return &tally()->verdict; }
    distinct_tally* tally() const { return reinterpret_cast<distinct_tally*>(words_.get()); }

private:
    static constexpr std::int64_t tally_words = 8;  // the bitmap 32-byte aligned after the counters
    static constexpr std::int64_t bitmap_words = std::int64_t(1) << (sample_bits_log2 - 5);
    static_assert(sizeof(distinct_tally) <= tally_words * sizeof(unsigned), "the counters fit before the bitmap");
    temp_buffer<unsigned> words_;
};

} // namespace detail
} // namespace cuda
} // namespace segred
