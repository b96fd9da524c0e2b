// segred/cuda/detail/stream_reduce.cuh -- long sorted segments of computed
// keys (fixed segments, starts from offsets or lengths) over one column,
// streamed: a warp takes a chunk of 16 KiB of values and reduces each
// segment that lies in it where it lies, in 16-byte loads, with no staging,
// block scan or per-row key.
//
// Why: the tile kernel (tile_reduce.cuh) pays a block scan, barriers and a
// compare a row on every tile whatever the segments; on long ones that work
// is all it does (H200, fp32 sums of 2^26 rows: offsets of 1024 rows at
// 0.52 of a copy, of 2^20 rows at 0.61, where a plain read of the values
// runs at 0.97). Here a chunk's segments come from the starts, 32 at a time
// (a lane each): a segment with few rows in the chunk is folded by its lane
// alone, any other by the whole warp (16-byte loads, four a lane in flight,
// then a fixed tree of shuffles). Pieces of segments that cross a chunk's
// edges leave partial states in the tile carries, which tile_join_kernel
// joins in chunk order, so results are the same on every run.
//
// Segments from starts are walked first, a lane a segment
// (stream_walk_starts_kernel): it writes the keys of the chunk edges that
// fall in its segment, and the empty value of an empty one. That took the
// place of a binary search of the starts for each chunk edge (a chain of
// dependent loads), of the chunks' writing of the empty segments before
// them and of the gap list's fill. Fixed segments are never empty and
// their edge keys are a division.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../../core/options.hpp"
#include "../../core/reducers.hpp"
#include "../../core/views.hpp"
#include "launch.cuh"
#include "reduce_kernels.cuh"
#include "temp_buffer.cuh"
#include "tile_reduce.cuh"

namespace segred {
namespace cuda {
namespace detail {

constexpr int stream_threads = 256;
constexpr std::int64_t stream_chunk_bytes = 16384;  // a warp's rows: 32 16-byte loads a lane
// A lane folds a segment alone where the chunk holds this many of its rows
// or fewer (in one batch of loads): a warp's tree of shuffles costs more.
constexpr int stream_lone_rows = 8;
// Streamed: segments from starts averaging this many rows or more (empty
// ones counted), fixed segments of stream_min_fixed_rows or more. Against
// the tiles on an H200 (fp32 sums, 2^26 rows): offsets of 512 to 2^20 rows
// 1.2-1.4x, lengths uniform in 0..1024 (512 on average) 1.15x, 90% empty
// segments of 1 to 8192 rows (406 on average) 1.5x; but from an average
// of 256 rows 0.94-0.99x (256-row segments, uniform in 0..512, Pareto from
// 100 rows), and from 128 rows 128-row offsets 0.84x. Fixed segments keep
// chunked tiles below 512 rows (256: 0.77x streamed).
constexpr std::int64_t stream_min_avg_rows = 384;
constexpr std::int64_t stream_min_fixed_rows = 512;

template <class T>
constexpr std::int64_t stream_chunk_rows = stream_chunk_bytes / static_cast<std::int64_t>(sizeof(T));

inline namespace SEGRED_ABI_NS {

// Starts: for each segment s of [-1, M] (-1 the rows before starts[0], M
// those from starts[M]), a lane: the keys of the chunk edges among its rows
// into edge_keys (2c: the key of chunk c's first row, 2c + 1 of its last),
// and the empty value of s if it is an empty segment. Warp g of `groups`
// takes segments 32g - 1 to 32g + 30, and `parts` warps do (g + part *
// groups): each writes every parts-th of a segment's chunk edges, lane by
// lane, or where that is more than 32 for one lane, the whole warp's lanes
// write them in turn. A few long segments (64 of 2^20 rows: 31 in one warp)
// would otherwise hold one warp for all their thousands of stores, and one
// giant among many short ones one lane.
template <class T, class O, class R, class J>
SEGRED_KERNEL void __launch_bounds__(block_threads)
    stream_walk_starts_kernel(start_keys<J, false> keys, std::int64_t n, std::int64_t M, rows_view<O> out, R r,
                              options opts, std::int64_t* edge_keys, std::int64_t groups, std::int64_t parts) {
    constexpr std::int64_t C = stream_chunk_rows<T>;
    const int lane = threadIdx.x % 32;
    const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    if (warp >= groups * parts) return;  // whole warps: the ballot below
    const std::int64_t part = warp / groups, s = warp % groups * 32 + lane - 1;
    auto mark = [&](std::int64_t c, std::int64_t sm, std::int64_t b, std::int64_t e) {
        const std::int64_t lo = c * C, hi = lo + C < n ? lo + C : n;
        if (lo >= b) edge_keys[2 * c] = sm;
        if (hi <= e) edge_keys[2 * c + 1] = sm;
    };
    std::int64_t b = 0, e = 0;
    if (s <= M) {
        b = s < 0 ? 0 : keys.start(s);
        e = s < M ? keys.start(s + 1) : n;
        if (part == 0 && s >= 0 && s < M && b == e) write_empty_segment<T>(r, opts, out, s);
    }
    // The chunks holding rows of s: [c0, c1); this warp's share of them.
    const std::int64_t c0 = b / C, c1 = b < e ? (e - 1) / C + 1 : c0;
    const bool many = c1 - c0 > 32 * parts;
    if (!many)
        for (std::int64_t c = c0 + part; c < c1; c += parts) mark(c, s, b, e);
    for (unsigned wide = __ballot_sync(0xffffffffu, many); wide != 0; wide &= wide - 1) {
        const int j = __ffs(wide) - 1;
        const std::int64_t sj = __shfl_sync(0xffffffffu, s, j), bj = __shfl_sync(0xffffffffu, b, j);
        const std::int64_t ej = __shfl_sync(0xffffffffu, e, j), c0j = __shfl_sync(0xffffffffu, c0, j);
        const std::int64_t c1j = __shfl_sync(0xffffffffu, c1, j);
        for (std::int64_t c = c0j + part * 32 + lane; c < c1j; c += parts * 32) mark(c, sj, bj, ej);
    }
}

// Chunk c = rows [c * C, ...) a warp. edge_keys (searched keys): the keys
// of each chunk's first and last rows (stream_walk_starts_kernel); other
// keys are computed here. A segment's piece in the chunk is written where
// the segment lies wholly in it, else left in carry[c]: head (it began in
// an earlier chunk; with passes set, it also goes on past this one) or tail
// (it begins here and goes on). Empty segments are written before.
template <class T, class O, class R, class S, class Keys>
SEGRED_KERNEL void __launch_bounds__(stream_threads)
    stream_reduce_kernel(rows_view<const T> values, Keys keys, std::int64_t M, rows_view<O> out, R r, options opts,
                         std::int64_t chunks, const std::int64_t* edge_keys, tile_carry<S>* carry) {
    constexpr std::int64_t C = stream_chunk_rows<T>;
    const int lane = threadIdx.x % 32;
    const std::int64_t c = std::int64_t(blockIdx.x) * (stream_threads / 32) + threadIdx.x / 32;
    if (c >= chunks) return;
    const std::int64_t n = values.n, lo = c * C, hi = lo + C < n ? lo + C : n;
    std::int64_t k_first, k_last;
    if constexpr (Keys::searched) {
        k_first = edge_keys[2 * c];
        k_last = edge_keys[2 * c + 1];
    } else {
        k_first = keys.first(lo);
        k_last = keys.first(hi - 1);
    }
    if (lane == 0) {
        // The last segment goes on past the chunk: from a tail here, or
        // passing through from an earlier chunk.
        const bool goes_on = hi < n && key_in_range(k_last, M) && keys.bound(k_last) > hi;
        const bool passes = goes_on && keys.bound(k_last - 1) < lo;
        carry[c].tail_key = goes_on && !passes ? k_last : -1;
        carry[c].passes = passes ? 1 : 0;
    }
    // A segment's piece: written, or its partial state left for the join.
    auto finish = [&](std::int64_t s, bool begun, bool goes_on, const S& st, std::int64_t rows) {
        if (begun) {
            carry[c].head = st;
            carry[c].head_rows = rows;
        } else if (goes_on) {
            carry[c].tail = st;
            carry[c].tail_rows = rows;
        } else if (rows > 0) {  // (an empty one is written)
            write_segment<T>(r, opts, out, s, 0, st, rows);
        }
    };
    // Segments with rows in the chunk (and empty ones between them): 32 a
    // round, lane j segment base + j, its rows here [b, e). Each round reads
    // the next one's bounds first: a chunk of many short segments takes many
    // rounds, and each would otherwise wait on its bounds, then its rows.
    const std::int64_t s_lo = k_first > 0 ? k_first : 0, s_hi = k_last < M - 1 ? k_last : M - 1;
    auto bounds = [&](std::int64_t s, std::int64_t& sb, std::int64_t& se) {
        if (s <= s_hi) {
            sb = keys.bound(s - 1);
            se = keys.bound(s);
        }
    };
    std::int64_t next_sb = 0, next_se = 0;
    bounds(s_lo + lane, next_sb, next_se);
    for (std::int64_t base = s_lo; base <= s_hi; base += 32) {
        const std::int64_t s = base + lane, sb = next_sb, se = next_se;
        bounds(s + 32, next_sb, next_se);
        const bool valid = s <= s_hi;
        const bool begun = valid && sb < lo, goes_on = valid && se > hi && hi < n;
        const std::int64_t b = valid ? (sb > lo ? sb : lo) : 0, e = valid ? (se < hi ? se : hi) : 0;
        const bool lone = valid && e - b <= stream_lone_rows;
        if (lone) {
            // Every row's load issued before the first add.
            T x[stream_lone_rows];
#pragma unroll
            for (int k = 0; k < stream_lone_rows; ++k) x[k] = b + k < e ? values.data[b + k] : T{};
            S st = r.template init<T>();
#pragma unroll
            for (int k = 0; k < stream_lone_rows; ++k)
                if (b + k < e) r.update(st, x[k], b + k);
            finish(s, begun, goes_on, st, e - b);
        }
        for (unsigned together = __ballot_sync(0xffffffffu, valid && !lone); together != 0; together &= together - 1) {
            const int j = __ffs(together) - 1;
            const std::int64_t bj = __shfl_sync(0xffffffffu, b, j), ej = __shfl_sync(0xffffffffu, e, j);
            S st = r.template init<T>();
            fold_span(values.data, bj, ej, r, st, lane);
            for (int d = 16; d > 0; d /= 2) {
                const S other = shuffle_down(st, d);
                r.combine(st, other);
            }
            const int flags = __shfl_sync(0xffffffffu, int(begun) | int(goes_on) << 1, j);
            if (lane == 0) finish(base + j, flags & 1, flags & 2, st, ej - bj);
        }
    }
}

} // namespace SEGRED_ABI_NS

// Reduce n > 0 one-column rows of 16-byte-aligned values over long segments
// of computed keys, with reducer r as it is.
template <class T, class O, class R, class Keys>
void stream_reduce_as(const par_t& p, rows_view<const T> values, Keys keys, std::int64_t M, rows_view<O> out,
                      const R& r, const options& opts) {
    using S = state_t<R, T>;
    constexpr std::int64_t C = stream_chunk_rows<T>;
    const std::int64_t chunks = (values.n + C - 1) / C;
    temp_buffer<tile_carry<S>> carry(p, chunks);
    temp_buffer<std::int64_t> edge_keys(p, Keys::searched ? 2 * chunks : 0);
    if constexpr (Keys::searched) {
        // Parts enough for a warp to write about 256 chunks' edges of the
        // segments it holds (8 a lane where they are spread).
        const std::int64_t groups = (M + 2 + 31) / 32;
        const std::int64_t parts = std::max<std::int64_t>(1, (chunks + 256 * groups - 1) / (256 * groups));
        const std::int64_t warps_per_block = block_threads / 32;
        stream_walk_starts_kernel<T><<<static_cast<unsigned>((groups * parts + warps_per_block - 1) / warps_per_block),
                                       block_threads, 0, p.stream>>>(keys, values.n, M, out, r, opts, edge_keys.get(),
                                                                     groups, parts);
        SEGRED_CUDA_CHECK(cudaGetLastError());
    }
    constexpr std::int64_t warps = stream_threads / 32;
    stream_reduce_kernel<T, O, R, S, Keys><<<static_cast<unsigned>((chunks + warps - 1) / warps), stream_threads, 0,
                                             p.stream>>>(values, keys, M, out, r, opts, chunks, edge_keys.get(),
                                                         carry.get());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    join_tiles<T, O, R, S>(p, chunks, out, r, opts, carry.get());
}

// Whether rows go as 16-byte vectors (streamed, chunked tiles): values of
// 2, 4 or 8 bytes starting 16-byte aligned.
template <class T>
bool vectors_apply(const T* data) {
    return chunk_capable<T> && (reinterpret_cast<std::uintptr_t>(data) & 15) == 0;
}

// Reduce n > 0 one-column rows over long segments of computed keys
// (vectors_apply(values.data)): a mean as a sum divided by row counts.
template <class T, class O, class R, class Keys>
void stream_reduce(const par_t& p, rows_view<const T> values, Keys keys, std::int64_t M, rows_view<O> out,
                   const R& r, const options& opts) {
    if constexpr (chunk_capable<T>)
        with_row_divided_mean(r, [&](const auto& rr) { stream_reduce_as(p, values, keys, M, out, rr, opts); });
}

// Computed keys (fixed segments, starts): streamed where segments average
// min_streamed_rows rows or more (`avg_rows`: the fixed size, or n / M; the
// thresholds above), else chunked tiles where they are long enough for them
// to pay (`chunked_tiles`), else tiles of rows; the first two only for
// values of 2, 4 or 8 bytes starting 16-byte aligned. (Unaligned values
// would be copied row by row, 32 rows a thread: 0.75x the row-by-row kernel
// on 1024-row offsets, H200.)
template <class T, class O, class R, class Keys>
void reduce_computed_keys(const par_t& p, rows_view<const T> values, Keys keys, std::int64_t M, rows_view<O> out,
                          const R& r, const options& opts, std::int64_t avg_rows, std::int64_t min_streamed_rows,
                          bool chunked_tiles) {
    if constexpr (chunk_capable<T>) {
        if (vectors_apply(values.data)) {
            if (avg_rows >= min_streamed_rows) {
                stream_reduce(p, values, keys, M, out, r, opts);
                return;
            }
            if (chunked_tiles) {
                tile_reduce<int>(p, values, chunked<Keys>{keys}, M, out, r, opts);
                return;
            }
        }
    }
    tile_reduce<int>(p, values, keys, M, out, r, opts);
}

} // namespace detail
} // namespace cuda
} // namespace segred
