// examples/demo.hpp -- the worked examples of the segred demo: their inputs,
// the results expected (worked out by hand), and one report function per
// scenario that prints the inputs and a backend's results and checks them.
//
// A backend's demo computes each scenario its own way and hands the results
// to the report functions with a label: demo.cpp does it with segred::host;
// a GPU demo (a .cu file) includes this header and does the same with
// segred::cuda::par after copying the results back. Every report returns
// false when the results differ from the expected ones.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace demo {

// 1. Group by unsorted ids: sum, mean, and max with its winning row.
inline const std::vector<double> group_values = {10, 20, 30, 40, 50, 60};
inline const std::vector<double> group_values_for_max = {10, 20, 30, 40, 50, 10};
inline const std::vector<std::int64_t> group_ids = {0, 1, 0, 2, 1, 2};
inline constexpr std::int64_t num_groups = 3;

// 2. Segment sums over sorted ids, even and uneven segments.
inline const std::vector<double> even_data = {1, 2, 3, 4, 5, 6};
inline const std::vector<std::int32_t> even_ids = {0, 0, 1, 1, 2, 2};
inline constexpr std::int64_t even_segments = 3;
inline const std::vector<double> uneven_data = {1, 2, 3, 4, 5, 6, 7, 8};
inline const std::vector<std::int32_t> uneven_ids = {0, 0, 1, 2, 2, 2, 3, 3};
inline constexpr std::int64_t uneven_segments = 4;

// 3. Ids that never occur: segments 1 and 3 are empty.
inline const std::vector<double> sparse_data = {1, 2, 3, 4, 5, 6};
inline const std::vector<std::int32_t> sparse_ids = {0, 0, 2, 2, 2, 4};
inline constexpr std::int64_t sparse_segments = 5;

// 4. bincount with minlength 5, plain and weighted.
inline const std::vector<std::int64_t> bin_ids = {2, 0, 2, 1, 4, 2};
inline const std::vector<double> bin_weights = {1.5, 2, 0.5, 4, 3, 1};
inline constexpr std::int64_t num_bins = 5;

// 5. gather rows (width 2) and its backward, a scatter-add into the source.
inline const std::vector<double> gather_src = {1, 2, 3, 4, 5, 6};  // 3 rows x 2
inline constexpr std::int64_t gather_src_rows = 3;
inline constexpr std::int64_t gather_width = 2;
inline const std::vector<std::int64_t> gather_ids = {2, 0, 2, 1};
inline const std::vector<double> gather_grad_out = {1, 2, 3, 4, 5, 6, 7, 8};  // 4 rows x 2

namespace detail {

template <class T>
std::string format(const std::vector<T>& v, std::int64_t width = 1) {
    std::string s = "[";
    const std::size_t w = static_cast<std::size_t>(width);
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i > 0) s += ", ";
        if (w > 1 && i % w == 0) s += "[";
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v[i]));
        s += buf;
        if (w > 1 && i % w == w - 1) s += "]";
    }
    return s + "]";
}

inline void title(const char* backend, const char* what, const char* peers) {
    std::printf("\n== %s [%s]\n   (%s)\n", what, backend, peers);
}

template <class T>
void input(const char* name, const std::vector<T>& v, std::int64_t width = 1) {
    std::printf("   %-22s = %s\n", name, format(v, width).c_str());
}

// NaN equals NaN here: a NaN fill is an expected result.
template <class T, class U>
bool result(const char* name, const std::vector<T>& got, const std::vector<U>& want, std::int64_t width = 1) {
    bool same = got.size() == want.size();
    for (std::size_t i = 0; same && i < got.size(); ++i) {
        const double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
        same = (std::isnan(g) && std::isnan(w)) || g == w;
    }
    std::printf("   %-22s = %s", name, format(got, width).c_str());
    if (same)
        std::printf("\n");
    else
        std::printf("   <-- MISMATCH, expected %s\n", format(want, width).c_str());
    return same;
}

} // namespace detail

inline bool report_group_by_ids(const char* backend, const std::vector<double>& sum, const std::vector<double>& mean) {
    detail::title(backend, "group sum and mean by unsorted ids",
                  "np.add.at, torch index_add_ / scatter_reduce, MATLAB accumarray(ids, v, [], @mean)");
    detail::input("values", group_values);
    detail::input("ids", group_ids);
    const bool a = detail::result("sum", sum, std::vector<double>{40, 70, 100});
    const bool b = detail::result("mean", mean, std::vector<double>{20, 35, 50});
    return a && b;
}

inline bool report_group_max(const char* backend, const std::vector<double>& max,
                             const std::vector<std::int64_t>& argmax) {
    detail::title(backend, "group max and the row that holds it", "torch_scatter scatter_max, pandas groupby idxmax");
    detail::input("values", group_values_for_max);
    detail::input("ids", group_ids);
    const bool a = detail::result("max", max, std::vector<double>{30, 50, 40});
    const bool b = detail::result("arg_out (winning row)", argmax, std::vector<std::int64_t>{2, 4, 3});
    return a && b;
}

inline bool report_sorted_sums(const char* backend, const std::vector<double>& even,
                               const std::vector<double>& uneven) {
    detail::title(backend, "segment sums over sorted ids", "tf.math.segment_sum, torch_scatter segment_coo");
    detail::input("data", even_data);
    detail::input("sorted ids", even_ids);
    const bool a = detail::result("sum", even, std::vector<double>{3, 7, 11});
    std::printf("   uneven segments:\n");
    detail::input("data", uneven_data);
    detail::input("sorted ids", uneven_ids);
    const bool b = detail::result("sum", uneven, std::vector<double>{3, 3, 15, 15});
    return a && b;
}

inline bool report_missing_ids(const char* backend, const std::vector<double>& fill_zero,
                               const std::vector<double>& fill_nan) {
    detail::title(backend, "segment sums with ids that never occur (5 segments)",
                  "tf.math.unsorted_segment_sum, jax.ops.segment_sum");
    detail::input("data", sparse_data);
    detail::input("ids", sparse_ids);
    const bool a = detail::result("sum, empty -> 0", fill_zero, std::vector<double>{3, 0, 12, 0, 6});
    const bool b = detail::result("sum, empty -> NaN", fill_nan, std::vector<double>{3, NAN, 12, NAN, 6});
    return a && b;
}

inline bool report_bincount(const char* backend, const std::vector<std::int64_t>& counts,
                            const std::vector<double>& weighted) {
    detail::title(backend, "bincount with minlength 5", "np.bincount(ids, weights, minlength), torch.bincount");
    detail::input("ids", bin_ids);
    detail::input("weights", bin_weights);
    const bool a = detail::result("counts", counts, std::vector<std::int64_t>{1, 1, 3, 0, 1});
    const bool b = detail::result("weighted counts", weighted, std::vector<double>{2, 4, 3, 0, 3});
    return a && b;
}

inline bool report_gather(const char* backend, const std::vector<double>& gathered,
                          const std::vector<double>& grad_src) {
    detail::title(backend, "gather rows and its backward (scatter-add)",
                  "torch index_select / index_add_, x[ids] and np.add.at");
    detail::input("src (3 x 2)", gather_src, gather_width);
    detail::input("ids", gather_ids);
    const bool a = detail::result("gather: src[ids]", gathered, std::vector<double>{5, 6, 1, 2, 5, 6, 3, 4}, gather_width);
    detail::input("grad_out (4 x 2)", gather_grad_out, gather_width);
    const bool b = detail::result("gather_backward", grad_src, std::vector<double>{3, 4, 7, 8, 6, 8}, gather_width);
    return a && b;
}

} // namespace demo
