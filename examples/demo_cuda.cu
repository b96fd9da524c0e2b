// The GPU section of the segred demo: the same scenarios as demo.cpp, run
// with segred::cuda::par on device memory, copied back and reported through
// demo.hpp, so both backends print (and are checked against) the same
// hand-worked results. Built into segred_demo when CUDA is enabled.
#include <segred/segred.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "demo.hpp"

namespace {

using segred::rows;

void ok(cudaError_t e) {
    if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + cudaGetErrorString(e));
}

// A device copy of a host vector; back() brings it home.
template <class T>
struct on_device {
    T* p = nullptr;
    std::int64_t n = 0;
    explicit on_device(const std::vector<T>& h) : n(static_cast<std::int64_t>(h.size())) {
        ok(cudaMalloc(&p, h.size() * sizeof(T)));
        ok(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    explicit on_device(std::int64_t count) : n(count) { ok(cudaMalloc(&p, static_cast<std::size_t>(count) * sizeof(T))); }
    on_device(const on_device&) = delete;
    ~on_device() { cudaFree(p); }
    std::vector<T> back() const {
        std::vector<T> h(static_cast<std::size_t>(n));
        ok(cudaMemcpy(h.data(), p, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
        return h;
    }
};

const auto gpu = segred::cuda::par;

bool group_by_ids(const char* label) {
    on_device<double> v(demo::group_values), sum(demo::num_groups), mean(demo::num_groups);
    on_device<std::int64_t> id(demo::group_ids);
    const auto values = rows(static_cast<const double*>(v.p), v.n);
    const auto ids = segred::ids(static_cast<const std::int64_t*>(id.p), demo::num_groups);
    segred::accumarray(gpu, values, ids, rows(sum.p, demo::num_groups), segred::sum{});
    segred::accumarray(gpu, values, ids, rows(mean.p, demo::num_groups), segred::mean{});
    return demo::report_group_by_ids(label, sum.back(), mean.back());
}

bool group_max(const char* label) {
    on_device<double> v(demo::group_values_for_max), max(demo::num_groups);
    on_device<std::int64_t> id(demo::group_ids), arg(demo::num_groups);
    segred::accumarray(gpu, rows(static_cast<const double*>(v.p), v.n),
                       segred::ids(static_cast<const std::int64_t*>(id.p), demo::num_groups),
                       rows(max.p, demo::num_groups), segred::max{}, segred::options{}.arg_out(arg.p));
    return demo::report_group_max(label, max.back(), arg.back());
}

bool sorted_sums(const char* label) {
    on_device<double> ev(demo::even_data), un(demo::uneven_data), even(demo::even_segments),
        uneven(demo::uneven_segments);
    on_device<std::int32_t> eid(demo::even_ids), uid(demo::uneven_ids);
    segred::segment_reduce(gpu, rows(static_cast<const double*>(ev.p), ev.n),
                           segred::sorted_ids(static_cast<const std::int32_t*>(eid.p), demo::even_segments),
                           rows(even.p, demo::even_segments), segred::sum{});
    segred::segment_reduce(gpu, rows(static_cast<const double*>(un.p), un.n),
                           segred::sorted_ids(static_cast<const std::int32_t*>(uid.p), demo::uneven_segments),
                           rows(uneven.p, demo::uneven_segments), segred::sum{});
    return demo::report_sorted_sums(label, even.back(), uneven.back());
}

bool missing_ids(const char* label) {
    on_device<double> d(demo::sparse_data), zero(demo::sparse_segments), nan(demo::sparse_segments);
    on_device<std::int32_t> id(demo::sparse_ids);
    const auto data = rows(static_cast<const double*>(d.p), d.n);
    const auto ids = segred::ids(static_cast<const std::int32_t*>(id.p), demo::sparse_segments);
    segred::segment_reduce(gpu, data, ids, rows(zero.p, demo::sparse_segments), segred::sum{});
    segred::segment_reduce(gpu, data, ids, rows(nan.p, demo::sparse_segments), segred::sum{},
                           segred::options{}.fill_nan());
    return demo::report_missing_ids(label, zero.back(), nan.back());
}

bool bincount(const char* label) {
    on_device<std::int64_t> id(demo::bin_ids), counts(demo::num_bins);
    on_device<double> w(demo::bin_weights), weighted(demo::num_bins);
    const auto ids = rows(static_cast<const std::int64_t*>(id.p), id.n);
    segred::bincount(gpu, ids, rows(counts.p, demo::num_bins));
    segred::bincount(gpu, rows(static_cast<const double*>(w.p), w.n), ids, rows(weighted.p, demo::num_bins));
    return demo::report_bincount(label, counts.back(), weighted.back());
}

bool gather(const char* label) {
    const std::int64_t width = demo::gather_width, n = static_cast<std::int64_t>(demo::gather_ids.size());
    on_device<double> src(demo::gather_src), grad(demo::gather_grad_out), out(n * width),
        grad_src(demo::gather_src_rows * width);
    on_device<std::int64_t> id(demo::gather_ids);
    const auto ids = rows(static_cast<const std::int64_t*>(id.p), n);
    segred::gather(gpu, rows(static_cast<const double*>(src.p), demo::gather_src_rows, width), ids,
                   rows(out.p, n, width));
    segred::gather_backward(gpu, rows(static_cast<const double*>(grad.p), n, width), ids,
                            rows(grad_src.p, demo::gather_src_rows, width));
    return demo::report_gather(label, out.back(), grad_src.back());
}

} // namespace

// Runs every scenario on the GPU; true when all match. Without a usable GPU
// it says so and returns true (the host section has already run).
bool run_cuda_demo() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        (void)cudaGetLastError();
        std::printf("\n(no CUDA device here: the GPU section is skipped)\n");
        return true;
    }
    cudaDeviceProp prop{};
    ok(cudaGetDeviceProperties(&prop, 0));
    std::printf("\n---- the same on the GPU: %s ----\n", prop.name);
    const std::string label = std::string("cuda: ") + prop.name;
    bool all = true;
    try {
        all = group_by_ids(label.c_str()) && all;
        all = group_max(label.c_str()) && all;
        all = sorted_sums(label.c_str()) && all;
        all = missing_ids(label.c_str()) && all;
        all = bincount(label.c_str()) && all;
        all = gather(label.c_str()) && all;
    } catch (const std::exception& e) {
        std::printf("GPU section failed: %s\n", e.what());
        return false;
    }
    return all;
}
