// segment_reduce on the GPU over the sorted forms (offsets, lengths, sorted
// ids, fixed): every reducer on fresh random inputs against the independent
// double reference, through the same harness as the host tests.
#include <cstdint>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reduce_harness.hpp"
#include "common/test_util.hpp"
#include "cuda/cuda_test_util.cuh"

namespace {

using segtest::form;

// Value/index pairs: each value type and each id type at least once, kept
// few because every pair instantiates every kernel.
using cuda_pairs = ::testing::Types<segtest::vi<float, std::int32_t>, segtest::vi<double, std::int64_t>,
                                    segtest::vi<std::int32_t, std::int64_t>, segtest::vi<std::int64_t, std::int32_t>>;

template <class P>
class CudaSortedReduce : public segtest::CudaTest {};
TYPED_TEST_SUITE(CudaSortedReduce, cuda_pairs, segtest::vi_names);

constexpr int kTrials = 8;

TYPED_TEST(CudaSortedReduce, Offsets) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::offsets, typename TypeParam::value, typename TypeParam::index>(
        segred::cuda::par, g, kTrials, segtest::device_memory{});
}

TYPED_TEST(CudaSortedReduce, Lengths) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::lengths, typename TypeParam::value, typename TypeParam::index>(
        segred::cuda::par, g, kTrials, segtest::device_memory{});
}

TYPED_TEST(CudaSortedReduce, SortedIds) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::sorted_ids, typename TypeParam::value, typename TypeParam::index>(
        segred::cuda::par, g, kTrials, segtest::device_memory{});
}

TYPED_TEST(CudaSortedReduce, Fixed) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::fixed, typename TypeParam::value, typename TypeParam::index>(
        segred::cuda::par, g, kTrials, segtest::device_memory{});
}

} // namespace
