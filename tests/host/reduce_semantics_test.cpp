// segment_reduce / accumarray semantics by hand, per value type: n = 0 in
// every form, fill values and identities, accumulate, accumulation types,
// var/std ddof, NaN, logsumexp stability, and one giant segment (against the
// independent reference). Structural edge cases are in
// reduce_edge_cases_test.cpp.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reduce_harness.hpp"
#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::equal_all;
using segtest::form;
using segtest::i64;
using segtest::near_all;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

using segtest::vals;

template <class P>
class ReduceSemantics : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceSemantics, segtest::value_index_diagonal, segtest::vi_names);

// n = 0 rows, M = 4 segments, every form: all segments empty.
template <class T, class Seg>
void expect_all_empty(const Seg& seg, const char* what) {
    SCOPED_TRACE(what);
    const auto in = segred::rows(static_cast<const T*>(nullptr), 0);
    std::vector<T> out(4, T(9));
    std::vector<i64> cnt(4, -7), arg(4, -7), am(4, -7);
    segred::segment_reduce(segred::host, in, seg, segred::rows(out.data(), 4), segred::sum{},
                           segred::options{}.counts(cnt.data()));
    EXPECT_TRUE(equal_all(out, std::vector<double>(4, 0.0)));
    EXPECT_TRUE(equal_all(cnt, std::vector<double>(4, 0.0), "counts"));
    segred::segment_reduce(segred::host, in, seg, segred::rows(out.data(), 4), segred::min{},
                           segred::options{}.fill(5).arg_out(arg.data()));
    EXPECT_TRUE(equal_all(out, std::vector<double>(4, 5.0)));
    EXPECT_TRUE(equal_all(arg, std::vector<double>(4, -1.0), "arg_out"));
    segred::segment_reduce(segred::host, in, seg, segred::rows(out.data(), 4), segred::min{},
                           segred::options{}.fill_identity());
    EXPECT_TRUE(equal_all(out, std::vector<double>(4, segref::identity<T>(segref::op::min))));
    segred::segment_reduce(segred::host, in, seg, segred::rows(am.data(), 4), segred::argmax{},
                           segred::options{}.fill(5));
    EXPECT_TRUE(equal_all(am, std::vector<double>(4, -1.0), "argmax"));
    // accumulate keeps out.
    std::vector<T> acc = vals<T>({1, 2, 3, 4});
    segred::segment_reduce(segred::host, in, seg, segred::rows(acc.data(), 4), segred::sum{},
                           segred::options{}.accumulate());
    EXPECT_TRUE(equal_all(acc, std::vector<double>{1, 2, 3, 4}));
}

TYPED_TEST(ReduceSemantics, NoRows) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<I> off(5, I(0)), len(4, I(0));
    const I* none = nullptr;
    const std::int64_t shape[2] = {2, 2};
    expect_all_empty<T>(segred::offsets(off.data(), 4), "offsets");
    expect_all_empty<T>(segred::lengths(len.data(), 4), "lengths");
    expect_all_empty<T>(segred::sorted_ids(none, 4), "sorted_ids");
    expect_all_empty<T>(segred::ids(none, 4), "ids");
    expect_all_empty<T>(segred::fixed(0, 4), "fixed");
    expect_all_empty<T>(segred::subscripts(none, 2, shape), "subscripts");
}

// The reducers' identities (fill_identity) and constant fills.
TYPED_TEST(ReduceSemantics, FillValues) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({3, 4});
    const std::vector<I> id = {0, 0};
    const auto in = segred::rows(v.data(), 2);
    const auto seg = segred::ids(id.data(), 2);
    const auto ident = segred::options{}.fill_identity();
    using R = segtest::real_out<T>;
    std::vector<T> o(2);
    std::vector<R> r(2);
    auto expect = [&](auto got, double empty_value, const char* what) {
        SCOPED_TRACE(what);
        EXPECT_EQ(static_cast<double>(got[1]), empty_value);
    };
    segred::accumarray(segred::host, in, seg, segred::rows(o.data(), 2), segred::sum{}, ident);
    expect(o, 0, "sum");
    segred::accumarray(segred::host, in, seg, segred::rows(o.data(), 2), segred::prod{}, ident);
    expect(o, 1, "prod");
    EXPECT_EQ(static_cast<double>(o[0]), 12.0);
    segred::accumarray(segred::host, in, seg, segred::rows(o.data(), 2), segred::min{}, ident);
    expect(o, std::is_integral<T>::value ? static_cast<double>(std::numeric_limits<T>::max()) : kInf, "min");
    segred::accumarray(segred::host, in, seg, segred::rows(o.data(), 2), segred::max{}, ident);
    expect(o, std::is_integral<T>::value ? static_cast<double>(std::numeric_limits<T>::lowest()) : -kInf, "max");
    segred::accumarray(segred::host, in, seg, segred::rows(o.data(), 2), segred::mean{}, ident);
    expect(o, 0, "mean");
    segred::accumarray(segred::host, in, seg, segred::rows(o.data(), 2), segred::any{}, ident);
    expect(o, 0, "any");
    segred::accumarray(segred::host, in, seg, segred::rows(o.data(), 2), segred::all{}, ident);
    expect(o, 1, "all");
    segred::accumarray(segred::host, in, seg, segred::rows(o.data(), 2), segred::count{}, ident);
    expect(o, 0, "count");
    segred::accumarray(segred::host, in, seg, segred::rows(r.data(), 2), segred::logsumexp{}, ident);
    expect(r, -kInf, "logsumexp");
    segred::accumarray(segred::host, in, seg, segred::rows(r.data(), 2), segred::var{}, ident);
    EXPECT_TRUE(std::isnan(static_cast<double>(r[1]))) << "var";
    segred::accumarray(segred::host, in, seg, segred::rows(r.data(), 2), segred::stddev{}, ident);
    EXPECT_TRUE(std::isnan(static_cast<double>(r[1]))) << "std";
    std::vector<i64> a(2);
    segred::accumarray(segred::host, in, seg, segred::rows(a.data(), 2), segred::argmin{}, ident);
    expect(a, -1, "argmin ignores the fill");
    segred::accumarray(segred::host, in, seg, segred::rows(a.data(), 2), segred::argmax{}, segred::options{}.fill(9));
    expect(a, -1, "argmax ignores the fill");
    segred::accumarray(segred::host, in, seg, segred::rows(o.data(), 2), segred::max{}, segred::options{}.fill(-2.5));
    expect(o, std::is_integral<T>::value ? -2.0 : -2.5, "constant fill");
    segred::accumarray(segred::host, in, seg, segred::rows(r.data(), 2), segred::max{}, segred::options{}.fill_nan());
    EXPECT_TRUE(std::isnan(static_cast<double>(r[1]))) << "fill_nan";
    segred::accumarray(segred::host, in, seg, segred::rows(o.data(), 2), segred::reducer(segtest::maxabs_op{}, 0.0),
                       ident);
    expect(o, 0, "custom");
}

// accumulate: the existing value takes part as one more element, first.
TYPED_TEST(ReduceSemantics, AccumulateByHand) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> v = vals<T>({2, 4, -3});
    const std::vector<I> id = {0, 0, 2};  // segment 1 empty: keeps out
    const auto in = segred::rows(v.data(), 3);
    const auto seg = segred::ids(id.data(), 3);
    const auto acc = segred::options{}.accumulate();
    auto run = [&](auto reducer, std::initializer_list<double> before, std::initializer_list<double> after,
                   const char* what) {
        SCOPED_TRACE(what);
        std::vector<T> o = vals<T>(before);
        std::vector<i64> cnt(3, -7);
        segred::accumarray(segred::host, in, seg, segred::rows(o.data(), 3), reducer,
                           segred::options(acc).counts(cnt.data()));
        EXPECT_TRUE(equal_all(o, std::vector<double>(after)));
        EXPECT_TRUE(equal_all(cnt, std::vector<double>{2, 0, 1}, "counts"));
    };
    run(segred::sum{}, {10, 7, 1}, {16, 7, -2}, "sum");
    run(segred::prod{}, {3, 7, 2}, {24, 7, -6}, "prod");
    run(segred::min{}, {3, 7, -9}, {2, 7, -9}, "min");
    run(segred::max{}, {3, 7, -9}, {4, 7, -3}, "max");
    run(segred::mean{}, {6, 7, 5}, {4, 7, 1}, "mean");  // (6+2+4)/3, (5-3)/2
    run(segred::count{}, {10, 7, 0}, {12, 7, 1}, "count");
    run(segred::any{}, {0, 0, 0}, {1, 0, 1}, "any");
    run(segred::all{}, {0, 5, 1}, {0, 5, 1}, "all");
    run(segred::reducer(segtest::maxabs_op{}, 0.0), {-9, 7, 1}, {9, 7, 3}, "custom");
    // logsumexp: log(exp(0) + exp(2) + exp(4)) and log(exp(-3) + exp(-3)).
    std::vector<double> l = {0, 7, -3};
    segred::accumarray(segred::host, in, seg, segred::rows(l.data(), 3), segred::logsumexp{}, acc);
    const double l0 = std::log(1 + std::exp(2.0) + std::exp(4.0)), l2 = -3 + std::log(2.0);
    const double tol = std::is_same<T, float>::value ? 1e-5 : 1e-12;  // float values: float math
    EXPECT_NEAR(l[0], l0, tol);
    EXPECT_EQ(l[1], 7);
    EXPECT_NEAR(l[2], l2, tol);
}

// Integer accumulation is 64-bit; integer means are real means, truncated
// when stored in an integer out.
TYPED_TEST(ReduceSemantics, IntegerAccumulationTypes) {
    using I = typename TypeParam::index;
    const std::vector<std::int32_t> big = {2000000000, 2000000000, -7, -8};
    const std::vector<I> id = {0, 0, 1, 1};
    std::vector<std::int64_t> s(2, -1), p(2, -1);
    segred::accumarray(segred::host, segred::rows(big.data(), 4), segred::ids(id.data(), 2), segred::rows(s.data(), 2));
    EXPECT_EQ(s[0], 4000000000LL);
    EXPECT_EQ(s[1], -15);
    segred::accumarray(segred::host, segred::rows(big.data(), 4), segred::ids(id.data(), 2), segred::rows(p.data(), 2),
                       segred::prod{});
    EXPECT_EQ(p[0], 4000000000000000000LL);
    EXPECT_EQ(p[1], 56);
    std::vector<std::int32_t> m(2, -1);
    const std::vector<std::int32_t> mv = {1, 2, -1, -2};
    segred::accumarray(segred::host, segred::rows(mv.data(), 4), segred::ids(id.data(), 2), segred::rows(m.data(), 2),
                       segred::mean{});
    EXPECT_EQ(m[0], 1);   // 1.5 truncated
    EXPECT_EQ(m[1], -1);  // -1.5 truncated toward zero
    std::vector<double> md(2, -1);
    segred::accumarray(segred::host, segred::rows(mv.data(), 4), segred::ids(id.data(), 2), segred::rows(md.data(), 2),
                       segred::mean{});
    EXPECT_EQ(md[0], 1.5);
    EXPECT_EQ(md[1], -1.5);
    // Float values summed into a double out still accumulate in float:
    // 2^24 + 1 is not a float.
    const std::vector<float> f = {16777216.0f, 1.0f};
    std::vector<double> fd(1, -1);
    const std::vector<I> z = {0, 0};
    segred::accumarray(segred::host, segred::rows(f.data(), 2), segred::ids(z.data(), 1), segred::rows(fd.data(), 1));
    EXPECT_EQ(fd[0], 16777216.0);
}

// var / std with ddof; a segment with n <= ddof is NaN.
TYPED_TEST(ReduceSemantics, VarianceDdof) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    using R = segtest::real_out<T>;
    const std::vector<T> v = vals<T>({1, 2, 3, 4, 9});
    const std::vector<I> off = {0, 4, 5, 5};
    std::vector<R> o(3, R(-1));
    const auto in = segred::rows(v.data(), 5);
    const auto seg = segred::offsets(off.data(), 3);
    const double tol = std::is_same<R, float>::value ? 1e-6 : 1e-14;
    segred::segment_reduce(segred::host, in, seg, segred::rows(o.data(), 3), segred::var{});
    EXPECT_NEAR(o[0], 1.25, tol);
    EXPECT_EQ(o[1], 0);  // one row, ddof 0
    EXPECT_EQ(o[2], 0);  // empty: fill 0
    segred::segment_reduce(segred::host, in, seg, segred::rows(o.data(), 3), segred::var{1},
                           segred::options{}.fill(-5));
    EXPECT_NEAR(o[0], 5.0 / 3.0, tol);
    EXPECT_TRUE(std::isnan(static_cast<double>(o[1])));  // n = 1 <= ddof
    EXPECT_EQ(o[2], -5);
    segred::segment_reduce(segred::host, in, seg, segred::rows(o.data(), 3), segred::stddev{1});
    EXPECT_NEAR(o[0], std::sqrt(5.0 / 3.0), tol);
    EXPECT_TRUE(std::isnan(static_cast<double>(o[1])));
    segred::segment_reduce(segred::host, in, seg, segred::rows(o.data(), 3), segred::stddev{});
    EXPECT_NEAR(o[0], std::sqrt(1.25), tol);
}

template <class P>
class ReduceEdgeFloat : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceEdgeFloat, segtest::float_value_pairs, segtest::vi_names);

// min/max propagate NaN; argmin/argmax (and the arg out) take the first NaN row.
TYPED_TEST(ReduceEdgeFloat, NaNPropagation) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    // Column 0: NaN in rows 1 and 2 of segment 0; column 1: no NaN.
    const std::vector<T> v = {3, 1, nan, 5, nan, 2, 7, 0, 1, 9};
    const std::vector<I> id = {0, 0, 0, 1, 1};
    const auto in = segred::rows(v.data(), 5, 2);
    const auto seg = segred::ids(id.data(), 2);
    std::vector<T> mx(4), mn(4);
    std::vector<i64> arg(4, -7), am(4, -7), an(4, -7);
    segred::accumarray(segred::host, in, seg, segred::rows(mx.data(), 2, 2), segred::max{},
                       segred::options{}.arg_out(arg.data()));
    EXPECT_TRUE(equal_all(mx, std::vector<double>{kNaN, 5, 7, 9}, "max"));
    EXPECT_TRUE(equal_all(arg, std::vector<double>{1, 1, 3, 4}, "max arg_out"));
    segred::accumarray(segred::host, in, seg, segred::rows(mn.data(), 2, 2), segred::min{});
    EXPECT_TRUE(equal_all(mn, std::vector<double>{kNaN, 1, 1, 0}, "min"));
    segred::accumarray(segred::host, in, seg, segred::rows(am.data(), 2, 2), segred::argmax{});
    EXPECT_TRUE(equal_all(am, std::vector<double>{1, 1, 3, 4}, "argmax"));
    segred::accumarray(segred::host, in, seg, segred::rows(an.data(), 2, 2), segred::argmin{});
    EXPECT_TRUE(equal_all(an, std::vector<double>{1, 0, 4, 3}, "argmin"));
    // accumulate with a NaN already in out keeps NaN.
    std::vector<T> acc = {nan, 0, 0, 0};
    segred::accumarray(segred::host, in, seg, segred::rows(acc.data(), 2, 2), segred::max{},
                       segred::options{}.accumulate());
    EXPECT_TRUE(equal_all(acc, std::vector<double>{kNaN, 5, 7, 9}, "max accumulate"));
    // A NaN beyond the first piece of a giant segment still wins.
    const i64 n = 200000;
    std::vector<T> g(n, T(1));
    g[150000] = nan;
    g[180000] = nan;
    g[1000] = T(5);
    std::vector<T> gm(1);
    std::vector<i64> ga(1, -7);
    segred::segment_reduce(segred::host, segred::rows(g.data(), n), segred::fixed(n, 1), segred::rows(gm.data(), 1),
                           segred::max{}, segred::options{}.arg_out(ga.data()));
    EXPECT_TRUE(std::isnan(gm[0]));
    EXPECT_EQ(ga[0], 150000);
}

TYPED_TEST(ReduceEdgeFloat, LogsumexpStability) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const T inf = std::numeric_limits<T>::infinity();
    const std::vector<T> v = {1000, 1000, -inf, -inf, inf, 3, -1000, -1000};
    const std::vector<I> off = {0, 2, 4, 6, 8};
    std::vector<T> o(4);
    segred::segment_reduce(segred::host, segred::rows(v.data(), 8), segred::offsets(off.data(), 4),
                           segred::rows(o.data(), 4), segred::logsumexp{});
    const double tol = std::is_same<T, float>::value ? 1e-3 : 1e-10;
    EXPECT_NEAR(o[0], 1000 + std::log(2.0), tol);
    EXPECT_EQ(o[1], -inf);
    EXPECT_EQ(o[2], inf);
    EXPECT_NEAR(o[3], -1000 + std::log(2.0), tol);
}

// One giant segment (200000 rows, cut into pieces by the implementation)
// among small ones, in several forms and widths, against the reference.
template <class P>
class ReduceGiant : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceGiant, segtest::value_index_diagonal, segtest::vi_names);

template <form F, class T, class I, bool AllReducers = true>
void giant_case(segref::rng& g, const segtest::seg_input<I>& s, i64 width) {
    using segref::op;
    segtest::trial_config c;
    c.width = c.out_width = width;
    c.counts = true;
    c.kind = segref::value_kind::exact;
    std::vector<T> v = segref::random_values<T>(g, s.n * width, c.kind);
    // Ties for the maximum in two different pieces of the giant segment.
    for (i64 f = 0; f < width; ++f) v[static_cast<std::size_t>(70001 * width + f)] =
        v[static_cast<std::size_t>(150001 * width + f)] = static_cast<T>(100);
    SCOPED_TRACE(s.describe().substr(0, 200) + ", width " + std::to_string(width));
    segtest::check_reduce<F, T, I, T>(segred::host, segred::sum{}, op::sum, 0, c, s, v, g);
    segtest::check_reduce<F, T, I, std::int64_t>(segred::host, segred::argmax{}, op::argmax, 0, c, s, v, g);
    c.arg = true;
    segtest::check_reduce<F, T, I, T>(segred::host, segred::min{}, op::min, 0, c, s, v, g);
    c.arg = false;
    if constexpr (AllReducers) {  // compile time: the rest only in some forms
        segtest::check_reduce<F, T, I, segtest::real_out<T>>(segred::host, segred::var{}, op::var, 0, c, s, v, g);
        segtest::check_reduce<F, T, I, segtest::real_out<T>>(segred::host, segred::logsumexp{}, op::logsumexp, 0, c,
                                                             s, v, g);
        segtest::check_reduce<F, T, I, T>(segred::host, segred::mean{}, op::mean, 0, c, s, v, g);
        c.accumulate = true;
        segtest::check_reduce<F, T, I, T>(segred::host, segred::sum{}, op::sum, 0, c, s, v, g);
    }
}

TYPED_TEST(ReduceGiant, OneGiantSegment) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    const i64 big = 200000;
    // offsets: small, giant, empty, small.
    {
        segtest::seg_input<I> s;
        s.kind = form::offsets;
        s.M = 4;
        s.n = 3 + big + 5;
        s.idx = {0, 3, static_cast<I>(3 + big), static_cast<I>(3 + big), static_cast<I>(s.n)};
        for (i64 w : {1, 3}) giant_case<form::offsets, T, I>(g, s, w);
    }
    // unsorted ids: most rows in segment 2, the rest spread over 0..4.
    {
        segtest::seg_input<I> s;
        s.kind = form::ids;
        s.M = 5;
        s.n = big + 1000;
        s.idx = segref::random_ids<I>(g, s.n, 0, 4);
        for (std::size_t i = 0; i < s.idx.size(); ++i)
            if (segref::coin(g, 0.97)) s.idx[i] = I(2);
        giant_case<form::ids, T, I>(g, s, 1);
    }
    // fixed: two giant segments.
    {
        segtest::seg_input<I> s;
        s.kind = form::fixed;
        s.M = 2;
        s.fixed_size = big;
        s.n = 2 * big;
        giant_case<form::fixed, T, I, false>(g, s, 1);
    }
}

} // namespace
