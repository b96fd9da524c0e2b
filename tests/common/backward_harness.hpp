// tests/common/backward_harness.hpp -- random finite-difference trials of
// segment_reduce_backward / accumarray_backward, backend-neutral: the policy
// and a memory adaptor (host_memory, or the CUDA tests' device_memory) are
// parameters, so the host and GPU suites run the same checks. Every
// differentiable reducer, every descriptor form, widths 1 and 3, empty
// segments, rows in no segment (offsets that skip rows, drop), accumulate on
// and off, min/max arg rows saved by the forward or recomputed, prod with
// zeros, var/std with ddof 0 and 1; expectations are central differences of
// the independent reference forward.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "grad_check.hpp"
#include "reduce_harness.hpp"
#include "reference.hpp"
#include "test_util.hpp"

namespace segtest {

using segref::coin;
using segref::op;
using segref::uniform_int;

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
    if (o == op::min || o == op::max) return separated_values(g, count);
    std::vector<double> v = segref::random_values<double>(g, count, o == op::prod ? segref::value_kind::product
                                                                                  : segref::value_kind::general);
    if (o == op::prod)  // zeros: none, one or several per segment (prod is multilinear: FD stays exact)
        for (double& x : v)
            if (coin(g, 0.12)) x = 0.0;
    if (o == op::var || o == op::stddev)  // spread so no segment is constant (std's kink at 0)
        for (double& x : v) x += 1e-3 * static_cast<double>(uniform_int(g, 0, 1000));
    return v;
}

template <form F, class I, class Policy, class Mem = host_memory>
void random_fd_trials(const Policy& pol, op o, int trials, const Mem& mem = Mem{}) {
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < trials; ++t) {
        const bool corrupt = F != form::fixed && coin(g, 0.3);
        const seg_input<I> s = random_segments<I>(g, F, corrupt, 12, 40);
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

        std::vector<double> expect = numeric_grad(v, r, forward);
        if (o == op::var || o == op::stddev)  // n <= ddof: NaN forward, NaN gradient
            for (std::size_t k = 0; k < rows.size(); ++k)
                if (static_cast<i64>(rows[k].size()) <= ddof)
                    for (i64 row : rows[k])
                        for (i64 f = 0; f < width; ++f) expect[static_cast<std::size_t>(row * width + f)] = NAN;

        const std::vector<double> before = segref::random_values<double>(g, s.n * width, segref::value_kind::general);
        auto d_v = mem.to_device(v);
        auto d_out = mem.to_device(fwd.out);
        auto d_r = mem.to_device(r);
        auto d_grad = mem.to_device(before);
        auto d_arg = mem.to_device(fwd.arg);
        auto d_idx = mem.to_device(s.idx);
        segred::options opts = segred::options{}.accumulate(acc);
        if (corrupt) opts.bounds(segred::bounds_policy::drop);
        if (saved_arg) opts.arg_out(d_arg.data());

        const auto desc = make_desc<F>(static_cast<const I*>(d_idx.data()), s);
        with_reducer(o, ddof, [&](auto red) {
            const auto vals = segred::rows(static_cast<const double*>(d_v.data()), s.n, width);
            const auto o_view = segred::rows(static_cast<const double*>(d_out.data()), s.M, width);
            const auto r_view = segred::rows(static_cast<const double*>(d_r.data()), s.M, width);
            const auto g_view = segred::rows(d_grad.data(), s.n, width);
            if constexpr (F == form::ids || F == form::subscripts) {
                if (via_accumarray) {
                    segred::accumarray_backward(pol, vals, desc, o_view, r_view, g_view, red, opts);
                    return;
                }
            }
            segred::segment_reduce_backward(pol, vals, desc, o_view, r_view, g_view, red, opts);
        });
        EXPECT_TRUE(grad_near(mem.to_host(d_grad), acc ? plus(before, expect) : expect, 1e-5, 1e-6, "grad_values"));
        if (::testing::Test::HasFailure()) return;
    }
}

} // namespace segtest
