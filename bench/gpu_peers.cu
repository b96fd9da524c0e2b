// GPU peers of segred, on the cases of gpu_bench.cu: the same case names, the
// same bytes (the generators, timing and driver of gpu_bench.cu are included
// from there), one device-to-device copy in the same run.
//
//   segred_gpu_peers --benchmark_min_time=0.05 --benchmark_out=peers.json --benchmark_out_format=json
//
// Implementations (the `<impl>/` prefix of each benchmark name):
//   cub.segmented_reduce  cub::DeviceSegmentedReduce::Sum / Max over offsets (width 1)
//   cub.reduce_by_key     cub::DeviceReduce::ReduceByKey over sorted ids, sum (width 1);
//                         it writes the runs compacted (and their keys), not one row per segment
//   cub.histogram_even    cub::DeviceHistogram::HistogramEven, M bins of width 1 (unweighted bincount)
//   atomic.scatter        one thread per element, atomicAdd (or a float atomicMax) into the
//                         output, after zeroing it (or filling it with -inf) inside the timing
// CUB's temporary storage is allocated once per case, outside the timed calls.
#define SEGRED_GPU_BENCH_SHARED_ONLY
#include "gpu_bench.cu"

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/std/functional>

namespace {

using namespace gpu_bench;

// ---------------------------------------------------------------------------
// CUB

// One CUB call, sized once (first call with null storage) and then timed.
// HistogramEven keeps one global histogram per thread block when there are
// more than 256 bins: about 70 GB for 2^24 bins on an H100, which is refused
// here with the size instead of failing somewhere less clear.
template <class Call>
double time_cub(benchmark::State& st, Call&& call) {
    std::size_t temp_bytes = 0;
    GB_CHECK(call(nullptr, temp_bytes));
    if (temp_bytes > (std::size_t(8) << 30))
        fail("CUB asks for " + std::to_string(temp_bytes >> 20) + " MiB of temporary storage (more than 8 GiB)");
    dev_array<unsigned char> temp(static_cast<std::int64_t>(temp_bytes));
    return time_calls(st, [&] { GB_CHECK(call(temp.get(), temp_bytes)); });
}

template <class I, op_kind OP>
void run_cub_segmented(benchmark::State& st, const case_spec& c) {
    const auto in = inputs_for<float, I>(c);
    dev_array<float> out(in->M);
    const float* v = in->values.get();
    const I* off = in->index.get();
    const std::int64_t M = in->M;
    const double ms = time_cub(st, [&](void* temp, std::size_t& bytes) {
        if constexpr (OP == op_kind::max)
            return cub::DeviceSegmentedReduce::Max(temp, bytes, v, out.get(), M, off, off + 1);
        else return cub::DeviceSegmentedReduce::Sum(temp, bytes, v, out.get(), M, off, off + 1);
    });
    report(st, c.model_bytes(), ms, in->index_fp, checksum(out.get(), out.size()));
}

void run_cub_reduce_by_key(benchmark::State& st, const case_spec& c) {
    const auto in = inputs_for<float, std::int32_t>(c);
    // At most M runs; the entries past the last run stay 0, so the checksum
    // over M entries equals that of one row per segment (empty ones 0).
    dev_array<std::int32_t> keys_out(in->M);
    dev_array<float> sums(in->M);
    dev_array<std::int32_t> num_runs(1);
    GB_CHECK(cudaMemset(sums.get(), 0, static_cast<std::size_t>(in->M) * sizeof(float)));
    const float* v = in->values.get();
    const std::int32_t* ids = in->index.get();
    const std::int64_t rows = in->rows;
    const double ms = time_cub(st, [&](void* temp, std::size_t& bytes) {
        return cub::DeviceReduce::ReduceByKey(temp, bytes, ids, keys_out.get(), v, sums.get(), num_runs.get(),
                                              ::cuda::std::plus<float>{}, rows);
    });
    report(st, c.model_bytes(), ms, in->index_fp, checksum(sums.get(), sums.size()));
}

void run_cub_histogram(benchmark::State& st, const case_spec& c) {
    const auto in = inputs_for<float, std::int32_t>(c);
    if (in->M >= std::numeric_limits<int>::max()) fail("HistogramEven takes an int number of levels");
    dev_array<std::int32_t> counts(in->M);
    const std::int32_t* ids = in->index.get();
    const int levels = static_cast<int>(in->M) + 1, upper = static_cast<int>(in->M);
    const std::int64_t rows = in->rows;
    const double ms = time_cub(st, [&](void* temp, std::size_t& bytes) {
        return cub::DeviceHistogram::HistogramEven(temp, bytes, ids, counts.get(), levels, 0, upper, rows);
    });
    report(st, c.model_bytes(), ms, in->index_fp, checksum(counts.get(), counts.size()));
}

// ---------------------------------------------------------------------------
// Plain atomic scatter: one thread per element, no privatization, no merging.

template <class T, class I>
__global__ void k_scatter_add(const T* v, const I* ids, T* out, std::uint32_t n, std::uint32_t width) {
    const std::uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n) return;
    const std::uint32_t i = e / width, f = e - i * width;
    atomicAdd(out + static_cast<std::int64_t>(ids[i]) * width + f, v[e]);
}

template <class I>
__global__ void k_scatter_count(const I* ids, std::int32_t* out, std::uint32_t n) {
    const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out + ids[i], 1);
}

// Float max through integer atomics: non-negative floats order as ints,
// negative ones in reverse as unsigned ints (out starts at -inf).
__device__ inline void atomic_max_float(float* addr, float v) {
    if (v >= 0.0f) atomicMax(reinterpret_cast<int*>(addr), __float_as_int(v));
    else atomicMin(reinterpret_cast<unsigned int*>(addr), __float_as_uint(v));
}

template <class I>
__global__ void k_scatter_max(const float* v, const I* ids, float* out, std::uint32_t n, std::uint32_t width) {
    const std::uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n) return;
    const std::uint32_t i = e / width, f = e - i * width;
    atomic_max_float(out + static_cast<std::int64_t>(ids[i]) * width + f, v[e]);
}

__global__ void k_fill(float* p, std::int64_t n, float x) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) p[i] = x;
}

template <class T, class I, op_kind OP>
void run_atomic(benchmark::State& st, const case_spec& c) {
    const auto in = inputs_for<T, I>(c);
    const std::int64_t rows = in->rows, W = in->width, M = in->M;
    const std::int64_t n = OP == op_kind::bincount ? rows : rows * W;
    if (n >= (std::int64_t(1) << 32)) fail("atomic.scatter indexes elements with 32 bits");
    const T* v = in->values.get();
    const I* ids = in->index.get();
    const auto n32 = static_cast<std::uint32_t>(n), w32 = static_cast<std::uint32_t>(W);
    if constexpr (OP == op_kind::bincount) {
        dev_array<std::int32_t> out(M);
        const double ms = time_calls(st, [&] {
            GB_CHECK(cudaMemsetAsync(out.get(), 0, static_cast<std::size_t>(M) * sizeof(std::int32_t), 0));
            k_scatter_count<I><<<grid_for(n), 256>>>(ids, out.get(), n32);
            GB_CHECK_LAUNCH();
        });
        report(st, c.model_bytes(), ms, in->index_fp, checksum(out.get(), out.size()));
    } else if constexpr (OP == op_kind::max) {
        dev_array<float> out(M * W);
        const double ms = time_calls(st, [&] {
            k_fill<<<grid_for(M * W), 256>>>(out.get(), M * W, -std::numeric_limits<float>::infinity());
            GB_CHECK_LAUNCH();
            k_scatter_max<I><<<grid_for(n), 256>>>(v, ids, out.get(), n32, w32);
            GB_CHECK_LAUNCH();
        });
        report(st, c.model_bytes(), ms, in->index_fp, checksum(out.get(), out.size()));
    } else {  // sum, bincount_w, gather_bwd: the same scatter-add
        dev_array<T> out(M * W);
        const double ms = time_calls(st, [&] {
            GB_CHECK(cudaMemsetAsync(out.get(), 0, static_cast<std::size_t>(M * W) * sizeof(T), 0));
            k_scatter_add<T, I><<<grid_for(n), 256>>>(v, ids, out.get(), n32, w32);
            GB_CHECK_LAUNCH();
        });
        report(st, c.model_bytes(), ms, in->index_fp, checksum(out.get(), out.size()));
    }
}

// ---------------------------------------------------------------------------
// Which peer runs which case; every line is one instantiation.

template <class T, class I, op_kind OP>
runner atomic_entry() {
    const value_kind vt = OP == op_kind::bincount ? value_kind::none : value_kind_of<T>();
    return runner{"atomic.scatter", OP, form_kind::ids, vt, index_kind_of<I>(), &run_atomic<T, I, OP>, false};
}

std::vector<runner> peer_runners() {
    using O = op_kind;
    using F = form_kind;
    using V = value_kind;
    using X = index_kind;
    using i32 = std::int32_t;
    using i64 = std::int64_t;
    return {
        {"cub.segmented_reduce", O::sum, F::offsets, V::f32, X::i32, &run_cub_segmented<i32, O::sum>, true},
        {"cub.segmented_reduce", O::sum, F::offsets, V::f32, X::i64, &run_cub_segmented<i64, O::sum>, true},
        {"cub.segmented_reduce", O::max, F::offsets, V::f32, X::i32, &run_cub_segmented<i32, O::max>, true},
        {"cub.reduce_by_key", O::sum, F::sorted_ids, V::f32, X::i32, &run_cub_reduce_by_key, true},
        {"cub.histogram_even", O::bincount, F::ids, V::none, X::i32, &run_cub_histogram, true},
        atomic_entry<float, i32, O::sum>(),
        atomic_entry<__half, i32, O::sum>(),
        atomic_entry<__nv_bfloat16, i32, O::sum>(),
        atomic_entry<double, i32, O::sum>(),
        atomic_entry<float, i64, O::sum>(),
        atomic_entry<float, i32, O::max>(),
        atomic_entry<float, i32, O::bincount>(),
        atomic_entry<float, i32, O::bincount_w>(),
        atomic_entry<float, i32, O::gather_bwd>(),
    };
}

} // namespace

int main(int argc, char** argv) { return gpu_bench::run_main(argc, argv, "segred_gpu_peers", peer_runners(), false); }
