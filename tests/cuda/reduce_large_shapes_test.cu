// Large inputs on the GPU against the reference (the shapes are described in
// common/large_shapes.hpp): every sorted form over runs that cross many
// 4096-row tiles, and unsorted ids and subscripts at few and many segments.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/large_shapes.hpp"
#include "cuda/cuda_test_util.cuh"

namespace {

using segtest::form;
using segtest::i64;

template <class P>
class CudaLargeShapes : public segtest::CudaTest {};
TYPED_TEST_SUITE(CudaLargeShapes, segtest::float_value_pairs, segtest::vi_names);

const std::vector<segred::cuda::par_t> policies = {segred::cuda::par};

TYPED_TEST(CudaLargeShapes, SortedForms) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    segtest::large_sorted_forms<T, I>(g, policies, segtest::device_memory{}, 5000);
}

TYPED_TEST(CudaLargeShapes, WideSortedForms) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    segtest::large_wide_sorted_forms<T, I>(g, policies, segtest::device_memory{});
}

TYPED_TEST(CudaLargeShapes, UnsortedIds) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    const segtest::device_memory mem;
    for (i64 M : {29, 20011, 70001})
        segtest::large_every_state<form::ids, T, I>(
            g, policies, mem, [&](bool corrupt) { return segtest::large_unsorted<I>(g, 300000, M, corrupt); });
    // Few ids over a large M: long gaps of empty segments on the sorted
    // (deterministic) path.
    segtest::large_every_state<form::ids, T, I>(
        g, policies, mem, [&](bool corrupt) { return segtest::large_unsorted<I>(g, 20000, 4000000, corrupt); });
}

} // namespace
