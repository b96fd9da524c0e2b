// Host benchmarks: segred's CPU backend against a copy of the same bytes,
// measured in the same process, at 1 thread, 2 threads and all cores (when
// there are more than 2; the policy is segred::host.threads(k)).
//
// Every case is named
//
//   BM_Host/<op>/<form>/<dist>/<param>/<dtype>/<idtype>/w<width>/t<threads>
//
// (Google Benchmark appends /real_time), "-" where a field does not apply
// (the copy is BM_Host/memcpy/-/-/64MiB/-/-/w1/t<threads>):
//
//   op      memcpy, sum, mean, max, argmax (segment_reduce), bincount (weighted),
//           gather_backward
//   form    sorted_ids, offsets (CSR), ids (unsorted)
//   dist    sorted:   const (every segment len<L> rows), powerlaw (Pareto lengths,
//                     alpha a<alpha>), empty90 (M<M> segments, 90% of them empty)
//           unsorted: uniform, zipf (s = 1.1), equal (every id the same); M<M> ids
//   dtype   f32, f64        idtype  i32, i64
//
// and reports the counters
//
//   GB/s         model bytes per second: each input read once, each output
//                written once (values + ids or offsets + out)
//   frac_memcpy  GB/s over the GB/s of a copy of the same 64 MiB at the same
//                thread count, measured at the start of this run (best of 10;
//                also in the run's context as memcpy_GB/s_t<threads>)
//   M            number of segments (output rows), on the reductions
//
// The main sweep (every segment length, distribution and M) is fp32, int32
// ids, width 1, sum. Cross-sections at segments of 32 rows (both sorted forms)
// and at uniform ids with M = 2^14 and 2^22 vary one thing at a time: fp64,
// int64 ids, width 64, mean, max, argmax, and for ids weighted bincount and
// gather_backward. Width 64 keeps the bytes of width 1: N / 64 rows, and for
// ids M / 64 segments (so those names say M256 and M65536). Max and argmax also
// run over offsets of 1024 rows and of power-law lengths; sums over 90%
// empty segments from int64 offsets too. The full run, 138 cases, takes
// about 2 minutes on 2 cores; bench/peers/host_peers.py runs the
// matching cases beside NumPy and PyTorch.
//
//   segred_host_bench                                         # everything
//   segred_host_bench --benchmark_filter='/ids/zipf/' --benchmark_min_time=0.1
//   segred_host_bench --benchmark_format=json > host.json     # for scripts
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include <segred/segred.hpp>

namespace {

// Values per case: N rows of width 1, or N / 64 rows of width 64, so that every
// width reads the same bytes of values.
constexpr std::int64_t N = std::int64_t(1) << 24;

std::vector<int> thread_counts() {
    std::vector<int> ts{1};
#if defined(_OPENMP)
    const int all = omp_get_max_threads();
    if (all >= 2) ts.push_back(2);
    if (all > 2) ts.push_back(all);
#endif
    return ts;
}

// ---------------------------------------------------------------------------
// Inputs, made outside the timed loop.

template <class T>
const std::vector<T>& values() {
    static const std::vector<T> v = [] {
        std::vector<T> x(static_cast<std::size_t>(N));
        std::mt19937 g(1);
        std::uniform_real_distribution<T> d(-1, 1);
        for (T& e : x) e = d(g);
        return x;
    }();
    return v;
}

// Inputs shared by consecutive cases (the thread counts, reducers and value
// types at one point are registered next to each other) are kept for them; only
// the few most recent are, so memory stays at a few arrays of N.
template <class V>
const V& recent(const std::string& key, const std::function<V()>& make) {
    static std::deque<std::pair<std::string, std::unique_ptr<const V>>> kept;
    for (const auto& e : kept)
        if (e.first == key) return *e.second;
    if (kept.size() == 3) kept.pop_front();
    kept.emplace_back(key, std::make_unique<const V>(make()));
    return *kept.back().second;
}

// What a case reduces over: its distribution and parameter.
struct layout {
    std::string dist;
    double param; // segment length (const), alpha (powerlaw), M (the others)

    std::string label() const {
        std::ostringstream s;
        if (dist == "const") s << "len" << static_cast<std::int64_t>(param);
        else if (dist == "powerlaw") s << 'a' << param;
        else s << 'M' << static_cast<std::int64_t>(param);
        return s.str();
    }
};

// Lengths of consecutive segments that cover n rows.
std::vector<std::int64_t> sorted_lengths(const layout& l, std::int64_t n) {
    std::vector<std::int64_t> len;
    std::mt19937 g(3);
    if (l.dist == "const") {
        const auto L = static_cast<std::int64_t>(l.param);
        if (n % L != 0) throw std::logic_error("segment length must divide the row count");
        len.assign(static_cast<std::size_t>(n / L), L);
    } else if (l.dist == "powerlaw") {
        // Pareto with minimum 1: P(length > x) = x^-alpha, mean about 3 rows at
        // alpha 1.5, clipped at 2^20 rows (the longest const case); the last
        // segment is cut to end at row n.
        std::uniform_real_distribution<double> u(0, 1);
        for (std::int64_t left = n; left > 0;) {
            const double x = std::pow(1.0 - u(g), -1.0 / l.param);
            const auto L = std::min(static_cast<std::int64_t>(std::min(x, 1048576.0)), left);
            len.push_back(L);
            left -= L;
        }
    } else if (l.dist == "empty90") {
        // A random tenth of the M segments are non-empty and share the rows evenly.
        const auto M = static_cast<std::int64_t>(l.param);
        std::bernoulli_distribution full(0.1);
        std::vector<std::size_t> nonempty;
        len.assign(static_cast<std::size_t>(M), 0);
        for (std::size_t s = 0; s < len.size(); ++s)
            if (full(g)) nonempty.push_back(s);
        const auto k = static_cast<std::int64_t>(nonempty.size());
        for (std::int64_t j = 0; j < k; ++j)
            len[nonempty[static_cast<std::size_t>(j)]] = n / k + (j < n % k ? 1 : 0);
    } else {
        throw std::logic_error("unknown sorted distribution " + l.dist);
    }
    return len;
}

// Sorted segments in both forms: ids (row -> segment) and CSR offsets.
template <class I>
struct sorted_input {
    std::int64_t M = 0;
    std::vector<I> ids, offsets;
};

template <class I>
sorted_input<I> make_sorted(const layout& l, std::int64_t n) {
    const auto len = sorted_lengths(l, n);
    sorted_input<I> in;
    in.M = static_cast<std::int64_t>(len.size());
    in.ids.reserve(static_cast<std::size_t>(n));
    in.offsets.reserve(len.size() + 1);
    in.offsets.push_back(0);
    for (std::size_t s = 0; s < len.size(); ++s) {
        in.ids.insert(in.ids.end(), static_cast<std::size_t>(len[s]), static_cast<I>(s));
        in.offsets.push_back(static_cast<I>(in.ids.size()));
    }
    return in;
}

// Unsorted ids in [0, M).
template <class I>
std::vector<I> make_unsorted(const layout& l, std::int64_t n) {
    const auto M = static_cast<std::int64_t>(l.param);
    std::vector<I> ids(static_cast<std::size_t>(n));
    std::mt19937 g(2);
    if (l.dist == "uniform") {
        std::uniform_int_distribution<std::int64_t> d(0, M - 1);
        for (I& x : ids) x = static_cast<I>(d(g));
    } else if (l.dist == "zipf") {
        // Rank k (from 0) drawn with probability proportional to (k + 1)^-1.1 by
        // inverting the cumulative weights. Ranks are spread over [0, M) by a
        // multiplication with a prime larger than any M (a bijection), so the
        // skew does not also hand the hot ids perfect locality.
        std::vector<double> cdf(static_cast<std::size_t>(M));
        double total = 0;
        for (std::size_t k = 0; k < cdf.size(); ++k) cdf[k] = total += std::pow(static_cast<double>(k + 1), -1.1);
        std::uniform_real_distribution<double> u(0, total);
        for (I& x : ids) {
            const auto k = std::min<std::int64_t>(std::upper_bound(cdf.begin(), cdf.end(), u(g)) - cdf.begin(), M - 1);
            x = static_cast<I>((static_cast<std::uint64_t>(k) * 2654435761u) % static_cast<std::uint64_t>(M));
        }
    } else if (l.dist == "equal") {
        std::fill(ids.begin(), ids.end(), static_cast<I>(M / 2));
    } else {
        throw std::logic_error("unknown unsorted distribution " + l.dist);
    }
    return ids;
}

// ---------------------------------------------------------------------------
// The memcpy reference.

// A copy split into one contiguous piece per thread, as a bandwidth-bound
// reduction would share the rows.
void copy_bytes(void* dst, const void* src, std::size_t bytes, int threads) {
#if defined(_OPENMP)
#pragma omp parallel num_threads(threads)
    {
        const auto k = static_cast<std::size_t>(omp_get_thread_num());
        const auto parts = static_cast<std::size_t>(omp_get_num_threads());
        const std::size_t lo = bytes / parts * k, hi = k + 1 == parts ? bytes : bytes / parts * (k + 1);
        std::memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, hi - lo);
    }
#else
    (void)threads;
    std::memcpy(dst, src, bytes);
#endif
}

constexpr std::size_t copy_size = static_cast<std::size_t>(N) * sizeof(float); // 64 MiB

// Destination of the copies; written once before any timing, so first-touch
// page faults are not counted as copying.
std::vector<float>& copy_target() {
    static std::vector<float> out(static_cast<std::size_t>(N), 1.0f);
    return out;
}

// GB/s (read + write) of the copy at each thread count: the best of 10 after a
// warm-up (other load on the machine only ever slows a copy down). Measured
// before the cases, so that every case has its fraction whatever
// --benchmark_filter leaves out, and shown in the run's context.
std::map<int, double>& memcpy_gbps() {
    static std::map<int, double> measured;
    return measured;
}

void measure_memcpy(const std::vector<int>& ts) {
    for (int t : ts) {
        double best = 0;
        for (int r = 0; r < 11; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            copy_bytes(copy_target().data(), values<float>().data(), copy_size, t);
            const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
            if (r > 0) best = std::max(best, 2.0 * static_cast<double>(copy_size) / dt.count() / 1e9);
        }
        memcpy_gbps()[t] = best;
        benchmark::AddCustomContext("memcpy_GB/s_t" + std::to_string(t), std::to_string(best));
    }
}

// Runs the timed loop and reports GB/s of `bytes` per call and the fraction of
// the copy. The loop is timed here as well, so that the counters are plain
// numbers (GB/s, not bytes per second) in both the console and the JSON.
template <class Call>
void measure(benchmark::State& st, int threads, double bytes, Call&& call) {
    const auto t0 = std::chrono::steady_clock::now();
    for (auto _ : st) {
        call();
        benchmark::ClobberMemory();
    }
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    const double gbps = bytes * static_cast<double>(st.iterations()) / dt.count() / 1e9;
    st.counters["GB/s"] = gbps;
    st.counters["frac_memcpy"] = gbps / memcpy_gbps().at(threads);
}

// ---------------------------------------------------------------------------
// Cases.

struct spec {
    std::string op, form;
    layout lay;
    int width, threads;
};

template <class T>
const char* dtype_name() { return sizeof(T) == 4 ? "f32" : "f64"; }
template <class I>
const char* idtype_name() { return sizeof(I) == 4 ? "i32" : "i64"; }

// One reduction (segment_reduce, bincount, gather_backward) of the N values
// viewed as N / width rows, with output element type O.
template <class T, class I, class O, class Seg, class Call>
void reduce_case(benchmark::State& st, const spec& s, const Seg& seg, std::int64_t index_count, Call&& run) {
    const std::int64_t n = N / s.width, M = seg.num_segments();
    std::vector<O> out(static_cast<std::size_t>(M * s.width));
    const auto vals = segred::rows(values<T>().data(), n, s.width);
    const auto dst = segred::rows(out.data(), M, s.width);
    const auto pol = segred::host.threads(s.threads);
    const double bytes = static_cast<double>(n * s.width) * sizeof(T) + static_cast<double>(index_count) * sizeof(I) +
                         static_cast<double>(M * s.width) * sizeof(O);
    measure(st, s.threads, bytes, [&] { run(pol, vals, seg, dst); });
    st.counters["M"] = static_cast<double>(M);
}

template <class T, class I, class Seg>
void op_case(benchmark::State& st, const spec& s, const Seg& seg, std::int64_t index_count, const I* ids) {
    const auto opts = segred::options{}.bounds(segred::bounds_policy::unchecked);
    const auto reduce = [&](auto reducer) {
        return [&opts, reducer](const auto& pol, const auto& v, const auto& g, const auto& o) {
            segred::segment_reduce(pol, v, g, o, reducer, opts);
        };
    };
    const std::int64_t n = N / s.width;
    if (s.op == "sum") reduce_case<T, I, T>(st, s, seg, index_count, reduce(segred::sum{}));
    else if (s.op == "mean") reduce_case<T, I, T>(st, s, seg, index_count, reduce(segred::mean{}));
    else if (s.op == "max") reduce_case<T, I, T>(st, s, seg, index_count, reduce(segred::max{}));
    // argmax writes row indices.
    else if (s.op == "argmax") reduce_case<T, I, std::int64_t>(st, s, seg, index_count, reduce(segred::argmax{}));
    else if (s.op == "bincount")
        reduce_case<T, I, T>(st, s, seg, index_count, [&](const auto& pol, const auto& w, const auto&, const auto& o) {
            segred::bincount(pol, w, segred::rows(ids, n), o, opts);
        });
    else if (s.op == "gather_backward")
        reduce_case<T, I, T>(st, s, seg, index_count, [&](const auto& pol, const auto& g, const auto&, const auto& o) {
            segred::gather_backward(pol, g, segred::rows(ids, n), o, opts);
        });
    else throw std::logic_error("unknown op " + s.op);
}

template <class T, class I>
void run_case(benchmark::State& st, const spec& s) {
    const std::int64_t n = N / s.width;
    const std::string key = s.lay.dist + '/' + s.lay.label() + '/' + std::to_string(n) + '/' + idtype_name<I>();
    if (s.form == "ids") {
        const auto& ids = recent<std::vector<I>>(key, [&] { return make_unsorted<I>(s.lay, n); });
        op_case<T, I>(st, s, segred::ids(ids.data(), static_cast<std::int64_t>(s.lay.param)), n, ids.data());
        return;
    }
    const auto& in = recent<sorted_input<I>>(key, [&] { return make_sorted<I>(s.lay, n); });
    if (s.form == "sorted_ids") op_case<T, I>(st, s, segred::sorted_ids(in.ids.data(), in.M), n, in.ids.data());
    else op_case<T, I>(st, s, segred::offsets(in.offsets.data(), in.M), in.M + 1, in.ids.data());
}

template <class T, class I>
void add(const spec& s) {
    const std::string name = "BM_Host/" + s.op + '/' + s.form + '/' + s.lay.dist + '/' + s.lay.label() + '/' +
                             dtype_name<T>() + '/' + idtype_name<I>() + "/w" + std::to_string(s.width) + "/t" +
                             std::to_string(s.threads);
    benchmark::RegisterBenchmark(name.c_str(), [s](benchmark::State& st) { run_case<T, I>(st, s); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
}

void add_memcpy(int threads) {
    const std::string name = "BM_Host/memcpy/-/-/64MiB/-/-/w1/t" + std::to_string(threads);
    benchmark::RegisterBenchmark(name.c_str(), [threads](benchmark::State& st) {
        float* dst = copy_target().data();
        const float* src = values<float>().data();
        measure(st, threads, 2.0 * static_cast<double>(copy_size), [&] { copy_bytes(dst, src, copy_size, threads); });
    })->Unit(benchmark::kMillisecond)->UseRealTime();
}

// Cross-sections at one point, each case varying one thing from fp32, int32,
// width 1, sum (the main sweep's case there). Grouped by ids array so that
// `recent` keeps each one for all its cases. At width 64 there are N / 64 rows
// (same value bytes) and, for ids, M / 64 segments (same rows per segment and
// same output bytes); segments of 32 rows keep 32 rows.
void add_cross_section(const std::string& form, const layout& at, const std::vector<int>& ts) {
    layout wide = at;
    if (form == "ids") wide.param /= 64;
    std::vector<std::string> ops = {"mean", "max", "argmax"};
    if (form == "ids") ops.insert(ops.end(), {"bincount", "gather_backward"});
    for (const auto& op : ops)
        for (int t : ts) add<float, std::int32_t>({op, form, at, 1, t});
    for (int t : ts) add<double, std::int32_t>({"sum", form, at, 1, t});
    for (int t : ts) add<float, std::int64_t>({"sum", form, at, 1, t});
    for (int t : ts) add<float, std::int32_t>({"sum", form, wide, 64, t});
    if (form == "ids")
        for (int t : ts) add<float, std::int32_t>({"gather_backward", form, wide, 64, t});
}

void register_cases(const std::vector<int>& ts) {
    for (int t : ts) add_memcpy(t);

    // Main sweep: fp32, int32 ids, width 1, sum.
    const std::vector<layout> sorted = {{"const", 1},       {"const", 4},        {"const", 32},
                                        {"const", 1024},    {"const", 1 << 20},  {"powerlaw", 1.5},
                                        {"empty90", N / 4}};
    for (const auto& lay : sorted)
        for (const char* form : {"sorted_ids", "offsets"})
            for (int t : ts) add<float, std::int32_t>({"sum", form, lay, 1, t});
    // 90% empty segments from int64 offsets: their runs of empty segments
    // found by compares of 64-bit bounds.
    for (int t : ts) add<float, std::int64_t>({"sum", "offsets", {"empty90", N / 4}, 1, t});
    // max and argmax beside the sum on long and power-law segments: the
    // vector lanes of max over long runs, argmax's blocks, and short runs
    // folded a register of them at a time.
    for (const layout& lay : {layout{"const", 1024}, layout{"powerlaw", 1.5}})
        for (const char* op : {"max", "argmax"})
            for (const char* form : {"offsets", "sorted_ids"})
                for (int t : ts) add<float, std::int32_t>({op, form, lay, 1, t});
    for (double M : {16.0, double(1 << 14), double(1 << 19), double(1 << 22), double(N)})
        for (const char* dist : {"uniform", "zipf", "equal"})
            for (int t : ts) add<float, std::int32_t>({"sum", "ids", {dist, M}, 1, t});

    for (const char* form : {"sorted_ids", "offsets"}) add_cross_section(form, {"const", 32}, ts);
    for (double M : {double(1 << 14), double(1 << 22)}) add_cross_section("ids", {"uniform", M}, ts);
}

} // namespace

int main(int argc, char** argv) {
    const auto ts = thread_counts();
    register_cases(ts);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    measure_memcpy(ts);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
