// segred/host/detail/segment_loops.hpp -- the loops over a layout's segments
// shared by every host algorithm.
//
// Short segments are each handled whole by one thread. Long ones are cut into
// pieces of a fixed number of rows so that one giant segment still keeps every
// thread busy; each piece yields a partial state, and the partials of a
// segment are combined in piece order. Piece size depends only on the width,
// so results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "big_buffer.hpp"
#include "layout.hpp"
#include "parallel.hpp"
#include "sse_lanes.hpp"
#include "write_segment.hpp"

namespace segred {
namespace host_detail {

// Rows per piece of a long segment: about 64K elements of work.
inline std::int64_t piece_rows(std::int64_t width) {
    return std::max<std::int64_t>(1, (std::int64_t(1) << 16) / std::max<std::int64_t>(width, 1));
}

// Segments per dynamic chunk when segments are short.
constexpr std::int64_t segments_per_chunk = 256;

// Segments per chunk for a layout: about 16K rows a chunk on average, so
// one-row segments do not pay a scheduling step every 256 rows.
template <class Segments>
std::int64_t segment_grain(const Segments& L) {
    const std::int64_t avg = L.M > 0 ? std::max<std::int64_t>(1, L.covered() / L.M) : 1;
    return std::max<std::int64_t>(segments_per_chunk, (std::int64_t(1) << 14) / avg);
}

// States are held in plain arrays (state_array), not std::vector<State>:
// any/all have State = bool, and std::vector<bool> has no data(). Large
// ones take huge pages (big_buffer.hpp).
template <class State>
using state_array = big_array<State>;

template <class State>
state_array<State> make_states(std::int64_t count) {
    return make_big_array<State>(count);
}

// The caller's offsets as segments, read in place (layout's interface: M,
// begin, end, perm, covered), so narrow offsets need no widened copy.
template <class I>
struct offsets_segments {
    const I* ptr;
    std::int64_t M;
    const std::int64_t* perm = nullptr;
    std::int64_t begin(std::int64_t s) const { return static_cast<std::int64_t>(ptr[s]); }
    std::int64_t end(std::int64_t s) const { return begin(s + 1); }
    std::int64_t covered() const { return M == 0 ? 0 : end(M - 1) - begin(0); }
    // 32-bit offsets as narrow bounds (has_narrow_bounds).
    template <class J = I, class = std::enable_if_t<std::is_same<J, std::int32_t>::value>>
    const std::int32_t* bounds(std::int64_t s) const { return ptr + s; }
    std::int64_t bounds_first() const { return 0; }
};

// Segments whose bounds lie in one array of 32- or 16-bit integers say so
// with bounds(s): begin(s + j) is bounds_first() + bounds(s)[j]. A group of
// short runs then takes its lengths with vector instructions
// (run_lengths4).
template <class Segments, class = void>
struct has_narrow_bounds : std::false_type {};
template <class Segments>
struct has_narrow_bounds<Segments, std::void_t<decltype(std::declval<const Segments&>().bounds(std::int64_t{}))>>
    : std::true_type {};

// Segments of one length come in batches of this many: enough independent
// init/update/finalize chains for the compiler to unroll and vectorize.
constexpr int one_row_batch = 8;

// Whether segments s..s+K-1 of L each hold `len` rows, the first starting at
// row b == L.begin(s) (the caller has seen that segment s has len rows).
// The K-th begin is tested first, alone: for sorted offsets it almost always
// decides (only other lengths that add up to the same, or empty segments
// beside longer ones, pass it and fail the rest). Len is std::int64_t, or
// one_row for the commonest length, whose test is then against constants
// (with the length in a register, one-row segments ran 15% slower).
using one_row = std::integral_constant<std::int64_t, 1>;

template <int K, class Segments, class Len>
SEGRED_FORCE_INLINE bool equal_each(const Segments& L, std::int64_t s, std::int64_t b, Len len) {
    if (L.begin(s + K) != b + K * len) return false;
    bool ok = true;
    for (int j = 1; j < K; ++j) ok &= L.begin(s + j) == b + j * len;
    return ok;
}

// The same test on the caller's offsets, compared at their own width (the
// differences wrap as unsigned, so unordered offsets are simply rejected),
// so narrow offsets compare several to a vector instruction.
template <int K, class I, class Len>
SEGRED_FORCE_INLINE bool equal_each(const offsets_segments<I>& L, std::int64_t s, std::int64_t, Len len) {
    using U = std::make_unsigned_t<I>;
    const I* o = L.ptr + s;
    const U base = static_cast<U>(o[0]), step = static_cast<U>(static_cast<std::int64_t>(len));
    if (static_cast<U>(static_cast<U>(o[K]) - base) != static_cast<U>(K * step)) return false;
    bool ok = true;
    for (int j = 1; j < K; ++j) ok &= static_cast<U>(static_cast<U>(o[j]) - base) == static_cast<U>(j * step);
    return ok;
}

// K one-row segments s0.. at rows b..: each state is init() then one update,
// the same fold fold_one gives a one-row range, with no per-segment branch.
template <int K, class F, class Emit>
SEGRED_FORCE_INLINE void fold_one_row_batch(const F& folder, Emit& emit, std::int64_t s0, std::int64_t b) {
    typename F::state a[K];
    for (int j = 0; j < K; ++j) {
        a[j] = folder.init();
        folder.update_one(a[j], b + j);
    }
    emit_equal_batch<K>(emit, s0, a, 1);
}

// K segments s0.. of len rows each from row b: empty, one row, or (where
// the folder has masked folds) up to masked_rows rows in vector lanes.
template <int K, class F, class Emit>
SEGRED_FORCE_INLINE void fold_equal_batch(const F& folder, Emit& emit, std::int64_t s0, std::int64_t b,
                                          std::int64_t len) {
    if (len == 1) return fold_one_row_batch<K>(folder, emit, s0, b);
    typename F::state a[K];
    if (len == 0)
        for (int j = 0; j < K; ++j) a[j] = folder.init();
    else
        folder.template fold_equal_short<K>(b, len, a);
    emit_equal_batch<K>(emit, s0, a, len);
}

// Whether Emit writes a group's sums from their register
// (segment_writer::mixed_lanes).
template <class Emit, class = void>
struct writes_lane_sums : std::false_type {};
template <class Emit>
struct writes_lane_sums<Emit, std::enable_if_t<Emit::lane_sums>> : std::true_type {};

#if SEGRED_HOST_SSE2
// W segments s.., run j of at most masked_rows rows from row first +
// bj[j] (bj[W]: where run W - 1 ends), n their lengths in lane_lengths'
// form, folded in the lanes of one register (row_fold::fold_mixed_lanes,
// or fold_mixed_args for the arg forms' states) and written from it where
// the writer can (a plain sum, mean, max or min), else state by state.
template <int W, class F, class Emit, class B>
SEGRED_FORCE_INLINE void fold_mixed_group(const F& folder, Emit& emit, std::int64_t s, std::int64_t first, const B* bj,
                                          __m128i n) {
    std::int64_t lj[W];
    auto lengths = [&] {
        for (int j = 0; j < W; ++j) lj[j] = static_cast<std::int64_t>(bj[j + 1]) - static_cast<std::int64_t>(bj[j]);
    };
    typename F::state a[W];
    if constexpr (F::arg_extremum != 0) {
        folder.fold_mixed_args(first, bj, n, a);
        lengths();
    } else {
        const auto sums = folder.fold_mixed_lanes(first, bj, n);
        if constexpr (writes_lane_sums<std::remove_reference_t<Emit>>::value)
            if (emit.simple) return emit.mixed_lanes(s, sums, n);
        lengths();
        folder.mixed_states(sums, lj, a);
    }
    emit_mixed_batch<W>(emit, s, a, lj);
}

// Segments s.. (W of them, s + W <= the chunk's end; segment s has len <=
// masked_rows rows from row b <= masked_below to e) folded together by
// fold_mixed_group when each of the others holds at most masked_rows rows
// too and the last starts at or before masked_below. Returns the row after
// them, or -1 when they do not fit (nothing is done). Narrow bounds
// (four floats a group) take the lengths in vector lanes; others one by one.
template <int W, class Segments, class F, class Emit>
SEGRED_FORCE_INLINE std::int64_t fold_short_group(const Segments& L, const F& folder, Emit& emit, std::int64_t s,
                                                  std::int64_t b, std::int64_t e, std::int64_t masked_below) {
    constexpr int most = F::masked_rows;
    if constexpr (W == 4 && has_narrow_bounds<Segments>::value) {
        (void)b, (void)e;
        const auto* bj = L.bounds(s);
        const std::int64_t first = L.bounds_first();
        const __m128i n = run_lengths4(bj);
        // Lengths of 0 to masked_rows never move a begin back: the last
        // begin alone says whether every run has masked_rows rows to read.
        if (!lengths_within(n, most) || first + bj[W - 1] > masked_below) return -1;
        fold_mixed_group<W>(folder, emit, s, first, bj, n);
        return first + bj[W];
    } else {
        std::int64_t bj[W + 1], lj[W];
        bj[0] = b;
        bj[1] = e;
        lj[0] = e - b;
        bool fit = true;
        for (int j = 1; j < W; ++j) {
            bj[j + 1] = L.end(s + j);
            lj[j] = bj[j + 1] - bj[j];
            fit &= static_cast<std::uint64_t>(lj[j]) <= static_cast<std::uint64_t>(most);
        }
        if (!fit || bj[W - 1] > masked_below) return -1;  // (the last begin, as above)
        fold_mixed_group<W>(folder, emit, s, 0, bj, sse_lanes<typename F::value_type>::lane_lengths(lj));
        return bj[W];
    }
}
#endif

// Empty segments written a block at a time (emit_empty_run).
constexpr int empty_block = 32;

// The begins of L's segments from s on as one array p, where they are one:
// begin(s + j) == first + p[j] (narrow bounds, int64 offsets, a layout's
// starts); else nullptr.
template <class Segments>
SEGRED_FORCE_INLINE auto begins_from(const Segments& L, std::int64_t s, std::int64_t& first) {
    first = 0;
    if constexpr (has_narrow_bounds<Segments>::value) {
        first = L.bounds_first();
        return L.bounds(s);
    } else if constexpr (std::is_same<Segments, offsets_segments<std::int64_t>>::value) {
        return L.ptr + s;
    } else if constexpr (std::is_same<Segments, layout>::value) {
        return L.starts != nullptr ? L.starts + s : nullptr;  // (fixed sizes have none)
    } else {
        return static_cast<const std::int64_t*>(nullptr);
    }
}

template <class Emit, class = void>
struct fills_empty_blocks : std::false_type {};
template <class Emit>
struct fills_empty_blocks<Emit, std::void_t<decltype(std::declval<const Emit&>().template empty_block<empty_block>(
                                     std::int64_t{}))>> : std::true_type {};

// Segment s of L is empty: emits it and the empty ones right after it (up to
// hi), and returns the first segment not emitted. Out of line: inlined, its
// loop slowed the loop of short segments by 5-10% even where no segment is
// empty; a call per run of empty segments costs less.
// Where the writer stores a plain empty value and the begins are one array
// (begins_from), the next 32 segments are written empty at once and the
// run's length is told by vector compares of their bounds; the segments of
// the block past the run are written again, with their results, as the
// caller's loop reaches them. A loop a segment ended each run with a
// mispredicted exit, since runs of empty segments vary in length (2-core
// VM, sums over 90% empty segments: 1.17x from int32 offsets, 1.25x from
// int64 ones, 1.44x from sorted ids with emit_empty_gap).
template <class Segments, class F, class Emit>
SEGRED_HOST_NOINLINE std::int64_t emit_empty_run(const Segments& L, const F& folder, Emit& emit, std::int64_t s,
                                                 std::int64_t hi) {
    const std::int64_t b = L.begin(s);
#if SEGRED_HOST_SSE2
    if constexpr (fills_empty_blocks<std::remove_reference_t<Emit>>::value) {
        std::int64_t first = 0;
        using B = std::remove_cv_t<std::remove_pointer_t<decltype(begins_from(L, s, first))>>;
        if (emit.simple && begins_from(L, s, first) != nullptr) {
            const B end = static_cast<B>(b - first);
            while (s + empty_block <= hi) {  // (begins up to segment hi are there)
                emit.template empty_block<empty_block>(s);
                const int run = leading_equal32(begins_from(L, s, first) + 1, end);
                s += run;
                if (run < empty_block) return s;
            }
        }
    }
#endif
    for (; s < hi && L.end(s) == b; ++s) emit_one(emit, s, folder.init(), 0);
    return s;
}

// Empty segments [s0, s1) emitted, where the caller writes every segment
// from s0 up to `owned` (excluded) in order: where the writer stores a plain
// empty value, the first empty_block of them (some perhaps not empty,
// written again by the caller later) at once, as in emit_empty_run. Out of
// line, as emit_empty_run: inlined into sorted ids' run loop, it slowed
// 4-row runs, which have no gaps, 1.3x (so did passing it the ids and the
// chunk's end to read the last id itself: 1.2x).
template <class F, class Emit>
SEGRED_HOST_NOINLINE void emit_empty_gap(const F& folder, Emit& emit, std::int64_t s0, std::int64_t s1,
                                         std::int64_t owned) {
    if constexpr (fills_empty_blocks<std::remove_reference_t<Emit>>::value) {
        if (emit.simple && s0 + empty_block <= owned) {
            emit.template empty_block<empty_block>(s0);
            s0 += empty_block;
        }
    }
    for (; s0 < s1; ++s0) emit_one(emit, s0, folder.init(), 0);
}

// Segment s, from row b to e, holds at most masked_rows rows and b <=
// masked_below: it and the empty ones after it written, or it and the next
// W - 1 folded in the lanes of one register where they fit
// (fold_short_group), or it alone by the masked fold. Returns the next
// segment, and moves b past their rows.
template <class Segments, class F, class Emit>
SEGRED_FORCE_INLINE std::int64_t fold_short_step(const Segments& L, const F& folder, Emit& emit, std::int64_t s,
                                                 std::int64_t hi, std::int64_t& b, std::int64_t e,
                                                 std::int64_t masked_below) {
    const std::int64_t len = e - b;
    if (len == 0) return emit_empty_run(L, folder, emit, s, hi);  // nothing to read
#if SEGRED_HOST_SSE2  // (masked_runs need SSE2 lanes; W > 1 with them)
    constexpr int W = F::mixed_runs;
    if constexpr (W > 1) {
        // (Taking longer ones into the group too, each folded alone, ran
        // 10% slower on power-law lengths.)
        const std::int64_t after = s + W <= hi ? fold_short_group<W>(L, folder, emit, s, b, e, masked_below) : -1;
        if (after >= 0) {
            b = after;
            return s + W;
        }
    }
#endif
    emit_one(emit, s, folder.fold_masked(b, len), len);
    b = e;
    return s + 1;
}

// fold_short_step from segment s on, while segments stay that short: max,
// min and their arg forms take their short segments out of line, a stretch
// a call. Inlined into the loop as sums' are, the steps cost max over
// 32-row segments, which never take them, 12-14% (2-core VM, one thread).
template <class Segments, class F, class Emit>
SEGRED_HOST_NOINLINE std::int64_t fold_short_stretch(const Segments& L, const F& folder, Emit& emit, std::int64_t s,
                                                     std::int64_t hi, std::int64_t& b, std::int64_t masked_below) {
    std::int64_t e = L.end(s);
    do {
        s = fold_short_step(L, folder, emit, s, hi, b, e, masked_below);
    } while (s < hi && (e = L.end(s)) - b <= F::masked_rows && b <= masked_below);
    return s;
}

// Segments [lo, hi) of L, one column of rows in order (no perm), each
// reduced whole and handed to emit, except those longer than `piece` rows,
// which go to on_long(s) instead. The state stays in a register.
template <class Segments, class F, class Emit, class OnLong>
void fold_one_column_segments(const Segments& L, std::int64_t lo, std::int64_t hi, const F& folder, Emit& emit,
                              std::int64_t piece, OnLong&& on_long) {
    // Each segment's end is the next one's begin: one offset read per
    // segment. Segments of one length go in batches of K (fold_equal_batch):
    // empty or one-row ones for every folder, up to masked_rows rows where
    // the folder has masked folds. Batches are tried only after a streak of
    // segments of the same length (`same`, kept without a branch), so
    // lengths that vary (power law) do not pay a failed batch test on every
    // segment.
    constexpr int K = one_row_batch;
    std::int64_t b = L.begin(lo), last = -1;
    int same = 0;
    // Segments of up to masked_rows rows fold without a branch on their
    // length (row_fold::fold_masked) where that many rows are there to read
    // from their first. (Testing first whether a chunk's lengths all
    // repeat, to keep the row loop there, cost more than it saved.)
    const bool masked = F::masked_runs && folder.values.width == 1;
    const std::int64_t masked_below = folder.values.n - F::masked_rows;
    const std::int64_t batch_rows = masked ? F::masked_rows : 1;
    for (std::int64_t s = lo; s < hi;) {
        const std::int64_t e = L.end(s), len = e - b;
        same = (same + 1) & -static_cast<int>(len == last);  // a select: random lengths mispredict a branch
        last = len;
        if (same >= K && len <= batch_rows && s + K <= hi &&
            (len == 1 ? equal_each<K>(L, s, b, one_row{}) : equal_each<K>(L, s, b, len))) {
            fold_equal_batch<K>(folder, emit, s, b, len);
            s += K;
            b += K * len;
            continue;
        }
        if constexpr (F::masked_runs) {
            if (masked && len <= F::masked_rows && b <= masked_below) {
                if constexpr (F::masked_extremum)
                    s = fold_short_stretch(L, folder, emit, s, hi, b, masked_below);
                else
                    s = fold_short_step(L, folder, emit, s, hi, b, e, masked_below);
                continue;
            }
        }
        if (e - b > piece)
            on_long(s);
        else
            emit_one(emit, s, folder.fold_one(b, e), e - b);
        b = e;
        ++s;
    }
}

// Reduce every segment of L (a layout, or offsets_segments) to `width`
// states and hand them to emit(s, states, rows_in_segment). The folder F
// (see row_fold.hpp) gives fold(st, k0, k1, perm) and combine(a, b).
template <class Segments, class F, class Emit>
void reduce_segments(const host_policy& p, const Segments& L, std::int64_t width, const F& folder, Emit&& emit) {
    using State = typename F::state;
    const std::int64_t piece = piece_rows(width);

    // Short segments, whole; each chunk lists its long ones for the second
    // phase, so no serial pass over all segments is needed to find them.
    const std::int64_t grain = segment_grain(L), chunks = (L.M + grain - 1) / grain;
    std::vector<std::vector<std::int64_t>> long_in_chunk(static_cast<std::size_t>(chunks));
    parallel_chunks(p, L.M, grain, [&](std::int64_t lo, std::int64_t hi) {
        if (width == 1 && L.perm == nullptr) {  // one column: the state stays in a register
            fold_one_column_segments(L, lo, hi, folder, emit, piece, [&](std::int64_t s) {
                long_in_chunk[static_cast<std::size_t>(lo / grain)].push_back(s);
            });
            return;
        }
        const state_array<State> st = make_states<State>(width);
        for (std::int64_t s = lo; s < hi; ++s) {
            const std::int64_t b = L.begin(s), e = L.end(s);
            if (e - b > piece) {
                long_in_chunk[static_cast<std::size_t>(lo / grain)].push_back(s);
                continue;
            }
            folder.fold(st.get(), b, e, L.perm);
            emit(s, st.get(), e - b);
        }
    });
    std::vector<std::int64_t> long_segments;
    for (const auto& v : long_in_chunk) long_segments.insert(long_segments.end(), v.begin(), v.end());
    if (long_segments.empty()) return;

    // Long segments: one partial state row per piece, then an ordered merge.
    std::vector<std::int64_t> first_piece(long_segments.size() + 1, 0);
    for (std::size_t j = 0; j < long_segments.size(); ++j) {
        const std::int64_t len = L.end(long_segments[j]) - L.begin(long_segments[j]);
        first_piece[j + 1] = first_piece[j] + (len + piece - 1) / piece;
    }
    const std::int64_t pieces = first_piece.back();
    const state_array<State> partial = make_states<State>(pieces * width);
    std::vector<std::int64_t> owner(static_cast<std::size_t>(pieces));
    for (std::size_t j = 0; j < long_segments.size(); ++j)
        for (std::int64_t q = first_piece[j]; q < first_piece[j + 1]; ++q)
            owner[static_cast<std::size_t>(q)] = static_cast<std::int64_t>(j);
    parallel_chunks(p, pieces, 1, [&](std::int64_t q, std::int64_t) {
        const std::size_t j = static_cast<std::size_t>(owner[static_cast<std::size_t>(q)]);
        const std::int64_t b = L.begin(long_segments[j]) + (q - first_piece[j]) * piece;
        const std::int64_t e = std::min(b + piece, L.end(long_segments[j]));
        folder.fold(partial.get() + q * width, b, e, L.perm);
    });
    parallel_chunks(p, static_cast<std::int64_t>(long_segments.size()), 1, [&](std::int64_t j, std::int64_t) {
        const std::int64_t q0 = first_piece[static_cast<std::size_t>(j)], q1 = first_piece[static_cast<std::size_t>(j) + 1];
        State* acc = partial.get() + q0 * width;
        for (std::int64_t q = q0 + 1; q < q1; ++q)
            for (std::int64_t f = 0; f < width; ++f) folder.combine(acc[f], partial[static_cast<std::size_t>(q * width + f)]);
        const std::int64_t s = long_segments[static_cast<std::size_t>(j)];
        emit(s, acc, L.end(s) - L.begin(s));
    });
}

// visit(s, k0, k1) over every segment, long segments cut into pieces, for
// loops whose rows are independent once per-segment values are known.
template <class Visit>
void for_each_segment_piece(const host_policy& p, const layout& L, std::int64_t width, Visit&& visit) {
    const std::int64_t piece = piece_rows(width);
    parallel_chunks(p, L.M, segments_per_chunk, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t s = lo; s < hi; ++s)
            if (L.end(s) - L.begin(s) <= piece) visit(s, L.begin(s), L.end(s));
    });
    for (std::int64_t s = 0; s < L.M; ++s) {
        const std::int64_t b = L.begin(s), len = L.end(s) - b;
        if (len <= piece) continue;
        parallel_chunks(p, len, piece, [&](std::int64_t lo, std::int64_t hi) { visit(s, b + lo, b + hi); });
    }
}

} // namespace host_detail
} // namespace segred
