// Host benchmarks: segred's CPU backend against a memcpy of the same bytes,
// measured in the same process, at 1 thread and at all threads. Each case
// reports GB/s of model bytes (each input read once, each output written
// once); compare with the Memcpy row of the same run.
//
//   segred_host_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include <segred/segred.hpp>

namespace {

constexpr std::int64_t N = std::int64_t(1) << 24;

int all_threads() {
#if defined(_OPENMP)
    return omp_get_max_threads();
#else
    return 1;
#endif
}

const std::vector<float>& values() {
    static const std::vector<float> v = [] {
        std::vector<float> x(static_cast<std::size_t>(N));
        std::mt19937 g(1);
        std::uniform_real_distribution<float> d(-1, 1);
        for (float& e : x) e = d(g);
        return x;
    }();
    return v;
}

void report(benchmark::State& st, double bytes) {
    st.counters["GB/s"] = benchmark::Counter(bytes * static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
}

// range(0): threads (0 = all).
segred::host_policy policy_of(benchmark::State& st) {
    return segred::host.threads(st.range(0) == 0 ? all_threads() : static_cast<int>(st.range(0)));
}

void BM_Memcpy(benchmark::State& st) {
    // Both buffers touched before timing: first-touch page faults are not copying.
    std::vector<float> out(static_cast<std::size_t>(N), 1.0f);
    std::memcpy(out.data(), values().data(), static_cast<std::size_t>(N) * sizeof(float));
    for (auto _ : st) {
        std::memcpy(out.data(), values().data(), static_cast<std::size_t>(N) * sizeof(float));
        benchmark::DoNotOptimize(out.data());
    }
    report(st, 2.0 * N * sizeof(float));
}

// Sorted ids, every segment of length range(1).
void BM_SortedSum(benchmark::State& st) {
    const std::int64_t len = st.range(1), M = N / len;
    std::vector<std::int32_t> ids(static_cast<std::size_t>(N));
    for (std::int64_t i = 0; i < N; ++i) ids[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i / len);
    std::vector<float> out(static_cast<std::size_t>(M));
    const auto pol = policy_of(st);
    const auto opts = segred::options{}.bounds(segred::bounds_policy::unchecked);
    for (auto _ : st)
        segred::segment_reduce(pol, segred::rows(values().data(), N), segred::sorted_ids(ids.data(), M),
                               segred::rows(out.data(), M), segred::sum{}, opts);
    report(st, N * 8.0 + M * 4.0);
}

// Unsorted ids uniform in [0, range(1)).
template <class R>
void unsorted(benchmark::State& st, R reducer) {
    const std::int64_t M = st.range(1);
    std::vector<std::int32_t> ids(static_cast<std::size_t>(N));
    std::mt19937 g(2);
    std::uniform_int_distribution<std::int32_t> d(0, static_cast<std::int32_t>(M - 1));
    for (auto& x : ids) x = d(g);
    std::vector<float> out(static_cast<std::size_t>(M));
    const auto pol = policy_of(st);
    const auto opts = segred::options{}.bounds(segred::bounds_policy::unchecked);
    for (auto _ : st)
        segred::accumarray(pol, segred::rows(values().data(), N), segred::ids(ids.data(), M),
                           segred::rows(out.data(), M), reducer, opts);
    report(st, N * 8.0 + M * 4.0);
}
void BM_UnsortedSum(benchmark::State& st) { unsorted(st, segred::sum{}); }
void BM_UnsortedMax(benchmark::State& st) { unsorted(st, segred::max{}); }

void sorted_args(benchmark::internal::Benchmark* b) {
    for (std::int64_t t : {1, 0})
        for (std::int64_t len : {std::int64_t(1), std::int64_t(32), std::int64_t(1024), std::int64_t(1) << 20})
            b->Args({t, len});
}
void unsorted_args(benchmark::internal::Benchmark* b) {
    for (std::int64_t t : {1, 0})
        for (std::int64_t m : {std::int64_t(16), std::int64_t(1) << 14, std::int64_t(1) << 19, std::int64_t(1) << 24})
            b->Args({t, m});
}

} // namespace

BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SortedSum)->Apply(sorted_args)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_UnsortedSum)->Apply(unsorted_args)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_UnsortedMax)->Apply(unsorted_args)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
