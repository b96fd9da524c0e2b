// The worked examples of the documentation, with hand-computed expectations,
// for every (value type, index type) pair and through every descriptor that
// can express them.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/test_util.hpp"

namespace {

using segtest::equal_all;
using segtest::i64;

template <class P>
class WorkedExamples : public ::testing::Test {};
TYPED_TEST_SUITE(WorkedExamples, segtest::all_value_index_pairs, segtest::vi_names);

using segtest::vals;

// values [10,20,30,40,50,60], ids [0,1,0,2,1,2]: sum [40,70,100], mean [20,35,50].
TYPED_TEST(WorkedExamples, AccumarraySumAndMean) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({10, 20, 30, 40, 50, 60});
    const std::vector<I> id = {0, 1, 0, 2, 1, 2};
    std::vector<T> out(3, T(-1));
    segred::accumarray(segred::host, segred::rows(v.data(), 6), segred::ids(id.data(), 3), segred::rows(out.data(), 3));
    EXPECT_TRUE(equal_all(out, std::vector<double>{40, 70, 100}));
    segred::accumarray(segred::host, segred::rows(v.data(), 6), segred::ids(id.data(), 3), segred::rows(out.data(), 3),
                       segred::mean{});
    EXPECT_TRUE(equal_all(out, std::vector<double>{20, 35, 50}));
    // The same through segment_reduce with unsorted ids.
    std::vector<T> out2(3, T(-1));
    segred::segment_reduce(segred::host, segred::rows(v.data(), 6), segred::ids(id.data(), 3),
                           segred::rows(out2.data(), 3), segred::sum{});
    EXPECT_TRUE(equal_all(out2, std::vector<double>{40, 70, 100}));
}

// values [10,20,30,40,50,10], ids [0,1,0,2,1,2]: max [30,50,40], argmax [2,4,3].
TYPED_TEST(WorkedExamples, AccumarrayMaxAndArgmax) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({10, 20, 30, 40, 50, 10});
    const std::vector<I> id = {0, 1, 0, 2, 1, 2};
    std::vector<T> mx(3, T(-1));
    std::vector<i64> am(3, -7), arg(3, -7);
    segred::accumarray(segred::host, segred::rows(v.data(), 6), segred::ids(id.data(), 3), segred::rows(mx.data(), 3),
                       segred::max{}, segred::options{}.arg_out(arg.data()));
    EXPECT_TRUE(equal_all(mx, std::vector<double>{30, 50, 40}));
    EXPECT_TRUE(equal_all(arg, std::vector<double>{2, 4, 3}, "arg_out"));
    segred::accumarray(segred::host, segred::rows(v.data(), 6), segred::ids(id.data(), 3), segred::rows(am.data(), 3),
                       segred::argmax{});
    EXPECT_TRUE(equal_all(am, std::vector<double>{2, 4, 3}));
}

// data [1,2,3,4,5,6], sorted ids [0,0,1,1,2,2]: sum [3,7,11]; also as
// offsets [0,2,4,6], lengths [2,2,2] and fixed(2, 3).
TYPED_TEST(WorkedExamples, SortedSegmentSum) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({1, 2, 3, 4, 5, 6});
    const auto in = segred::rows(v.data(), 6);
    const std::vector<double> expect = {3, 7, 11};
    const std::vector<I> sid = {0, 0, 1, 1, 2, 2}, off = {0, 2, 4, 6}, len = {2, 2, 2};
    std::vector<T> out(3, T(-1));
    segred::segment_reduce(segred::host, in, segred::sorted_ids(sid.data(), 3), segred::rows(out.data(), 3));
    EXPECT_TRUE(equal_all(out, expect, "sorted_ids"));
    out.assign(3, T(-1));
    segred::segment_reduce(segred::host, in, segred::offsets(off.data(), 3), segred::rows(out.data(), 3));
    EXPECT_TRUE(equal_all(out, expect, "offsets"));
    out.assign(3, T(-1));
    segred::segment_reduce(segred::host, in, segred::lengths(len.data(), 3), segred::rows(out.data(), 3));
    EXPECT_TRUE(equal_all(out, expect, "lengths"));
    out.assign(3, T(-1));
    segred::segment_reduce(segred::host, in, segred::fixed(2, 3), segred::rows(out.data(), 3));
    EXPECT_TRUE(equal_all(out, expect, "fixed"));
}

// data [1..8], sorted ids [0,0,1,2,2,2,3,3]: [3,3,15,15].
TYPED_TEST(WorkedExamples, SortedSegmentSumUneven) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({1, 2, 3, 4, 5, 6, 7, 8});
    const std::vector<I> sid = {0, 0, 1, 2, 2, 2, 3, 3};
    std::vector<T> out(4, T(-1));
    segred::segment_reduce(segred::host, segred::rows(v.data(), 8), segred::sorted_ids(sid.data(), 4),
                           segred::rows(out.data(), 4), segred::sum{});
    EXPECT_TRUE(equal_all(out, std::vector<double>{3, 3, 15, 15}));
}

// data [1..6], ids [0,0,2,2,2,4], 5 segments: [3,0,12,0,6] with fill 0,
// [3,NaN,12,NaN,6] with fill NaN (floating-point out).
TYPED_TEST(WorkedExamples, EmptySegmentsFill) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({1, 2, 3, 4, 5, 6});
    const std::vector<I> id = {0, 0, 2, 2, 2, 4};
    std::vector<T> out(5, T(-1));
    segred::accumarray(segred::host, segred::rows(v.data(), 6), segred::ids(id.data(), 5), segred::rows(out.data(), 5));
    EXPECT_TRUE(equal_all(out, std::vector<double>{3, 0, 12, 0, 6}));
    // Sorted ids, so segment_reduce with sorted_ids gives the same.
    out.assign(5, T(-1));
    segred::segment_reduce(segred::host, segred::rows(v.data(), 6), segred::sorted_ids(id.data(), 5),
                           segred::rows(out.data(), 5));
    EXPECT_TRUE(equal_all(out, std::vector<double>{3, 0, 12, 0, 6}));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> outd(5, -1.0);
    segred::accumarray(segred::host, segred::rows(v.data(), 6), segred::ids(id.data(), 5), segred::rows(outd.data(), 5),
                       segred::sum{}, segred::options{}.fill_nan());
    EXPECT_TRUE(equal_all(outd, std::vector<double>{3, nan, 12, nan, 6}));
    std::vector<float> outf(5, -1.0f);
    segred::accumarray(segred::host, segred::rows(v.data(), 6), segred::ids(id.data(), 5), segred::rows(outf.data(), 5),
                       segred::sum{}, segred::options{}.fill_nan());
    EXPECT_TRUE(equal_all(outf, std::vector<double>{3, nan, 12, nan, 6}));
}

// ids [2,0,2,1,4,2], bincount with minlength 5: [1,1,3,0,1].
TYPED_TEST(WorkedExamples, Bincount) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<I> id = {2, 0, 2, 1, 4, 2};
    std::vector<i64> out(5, -1);
    segred::bincount(segred::host, segred::rows(id.data(), 6), segred::rows(out.data(), 5));
    EXPECT_TRUE(equal_all(out, std::vector<double>{1, 1, 3, 0, 1}));
    std::vector<T> outT(5, T(-1));
    segred::bincount(segred::host, segred::rows(id.data(), 6), segred::rows(outT.data(), 5));
    EXPECT_TRUE(equal_all(outT, std::vector<double>{1, 1, 3, 0, 1}));
    // Weighted: weights [1..6] -> bin 0: 2, bin 1: 4, bin 2: 1+3+6, bin 4: 5.
    const std::vector<T> w = vals<T>({1, 2, 3, 4, 5, 6});
    segred::bincount(segred::host, segred::rows(w.data(), 6), segred::rows(id.data(), 6), segred::rows(outT.data(), 5));
    EXPECT_TRUE(equal_all(outT, std::vector<double>{2, 4, 10, 0, 5}));
}

} // namespace
