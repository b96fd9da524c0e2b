// segred/cuda/detail/tile_claim_reduce.cuh -- the deterministic path for
// sums and means of one column over unsorted ids spread over segments whose
// totals, with a word of ownership each, fit in one block's shared memory.
//
// Like tile_sort_reduce.cuh, each block folds a fixed run of tiles of 4096
// rows into block-private totals, which a second kernel combines in block
// order. Here a tile is not sorted: its rows are added in rounds. In each
// round every row not yet added bids for its id with an integer atomicMax of
// (round, 4095 - its place in the tile); the maximum, and so the winner, does
// not depend on the order in which the bids land. Each winner then adds its
// row into its id's total, alone on that total in that round. So each id's
// rows are added in the order of their places, the same on every run, and a
// tile whose rows have distinct ids takes one round.
//
// Ids that repeat within a tile cost a round per repeat, so a tile goes on
// to the sorted tiles when the rounds stall: after eight rounds, when a
// round leaves most threads behind, or from the first round when it leaves
// nearly all of them behind (a few ids on most rows). The sorted tiles then
// add only the rows the rounds did not: a row's place is its place in the
// block sort's stable order, so the rounds' rows are each id's first rows
// there. A sample of tiles taken first sends every tile to the sorted tiles
// unread when a quarter of them have an id on more rows than the rounds add.
// Both kernels fold the same tiles in each block and add into one row of
// totals per block, the claim's first. Tile and grid shapes depend on n
// only, so the bits are the same on every run (and on every device that takes
// this path).
//
// Why rounds: a round is one shared atomic, one read and one add a row,
// where the block sort moves every row through shared memory in three radix
// passes and a scan; 2^26 fp32 rows into 16384 sums take 2.1x the atomic
// path's time against the sorted tiles' 3.1x (H100). The rounds' barriers
// need whole 1024-thread blocks to hide them, so the path takes M only while
// the totals and owners fit beside no other block.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../core/numeric.hpp"
#include "../../core/options.hpp"
#include "../../core/views.hpp"
#include "launch.cuh"
#include "scatter_kernels.cuh"
#include "temp_buffer.cuh"
#include "tile_sort_reduce.cuh"

namespace segred {
namespace cuda {
namespace detail {

constexpr int tile_claim_threads = 1024;
constexpr int tile_claim_items = 4;  // rows a thread, a tile
constexpr std::int64_t tile_claim_rows = std::int64_t(tile_claim_threads) * tile_claim_items;
static_assert(tile_claim_rows == tile_sort_rows, "a tile the claim leaves is sorted as it stands");
constexpr int tile_claim_place_bits = 12;  // a row's place in its tile, in the low bits of a bid
static_assert(tile_claim_rows == (std::int64_t(1) << tile_claim_place_bits), "a bid holds a row's place in the tile");
// Rounds before a tile's remaining rows go to the sorted tiles: rows of
// uniform ids into 8192 segments rarely repeat an id more often.
constexpr int tile_claim_rounds = 8;
// A tile whose first round leaves rows in more threads than this is skewed
// (a few ids hold many of its rows): it goes to the sorted tiles whole. Rows
// of uniform ids into 8192 segments leave rows in about 60% of the threads.
constexpr int tile_claim_skewed_threads = tile_claim_threads * 7 / 8;
// After the first round, a tile goes on to the sorted tiles when more than
// this many threads are behind and fewer than half of those behind a round
// before caught up.
constexpr int tile_claim_stall_floor = 64;
// Tiles sampled, evenly spaced, before the rounds: where more than a
// quarter of them hold more rows of some id than the rounds add, the input
// is skewed and every tile goes to the sorted tiles unread.
constexpr int tile_claim_sample_tiles = 32;
// Bids hold the round in their upper 20 bits, so a block takes at most this
// many tiles (past about 10^11 rows the sorted tiles take them all).
constexpr std::int64_t tile_claim_max_tiles_per_block =
    ((std::int64_t(1) << (32 - tile_claim_place_bits)) - 1) / tile_claim_rounds;
// Below this many segments the sorted tiles are as fast (rows repeat their
// id within a tile too often; H100, 2^26 fp32 rows).
constexpr std::int64_t tile_claim_min_segments = 8192;

inline namespace SEGRED_ABI_NS {

// Block b samples tile b * tiles / samples: counts its rows of each id
// (counts: [M] in shared memory) and adds 1 to *deep when some id holds more
// rows than the rounds add (an integer sum, the same in any order).
template <class I>
SEGRED_KERNEL void __launch_bounds__(tile_claim_threads)
    tile_claim_sample_kernel(const I* ids, std::int64_t n, int M, std::int64_t tiles, int samples, unsigned* deep) {
    extern __shared__ unsigned tile_claim_sample_counts[];
    const std::int64_t tile = std::int64_t(blockIdx.x) * tiles / samples;
    const int t = threadIdx.x;
    for (int s = t; s < M; s += tile_claim_threads) tile_claim_sample_counts[s] = 0;
    __syncthreads();
    // A warp's rows of one id are added at once: one id on every row would
    // otherwise serialize 4096 adds on one word.
#pragma unroll
    for (int j = 0; j < tile_claim_items; ++j) {
        const std::int64_t row = tile * tile_claim_rows + t + std::int64_t(j) * tile_claim_threads;
        const int k = row < n ? static_cast<int>(ids[row]) : -1;
        const unsigned group = __match_any_sync(0xffffffffu, k);
        if (k >= 0 && t % 32 == __ffs(group) - 1) atomicAdd(tile_claim_sample_counts + k, unsigned(__popc(group)));
    }
    __syncthreads();
    bool over = false;
    for (int s = t; s < M; s += tile_claim_threads) over |= tile_claim_sample_counts[s] > unsigned(tile_claim_rounds);
    if (__syncthreads_or(over) && t == 0) atomicAdd(deep, 1u);
}

// Block b folds tiles [b * tiles_per_block, (b + 1) * tiles_per_block) into
// part_sum / part_count [b * M + s] and sets used[b]; for each tile it
// writes claimed[tile] (see tile_sort_fold_kernel): 0 when every row was
// added, else 1 + the rounds whose rows were added. ids are in [0, M)
// (checked or promised).
template <class T, class A, class I, bool Counted>
SEGRED_KERNEL void __launch_bounds__(tile_claim_threads, 1)
    tile_claim_fold_kernel(const T* values, const I* ids, std::int64_t n, int M, std::int64_t tiles_per_block,
                           const unsigned* deep, int samples, A* part_sum, unsigned* part_count,
                           unsigned char* claimed, unsigned char* used) {
    extern __shared__ unsigned long long tile_claim_shared[];
    A* sums = reinterpret_cast<A*>(tile_claim_shared);       // [M]
    unsigned* owner = reinterpret_cast<unsigned*>(sums + M);  // [M]: the highest bid so far
    unsigned* counts = owner + M;                             // [M] when Counted
    const int t = threadIdx.x;
    const std::int64_t tiles = (n + tile_claim_rows - 1) / tile_claim_rows;
    const std::int64_t first = std::int64_t(blockIdx.x) * tiles_per_block;
    const std::int64_t last = first + tiles_per_block < tiles ? first + tiles_per_block : tiles;
    if (*deep * 4 > unsigned(samples)) {  // skewed: every tile to the sorted tiles, unread
        for (std::int64_t tile = first + t; tile < last; tile += tile_claim_threads) claimed[tile] = 1;
        if (t == 0) used[blockIdx.x] = 0;
        return;
    }
    for (int s = t; s < M; s += tile_claim_threads) {
        sums[s] = A(0);
        owner[s] = 0;
        if (Counted) counts[s] = 0;
    }
    // Thread t's item j is row t + j * threads of its tile (coalesced). Its
    // bid ranks it by its place in the sorted tiles' order of items (thread
    // t' holds rows t' + j' * threads' there), so that the rows the rounds
    // add are each id's first there too.
    unsigned bid_place[tile_claim_items];
#pragma unroll
    for (int j = 0; j < tile_claim_items; ++j) {
        const int row = t + j * tile_claim_threads;
        const int place = row % tile_sort_threads * tile_sort_items + row / tile_sort_threads;
        bid_place[j] = unsigned(tile_claim_rows - 1 - place);
    }
    // The next tile's rows are loaded before this tile's rounds, so the
    // loads overlap the rounds' barriers.
    int next_k[tile_claim_items];
    A next_x[tile_claim_items];
    auto load = [&](std::int64_t tile) {
        const std::int64_t base = tile * tile_claim_rows + t;
#pragma unroll
        for (int j = 0; j < tile_claim_items; ++j) {
            const std::int64_t row = base + std::int64_t(j) * tile_claim_threads;
            const bool in = tile < last && row < n;
            next_k[j] = in ? static_cast<int>(ids[row]) : -1;
            next_x[j] = in ? segred::detail::convert<A>(values[row]) : A(0);
        }
    };
    load(first);
    __syncthreads();  // the totals and owners are zeroed
    unsigned round = 0;
    for (std::int64_t tile = first; tile < last; ++tile) {
        int k[tile_claim_items];
        A x[tile_claim_items];
        unsigned live = 0;  // bit j: item j is a row not yet added
#pragma unroll
        for (int j = 0; j < tile_claim_items; ++j) {
            k[j] = next_k[j];
            x[j] = next_x[j];
            if (k[j] >= 0) live |= 1u << j;
        }
        load(tile + 1);
        // No barrier between tiles: the last round's reads of the owners
        // came before its barrier, and each round's adds come after one.
        int behind_before = tile_claim_threads;
        for (int r = 1;; ++r) {
            ++round;
            const unsigned bid_round = round << tile_claim_place_bits;
            if (live) {  // most warps have no rows left after a round or two
#pragma unroll
                for (int j = 0; j < tile_claim_items; ++j)
                    if (live >> j & 1u) atomicMax(owner + k[j], bid_round | bid_place[j]);
            }
            __syncthreads();
            unsigned won = 0;
            if (live) {
#pragma unroll
                for (int j = 0; j < tile_claim_items; ++j)
                    if ((live >> j & 1u) && owner[k[j]] == (bid_round | bid_place[j])) won |= 1u << j;
            }
            // Threads with rows left after this round (a barrier too: the
            // owners are read before the next round's bids).
            const int behind = __syncthreads_count(live != won);
            if (r == 1 && behind > tile_claim_skewed_threads) {
                if (t == 0) claimed[tile] = 1;  // the whole tile to the sorted tiles
                break;
            }
            // Each id has one winner a round: no two threads add to a total.
            if (won) {
#pragma unroll
                for (int j = 0; j < tile_claim_items; ++j) {
                    if (won >> j & 1u) {
                        sums[k[j]] += x[j];
                        if (Counted) counts[k[j]] += 1;
                    }
                }
            }
            live &= ~won;
            // Rows that keep a thread behind round after round share a hot
            // id: the sorted tiles add them faster than a round each.
            const bool stalled = r > 1 && behind > tile_claim_stall_floor && 2 * behind > behind_before;
            if (behind == 0 || stalled || r == tile_claim_rounds) {
                if (t == 0) claimed[tile] = static_cast<unsigned char>(behind == 0 ? 0 : 1 + r);
                break;
            }
            behind_before = behind;
        }
    }
    __syncthreads();
    if (t == 0) used[blockIdx.x] = 1;
    for (int s = t; s < M; s += tile_claim_threads) {
        part_sum[std::int64_t(blockIdx.x) * M + s] = sums[s];
        if (Counted) part_count[std::int64_t(blockIdx.x) * M + s] = counts[s];
    }
}

} // namespace SEGRED_ABI_NS

// Shared memory for the block-private totals and owners of M segments.
template <class A>
std::size_t tile_claim_shared(std::int64_t M, bool counted) {
    return static_cast<std::size_t>(M) * (sizeof(A) + sizeof(unsigned) + (counted ? sizeof(unsigned) : 0));
}

// Whether the claimed tiles take these (one column, deterministic: the caller
// checks): the sorted tiles apply (they take the tiles the rounds leave),
// enough segments that rows rarely repeat an id within a tile, few enough
// tiles a block for the bids' rounds, and the totals and owners within what a
// block can opt into.
template <class T, class I, class R>
bool tile_claim_applies(std::int64_t M, std::int64_t n, const options& opts) {
    using A = segred::detail::accum_t<T>;
    if (M < tile_claim_min_segments || !tile_sort_applies<T, I, R>(M, opts)) return false;
    if (plan_fixed_tiles(n, tile_claim_rows).tiles_per_block > tile_claim_max_tiles_per_block) return false;
    const bool counted = !sum_needs_no_counts<R>(opts);
    const std::size_t limit =
        counted ? private_shared_limit(tile_claim_fold_kernel<T, A, I, true>, true)
                : private_shared_limit(tile_claim_fold_kernel<T, A, I, false>, true);
    return tile_claim_shared<A>(M, counted) <= limit;
}

// ids: n valid ids in [0, M), tile_claim_applies(M, n, opts), n > 0.
template <class I, class T, class O, class R>
void tile_claim_then_finish(const par_t& p, rows_view<const T> values, const I* ids, std::int64_t M,
                            rows_view<O> out, const R& r, const options& opts) {
    using A = segred::detail::accum_t<T>;
    const fixed_tile_grid grid = plan_fixed_tiles(values.n, tile_claim_rows);
    const std::int64_t tiles = grid.tiles;
    const bool counted = !sum_needs_no_counts<R>(opts);
    // Totals [blocks][M]: each claim block's, then the sorted tiles' of the
    // same tiles added to them.
    temp_buffer<A> part_sum(p, grid.blocks * M);
    temp_buffer<unsigned> part_count(p, counted ? grid.blocks * M : 0);
    temp_buffer<unsigned char> claimed(p, tiles);
    temp_buffer<unsigned char> used(p, grid.blocks);
    temp_buffer<unsigned> deep(p, 1);
    const int samples = static_cast<int>(tiles < tile_claim_sample_tiles ? tiles : tile_claim_sample_tiles);
    SEGRED_CUDA_CHECK(cudaMemsetAsync(deep.get(), 0, sizeof(unsigned), p.stream));
    const std::size_t sample_shared = static_cast<std::size_t>(M) * sizeof(unsigned);  // within the fold's
    allow_dynamic_shared(tile_claim_sample_kernel<I>, sample_shared);
    tile_claim_sample_kernel<I><<<static_cast<unsigned>(samples), tile_claim_threads, sample_shared, p.stream>>>(
        ids, values.n, static_cast<int>(M), tiles, samples, deep.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    const std::size_t shared = tile_claim_shared<A>(M, counted);
    auto fold = [&](auto kernel) {
        allow_dynamic_shared(kernel, shared);
        kernel<<<static_cast<unsigned>(grid.blocks), tile_claim_threads, shared, p.stream>>>(
            values.data, ids, values.n, static_cast<int>(M), grid.tiles_per_block, deep.get(), samples,
            part_sum.get(), part_count.get(), claimed.get(), used.get());
        SEGRED_CUDA_CHECK(cudaGetLastError());
    };
    if (counted)
        fold(tile_claim_fold_kernel<T, A, I, true>);
    else
        fold(tile_claim_fold_kernel<T, A, I, false>);
    sort_tiles(p, values, ids, M, grid, counted, claimed.get(), part_sum.get(), part_count.get(), used.get());
    combine_blocks_then_finish<T>(p, part_sum.get(), counted ? part_count.get() : nullptr, grid.blocks, used.get(),
                                  M, out, r, opts);
}

} // namespace detail
} // namespace cuda
} // namespace segred
