// Sums and means of short segments (up to 8 rows take a fold with no branch
// on the length, reading a fixed 4 or 8 rows and masking those past the
// segment) against a left-to-right sum from +0 computed here in the value
// type: the bits must be the same, which they are only when no masked row
// leaks in, no row is left out and the rows are added in row order. Values
// mix magnitudes 1e8 apart (an order other than left to right changes the
// bits), zeros of both signs, infinities and NaN; segments end near the end
// of the values (where fewer than 8 rows are left to read); offsets and
// lengths; 1 and 2 threads.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::i64;

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

template <class T>
bool same_bits(T a, T b) {
    if (std::isnan(a) && std::isnan(b)) return true;
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T, class I>
void check_short_sums(segref::rng& g, i64 M) {
    // Lengths 0 to 12: most within the masked 8 rows, some just past them.
    std::vector<i64> len(static_cast<std::size_t>(M));
    for (i64& l : len) l = segref::coin(g, 0.1) ? 0 : segref::uniform_int(g, 1, segref::coin(g, 0.9) ? 8 : 12);
    const i64 n = segref::total(len);
    std::vector<T> v(static_cast<std::size_t>(n));
    for (T& x : v) x = random_value<T>(g);
    const std::vector<I> off = segref::offsets_from_lengths<I>(len);
    std::vector<I> lengths(len.begin(), len.end());

    // The reference: left to right from +0, in T.
    std::vector<T> sum(static_cast<std::size_t>(M));
    for (i64 s = 0, row = 0; s < M; ++s) {
        T a = T(0);
        for (i64 j = 0; j < len[static_cast<std::size_t>(s)]; ++j) a += v[static_cast<std::size_t>(row++)];
        sum[static_cast<std::size_t>(s)] = a;
    }

    const T fill = T(-7);
    const auto opts = segred::options{}.fill(static_cast<double>(fill));
    const auto vals = segred::rows(v.data(), n);
    for (int threads : {1, 2})
        for (int lengths_form = 0; lengths_form < 2; ++lengths_form) {
            SCOPED_TRACE(::testing::Message() << "threads " << threads << (lengths_form ? ", lengths" : ", offsets"));
            std::vector<T> got_sum(static_cast<std::size_t>(M), T(99)), got_mean(static_cast<std::size_t>(M), T(99));
            const auto pol = segred::host.threads(threads);
            if (lengths_form) {
                const auto seg = segred::lengths(lengths.data(), M);
                segred::segment_reduce(pol, vals, seg, segred::rows(got_sum.data(), M), segred::sum{}, opts);
                segred::segment_reduce(pol, vals, seg, segred::rows(got_mean.data(), M), segred::mean{}, opts);
            } else {
                const auto seg = segred::offsets(off.data(), M);
                segred::segment_reduce(pol, vals, seg, segred::rows(got_sum.data(), M), segred::sum{}, opts);
                segred::segment_reduce(pol, vals, seg, segred::rows(got_mean.data(), M), segred::mean{}, opts);
            }
            int reported = 0;
            for (i64 s = 0; s < M && reported < 5; ++s) {
                const std::size_t k = static_cast<std::size_t>(s);
                const T want_sum = len[k] == 0 ? fill : sum[k];
                const T want_mean = len[k] == 0 ? fill : sum[k] / static_cast<T>(len[k]);
                if (!same_bits(got_sum[k], want_sum) || !same_bits(got_mean[k], want_mean)) {
                    ADD_FAILURE() << "segment " << s << " of " << len[k] << " rows: sum " << got_sum[k] << ", want "
                                  << want_sum << "; mean " << got_mean[k] << ", want " << want_mean;
                    ++reported;
                }
            }
        }
}

TYPED_TEST(ReduceShortSums, SameBitsAsLeftToRight) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    // M = 1 and 3: every segment within 8 rows of the end (fewer left to
    // read); larger M also cross the host's chunks of segments.
    for (i64 M : {i64(1), i64(3), i64(40), i64(5000), i64(70000)}) {
        SCOPED_TRACE(::testing::Message() << "M " << M);
        for (int trial = 0; trial < 3 && !::testing::Test::HasFailure(); ++trial) check_short_sums<T, I>(g, M);
    }
}

} // namespace
