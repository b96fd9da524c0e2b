// segment_reduce with sorted ids and fixed-size segments: every reducer on
// fresh random inputs against the independent reference (see
// reduce_offsets_lengths_test.cpp for what each trial varies), for one
// floating-point and one integer value type. Also long runs of one-row
// segments (the host batches them) in the sorted forms.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reduce_harness.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::form;

constexpr int kTrials = 12;

template <class P>
class ReduceSortedFixed : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceSortedFixed, segtest::value_index_pair, segtest::vi_names);

TYPED_TEST(ReduceSortedFixed, SortedIdsEveryReducer) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::sorted_ids, typename TypeParam::value, typename TypeParam::index>(segred::host,
                                                                                                        g, kTrials);
}

TYPED_TEST(ReduceSortedFixed, FixedEveryReducer) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::fixed, typename TypeParam::value, typename TypeParam::index>(segred::host, g,
                                                                                                   kTrials);
}

// Runs of one-row segments long enough for the host's batched one-row loops
// (8 segments at a time), broken by empty and longer segments and ending part
// way into a batch, at width 1 with random options (fill, counts, arg out,
// accumulate, NaN, bounds) against the reference. F is offsets or sorted_ids;
// fixed runs with a size of 1.
template <form F, class T, class I, class O, class R>
void one_row_run_trials(segref::rng& g, const R& reducer, segref::op o, int ddof) {
    std::vector<std::int64_t> len;
    const auto ones = [&len](int k) { len.insert(len.end(), static_cast<std::size_t>(k), 1); };
    ones(21);
    len.push_back(0);
    ones(9);
    len.push_back(3);
    ones(17);
    len.insert(len.end(), {0, 0});
    ones(8);
    len.push_back(20);
    ones(11);
    len.push_back(0);
    segtest::seg_input<I> s;
    s.kind = F;
    s.M = static_cast<std::int64_t>(len.size());
    s.n = segref::total(len);
    if constexpr (F == form::offsets) s.idx = segref::offsets_from_lengths<I>(len);
    if constexpr (F == form::sorted_ids) s.idx = segref::sorted_ids_from_lengths<I>(len);
    if constexpr (F == form::fixed) {
        s.fixed_size = 1;
        s.M = s.n = 100;
    }
    for (int t = 0; t < 10; ++t) {
        segtest::trial_config c = segtest::random_config<F, T, O>(g, o);
        c.width = c.out_width = 1;
        std::vector<T> values = segref::random_values<T>(g, s.n, c.kind);
        if constexpr (std::is_floating_point<T>::value) {
            if (c.nan)
                for (T& v : values)
                    if (segref::coin(g, 0.05)) v = std::numeric_limits<T>::quiet_NaN();
        }
        SCOPED_TRACE(std::string(segref::name(o)) + " trial " + std::to_string(t) + ": " + c.describe() + "; " +
                     s.describe());
        segtest::check_reduce<F, T, I, O>(segred::host, reducer, o, ddof, c, s, values, g);
        if (::testing::Test::HasFailure()) return;
    }
}

template <form F, class T, class I>
void one_row_runs_every_reducer(segref::rng& g) {
    using segref::op;
    using segtest::real_out;
    one_row_run_trials<F, T, I, T>(g, segred::sum{}, op::sum, 0);
    one_row_run_trials<F, T, I, T>(g, segred::prod{}, op::prod, 0);
    one_row_run_trials<F, T, I, T>(g, segred::min{}, op::min, 0);
    one_row_run_trials<F, T, I, T>(g, segred::max{}, op::max, 0);
    one_row_run_trials<F, T, I, T>(g, segred::mean{}, op::mean, 0);
    one_row_run_trials<F, T, I, std::int64_t>(g, segred::count{}, op::count, 0);
    one_row_run_trials<F, T, I, std::int64_t>(g, segred::argmax{}, op::argmax, 0);
    one_row_run_trials<F, T, I, T>(g, segred::any{}, op::any, 0);
    one_row_run_trials<F, T, I, real_out<T>>(g, segred::var{}, op::var, 0);
    one_row_run_trials<F, T, I, T>(g, segred::reducer(segtest::maxabs_op{}, 0.0), op::maxabs, 0);
}

TYPED_TEST(ReduceSortedFixed, OneRowSegmentRuns) {
    SEGRED_SEEDED_RNG(g);
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    one_row_runs_every_reducer<form::offsets, T, I>(g);
    one_row_runs_every_reducer<form::sorted_ids, T, I>(g);
    one_row_runs_every_reducer<form::fixed, T, I>(g);
}

} // namespace
