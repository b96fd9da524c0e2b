// segment_reduce with offsets and lengths: every reducer on fresh random
// inputs (random M, empty segments, widths 1 and 3, every fill mode,
// accumulate, counts, arg out, NaN, bounds check / drop / unchecked) against
// the independent reference. Offsets run for every value type; lengths for
// one floating-point and one integer type (the reducers are shared by all
// forms, so this keeps compile time down without losing a code path).
#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reduce_harness.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::form;

constexpr int kTrials = 12;

template <class P>
class ReduceOffsets : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceOffsets, segtest::value_index_diagonal, segtest::vi_names);

TYPED_TEST(ReduceOffsets, EveryReducer) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::offsets, typename TypeParam::value, typename TypeParam::index>(segred::host, g,
                                                                                                     kTrials);
}

template <class P>
class ReduceLengths : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceLengths, segtest::value_index_pair, segtest::vi_names);

TYPED_TEST(ReduceLengths, EveryReducer) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::lengths, typename TypeParam::value, typename TypeParam::index>(segred::host, g,
                                                                                                     kTrials);
}

} // namespace
