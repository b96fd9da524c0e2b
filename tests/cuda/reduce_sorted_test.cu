// segment_reduce on the GPU over the sorted forms (offsets, lengths, sorted
// ids, fixed): every reducer on fresh random inputs against the independent
// double reference, through the same harness as the host tests.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reduce_harness.hpp"
#include "common/test_util.hpp"
#include "cuda/cuda_test_util.cuh"

namespace {

using segtest::form;
using segtest::i64;

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

// Segments of one row over many full tiles of the row-parallel reduction
// (2048 or 4096 rows), which write their outputs by a separate coalesced
// loop, mixed with what must keep a tile off it: a two-row segment inside a
// tile, an empty segment inside one, segments crossing a tile boundary (in
// either direction), a long gap of empty segments before a tile's first row,
// leading and trailing empty segments; in every sorted form, for sum,
// argmax, and a mean accumulated into the output with counts.
template <form F, class T, class I>
void one_row_tiles_case(segref::rng& g) {
    using segref::op;
    SCOPED_TRACE(segtest::form_name(F));
    constexpr i64 tile = 4096;  // a multiple of both tile sizes
    const i64 n = 8 * tile + 123;
    std::vector<i64> len = {0, 0, 0};  // leading empty segments
    for (i64 row = 0; row < n;) {
        i64 l = 1;
        if (row == 2 * tile - 1) l = 3;                      // crosses into the next tile
        if (row == 4 * tile - 1) l = 2;                      // the next tile's first row continues it
        if (row == 3 * tile + 1000) l = 2;                   // two rows inside a tile
        if (row == 5 * tile) len.insert(len.end(), 100, 0);  // a long gap before a tile
        if (row == 6 * tile + 77) len.push_back(0);          // one empty segment inside a tile
        l = std::min(l, n - row);
        len.push_back(l);
        row += l;
    }
    len.insert(len.end(), 5, 0);  // trailing empty segments
    segtest::seg_input<I> s;
    s.kind = F;
    s.n = n;
    s.M = static_cast<i64>(len.size());
    if constexpr (F == form::offsets) s.idx = segref::offsets_from_lengths<I>(len);
    if constexpr (F == form::lengths) s.idx.assign(len.begin(), len.end());
    if constexpr (F == form::sorted_ids) s.idx = segref::sorted_ids_from_lengths<I>(len);
    if constexpr (F == form::fixed) {
        s.M = n;
        s.fixed_size = 1;
    }
    const std::vector<T> v = segref::random_values<T>(g, n, segref::value_kind::general);
    const segtest::device_memory mem;
    segtest::trial_config c;
    segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::sum{}, op::sum, 0, c, s, v, g, mem);
    segtest::check_reduce<F, T, I, std::int64_t>(segred::cuda::par, segred::argmax{}, op::argmax, 0, c, s, v, g, mem);
    c.accumulate = true;
    c.counts = true;
    segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::mean{}, op::mean, 0, c, s, v, g, mem);
}

TYPED_TEST(CudaSortedReduce, OneRowTiles) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    one_row_tiles_case<form::offsets, T, I>(g);
    one_row_tiles_case<form::lengths, T, I>(g);
    one_row_tiles_case<form::sorted_ids, T, I>(g);
    one_row_tiles_case<form::fixed, T, I>(g);
}

} // namespace
