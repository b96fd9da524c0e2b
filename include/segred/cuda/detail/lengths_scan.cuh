// segred/cuda/detail/lengths_scan.cuh -- segment lengths scanned into 32-bit
// starts in one pass over them.
//
// The one-column passes over short segments read starts as 32-bit offsets
// (lengths_to_starts32 in layout.cuh). CUB's scan from a transform iterator
// of the caller's lengths into a saturating output moved them at about half
// the speed of a copy (H200: about 250 us of 725 for 2^26 one-row segments),
// its loads and stores one element at a time. Here each block scans a tile
// of 8192 lengths, loaded and stored through shared memory a warp at a time
// (coalesced), and learns the sum of the tiles before its own by
// a decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix
// Scan with Decoupled Look-back", 2016): each tile publishes its own sum at
// once and its inclusive prefix when it has it, and a later tile adds up its
// predecessors' words a warp at a time until it meets a prefix.
//
// Every sum is taken in 32 bits, saturating at `hi` (INT32_MAX, or under
// drop the row count, the clamp that drop applies to starts past the rows):
// min(a + b, hi) of two values at most hi < 2^31 cannot wrap, and it is
// associative on non-negative values, so the saturated starts are the
// exact ones wherever those are below hi. Negative lengths count as 0 (the
// check refuses them first, drop counts them so, and for unchecked input it
// keeps the starts non-decreasing). int64 lengths keep CUB's scan (in
// layout.cuh): this one, taking 16 of them a thread, ran 0.88-0.90x its
// speed on short segments.
#pragma once

#include <cuda_runtime.h>

#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

#include <cstdint>

#include "../../core/config.hpp"
#include "../error.cuh"
#include "../policy.cuh"
#include "launch.cuh"
#include "temp_buffer.cuh"

namespace segred {
namespace cuda {
namespace detail {
inline namespace SEGRED_ABI_NS {
namespace lengths_scan {

// 32 lengths a thread, 8192 a tile, four blocks an SM (the registers held
// to 64 a thread). H200, 2^26 one-row segments: 186 us, where CUB's scan
// took 252; 16 lengths a thread ran as slowly as CUB's, and with three
// blocks an SM (72 registers) or blocks of 128 threads 1.02-1.07x slower.
// At three blocks an SM half of the warps' stall cycles were at the
// barrier where the block waits for warp 0's look-back (ncu); more blocks
// an SM cover it.
constexpr int threads = 256;
constexpr int items = 32;
constexpr std::int64_t tile = std::int64_t(threads) * items;

// A tile's status word: its sum shifted left by two, over the flag below.
// One aligned 64-bit word, so a reader sees the flag and the sum together.
constexpr unsigned long long flag_none = 0, flag_sum = 1, flag_prefix = 2;

struct saturating_sum {
    unsigned hi;
    __device__ unsigned operator()(unsigned a, unsigned b) const {
        const unsigned s = a + b;
        return s < hi ? s : hi;
    }
};

__device__ __forceinline__ unsigned long long read_status(const unsigned long long* status, std::int64_t t) {
    return *reinterpret_cast<const volatile unsigned long long*>(status + t);
}

__device__ __forceinline__ void write_status(unsigned long long* status, std::int64_t t, unsigned sum,
                                             unsigned long long flag) {
    *reinterpret_cast<volatile unsigned long long*>(status + t) = (static_cast<unsigned long long>(sum) << 2) | flag;
}

// The sum of the tiles before tile t, by warp 0 of its block (every lane
// returns it).
__device__ __forceinline__ unsigned look_back(unsigned long long* status, std::int64_t t, saturating_sum add) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    unsigned before = 0;
    for (std::int64_t last = t - 1;; last -= 32) {
        const std::int64_t at = last - lane;
        unsigned long long word;
        do {
            // Past tile 0 there is nothing: a prefix of 0.
            word = at >= 0 ? read_status(status, at) : flag_prefix;
        } while (__any_sync(0xffffffffu, (word & 3) == flag_none));
        const unsigned prefixes = __ballot_sync(0xffffffffu, (word & 3) == flag_prefix);
        // The nearest tile with a prefix is the lowest such lane; the lanes
        // past it are before that prefix and already in it.
        const int stop = prefixes ? __ffs(static_cast<int>(prefixes)) - 1 : 31;
        unsigned v = lane <= stop ? static_cast<unsigned>(word >> 2) : 0u;
        for (int d = 16; d > 0; d /= 2) v = add(v, __shfl_xor_sync(0xffffffffu, v, d));
        before = add(before, v);
        if (prefixes) return before;
    }
}

// A length as the scan adds it: negative as 0, at most hi.
__device__ __forceinline__ unsigned scanned_length(std::int32_t x, unsigned hi) {
    return x <= 0 ? 0u : (static_cast<unsigned>(x) < hi ? static_cast<unsigned>(x) : hi);
}

// status[0, tiles): the tiles' words, starting at zero. A template (on the
// 4-byte length type) so that the header defines it once per program.
template <class I>
SEGRED_KERNEL void __launch_bounds__(threads, 4)
    lengths_scan_kernel(const I* len, std::int64_t M, unsigned hi, unsigned long long* status, std::int32_t* starts) {
    static_assert(sizeof(I) == 4, "4-byte lengths");
    using load_t = cub::BlockLoad<I, threads, items, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using scan_t = cub::BlockScan<unsigned, threads, cub::BLOCK_SCAN_WARP_SCANS>;
    using store_t = cub::BlockStore<unsigned, threads, items, cub::BLOCK_STORE_WARP_TRANSPOSE>;
    __shared__ union {
        typename load_t::TempStorage load;
        typename scan_t::TempStorage scan;
        typename store_t::TempStorage store;
    } shared;
    __shared__ unsigned before_shared;
    const saturating_sum add{hi};

    // Tiles in block order, as CUB's single-pass scan takes them: blocks
    // are dispatched in index order, so each predecessor is running or done
    // and will publish.
    const std::int64_t t = blockIdx.x;
    const std::int64_t first = t * tile;

    // Element M reads as a length of 0: its start is the sum of all. The
    // thread's running sum is taken twice: for its total, then its starts.
    I raw[items];
    const std::int64_t loaded = M - first < tile ? M - first : tile;
    load_t(shared.load).Load(len + first, raw, static_cast<int>(loaded > 0 ? loaded : 0), I(0));
    unsigned v[items];
    unsigned own = 0;
    for (int k = 0; k < items; ++k) {
        v[k] = scanned_length(raw[k], hi);
        own = add(own, v[k]);
    }
    __syncthreads();  // the load's shared memory is the scan's
    unsigned thread_before = 0, tile_sum = 0;
    scan_t(shared.scan).ExclusiveScan(own, thread_before, 0u, add, tile_sum);

    if (threadIdx.x < 32) {
        unsigned before = 0;
        if (t == 0) {
            if (threadIdx.x == 0) write_status(status, 0, tile_sum, flag_prefix);
        } else {
            if (threadIdx.x == 0) write_status(status, t, tile_sum, flag_sum);
            before = look_back(status, t, add);
            if (threadIdx.x == 0) write_status(status, t, add(before, tile_sum), flag_prefix);
        }
        if (threadIdx.x == 0) before_shared = before;
    }
    __syncthreads();  // also: the scan's shared memory is the store's
    unsigned run = add(before_shared, thread_before);
    for (int k = 0; k < items; ++k) {
        const unsigned x = v[k];
        v[k] = run;
        run = add(run, x);
    }
    const std::int64_t stored = M + 1 - first < tile ? M + 1 - first : tile;
    store_t(shared.store).Store(reinterpret_cast<unsigned*>(starts) + first, v, static_cast<int>(stored));
}

} // namespace lengths_scan
} // namespace SEGRED_ABI_NS

// starts[0, M] = the exclusive sums of lengths len[0, M) (negative ones as
// 0), each stored as min(sum, hi), for 0 <= hi <= INT32_MAX.
inline void scan_lengths_into_int32(const par_t& p, const std::int32_t* len, std::int64_t M, std::int64_t hi,
                                    std::int32_t* starts) {
    constexpr std::int64_t tile = lengths_scan::tile;
    const std::int64_t tiles = (M + 1 + tile - 1) / tile;
    temp_buffer<unsigned long long> status(p, tiles);
    SEGRED_CUDA_CHECK(cudaMemsetAsync(status.get(), 0, static_cast<std::size_t>(tiles) * sizeof(unsigned long long),
                                      p.stream));
    lengths_scan::lengths_scan_kernel<std::int32_t>
        <<<static_cast<unsigned>(tiles), lengths_scan::threads, 0, p.stream>>>(len, M, static_cast<unsigned>(hi),
                                                                               status.get(), starts);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

} // namespace detail
} // namespace cuda
} // namespace segred
