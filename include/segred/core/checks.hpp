// segred/core/checks.hpp -- O(1) argument checks shared by every backend,
// and the formatting of segred::error messages.
//
// These checks read only sizes and pointers, never the data, so they run
// under every bounds policy (unchecked skips only the O(n) data scans) and
// cost the CUDA backend no synchronization.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "descriptors.hpp"
#include "error.hpp"
#include "options.hpp"
#include "reducers.hpp"
#include "views.hpp"

namespace segred {
namespace detail {

inline std::string to_str(std::int64_t v) { return std::to_string(v); }

[[noreturn]] inline void fail(const char* fn, const std::string& msg) {
    throw error(std::string("segred::") + fn + ": " + msg);
}

// "ids[7] = 12 is out of range [0, 5)"
[[noreturn]] inline void fail_out_of_range(const char* fn, const char* arg, std::int64_t pos, std::int64_t value,
                                           std::int64_t M) {
    fail(fn, std::string(arg) + "[" + to_str(pos) + "] = " + to_str(value) + " is out of range [0, " + to_str(M) +
                 ")");
}

// Messages of the data checks, shared by the backends so the same bad input
// reads the same on the CPU and the GPU.
[[noreturn]] inline void fail_negative(const char* fn, const char* arg, std::int64_t pos, std::int64_t value) {
    fail(fn, std::string(arg) + "[" + to_str(pos) + "] = " + to_str(value) + " is negative");
}
[[noreturn]] inline void fail_decreasing(const char* fn, const char* arg, std::int64_t pos, std::int64_t value,
                                         std::int64_t prev) {
    fail(fn, std::string(arg) + "[" + to_str(pos) + "] = " + to_str(value) + " is less than " + arg + "[" +
                 to_str(pos - 1) + "] = " + to_str(prev) + " (" + arg + " must be non-decreasing)");
}
[[noreturn]] inline void fail_past_end(const char* fn, std::int64_t M, std::int64_t value, std::int64_t n) {
    fail(fn, "offsets[" + to_str(M) + "] = " + to_str(value) + " is past the last row (n = " + to_str(n) + ")");
}
[[noreturn]] inline void fail_lengths_sum(const char* fn, std::int64_t total, std::int64_t n) {
    fail(fn, "lengths sum to " + to_str(total) + " but values have " + to_str(n) + " rows");
}
[[noreturn]] inline void fail_subscript(const char* fn, std::int64_t row, int dim, std::int64_t value,
                                        std::int64_t extent) {
    fail(fn, "subscripts[" + to_str(row) + ", " + to_str(dim) + "] = " + to_str(value) + " is out of range [0, " +
                 to_str(extent) + ")");
}

template <class T>
void check_view(const char* fn, const char* arg, const rows_view<T>& v) {
    if (v.n < 0) fail(fn, std::string(arg) + " has a negative row count " + to_str(v.n));
    if (v.width < 1) fail(fn, std::string(arg) + " has width " + to_str(v.width) + "; width must be at least 1");
    if (v.data == nullptr && v.n > 0) fail(fn, std::string(arg) + " is null but has " + to_str(v.n) + " rows");
}

template <class I>
void check_index_vector(const char* fn, const char* arg, const rows_view<I>& v) {
    static_assert(std::is_integral<std::remove_cv_t<I>>::value, "ids must be an integer type");
    check_view(fn, arg, v);
    if (v.width != 1) fail(fn, std::string(arg) + " must have width 1, has width " + to_str(v.width));
}

template <class T, class Seg>
void check_segments(const char* fn, const rows_view<T>& values, const Seg& seg) {
    const std::int64_t n = values.n;
    if constexpr (Seg::kind == segment_kind::subscripts) {
        if (seg.ndim < 1 || seg.ndim > max_subscript_dims)
            fail(fn, "subscripts have " + to_str(seg.ndim) + " dimensions; 1 to " + to_str(max_subscript_dims) +
                         " are supported");
        std::int64_t cells = 1;
        for (int d = 0; d < seg.ndim; ++d) {
            if (seg.shape[d] < 0) fail(fn, "shape[" + to_str(d) + "] = " + to_str(seg.shape[d]) + " is negative");
            // The output has prod(shape) rows, which must fit in 64 bits.
            if (seg.shape[d] > 0 && cells > std::int64_t(0x7fffffffffffffff) / seg.shape[d])
                fail(fn, "the output shape has more than 2^63 - 1 cells (overflow at shape[" + to_str(d) + "])");
            cells *= seg.shape[d];
        }
        if (seg.ptr == nullptr && n > 0) fail(fn, "subscripts are null but values have " + to_str(n) + " rows");
        return;
    } else {
        const std::int64_t M = seg.num_segments();
        if (M < 0) fail(fn, "the number of segments M = " + to_str(M) + " is negative");
        if constexpr (Seg::kind == segment_kind::offsets) {
            if (seg.ptr == nullptr && (M > 0 || n > 0))
                fail(fn, "offsets are null but " + to_str(M + 1) + " offsets are expected");
        } else if constexpr (Seg::kind == segment_kind::lengths) {
            if (seg.ptr == nullptr && M > 0) fail(fn, "lengths are null but M = " + to_str(M));
        } else if constexpr (Seg::kind == segment_kind::sorted_ids || Seg::kind == segment_kind::ids) {
            if (seg.ptr == nullptr && n > 0) fail(fn, "ids are null but values have " + to_str(n) + " rows");
        } else if constexpr (Seg::kind == segment_kind::fixed) {
            if (seg.size < 0) fail(fn, "fixed segment size " + to_str(seg.size) + " is negative");
            if (seg.size * M != n)
                fail(fn, "fixed(" + to_str(seg.size) + ", " + to_str(M) + ") covers " + to_str(seg.size * M) +
                             " rows but values have " + to_str(n));
        }
    }
}

// The options (and output types) that only some reducers allow; shared by
// every algorithm that runs a reducer into out.
template <class O, class R>
void check_reduce_options(const char* fn, const rows_view<O>&, const R&, const options& opts) {
    if (opts.arg_ptr != nullptr && std::is_void<typename with_arg<R>::type>::value)
        fail(fn, std::string("arg_out needs min, max, argmin or argmax, not ") + R::name);
    if (opts.accumulate_into && !R::accumulates)
        fail(fn, std::string("accumulate is not defined for ") + R::name);
    // min/max with an arg out run as min_with_arg/max_with_arg, which cannot
    // seed from the existing out (it has no row), so accumulate was silently
    // ignored there: refuse the combination instead.
    if (opts.accumulate_into && opts.arg_ptr != nullptr)
        fail(fn, std::string("accumulate cannot be combined with arg_out (") + R::name +
                     "): the existing out value has no row");
    if (opts.fill_mode == fill_kind::nan && std::is_integral<std::remove_cv_t<O>>::value)
        fail(fn, "fill_nan() needs a floating-point output; out holds integers");
    // var, std and logsumexp can be NaN or infinite, which no integer holds.
    constexpr bool real_valued = std::is_same<R, segred::var>::value || std::is_same<R, segred::stddev>::value ||
                                 std::is_same<R, segred::logsumexp>::value;
    if (real_valued && std::is_integral<std::remove_cv_t<O>>::value)
        fail(fn, std::string(R::name) + " needs a floating-point output; out holds integers");
}

// The checks of segment_reduce / accumarray: views, descriptor, output shape
// and the options that only some reducers or output types allow.
template <class T, class Seg, class O, class R>
void check_reduce_args(const char* fn, const rows_view<T>& values, const Seg& seg, const rows_view<O>& out,
                       const R& r, const options& opts) {
    check_view(fn, "values", values);
    check_view(fn, "out", out);
    check_segments(fn, values, seg);
    const std::int64_t M = seg.num_segments();
    if (out.n != M)
        fail(fn, "out has " + to_str(out.n) + " rows but the segments describe M = " + to_str(M));
    const bool count_column = std::is_same<R, segred::count>::value && out.width == 1;
    if (out.width != values.width && !count_column)
        fail(fn, "out has width " + to_str(out.width) + " but values have width " + to_str(values.width));
    check_reduce_options(fn, out, r, opts);
}

} // namespace detail
} // namespace segred
