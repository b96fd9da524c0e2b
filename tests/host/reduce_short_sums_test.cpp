// Sums and means of short segments against the fold the host promises,
// computed here in the value type: the bits must be the same, which they are
// only when no masked row leaks in, no row is left out and the rows are
// added in the promised order. Segments of up to 15 rows add left to right
// from +0 (up to 8 rows take a fold with no branch on the length, reading a
// fixed 4 or 8 rows and masking those past the segment; streaks of segments
// of one length go several to a vector register, row i of each in one
// lane); 16 to 255 rows fold into 4 interleaved partial sums from +0 (row k
// into k % 4, in registers, the last rows masked) combined as (0+2)+(1+3).
// Values mix magnitudes 1e8 apart (any other order changes the bits), zeros
// of both signs, infinities and NaN; segments end near the end of the values
// (where fewer rows are left to read than a masked fold reads); offsets,
// lengths and sorted ids; 1 and 2 threads.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::i64;
using segtest::same_bits_or_both_nan;

template <class P>
class ReduceShortSums : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceShortSums, segtest::float_value_pairs, segtest::vi_names);

template <class T>
T random_value(segref::rng& g) {
    const int kind = static_cast<int>(segref::uniform_int(g, 0, 99));
    if (kind < 2) return std::numeric_limits<T>::infinity() * (segref::coin(g, 0.5) ? T(1) : T(-1));
    if (kind < 3) return std::numeric_limits<T>::quiet_NaN();
    if (kind < 13) return segref::coin(g, 0.5) ? T(0) : -T(0);
    if (kind < 43) return static_cast<T>(segref::uniform_int(g, -3, 3)) * T(1e8);
    return static_cast<T>(segref::uniform_real(g, -4.0, 4.0));
}

// The sum the host promises for a one-column run of len rows from x.
template <class T>
T promised_sum(const T* x, i64 len) {
    if (len < 16) {  // left to right from +0
        T a = T(0);
        for (i64 k = 0; k < len; ++k) a += x[k];
        return a;
    }
    T l[4] = {T(0), T(0), T(0), T(0)};  // row k into lane k % 4, each from +0
    for (i64 k = 0; k < len; ++k) l[k % 4] += x[k];
    return (l[0] + l[2]) + (l[1] + l[3]);
}

// Sorted ids fold rows in fixed chunks of 65536 (one column; SEMANTICS.md):
// a run that crosses a chunk boundary is the sum of its parts, each folded
// as a run of its own, combined in chunk order.
constexpr i64 sorted_ids_chunk = 65536;

template <class T>
T promised_sorted_ids_sum(const T* v, i64 row, i64 len) {
    i64 cut = std::min(row + len, (row / sorted_ids_chunk + 1) * sorted_ids_chunk);
    T a = promised_sum(v + row, cut - row);
    for (i64 k = cut; k < row + len; k = cut) {
        cut = std::min(row + len, k + sorted_ids_chunk);
        a += promised_sum(v + k, cut - k);
    }
    return a;
}

// How segment lengths are drawn.
enum class lengths_kind {
    mixed,    // 0 to 12 rows, mostly within the masked 8, some just past them
    streaks,  // one length of 0 to 12 rows for 1 to 40 segments in a row, then another
    lanes,    // mostly 16 to 255 rows (every remainder mod 4), some of 0 to 12
    // Sorted ids' windows of short runs (short_run_windows.hpp): 1 to 4
    // rows, with one segment in 100 of 16 to 255 rows (folded in lanes
    // inside a window), or with one in 5 preceded by 1 to 6 empty ones.
    short_and_lanes,
    short_and_gaps,
};

std::vector<i64> draw_lengths(segref::rng& g, i64 M, lengths_kind kind) {
    std::vector<i64> len(static_cast<std::size_t>(M));
    auto short_length = [&] { return segref::coin(g, 0.1) ? 0 : segref::uniform_int(g, 1, segref::coin(g, 0.9) ? 8 : 12); };
    for (std::size_t s = 0; s < len.size();) {
        if (kind == lengths_kind::streaks) {
            const i64 l = segref::uniform_int(g, 0, 12), streak = segref::uniform_int(g, 1, 40);
            for (i64 j = 0; j < streak && s < len.size(); ++j) len[s++] = l;
            continue;
        }
        if (kind == lengths_kind::short_and_lanes) {
            len[s++] = segref::coin(g, 0.01) ? segref::uniform_int(g, 16, 255) : segref::uniform_int(g, 1, 4);
            continue;
        }
        if (kind == lengths_kind::short_and_gaps) {
            if (segref::coin(g, 0.2))
                for (i64 e = segref::uniform_int(g, 1, 6); e > 0 && s + 1 < len.size(); --e) len[s++] = 0;
            len[s++] = segref::uniform_int(g, 1, 4);
            continue;
        }
        len[s++] = kind == lengths_kind::lanes && segref::coin(g, 0.9) ? segref::uniform_int(g, 16, 255) : short_length();
    }
    return len;
}

template <class T, class I>
void check_short_sums(segref::rng& g, i64 M, lengths_kind kind) {
    const std::vector<i64> len = draw_lengths(g, M, kind);
    const i64 n = segref::total(len);
    std::vector<T> v(static_cast<std::size_t>(n));
    for (T& x : v) x = random_value<T>(g);
    const std::vector<I> off = segref::offsets_from_lengths<I>(len);
    std::vector<I> lengths(len.begin(), len.end());

    std::vector<T> sum(static_cast<std::size_t>(M)), sorted_ids_sum(static_cast<std::size_t>(M));
    for (i64 s = 0, row = 0; s < M; row += len[static_cast<std::size_t>(s)], ++s) {
        sum[static_cast<std::size_t>(s)] = promised_sum(v.data() + row, len[static_cast<std::size_t>(s)]);
        sorted_ids_sum[static_cast<std::size_t>(s)] = promised_sorted_ids_sum(v.data(), row, len[static_cast<std::size_t>(s)]);
    }

    const T fill = T(-7);
    const auto opts = segred::options{}.fill(static_cast<double>(fill));
    const auto vals = segred::rows(v.data(), n);
    // Sorted ids too: their runs fold in the same shapes (the short ones
    // row by row, 16 rows and more in lanes).
    std::vector<I> ids;
    for (i64 s = 0; s < M; ++s) ids.insert(ids.end(), static_cast<std::size_t>(len[static_cast<std::size_t>(s)]), static_cast<I>(s));
    // A mean asked for its counts too takes the writer's general path
    // (states one by one) rather than the one that writes a register of
    // sums: the same bits either way.
    std::vector<T> counted_mean;
    std::vector<std::int64_t> counts;
    const auto reduce = [&](const auto& pol, const auto& seg, std::vector<T>& got_sum, std::vector<T>& got_mean) {
        segred::segment_reduce(pol, vals, seg, segred::rows(got_sum.data(), M), segred::sum{}, opts);
        segred::segment_reduce(pol, vals, seg, segred::rows(got_mean.data(), M), segred::mean{}, opts);
        counted_mean.assign(static_cast<std::size_t>(M), T(99));
        counts.assign(static_cast<std::size_t>(M), -1);
        segred::segment_reduce(pol, vals, seg, segred::rows(counted_mean.data(), M), segred::mean{},
                               segred::options{opts}.counts(counts.data()));
    };
    for (int threads : {1, 2})
        for (const char* form : {"offsets", "lengths", "sorted ids"}) {
            SCOPED_TRACE(::testing::Message() << "threads " << threads << ", " << form);
            std::vector<T> got_sum(static_cast<std::size_t>(M), T(99)), got_mean(static_cast<std::size_t>(M), T(99));
            const auto pol = segred::host.threads(threads);
            const std::string f = form;
            if (f == "lengths") reduce(pol, segred::lengths(lengths.data(), M), got_sum, got_mean);
            else if (f == "offsets") reduce(pol, segred::offsets(off.data(), M), got_sum, got_mean);
            else reduce(pol, segred::sorted_ids(ids.data(), M), got_sum, got_mean);
            int reported = 0;
            for (i64 s = 0; s < M && reported < 5; ++s) {
                const std::size_t k = static_cast<std::size_t>(s);
                const T promised = f == "sorted ids" ? sorted_ids_sum[k] : sum[k];
                const T want_sum = len[k] == 0 ? fill : promised;
                const T want_mean = len[k] == 0 ? fill : promised / static_cast<T>(len[k]);
                if (!same_bits_or_both_nan(got_sum[k], want_sum) || !same_bits_or_both_nan(got_mean[k], want_mean) ||
                    !same_bits_or_both_nan(counted_mean[k], want_mean) || counts[k] != len[k]) {
                    ADD_FAILURE() << "segment " << s << " of " << len[k] << " rows: sum " << got_sum[k] << ", want "
                                  << want_sum << "; mean " << got_mean[k] << " (with counts " << counted_mean[k]
                                  << ", count " << counts[k] << "), want " << want_mean;
                    ++reported;
                }
            }
        }
}

// check_short_sums for each kind of lengths and each M, `trials` times.
template <class T, class I>
void check_kinds(segref::rng& g, std::initializer_list<lengths_kind> kinds, std::initializer_list<i64> Ms,
                 int trials) {
    static const char* const names[] = {"mixed", "streaks", "lanes", "short and lanes", "short and gaps"};
    for (const lengths_kind kind : kinds)
        for (const i64 M : Ms) {
            SCOPED_TRACE(::testing::Message() << "M " << M << ", " << names[static_cast<int>(kind)]);
            for (int trial = 0; trial < trials && !::testing::Test::HasFailure(); ++trial)
                check_short_sums<T, I>(g, M, kind);
        }
}

TYPED_TEST(ReduceShortSums, SameBitsAsLeftToRight) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    // M = 1 and 3: every segment within 8 rows of the end (fewer left to
    // read); larger M also cross the host's chunks of segments.
    check_kinds<T, I>(g, {lengths_kind::mixed, lengths_kind::streaks}, {1, 3, 40, 5000, 70000}, 3);
}

// Sorted ids of short runs go a window of 2048 rows at a time through the
// offsets' loop; windows that hold lane-folded runs or gaps of empty
// segments, many windows to a chunk of 65536 rows and runs across chunks.
TYPED_TEST(ReduceShortSums, SortedIdWindowsSameBits) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    check_kinds<T, I>(g, {lengths_kind::short_and_lanes, lengths_kind::short_and_gaps}, {700, 90000}, 2);
}

// Ids out of order under unchecked bounds break the sorted form's promise:
// the sums are then unspecified, but nothing may be written outside `out`
// (a window's buffer takes the ids clamped).
TYPED_TEST(ReduceShortSums, SortedIdWindowsUnorderedUnchecked) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    const i64 M = 80000, guard = 64;
    const std::vector<i64> len = draw_lengths(g, M, lengths_kind::short_and_gaps);
    std::vector<I> ids;
    for (i64 s = 0; s < M; ++s) ids.insert(ids.end(), static_cast<std::size_t>(len[static_cast<std::size_t>(s)]), static_cast<I>(s));
    const i64 n = static_cast<i64>(ids.size());
    for (i64 r = 0; r < n; r += segref::uniform_int(g, 1, 600))  // some rows' ids moved out of order
        ids[static_cast<std::size_t>(r)] = static_cast<I>(segref::uniform_int(g, 0, M - 1));
    std::vector<T> v(static_cast<std::size_t>(n), T(1));
    std::vector<T> out(static_cast<std::size_t>(M + 2 * guard), T(-5));
    segred::segment_reduce(segred::host, segred::rows(v.data(), n), segred::sorted_ids(ids.data(), M),
                           segred::rows(out.data() + guard, M), segred::sum{},
                           segred::options{}.bounds(segred::bounds_policy::unchecked));
    for (i64 j = 0; j < guard; ++j) {
        EXPECT_EQ(out[static_cast<std::size_t>(j)], T(-5)) << "written before out, " << guard - j << " back";
        EXPECT_EQ(out[static_cast<std::size_t>(guard + M + j)], T(-5)) << "written past out, at M + " << j;
    }
}

TYPED_TEST(ReduceShortSums, SameBitsAsFourInterleavedLanes) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    // M = 1: the last rows of the values, where a masked step cannot read
    // past the segment's end.
    check_kinds<T, I>(g, {lengths_kind::lanes}, {1, 2, 40, 3000}, 4);
}

// Every segment of one size (the fixed form): all of them go in batches of
// one length, but for the last few of a chunk of segments.
TYPED_TEST(ReduceShortSums, FixedSizeSameBits) {
    using T = typename TypeParam::value;
    SEGRED_SEEDED_RNG(g);
    for (i64 size : {i64(1), i64(2), i64(3), i64(4), i64(5), i64(7), i64(8), i64(9), i64(16), i64(19), i64(34)}) {
        const i64 M = segref::uniform_int(g, 1, 3000), n = M * size;
        std::vector<T> v(static_cast<std::size_t>(n));
        for (T& x : v) x = random_value<T>(g);
        for (int threads : {1, 2}) {
            std::vector<T> got(static_cast<std::size_t>(M), T(99));
            segred::segment_reduce(segred::host.threads(threads), segred::rows(v.data(), n), segred::fixed(size, M),
                                   segred::rows(got.data(), M), segred::sum{});
            int reported = 0;
            for (i64 s = 0; s < M && reported < 5; ++s) {
                const T want = promised_sum(v.data() + s * size, size);
                if (!same_bits_or_both_nan(got[static_cast<std::size_t>(s)], want)) {
                    ADD_FAILURE() << "size " << size << ", M " << M << ", threads " << threads << ": segment " << s
                                  << " sum " << got[static_cast<std::size_t>(s)] << ", want " << want;
                    ++reported;
                }
            }
        }
    }
}

} // namespace
