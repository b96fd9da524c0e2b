// segment_reduce_backward on small hand-computed cases: the tie policy
// (lowest row; split evenly; NaN), saved arg rows, prod with zero, one and
// two zeros, std and var at zero spread, n <= ddof, logsumexp of -inf, rows
// in no segment, drop, accumulate, errors (nothing written), and results
// independent of the thread count.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/grad_check.hpp"
#include "common/expect_error.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::i64;
using dvec = std::vector<double>;
const double nan_v = std::numeric_limits<double>::quiet_NaN();
const double inf_v = std::numeric_limits<double>::infinity();

// Forward with segred (out and arg rows), then the backward with grad_out g.
template <class Seg, class R>
dvec grad_of(const dvec& v, const Seg& seg, i64 M, const dvec& g, const R& r,
             segred::options opts = segred::options{}) {
    const i64 n = static_cast<i64>(v.size());
    dvec out(static_cast<std::size_t>(M));
    segred::segment_reduce(segred::host, segred::rows(v.data(), n), seg, segred::rows(out.data(), M), r,
                           segred::options{}.bounds(opts.bounds_mode));
    dvec grad(static_cast<std::size_t>(n), -99.0);
    segred::segment_reduce_backward(segred::host, segred::rows(v.data(), n), seg, segred::rows(out.data(), M),
                                    segred::rows(g.data(), M), segred::rows(grad.data(), n), r, opts);
    return grad;
}

TEST(BackwardReduceCases, SumAndMean) {
    const dvec v{1, 2, 3, 4, 5}, g{10, 20, 30};
    const std::vector<std::int32_t> off{0, 2, 2, 5};  // segment 1 is empty
    EXPECT_EQ(grad_of(v, segred::offsets(off.data(), 3), 3, g, segred::sum{}), (dvec{10, 10, 30, 30, 30}));
    EXPECT_EQ(grad_of(v, segred::offsets(off.data(), 3), 3, g, segred::mean{}), (dvec{5, 5, 10, 10, 10}));
}

TEST(BackwardReduceCases, MaxTiesGoToTheLowestRow) {
    const dvec v{3, 7, 7, 1}, g{8};
    const auto seg = segred::fixed(4, 1);
    EXPECT_EQ(grad_of(v, seg, 1, g, segred::max{}), (dvec{0, 8, 0, 0}));
    EXPECT_EQ(grad_of(v, seg, 1, g, segred::max{}, segred::options{}.split_ties()), (dvec{0, 4, 4, 0}));
    const dvec w{2, 5, 2, 2};
    EXPECT_EQ(grad_of(w, seg, 1, g, segred::min{}), (dvec{8, 0, 0, 0}));
    EXPECT_EQ(grad_of(w, seg, 1, dvec{9}, segred::min{}, segred::options{}.split_ties()), (dvec{3, 0, 3, 3}));
}

TEST(BackwardReduceCases, NaNRowsTakeTheGradient) {
    const dvec v{1, nan_v, 5, nan_v}, g{6};
    const auto seg = segred::fixed(4, 1);
    for (bool is_max : {true, false}) {
        SCOPED_TRACE(is_max ? "max" : "min");
        const dvec one = is_max ? grad_of(v, seg, 1, g, segred::max{}) : grad_of(v, seg, 1, g, segred::min{});
        EXPECT_EQ(one, (dvec{0, 6, 0, 0}));
        const segred::options split = segred::options{}.split_ties();
        const dvec shared =
            is_max ? grad_of(v, seg, 1, g, segred::max{}, split) : grad_of(v, seg, 1, g, segred::min{}, split);
        EXPECT_EQ(shared, (dvec{0, 3, 0, 3}));
    }
}

// The forward's saved arg rows are used as given, not recomputed.
TEST(BackwardReduceCases, SavedArgRowsAreUsed) {
    const dvec v{3, 7, 7, 1, 4, 4}, g{8, 2};
    const std::vector<std::int64_t> off{0, 4, 6};
    std::vector<std::int64_t> arg{2, 5};  // as a forward that broke ties upward would have saved
    dvec out{7, 4}, grad(6);
    segred::segment_reduce_backward(segred::host, segred::rows(v.data(), 6), segred::offsets(off.data(), 2),
                                    segred::rows(out.data(), 2), segred::rows(g.data(), 2),
                                    segred::rows(grad.data(), 6), segred::max{}, segred::options{}.arg_out(arg.data()));
    EXPECT_EQ(grad, (dvec{0, 0, 8, 0, 0, 2}));
}

// Per-column arg rows with width 2.
TEST(BackwardReduceCases, WidthTwoColumnsHaveTheirOwnArgRows) {
    const dvec v{1, 9,  //
                 5, 2,  //
                 3, 4};
    const dvec g{10, 20};
    dvec out(2), grad(6);
    const auto seg = segred::fixed(3, 1);
    segred::segment_reduce(segred::host, segred::rows(v.data(), 3, 2), seg, segred::rows(out.data(), 1, 2),
                           segred::max{});
    segred::segment_reduce_backward(segred::host, segred::rows(v.data(), 3, 2), seg, segred::rows(out.data(), 1, 2),
                                    segred::rows(g.data(), 1, 2), segred::rows(grad.data(), 3, 2), segred::max{});
    EXPECT_EQ(grad, (dvec{0, 20, 10, 0, 0, 0}));
}

TEST(BackwardReduceCases, ProdZeros) {
    const auto seg = segred::fixed(3, 1);
    const dvec g{2};
    EXPECT_EQ(grad_of(dvec{2, 3, 4}, seg, 1, g, segred::prod{}), (dvec{24, 16, 12}));    // no zero
    EXPECT_EQ(grad_of(dvec{2, 0, -4}, seg, 1, g, segred::prod{}), (dvec{0, -16, 0}));    // one zero
    EXPECT_EQ(grad_of(dvec{0, 3, 0}, seg, 1, g, segred::prod{}), (dvec{0, 0, 0}));       // two zeros
    EXPECT_EQ(grad_of(dvec{0}, segred::fixed(1, 1), 1, g, segred::prod{}), (dvec{2}));  // only a zero
}

TEST(BackwardReduceCases, StdAndVarAtZeroSpread) {
    const auto seg = segred::fixed(3, 1);
    const dvec g{5};
    EXPECT_EQ(grad_of(dvec{4, 4, 4}, seg, 1, g, segred::stddev{}), (dvec{0, 0, 0}));  // 0, not NaN
    EXPECT_EQ(grad_of(dvec{4, 4, 4}, seg, 1, g, segred::var{}), (dvec{0, 0, 0}));
    // var{0} of {1, 2, 3}: 2 (v - 2) / 3; std = sqrt(2/3): (v - 2) / (3 std).
    const dvec gv = grad_of(dvec{1, 2, 3}, seg, 1, dvec{1}, segred::var{});
    EXPECT_NEAR(gv[0], -2.0 / 3, 1e-15);
    EXPECT_EQ(gv[1], 0.0);
    EXPECT_NEAR(gv[2], 2.0 / 3, 1e-15);
    const dvec gs = grad_of(dvec{1, 2, 3}, seg, 1, dvec{1}, segred::stddev{1});  // std{1} = 1
    EXPECT_NEAR(gs[0], -0.5, 1e-15);
    EXPECT_NEAR(gs[2], 0.5, 1e-15);
}

TEST(BackwardReduceCases, TooFewRowsForDdofGiveNaN) {
    const std::vector<std::int64_t> len{1, 2};
    const dvec v{7, 1, 3}, g{1, 1};
    const dvec gv = grad_of(v, segred::lengths(len.data(), 2), 2, g, segred::var{1});
    EXPECT_TRUE(std::isnan(gv[0]));
    EXPECT_EQ(gv[1], -2.0);  // 2 (1 - 2) / (2 - 1)
    EXPECT_EQ(gv[2], 2.0);
    const dvec g0 = grad_of(dvec{7}, segred::fixed(1, 1), 1, dvec{1}, segred::var{0});
    EXPECT_EQ(g0, (dvec{0}));  // one row, ddof 0: var is 0 whatever the value
}

TEST(BackwardReduceCases, LogSumExp) {
    const dvec v{0, std::log(3.0)};
    const dvec gv = grad_of(v, segred::fixed(2, 1), 1, dvec{4}, segred::logsumexp{});
    EXPECT_NEAR(gv[0], 1.0, 1e-15);  // 4 * 1/4
    EXPECT_NEAR(gv[1], 3.0, 1e-15);  // 4 * 3/4
    // All -inf: no weights to share.
    EXPECT_EQ(grad_of(dvec{-inf_v, -inf_v}, segred::fixed(2, 1), 1, dvec{4}, segred::logsumexp{}), (dvec{0, 0}));
}

TEST(BackwardReduceCases, RowsInNoSegmentGetZeroOrKeepTheirValue) {
    const dvec v{1, 2, 3, 4, 5}, g{10};
    const std::vector<std::int64_t> off{1, 3};  // rows 0, 3, 4 in no segment
    EXPECT_EQ(grad_of(v, segred::offsets(off.data(), 1), 1, g, segred::sum{}), (dvec{0, 10, 10, 0, 0}));
    dvec out{5}, grad{1, 1, 1, 1, 1};
    segred::segment_reduce_backward(segred::host, segred::rows(v.data(), 5), segred::offsets(off.data(), 1),
                                    segred::rows(out.data(), 1), segred::rows(g.data(), 1),
                                    segred::rows(grad.data(), 5), segred::sum{}, segred::options{}.accumulate());
    EXPECT_EQ(grad, (dvec{1, 11, 11, 1, 1}));
    // M = 0: every row is outside.
    const std::vector<std::int64_t> none{0};
    EXPECT_EQ(grad_of(v, segred::offsets(none.data(), 0), 0, dvec{}, segred::mean{}), (dvec{0, 0, 0, 0, 0}));
}

TEST(BackwardReduceCases, DroppedIdsGetZero) {
    const dvec v{1, 2, 3, 4}, g{10, 20};
    const std::vector<std::int32_t> id{1, -1, 0, 7};
    const segred::options drop = segred::options{}.bounds(segred::bounds_policy::drop);
    EXPECT_EQ(grad_of(v, segred::ids(id.data(), 2), 2, g, segred::mean{}, drop), (dvec{20, 0, 10, 0}));
    const std::vector<std::int64_t> sorted{0, 0, 5, 1};  // unsorted and out of range: drop sends rows to their id
    EXPECT_EQ(grad_of(v, segred::sorted_ids(sorted.data(), 2), 2, g, segred::sum{}, drop), (dvec{10, 10, 0, 20}));
}

TEST(BackwardReduceCases, SubscriptsViaAccumarray) {
    const dvec v{1, 2, 3}, g{1, 2, 3, 4};  // 2 x 2 output
    const std::vector<std::int32_t> subs{1, 0,  //
                                         0, 1,  //
                                         1, 0};
    dvec out(4), grad(3);
    const auto seg = segred::subscripts(subs.data(), {2, 2});
    segred::accumarray(segred::host, segred::rows(v.data(), 3), seg, segred::rows(out.data(), 4), segred::mean{});
    segred::accumarray_backward(segred::host, segred::rows(v.data(), 3), seg, segred::rows(out.data(), 4),
                                segred::rows(g.data(), 4), segred::rows(grad.data(), 3), segred::mean{});
    EXPECT_EQ(grad, (dvec{1.5, 2, 1.5}));  // cell (1,0) = 2 holds rows 0 and 2; cell (0,1) = 1 holds row 1
}

using segtest::expect_error;

TEST(BackwardReduceCases, ErrorsWriteNothing) {
    const dvec v{1, 2, 3, 4}, out{1, 2}, g{1, 1};
    dvec grad(4, 123.0);
    const std::vector<std::int32_t> bad_ids{0, 1, 2, 1};
    auto V = segred::rows(v.data(), 4);
    auto O = segred::rows(out.data(), 2);
    auto G = segred::rows(g.data(), 2);
    auto GV = segred::rows(grad.data(), 4);
    for (int k = 0; k < 3; ++k) {  // check throws before any pass writes, whatever the reducer's passes
        expect_error(
            [&] {
                const auto seg = segred::ids(bad_ids.data(), 2);
                if (k == 0) segred::accumarray_backward(segred::host, V, seg, O, G, GV, segred::prod{});
                if (k == 1) segred::accumarray_backward(segred::host, V, seg, O, G, GV, segred::stddev{});
                if (k == 2) segred::accumarray_backward(segred::host, V, seg, O, G, GV, segred::max{});
            },
            {"segred::accumarray_backward", "ids[2] = 2", "out of range [0, 2)"});
    }
    const std::vector<std::int32_t> ok_ids{0, 1, 1, 0};
    const auto seg = segred::ids(ok_ids.data(), 2);
    expect_error([&] { segred::accumarray_backward(segred::host, V, seg, O, segred::rows(g.data(), 1), GV); },
                 {"accumarray_backward", "grad_out is [1, 1] but out is [2, 1]"});
    expect_error([&] { segred::accumarray_backward(segred::host, V, seg, O, G, segred::rows(grad.data(), 3)); },
                 {"grad_values is [3, 1] but values is [4, 1]"});
    std::vector<std::int64_t> arg{0, 1};
    expect_error(
        [&] {
            segred::accumarray_backward(segred::host, V, seg, O, G, GV, segred::sum{},
                                        segred::options{}.arg_out(arg.data()));
        },
        {"arg_out", "needs min or max, not sum"});
    expect_error([&] { segred::segment_reduce_backward(segred::host, V, segred::fixed(3, 2), O, G, GV); },
                 {"segment_reduce_backward", "fixed(3, 2) covers 6 rows"});
    for (double x : grad) EXPECT_EQ(x, 123.0);
}

// Same bits on one thread and on several, including a segment long enough to
// be cut into pieces.
TEST(BackwardReduceCases, ThreadCountDoesNotChangeBits) {
    SEGRED_SEEDED_RNG(g);
    const i64 n = 20000, M = 3;
    const std::vector<std::int64_t> off{0, 5, 19000, n};
    const dvec v = segref::random_values<double>(g, n, segref::value_kind::product);
    const dvec r = segref::random_values<double>(g, M, segref::value_kind::general);
    dvec out(M);
    const auto seg = segred::offsets(off.data(), M);
    segred::segment_reduce(segred::host, segred::rows(v.data(), n), seg, segred::rows(out.data(), M),
                           segred::logsumexp{});
    dvec one(n), many(n);
    segred::segment_reduce_backward(segred::host.threads(1), segred::rows(v.data(), n), seg,
                                    segred::rows(out.data(), M), segred::rows(r.data(), M), segred::rows(one.data(), n),
                                    segred::logsumexp{});
    segred::segment_reduce_backward(segred::host.threads(2), segred::rows(v.data(), n), seg,
                                    segred::rows(out.data(), M), segred::rows(r.data(), M),
                                    segred::rows(many.data(), n), segred::logsumexp{});
    EXPECT_TRUE(segtest::same_bits(one, many));
}

} // namespace
