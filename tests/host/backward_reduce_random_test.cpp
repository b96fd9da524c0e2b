// segment_reduce_backward / accumarray_backward against central differences
// of the independent reference forward, on fresh random inputs: every
// differentiable reducer, every descriptor form, width 1 and 3, empty
// segments, rows in no segment (offsets that skip rows, drop), accumulate on
// and off, min/max arg rows saved by the forward or recomputed, prod with
// zeros, var/std with ddof 0 and 1.
#include <algorithm>
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
using segref::op;
using segref::uniform_int;
using segtest::form;
using segtest::i64;

const op differentiable[] = {op::sum, op::mean, op::min, op::max, op::prod, op::logsumexp, op::var, op::stddev};

// fn(reducer) with the segred reducer of o.
template <class Fn>
void with_reducer(op o, int ddof, Fn&& fn) {
    switch (o) {
    case op::sum: fn(segred::sum{}); break;
    case op::mean: fn(segred::mean{}); break;
    case op::min: fn(segred::min{}); break;
    case op::max: fn(segred::max{}); break;
    case op::prod: fn(segred::prod{}); break;
    case op::logsumexp: fn(segred::logsumexp{}); break;
    case op::var: fn(segred::var{ddof}); break;
    case op::stddev: fn(segred::stddev{ddof}); break;
    default: FAIL() << "no backward for " << segref::name(o);
    }
}

// Values suited to finite differences for o.
std::vector<double> values_for(segref::rng& g, op o, i64 count) {
    if (o == op::min || o == op::max) return segtest::separated_values(g, count);
    std::vector<double> v = segref::random_values<double>(g, count, o == op::prod ? segref::value_kind::product
                                                                                  : segref::value_kind::general);
    if (o == op::prod)  // zeros: none, one or several per segment (prod is multilinear: FD stays exact)
        for (double& x : v)
            if (coin(g, 0.12)) x = 0.0;
    if (o == op::var || o == op::stddev)  // spread so no segment is constant (std's kink at 0)
        for (double& x : v) x += 1e-3 * static_cast<double>(uniform_int(g, 0, 1000));
    return v;
}

template <form F, class I>
void random_fd_trials(op o, int trials) {
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < trials; ++t) {
        const bool corrupt = F != form::fixed && coin(g, 0.3);
        const segtest::seg_input<I> s = segtest::random_segments<I>(g, F, corrupt, 12, 40);
        const i64 width = coin(g, 0.5) ? 1 : 3;
        const int ddof = coin(g, 0.5) ? 1 : 0;
        const bool acc = coin(g, 0.3);
        const bool saved_arg = (o == op::min || o == op::max) && coin(g, 0.5);
        const bool via_accumarray = (F == form::ids || F == form::subscripts) && coin(g, 0.5);
        const segref::row_lists rows = s.rows(corrupt);
        SCOPED_TRACE(std::string(segref::name(o)) + ", trial " + std::to_string(t) + ": " + s.describe() +
                     ", width " + std::to_string(width) + ", ddof " + std::to_string(ddof) +
                     (corrupt ? ", drop" : "") + (acc ? ", accumulate" : "") + (saved_arg ? ", saved arg" : "") +
                     (via_accumarray ? ", via accumarray" : ""));

        std::vector<double> v = values_for(g, o, s.n * width);
        const std::vector<double> r = segref::random_values<double>(g, s.M * width, segref::value_kind::general);
        segref::params prm;
        prm.o = o;
        prm.ddof = ddof;
        auto forward = [&](const std::vector<double>& x) {
            return segref::reduce<double>(x.data(), width, rows, prm).out;
        };
        const segref::result fwd = segref::reduce<double>(v.data(), width, rows, prm);

        std::vector<double> expect = segtest::numeric_grad(v, r, forward);
        if (o == op::var || o == op::stddev)  // n <= ddof: NaN forward, NaN gradient
            for (std::size_t k = 0; k < rows.size(); ++k)
                if (static_cast<i64>(rows[k].size()) <= ddof)
                    for (i64 row : rows[k])
                        for (i64 f = 0; f < width; ++f) expect[static_cast<std::size_t>(row * width + f)] = NAN;

        std::vector<double> out = fwd.out;
        std::vector<double> grad = segref::random_values<double>(g, s.n * width, segref::value_kind::general);
        const std::vector<double> before = grad;
        std::vector<std::int64_t> arg = fwd.arg;
        segred::options opts = segred::options{}.accumulate(acc);
        if (corrupt) opts.bounds(segred::bounds_policy::drop);
        if (saved_arg) opts.arg_out(arg.data());

        const auto desc = segtest::make_desc<F>(s.idx.data(), s);
        with_reducer(o, ddof, [&](auto red) {
            const auto vals = segred::rows(v.data(), s.n, width);
            const auto o_view = segred::rows(out.data(), s.M, width);
            const auto r_view = segred::rows(r.data(), s.M, width);
            const auto g_view = segred::rows(grad.data(), s.n, width);
            if constexpr (F == form::ids || F == form::subscripts) {
                if (via_accumarray) {
                    segred::accumarray_backward(segred::host, vals, desc, o_view, r_view, g_view, red, opts);
                    return;
                }
            }
            segred::segment_reduce_backward(segred::host, vals, desc, o_view, r_view, g_view, red, opts);
        });
        EXPECT_TRUE(segtest::grad_near(grad, acc ? segtest::plus(before, expect) : expect, 1e-5, 1e-6, "grad_values"));
        if (::testing::Test::HasFailure()) return;
    }
}

template <form F, class I>
void all_ops(int trials) {
    for (op o : differentiable) random_fd_trials<F, I>(o, trials);
}

TEST(BackwardReduceRandom, Offsets) { all_ops<form::offsets, std::int32_t>(12); }
TEST(BackwardReduceRandom, Lengths) { all_ops<form::lengths, std::int64_t>(12); }
TEST(BackwardReduceRandom, SortedIds) { all_ops<form::sorted_ids, std::int32_t>(12); }
TEST(BackwardReduceRandom, Ids) { all_ops<form::ids, std::int64_t>(12); }
TEST(BackwardReduceRandom, Fixed) { all_ops<form::fixed, std::int64_t>(12); }
TEST(BackwardReduceRandom, Subscripts) { all_ops<form::subscripts, std::int32_t>(12); }

// Float values and gradients agree with the double computation.
TEST(BackwardReduceRandom, FloatMatchesDouble) {
    SEGRED_SEEDED_RNG(g);
    for (op o : differentiable) {
        const segtest::seg_input<std::int32_t> s = segtest::random_segments<std::int32_t>(g, form::ids, false, 12, 60);
        const i64 width = 2;
        const segref::row_lists rows = s.rows(false);
        const std::vector<double> vd = values_for(g, o, s.n * width);
        const std::vector<double> rd = segref::random_values<double>(g, s.M * width, segref::value_kind::general);
        segref::params prm;
        prm.o = o;
        const std::vector<double> od = segref::reduce<double>(vd.data(), width, rows, prm).out;
        const std::vector<float> vf(vd.begin(), vd.end()), rf(rd.begin(), rd.end());
        // Converting to float keeps the order, so min/max out still equals a value.
        const std::vector<float> of(od.begin(), od.end());
        std::vector<double> gd(vd.size());
        std::vector<float> gf(vd.size());
        const auto desc = segred::ids(s.idx.data(), s.M);
        with_reducer(o, 0, [&](auto red) {
            segred::segment_reduce_backward(segred::host, segred::rows(vd.data(), s.n, width), desc,
                                            segred::rows(od.data(), s.M, width), segred::rows(rd.data(), s.M, width),
                                            segred::rows(gd.data(), s.n, width), red);
            segred::segment_reduce_backward(segred::host, segred::rows(vf.data(), s.n, width), desc,
                                            segred::rows(of.data(), s.M, width), segred::rows(rf.data(), s.M, width),
                                            segred::rows(gf.data(), s.n, width), red);
        });
        SCOPED_TRACE(segref::name(o));
        double scale = 1.0;
        for (double x : gd)
            if (!std::isnan(x)) scale = std::max(scale, std::fabs(x));
        EXPECT_TRUE(segtest::grad_near(gf, gd, 1e-3, 1e-4 * scale, "float grad"));
    }
}

} // namespace
