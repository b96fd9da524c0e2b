// The backward ops on the GPU. segment_reduce_backward / accumarray_backward
// run the host suite's finite-difference trials (tests/common/
// backward_harness.hpp) on device memory. The other pairs -- softmax,
// weighted bincount, gather (also with a few hot rows), the fused gather-then-
// reduce and the soft histogram -- are compared with the host backend on the
// same random inputs; the host suite checks those against central differences.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/backward_harness.hpp"
#include "common/grad_check.hpp"
#include "common/reference.hpp"
#include "common/test_util.hpp"
#include "cuda/cuda_test_util.cuh"

namespace {

using segtest::device_memory;
using segtest::form;
using segtest::i64;
using segref::op;
const device_memory mem{};

class CudaBackward : public segtest::CudaTest {};

template <form F, class I>
void fd_all_ops() {
    for (op o : segtest::differentiable) segtest::random_fd_trials<F, I>(segred::cuda::par, o, 8, mem);
}

TEST_F(CudaBackward, ReduceOffsets) { fd_all_ops<form::offsets, std::int32_t>(); }
TEST_F(CudaBackward, ReduceLengths) { fd_all_ops<form::lengths, std::int64_t>(); }
TEST_F(CudaBackward, ReduceSortedIds) { fd_all_ops<form::sorted_ids, std::int64_t>(); }
TEST_F(CudaBackward, ReduceIds) { fd_all_ops<form::ids, std::int32_t>(); }
TEST_F(CudaBackward, ReduceFixed) { fd_all_ops<form::fixed, std::int64_t>(); }
TEST_F(CudaBackward, ReduceSubscripts) { fd_all_ops<form::subscripts, std::int64_t>(); }

// GPU result vs host result, both double.
::testing::AssertionResult same_as_host(const std::vector<double>& gpu, const std::vector<double>& host,
                                        const char* what) {
    return segtest::grad_near(gpu, host, 1e-12, 1e-12, what);
}

TEST_F(CudaBackward, SoftmaxBincountGatherMatchHost) {
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < 10; ++t) {
        const i64 width = t % 2 ? 3 : 1, M = segref::uniform_int(g, 1, 40), n = segref::uniform_int(g, 0, 3000);
        const bool drop = t % 3 == 2;
        const std::vector<std::int64_t> ids = segref::random_ids<std::int64_t>(g, n, drop ? -2 : 0, drop ? M + 1 : M - 1);
        const std::vector<double> v = segref::random_values<double>(g, n * width, segref::value_kind::general);
        const std::vector<double> gn = segref::random_values<double>(g, n * width, segref::value_kind::general);
        const std::vector<double> gm = segref::random_values<double>(g, M * width, segref::value_kind::general);
        segred::options opts;
        if (drop) opts.bounds(segred::bounds_policy::drop);
        SCOPED_TRACE("trial " + std::to_string(t));
        auto d_ids = mem.to_device(ids);
        auto d_v = mem.to_device(v), d_gn = mem.to_device(gn), d_gm = mem.to_device(gm);
        const auto h_desc = segred::ids(ids.data(), M);
        const auto d_desc = segred::ids(static_cast<const std::int64_t*>(d_ids.data()), M);

        // softmax backward: y from the host forward, gradient on both backends.
        std::vector<double> y(v.size()), h_gx(v.size());
        segred::segment_softmax(segred::host, segred::rows(v.data(), n, width), h_desc, segred::rows(y.data(), n, width),
                                opts);
        auto d_y = mem.to_device(y);
        auto d_gx = mem.to_device(std::vector<double>(v.size(), -1.0));
        segred::segment_softmax_backward(segred::host, segred::rows(y.data(), n, width), h_desc,
                                         segred::rows(gn.data(), n, width), segred::rows(h_gx.data(), n, width), opts);
        segred::segment_softmax_backward(segred::cuda::par, segred::rows(static_cast<const double*>(d_y.data()), n, width),
                                         d_desc, segred::rows(static_cast<const double*>(d_gn.data()), n, width),
                                         segred::rows(d_gx.data(), n, width), opts);
        EXPECT_TRUE(same_as_host(mem.to_host(d_gx), h_gx, "softmax grad"));

        // weighted bincount backward: grad_weights = grad_out[ids].
        std::vector<double> h_gw(v.size());
        auto d_gw = mem.to_device(std::vector<double>(v.size(), -1.0));
        segred::bincount_backward(segred::host, segred::rows(ids.data(), n), segred::rows(gm.data(), M, width),
                                  segred::rows(h_gw.data(), n, width), opts);
        segred::bincount_backward(segred::cuda::par, segred::rows(static_cast<const std::int64_t*>(d_ids.data()), n),
                                  segred::rows(static_cast<const double*>(d_gm.data()), M, width),
                                  segred::rows(d_gw.data(), n, width), opts);
        EXPECT_TRUE(same_as_host(mem.to_host(d_gw), h_gw, "bincount grad"));

        // gather backward (index_add) with accumulate.
        std::vector<double> h_gs = gm;
        auto d_gs = mem.to_device(gm);
        const segred::options acc = segred::options(opts).accumulate();
        segred::gather_backward(segred::host, segred::rows(gn.data(), n, width), segred::rows(ids.data(), n),
                                segred::rows(h_gs.data(), M, width), acc);
        segred::gather_backward(segred::cuda::par, segred::rows(static_cast<const double*>(d_gn.data()), n, width),
                                segred::rows(static_cast<const std::int64_t*>(d_ids.data()), n),
                                segred::rows(d_gs.data(), M, width), acc);
        const std::vector<double> got = mem.to_host(d_gs);
        EXPECT_TRUE(segtest::grad_near(got, h_gs, 1e-12, 1e-9, "gather grad"));  // atomic order: last bits
        if (HasFailure()) return;
    }
}

// A gather from a 20-row buffer by 10^7 ids: the backward's few hot rows.
TEST_F(CudaBackward, GatherBackwardHotRows) {
    SEGRED_SEEDED_RNG(g);
    const i64 n = 10000000, M = 20;
    const std::vector<std::int32_t> ids = segref::random_ids<std::int32_t>(g, n, 0, M - 1);
    std::vector<double> grad(static_cast<std::size_t>(n));
    for (double& x : grad) x = static_cast<double>(segref::uniform_int(g, -8, 8));  // exact sums
    std::vector<double> expect(static_cast<std::size_t>(M), 0.0);
    for (i64 i = 0; i < n; ++i) expect[static_cast<std::size_t>(ids[static_cast<std::size_t>(i)])] += grad[static_cast<std::size_t>(i)];
    auto d_ids = mem.to_device(ids);
    auto d_grad = mem.to_device(grad);
    auto d_out = mem.to_device(std::vector<double>(static_cast<std::size_t>(M), -1.0));
    segred::gather_backward(segred::cuda::par, segred::rows(static_cast<const double*>(d_grad.data()), n),
                            segred::rows(static_cast<const std::int32_t*>(d_ids.data()), n),
                            segred::rows(d_out.data(), M));
    EXPECT_EQ(mem.to_host(d_out), expect);
}

TEST_F(CudaBackward, FusedGatherReduceAndSoftHistogramMatchHost) {
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < 8; ++t) {
        const i64 width = t % 2 ? 3 : 1, rows = segref::uniform_int(g, 1, 30), B = segref::uniform_int(g, 1, 40),
                  K = segref::uniform_int(g, 1, 9);
        const bool drop = t % 4 == 3;
        const std::vector<std::int64_t> idx =
            segref::random_ids<std::int64_t>(g, B * K, drop ? -1 : 0, drop ? rows : rows - 1);
        const std::vector<double> data = segtest::separated_values(g, rows * width);
        const std::vector<double> gout = segref::random_values<double>(g, B * width, segref::value_kind::general);
        segred::options opts;
        if (drop) opts.bounds(segred::bounds_policy::drop);
        SCOPED_TRACE("trial " + std::to_string(t) + (drop ? ", drop" : ""));
        auto d_idx = mem.to_device(idx);
        auto d_data = mem.to_device(data), d_gout = mem.to_device(gout);
        const auto seg = segred::fixed(K, B);
        auto both = [&](auto red, const char* name) {
            SCOPED_TRACE(name);
            std::vector<double> h_out(static_cast<std::size_t>(B * width)), h_grad(data.size());
            segred::gather_segment_reduce(segred::host, segred::rows(data.data(), rows, width), segred::rows(idx.data(), B * K),
                                          seg, segred::rows(h_out.data(), B, width), red, opts);
            segred::gather_segment_reduce_backward(segred::host, segred::rows(data.data(), rows, width),
                                                   segred::rows(idx.data(), B * K), seg, segred::rows(h_out.data(), B, width),
                                                   segred::rows(gout.data(), B, width), segred::rows(h_grad.data(), rows, width),
                                                   red, opts);
            auto d_out = mem.to_device(std::vector<double>(h_out.size(), -3.0));
            auto d_grad = mem.to_device(std::vector<double>(h_grad.size(), -3.0));
            const auto d_dv = segred::rows(static_cast<const double*>(d_data.data()), rows, width);
            const auto d_iv = segred::rows(static_cast<const std::int64_t*>(d_idx.data()), B * K);
            segred::gather_segment_reduce(segred::cuda::par, d_dv, d_iv, seg, segred::rows(d_out.data(), B, width), red, opts);
            segred::gather_segment_reduce_backward(segred::cuda::par, d_dv, d_iv, seg,
                                                   segred::rows(static_cast<const double*>(d_out.data()), B, width),
                                                   segred::rows(static_cast<const double*>(d_gout.data()), B, width),
                                                   segred::rows(d_grad.data(), rows, width), red, opts);
            EXPECT_TRUE(same_as_host(mem.to_host(d_out), h_out, "fused forward"));
            EXPECT_TRUE(segtest::grad_near(mem.to_host(d_grad), h_grad, 1e-12, 1e-9, "fused grad"));
        };
        both(segred::sum{}, "sum");
        both(segred::mean{}, "mean");
        both(segred::max{}, "max");

        // Soft histogram of positions in and around [lo, hi], with weights.
        const i64 n = B * K, bins = segref::uniform_int(g, 1, 12);
        std::vector<double> pos(static_cast<std::size_t>(n)), w = segref::random_values<double>(g, n * width, segref::value_kind::general);
        for (double& x : pos) x = segref::uniform_real(g, -1.5, 2.5);
        const std::vector<double> hg = segref::random_values<double>(g, bins * width, segref::value_kind::general);
        std::vector<double> h_hist(static_cast<std::size_t>(bins * width)), h_gp(static_cast<std::size_t>(n)), h_gw(w.size());
        segred::soft_histogram(segred::host, segred::rows(pos.data(), n), segred::rows(w.data(), n, width), -1.0, 2.0,
                               segred::rows(h_hist.data(), bins, width));
        segred::soft_histogram_backward(segred::host, segred::rows(pos.data(), n), segred::rows(w.data(), n, width), -1.0,
                                        2.0, segred::rows(hg.data(), bins, width), segred::rows(h_gp.data(), n),
                                        segred::rows(h_gw.data(), n, width));
        auto d_pos = mem.to_device(pos), d_w = mem.to_device(w), d_hg = mem.to_device(hg);
        auto d_hist = mem.to_device(std::vector<double>(h_hist.size(), -2.0));
        auto d_gp = mem.to_device(std::vector<double>(h_gp.size(), -2.0));
        auto d_gw = mem.to_device(std::vector<double>(h_gw.size(), -2.0));
        const auto dp = segred::rows(static_cast<const double*>(d_pos.data()), n);
        const auto dw = segred::rows(static_cast<const double*>(d_w.data()), n, width);
        segred::soft_histogram(segred::cuda::par, dp, dw, -1.0, 2.0, segred::rows(d_hist.data(), bins, width));
        segred::soft_histogram_backward(segred::cuda::par, dp, dw, -1.0, 2.0,
                                        segred::rows(static_cast<const double*>(d_hg.data()), bins, width),
                                        segred::rows(d_gp.data(), n), segred::rows(d_gw.data(), n, width));
        EXPECT_TRUE(segtest::grad_near(mem.to_host(d_hist), h_hist, 1e-12, 1e-9, "soft histogram"));
        EXPECT_TRUE(same_as_host(mem.to_host(d_gp), h_gp, "grad positions"));
        EXPECT_TRUE(same_as_host(mem.to_host(d_gw), h_gw, "grad weights"));
        if (HasFailure()) return;
    }
}

} // namespace
