// soft_histogram and soft_histogram_backward: hand-computed shares
// (interior, clamped ends, outside [lo, hi], NaN), mass conservation, the
// unweighted forms, accumulate, skipped gradients, errors, and both
// gradients against central differences on fresh random inputs.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/grad_check.hpp"
#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

using segref::coin;
using segref::uniform_int;
using segref::uniform_real;
using segtest::i64;
using dvec = std::vector<double>;

// The documented rule, restated: centers at lo + (b + 0.5) d; a position
// between two centers splits linearly, one beyond the end centers (or
// outside [lo, hi]) goes whole to the end bin, NaN goes nowhere.
dvec reference_histogram(const dvec& x, const dvec& w, i64 width, double lo, double hi, i64 B) {
    dvec out(static_cast<std::size_t>(B * width), 0.0);
    const double d = (hi - lo) / static_cast<double>(B);
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (std::isnan(x[i])) continue;
        const double t = (x[i] - lo) / d - 0.5;
        i64 b0 = 0, b1 = -1;
        double s1 = 0.0;
        if (t >= static_cast<double>(B - 1)) {
            b0 = B - 1;
        } else if (t > 0) {
            b0 = static_cast<i64>(std::floor(t));
            b1 = b0 + 1;
            s1 = t - static_cast<double>(b0);
        }
        for (i64 f = 0; f < width; ++f) {
            const double wf = w[i * static_cast<std::size_t>(width) + static_cast<std::size_t>(f)];
            out[static_cast<std::size_t>(b0 * width + f)] += (b1 >= 0 ? 1.0 - s1 : 1.0) * wf;
            if (b1 >= 0) out[static_cast<std::size_t>(b1 * width + f)] += s1 * wf;
        }
    }
    return out;
}

TEST(SoftHistogram, HandComputedShares) {
    // lo = 0, hi = 4, 4 bins: centers 0.5, 1.5, 2.5, 3.5.
    const double nan_v = std::numeric_limits<double>::quiet_NaN();
    const dvec x{1.0, 0.2, 3.9, 2.25, -7.0, 11.0, nan_v};
    const dvec w{1, 1, 1, 2, 1, 1, 5};
    dvec out(4, -1.0);
    segred::soft_histogram(segred::host, segred::rows(x.data(), 7), segred::rows(w.data(), 7), 0.0, 4.0,
                           segred::rows(out.data(), 4));
    // 1.0: half to bins 0 and 1; 0.2, -7: bin 0; 3.9, 11: bin 3; 2.25 (w 2): 1/4 to bin 1, 3/4 to bin 2.
    EXPECT_EQ(out, (dvec{0.5 + 1 + 1, 0.5 + 0.5, 1.5, 1 + 1}));
    dvec counts(4);
    segred::soft_histogram(segred::host, segred::rows(x.data(), 7), 0.0, 4.0, segred::rows(counts.data(), 4));
    EXPECT_EQ(counts, (dvec{2.5, 0.75, 0.75, 2}));
    // accumulate adds the new shares to the existing out.
    segred::soft_histogram(segred::host, segred::rows(x.data(), 1), 0.0, 4.0, segred::rows(counts.data(), 4),
                           segred::options{}.accumulate());
    EXPECT_EQ(counts, (dvec{3, 1.25, 0.75, 2}));
}

TEST(SoftHistogram, HandComputedGradients) {
    const dvec x{2.25, 0.2}, w{2, 3}, g{1, 10, 100, 1000};
    dvec gx(2), gw(2);
    segred::soft_histogram_backward(segred::host, segred::rows(x.data(), 2), segred::rows(w.data(), 2), 0.0, 4.0,
                                    segred::rows(g.data(), 4), segred::rows(gx.data(), 2), segred::rows(gw.data(), 2));
    // 2.25 sits between bins 1 and 2 with shares 1/4, 3/4: d/dw = 10/4 + 300/4;
    // d/dx = w (g2 - g1) / d = 2 * 90 / 1. 0.2 is clamped: d/dw = g0, d/dx = 0.
    EXPECT_EQ(gw, (dvec{77.5, 1}));
    EXPECT_EQ(gx, (dvec{180, 0}));
    // Only the positions (an empty view skips the weights), accumulating.
    dvec gx2{1, 1};
    segred::soft_histogram_backward(segred::host, segred::rows(x.data(), 2), segred::rows(w.data(), 2), 0.0, 4.0,
                                    segred::rows(g.data(), 4), segred::rows(gx2.data(), 2), segred::rows_view<double>{},
                                    segred::options{}.accumulate());
    EXPECT_EQ(gx2, (dvec{181, 1}));
    // Unweighted.
    segred::soft_histogram_backward(segred::host, segred::rows(x.data(), 2), 0.0, 4.0, segred::rows(g.data(), 4),
                                    segred::rows(gx.data(), 2));
    EXPECT_EQ(gx, (dvec{90, 0}));
}

// Positions whose bin coordinate is at least 1e-3 from a kink (a center).
dvec smooth_positions(segref::rng& g, i64 n, double lo, double hi, i64 B) {
    dvec x(static_cast<std::size_t>(n));
    const double d = (hi - lo) / static_cast<double>(B);
    for (double& v : x) {
        do {
            v = uniform_real(g, lo - d, hi + d);
        } while (std::fabs((v - lo) / d - 0.5 - std::round((v - lo) / d - 0.5)) < 1e-3);
    }
    return x;
}

TEST(SoftHistogram, RandomForwardAndGradients) {
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < 60; ++t) {
        const i64 n = uniform_int(g, 0, 50), B = uniform_int(g, 1, 9), width = coin(g, 0.5) ? 1 : 3;
        const double lo = uniform_real(g, -5, 5), hi = lo + uniform_real(g, 0.5, 10);
        const bool acc = coin(g, 0.3);
        SCOPED_TRACE("trial " + std::to_string(t) + ": n = " + std::to_string(n) + ", B = " + std::to_string(B) +
                     ", width " + std::to_string(width) + (acc ? ", accumulate" : ""));
        const dvec x = smooth_positions(g, n, lo, hi, B);
        const dvec w = segref::random_values<double>(g, n * width, segref::value_kind::general);
        const dvec r = segref::random_values<double>(g, B * width, segref::value_kind::general);

        dvec out = segref::random_values<double>(g, B * width, segref::value_kind::general);
        const dvec out_before = out;
        segred::soft_histogram(segred::host, segred::rows(x.data(), n), segred::rows(w.data(), n, width), lo, hi,
                               segred::rows(out.data(), B, width), segred::options{}.accumulate(acc));
        const dvec ref = reference_histogram(x, w, width, lo, hi, B);
        EXPECT_TRUE(segtest::grad_near(out, acc ? segtest::plus(out_before, ref) : ref, 1e-12, 1e-12, "out"));
        double total_w = 0, total_out = 0;
        for (double v : w) total_w += v;
        for (double v : ref) total_out += v;
        EXPECT_NEAR(total_out, total_w, 1e-9 * (1 + std::fabs(total_w)));  // clamping keeps the mass

        const dvec want_x = segtest::numeric_grad(
            x, r, [&](const dvec& xx) { return reference_histogram(xx, w, width, lo, hi, B); });
        const dvec want_w = segtest::numeric_grad(
            w, r, [&](const dvec& ww) { return reference_histogram(x, ww, width, lo, hi, B); });
        dvec gx = segref::random_values<double>(g, n, segref::value_kind::general);
        dvec gw = segref::random_values<double>(g, n * width, segref::value_kind::general);
        const dvec gx0 = gx, gw0 = gw;
        segred::soft_histogram_backward(segred::host, segred::rows(x.data(), n), segred::rows(w.data(), n, width), lo,
                                        hi, segred::rows(r.data(), B, width), segred::rows(gx.data(), n),
                                        segred::rows(gw.data(), n, width), segred::options{}.accumulate(acc));
        EXPECT_TRUE(segtest::grad_near(gx, acc ? segtest::plus(gx0, want_x) : want_x, 1e-5, 1e-5, "grad_positions"));
        EXPECT_TRUE(segtest::grad_near(gw, acc ? segtest::plus(gw0, want_w) : want_w, 1e-5, 1e-6, "grad_weights"));
        if (::testing::Test::HasFailure()) return;
    }
}

TEST(SoftHistogram, FloatMatchesDouble) {
    SEGRED_SEEDED_RNG(g);
    const i64 n = 300, B = 16;
    const dvec x = smooth_positions(g, n, -1.0, 1.0, B);
    const std::vector<float> xf(x.begin(), x.end());
    dvec od(B);
    std::vector<float> of(B);
    segred::soft_histogram(segred::host, segred::rows(x.data(), n), -1.0, 1.0, segred::rows(od.data(), B));
    segred::soft_histogram(segred::host, segred::rows(xf.data(), n), -1.0, 1.0, segred::rows(of.data(), B));
    EXPECT_TRUE(segtest::grad_near(of, od, 1e-4, 1e-4, "float histogram"));
}

TEST(SoftHistogram, Errors) {
    const dvec x{0.5}, w{1, 2};
    dvec out(2);
    auto expect_error = [](auto&& f, const char* part) {
        try {
            f();
            ADD_FAILURE() << "no segred::error was thrown";
        } catch (const segred::error& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    };
    const auto X = segred::rows(x.data(), 1);
    expect_error([&] { segred::soft_histogram(segred::host, X, 1.0, 1.0, segred::rows(out.data(), 2)); },
                 "must be finite with lo < hi");
    expect_error([&] { segred::soft_histogram(segred::host, X, 0.0, 1.0, segred::rows(out.data(), 0)); },
                 "out has no bins");
    expect_error(
        [&] {
            segred::soft_histogram(segred::host, segred::rows(x.data(), 1), segred::rows(w.data(), 1, 2), 0.0, 1.0,
                                   segred::rows(out.data(), 2));
        },
        "out has width 1 but weights have width 2");
    expect_error(
        [&] {
            dvec gx(3);
            segred::soft_histogram_backward(segred::host, segred::rows(x.data(), 1), 0.0, 1.0,
                                            segred::rows(out.data(), 2), segred::rows(gx.data(), 3));
        },
        "grad_positions is [3, 1] but positions is [1, 1]");
}

} // namespace
