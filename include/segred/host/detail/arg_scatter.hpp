// segred/host/detail/arg_scatter.hpp -- unsorted argmin / argmax (and min /
// max with an arg out) of one column: the extremum first, then its first row.
//
// Folding (value, row) states row by row, as the other reducers fold theirs,
// reads a 16-byte state (float) behind a data-dependent branch for every
// row; it ran at a third of max's speed and worse once the states left the
// cache. Instead:
//  1. the plain extremum scatter (scatter.hpp; 4-byte states for float, no
//     branch) gives each segment's winning value, NaN-propagating: exactly
//     the value the arg fold would keep;
//  2. one pass over the rows finds each segment's first row whose value
//     equals it (or is NaN: a segment holding a NaN has a NaN winner).
// That is the sequential fold's answer -- the best value's lowest row, ties
// (-0 and +0 included) going to the lowest row -- on any thread count.
// A segment with rows always finds one, so "no row found" marks the empty
// segments and no tally is kept unless counts are asked for.
//
// Only while the winners fit in cache (arg_scatter_applies): beyond, the
// second pass misses the cache on every row as the first does, and the
// (value, row) fold -- partitioned by id range on several threads -- is
// faster (2-thread M = 2^20 floats: 15 ns a row against 22; one thread
// breaks even near 2^21).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../../core/numeric.hpp"
#include "../../core/reducers.hpp"
#include "parallel.hpp"
#include "row_fold.hpp"
#include "scatter.hpp"
#include "segment_loops.hpp"
#include "write_segment.hpp"  // SEGRED_HOST_UNLIKELY

namespace segred {
namespace host_detail {

// Whether a row's value v may match its segment's winner, tested against
// the segment's sieve value w (first_matching_rows): every row of a segment
// has v <= its maximum (v >= its minimum) or is NaN, so !(v < w) holds only
// where v equals the maximum or is NaN. A NaN winner's sieve is +inf (-inf),
// which its NaN rows pass and its other rows only at +inf (-inf). One
// compare, no test for NaN: the few rows that pass are checked exactly.
template <bool Max, class C>
inline bool may_match(const C& v, const C& w) {
    return Max ? !(v < w) : !(w < v);
}

// v == b, or v is NaN: in a segment's own rows a NaN value means a NaN
// winner, so the one test serves both.
template <class C>
inline bool matches(const C& v, const C& b) {
    return v == b || detail::is_nan(v);
}

// f[k] = the first row i in [a, b) of slot k = slot_of(i) whose value
// matches best[k], for each k whose f[k] is still no_row. Rows of no slot
// here (other owners' ids, dropped rows) have slot -1, whose sieve value
// (sieve[-1]) only the top and NaN pass, and never record. Each row takes
// one compare against its sieve value (may_match), and only the rows that
// pass are checked exactly. With Grouped, rows go 8 at a time through the
// compare with no branch, and only a group where one passes is checked row
// by row: where a segment has many rows, so that few groups hold a match.
// 2-core AMD EPYC VM, 2^24 rows into 16384 float maxima: 12.0 ms for the
// pass grouped, 13.3 a row at a time, 21.1 with the exact test and its two
// branches on every row; into 2^18 and 2^19 maxima (a match in about one
// group of 8 in 5) a row at a time was 1.1x faster than grouped.
template <bool Grouped, bool Max, class C, class T, class SlotOf>
void first_matches_in(const T* x, std::int64_t stride, std::int64_t a, std::int64_t b, const C* best,
                      const C* sieve, const SlotOf& slot_of, std::int64_t* f) {
    auto value = [&](std::int64_t i) { return detail::convert<C>(x[i * stride]); };
    // The sieve first: most rows of a group that passes do not, and their
    // sieve values are in cache, where f and best may not be.
    auto record = [&](std::int64_t i, std::int64_t k) {
        const C v = value(i);
        if (k >= 0 && may_match<Max>(v, sieve[k]) && matches(v, best[k]) && f[k] == detail::no_row) f[k] = i;
    };
    std::int64_t i = a;
    if constexpr (Grouped) {
        constexpr int group = 8;
        for (; i + group <= b; i += group) {
            unsigned any = 0;
            for (int j = 0; j < group; ++j)
                any |= static_cast<unsigned>(may_match<Max>(value(i + j), sieve[slot_of(i + j)]));
            if (SEGRED_HOST_UNLIKELY(any != 0))
                for (int j = 0; j < group; ++j) record(i + j, slot_of(i + j));
        }
    }
    for (; i < b; ++i) record(i, slot_of(i));
}

// Rows a segment, on average, from which first_matches_in groups its rows.
constexpr std::int64_t grouped_match_rows = 64;

// first_matches_in, grouped or not by rows a segment (n rows, M segments).
template <bool Max, class C, class T, class SlotOf>
void first_matches(std::int64_t n, std::int64_t M, const T* x, std::int64_t stride, std::int64_t a, std::int64_t b,
                   const C* best, const C* sieve, const SlotOf& slot_of, std::int64_t* f) {
    if (n >= grouped_match_rows * M)
        first_matches_in<true, Max>(x, stride, a, b, best, sieve, slot_of, f);
    else
        first_matches_in<false, Max>(x, stride, a, b, best, sieve, slot_of, f);
}

// first[k] = the first row i in [0, n) with id_of(i) == k whose value
// matches best[k] (equal, or NaN), or detail::no_row; best holds maxima
// (Max) or minima.
//
// Rows are cut into one chunk per thread, each recording its first matches
// in a private array; a segment's answer is then the first chunk's that has
// one. With many segments (more than n / 8), private arrays would cost more
// than the rows, so each thread owns a range of ids instead and reads every
// row, sending other threads' rows to a spare slot that never records: no
// branch on ownership.
template <bool Max, class C, class T, class IdOf>
void first_matching_rows(const host_policy& p, rows_view<const T> values, std::int64_t M, const C* best,
                         const IdOf& id_of, std::int64_t* first) {
    const std::int64_t n = values.n, stride = values.width;
    const T* const x = values.data;
    // The sieve: the winners, NaN ones as the top (+inf for a maximum), one
    // slot ahead of them for the rows of no slot (-1), at the top too.
    const C top = Max ? detail::highest<C>() : detail::lowest<C>();
    std::vector<C> sieve_slots(static_cast<std::size_t>(M + 1), top);
    for (std::int64_t s = 0; s < M; ++s)
        if (!detail::is_nan(best[s])) sieve_slots[static_cast<std::size_t>(s + 1)] = best[s];
    const C* const sieve = sieve_slots.data() + 1;
    const std::int64_t threads = thread_count(p);
    if (threads == 1 || M <= n / 8) {
        const std::int64_t chunks = threads;
        std::vector<std::int64_t> own(static_cast<std::size_t>((chunks - 1) * M));
        parallel_blocks(p, chunks, [&](std::int64_t t) {
            std::int64_t* f = t == 0 ? first : own.data() + (t - 1) * M;
            std::fill(f, f + M, detail::no_row);
            // A row's slot is its id: in [0, M), or -1 where dropped.
            first_matches<Max>(n, M, x, stride, n * t / chunks, n * (t + 1) / chunks, best, sieve, id_of, f);
        });
        if (chunks > 1)
            parallel_chunks(p, M, std::int64_t(1) << 14, [&](std::int64_t lo, std::int64_t hi) {
                for (std::int64_t s = lo; s < hi; ++s)
                    for (std::int64_t t = 1; t < chunks && first[s] == detail::no_row; ++t)
                        first[s] = own[static_cast<std::size_t>((t - 1) * M + s)];
            });
        return;
    }
    // Owned ranges, ends rounded to 64 ids so no two threads write one cache
    // line of `first`.
    const std::int64_t owners = std::max<std::int64_t>(1, std::min<std::int64_t>(threads, M / 64));
    auto range_lo = [&](std::int64_t t) { return t == owners ? M : (M * t / owners) / 64 * 64; };
    parallel_blocks(p, owners, [&](std::int64_t t) {
        const std::int64_t lo = range_lo(t), own = range_lo(t + 1) - lo;
        std::fill(first + lo, first + lo + own, detail::no_row);
        first_matches<Max>(n, M, x, stride, 0, n, best, sieve,
                           [&](std::int64_t i) { return owned_or(id_of(i), lo, own, -1); }, first);
    });
}

// Whether arg_scatter should run: M winners of type C within
// partition_bytes (the cache slice the partitioned scatter aims at), or
// twice that on one thread, which has no partitioned fold to fall back on.
template <class C>
bool arg_scatter_applies(const host_policy& p, std::int64_t M) {
    const std::int64_t bytes = M * static_cast<std::int64_t>(sizeof(C));
    return bytes <= (thread_count(p) == 1 ? 2 : 1) * partition_bytes;
}

// The arg reducer R over unsorted ids, one output column: see the top of
// this file. emit(s, st, rows) as for scatter_segments.
template <class T, class R, class IdOf, class Emit>
void arg_scatter(const host_policy& p, rows_view<const T> values, std::int64_t M, const R& r, bool counts,
                 const IdOf& id_of, const Emit& emit) {
    using C = detail::compare_t<T>;
    using arg_fold = row_fold<T, R>;
    static_assert(arg_fold::arg_extremum != 0, "arg_scatter takes argmin, argmax and min/max with an arg out");
    using plain = detail::extremum<(arg_fold::arg_extremum > 0)>;
    static_assert(std::is_same<state_t<plain, T>, C>::value, "the extremum's state is the arg state's value");
    if (M <= 0) return;
    const plain extremum{};
    const auto folder = make_row_fold(extremum, values, 1);
    std::vector<C> best(static_cast<std::size_t>(M));
    std::vector<std::int64_t> rows(counts ? static_cast<std::size_t>(M) : 0);
    auto keep = [&](std::int64_t s, const C* st, std::int64_t k) {
        best[static_cast<std::size_t>(s)] = st[0];
        if (counts) rows[static_cast<std::size_t>(s)] = k;
    };
    if (counts)
        scatter_segments<row_counts>(p, values.n, M, 1, folder, id_of, keep);
    else  // every segment starts at the extremum's initial state, as `direct` asks
        scatter_segments<no_tally>(p, values.n, M, 1, folder, id_of, keep, best.data());

    std::vector<std::int64_t> first(static_cast<std::size_t>(M));
    first_matching_rows<(arg_fold::arg_extremum > 0)>(p, values, M, best.data(), id_of, first.data());
    parallel_chunks(p, M, segments_per_chunk, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t s = lo; s < hi; ++s) {
            const std::int64_t i = first[static_cast<std::size_t>(s)];
            state_t<R, T> st = r.template init<T>();
            if (i != detail::no_row) st = {detail::convert<C>(values.data[i * values.width]), i};
            const std::int64_t k = i == detail::no_row ? 0 : counts ? rows[static_cast<std::size_t>(s)] : 1;
            emit(s, &st, k);
        }
    });
}

} // namespace host_detail
} // namespace segred
