// segred/cuda/detail/scatter_kernels.cuh -- the atomic path for sum, mean
// and count over unsorted ids (index_add_, bincount, gather_backward).
//
// Width 1: each warp reads 32 consecutive rows at a time (coalesced), sums
// each run of equal ids with a head-segmented warp reduction, and carries the
// run still open at lane 31 into the next 32 rows; a warp covers 1024 rows,
// so all-equal ids cost one add per 1024 rows, not one per row. Two hot ids
// a warp (ids its first 32 rows hold more than once) sum in registers
// instead, so a hot id spread among others costs one add per 1024 rows too.
// Wider rows:
// each thread walks 64 consecutive rows of one column (threads side by side
// over columns, coalesced) and adds each run of equal ids once; into global
// memory, four float columns a thread and one 16-byte vector atomic a run
// where the width and alignment allow (vector_atomic.cuh). When the
// accumulators fit in shared memory (wide rows: 48 KiB; one column: what a
// block can opt into, 227 KiB on sm_90, or at least half of the ids, the
// others then added to global memory row by row, or in registers for ids
// a warp's first rows repeat), each block accumulates
// privately there (one shared atomic per row for one column, but in
// registers for an id on a quarter of a warp's first rows) and adds its
// totals to global memory once. Atomic float addition makes the last bits
// order-dependent: the `deterministic` option takes the sorted path instead.
//
// When an empty segment's output is 0 anyway (sum into its own accumulator
// type, or count into int64, with a zero fill and no counts out), the adds go
// straight into out: no accumulator, count array or finishing pass.
#pragma once

#include <cuda_runtime.h>

#include <cub/warp/warp_reduce.cuh>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../../core/backend.hpp"
#include "../../core/finalize.hpp"
#include "../../core/numeric.hpp"
#include "../../core/reducers.hpp"
#include "launch.cuh"
#include "vector_atomic.cuh"

namespace segred {
namespace cuda {
namespace detail {

constexpr std::int64_t scatter_run = 64;         // rows per thread, wide rows
constexpr std::int64_t warp_rounds = 32;         // 32-row rounds per warp, width 1
constexpr std::int64_t warp_rows = 32 * warp_rounds;

template <class R> struct is_atomic_reducer : std::false_type {};
template <> struct is_atomic_reducer<segred::sum> : std::true_type {};
template <> struct is_atomic_reducer<segred::mean> : std::true_type {};
template <> struct is_atomic_reducer<segred::count> : std::true_type {};

inline namespace SEGRED_ABI_NS {

template <class A>
__device__ void atomic_add(A* addr, A v) {
    if constexpr (std::is_integral<A>::value) {
        atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v));
    } else {
        atomicAdd(addr, v);
    }
}

// Where row counts are added: 64-bit words by 64-bit atomics, or 32-bit
// words by 32-bit atomics (an int32 out, or the low halves of 64-bit counts;
// CUDA devices are little-endian). Measured on an H100: 64-bit adds are 1.4x
// faster while the counts stay in L2, 32-bit adds 1.35x faster once they
// spill to memory (half the bytes when the words are the count). A 64-bit
// count whose low half may pass 2^32 (one that does not start at 0, or 2^32
// rows or more) takes the carry into its high half: each add is below 2^32,
// so it carries at most once.
struct count_sink {
    unsigned long long* wide = nullptr;
    unsigned int* narrow = nullptr;
    int step = 1;        // 32-bit words per count: 1 (int32) or 2 (low halves of 64-bit counts)
    bool carry = false;  // low halves that may pass 2^32
    __device__ explicit operator bool() const { return wide != nullptr || narrow != nullptr; }
    __device__ void add(std::int64_t k, unsigned long long c) const {
        if (wide != nullptr) {
            atomicAdd(wide + k, c);
            return;
        }
        unsigned int* w = narrow + k * step;
        const unsigned int c32 = static_cast<unsigned int>(c);
        if (!carry) {
            atomicAdd(w, c32);
        } else if (atomicAdd(w, c32) + c32 < c32) {
            atomicAdd(w + 1, 1u);
        }
    }
};

// Row i's segment, or -1 for a row to skip (drop).
template <class Seg>
struct segment_of_row {
    Seg seg;
    __device__ std::int64_t operator()(std::int64_t i) const { return segred::detail::row_segment(seg, i); }
};

// Rows [i0, i1), each maximal stretch of equal ids added once:
// add(id, sum, rows) with sum of load(i) over the stretch (an Acc of one
// column or of four). Ids and values are read 4 rows ahead of the adds, so a
// thread keeps 4 loads in flight instead of waiting on each row's.
template <bool Sums, class Acc, class SegOf, class Load, class Add>
__device__ void scatter_stretches(std::int64_t i0, std::int64_t i1, SegOf seg_of, Load&& load, Add&& add) {
    constexpr int ahead = 4;
    constexpr std::int64_t past_end = -2;  // below every id and the skipped rows' -1
    std::int64_t cur = -1, cnt = 0;
    Acc acc{};
    for (std::int64_t i = i0; i < i1; i += ahead) {
        std::int64_t k[ahead];
        Acc x[ahead];
#pragma unroll
        for (int j = 0; j < ahead; ++j) {
            k[j] = i + j < i1 ? seg_of(i + j) : past_end;
            if (Sums && k[j] >= 0) x[j] = load(i + j);
        }
#pragma unroll
        for (int j = 0; j < ahead; ++j) {
            if (k[j] == past_end) break;
            if (k[j] != cur) {
                if (cur >= 0) add(cur, acc, cnt);
                cur = k[j];
                acc = Acc{};
                cnt = 0;
            }
            if (k[j] >= 0) {
                if (Sums) acc += x[j];
                ++cnt;
            }
        }
    }
    if (cur >= 0) add(cur, acc, cnt);
}

// Walk work item idx = (run, column): rows [run * scatter_run, ...) of one
// column, adding each maximal stretch of equal ids with one add(id, f, sum, n).
template <bool Sums, class T, class A, class SegOf, class Add>
__device__ void scatter_run_of_rows(rows_view<const T> values, SegOf seg_of, std::int64_t F, std::int64_t idx,
                                    Add&& add) {
    const std::int64_t run = idx / F, f = idx - run * F;
    const std::int64_t i0 = run * scatter_run;
    scatter_stretches<Sums, A>(
        i0, i0 + scatter_run < values.n ? i0 + scatter_run : values.n, seg_of,
        [&](std::int64_t i) { return segred::detail::convert<A>(values(i, f)); },
        [&](std::int64_t k, A a, long long c) { add(k, f, a, c); });
}

// The same over (run, four columns): one 8- or 16-byte load a row and one
// vector atomic a stretch (rows_add_in_vectors holds).
template <bool Sums, class T, class SegOf, class Add>
__device__ void scatter_run_of_columns4(rows_view<const T> values, SegOf seg_of, std::int64_t idx, Add&& add) {
    const std::int64_t groups = values.width / atomic_columns;
    const std::int64_t run = idx / groups, f = (idx - run * groups) * atomic_columns;
    const std::int64_t i0 = run * scatter_run;
    scatter_stretches<Sums, float_columns4>(
        i0, i0 + scatter_run < values.n ? i0 + scatter_run : values.n, seg_of,
        [&](std::int64_t i) { return load_columns4(values.data + i * values.width + f); },
        [&](std::int64_t k, const float_columns4& a, long long c) { add(k, f, a, c); });
}

// A run's total within one warp's 1024 rows: its count fits in an int (one
// shuffle, where a 64-bit count took two at every step of the reduction).
template <class A>
struct sum_and_count {
    A sum;
    int count;
    __device__ sum_and_count& operator+=(const sum_and_count& o) {
        sum += o.sum;
        count += o.count;
        return *this;
    }
};
struct add_sum_and_count {
    template <class X>
    __device__ X operator()(const X& a, const X& b) const {
        return {a.sum + b.sum, a.count + b.count};
    }
};

constexpr int hot_ids = 2;  // ids a warp keeps in registers

// Each hot id's total over the warp's lanes (a butterfly of shuffles),
// given to add(id, total) by lane 0; slots of hot that are -1 are skipped.
// Every lane of the warp calls it.
template <bool Sums, class A, class Add>
__device__ __forceinline__ void add_hot_totals(const std::int64_t (&hot)[hot_ids],
                                               const sum_and_count<A> (&hot_total)[hot_ids], Add&& add) {
    for (int h = 0; h < hot_ids; ++h) {
        if (hot[h] < 0) continue;  // the same in every lane
        sum_and_count<A> total = hot_total[h];
        for (int off = 16; off >= 1; off /= 2) {
            if (Sums) total.sum += __shfl_xor_sync(0xffffffffu, total.sum, off);
            total.count += __shfl_xor_sync(0xffffffffu, total.count, off);
        }
        if (threadIdx.x % 32 == 0) add(hot[h], total);
    }
}

// Fills the empty slots of hot (-1) with ids that hold `need` (at least 2,
// the same in the lanes of one id) or more of this warp's 32 lanes (k: each
// lane's id, -1 for none) and are not in hot already, widest group first;
// slots stay -1 where there are fewer. One round is a small sample, so an
// id picked by chance is possible; it costs only a compare a row and one add
// at the end. hot is the same in every lane.
__device__ inline void add_hot_ids(std::int64_t k, std::int64_t (&hot)[hot_ids], int need = 2) {
    constexpr unsigned all_lanes = 0xffffffffu;
    const int lane = threadIdx.x % 32;
    for (int h = 0; h < hot_ids; ++h)
        if (k == hot[h]) k = -1;
    const unsigned peers = __match_any_sync(all_lanes, static_cast<unsigned long long>(k));
    const bool leader = lane == __ffs(peers) - 1;
    int size = k >= 0 ? __popc(peers) : 0;
    if (size < need) size = 0;
    for (int h = 0; h < hot_ids; ++h) {
        if (hot[h] >= 0) continue;
        const int widest = static_cast<int>(__reduce_max_sync(all_lanes, static_cast<unsigned>(leader ? size : 0)));
        const unsigned widest_leaders = __ballot_sync(all_lanes, leader && size == widest);
        const int src = __ffs(widest_leaders) - 1;  // a leader exists: lane 0 leads its group
        hot[h] = widest >= 2 ? __shfl_sync(all_lanes, k, src) : -1;
        if (lane == src) size = 0;
    }
}

// One round of a warp's rows, consecutive by lane (k: each lane's id, -1 for
// a skipped row; mine: its value and count), merged into runs of equal ids:
// the run open from the rounds before (carry_id, -1 for none, and carry)
// goes on into lane 0 or is added; each run that ends within the round is
// added once (add(id, sum, count)); the last one is left open in carry.
// Every lane of the warp calls it.
template <class A, class Add>
__device__ __forceinline__ void merge_round(std::int64_t k, sum_and_count<A> mine, std::int64_t& carry_id,
                                            sum_and_count<A>& carry,
                                            typename cub::WarpReduce<sum_and_count<A>>::TempStorage& temp,
                                            Add&& add) {
    const int lane = threadIdx.x % 32;
    const std::int64_t before = __shfl_up_sync(0xffffffffu, k, 1);
    const bool head = lane == 0 || k != before;
    if (lane == 0 && carry_id >= 0) {
        if (k == carry_id) {
            mine += carry;  // the open run goes on
        } else {
            add(carry_id, carry.sum, carry.count);
        }
    }
    const sum_and_count<A> agg =
        cub::WarpReduce<sum_and_count<A>>(temp).HeadSegmentedReduce(mine, head, add_sum_and_count{});
    const unsigned heads = __ballot_sync(0xffffffffu, head);
    const int last_head = 31 - __clz(heads);
    if (head && lane != last_head && k >= 0) add(k, agg.sum, agg.count);
    carry_id = __shfl_sync(0xffffffffu, k, last_head);
    carry.sum = __shfl_sync(0xffffffffu, agg.sum, last_head);
    carry.count = __shfl_sync(0xffffffffu, agg.count, last_head);
}

// Width 1: this warp's 1024 rows starting at row0, in 32 rounds of 32 rows.
// Runs of equal neighbouring ids are merged across the warp and across
// rounds before adding: add(id, sum, count) once per run. Hot ids, found in
// the first round (add_hot_ids), instead add into per-lane registers and
// reach memory once at the end: a hot id's rows are spread among others, so
// they form runs of one and each would be an atomic on the same address
// (half of all rows on one id ran at 18 GB/s, 0.01 of a copy, before).
template <bool Sums, class T, class A, class SegOf, class Add>
__device__ void scatter_warp_rows(const rows_view<const T>& values, SegOf seg_of, std::int64_t row0, Add&& add) {
    using pair = sum_and_count<A>;
    using warp_reduce = cub::WarpReduce<pair>;
    __shared__ typename warp_reduce::TempStorage temp[block_threads / 32];
    const int lane = threadIdx.x % 32;
    std::int64_t carry_id = -1, hot[hot_ids];
    pair carry{A(0), 0}, hot_total[hot_ids];
    for (int h = 0; h < hot_ids; ++h) hot_total[h] = {A(0), 0};
    for (std::int64_t round = 0; round < warp_rounds; ++round) {
        const std::int64_t i = row0 + round * 32 + lane;
        std::int64_t k = i < values.n ? seg_of(i) : -1;
        if (round == 0) {
            for (int h = 0; h < hot_ids; ++h) hot[h] = -1;
            add_hot_ids(k, hot);
        }
        pair mine{A(0), k >= 0 ? 1 : 0};
        if (Sums && k >= 0) mine.sum = segred::detail::convert<A>(values.data[i]);
        if (hot[0] >= 0) {  // the same in every lane; uniform ids over a large M rarely have one
            for (int h = 0; h < hot_ids; ++h) {
                if (k >= 0 && k == hot[h]) {
                    hot_total[h] += mine;
                    mine = {A(0), 0};
                    k = -1;  // the run logic skips it like a dropped row
                }
            }
            // A round of hot (or skipped) rows only: nothing for the run
            // logic, whose open run simply goes on into the next round.
            if (!__any_sync(0xffffffffu, k >= 0)) continue;
        }
        merge_round<A>(k, mine, carry_id, carry, temp[threadIdx.x / 32], add);
    }
    if (lane == 0 && carry_id >= 0) add(carry_id, carry.sum, carry.count);
    for (int h = 0; h < hot_ids; ++h) {
        if (hot[h] < 0) continue;  // the same in every lane
        __syncwarp();              // the temp storage is reused
        const pair total = warp_reduce(temp[threadIdx.x / 32]).Reduce(hot_total[h], add_sum_and_count{});
        if (lane == 0) add(hot[h], total.sum, total.count);
    }
}

// Every work item of the grid: warps over 1024-row blocks for one column,
// threads over (run of rows, column) for wider rows. The choice is a
// template argument so that each kernel holds one loop: a kernel's registers
// are those of its hungriest path, and the wide loop's loads ahead cost the
// one-column loops a third of their speed in shared memory (M = 64, H200).
template <bool Sums, class T, class A, bool OneColumn, class SegOf, class Add>
__device__ void scatter_all(const rows_view<const T>& values, SegOf seg_of, std::int64_t F, Add&& add) {
    if constexpr (OneColumn) {
        const std::int64_t warps = (values.n + warp_rows - 1) / warp_rows;
        const std::int64_t stride = std::int64_t(gridDim.x) * (block_threads / 32);
        for (std::int64_t w = std::int64_t(blockIdx.x) * (block_threads / 32) + threadIdx.x / 32; w < warps; w += stride)
            scatter_warp_rows<Sums, T, A>(values, seg_of, w * warp_rows,
                                          [&](std::int64_t k, A a, long long c) { add(k, 0, a, c); });
    } else {
        const std::int64_t total = (values.n + scatter_run - 1) / scatter_run * F;
        const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
        for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride)
            scatter_run_of_rows<Sums, T, A>(values, seg_of, F, idx, add);
    }
}

// Work items in a scatter grid, for sizing it (columns4: four columns an item).
SEGRED_HD inline std::int64_t scatter_work(std::int64_t n, std::int64_t F, bool columns4 = false) {
    if (F == 1) return (n + warp_rows - 1) / warp_rows * 32;
    return (n + scatter_run - 1) / scatter_run * (columns4 ? F / atomic_columns : F);
}

// Into global accumulators (OneColumn: F == 1).
template <bool Sums, class T, class A, bool OneColumn, class SegOf>
SEGRED_KERNEL void __launch_bounds__(block_threads)
    scatter_global_kernel(rows_view<const T> values, SegOf seg_of, std::int64_t F, A* acc, count_sink counts) {
    scatter_all<Sums, T, A, OneColumn>(values, seg_of, F, [&](std::int64_t k, std::int64_t f, A a, long long c) {
        if (Sums) atomic_add(acc + k * F + f, a);
        if (f == 0 && counts) counts.add(k, static_cast<unsigned long long>(c));
    });
}

// Into global float sums, four columns a thread and one vector atomic a run
// of equal ids (only where rows_add_in_vectors holds). A kernel of its own:
// its registers would otherwise count against the one-column path's.
template <class T, class SegOf>
SEGRED_KERNEL void __launch_bounds__(block_threads)
    scatter_columns4_kernel(rows_view<const T> values, SegOf seg_of, float* acc, count_sink counts) {
    const std::int64_t F = values.width;
    const std::int64_t total = scatter_work(values.n, F, true);
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride)
        scatter_run_of_columns4<true, T>(values, seg_of, idx,
                                         [&](std::int64_t k, std::int64_t f, const float_columns4& a, long long c) {
                                             atomic_add_columns4(acc + k * F + f, a);
                                             if (f == 0 && counts) counts.add(k, static_cast<unsigned long long>(c));
                                         });
}

// Lanes of a warp's first rounds that a held id must fill to be summed in
// registers, for float sums of one column over `ids` ids all in shared
// memory: the fewest n for which uniform ids put n lanes of a round on one
// id in fewer than 1 round in 20000 (C(32, n) / ids^(n-1) < 5e-5): 8 (the
// most) below 64 ids, 7 for 64, 5 for 256, 4 for 1024 and 4096, 3 from
// about 10000 on. A grid is one wave of about 8000 warps that sample 4
// rounds each, so about one warp picks an id by chance; it runs its rows
// with the hot ids' compares, and a one-wave grid waits for its slowest
// warp: 3 lanes over 4096 ids (10 warps by chance) cost uniform ids 4%
// (sums) and 8% (sums and counts). Shared float adds slow down sharply
// when lanes collide on one address, and Zipf-like ids put 3 to 8 lanes of
// a round on their top ids: H200, 2^26 rows of Zipf(1.1) ids into 16384
// fp32 sums ran at 455 GB/s with 8 lanes, 1031 with 3. Integer adds
// (counts) do not slow down so and keep 8: fewer lanes cost counts 13% on
// the same Zipf ids.
constexpr int held_hot_lanes_most = 8;  // a quarter of a round: what every other held id needs
SEGRED_HD inline int hot_lanes_for_float_sums(std::int64_t ids) {
    constexpr int most = held_hot_lanes_most;
    double choose = 32;  // C(32, n), from n = 1
    double power = 1;    // ids^(n-1)
    for (int n = 2; n < most; ++n) {
        choose = choose * (33 - n) / n;
        power *= static_cast<double>(ids);
        if (choose < 5e-5 * power) return n;
    }
    return most;
}

// Threads a block of scatter_shared_kernel: the one-column loop takes 1024
// past 48 KiB of accumulators. The wide loop stays within 48 KiB and 256
// threads: its loads ahead need more registers than 1024 threads leave
// (capped at 64, it ran at 0.90x with M = 64 and 16 columns), and past 48 KiB
// the global kernel's vector atomics beat it (H200, 16 columns: 0.85x at
// 64 KiB of sums, 0.34x at 128 KiB).
constexpr int shared_scatter_threads(bool one_column) {
    return one_column ? private_block_threads_max : block_threads;
}

// Blocks an SM that scatter_shared_kernel's registers must leave room for:
// two of 1024 threads for one column held whole (32 registers a thread),
// where up to about 28000 fp32 sums let two blocks share an SM. Without
// this bound the hot ids took it to 48 registers and one block an SM: a
// first version ran uniform ids 12-20% slower at M = 64 to 50000 (H100).
// With it, ptxas spills about 40 bytes, the hot ids' registers.
constexpr int shared_scatter_min_blocks(bool one_column, bool split) {
    return one_column && !split ? 2 : 1;
}

// Block-private accumulators in shared memory for `held` ids (all M unless
// Split, which only one column takes: a kernel of its own, as its global
// adds cost the others 11-14% through their registers): [held * F] A, then,
// when counts are wanted, [held] 32-bit counts (a block never sees 2^32
// rows: the caller takes this kernel only for n < 2^32). A 32-bit shared
// atomic is the hardware's fast one; the totals go to the global counts
// once. OneColumn: F == 1.
//
// With Split, block b of B holds the `held` ids from b * M / B on, past
// M - 1 wrapping to 0, the starts spread evenly over [0, M): each id is
// held by held / M of the blocks, and only the others add it to global
// memory. With the same first ids held in every block, an id past them
// took every block's rows in global atomics on one address, and every
// block's global adds fell on the same stretch of ids at once. H200, 2^26
// rows, against the same first ids in every block: uniform ids into 65536
// fp32 sums 1.09x, into 100000 1.15-1.21x; Zipf(1.1) ids 0.95-1.27x by
// where the top ids fell (the worst placements gained most); half the
// rows on one id 0.95x at 65536, 1.10x at 100000.
template <bool Sums, class T, class A, bool OneColumn, class SegOf, bool Split = false>
SEGRED_KERNEL void __launch_bounds__(shared_scatter_threads(OneColumn), shared_scatter_min_blocks(OneColumn, Split))
    scatter_shared_kernel(rows_view<const T> values, SegOf seg_of, std::int64_t M, std::int64_t held, std::int64_t F,
                          A* acc, count_sink counts) {
    extern __shared__ unsigned long long shared_words[];
    // Split: id k's place in the window (held there when below held); the
    // id at place e.
    const std::int64_t start = Split ? std::int64_t(blockIdx.x) * M / gridDim.x : 0;
    auto place_of = [&](std::int64_t k) {
        if constexpr (!Split) return k;
        const std::int64_t e = k - start;
        return e < 0 ? e + M : e;
    };
    auto id_at = [&](std::int64_t e) {
        if constexpr (!Split) return e;
        const std::int64_t k = e + start;
        return k >= M ? k - M : k;
    };
    const std::int64_t cells = Sums ? held * F : 0;
    A* sacc = reinterpret_cast<A*>(shared_words);
    unsigned int* scnt = reinterpret_cast<unsigned int*>(sacc + cells);  // A is 4 or 8 bytes: aligned
    for (std::int64_t e = threadIdx.x; e < cells; e += blockDim.x) sacc[e] = A(0);
    for (std::int64_t e = threadIdx.x; e < held && counts; e += blockDim.x) scnt[e] = 0;
    __syncthreads();
    if constexpr (OneColumn) {
        // One column: a shared-memory atomic per row. Merging runs of equal
        // ids first (as the global path does) costs more than it saves when
        // the atomics are this cheap. Each thread loads `ahead` rows (one
        // grid stride apart, so each load stays coalesced) before adding
        // them: large accumulators leave one or two blocks an SM, too few
        // warps to hide a load each.
        constexpr int ahead = 4;
        const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
        const std::int64_t first = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
        // Ids that the warp's first rows show more than once sum in per-lane
        // registers, reaching memory once at the end, as the global kernel's
        // hot ids do: outside the block's held ones (Split; Zipf ids into
        // 65536 sums, H200: 0.83x of all of them in global memory without
        // this), and held ones too, whose rows would otherwise serialize on
        // one shared address (H100, 2^26 rows into 16384 fp32 sums: all on
        // one id took 11.8 ms, half on one 6.4 ms, uniform ids 0.23 ms). A
        // held id must fill a quarter of a round's lanes (held_hot_lanes): a
        // shared add is cheap until many lanes wait on one address, and with
        // few ids (M = 64) nearly every warp would otherwise pick two by
        // chance and pay the compares on every row. Float sums, whose shared
        // adds suffer more from collisions, take the fewer lanes of
        // hot_lanes_for_float_sums when all ids are held (with Split, the
        // two hot slots are better spent on ids outside the held ones, whose
        // adds are global: Zipf into 65536 fp32 sums ran at 0.52x when held
        // ids took them).
        const int held_hot_lanes =
            Sums && std::is_floating_point<A>::value && !Split ? hot_lanes_for_float_sums(held) : held_hot_lanes_most;
        std::int64_t hot[hot_ids];
        sum_and_count<A> hot_total[hot_ids];
        for (int h = 0; h < hot_ids; ++h) {
            hot[h] = -1;
            hot_total[h] = {A(0), 0};
        }
        for (int j = 0; j < ahead; ++j) {  // every lane: whole warps (blockDim is a multiple of 32)
            const std::int64_t row = first + j * stride;
            const std::int64_t k = row < values.n ? seg_of(row) : -1;
            add_hot_ids(k, hot, place_of(k) < held ? held_hot_lanes : 2);
        }
        // The loop in two copies, without and with hot ids (the choice is
        // the same in every lane): the hot ids' compares and registers cost
        // uniform ids 5% when in the one loop.
        auto rows = [&](auto with_hot) {
            constexpr bool Hot = decltype(with_hot)::value;
            for (std::int64_t i = first; i < values.n; i += ahead * stride) {
                std::int64_t k[ahead];
                A x[ahead];
#pragma unroll
                for (int j = 0; j < ahead; ++j) {
                    const std::int64_t row = i + j * stride;
                    k[j] = row < values.n ? seg_of(row) : -1;
                    if (Sums && k[j] >= 0) x[j] = segred::detail::convert<A>(values.data[row]);
                }
#pragma unroll
                for (int j = 0; j < ahead; ++j) {
                    if (k[j] < 0) continue;
                    if constexpr (Hot) {
                        bool hot_id = false;
                        for (int h = 0; h < hot_ids; ++h) {
                            if (k[j] != hot[h]) continue;
                            if (Sums) hot_total[h].sum += x[j];
                            ++hot_total[h].count;
                            hot_id = true;
                        }
                        if (hot_id) continue;
                    }
                    const std::int64_t e = place_of(k[j]);
                    if (!Split || e < held) {
                        if (Sums) atomic_add(sacc + e, x[j]);
                        if (counts) atomicAdd(scnt + e, 1u);
                        continue;
                    }
                    // Outside the ids held in shared memory.
                    if (Sums) atomic_add(acc + k[j], x[j]);
                    if (counts) counts.add(k[j], 1);
                }
            }
        };
        // The hot totals reach memory inside the branch that has them, so
        // that they are not live through the loop without hot ids, which
        // must keep to the 32 registers of shared_scatter_min_blocks.
        if (hot[0] >= 0) {  // then hot[1] may be set too; else neither is
            rows(std::true_type{});
            add_hot_totals<Sums>(hot, hot_total, [&](std::int64_t k, const sum_and_count<A>& total) {
                if (Sums) atomic_add(acc + k, total.sum);
                if (counts) counts.add(k, static_cast<unsigned long long>(total.count));
            });
        } else {
            rows(std::false_type{});
        }
    } else {
        scatter_all<Sums, T, A, false>(values, seg_of, F, [&](std::int64_t k, std::int64_t f, A a, long long c) {
            if (Sums) atomic_add(sacc + k * F + f, a);
            if (f == 0 && counts) atomicAdd(scnt + k, static_cast<unsigned int>(c));
        });
    }
    __syncthreads();
    // With Split (one column) cell e holds the id at place e; without,
    // id_at(e) == e and cell e is acc's cell e (id e / F, column e % F).
    for (std::int64_t e = threadIdx.x; e < cells; e += blockDim.x)
        if (sacc[e] != A(0)) atomic_add(acc + id_at(e), sacc[e]);
    for (std::int64_t e = threadIdx.x; e < held && counts; e += blockDim.x)
        if (scnt[e] != 0) counts.add(id_at(e), scnt[e]);
}

// Ids whose accumulators scatter_shared_kernel holds in shared memory, and
// their bytes; 0 ids when the global kernel runs instead (or n is too large
// for 32-bit block counts). Wide rows: all M ids or none. One column: all,
// else as many ids as fit when they are at least half of M (one block an
// SM; a window of ids that moves with the block, see the kernel); the
// others add to global memory row by row. With uniform ids,
// 57856 of 65536 fp32 sums in shared memory ran 2x faster than all of them
// in global memory (H200); below half, the flush of each block's totals
// costs more than the shared adds save.
struct shared_share {
    std::int64_t held = 0;
    std::size_t bytes = 0;
};
template <class A>
shared_share scatter_shared_ids(std::int64_t n, std::int64_t M, std::int64_t F, bool sums, bool counted,
                                std::size_t limit) {
    const std::size_t per_id = (sums ? static_cast<std::size_t>(F) * sizeof(A) : 0) +
                               (counted ? sizeof(unsigned int) : 0);
    if (per_id == 0 || M <= 0 || n >= (std::int64_t(1) << 32)) return {};
    const std::int64_t fit = static_cast<std::int64_t>(limit / per_id);
    const std::int64_t held = fit >= M ? M : (F == 1 && 2 * fit >= M ? fit : 0);
    return {held, static_cast<std::size_t>(held) * per_id};
}

// Whether sums with counts of one column go in two passes, the sums alone
// (`alone`) and then the counts alone (`counted`), instead of one pass
// holding both (`together`): where the pass together would leave more than
// a sixth of the ids to global atomics and the passes alone hold more of
// them. The second pass reads the ids again, which costs less than the
// global adds from there: H100, 2^26 rows of uniform ids, float means
// (4-byte sums with counts held together up to 28928 ids) 1.44x at 40000
// ids (72% held together), 3.13x at 65536 (none), 1.60x at 116000; double
// means (19285 together) 1.07x at 24000 (80%), 2.79x at 40000; but float
// means at 32768 (88% held together) 0.84x, and at 29000 (99.8%) 0.99x.
// Two tests, the first needing no kernel attributes, so the caller asks for
// the passes alone (two cudaFuncGetAttributes calls) only past it.
inline bool counts_together_leave_out(std::int64_t M, const shared_share& together) {
    return 6 * together.held < 5 * M;
}

inline bool counts_alone_hold_more(const shared_share& together, const shared_share& alone,
                                   const shared_share& counted) {
    return alone.held > together.held && counted.held > together.held;
}

// Whether a sum needs no per-segment counts: an empty segment's total is 0,
// which is also its output (zero fill, no counts(), no accumulate).
template <class R>
bool sum_needs_no_counts(const options& opts) {
    return std::is_same<R, segred::sum>::value && !opts.counts_out && !opts.accumulate_into &&
           segred::detail::zero_fill(opts);
}

template <class R, class T, class A>
__device__ state_t<R, T> state_from_totals(A acc, std::int64_t cnt) {
    if constexpr (std::is_same<R, segred::sum>::value) {
        return acc;
    } else if constexpr (std::is_same<R, segred::mean>::value) {
        return {acc, cnt};
    } else {
        return cnt;
    }
}

template <class T, class O, class R, class A>
SEGRED_KERNEL void finish_scatter_kernel(const A* acc, const unsigned long long* counts, std::int64_t M,
                                         rows_view<O> out, R r, options opts) {
    const std::int64_t F = out.width;
    const std::int64_t total = M * F;
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const std::int64_t s = idx / F, f = idx - s * F;
        // No counts: every segment reads as having rows (a zero-filled sum,
        // whose empty segments are 0 anyway).
        const std::int64_t cnt = counts ? static_cast<std::int64_t>(counts[s]) : 1;
        const A a = acc ? acc[idx] : A(0);
        segred::detail::write_result<T>(r, opts, out, s, f, state_from_totals<R, T>(a, cnt), cnt);
        if (f == 0 && opts.counts_out) opts.counts_out[s] = cnt;
    }
}

} // namespace SEGRED_ABI_NS
} // namespace detail
} // namespace cuda
} // namespace segred
