// The partition pass's line-at-a-time streams (host/detail/line_streams.hpp):
// several writers, each with many streams over adjacent ranges whose ends
// fall anywhere in a cache line, must leave every entry where plain stores
// would have put it, and nothing outside the ranges. The lines at the ends
// of a range are shared with a neighbouring range (another stream of the
// same writer, or the next writer's range of the same stream), so a line
// streamed whole where it should not be shows up as a neighbour's entry
// overwritten. Then the partitioned scatter through the public API with 32
// partitions and more, where the pass takes these streams: one column, at 1
// and 2 threads, against a sequential loop.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

namespace hd = segred::host_detail;
using i64 = std::int64_t;

struct narrow {  // 8 bytes: the partitioned scatter's fp32 entry
    std::uint32_t local;
    float value;
};
struct wide {  // 16 bytes: with the row, or fp64
    i64 row;
    std::uint32_t local;
    float value;
};

template <class E>
E make_entry(i64 tag);
template <>
narrow make_entry<narrow>(i64 tag) {
    return narrow{static_cast<std::uint32_t>(tag), static_cast<float>(tag % 1000)};
}
template <>
wide make_entry<wide>(i64 tag) {
    return wide{tag, static_cast<std::uint32_t>(tag * 7), static_cast<float>(tag % 999)};
}
bool same(const narrow& a, const narrow& b) { return a.local == b.local && a.value == b.value; }
bool same(const wide& a, const wide& b) { return a.row == b.row && a.local == b.local && a.value == b.value; }

// writers x streams ranges laid out stream-major, writer-minor (as the
// partition pass lays out block b's rows of partition q), `lead` entries
// into an array with a sentinel on each side; each writer pushes its
// streams' entries in a random interleaving.
template <class E>
void check_layout(std::mt19937_64& g, i64 writers, i64 streams, i64 max_count, i64 lead) {
    std::uniform_int_distribution<i64> count_of(0, max_count);
    std::vector<i64> count(static_cast<std::size_t>(writers * streams));  // [w * streams + q]
    for (i64& c : count) c = count_of(g) % 5 == 0 ? count_of(g) % 3 : count_of(g);  // some 0, 1, 2
    std::vector<i64> start(count.size());
    i64 run = lead;
    for (i64 q = 0; q < streams; ++q)
        for (i64 w = 0; w < writers; ++w) {
            start[static_cast<std::size_t>(w * streams + q)] = run;
            run += count[static_cast<std::size_t>(w * streams + q)];
        }
    const i64 total = run + 9;
    const E sentinel = make_entry<E>(-1);
    std::vector<E> out(static_cast<std::size_t>(total), sentinel);
    std::vector<E> expect = out;
    // entry j of writer w's stream q carries a tag unique to (w, q, j)
    auto tag = [&](i64 w, i64 q, i64 j) { return (w * streams + q) * (max_count + 1) + j; };
    for (i64 w = 0; w < writers; ++w) {
        if (!hd::line_streams<E>::aligned(out.data())) GTEST_SKIP() << "no line streams on this target";
        hd::line_streams<E> ls(out.data(), start.data() + w * streams, streams);
        std::vector<i64> order;
        for (i64 q = 0; q < streams; ++q)
            for (i64 j = 0; j < count[static_cast<std::size_t>(w * streams + q)]; ++j) order.push_back(q);
        std::shuffle(order.begin(), order.end(), g);
        std::vector<i64> next(static_cast<std::size_t>(streams), 0);
        for (i64 q : order) {
            const i64 j = next[static_cast<std::size_t>(q)]++;
            ls.push(q, make_entry<E>(tag(w, q, j)));
            expect[static_cast<std::size_t>(start[static_cast<std::size_t>(w * streams + q)] + j)] =
                make_entry<E>(tag(w, q, j));
        }
        ls.finish();
    }
    for (i64 i = 0; i < total; ++i)
        ASSERT_TRUE(same(out[static_cast<std::size_t>(i)], expect[static_cast<std::size_t>(i)]))
            << "entry " << i << " of " << total << " (writers " << writers << ", streams " << streams
            << ", lead " << lead << ")";
}

template <class E>
class LineStreams : public ::testing::Test {};
using entry_types = ::testing::Types<narrow, wide>;
TYPED_TEST_SUITE(LineStreams, entry_types);

TYPED_TEST(LineStreams, EveryEntryWherePlainStoresPutItAndNothingElse) {
    std::mt19937_64 g(20261127);
    // lead: the first range's offset into a line (8-byte entries: 0 to 7
    // of a line; 16-byte: 0 to 3, then past it).
    for (i64 lead = 0; lead < 8; ++lead) {
        check_layout<TypeParam>(g, 1, 1, 40, lead);
        check_layout<TypeParam>(g, 3, 1, 40, lead);
        check_layout<TypeParam>(g, 2, 5, 20, lead);
        check_layout<TypeParam>(g, 4, 33, 70, lead);
        check_layout<TypeParam>(g, 2, 128, 300, lead);
    }
    check_layout<TypeParam>(g, 1, 3, 0, 0);  // nothing pushed at all
}

TEST(LineStreams, FitWhereEntriesTileALine) {
#if defined(__SSE2__) || defined(_M_X64)
    EXPECT_TRUE(hd::line_streams<narrow>::fits);
    EXPECT_TRUE(hd::line_streams<wide>::fits);
#endif
    struct odd {
        i64 row;
        std::uint32_t local;
        double value;
    };  // 24 bytes: lines would split entries
    EXPECT_FALSE(hd::line_streams<odd>::fits);
}

// n rows over M ids, M past 31 partitions of 2^17 fp32 sums (fp64 sums
// and (value, row) states take 2^16 and 2^15 ids a partition, so more of
// them), ids 0 and M-1 present, 0.1% of ids out of range and dropped. A
// partitioned sum adds each segment's rows in row order from +0, so it has
// the bits of the sequential loop in T.
template <class T>
void check_partitioned_one_column(segref::rng& g) {
    const i64 n = 300000, M = 31 * (i64(1) << 17) + 12345;
    std::vector<std::int32_t> ids = segref::random_ids<std::int32_t>(g, n, 0, M - 1);
    ids[0] = 0;
    ids[17] = static_cast<std::int32_t>(M - 1);
    ids[static_cast<std::size_t>(n - 1)] = static_cast<std::int32_t>(M - 1);
    for (i64 i = 1; i < n - 1; ++i)
        if (segref::coin(g, 0.001)) ids[static_cast<std::size_t>(i)] = segref::coin(g, 0.5) ? -3 : static_cast<std::int32_t>(M + 5);
    std::vector<T> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = static_cast<T>(segref::uniform_real(g, -2, 2));
    std::vector<T> sum(static_cast<std::size_t>(M), T(0));
    std::vector<double> exact(static_cast<std::size_t>(M), 0.0);
    std::vector<i64> rows(static_cast<std::size_t>(M), 0), first(static_cast<std::size_t>(M), -1);
    for (i64 i = 0; i < n; ++i) {
        const i64 id = ids[static_cast<std::size_t>(i)];
        if (id < 0 || id >= M) continue;
        const auto k = static_cast<std::size_t>(id);
        const T x = v[static_cast<std::size_t>(i)];
        sum[k] += x;
        exact[k] += static_cast<double>(x);
        ++rows[k];
        if (first[k] < 0 || x > v[static_cast<std::size_t>(first[k])]) first[k] = i;
    }
    segred::options drop;
    drop.bounds(segred::bounds_policy::drop);
    for (int threads : {1, 2}) {
        SCOPED_TRACE(std::to_string(threads) + " threads");
        const auto pol = segred::host.threads(threads);
        const auto by_ids = segred::ids(ids.data(), M);
        std::vector<T> out_sum(static_cast<std::size_t>(M), T(-1)), out_mean(out_sum);
        std::vector<std::int64_t> out_arg(static_cast<std::size_t>(M), -5);
        segred::segment_reduce(pol, segred::rows(v.data(), n), by_ids, segred::rows(out_sum.data(), M), segred::sum{},
                               drop);
        segred::segment_reduce(pol, segred::rows(v.data(), n), by_ids, segred::rows(out_mean.data(), M),
                               segred::mean{}, drop);
        segred::segment_reduce(pol, segred::rows(v.data(), n), by_ids, segred::rows(out_arg.data(), M),
                               segred::argmax{}, drop);
        ASSERT_TRUE(segtest::same_bits(out_sum, sum, "sum"));
        for (i64 s = 0; s < M; ++s) {
            const auto k = static_cast<std::size_t>(s);
            const double tol = 1e-5 * (1.0 + static_cast<double>(rows[k]));
            const double mean = rows[k] > 0 ? exact[k] / static_cast<double>(rows[k]) : 0.0;
            ASSERT_NEAR(out_mean[k], mean, tol) << "mean of segment " << s;
            ASSERT_EQ(out_arg[k], first[k]) << "argmax of segment " << s;
        }
    }
}

TEST(LineStreams, PartitionedScatterOfOneColumnMatchesTheSequentialLoop) {
    SEGRED_SEEDED_RNG(g);
    check_partitioned_one_column<float>(g);
    check_partitioned_one_column<double>(g);
}

} // namespace
