// segred/cuda/detail/tile_reduce.cuh -- sorted segments of one-column rows
// reduced row-parallel: a reduce-by-key over fixed tiles of rows.
//
// The segment-centric kernel (reduce_kernels.cuh) gives each segment a lane
// or a warp, so its speed depends on the length distribution. Here every
// tile is the same 4096 rows (2048 for wide values or keys; for long
// segments of computed keys, 128 bytes of values a thread: 8192 floats;
// longer ones still are streamed, stream_reduce.cuh) whatever the segments
// are: persistent blocks stage tiles in shared memory, two at a time (the
// next one's copies fly while this one is folded), each thread folds its 16
// (8; 32 floats) consecutive rows run by run, a block-wide segmented scan
// joins the runs that cross threads, and the thread holding a segment's
// last row writes it.
// Runs that cross a tile boundary leave partial states (a tile's head and
// tail, tile_carry); tile_join.cuh joins them, one warp per crossing run, in
// tile order. Tiles, per-thread folds and the joins all have fixed shapes, so
// the result is the same on every run.
//
// Row keys are the segment of each row, non-decreasing: sorted ids as they
// are; fixed segments by division for each thread's first row, then a compare
// of each row with the next segment's first row; starts (offsets, lengths)
// of short segments derived per tile in shared memory from the starts in the
// tile's key range, of long ones computed like fixed segments, each thread's
// first key found from the tile's starts. Tiles of many short segments from
// starts are folded a thread a segment instead (fold_tile_segments; their
// starts copied into shared memory with their rows), with
// the same heads and tails.
// Keys outside [0, M) mark rows in no segment (before the first offset, after
// the last). Segments whose ids no row has are empty: the thread that sees
// the gap between two keys writes them (derived keys: the pass that derives
// them, for the gaps inside the tile's key range; sorted ids: after the
// fold, where the warp writes the runs its threads parked and the gaps
// before them (write_parked_runs), and, lanes together, the gaps before
// each thread's open run and its first row (write_gaps_by_warp); or, for
// states wider than a value, a thread's first short gap after its fold,
// with its warp's other lanes).
#pragma once

#include <cuda_runtime.h>

#include <cub/block/block_scan.cuh>
#include <cuda_pipeline.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../core/finalize.hpp"
#include "../../core/options.hpp"
#include "../../core/reducers.hpp"
#include "../../core/views.hpp"
#include "async_copy.cuh"
#include "launch.cuh"
#include "reduce_kernels.cuh"
#include "temp_buffer.cuh"
#include "tile_join.cuh"

namespace segred {
namespace cuda {
namespace detail {

constexpr int tile_threads = 256;
// The tile's block scans exchange only warp totals through shared memory
// (cub's warp-scans algorithm). The default raking scan keeps every
// thread's element there: 6 KB for a run_part, which with the key scan's
// and the two stages left room for two blocks per SM instead of three.
template <class X>
using tile_block_scan = cub::BlockScan<X, tile_threads, cub::BLOCK_SCAN_WARP_SCANS>;

// Consecutive rows per thread: 16, or 8 when a row's staged bytes (value and
// staged key) exceed 8, or 128 bytes of values where only values are staged
// (chunk_staged, below), so two stages take at most about 74 KB of shared
// memory.
template <class T, class I, class Keys>
constexpr int tile_items_for();

// Keys of sorted ids: loaded with the values.
template <class I>
struct id_keys {
    using index_type = I;
    static constexpr bool loaded = true;
    static constexpr bool empty_segments = true;
    static constexpr bool derived = false;
    static constexpr bool searched = false;
    static constexpr bool chunks = false;  // see chunked below
    const I* ids;
};

// Keys computed from the row: fixed segments (size > 0) or starts[M + 1].
struct fixed_keys {
    static constexpr bool loaded = false;
    static constexpr bool empty_segments = false;  // size > 0: no gaps to write
    static constexpr bool derived = false;
    static constexpr bool searched = false;
    static constexpr bool chunks = false;  // see chunked below
    std::int64_t size;
    std::int64_t M;
    __device__ std::int64_t first(std::int64_t row) const {
        const std::int64_t s = row / size;
        return s < M ? s : M;
    }
    __device__ std::int64_t first_between(std::int64_t row, std::int64_t, std::int64_t) const { return first(row); }
    // First row past segment `key` (past every row for key M).
    __device__ std::int64_t bound(std::int64_t key) const { return key < M ? (key + 1) * size : INT64_MAX; }
    // Row `row` has reached `b`, the end of segment key: the next key and its
    // bound, by adds (rows go up by one, so the key does too, once per
    // `size` rows: no 64-bit division or product per row).
    __device__ void advance(std::int64_t& key, std::int64_t& b, std::int64_t) const {
        ++key;
        b = key < M ? b + size : INT64_MAX;
    }
};

// Keys from starts[M + 1] (the caller's offsets in place, or starts built
// from lengths), of any integer type J. Where segments are short (Derive),
// each tile derives its rows' keys in shared memory (derive_tile_keys), so a
// row costs what a sorted id does, with no read of the starts per row. Where
// they are long, keys are computed as for fixed segments: each thread's
// first key from the tile's starts (marks left by them, or a short search),
// then a compare of each row with the next segment's first row, which costs
// less per row than a key in shared memory
// (derived keys measured on an H100: 1.5x faster at one-row segments, 1.3x
// slower at 1024-row ones). Derived keys lie in [-1, M] and are staged as
// labels less the tile's first key (derived_label), at most 32 bits: the
// host derives only for M below INT_MAX.
template <class J, bool Derive>
struct start_keys {
    static constexpr bool loaded = false;
    static constexpr bool empty_segments = true;
    static constexpr bool derived = Derive;
    static constexpr bool searched = !Derive;  // each thread's first key: see tile_reduce_kernel
    static constexpr bool chunks = false;
    using start_type = J;
    const J* starts;
    std::int64_t M;
    __device__ std::int64_t start(std::int64_t s) const { return static_cast<std::int64_t>(starts[s]); }
    // -1 before starts[0]; M at or after starts[M]; else the segment holding
    // row (the last of several equal starts, so never an empty one).
    __device__ std::int64_t first(std::int64_t row) const {
        if (row < start(0)) return -1;
        return last_at_most(starts, M, row);
    }
    // The same, knowing the key lies in [a, b] (the tile's first and last
    // keys): a short search over a range the block has just touched.
    __device__ std::int64_t first_between(std::int64_t row, std::int64_t a, std::int64_t b) const {
        if (row < start(0)) return -1;
        std::int64_t lo = a < 0 ? 0 : a, hi = b < M ? b : M;
        while (lo < hi) {
            const std::int64_t mid = lo + (hi - lo + 1) / 2;
            if (start(mid) <= row) lo = mid; else hi = mid - 1;
        }
        return lo;
    }
    __device__ std::int64_t bound(std::int64_t key) const {
        return key < 0 ? start(0) : key < M ? start(key + 1) : INT64_MAX;
    }
    // Row `row` has reached `b`, the bound of key (so key < M; from key -1
    // too, whose bound is starts[0]): the key of row and its bound, the
    // start that ended the search read once for both. Key is done, so the
    // search begins at key + 1: one read of the starts where the next
    // segment holds the row. (Beginning at key itself read b again first: a
    // dependent load and a loop pass more in every close, which on uniform
    // 0..64-row segments ran with one lane of the warp active, ncu, H200;
    // 1.14x there without them.)
    __device__ void advance(std::int64_t& key, std::int64_t& b, std::int64_t row) const {
        do {
            ++key;
            b = key < M ? start(key + 1) : INT64_MAX;
        } while (b <= row);
    }
};

// Values that fit 16-byte chunks whole (see chunk_staged).
template <class T>
constexpr bool chunk_capable = sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8;

// Computed keys whose tiles are staged in chunks (chunk_staged), which the
// host picks where that was measured to pay (fp32 sums on an H200, against
// the row-by-row kernel): fixed segments of 16 rows or more whose
// boundaries fall on chunk starts (16: 1.31x, 24: 1.22x, 32 and 1024:
// 1.38x, 48: 1.29x, 100: 1.09x; but 17, 31, 33 rows: 0.84-0.93x, and 2 to
// 5 rows: 0.8-0.88x), and segments from starts averaging 64 rows or more.
// Measured with every segment from starts averaging 16 rows or more
// chunked (2026-11-29, offsets; lengths within 0.04): 64-row segments
// 1.37x, lengths uniform in 0..128 rows 1.01x, in 0..512 1.25x, 0..2048
// and 2^20 1.00-1.01x; but 0..32 0.77x and 0..64 0.91x, so 32-row
// segments (1.34x, boundaries all on chunk starts) average too few rows to
// be told from them. Where boundaries fall inside chunks the chunk is
// folded row by row from registers, and a warp runs each lane's run close
// apart (see the fold in tile_reduce_kernel): that measured slower than the
// row-by-row kernel.
template <class Keys>
struct chunked : Keys {
    static constexpr bool chunks = true;
};

constexpr std::int64_t chunk_min_fixed_rows = 16;
constexpr std::int64_t chunk_min_avg_rows = 64;

// Whether fixed segments of `size` rows of T take chunked tiles.
template <class T>
constexpr bool fixed_rows_chunked(std::int64_t size) {
    if constexpr (chunk_capable<T>) {
        return size >= chunk_min_fixed_rows && size % static_cast<std::int64_t>(16 / sizeof(T)) == 0;
    }
    return false;
}

// Derived keys are staged as labels, the row's key less the tile's first
// key, in 16 bits: two stages of 4096 fp32 rows then take 52.2 KB, and four
// blocks fit an SM (with int keys, 69.6 KB: three; H200, offsets of 1 to 8
// rows 1.07-1.16x). Tiles whose keys span more than derived_label_span
// (tens of thousands of empty segments among their rows) keep 32-bit
// labels, the high halves in the other stage's key slots (tile_labels).
using derived_label = std::int16_t;
constexpr std::int64_t derived_label_span = 32767;

// Slots from one row's labels to the next row's (label_slot): a thread's
// rows tile_threads slots apart and 32 / Items slots more, so that the 32
// consecutive rows a warp marks in derive_tile_keys (2 or 4 threads' rows)
// fall in 16 different banks, two labels to a word. Without the padding a
// thread's rows shared a bank: ncu counted 8.1-way conflicts on shared
// stores, 87% of their wavefronts, at one-row segments (H200).
template <int Items>
constexpr int label_stride = tile_threads + 32 / Items;

// Start keys are derived where segments average at most this many rows, over
// the caller's offsets or the int64 starts built from lengths. Measured
// against computed keys: offsets 1.5x at one-row segments, 1.05x at 4,
// 1.2x on Pareto lengths (H100, before tiles of many segments were folded a
// thread a segment: fold_tile_segments); lengths (H200, with those tiles)
// 1.66x / 1.68x on lengths uniform in 0..8 / 0..16 rows, 1.05x with 90% of
// segments empty, where the built starts derived only up to 2 and then 4
// rows a segment.
constexpr std::int64_t derive_max_rows_per_segment = 16;

// Whether a tile's row keys sit in shared memory (loaded with the values, or
// derived there), rather than computed row by row.
template <class Keys>
constexpr bool keys_staged = Keys::loaded || Keys::derived;

// Computed keys of long segments (chunked, above) stage values only, and
// where a value is 2, 4 or 8 bytes each thread takes 128 bytes of rows (32
// floats), staged as eight 16-byte chunks: copied in with one cp.async a
// chunk and read back with one shared load a chunk, where a row cost a
// 4-byte copy and a load of its own. The per-tile work (a thread's first
// key, the block scan, the writes around it) is then spread over twice the
// rows of a float tile. With 16 rows a thread the kernel issued 42
// instructions a row on fixed 16-row segments (ncu, H200), and a first
// chunked version with 16 rows a thread still 36 on 1024-row ones, a
// quarter of them the block scan; both read at half the speed of a plain
// read of the same bytes.
template <class T, class Keys>
constexpr bool chunk_staged = Keys::chunks && !keys_staged<Keys> && chunk_capable<T>;

// Sorted ids whose values and ids both fit 16-byte chunks whole: each
// thread's rows and their ids are staged in chunks (chunk_layout) and read
// back a group of rows at a time (one shared load of values and one of ids
// for four fp32 rows with int32 ids), where a row cost a load of its value
// and one of its id.
template <class T, class I, class Keys>
constexpr bool ids_chunked = Keys::loaded && chunk_capable<T> && (sizeof(I) == 4 || sizeof(I) == 8);

template <class T, class I, class Keys>
constexpr int tile_items_for() {
    if constexpr (chunk_staged<T, Keys>) return static_cast<int>(128 / sizeof(T));
    return sizeof(T) + (keys_staged<Keys> ? sizeof(I) : 0) <= 8 ? 16 : 8;
}

// Where element i of thread u's rows sits in a chunked stage, in bytes.
// 16-byte shared loads are served 8 threads at a time; laid out plainly,
// those 8 threads' chunk j would share banks wherever a thread's rows span
// more than one chunk, so thread u keeps its chunk j at place j ^ swizzle(u)
// of its own bytes: 8 consecutive threads' chunk j then cover 8 different
// 16-byte bank groups (with 8 chunks a thread the swizzle is u % 8; with 4,
// 64 bytes a thread, threads u and u + 2 take the same half of the banks,
// so the swizzle is (u / 2) % 4). The
// copies, 8 consecutive chunks of the tile at a time, permute within one
// 128-byte line, so they stay free of conflicts too.
template <class T, int Items>
struct chunk_layout {
    static constexpr int elems = static_cast<int>(16 / sizeof(T));  // values a chunk
    static constexpr int chunks = Items / elems;
    static_assert(Items % elems == 0 && (chunks == 1 || chunks == 2 || chunks == 4 || chunks == 8),
                  "a thread's rows are 1, 2, 4 or 8 whole chunks");
    __device__ static int swizzle(int u) { return static_cast<int>((unsigned(u) * chunks / 8) % chunks); }
    // Where a thread whose swizzle is s keeps its chunk j, and its element
    // i, in bytes from the start of its own: chunk j at place j ^ s, so
    // element i (elems a chunk, a power of two) at i ^ s * elems.
    __device__ static unsigned chunk_place(int s, int j) { return static_cast<unsigned>((j ^ s) * 16); }
    __device__ static unsigned place(int s, int i) { return static_cast<unsigned>((i ^ s * elems) * sizeof(T)); }
    // The same from the start of the stage, for thread u.
    __device__ static unsigned chunk_offset(int u, int j) {
        return static_cast<unsigned>(u * chunks * 16) + chunk_place(swizzle(u), j);
    }
    __device__ static unsigned offset(int u, int i) {
        return static_cast<unsigned>(u * chunks * 16) + place(swizzle(u), i);
    }
};

// Where element i of thread u's rows sits in a stage's array of X, in
// bytes: chunked, or after a padding slot a thread.
template <class X, int Items, bool Chunked>
__device__ __forceinline__ unsigned stage_offset(int u, int i) {
    if constexpr (Chunked) return chunk_layout<X, Items>::offset(u, i);
    return static_cast<unsigned>((u * (Items + 1) + i) * sizeof(X));
}

// One thread's stretch of runs in the block-wide scan: its last run's state,
// and in one word that run's rows (within one tile, so below 2^31) and
// whether it began inside the thread (the top bit). For a float state the
// part is 8 bytes: two words to shuffle at each step of the scan. With the
// flag as a separate bool (12 bytes), the compiler packed and unpacked its
// byte at every step; the scan was about 17 of the 54 instructions a row
// that sorted ids cost (ncu's per-instruction counts, H100).
template <class S>
struct run_part {
    static constexpr unsigned reset_bit = 1u << 31;
    S st;
    unsigned tag;
    __device__ int rows() const { return static_cast<int>(tag & ~reset_bit); }
    __device__ bool reset() const { return (tag & reset_bit) != 0; }
};

template <class S>
__device__ run_part<S> make_run_part(const S& st, int rows, bool reset) {
    return run_part<S>{st, static_cast<unsigned>(rows) | (reset ? run_part<S>::reset_bit : 0u)};
}

template <class R>
struct join_runs {
    R r;
    template <class S>
    __device__ run_part<S> operator()(const run_part<S>& a, const run_part<S>& b) const {
        if (b.reset()) return b;
        run_part<S> c = a;
        r.combine(c.st, b.st);
        c.tag = a.tag + b.tag;  // b's flag is clear: a's flag, rows added
        return c;
    }
};

inline namespace SEGRED_ABI_NS {

// Ranges of empty segments too long for the thread that finds them to
// write one by one (a few ids spread over a large M, or all rows on one id):
// appended here, then written by fill_gaps_kernel, a block per range.
struct gap_list {
    std::int64_t* ranges;  // [2 * capacity]: first, past-last segment
    unsigned long long* count;
};

// Gaps of more than this many empty segments go to the gap list.
constexpr std::int64_t tile_gap_inline = 64;

// Every long gap holds more than tile_gap_inline segments and gaps are
// disjoint; each lies between two keys of consecutive rows, or before the
// first row or after the last.
inline std::int64_t gap_capacity(std::int64_t n, std::int64_t M) {
    return std::min(M / (tile_gap_inline + 1) + 1, n + 2);
}

// Segment s has no rows: its empty value (identity, fill or NaN by options).
template <class T, class O, class R>
__device__ void write_empty_segment(const R& r, const options& opts, const rows_view<O>& out, std::int64_t s) {
    using S = state_t<R, T>;
    write_segment<T>(r, opts, out, s, 0, S(r.template init<T>()), 0);
}

// The empty segments between keys `after` and `before`, clamped to [0, M):
// segments [first, end), none where before <= after + 1.
struct segment_span {
    std::int64_t first, end;
};

__device__ __forceinline__ segment_span segments_between(std::int64_t after, std::int64_t before, std::int64_t M) {
    if (before <= after) return {0, 0};  // so after + 1 cannot overflow
    return {after + 1 > 0 ? after + 1 : 0, before < M ? before : M};
}

// Writes the span's empty segments, or hands spans of more than
// tile_gap_inline segments to the gap list.
template <class T, class O, class R>
__device__ void write_empty_span(const R& r, const options& opts, const rows_view<O>& out, segment_span span,
                                 const gap_list& gaps) {
    if (span.end - span.first > tile_gap_inline) {
        const unsigned long long g = atomicAdd(gaps.count, 1ull);
        gaps.ranges[2 * g] = span.first;
        gaps.ranges[2 * g + 1] = span.end;
        return;
    }
    for (std::int64_t s = span.first; s < span.end; ++s) write_empty_segment<T>(r, opts, out, s);
}

template <class T, class O, class R>
__device__ void write_empty_range(const R& r, const options& opts, const rows_view<O>& out, std::int64_t M,
                                  std::int64_t after, std::int64_t before, const gap_list& gaps) {
    write_empty_span<T>(r, opts, out, segments_between(after, before, M), gaps);
}

// A warp's items laid end to end, `mine` of them from each lane: the count
// of this lane's and the lanes' before it. Called by every lane.
__device__ __forceinline__ int warp_items_through(int mine) {
    int incl = mine;
    for (int d = 1; d < 32; d *= 2) {
        const int x = __shfl_up_sync(0xffffffffu, incl, d);
        if (threadIdx.x % 32 >= unsigned(d)) incl += x;
    }
    return incl;
}

// The lane holding item q of those items (incl from warp_items_through):
// the first whose count through it exceeds q; 31 where none does. Called by
// every lane.
__device__ __forceinline__ int warp_item_owner(int incl, int q) {
    int o = 0;
    for (int step = 16; step > 0; step /= 2)
        if (__shfl_sync(0xffffffffu, incl, o + step - 1) <= q) o += step;
    return o;
}

// Gaps of at most this many empty segments are written by their own lane:
// the scans that lay the gaps end to end cost more than two stores.
constexpr std::int64_t warp_gap_min = 2;

// The empty segments between keys `after` and `before`, a gap from each
// lane (none where before <= after + 1), written by the warp's lanes
// together: the gaps laid end to end, lane l writes their l-th, (l + 32)-th,
// .. segment. Sorted keys put a warp's gaps near each other, so one store
// covers consecutive outputs, where lanes that each wrote their own gap a
// segment at a time made a store touch a sector for each lane, and the warp
// waited for its longest gap. Gaps of more than tile_gap_inline segments go
// to the gap list, gaps of at most warp_gap_min are written by their lane.
// Called by every lane of the warp.
template <class T, class O, class R>
__device__ void write_gaps_by_warp(const R& r, const options& opts, const rows_view<O>& out, std::int64_t M,
                                   std::int64_t after, std::int64_t before, const gap_list& gaps) {
    // Most calls meet no gap the warp would take (segments of a few rows
    // have none): one vote, and each lane writes its own gap, if any. The
    // keys lie in [-1, M] on every path that checks its ids (drop sorts them
    // first), but their distance is taken unsigned, and only where before >
    // after, so that no 64-bit key can overflow a signed difference here.
    const std::uint64_t apart = before > after ? std::uint64_t(before) - std::uint64_t(after) : 0;
    constexpr std::uint64_t warp_apart_min = warp_gap_min + 2, warp_apart_max = tile_gap_inline + 1;
    if (!__any_sync(0xffffffffu, apart >= warp_apart_min && apart <= warp_apart_max)) {
        // Adjacent keys, the common case, skip the clamp with one compare.
        if (apart > 1) write_empty_range<T>(r, opts, out, M, after, before, gaps);
        return;
    }
    const segment_span span = segments_between(after, before, M);
    const std::int64_t len = span.end - span.first;
    int mine = 0;
    if (len > warp_gap_min && len <= tile_gap_inline) {
        mine = static_cast<int>(len);
    } else {
        write_empty_span<T>(r, opts, out, span, gaps);
    }
    if (!__any_sync(0xffffffffu, mine > 0)) return;
    const int incl = warp_items_through(mine);
    const int total = __shfl_sync(0xffffffffu, incl, 31);
    const std::int64_t first = span.first - (incl - mine);  // segment first + q is this lane's gap's item q
    for (int base = 0; base < total; base += 32) {
        const int q = base + static_cast<int>(threadIdx.x % 32);
        const std::int64_t s = __shfl_sync(0xffffffffu, first, warp_item_owner(incl, q)) + q;
        if (q < total) write_empty_segment<T>(r, opts, out, s);
    }
}

template <class T, class O, class R>
SEGRED_KERNEL void __launch_bounds__(block_threads)
    fill_gaps_kernel(rows_view<O> out, R r, options opts, gap_list gaps) {
    const unsigned long long count = *gaps.count;
    for (unsigned long long g = blockIdx.x; g < count; g += gridDim.x) {
        const std::int64_t s1 = gaps.ranges[2 * g + 1];
        for (std::int64_t s = gaps.ranges[2 * g] + threadIdx.x; s < s1; s += block_threads)
            write_empty_segment<T>(r, opts, out, s);
    }
}

// Shared-memory slot of tile element e: one padding slot per Items elements,
// so a thread walking its consecutive rows and its neighbours walking theirs
// hit different banks.
template <int Items>
__device__ __forceinline__ int tile_slot(int e) {
    return static_cast<int>(unsigned(e) + unsigned(e) / Items);  // e >= 0: a shift, with no sign fix-up
}

// Key of row `row` from scratch (sorted ids read, or computed).
template <class Keys>
__device__ std::int64_t key_at(Keys keys, std::int64_t row) {
    if constexpr (Keys::loaded) {
        return static_cast<std::int64_t>(keys.ids[row]);
    } else {
        return keys.first(row);
    }
}

// The tile's values (and loaded keys) are staged in shared memory, then each
// thread walks its own consecutive rows there in a rolled loop. Blocks are
// persistent and keep two stages: while a block folds one tile, the copies of
// its next tile are already in flight (cp.async for 4- to 16-byte types, so
// the data in flight takes no registers).
template <class T, class I, class Keys>
struct alignas(16) tile_stage {  // 16: the second stage's chunks stay aligned
    static constexpr int items = tile_items_for<T, I, Keys>();
    // A padding slot a thread; none for chunked stages, but for computed
    // keys one thread's rows more, which the fold's last read ahead may
    // touch.
    static constexpr int slots = chunk_staged<T, Keys>         ? (tile_threads + 1) * items
                                 : ids_chunked<T, I, Keys> ? tile_threads * items
                                                           : tile_threads * (items + 1);
    // Chunked sorted ids of 2-byte values (fp16, bf16), whose sums and
    // extrema are kept in float: a run parked in the stage (the fold's
    // closes_staged) leaves the low half of its state in the value's slot
    // and the high half in an array of 16-bit slots laid out as the values,
    // after the ids (at `high_at`; in `keys`' tail, so that other stages
    // keep their size). The stage then takes 8 bytes a row with int32 ids,
    // as fp32 values do.
    static constexpr bool split_parks = ids_chunked<T, I, Keys> && sizeof(T) == 2;
    static constexpr int high_keys = split_parks ? static_cast<int>(slots * 2 / sizeof(I)) : 0;
    // Derived labels' padding (label_stride): Items + 1 rows, for the
    // fold's read ahead.
    static constexpr int label_padding = Keys::derived ? (items + 1) * (label_stride<items> - tile_threads) : 0;
    T values[slots];
    I keys[keys_staged<Keys> ? slots + high_keys + label_padding : 1];
    static constexpr std::size_t high_at = slots * (sizeof(T) + sizeof(I));
};

// Element of a stage at shared address a (ordered by the volatile asm, like
// the barriers around it).
template <class X>
__device__ __forceinline__ X load_shared(unsigned a) {
    X x;
    if constexpr (sizeof(X) == 4) {
        unsigned w;
        asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(w) : "r"(a));
        memcpy(&x, &w, 4);
    } else if constexpr (sizeof(X) == 8) {
        unsigned long long w;
        asm volatile("ld.shared.b64 %0, [%1];\n" : "=l"(w) : "r"(a));
        memcpy(&x, &w, 8);
    } else if constexpr (sizeof(X) == 2) {
        unsigned short w;
        asm volatile("ld.shared.b16 %0, [%1];\n" : "=h"(w) : "r"(a));
        memcpy(&x, &w, 2);
    } else if constexpr (sizeof(X) == 1) {
        unsigned w;
        asm volatile("ld.shared.u8 %0, [%1];\n" : "=r"(w) : "r"(a));
        const unsigned char b = static_cast<unsigned char>(w);
        memcpy(&x, &b, 1);
    } else {
        x = *static_cast<const X*>(__cvta_shared_to_generic(a));
    }
    return x;
}

// Store x, 2, 4 or 8 bytes, at shared address a where `store` holds: a
// predicated store, so a fold's loop takes no branch for it (ordered like
// load_shared).
template <class X>
__device__ __forceinline__ void store_shared_if(bool store, unsigned a, const X& x) {
    static_assert(sizeof(X) == 2 || sizeof(X) == 4 || sizeof(X) == 8, "a 2-, 4- or 8-byte element");
    if constexpr (sizeof(X) == 2) {
        unsigned short w;
        memcpy(&w, &x, 2);
        asm volatile("{\n .reg .pred p;\n setp.ne.u32 p, %2, 0;\n @p st.shared.b16 [%0], %1;\n}\n" ::"r"(a),
                     "h"(w), "r"(unsigned(store))
                     : "memory");
    } else if constexpr (sizeof(X) == 4) {
        unsigned w;
        memcpy(&w, &x, 4);
        asm volatile("{\n .reg .pred p;\n setp.ne.u32 p, %2, 0;\n @p st.shared.b32 [%0], %1;\n}\n" ::"r"(a),
                     "r"(w), "r"(unsigned(store))
                     : "memory");
    } else {
        unsigned long long w;
        memcpy(&w, &x, 8);
        asm volatile("{\n .reg .pred p;\n setp.ne.u32 p, %2, 0;\n @p st.shared.b64 [%0], %1;\n}\n" ::"r"(a),
                     "l"(w), "r"(unsigned(store))
                     : "memory");
    }
}

// A run's state S parked where values T are staged: in the value's slot at
// a when the state is a value's size; split in two 16-bit halves where it
// is twice a 2-byte value's (tile_stage::split_parks), the high half
// `high` bytes past a. Predicated like store_shared_if.
template <class S, class T>
constexpr bool parks_in_stage = sizeof(S) == sizeof(T) || (sizeof(T) == 2 && sizeof(S) == 4);

template <class S, class T>
__device__ __forceinline__ void park_state_if(bool park, unsigned a, unsigned high, const S& s) {
    static_assert(parks_in_stage<S, T>, "a state of one value, or of two 2-byte values");
    if constexpr (sizeof(S) == sizeof(T)) {
        store_shared_if<S>(park, a, s);
    } else {
        unsigned w;
        memcpy(&w, &s, 4);
        store_shared_if<std::uint16_t>(park, a, static_cast<std::uint16_t>(w));
        store_shared_if<std::uint16_t>(park, a + high, static_cast<std::uint16_t>(w >> 16));
    }
}

template <class S, class T>
__device__ __forceinline__ S parked_state(unsigned a, unsigned high) {
    if constexpr (sizeof(S) == sizeof(T)) {
        return load_shared<S>(a);
    } else {
        const unsigned w =
            unsigned(load_shared<std::uint16_t>(a)) | unsigned(load_shared<std::uint16_t>(a + high)) << 16;
        S s;
        memcpy(&s, &w, 4);
        return s;
    }
}

// A 16-byte chunk of a stage at shared address a (16-byte aligned).
template <class T>
__device__ __forceinline__ row_vector<static_cast<int>(16 / sizeof(T)), T> load_shared_chunk(unsigned a) {
    unsigned w[4];
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                 : "r"(a));
    row_vector<static_cast<int>(16 / sizeof(T)), T> x;
    memcpy(&x, w, 16);
    return x;
}

// A group of G consecutive rows of one thread in a chunked stage of sorted
// ids (ids_chunked): their values v and ids k, read by 16-byte loads from
// the thread's chunks (values at vals_at, ids at ids_at, each the start of
// the thread's bytes; chunks in swizzled order).
template <class T, class I, int G, int Items>
struct staged_group {
    static constexpr int value_chunks = static_cast<int>(G * sizeof(T) / 16);
    static constexpr int id_chunks = static_cast<int>(G * sizeof(I) / 16);
    static_assert(value_chunks >= 1 && id_chunks >= 1 && Items % G == 0, "a group is whole chunks of both");
    struct rows {
        T v[G];
        I k[G];
    };
    unsigned vals_at, ids_at;
    int vals_swizzle, ids_swizzle;
    __device__ staged_group(unsigned v, unsigned k, int u)
        : vals_at(v), ids_at(k), vals_swizzle(chunk_layout<T, Items>::swizzle(u)),
          ids_swizzle(chunk_layout<I, Items>::swizzle(u)) {}
    // Where the thread's element i lies: value, id.
    __device__ unsigned value_at(int i) const { return vals_at + chunk_layout<T, Items>::place(vals_swizzle, i); }
    __device__ unsigned id_at(int i) const { return ids_at + chunk_layout<I, Items>::place(ids_swizzle, i); }
    __device__ rows load(int j) const {
        rows x;
#pragma unroll
        for (int c = 0; c < value_chunks; ++c) {
            const auto w = load_shared_chunk<T>(vals_at + chunk_layout<T, Items>::chunk_place(vals_swizzle, j * value_chunks + c));
            memcpy(x.v + c * (16 / sizeof(T)), &w, 16);
        }
#pragma unroll
        for (int c = 0; c < id_chunks; ++c) {
            const auto w = load_shared_chunk<I>(ids_at + chunk_layout<I, Items>::chunk_place(ids_swizzle, j * id_chunks + c));
            memcpy(x.k + c * (16 / sizeof(I)), &w, 16);
        }
        return x;
    }
};

// Start copying a chunked tile (chunk_staged, ids_chunked) of `valid` rows
// from lo into the stage at shared address at. A full tile copies chunk by
// chunk, a warp's copies consecutive in memory, where the rows start 16-byte
// aligned (computed keys: always, the host sends others to tiles of rows,
// reduce_computed_keys); the last tile, and sorted ids or their values off
// 16 bytes, row by row into the same places.
template <class T, int Items>
__device__ void stage_tile_chunks(unsigned at, const T* values, std::int64_t lo, int valid, bool aligned = true) {
    using layout = chunk_layout<T, Items>;
    const int t = threadIdx.x;
    if (valid == Items * tile_threads && aligned) {
#pragma unroll
        for (int k = 0; k < layout::chunks; ++k) {
            const int c = k * tile_threads + t;  // the tile's chunk c is thread c / chunks's chunk c % chunks
            copy_chunk_async(at + layout::chunk_offset(c / layout::chunks, c % layout::chunks),
                             values + lo + std::int64_t(c) * layout::elems);
        }
        return;
    }
    // Row t + 256 j is element t % Items of thread t / Items + j * 256 /
    // Items. Where the swizzle repeats every 256 / Items threads, that lies
    // 256 j rows after row t in the stage too, and a full tile copies with no
    // check between the copies (unaligned sorted ids: with the place worked
    // out and checked row by row they ran at 0.89x the layout before chunks).
    constexpr bool repeats = (2 * sizeof(T)) % layout::chunks == 0;  // the swizzle, every 256 / Items threads
    const unsigned dst0 = at + layout::offset(t / Items, t % Items);
    auto copy_row = [&](int j) {
        const int e = j * tile_threads + t;
        const unsigned dst =
            repeats ? dst0 + unsigned(j * tile_threads * sizeof(T)) : at + layout::offset(e / Items, e % Items);
        if constexpr (sizeof(T) == 2) {
            *static_cast<T*>(__cvta_shared_to_generic(dst)) = values[lo + e];
        } else {
            copy_async<sizeof(T)>(dst, values + lo + e);
        }
    };
    if (valid == Items * tile_threads) {
#pragma unroll
        for (int j = 0; j < Items; ++j) copy_row(j);
        return;
    }
    // The last tile. 2-byte values go through registers (cp.async moves 4
    // bytes or more): unrolled, the 64 rows of a chunked tile's thread
    // spilled about 600 bytes a thread; rolled, none (fp16 offsets of 1024
    // rows 1.27x, H200).
    if constexpr (sizeof(T) == 2) {
#pragma unroll 1
        for (int j = 0; j < Items; ++j) {
            if (j * tile_threads + t >= valid) break;
            copy_row(j);
        }
    } else {
#pragma unroll
        for (int j = 0; j < Items; ++j) {
            if (j * tile_threads + t >= valid) break;
            copy_row(j);
        }
    }
}

// Start copying tile `tile`'s rows into st, the stage at shared address
// at (every thread its rows t, t + 256, ...). Types cp.async cannot move go
// through registers, synchronously.
template <class T, class I, class Keys>
__device__ void stage_tile(tile_stage<T, I, Keys>& st, unsigned at, const T* values, Keys keys, std::int64_t lo,
                           int valid) {
    using stage_t = tile_stage<T, I, Keys>;
    constexpr int items = stage_t::items;
    if constexpr (chunk_staged<T, Keys>) {
        stage_tile_chunks<T, items>(at, values, lo, valid);
        __pipeline_commit();
        return;
    } else if constexpr (ids_chunked<T, I, Keys>) {
        const auto address = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
        const bool aligned = ((address(values) | address(keys.ids)) & 15) == 0;
        stage_tile_chunks<T, items>(at, values, lo, valid, aligned);
        stage_tile_chunks<I, items>(at + unsigned(offsetof(stage_t, keys)), keys.ids, lo, valid, aligned);
        __pipeline_commit();
        return;
    }
    // Row t + 256 j sits tile_threads + tile_threads / items slots after row t.
    constexpr int step = tile_threads + tile_threads / items;
    const int t = threadIdx.x;
    const unsigned v0 = at + static_cast<unsigned>(tile_slot<items>(t) * sizeof(T));
    const unsigned k0 = at + static_cast<unsigned>(offsetof(stage_t, keys) + tile_slot<items>(t) * sizeof(I));
    const T* vsrc = values + lo + t;
    const I* ksrc = nullptr;
    if constexpr (Keys::loaded) ksrc = keys.ids + lo + t;
    constexpr bool keys_async = !Keys::loaded || async_copyable<I>;
    auto copy_row = [&](int j) {
        if constexpr (async_copyable<T>) {
            copy_async<sizeof(T)>(v0 + j * step * sizeof(T), vsrc + j * tile_threads);
        } else {
            st.values[tile_slot<items>(j * tile_threads + t)] = vsrc[j * tile_threads];
        }
        if constexpr (Keys::loaded) {
            if constexpr (async_copyable<I>) {
                copy_async<sizeof(I)>(k0 + j * step * sizeof(I), ksrc + j * tile_threads);
            } else {
                st.keys[tile_slot<items>(j * tile_threads + t)] = ksrc[j * tile_threads];
            }
        }
    };
    if (async_copyable<T> && keys_async) {
        // A full tile (all but the last) copies with no check between the
        // copies; in the last, rows past the input end this thread's copies.
        if (valid == items * tile_threads) {
#pragma unroll
            for (int j = 0; j < items; ++j) copy_row(j);
        } else {
#pragma unroll
            for (int j = 0; j < items; ++j) {
                if (j * tile_threads + t >= valid) break;
                copy_row(j);
            }
        }
    } else if (valid == items * tile_threads) {
        // Copies through registers, of a full tile (all but the last): every
        // load is issued before the first store, with no check between.
#pragma unroll
        for (int j = 0; j < items; ++j) copy_row(j);
    } else {
#pragma unroll
        for (int j = 0; j < items; ++j)
            if (j * tile_threads + t < valid) copy_row(j);
    }
    __pipeline_commit();
}

// Where thread u's row j keeps its label (derived keys), in elements of the
// stage's key slots: row j of every thread together, so that a warp reading
// its rows j reads 64 consecutive bytes, one row's labels label_stride
// slots from the next's. Laid out a thread's rows together, as values are,
// a thread's 17 two-byte slots put threads u and u + 15 in the same bank
// (H200: offsets of 16 rows ran 0.91-0.94x as fast as with int keys).
template <int Items>
__device__ __forceinline__ int label_slot(int u, int j) {
    return j * label_stride<Items> + u;
}

// A tile's labels (derived keys) as the fold reads and derive_tile_keys
// writes them: narrow, 16 bits at `at`; wide, the low half there and the
// high half `high` bytes on, in the other stage's key slots (free while this
// tile is folded: the next tile's copies fill only its values). Labels are
// 0 or more; -1 (both halves all ones) is no label.
template <bool Wide>
struct tile_labels {
    unsigned at, high;
    __device__ int load(int slot) const {
        const unsigned a = at + unsigned(slot) * unsigned(sizeof(derived_label));
        if constexpr (Wide) {
            return int(unsigned(load_shared<std::uint16_t>(a)) | unsigned(load_shared<std::uint16_t>(a + high)) << 16);
        } else {
            return load_shared<derived_label>(a);
        }
    }
    __device__ void store(int slot, int label) const {
        const unsigned a = at + unsigned(slot) * unsigned(sizeof(derived_label));
        store_shared_if<std::uint16_t>(true, a, static_cast<std::uint16_t>(unsigned(label)));
        if constexpr (Wide) store_shared_if<std::uint16_t>(true, a + high, static_cast<std::uint16_t>(unsigned(label) >> 16));
    }
};

// Starts that derive_tile_keys has in flight a thread: it loads a batch of
// segments' starts (and the starts after them) before it tests any, so a
// thread waits on global memory once a batch, not once a segment (one-row
// segments from int32 offsets on an H200: 1.28x against one at a time; 8 a
// batch spilled registers where starts are 64-bit, and ran no faster where
// they are 32-bit).
constexpr int derive_batch = 4;

// Derived keys (start_keys): the labels of the tile's `valid` rows from lo,
// each row's key less k0 (tile_labels), segments k0 and k1 holding its
// first and last rows. The first row of each non-empty segment in (k0, k1]
// is marked with its label; each thread finds the last mark in its own
// rows, a block-wide max-scan gives each thread the label its first row
// continues (0: k0's), and the thread fills its rows forward. The empty
// segments in (k0, k1), which the same pass over the starts finds, are
// written here by write_empty(s): a thread a segment, so a warp's writes are
// consecutive, where the fold's threads would each write the gaps they see
// one by one (the fold leaves them: derived_gap). The starts come from
// `staged` where the tile's were staged (stage_segment_starts; the low
// halves of segments k0 + 1 .. k1's, in slots 1 .. k1 - k0), else from the
// device memory. Called by the whole block.
template <int Items, bool Wide, class Keys, class ScanTemp, class WriteEmpty>
__device__ void derive_tile_keys(const tile_labels<Wide>& labels, Keys keys, const int* staged, std::int64_t lo,
                                 int valid, std::int64_t k0, std::int64_t k1, ScanTemp& scan_temp,
                                 WriteEmpty write_empty) {
    const int t = threadIdx.x;
    const int left = valid - t * Items;
    const int count = left < 0 ? 0 : left < Items ? left : Items;
    for (int j = 0; j < count; ++j) labels.store(label_slot<Items>(t, j), -1);
    __syncthreads();
    // Segment k0 + j (j in [1, span]) begins at row e of the tile, and
    // has rows where the next begins after it (the next past k1: after
    // the tile) or where it is key M (the rows past the last start).
    auto mark = [&](int j, int e) {
        const int u = static_cast<int>(static_cast<unsigned>(e) / Items);  // e >= 0
        labels.store(label_slot<Items>(u, e - u * Items), j);
    };
    const int span = static_cast<int>(k1 - k0);
    if (staged != nullptr) {
        const unsigned lo32 = static_cast<unsigned>(lo);
        auto row_of = [&](int j) { return static_cast<int>(static_cast<unsigned>(staged[j]) - lo32); };
        for (int j = 1 + t; j <= span; j += tile_threads) {
            // In [1, valid): the segment begins inside the tile. Tested all
            // the same, as in the loop over the device memory below, so that
            // starts out of order (`unchecked`) write no label past the stage.
            const int e = row_of(j);
            if (k0 + j == keys.M || (j == span ? valid : row_of(j + 1)) > e) {
                if (static_cast<unsigned>(e) < static_cast<unsigned>(valid)) mark(j, e);
            } else {
                write_empty(k0 + j);  // j < span: the last row's segment has rows
            }
        }
    }
    using J = typename Keys::start_type;  // held as loaded: 32-bit starts take half the registers
    for (std::int64_t s0 = k0 + 1 + t; staged == nullptr && s0 <= k1; s0 += derive_batch * tile_threads) {
        J b[derive_batch], b_next[derive_batch];
#pragma unroll
        for (int i = 0; i < derive_batch; ++i) {
            const std::int64_t s = s0 + i * tile_threads;
            b[i] = s <= k1 ? keys.starts[s] : J(0);
            b_next[i] = s <= k1 && s < keys.M ? keys.starts[s + 1] : J(0);
        }
#pragma unroll
        for (int i = 0; i < derive_batch; ++i) {
            const std::int64_t s = s0 + i * tile_threads;
            if (s > k1) break;
            if (s == keys.M || b_next[i] > b[i]) {
                const std::int64_t e = std::int64_t(b[i]) - lo;
                if (e >= 0 && e < valid) mark(static_cast<int>(s - k0), static_cast<int>(e));
            } else {
                write_empty(s);  // s < k1: the last row's segment has rows
            }
        }
    }
    __syncthreads();
    int last = -1;  // marks rise with the row, so the last is the largest
    for (int j = 0; j < count; ++j) {
        const int mark = labels.load(label_slot<Items>(t, j));
        last = mark > last ? mark : last;
    }
    int cur;
    tile_block_scan<int>(scan_temp).ExclusiveScan(last, cur, 0, max_of{});
    for (int j = 0; j < count; ++j) {
        const int mark = labels.load(label_slot<Items>(t, j));
        cur = mark >= 0 ? mark : cur;
        if (mark < 0) labels.store(label_slot<Items>(t, j), cur);
    }
}

// Whether the starts of segments k0 .. k0 + Items * tile_threads are lo,
// lo + 1, ..: a full tile of one-row segments, none empty, the first
// beginning at the tile's first row and the last ending at its last. Each
// thread tests Items starts, all loaded before any is compared (and thread
// 0 the one past the tile). Called by the whole block; the same answer for
// every thread.
template <int Items, class Keys>
__device__ bool starts_one_row_apart(Keys keys, std::int64_t lo, std::int64_t k0) {
    using J = typename Keys::start_type;
    const int t = threadIdx.x;
    const J* at = keys.starts + k0;
    bool apart = t > 0 || std::int64_t(at[Items * tile_threads]) == lo + Items * tile_threads;
#pragma unroll
    for (int i = 0; i < Items; ++i) apart &= std::int64_t(at[t + i * tile_threads]) == lo + t + i * tile_threads;
    return __syncthreads_and(apart) != 0;
}

// Whether key k names a segment: keys -1 and M mark rows before the first
// start and past the last.
__device__ __forceinline__ bool key_in_range(std::int64_t k, std::int64_t M) { return k >= 0 && k < M; }

// Derived keys of many short segments: a tile whose rows hold at least this
// many segment starts (16 rows a segment or fewer, empty ones counted) but
// no more than half a start a row (one-row segments take the coalesced
// one-row path of the row-by-row fold: 1.1x faster), and whose non-empty
// segments average at most segment_tile_max_rows rows, is folded a thread
// a segment (fold_tile_segments) instead of a thread a run of rows;
// segments of more than segment_thread_max_rows rows in it go to a warp
// each. Measured on an H200 (fp32 sums over offsets, against the row-by-row
// fold): 2-row segments 1.59x, 4-row 1.54x, uniform 0..8 rows 1.60x, 0..16
// 1.72x, Pareto lengths 1.21x, 90% empty segments of 1..64 rows 1.05x (most
// tiles left to the row-by-row fold), uniform 0..32 1.00x. With every such
// tile folded a thread a segment, the 90% empty ones ran 0.73x (non-empty
// segments averaging 32 rows: lanes wait on the one with the most rows).
constexpr std::int64_t segment_tile_min_span = tile_threads;
constexpr std::int64_t segment_tile_max_rows = 12;
constexpr int segment_thread_max_rows = 32;

// A stage's key slots (which a tile folded a thread a segment leaves
// unused) hold the segment starts of the tile in the other stage, then the
// count and list of its long segments.
template <class T, class Keys>
constexpr std::int64_t segment_tile_max_span =
    tile_threads * tile_stage<T, derived_label, Keys>::items / 2;  // half a start a row
// Whether a tile whose keys are k0 .. k0 + span may be folded a thread a
// segment (fold_tile_segments); its starts are then staged with its rows.
template <class T, class Keys>
__device__ __forceinline__ bool segment_tile_span(std::int64_t span) {
    return span >= segment_tile_min_span && span <= segment_tile_max_span<T, Keys>;
}

// Start copying the starts of segments k0 + 1 .. k0 + span (a tile that
// segment_tile_span accepts) into the stage's key slots at `at`, as the low
// 32 bits of each: slot j holds segment k0 + j's. Each of those segments
// begins inside the tile (after its first row, at or before its last), so
// the low halves less the tile's first row's are the offsets in the tile.
// In the fold they were read start by start, a dependent load of the
// device memory each, with the stage waited for before (ncu, H200, 4-row
// segments: the two passes over the starts 37% of the stall samples).
template <class Keys>
__device__ void stage_segment_starts(unsigned at, Keys keys, std::int64_t k0, int span) {
    for (int j = 1 + static_cast<int>(threadIdx.x); j <= span; j += tile_threads)
        copy_async<4>(at + unsigned(j * sizeof(int)), keys.starts + (k0 + j));  // little-endian: the low half first
    __pipeline_commit();
}

template <class T, class Keys>
constexpr bool segment_tile_fits =
    tile_stage<T, derived_label, Keys>::slots * sizeof(derived_label) >=
    sizeof(int) * (segment_tile_max_span<T, Keys> + 3 +
                   tile_threads * tile_stage<T, derived_label, Keys>::items / (segment_thread_max_rows + 1));

// Fold a staged tile [lo, hi) segment by segment, where that pays: thread t
// takes segments k0 + t, k0 + t + 256, .. of the tile's keys [k0, k1],
// folds its rows from the stage in order and writes it; consecutive threads
// write consecutive segments, empty ones included. The row-by-row fold has
// each lane close its runs at its own rows, and a warp runs that close once
// for every row at which one of its lanes does (one lane a close on random
// segment lengths, ncu); here a warp's lanes close together. The starts of
// the tile's segments are in `scratch` (the other stage's key slots),
// staged with its rows by stage_segment_starts: slot j the low half of
// segment k0 + j's start for j in [1, span]. Segments longer than
// segment_thread_max_rows rows in the tile are folded by a warp each: lane l
// takes the l-th 32nd of the rows, and a fixed tree combines the lanes.
// Where a sample of the segments says the non-empty ones average more than
// segment_tile_max_rows rows, the tile is left to the row-by-row fold
// (returns false, the same for the whole block). Rows of k0 that began
// before the tile (before_key == k0) and rows of k1 that go on after it
// (after_key == k1) are partial: they go to the tile's carry as its head
// and tail, as in the row-by-row fold. Called by the whole block, for a
// tile that segment_tile_span accepts.
template <class T, class O, class R, class S, class Keys>
__device__ bool fold_tile_segments(unsigned vals_at, int* scratch, const R& r, const options& opts,
                                   const rows_view<O>& out, std::int64_t M, std::int64_t lo, std::int64_t hi,
                                   std::int64_t n, std::int64_t k0, std::int64_t k1, std::int64_t before_key,
                                   std::int64_t after_key, tile_carry<S>& carry, bool plain_writes,
                                   const gap_list& gaps) {
    constexpr int items = tile_stage<T, derived_label, Keys>::items;
    static_assert(segment_tile_fits<T, Keys>, "the starts and the long segments fit the stage's key slots");
    const int t = threadIdx.x, lane = t % 32;
    const int span = static_cast<int>(k1 - k0), rows = static_cast<int>(hi - lo);
    // Segment k0 + j's first row in the tile, j in [1, span + 1]: from its
    // staged start, but the tile's rows past the last (which may end after
    // the tile).
    const unsigned lo32 = static_cast<unsigned>(lo);
    auto first_row = [&](int j) {
        return j > span ? rows : static_cast<int>(static_cast<unsigned>(scratch[j]) - lo32);
    };
    // How many of the tile's segments have rows, from one segment a thread
    // spread over (k0, k1].
    {
        const int j = 1 + static_cast<int>(std::int64_t(t) * span / tile_threads);  // in [1, span]
        const bool filled = k0 + j < M && first_row(j + 1) > first_row(j);
        const std::int64_t sampled = __syncthreads_count(filled);
        if (sampled * span * segment_tile_max_rows < std::int64_t(tile_threads) * rows) return false;
    }
    // The first's and the one past the last's slots, for the loops below.
    int* listed = scratch + span + 2;  // the count of long segments, then their offsets from k0
    if (t == 0) {
        scratch[0] = static_cast<int>(lo32);
        scratch[span + 1] = static_cast<int>(lo32 + static_cast<unsigned>(rows));
        *listed = 0;
    }
    __syncthreads();
    auto row_at = [&](int j) { return static_cast<int>(static_cast<unsigned>(scratch[j]) - lo32); };

    const bool began_before = lo > 0 && before_key == k0 && key_in_range(k0, M);
    const bool goes_on = hi < n && after_key == k1 && key_in_range(k1, M);
    auto finish = [&](std::int64_t s, const S& st, std::int64_t count) {
        if (s == k0 && began_before) {  // and goes on too where k0 == k1: the tile passes
            carry.head = st;
            carry.head_rows = count;
        } else if (s == k1 && goes_on) {
            carry.tail = st;
            carry.tail_rows = count;
        } else {
            write_segment<T>(r, opts, out, s, 0, st, count);
        }
    };
    // Rolled: the compiler's four-row unrolling, with its remainder loop,
    // cost segments of 2 to 4 rows (H200: 2-row sums 0.96x, uniform 0..8
    // rows 0.94x).
    auto fold = [&](S& st, int b, int e) {
#pragma unroll 1
        for (int i = b; i < e; ++i)
            r.update(st, load_shared<T>(vals_at + unsigned(tile_slot<items>(i) * sizeof(T))), lo + i);
    };
    if (t == 0) {
        const bool passes = goes_on && began_before && k0 == k1;
        carry.passes = passes;
        carry.tail_key = goes_on && !passes ? k1 : -1;
        // Empty segments between the row before the tile and its first.
        if (k0 != before_key) write_empty_range<T>(r, opts, out, M, before_key, k0, gaps);
    }
    if (t == tile_threads - 1 && hi == n) write_empty_range<T>(r, opts, out, M, k1, M, gaps);
    // Segment k0 + j of at most segment_thread_max_rows rows, folded and
    // handed to `write` with its rows; a longer one is listed for a warp.
    auto fold_segment = [&](int j, auto&& write) {
        const int b = row_at(j), e = row_at(j + 1);
        if (e - b > segment_thread_max_rows) {
            listed[1 + atomicAdd(listed, 1)] = j;
            return;
        }
        S st = r.template init<T>();
        fold(st, b, e);
        write(k0 + j, st, e - b);
    };
    // The first and last segments: keys out of range (rows before the first
    // start or past the last) and the carry's head and tail.
    auto edge_segment = [&](int j) {
        if (key_in_range(k0 + j, M)) fold_segment(j, finish);
    };
    if (t == 0) edge_segment(0);
    if (span > 0 && t == span % tile_threads) edge_segment(span);
    // The inner segments, keys in range and rows all in the tile, in a loop
    // that tests none of that. Where a segment's result is one store
    // (plain_writes), the loop tests no option either: an empty segment
    // takes the fill worked out once. (Each write tested the options and
    // each segment the carry and its key's range, H200 SASS: about 95
    // instructions a 2-row segment.)
    auto inner_segments = [&](auto plain) {
        const int first = t == 0 ? tile_threads : t;
        if constexpr (decltype(plain)::value) {
            const O empty = segred::detail::empty_value<T, O>(r, opts);
            for (int j = first; j < span; j += tile_threads)
                fold_segment(j, [&](std::int64_t s, const S& st, int rows) {
                    out(s, 0) = rows == 0 ? empty : segred::detail::finalized<O>(r, st, [&] { return rows; });
                });
        } else {
            for (int j = first; j < span; j += tile_threads)
                fold_segment(j, [&](std::int64_t s, const S& st, int rows) {
                    write_segment<T>(r, opts, out, s, 0, st, rows);
                });
        }
    };
    if (plain_writes) {
        inner_segments(std::true_type{});
    } else {
        inner_segments(std::false_type{});
    }
    __syncthreads();
    const int long_count = *listed;
    for (int q = t / 32; q < long_count; q += tile_threads / 32) {
        const int j = listed[1 + q], b = row_at(j), e = row_at(j + 1);
        const int per = (e - b + 31) / 32, mb = b + lane * per;
        S st = r.template init<T>();
        fold(st, mb, mb + per < e ? mb + per : e);
        for (int w = 16; w > 0; w /= 2) {
            const S other = shuffle_down(st, w);
            if (lane < w) r.combine(st, other);
        }
        if (lane == 0) finish(k0 + j, st, e - b);
    }
    return true;
}

// Position of the n-th lowest set bit of m (n from 1 to popc(m)): a binary
// search on bit counts, with no branch.
__device__ __forceinline__ int nth_set_bit(unsigned m, int n) {
    int at = 0;
#pragma unroll
    for (int w = 16; w > 0; w /= 2) {
        const int low = __popc(m & ((1u << w) - 1));  // set bits in the lower w of what is left
        const bool above = low < n;
        n -= above ? low : 0;
        m = above ? m >> w : m;
        at += above ? w : 0;
    }
    return at;
}

// Runs that a warp's threads parked in a chunked stage of sorted ids (the
// fold's closes_staged): each lane's runs 1 .. closed - 1 (its run 0 goes
// through the block scan, its last is still open) and the empty segments
// before each, written by the warp's lanes in turn, run q of the warp by
// lane q % 32, so that a warp's stores are consecutive outputs. Each lane
// writing its own runs had a warp's store touch 32 sectors for 4 bytes of
// each (segments of 2 rows: 12% of the bytes written used, ncu). `high`:
// from a value's slot to the high half of a state split there
// (park_state_if). Called by every lane of the warp.
template <class T, class I, int Items, class O, class R>
__device__ void write_parked_runs(unsigned stage_at, unsigned keys_at, unsigned high, int closed, unsigned closes,
                                  const R& r, const options& opts, const rows_view<O>& out, std::int64_t M,
                                  bool plain_writes, const gap_list& gaps) {
    using S = state_t<R, T>;
    constexpr unsigned all = 0xffffffffu;
    // Most warps over long segments park no whole run: one vote, where the
    // scan below cost fp64 values (8 rows a thread) 4%.
    if (!__any_sync(all, closed > 1)) return;
    const int lane = threadIdx.x % 32, warp0 = threadIdx.x - lane;
    __syncwarp();  // the lanes' parked runs, visible to the whole warp
    const int mine = closed > 1 ? closed - 1 : 0;
    const int incl = warp_items_through(mine);  // this lane's runs and those of the lanes before it
    const int total = __shfl_sync(all, incl, 31);
    // One pass for each kind of write, so that the loop tests neither the
    // options nor the kind.
    auto write_all = [&](auto plain) {
        for (int base = 0; base < total; base += 32) {
            const int q = base + lane;
            const int o = warp_item_owner(incl, q);  // the lane holding run q
            const int first = __shfl_sync(all, incl - mine, o);
            unsigned owner_closes = 0;
            if constexpr (!decltype(plain)::value || segred::detail::divides_by_rows<R>)
                owner_closes = __shfl_sync(all, closes, o);
            if (q >= total) continue;
            const int c = q - first + 1, u = warp0 + o;  // the owner's run c
            const I id = load_shared<I>(keys_at + chunk_layout<I, Items>::offset(u, c)),
                    before = load_shared<I>(keys_at + chunk_layout<I, Items>::offset(u, c - 1));
            using U = std::make_unsigned_t<I>;  // sorted: id - before >= 0, in U without overflow
            if (static_cast<U>(static_cast<U>(id) - static_cast<U>(before)) > 1u)
                write_empty_range<T>(r, opts, out, M, before, id, gaps);
            const std::int64_t k = static_cast<std::int64_t>(id);
            if (!key_in_range(k, M)) continue;
            const S run = parked_state<S, T>(stage_at + chunk_layout<T, Items>::offset(u, c), high);
            // Its rows: from the c-th close to the next one, found by one
            // search of the mask and a find-first-set. (A search for each
            // end, with __fns, held fp32 means on Pareto lengths to 0.86x
            // of this, H200.)
            auto run_rows = [&] {
                const int begins = nth_set_bit(owner_closes, c);
                return __ffs(owner_closes & ~((2u << begins) - 1u)) - 1 - begins;
            };
            if constexpr (decltype(plain)::value) {
                out(k, 0) = segred::detail::finalized<O>(r, run, run_rows);
            } else {
                write_segment<T>(r, opts, out, k, 0, run, run_rows());
            }
        }
    };
    if (plain_writes) {
        write_all(std::true_type{});
    } else {
        write_all(std::false_type{});
    }
}

template <class T, class I, class Keys>
constexpr std::size_t tile_stage_bytes() {
    return 2 * sizeof(tile_stage<T, I, Keys>);
}

// Three blocks per SM, which the two stages' shared memory allows (3 x 75 KB
// for fp32 values and int32 ids, scan storage included): left to itself the
// compiler takes about 115 registers a thread and fits only two. Capped at
// 85 it spills a few hundred bytes to L1, but the third block's warps hide
// far more latency: 1.1-1.5x on an H100 against two blocks per SM (sorted
// ids 1.27x, offsets 1.13-1.47x).
// Derived keys' stages of 16-bit labels (derived_label) leave room for
// four, at 64 registers a thread, where the state is a value's size: the
// states of argmax and argmin (a value and a row) then spilled, and ran
// 0.64-0.85x as fast as three blocks an SM on segments of 2 to 8 rows (H200).
template <class Keys, class S>
constexpr int tile_min_blocks = Keys::derived && sizeof(S) <= 8 ? 4 : 3;

template <class T, class O, class R, class S, class I, class Keys>
SEGRED_KERNEL void __launch_bounds__(tile_threads, (tile_min_blocks<Keys, S>))
    tile_reduce_kernel(rows_view<const T> values, Keys keys, std::int64_t M, rows_view<O> out, R r, options opts,
                       std::int64_t tiles, const std::int64_t* edge_keys, tile_carry<S>* carry, gap_list gaps) {
    using scan = tile_block_scan<run_part<S>>;
    using stage_t = tile_stage<T, I, Keys>;
    extern __shared__ __align__(16) unsigned char tile_smem[];
    stage_t* stages = reinterpret_cast<stage_t*>(tile_smem);
    const unsigned stages_at = shared_address(tile_smem);
    __shared__ typename scan::TempStorage scan_temp;
    // tile_keys: the keys of the tile's first and last rows (computed keys),
    // and of the rows just before and after it.
    __shared__ std::int64_t first_key[tile_threads], last_key[tile_threads], tile_keys[4];
    constexpr int tile_items = stage_t::items;
    constexpr std::int64_t tile_rows = std::int64_t(tile_threads) * tile_items;
    const int t = threadIdx.x;
    const std::int64_t n = values.n;
    // From stage buf's key slots to the other stage's, where wide labels keep
    // their high halves (tile_labels).
    auto labels_high = [&](int buf) { return buf == 0 ? unsigned(sizeof(stage_t)) : 0u - unsigned(sizeof(stage_t)); };
    auto bounds = [&](std::int64_t tile, std::int64_t& lo, std::int64_t& hi) {
        lo = tile * tile_rows;
        hi = lo + tile_rows < n ? lo + tile_rows : n;
    };
    // Whether a segment of rows is written by one store of its finalized
    // state (write_result with nothing but out to write): the row-by-row
    // fold's close then skips the tests of the options, which a warp ran
    // once for each lane that closed a run at its own row.
    const bool plain_writes = !chunk_staged<T, Keys> && !opts.accumulate_into && opts.counts_out == nullptr &&
                              (!R::has_arg || opts.arg_ptr == nullptr);

    // Searched keys (starts of long segments): first_marks[u] is the
    // largest s - k0 of the tile's segments s that begin after thread
    // u - 1's first row and at or before thread u's, k0 the key of the
    // tile's first row; a max-scan over the threads gives each its first
    // key. The tile's starts are read once, coalesced, before the stage's
    // copies are waited for: a search per thread (up to ten dependent reads
    // of the starts) had ncu's long-scoreboard stalls first at 31%. Tiles
    // of few segments keep the search: at most four steps, over starts
    // that every thread of the block reads (cached), cost less than the
    // scan (marks were 4-8% slower at 1024-row segments). Tiles of very
    // many (mostly empty) segments keep it too: marking would read them all.
    constexpr std::int64_t marked_min_span = 16, marked_max_span = 2 * tile_threads;
    __shared__ int first_marks[Keys::searched ? tile_threads : 1];
    if constexpr (Keys::searched) {
        first_marks[t] = 0;
        __syncthreads();
    }

    // A full tile of one-row segments, keys k0, k0 + 1, .. (stage buf;
    // `before`: the key of the row before the tile, -1 for none). Each
    // thread writes rows t, t + 256, ..: a warp's outputs are consecutive.
    // A thread a run of consecutive rows, as in the fold below, would have
    // each thread write its own 16 consecutive segments, 64 bytes from its
    // neighbour's, with 16 times the store transactions (one-row segments
    // ran at 0.29 of copy).
    auto fold_one_row_tile = [&](std::int64_t tile, int buf, std::int64_t lo, std::int64_t hi, std::int64_t k0,
                                 std::int64_t before) {
        constexpr bool chunked_ids = ids_chunked<T, I, Keys>;
        const unsigned stage_at = stages_at + unsigned(buf * sizeof(stage_t));
        for (int e = t; e < tile_rows; e += tile_threads) {
            S st = r.template init<T>();
            const int u = e / tile_items;
            const unsigned at = stage_at + stage_offset<T, tile_items, chunked_ids>(u, e - u * tile_items);
            r.update(st, load_shared<T>(at), lo + e);
            write_segment<T>(r, opts, out, k0 + e, 0, st, 1);
        }
        if (t == 0) {
            write_empty_range<T>(r, opts, out, M, before, k0, gaps);
            carry[tile].tail_key = -1;
            carry[tile].passes = 0;
        }
        if (t == tile_threads - 1 && hi == n) write_empty_range<T>(r, opts, out, M, k0 + tile_rows - 1, M, gaps);
        __syncthreads();  // this stage and tile_keys are reused by the next tiles
    };

    std::int64_t lo, hi;
    if (std::int64_t(blockIdx.x) < tiles) {
        bounds(blockIdx.x, lo, hi);
        stage_tile<T, I>(stages[0], stages_at, values.data, keys, lo, static_cast<int>(hi - lo));
    }
    // Derived keys: the first and last keys of the block's next tile, for
    // staging its starts (stage_segment_starts) before its rows are waited
    // for; thread 0 reads each tile's ahead.
    __shared__ std::int64_t next_keys[2];
    if constexpr (Keys::derived) {
        if (t == 0 && std::int64_t(blockIdx.x) < tiles) {
            next_keys[0] = edge_keys[2 * std::int64_t(blockIdx.x)];
            next_keys[1] = edge_keys[2 * std::int64_t(blockIdx.x) + 1];
        }
        __syncthreads();
    }
    int buf = 0;
    for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x, buf ^= 1) {
        bounds(tile, lo, hi);
        // Staged keys: the keys of the rows just before (thread 0) and just
        // after (the last thread) the tile, for the one-row test below; read
        // now, so that the load's latency passes while the stage's copies
        // land rather than before a barrier.
        std::int64_t edge = 0;
        if constexpr (keys_staged<Keys>) {
            if (t == 0) {
                edge = -1;
                if (lo > 0) {
                    if constexpr (Keys::loaded) edge = key_at(keys, lo - 1); else edge = edge_keys[2 * tile - 1];
                }
            } else if (t == tile_threads - 1) {
                edge = M;
                if (hi < n) {
                    if constexpr (Keys::loaded) edge = key_at(keys, hi); else edge = edge_keys[2 * tile + 2];
                }
            }
        }
        // This tile's starts, where it may be folded a thread a segment: in
        // a batch of copies of their own, before the next tile's, so that
        // the wait below (all but the newest batch) takes them in. They go
        // to the other stage's key slots, which the next tile's copies
        // (values only) leave alone, so that a tile left to the row-by-row
        // fold derives its labels in its own key slots from them.
        if constexpr (Keys::derived) {
            const std::int64_t k0 = next_keys[0], span = next_keys[1] - k0;
            if (segment_tile_span<T, Keys>(span))
                stage_segment_starts(stages_at + unsigned((buf ^ 1) * sizeof(stage_t) + offsetof(stage_t, keys)),
                                     keys, k0, static_cast<int>(span));
        }
        const std::int64_t after = tile + gridDim.x;
        std::int64_t after_k0 = 0, after_k1 = 0;  // thread 0's, for next_keys
        if (Keys::derived && t == 0 && after < tiles) {
            after_k0 = edge_keys[2 * after];
            after_k1 = edge_keys[2 * after + 1];
        }
        if (after < tiles) {
            std::int64_t alo, ahi;
            bounds(after, alo, ahi);
            stage_tile<T, I>(stages[buf ^ 1], stages_at + (buf ^ 1) * unsigned(sizeof(stage_t)), values.data, keys,
                             alo, static_cast<int>(ahi - alo));
        } else {
            __pipeline_commit();  // an empty batch keeps "all but the newest" meaning this tile
        }
        if constexpr (!Keys::loaded) {
            if (t == 0) {
                tile_keys[0] = edge_keys[2 * tile];
                tile_keys[1] = edge_keys[2 * tile + 1];
            }
        }
        // Searched keys read the tile's key range themselves (tile_keys is
        // written by thread 0 and read only after the barrier below).
        std::int64_t span_k0 = 0;
        bool marked = false;
        if constexpr (Keys::searched) {
            span_k0 = edge_keys[2 * tile];
            const std::int64_t span_k1 = edge_keys[2 * tile + 1];
            marked = span_k1 - span_k0 > marked_min_span && span_k1 - span_k0 <= marked_max_span;
            if (marked) {
                // Every such s begins after the tile's first row and at or
                // before its last.
                for (std::int64_t sg = span_k0 + 1 + t; sg <= span_k1; sg += tile_threads) {
                    const std::int64_t u = (keys.start(sg) - lo + tile_items - 1) / tile_items;
                    if (u < tile_threads) atomicMax(&first_marks[u], static_cast<int>(sg - span_k0));
                }
            }
        }
        __pipeline_wait_prior(1);
        __syncthreads();
        if (Keys::derived && t == 0) {  // every thread has read next_keys for this tile
            next_keys[0] = after_k0;
            next_keys[1] = after_k1;
        }
        // Derived keys: the tile's first and last keys, and whether its
        // labels are wide (tile_labels); a row's key is derived_k0 plus its
        // label.
        std::int64_t derived_k0 = 0, derived_k1 = 0;
        bool wide = false;
        if constexpr (Keys::derived) {
            const std::int64_t k0 = tile_keys[0], k1 = tile_keys[1];
            derived_k0 = k0;
            derived_k1 = k1;
            wide = k1 - k0 > derived_label_span;
            // A tile of one-row segments is told from its starts alone, and
            // derives no labels (H200, fp32 sums over one-row segments:
            // 1.37x from int32 offsets, 1.22x from int32 lengths, against
            // deriving them). A tile whose keys span as many segments as it
            // has rows but whose starts are not one row apart reads its
            // starts twice.
            if (hi - lo == tile_rows && k1 - k0 == tile_rows - 1 && k0 >= 0 && k1 < M &&
                starts_one_row_apart<tile_items>(keys, lo, k0)) {
                fold_one_row_tile(tile, buf, lo, hi, k0, lo > 0 ? edge_keys[2 * tile - 1] : std::int64_t(-1));
                continue;
            }
            int* const staged_starts =
                segment_tile_span<T, Keys>(k1 - k0) ? reinterpret_cast<int*>(stages[buf ^ 1].keys) : nullptr;
            if (staged_starts != nullptr &&
                fold_tile_segments<T, O, R, S, Keys>(
                    stages_at + unsigned(buf * sizeof(stage_t)), staged_starts, r, opts,
                    out, M, lo, hi, n, k0, k1, lo > 0 ? edge_keys[2 * tile - 1] : std::int64_t(-1),
                    hi < n ? edge_keys[2 * tile + 2] : M, carry[tile], plain_writes, gaps)) {
                __syncthreads();  // this stage and tile_keys are reused by the next tiles
                continue;
            }
            __shared__ typename tile_block_scan<int>::TempStorage key_scan_temp;
            const unsigned own = stages_at + unsigned(buf * sizeof(stage_t) + offsetof(stage_t, keys));
            const auto write_empty = [&](std::int64_t s) { write_empty_segment<T>(r, opts, out, s); };
            if (wide) {
                derive_tile_keys<tile_items>(tile_labels<true>{own, labels_high(buf)}, keys, staged_starts, lo,
                                             static_cast<int>(hi - lo), k0, k1, key_scan_temp, write_empty);
            } else {
                derive_tile_keys<tile_items>(tile_labels<false>{own, 0}, keys, staged_starts, lo,
                                             static_cast<int>(hi - lo), k0, k1, key_scan_temp, write_empty);
            }
        }
        const std::int64_t row0 = lo + std::int64_t(t) * tile_items;
        // This thread's rows are elements [0, count) of its part of the stage.
        const int left = static_cast<int>(hi - lo) - t * tile_items;
        const int count = left < 0 ? 0 : left < tile_items ? left : tile_items;
        // This thread's values and keys by shared address, for the fold's
        // loop (chunked: where its chunks are, in swizzled order).
        constexpr bool chunked_ids = ids_chunked<T, I, Keys>;
        // Chunked sorted ids whose run state fits a value's slot, or two of
        // 2-byte values: runs closed in the fold are parked in the stage
        // (see the fold).
        constexpr bool closes_staged = chunked_ids && parks_in_stage<S, T>;
        static_assert(!closes_staged || sizeof(S) == sizeof(T) || stage_t::split_parks, "room for the high halves");
        // Where runs are parked and a thread folds 16 rows, the gaps before
        // a thread's open run and before its first row are written by the
        // warp's lanes together (write_gaps_by_warp). Measured on an H100
        // (fp32 sums, int32 sorted ids, against each lane writing its
        // own): 90% empty segments of 1 to 64 rows 1.07x, 98% empty 1.28x;
        // uniform 0..64 rows 0.98x, 0..8 rows 0.98x, fixed 4 rows 0.99x. At
        // 8 rows a thread the gaps gain as much but lengths with few or no
        // gaps lose, even behind write_gaps_by_warp's vote (H100, against
        // each lane writing its own: fp64 sums 98% empty 1.19x, 90% empty
        // 1.05x, uniform 0..8 rows 0.93x, 0..64 0.97x; fp32 sums over int64
        // ids 98% empty 1.22x, 90% empty 0.99x, 0..8 rows 0.97x), so those
        // keep their own.
        constexpr bool warp_gaps = closes_staged && tile_items == 16;
        const unsigned stage_at = stages_at + unsigned(buf * sizeof(stage_t));
        const unsigned keys_at = stage_at + unsigned(offsetof(stage_t, keys));
        // From a value's slot to the high half of a state parked there.
        constexpr unsigned park_high = unsigned(stage_t::high_at);
        static_assert(!stage_t::split_parks || offsetof(stage_t, keys) == stage_t::slots * sizeof(T),
                      "the ids follow the values");
        constexpr int thread_slots = tile_items + (chunked_ids ? 0 : 1);
        const unsigned vals_at = pinned(stage_at + unsigned(t * thread_slots * sizeof(T)));
        // Derived keys' labels: a thread's rows label_stride slots apart.
        const unsigned ids_at =
            pinned(keys_at + unsigned((Keys::derived ? t : t * thread_slots) * static_cast<int>(sizeof(I))));
        // Keys of this thread's first and last rows (M when it has none).
        // Computed keys learn the last one from the fold below (the key its
        // last run has), instead of a second search of the starts.
        std::int64_t k_first = M, k_last = M;
        if constexpr (Keys::searched) {
            if (marked) {  // the same for the whole block
                __shared__ typename tile_block_scan<int>::TempStorage mark_scan_temp;
                const int mark = first_marks[t];
                first_marks[t] = 0;  // for the next tile: only this thread reads it
                int top;
                tile_block_scan<int>(mark_scan_temp).InclusiveScan(mark, top, max_of{});
                if (count > 0) k_first = span_k0 + top;
            }
        }
        // This thread's labels, row i at slot i * label_stride (label_slot).
        auto with_labels = [&](auto f) {
            if (wide) return f(tile_labels<true>{ids_at, labels_high(buf)});
            return f(tile_labels<false>{ids_at, 0});
        };
        if (count > 0 && !marked) {
            if constexpr (keys_staged<Keys>) {
                if constexpr (Keys::derived) {
                    with_labels([&](const auto& labels) {
                        k_first = derived_k0 + labels.load(0);
                        k_last = derived_k0 + labels.load((count - 1) * label_stride<tile_items>);
                    });
                } else {
                    k_first = load_shared<I>(keys_at + stage_offset<I, tile_items, chunked_ids>(t, 0));
                    k_last = load_shared<I>(keys_at + stage_offset<I, tile_items, chunked_ids>(t, count - 1));
                }
            } else {
                k_first = keys.first_between(row0, tile_keys[0], tile_keys[1]);
            }
        }
        if (count < tile_items) k_last = M;  // rows past the input
        // Keys of the rows just before and just after this thread's rows,
        // through first_key and last_key.
        std::int64_t prev = -1, next = M;
        auto neighbour_keys = [&] {
            first_key[t] = k_first;
            last_key[t] = k_last;
            if (keys_staged<Keys> && t == 0) tile_keys[2] = edge;
            if (keys_staged<Keys> && t == tile_threads - 1) tile_keys[3] = edge;
            __syncthreads();
            if (t > 0) {
                prev = last_key[t - 1];
            } else if (keys_staged<Keys>) {
                prev = tile_keys[2];
            } else if (lo > 0) {
                prev = edge_keys[2 * tile - 1];
            }
            if (t + 1 < tile_threads) {
                next = first_key[t + 1];
            } else if (keys_staged<Keys>) {
                next = tile_keys[3];
            } else if (hi < n) {
                next = edge_keys[2 * tile + 2];
            }
        };
        if constexpr (keys_staged<Keys>) neighbour_keys();

        // A full tile of one-row sorted ids: keys first_key[0], +1, .., in
        // range, none shared with the rows around the tile. Keys that rise
        // by the tile's row count less one may still skip one (an empty
        // segment) and repeat another (a two-row segment), so every thread
        // then compares its staged ids with the keys they must be. (Derived
        // keys test their starts above; computed keys skip the test: it
        // cost their longer segments up to 9%, and fixed segments of one
        // row take one_row_segments_kernel.)
        if constexpr (Keys::loaded) {
            const std::int64_t k0 = first_key[0], k1 = last_key[tile_threads - 1];
            if (hi - lo == tile_rows && k1 - k0 == tile_rows - 1 && k0 >= 0 && k1 < M && tile_keys[2] != k0 &&
                tile_keys[3] != k1) {
                bool apart = true;
                for (int j = 0; j < tile_items; ++j) {
                    const I id = load_shared<I>(keys_at + stage_offset<I, tile_items, chunked_ids>(t, j));
                    apart &= static_cast<std::int64_t>(id) == k0 + t * tile_items + j;
                }
                if (__syncthreads_and(apart)) {
                    fold_one_row_tile(tile, buf, lo, hi, k0, tile_keys[2]);
                    continue;
                }
            }
        }

        // Fold this thread's runs. Inner runs are complete and written now;
        // the first run (head) and the last one go through the block scan.
        // Computed keys change where the row reaches `bound`, the first row
        // of the next segment, so most rows cost one compare. Lanes close
        // runs at different rows, and a warp runs the close once for every
        // row at which one of its lanes does, so the close is kept short:
        // keys advance by adds or one read of the starts (advance), empty
        // segments are written only where two keys leave a gap (and, for
        // derived keys, outside the tile's key range). (With a
        // search and a product per close, 17-row fixed segments ran at 0.6x
        // the speed of this one on an H200.)
        S st = r.template init<T>(), head = st;
        std::int64_t head_rows = 0, cur = k_first, bound = 0;
        if constexpr (!keys_staged<Keys>) bound = keys.bound(cur);
        int run_start = 0;
        bool multi = false;
        // Whether the empty segments between keys a and b were written by
        // derive_tile_keys: derived keys, and both inside the tile's range.
        auto derived_gap = [&](std::int64_t a, std::int64_t b) {
            return Keys::derived && a >= derived_k0 && b <= derived_k1;
        };
        // Sorted ids that do not park their runs (closes_staged, below):
        // the first gap a thread meets (of fewer than
        // tile_gap_inline empty segments) is written after the fold, where
        // the warp's lanes write theirs together; in the close, which lanes
        // reach at different rows, a warp writes one lane's gap at a time.
        // On an H200: 90% empty segments 1.45x, uniform 0..8 rows
        // 1.12x, 0..16 1.04x; segments with few gaps 0.98-1.00x (the held
        // gap's registers). Marking every gap in a bitmap of the tile's keys
        // for the block to write instead cost the other cases more:
        // docs/PERFORMANCE.md.
        std::int64_t held_a = 0, held_b = 0;  // the empty segments between keys held_a and held_b
        auto close_run = [&](int i, std::int64_t k) {  // the run of `cur` ends before row i; key k begins
            if (!multi) {
                head = st;
                head_rows = i - run_start;
                multi = true;
            } else if (key_in_range(cur, M)) {
                if (plain_writes) {  // an inner run has rows
                    out(cur, 0) = segred::detail::finalized<O>(r, st, [&] { return i - run_start; });
                } else {
                    write_segment<T>(r, opts, out, cur, 0, st, i - run_start);
                }
            }
            if (k - cur > 1 && !derived_gap(cur, k)) {
                if (Keys::loaded && held_b == 0 && k - cur <= tile_gap_inline) {
                    held_a = cur;
                    held_b = k;
                } else {
                    write_empty_range<T>(r, opts, out, M, cur, k, gaps);
                }
            }
            st = r.template init<T>();
            run_start = i;
            cur = k;
        };
        if constexpr (chunk_staged<T, Keys>) {
            // A chunk at a time: where the chunk's rows all lie before
            // run_end (the first row of this thread past the run of `cur`),
            // they are folded from registers after one compare; a chunk that
            // a boundary crosses is folded row by row, from registers too.
            // Rows are folded in order, as in the loop below. (A vote that
            // sent the whole warp row by row wherever one lane had to gained
            // nothing on short segments and cost long ones 3%.)
            using layout = chunk_layout<T, tile_items>;
            constexpr int elems = layout::elems;
            const unsigned mine_at = pinned(stage_at + unsigned(t * layout::chunks * 16));
            const int swizzle = layout::swizzle(t);
            auto end_of_run = [&] {
                const std::int64_t e = bound - row0;
                return e < count ? (e > 0 ? static_cast<int>(e) : 0) : count;
            };
            int run_end = end_of_run();
            // The next chunk is loaded while this one is folded (a thread's
            // last "next" chunk lies in the stage too: past the thread's
            // bytes by at most 2 * chunks - 1 chunks, inside the slack).
            auto x_ahead = load_shared_chunk<T>(mine_at + layout::chunk_place(swizzle, 0));
#pragma unroll 1
            for (int j = 0, i0 = 0; i0 < count; ++j, i0 += elems) {
                const auto x = x_ahead;
                x_ahead = load_shared_chunk<T>(mine_at + layout::chunk_place(swizzle, j + 1));
                if (i0 + elems <= run_end) {
#pragma unroll
                    for (int e = 0; e < elems; ++e) r.update(st, x.e[e], row0 + i0 + e);
                    continue;
                }
#pragma unroll
                for (int e = 0; e < elems; ++e) {
                    const int i = i0 + e;
                    if (i >= count) break;
                    if (i >= run_end) {
                        std::int64_t k = cur;
                        keys.advance(k, bound, row0 + i);
                        close_run(i, k);
                        run_end = end_of_run();
                    }
                    r.update(st, x.e[e], row0 + i);
                }
            }
        } else if constexpr (chunked_ids) {
            // A group of rows at a time (16 bytes of the narrower of value
            // and id: 4 rows of fp32 values with int32 ids), its values and
            // ids read in one or two 16-byte loads each: where the group's
            // last id is still `cur`, all its rows are (ids are sorted) and
            // are folded after that one compare; otherwise row by row, from
            // registers too. (Loading the next group while this one was
            // folded, as the computed keys' chunks do, was 2-4% slower, and
            // 15% with 90% of segments empty: more registers than the
            // kernel's cap of 80 for three blocks an SM, so more spilled.)
            constexpr int group = static_cast<int>(16 / (sizeof(T) < sizeof(I) ? sizeof(T) : sizeof(I)));
            const staged_group<T, I, group, tile_items> rows{vals_at, ids_at, t};
            // The groups, `running` the id of the open run, `row(i, k)`
            // called with each row's id before its value is added where a
            // group's rows are folded one by one.
            auto fold_groups = [&](auto running, auto row) {
#pragma unroll 1
                for (int j = 0, i0 = 0; i0 < count; ++j, i0 += group) {
                    const auto x = rows.load(j);
                    if (i0 + group <= count && x.k[group - 1] == running()) {
#pragma unroll
                        for (int e = 0; e < group; ++e) r.update(st, x.v[e], row0 + i0 + e);
                        continue;
                    }
#pragma unroll
                    for (int e = 0; e < group; ++e) {
                        const int i = i0 + e;
                        if (i >= count) break;
                        row(i, x.k[e]);
                        r.update(st, x.v[e], row0 + i);
                    }
                }
            };
            if constexpr (closes_staged) {
                // A run's close only parks its state and id in the stage,
                // at the thread's element `closed` (already read: the c-th
                // close is at row c or later), and marks its row in
                // `closes`; the runs and the gaps between them are written
                // after the fold by the warp (write_parked_runs). The full
                // close (writes, gaps, the head) took a warp through it once
                // for every row at which one of its lanes closed: on lengths
                // uniform in 0..8 rows the fold ran 3.4 warp instructions a
                // row, 5-7 lanes active in the close (ncu, H200).
                I cur_id = static_cast<I>(cur);
                int closed = 0;
                unsigned closes = 0;  // bit i: a run began at row i
                // Park the run of cur_id, closed before row i, where `close`
                // (predicated: no branch).
                auto park = [&](bool close, int i) {
                    park_state_if<S, T>(close, rows.value_at(closed), park_high, st);
                    store_shared_if<I>(close, rows.id_at(closed), cur_id);
                    closes |= unsigned(close) << i;
                    closed += close;
                    if (close) st = r.template init<T>();
                };
                fold_groups([&] { return cur_id; },
                            [&](int i, I k) {
                                park(k != cur_id, i);
                                cur_id = k;
                            });
                cur = static_cast<std::int64_t>(cur_id);
                // Where the input ends inside this thread, the rows after it
                // count as key M (as below).
                if (count < tile_items && cur != M) {
                    park(true, count);
                    cur = M;
                }
                if (closed > 0) {
                    multi = true;
                    head = parked_state<S, T>(rows.value_at(0), park_high);
                    head_rows = __ffs(closes) - 1;
                    run_start = 31 - __clz(closes);
                    // The empty segments before the open run; those before
                    // the parked ones are written with them.
                    const std::int64_t before = static_cast<std::int64_t>(load_shared<I>(rows.id_at(closed - 1)));
                    if constexpr (warp_gaps) {
                        held_a = before;
                        held_b = cur;
                    } else if (cur - before > 1) {
                        write_empty_range<T>(r, opts, out, M, before, cur, gaps);
                    }
                }
                write_parked_runs<T, I, tile_items>(stage_at, keys_at, park_high, closed, closes, r, opts, out, M,
                                                    plain_writes, gaps);
            } else {
                fold_groups([&] { return static_cast<I>(cur); },
                            [&](int i, I k) {
                                if (k != static_cast<I>(cur)) close_run(i, static_cast<std::int64_t>(k));
                            });
            }
        } else {
            // Each row's value and key are loaded while the row before it is
            // folded: the loads are ordered (volatile asm), and read only
            // when used they left a shared-memory latency per row (ncu:
            // short scoreboard stalls the first reason). Slot `items` after
            // a thread's rows is its padding slot, so the read ahead stays
            // in the stage.
            T v_ahead = load_shared<T>(vals_at);
            if constexpr (Keys::derived) {
                // Narrow and wide labels each their own loop, so that the
                // row loop tests neither.
                with_labels([&](const auto& labels) {
                    int k_ahead = labels.load(0);
                    int label = k_ahead;  // the open run's
                    for (int i = 0; i < count; ++i) {
                        const T v = v_ahead;
                        v_ahead = load_shared<T>(vals_at + unsigned((i + 1) * sizeof(T)));
                        const int k = k_ahead;
                        k_ahead = labels.load((i + 1) * label_stride<tile_items>);
                        if (k != label) {
                            close_run(i, derived_k0 + k);
                            label = k;
                        }
                        r.update(st, v, row0 + i);
                    }
                });
            } else {
                I k_ahead{};
                if constexpr (Keys::loaded) k_ahead = load_shared<I>(ids_at);
                for (int i = 0; i < count; ++i) {
                    const T v = v_ahead;
                    v_ahead = load_shared<T>(vals_at + unsigned((i + 1) * sizeof(T)));
                    if constexpr (Keys::loaded) {
                        const I k = k_ahead;
                        k_ahead = load_shared<I>(ids_at + unsigned((i + 1) * sizeof(I)));
                        // Within the rows, cur is some row's key: it fits in I.
                        if (k != static_cast<I>(cur)) close_run(i, static_cast<std::int64_t>(k));
                    } else {
                        if (row0 + i >= bound) {
                            std::int64_t k = cur;
                            keys.advance(k, bound, row0 + i);
                            close_run(i, k);
                        }
                    }
                    r.update(st, v, row0 + i);
                }
            }
        }
        // Where the input ends inside this thread, the rows after it count as
        // key M (no segment): the run before them closes, its gap is filled.
        if (count < tile_items && cur != M) close_run(count, M);
        if constexpr (warp_gaps) {
            write_gaps_by_warp<T>(r, opts, out, M, held_a, held_b, gaps);
        } else if (Keys::loaded && held_b != 0) {
            write_empty_range<T>(r, opts, out, M, held_a, held_b, gaps);
        }
        if constexpr (!keys_staged<Keys>) {
            k_last = cur;  // the last row's key, or M past the input
            neighbour_keys();
        }
        if constexpr (warp_gaps) {
            write_gaps_by_warp<T>(r, opts, out, M, prev, k_first, gaps);
        } else if (k_first != prev && !derived_gap(prev, k_first)) {
            write_empty_range<T>(r, opts, out, M, prev, k_first, gaps);
        }
        const std::int64_t rows = count - run_start;
        if (!multi) {
            head = st;
            head_rows = rows;
        }
        if (t == tile_threads - 1 && hi == n) write_empty_range<T>(r, opts, out, M, k_last, M, gaps);

        // Join runs across threads: excl is what the run holding this
        // thread's first row gathered in earlier threads of the tile.
        const bool continues = k_first == prev;
        const run_part<S> mine = make_run_part(st, static_cast<int>(rows), multi || !continues);
        run_part<S> excl, all;
        scan(scan_temp).ExclusiveScan(mine, excl, make_run_part(S(r.template init<T>()), 0, false), join_runs<R>{r},
                                      all);
        S first = head;
        std::int64_t first_rows = head_rows;
        if (continues) {
            first = excl.st;
            r.combine(first, head);
            first_rows += excl.rows();
        }
        if ((multi || next != k_first) && key_in_range(k_first, M)) {  // the first run ends in this thread
            if (continues && !excl.reset()) {                            // ... but began in an earlier tile
                carry[tile].head = first;
                carry[tile].head_rows = first_rows;
            } else {
                write_segment<T>(r, opts, out, k_first, 0, first, first_rows);
            }
        }
        if (multi && next != k_last && key_in_range(k_last, M)) write_segment<T>(r, opts, out, k_last, 0, st, rows);
    if (t == tile_threads - 1) {
        const bool goes_on = hi < n && next == k_last && key_in_range(next, M);
        carry[tile].tail_key = goes_on && all.reset() ? next : -1;
        carry[tile].passes = goes_on && !all.reset();
        if (goes_on && all.reset()) {
            carry[tile].tail = all.st;
            carry[tile].tail_rows = all.rows();
        }
        if (goes_on && !all.reset()) {
            carry[tile].head = all.st;
            carry[tile].head_rows = all.rows();
        }
    }
    __syncthreads();  // this stage and the scan storage are reused by the next tiles
    }
}

// Computed keys: edge_keys[2t] and [2t + 1] are the keys of tile t's first
// and last rows, each found by its own thread (a search of the starts costs
// a chain of dependent loads; done once per tile, all tiles at once).
template <class Keys>
SEGRED_KERNEL void tile_edge_keys_kernel(Keys keys, std::int64_t n, std::int64_t tile_rows, std::int64_t tiles,
                                         std::int64_t* edge_keys) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < 2 * tiles; e += stride) {
        const std::int64_t tile = e / 2, lo = tile * tile_rows;
        const std::int64_t hi = lo + tile_rows < n ? lo + tile_rows : n;
        edge_keys[e] = keys.first(e % 2 == 0 ? lo : hi - 1);
    }
}

// edge_keys for tiles of tile_rows rows (Keys computed, not loaded). (A
// warp an edge, each step reading 32 starts across the range left: 4
// dependent loads for 65536 segments where a thread's binary search takes
// 16, but 32 times the threads and 8 times the loads; 1024-row offsets ran
// 0.92x with it, H200.)
template <class Keys>
void find_edge_keys(const par_t& p, Keys keys, std::int64_t n, std::int64_t tile_rows, std::int64_t tiles,
                    std::int64_t* edge_keys) {
    tile_edge_keys_kernel<<<grid_for(2 * tiles), block_threads, 0, p.stream>>>(keys, n, tile_rows, tiles, edge_keys);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

} // namespace SEGRED_ABI_NS

// The long gaps of empty segments the tile kernels list (gap_list), on the
// device: room for as many as n rows over M segments can hold, or none where
// no segment can be empty (fixed segments: none to fill, no kernel to run).
struct tile_gaps {
    tile_gaps(const par_t& p, std::int64_t n, std::int64_t M, bool possible)
        : capacity(possible ? gap_capacity(n, M) : 0), ranges(p, 2 * capacity), count(p, 1) {
        if (possible) SEGRED_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), p.stream));
    }
    gap_list list() const { return {ranges.get(), count.get()}; }
    std::int64_t capacity;
    temp_buffer<std::int64_t> ranges;
    temp_buffer<unsigned long long> count;
};

// After a tile kernel: the listed gaps filled, and the runs joined.
template <class T, class O, class R, class S>
void finish_tiles(const par_t& p, std::int64_t tiles, rows_view<O> out, const R& r, const options& opts,
                  const tile_carry<S>* carry, const tile_gaps& gaps) {
    // The count stays on the device: a resident grid takes whatever it holds.
    if (gaps.capacity > 0) {
        fill_gaps_kernel<T><<<grid_for(gaps.capacity * block_threads), block_threads, 0, p.stream>>>(out, r, opts,
                                                                                                  gaps.list());
        SEGRED_CUDA_CHECK(cudaGetLastError());
    }
    join_tiles<T, O, R, S>(p, tiles, out, r, opts, carry);
}

// Reduce n > 0 one-column rows whose segments are given by row keys, with
// reducer r as it is (tile_reduce below picks it).
template <class I, class T, class O, class R, class Keys>
void tile_reduce_as(const par_t& p, rows_view<const T> values, Keys keys, std::int64_t M, rows_view<O> out,
                    const R& r, const options& opts) {
    using S = state_t<R, T>;
    constexpr std::int64_t tile_rows = std::int64_t(tile_threads) * tile_items_for<T, I, Keys>();
    const std::int64_t tiles = (values.n + tile_rows - 1) / tile_rows;
    temp_buffer<tile_carry<S>> carry(p, tiles);
    const tile_gaps gaps(p, values.n, M, Keys::empty_segments);
    temp_buffer<std::int64_t> edge_keys(p, Keys::loaded ? 0 : 2 * tiles);
    if constexpr (!Keys::loaded) find_edge_keys(p, keys, values.n, tile_rows, tiles, edge_keys.get());
    auto kernel = tile_reduce_kernel<T, O, R, S, I, Keys>;
    constexpr std::size_t smem = tile_stage_bytes<T, I, Keys>();
    // Two stages may pass the default 48 KB of dynamic shared memory. Set on
    // every call: a device reset forgets it.
    SEGRED_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    // Persistent blocks: as many as fit on the device at once.
    int per_sm = 0;
    SEGRED_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, tile_threads, smem));
    if (per_sm < 1) per_sm = 1;
    const int sms = device_attribute(cudaDevAttrMultiProcessorCount);
    const std::int64_t grid = std::min<std::int64_t>(tiles, std::int64_t(sms) * per_sm);
    kernel<<<static_cast<unsigned>(grid), tile_threads, smem, p.stream>>>(values, keys, M, out, r, opts, tiles,
                                                                        edge_keys.get(), carry.get(), gaps.list());
    SEGRED_CUDA_CHECK(cudaGetLastError());
    finish_tiles<T, O, R, S>(p, tiles, out, r, opts, carry.get(), gaps);
}

// Reduce n > 0 one-column rows whose segments are given by row keys.
template <class I, class T, class O, class R, class Keys>
void tile_reduce(const par_t& p, rows_view<const T> values, Keys keys, std::int64_t M, rows_view<O> out, const R& r,
                 const options& opts) {
    with_row_divided_mean(r, [&](const auto& rr) { tile_reduce_as<I>(p, values, keys, M, out, rr, opts); });
}

} // namespace detail
} // namespace cuda
} // namespace segred
