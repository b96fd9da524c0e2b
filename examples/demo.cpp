// The segred demo: the grouped reductions people keep asking how to write
// (accumarray, segment_sum, scatter_max with argmax, bincount, gather and its
// gradient), each run on the CPU with segred::host and printed next to its
// inputs. The inputs, expected results and printing live in demo.hpp, so a
// GPU demo can report the same scenarios under its own label.
//
// Exit status 0 when every result matches the hand-worked one.
#include <segred/segred.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "demo.hpp"

namespace {

using segred::rows;

template <class T>
std::int64_t n_of(const std::vector<T>& v) {
    return static_cast<std::int64_t>(v.size());
}

bool group_by_ids(const char* label) {
    std::vector<double> sum(demo::num_groups), mean(demo::num_groups);
    const auto values = rows(demo::group_values.data(), n_of(demo::group_values));
    const auto ids = segred::ids(demo::group_ids.data(), demo::num_groups);
    segred::accumarray(segred::host, values, ids, rows(sum.data(), demo::num_groups), segred::sum{});
    segred::accumarray(segred::host, values, ids, rows(mean.data(), demo::num_groups), segred::mean{});
    return demo::report_group_by_ids(label, sum, mean);
}

bool group_max(const char* label) {
    std::vector<double> max(demo::num_groups);
    std::vector<std::int64_t> arg(demo::num_groups);
    segred::accumarray(segred::host, rows(demo::group_values_for_max.data(), n_of(demo::group_values_for_max)),
                       segred::ids(demo::group_ids.data(), demo::num_groups), rows(max.data(), demo::num_groups),
                       segred::max{}, segred::options{}.arg_out(arg.data()));
    return demo::report_group_max(label, max, arg);
}

bool sorted_sums(const char* label) {
    std::vector<double> even(demo::even_segments), uneven(demo::uneven_segments);
    segred::segment_reduce(segred::host, rows(demo::even_data.data(), n_of(demo::even_data)),
                           segred::sorted_ids(demo::even_ids.data(), demo::even_segments),
                           rows(even.data(), demo::even_segments), segred::sum{});
    segred::segment_reduce(segred::host, rows(demo::uneven_data.data(), n_of(demo::uneven_data)),
                           segred::sorted_ids(demo::uneven_ids.data(), demo::uneven_segments),
                           rows(uneven.data(), demo::uneven_segments), segred::sum{});
    return demo::report_sorted_sums(label, even, uneven);
}

bool missing_ids(const char* label) {
    std::vector<double> zero(demo::sparse_segments), nan(demo::sparse_segments);
    const auto data = rows(demo::sparse_data.data(), n_of(demo::sparse_data));
    const auto ids = segred::ids(demo::sparse_ids.data(), demo::sparse_segments);
    segred::segment_reduce(segred::host, data, ids, rows(zero.data(), demo::sparse_segments), segred::sum{});
    segred::segment_reduce(segred::host, data, ids, rows(nan.data(), demo::sparse_segments), segred::sum{},
                           segred::options{}.fill_nan());
    return demo::report_missing_ids(label, zero, nan);
}

bool bincount(const char* label) {
    std::vector<std::int64_t> counts(demo::num_bins);
    std::vector<double> weighted(demo::num_bins);
    const auto ids = rows(demo::bin_ids.data(), n_of(demo::bin_ids));
    segred::bincount(segred::host, ids, rows(counts.data(), demo::num_bins));
    segred::bincount(segred::host, rows(demo::bin_weights.data(), n_of(demo::bin_weights)), ids,
                     rows(weighted.data(), demo::num_bins));
    return demo::report_bincount(label, counts, weighted);
}

bool gather(const char* label) {
    const std::int64_t w = demo::gather_width, n = n_of(demo::gather_ids);
    std::vector<double> out(static_cast<std::size_t>(n * w));
    std::vector<double> grad_src(static_cast<std::size_t>(demo::gather_src_rows * w));
    const auto ids = rows(demo::gather_ids.data(), n);
    segred::gather(segred::host, rows(demo::gather_src.data(), demo::gather_src_rows, w), ids, rows(out.data(), n, w));
    segred::gather_backward(segred::host, rows(demo::gather_grad_out.data(), n, w), ids,
                            rows(grad_src.data(), demo::gather_src_rows, w));
    return demo::report_gather(label, out, grad_src);
}

} // namespace

#if defined(SEGRED_DEMO_CUDA)
bool run_cuda_demo();  // demo_cuda.cu: the same scenarios on the GPU
#endif

int main() {
    std::printf("segred %s demo\n", SEGRED_VERSION_STRING);
    const char* label = "host";
    bool ok = true;
    ok = group_by_ids(label) && ok;
    ok = group_max(label) && ok;
    ok = sorted_sums(label) && ok;
    ok = missing_ids(label) && ok;
    ok = bincount(label) && ok;
    ok = gather(label) && ok;
#if defined(SEGRED_DEMO_CUDA)
    ok = run_cuda_demo() && ok;
#endif
    std::printf("\n%s\n", ok ? "all results match the worked examples" : "SOME RESULTS DIFFER (see MISMATCH above)");
    return ok ? 0 : 1;
}
