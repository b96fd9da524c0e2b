// The other algorithms on the GPU (bincount, gather, gather_backward,
// segment_softmax), fp16/bf16 values, wide rows and the shapes that break
// naive designs (one-row segments, one giant segment, all ids equal),
// checked against the independent double reference; plus the worked examples.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reference.hpp"
#include "common/test_util.hpp"
#include "cuda/cuda_test_util.cuh"

namespace {

using segtest::device_memory;
using segtest::i64;
const device_memory mem{};

class CudaOps : public segtest::CudaTest {};

TEST_F(CudaOps, WorkedExamples) {
    const std::vector<float> v{10, 20, 30, 40, 50, 60}, v2{10, 20, 30, 40, 50, 10};
    const std::vector<int> ids{0, 1, 0, 2, 1, 2};
    auto d_v = mem.to_device(v), d_v2 = mem.to_device(v2);
    auto d_ids = mem.to_device(ids);
    auto d_out = mem.to_device(std::vector<float>(3, -1.f));
    auto d_arg = mem.to_device(std::vector<i64>(3, -9));
    const auto par = segred::cuda::par;
    segred::accumarray(par, segred::rows(d_v.data(), 6), segred::ids(d_ids.data(), 3), segred::rows(d_out.data(), 3));
    EXPECT_EQ(mem.to_host(d_out), (std::vector<float>{40, 70, 100}));
    segred::accumarray(par, segred::rows(d_v.data(), 6), segred::ids(d_ids.data(), 3), segred::rows(d_out.data(), 3),
                       segred::mean{});
    EXPECT_EQ(mem.to_host(d_out), (std::vector<float>{20, 35, 50}));
    segred::accumarray(par, segred::rows(d_v2.data(), 6), segred::ids(d_ids.data(), 3), segred::rows(d_out.data(), 3),
                       segred::max{}, segred::options{}.arg_out(d_arg.data()));
    EXPECT_EQ(mem.to_host(d_out), (std::vector<float>{30, 50, 40}));
    EXPECT_EQ(mem.to_host(d_arg), (std::vector<i64>{2, 4, 3}));

    const std::vector<double> d6{1, 2, 3, 4, 5, 6}, d8{1, 2, 3, 4, 5, 6, 7, 8};
    auto dd6 = mem.to_device(d6), dd8 = mem.to_device(d8);
    auto s1 = mem.to_device(std::vector<std::int64_t>{0, 0, 1, 1, 2, 2});
    auto s2 = mem.to_device(std::vector<std::int64_t>{0, 0, 1, 2, 2, 2, 3, 3});
    auto s3 = mem.to_device(std::vector<std::int64_t>{0, 0, 2, 2, 2, 4});
    auto o3 = mem.to_device(std::vector<double>(3)), o4 = mem.to_device(std::vector<double>(4));
    auto o5 = mem.to_device(std::vector<double>(5));
    segred::segment_reduce(par, segred::rows(dd6.data(), 6), segred::sorted_ids(s1.data(), 3), segred::rows(o3.data(), 3));
    EXPECT_EQ(mem.to_host(o3), (std::vector<double>{3, 7, 11}));
    segred::segment_reduce(par, segred::rows(dd8.data(), 8), segred::sorted_ids(s2.data(), 4), segred::rows(o4.data(), 4));
    EXPECT_EQ(mem.to_host(o4), (std::vector<double>{3, 3, 15, 15}));
    segred::segment_reduce(par, segred::rows(dd6.data(), 6), segred::sorted_ids(s3.data(), 5), segred::rows(o5.data(), 5));
    EXPECT_EQ(mem.to_host(o5), (std::vector<double>{3, 0, 12, 0, 6}));
    segred::segment_reduce(par, segred::rows(dd6.data(), 6), segred::sorted_ids(s3.data(), 5), segred::rows(o5.data(), 5),
                           segred::sum{}, segred::options{}.fill_nan());
    const std::vector<double> nan5 = mem.to_host(o5);
    EXPECT_EQ(nan5[0], 3);
    EXPECT_TRUE(std::isnan(nan5[1]));
    EXPECT_EQ(nan5[2], 12);
    EXPECT_TRUE(std::isnan(nan5[3]));
    EXPECT_EQ(nan5[4], 6);

    auto b = mem.to_device(std::vector<int>{2, 0, 2, 1, 4, 2});
    auto bc = mem.to_device(std::vector<std::int64_t>(5, -1));
    segred::bincount(par, segred::rows(b.data(), 6), segred::rows(bc.data(), 5));
    EXPECT_EQ(mem.to_host(bc), (std::vector<std::int64_t>{1, 1, 3, 0, 1}));
}

// bincount, weighted bincount, gather and gather_backward on random inputs,
// with and without drop, widths 1, 3 and 64.
TEST_F(CudaOps, BincountGatherAgainstReference) {
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < 24; ++t) {
        const i64 width = t % 3 == 0 ? 1 : t % 3 == 1 ? 3 : 64;
        // M past 12288 counts into global memory rather than shared.
        const i64 M = t % 4 == 3 ? segref::uniform_int(g, 20000, 60000) : segref::uniform_int(g, 1, 50);
        const i64 n = segref::uniform_int(g, 0, 4000);
        const bool drop = t % 2 == 1;
        std::vector<std::int32_t> ids = segref::random_ids<std::int32_t>(g, n, drop ? -2 : 0, drop ? M + 2 : M - 1);
        const std::vector<float> w = segref::random_values<float>(g, n * width, segref::value_kind::general);
        const std::vector<float> src = segref::random_values<float>(g, M * width, segref::value_kind::general);
        SCOPED_TRACE("trial " + std::to_string(t) + ": n = " + std::to_string(n) + ", M = " + std::to_string(M) +
                     ", width = " + std::to_string(width) + (drop ? ", drop" : ""));
        const segref::row_lists segs = segref::from_ids(ids.data(), M, n, drop);
        segred::options opts;
        if (drop) opts.bounds(segred::bounds_policy::drop);
        auto d_ids = mem.to_device(ids);
        auto d_w = mem.to_device(w);
        auto d_src = mem.to_device(src);

        auto d_cnt = mem.to_device(std::vector<std::int64_t>(static_cast<std::size_t>(M), -1));
        segred::bincount(segred::cuda::par, segred::rows(d_ids.data(), n), segred::rows(d_cnt.data(), M), opts);
        segref::params pc;
        pc.o = segref::op::count;
        pc.out_width = 1;
        const std::vector<double> counted = segref::reduce<float>(w.data(), width, segs, pc).out;
        EXPECT_TRUE(segtest::equal_all(mem.to_host(d_cnt), counted, "bincount"));
        // int32 counts (added straight into out), and counts added to what
        // int64 and int32 outputs hold (accumulate).
        auto d_cnt32 = mem.to_device(std::vector<std::int32_t>(static_cast<std::size_t>(M), -1));
        segred::bincount(segred::cuda::par, segred::rows(d_ids.data(), n), segred::rows(d_cnt32.data(), M), opts);
        EXPECT_TRUE(segtest::equal_all(mem.to_host(d_cnt32), counted, "int32 bincount"));
        std::vector<std::int64_t> before(static_cast<std::size_t>(M));
        std::vector<double> after(static_cast<std::size_t>(M));
        for (i64 s = 0; s < M; ++s) {
            before[static_cast<std::size_t>(s)] = s % 2 == 0 ? s * 1003 : -s;
            after[static_cast<std::size_t>(s)] = static_cast<double>(before[static_cast<std::size_t>(s)]) +
                                                 counted[static_cast<std::size_t>(s)];
        }
        segred::options acc = opts;
        acc.accumulate();
        auto d_acc64 = mem.to_device(before);
        segred::bincount(segred::cuda::par, segred::rows(d_ids.data(), n), segred::rows(d_acc64.data(), M), acc);
        EXPECT_TRUE(segtest::equal_all(mem.to_host(d_acc64), after, "accumulated int64 bincount"));
        auto d_acc32 = mem.to_device(std::vector<std::int32_t>(before.begin(), before.end()));
        segred::bincount(segred::cuda::par, segred::rows(d_ids.data(), n), segred::rows(d_acc32.data(), M), acc);
        EXPECT_TRUE(segtest::equal_all(mem.to_host(d_acc32), after, "accumulated int32 bincount"));

        segref::params ps;
        const segref::result sum = segref::reduce<float>(w.data(), width, segs, ps);
        auto d_ws = mem.to_device(std::vector<float>(static_cast<std::size_t>(M * width), -1.f));
        segred::bincount(segred::cuda::par, segred::rows(d_w.data(), n, width), segred::rows(d_ids.data(), n),
                         segred::rows(d_ws.data(), M, width), opts);
        EXPECT_TRUE(segtest::near_all(mem.to_host(d_ws), sum.out, &sum.scale, 1e-5, "weighted bincount"));

        auto d_gs = mem.to_device(std::vector<float>(static_cast<std::size_t>(M * width), -1.f));
        segred::gather_backward(segred::cuda::par, segred::rows(d_w.data(), n, width), segred::rows(d_ids.data(), n),
                                segred::rows(d_gs.data(), M, width), opts);
        EXPECT_TRUE(segtest::near_all(mem.to_host(d_gs), sum.out, &sum.scale, 1e-5, "gather_backward"));

        auto d_g = mem.to_device(std::vector<float>(static_cast<std::size_t>(n * width), -1.f));
        segred::gather(segred::cuda::par, segred::rows(d_src.data(), M, width), segred::rows(d_ids.data(), n),
                       segred::rows(d_g.data(), n, width), opts);
        EXPECT_TRUE(segtest::equal_all(mem.to_host(d_g), segref::gather(src.data(), M, width, ids.data(), n, drop, 0.0),
                                       "gather"));
        if (HasFailure()) return;
    }
}

// Counts over more ids than L2 holds as 64-bit words take 32-bit adds:
// straight into an int32 out, into the low halves of an int64 out (with the
// carry into the high half when out is accumulated), and into the low halves
// of the count array behind a mean. Ids crowd a few bins (0..63 and M - 1)
// so that counts pass an accumulated negative count's low half.
TEST_F(CudaOps, CountsBeyondL2) {
    SEGRED_SEEDED_RNG(g);
    int device = 0, l2 = 0;
    ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
    ASSERT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), cudaSuccess);
    i64 M = i64(1) << 24;
    while (M * 8 <= 2 * i64(l2)) M *= 2;
    const i64 n = 300000;
    std::vector<std::int32_t> ids = segref::random_ids<std::int32_t>(g, n, 0, M - 1);
    for (i64 i = 0; i < n; ++i) {
        if (i % 3 == 1) ids[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(M - 1);
        if (i % 3 == 2) ids[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i % 64);
    }
    // On a 1/8 grid: every partial sum is exact in float, whatever the order.
    const std::vector<float> v = segref::random_values<float>(g, n, segref::value_kind::exact);
    std::vector<double> count(static_cast<std::size_t>(M), 0.0), total(static_cast<std::size_t>(M), 0.0);
    for (i64 i = 0; i < n; ++i) {
        count[static_cast<std::size_t>(ids[static_cast<std::size_t>(i)])] += 1;
        total[static_cast<std::size_t>(ids[static_cast<std::size_t>(i)])] += v[static_cast<std::size_t>(i)];
    }
    std::vector<std::int64_t> before(static_cast<std::size_t>(M));
    std::vector<double> after(static_cast<std::size_t>(M)), mean(static_cast<std::size_t>(M)),
        mean_scale(static_cast<std::size_t>(M), 1.0);
    for (i64 s = 0; s < M; ++s) {
        const std::size_t u = static_cast<std::size_t>(s);
        before[u] = -1 - s % 7;
        after[u] = static_cast<double>(before[u]) + count[u];
        mean[u] = count[u] > 0 ? total[u] / count[u] : 0.0;
    }
    auto d_ids = mem.to_device(ids);
    auto d_v = mem.to_device(v);
    const auto id_rows = segred::rows(static_cast<const std::int32_t*>(d_ids.data()), n);

    auto d_c32 = mem.to_device(std::vector<std::int32_t>(static_cast<std::size_t>(M), -1));
    segred::bincount(segred::cuda::par, id_rows, segred::rows(d_c32.data(), M));
    EXPECT_TRUE(segtest::equal_all(mem.to_host(d_c32), count, "int32 counts"));
    auto d_c64 = mem.to_device(std::vector<std::int64_t>(static_cast<std::size_t>(M), -1));
    segred::bincount(segred::cuda::par, id_rows, segred::rows(d_c64.data(), M));
    EXPECT_TRUE(segtest::equal_all(mem.to_host(d_c64), count, "int64 counts"));
    auto d_acc64 = mem.to_device(before);
    segred::bincount(segred::cuda::par, id_rows, segred::rows(d_acc64.data(), M), segred::options{}.accumulate());
    EXPECT_TRUE(segtest::equal_all(mem.to_host(d_acc64), after, "accumulated int64 counts"));
    auto d_acc32 = mem.to_device(std::vector<std::int32_t>(before.begin(), before.end()));
    segred::bincount(segred::cuda::par, id_rows, segred::rows(d_acc32.data(), M), segred::options{}.accumulate());
    EXPECT_TRUE(segtest::equal_all(mem.to_host(d_acc32), after, "accumulated int32 counts"));
    auto d_mean = mem.to_device(std::vector<float>(static_cast<std::size_t>(M), -1.f));
    segred::accumarray(segred::cuda::par, segred::rows(static_cast<const float*>(d_v.data()), n),
                       segred::ids(static_cast<const std::int32_t*>(d_ids.data()), M), segred::rows(d_mean.data(), M),
                       segred::mean{});
    EXPECT_TRUE(segtest::near_all(mem.to_host(d_mean), mean, &mean_scale, 1e-6, "mean"));
}

template <class Desc>
void softmax_case(const std::vector<double>& v, i64 n, i64 width, const Desc& desc, const segref::row_lists& segs,
                  segred::options opts, double fill) {
    auto d_v = mem.to_device(v);
    auto d_o = mem.to_device(std::vector<double>(static_cast<std::size_t>(n * width), -5.0));
    segred::segment_softmax(segred::cuda::par, segred::rows(d_v.data(), n, width), desc,
                            segred::rows(d_o.data(), n, width), opts);
    const std::vector<double> ref = segref::softmax(v.data(), n, width, segs, fill);
    const std::vector<double> scale(ref.size(), 1.0);
    EXPECT_TRUE(segtest::near_all(mem.to_host(d_o), ref, &scale, 1e-12, "softmax"));
}

TEST_F(CudaOps, SoftmaxAgainstReference) {
    SEGRED_SEEDED_RNG(g);
    for (int t = 0; t < 12; ++t) {
        const i64 width = t % 2 ? 3 : 1, M = segref::uniform_int(g, 1, 30);
        const std::vector<i64> len = segref::random_lengths(g, M, t < 6 ? 9 : 700, 0.3);
        const std::vector<std::int64_t> off = segref::offsets_from_lengths<std::int64_t>(len, 2);
        const i64 n = segref::total(len) + 4;  // two rows before, two after: outside every segment
        const std::vector<double> v = segref::random_values<double>(g, n * width, segref::value_kind::general);
        auto d_off = mem.to_device(off);
        SCOPED_TRACE("offsets trial " + std::to_string(t));
        softmax_case(v, n, width, segred::offsets(static_cast<const std::int64_t*>(d_off.data()), M),
                     segref::from_offsets(off.data(), M, n, false), segred::options{}.fill(-1.0), -1.0);
        const std::vector<std::int32_t> ids = segref::random_ids<std::int32_t>(g, n, -1, M);
        auto d_ids = mem.to_device(ids);
        SCOPED_TRACE("ids trial with drop");
        softmax_case(v, n, width, segred::ids(static_cast<const std::int32_t*>(d_ids.data()), M),
                     segref::from_ids(ids.data(), M, n, true), segred::options{}.bounds(segred::bounds_policy::drop),
                     0.0);
        if (HasFailure()) return;
    }
}

// fp16 / bf16 values, every reducer, over unsorted ids (atomic and sorted
// paths), offsets and sorted ids: compared with the reference on the same
// rounded values. Accumulation is in float, so the error is float's plus one
// rounding of the result to the 16-bit output type. Rows of `width` columns;
// `lead` elements before the values and the out in their allocations (0 or
// 1: unaligned). With `accumulate_counts`, the result is combined into an
// out of random 16-bit values and each segment's rows are reported.
template <class H, class Desc, class R>
void half_reducer_case(const std::vector<H>& hv, const std::vector<double>& dv, const Desc& desc,
                       const segref::row_lists& segs, const R& reducer, segref::op o, bool deterministic,
                       i64 width = 1, i64 lead = 0, bool accumulate_counts = false) {
    const i64 n = static_cast<i64>(hv.size()) / width, M = static_cast<i64>(segs.size());
    constexpr bool arg_out = std::is_same<R, segred::argmin>::value || std::is_same<R, segred::argmax>::value ||
                             std::is_same<R, segred::count>::value;
    using O = std::conditional_t<arg_out, std::int64_t, H>;
    std::vector<H> stored(static_cast<std::size_t>(lead), H(0.f));
    stored.insert(stored.end(), hv.begin(), hv.end());
    std::vector<O> out0(static_cast<std::size_t>(lead + M * width), O(0));
    segref::params p;
    p.o = o;
    p.out_width = width;
    if (accumulate_counts) {
        p.accumulate = true;
        for (std::size_t e = 0; e < out0.size(); ++e) {
            out0[e] = O(static_cast<float>(static_cast<double>(e % 17) / 4 - 2));
            if (e >= static_cast<std::size_t>(lead)) p.initial.push_back(static_cast<float>(out0[e]));
        }
    }
    auto d_v = mem.to_device(stored);
    auto d_o = mem.to_device(out0);
    auto d_cnt = mem.to_device(std::vector<std::int64_t>(static_cast<std::size_t>(M), -1));
    segred::options opts = segred::options{}.deterministic(deterministic);
    if (accumulate_counts) opts.accumulate().counts(d_cnt.data());
    segred::segment_reduce(segred::cuda::par, segred::rows(d_v.data() + lead, n, width), desc,
                           segred::rows(d_o.data() + lead, M, width), reducer, opts);
    const segref::result r = segref::reduce<double>(dv.data(), width, segs, p);
    const std::vector<O> out = mem.to_host(d_o);
    std::vector<double> got, tol(r.out.size());
    for (auto h = out.begin() + lead; h != out.end(); ++h) got.push_back(static_cast<double>(static_cast<float>(*h)));
    const double eps = arg_out ? 0.0 : std::is_same<H, __half>::value ? 1.0 / 1024 : 1.0 / 128;
    for (std::size_t s = 0; s < r.out.size(); ++s) tol[s] = std::fabs(r.out[s]) + 1e-3 * r.scale[s] + 1e-6;
    SCOPED_TRACE(std::string(segref::name(o)) + (deterministic ? " deterministic" : "") + ", width " +
                 std::to_string(width) + (lead ? ", unaligned" : "") + (accumulate_counts ? ", accumulate" : ""));
    EXPECT_TRUE(segtest::near_all(got, r.out, &tol, eps, "16-bit out"));
    if (accumulate_counts) EXPECT_EQ(mem.to_host(d_cnt), r.counts);
}

// 16-bit rows over 12000 unsorted ids, whose float sums do not fit in the
// shared memory of a block (288 KiB at 6 columns): 16 columns take the global
// kernel's four-column vector atomics (8-byte loads), 6 columns and
// unaligned rows a column at a time.
template <class H>
void wide_half_case(segref::rng& g) {
    const i64 n = 3000, M = 12000;
    const std::vector<std::int64_t> ids = segref::random_ids<std::int64_t>(g, n, 0, M - 1);
    auto d_ids = mem.to_device(ids);
    const auto by_ids = segred::ids(static_cast<const std::int64_t*>(d_ids.data()), M);
    const segref::row_lists segs = segref::from_ids(ids.data(), M, n, false);
    for (i64 width : {16, 6}) {
        std::vector<H> hv(static_cast<std::size_t>(n * width));
        std::vector<double> dv(hv.size());
        for (std::size_t e = 0; e < hv.size(); ++e) {
            hv[e] = H(static_cast<float>(segref::uniform_real(g, -4, 4)));
            dv[e] = static_cast<double>(static_cast<float>(hv[e]));
        }
        for (i64 lead : {0, 1}) {
            half_reducer_case(hv, dv, by_ids, segs, segred::sum{}, segref::op::sum, false, width, lead);
            half_reducer_case(hv, dv, by_ids, segs, segred::mean{}, segref::op::mean, false, width, lead);
        }
    }
}

template <class H>
void half_case(segref::rng& g) {
    const i64 n = 5000, M = 37;
    const std::vector<std::int64_t> ids = segref::random_ids<std::int64_t>(g, n, 0, M - 1);
    const std::vector<i64> len = segref::random_lengths(g, M, 300, 0.2);
    const std::vector<std::int32_t> off = segref::offsets_from_lengths<std::int32_t>(len);
    const i64 n_off = segref::total(len);
    const i64 n_values = std::max(n, n_off);  // enough rows for both layouts
    std::vector<H> hv(static_cast<std::size_t>(n_values));
    std::vector<double> dv(static_cast<std::size_t>(n_values));
    for (i64 i = 0; i < n_values; ++i) {
        const double x = (i % 97 == 0) ? 1.5 : segref::uniform_real(g, -4, 4);  // repeated 1.5: ties
        hv[static_cast<std::size_t>(i)] = H(static_cast<float>(x));
        dv[static_cast<std::size_t>(i)] = static_cast<double>(static_cast<float>(hv[static_cast<std::size_t>(i)]));
    }
    auto d_ids = mem.to_device(ids);
    auto d_off = mem.to_device(off);
    const auto by_ids = segred::ids(static_cast<const std::int64_t*>(d_ids.data()), M);
    const segref::row_lists id_segs = segref::from_ids(ids.data(), M, n, false);
    const std::vector<H> hv_ids(hv.begin(), hv.begin() + n);
    const std::vector<double> dv_ids(dv.begin(), dv.begin() + n);
    const std::vector<H> hv_off(hv.begin(), hv.begin() + n_off);
    const std::vector<double> dv_off(dv.begin(), dv.begin() + n_off);
    const auto by_off = segred::offsets(static_cast<const std::int32_t*>(d_off.data()), M);
    const segref::row_lists off_segs = segref::from_offsets(off.data(), M, n_off, false);
    using segref::op;
    auto all = [&](const auto& desc, const std::vector<H>& h, const std::vector<double>& d,
                   const segref::row_lists& segs, bool det) {
        half_reducer_case(h, d, desc, segs, segred::sum{}, op::sum, det);
        half_reducer_case(h, d, desc, segs, segred::mean{}, op::mean, det);
        half_reducer_case(h, d, desc, segs, segred::count{}, op::count, det);
        half_reducer_case(h, d, desc, segs, segred::min{}, op::min, det);
        half_reducer_case(h, d, desc, segs, segred::max{}, op::max, det);
        half_reducer_case(h, d, desc, segs, segred::argmin{}, op::argmin, det);
        half_reducer_case(h, d, desc, segs, segred::argmax{}, op::argmax, det);
        half_reducer_case(h, d, desc, segs, segred::any{}, op::any, det);
        half_reducer_case(h, d, desc, segs, segred::all{}, op::all, det);
        half_reducer_case(h, d, desc, segs, segred::logsumexp{}, op::logsumexp, det);
        half_reducer_case(h, d, desc, segs, segred::var{}, op::var, det);
        half_reducer_case(h, d, desc, segs, segred::stddev{}, op::stddev, det);
    };
    all(by_ids, hv_ids, dv_ids, id_segs, false);
    all(by_ids, hv_ids, dv_ids, id_segs, true);
    all(by_off, hv_off, dv_off, off_segs, false);
}

// fp16 / bf16 values over sorted ids of short runs and empty segments,
// across several tiles (4096 rows each with int32 ids, 2048 with int64):
// where a run's float state is two 16-bit values, runs that end inside a
// thread's rows are parked in the stage split in halves and written by the
// warp after the fold, as plain stores or (accumulate, counts) fully. The
// layout cycles through 1 to 9 rows a segment (boundaries at every place of
// a group of rows), then random lengths with half the segments empty, then
// 90% empty segments (gaps of a few to a few dozen), then a gap of 150
// (past the inline limit of 64: the gap list) and one long segment across a
// tile edge, and ends inside a thread's rows, with trailing empty segments.
template <class H, class I>
void half_sorted_runs_case(segref::rng& g) {
    SCOPED_TRACE(sizeof(I) == 4 ? "int32 ids" : "int64 ids");
    std::vector<i64> len;
    i64 n = 0;
    auto push = [&](i64 l) {
        len.push_back(l);
        n += l;
    };
    for (i64 l = 1; n < 6000; l = l % 9 + 1) push(l);
    while (n < 12000) push(segref::coin(g, 0.5) ? 0 : segref::uniform_int(g, 1, 9));
    while (n < 18000) push(segref::coin(g, 0.9) ? 0 : segref::uniform_int(g, 1, 40));
    len.insert(len.end(), 150, 0);
    push(5000);
    while (n < 24000 + 37 * 16 + 5) push(segref::coin(g, 0.3) ? 0 : segref::uniform_int(g, 1, 5));
    len.insert(len.end(), 3, 0);
    const i64 M = static_cast<i64>(len.size());
    const std::vector<I> ids = segref::sorted_ids_from_lengths<I>(len);
    std::vector<H> hv(static_cast<std::size_t>(n));
    std::vector<double> dv(hv.size());
    for (std::size_t i = 0; i < hv.size(); ++i) {
        const double x = (i % 89 == 0) ? 1.5 : segref::uniform_real(g, -4, 4);  // repeated 1.5: ties
        hv[i] = H(static_cast<float>(x));
        dv[i] = static_cast<double>(static_cast<float>(hv[i]));
    }
    auto d_ids = mem.to_device(ids);
    const auto by_ids = segred::sorted_ids(static_cast<const I*>(d_ids.data()), M);
    const segref::row_lists segs = segref::from_ids(ids.data(), M, n, false);
    using segref::op;
    half_reducer_case(hv, dv, by_ids, segs, segred::sum{}, op::sum, false);
    half_reducer_case(hv, dv, by_ids, segs, segred::mean{}, op::mean, false);
    half_reducer_case(hv, dv, by_ids, segs, segred::min{}, op::min, false);
    half_reducer_case(hv, dv, by_ids, segs, segred::max{}, op::max, false);
    half_reducer_case(hv, dv, by_ids, segs, segred::argmax{}, op::argmax, false);
    half_reducer_case(hv, dv, by_ids, segs, segred::sum{}, op::sum, false, 1, 0, true);
    half_reducer_case(hv, dv, by_ids, segs, segred::mean{}, op::mean, false, 1, 0, true);
    half_reducer_case(hv, dv, by_ids, segs, segred::sum{}, op::sum, false, 1, 1);  // values off 16 bytes
}

// 16-bit rows into more segments than three quarters of the L2 hold
// (2^24 + 3 float sums), through the bucketed partition
// (bucket_scatter.cuh), whose 2-byte values reach shared memory through
// registers (cp.async moves 4 bytes or more): 150000 rows of uniform ids
// (partitioned) and then 150000 in runs of 1 to 20 equal ids (tiles the
// counting pass adds itself), with ids 0 and M - 1 among them. Sums and
// means (buckets of 2^15 and 2^14 ids); min, max and argmax through the
// bucketed keys (bucket_extremum.cuh: 8-byte keys made from 2-byte values,
// buckets of 2^14 ids), values on a grid of 1/4 so that ties are common.
template <class H>
void bucketed_half_case(segref::rng& g) {
    const i64 n = 300000, M = (i64(1) << 24) + 3;
    std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
    for (i64 i = 0; i < n / 2; ++i) ids[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(segref::uniform_int(g, 0, M - 1));
    for (i64 i = n / 2; i < n;) {
        const auto id = static_cast<std::int32_t>(segref::uniform_int(g, 0, M - 1));
        for (i64 len = segref::uniform_int(g, 1, 20); len > 0 && i < n; --len) ids[static_cast<std::size_t>(i++)] = id;
    }
    ids[7] = 0;
    ids[static_cast<std::size_t>(n / 2 + 1)] = static_cast<std::int32_t>(M - 1);
    std::vector<H> hv(static_cast<std::size_t>(n));
    std::vector<double> dv(hv.size());
    for (std::size_t e = 0; e < hv.size(); ++e) {
        hv[e] = H(static_cast<float>(segref::uniform_int(g, -16, 16)) / 4.0f);
        dv[e] = static_cast<double>(static_cast<float>(hv[e]));
    }
    auto d_ids = mem.to_device(ids);
    const auto by_ids = segred::ids(static_cast<const std::int32_t*>(d_ids.data()), M);
    const segref::row_lists segs = segref::from_ids(ids.data(), M, n, false);
    half_reducer_case(hv, dv, by_ids, segs, segred::sum{}, segref::op::sum, false);
    half_reducer_case(hv, dv, by_ids, segs, segred::mean{}, segref::op::mean, false);
    half_reducer_case(hv, dv, by_ids, segs, segred::min{}, segref::op::min, false);
    half_reducer_case(hv, dv, by_ids, segs, segred::max{}, segref::op::max, false);
    half_reducer_case(hv, dv, by_ids, segs, segred::argmax{}, segref::op::argmax, false);
}

TEST_F(CudaOps, HalfBucketedReductions) {
    SEGRED_SEEDED_RNG(g);
    bucketed_half_case<__half>(g);
    bucketed_half_case<__nv_bfloat16>(g);
}

// n 16-bit values uniform in [-4, 4), every 89th 2.5 (ties), and the same
// values in double.
template <class H>
std::pair<std::vector<H>, std::vector<double>> tied_half_values(segref::rng& g, i64 n) {
    std::vector<H> hv(static_cast<std::size_t>(n));
    std::vector<double> dv(hv.size());
    for (std::size_t e = 0; e < hv.size(); ++e) {
        const double x = e % 89 == 0 ? 2.5 : segref::uniform_real(g, -4, 4);
        hv[e] = H(static_cast<float>(x));
        dv[e] = static_cast<double>(static_cast<float>(hv[e]));
    }
    return {hv, dv};
}

// 16-bit rows over offsets averaging 384 rows or more, streamed
// (stream_reduce.cuh): 8 halves a 16-byte load, segments starting and ending
// off 16-byte boundaries, short ones folded by a lane alone, empty ones, a
// segment through several 16 KiB chunks, 3 rows before the first offset;
// unaligned values (the tile kernels) alongside. Sum, mean, min, max,
// argmax, and a sum accumulated into the out with counts.
template <class H>
void streamed_half_case(segref::rng& g) {
    std::vector<i64> len;
    for (int k = 0; k < 120; ++k) len.push_back(segref::coin(g, 0.2) ? segref::uniform_int(g, 0, 12) : segref::uniform_int(g, 1, 1500));
    len.push_back(5 * 8192 + 3);
    for (int k = 0; k < 30; ++k) len.push_back(segref::uniform_int(g, 0, 900));
    const i64 M = static_cast<i64>(len.size());
    const std::vector<std::int32_t> off = segref::offsets_from_lengths<std::int32_t>(len, 3);
    const i64 n = static_cast<i64>(off.back()) + 2;
    ASSERT_GE(n, 512 * M) << "segments long enough to be streamed";
    const auto [hv, dv] = tied_half_values<H>(g, n);
    auto d_off = mem.to_device(off);
    const auto by_off = segred::offsets(static_cast<const std::int32_t*>(d_off.data()), M);
    const segref::row_lists segs = segref::from_offsets(off.data(), M, n, false);
    using segref::op;
    for (i64 lead : {0, 1}) {
        half_reducer_case(hv, dv, by_off, segs, segred::sum{}, op::sum, false, 1, lead);
        half_reducer_case(hv, dv, by_off, segs, segred::mean{}, op::mean, false, 1, lead);
        half_reducer_case(hv, dv, by_off, segs, segred::min{}, op::min, false, 1, lead);
        half_reducer_case(hv, dv, by_off, segs, segred::max{}, op::max, false, 1, lead);
        half_reducer_case(hv, dv, by_off, segs, segred::argmax{}, op::argmax, false, 1, lead);
        half_reducer_case(hv, dv, by_off, segs, segred::sum{}, op::sum, false, 1, lead, true);
    }
}

TEST_F(CudaOps, HalfStreamedSegments) {
    SEGRED_SEEDED_RNG(g);
    streamed_half_case<__half>(g);
    streamed_half_case<__nv_bfloat16>(g);
}

// 16-bit values in one column from offsets and lengths of 6 to 30 rows, one
// in ten of 0 to 3 (16 on average): a thread a segment folds its rows from
// its block's stage in shared memory, copied and read in pairs of values,
// three or four steps of 256 segments a tile. Segments start and end at odd
// and even rows alike (a lone first or last row beside the pairs). Two
// giants (past 4096 rows: pieces of 4096 reduced by a warp in 16-byte
// vectors, the rows before and after them alone), of 4097 rows (a last
// piece of one row) and 9000. The
// offsets start at row 3 and end at an odd row, the last one, so
// the last pair is only half there (copied through registers). Values 0, 1
// and 2 elements into their allocations: 1 is off the copies' 4-byte
// alignment, so those segments read device memory instead.
template <class H>
void staged_half_case(segref::rng& g) {
    std::vector<i64> len(20000);
    for (i64& l : len) l = segref::coin(g, 0.1) ? segref::uniform_int(g, 0, 3) : segref::uniform_int(g, 6, 30);
    len[5001] = 4097;
    len[12002] = 9000;
    if (segref::total(len) % 2 != 0) ++len.back();  // with the 3 rows before: an odd end
    const i64 M = static_cast<i64>(len.size());
    const std::vector<std::int32_t> off = segref::offsets_from_lengths<std::int32_t>(len, 3);
    const std::vector<std::int32_t> lengths(len.begin(), len.end());
    const i64 n = static_cast<i64>(off.back());
    const auto [hv, dv] = tied_half_values<H>(g, n);
    auto d_off = mem.to_device(off);
    const auto by_off = segred::offsets(static_cast<const std::int32_t*>(d_off.data()), M);
    const segref::row_lists segs = segref::from_offsets(off.data(), M, n, false);
    // Lengths count from row 0: the same segments over values without the 3
    // leading rows.
    auto d_len = mem.to_device(lengths);
    const auto by_len = segred::lengths(static_cast<const std::int32_t*>(d_len.data()), M);
    const std::vector<H> hv_len(hv.begin() + 3, hv.end());
    const std::vector<double> dv_len(dv.begin() + 3, dv.end());
    const std::vector<std::int32_t> off_len = segref::offsets_from_lengths<std::int32_t>(len);
    const segref::row_lists segs_len = segref::from_offsets(off_len.data(), M, n - 3, false);
    using segref::op;
    auto all = [&](const auto& desc, const std::vector<H>& h, const std::vector<double>& d,
                   const segref::row_lists& sg, i64 lead) {
        half_reducer_case(h, d, desc, sg, segred::sum{}, op::sum, false, 1, lead);
        half_reducer_case(h, d, desc, sg, segred::mean{}, op::mean, false, 1, lead);
        half_reducer_case(h, d, desc, sg, segred::max{}, op::max, false, 1, lead);
        half_reducer_case(h, d, desc, sg, segred::argmax{}, op::argmax, false, 1, lead);
        half_reducer_case(h, d, desc, sg, segred::sum{}, op::sum, false, 1, lead, true);
    };
    for (i64 lead : {0, 1, 2}) {
        all(by_off, hv, dv, segs, lead);
        all(by_len, hv_len, dv_len, segs_len, lead);
    }
}

TEST_F(CudaOps, HalfStagedColumn) {
    SEGRED_SEEDED_RNG(g);
    staged_half_case<__half>(g);
    staged_half_case<__nv_bfloat16>(g);
}

// 16-bit values in fixed segments of one column: from 16-byte aligned
// values (lead 0), 1 to 128 rows through the stage of 16-byte vectors
// (short_fixed.cuh; at 96 and 128 rows a tile still holds 64 segments or
// more, a thread a segment);
// unaligned (1 or 2 elements into their allocations), 3 to 63 rows a
// thread a segment (units; staged in shared memory from 32 rows), 2, 16,
// 32 and 64 rows and more on the tiles of computed keys; about 40000 rows,
// so several blocks and tiles.
template <class H>
void fixed_half_case(segref::rng& g) {
    for (const i64 size : {1, 2, 3, 4, 5, 8, 12, 16, 24, 32, 63, 64, 96, 128}) {
        SCOPED_TRACE("fixed segments of " + std::to_string(size) + " rows");
        const i64 M = 40000 / size + 1, n = M * size;
        const auto [hv, dv] = tied_half_values<H>(g, n);
        const auto by_fixed = segred::fixed(size, M);
        const segref::row_lists segs = segref::from_fixed(size, M, n);
        using segref::op;
        for (i64 lead : {0, 1, 2}) {
            half_reducer_case(hv, dv, by_fixed, segs, segred::sum{}, op::sum, false, 1, lead);
            half_reducer_case(hv, dv, by_fixed, segs, segred::max{}, op::max, false, 1, lead);
            half_reducer_case(hv, dv, by_fixed, segs, segred::argmax{}, op::argmax, false, 1, lead);
        }
        half_reducer_case(hv, dv, by_fixed, segs, segred::mean{}, op::mean, false, 1, 0, true);
    }
}

TEST_F(CudaOps, HalfFixedSegments) {
    SEGRED_SEEDED_RNG(g);
    fixed_half_case<__half>(g);
    fixed_half_case<__nv_bfloat16>(g);
}

TEST_F(CudaOps, HalfSortedIdRuns) {
    SEGRED_SEEDED_RNG(g);
    half_sorted_runs_case<__half, std::int32_t>(g);
    half_sorted_runs_case<__half, std::int64_t>(g);
    half_sorted_runs_case<__nv_bfloat16, std::int32_t>(g);
}

TEST_F(CudaOps, HalfValues) {
    SEGRED_SEEDED_RNG(g);
    half_case<__half>(g);
    wide_half_case<__half>(g);
}

TEST_F(CudaOps, Bfloat16Values) {
    SEGRED_SEEDED_RNG(g);
    half_case<__nv_bfloat16>(g);
    wide_half_case<__nv_bfloat16>(g);
}

// Shapes that collapse naive designs, at sizes where pieces and partials are
// exercised: 2^20 one-row segments, one segment of 3 million rows, all ids
// equal, and 64-wide rows.
TEST_F(CudaOps, ExtremeShapes) {
    SEGRED_SEEDED_RNG(g);
    struct shape {
        const char* name;
        i64 n, M, width;
        bool all_equal;
    };
    for (const shape sh : {shape{"one-row segments", 1 << 20, 1 << 20, 1, false},
                           shape{"one giant segment", 3000000, 1, 1, true},
                           shape{"all ids equal, M = 1000", 2000000, 1000, 1, true},
                           shape{"all ids equal, M = 2^20", 3000000, 1 << 20, 1, true},
                           shape{"all ids equal, width 3", 1000000, 5000, 3, true},
                           shape{"width 64", 20000, 77, 64, false}}) {
        SCOPED_TRACE(sh.name);
        std::vector<std::int32_t> ids = sh.all_equal ? std::vector<std::int32_t>(static_cast<std::size_t>(sh.n), static_cast<std::int32_t>(sh.M - 1))
                                                     : segref::random_ids<std::int32_t>(g, sh.n, 0, sh.M - 1);
        if (sh.M == sh.n)
            for (i64 i = 0; i < sh.n; ++i) ids[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
        std::vector<std::int32_t> sorted = ids;
        std::sort(sorted.begin(), sorted.end());
        const std::vector<float> v = segref::random_values<float>(g, sh.n * sh.width, segref::value_kind::general);
        auto d_v = mem.to_device(v);
        auto d_ids = mem.to_device(ids), d_sorted = mem.to_device(sorted);
        for (int which = 0; which < 3; ++which) {
            auto d_o = mem.to_device(std::vector<float>(static_cast<std::size_t>(sh.M * sh.width)));
            auto d_arg = mem.to_device(std::vector<std::int64_t>(static_cast<std::size_t>(sh.M * sh.width)));
            const auto vin = segred::rows(static_cast<const float*>(d_v.data()), sh.n, sh.width);
            const auto out = segred::rows(d_o.data(), sh.M, sh.width);
            segref::params p;
            if (which == 0) {
                segred::segment_reduce(segred::cuda::par, vin, segred::sorted_ids(d_sorted.data(), sh.M), out);
            } else if (which == 1) {
                segred::accumarray(segred::cuda::par, vin, segred::ids(d_ids.data(), sh.M), out);
            } else {
                p.o = segref::op::max;
                segred::accumarray(segred::cuda::par, vin, segred::ids(d_ids.data(), sh.M), out, segred::max{},
                                   segred::options{}.arg_out(d_arg.data()));
            }
            const std::vector<std::int32_t>& used = which == 0 ? sorted : ids;
            const segref::result r = segref::reduce<float>(v.data(), sh.width, segref::from_ids(used.data(), sh.M, sh.n, false), p);
            SCOPED_TRACE(which == 0 ? "sorted sum" : which == 1 ? "unsorted sum" : "unsorted max with arg");
            EXPECT_TRUE(segtest::near_all(mem.to_host(d_o), r.out, &r.scale, 2e-5, "out"));
            if (which == 2) EXPECT_TRUE(segtest::equal_all(mem.to_host(d_arg), r.arg, "arg"));
        }
        // Counts of millions of rows into one id, in int32 and int64.
        segref::params pc;
        pc.o = segref::op::count;
        pc.out_width = 1;
        const std::vector<double> counted =
            segref::reduce<float>(v.data(), sh.width, segref::from_ids(ids.data(), sh.M, sh.n, false), pc).out;
        auto d_c32 = mem.to_device(std::vector<std::int32_t>(static_cast<std::size_t>(sh.M), 7));
        auto d_c64 = mem.to_device(std::vector<std::int64_t>(static_cast<std::size_t>(sh.M), 7));
        segred::bincount(segred::cuda::par, segred::rows(d_ids.data(), sh.n), segred::rows(d_c32.data(), sh.M));
        segred::bincount(segred::cuda::par, segred::rows(d_ids.data(), sh.n), segred::rows(d_c64.data(), sh.M));
        EXPECT_TRUE(segtest::equal_all(mem.to_host(d_c32), counted, "int32 bincount"));
        EXPECT_TRUE(segtest::equal_all(mem.to_host(d_c64), counted, "int64 bincount"));
        if (HasFailure()) return;
    }
}

} // namespace
