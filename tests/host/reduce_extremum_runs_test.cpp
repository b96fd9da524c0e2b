// max, min and their arg forms over runs long enough for the host's vector
// folds (lanes of 4 and 16, combined in registers, a range's last part
// round read whole with the next run's rows masked off; blocks of 256 rows
// for the arg forms, a block's best row found 32, then 4 rows at a time by
// vector compares; runs of 16 to 255 rows for the arg forms in one pass,
// each lane keeping its extremum and the step it grew at; runs of 1 to 15 rows in 16 lanes, those past the run
// masked, the first row equal to the lanes' extremum taken; groups of
// runs of up to 8 rows in the lanes of one register), against
// the independent sequential reference: every run length around a lane or
// block boundary, and values that test what the lanes must not change --
// ties (the arg is the lowest row), +0 against -0, infinities, runs of only
// -inf or +inf, NaN at the start, in the middle or in the scalar tail of a
// run, and values that improve on every row (each block finds a new best);
// sorted ids of short runs, folded a window of rows at a time as offsets.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reduce_harness.hpp"
#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::form;
using segtest::i64;

template <class P>
class ReduceExtremumRuns : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceExtremumRuns, segtest::float_value_pairs, segtest::vi_names);

enum class pattern { ties, nan_inside, nan_first, nan_last, only_low, only_high, ascending, descending, count };

// The values of one run of `len` rows in the given pattern.
template <class T>
void append_run(segref::rng& g, std::vector<T>& v, i64 len, pattern p) {
    const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
    const std::size_t at = v.size();
    for (i64 j = 0; j < len; ++j) {
        // Steps of 0.5 in [-3, 3]: many ties; zeros come with either sign.
        T x = static_cast<T>(0.5 * static_cast<double>(segref::uniform_int(g, -6, 6)));
        if (x == T(0) && segref::coin(g, 0.5)) x = -x;
        if (segref::coin(g, 0.02)) x = segref::coin(g, 0.5) ? inf : -inf;
        switch (p) {
        case pattern::only_low: x = -inf; break;
        case pattern::only_high: x = inf; break;
        case pattern::ascending: x = static_cast<T>(j); break;
        case pattern::descending: x = static_cast<T>(-j); break;
        default: break;
        }
        v.push_back(x);
    }
    if (len == 0) return;
    if (p == pattern::nan_inside) v[at + static_cast<std::size_t>(segref::uniform_int(g, 0, len - 1))] = nan;
    if (p == pattern::nan_first) v[at] = nan;
    if (p == pattern::nan_last) v[at + static_cast<std::size_t>(len - 1)] = nan;
}

// Runs of every length near 4, 16 and 256 rows, and between 16 and 256 with
// every remainder of 8 (the arg forms' one-pass lanes fold the rows past
// their whole steps one at a time), each pattern in turn.
template <class T, class I>
void make_runs(segref::rng& g, segtest::seg_input<I>& s, std::vector<T>& v) {
    const std::vector<i64> lengths = {0,  1,  3,  4,  5,   15,  16,  17,  19,  23,  24,  31,  32,  33,  39, 63,
                                      64, 65, 67, 100, 135, 254, 255, 256, 257, 259, 300, 511, 512, 513, 777, 1030};
    std::vector<i64> len;
    int p = 0;
    for (int round = 0; round < 2; ++round)
        for (i64 L : lengths) {
            append_run(g, v, L, static_cast<pattern>(p));
            len.push_back(L);
            p = (p + 1) % static_cast<int>(pattern::count);
        }
    s.M = static_cast<i64>(len.size());
    s.n = static_cast<i64>(v.size());
    s.idx = s.kind == form::sorted_ids ? segref::sorted_ids_from_lengths<I>(len) : segref::offsets_from_lengths<I>(len);
}

template <form F, class T, class I>
void check_all_extrema(segref::rng& g) {
    using segref::op;
    SCOPED_TRACE(segtest::form_name(F));
    segtest::seg_input<I> s;
    s.kind = F;
    std::vector<T> v;
    make_runs<T, I>(g, s, v);
    segtest::trial_config c;
    c.fill_mode = segref::fill::nan;
    segtest::check_reduce<F, T, I, T>(segred::host, segred::max{}, op::max, 0, c, s, v, g);
    segtest::check_reduce<F, T, I, T>(segred::host, segred::min{}, op::min, 0, c, s, v, g);
    c.arg = true;
    segtest::check_reduce<F, T, I, T>(segred::host, segred::max{}, op::max, 0, c, s, v, g);
    segtest::check_reduce<F, T, I, T>(segred::host, segred::min{}, op::min, 0, c, s, v, g);
    c.arg = false;
    c.fill_mode = segref::fill::zero;  // an empty segment's arg is -1 whatever the fill
    segtest::check_reduce<F, T, I, i64>(segred::host, segred::argmax{}, op::argmax, 0, c, s, v, g);
    segtest::check_reduce<F, T, I, i64>(segred::host, segred::argmin{}, op::argmin, 0, c, s, v, g);
}

TYPED_TEST(ReduceExtremumRuns, EveryLengthNearALaneOrBlock) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (int trial = 0; trial < 4 && !::testing::Test::HasFailure(); ++trial) {
        check_all_extrema<form::offsets, T, I>(g);
        check_all_extrema<form::sorted_ids, T, I>(g);
    }
}

// Runs of 0 to 8 rows (power-law-like: groups of four floats or two
// doubles fold in the lanes of one register, rows past a run masked, the
// first row equal to its extremum taken), mostly of tied values with +0 and
// -0, now and then a run of another pattern (NaN first, inside or last,
// only infinities, rising or falling) or a longer one that breaks a group
// (9 to 40 rows), on one to three threads; the plain forms with a fill
// value, an arg out, counts and an accumulated out. `runs` runs; with
// `long_stretch`, 2500 runs of 32 rows a third of the way in.
template <form F, class T, class I>
void check_short_run_groups(segref::rng& g, const segred::host_policy& pol, int runs, bool long_stretch) {
    using segref::op;
    SCOPED_TRACE(segtest::form_name(F));
    segtest::seg_input<I> s;
    s.kind = F;
    std::vector<T> v;
    std::vector<i64> len;
    for (int k = 0; k < runs; ++k) {
        i64 L = segref::coin(g, 0.05) ? segref::uniform_int(g, 9, 40) : segref::uniform_int(g, 0, 8);
        if (long_stretch && k >= runs / 3 && k < runs / 3 + 2500) L = 32;
        const pattern p = segref::coin(g, 0.9) ? pattern::ties
                                               : static_cast<pattern>(segref::uniform_int(g, 0, int(pattern::count) - 1));
        append_run(g, v, L, p);
        len.push_back(L);
    }
    s.M = static_cast<i64>(len.size());
    s.n = static_cast<i64>(v.size());
    s.idx = F == form::sorted_ids ? segref::sorted_ids_from_lengths<I>(len) : segref::offsets_from_lengths<I>(len);
    segtest::trial_config c;
    c.fill_mode = segref::fill::nan;
    segtest::check_reduce<F, T, I, T>(pol, segred::max{}, op::max, 0, c, s, v, g);
    segtest::check_reduce<F, T, I, T>(pol, segred::min{}, op::min, 0, c, s, v, g);
    c.fill_mode = segref::fill::zero;
    segtest::check_reduce<F, T, I, i64>(pol, segred::argmax{}, op::argmax, 0, c, s, v, g);
    segtest::check_reduce<F, T, I, i64>(pol, segred::argmin{}, op::argmin, 0, c, s, v, g);
    c.arg = true;
    c.counts = true;
    segtest::check_reduce<F, T, I, T>(pol, segred::max{}, op::max, 0, c, s, v, g);
    c.arg = false;
    c.counts = false;
    c.fill_mode = segref::fill::constant;
    c.fill_value = 7.5;
    c.accumulate = true;
    segtest::check_reduce<F, T, I, T>(pol, segred::min{}, op::min, 0, c, s, v, g);
}

// fn(policy) on one, two and three threads, each traced.
template <class Fn>
void on_thread_counts(Fn&& fn) {
    for (int threads : {1, 2, 3}) {
        SCOPED_TRACE("threads " + std::to_string(threads));
        fn(segred::host.threads(threads));
    }
}

TYPED_TEST(ReduceExtremumRuns, ShortRunsInGroups) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    on_thread_counts([&](const segred::host_policy& pol) {
        for (int trial = 0; trial < 3 && !::testing::Test::HasFailure(); ++trial)
            check_short_run_groups<form::offsets, T, I>(g, pol, 6000, false);
    });
}

// The same runs as sorted ids, over about 270000 rows (five chunks of
// 65536): chunks whose first and last ids span short runs fold them a
// window of 2048 rows at a time through the offsets' loop, the chunk of
// 32-row runs keeps the run loop, and runs cross the chunk boundaries.
TYPED_TEST(ReduceExtremumRuns, SortedIdShortRunWindows) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    on_thread_counts([&](const segred::host_policy& pol) {
        for (int trial = 0; trial < 2 && !::testing::Test::HasFailure(); ++trial)
            check_short_run_groups<form::sorted_ids, T, I>(g, pol, 40000, true);
    });
}

// One segment cut into several pieces (over 2^16 rows): the best value sits
// in a late piece, tied with +0/-0 and with a NaN or not.
TYPED_TEST(ReduceExtremumRuns, GiantSegmentAcrossPieces) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    using segref::op;
    SEGRED_SEEDED_RNG(g);
    const i64 n = 3 * 65536 + 1001;
    for (bool with_nan : {false, true}) {
        std::vector<T> v(static_cast<std::size_t>(n));
        for (T& x : v) x = static_cast<T>(-segref::uniform_int(g, 1, 1000));
        for (i64 r : {i64(140000), i64(140001), i64(150000), i64(190000)}) v[static_cast<std::size_t>(r)] = T(0);
        v[140000] = -v[140000];  // -0 first: still the first row of the tie
        if (with_nan) v[static_cast<std::size_t>(n - 3)] = std::numeric_limits<T>::quiet_NaN();
        segtest::seg_input<I> s;
        s.kind = form::fixed;
        s.M = 1;
        s.n = n;
        s.fixed_size = n;
        segtest::trial_config c;
        segtest::check_reduce<form::fixed, T, I, T>(segred::host, segred::max{}, op::max, 0, c, s, v, g);
        segtest::check_reduce<form::fixed, T, I, i64>(segred::host, segred::argmax{}, op::argmax, 0, c, s, v, g);
        c.arg = true;
        segtest::check_reduce<form::fixed, T, I, T>(segred::host, segred::max{}, op::max, 0, c, s, v, g);
    }
}

// Unsorted ids (the extremum, then its first row, on the host): the runs
// above, each now a segment whose rows are shuffled among all the others',
// so a segment's tied and NaN rows sit far apart and in any chunk of rows.
// With `many`, thousands of one-, two-row and empty segments follow (more
// segments than an eighth of the rows: the first-row pass then splits the
// ids, not the rows, between threads). With `dropped`, 1% of the rows carry
// an id out of range (-1 or M) under bounds_policy::drop.
template <class T, class I>
void check_unsorted_extrema(segref::rng& g, const segred::host_policy& pol, bool many, bool dropped) {
    using segref::op;
    SCOPED_TRACE(std::string(many ? "many segments" : "few segments") + (dropped ? ", ids dropped" : ""));
    segtest::seg_input<I> runs;
    runs.kind = form::offsets;
    std::vector<T> v;
    make_runs<T, I>(g, runs, v);
    std::vector<I> id(v.size());
    for (i64 k = 0; k < runs.M; ++k)
        for (i64 r = static_cast<i64>(runs.idx[static_cast<std::size_t>(k)]); r < static_cast<i64>(runs.idx[static_cast<std::size_t>(k + 1)]); ++r)
            id[static_cast<std::size_t>(r)] = static_cast<I>(k);
    i64 M = runs.M;
    if (many) {
        for (int k = 0; k < 4000; ++k) {
            const i64 len = segref::uniform_int(g, 0, 2);
            for (i64 j = 0; j < len; ++j) {
                v.push_back(static_cast<T>(segref::uniform_int(g, -2, 2)));
                id.push_back(static_cast<I>(M));
            }
            ++M;
        }
    }
    for (i64 i = static_cast<i64>(v.size()) - 1; i > 0; --i) {  // shuffle rows, each keeping its id
        const auto j = static_cast<std::size_t>(segref::uniform_int(g, 0, i));
        std::swap(v[static_cast<std::size_t>(i)], v[j]);
        std::swap(id[static_cast<std::size_t>(i)], id[j]);
    }
    if (dropped)
        for (I& k : id)
            if (segref::coin(g, 0.01)) k = static_cast<I>(segref::coin(g, 0.5) ? -1 : M);
    segtest::seg_input<I> s;
    s.kind = form::ids;
    s.n = static_cast<i64>(v.size());
    s.M = M;
    s.idx = id;
    segtest::trial_config c;
    c.bounds = dropped ? segred::bounds_policy::drop : segred::bounds_policy::check;
    c.fill_mode = segref::fill::nan;
    c.counts = true;
    segtest::check_reduce<form::ids, T, I, T>(pol, segred::max{}, op::max, 0, c, s, v, g);
    c.arg = true;
    c.counts = false;
    segtest::check_reduce<form::ids, T, I, T>(pol, segred::max{}, op::max, 0, c, s, v, g);
    segtest::check_reduce<form::ids, T, I, T>(pol, segred::min{}, op::min, 0, c, s, v, g);
    c.arg = false;
    c.fill_mode = segref::fill::zero;
    segtest::check_reduce<form::ids, T, I, i64>(pol, segred::argmax{}, op::argmax, 0, c, s, v, g);
    c.counts = true;
    segtest::check_reduce<form::ids, T, I, i64>(pol, segred::argmin{}, op::argmin, 0, c, s, v, g);
    // Plain max and min with a fill and no counts: the segments still at
    // their initial state after the scatter (empty ones, and runs of only
    // -inf for max or +inf for min) are told apart afterwards
    // (extremum_scatter.hpp), with a zero fill and with a constant one
    // into an accumulated out.
    c.counts = false;
    segtest::check_reduce<form::ids, T, I, T>(pol, segred::max{}, op::max, 0, c, s, v, g);
    segtest::check_reduce<form::ids, T, I, T>(pol, segred::min{}, op::min, 0, c, s, v, g);
    c.fill_mode = segref::fill::constant;
    c.fill_value = 7.5;
    c.accumulate = true;
    segtest::check_reduce<form::ids, T, I, T>(pol, segred::max{}, op::max, 0, c, s, v, g);
    segtest::check_reduce<form::ids, T, I, T>(pol, segred::min{}, op::min, 0, c, s, v, g);
}

TYPED_TEST(ReduceExtremumRuns, UnsortedIdsFirstRow) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    on_thread_counts([&](const segred::host_policy& pol) {
        for (bool many : {false, true})
            for (bool dropped : {false, true}) check_unsorted_extrema<T, I>(g, pol, many, dropped);
    });
}

// Integer values at both ends of their type, tied many times over, into
// unsorted ids: the first-row pass tests each row against its segment's
// extremum with one compare, and rows of other threads' ids (owned ranges,
// where there are more segments than an eighth of the rows) and dropped
// rows against the type's top (bottom for a minimum), which the top's own
// rows pass and must still not record.
template <class I>
void check_unsorted_integer_extrema(segref::rng& g, const segred::host_policy& pol, i64 M, i64 n, bool dropped) {
    using segref::op;
    using T = std::int32_t;
    SCOPED_TRACE("M = " + std::to_string(M) + ", n = " + std::to_string(n) + (dropped ? ", ids dropped" : ""));
    const T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
    const std::vector<T> picks = {lo, T(lo + 1), T(-1), T(0), T(1), T(hi - 1), hi};
    segtest::seg_input<I> s;
    s.kind = form::ids;
    s.M = M;
    s.n = n;
    s.idx.resize(static_cast<std::size_t>(n));
    std::vector<T> v(static_cast<std::size_t>(n));
    for (i64 i = 0; i < n; ++i) {
        v[static_cast<std::size_t>(i)] = picks[static_cast<std::size_t>(segref::uniform_int(g, 0, 6))];
        i64 k = segref::uniform_int(g, 0, M - 1);
        if (dropped && segref::coin(g, 0.01)) k = segref::coin(g, 0.5) ? -1 : M;
        s.idx[static_cast<std::size_t>(i)] = static_cast<I>(k);
    }
    segtest::trial_config c;
    c.bounds = dropped ? segred::bounds_policy::drop : segred::bounds_policy::check;
    segtest::check_reduce<form::ids, T, I, i64>(pol, segred::argmax{}, op::argmax, 0, c, s, v, g);
    segtest::check_reduce<form::ids, T, I, i64>(pol, segred::argmin{}, op::argmin, 0, c, s, v, g);
    c.arg = true;
    c.counts = true;
    segtest::check_reduce<form::ids, T, I, T>(pol, segred::max{}, op::max, 0, c, s, v, g);
    segtest::check_reduce<form::ids, T, I, T>(pol, segred::min{}, op::min, 0, c, s, v, g);
}

TEST(ReduceExtremumRunsInt, UnsortedIdsIntegerEndsFirstRow) {
    SEGRED_SEEDED_RNG(g);
    on_thread_counts([&](const segred::host_policy& pol) {
        for (bool dropped : {false, true}) {
            check_unsorted_integer_extrema<std::int32_t>(g, pol, 50, 12007, dropped);    // rows split between threads
            check_unsorted_integer_extrema<std::int64_t>(g, pol, 3001, 12007, dropped);  // ids split (owned ranges)
        }
    });
}

} // namespace
