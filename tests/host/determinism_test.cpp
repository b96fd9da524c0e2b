// Host determinism: segred::host.threads(1), threads(2) and threads(3) give
// bit-identical results -- including giant segments (> 65536 rows, which the
// implementation cuts into pieces) and unsorted ids -- for the reducers whose
// floating-point result depends on the order of operations, softmax,
// gather_backward and weighted bincount. (The one place where segred is
// compared with itself; correctness is checked against the reference
// elsewhere.)
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::i64;
using segtest::same_bits;

template <class P>
class Determinism : public ::testing::Test {};
TYPED_TEST_SUITE(Determinism, segtest::float_value_pairs, segtest::vi_names);

constexpr int kThreads[] = {2, 3};

// Reduce with 1 thread and with 2 and 3; all must agree bit for bit.
template <class T, class O, class Seg, class R>
void expect_same_bits(const std::vector<T>& v, i64 n, i64 width, const Seg& seg, i64 M, const R& r,
                      segred::options opts = {}) {
    SCOPED_TRACE(R::name);
    auto run = [&](int threads, std::vector<i64>* arg) {
        std::vector<O> out(static_cast<std::size_t>(M * width));
        segred::options o = opts;
        if (arg) {
            arg->assign(static_cast<std::size_t>(M * width), -7);
            o.arg_out(arg->data());
        }
        segred::segment_reduce(segred::host.threads(threads), segred::rows(v.data(), n, width), seg,
                               segred::rows(out.data(), M, width), r, o);
        return out;
    };
    constexpr bool with_arg = std::is_same<R, segred::min>::value || std::is_same<R, segred::max>::value;
    std::vector<i64> arg1, argk;
    const std::vector<O> one = run(1, with_arg ? &arg1 : nullptr);
    for (int k : kThreads) {
        SCOPED_TRACE("threads " + std::to_string(k));
        EXPECT_TRUE(same_bits(one, run(k, with_arg ? &argk : nullptr)));
        if (with_arg) {
            EXPECT_TRUE(same_bits(arg1, argk, "arg_out"));
        }
    }
}

template <class T, class Seg>
void every_reducer(const std::vector<T>& v, i64 n, i64 width, const Seg& seg, i64 M) {
    expect_same_bits<T, T>(v, n, width, seg, M, segred::sum{});
    expect_same_bits<T, T>(v, n, width, seg, M, segred::mean{});
    expect_same_bits<T, T>(v, n, width, seg, M, segred::var{1});
    expect_same_bits<T, T>(v, n, width, seg, M, segred::logsumexp{});
    expect_same_bits<T, T>(v, n, width, seg, M, segred::max{});
    expect_same_bits<T, i64>(v, n, width, seg, M, segred::argmin{});
}

// Segment lengths: a few giant ones among many small and empty ones.
std::vector<i64> giant_lengths(segref::rng& g) {
    std::vector<i64> len = segref::random_lengths(g, 300, 20, 0.3);
    len[3] = 150000;
    len[200] = 70000;
    return len;
}

TYPED_TEST(Determinism, SortedForms) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    const std::vector<i64> len = giant_lengths(g);
    const i64 M = static_cast<i64>(len.size()), n = segref::total(len);
    const std::vector<I> off = segref::offsets_from_lengths<I>(len);
    const std::vector<I> lens(len.begin(), len.end());
    const std::vector<I> sid = segref::sorted_ids_from_lengths<I>(len);
    for (i64 width : {1, 3}) {
        SCOPED_TRACE("width " + std::to_string(width));
        const std::vector<T> v = segref::random_values<T>(g, n * width, segref::value_kind::general);
        {
            SCOPED_TRACE("offsets");
            every_reducer(v, n, width, segred::offsets(off.data(), M), M);
        }
        {
            SCOPED_TRACE("sorted_ids");
            every_reducer(v, n, width, segred::sorted_ids(sid.data(), M), M);
        }
        SCOPED_TRACE("lengths");
        expect_same_bits<T, T>(v, n, width, segred::lengths(lens.data(), M), M, segred::sum{});
    }
    // fixed: three segments of 100000 rows.
    const std::vector<T> v = segref::random_values<T>(g, 300000, segref::value_kind::general);
    SCOPED_TRACE("fixed");
    expect_same_bits<T, T>(v, 300000, 1, segred::fixed(100000, 3), 3, segred::sum{});
    expect_same_bits<T, T>(v, 300000, 1, segred::fixed(100000, 3), 3, segred::var{});
}

TYPED_TEST(Determinism, UnsortedIds) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    const i64 n = 250000, M = 1000;
    std::vector<I> id = segref::random_ids<I>(g, n, 0, M - 1);
    for (I& x : id)
        if (segref::coin(g, 0.6)) x = I(7);  // one giant segment, rows spread over the input
    const auto drop = segred::options{}.bounds(segred::bounds_policy::drop);
    for (i64 width : {1, 3}) {
        SCOPED_TRACE("width " + std::to_string(width));
        const std::vector<T> v = segref::random_values<T>(g, n * width, segref::value_kind::general);
        every_reducer(v, n, width, segred::ids(id.data(), M), M);
        // drop with some out-of-range ids, and unsorted ids as sorted_ids under drop.
        std::vector<I> bad = id;
        for (I& x : bad)
            if (segref::coin(g, 0.01)) x = I(-1);
        expect_same_bits<T, T>(v, n, width, segred::ids(bad.data(), M), M, segred::sum{}, drop);
        expect_same_bits<T, T>(v, n, width, segred::sorted_ids(bad.data(), M), M, segred::sum{}, drop);
    }
}

// Blocks of up to 32 rows a state (at least 16 of them: 32 M rows at
// M = 2100, n / 16 at M = 8200), and owned ranges, whose owners send other
// owners' rows to rotating spare slots (M = 70001 over 200000 rows).
TYPED_TEST(Determinism, UnsortedIdsBlockSizesAndOwnedRanges) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (i64 M : {2100, 8200, 70001}) {
        SCOPED_TRACE("M " + std::to_string(M));
        const i64 n = M == 70001 ? 200000 : 1200000;
        std::vector<I> id = segref::random_ids<I>(g, n, 0, M - 1);
        for (I& x : id)
            if (segref::coin(g, 0.01)) x = I(-1);  // dropped: a spare slot's rows
        const auto drop = segred::options{}.bounds(segred::bounds_policy::drop);
        for (i64 width : {1, 3}) {
            SCOPED_TRACE("width " + std::to_string(width));
            const std::vector<T> v = segref::random_values<T>(g, n * width, segref::value_kind::general);
            expect_same_bits<T, T>(v, n, width, segred::ids(id.data(), M), M, segred::sum{}, drop);
            expect_same_bits<T, T>(v, n, width, segred::ids(id.data(), M), M, segred::mean{}, drop);
        }
    }
}

TYPED_TEST(Determinism, SoftmaxGatherBackwardBincount) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    const i64 n = 200000, M = 50, width = 2;
    std::vector<I> id = segref::random_ids<I>(g, n, 0, M - 1);
    for (I& x : id)
        if (segref::coin(g, 0.7)) x = I(1);
    const std::vector<T> v = segref::random_values<T>(g, n * width, segref::value_kind::general);
    const std::vector<I> off = {0, 3, static_cast<I>(n - 10), static_cast<I>(n)};
    auto softmax_ids = [&](int threads) {
        std::vector<T> out(static_cast<std::size_t>(n * width));
        segred::segment_softmax(segred::host.threads(threads), segred::rows(v.data(), n, width),
                                segred::ids(id.data(), M), segred::rows(out.data(), n, width));
        return out;
    };
    auto softmax_off = [&](int threads) {
        std::vector<T> out(static_cast<std::size_t>(n * width));
        segred::segment_softmax(segred::host.threads(threads), segred::rows(v.data(), n, width),
                                segred::offsets(off.data(), 3), segred::rows(out.data(), n, width));
        return out;
    };
    auto backward = [&](int threads) {
        std::vector<T> out(static_cast<std::size_t>(M * width));
        segred::gather_backward(segred::host.threads(threads), segred::rows(v.data(), n, width),
                                segred::rows(id.data(), n), segred::rows(out.data(), M, width));
        return out;
    };
    auto weighted = [&](int threads) {
        std::vector<T> out(static_cast<std::size_t>(M * width));
        segred::bincount(segred::host.threads(threads), segred::rows(v.data(), n, width), segred::rows(id.data(), n),
                         segred::rows(out.data(), M, width));
        return out;
    };
    const std::vector<T> s1 = softmax_ids(1), o1 = softmax_off(1), b1 = backward(1), w1 = weighted(1);
    for (int k : kThreads) {
        SCOPED_TRACE("threads " + std::to_string(k));
        EXPECT_TRUE(same_bits(s1, softmax_ids(k), "softmax (ids)"));
        EXPECT_TRUE(same_bits(o1, softmax_off(k), "softmax (offsets)"));
        EXPECT_TRUE(same_bits(b1, backward(k), "gather_backward"));
        EXPECT_TRUE(same_bits(w1, weighted(k), "bincount"));
    }
}

} // namespace
