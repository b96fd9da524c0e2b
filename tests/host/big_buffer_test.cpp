// The host algorithms' temporaries (host/detail/big_buffer.hpp): arrays of
// 8 MiB and more start on a 2 MiB boundary on Linux (where they are advised
// to take huge pages), smaller ones come from malloc; non-trivial elements
// are constructed and destroyed exactly once. Then sums and means through
// the public API whose temporaries pass 8 MiB (partitioned entries, exact
// counts, the counting sort's permutation), against a double-precision
// loop, at 1 and 2 threads, from kept blocks that earlier users filled
// with garbage. Large blocks are kept between calls up to a limit
// (host/kept_temporaries.hpp): handed out again for requests of half their
// size or more, the oldest freed first, never more than the limit held.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
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

constexpr std::size_t MiB = std::size_t(1) << 20;

// Sets the keep limit for one test, with nothing kept at its start, and
// restores the limit (freeing what the test kept) at its end.
struct keep_limit_for_test {
    std::size_t before;
    explicit keep_limit_for_test(std::size_t bytes) : before(segred::set_host_temporary_keep_bytes(bytes)) {
        segred::release_host_temporaries();
    }
    ~keep_limit_for_test() {
        segred::release_host_temporaries();
        segred::set_host_temporary_keep_bytes(before);
    }
};

hd::big_array<unsigned char> bytes_array(std::size_t bytes) {
    return hd::make_big_array<unsigned char>(static_cast<i64>(bytes));
}

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

TEST(BigBuffer, LargeBlocksAreKeptAndHandedOutAgain) {
    keep_limit_for_test keep(64 * MiB);
    EXPECT_EQ(segred::host_temporary_keep_bytes(), 64 * MiB);
    EXPECT_EQ(segred::host_temporaries_kept_bytes(), 0u);
    unsigned char* first = nullptr;
    {
        hd::big_array<unsigned char> a = bytes_array(9 * MiB);  // a block of 10 MiB: whole 2 MiB pages
        first = a.get();
    }
    EXPECT_EQ(segred::host_temporaries_kept_bytes(), 10 * MiB);
    {
        hd::big_array<unsigned char> small = bytes_array(MiB);  // from malloc: the kept block stays
        EXPECT_NE(small.get(), first);
        EXPECT_EQ(segred::host_temporaries_kept_bytes(), 10 * MiB);
        hd::big_array<unsigned char> larger = bytes_array(11 * MiB);  // past the kept block: a fresh one
        EXPECT_NE(larger.get(), first);
        EXPECT_EQ(segred::host_temporaries_kept_bytes(), 10 * MiB);
        hd::big_array<unsigned char> again = bytes_array(9 * MiB + 5);
        EXPECT_EQ(again.get(), first);
        EXPECT_EQ(segred::host_temporaries_kept_bytes(), 0u);
    }
    // Back: the 10 MiB block and the 12 MiB one (the 1 MiB one to malloc).
    EXPECT_EQ(segred::host_temporaries_kept_bytes(), 22 * MiB);
    {
        // Both kept blocks may serve 8 MiB (neither is more than twice it):
        // the smaller goes first.
        hd::big_array<unsigned char> a = bytes_array(5 * MiB + 1);  // under 8 MiB: malloc
        hd::big_array<unsigned char> b = bytes_array(8 * MiB);
        EXPECT_EQ(b.get(), first);
        hd::big_array<unsigned char> c = bytes_array(8 * MiB);
        EXPECT_NE(c.get(), nullptr);
        EXPECT_EQ(segred::host_temporaries_kept_bytes(), 0u);
    }
    EXPECT_EQ(segred::release_host_temporaries(), 22 * MiB);
    EXPECT_EQ(segred::host_temporaries_kept_bytes(), 0u);
    { hd::big_array<unsigned char> a = bytes_array(20 * MiB); }
    {
        hd::big_array<unsigned char> b = bytes_array(8 * MiB);  // 20 MiB is more than twice 8: a fresh block
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.get()) % hd::huge_page_bytes, 0u);
        EXPECT_EQ(segred::host_temporaries_kept_bytes(), 20 * MiB);
    }
    EXPECT_EQ(segred::host_temporaries_kept_bytes(), 28 * MiB);
}

TEST(BigBuffer, KeptBytesStayWithinTheLimitOldestFreedFirst) {
    keep_limit_for_test keep(24 * MiB);
    unsigned char* oldest = nullptr;
    unsigned char* newest = nullptr;
    {
        hd::big_array<unsigned char> a = bytes_array(10 * MiB);
        hd::big_array<unsigned char> b = bytes_array(10 * MiB);
        hd::big_array<unsigned char> c = bytes_array(10 * MiB);
        oldest = c.get();  // destroyed first (c, b, a): kept longest
        newest = a.get();
        EXPECT_EQ(segred::host_temporaries_kept_bytes(), 0u);
    }
    // c and b kept (20 MiB); a's return would pass 24 MiB, so c went first.
    EXPECT_EQ(segred::host_temporaries_kept_bytes(), 20 * MiB);
    {
        hd::big_array<unsigned char> x = bytes_array(10 * MiB);
        hd::big_array<unsigned char> y = bytes_array(10 * MiB);
        EXPECT_NE(x.get(), oldest);
        EXPECT_NE(y.get(), oldest);
        EXPECT_TRUE(x.get() == newest || y.get() == newest);
        hd::big_array<unsigned char> huge = bytes_array(30 * MiB);  // larger than the limit: never kept
    }
    EXPECT_EQ(segred::host_temporaries_kept_bytes(), 20 * MiB);
    EXPECT_EQ(segred::set_host_temporary_keep_bytes(12 * MiB), 24 * MiB);  // frees down to the new limit
    EXPECT_EQ(segred::host_temporaries_kept_bytes(), 10 * MiB);
    EXPECT_EQ(segred::set_host_temporary_keep_bytes(0), 12 * MiB);
    EXPECT_EQ(segred::host_temporaries_kept_bytes(), 0u);
    { hd::big_array<unsigned char> a = bytes_array(10 * MiB); }
    EXPECT_EQ(segred::host_temporaries_kept_bytes(), 0u) << "a limit of 0 keeps nothing";
}

// Threads taking and returning blocks at once: no block is handed to two
// holders (each writes its own pattern over its whole block and finds it
// intact), and the kept bytes end within the limit.
TEST(BigBuffer, KeptBlocksAreHandedToOneHolderAtATime) {
    keep_limit_for_test keep(96 * MiB);
    constexpr int threads = 4, rounds = 12;
    std::vector<int> bad(threads, 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([t, &bad] {
            for (int r = 0; r < rounds; ++r) {
                const i64 n = (i64(8) << 20) / 8 + (t * rounds + r) % 5 * 100000;  // 8 to 11 MiB of int64
                hd::big_array<std::int64_t> a = hd::make_big_array<std::int64_t>(n);
                const std::int64_t mark = (std::int64_t(t) << 40) + (std::int64_t(r) << 32);
                for (i64 i = 0; i < n; ++i) a[static_cast<std::size_t>(i)] = mark + i;
                std::this_thread::yield();
                for (i64 i = 0; i < n; ++i)
                    if (a[static_cast<std::size_t>(i)] != mark + i) {
                        ++bad[static_cast<std::size_t>(t)];
                        break;
                    }
            }
        });
    for (std::thread& th : pool) th.join();
    for (int t = 0; t < threads; ++t) EXPECT_EQ(bad[static_cast<std::size_t>(t)], 0) << "thread " << t;
    EXPECT_LE(segred::host_temporaries_kept_bytes(), 96 * MiB);
    EXPECT_GT(segred::host_temporaries_kept_bytes(), 0u);
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
    // Kept blocks of every size these calls take (8 to 48 MiB), filled
    // with 0xff bytes (NaN floats, -1 integers): each temporary must be
    // written before it is read.
    keep_limit_for_test keep(512 * MiB);
    {
        std::vector<hd::big_array<unsigned char>> dirty;
        for (std::size_t mib = 8; mib <= 48; mib += 2) {
            dirty.push_back(bytes_array(mib * MiB));
            std::memset(dirty.back().get(), 0xff, mib * MiB);
        }
        for (std::size_t k = dirty.size(); k-- > 0;) dirty[k].reset();  // largest first: the smallest stay kept
    }
    ASSERT_GT(segred::host_temporaries_kept_bytes(), 256 * MiB);
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
