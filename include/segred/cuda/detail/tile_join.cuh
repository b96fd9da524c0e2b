// segred/cuda/detail/tile_join.cuh -- runs of rows that cross the edges of
// fixed tiles (tile_reduce.cuh) or chunks (stream_reduce.cuh), joined from
// the partial states each tile leaves behind, in tile order.
//
// One warp per tile whose last run goes on: that run's tail, then the heads
// of the tiles it passes through and of the tile where it ends, read in
// steps of many tiles and combined in a fixed order, so the result is the
// same on every run.
//
// A run over thousands of tiles is the one case a warp cannot cover in a
// few steps: half of 2^26 rows in one segment crosses 8192 tiles of 4096
// rows, 32 steps of dependent loads by one warp while the rest of the
// device idles (ncu, H100, offsets of the GPU issue's "giant + tiny"
// lengths: the join 88 of 414 us). A run that goes on past its warp's first
// two steps is taken on by the warp's whole block, each warp a step's tiles
// side by side. Two such runs never start in one block's tiles (the first
// would pass through the other's first tile), so a block has at most one.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../core/options.hpp"
#include "../../core/views.hpp"
#include "launch.cuh"
#include "reduce_kernels.cuh"

namespace segred {
namespace cuda {
namespace detail {

// A tile's partial states: the part of its first run when that run began in
// an earlier tile (head; `passes` when it also goes on past the tile), and
// its last run when that run began inside the tile and goes on (tail).
template <class S>
struct tile_carry {
    S head;
    S tail;
    std::int64_t head_rows;
    std::int64_t tail_rows;
    std::int64_t tail_key;  // -1: no tail
    int passes;
};

// A tile join's first step covers 32 tiles, a lane each (most runs end
// within them); later steps 32 * join_tiles_a_lane, each lane combining its
// consecutive tiles in order first. With one tile a lane at every step, a
// long run took a step of dependent loads per 32 tiles (H200: a segment of
// 13.5 million fp32 rows over 4096-row tiles, about 100 steps); eight a lane
// from the first step would read eight carries for every run that ends in
// the next tile. 32 a lane after the second step measured no faster on a run
// over 8192 tiles and slower (0.93-0.95x) on 64 runs of 512 fp64 tiles.
constexpr int join_tiles_a_lane = 8;

inline namespace SEGRED_ABI_NS {

// One step of a join: lane l takes tiles base + l * P to base + l * P + P - 1
// and the run's heads among them are folded into acc and rows (in order
// within a lane, by a fixed tree across lanes); true where the run ends in
// this step. Every carry a lane may need is read before any is used, from a
// clamped index: loads under a branch each went out one after another, so
// a step cost P dependent loads whatever its width.
template <int P, class T, class R, class S>
__device__ bool join_step(const tile_carry<S>* carry, std::int64_t tiles, std::int64_t base, const R& r,
                          S (&lanes)[32], std::int64_t (&lane_rows)[32], int lane, S& acc, std::int64_t& rows) {
    const std::int64_t j0 = base + std::int64_t(lane) * P;
    bool through[P];
    S head[P];
    std::int64_t head_rows[P];
#pragma unroll
    for (int u = 0; u < P; ++u) {
        const tile_carry<S>& cj = carry[j0 + u < tiles ? j0 + u : tiles - 1];
        const int passes = cj.passes;
        through[u] = (j0 + u < tiles) & (passes != 0);
        head[u] = cj.head;
        head_rows[u] = cj.head_rows;
    }
    int stop = P;  // this lane's first tile where the run ends (or past the last tile)
#pragma unroll
    for (int u = P - 1; u >= 0; --u)
        if (!through[u]) stop = u;
    const unsigned stops = __ballot_sync(0xffffffffu, stop < P);
    const int last = stops ? __ffs(stops) - 1 : 31;  // the lanes up to `last` hold the run
    // This lane's tiles of the run: all below `last`, up to its stop at it.
    const int upto = lane < last ? P : lane > last ? 0 : stop < P ? stop + 1 : P;
    S part = r.template init<T>();
    std::int64_t part_rows = 0;
#pragma unroll
    for (int u = 0; u < P; ++u) {
        if (u < upto && j0 + u < tiles) {
            r.combine(part, head[u]);
            part_rows += head_rows[u];
        }
    }
    lanes[lane] = part;
    lane_rows[lane] = part_rows;
    __syncwarp();
    for (int w = 16; w > 0; w /= 2) {
        if (lane < w) {
            r.combine(lanes[lane], lanes[lane + w]);
            lane_rows[lane] += lane_rows[lane + w];
        }
        __syncwarp();
    }
    r.combine(acc, lanes[0]);
    rows += lane_rows[0];
    __syncwarp();
    return stops != 0;
}

// One warp per tile whose last run goes on: that run's tail, then the heads
// of the tiles it passes through and of the tile where it ends: the first
// 32 tiles a lane each, then 32 * join_tiles_a_lane. A run not ended by
// then is taken on by the whole block in rounds of one step a warp (warp k
// the k-th of a round's consecutive steps), the parts combined in order by
// the run's warp up to the step where it ends.
template <class T, class O, class R, class S>
SEGRED_KERNEL void __launch_bounds__(block_threads)
    tile_join_kernel(std::int64_t tiles, rows_view<O> out, R r, options opts, const tile_carry<S>* carry) {
    constexpr int U = join_tiles_a_lane;
    constexpr int W = block_threads / 32;
    constexpr std::int64_t step_tiles = 32 * U;
    __shared__ S lanes[W][32];
    __shared__ std::int64_t lane_rows[W][32];
    __shared__ S step_part[W];
    __shared__ std::int64_t step_rows[W];
    __shared__ int step_ended[W];
    __shared__ int long_run;  // the warp whose run goes on past its first two steps, else -1
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const std::int64_t t0 = std::int64_t(blockIdx.x) * W + warp;
    if (threadIdx.x == 0) long_run = -1;
    __syncthreads();
    const bool has_run = t0 < tiles && carry[t0].tail_key >= 0;
    S acc = r.template init<T>();
    std::int64_t rows = 0;
    if (has_run) {
        acc = carry[t0].tail;
        rows = carry[t0].tail_rows;
        bool ended = join_step<1, T>(carry, tiles, t0 + 1, r, lanes[warp], lane_rows[warp], lane, acc, rows);
        if (!ended)
            ended = join_step<U, T>(carry, tiles, t0 + 33, r, lanes[warp], lane_rows[warp], lane, acc, rows);
        if (!ended && lane == 0) long_run = warp;
    }
    __syncthreads();
    const int owner = long_run;  // the same for the whole block
    if (owner >= 0) {
        std::int64_t base = std::int64_t(blockIdx.x) * W + owner + 33 + step_tiles;
        for (bool done = false; !done; base += W * step_tiles) {
            S part = r.template init<T>();
            std::int64_t part_rows = 0;
            const bool ended = join_step<U, T>(carry, tiles, base + warp * step_tiles, r, lanes[warp],
                                               lane_rows[warp], lane, part, part_rows);
            if (lane == 0) {
                step_part[warp] = part;
                step_rows[warp] = part_rows;
                step_ended[warp] = ended;
            }
            __syncthreads();
            for (int k = 0; k < W && !done; ++k) {
                if (warp == owner) {
                    r.combine(acc, step_part[k]);
                    rows += step_rows[k];
                }
                done = step_ended[k] != 0;
            }
            __syncthreads();  // step_part is rewritten by the next step
        }
    }
    if (has_run && lane == 0) write_segment<T>(r, opts, out, carry[t0].tail_key, 0, acc, rows);
}

} // namespace SEGRED_ABI_NS

// After a tile or chunk kernel: the runs that cross tile edges joined from
// the tiles' carries.
template <class T, class O, class R, class S>
void join_tiles(const par_t& p, std::int64_t tiles, rows_view<O> out, const R& r, const options& opts,
                const tile_carry<S>* carry) {
    if (tiles < 2) return;
    const std::int64_t warps = block_threads / 32;
    tile_join_kernel<T, O, R, S><<<static_cast<unsigned>((tiles + warps - 1) / warps), block_threads, 0, p.stream>>>(
        tiles, out, r, opts, carry);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

} // namespace detail
} // namespace cuda
} // namespace segred
