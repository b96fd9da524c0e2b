// Large inputs on the host at 1 and 2 threads against the reference (the
// shapes are described in common/large_shapes.hpp).
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/large_shapes.hpp"

namespace {

using segtest::form;
using segtest::i64;

template <class P>
class ReduceLargeShapes : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceLargeShapes, segtest::float_value_pairs, segtest::vi_names);

const std::vector<segred::host_policy> policies = {segred::host.threads(1), segred::host.threads(2)};

TYPED_TEST(ReduceLargeShapes, UnsortedIdsFewSegmentsBlocked) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    segtest::large_every_state<form::ids, T, I>(g, policies, segtest::host_memory{}, [&](bool corrupt) {
        return segtest::large_unsorted<I>(g, 300000, 29, corrupt);
    });
}

// Few segments past 2048: blocks of up to 32 rows a state while at least
// 16 blocks remain (32 M rows at M = 2100, n / 16 at M = 8200).
TYPED_TEST(ReduceLargeShapes, UnsortedIdsBlocksOfUpTo32RowsAState) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (i64 M : {2100, 8200})
        segtest::large_every_state<form::ids, T, I>(g, policies, segtest::host_memory{}, [&](bool corrupt) {
            return segtest::large_unsorted<I>(g, 1200000, M, corrupt);
        });
}

// Many segments: owned id ranges while the states fit in 2 MB of cache,
// partitioned by id range (stably, values carried along) beyond.
TYPED_TEST(ReduceLargeShapes, UnsortedIdsManySegments) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (i64 M : {70001, 130, 600001})
        segtest::large_every_state<form::ids, T, I>(g, policies, segtest::host_memory{}, [&](bool corrupt) {
            return segtest::large_unsorted<I>(g, M == 130 ? 1000 : M == 600001 ? 300000 : 200000, M, corrupt);
        });
}

// 32 partitions of five fp32 columns (16384 ids each; the partitioned
// scatter at two threads: one column at that scale is tested in
// partitioned_scatter_test.cpp).
TYPED_TEST(ReduceLargeShapes, UnsortedIdsWidePartitioned) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    segtest::large_every_state<form::ids, T, I>(
        g, policies, segtest::host_memory{},
        [&](bool corrupt) { return segtest::large_unsorted<I>(g, 100000, 520000, corrupt); }, 5);
}

// Ids that mostly repeat their predecessor: the owned-range loop folds runs
// in registers (one-column sums and means into four partials a run; one
// owner when the output takes the sums directly).
TYPED_TEST(ReduceLargeShapes, UnsortedIdsInRuns) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    segtest::large_every_state<form::ids, T, I>(g, policies, segtest::host_memory{}, [&](bool corrupt) {
        return segtest::large_repeating<I>(g, 300000, 600001, corrupt);
    });
}

TYPED_TEST(ReduceLargeShapes, SubscriptsBothShapes) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (std::vector<i64> shape : {std::vector<i64>{7, 9}, std::vector<i64>{300, 401}, std::vector<i64>{800, 1000}})
        segtest::large_every_state<form::subscripts, T, I>(g, policies, segtest::host_memory{}, [&](bool corrupt) {
            return segtest::large_subscripts<I>(g, 300000, shape, corrupt);
        });
}

TYPED_TEST(ReduceLargeShapes, SortedFormsAcrossChunks) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    segtest::large_sorted_forms<T, I>(g, policies, segtest::host_memory{}, 70000);
}

} // namespace
