// segred/cuda/detail/reduce_kernels.cuh -- reduction over a device layout.
//
// Work is cut so that no thread walks a long segment alone and no short
// segment wastes a block (the two ways segmented reductions collapse):
//  - short segments (<= short_segment positions): one thread per (segment,
//    column) reduces and writes the result;
//  - longer segments are cut into pieces of piece_rows() positions; one warp
//    reduces a piece, lanes spread over rows (narrow rows) or columns (wide
//    rows). A one-piece segment is written by its warp;
//  - a segment of several pieces leaves one partial state per piece, and one
//    block then combines them in a fixed tree.
// Every combination order is fixed, so results are identical run to run.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../core/finalize.hpp"
#include "../../core/options.hpp"
#include "../../core/reducers.hpp"
#include "../../core/views.hpp"
#include "launch.cuh"

namespace segred {
namespace cuda {
namespace detail {

constexpr std::int64_t short_segment = 16;
constexpr int warps_per_block = block_threads / 32;

// Positions per piece: enough work for a warp, and at least 64 so the
// partial states of a long segment stay a small fraction of its values.
inline std::int64_t piece_rows(std::int64_t width) {
    const std::int64_t p = 2048 / (width > 0 ? width : 1);
    return p > 64 ? p : 64;
}

inline namespace SEGRED_ABI_NS {

__device__ inline std::int64_t position_row(const std::int64_t* perm, std::int64_t k) { return perm ? perm[k] : k; }

// Largest s in [0, M] with a[s] <= x, for non-decreasing a.
__device__ inline std::int64_t last_at_most(const std::int64_t* a, std::int64_t M, std::int64_t x) {
    std::int64_t lo = 0, hi = M;
    while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo + 1) / 2;
        if (a[mid] <= x) lo = mid; else hi = mid - 1;
    }
    return lo;
}

template <class T, class O, class R>
SEGRED_KERNEL void short_segments_kernel(rows_view<const T> values, const std::int64_t* starts,
                                         const std::int64_t* perm, std::int64_t M, rows_view<O> out, R r,
                                         options opts) {
    const std::int64_t F = out.width;
    const std::int64_t total = M * F;
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const std::int64_t s = idx / F, f = idx - s * F;
        const std::int64_t b = starts[s], len = starts[s + 1] - b;
        if (len > short_segment) continue;
        auto st = r.template init<T>();
        for (std::int64_t k = b; k < b + len; ++k) {
            const std::int64_t row = position_row(perm, k);
            r.update(st, values(row, f), row);
        }
        segred::detail::write_result<T>(r, opts, out, s, f, st, len);
        if (f == 0 && opts.counts_out) opts.counts_out[s] = len;
    }
}

// npieces[s]: warp pieces of a segment longer than short_segment (else 0);
// nparts[s]: partial-state slots it needs (pieces, when more than one).
// A template (on nothing) so the header defines it once per program, not once per TU.
template <class Int = std::int64_t>
SEGRED_KERNEL void count_pieces_kernel(const std::int64_t* starts, std::int64_t M, std::int64_t P,
                                       std::int64_t* npieces, std::int64_t* nparts) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s <= M; s += stride) {
        std::int64_t np = 0;
        if (s < M) {
            const std::int64_t len = starts[s + 1] - starts[s];
            np = len > short_segment ? (len + P - 1) / P : 0;
        }
        npieces[s] = np;
        nparts[s] = np > 1 ? np : 0;
    }
}

template <class T, class O, class R, class S>
SEGRED_KERNEL void __launch_bounds__(block_threads)
    pieces_kernel(rows_view<const T> values, const std::int64_t* starts, const std::int64_t* perm, std::int64_t M,
                  rows_view<O> out, R r, options opts, const std::int64_t* piece_start,
                  const std::int64_t* part_start, std::int64_t P, S* partial, std::int64_t* multi_list,
                  unsigned long long* multi_count) {
    __shared__ S lanes[warps_per_block][32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const std::int64_t F = out.width;
    const std::int64_t Q = piece_start[M];
    const std::int64_t total_warps = std::int64_t(gridDim.x) * warps_per_block;
    for (std::int64_t q = std::int64_t(blockIdx.x) * warps_per_block + warp; q < Q; q += total_warps) {
        const std::int64_t s = last_at_most(piece_start, M, q);
        const std::int64_t j = q - piece_start[s];
        const std::int64_t np = piece_start[s + 1] - piece_start[s];
        const std::int64_t seg_b = starts[s], len = starts[s + 1] - seg_b;
        const std::int64_t k0 = seg_b + j * P;
        const std::int64_t k1 = k0 + P < seg_b + len ? k0 + P : seg_b + len;
        auto emit = [&](std::int64_t f, const S& st) {
            if (np == 1) {
                segred::detail::write_result<T>(r, opts, out, s, f, st, len);
                if (f == 0 && opts.counts_out) opts.counts_out[s] = len;
            } else {
                partial[(part_start[s] + j) * F + f] = st;
            }
        };
        if (F >= 32) {
            // Wide rows: lanes over columns, each lane walks the piece's rows.
            for (std::int64_t f = lane; f < F; f += 32) {
                S st = r.template init<T>();
                for (std::int64_t k = k0; k < k1; ++k) {
                    const std::int64_t row = position_row(perm, k);
                    r.update(st, values(row, f), row);
                }
                emit(f, st);
            }
        } else {
            // Narrow rows: 32 / F rows side by side, a lane per (row, column).
            const int per_step = 32 / static_cast<int>(F);
            const int roff = lane / static_cast<int>(F);
            const std::int64_t f = lane % F;
            S st = r.template init<T>();
            if (roff < per_step) {
                for (std::int64_t k = k0 + roff; k < k1; k += per_step) {
                    const std::int64_t row = position_row(perm, k);
                    r.update(st, values(row, f), row);
                }
            }
            lanes[warp][lane] = st;
            __syncwarp();
            if (roff == 0) {
                for (int other = 1; other < per_step; ++other) r.combine(st, lanes[warp][f + other * F]);
                emit(f, st);
            }
            __syncwarp();
        }
        if (np > 1 && j == 0 && lane == 0) multi_list[atomicAdd(multi_count, 1ull)] = s;
    }
}

template <class T, class O, class R, class S>
SEGRED_KERNEL void __launch_bounds__(block_threads)
    combine_pieces_kernel(const std::int64_t* starts, rows_view<O> out, R r, options opts,
                          const std::int64_t* piece_start, const std::int64_t* part_start, const S* partial,
                          const std::int64_t* multi_list, const unsigned long long* multi_count) {
    __shared__ S tree[block_threads];
    const std::int64_t F = out.width;
    const std::int64_t count = static_cast<std::int64_t>(*multi_count);
    for (std::int64_t i = blockIdx.x; i < count; i += gridDim.x) {
        const std::int64_t s = multi_list[i];
        const std::int64_t np = piece_start[s + 1] - piece_start[s];
        const std::int64_t base = part_start[s];
        const std::int64_t len = starts[s + 1] - starts[s];
        for (std::int64_t f = 0; f < F; ++f) {
            S st = r.template init<T>();
            for (std::int64_t j = threadIdx.x; j < np; j += blockDim.x) r.combine(st, partial[(base + j) * F + f]);
            tree[threadIdx.x] = st;
            __syncthreads();
            for (int w = block_threads / 2; w > 0; w /= 2) {
                if (threadIdx.x < w) r.combine(tree[threadIdx.x], tree[threadIdx.x + w]);
                __syncthreads();
            }
            if (threadIdx.x == 0) {
                segred::detail::write_result<T>(r, opts, out, s, f, tree[0], len);
                if (f == 0 && opts.counts_out) opts.counts_out[s] = len;
            }
            __syncthreads();
        }
    }
}

} // namespace SEGRED_ABI_NS
} // namespace detail
} // namespace cuda
} // namespace segred
