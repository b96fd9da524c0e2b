// segred/cuda/detail/bucket_scatter.cuh -- the atomic path's one-column
// sums, means and counts into more segments than the L2 cache holds: rows
// partitioned by id into buckets of 2^shift ids, then each bucket summed in
// shared memory.
//
// Why: past the L2, every row's atomic add is a read-modify-write of a
// 32-byte sector in device memory (H200, 2^26 uniform rows into 2^24 fp32
// sums: 257 GB/s of model bytes, 0.06 of a copy). Partitioning moves each row
// twice more (written once, read once), but every add then lands in shared
// memory and the sums reach device memory once, in order.
//
// Passes: (1) count each bucket's rows (a block histogram in shared memory),
// tile by tile, except in tiles whose ids come in runs or rise close
// together (all ids equal, sorted ids), which it adds straight away, one
// atomic a run; (2) an exclusive scan of the counts gives each bucket's
// first place; (3) each block ranks a tile of rows (one pass 1 did not add)
// by bucket in shared memory, reserves each bucket's places with one global
// atomic, puts the tile in bucket order in shared memory and writes it out
// (consecutive threads, consecutive places of a bucket: a warp's stores
// touch a few sectors, not 32); (4) each block sums a chunk of the
// partitioned rows, bucket by bucket, in shared memory and adds its non-zero
// totals to the global accumulators. Rows land in a bucket in no fixed
// order, so float sums round in some order, as on the other atomic paths
// (`deterministic` takes the sorted path instead).
#pragma once

#include <cuda_runtime.h>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_pipeline.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "../../core/numeric.hpp"
#include "../../core/views.hpp"
#include "async_copy.cuh"
#include "cub_call.cuh"
#include "launch.cuh"
#include "scatter_kernels.cuh"
#include "temp_buffer.cuh"

namespace segred {
namespace cuda {
namespace detail {

constexpr int bucket_tile_threads = 1024;
constexpr int bucket_tile_rows_per_thread = 8;
constexpr std::int64_t bucket_tile_rows = bucket_tile_threads * bucket_tile_rows_per_thread;
constexpr int bucket_sum_threads = 1024;
constexpr std::int64_t bucket_chunk_rows = std::int64_t(1) << 17;  // rows a block of the summing pass takes
constexpr std::size_t bucket_shared_bytes = 128 * 1024;             // a bucket's accumulators, at most
constexpr int bucket_max_shift = 16;                                // partitioned ids are 16-bit
constexpr std::int64_t bucket_max_count = 8192;
constexpr unsigned no_bucket = 0xffffffffu;

struct bucket_plan {
    int shift = 0;
    std::int64_t buckets = 0;  // 0: the path does not apply
};

// Buckets for M ids with per_id bytes of accumulators each in at most
// `shared` bytes a block. Only where the atomic path's accumulators
// (`footprint` bytes) take more than three quarters of the L2: within it,
// the atomic adds run at L2 speed, which the extra passes do not beat (H200,
// 2^26 uniform rows: a prototype of these passes ran fp32 sums into 2^23
// ids, 32 MiB, at 0.90x of the atomic path and into 2^22 at 0.96-1.0x).
// Not for 2^32 rows or more (32-bit places) or past bucket_max_count
// buckets (the tile pass's histogram).
inline bucket_plan plan_buckets(std::int64_t n, std::int64_t M, std::size_t per_id, std::size_t footprint,
                                std::size_t shared, std::size_t l2_bytes) {
    if (per_id == 0 || n <= 0 || n >= (std::int64_t(1) << 32) || M >= (std::int64_t(1) << 31)) return {};
    if (footprint * 4 <= l2_bytes * 3) return {};
    int shift = 0;
    while (shift < bucket_max_shift && (std::size_t(2) << shift) * per_id <= shared) ++shift;
    const std::int64_t buckets = (M + (std::int64_t(1) << shift) - 1) >> shift;
    if (shift < 10 || buckets > bucket_max_count) return {};
    return {shift, buckets};
}

// The rank of this lane's row among the rows of its bucket b (no_bucket:
// none) that counter[b] has counted so far, counted in. A warp whose rows
// all fall in one bucket (all ids equal, long runs) takes one shared atomic:
// as 32 atomics on one address they serialize. Other warps take one a row:
// grouping the lanes of each bucket (__match_any_sync) cost uniform ids 5x
// in the counting pass (H200). Every lane of the warp calls it.
__device__ inline unsigned claim_in_bucket(unsigned* counter, unsigned b) {
    const int lane = threadIdx.x % 32;
    const unsigned b0 = __shfl_sync(0xffffffffu, b, 0);
    if (__all_sync(0xffffffffu, b == b0)) {
        unsigned first = 0;
        if (lane == 0 && b0 != no_bucket) first = atomicAdd(counter + b0, 32u);
        return __shfl_sync(0xffffffffu, first, 0) + static_cast<unsigned>(lane);
    }
    return b != no_bucket ? atomicAdd(counter + b, 1u) : 0u;
}

__device__ inline unsigned bucket_of(unsigned id, int shift) { return id == no_bucket ? no_bucket : id >> shift; }

inline namespace SEGRED_ABI_NS {

// A tile of pass 1 is added straight into the accumulators, and skipped by
// pass 3, where its ids come in runs (at most one row in run_tile_heads
// starts one) or rise within a narrow range (no id below the one before it
// in a warp's stretch, and fewer than run_tile_span ids from the least to the
// greatest): there the atomic adds, one a run, or a warp's to a few
// neighbouring sectors, cost less than moving every row twice more (H200,
// 2^26 rows into 2^24 fp32 sums: all ids equal and sorted ids took 0.52x and
// 0.48x of the time through the buckets). Ids within a narrow range but in
// no order are not taken: their adds, a sector each, ran at 0.68x to 0.95x
// of the buckets' speed in a variant that took them. The shape is judged on
// the first run_tile_sampled_rounds rounds of each warp's rows (a quarter of
// the tile): either choice adds every row correctly, and judging every row
// cost uniform sums 5% and all-equal and sorted ids 12% (H200).
constexpr int run_tile_heads = 4;
constexpr std::int64_t run_tile_span = 2 * bucket_tile_rows;
constexpr int run_tile_sampled_rounds = 2;

// Pass 1, tile by tile (the tiles of pass 3, a grid stride apart): each warp
// takes 256 consecutive rows in rounds of 32. A tile in runs or rising in a
// narrow range (above, judged on a sample) is added, its rows merged into
// runs within each warp and the warps' last runs across the block, and
// marked in done[tile]; any other tile has its rows counted a bucket into
// counts[b] (zeroed). Two blocks an SM (32 registers; a few spill in the
// adding branch): with one, all ids equal and sorted ids took 1.03x to 1.5x
// the time (H200). RowAdd (void: sums and counts, merged into runs as
// above) adds a tile's rows one by one instead: RowAdd::add(acc, id, value,
// row). Where skip_all is set and *skip_all is not 0 (a verdict of the
// device: another kernel adds the rows), every tile is marked done and no
// row counted.
template <bool Sums, class T, class A, class SegOf, class RowAdd = void>
SEGRED_KERNEL void __launch_bounds__(bucket_tile_threads, 2)
    bucket_count_kernel(rows_view<const T> values, SegOf seg_of, int shift, int buckets, unsigned* counts,
                        unsigned char* done, A* acc, count_sink sink, const unsigned* skip_all) {
    constexpr int R = bucket_tile_rows_per_thread;
    constexpr int warps = bucket_tile_threads / 32;
    using pair = sum_and_count<A>;
    struct tile_shape {
        unsigned heads, falls;  // rows that start a run, rows below the one before
        int least, greatest;    // greatest < 0: every row skipped
    };
    // By step mod 3: this tile's, while the one two steps on is cleared
    // (every warp has read it by this step's barrier; none adds to it before
    // the next step's, which thread 0 reaches after clearing it).
    __shared__ tile_shape shape[3];
    __shared__ typename cub::WarpReduce<pair>::TempStorage temp[warps];
    __shared__ std::int64_t last_id[warps];
    __shared__ pair last_run[warps];
    extern __shared__ unsigned long long shared_words[];
    unsigned* h = reinterpret_cast<unsigned*>(shared_words);
    for (int b = threadIdx.x; b < buckets; b += blockDim.x) h[b] = 0;
    if (threadIdx.x < 3) shape[threadIdx.x] = {0u, 0u, INT_MAX, -1};
    __syncthreads();
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const std::int64_t n = values.n, tiles = (n + bucket_tile_rows - 1) / bucket_tile_rows;
    if (skip_all != nullptr && *skip_all != 0) {
        for (std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < tiles;
             t += std::int64_t(gridDim.x) * blockDim.x)
            done[t] = 1;
        return;
    }
    auto add = [&](std::int64_t k, A sum, long long c) {
        if (Sums) atomic_add(acc + k, sum);
        if (sink) sink.add(k, static_cast<unsigned long long>(c));
    };
    for (std::int64_t t = blockIdx.x, step = 0; t < tiles; t += gridDim.x, step = step == 2 ? 0 : step + 1) {
        const std::int64_t row0 = t * bucket_tile_rows + warp * (32 * R) + lane;
        int k[R];
#pragma unroll
        for (int j = 0; j < R; ++j) {
            const std::int64_t i = row0 + j * 32;
            k[j] = i < n ? static_cast<int>(seg_of(i)) : -1;  // ids below 2^31 (plan_buckets)
        }
        unsigned heads = 0, falls = 0;
        int least = INT_MAX, greatest = -1;
#pragma unroll
        for (int j = 0; j < run_tile_sampled_rounds; ++j) {
            // The row before: the lane before's, or for lane 0 the last
            // lane's of the round before (the first row of the warp's
            // stretch starts a run). Every lane takes part in both shuffles.
            const int up = __shfl_up_sync(0xffffffffu, k[j], 1);
            const int last = j != 0 ? __shfl_sync(0xffffffffu, k[j != 0 ? j - 1 : 0], 31) : INT_MIN;
            const int before = lane != 0 ? up : last;
            heads += __popc(__ballot_sync(0xffffffffu, k[j] != before));
            falls += __popc(__ballot_sync(0xffffffffu, k[j] >= 0 && k[j] < before));
            if (k[j] >= 0) {
                least = ::min(least, k[j]);
                greatest = ::max(greatest, k[j]);
            }
        }
        least = __reduce_min_sync(0xffffffffu, least);
        greatest = __reduce_max_sync(0xffffffffu, greatest);
        tile_shape& tile = shape[step];
        if (lane == 0) {
            atomicAdd(&tile.heads, heads);
            atomicAdd(&tile.falls, falls);
            atomicMin(&tile.least, least);
            atomicMax(&tile.greatest, greatest);
        }
        __syncthreads();
        constexpr std::int64_t sampled_rows = bucket_tile_rows / R * run_tile_sampled_rounds;
        const bool in_runs = tile.heads * run_tile_heads <= sampled_rows || tile.greatest < 0 ||
                             (tile.falls == 0 && std::int64_t(tile.greatest) - tile.least < run_tile_span);
        if (threadIdx.x == 0) {
            shape[step == 0 ? 2 : step - 1] = {0u, 0u, INT_MAX, -1};  // step + 2, mod 3
            done[t] = in_runs ? 1 : 0;
        }
        if (!in_runs) {
#pragma unroll
            for (int j = 0; j < R; ++j) claim_in_bucket(h, k[j] >= 0 ? static_cast<unsigned>(k[j]) >> shift : no_bucket);
            continue;
        }
        if constexpr (!std::is_void<RowAdd>::value) {
#pragma unroll
            for (int j = 0; j < R; ++j)
                if (k[j] >= 0) RowAdd::add(acc, k[j], values.data[row0 + j * 32], row0 + j * 32);
        } else {
            A x[R];
#pragma unroll
            for (int j = 0; j < R; ++j) x[j] = Sums && k[j] >= 0 ? segred::detail::convert<A>(values.data[row0 + j * 32]) : A(0);
            std::int64_t carry_id = -1;
            pair carry{A(0), 0};
#pragma unroll
            for (int j = 0; j < R; ++j)
                merge_round<A>(k[j], pair{x[j], k[j] >= 0 ? 1 : 0}, carry_id, carry, temp[warp], add);
            // The warps' open runs, in row order: one more round, by warp 0.
            if (lane == 0) {
                last_id[warp] = carry_id;
                last_run[warp] = carry;
            }
            __syncthreads();
            if (warp == 0) {
                __syncwarp();  // temp[0] is reused
                std::int64_t id = -1;
                pair run{A(0), 0};
                merge_round<A>(last_id[lane], last_run[lane], id, run, temp[0], add);
                if (lane == 0 && id >= 0) add(id, run.sum, run.count);
            }
            // last_id and last_run are written again only after the next
            // tile's barrier, which warp 0 reaches after reading them.
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < buckets; b += blockDim.x)
        if (h[b] != 0) atomicAdd(counts + b, h[b]);
}

// A bucket holding more than 1/hot_bucket_share of the partitioned rows
// (`total`) is hot: where a pass 3 adds such rows itself (HotAdd, below),
// it leaves their places unwritten and pass 4 skips the bucket. Its ids'
// states stay in the L2 (at most hot_bucket_share buckets), where a hot
// id's rows mostly stop at a read. Measured on an H200 with Zipf(1.1) ids
// into 2^24 fp32 maxima: 0.98x the time only, as the counting pass and this
// one still read every row; the atomic kernel alone took 0.64x of it there
// (its keys of hot ids stay in the L2 too), so the extremum sends such ids
// to it (bucket_extremum.cuh, distinct_sample.cuh).
constexpr unsigned hot_bucket_share = 64;

__device__ inline bool bucket_is_hot(const unsigned* starts, int b, unsigned total) {
    return starts[b + 1] - starts[b] > total / hot_bucket_share;
}

// What pass 3 carries beside each row's 16-bit id, where Payload::carried:
// Payload::make(value, row), a Payload::type. Sums carry the value; counts
// alone nothing.
template <class T, bool Carried>
struct value_payload {
    using type = T;
    static constexpr bool carried = Carried;
    __device__ static T make(const T& v, std::int64_t) { return v; }
};

// Pass 3 puts a tile's payloads in bucket order in shared memory, or, where
// a payload is wider than the value (an 8-byte key from a 4-byte value),
// the rows' 16-bit offsets in the tile, each payload then made as it is
// written out: 16 KiB less a tile, so that two blocks fit an SM (H200, 2^26
// uniform rows into 2^24 fp32 maxima: 0.81 ms for the pass against 1.08 with
// the keys staged, one block an SM).
template <class Payload, class T>
constexpr bool stages_row_offsets = sizeof(typename Payload::type) > sizeof(T);

// Shared memory a row of pass 3 takes: its id, and where carried, its
// value and its payload or row offset.
template <class Payload, class T>
constexpr std::size_t partition_row_bytes() {
    if (!Payload::carried) return sizeof(unsigned);
    return sizeof(unsigned) + sizeof(T) +
           (stages_row_offsets<Payload, T> ? sizeof(std::uint16_t) : sizeof(typename Payload::type));
}

// Pass 3: one tile of bucket_tile_rows rows a block into their buckets'
// places (cursor[b]: the next free place of bucket b), as 16-bit ids within
// the bucket and, where carried, the payloads. Shared memory: [buckets]
// counts, then local firsts, then next free slots; [buckets] global minus
// local firsts; the tile's ids in bucket order; its payloads (or row
// offsets, stages_row_offsets) in bucket order; its values in row order
// (copied in by cp.async while the ids are counted); with HotAdd, a byte a
// bucket saying whether it is hot.
//
// Two blocks an SM (32 registers): a thread holds only its rows' ids across
// the barriers, its values wait in shared memory, and each row claims its
// slot again after the scan instead of keeping its rank; the scan is by warp
// scans (the default raking scan alone spilled at 32 registers). Then one
// block's loads overlap the other's counting and writes. Holding ids, ranks
// and values (64 registers, one block an SM) left the SM idle between phases
// (H200, 2^26 uniform ids into 2^24 fp32 sums: issue slots 33% busy, DRAM at
// 26% of its peak; this way the sums took 0.88x the time).
//
// HotAdd (void: none) adds the rows of hot buckets (bucket_is_hot) itself,
// HotAdd::add(acc, id, value, row), and leaves their places unwritten.
template <class Payload, class HotAdd, class T, class A, class SegOf>
SEGRED_KERNEL void __launch_bounds__(bucket_tile_threads, 2)
    bucket_partition_kernel(rows_view<const T> values, SegOf seg_of, int shift, int buckets,
                            const unsigned char* done, const unsigned* starts, unsigned* cursor,
                            std::uint16_t* part_ids, typename Payload::type* part_values, A* acc) {
    if (done[blockIdx.x]) return;  // added by pass 1
    constexpr bool adds_hot = !std::is_void<HotAdd>::value;
    using P = typename Payload::type;
    constexpr bool Sums = Payload::carried;
    constexpr bool by_row = stages_row_offsets<Payload, T>;
    using staged_t = std::conditional_t<by_row, std::uint16_t, P>;
    static_assert(bucket_tile_rows <= 65536, "row offsets in a tile are 16-bit");
    constexpr int R = bucket_tile_rows_per_thread;
    using scan_t = cub::BlockScan<unsigned, bucket_tile_threads, cub::BLOCK_SCAN_WARP_SCANS>;
    __shared__ typename scan_t::TempStorage scan_storage;
    extern __shared__ unsigned long long shared_words[];
    unsigned* first = reinterpret_cast<unsigned*>(shared_words);
    unsigned* delta = first + buckets;
    unsigned* tile_ids = delta + buckets;
    staged_t* tile_values = reinterpret_cast<staged_t*>(tile_ids + bucket_tile_rows);
    T* row_values = reinterpret_cast<T*>(tile_values + bucket_tile_rows);
    unsigned char* hot = reinterpret_cast<unsigned char*>(row_values + bucket_tile_rows);  // adds_hot only
    for (int b = threadIdx.x; b < buckets; b += blockDim.x) {
        first[b] = 0;
        if constexpr (adds_hot) hot[b] = bucket_is_hot(starts, b, starts[buckets]) ? 1 : 0;
    }
    if constexpr (adds_hot) __syncthreads();
    const std::int64_t row0 = std::int64_t(blockIdx.x) * bucket_tile_rows;
    unsigned id[R];
#pragma unroll
    for (int j = 0; j < R; ++j) {
        const int r = j * bucket_tile_threads + static_cast<int>(threadIdx.x);
        const std::int64_t i = row0 + r;
        std::int64_t k = i < values.n ? seg_of(i) : -1;
        if constexpr (adds_hot) {
            if (k >= 0 && hot[static_cast<unsigned>(k) >> shift]) {
                HotAdd::add(acc, k, values.data[i], i);
                k = -1;
            }
        }
        id[j] = k >= 0 ? static_cast<unsigned>(k) : no_bucket;
        if (Sums && k >= 0) {
            if constexpr (async_copyable<T>) copy_async<sizeof(T)>(shared_address(row_values + r), values.data + i);
            else row_values[r] = values.data[i];
        }
    }
    if (Sums) __pipeline_commit();
    __syncthreads();  // first[] zeroed
#pragma unroll
    for (int j = 0; j < R; ++j) claim_in_bucket(first, bucket_of(id[j], shift));
    __syncthreads();
    // Each thread a stretch of buckets: their local firsts by a block scan,
    // their global places by one atomic a non-empty bucket.
    const int per = (buckets + bucket_tile_threads - 1) / bucket_tile_threads;
    const int b0 = static_cast<int>(threadIdx.x) * per, b1 = b0 + per < buckets ? b0 + per : buckets;
    unsigned mine = 0;
    for (int b = b0; b < b1; ++b) mine += first[b];
    unsigned run = 0, total = 0;
    scan_t(scan_storage).ExclusiveSum(mine, run, total);
    for (int b = b0; b < b1; ++b) {
        const unsigned c = first[b];
        delta[b] = c != 0 ? atomicAdd(cursor + b, c) - run : 0u;  // unsigned: wraps back when run is added
        first[b] = run;
        run += c;
    }
    if (Sums) __pipeline_wait_prior(0);
    __syncthreads();  // firsts placed, this block's copies landed
    // Each row's slot: its bucket's next free one (first[] now holds the
    // local firsts, and the claims move them on).
#pragma unroll
    for (int j = 0; j < R; ++j) {
        const unsigned slot = claim_in_bucket(first, bucket_of(id[j], shift));
        if (id[j] == no_bucket) continue;
        tile_ids[slot] = id[j];
        const int r = j * bucket_tile_threads + static_cast<int>(threadIdx.x);
        if constexpr (by_row) tile_values[slot] = static_cast<std::uint16_t>(r);
        else if (Sums) tile_values[slot] = Payload::make(row_values[r], row0 + r);
    }
    __syncthreads();
    const unsigned mask = (1u << shift) - 1u;
    for (unsigned q = threadIdx.x; q < total; q += bucket_tile_threads) {
        const unsigned k = tile_ids[q];
        const unsigned place = delta[k >> shift] + q;
        part_ids[place] = static_cast<std::uint16_t>(k & mask);
        if constexpr (by_row) {
            const unsigned r = tile_values[q];
            part_values[place] = Payload::make(row_values[r], row0 + r);
        } else if (Sums) {
            part_values[place] = tile_values[q];
        }
    }
}

// Pass 4's walk over a block's chunk of partitioned rows, [lo, hi) (starts:
// each bucket's first place, starts[buckets] the rows in all): f(b, r0, r1)
// for each bucket b with rows [r0, r1) in the chunk, in order. The same in
// every thread, so f may hold the block's barriers.
template <class F>
__device__ void for_each_bucket_in_chunk(const unsigned* starts, int buckets, std::int64_t lo, std::int64_t hi, F&& f) {
    int b = 0, last = buckets - 1;  // the bucket of row lo: the first with starts[b + 1] > lo
    while (b < last) {
        const int mid = (b + last) / 2;
        if (starts[mid + 1] > lo) last = mid;
        else b = mid + 1;
    }
    for (; b < buckets && starts[b] < hi; ++b) {
        const std::int64_t first_row = starts[b], end_row = starts[b + 1];
        const std::int64_t r0 = lo > first_row ? lo : first_row, r1 = hi < end_row ? hi : end_row;
        if (r0 < r1) f(b, r0, r1);
    }
}

// Pass 4: partitioned rows [chunk * blockIdx.x, ...) (starts: each bucket's
// first place, starts[buckets] the rows in all), bucket by bucket, summed in
// shared memory ([2^shift] A, then [2^shift] 32-bit counts when counts are
// wanted) and added to acc and counts. Ids that a warp's first 32 rows of a
// bucket repeat (add_hot_ids) sum in registers: a hot id's rows sit together
// in its bucket, and as shared atomics on one address they serialize
// (Zipf(1.1) ids into 2^24 sums ran at 0.45x of the atomic path without).
template <bool Sums, class T, class A>
SEGRED_KERNEL void __launch_bounds__(bucket_sum_threads, 1)
    bucket_sum_kernel(const std::uint16_t* part_ids, const T* part_values, const unsigned* starts, int shift,
                      int buckets, std::int64_t M, A* acc, count_sink counts) {
    extern __shared__ unsigned long long shared_words[];
    const unsigned cells = 1u << shift;
    A* sacc = reinterpret_cast<A*>(shared_words);
    unsigned* scnt = reinterpret_cast<unsigned*>(sacc + (Sums ? cells : 0));
    const std::int64_t total = starts[buckets];
    const std::int64_t lo = std::int64_t(blockIdx.x) * bucket_chunk_rows;
    if (lo >= total) return;
    const std::int64_t hi = lo + bucket_chunk_rows < total ? lo + bucket_chunk_rows : total;
    for_each_bucket_in_chunk(starts, buckets, lo, hi, [&](int b, std::int64_t r0, std::int64_t r1) {
        for (unsigned e = threadIdx.x; e < cells; e += blockDim.x) {
            if (Sums) sacc[e] = A(0);
            if (counts) scnt[e] = 0;
        }
        __syncthreads();
        std::int64_t hot[hot_ids];
        sum_and_count<A> hot_total[hot_ids];
        for (int h = 0; h < hot_ids; ++h) {
            hot[h] = -1;
            hot_total[h] = {A(0), 0};
        }
        add_hot_ids(r0 + threadIdx.x < r1 ? std::int64_t(part_ids[r0 + threadIdx.x]) : -1, hot);
        // Two copies of the loop, as in scatter_shared_kernel: uniform ids
        // rarely have a hot id and skip the compares.
        auto rows = [&](auto with_hot) {
            constexpr bool Hot = decltype(with_hot)::value;
            // Eight rows a thread in flight: one block an SM (its 128 KiB
            // of cells) is too few warps to cover the loads' latency with
            // four (H200: uniform sums and counts 1.03x with eight).
            constexpr int ahead = 8;
            for (std::int64_t i = r0 + threadIdx.x; i < r1; i += ahead * std::int64_t(blockDim.x)) {
                unsigned e[ahead];
                A x[ahead];
#pragma unroll
                for (int j = 0; j < ahead; ++j) {
                    const std::int64_t q = i + j * std::int64_t(blockDim.x);
                    e[j] = q < r1 ? part_ids[q] : cells;
                    if (Sums && q < r1) x[j] = segred::detail::convert<A>(part_values[q]);
                }
#pragma unroll
                for (int j = 0; j < ahead; ++j) {
                    if (e[j] == cells) continue;
                    if constexpr (Hot) {
                        bool hot_id = false;
                        for (int h = 0; h < hot_ids; ++h) {
                            if (std::int64_t(e[j]) != hot[h]) continue;
                            if (Sums) hot_total[h].sum += x[j];
                            ++hot_total[h].count;
                            hot_id = true;
                        }
                        if (hot_id) continue;
                    }
                    if (Sums) atomic_add(sacc + e[j], x[j]);
                    if (counts) atomicAdd(scnt + e[j], 1u);
                }
            }
        };
        if (hot[0] >= 0) {  // the same in every lane of the warp
            rows(std::true_type{});
            add_hot_totals<Sums>(hot, hot_total, [&](std::int64_t e, const sum_and_count<A>& total) {
                if (Sums) atomic_add(sacc + e, total.sum);
                if (counts) atomicAdd(scnt + e, static_cast<unsigned>(total.count));
            });
        } else {
            rows(std::false_type{});
        }
        __syncthreads();
        const std::int64_t id0 = std::int64_t(b) << shift;
        for (unsigned e = threadIdx.x; e < cells && id0 + e < M; e += blockDim.x) {
            if (Sums && sacc[e] != A(0)) atomic_add(acc + id0 + e, sacc[e]);
            if (counts && scnt[e] != 0) counts.add(id0 + e, scnt[e]);
        }
        __syncthreads();  // the next bucket zeroes the cells
    });
}

} // namespace SEGRED_ABI_NS

// The rows partitioned by bucket (passes 1 to 3), for a pass 4 to reduce:
// each bucket's first place (starts[buckets]: the rows in all), and each
// row's 16-bit id within its bucket and payload, in bucket order.
template <class P>
struct bucketed_rows {
    temp_buffer<unsigned> starts;
    temp_buffer<std::uint16_t> ids;
    temp_buffer<P> payloads;
};

// Passes 1 to 3 for `plan` (from plan_buckets): launched into `rows`, and
// true; false where the tile pass's shared memory does not fit, and nothing
// done. Tiles in runs are added by pass 1 (RowAdd, or as sums into acc and
// counts into `counts` where RowAdd is void) and left out of `rows`. Where
// skip_all is set and the device finds *skip_all not 0, every tile is left
// out (passes 3 and 4 find no rows) and added by none of these passes.
// Temporary storage: 2 + sizeof(payload) bytes a row, 12 bytes a bucket and
// a byte a tile of bucket_tile_rows rows.
template <class Payload, bool Sums, class RowAdd, class HotAdd, class T, class A, class SegOf>
bool partition_into_buckets(const par_t& p, rows_view<const T> values, SegOf seg_of, const bucket_plan& plan, A* acc,
                            count_sink counts, bucketed_rows<typename Payload::type>& rows,
                            const unsigned* skip_all = nullptr) {
    using P = typename Payload::type;
    const auto part_kernel = bucket_partition_kernel<Payload, HotAdd, T, A, SegOf>;
    const std::size_t tile_bytes =
        static_cast<std::size_t>(plan.buckets) * (2 * sizeof(unsigned) + (std::is_void<HotAdd>::value ? 0 : 1)) +
        static_cast<std::size_t>(bucket_tile_rows) * partition_row_bytes<Payload, T>();
    if (plan.buckets == 0 || tile_bytes > private_shared_limit(part_kernel, true)) return false;
    const std::int64_t n = values.n;
    const int buckets = static_cast<int>(plan.buckets);
    temp_buffer<unsigned> bucket_rows(p, buckets + 1), cursor(p, buckets);
    rows.starts = temp_buffer<unsigned>(p, buckets + 1);
    rows.ids = temp_buffer<std::uint16_t>(p, n);
    rows.payloads = temp_buffer<P>(p, Payload::carried ? n : 0);
    SEGRED_CUDA_CHECK(cudaMemsetAsync(bucket_rows.get(), 0, (buckets + 1) * sizeof(unsigned), p.stream));
    const int sms = device_attribute(cudaDevAttrMultiProcessorCount);
    const std::int64_t tiles = (n + bucket_tile_rows - 1) / bucket_tile_rows;
    temp_buffer<unsigned char> tile_done(p, tiles);
    bucket_count_kernel<Sums, T, A, SegOf, RowAdd><<<static_cast<unsigned>(std::min<std::int64_t>(2 * sms, tiles)),
                                                     bucket_tile_threads, buckets * sizeof(unsigned), p.stream>>>(
        values, seg_of, plan.shift, buckets, bucket_rows.get(), tile_done.get(), acc, counts, skip_all);
    SEGRED_CUDA_CHECK(cudaGetLastError());
    unsigned* const rows_in = bucket_rows.get();
    unsigned* const starts_out = rows.starts.get();
    cub_call(p, "cub::DeviceScan::ExclusiveSum", [&](void* t, std::size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(t, bytes, rows_in, starts_out, buckets + 1, p.stream);
    });
    SEGRED_CUDA_CHECK(
        cudaMemcpyAsync(cursor.get(), starts_out, buckets * sizeof(unsigned), cudaMemcpyDeviceToDevice, p.stream));
    allow_dynamic_shared(part_kernel, tile_bytes);
    // Two blocks an SM need nearly all of its shared memory: ask for it
    // rather than leave the split between L1 and shared to the driver.
    SEGRED_CUDA_CHECK(
        cudaFuncSetAttribute(part_kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    part_kernel<<<static_cast<unsigned>(tiles), bucket_tile_threads, tile_bytes, p.stream>>>(
        values, seg_of, plan.shift, buckets, tile_done.get(), starts_out, cursor.get(), rows.ids.get(),
        rows.payloads.get(), acc);
    SEGRED_CUDA_CHECK(cudaGetLastError());
    return true;
}

// One column of values (Sums: added into acc; counts: rows counted where it
// is set) through the passes above: launched, and true; false where
// plan_buckets declines, and nothing done.
template <bool Sums, class T, class A, class SegOf>
bool bucket_scatter(const par_t& p, rows_view<const T> values, SegOf seg_of, std::int64_t M, A* acc,
                    count_sink counts) {
    const bool counted = counts.wide != nullptr || counts.narrow != nullptr;
    const auto sum_kernel = bucket_sum_kernel<Sums, T, A>;
    const std::size_t per_id = (Sums ? sizeof(A) : 0) + (counted ? sizeof(unsigned) : 0);
    // The atomic path's accumulators: sums, and counts in 4- or 8-byte words.
    const std::size_t footprint = static_cast<std::size_t>(M) * ((Sums ? sizeof(A) : 0) +
                                                                  (counts.narrow != nullptr ? 4 * counts.step : 0) +
                                                                  (counts.wide != nullptr ? 8 : 0));
    const bucket_plan plan =
        plan_buckets(values.n, M, per_id, footprint, std::min(bucket_shared_bytes, private_shared_limit(sum_kernel, true)),
                     static_cast<std::size_t>(device_attribute(cudaDevAttrL2CacheSize)));
    using payload = value_payload<T, Sums>;
    bucketed_rows<T> rows;
    if (!partition_into_buckets<payload, Sums, void, void>(p, values, seg_of, plan, acc, counts, rows)) return false;
    const std::size_t sum_bytes = (std::size_t(1) << plan.shift) * per_id;
    allow_dynamic_shared(sum_kernel, sum_bytes);
    sum_kernel<<<static_cast<unsigned>((values.n + bucket_chunk_rows - 1) / bucket_chunk_rows), bucket_sum_threads,
                 sum_bytes, p.stream>>>(rows.ids.get(), rows.payloads.get(), rows.starts.get(), plan.shift,
                                        static_cast<int>(plan.buckets), M, acc, counts);
    SEGRED_CUDA_CHECK(cudaGetLastError());
    return true;
}

} // namespace detail
} // namespace cuda
} // namespace segred
