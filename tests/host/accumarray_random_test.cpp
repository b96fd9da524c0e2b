// accumarray / segment_reduce with unsorted ids (every value type) and N-D
// subscripts (one floating-point and one integer value type): every reducer
// on fresh random inputs against the independent reference; half of the
// trials call accumarray, half segment_reduce.
#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reduce_harness.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::form;

constexpr int kTrials = 12;

template <class P>
class AccumarrayIds : public ::testing::Test {};
TYPED_TEST_SUITE(AccumarrayIds, segtest::value_index_diagonal, segtest::vi_names);

TYPED_TEST(AccumarrayIds, EveryReducer) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::ids, typename TypeParam::value, typename TypeParam::index>(segred::host, g,
                                                                                                 kTrials);
}

template <class P>
class AccumarraySubscripts : public ::testing::Test {};
TYPED_TEST_SUITE(AccumarraySubscripts, segtest::value_index_pair, segtest::vi_names);

TYPED_TEST(AccumarraySubscripts, EveryReducer) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::subscripts, typename TypeParam::value, typename TypeParam::index>(segred::host,
                                                                                                        g, kTrials);
}

} // namespace
