// bincount (counts and weighted sums), gather and gather_backward
// (index_add) on fresh random inputs against the independent reference, plus
// their edge cases: n = 0, M = 0, drop, fill, accumulate, many ids on few rows.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::equal_all;
using segtest::i64;
using segtest::near_all;
using segref::coin;
using segref::uniform_int;

template <class P>
class BincountGather : public ::testing::Test {};
TYPED_TEST_SUITE(BincountGather, segtest::all_value_index_pairs, segtest::vi_names);

// Random ids in [0, M); under drop some are replaced by out-of-range values.
template <class I>
std::vector<I> some_ids(segref::rng& g, i64 n, i64 M, bool drop) {
    std::vector<I> id = M > 0 ? segref::random_ids<I>(g, n, 0, M - 1) : std::vector<I>(static_cast<std::size_t>(n));
    if (drop)
        for (I& v : id)
            if (M == 0 || coin(g, 0.15)) v = static_cast<I>(coin(g, 0.5) ? uniform_int(g, -3, -1) : M + uniform_int(g, 0, 3));
    return id;
}

TYPED_TEST(BincountGather, BincountRandom) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < 30; ++t) {
        const i64 n = uniform_int(g, 0, 400), M = coin(g, 0.1) ? 0 : uniform_int(g, 1, 40);
        const i64 width = coin(g, 0.5) ? 1 : 3;
        const bool drop = coin(g, 0.4) || (M == 0 && n > 0);
        const bool acc = coin(g, 0.3);
        const std::vector<I> id = some_ids<I>(g, n, M, drop);
        const std::vector<T> w = segref::random_values<T>(g, n * width, segref::value_kind::general);
        SCOPED_TRACE("trial " + std::to_string(t) + ": n = " + std::to_string(n) + ", M = " + std::to_string(M) +
                     ", width " + std::to_string(width) + (drop ? ", drop" : "") + (acc ? ", accumulate" : ""));
        const segref::row_lists rows = segref::from_ids(id.data(), M, n, drop);
        segred::options opts = segred::options{}.accumulate(acc);
        if (drop) opts.bounds(segred::bounds_policy::drop);

        // Occurrence counts.
        segref::params pc;
        pc.o = segref::op::count;
        pc.out_width = 1;
        pc.accumulate = acc;
        std::vector<std::int64_t> cnt = segref::random_ids<std::int64_t>(g, M, 0, 9);
        pc.initial.assign(cnt.begin(), cnt.end());
        const segref::result rc = segref::reduce<T>(w.data(), width, rows, pc);
        segred::bincount(segred::host, segred::rows(id.data(), n), segred::rows(cnt.data(), M), opts);
        EXPECT_TRUE(equal_all(cnt, rc.out, "counts"));

        // Weighted sums.
        segref::params ps;
        ps.o = segref::op::sum;
        ps.accumulate = acc;
        std::vector<T> sums = segref::random_values<T>(g, M * width, segref::value_kind::general);
        ps.initial.assign(sums.begin(), sums.end());
        const segref::result rs = segref::reduce<T>(w.data(), width, rows, ps);
        segred::bincount(segred::host, segred::rows(w.data(), n, width), segred::rows(id.data(), n),
                         segred::rows(sums.data(), M, width), opts);
        EXPECT_TRUE(near_all(sums, segtest::as_out<T>(rs.out), &rs.scale, segtest::rtol_for<T>(segref::op::sum),
                             "weighted"));
        if (::testing::Test::HasFailure()) return;
    }
}

TYPED_TEST(BincountGather, BincountEdges) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    // No ids: all bins zero (ids may be null).
    std::vector<double> out(4, -1.0);
    segred::bincount(segred::host, segred::rows(static_cast<const I*>(nullptr), 0), segred::rows(out.data(), 4));
    EXPECT_TRUE(equal_all(out, std::vector<double>(4, 0.0)));
    // All ids equal, bins at 0 and at the last position.
    const std::vector<I> id = {3, 0, 3, 3};
    std::vector<T> o(4, T(-1));
    segred::bincount(segred::host, segred::rows(id.data(), 4), segred::rows(o.data(), 4));
    EXPECT_TRUE(equal_all(o, std::vector<double>{1, 0, 0, 3}));
    // Out of range under drop: skipped; with no bins at all nothing happens.
    const std::vector<I> bad = {0, 4, -1, 1};
    std::vector<std::int64_t> c(2, -1);
    segred::bincount(segred::host, segred::rows(bad.data(), 4), segred::rows(c.data(), 2),
                     segred::options{}.bounds(segred::bounds_policy::drop));
    EXPECT_TRUE(equal_all(c, std::vector<double>{1, 1}));
    segred::bincount(segred::host, segred::rows(bad.data(), 4), segred::rows(static_cast<std::int64_t*>(nullptr), 0),
                     segred::options{}.bounds(segred::bounds_policy::drop));
    // Weights with a width of 2.
    const std::vector<T> w = {1, 10, 2, 20, 3, 30, 4, 40};
    std::vector<T> ws(8, T(-1));
    segred::bincount(segred::host, segred::rows(w.data(), 4, 2), segred::rows(id.data(), 4), segred::rows(ws.data(), 4, 2));
    EXPECT_TRUE(equal_all(ws, std::vector<double>{2, 20, 0, 0, 0, 0, 8, 80}));
}

TYPED_TEST(BincountGather, GatherRandom) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < 30; ++t) {
        const i64 M = coin(g, 0.1) ? 0 : uniform_int(g, 1, 50), n = uniform_int(g, 0, 300);
        const i64 width = coin(g, 0.5) ? 1 : 3;
        const bool drop = coin(g, 0.4) || (M == 0 && n > 0);
        const std::vector<T> src = segref::random_values<T>(g, M * width, segref::value_kind::general);
        const std::vector<I> id = some_ids<I>(g, n, M, drop);
        SCOPED_TRACE("trial " + std::to_string(t) + ": M = " + std::to_string(M) + ", n = " + std::to_string(n) +
                     ", width " + std::to_string(width) + (drop ? ", drop" : ""));
        segred::options opts;
        double fill = 0.0;
        if (drop) {
            opts.bounds(segred::bounds_policy::drop);
            if (coin(g, 0.5)) opts.fill(fill = static_cast<double>(uniform_int(g, -9, 9)));
        } else if (coin(g, 0.3)) {
            opts.bounds(segred::bounds_policy::unchecked);
        }
        std::vector<T> out(static_cast<std::size_t>(n * width), T(77));
        segred::gather(segred::host, segred::rows(src.data(), M, width), segred::rows(id.data(), n),
                       segred::rows(out.data(), n, width), opts);
        EXPECT_TRUE(equal_all(out, segref::gather(src.data(), M, width, id.data(), n, drop, fill)));
        if (::testing::Test::HasFailure()) return;
    }
}

TYPED_TEST(BincountGather, GatherEdges) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> src = {1, 2, 3, 4, 5, 6};  // [3, 2]
    // n = 0: nothing happens (ids and out may be null).
    segred::gather(segred::host, segred::rows(src.data(), 3, 2), segred::rows(static_cast<const I*>(nullptr), 0),
                   segred::rows(static_cast<T*>(nullptr), 0, 2));
    // First and last rows, repeated; into another output type.
    const std::vector<I> id = {2, 0, 2};
    std::vector<double> out(6, -1);
    segred::gather(segred::host, segred::rows(src.data(), 3, 2), segred::rows(id.data(), 3),
                   segred::rows(out.data(), 3, 2));
    EXPECT_TRUE(equal_all(out, std::vector<double>{5, 6, 1, 2, 5, 6}));
    // drop: an out-of-range id gives the fill value (0, a constant or NaN).
    const std::vector<I> bad = {1, 3, -1};
    segred::gather(segred::host, segred::rows(src.data(), 3, 2), segred::rows(bad.data(), 3),
                   segred::rows(out.data(), 3, 2), segred::options{}.bounds(segred::bounds_policy::drop));
    EXPECT_TRUE(equal_all(out, std::vector<double>{3, 4, 0, 0, 0, 0}));
    segred::gather(segred::host, segred::rows(src.data(), 3, 2), segred::rows(bad.data(), 3),
                   segred::rows(out.data(), 3, 2), segred::options{}.bounds(segred::bounds_policy::drop).fill(-2));
    EXPECT_TRUE(equal_all(out, std::vector<double>{3, 4, -2, -2, -2, -2}));
    segred::gather(segred::host, segred::rows(src.data(), 3, 2), segred::rows(bad.data(), 3),
                   segred::rows(out.data(), 3, 2), segred::options{}.bounds(segred::bounds_policy::drop).fill_nan());
    EXPECT_TRUE(std::isnan(out[2]) && std::isnan(out[5]));
    EXPECT_EQ(out[0], 3);
    // An empty source under drop: every row is filled.
    segred::gather(segred::host, segred::rows(static_cast<const T*>(nullptr), 0, 2), segred::rows(id.data(), 3),
                   segred::rows(out.data(), 3, 2), segred::options{}.bounds(segred::bounds_policy::drop).fill(7));
    EXPECT_TRUE(equal_all(out, std::vector<double>(6, 7.0)));
}

TYPED_TEST(BincountGather, GatherBackwardRandom) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < 30; ++t) {
        const i64 M = coin(g, 0.1) ? 0 : uniform_int(g, 1, 50), n = uniform_int(g, 0, 300);
        const i64 width = coin(g, 0.5) ? 1 : 3;
        const bool drop = coin(g, 0.4) || (M == 0 && n > 0);
        const bool acc = coin(g, 0.4);
        const std::vector<T> grad_out = segref::random_values<T>(g, n * width, segref::value_kind::general);
        std::vector<I> id = some_ids<I>(g, n, M, drop);
        if (M > 0 && coin(g, 0.3))  // few rows receive many gradients
            for (I& v : id)
                if (v >= 0 && v < M) v = static_cast<I>(v % std::min<i64>(M, 2));
        SCOPED_TRACE("trial " + std::to_string(t) + ": M = " + std::to_string(M) + ", n = " + std::to_string(n) +
                     ", width " + std::to_string(width) + (drop ? ", drop" : "") + (acc ? ", accumulate" : ""));
        std::vector<T> grad_src = segref::random_values<T>(g, M * width, segref::value_kind::general);
        segref::params p;
        p.o = segref::op::sum;
        p.accumulate = acc;
        p.initial.assign(grad_src.begin(), grad_src.end());
        const segref::result r = segref::reduce<T>(grad_out.data(), width, segref::from_ids(id.data(), M, n, drop), p);
        segred::options opts = segred::options{}.accumulate(acc);
        if (drop) opts.bounds(segred::bounds_policy::drop);
        segred::gather_backward(segred::host, segred::rows(grad_out.data(), n, width), segred::rows(id.data(), n),
                                segred::rows(grad_src.data(), M, width), opts);
        EXPECT_TRUE(near_all(grad_src, segtest::as_out<T>(r.out), &r.scale, segtest::rtol_for<T>(segref::op::sum),
                             "grad_src"));
        if (::testing::Test::HasFailure()) return;
    }
}

TYPED_TEST(BincountGather, GatherBackwardEdges) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    const std::vector<T> go = {1, 2, 3, 4, 5, 6};  // [3, 2]
    const std::vector<I> id = {2, 0, 2};
    // Overwrite: rows with no ids become 0.
    std::vector<T> gs(8, T(9));
    segred::gather_backward(segred::host, segred::rows(go.data(), 3, 2), segred::rows(id.data(), 3),
                            segred::rows(gs.data(), 4, 2));
    EXPECT_TRUE(equal_all(gs, std::vector<double>{3, 4, 0, 0, 6, 8, 0, 0}));
    // accumulate: index_add into the existing values.
    segred::gather_backward(segred::host, segred::rows(go.data(), 3, 2), segred::rows(id.data(), 3),
                            segred::rows(gs.data(), 4, 2), segred::options{}.accumulate());
    EXPECT_TRUE(equal_all(gs, std::vector<double>{6, 8, 0, 0, 12, 16, 0, 0}));
    // n = 0: overwrite zeroes everything, accumulate keeps.
    segred::gather_backward(segred::host, segred::rows(static_cast<const T*>(nullptr), 0, 2),
                            segred::rows(static_cast<const I*>(nullptr), 0), segred::rows(gs.data(), 4, 2),
                            segred::options{}.accumulate());
    EXPECT_TRUE(equal_all(gs, std::vector<double>{6, 8, 0, 0, 12, 16, 0, 0}));
    segred::gather_backward(segred::host, segred::rows(static_cast<const T*>(nullptr), 0, 2),
                            segred::rows(static_cast<const I*>(nullptr), 0), segred::rows(gs.data(), 4, 2));
    EXPECT_TRUE(equal_all(gs, std::vector<double>(8, 0.0)));
    // Many gradients onto one row (100000 rows onto row 1 of 3).
    const i64 n = 100000;
    const std::vector<T> ones(n, T(1));
    const std::vector<I> same(n, I(1));
    std::vector<T> g3(3, T(5));
    segred::gather_backward(segred::host, segred::rows(ones.data(), n), segred::rows(same.data(), n),
                            segred::rows(g3.data(), 3));
    EXPECT_TRUE(equal_all(g3, std::vector<double>{0, 100000, 0}));
}

} // namespace
