// Built by the C++ compiler alone, with no CUDA on the include path and with
// -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Werror: the umbrella header
// and every algorithm instantiated below must compile warning-free, since
// users build with warnings as errors. Prints OK when the results are right.
#include <segred/segred.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

namespace {

int failures = 0;

template <class T, class U>
void expect_eq(const char* what, const std::vector<T>& got, const std::vector<U>& want) {
    bool ok = got.size() == want.size();
    for (std::size_t i = 0; ok && i < got.size(); ++i) {
        const double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
        ok = (std::isnan(g) && std::isnan(w)) || g == w;
    }
    if (!ok) {
        std::printf("FAIL %s\n", what);
        ++failures;
    }
}

// One reducer over every segment descriptor, for one value, index and output
// type.
template <class T, class I, class O = T, class R>
void all_descriptors(const R& r) {
    const std::vector<T> v = {T(1), T(2), T(3), T(4), T(5), T(6)};
    const std::vector<I> off = {0, 2, 4, 6};
    const std::vector<I> len = {2, 2, 2};
    const std::vector<I> sid = {0, 0, 1, 1, 2, 2};
    const std::vector<I> uid = {2, 0, 1, 0, 1, 2};
    const std::vector<I> sub = {0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1};  // [6, 2] into a 2 x 2 output
    std::vector<O> out(3);
    std::vector<O> out4(4);
    const auto values = segred::rows(v.data(), 6);
    const auto o = segred::rows(out.data(), 3);
    segred::segment_reduce(segred::host, values, segred::offsets(off.data(), 3), o, r);
    segred::segment_reduce(segred::host, values, segred::lengths(len.data(), 3), o, r);
    segred::segment_reduce(segred::host, values, segred::sorted_ids(sid.data(), 3), o, r);
    segred::segment_reduce(segred::host, values, segred::ids(uid.data(), 3), o, r);
    segred::segment_reduce(segred::host, values, segred::fixed(2, 3), o, r, segred::options{}.fill_identity());
    segred::accumarray(segred::host, values, segred::ids(uid.data(), 3), o, r);
    segred::accumarray(segred::host, values, segred::subscripts(sub.data(), {2, 2}), segred::rows(out4.data(), 4), r,
                       segred::options{}.bounds(segred::bounds_policy::drop));
}

template <class T, class I>
void all_reducers() {
    all_descriptors<T, I>(segred::sum{});
    all_descriptors<T, I>(segred::prod{});
    all_descriptors<T, I>(segred::min{});
    all_descriptors<T, I>(segred::max{});
    all_descriptors<T, I>(segred::mean{});
    all_descriptors<T, I>(segred::count{});
    all_descriptors<T, I>(segred::argmin{});
    all_descriptors<T, I>(segred::argmax{});
    all_descriptors<T, I>(segred::any{});
    all_descriptors<T, I>(segred::all{});
    // var, stddev and logsumexp need a floating-point output.
    all_descriptors<T, I, double>(segred::logsumexp{});
    all_descriptors<T, I, double>(segred::var{1});
    all_descriptors<T, I, float>(segred::stddev{});
    all_descriptors<T, I>(segred::reducer([](T a, T b) { return a > b ? a : b; }, T(0)));
}

} // namespace

int run() {
    all_reducers<float, std::int32_t>();
    all_reducers<double, std::int64_t>();
    all_reducers<std::int32_t, std::int32_t>();
    all_reducers<std::int64_t, std::int64_t>();

    // Worked example: group sum and max with arg out by unsorted ids.
    const std::vector<double> v = {10, 20, 30, 40, 50, 10};
    const std::vector<std::int64_t> id = {0, 1, 0, 2, 1, 2};
    std::vector<double> out(3);
    std::vector<std::int64_t> arg(3);
    segred::accumarray(segred::host, segred::rows(v.data(), 6), segred::ids(id.data(), 3),
                       segred::rows(out.data(), 3), segred::max{}, segred::options{}.arg_out(arg.data()));
    expect_eq("max", out, std::vector<double>{30, 50, 40});
    expect_eq("argmax", arg, std::vector<std::int64_t>{2, 4, 3});

    // Missing ids with a NaN fill, counts out.
    const std::vector<float> d = {1, 2, 3, 4, 5, 6};
    const std::vector<std::int32_t> gid = {0, 0, 2, 2, 2, 4};
    std::vector<float> sums(5);
    std::vector<std::int64_t> counts(5);
    segred::segment_reduce(segred::host.threads(1), segred::rows(d.data(), 6), segred::ids(gid.data(), 5),
                           segred::rows(sums.data(), 5), segred::sum{},
                           segred::options{}.fill_nan().counts(counts.data()));
    expect_eq("sum fill_nan", sums, std::vector<double>{3, NAN, 12, NAN, 6});
    expect_eq("counts", counts, std::vector<std::int64_t>{2, 0, 3, 0, 1});

    // bincount, plain and weighted with a feature width.
    std::vector<std::int64_t> bins(5);
    segred::bincount(segred::host, segred::rows(gid.data(), 6), segred::rows(bins.data(), 5));
    expect_eq("bincount", bins, std::vector<std::int64_t>{2, 0, 3, 0, 1});
    std::vector<float> wbins(10);
    const std::vector<float> w2 = {1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6};
    segred::bincount(segred::host, segred::rows(w2.data(), 6, 2), segred::rows(gid.data(), 6),
                     segred::rows(wbins.data(), 5, 2));
    expect_eq("weighted bincount", wbins, std::vector<double>{3, 3, 0, 0, 12, 12, 0, 0, 6, 6});

    // gather / gather_backward / segment_softmax.
    const std::vector<double> src = {1, 2, 3, 4, 5, 6};
    const std::vector<std::int32_t> gi = {2, 0, 2, 1};
    std::vector<double> g(8), grad(6);
    segred::gather(segred::host, segred::rows(src.data(), 3, 2), segred::rows(gi.data(), 4), segred::rows(g.data(), 4, 2));
    expect_eq("gather", g, std::vector<double>{5, 6, 1, 2, 5, 6, 3, 4});
    segred::gather_backward(segred::host, segred::rows(g.data(), 4, 2), segred::rows(gi.data(), 4),
                            segred::rows(grad.data(), 3, 2));
    expect_eq("gather_backward", grad, std::vector<double>{1, 2, 3, 4, 10, 12});
    std::vector<float> sm(6);
    const std::vector<std::int64_t> off = {0, 2, 6};
    segred::segment_softmax(segred::host, segred::rows(d.data(), 6), segred::offsets(off.data(), 2),
                            segred::rows(sm.data(), 6));
    const float s0 = sm[0] + sm[1], s1 = sm[2] + sm[3] + sm[4] + sm[5];
    if (std::fabs(s0 - 1.0f) > 1e-6f || std::fabs(s1 - 1.0f) > 1e-6f) {
        std::printf("FAIL segment_softmax\n");
        ++failures;
    }

    // Bad input throws segred::error.
    bool threw = false;
    try {
        const std::vector<std::int64_t> bad = {0, 3, 0, 0, 0, 0};
        segred::segment_reduce(segred::host, segred::rows(d.data(), 6), segred::ids(bad.data(), 3),
                               segred::rows(sums.data(), 3));
    } catch (const segred::error&) {
        threw = true;
    }
    if (!threw) {
        std::printf("FAIL no segred::error for an out-of-range id\n");
        ++failures;
    }

    if (failures != 0) return 1;
    std::printf("OK\n");
    return 0;
}

int main() {
    try {
        return run();
    } catch (const std::exception& e) {
        std::printf("FAIL unexpected exception: %s\n", e.what());
        return 1;
    }
}
