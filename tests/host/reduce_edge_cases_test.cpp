// segment_reduce / accumarray structural edge cases, for every value type
// (and both index types): M = 0, rows outside offsets, empty segments, ids at
// 0 and M-1, all ids equal, ties, widths 1 and 3, N-D subscripts and the drop
// policy.
// (Per-value-type semantics are in reduce_semantics_test.cpp.) Expectations
// are hand-computed.
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

using segtest::vals;

template <class P>
class ReduceEdge : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceEdge, segtest::value_index_diagonal, segtest::vi_names);

TYPED_TEST(ReduceEdge, NoSegments) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({1, 2, 3});
    T* no_out = nullptr;
    std::vector<i64> cnt(1, -7);
    // One offset, rows unused; offsets may also be null when n == 0.
    const std::vector<I> off = {1};
    segred::segment_reduce(segred::host, segred::rows(v.data(), 3), segred::offsets(off.data(), 0),
                           segred::rows(no_out, 0), segred::sum{}, segred::options{}.counts(cnt.data()));
    segred::segment_reduce(segred::host, segred::rows(v.data(), 0), segred::offsets(static_cast<const I*>(nullptr), 0),
                           segred::rows(no_out, 0));
    segred::segment_reduce(segred::host, segred::rows(v.data(), 0), segred::lengths(static_cast<const I*>(nullptr), 0),
                           segred::rows(no_out, 0));
    segred::segment_reduce(segred::host, segred::rows(v.data(), 0), segred::fixed(7, 0), segred::rows(no_out, 0));
    segred::segment_reduce(segred::host, segred::rows(v.data(), 0), segred::sorted_ids(static_cast<const I*>(nullptr), 0),
                           segred::rows(no_out, 0));
    // Under drop, every id is out of range [0, 0) and skipped.
    const std::vector<I> id = {0, 1, -1};
    segred::accumarray(segred::host, segred::rows(v.data(), 3), segred::ids(id.data(), 0), segred::rows(no_out, 0),
                       segred::max{}, segred::options{}.bounds(segred::bounds_policy::drop));
    const std::int64_t shape[2] = {0, 3};
    const std::vector<I> subs = {0, 0, 0, 1, 0, 2};
    segred::accumarray(segred::host, segred::rows(v.data(), 3), segred::subscripts(subs.data(), 2, shape),
                       segred::rows(no_out, 0), segred::sum{}, segred::options{}.bounds(segred::bounds_policy::drop));
    EXPECT_EQ(cnt[0], -7);  // nothing to count: untouched
}

// Rows before offsets[0] and from offsets[M] on belong to no segment.
TYPED_TEST(ReduceEdge, OffsetsWithUnusedRows) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({100, 100, 1, 2, 3, 100, 100});
    const std::vector<I> off = {2, 4, 4, 5};
    std::vector<T> out(3, T(-1));
    std::vector<i64> cnt(3, -7);
    segred::segment_reduce(segred::host, segred::rows(v.data(), 7), segred::offsets(off.data(), 3),
                           segred::rows(out.data(), 3), segred::sum{}, segred::options{}.counts(cnt.data()));
    EXPECT_TRUE(equal_all(out, std::vector<double>{3, 0, 3}));
    EXPECT_TRUE(equal_all(cnt, std::vector<double>{2, 0, 1}, "counts"));
}

// Only ids 0 and M-1 are used; every segment in between is empty.
TYPED_TEST(ReduceEdge, IdsAtBothEnds) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({1, 2, 3, 4, 5});
    const std::vector<I> id = {6, 0, 6, 0, 6};
    std::vector<T> out(7, T(-1));
    std::vector<i64> am(7, -7);
    segred::accumarray(segred::host, segred::rows(v.data(), 5), segred::ids(id.data(), 7), segred::rows(out.data(), 7));
    EXPECT_TRUE(equal_all(out, std::vector<double>{6, 0, 0, 0, 0, 0, 9}));
    segred::accumarray(segred::host, segred::rows(v.data(), 5), segred::ids(id.data(), 7), segred::rows(am.data(), 7),
                       segred::argmax{});
    EXPECT_TRUE(equal_all(am, std::vector<double>{3, -1, -1, -1, -1, -1, 4}));
}

TYPED_TEST(ReduceEdge, AllIdsEqual) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const i64 n = 1000;
    std::vector<T> v(n);
    for (i64 i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<T>(i % 7);
    const std::vector<I> id(n, I(3));
    std::vector<T> out(5, T(-1));
    std::vector<i64> cnt(5, -7), am(5, -7);
    segred::accumarray(segred::host, segred::rows(v.data(), n), segred::ids(id.data(), 5), segred::rows(out.data(), 5),
                       segred::sum{}, segred::options{}.counts(cnt.data()));
    // 142 full cycles of 0..6 (sum 21) and 0..5 (sum 15).
    EXPECT_TRUE(equal_all(out, std::vector<double>{0, 0, 0, 142 * 21 + 15, 0}));
    EXPECT_TRUE(equal_all(cnt, std::vector<double>{0, 0, 0, 1000, 0}, "counts"));
    segred::accumarray(segred::host, segred::rows(v.data(), n), segred::ids(id.data(), 5), segred::rows(am.data(), 5),
                       segred::argmax{});
    EXPECT_TRUE(equal_all(am, std::vector<double>{-1, -1, -1, 6, -1}));  // first 6 is row 6
}

// Ties: argmin/argmax and the arg out of min/max pick the lowest row, also
// when the rows of a segment arrive out of order.
TYPED_TEST(ReduceEdge, TiesPickLowestRow) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({5, 5, 1, 5, 1, 7, 7});
    const std::vector<I> id = {1, 0, 0, 0, 0, 2, 2};
    std::vector<i64> am(3, -7), an(3, -7), arg(3, -7);
    std::vector<T> mn(3, T(-1));
    const auto in = segred::rows(v.data(), 7);
    segred::accumarray(segred::host, in, segred::ids(id.data(), 3), segred::rows(am.data(), 3), segred::argmax{});
    EXPECT_TRUE(equal_all(am, std::vector<double>{1, 0, 5}, "argmax"));
    segred::accumarray(segred::host, in, segred::ids(id.data(), 3), segred::rows(an.data(), 3), segred::argmin{});
    EXPECT_TRUE(equal_all(an, std::vector<double>{2, 0, 5}, "argmin"));
    segred::accumarray(segred::host, in, segred::ids(id.data(), 3), segred::rows(mn.data(), 3), segred::min{},
                       segred::options{}.arg_out(arg.data()));
    EXPECT_TRUE(equal_all(mn, std::vector<double>{1, 5, 7}, "min"));
    EXPECT_TRUE(equal_all(arg, std::vector<double>{2, 0, 5}, "arg_out"));
}

// Width 3: each column is reduced on its own.
TYPED_TEST(ReduceEdge, ColumnsAreIndependent) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({1, 9, -1,  //
                                      2, 8, -2,  //
                                      3, 7, -3});
    const std::vector<I> off = {0, 2, 3};
    std::vector<T> out(6, T(-1));
    std::vector<i64> arg(6, -7), cnt(2, -7);
    segred::segment_reduce(segred::host, segred::rows(v.data(), 3, 3), segred::offsets(off.data(), 2),
                           segred::rows(out.data(), 2, 3), segred::max{},
                           segred::options{}.arg_out(arg.data()).counts(cnt.data()));
    EXPECT_TRUE(equal_all(out, std::vector<double>{2, 9, -1, 3, 7, -3}));
    EXPECT_TRUE(equal_all(arg, std::vector<double>{1, 0, 0, 2, 2, 2}, "arg_out"));
    EXPECT_TRUE(equal_all(cnt, std::vector<double>{2, 1}, "counts"));
    // count may write one column (rows per segment) or one per value column.
    std::vector<i64> c1(2, -7), c3(6, -7);
    segred::segment_reduce(segred::host, segred::rows(v.data(), 3, 3), segred::offsets(off.data(), 2),
                           segred::rows(c1.data(), 2, 1), segred::count{});
    EXPECT_TRUE(equal_all(c1, std::vector<double>{2, 1}));
    segred::segment_reduce(segred::host, segred::rows(v.data(), 3, 3), segred::offsets(off.data(), 2),
                           segred::rows(c3.data(), 2, 3), segred::count{});
    EXPECT_TRUE(equal_all(c3, std::vector<double>{2, 2, 2, 1, 1, 1}));
}

// Row-major N-D subscripts: 2-D shape {2, 3} and 3-D shape {2, 2, 2}.
TYPED_TEST(ReduceEdge, Subscripts2DAnd3D) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({1, 2, 4, 8, 16});
    {
        const std::vector<I> subs = {0, 1,  //
                                     1, 2,  //
                                     0, 1,  //
                                     1, 0,  //
                                     1, 2};
        std::vector<T> out(6, T(-1));
        segred::accumarray(segred::host, segred::rows(v.data(), 5), segred::subscripts(subs.data(), {2, 3}),
                           segred::rows(out.data(), 6));
        EXPECT_TRUE(equal_all(out, std::vector<double>{0, 5, 0, 8, 0, 18}));
    }
    {
        const std::vector<I> subs = {1, 1, 1,  //
                                     0, 0, 0,  //
                                     1, 0, 1,  //
                                     0, 1, 0,  //
                                     1, 1, 1};
        std::vector<T> out(8, T(-1));
        std::vector<i64> cnt(8, -7);
        segred::accumarray(segred::host, segred::rows(v.data(), 5), segred::subscripts(subs.data(), {2, 2, 2}),
                           segred::rows(out.data(), 8), segred::max{}, segred::options{}.fill(-3).counts(cnt.data()));
        // linear index = 4*i + 2*j + k
        EXPECT_TRUE(equal_all(out, std::vector<double>{2, -3, 8, -3, -3, 4, -3, 16}));
        EXPECT_TRUE(equal_all(cnt, std::vector<double>{1, 0, 1, 0, 0, 1, 0, 2}, "counts"));
    }
}

// drop: out-of-range ids and subscripts are skipped and not counted.
TYPED_TEST(ReduceEdge, DropSkipsOutOfRange) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const auto drop = segred::options{}.bounds(segred::bounds_policy::drop);
    const std::vector<T> v = vals<T>({1, 2, 4, 8, 16, 32});
    const std::vector<I> id = {0, -1, 2, 3, 2, 100};
    std::vector<T> out(3, T(-1));
    std::vector<i64> cnt(3, -7), c(3, -7);
    segred::accumarray(segred::host, segred::rows(v.data(), 6), segred::ids(id.data(), 3), segred::rows(out.data(), 3),
                       segred::sum{}, segred::options(drop).counts(cnt.data()));
    EXPECT_TRUE(equal_all(out, std::vector<double>{1, 0, 20}));
    EXPECT_TRUE(equal_all(cnt, std::vector<double>{1, 0, 2}, "counts"));
    segred::accumarray(segred::host, segred::rows(v.data(), 6), segred::ids(id.data(), 3), segred::rows(c.data(), 3),
                       segred::count{}, drop);
    EXPECT_TRUE(equal_all(c, std::vector<double>{1, 0, 2}, "count"));
    // sorted_ids under drop: order is not required, out-of-range skipped.
    out.assign(3, T(-1));
    segred::segment_reduce(segred::host, segred::rows(v.data(), 6), segred::sorted_ids(id.data(), 3),
                           segred::rows(out.data(), 3), segred::sum{}, drop);
    EXPECT_TRUE(equal_all(out, std::vector<double>{1, 0, 20}, "sorted_ids"));
    // offsets under drop: clamped into [0, n], then a running maximum.
    const std::vector<I> off = {-2, 2, 1, 4, 9};  // -> 0, 2, 2, 4, 6
    std::vector<T> o4(4, T(-1));
    segred::segment_reduce(segred::host, segred::rows(v.data(), 6), segred::offsets(off.data(), 4),
                           segred::rows(o4.data(), 4), segred::sum{}, drop);
    EXPECT_TRUE(equal_all(o4, std::vector<double>{3, 0, 12, 48}, "offsets"));
    // lengths under drop: a negative length counts 0; coverage stops at n.
    const std::vector<I> len = {2, -1, 3, 5};  // rows [0,2), [], [2,5), [5,6)
    o4.assign(4, T(-1));
    segred::segment_reduce(segred::host, segred::rows(v.data(), 6), segred::lengths(len.data(), 4),
                           segred::rows(o4.data(), 4), segred::sum{}, drop);
    EXPECT_TRUE(equal_all(o4, std::vector<double>{3, 0, 28, 32}, "lengths"));
    // subscripts under drop: a row with any subscript outside its dimension.
    const std::vector<I> subs = {0, 0, 1, 1, 2, 0, 0, -1, 1, 1, 0, 1};
    std::vector<T> o2(4, T(-1));
    segred::accumarray(segred::host, segred::rows(v.data(), 6), segred::subscripts(subs.data(), {2, 2}),
                       segred::rows(o2.data(), 4), segred::sum{}, drop);
    EXPECT_TRUE(equal_all(o2, std::vector<double>{1, 32, 0, 18}, "subscripts"));
}

} // namespace
