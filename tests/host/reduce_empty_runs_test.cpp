// Runs of empty segments between non-empty ones, on the host. Where each
// output is one plain store, a run of empty segments is written 32 at a
// time (segment_loops.hpp: emit_empty_run for offsets, lengths and the
// windows of sorted ids' short runs, emit_empty_gap for the gaps between
// sorted ids' runs): the 32 segments from the run's first are written
// empty, the run's length is told by vector compares of 32 bounds, and
// the segments of the block past the run are written again when the loop
// reaches them. A block never reaches past the segments its chunk writes.
//
// Runs of 1 to 200 empty segments (31, 32, 33, 63, 64 and 65: a block's
// edges), leading and trailing runs, runs that end a chunk of segments or
// the input, non-empty segments short (lane-folded) and long between them;
// offsets, lengths and sorted ids; sums and means with a constant fill,
// max with a NaN fill, and the same with counts or into an accumulated out
// (segment by segment, no blocks); 1 to 3 threads; against the reference.
#include <cstdint>
#include <initializer_list>
#include <string>
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
class ReduceEmptyRuns : public ::testing::Test {};
using empty_run_pairs =
    ::testing::Types<segtest::vi<float, std::int32_t>, segtest::vi<double, std::int32_t>, segtest::vi<double, std::int64_t>>;
TYPED_TEST_SUITE(ReduceEmptyRuns, empty_run_pairs, segtest::vi_names);

// Lengths of M segments: runs of empty segments (lengths near a block's
// edges, or up to 200) between non-empty segments of 1 to `longest` rows;
// the first and last segments empty where `edges_empty`.
std::vector<i64> empty_run_lengths(segref::rng& g, i64 M, i64 longest, bool edges_empty) {
    static const i64 run_sizes[] = {1, 2, 3, 5, 9, 31, 32, 33, 63, 64, 65};
    std::vector<i64> len;
    len.reserve(static_cast<std::size_t>(M));
    bool empty_next = edges_empty;
    while (static_cast<i64>(len.size()) < M) {
        if (empty_next) {
            const i64 pick = segref::uniform_int(g, 0, 12);
            const i64 run = pick < 11 ? run_sizes[pick] : segref::uniform_int(g, 1, 200);
            for (i64 j = 0; j < run && static_cast<i64>(len.size()) < M; ++j) len.push_back(0);
        } else {
            len.push_back(segref::uniform_int(g, 1, longest));
        }
        empty_next = !empty_next || segref::coin(g, 0.2);
    }
    if (edges_empty) len.back() = 0;
    return len;
}

template <class I>
segtest::seg_input<I> as_form(form f, const std::vector<i64>& len) {
    segtest::seg_input<I> s;
    s.kind = f;
    s.M = static_cast<i64>(len.size());
    s.n = segref::total(len);
    if (f == form::offsets) s.idx = segref::offsets_from_lengths<I>(len);
    else if (f == form::lengths) s.idx.assign(len.begin(), len.end());
    else s.idx = segref::sorted_ids_from_lengths<I>(len);
    return s;
}

// Each writer (plain stores; counts; an accumulated out) for sums, means and
// max over segmentation s, in form F, with `threads` threads.
template <form F, class T, class I>
void check_writers(segref::rng& g, const segtest::seg_input<I>& s, const std::vector<T>& values, int threads) {
    const auto pol = segred::host.threads(threads);
    for (int writer = 0; writer < 3 && !::testing::Test::HasFailure(); ++writer) {
        segtest::trial_config c;
        c.bounds = segred::bounds_policy::check;
        c.counts = writer == 1;
        c.accumulate = writer == 2;
        c.fill_mode = segref::fill::constant;
        c.fill_value = -2.5;
        SCOPED_TRACE(::testing::Message() << "threads " << threads << ", " << c.describe());
        segtest::check_reduce<F, T, I, T>(pol, segred::sum{}, segref::op::sum, 0, c, s, values, g);
        segtest::check_reduce<F, T, I, T>(pol, segred::mean{}, segref::op::mean, 0, c, s, values, g);
        c.fill_mode = segref::fill::nan;
        segtest::check_reduce<F, T, I, T>(pol, segred::max{}, segref::op::max, 0, c, s, values, g);
    }
}

template <class T, class I>
void check_every_form(segref::rng& g, const std::vector<i64>& len) {
    const std::vector<T> values =
        segref::random_values<T>(g, segref::total(len), segref::value_kind::general);
    for (const form f : {form::offsets, form::lengths, form::sorted_ids}) {
        const segtest::seg_input<I> s = as_form<I>(f, len);
        SCOPED_TRACE(s.describe());
        for (int threads : {1, 2, 3}) {
            if (f == form::offsets) check_writers<form::offsets, T, I>(g, s, values, threads);
            else if (f == form::lengths) check_writers<form::lengths, T, I>(g, s, values, threads);
            else check_writers<form::sorted_ids, T, I>(g, s, values, threads);
            if (::testing::Test::HasFailure()) return;
        }
    }
}

TYPED_TEST(ReduceEmptyRuns, RunsAroundABlock) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    // Few segments: every block near the end of the input (fewer than 32
    // segments left); then runs between short (lane-folded, up to 8 rows)
    // and long non-empty segments, over several chunks of segments.
    for (const i64 M : {1, 2, 31, 32, 33, 40, 97}) {
        for (const bool edges_empty : {true, false}) {
            SCOPED_TRACE(::testing::Message() << "M " << M << (edges_empty ? ", first and last empty" : ""));
            check_every_form<T, I>(g, empty_run_lengths(g, M, 20, edges_empty));
            if (::testing::Test::HasFailure()) return;
        }
    }
    for (const i64 longest : {1, 8, 60}) {
        SCOPED_TRACE(::testing::Message() << "non-empty segments of 1 to " << longest << " rows");
        check_every_form<T, I>(g, empty_run_lengths(g, 60000, longest, true));
        if (::testing::Test::HasFailure()) return;
    }
}

// Exactly 32 empty segments, then exactly 31 and 33, from every position
// of a short input: the run ends on, before and after a block's last
// segment, and blocks meet the end of the input at every offset.
TYPED_TEST(ReduceEmptyRuns, RunOfABlockAtEveryPosition) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (const i64 run : {31, 32, 33}) {
        for (i64 at = 0; at <= 40 && !::testing::Test::HasFailure(); at += 3) {
            SCOPED_TRACE(::testing::Message() << run << " empty segments from segment " << at);
            std::vector<i64> len(static_cast<std::size_t>(at), 2);
            len.insert(len.end(), static_cast<std::size_t>(run), 0);
            for (i64 j = 0; j < 40 - at; ++j) len.push_back(1 + j % 3);
            check_every_form<T, I>(g, len);
        }
    }
}

} // namespace
