// tests/common/grad_check.hpp -- finite-difference gradients for segred's
// backward tests.
//
// A backward is checked on the scalar loss L(x) = sum_j r_j * F(x)_j, where
// F is the forward (computed by the independent reference wherever one
// exists) and r is a random grad_out: dL/dx_i, by central differences in
// double precision, must match grad_values[i] from the backward called with
// grad_out = r.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace segtest {

// Central differences of L(x) = sum_j r[j] * fwd(x)[j]. Outputs that are NaN
// at x itself (var of too few rows, ...) are constants the loss leaves out;
// the caller states what the backward gives there.
template <class Fwd>
std::vector<double> numeric_grad(std::vector<double> x, const std::vector<double>& r, Fwd&& fwd, double h = 1e-6) {
    const std::vector<double> base = fwd(x);
    std::vector<double> grad(x.size(), 0.0);
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double xi = x[i];
        x[i] = xi + h;
        const std::vector<double> up = fwd(x);
        x[i] = xi - h;
        const std::vector<double> down = fwd(x);
        x[i] = xi;
        double d = 0.0;
        for (std::size_t j = 0; j < r.size(); ++j)
            if (!std::isnan(base[j])) d += r[j] * (up[j] - down[j]);
        grad[i] = d / (2.0 * h);
    }
    return grad;
}

// |got - want| <= rtol * |want| + atol elementwise; NaN matches only NaN.
template <class T>
::testing::AssertionResult grad_near(const std::vector<T>& got, const std::vector<double>& want, double rtol = 1e-5,
                                     double atol = 1e-6, const char* what = "grad") {
    if (got.size() != want.size())
        return ::testing::AssertionFailure() << what << ": size " << got.size() << " vs " << want.size();
    std::ostringstream bad;
    int nbad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double g = static_cast<double>(got[i]), w = want[i];
        const bool ok = std::isnan(w) ? std::isnan(g) : std::fabs(g - w) <= rtol * std::fabs(w) + atol;
        if (!ok) {
            if (nbad < 8) bad << "\n  " << what << "[" << i << "] = " << fmt(g) << ", expected " << fmt(w);
            ++nbad;
        }
    }
    if (nbad == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << nbad << " of " << got.size() << " elements of " << what << " differ:"
                                         << bad.str();
}

// a + b elementwise (expected gradients under accumulate).
inline std::vector<double> plus(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> c(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
    return c;
}

template <class T>
std::vector<double> to_double(const std::vector<T>& v) {
    return std::vector<double>(v.begin(), v.end());
}

// n distinct values in [-10, 10], at least 0.01 apart and in random order:
// min/max gradients are then smooth within +-h.
inline std::vector<double> separated_values(segref::rng& g, i64 n) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (i64 i = 0; i < n; ++i)
        v[static_cast<std::size_t>(i)] = -10.0 + 20.0 * static_cast<double>(i) / static_cast<double>(n > 1 ? n : 1);
    std::shuffle(v.begin(), v.end(), g);
    return v;
}

} // namespace segtest
