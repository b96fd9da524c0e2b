// segment_softmax in every segment form on fresh random inputs against the
// independent reference, plus edge cases: rows outside every segment get the
// fill value, large values stay finite, a giant segment, empty inputs.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reduce_harness.hpp"
#include "common/reference.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::equal_all;
using segtest::form;
using segtest::i64;
using segtest::near_all;

template <class P>
class Softmax : public ::testing::Test {};
TYPED_TEST_SUITE(Softmax, segtest::value_index_diagonal, segtest::vi_names);

// Softmax outputs lie in [0, 1]: an absolute tolerance by computation type.
template <class T>
double softmax_tol() {
    return std::is_same<T, float>::value ? 2e-6 : 1e-12;
}

template <form F, class T, class I>
void softmax_trials(segref::rng& g, int trials) {
    using O = segtest::real_out<T>;
    for (int t = 0; t < trials; ++t) {
        const i64 width = segref::coin(g, 0.5) ? 1 : 3;
        const i64 b = segref::uniform_int(g, 0, 2);
        const auto bounds = b == 0 ? segred::bounds_policy::check
                                   : b == 1 ? segred::bounds_policy::unchecked : segred::bounds_policy::drop;
        const bool drop = bounds == segred::bounds_policy::drop;
        const segtest::seg_input<I> s = segtest::random_segments<I>(g, F, drop);
        const std::vector<T> v = segref::random_values<T>(g, s.n * width, segref::value_kind::general);
        segred::options opts = segred::options{}.bounds(bounds);
        double fill = 0.0;
        const i64 fm = segref::uniform_int(g, 0, 2);
        if (fm == 1) opts.fill(fill = 0.25 * static_cast<double>(segref::uniform_int(g, -8, 8)));
        if (fm == 2) {
            opts.fill_nan();
            fill = std::numeric_limits<double>::quiet_NaN();
        }
        SCOPED_TRACE("softmax trial " + std::to_string(t) + ": width " + std::to_string(width) + ", bounds " +
                     segtest::bounds_name(bounds) + ", fill " + std::to_string(fill) + "; " + s.describe());
        const std::vector<double> ref = segref::softmax(v.data(), s.n, width, s.rows(drop), fill);
        std::vector<O> out(static_cast<std::size_t>(s.n * width), O(77));
        segred::segment_softmax(segred::host, segred::rows(v.data(), s.n, width),
                                segtest::make_desc<F>(s.idx.data(), s), segred::rows(out.data(), s.n, width), opts);
        const std::vector<double> ones(ref.size(), 1.0);
        EXPECT_TRUE(near_all(out, segtest::as_out<O>(ref), &ones, softmax_tol<T>()));
        if (::testing::Test::HasFailure()) return;
    }
}

TYPED_TEST(Softmax, RandomEveryForm) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    softmax_trials<form::offsets, T, I>(g, 15);
    softmax_trials<form::lengths, T, I>(g, 15);
    softmax_trials<form::sorted_ids, T, I>(g, 15);
    softmax_trials<form::ids, T, I>(g, 15);
    softmax_trials<form::fixed, T, I>(g, 15);
    softmax_trials<form::subscripts, T, I>(g, 15);
}

TYPED_TEST(Softmax, ByHand) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    using O = segtest::real_out<T>;
    const double tol = softmax_tol<T>();
    // Offsets [1, 3, 3, 4] over 5 rows: rows 0 and 4 are in no segment.
    const std::vector<T> v = {7, 0, 0, 5, 7};
    const std::vector<I> off = {1, 3, 3, 4};
    std::vector<O> out(5, O(-1));
    segred::segment_softmax(segred::host, segred::rows(v.data(), 5), segred::offsets(off.data(), 3),
                            segred::rows(out.data(), 5), segred::options{}.fill(-1.5));
    EXPECT_EQ(out[0], O(-1.5));
    EXPECT_NEAR(out[1], 0.5, tol);
    EXPECT_NEAR(out[2], 0.5, tol);
    EXPECT_NEAR(out[3], 1.0, tol);
    EXPECT_EQ(out[4], O(-1.5));
    // Large values do not overflow: softmax(1000, 1000 + log 3) = (1/4, 3/4).
    if constexpr (std::is_floating_point<T>::value) {
        const std::vector<T> big = {T(1000), T(1000 + std::log(3.0)), T(-1000), T(-1001)};
        const std::vector<I> id = {1, 1, 0, 0};
        std::vector<O> o(4);
        segred::segment_softmax(segred::host, segred::rows(big.data(), 4), segred::ids(id.data(), 2),
                                segred::rows(o.data(), 4));
        const double e = std::exp(-1.0);
        // In float, the log-sum-exp near +-1000 carries an absolute error of
        // about ulp(1000) = 6e-5, which becomes a relative error of the outputs.
        const double t2 = std::is_same<T, float>::value ? 2e-4 : 1e-12;
        EXPECT_NEAR(o[0], 0.25, t2);
        EXPECT_NEAR(o[1], 0.75, t2);
        EXPECT_NEAR(o[2], 1 / (1 + e), t2);
        EXPECT_NEAR(o[3], e / (1 + e), t2);
    }
    // Out-of-range ids under drop: that row gets the fill (default 0).
    const std::vector<T> w = {1, 1, 2, 3};
    const std::vector<I> bad = {0, 0, 5, -1};
    std::vector<O> o2(4, O(9));
    segred::segment_softmax(segred::host, segred::rows(w.data(), 4), segred::ids(bad.data(), 2),
                            segred::rows(o2.data(), 4), segred::options{}.bounds(segred::bounds_policy::drop));
    EXPECT_NEAR(o2[0], 0.5, tol);
    EXPECT_NEAR(o2[1], 0.5, tol);
    EXPECT_EQ(o2[2], 0);
    EXPECT_EQ(o2[3], 0);
    // No rows: nothing to do.
    segred::segment_softmax(segred::host, segred::rows(static_cast<const T*>(nullptr), 0),
                            segred::offsets(static_cast<const I*>(nullptr), 0), segred::rows(static_cast<O*>(nullptr), 0));
    // M = 0 with rows: all rows are outside every segment.
    const std::vector<I> off0 = {0};
    segred::segment_softmax(segred::host, segred::rows(w.data(), 4), segred::offsets(off0.data(), 0),
                            segred::rows(o2.data(), 4), segred::options{}.fill(3));
    EXPECT_TRUE(equal_all(o2, std::vector<double>(4, 3.0)));
}

// One giant segment (cut into pieces by the implementation) in a width-2
// input, plus a small segment.
TYPED_TEST(Softmax, GiantSegment) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    using O = segtest::real_out<T>;
    SEGRED_SEEDED_RNG(g);
    const i64 n = 200003, width = 2;
    const std::vector<T> v = segref::random_values<T>(g, n * width, segref::value_kind::general);
    const std::vector<I> off = {0, 3, static_cast<I>(n)};
    const std::vector<double> ref =
        segref::softmax(v.data(), n, width, segref::from_offsets(off.data(), 2, n, false), 0.0);
    std::vector<O> out(static_cast<std::size_t>(n * width));
    segred::segment_softmax(segred::host, segred::rows(v.data(), n, width), segred::offsets(off.data(), 2),
                            segred::rows(out.data(), n, width));
    // Relative tolerance: the giant segment's probabilities are ~1e-5.
    std::vector<double> scale(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) scale[i] = std::fabs(ref[i]) * 1e3 + 1e-30;
    EXPECT_TRUE(near_all(out, segtest::as_out<O>(ref), &scale, std::is_same<T, float>::value ? 1e-6 : 1e-12));
}

} // namespace
