// Unsorted ids into few segments: the blocked scatter's fold, bit for bit,
// as SEMANTICS.md promises it. Blocks of max(65536, 8M) rows; a one-column
// sum or mean into at most 1024 segments folds a block's rows into 4
// interleaved copies of its states (row lo + 4j + c into copy c), combined
// as (0+2)+(1+3); blocks combined in order. (Blocks of long runs fold them
// in registers: the same adds.) Past 1024 segments a block folds its rows
// in row order, except that a block of long runs (more than 15 in 16 of
// its first 1024 rows repeat the id before them) folds each run of one id
// into 4 partials by row (row lo + 4j + c into partial c, the first from
// the segment's state so far), stored as (0+2)+(1+3) when the run ends.
// Skewed ids (a third of the rows on one segment), a block in runs of 97
// rows with every 101st row dropped (inside runs, which it does not end),
// a block in runs of 13 rows (too short: row order), dropped ids, a last
// block whose rows are not a multiple of 4, and M = 1024 against 1025 and
// 4096 (past the copies). Sums with counts and means of float, whose
// states carry their row count, fold alike.
//
// Many segments (fewer than 4 blocks): row order, except that where more
// than half of the first 1024 rows repeat the id before them, each run is
// folded into 4 partials by row (row 4j + c into partial c), as above,
// whatever the number of threads (one owner of all segments or two).
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::i64;
using segtest::same_bits_or_both_nan;

template <class P>
class ScatterCopies : public ::testing::Test {};
TYPED_TEST_SUITE(ScatterCopies, segtest::float_value_pairs, segtest::vi_names);

constexpr i64 block_rows = 65536;  // max(65536, 8M) for every M here

// How the promise cuts and folds the rows: blocks of block_rows rows,
// folded into 4 copies, or folded run by run where more than num / den of
// a block's first 1024 rows repeat the id before them.
struct fold_shape {
    i64 block_rows;
    bool copies;
    i64 num, den;
};

fold_shape few_segments(i64 M) { return {block_rows, M <= 1024, 15, 16}; }
fold_shape many_segments(i64 n) { return {n, false, 1, 2}; }

// The promised sums and row counts of each segment, in T, by the shape
// above; ids outside [0, M) are dropped.
template <class T, class I>
void promised(const std::vector<T>& v, const std::vector<I>& ids, i64 M, const fold_shape& shape,
              std::vector<T>& sum, std::vector<i64>& rows) {
    const i64 n = static_cast<i64>(v.size());
    const bool copies = shape.copies;
    const i64 block_rows = shape.block_rows;
    sum.assign(static_cast<std::size_t>(M), T(0));
    rows.assign(static_cast<std::size_t>(M), 0);
    auto id_at = [&](i64 i) {  // -1 for a dropped row
        const i64 k = static_cast<i64>(ids[static_cast<std::size_t>(i)]);
        return k < 0 || k >= M ? i64(-1) : k;
    };
    for (i64 lo = 0; lo < n; lo += block_rows) {
        const i64 hi = std::min(n, lo + block_rows);
        // Whether the block's first 1024 rows mostly repeat the id before.
        const i64 end = std::min(hi, lo + 1024);
        i64 same = 0;
        for (i64 i = lo + 1; i < end; ++i) same += id_at(i) == id_at(i - 1);
        const bool runs_in_four = !copies && shape.den * same > shape.num * (end - lo);
        std::vector<std::vector<T>> copy(4, std::vector<T>(static_cast<std::size_t>(M), T(0)));
        T part[4] = {};
        i64 open = -1;
        auto close = [&] {
            if (open >= 0) copy[0][static_cast<std::size_t>(open)] = (part[0] + part[2]) + (part[1] + part[3]);
        };
        for (i64 i = lo; i < hi; ++i) {
            const i64 k = id_at(i);
            if (k < 0) continue;
            const T x = v[static_cast<std::size_t>(i)];
            ++rows[static_cast<std::size_t>(k)];
            if (runs_in_four) {
                if (k != open) {
                    close();
                    open = k;
                    part[0] = copy[0][static_cast<std::size_t>(k)];
                    part[1] = part[2] = part[3] = T(0);
                }
                part[(i - lo) % 4] += x;
                continue;
            }
            copy[copies ? static_cast<std::size_t>((i - lo) % 4) : 0][static_cast<std::size_t>(k)] += x;
        }
        close();
        for (i64 s = 0; s < M; ++s) {
            const auto j = static_cast<std::size_t>(s);
            sum[j] += (copy[0][j] + copy[2][j]) + (copy[1][j] + copy[3][j]);
        }
    }
}

// segred's sum, mean and sum with counts of v by ids against the promise.
template <class T, class I>
void expect_promised(const std::vector<T>& v, const std::vector<I>& ids, i64 M, const fold_shape& shape) {
    const i64 n = static_cast<i64>(v.size());
    std::vector<T> want_sum;
    std::vector<i64> rows;
    promised(v, ids, M, shape, want_sum, rows);
    const auto opts = segred::options{}.bounds(segred::bounds_policy::drop);
    for (int threads : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << "threads " << threads);
        std::vector<T> got_sum(static_cast<std::size_t>(M), T(99)), got_mean(static_cast<std::size_t>(M), T(99));
        std::vector<T> got_counted(static_cast<std::size_t>(M), T(99));
        std::vector<i64> got_rows(static_cast<std::size_t>(M), -5);
        const auto pol = segred::host.threads(threads);
        segred::segment_reduce(pol, segred::rows(v.data(), n), segred::ids(ids.data(), M),
                               segred::rows(got_sum.data(), M), segred::sum{}, opts);
        segred::segment_reduce(pol, segred::rows(v.data(), n), segred::ids(ids.data(), M),
                               segred::rows(got_mean.data(), M), segred::mean{}, opts);
        // A sum with counts (for float, its state holds the count) folds alike.
        segred::options with_counts = opts;
        with_counts.counts(got_rows.data());
        segred::segment_reduce(pol, segred::rows(v.data(), n), segred::ids(ids.data(), M),
                               segred::rows(got_counted.data(), M), segred::sum{}, with_counts);
        EXPECT_EQ(got_rows, rows);
        int reported = 0;
        for (i64 s = 0; s < M && reported < 5; ++s) {
            const auto k = static_cast<std::size_t>(s);
            const T want_mean = rows[k] == 0 ? T(0) : want_sum[k] / static_cast<T>(rows[k]);
            if (!same_bits_or_both_nan(got_sum[k], want_sum[k]) || !same_bits_or_both_nan(got_mean[k], want_mean) ||
                !same_bits_or_both_nan(got_counted[k], want_sum[k])) {
                ADD_FAILURE() << "segment " << s << " of " << rows[k] << " rows: sum " << got_sum[k] << ", want "
                              << want_sum[k] << "; mean " << got_mean[k] << ", want " << want_mean
                              << "; sum with counts " << got_counted[k];
                ++reported;
            }
        }
    }
}

// n values in [-4, 4): sums of them round differently in another order.
template <class T>
std::vector<T> random_values(segref::rng& g, i64 n) {
    std::vector<T> v(static_cast<std::size_t>(n));
    for (T& x : v) x = static_cast<T>(segref::uniform_real(g, -4.0, 4.0));
    return v;
}

template <class T, class I>
void check(segref::rng& g, i64 M) {
    SCOPED_TRACE(::testing::Message() << "M " << M);
    const i64 n = 4 * block_rows + 1003;  // 5 blocks, the last of 1003 rows
    std::vector<I> ids(static_cast<std::size_t>(n));
    for (i64 i = 0; i < n; ++i) {
        const i64 r = segref::uniform_int(g, 0, 299);
        // A third on segment M - 1, some past the last segment (dropped).
        ids[static_cast<std::size_t>(i)] = static_cast<I>(r < 100 ? M - 1 : r < 103 ? M : segref::uniform_int(g, 0, M - 1));
    }
    // Block 1 in runs of 97 rows of one id, every 101st row dropped: long
    // runs, folded in registers (as every block with one segment is).
    // Block 2 in runs of 13: too short for that.
    auto runs = [&](i64 block, i64 len) {
        for (i64 i = block * block_rows; i < (block + 1) * block_rows; i += len)
            for (i64 j = 0; j < len && i + j < (block + 1) * block_rows; ++j)
                ids[static_cast<std::size_t>(i + j)] = ids[static_cast<std::size_t>(i)];
    };
    runs(1, 97);
    runs(2, 13);
    for (i64 i = block_rows; i < 2 * block_rows; i += 101) ids[static_cast<std::size_t>(i)] = static_cast<I>(M);
    expect_promised(random_values<T>(g, n), ids, M, few_segments(M));
}

TYPED_TEST(ScatterCopies, SameBitsAsPromised) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (i64 M : {i64(1), i64(3), i64(16), i64(1024), i64(1025), i64(4096)}) check<T, I>(g, M);
}

// Many segments: runs of 1 to max_run rows of one id (the id uniform, or
// M - 1 for a third of the runs), every 101st row dropped (inside runs,
// which it does not end), a stretch of 20011 rows of id 0 and a stretch
// dropped. Runs of up to 8 rows repeat their id on most rows: folded run
// by run. Runs of up to 2 do not: row order.
template <class T, class I>
void check_many(segref::rng& g, i64 M, i64 max_run) {
    SCOPED_TRACE(::testing::Message() << "M " << M << ", runs of up to " << max_run);
    const i64 n = 300001;
    std::vector<I> ids(static_cast<std::size_t>(n));
    for (i64 i = 0; i < n;) {
        const i64 len = segref::uniform_int(g, 1, max_run);
        const i64 id = segref::uniform_int(g, 0, 2) == 0 ? M - 1 : segref::uniform_int(g, 0, M - 1);
        for (i64 j = 0; j < len && i < n; ++j, ++i) ids[static_cast<std::size_t>(i)] = static_cast<I>(id);
    }
    for (i64 i = 0; i < n; i += 101) ids[static_cast<std::size_t>(i)] = static_cast<I>(M);
    for (i64 i = 150000; i < 170011; ++i) ids[static_cast<std::size_t>(i)] = 0;
    for (i64 i = 200000; i < 200500; ++i) ids[static_cast<std::size_t>(i)] = static_cast<I>(-1 - (i % 2) * M);
    expect_promised(random_values<T>(g, n), ids, M, many_segments(n));
}

TYPED_TEST(ScatterCopies, ManySegmentsSameBitsAsPromised) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    // 100000 segments: states in cache (owned ranges); 2^20 fp32 or fp64
    // sums exceed the 2 MB past which ids that do not repeat are
    // partitioned (where several threads run).
    for (i64 M : {i64(100000), i64(1) << 20})
        for (i64 max_run : {i64(8), i64(2)}) check_many<T, I>(g, M, max_run);
}

} // namespace
