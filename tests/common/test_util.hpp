// tests/common/test_util.hpp -- seeds, comparisons and type lists shared by
// segred's GoogleTest suites (host now, CUDA later).
//
// Seeds: every run draws a fresh base seed from std::random_device unless the
// environment variable SEGRED_TEST_SEED sets it. Each test mixes the base seed
// with its own name, so a failure is reproduced by rerunning with the printed
// SEGRED_TEST_SEED (and --gtest_filter for speed). SEGRED_SEEDED_RNG(g)
// declares the generator and a SCOPED_TRACE that prints the seed with every
// failure.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "reference.hpp"

namespace segtest {

using i64 = std::int64_t;

inline std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// The run's base seed: SEGRED_TEST_SEED if set, else fresh from random_device.
inline std::uint64_t base_seed() {
    static const std::uint64_t seed = [] {
        if (const char* e = std::getenv("SEGRED_TEST_SEED"))
            if (*e) return static_cast<std::uint64_t>(std::strtoull(e, nullptr, 0));
        std::random_device rd;
        return (static_cast<std::uint64_t>(rd()) << 32) ^ static_cast<std::uint64_t>(rd());
    }();
    return seed;
}

inline std::string current_test_name() {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    if (info == nullptr) return std::string();
    return std::string(info->test_suite_name()) + "." + info->name();
}

// The seed of the running test: the base seed mixed with the test's name.
inline std::uint64_t test_seed() {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the name
    for (char c : current_test_name()) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return splitmix64(base_seed() ^ h);
}

inline std::string seed_note() {
    return "random inputs: reproduce with SEGRED_TEST_SEED=" + std::to_string(base_seed()) +
           " --gtest_filter=" + current_test_name();
}

#define SEGRED_SEEDED_RNG(g)                                                                                        \
    ::segref::rng g(::segtest::test_seed());                                                                        \
    SCOPED_TRACE(::segtest::seed_note())

// ---------------------------------------------------------------------------
// Comparisons

inline std::string fmt(double v) {
    std::ostringstream os;
    os.precision(17);
    os << v;
    return os.str();
}

// got[i] against the reference ref[i], both compared in double:
//   NaN matches only NaN, an infinity only the same infinity, and otherwise
//   |got - ref| <= rtol * scale[i] (scale == nullptr or rtol == 0: exact).
// ref values should already be converted with segref::as_out<O>.
template <class O>
::testing::AssertionResult near_all(const std::vector<O>& got, const std::vector<double>& ref,
                                    const std::vector<double>* scale, double rtol, const char* what = "out") {
    if (got.size() != ref.size())
        return ::testing::AssertionFailure() << what << ": size " << got.size() << " vs reference " << ref.size();
    std::ostringstream bad;
    int nbad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double g = static_cast<double>(got[i]), r = ref[i];
        bool ok;
        if (std::isnan(r)) ok = std::isnan(g);
        else if (std::isinf(r) || std::isnan(g) || std::isinf(g)) ok = g == r;
        else if (rtol == 0.0 || scale == nullptr) ok = g == r;
        else ok = std::fabs(g - r) <= rtol * (*scale)[i];
        if (!ok) {
            if (nbad < 8) {
                bad << "\n  " << what << "[" << i << "] = " << fmt(g) << ", reference " << fmt(r);
                if (scale && rtol != 0.0) bad << " (allowed error " << fmt(rtol * (*scale)[i]) << ")";
            }
            ++nbad;
        }
    }
    if (nbad == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << nbad << " of " << got.size() << " elements of " << what
                                         << " differ:" << bad.str();
}

// Exact equality of two sequences, with the first differences listed.
template <class A, class B>
::testing::AssertionResult equal_all(const std::vector<A>& got, const std::vector<B>& ref, const char* what = "out") {
    std::vector<double> r(ref.begin(), ref.end());
    return near_all(got, r, nullptr, 0.0, what);
}

// Same bits, element by element (NaN payloads included): determinism checks.
template <class T>
::testing::AssertionResult same_bits(const std::vector<T>& a, const std::vector<T>& b, const char* what = "out") {
    if (a.size() != b.size()) return ::testing::AssertionFailure() << what << ": sizes differ";
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0)
            return ::testing::AssertionFailure() << what << "[" << i << "] differs: " << fmt(static_cast<double>(a[i]))
                                                 << " vs " << fmt(static_cast<double>(b[i]));
    return ::testing::AssertionSuccess();
}

// Two values with the same bits, or both NaN (of any payload): a promised
// order of float operations, checked one value at a time.
template <class T>
bool same_bits_or_both_nan(T a, T b) {
    if (std::isnan(a) && std::isnan(b)) return true;
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// The reference converted to out's element type.
template <class O>
std::vector<double> as_out(const std::vector<double>& ref) {
    std::vector<double> r(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) r[i] = segref::as_out<O>(ref[i]);
    return r;
}

// Relative tolerance (against the reference's per-element scale) for op
// computed over values of type T: 0 means exact.
template <class T>
double rtol_for(segref::op o) {
    using segref::op;
    switch (o) {
    case op::min:
    case op::max:
    case op::count:
    case op::argmin:
    case op::argmax:
    case op::any:
    case op::all:
    case op::maxabs: return 0.0;
    default: break;
    }
    if (std::is_integral<T>::value) {
        // Sums, products and means of integers are exact in int64 / double;
        // var, std and logsumexp of integers run in double, so they get
        // double's tolerance (a 200000-row variance folded in pieces and
        // combined by Chan's formula measured 2e-12 off the reference).
        return (o == op::sum || o == op::prod || o == op::mean) ? 0.0 : 1e-10;
    }
    if (std::is_same<T, double>::value) return 1e-10;
    switch (o) {  // float accumulates in float
    case op::sum:
    case op::mean: return 1e-4;
    case op::prod:
    case op::logsumexp: return 1e-4;
    case op::var: return 1e-3;
    case op::stddev: return 3e-3;
    default: return 1e-4;
    }
}

// ---------------------------------------------------------------------------
// Typed-test plumbing: (value type, index type) pairs.

template <class V, class I>
struct vi {
    using value = V;
    using index = I;
};

template <class T>
const char* type_name() {
    if (std::is_same<T, float>::value) return "f32";
    if (std::is_same<T, double>::value) return "f64";
    if (std::is_same<T, std::int32_t>::value) return "i32";
    if (std::is_same<T, std::int64_t>::value) return "i64";
    return "other";
}

struct vi_names {
    template <class P>
    static std::string GetName(int) {
        return std::string(type_name<typename P::value>()) + "_" + type_name<typename P::index>();
    }
};

using all_value_index_pairs =
    ::testing::Types<vi<float, std::int32_t>, vi<float, std::int64_t>, vi<double, std::int32_t>,
                     vi<double, std::int64_t>, vi<std::int32_t, std::int32_t>, vi<std::int32_t, std::int64_t>,
                     vi<std::int64_t, std::int32_t>, vi<std::int64_t, std::int64_t>>;

// Compile time: every segment_reduce instantiation costs ~0.25 s at -O1 -g
// (more with the test harness), so the heavy suites use smaller lists.
// Each value type once, each index type twice:
using value_index_diagonal = ::testing::Types<vi<float, std::int32_t>, vi<double, std::int64_t>,
                                              vi<std::int32_t, std::int64_t>, vi<std::int64_t, std::int32_t>>;
// One floating-point and one integer value type, each index type once:
using value_index_pair = ::testing::Types<vi<float, std::int64_t>, vi<std::int32_t, std::int32_t>>;

using float_value_pairs = ::testing::Types<vi<float, std::int32_t>, vi<double, std::int64_t>>;

// ---------------------------------------------------------------------------
// Memory access for a backend. The host keeps everything in std::vector; a
// CUDA version supplies device buffers with .data() and copies in to_host.
// A vector of T from literal values (hand-written cases for every value type).
template <class T>
std::vector<T> vals(std::initializer_list<double> v) {
    std::vector<T> r;
    for (double x : v) r.push_back(static_cast<T>(x));
    return r;
}

struct host_memory {
    template <class T>
    std::vector<T> to_device(const std::vector<T>& h) const { return h; }
    template <class T>
    std::vector<T> to_host(const std::vector<T>& d) const { return d; }
};

} // namespace segtest
