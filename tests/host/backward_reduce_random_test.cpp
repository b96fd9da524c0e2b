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

#include "common/backward_harness.hpp"
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

template <form F, class I>
void all_ops(int trials) {
    for (op o : segtest::differentiable) segtest::random_fd_trials<F, I>(segred::host, o, trials);
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
    for (op o : segtest::differentiable) {
        const segtest::seg_input<std::int32_t> s = segtest::random_segments<std::int32_t>(g, form::ids, false, 12, 60);
        const i64 width = 2;
        const segref::row_lists rows = s.rows(false);
        const std::vector<double> vd = segtest::values_for(g, o, s.n * width);
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
        segtest::with_reducer(o, 0, [&](auto red) {
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
