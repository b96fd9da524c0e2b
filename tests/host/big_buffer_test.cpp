// The host algorithms' temporaries (host/detail/big_buffer.hpp): arrays of
// 8 MiB and more start on a 2 MiB boundary on Linux (where they are advised
// to take huge pages), smaller ones come from malloc; non-trivial elements
// are constructed and destroyed exactly once. Then sums and means through
// the public API whose temporaries pass 8 MiB (partitioned entries, exact
// counts, the counting sort's permutation), against a double-precision
// loop, at 1 and 2 threads.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::i64;
namespace hd = segred::host_detail;

struct counted {
    static int live;
    int value = 7;
    counted() { ++live; }
    ~counted() { --live; }
};
int counted::live = 0;

TEST(BigBuffer, LargeArraysStartOnHugePagesAndHoldTheirValues) {
    const i64 n = (i64(8) << 20) / 8 + 3;  // just past 8 MiB of int64
    hd::big_array<std::int64_t> a = hd::make_big_array<std::int64_t>(n);
    ASSERT_NE(a.get(), nullptr);
#if defined(__linux__)
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.get()) % hd::huge_page_bytes, 0u);
#endif
    for (i64 i = 0; i < n; ++i) a[static_cast<std::size_t>(i)] = 3 * i + 1;
    for (i64 i = 0; i < n; i += 4099) ASSERT_EQ(a[static_cast<std::size_t>(i)], 3 * i + 1) << "at " << i;
    EXPECT_EQ(a[static_cast<std::size_t>(n - 1)], 3 * (n - 1) + 1);
}

TEST(BigBuffer, SmallAndEmptyArrays) {
    hd::big_array<double> empty = hd::make_big_array<double>(0);
    EXPECT_NE(empty.get(), nullptr);
    hd::big_array<double> small = hd::make_big_array<double>(5);
    for (int i = 0; i < 5; ++i) small[static_cast<std::size_t>(i)] = i * 0.5;
    for (int i = 0; i < 5; ++i) EXPECT_EQ(small[static_cast<std::size_t>(i)], i * 0.5);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.get()) % alignof(double), 0u);
    for (i64 n : {i64(3), (i64(8) << 20) + 5}) {  // malloc'd and huge-page counters
        hd::big_array<unsigned char> z = hd::make_zeroed_big_array<unsigned char>(n);
        i64 nonzero = 0;
        for (i64 i = 0; i < n; ++i) nonzero += z[static_cast<std::size_t>(i)] != 0;
        EXPECT_EQ(nonzero, 0) << n << " bytes";
    }
}

TEST(BigBuffer, NonTrivialElementsAreConstructedAndDestroyedOnce) {
    for (i64 n : {i64(0), i64(1000), (i64(8) << 20) / static_cast<i64>(sizeof(counted)) + 1}) {
        ASSERT_EQ(counted::live, 0);
        {
            hd::big_array<counted> a = hd::make_big_array<counted>(n);
            EXPECT_EQ(counted::live, n);
            for (i64 i = 0; i < n; i += 997) ASSERT_EQ(a[static_cast<std::size_t>(i)].value, 7) << "at " << i;
        }
        EXPECT_EQ(counted::live, 0) << n << " elements";
    }
}

// n rows over M uniform ids: M past 2^20 makes the exact counts of a mean
// (8 bytes a segment) pass 8 MiB, and 2^21 rows make the partitioned
// scatter's entries (2 threads) and the sorted layout of argmax pass it.
TEST(BigBuffer, ReductionsWithLargeTemporariesMatchTheReference) {
    SEGRED_SEEDED_RNG(g);
    const i64 n = i64(1) << 21, M = (i64(1) << 20) + 77;
    const std::vector<std::int32_t> ids = segref::random_ids<std::int32_t>(g, n, 0, M - 1);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = static_cast<float>(segref::uniform_real(g, -2, 2));
    std::vector<double> sum(static_cast<std::size_t>(M), 0.0);
    std::vector<i64> rows(static_cast<std::size_t>(M), 0), first(static_cast<std::size_t>(M), -1);
    std::vector<float> best(static_cast<std::size_t>(M), 0.0f);
    for (i64 i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(ids[static_cast<std::size_t>(i)]);
        const float x = v[static_cast<std::size_t>(i)];
        sum[k] += x;
        ++rows[k];
        if (first[k] < 0 || x > best[k]) {
            best[k] = x;
            first[k] = i;
        }
    }
    for (int threads : {1, 2}) {
        SCOPED_TRACE(std::to_string(threads) + " threads");
        const auto pol = segred::host.threads(threads);
        const auto by_ids = segred::ids(ids.data(), M);
        std::vector<float> out_sum(static_cast<std::size_t>(M), -1.0f), out_mean(out_sum);
        std::vector<std::int64_t> out_arg(static_cast<std::size_t>(M), -5);
        segred::segment_reduce(pol, segred::rows(v.data(), n), by_ids, segred::rows(out_sum.data(), M), segred::sum{});
        segred::segment_reduce(pol, segred::rows(v.data(), n), by_ids, segred::rows(out_mean.data(), M),
                               segred::mean{});
        segred::segment_reduce(pol, segred::rows(v.data(), n), by_ids, segred::rows(out_arg.data(), M),
                               segred::argmax{});
        for (i64 s = 0; s < M; ++s) {
            const auto k = static_cast<std::size_t>(s);
            const double tol = 1e-5 * (1.0 + static_cast<double>(rows[k]));
            ASSERT_NEAR(out_sum[k], sum[k], tol) << "sum of segment " << s;
            const double mean = rows[k] > 0 ? sum[k] / static_cast<double>(rows[k]) : 0.0;
            ASSERT_NEAR(out_mean[k], mean, tol) << "mean of segment " << s;
            ASSERT_EQ(out_arg[k], first[k]) << "argmax of segment " << s;
        }
    }
}

} // namespace
