// segment_reduce with sorted ids and fixed-size segments: every reducer on
// fresh random inputs against the independent reference (see
// reduce_offsets_lengths_test.cpp for what each trial varies), for one
// floating-point and one integer value type.
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

} // namespace
