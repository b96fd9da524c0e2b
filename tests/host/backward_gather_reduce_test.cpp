// gather_segment_reduce (fused gather-then-reduce) against the reference's
// gather followed by a reduction, and its backward against central
// differences: every form over the positions, duplicate idx (few data rows),
// bad idx and bad descriptors under drop, accumulate, min/max with saved or
// recomputed arg rows; the [B, N, F] batch example; errors.
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
using dvec = std::vector<double>;

// One random fused problem: segments over positions, idx into `rows` data rows.
template <form F, class I>
struct problem {
    segtest::seg_input<I> s;
    i64 rows = 0, width = 1;
    bool drop = false;
    std::vector<I> idx;
    segref::row_lists lists;  // positions of each segment, bad idx removed

    problem(segref::rng& g) {
        drop = coin(g, 0.3);
        s = segtest::random_segments<I>(g, F, drop && F != form::fixed, 10, 40);
        rows = uniform_int(g, 1, 8);  // few rows: idx repeats them
        width = coin(g, 0.5) ? 1 : 2;
        idx = segref::random_ids<I>(g, s.n, 0, rows - 1);
        if (drop)
            for (I& k : idx)
                if (coin(g, 0.15)) k = static_cast<I>(coin(g, 0.5) ? -1 : rows + uniform_int(g, 0, 2));
        lists = s.rows(drop && F != form::fixed);
        for (auto& l : lists) {
            std::vector<i64> kept;
            for (i64 k : l)
                if (idx[static_cast<std::size_t>(k)] >= 0 && idx[static_cast<std::size_t>(k)] < rows) kept.push_back(k);
            l = kept;
        }
    }
    std::string describe() const {
        return s.describe() + ", " + std::to_string(rows) + " data rows, width " + std::to_string(width) +
               (drop ? ", drop" : "");
    }
    // The gathered copy the fused op never makes (bad idx: rows of 0).
    dvec gathered(const dvec& data) const {
        dvec out(static_cast<std::size_t>(s.n * width), 0.0);
        for (i64 k = 0; k < s.n; ++k) {
            const i64 r = static_cast<i64>(idx[static_cast<std::size_t>(k)]);
            if (r < 0 || r >= rows) continue;
            for (i64 f = 0; f < width; ++f)
                out[static_cast<std::size_t>(k * width + f)] = data[static_cast<std::size_t>(r * width + f)];
        }
        return out;
    }
    segred::options opts() const {
        segred::options o;
        if (drop) o.bounds(segred::bounds_policy::drop);
        return o;
    }
    auto desc() const { return segtest::make_desc<F>(s.idx.data(), s); }
};

template <form F, class I>
void forward_trials(int trials) {
    SEGRED_SEEDED_RNG(g);
    const op ops[] = {op::sum, op::mean, op::min, op::max, op::prod, op::logsumexp, op::count, op::argmax};
    for (int t = 0; t < trials; ++t) {
        const problem<F, I> pb(g);
        SCOPED_TRACE("trial " + std::to_string(t) + ": " + pb.describe());
        // Distinct data values: the winning data row of min/max is unique.
        const dvec data = segtest::separated_values(g, pb.rows * pb.width);
        const dvec gathered = pb.gathered(data);
        for (op o : ops) {
            SCOPED_TRACE(segref::name(o));
            segref::params prm;
            prm.o = o;
            prm.out_width = o == op::count ? 1 : pb.width;
            const segref::result ref = segref::reduce<double>(gathered.data(), pb.width, pb.lists, prm);
            dvec out(static_cast<std::size_t>(pb.s.M * prm.out_width), -5.0);
            std::vector<std::int64_t> arg(static_cast<std::size_t>(pb.s.M * pb.width), -7);
            segred::options opts = pb.opts();
            if (o == op::max || o == op::min) opts.arg_out(arg.data());
            const auto D = segred::rows(data.data(), pb.rows, pb.width);
            const auto X = segred::rows(pb.idx.data(), pb.s.n);
            const auto O = segred::rows(out.data(), pb.s.M, prm.out_width);
            switch (o) {
            case op::sum: segred::gather_segment_reduce(segred::host, D, X, pb.desc(), O, segred::sum{}, opts); break;
            case op::mean: segred::gather_segment_reduce(segred::host, D, X, pb.desc(), O, segred::mean{}, opts); break;
            case op::min: segred::gather_segment_reduce(segred::host, D, X, pb.desc(), O, segred::min{}, opts); break;
            case op::max: segred::gather_segment_reduce(segred::host, D, X, pb.desc(), O, segred::max{}, opts); break;
            case op::prod: segred::gather_segment_reduce(segred::host, D, X, pb.desc(), O, segred::prod{}, opts); break;
            case op::logsumexp:
                segred::gather_segment_reduce(segred::host, D, X, pb.desc(), O, segred::logsumexp{}, opts);
                break;
            case op::count:
                segred::gather_segment_reduce(segred::host, D, X, pb.desc(), O, segred::count{}, opts);
                break;
            default: segred::gather_segment_reduce(segred::host, D, X, pb.desc(), O, segred::argmax{}, opts); break;
            }
            dvec want = ref.out;
            if (o == op::argmax)  // the fused op reports data rows
                for (double& a : want)
                    if (a >= 0) a = static_cast<double>(pb.idx[static_cast<std::size_t>(a)]);
            EXPECT_TRUE(segtest::near_all(out, want, &ref.scale, 1e-12));
            if (o == op::max || o == op::min)
                for (std::size_t e = 0; e < arg.size(); ++e) {
                    const i64 p = ref.arg[e];
                    const i64 want_row = p < 0 ? -1 : static_cast<i64>(pb.idx[static_cast<std::size_t>(p)]);
                    EXPECT_EQ(arg[e], want_row) << "arg " << e;
                }
        }
        if (::testing::Test::HasFailure()) return;
    }
}

TEST(GatherSegmentReduce, ForwardOffsets) { forward_trials<form::offsets, std::int32_t>(25); }
TEST(GatherSegmentReduce, ForwardLengths) { forward_trials<form::lengths, std::int64_t>(25); }
TEST(GatherSegmentReduce, ForwardSortedIds) { forward_trials<form::sorted_ids, std::int64_t>(25); }
TEST(GatherSegmentReduce, ForwardIds) { forward_trials<form::ids, std::int32_t>(25); }
TEST(GatherSegmentReduce, ForwardFixed) { forward_trials<form::fixed, std::int64_t>(25); }

template <form F, class I, class R>
void backward_trials(op o, int trials) {
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < trials; ++t) {
        const problem<F, I> pb(g);
        const bool acc = coin(g, 0.3);
        const bool saved_arg = (o == op::min || o == op::max) && coin(g, 0.5);
        SCOPED_TRACE(std::string(segref::name(o)) + ", trial " + std::to_string(t) + ": " + pb.describe() +
                     (acc ? ", accumulate" : "") + (saved_arg ? ", saved arg" : ""));
        const dvec data = (o == op::min || o == op::max)
                              ? segtest::separated_values(g, pb.rows * pb.width)
                              : segref::random_values<double>(g, pb.rows * pb.width, segref::value_kind::general);
        segref::params prm;
        prm.o = o;
        auto forward = [&](const dvec& d) {
            const dvec gat = pb.gathered(d);
            return segref::reduce<double>(gat.data(), pb.width, pb.lists, prm).out;
        };
        const dvec r = segref::random_values<double>(g, pb.s.M * pb.width, segref::value_kind::general);
        const dvec expect = segtest::numeric_grad(data, r, forward);

        const auto D = segred::rows(data.data(), pb.rows, pb.width);
        const auto X = segred::rows(pb.idx.data(), pb.s.n);
        dvec out(static_cast<std::size_t>(pb.s.M * pb.width));
        std::vector<std::int64_t> arg(out.size());
        segred::options fwd_opts = pb.opts();
        if (saved_arg) fwd_opts.arg_out(arg.data());
        segred::gather_segment_reduce(segred::host, D, X, pb.desc(), segred::rows(out.data(), pb.s.M, pb.width), R{},
                                      fwd_opts);
        dvec grad = segref::random_values<double>(g, pb.rows * pb.width, segref::value_kind::general);
        const dvec before = grad;
        segred::options opts = pb.opts().accumulate(acc);
        if (saved_arg) opts.arg_out(arg.data());
        segred::gather_segment_reduce_backward(segred::host, D, X, pb.desc(),
                                               segred::rows(out.data(), pb.s.M, pb.width),
                                               segred::rows(r.data(), pb.s.M, pb.width),
                                               segred::rows(grad.data(), pb.rows, pb.width), R{}, opts);
        EXPECT_TRUE(segtest::grad_near(grad, acc ? segtest::plus(before, expect) : expect, 1e-5, 1e-6, "grad_data"));
        if (::testing::Test::HasFailure()) return;
    }
}

template <form F, class I>
void all_backward(int trials) {
    backward_trials<F, I, segred::sum>(op::sum, trials);
    backward_trials<F, I, segred::mean>(op::mean, trials);
    backward_trials<F, I, segred::min>(op::min, trials);
    backward_trials<F, I, segred::max>(op::max, trials);
}

TEST(GatherSegmentReduceBackward, Offsets) { all_backward<form::offsets, std::int64_t>(15); }
TEST(GatherSegmentReduceBackward, Lengths) { all_backward<form::lengths, std::int32_t>(15); }
TEST(GatherSegmentReduceBackward, SortedIds) { all_backward<form::sorted_ids, std::int32_t>(15); }
TEST(GatherSegmentReduceBackward, Ids) { all_backward<form::ids, std::int64_t>(15); }
TEST(GatherSegmentReduceBackward, Fixed) { all_backward<form::fixed, std::int32_t>(15); }

// The mean over data[b, idx[b, k], :] for data [B = 2, N = 3, F = 1] and
// idx [B, K = 2]: flatten data to B*N rows, offset idx[b, k] by b*N, and
// reduce fixed(K, B).
TEST(GatherSegmentReduce, BatchedMeanExample) {
    const dvec data{1, 2, 3,  //
                    4, 5, 6};
    const std::vector<std::int64_t> idx{0, 2,  //
                                        1 + 3, 1 + 3};
    dvec out(2);
    const auto D = segred::rows(data.data(), 6);
    const auto X = segred::rows(idx.data(), 4);
    segred::gather_segment_reduce(segred::host, D, X, segred::fixed(2, 2), segred::rows(out.data(), 2), segred::mean{});
    EXPECT_EQ(out, (dvec{2, 5}));
    const dvec g{1, 1};
    dvec grad(6, 9.0);
    segred::gather_segment_reduce_backward(segred::host, D, X, segred::fixed(2, 2), segred::rows(out.data(), 2),
                                           segred::rows(g.data(), 2), segred::rows(grad.data(), 6), segred::mean{});
    EXPECT_EQ(grad, (dvec{0.5, 0, 0.5, 0, 1, 0}));  // row 4 appears twice in batch 1
    segred::gather_segment_reduce_backward(segred::host, D, X, segred::fixed(2, 2), segred::rows(out.data(), 2),
                                           segred::rows(g.data(), 2), segred::rows(grad.data(), 6), segred::max{});
    EXPECT_EQ(grad, (dvec{0, 0, 1, 0, 1, 0}));
}

TEST(GatherSegmentReduce, ErrorsWriteNothing) {
    const dvec data{1, 2, 3};
    const std::vector<std::int32_t> idx{0, 2, 3, 1};
    dvec out{7, 7}, grad{7, 7, 7};
    const dvec g{1, 1};
    const auto D = segred::rows(data.data(), 3);
    const auto X = segred::rows(idx.data(), 4);
    const auto seg = segred::fixed(2, 2);
    const auto O = segred::rows(out.data(), 2);
    const auto G = segred::rows(g.data(), 2);
    const auto GD = segred::rows(grad.data(), 3);
    for (int k = 0; k < 3; ++k) {
        try {
            if (k == 0) segred::gather_segment_reduce(segred::host, D, X, seg, O);
            if (k == 1) segred::gather_segment_reduce_backward(segred::host, D, X, seg, O, G, GD);
            if (k == 2) segred::gather_segment_reduce_backward(segred::host, D, X, seg, O, G, GD, segred::max{});
            ADD_FAILURE() << "no segred::error was thrown";
        } catch (const segred::error& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("idx[2] = 3 is out of range [0, 3)"), std::string::npos) << what;
            EXPECT_NE(what.find(k == 0 ? "segred::gather_segment_reduce:" : "segred::gather_segment_reduce_backward:"),
                      std::string::npos)
                << what;
        }
    }
    EXPECT_EQ(out, (dvec{7, 7}));
    EXPECT_EQ(grad, (dvec{7, 7, 7}));
    try {
        segred::gather_segment_reduce_backward(segred::host, D, X, segred::fixed(2, 2), segred::rows(out.data(), 2),
                                               segred::rows(g.data(), 2), segred::rows(grad.data(), 2));
        ADD_FAILURE() << "no segred::error was thrown";
    } catch (const segred::error& e) {
        EXPECT_NE(std::string(e.what()).find("grad_data is [2, 1] but data is [3, 1]"), std::string::npos) << e.what();
    }
}

} // namespace
