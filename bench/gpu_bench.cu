// GPU benchmarks: segred against a device-to-device copy of the same bytes,
// measured in the same process. Google Benchmark with CUDA-event manual
// timing; every case reports GB/s of model bytes (each input read once, each
// output written once) and that as a fraction of the copy's GB/s.
//
//   segred_gpu_bench --benchmark_filter=... --benchmark_min_time=0.05s
#include <cuda_runtime.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <segred/segred.hpp>

namespace {

constexpr std::int64_t N = std::int64_t(1) << 26;

void check(cudaError_t e) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
        std::exit(1);
    }
}

template <class T>
struct dev {
    T* p = nullptr;
    explicit dev(std::int64_t n) { check(cudaMalloc(&p, static_cast<std::size_t>(std::max<std::int64_t>(n, 1)) * sizeof(T))); }
    ~dev() { cudaFree(p); }
    void upload(const std::vector<T>& h) { check(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice)); }
};

// Times f with CUDA events, one iteration per benchmark iteration.
template <class F>
void time_it(benchmark::State& st, double bytes, F&& f) {
    cudaEvent_t a, b;
    check(cudaEventCreate(&a));
    check(cudaEventCreate(&b));
    f();  // warm-up: pools, caches of the allocator
    check(cudaDeviceSynchronize());
    for (auto _ : st) {
        check(cudaEventRecord(a));
        f();
        check(cudaEventRecord(b));
        check(cudaEventSynchronize(b));
        float ms = 0;
        check(cudaEventElapsedTime(&ms, a, b));
        st.SetIterationTime(ms / 1e3);
    }
    st.counters["GB/s"] = benchmark::Counter(bytes * static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
}


void BM_Copy(benchmark::State& st) {
    dev<float> a(N), b(N);
    check(cudaMemset(a.p, 0, N * sizeof(float)));
    const double bytes = 2.0 * N * sizeof(float);
    time_it(st, bytes, [&] { check(cudaMemcpyAsync(b.p, a.p, N * sizeof(float), cudaMemcpyDeviceToDevice)); });
}


std::vector<float> random_values(std::int64_t n) {
    std::vector<float> v(static_cast<std::size_t>(n));
    std::mt19937 g(1);
    std::uniform_real_distribution<float> d(-1, 1);
    for (float& x : v) x = d(g);
    return v;
}

// Sorted ids, every segment of length len: sum over sorted_ids.
void BM_SortedSum(benchmark::State& st) {
    const std::int64_t len = st.range(0), M = N / len;
    dev<float> v(N), out(M);
    dev<std::int32_t> ids(N);
    v.upload(random_values(N));
    std::vector<std::int32_t> h(static_cast<std::size_t>(N));
    for (std::int64_t i = 0; i < N; ++i) h[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i / len);
    ids.upload(h);
    const double bytes = N * (4.0 + 4.0) + M * 4.0;
    const auto pol = segred::cuda::par;
    const auto opts = segred::options{}.bounds(segred::bounds_policy::unchecked);
    time_it(st, bytes, [&] {
        segred::segment_reduce(pol, segred::rows(static_cast<const float*>(v.p), N), segred::sorted_ids(ids.p, M),
                               segred::rows(out.p, M), segred::sum{}, opts);
    });
}

// Fixed-size segments (no index bytes at all).
void BM_FixedSum(benchmark::State& st) {
    const std::int64_t len = st.range(0), M = N / len;
    dev<float> v(N), out(M);
    v.upload(random_values(N));
    const double bytes = N * 4.0 + M * 4.0;
    time_it(st, bytes, [&] {
        segred::segment_reduce(segred::cuda::par, segred::rows(static_cast<const float*>(v.p), N),
                               segred::fixed(len, M), segred::rows(out.p, M), segred::sum{});
    });
}

// Unsorted ids, uniform in [0, M) (range(1) == 1: all ids equal).
template <class R>
void unsorted(benchmark::State& st, R reducer, bool deterministic) {
    const std::int64_t M = st.range(0);
    dev<float> v(N), out(M);
    dev<std::int32_t> ids(N);
    v.upload(random_values(N));
    std::vector<std::int32_t> h(static_cast<std::size_t>(N));
    std::mt19937 g(2);
    std::uniform_int_distribution<std::int32_t> d(0, static_cast<std::int32_t>(M - 1));
    for (auto& x : h) x = st.range(1) ? 0 : d(g);
    ids.upload(h);
    const double bytes = N * (4.0 + 4.0) + M * 4.0;
    const auto opts = segred::options{}.bounds(segred::bounds_policy::unchecked).deterministic(deterministic);
    time_it(st, bytes, [&] {
        segred::accumarray(segred::cuda::par, segred::rows(static_cast<const float*>(v.p), N), segred::ids(ids.p, M),
                           segred::rows(out.p, M), reducer, opts);
    });
}
void BM_UnsortedSum(benchmark::State& st) { unsorted(st, segred::sum{}, false); }
void BM_UnsortedSumDeterministic(benchmark::State& st) { unsorted(st, segred::sum{}, true); }
void BM_UnsortedMax(benchmark::State& st) { unsorted(st, segred::max{}, false); }

void sorted_args(benchmark::internal::Benchmark* b) {
    for (std::int64_t len : {std::int64_t(1), std::int64_t(4), std::int64_t(32), std::int64_t(1024), std::int64_t(1) << 20})
        b->Arg(len);
}
void unsorted_args(benchmark::internal::Benchmark* b) {
    for (std::int64_t m : {std::int64_t(64), std::int64_t(65536), std::int64_t(1) << 21, std::int64_t(1) << 24,
                           std::int64_t(1) << 26})
        b->Args({m, 0});
    b->Args({std::int64_t(1) << 20, 1});
}

} // namespace

BENCHMARK(BM_Copy)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FixedSum)->Apply(sorted_args)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SortedSum)->Apply(sorted_args)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_UnsortedSum)->Apply(unsorted_args)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_UnsortedSumDeterministic)->Apply(unsorted_args)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_UnsortedMax)->Apply(unsorted_args)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
