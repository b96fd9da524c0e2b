// Every error case: segred::error is thrown, its message names the function,
// the argument, the first bad position and its value, and nothing is
// written -- out, counts and arg out keep their previous contents, also with
// accumulate. Shape errors throw under every bounds policy.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/expect_error.hpp"
#include "common/test_util.hpp"

namespace {

using segtest::i64;

using segtest::expect_error;

// out, counts and arg buffers filled with sentinels, to prove nothing was written.
template <class O = double>
struct guarded {
    std::vector<O> out;
    std::vector<i64> counts, arg;
    guarded(i64 M, i64 width = 1)
        : out(static_cast<std::size_t>(M * width), O(123)), counts(static_cast<std::size_t>(M), -77),
          arg(static_cast<std::size_t>(M * width), -55) {}
    segred::rows_view<O> view(i64 M, i64 width = 1) { return segred::rows(out.data(), M, width); }
    segred::options opts() { return segred::options{}.counts(counts.data()); }
    segred::options opts_arg() { return segred::options{}.counts(counts.data()).arg_out(arg.data()); }
    void expect_untouched() const {
        for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], O(123)) << "out[" << i << "] was written";
        for (std::size_t i = 0; i < counts.size(); ++i) EXPECT_EQ(counts[i], -77) << "counts[" << i << "] was written";
        for (std::size_t i = 0; i < arg.size(); ++i) EXPECT_EQ(arg[i], -55) << "arg[" << i << "] was written";
    }
};

template <class I>
class Errors : public ::testing::Test {};
using index_types = ::testing::Types<std::int32_t, std::int64_t>;
struct index_names {
    template <class I>
    static std::string GetName(int) {
        return segtest::type_name<I>();
    }
};
TYPED_TEST_SUITE(Errors, index_types, index_names);

const std::vector<double> kValues = {1, 2, 3, 4, 5, 6};
const auto kIn = segred::rows(kValues.data(), 6);

TYPED_TEST(Errors, IdsOutOfRange) {
    using I = TypeParam;
    const std::vector<I> big = {0, 1, 7, 2, 9, 1}, neg = {0, -1, 2, 2, 1, -5};
    for (bool acc : {false, true}) {
        SCOPED_TRACE(acc ? "accumulate" : "overwrite");
        guarded<> b(3);
        expect_error([&] { segred::accumarray(segred::host, kIn, segred::ids(big.data(), 3), b.view(3), segred::sum{},
                                              b.opts().accumulate(acc)); },
                     {"segred::accumarray: ids[2] = 7 is out of range [0, 3)"});
        b.expect_untouched();
        expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::ids(neg.data(), 3), b.view(3),
                                                  segred::max{}, b.opts_arg()); },
                     {"segred::segment_reduce: ids[1] = -1 is out of range [0, 3)"});
        b.expect_untouched();
    }
    // The first bad position is reported whatever the thread count, also
    // when it lies past the first chunk of a parallel scan.
    const i64 n = 300000;
    std::vector<double> v(n, 1.0);
    std::vector<I> id(n, I(0));
    id[70000] = 3;
    id[250000] = -2;
    id[5000] = 0;
    for (int threads : {1, 2, 3}) {
        guarded<> b(3);
        expect_error([&] { segred::accumarray(segred::host.threads(threads), segred::rows(v.data(), n),
                                              segred::ids(id.data(), 3), b.view(3), segred::sum{}, b.opts()); },
                     {"ids[70000] = 3 is out of range [0, 3)"});
        b.expect_untouched();
    }
}

TYPED_TEST(Errors, SortedIds) {
    using I = TypeParam;
    const std::vector<I> unsorted = {0, 1, 0, 2, 2, 2}, out_of_range = {0, 0, 1, 3, 3, 3}, neg = {-1, 0, 0, 1, 1, 2};
    guarded<> b(3);
    expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::sorted_ids(unsorted.data(), 3), b.view(3),
                                              segred::sum{}, b.opts().accumulate()); },
                 {"segred::segment_reduce", "sorted_ids[2] = 0", "sorted_ids[1] = 1", "non-decreasing"});
    b.expect_untouched();
    expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::sorted_ids(out_of_range.data(), 3),
                                              b.view(3), segred::min{}, b.opts_arg()); },
                 {"sorted_ids[3] = 3 is out of range [0, 3)"});
    b.expect_untouched();
    expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::sorted_ids(neg.data(), 3), b.view(3),
                                              segred::sum{}, b.opts()); },
                 {"sorted_ids[0] = -1 is out of range [0, 3)"});
    b.expect_untouched();
    // The first bad row is named whichever rule it breaks: row 2 steps down
    // before row 3 leaves the range.
    const std::vector<I> both = {0, 2, 1, 5, 5, 5};
    expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::sorted_ids(both.data(), 3), b.view(3),
                                              segred::sum{}, b.opts()); },
                 {"sorted_ids[2] = 1 is less than sorted_ids[1] = 2"});
    b.expect_untouched();
}

TYPED_TEST(Errors, NoLengthsForSomeRows) {
    using I = TypeParam;
    const std::vector<I> none;
    guarded<> b(0);
    expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::lengths(none.data(), 0), b.view(0),
                                              segred::sum{}, b.opts()); },
                 {"lengths sum to 0 but values have 6 rows"});
    // Under drop every row is simply in no segment.
    EXPECT_NO_THROW(segred::segment_reduce(segred::host, kIn, segred::lengths(none.data(), 0), b.view(0), segred::sum{},
                                           segred::options{}.bounds(segred::bounds_policy::drop)));
}

TEST(ErrorsOut, RealValuedReducersNeedFloatingOutput) {
    const std::vector<double> v = {1, 2, 3};
    const std::vector<std::int32_t> ids = {0, 0, 1};
    std::vector<std::int64_t> out = {5, 6};
    expect_error([&] { segred::accumarray(segred::host, segred::rows(v.data(), 3), segred::ids(ids.data(), 2),
                                          segred::rows(out.data(), 2), segred::var{}); },
                 {"segred::accumarray", "var needs a floating-point output"});
    expect_error([&] { segred::accumarray(segred::host, segred::rows(v.data(), 3), segred::ids(ids.data(), 2),
                                          segred::rows(out.data(), 2), segred::logsumexp{}); },
                 {"logsumexp needs a floating-point output"});
    EXPECT_EQ(out, (std::vector<std::int64_t>{5, 6}));
}

TYPED_TEST(Errors, Offsets) {
    using I = TypeParam;
    const std::vector<I> decreasing = {0, 3, 1, 6}, past = {0, 2, 4, 9}, negative = {-1, 2, 4, 6};
    guarded<> b(3);
    expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::offsets(decreasing.data(), 3), b.view(3),
                                              segred::sum{}, b.opts().accumulate()); },
                 {"segred::segment_reduce", "offsets[2] = 1 is less than offsets[1] = 3"});
    b.expect_untouched();
    expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::offsets(past.data(), 3), b.view(3),
                                              segred::argmax{}, b.opts_arg()); },
                 {"offsets[3] = 9", "past the last row (n = 6)"});
    b.expect_untouched();
    expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::offsets(negative.data(), 3), b.view(3),
                                              segred::sum{}, b.opts()); },
                 {"offsets[0] = -1 is negative"});
    b.expect_untouched();
}

TYPED_TEST(Errors, Lengths) {
    using I = TypeParam;
    const std::vector<I> negative = {3, -2, 5}, short_sum = {2, 2, 1}, long_sum = {2, 2, 3};
    guarded<> b(3);
    expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::lengths(negative.data(), 3), b.view(3),
                                              segred::sum{}, b.opts().accumulate()); },
                 {"segred::segment_reduce", "lengths[1] = -2 is negative"});
    b.expect_untouched();
    expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::lengths(short_sum.data(), 3), b.view(3),
                                              segred::sum{}, b.opts()); },
                 {"lengths sum to 5 but values have 6 rows"});
    b.expect_untouched();
    expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::lengths(long_sum.data(), 3), b.view(3),
                                              segred::max{}, b.opts_arg()); },
                 {"lengths sum to 7 but values have 6 rows"});
    b.expect_untouched();
    guarded<> none(0);
    expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::lengths(short_sum.data(), 0), none.view(0)); },
                 {"lengths sum to 0", "6 rows"});
}

TYPED_TEST(Errors, BadSubscripts) {
    using I = TypeParam;
    const std::vector<I> subs = {0, 0, 1, 2, 1, 3, 0, -1, 1, 1, 2, 0};  // rows 2 (dim 1), 3 (dim 1), 5 (dim 0)
    guarded<> b(6);
    expect_error([&] { segred::accumarray(segred::host, kIn, segred::subscripts(subs.data(), {2, 3}), b.view(6),
                                          segred::sum{}, b.opts().accumulate()); },
                 {"segred::accumarray", "subscripts[2, 1] = 3 is out of range [0, 3)"});
    b.expect_untouched();
    const std::vector<I> subs0 = {0, 0, 0, 1, 5, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 0};  // row 1, dim 1
    guarded<> b3(8);
    expect_error([&] { segred::accumarray(segred::host, kIn, segred::subscripts(subs0.data(), {2, 2, 2}), b3.view(8),
                                          segred::max{}, b3.opts_arg()); },
                 {"subscripts[1, 1] = 5 is out of range [0, 2)"});
    b3.expect_untouched();
    // ndim outside 1..8 and negative extents: always errors.
    const std::int64_t shape9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, neg_shape[2] = {2, -2};
    for (auto bounds : {segred::bounds_policy::check, segred::bounds_policy::drop, segred::bounds_policy::unchecked}) {
        SCOPED_TRACE(segtest::type_name<I>());
        guarded<> one(1);
        expect_error([&] { segred::accumarray(segred::host, kIn, segred::subscripts(subs.data(), 9, shape9),
                                              one.view(1), segred::sum{}, one.opts().bounds(bounds)); },
                     {"subscripts have 9 dimensions; 1 to 8 are supported"});
        expect_error([&] { segred::accumarray(segred::host, kIn, segred::subscripts(subs.data(), 0, shape9),
                                              one.view(1), segred::sum{}, one.opts().bounds(bounds)); },
                     {"subscripts have 0 dimensions"});
        one.expect_untouched();
        guarded<> e(0);
        expect_error([&] { segred::accumarray(segred::host, kIn, segred::subscripts(subs.data(), 2, neg_shape),
                                              e.view(0), segred::sum{}, segred::options{}.bounds(bounds)); },
                     {"shape[1] = -2 is negative"});
    }
}

// Shape errors throw under every bounds policy.
TYPED_TEST(Errors, ShapesUnderEveryPolicy) {
    using I = TypeParam;
    const std::vector<I> id = {0, 1, 0, 2, 1, 2};
    const I* null_ids = nullptr;
    const double* null_values = nullptr;
    for (auto bounds : {segred::bounds_policy::check, segred::bounds_policy::drop, segred::bounds_policy::unchecked}) {
        SCOPED_TRACE(std::string("bounds ") + (bounds == segred::bounds_policy::check  ? "check"
                                               : bounds == segred::bounds_policy::drop ? "drop"
                                                                                       : "unchecked"));
        guarded<> b(3, 2);
        const auto o = segred::options{}.bounds(bounds).counts(b.counts.data());
        expect_error([&] { segred::accumarray(segred::host, kIn, segred::ids(id.data(), 3), b.view(2), segred::sum{}, o); },
                     {"segred::accumarray", "out has 2 rows but the segments describe M = 3"});
        expect_error([&] { segred::accumarray(segred::host, kIn, segred::ids(id.data(), 3), b.view(3, 2), segred::sum{}, o); },
                     {"out has width 2 but values have width 1"});
        expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::fixed(4, 2), b.view(2), segred::sum{}, o); },
                     {"fixed(4, 2) covers 8 rows but values have 6"});
        expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::fixed(-1, 3), b.view(3), segred::sum{}, o); },
                     {"fixed segment size -1 is negative"});
        expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::ids(id.data(), -1), b.view(3), segred::sum{}, o); },
                     {"the number of segments M = -1 is negative"});
        expect_error([&] { segred::segment_reduce(segred::host, segred::rows(null_values, 6), segred::ids(id.data(), 3),
                                                  b.view(3), segred::sum{}, o); },
                     {"values is null but has 6 rows"});
        expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::ids(id.data(), 3),
                                                  segred::rows(static_cast<double*>(nullptr), 3), segred::sum{}, o); },
                     {"out is null but has 3 rows"});
        expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::ids(null_ids, 3), b.view(3), segred::sum{}, o); },
                     {"ids are null but values have 6 rows"});
        expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::sorted_ids(null_ids, 3), b.view(3),
                                                  segred::sum{}, o); },
                     {"ids are null"});
        expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::offsets(null_ids, 3), b.view(3),
                                                  segred::sum{}, o); },
                     {"offsets are null"});
        expect_error([&] { segred::segment_reduce(segred::host, kIn, segred::lengths(null_ids, 3), b.view(3),
                                                  segred::sum{}, o); },
                     {"lengths are null"});
        expect_error([&] { segred::accumarray(segred::host, kIn, segred::subscripts(null_ids, {3}), b.view(3),
                                              segred::sum{}, o); },
                     {"subscripts are null"});
        expect_error([&] { segred::segment_reduce(segred::host, segred::rows(kValues.data(), 6, 0), segred::fixed(2, 3),
                                                  b.view(3), segred::sum{}, o); },
                     {"values has width 0"});
        expect_error([&] { segred::segment_reduce(segred::host, segred::rows(kValues.data(), -1), segred::fixed(2, 3),
                                                  b.view(3), segred::sum{}, o); },
                     {"values has a negative row count -1"});
        // count may have a single column, but no other width.
        const auto in3 = segred::rows(kValues.data(), 2, 3);
        const std::vector<I> id2 = {0, 2};
        expect_error([&] { segred::segment_reduce(segred::host, in3, segred::ids(id2.data(), 3), b.view(3, 2),
                                                  segred::count{}, o); },
                     {"out has width 2 but values have width 3"});
        b.expect_untouched();
    }
}

TYPED_TEST(Errors, OptionsNotAllowed) {
    using I = TypeParam;
    const std::vector<I> id = {0, 1, 0, 2, 1, 2};
    const auto seg = segred::ids(id.data(), 3);
    guarded<> b(3);
    expect_error([&] { segred::accumarray(segred::host, kIn, seg, b.view(3), segred::sum{}, b.opts_arg()); },
                 {"segred::accumarray", "arg_out needs min, max, argmin or argmax, not sum"});
    expect_error([&] { segred::accumarray(segred::host, kIn, seg, b.view(3), segred::mean{}, b.opts_arg()); },
                 {"not mean"});
    expect_error([&] { segred::accumarray(segred::host, kIn, seg, b.view(3), segred::argmax{}, b.opts().accumulate()); },
                 {"accumulate is not defined for argmax"});
    expect_error([&] { segred::accumarray(segred::host, kIn, seg, b.view(3), segred::argmin{}, b.opts().accumulate()); },
                 {"accumulate is not defined for argmin"});
    expect_error([&] { segred::accumarray(segred::host, kIn, seg, b.view(3), segred::var{}, b.opts().accumulate()); },
                 {"accumulate is not defined for var"});
    expect_error([&] { segred::accumarray(segred::host, kIn, seg, b.view(3), segred::stddev{1}, b.opts().accumulate()); },
                 {"accumulate is not defined for std"});
    expect_error([&] { segred::accumarray(segred::host, kIn, seg, b.view(3), segred::max{},
                                          b.opts_arg().accumulate()); },
                 {"accumulate cannot be combined with arg_out"});
    b.expect_untouched();
    guarded<std::int32_t> bi(3);
    expect_error([&] { segred::accumarray(segred::host, kIn, seg, bi.view(3), segred::sum{}, bi.opts().fill_nan()); },
                 {"fill_nan() needs a floating-point output"});
    bi.expect_untouched();
    guarded<std::int64_t> ba(3);
    expect_error([&] { segred::accumarray(segred::host, kIn, seg, ba.view(3), segred::argmax{}, ba.opts().fill_nan()); },
                 {"fill_nan()"});
    ba.expect_untouched();
}

TYPED_TEST(Errors, Bincount) {
    using I = TypeParam;
    const std::vector<I> id = {2, 0, 5, 1}, ok = {0, 1, 1, 0};
    guarded<std::int64_t> b(3);
    expect_error([&] { segred::bincount(segred::host, segred::rows(id.data(), 4), b.view(3),
                                        segred::options{}.accumulate()); },
                 {"segred::bincount: ids[2] = 5 is out of range [0, 3)"});
    b.expect_untouched();
    guarded<> w(3);
    const std::vector<double> weights = {1, 2, 3, 4};
    expect_error([&] { segred::bincount(segred::host, segred::rows(weights.data(), 4), segred::rows(id.data(), 4),
                                        w.view(3)); },
                 {"segred::bincount: ids[2] = 5"});
    expect_error([&] { segred::bincount(segred::host, segred::rows(weights.data(), 3), segred::rows(ok.data(), 4),
                                        w.view(3)); },
                 {"weights have 3 rows but ids have 4"});
    expect_error([&] { segred::bincount(segred::host, segred::rows(ok.data(), 2, 2), w.view(3)); },
                 {"ids must have width 1"});
    expect_error([&] { segred::bincount(segred::host, segred::rows(ok.data(), 4), segred::rows(w.out.data(), 1, 3)); },
                 {"out must have width 1"});
    expect_error([&] { segred::bincount(segred::host, segred::rows(static_cast<const I*>(nullptr), 4), w.view(3)); },
                 {"ids is null but has 4 rows"});
    w.expect_untouched();
}

TYPED_TEST(Errors, GatherAndBackward) {
    using I = TypeParam;
    const std::vector<double> src = {1, 2, 3, 4, 5, 6};  // [3, 2]
    const std::vector<I> id = {0, 5, 2, -1}, ok = {0, 1, 2, 1};
    guarded<> b(4, 2);
    expect_error([&] { segred::gather(segred::host, segred::rows(src.data(), 3, 2), segred::rows(id.data(), 4),
                                      b.view(4, 2)); },
                 {"segred::gather: ids[1] = 5 is out of range [0, 3)"});
    expect_error([&] { segred::gather(segred::host, segred::rows(src.data(), 3, 2), segred::rows(ok.data(), 4),
                                      b.view(3, 2)); },
                 {"out has 3 rows but ids have 4"});
    expect_error([&] { segred::gather(segred::host, segred::rows(src.data(), 3, 2), segred::rows(ok.data(), 4),
                                      segred::rows(b.out.data(), 4, 1)); },
                 {"out has width 1 but src has width 2"});
    expect_error([&] { segred::gather(segred::host, segred::rows(static_cast<const double*>(nullptr), 3, 2),
                                      segred::rows(ok.data(), 4), b.view(4, 2)); },
                 {"src is null"});
    b.expect_untouched();
    guarded<std::int32_t> bi(4, 2);
    expect_error([&] { segred::gather(segred::host, segred::rows(src.data(), 3, 2), segred::rows(ok.data(), 4),
                                      bi.view(4, 2), segred::options{}.fill_nan()); },
                 {"fill_nan()"});
    bi.expect_untouched();
    // gather_backward: grad_out [4, 2] scattered into grad_src [3, 2].
    const std::vector<double> go = {1, 1, 1, 1, 1, 1, 1, 1};
    for (bool acc : {false, true}) {
        guarded<> gs(3, 2);
        expect_error([&] { segred::gather_backward(segred::host, segred::rows(go.data(), 4, 2),
                                                   segred::rows(id.data(), 4), gs.view(3, 2),
                                                   segred::options{}.accumulate(acc)); },
                     {"segred::gather_backward: ids[1] = 5 is out of range [0, 3)"});
        expect_error([&] { segred::gather_backward(segred::host, segred::rows(go.data(), 3, 2),
                                                   segred::rows(ok.data(), 4), gs.view(3, 2)); },
                     {"grad_out has 3 rows but ids have 4"});
        expect_error([&] { segred::gather_backward(segred::host, segred::rows(go.data(), 4, 2),
                                                   segred::rows(ok.data(), 4), gs.view(3, 1)); },
                     {"width"});
        gs.expect_untouched();
    }
}

TYPED_TEST(Errors, Softmax) {
    using I = TypeParam;
    const std::vector<I> id = {0, 1, 3, 1, 0, 2}, ok = {0, 1, 0, 1, 0, 2};
    guarded<> b(6);
    expect_error([&] { segred::segment_softmax(segred::host, kIn, segred::ids(id.data(), 3), b.view(6)); },
                 {"segred::segment_softmax: ids[2] = 3 is out of range [0, 3)"});
    const std::vector<I> dec = {0, 4, 2, 6};
    expect_error([&] { segred::segment_softmax(segred::host, kIn, segred::offsets(dec.data(), 3), b.view(6)); },
                 {"offsets[2] = 2 is less than offsets[1] = 4"});
    expect_error([&] { segred::segment_softmax(segred::host, kIn, segred::ids(ok.data(), 3), b.view(5)); },
                 {"out is [5, 1] but values are [6, 1]"});
    expect_error([&] { segred::segment_softmax(segred::host, kIn, segred::ids(ok.data(), 3), b.view(6),
                                               segred::options{}.accumulate()); },
                 {"accumulate"});
    expect_error([&] { segred::segment_softmax(segred::host, kIn, segred::ids(ok.data(), 3), b.view(6),
                                               segred::options{}.arg_out(b.arg.data())); },
                 {"arg_out"});
    b.expect_untouched();
}

TEST(ErrorsOut, GatherRefusesReductionOptions) {
    const std::vector<double> src = {1, 2, 3};
    const std::vector<std::int32_t> ids = {2, 0};
    std::vector<double> out = {9, 9};
    std::vector<std::int64_t> counts(3, -1);
    const auto call = [&](segred::options o) {
        segred::gather(segred::host, segred::rows(src.data(), 3), segred::rows(ids.data(), 2), segred::rows(out.data(), 2),
                       o);
    };
    expect_error([&] { call(segred::options{}.accumulate()); }, {"segred::gather", "accumulate is not defined for gather"});
    expect_error([&] { call(segred::options{}.counts(counts.data())); }, {"counts are not defined for gather"});
    EXPECT_EQ(out, (std::vector<double>{9, 9}));
}

TEST(ErrorsOut, SubscriptShapeOverflow) {
    const std::vector<double> v = {1};
    const std::vector<std::int64_t> subs = {0, 0, 0};
    std::vector<double> out(1, 5.0);
    const std::int64_t huge = std::int64_t(1) << 40;
    expect_error([&] { segred::accumarray(segred::host, segred::rows(v.data(), 1), segred::subscripts(subs.data(), {huge, huge, 4}),
                                          segred::rows(out.data(), 1)); },
                 {"segred::accumarray", "more than 2^63 - 1 cells", "shape[1]"});
    EXPECT_EQ(out, std::vector<double>(1, 5.0));
}

} // namespace
