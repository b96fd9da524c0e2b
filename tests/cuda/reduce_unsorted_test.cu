// segment_reduce / accumarray on the GPU over unsorted ids and N-D
// subscripts: every reducer against the independent double reference, on the
// default (atomic where it applies) path and on the deterministic path.
#include <cstdint>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/large_shapes.hpp"
#include "common/reduce_harness.hpp"
#include "common/test_util.hpp"
#include "cuda/cuda_test_util.cuh"

namespace {

using segtest::form;
using segtest::i64;

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

// Wide rows over unsorted ids whose sums do not fit in shared memory (4000
// segments): the global atomic kernel, which adds four float columns with one
// vector atomic where the width is a multiple of four and both the values
// and the sums are 16-byte aligned, else a column at a time. Widths 4, 8, 12
// and 64, odd and 6 (a multiple of two only); values and out aligned and one
// element into their allocations; ids uniform with 30% on one hot id (runs
// of equal ids, added once), and runs of 1 to 20 equal ids, each with 1% out
// of range under drop. Sum straight into the out, sum accumulated with
// counts (into separate sums), and mean.
TYPED_TEST(CudaUnsortedReduce, WideRowsGlobal) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    using segref::op;
    SEGRED_SEEDED_RNG(g);
    const segtest::device_memory mem;
    const i64 n = 3000, M = 4000;
    for (i64 width : {4, 8, 12, 64, 33, 6})
        for (bool shifted : {false, true})
            for (bool repeating : {false, true}) {
                SCOPED_TRACE("width " + std::to_string(width) + (shifted ? ", unaligned" : "") +
                             (repeating ? ", runs of equal ids" : ", uniform ids"));
                const segtest::seg_input<I> s = repeating ? segtest::large_repeating<I>(g, n, M, true)
                                                          : segtest::large_unsorted<I>(g, n, M, true);
                const std::vector<T> v = segref::random_values<T>(g, n * width, segref::value_kind::general);
                segtest::trial_config c;
                c.width = c.out_width = width;
                c.shifted = shifted;
                c.bounds = segred::bounds_policy::drop;
                segtest::check_reduce<form::ids, T, I, T>(segred::cuda::par, segred::sum{}, op::sum, 0, c, s, v, g, mem);
                c.accumulate = c.counts = true;
                segtest::check_reduce<form::ids, T, I, T>(segred::cuda::par, segred::sum{}, op::sum, 0, c, s, v, g, mem);
                c.accumulate = false;
                segtest::check_reduce<form::ids, T, I, T>(segred::cuda::par, segred::mean{}, op::mean, 0, c, s, v, g,
                                                          mem);
                if (::testing::Test::HasFailure()) return;
            }
}

} // namespace
