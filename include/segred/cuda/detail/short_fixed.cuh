// segred/cuda/detail/short_fixed.cuh -- fixed segments of a few rows over
// one column, a block's rows read as 16-byte vectors.
//
// A thread a segment reading its own rows from device memory loads `size`
// rows a step apart: each warp load touches `size` cache lines, and from 8
// rows of floats L1 cannot serve the warp's lines as fast as memory brings
// them (H200: 0.29-0.64 of copy at 2 to 8 rows). Here a block copies a tile
// of whole segments into shared memory in 16-byte vectors (every warp load
// is 512 contiguous bytes), then a thread a segment folds its rows from
// there, and consecutive threads write consecutive outputs. On an H200,
// float sums of 1 to 80 rows run at 0.91-1.06 of copy this way (1.3-3.0x
// the kernels they replaced; docs/PERFORMANCE.md).
//
// Long segments leave a tile few of them (32 floats of 128 rows), and a
// few dozen threads folding 128 rows each kept a block's fold longer than
// its load. So where a tile holds fewer than 64 segments, each segment is
// folded in `parts` interleaved parts by as many threads (part p takes rows
// p, p + parts, ...), their states meet in shared memory, and a thread a
// segment combines them in part order (the same order every run).
//
// Shared memory has 32 banks of 4 bytes, and a warp reading row j of 32
// consecutive segments reads addresses `size` values apart: for a size of
// 2^k floats, 2^k lanes share a bank. So the stage puts one unit of padding
// (4 bytes, or a value where values are wider) after every 128 bytes: the
// rows of lanes 32 / 2^k apart then fall one bank apart, and power-of-two
// sizes read with no conflict; the 16-byte vectors are stored as units,
// which never straddle a pad.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>

#include "../../core/options.hpp"
#include "../../core/reducers.hpp"
#include "../../core/views.hpp"
#include "launch.cuh"
#include "reduce_kernels.cuh"

namespace segred {
namespace cuda {
namespace detail {

constexpr int short_fixed_threads = 256;
// Bytes of values a block stages: 4 vectors a thread, loaded before any is
// stored, so that a thread has 64 bytes in flight.
constexpr int short_fixed_tile_bytes = 16384;
constexpr int short_fixed_vectors = short_fixed_tile_bytes / (16 * short_fixed_threads);
// Sizes that take this path. Up to 16 rows of floats a tile holds a
// segment for every thread; past that fewer threads fold, each more rows,
// and up to 80 rows that still ran faster than the units' thread a segment
// reading its rows from memory and than the tiles of computed keys (on an
// H200: float sums of 17 to 80 rows 1.3-2.4x, argmax 1.4-2.3x, doubles
// 1.1-1.9x). With a segment folded in parts (short_fixed_parts) 96 to 128
// rows run 1.6-2.5x the tiles of computed keys too (H100: float sum and
// max at 1.00 of copy, argmax 0.87-0.92, fp16 sums 1.00; doubles of 128
// rows 0.87, their 16 segments of a tile 1088 bytes apart in the stage,
// so a warp's lanes meet on two banks). A tile holds at least 16 segments
// of the widest values (a multiple of 16 keeps every tile 16-byte
// aligned).
constexpr std::int64_t short_fixed_max_rows = 128;
static_assert(short_fixed_tile_bytes / (short_fixed_max_rows * 8) >= 16, "a tile holds 16 segments of 8-byte values");

// The stage's unit: values are stored a unit at a time, and a unit of
// padding follows every 128 bytes.
template <class T>
constexpr unsigned short_fixed_unit = sizeof(T) < 4 ? 4 : unsigned(sizeof(T));

// Where byte b of the tile sits in the stage.
template <class T>
__device__ __forceinline__ unsigned short_fixed_at(unsigned b) {
    return b + short_fixed_unit<T> * (b / 128);
}

template <class T>
constexpr unsigned short_fixed_stage_bytes = short_fixed_tile_bytes + short_fixed_unit<T> * (short_fixed_tile_bytes / 128);

// Segments a tile: as many as fit its bytes, a multiple of 16 so that every
// tile begins on a 16-byte boundary.
template <class T>
std::int64_t short_fixed_tile_segments(std::int64_t size) {
    return short_fixed_tile_bytes / (size * std::int64_t(sizeof(T))) / 16 * 16;
}

// Threads that fold each segment of a tile of `tile_segments` segments of
// `size` rows. One where a tile holds 64 segments or more: folding in parts
// whenever threads outnumbered segments made float argmax of 32 to 64 rows
// slower (0.91-0.94x on an H100), the combine costing more than the shorter
// folds saved. The parts' states meet in the stage once the fold has read
// it, so a state must fit a thread's share of it (every built-in
// reducer's does).
template <class T, class R>
int short_fixed_parts(std::int64_t size, std::int64_t tile_segments) {
    const bool state_fits =
        sizeof(state_t<R, T>) * std::size_t(short_fixed_threads) <= std::size_t(short_fixed_tile_bytes);
    if (tile_segments >= 64 || !state_fits) return 1;
    const std::int64_t parts = short_fixed_threads / tile_segments;
    return static_cast<int>(parts < size ? parts : size);
}

// Whether one column of M fixed segments of `size` rows at `values` takes
// this path: values of 1, 2, 4 or 8 bytes whose first row is 16-byte
// aligned (the vectors are aligned from the first row on), in at most
// 2^31 - 1 tiles (a block a tile; past that, some 32 TB of values, the
// grid's x dimension would not hold them).
template <class T>
bool short_fixed_applies(const T* values, std::int64_t size, std::int64_t M) {
    constexpr bool unit_sized = sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8;
    return unit_sized && size >= 1 && size <= short_fixed_max_rows &&
           reinterpret_cast<std::uintptr_t>(values) % 16 == 0 &&
           M / short_fixed_tile_segments<T>(size) < std::numeric_limits<int>::max();
}

inline namespace SEGRED_ABI_NS {

// Block b reduces segments [b * tile_segments, ..) of `size` rows each,
// each in `parts` parts (parts * tile_segments <= short_fixed_threads).
template <class T, class O, class R>
SEGRED_KERNEL void __launch_bounds__(short_fixed_threads)
    short_fixed_kernel(const T* values, std::int64_t size, std::int64_t M, std::int64_t tile_segments, int parts,
                       rows_view<O> out, R r, options opts) {
    using S = state_t<R, T>;
    constexpr unsigned U = short_fixed_unit<T>;
    __shared__ __align__(16) unsigned char stage[short_fixed_stage_bytes<T>];
    const int t = threadIdx.x;
    const std::int64_t s0 = std::int64_t(blockIdx.x) * tile_segments;
    const int segs = static_cast<int>(M - s0 < tile_segments ? M - s0 : tile_segments);
    const std::int64_t row0 = s0 * size;
    const int rows = segs * static_cast<int>(size);
    const unsigned char* const src = reinterpret_cast<const unsigned char*>(values + row0);
    const int vectors = rows * int(sizeof(T)) / 16;

    uint4 v[short_fixed_vectors];
#pragma unroll
    for (int k = 0; k < short_fixed_vectors; ++k) {
        const int c = t + k * short_fixed_threads;
        if (c < vectors) v[k] = __ldcs(reinterpret_cast<const uint4*>(src) + c);
    }
#pragma unroll
    for (int k = 0; k < short_fixed_vectors; ++k) {
        const int c = t + k * short_fixed_threads;
        if (c < vectors) {
            unsigned char* const dst = stage + short_fixed_at<T>(16u * unsigned(c));
            if constexpr (U == 4) {
                const unsigned w[4] = {v[k].x, v[k].y, v[k].z, v[k].w};
#pragma unroll
                for (int i = 0; i < 4; ++i) reinterpret_cast<unsigned*>(dst)[i] = w[i];
            } else {
                reinterpret_cast<uint2*>(dst)[0] = make_uint2(v[k].x, v[k].y);
                reinterpret_cast<uint2*>(dst)[1] = make_uint2(v[k].z, v[k].w);
            }
        }
    }
    // The last tile's rows past its last whole vector, one at a time (the
    // input ends there).
    for (int e = vectors * 16 / int(sizeof(T)) + t; e < rows; e += short_fixed_threads)
        *reinterpret_cast<T*>(stage + short_fixed_at<T>(unsigned(e) * unsigned(sizeof(T)))) = values[row0 + e];
    __syncthreads();

    if (parts == 1) {
        for (int s = t; s < segs; s += short_fixed_threads) {
            S st = r.template init<T>();
            const std::int64_t row = row0 + std::int64_t(s) * size;
            unsigned b = unsigned(s) * unsigned(size) * unsigned(sizeof(T));
#pragma unroll 4
            for (int j = 0; j < static_cast<int>(size); ++j, b += unsigned(sizeof(T)))
                r.update(st, *reinterpret_cast<const T*>(stage + short_fixed_at<T>(b)), row + j);
            write_segment<T>(r, opts, out, s0 + s, 0, st, size);
        }
        return;
    }
    // Thread t folds part t / tile_segments of segment t % tile_segments:
    // a warp's lanes read the same row of consecutive segments, as above.
    const int per_tile = static_cast<int>(tile_segments);
    const int p = t / per_tile, s = t % per_tile;
    const bool folds = p < parts && s < segs;
    S st = r.template init<T>();
    if (folds) {
        const std::int64_t row = row0 + std::int64_t(s) * size;
        const unsigned step = unsigned(parts) * unsigned(sizeof(T));
        unsigned b = (unsigned(s) * unsigned(size) + unsigned(p)) * unsigned(sizeof(T));
#pragma unroll 4
        for (int j = p; j < static_cast<int>(size); j += parts, b += step)
            r.update(st, *reinterpret_cast<const T*>(stage + short_fixed_at<T>(b)), row + j);
    }
    // The states meet in the stage, free once every fold has read it.
    S* const part_state = reinterpret_cast<S*>(stage);
    __syncthreads();
    if (folds) part_state[t] = st;
    __syncthreads();
    if (t < segs) {
        st = part_state[t];
        for (int q = 1; q < parts; ++q) r.combine(st, part_state[q * per_tile + t]);
        write_segment<T>(r, opts, out, s0 + t, 0, st, size);
    }
}

} // namespace SEGRED_ABI_NS

// One column of M fixed segments of `size` rows (short_fixed_applies).
template <class T, class O, class R>
void short_fixed_reduce(const par_t& p, const T* values, std::int64_t size, std::int64_t M, rows_view<O> out,
                        const R& r, const options& opts) {
    const std::int64_t per_tile = short_fixed_tile_segments<T>(size);
    const std::int64_t tiles = (M + per_tile - 1) / per_tile;
    const int parts = short_fixed_parts<T, R>(size, per_tile);
    short_fixed_kernel<T><<<static_cast<unsigned>(tiles), short_fixed_threads, 0, p.stream>>>(
        values, size, M, per_tile, parts, out, r, opts);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

} // namespace detail
} // namespace cuda
} // namespace segred
