// segred/host/detail/sorted_runs.hpp -- sorted ids reduced as runs of equal
// ids (a reduce-by-key), straight from the ids: no starts array is built.
//
// Rows are cut into fixed chunks (their size depends on the width only). A
// chunk folds every run it holds in row order and emits the segments that
// start and end inside it, plus the empty segments in the id gaps before its
// runs. A run that crosses a chunk boundary leaves one partial state per chunk
// it touches; those are combined afterwards in chunk order. So a segment's
// bits depend on where the fixed chunk boundaries fall, never on the thread
// count, and one giant segment still spreads over every thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "parallel.hpp"
#include "segment_loops.hpp"
#include "short_run_windows.hpp"
#include "write_segment.hpp"

namespace segred {
namespace host_detail {

// Whether ids[0..K] are ids[0], ids[0]+1, .., ids[0]+K, i.e. rows 0..K-1 are
// K one-row runs of consecutive ids. ids[1] is tested first (it rejects a
// longer run or a gap with one load), then ids[K], which for sorted ids
// almost always decides. Compared at the ids' own width (the differences
// wrap as unsigned).
template <int K, class I>
SEGRED_FORCE_INLINE bool one_id_each(const I* ids) {
    using U = std::make_unsigned_t<I>;
    const U base = static_cast<U>(ids[0]);
    auto at = [&](int j) { return static_cast<U>(static_cast<U>(ids[j]) - base) == static_cast<U>(j); };
    if (!at(1) || !at(K)) return false;
    bool ok = true;
    for (int j = 2; j < K; ++j) ok &= at(j);
    return ok;
}

// The first row in [k, hi) whose id is not s (ids[k] == s): a short linear
// probe for short runs, then gallop while whole windows hold s and bisect
// the last window, so long runs are found without touching every id.
// Forced inline: a lambda of reduce_sorted_runs before, GCC called it out
// of line from the run loop once that loop had two instances (with and
// without windows), 7% more instructions on max over 32-row runs.
template <class I>
SEGRED_FORCE_INLINE std::int64_t run_end_of(const I* ids, std::int64_t k, std::int64_t hi, std::int64_t s) {
    auto id = [ids](std::int64_t j) { return static_cast<std::int64_t>(ids[j]); };
    const std::int64_t probe_end = std::min(k + 8, hi);
    for (++k; k < probe_end; ++k)
        if (id(k) != s) return k;
    if (k == hi || id(k) != s) return k;
    std::int64_t step = 16;
    while (k + step <= hi && id(k + step - 1) == s) {
        k += step;
        step = std::min<std::int64_t>(step * 2, std::int64_t(1) << 12);
    }
    std::int64_t lim = std::min(k + step, hi);
    while (k < lim) {
        const std::int64_t mid = k + (lim - k) / 2;
        if (id(mid) == s)
            k = mid + 1;
        else
            lim = mid;
    }
    return k;
}

// The runs of one-column rows [k, hi) of a chunk (k starts a run), folded and
// emitted; a run going on past hi (and past the chunk, hi < n) is handed to
// tail(first_row, state) instead. Returns hi. This is the loop that one-row
// segments live in, so it keeps the state in a register, reads ids through
// a local pointer and costs one store per segment; runs of 16 rows or more
// are folded in lanes (row_fold::fold_one) after a probe of their 16th id,
// and one-row runs of consecutive ids go in batches without per-run branches.
template <bool Windows, class F, class I, class Emit, class Tail>
std::int64_t fold_one_column_runs(const I* ids, std::int64_t k, std::int64_t hi, std::int64_t n, const F& folder,
                                  Emit& emit, Tail&& tail) {
    using State = typename F::state;
    constexpr int K = one_row_batch;
    // With Windows, windows of short runs (short_run_windows.hpp) are tried
    // at the start and wherever the last window, or the last
    // short_run_window rows (or more: to the end of a run) of this loop,
    // held short runs (short_runs_after). Which folders and chunks take
    // them: windows_by_chunk below.
    std::unique_ptr<window_row[]> window;
    bool short_runs = Windows;
    for (;;) {
        while (short_runs) {
            std::int64_t runs = 0;
            const std::int64_t after = fold_short_run_window(ids, k, hi, folder, emit, window, runs);
            if (after == k) break;
            k = after;
            short_runs = runs >= short_run_min_runs;
        }
        const std::int64_t from = k, stop = Windows ? std::min(hi, k + short_run_window) : hi;
        if (k >= stop) return hi;
        while (k < stop) {
            const std::int64_t s = static_cast<std::int64_t>(ids[k]), b = k;
            State a;
            if (b + 16 <= hi && static_cast<std::int64_t>(ids[b + 15]) == s) {  // 16 rows or more: in lanes
                k = run_end_of(ids, b, hi, s);
                a = folder.fold_one(b, k);
            } else {
                a = folder.init();
                do {
                    folder.update_one(a, k);
                    ++k;
                } while (k < hi && static_cast<std::int64_t>(ids[k]) == s);
            }
            if (k == hi) {
                if (hi < n && static_cast<std::int64_t>(ids[hi]) == s) {
                    tail(b, a);
                    return hi;
                }
                emit_one(emit, s, a, k - b);
                return hi;
            }
            emit_one(emit, s, a, k - b);
            const std::int64_t next = static_cast<std::int64_t>(ids[k]);
            if (SEGRED_HOST_UNLIKELY(k - b == 1 && next == s + 1)) {
                // A one-row run, then the next id: likely more one-row runs. K of
                // them with no gap between or after them (rows k..k+K hold ids
                // next..next+K, the last inside the chunk) go in one batch. Only
                // tested here, so longer runs pay one compare for it.
                while (k + K < hi && one_id_each<K>(ids + k)) {
                    fold_one_row_batch<K>(folder, emit, static_cast<std::int64_t>(ids[k]), k);
                    k += K;
                }
                continue;
            }
            // Empty segments in the gap: the chunk writes every segment below
            // its last row's id.
            if (next > s + 1) emit_empty_gap(folder, emit, s + 1, next, static_cast<std::int64_t>(ids[hi - 1]));
        }
        if (k >= hi) return hi;
        short_runs = Windows && short_runs_after(ids, from, k);
    }
}

// Which one-column chunks take fold_one_column_runs with windows. Sums and
// means of float or double: all (masked_fold), their run loop with the
// window tests ran as fast as without. Max, min and their arg forms (whose
// short runs the offsets' loop folds in lanes too): only chunks whose first
// and last ids say their runs are short (windows_by_chunk). Windows ran
// their power-law lengths 1.4-1.7x as fast, but with the window tests in it
// their run loop ran runs of 32 and 1024 rows 5-15% slower, so other chunks
// keep a loop without them. Other folders: none; the offsets' loop folds
// their short runs row by row too, and windows ran max over random lengths
// of 1 to 3 rows at 0.63x before its short runs went into lanes.
template <class F>
constexpr bool windows_by_chunk = F::masked_extremum && !F::masked_fold;

// ids must be sorted and in [0, M) (checked, or promised by unchecked).
// F is a row folder (row_fold.hpp): fold(st, k0, k1) folds rows [k0, k1)
// into fresh states st[0..width), combine(a, b) merges two states.
template <class F, class I, class Emit>
void reduce_sorted_runs(const host_policy& p, const I* ids, std::int64_t n, std::int64_t M, std::int64_t width,
                        const F& folder, Emit&& emit) {
    using State = typename F::state;
    if (M <= 0) return;
    const std::int64_t chunk = piece_rows(width);
    const std::int64_t chunks = (n + chunk - 1) / chunk;
    auto id = [&](std::int64_t k) { return static_cast<std::int64_t>(ids[k]); };
    // Fold the run of id s that starts at row b into dst; returns the row
    // after it (or hi). A short one-column run is folded as it is scanned,
    // so one-row segments cost one pass over their row.
    auto fold_run = [&](State* dst, std::int64_t b, std::int64_t hi, std::int64_t s) {
        if (width == 1 && !(b + 16 <= hi && id(b + 15) == s)) {
            State a = folder.init();
            std::int64_t k = b;
            do {
                folder.update_one(a, k);
                ++k;
            } while (k < hi && id(k) == s);
            dst[0] = a;
            return k;
        }
        const std::int64_t k = run_end_of(ids, b, hi, s);
        folder.fold(dst, b, k);
        return k;
    };
    auto emit_empty = [&](State* st, std::int64_t s0, std::int64_t s1) {  // segments [s0, s1) have no rows
        for (std::int64_t s = s0; s < s1; ++s) {
            folder.fold(st, 0, 0);
            emit(s, st, 0);
        }
    };
    if (chunks == 0) {
        parallel_chunks(p, M, std::int64_t(1) << 12, [&](std::int64_t lo, std::int64_t hi) {
            const state_array<State> st = make_states<State>(width);
            emit_empty(st.get(), lo, hi);
        });
        return;
    }

    // Per chunk: the partial state of the run it starts with, when that run
    // began in an earlier chunk (head), and of the run it ends with, when that
    // run goes on into the next chunk (tail). A chunk inside one run has only
    // a head, which covers all of it.
    const state_array<State> head = make_states<State>(chunks * width);
    const state_array<State> tail = make_states<State>(chunks * width);
    std::vector<std::int64_t> head_end(static_cast<std::size_t>(chunks), -1);  // row after the head run
    std::vector<std::int64_t> tail_begin(static_cast<std::size_t>(chunks), -1);  // first row of the tail run
    parallel_chunks(p, chunks, 1, [&](std::int64_t c, std::int64_t) {
        const std::int64_t lo = c * chunk, hi = std::min(n, lo + chunk);
        const state_array<State> st = make_states<State>(width);
        std::int64_t k = lo;
        if (lo > 0 && id(lo) == id(lo - 1)) {
            const std::int64_t s = id(lo);
            k = fold_run(head.get() + c * width, lo, hi, s);
            head_end[static_cast<std::size_t>(c)] = k;
            if (k < hi) emit_empty(st.get(), s + 1, id(k));
        } else {
            emit_empty(st.get(), lo == 0 ? 0 : id(lo - 1) + 1, id(lo));
        }
        if (width == 1) {
            const auto keep_tail = [&](std::int64_t b, const State& a) {
                tail[static_cast<std::size_t>(c)] = a;
                tail_begin[static_cast<std::size_t>(c)] = b;
            };
            const auto runs = [&](auto windows) {
                return fold_one_column_runs<decltype(windows)::value>(ids, k, hi, n, folder, emit, keep_tail);
            };
            if constexpr (windows_by_chunk<F>)
                k = hi - k >= short_run_window && spans_short_runs(ids, k, hi) ? runs(std::true_type{})
                                                                               : runs(std::false_type{});
            else
                k = runs(std::bool_constant<F::masked_fold>{});
        }
        while (k < hi) {
            const std::int64_t s = id(k), b = k;
            k = fold_run(st.get(), b, hi, s);
            if (k == hi && hi < n && id(hi) == s) {  // goes on into the next chunk
                std::copy(st.get(), st.get() + width, tail.get() + c * width);
                tail_begin[static_cast<std::size_t>(c)] = b;
                break;
            }
            emit(s, st.get(), k - b);
            if (k < hi) emit_empty(st.get(), s + 1, id(k));
        }
        if (hi == n) emit_empty(st.get(), id(n - 1) + 1, M);
    });

    // Runs that cross chunk boundaries: their tail, then each later chunk's
    // head, in chunk order, for as long as the run goes on.
    std::vector<std::int64_t> crossing;
    for (std::int64_t c = 0; c < chunks; ++c)
        if (tail_begin[static_cast<std::size_t>(c)] >= 0) crossing.push_back(c);
    parallel_chunks(p, static_cast<std::int64_t>(crossing.size()), 1, [&](std::int64_t j, std::int64_t) {
        const std::int64_t c0 = crossing[static_cast<std::size_t>(j)];
        const std::int64_t first = tail_begin[static_cast<std::size_t>(c0)], s = id(first);
        State* acc = tail.get() + c0 * width;
        std::int64_t end = first;
        for (std::int64_t c = c0 + 1; c < chunks; ++c) {
            for (std::int64_t f = 0; f < width; ++f) folder.combine(acc[f], head[static_cast<std::size_t>(c * width + f)]);
            end = head_end[static_cast<std::size_t>(c)];
            if (end == n || end < (c + 1) * chunk || id(end) != s) break;
        }
        emit(s, acc, end - first);
    });
}

} // namespace host_detail
} // namespace segred
