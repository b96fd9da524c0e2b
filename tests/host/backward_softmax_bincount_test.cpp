// segment_softmax_backward and bincount_backward: central differences of
// the reference forwards on fresh random inputs (every form, drop, rows in
// no segment, accumulate, duplicate ids), plus hand-computed cases and
// errors.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/grad_check.hpp"
#include "common/reduce_harness.hpp"
#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

using segref::coin;
using segref::uniform_int;
using segtest::form;
using segtest::i64;
using dvec = std::vector<double>;

template <form F, class I>
void softmax_fd_trials(int trials) {
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < trials; ++t) {
        const bool corrupt = F != form::fixed && coin(g, 0.3);
        const segtest::seg_input<I> s = segtest::random_segments<I>(g, F, corrupt, 10, 40);
        const i64 width = coin(g, 0.5) ? 1 : 3;
        const bool acc = coin(g, 0.3);
        const segref::row_lists rows = s.rows(corrupt);
        SCOPED_TRACE("trial " + std::to_string(t) + ": " + s.describe() + ", width " + std::to_string(width) +
                     (corrupt ? ", drop" : "") + (acc ? ", accumulate" : ""));
        const dvec x = segref::random_values<double>(g, s.n * width, segref::value_kind::general);
        const dvec r = segref::random_values<double>(g, s.n * width, segref::value_kind::general);
        auto forward = [&](const dvec& v) { return segref::softmax(v.data(), s.n, width, rows, 0.0); };
        const dvec expect = segtest::numeric_grad(x, r, forward);
        const dvec y = forward(x);
        dvec grad = segref::random_values<double>(g, s.n * width, segref::value_kind::general);
        const dvec before = grad;
        segred::options opts = segred::options{}.accumulate(acc);
        if (corrupt) opts.bounds(segred::bounds_policy::drop);
        segred::segment_softmax_backward(segred::host, segred::rows(y.data(), s.n, width),
                                         segtest::make_desc<F>(s.idx.data(), s), segred::rows(r.data(), s.n, width),
                                         segred::rows(grad.data(), s.n, width), opts);
        EXPECT_TRUE(segtest::grad_near(grad, acc ? segtest::plus(before, expect) : expect, 1e-5, 1e-6, "grad_values"));
        if (::testing::Test::HasFailure()) return;
    }
}

TEST(BackwardSoftmax, RandomOffsets) { softmax_fd_trials<form::offsets, std::int64_t>(40); }
TEST(BackwardSoftmax, RandomLengths) { softmax_fd_trials<form::lengths, std::int32_t>(40); }
TEST(BackwardSoftmax, RandomSortedIds) { softmax_fd_trials<form::sorted_ids, std::int64_t>(40); }
TEST(BackwardSoftmax, RandomIds) { softmax_fd_trials<form::ids, std::int32_t>(40); }
TEST(BackwardSoftmax, RandomFixed) { softmax_fd_trials<form::fixed, std::int32_t>(40); }
TEST(BackwardSoftmax, RandomSubscripts) { softmax_fd_trials<form::subscripts, std::int64_t>(40); }

TEST(BackwardSoftmax, HandComputed) {
    // One segment of two equal values: y = {1/2, 1/2}; g = {1, 0}: sum g*y = 1/2.
    const dvec y{0.5, 0.5}, g{1, 0};
    dvec grad(2);
    segred::segment_softmax_backward(segred::host, segred::rows(y.data(), 2), segred::fixed(2, 1),
                                     segred::rows(g.data(), 2), segred::rows(grad.data(), 2));
    EXPECT_EQ(grad, (dvec{0.25, -0.25}));
    // A single-row segment has y = 1 and gradient 0 whatever g.
    const dvec y1{1.0}, g1{7.0};
    dvec grad1{5.0};
    segred::segment_softmax_backward(segred::host, segred::rows(y1.data(), 1), segred::fixed(1, 1),
                                     segred::rows(g1.data(), 1), segred::rows(grad1.data(), 1));
    EXPECT_EQ(grad1, (dvec{0.0}));
}

// Float output and gradients: the products go to scratch (accumulate) or
// into grad_values itself; both agree with double.
TEST(BackwardSoftmax, FloatInPlaceAndScratchAgree) {
    SEGRED_SEEDED_RNG(g);
    const i64 n = 200, M = 7;
    const std::vector<std::int32_t> id = segref::random_ids<std::int32_t>(g, n, 0, M - 1);
    const dvec x = segref::random_values<double>(g, n, segref::value_kind::general);
    const dvec r = segref::random_values<double>(g, n, segref::value_kind::general);
    const segref::row_lists rows = segref::from_ids(id.data(), M, n, false);
    const dvec y = segref::softmax(x.data(), n, 1, rows, 0.0);
    const std::vector<float> yf(y.begin(), y.end()), rf(r.begin(), r.end());
    dvec gd(n);
    std::vector<float> direct(n), added(n, 0.0f);
    const auto seg = segred::ids(id.data(), M);
    segred::segment_softmax_backward(segred::host, segred::rows(y.data(), n), seg, segred::rows(r.data(), n),
                                     segred::rows(gd.data(), n));
    segred::segment_softmax_backward(segred::host, segred::rows(yf.data(), n), seg, segred::rows(rf.data(), n),
                                     segred::rows(direct.data(), n));
    segred::segment_softmax_backward(segred::host, segred::rows(yf.data(), n), seg, segred::rows(rf.data(), n),
                                     segred::rows(added.data(), n), segred::options{}.accumulate());
    EXPECT_TRUE(segtest::grad_near(direct, gd, 1e-4, 1e-5, "in place"));
    EXPECT_TRUE(segtest::same_bits(direct, added, "scratch"));
}

template <class I>
void bincount_fd_trials(int trials) {
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < trials; ++t) {
        const i64 n = uniform_int(g, 0, 40), B = uniform_int(g, 1, 8);  // few bins: many duplicate ids
        const i64 width = coin(g, 0.5) ? 1 : 3;
        const bool drop = coin(g, 0.3), acc = coin(g, 0.3);
        std::vector<I> id = segref::random_ids<I>(g, n, 0, B - 1);
        if (drop)
            for (I& k : id)
                if (coin(g, 0.2)) k = static_cast<I>(coin(g, 0.5) ? -1 : B + uniform_int(g, 0, 2));
        SCOPED_TRACE("trial " + std::to_string(t) + ": n = " + std::to_string(n) + ", B = " + std::to_string(B) +
                     ", width " + std::to_string(width) + (drop ? ", drop" : "") + (acc ? ", accumulate" : ""));
        const segref::row_lists rows = segref::from_ids(id.data(), B, n, drop);
        const dvec w = segref::random_values<double>(g, n * width, segref::value_kind::general);
        const dvec r = segref::random_values<double>(g, B * width, segref::value_kind::general);
        segref::params prm;
        prm.o = segref::op::sum;
        auto forward = [&](const dvec& v) { return segref::reduce<double>(v.data(), width, rows, prm).out; };
        const dvec expect = segtest::numeric_grad(w, r, forward);
        dvec grad = segref::random_values<double>(g, n * width, segref::value_kind::general);
        const dvec before = grad;
        segred::options opts = segred::options{}.accumulate(acc);
        if (drop) opts.bounds(segred::bounds_policy::drop);
        segred::bincount_backward(segred::host, segred::rows(id.data(), n), segred::rows(r.data(), B, width),
                                  segred::rows(grad.data(), n, width), opts);
        EXPECT_TRUE(segtest::grad_near(grad, acc ? segtest::plus(before, expect) : expect, 1e-5, 1e-6, "grad_weights"));
        if (::testing::Test::HasFailure()) return;
    }
}

TEST(BackwardBincount, RandomInt32) { bincount_fd_trials<std::int32_t>(60); }
TEST(BackwardBincount, RandomInt64) { bincount_fd_trials<std::int64_t>(60); }

TEST(BackwardBincount, HandComputedAndErrors) {
    const std::vector<std::int64_t> id{2, 0, 2, 9};
    const dvec go{1, 2, 3};
    dvec grad(4, 123.0);
    try {
        segred::bincount_backward(segred::host, segred::rows(id.data(), 4), segred::rows(go.data(), 3),
                                  segred::rows(grad.data(), 4));
        ADD_FAILURE() << "no segred::error was thrown";
    } catch (const segred::error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("segred::bincount_backward: ids[3] = 9 is out of range [0, 3)"), std::string::npos) << what;
    }
    EXPECT_EQ(grad, (dvec{123, 123, 123, 123}));
    segred::bincount_backward(segred::host, segred::rows(id.data(), 4), segred::rows(go.data(), 3),
                              segred::rows(grad.data(), 4), segred::options{}.bounds(segred::bounds_policy::drop));
    EXPECT_EQ(grad, (dvec{3, 1, 3, 0}));
}

} // namespace
