// segment_reduce / accumarray on the GPU over unsorted ids and N-D
// subscripts: every reducer against the independent double reference, on the
// default (atomic where it applies) path and on the deterministic path.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/large_shapes.hpp"
#include "common/reduce_harness.hpp"
#include "common/test_util.hpp"
#include "cuda/cuda_test_util.cuh"

namespace {

using segtest::form;
using segtest::i64;

using cuda_pairs = ::testing::Types<segtest::vi<float, std::int64_t>, segtest::vi<double, std::int32_t>,
                                    segtest::vi<std::int32_t, std::int32_t>, segtest::vi<std::int64_t, std::int64_t>>;

template <class P>
class CudaUnsortedReduce : public segtest::CudaTest {};
TYPED_TEST_SUITE(CudaUnsortedReduce, cuda_pairs, segtest::vi_names);

constexpr int kTrials = 8;

TYPED_TEST(CudaUnsortedReduce, Ids) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::ids, typename TypeParam::value, typename TypeParam::index>(
        segred::cuda::par, g, kTrials, segtest::device_memory{});
}

TYPED_TEST(CudaUnsortedReduce, Subscripts) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::subscripts, typename TypeParam::value, typename TypeParam::index>(
        segred::cuda::par, g, kTrials, segtest::device_memory{});
}

// n ids over M segments, draw() giving each row's in turn.
template <class I, class Draw>
segtest::seg_input<I> drawn_ids(i64 n, i64 M, Draw draw) {
    segtest::seg_input<I> s;
    s.kind = form::ids;
    s.n = n;
    s.M = M;
    s.idx.reserve(static_cast<std::size_t>(n));
    for (i64 i = 0; i < n; ++i) s.idx.push_back(static_cast<I>(draw()));
    return s;
}

// 1% of the rows out of range, half below and half above.
i64 id_out_of_range(segref::rng& g, i64 M) { return segref::coin(g, 0.5) ? -1 : M; }

// Ids drawn as floor(M * u^6) for uniform u: about a fifth of the rows on id
// 0 and a long tail (Zipf-like skew), 1% out of range when corrupt; downward:
// M - 1 minus that, the hot ids at the top (past those a split holds in
// shared memory).
template <class I>
segtest::seg_input<I> skewed_ids(segref::rng& g, i64 n, i64 M, bool corrupt, bool downward = false) {
    return drawn_ids<I>(n, M, [&] {
        const double u = segref::uniform_real(g, 0, 1);
        i64 id = std::min<i64>(M - 1, static_cast<i64>(static_cast<double>(M) * std::pow(u, 6)));
        if (downward) id = M - 1 - id;
        return corrupt && segref::coin(g, 0.01) ? id_out_of_range(g, M) : id;
    });
}

// Every row on id M / 3, but 1% out of range (drop).
template <class I>
segtest::seg_input<I> one_id(segref::rng& g, i64 n, i64 M) {
    return drawn_ids<I>(n, M, [&] { return segref::coin(g, 0.01) ? id_out_of_range(g, M) : M / 3; });
}

// Eight ids on 10% of the rows each (three or four lanes of a round: hot
// for float sums held in shared memory from about 10000 ids on, and past
// the held ones of a split), spread over [0, M); the other rows uniform, 1%
// out of range.
template <class I>
segtest::seg_input<I> crowded_ids(segref::rng& g, i64 n, i64 M) {
    return drawn_ids<I>(n, M, [&] {
        i64 id = segref::uniform_int(g, 0, M - 1);
        if (segref::coin(g, 0.8)) id = (segref::uniform_int(g, 0, 7) * M) / 8;
        return segref::coin(g, 0.01) ? id_out_of_range(g, M) : id;
    });
}

// Stretches of 5000 rows in turn in runs of 1 to 20 equal ids and uniform
// (so some tiles of 8192 rows mostly in runs, some mostly not, some between),
// 1% out of range.
template <class I>
segtest::seg_input<I> runs_then_uniform(segref::rng& g, i64 n, i64 M) {
    i64 row = 0, id = 0, left = 0;
    return drawn_ids<I>(n, M, [&] {
        const bool runs = (row++ / 5000) % 2 == 0;
        if (!runs || left == 0) {
            id = segref::uniform_int(g, 0, M - 1);
            left = segref::uniform_int(g, 1, 20);
        }
        --left;
        return segref::coin(g, 0.01) ? id_out_of_range(g, M) : id;
    });
}

// Ids rising with the row, each within 1000 of M - n + row (sorted ids,
// locally shuffled, ending at M - 1), 1% out of range.
template <class I>
segtest::seg_input<I> rising_window(segref::rng& g, i64 n, i64 M) {
    i64 row = 0;
    return drawn_ids<I>(n, M, [&] {
        const i64 id = std::min(M - 1, std::max<i64>(0, M - n + row++ + segref::uniform_int(g, -1000, 1000)));
        return segref::coin(g, 0.01) ? id_out_of_range(g, M) : id;
    });
}

constexpr int all_shapes = 6;  // shapes 0 to 5; 6 and 7 on request

// The ids of shape `shape` (atomic_path_cases, below) for n rows into M
// segments, and its name.
template <class I>
segtest::seg_input<I> shaped_ids(segref::rng& g, int shape, i64 n, i64 M) {
    return shape == 0   ? segtest::large_unsorted<I>(g, n, M, true)
           : shape == 1 ? segtest::large_repeating<I>(g, n, M, true)
           : shape == 4 ? one_id<I>(g, n, M)
           : shape == 5 ? crowded_ids<I>(g, n, M)
           : shape == 6 ? runs_then_uniform<I>(g, n, M)
           : shape == 7 ? rising_window<I>(g, n, M)
                        : skewed_ids<I>(g, n, M, true, shape == 3);
}

inline std::string shape_name(int shape) {
    return shape == 0   ? "uniform ids, 30% on one"
           : shape == 1 ? "runs of equal ids"
           : shape == 2 ? "skewed ids"
           : shape == 3 ? "skewed ids, hot at M - 1"
           : shape == 4 ? "every id M / 3"
           : shape == 5 ? "eight ids on 10% each"
           : shape == 6 ? "runs then uniform, by 5000 rows"
                        : "rising window to M - 1";
}

// The atomic sum, mean and count kernels over widths 1, 4, 8, 12 and 64, odd
// and 6 (a multiple of two only), with n rows and M segments for width 1 and
// wide_n, wide_M for wider rows; values and out aligned and one element into
// their allocations. Shapes: (0) ids uniform with 30% on one hot id, (1)
// runs of 1 to 20 equal ids, (2, 3) skewed ids (hot at 0, and hot at M - 1),
// (4) every id the same (M / 3: a warp's hot id in registers, held in shared
// memory or not), (5) eight crowded ids, (6) runs_then_uniform, (7)
// rising_window; each with 1% out of range under drop. Sum straight into
// the out, sum accumulated with counts (into separate sums), mean, and count.
// wide_n = 0: width 1 only. shapes: the shapes to run (all_shapes: 0 to 5);
// aligned_only: no unaligned values (for M so large that each check takes
// seconds of host work).
template <class T, class I>
void atomic_path_cases(i64 n, i64 M, i64 wide_n, i64 wide_M, std::vector<int> shapes = {},
                       bool aligned_only = false) {
    using segref::op;
    SEGRED_SEEDED_RNG(g);
    const segtest::device_memory mem;
    for (i64 width : {1, 4, 8, 12, 64, 33, 6})
        for (bool shifted : {false, true})
            for (int shape = 0; shape < 8; ++shape) {
                if (width != 1 && wide_n == 0) continue;
                const bool asked = shapes.empty() ? shape < all_shapes
                                                  : std::find(shapes.begin(), shapes.end(), shape) != shapes.end();
                if (!asked || (aligned_only && shifted)) continue;
                const i64 rows = width == 1 ? n : wide_n, segs = width == 1 ? M : wide_M;
                SCOPED_TRACE("width " + std::to_string(width) + ", M = " + std::to_string(segs) +
                             (shifted ? ", unaligned" : "") + ", " + shape_name(shape));
                const segtest::seg_input<I> s = shaped_ids<I>(g, shape, rows, segs);
                const std::vector<T> v = segref::random_values<T>(g, rows * width, segref::value_kind::general);
                segtest::trial_config c;
                c.width = c.out_width = width;
                c.shifted = shifted;
                c.bounds = segred::bounds_policy::drop;
                segtest::check_reduce<form::ids, T, I, T>(segred::cuda::par, segred::sum{}, op::sum, 0, c, s, v, g, mem);
                c.accumulate = c.counts = true;
                segtest::check_reduce<form::ids, T, I, T>(segred::cuda::par, segred::sum{}, op::sum, 0, c, s, v, g, mem);
                c.accumulate = false;
                segtest::check_reduce<form::ids, T, I, T>(segred::cuda::par, segred::mean{}, op::mean, 0, c, s, v, g,
                                                          mem);
                c.out_width = 1;
                segtest::check_reduce<form::ids, T, I, std::int64_t>(segred::cuda::par, segred::count{}, op::count, 0,
                                                                     c, s, v, g, mem);
                if (::testing::Test::HasFailure()) return;
            }
}

// The global atomic kernels: sums and counts beyond the shared memory any
// block can opt into (227 KiB on sm_90; 300000 segments of one column, more
// than twice what fits, and 20000 of wider rows). One column: each warp
// combines the lanes of a round that hold the same id and carries two groups
// into the next round. Wider rows: four float columns a vector atomic where
// the width is a multiple of four and both the values and the sums are
// 16-byte aligned, else a column at a time.
TYPED_TEST(CudaUnsortedReduce, GlobalAtomics) {
    atomic_path_cases<typename TypeParam::value, typename TypeParam::index>(100000, 300000, 3000, 20000);
}

// One column whose accumulators fit in shared memory for at least half of
// the ids but not all: each block holds a window of ids, starting at its
// own place and wrapping past M - 1 to 0, and adds the others in global
// memory row by row. 40000 segments split 8-byte sums (28928 held), and
// 100000 and 65536 split 4-byte sums or counts (57856 held). Sums with
// counts (the accumulated sum with counts, the mean) go in two passes
// there, the sums alone and then the counts alone, each held as far as it
// fits (counts_together_leave_out, counts_alone_hold_more): at 40000, 4-byte
// sums and the counts whole (which together would split at 28928), 8-byte
// sums split and the counts whole; at 65536 and 100000 both split
// (together: none held). 32768
// segments split 4-byte sums with counts at 28928 in one pass (88% held).
// 100000 rows make a grid of 4 blocks, 2^20 rows one of 32: windows that
// wrap and windows that do not, each id held by some blocks and not by
// others. Skewed ids put the
// hot ones at 0 and at M - 1, held or not depending on the block, where
// each warp sums the ids its first rounds repeat in registers.
TYPED_TEST(CudaUnsortedReduce, SplitSharedAccumulators) {
    for (i64 M : {32768, 40000, 100000})
        atomic_path_cases<typename TypeParam::value, typename TypeParam::index>(100000, M, 0, 0);
    atomic_path_cases<typename TypeParam::value, typename TypeParam::index>(i64(1) << 20, 65536, 0, 0);
}

// Block-private accumulators past the 48 KiB a block gets without opting in
// (blocks of 1024 threads): 20000 segments of one column (80 KiB of 4-byte
// sums or counts, 160 KiB of 4-byte sums with counts or of 8-byte sums;
// 8-byte sums with counts, 240 KiB, split at 19285 held ids in one pass).
// Wider rows stay within 48 KiB: 700 segments keep widths 4 to 12 in
// shared memory (11 KiB to 34 KiB of 4-byte sums; 8-byte
// sums of 12 columns, 66 KiB, go global) and send widths 33 and 64 to the
// global kernels.
TYPED_TEST(CudaUnsortedReduce, LargeSharedAccumulators) {
    atomic_path_cases<typename TypeParam::value, typename TypeParam::index>(100000, 20000, 3000, 700);
}

// One column into more segments than the L2 holds (2^24 + 3: 64 MiB of
// 4-byte sums or 32-bit counts, past three quarters of any card's L2 below
// 85 MiB): rows partitioned into buckets of ids by range, each bucket summed
// in shared memory (bucket_scatter.cuh). Buckets of 2^15 ids (4-byte sums,
// or counts alone), 2^14 (8-byte sums, or 4-byte sums with counts) and 2^13
// (8-byte sums with counts), the last one holding 3 ids. 300000 rows make
// three chunks of the summing pass: one id's rows (every id M / 3, and the
// skewed ids' hot one, at M - 1 in the last bucket) span all three, and a
// chunk of uniform ids spans hundreds of buckets. Aligned values and three
// shapes only: each check sums 2^24 segments on the host.
TYPED_TEST(CudaUnsortedReduce, BucketedAccumulators) {
    atomic_path_cases<typename TypeParam::value, typename TypeParam::index>(300000, (i64(1) << 24) + 3, 0, 0,
                                                                            {0, 3, 4}, true);
}

// The same M, with tiles of 8192 rows that the counting pass adds itself
// (one atomic a run: runs of equal ids, or ids within 16384 of each other,
// judged on each warp's first 64 rows) beside tiles it partitions: runs of
// 1 to 20 ids everywhere; stretches of runs and of uniform ids in turn, not
// aligned to the tiles; and rising ids within a window up to M - 1 (one id
// a row, but close together). Every id the same, in BucketedAccumulators,
// is a tile of one run.
TYPED_TEST(CudaUnsortedReduce, BucketedRunTiles) {
    atomic_path_cases<typename TypeParam::value, typename TypeParam::index>(300000, (i64(1) << 24) + 3, 0, 0,
                                                                            {1, 6, 7}, true);
}

// Min, max and their args of one column into more 8-byte keys than the L2
// holds (2^24 + 3 ids, 128 MiB): rows partitioned into buckets of 2^14 ids,
// each bucket's keys kept in shared memory (bucket_extremum.cuh), the last
// bucket holding 3 ids. Values with many ties, and 5% NaN for floats (a NaN
// wins, and among equals the first row); seven shapes of ids with 1% out of
// range under drop, among them tiles the counting pass adds itself (runs,
// one id, a rising window) beside tiles it partitions, and hot buckets
// whose rows the tile pass adds itself (30% on one id; skewed ids, a third
// of the rows in the first bucket) beside buckets it writes out; 300000
// rows make three chunks of the keys' pass, one id's rows spanning all
// three. Eight ids on 10% each are few distinct ids in no runs: the atomic
// kernel adds them, the passes finding nothing to do (CudaDistinctSample
// shows which shapes go which way). A mutant that leaves out the hot
// buckets' rows fails, and one whose atomic kernel does nothing where the
// sample sends the rows to it. Max with an arg out and
// accumulated into out; min with a constant fill. Compare types of 4 bytes
// or less only: others take the sorted path.
TYPED_TEST(CudaUnsortedReduce, BucketedExtremum) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    using segref::op;
    if constexpr (sizeof(T) <= 4) {
        SEGRED_SEEDED_RNG(g);
        const segtest::device_memory mem;
        const i64 n = 300000, M = (i64(1) << 24) + 3;
        for (int shape : {0, 1, 2, 4, 5, 6, 7}) {
            SCOPED_TRACE("M = " + std::to_string(M) + ", " + shape_name(shape));
            const segtest::seg_input<I> s = shaped_ids<I>(g, shape, n, M);
            std::vector<T> v = segref::random_values<T>(g, n, segref::value_kind::ties);
            if constexpr (std::is_floating_point<T>::value)
                for (T& x : v)
                    if (segref::coin(g, 0.05)) x = std::numeric_limits<T>::quiet_NaN();
            segtest::trial_config c;
            c.bounds = segred::bounds_policy::drop;
            c.nan = std::is_floating_point<T>::value;
            c.arg = true;
            segtest::check_reduce<form::ids, T, I, T>(segred::cuda::par, segred::max{}, op::max, 0, c, s, v, g, mem);
            c.arg = false;
            c.accumulate = true;
            segtest::check_reduce<form::ids, T, I, T>(segred::cuda::par, segred::max{}, op::max, 0, c, s, v, g, mem);
            c.accumulate = false;
            c.fill_mode = segref::fill::constant;
            c.fill_value = -2.5;
            segtest::check_reduce<form::ids, T, I, T>(segred::cuda::par, segred::min{}, op::min, 0, c, s, v, g, mem);
            segtest::check_reduce<form::ids, T, I, std::int64_t>(segred::cuda::par, segred::argmax{}, op::argmax, 0,
                                                                 c, s, v, g, mem);
            segtest::check_reduce<form::ids, T, I, std::int64_t>(segred::cuda::par, segred::argmin{}, op::argmin, 0,
                                                                 c, s, v, g, mem);
            if (::testing::Test::HasFailure()) return;
        }
    }
}

class CudaExtremumBits : public segtest::CudaTest {};

// The bits of the winners where a key does not hold them: float max and
// min over -0, +0 and NaNs of four payloads only, against a sequential
// loop, on the bucketed path (2^24 + 3 ids, rows on 200000 of them: 1.5
// rows a segment, more distinct ids than the sample sends to the atomic
// kernel), on the atomic kernel past the L2 (2^24 + 3 ids, rows on 3000 of
// them) and below it (70001 ids). Among equal values the first row wins (-0
// and +0 compare equal, so a segment's first zero gives the sign), and the
// first NaN, with its payload, beats everything; empty segments keep the
// fill's bits.
TEST_F(CudaExtremumBits, ZerosAndNaNPayloads) {
    SEGRED_SEEDED_RNG(g);
    const segtest::device_memory mem;
    const i64 n = 300000;
    const std::uint32_t nans[] = {0x7fc00000u, 0x7fc00001u, 0xffc00002u, 0x7f800003u};
    const std::pair<i64, i64> cases[] = {{(i64(1) << 24) + 3, 200000}, {(i64(1) << 24) + 3, 3000}, {70001, 3000}};
    for (const auto& [M, span] : cases) {
        std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
        std::vector<float> v(ids.size());
        for (std::size_t i = 0; i < ids.size(); ++i) {
            ids[i] = static_cast<std::int32_t>(segref::uniform_int(g, M / 2, M / 2 + span - 1));
            const std::uint32_t bits = segref::coin(g, 0.02) ? nans[segref::uniform_int(g, 0, 3)]
                                       : segref::coin(g, 0.5) ? 0x80000000u : 0u;
            std::memcpy(&v[i], &bits, sizeof bits);
        }
        const auto d_ids = mem.to_device(ids);
        const auto d_v = mem.to_device(v);
        for (bool is_max : {true, false}) {
            SCOPED_TRACE(std::string(is_max ? "max" : "min") + ", M = " + std::to_string(M) + ", ids on " +
                         std::to_string(span));
            std::vector<float> want(static_cast<std::size_t>(M), 1.5f);
            std::vector<char> seen(want.size(), 0);
            for (std::size_t i = 0; i < ids.size(); ++i) {
                float& w = want[static_cast<std::size_t>(ids[i])];
                char& s = seen[static_cast<std::size_t>(ids[i])];
                if (!s || (!std::isnan(w) && std::isnan(v[i]))) w = v[i];
                s = 1;
            }
            auto d_out = mem.to_device(std::vector<float>(want.size(), 0.0f));
            const auto vin = segred::rows(static_cast<const float*>(d_v.data()), n);
            const auto by_ids = segred::ids(static_cast<const std::int32_t*>(d_ids.data()), M);
            const auto out = segred::rows(d_out.data(), M);
            const auto opts = segred::options{}.fill(1.5);
            if (is_max) segred::accumarray(segred::cuda::par, vin, by_ids, out, segred::max{}, opts);
            else segred::accumarray(segred::cuda::par, vin, by_ids, out, segred::min{}, opts);
            const std::vector<float> got = mem.to_host(d_out);
            i64 wrong = 0, first = -1;
            for (i64 k = 0; k < M; ++k)
                if (std::memcmp(&got[static_cast<std::size_t>(k)], &want[static_cast<std::size_t>(k)], sizeof(float)) != 0) {
                    if (first < 0) first = k;
                    ++wrong;
                }
            EXPECT_EQ(wrong, 0) << "first at segment " << first;
        }
    }
}

class CudaDistinctSample : public segtest::CudaTest {};

// The sample's counters and verdict for `ids` into M segments (one column,
// ids under drop), asking for fewer distinct ids than few_share of the
// sampled rows, in no runs (more than a quarter of them starting one).
segred::cuda::detail::distinct_tally sample_of(const std::vector<std::int32_t>& ids, i64 M, double few_share) {
    namespace cd = segred::cuda::detail;
    const segtest::device_memory mem;
    const auto d_ids = mem.to_device(ids);
    const auto seg = segred::ids(static_cast<const std::int32_t*>(d_ids.data()), M);
    cd::distinct_tally t{};
    const cd::distinct_sample sample(segred::cuda::par, cd::segment_of_row<decltype(seg)>{seg},
                                     static_cast<i64>(ids.size()), cd::distinct_question{few_share, 4});
    segtest::cuda_ok(cudaStreamSynchronize(segred::cuda::par.stream), "sample");
    segtest::cuda_ok(cudaMemcpy(&t, sample.tally(), sizeof t, cudaMemcpyDeviceToHost), "tally");
    return t;
}

// The sample that sends the bucketed extremum's rows to the atomic kernel
// (distinct_sample.cuh), against the distinct ids and runs counted on the
// host. 100000 rows are all sampled (any card's L2 holds a sector for each):
// ids uniform over windows of 1000 to 2^24 + 3 ids, 1% out of range, the
// verdict checked against the exact share of distinct ids among the rows in
// range wherever it is more than 0.02 from the share asked (0.4 and 0.25);
// the rows counted exactly. Runs: every id equal, runs of 8 of 3000 ids (an
// eighth of the rows start one) and of 20 ids of M, are in runs; runs of 2
// of 3000 ids are not. No row in range: none sampled, not few. 2^21 rows:
// the sample takes runs of 4096 rows spread over them, with the same
// verdicts. The shapes of BucketedExtremum: only eight ids on 10% each
// goes to the atomic kernel.
TEST_F(CudaDistinctSample, FewDistinctIdsInNoRuns) {
    SEGRED_SEEDED_RNG(g);
    const i64 M = (i64(1) << 24) + 3;
    for (i64 span : {i64(1000), i64(20000), i64(35000), i64(42000), i64(50000), i64(80000), M}) {
        std::vector<std::int32_t> ids(100000);
        std::vector<char> seen(static_cast<std::size_t>(M), 0);
        i64 in_range = 0, distinct = 0;
        for (auto& id : ids) {
            id = segref::coin(g, 0.01) ? static_cast<std::int32_t>(id_out_of_range(g, M))
                                       : static_cast<std::int32_t>(segref::uniform_int(g, 0, span - 1));
            if (id < 0 || id >= M) continue;
            ++in_range;
            if (!seen[static_cast<std::size_t>(id)]) ++distinct;
            seen[static_cast<std::size_t>(id)] = 1;
        }
        const double share = double(distinct) / double(in_range);
        for (double asked : {0.4, 0.25}) {
            SCOPED_TRACE("ids on " + std::to_string(span) + ": share " + std::to_string(share) + ", asked " +
                         std::to_string(asked));
            const auto t = sample_of(ids, M, asked);
            EXPECT_EQ(i64(t.sampled), in_range);
            if (std::abs(share - asked) > 0.02) EXPECT_EQ(t.verdict, share < asked ? 1u : 0u);
        }
    }
    auto runs_of = [&](i64 rows, i64 length, i64 span) {
        std::vector<std::int32_t> ids(static_cast<std::size_t>(rows));
        std::int32_t id = 0;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (i % static_cast<std::size_t>(length) == 0) id = static_cast<std::int32_t>(segref::uniform_int(g, 0, span - 1));
            ids[i] = id;
        }
        return ids;
    };
    EXPECT_EQ(sample_of(std::vector<std::int32_t>(100000, 7), M, 0.4).verdict, 0u) << "every id equal";
    EXPECT_EQ(sample_of(runs_of(100000, 8, 3000), M, 0.4).verdict, 0u) << "runs of 8";
    EXPECT_EQ(sample_of(runs_of(100000, 20, M), M, 0.4).verdict, 0u) << "runs of 20 of M ids";
    EXPECT_EQ(sample_of(runs_of(100000, 2, 3000), M, 0.4).verdict, 1u) << "runs of 2";
    const auto none = sample_of(std::vector<std::int32_t>(5000, -1), M, 0.4);
    EXPECT_EQ(none.sampled, 0u);
    EXPECT_EQ(none.verdict, 0u) << "no row in range";
    for (i64 span : {i64(3000), M}) {
        std::vector<std::int32_t> ids(std::size_t(1) << 21);
        for (auto& id : ids) id = static_cast<std::int32_t>(segref::uniform_int(g, 0, span - 1));
        const auto t = sample_of(ids, M, 0.4);
        EXPECT_GT(t.sampled, 0u);
        EXPECT_LT(i64(t.sampled), i64(ids.size()) / 4);
        EXPECT_EQ(t.verdict, span < M ? 1u : 0u) << "2^21 rows on " << span << " ids";
    }
    for (int shape : {0, 1, 2, 4, 5, 6, 7}) {
        const auto s = shaped_ids<std::int32_t>(g, shape, 300000, M);
        EXPECT_EQ(sample_of(s.idx, M, segred::cuda::detail::few_distinct_share).verdict, shape == 5 ? 1u : 0u)
            << shape_name(shape);
    }
}

// One column in shared memory from 64 to 5000 ids, where float sums take
// an id as hot from 7, 5, 4 and 4 lanes of a round (hot_lanes_for_float_sums;
// 3 from about 10000 ids on, as in LargeSharedAccumulators) and counts
// from 8.
TYPED_TEST(CudaUnsortedReduce, SmallSharedAccumulators) {
    for (i64 M : {64, 300, 1500, 5000})
        atomic_path_cases<typename TypeParam::value, typename TypeParam::index>(100000, M, 0, 0);
}

} // namespace

namespace {

// Where the bucketed path applies and how wide its buckets are: no GPU
// needed (the plan is host arithmetic).
TEST(CudaBucketPlan, BucketsFitSharedMemoryPastTheL2) {
    using segred::cuda::detail::plan_buckets;
    const std::size_t l2 = std::size_t(50) << 20, shared = std::size_t(128) << 10;
    const i64 n = i64(1) << 26, M = i64(1) << 24;
    // 4 bytes an id: 2^15 ids a bucket, 512 buckets.
    auto p = plan_buckets(n, M, 4, std::size_t(M) * 4, shared, l2);
    EXPECT_EQ(p.shift, 15);
    EXPECT_EQ(p.buckets, 512);
    // 12 bytes an id (8-byte sums, 32-bit counts): 2^13 ids; M + 1 ids take
    // one more bucket.
    p = plan_buckets(n, M + 1, 12, std::size_t(M + 1) * 16, shared, l2);
    EXPECT_EQ(p.shift, 13);
    EXPECT_EQ(p.buckets, 2049);
    // Accumulators within three quarters of the L2 stay on the atomic path;
    // just past it they do not.
    EXPECT_EQ(plan_buckets(n, M, 4, l2 / 4 * 3, shared, l2).buckets, 0);
    EXPECT_GT(plan_buckets(n, M, 4, l2 / 4 * 3 + 4, shared, l2).buckets, 0);
    // Places are 32-bit; the tile pass's histogram holds 8192 buckets; a
    // bucket holds at least 2^10 ids.
    EXPECT_EQ(plan_buckets(i64(1) << 32, M, 4, std::size_t(M) * 4, shared, l2).buckets, 0);
    EXPECT_EQ(plan_buckets(n, i64(1) << 29, 4, std::size_t(1) << 31, shared, l2).buckets, 0);
    EXPECT_EQ(plan_buckets(n, M, 4, std::size_t(M) * 4, 2048, l2).buckets, 0);
    EXPECT_EQ(plan_buckets(0, M, 4, std::size_t(M) * 4, shared, l2).buckets, 0);
}

} // namespace
