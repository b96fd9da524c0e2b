// The partitioned scatter (host/detail/scatter.hpp: unsorted ids into more
// states than the cache holds) through the public API: rows partitioned by
// id range a block of rows at a time, each block into its own region, then
// each partition folded from every block's group in block order. One column
// (the shape one thread takes too, from 32 partitions on), at 1 and 2
// threads, against a sequential loop; ids spread over every partition, or
// crowded into the first and last ones (most blocks' groups empty), or
// skipped for whole blocks.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

using i64 = std::int64_t;

enum class spread { every_partition, ends_only, skipped_blocks };

// n rows over M ids, M past 31 partitions of 2^17 fp32 sums (fp64 sums
// and (value, row) states take 2^16 and 2^15 ids a partition, so more of
// them), ids 0 and M-1 present, 0.1% of ids out of range and dropped. The
// blocks are 1 MiB of entries (131072 fp32 rows, and fp32 argmax, whose
// entries pack the row within its block beside the id; 65536 for fp64;
// 43690 for fp64 argmax, with a 64-bit row), so n = 300000 makes 3 to 7
// blocks, the last one short.
// ends_only: ids only in the first and last 1000 ids of [0, M), so every
// other partition is empty in every block, and values in quarters, so
// argmax picks the first of several tied rows, from any block;
// skipped_blocks: rows 131072 to 262143 all out of range (a block, or
// more, that writes nothing). A partitioned sum adds each segment's rows in
// row order from +0, so it has the bits of the sequential loop in T.
template <class T>
void check_partitioned_one_column(segref::rng& g, spread how) {
    const i64 n = 300000, M = 31 * (i64(1) << 17) + 12345;
    std::vector<std::int32_t> ids = segref::random_ids<std::int32_t>(g, n, 0, M - 1);
    if (how == spread::ends_only)
        for (auto& id : ids) id = id % 2000 < 1000 ? id % 1000 : static_cast<std::int32_t>(M - 1 - id % 1000);
    ids[0] = 0;
    ids[17] = static_cast<std::int32_t>(M - 1);
    ids[static_cast<std::size_t>(n - 1)] = static_cast<std::int32_t>(M - 1);
    for (i64 i = 1; i < n - 1; ++i)
        if (segref::coin(g, 0.001)) ids[static_cast<std::size_t>(i)] = segref::coin(g, 0.5) ? -3 : static_cast<std::int32_t>(M + 5);
    if (how == spread::skipped_blocks)
        for (i64 i = 131072; i < 262144; ++i) ids[static_cast<std::size_t>(i)] = i % 2 ? -1 : static_cast<std::int32_t>(M);
    std::vector<T> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = static_cast<T>(segref::uniform_real(g, -2, 2));
    if (how == spread::ends_only)  // about 150 rows an id: values in quarters, so each id's maximum is tied
        for (auto& x : v) x = static_cast<T>(std::floor(static_cast<double>(x) * 4) / 4);
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

TEST(PartitionedScatter, OneColumnMatchesTheSequentialLoop) {
    SEGRED_SEEDED_RNG(g);
    for (spread how : {spread::every_partition, spread::ends_only, spread::skipped_blocks}) {
        SCOPED_TRACE("spread " + std::to_string(static_cast<int>(how)));
        check_partitioned_one_column<float>(g, how);
        check_partitioned_one_column<double>(g, how);
    }
}

} // namespace
