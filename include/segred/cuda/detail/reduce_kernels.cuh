// segred/cuda/detail/reduce_kernels.cuh -- reduction over a device layout.
//
// Shaped so that neither classic collapse of segmented reductions happens
// (a whole block on a one-row segment; one thread walking a long segment):
//  - segments averaging few rows: a thread per segment and vector of columns
//    (segment_columns.cuh), the whole warp on its longer ones;
//  - warp_segments_kernel, for segments averaging many rows: a warp per
//    segment, lanes across its rows or columns. Either lists giant segments.
//    One pass over the starts, no scan over M.
//  - giant segments are cut into pieces; one warp reduces a piece into a
//    partial state, and one block then combines a segment's partials with a
//    fixed tree.
//  - one_row_segments_kernel: fixed segments of one row, a map.
// Every combination order is fixed, so results are identical run to run.
#pragma once

#include <cuda_runtime.h>

#include <cub/block/block_scan.cuh>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../core/finalize.hpp"
#include "../../core/options.hpp"
#include "../../core/reducers.hpp"
#include "../../core/views.hpp"
#include "launch.cuh"

namespace segred {
namespace cuda {
namespace detail {

// Rows above which a segment of F columns is giant: listed by the segment
// pass and split into pieces across warps (giant_pieces_kernel) instead of
// reduced by one warp. One column: 4096 rows, one piece. A warp takes 128
// rows of one column a round trip to memory, so a segment of tens of
// thousands of rows held the pass's tail (H200, 2^26 floats from offsets
// uniform in 0..64 rows whose last segment took the 37251 rows left over:
// sums 227 us with it on one warp, 130 us listed; max 3.0x, argmax 2.1x,
// fp16 sums 3.3x; other lengths 0.99-1.00x).
constexpr std::int64_t giant_segment = std::int64_t(1) << 16;
constexpr std::int64_t giant_segment_one_column = 4096;
__host__ __device__ constexpr std::int64_t giant_rows(std::int64_t F) {
    return F == 1 ? giant_segment_one_column : giant_segment;
}
constexpr int warps_per_block = block_threads / 32;

// Positions per piece of a giant segment: a warp's worth of work, and at
// least 64 so the partial states stay a small fraction of the values.
inline std::int64_t piece_rows(std::int64_t width) {
    const std::int64_t p = 4096 / (width > 0 ? width : 1);
    return p > 64 ? p : 64;
}

// Segment starts: an array of M + 1 positions, the caller's offsets in
// place (32-bit ones: an int64 copy of them cost a read and two writes of
// the starts, as much again as one-row segments' values), or fixed-size
// segments.
struct array_starts {
    const std::int64_t* p;
    __device__ std::int64_t operator()(std::int64_t s) const { return p[s]; }
};
template <class I>
struct offset_starts {
    const I* p;
    __device__ std::int64_t operator()(std::int64_t s) const { return static_cast<std::int64_t>(p[s]); }
};
struct fixed_starts {
    std::int64_t size;
    __device__ std::int64_t operator()(std::int64_t s) const { return s * size; }
};

// A giant segment as the segment pass lists it: its index and positions, so
// the piece passes need no starts (and take no template on their kind).
struct giant_entry {
    std::int64_t s, begin, end;
};

inline namespace SEGRED_ABI_NS {

// List segment s of positions [b, e) as giant.
__device__ inline void list_giant(giant_entry* giant_list, unsigned long long* giant_count, std::int64_t s,
                                  std::int64_t b, std::int64_t e) {
    giant_list[atomicAdd(giant_count, 1ull)] = giant_entry{s, b, e};
}

__device__ inline std::int64_t position_row(const std::int64_t* perm, std::int64_t k) { return perm ? perm[k] : k; }

// Largest s in [0, M] with a[s] <= x, for non-decreasing a.
template <class J>
__device__ std::int64_t last_at_most(const J* a, std::int64_t M, std::int64_t x) {
    std::int64_t lo = 0, hi = M;
    while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo + 1) / 2;
        if (static_cast<std::int64_t>(a[mid]) <= x) lo = mid; else hi = mid - 1;
    }
    return lo;
}

// Elements of T in one 16-byte load.
template <class T>
constexpr int vector_elems = sizeof(T) <= 8 && 16 % sizeof(T) == 0 ? static_cast<int>(16 / sizeof(T)) : 1;

// V consecutive elements of a row, loaded at once (one 16-byte load).
template <int V, class T>
struct row_vector {
    T e[V];
};
template <int V, class T>
__device__ row_vector<V, T> load_row_vector(const T* p) {
    row_vector<V, T> x;
    static_assert(V * sizeof(T) == 16, "a row vector is one 16-byte load");
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    memcpy(&x, &raw, sizeof raw);
    return x;
}

// Whether every row can be read in 16-byte vectors: the reduced width is the
// rows' whole width, a multiple of the vector, on 16-byte-aligned data (so
// every row start is aligned too).
template <class T>
SEGRED_HD bool rows_in_vectors(const rows_view<const T>& values, std::int64_t F) {
    return F == values.width && F % vector_elems<T> == 0 && (reinterpret_cast<std::uintptr_t>(values.data) & 15) == 0;
}

// Whether vectors pay for a segment of `rows` rows of F elements. Rows of
// fewer than 16 elements lie many to a step (4 floats: 32 rows), and each
// of a lane's V columns then combines through a deep tree (five levels for
// each of 4 columns); that pays only where every lane reads 8 rows or more
// (4 floats a row, H200: 0.66x on 32-row segments, 2.47x on 1024-row ones).
template <class T>
__device__ bool vectors_pay(std::int64_t F, std::int64_t rows) {
    // rows >= 8 * (32 / G) for G = F / V vectors a row, without a division
    return F >= 16 || rows * (F / vector_elems<T>) >= 256;
}

// x from the lane `delta` above (itself where there is none), any trivially
// copyable state moved as 32-bit words: the warp's combining tree in
// registers, without shared memory and a __syncwarp a level.
template <class S>
__device__ S shuffle_down(const S& x, int delta) {
    constexpr int words = static_cast<int>((sizeof(S) + 3) / 4);
    unsigned w[words] = {};
    memcpy(w, &x, sizeof(S));
    for (int i = 0; i < words; ++i) w[i] = __shfl_down_sync(0xffffffffu, w[i], delta);
    S y;
    memcpy(&y, w, sizeof(S));
    return y;
}

// warp_reduce_range with each lane reading V consecutive columns at a time:
// G = F / V vectors a row. With G >= 32, lanes across vectors, each lane
// walking the rows; else 32 / G rows side by side, a lane per (row, vector),
// and the lanes of one vector combine by a fixed tree (shuffles), one
// column at a time.
template <int V, class T, class R, class S, class Emit>
__device__ void warp_reduce_vectors(const rows_view<const T>& values, const std::int64_t* perm, std::int64_t k0,
                                    std::int64_t k1, std::int64_t F, const R& r, S* lanes, Emit&& emit) {
    const int lane = threadIdx.x % 32;
    const std::int64_t G = F / V;
    if (G >= 32) {
        for (std::int64_t c = lane; c < G; c += 32) {
            S st[V];
            for (int j = 0; j < V; ++j) st[j] = r.template init<T>();
#pragma unroll 4
            for (std::int64_t k = k0; k < k1; ++k) {
                const std::int64_t row = position_row(perm, k);
                const row_vector<V, T> x = load_row_vector<V>(values.data + row * values.width + c * V);
                for (int j = 0; j < V; ++j) r.update(st[j], x.e[j], row);
            }
            for (int j = 0; j < V; ++j) emit(c * V + j, st[j]);
        }
        return;
    }
    const int per_step = 32 / static_cast<int>(G);
    const int roff = lane / static_cast<int>(G);
    const std::int64_t c = lane % G;
    S st[V];
    for (int j = 0; j < V; ++j) st[j] = r.template init<T>();
    if (roff < per_step) {
#pragma unroll 4
        for (std::int64_t k = k0 + roff; k < k1; k += per_step) {
            const std::int64_t row = position_row(perm, k);
            const row_vector<V, T> x = load_row_vector<V>(values.data + row * values.width + c * V);
            for (int j = 0; j < V; ++j) r.update(st[j], x.e[j], row);
        }
    }
    int top = 1;
    while (top * 2 < per_step) top *= 2;
    if constexpr (std::is_trivially_copyable<S>::value) {
        for (int j = 0; j < V; ++j) {
            for (int half = top; half >= 1; half /= 2) {
                const S other = shuffle_down(st[j], half * static_cast<int>(G));
                if (roff < half && roff + half < per_step) r.combine(st[j], other);
            }
            if (roff == 0) emit(c * V + j, st[j]);
        }
    } else {  // the same tree through shared memory
        for (int j = 0; j < V; ++j) {
            lanes[lane] = st[j];
            __syncwarp();
            for (int half = top; half >= 1; half /= 2) {
                if (roff < half && roff + half < per_step) r.combine(lanes[lane], lanes[lane + half * G]);
                __syncwarp();
            }
            if (roff == 0) emit(c * V + j, lanes[lane]);
            __syncwarp();
        }
    }
}

// warp_reduce_range a column a lane (any width, any alignment; F may be
// less than the rows' width: a count column reads column 0).
template <class T, class R, class S, class Emit>
__device__ void warp_reduce_columns(const rows_view<const T>& values, const std::int64_t* perm, std::int64_t k0,
                                    std::int64_t k1, std::int64_t F, const R& r, S* lanes, Emit&& emit) {
    const int lane = threadIdx.x % 32;
    if (F >= 32) {
        // Wide rows: lanes across columns, each lane walks the rows.
        for (std::int64_t f = lane; f < F; f += 32) {
            S st = r.template init<T>();
#pragma unroll 4
            for (std::int64_t k = k0; k < k1; ++k) {
                const std::int64_t row = position_row(perm, k);
                r.update(st, values(row, f), row);
            }
            emit(f, st);
        }
        return;
    }
    // Narrow rows: 32 / F rows side by side, a lane per (row, column), then
    // the lanes of one column combine by a fixed tree in shared memory.
    const int per_step = 32 / static_cast<int>(F);
    const int roff = lane / static_cast<int>(F);
    const std::int64_t f = lane % F;
    S st = r.template init<T>();
    if (roff < per_step) {
#pragma unroll 4
        for (std::int64_t k = k0 + roff; k < k1; k += per_step) {
            const std::int64_t row = position_row(perm, k);
            r.update(st, values(row, f), row);
        }
    }
    lanes[lane] = st;
    __syncwarp();
    int half = 1;
    while (half * 2 < per_step) half *= 2;
    for (; half >= 1; half /= 2) {
        if (roff < half && roff + half < per_step) r.combine(lanes[lane], lanes[lane + half * F]);
        __syncwarp();
    }
    if (roff == 0) emit(f, lanes[lane]);
    __syncwarp();
}

// The whole warp reduces positions [k0, k1) of one segment; emit(f, state)
// is called once per column, by one lane. lanes: this warp's 32 states of
// shared memory. Rows whose width is a multiple of a 16-byte vector read a
// vector a lane (4 floats, 2 doubles, 8 halves): a quarter of the loads, and
// four times the bytes in flight per load. The arg forms keep a column a
// lane: with vectors, their compare-and-select of (value, row) states ran
// slower (0.90x on 64 floats a row, H200), not faster. (The column form is
// kept as it was, not as the vector form with one element: that ran argmax
// there at 0.60x.)
template <class T, class R, class S, class Emit>
__device__ void warp_reduce_range(const rows_view<const T>& values, const std::int64_t* perm, std::int64_t k0,
                                  std::int64_t k1, std::int64_t F, const R& r, S* lanes, Emit&& emit) {
    if constexpr (!R::has_arg && vector_elems<T> > 1) {
        if (rows_in_vectors(values, F) && vectors_pay<T>(F, k1 - k0)) {
            warp_reduce_vectors<vector_elems<T>>(values, perm, k0, k1, F, r, lanes, emit);
            return;
        }
    }
    warp_reduce_columns<T>(values, perm, k0, k1, F, r, lanes, emit);
}

// The 32 lanes' states combined into lane 0's by a fixed tree (lane l takes
// lane l + 16, then l + 8, ...): shuffles where the state is trivially
// copyable, else through this warp's 32 states of shared memory. Returns
// the combined state in lane 0 (other lanes: partial states).
template <class R, class S>
__device__ S warp_combine(const R& r, S st, S* lanes) {
    const int lane = threadIdx.x % 32;
    if constexpr (std::is_trivially_copyable<S>::value) {
        for (int half = 16; half >= 1; half /= 2) {
            const S other = shuffle_down(st, half);
            if (lane < half) r.combine(st, other);
        }
        return st;
    } else {
        lanes[lane] = st;
        __syncwarp();
        for (int half = 16; half >= 1; half /= 2) {
            if (lane < half) r.combine(lanes[lane], lanes[lane + half]);
            __syncwarp();
        }
        st = lanes[lane];
        __syncwarp();
        return st;
    }
}

// This lane's share of one column's contiguous rows [b, e), folded into st:
// the rows before the first 16-byte boundary and after the last (fewer
// than V each) a lane each, the vectors between a lane each in turn, four
// in flight. lead: elements from the 16-byte boundary at or before data to
// data (0 for aligned values).
template <class T, class R, class S>
__device__ void fold_span(const T* data, std::int64_t b, std::int64_t e, const R& r, S& st, int lane, int lead = 0) {
    constexpr int V = vector_elems<T>;
    constexpr std::int64_t step = 32 * V;
    const std::int64_t vb0 = (b + lead + V - 1) / V * V - lead, vb = vb0 < e ? vb0 : e;
    const std::int64_t ve0 = (e + lead) / V * V - lead, ve = ve0 > vb ? ve0 : vb;
    if (b + lane < vb) r.update(st, data[b + lane], b + lane);
    if (ve + lane < e) r.update(st, data[ve + lane], ve + lane);
    std::int64_t i = vb + lane * V;
    constexpr int ahead = 4;
    for (; i + (ahead - 1) * step < ve; i += ahead * step) {
        row_vector<V, T> x[ahead];
#pragma unroll
        for (int u = 0; u < ahead; ++u) x[u] = load_row_vector<V>(data + i + u * step);
#pragma unroll
        for (int u = 0; u < ahead; ++u)
#pragma unroll
            for (int k = 0; k < V; ++k) r.update(st, x[u].e[k], i + u * step + k);
    }
    for (; i < ve; i += step) {
        const row_vector<V, T> x = load_row_vector<V>(data + i);
#pragma unroll
        for (int k = 0; k < V; ++k) r.update(st, x.e[k], i + k);
    }
}

// One column's contiguous rows [k0, k1) (values one column wide, no
// permutation), reduced by the whole warp in 16-byte vectors (fold_span),
// the lanes then combined by warp_combine's fixed tree. emit(0, state)
// once, by lane 0. Every reducer: the arg forms' (value, row) states get
// their rows' numbers. A value a lane a step (warp_reduce_columns) took the
// pieces of a giant segment of fp16 at 56 us against 19 for floats (the
// rows left to the last segment of offsets uniform in 0..64 rows, H100,
// ncu). One state a lane, folded across its vectors, and a five-level tree
// once, where V states a lane took it V times.
template <class T, class R, class S, class Emit>
__device__ void warp_reduce_contiguous(const T* data, std::int64_t k0, std::int64_t k1, const R& r, S* lanes,
                                       Emit&& emit) {
    static_assert(vector_elems<T> > 1, "16-byte vectors of more than one element");
    const int lane = threadIdx.x % 32;
    const int lead = static_cast<int>(reinterpret_cast<std::uintptr_t>(data) % 16 / sizeof(T));
    S st = r.template init<T>();
    fold_span(data, k0, k1, r, st, lane, lead);
    st = warp_combine(r, st, lanes);
    if (lane == 0) emit(0, st);
}

// Whether warp_reduce_contiguous applies: one column of contiguous rows.
template <class T>
__host__ __device__ bool one_contiguous_column(const rows_view<const T>& values, const std::int64_t* perm, std::int64_t F) {
    return vector_elems<T> > 1 && F == 1 && values.width == 1 && perm == nullptr;
}

// f called with the reducer the kernels run for r where every writer knows
// its segment's rows (the tiles, the streamed chunks, the passes over
// starts): a mean goes as a sum divided by those rows where it is written
// (mean_of_rows), a state of one value, which sorted ids park like a sum's
// and the passes over starts keep in fewer registers, with no count added
// row by row; any other reducer as it is.
template <class R, class F>
void with_row_divided_mean(const R& r, F&& f) {
    if constexpr (std::is_same<R, segred::mean>::value) {
        f(segred::detail::mean_of_rows{});
    } else {
        f(r);
    }
}

template <class T, class O, class R, class S>
__device__ void write_segment(const R& r, const options& opts, const rows_view<O>& out, std::int64_t s,
                              std::int64_t f, const S& st, std::int64_t len) {
    segred::detail::write_result<T>(r, opts, out, s, f, st, len);
    if (f == 0 && opts.counts_out) opts.counts_out[s] = len;
}

// Six 256-thread blocks an SM for the arg forms' wide rows: their kernel
// fits the 40 registers that asks for without spilling, and argmax over
// offsets of 32 rows of width 64 ran 1.09x (H100: 123.0 -> 112.6 us). The
// bound on every instantiation spilled 14 of the bench's 19 (4 to 224
// bytes) and cost the float sum, mean and double sums 2-7% at width 64,
// uniform 0..64-row float segments 0.63x (docs/PERFORMANCE.md).
// 0 for the others: no bound, as if none were given (nvcc then emits no
// .minnctapersm). 1 is not the same: ptxas then took up to 90 registers,
// where without it 32 to 48.
template <bool Contiguous, class R>
constexpr int warp_pass_min_blocks() {
    return !Contiguous && R::has_arg ? 6 : 0;
}

// Segments averaging many rows: a warp per segment (grid-stride over
// segments), lanes across its rows or columns (warp_reduce_range). Giving a
// warp 32 consecutive segments and reducing them one after another left too
// few warps in flight where segments are few (width 256, 32-row segments of
// 2^26 values: 8192 segments, 256 warps on the whole device).
// Contiguous (one_contiguous_column, chosen on the host) is a template
// argument, not a branch in the loop: with both paths inlined in one kernel
// its code grew by a quarter and wide rows, which take the other path, ran
// 3-5% slower (H100, offsets of 32 rows of width 64, 103 -> 106 us); apart,
// H200: those rows 1.07x, the deterministic sum's wide rows 1.08-1.09x.
template <bool Contiguous, class T, class O, class R, class S, class Starts>
SEGRED_KERNEL void __launch_bounds__(block_threads, (warp_pass_min_blocks<Contiguous, R>()))
    warp_segments_kernel(rows_view<const T> values, Starts starts, const std::int64_t* perm, std::int64_t M,
                         rows_view<O> out, R r, options opts, giant_entry* giant_list,
                         unsigned long long* giant_count) {
    __shared__ S lanes[warps_per_block][32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const std::int64_t warps = std::int64_t(gridDim.x) * warps_per_block;
    for (std::int64_t s = std::int64_t(blockIdx.x) * warps_per_block + warp; s < M; s += warps) {
        const std::int64_t b = starts(s), e = starts(s + 1);
        if (e - b > giant_rows(out.width)) {
            if (lane == 0) list_giant(giant_list, giant_count, s, b, e);
            continue;
        }
        const auto write = [&](std::int64_t f, const S& st) { write_segment<T>(r, opts, out, s, f, st, e - b); };
        if constexpr (Contiguous) {
            warp_reduce_contiguous(values.data, b, e, r, lanes[warp], write);
        } else {
            warp_reduce_range<T>(values, perm, b, e, out.width, r, lanes[warp], write);
        }
    }
}

// One block: piece_offset[i] = pieces of giant segments before list entry i,
// for i in [0, count]; the pieces of entry i are [piece_offset[i],
// piece_offset[i + 1]).
// A template (on nothing) so the header defines it once per program, not once per TU.
template <class Int = std::int64_t>
SEGRED_KERNEL void __launch_bounds__(block_threads)
    giant_plan_kernel(const giant_entry* giant_list, const unsigned long long* giant_count, std::int64_t P,
                      std::int64_t* piece_offset) {
    using scan = cub::BlockScan<std::int64_t, block_threads>;
    __shared__ typename scan::TempStorage temp;
    wait_for_prior_grids();
    const std::int64_t count = static_cast<std::int64_t>(*giant_count);
    std::int64_t carry = 0;
    for (std::int64_t base = 0; base < count; base += block_threads) {
        const std::int64_t i = base + threadIdx.x;
        std::int64_t np = 0;
        if (i < count) np = (giant_list[i].end - giant_list[i].begin + P - 1) / P;
        std::int64_t before, total;
        scan(temp).ExclusiveSum(np, before, total);
        if (i < count) piece_offset[i] = carry + before;
        carry += total;
        __syncthreads();
    }
    if (threadIdx.x == 0) piece_offset[count] = carry;
}

template <class T, class R, class S>
SEGRED_KERNEL void __launch_bounds__(block_threads)
    giant_pieces_kernel(rows_view<const T> values, const std::int64_t* perm, std::int64_t F, R r,
                        const giant_entry* giant_list, const unsigned long long* giant_count,
                        const std::int64_t* piece_offset, std::int64_t P, S* partial) {
    __shared__ S lanes[warps_per_block][32];
    const int warp = threadIdx.x / 32;
    wait_for_prior_grids();
    const std::int64_t count = static_cast<std::int64_t>(*giant_count);
    const std::int64_t Q = piece_offset[count];
    const std::int64_t total_warps = std::int64_t(gridDim.x) * warps_per_block;
    for (std::int64_t q = std::int64_t(blockIdx.x) * warps_per_block + warp; q < Q; q += total_warps) {
        const std::int64_t i = last_at_most(piece_offset, count, q);  // few entries: cached
        const std::int64_t seg_end = giant_list[i].end;
        const std::int64_t k0 = giant_list[i].begin + (q - piece_offset[i]) * P;
        const std::int64_t k1 = k0 + P < seg_end ? k0 + P : seg_end;
        auto to_partial = [&](std::int64_t f, const S& st) { partial[q * F + f] = st; };
        if constexpr (vector_elems<T> > 1) {
            if (one_contiguous_column(values, perm, F)) {
                warp_reduce_contiguous(values.data, k0, k1, r, lanes[warp], to_partial);
                continue;
            }
        }
        warp_reduce_range<T>(values, perm, k0, k1, F, r, lanes[warp], to_partial);
    }
}

template <class T, class O, class R, class S>
SEGRED_KERNEL void __launch_bounds__(block_threads)
    giant_combine_kernel(rows_view<O> out, R r, options opts, const giant_entry* giant_list,
                         const unsigned long long* giant_count, const std::int64_t* piece_offset,
                         const S* partial) {
    __shared__ S tree[block_threads];
    wait_for_prior_grids();
    const std::int64_t F = out.width;
    const std::int64_t count = static_cast<std::int64_t>(*giant_count);
    for (std::int64_t i = blockIdx.x; i < count; i += gridDim.x) {
        const std::int64_t s = giant_list[i].s;
        const std::int64_t q0 = piece_offset[i], q1 = piece_offset[i + 1];
        const std::int64_t len = giant_list[i].end - giant_list[i].begin;
        for (std::int64_t f = 0; f < F; ++f) {
            S st = r.template init<T>();
            for (std::int64_t q = q0 + threadIdx.x; q < q1; q += block_threads) r.combine(st, partial[q * F + f]);
            tree[threadIdx.x] = st;
            __syncthreads();
            for (int w = block_threads / 2; w > 0; w /= 2) {
                if (threadIdx.x < w) r.combine(tree[threadIdx.x], tree[threadIdx.x + w]);
                __syncthreads();
            }
            if (threadIdx.x == 0) write_segment<T>(r, opts, out, s, f, tree[0], len);
            __syncthreads();
        }
    }
}

// Fixed segments of one row over one column (M == n): segment s is row s,
// so each output is its row folded alone -- a map, with no tiles, keys or
// runs.
template <class T, class O, class R>
SEGRED_KERNEL void __launch_bounds__(block_threads)
    one_row_segments_kernel(rows_view<const T> values, rows_view<O> out, R r, options opts) {
    using S = state_t<R, T>;
    const std::int64_t stride = std::int64_t(gridDim.x) * block_threads;
    for (std::int64_t s = std::int64_t(blockIdx.x) * block_threads + threadIdx.x; s < values.n; s += stride) {
        S st = r.template init<T>();
        r.update(st, values.data[s], s);
        write_segment<T>(r, opts, out, s, 0, st, 1);
    }
}

} // namespace SEGRED_ABI_NS
} // namespace detail
} // namespace cuda
} // namespace segred
