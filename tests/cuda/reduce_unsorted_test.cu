// segment_reduce / accumarray on the GPU over unsorted ids and N-D
// subscripts: every reducer against the independent double reference, on the
// default (atomic where it applies) path and on the deterministic path.
#include <cstdint>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reduce_harness.hpp"
#include "common/test_util.hpp"
#include "cuda/cuda_test_util.cuh"

namespace {

using segtest::form;

using cuda_pairs = ::testing::Types<segtest::vi<float, std::int64_t>, segtest::vi<double, std::int32_t>,
                                    segtest::vi<std::int32_t, std::int32_t>, segtest::vi<std::int64_t, std::int64_t>>;

template <class P>
class CudaUnsortedReduce : public segtest::CudaTest {};
TYPED_TEST_SUITE(CudaUnsortedReduce, cuda_pairs, segtest::vi_names);

constexpr int kTrials = 8;


TYPED_TEST(CudaUnsortedReduce, Ids) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::ids, typename TypeParam::value, typename TypeParam::index>(
        segred::cuda::par, g, kTrials, segtest::device_memory{});
}

TYPED_TEST(CudaUnsortedReduce, Subscripts) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::subscripts, typename TypeParam::value, typename TypeParam::index>(
        segred::cuda::par, g, kTrials, segtest::device_memory{});
}

} // namespace
