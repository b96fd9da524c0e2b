// segred/cuda/detail/column_stage.cuh -- one column's rows of a block's
// segments, copied into shared memory so that a thread a segment can fold
// them there (segment_columns.cuh, staged).
//
// A thread folding its segment straight from device memory reads one value
// a step, and a warp's step touches 32 segments' cache lines: on fixed
// 32-row float segments their 128-byte strides meet in the same cache sets,
// and the units ran at 0.41 of a copy (H200, 2^26 floats). Here the block's
// rows are copied in whole (cp.async, each warp's copy 128 contiguous bytes)
// and read back from shared memory, where a stride costs bank conflicts
// instead: one padding slot of 4 bytes (8 for 8-byte values) after every
// 128 bytes moves segments of a power-of-two length onto distinct banks (a
// warp's 32-row float segments, each at its own bank, where unpadded all 32
// sit on one).
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "launch.cuh"

namespace segred {
namespace cuda {
namespace detail {

template <class T>
struct column_stage {
    static constexpr bool applies = sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8;
    // Elements a copy moves (cp.async takes 4, 8 or 16 bytes; 2-byte values
    // go in pairs), between two paddings, and in one padding.
    static constexpr int unit = sizeof(T) >= 4 ? 1 : 4 / static_cast<int>(sizeof(T));
    static constexpr int group = 128 / static_cast<int>(sizeof(T));
    static constexpr int pad = unit;

    // Slot of the stage's i-th element.
    __device__ static int slot(int i) { return i + i / group * pad; }
    // Bytes of shared memory for `elems` elements.
    static std::size_t bytes(std::int64_t elems) {
        return static_cast<std::size_t>(elems + (elems / group + 1) * pad) * sizeof(T);
    }
    // Alignment the values must have for the copies.
    static constexpr std::size_t align = unit * sizeof(T);
};

// A staged pass's tiles: `steps` * block_threads segments a block at a
// time, in a stage of `elems` rows.
struct column_stage_plan {
    std::int64_t elems;
    int steps;
};

// Rows [first, end) of x (first a multiple of column_stage<T>::unit; end <=
// n) into `stage` from slot 0, by the whole block: copies started, not
// committed. The last pair of 2-byte values, where it would run past n,
// goes through registers.
template <class T>
__device__ void copy_column_stage(const T* x, std::int64_t n, std::int64_t first, std::int64_t end, T* stage) {
    using C = column_stage<T>;
    const int units = static_cast<int>((end - first + C::unit - 1) / C::unit);
#pragma unroll 4
    for (int j = threadIdx.x; j < units; j += block_threads) {
        const std::int64_t r = first + std::int64_t(j) * C::unit;
        T* to = stage + C::slot(j * C::unit);
        if (C::unit == 1 || r + C::unit <= n) {
            __pipeline_memcpy_async(to, x + r, C::unit * sizeof(T));
        } else {
            for (int i = 0; i < C::unit && r + i < n; ++i) to[i] = x[r + i];
        }
    }
}

// Stage elements [k0, k1) to f(value, k), k ascending. Two-byte values go
// in pairs, one 4-byte shared load for two rows: slot(k) of an even k is
// even (group and pad are), so a pair never straddles a padding slot and is
// 4-byte aligned. A load, a slot and a loop step a row left the thread a
// segment issue-bound on fp16 (32-row segments at 0.58 of a copy where fp32
// ran at 0.84; docs/PERFORMANCE.md).
template <class T, class F>
__device__ __forceinline__ void fold_column_stage(const T* stage, int k0, int k1, F&& f) {
    using C = column_stage<T>;
    int k = k0;
    if constexpr (sizeof(T) == 2) {
        if ((k & 1) != 0 && k < k1) {
            f(stage[C::slot(k)], k);
            ++k;
        }
#pragma unroll 4
        for (; k + 1 < k1; k += 2) {
            const unsigned pair = *reinterpret_cast<const unsigned*>(stage + C::slot(k));
            T lo, hi;
            memcpy(&lo, &pair, sizeof lo);
            memcpy(&hi, reinterpret_cast<const unsigned char*>(&pair) + sizeof lo, sizeof hi);
            f(lo, k);
            f(hi, k + 1);
        }
    }
#pragma unroll 4
    for (; k < k1; ++k) f(stage[C::slot(k)], k);
}

// A tile's rows [r0, r1), copied from row `first` where `staged`.
struct column_stage_span {
    std::int64_t r0 = 0, r1 = 0, first = 0;
    bool staged = false;
};

// By the whole block, one barrier: the rows of segments [tile, end)
// published through `span` (two threads read the starts), and where they
// fit `elems`, their copies into `stage` started and committed. The span's
// next write comes after the caller's next barrier, which every thread
// reaches after reading it here.
template <class T, class Starts>
__device__ column_stage_span start_column_stage(const T* x, std::int64_t n, Starts starts, std::int64_t tile,
                                                std::int64_t end, std::int64_t elems, std::int64_t* span, T* stage) {
    column_stage_span t;
    if (threadIdx.x < 2) span[threadIdx.x] = starts(threadIdx.x == 0 ? tile : end);
    __syncthreads();
    t.r0 = span[0];
    t.r1 = span[1];
    t.first = t.r0 >= 0 ? t.r0 - t.r0 % column_stage<T>::unit : 0;
    t.staged = t.r0 >= 0 && t.r1 >= t.r0 && t.r1 <= n && t.r1 - t.first <= elems;
    if (t.staged) {
        copy_column_stage(x, n, t.first, t.r1, stage);
        __pipeline_commit();
    }
    return t;
}

} // namespace detail
} // namespace cuda
} // namespace segred
