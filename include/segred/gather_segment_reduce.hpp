// segred/gather_segment_reduce.hpp -- "gather rows by an index, then reduce
// per segment", fused, and its backward to the data.
//
//   gather_segment_reduce(policy, data, idx, segments, out, reducer, opts)
//
// Position k (k in [0, idx.n)) carries data row idx[k]; segments group the
// positions (any descriptor over idx.n positions), and each segment's rows
// are reduced as segment_reduce would reduce the gathered copy
// data[idx[k], :], which is never made. Example, mean over data[b, idx[b, k], :]
// for a [B, N, F] data and a [B, K] idx: flatten data to B*N rows, add b*N to
// idx[b, k], and reduce fixed(K, B).
//
// idx: check throws on idx[k] outside [0, data.n); drop leaves such a
// position out of its segment. The arg out of min/max holds data rows, and
// ties go to the lowest data row.
//
// The backward (sum, mean, min, max) sends gradients to data only: a
// scatter-add over idx that is itself a fused reduction (positions grouped by
// idx, position k carrying the per-segment gradient of its segment), so no
// per-position gradient is materialized either.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/backend.hpp"
#include "core/backward_checks.hpp"
#include "core/checks.hpp"
#include "core/descriptors.hpp"
#include "core/grad_sink.hpp"
#include "core/options.hpp"
#include "core/reducers.hpp"
#include "core/views.hpp"

namespace segred {
namespace detail {

// count_column: a count may write one column whatever the data's width.
template <class T, class I, class Seg, class O>
void check_gather_reduce_shapes(const char* fn, const rows_view<T>& data, const rows_view<I>& idx, const Seg& seg,
                                const rows_view<O>& out, bool count_column = false) {
    check_view(fn, "data", data);
    check_index_vector(fn, "idx", idx);
    check_view(fn, "out", out);
    // The descriptor describes the idx.n positions (its messages call them values).
    check_segments(fn, rows_view<const T>{data.data, idx.n, data.width}, seg);
    const std::int64_t M = seg.num_segments();
    if (out.n != M) fail(fn, "out has " + to_str(out.n) + " rows but the segments describe M = " + to_str(M));
    if (out.width != data.width && !(count_column && out.width == 1))
        fail(fn, "out has width " + to_str(out.width) + " but data has width " + to_str(data.width));
}

// seg_of[k] = the segment of position k, -1 for none.
struct position_segment {
    std::int64_t* seg_of;
    SEGRED_HD void operator()(std::int64_t k, std::int64_t s) const { seg_of[k] = s; }
};

// Mean's per-segment gradient: grad_out[s, :] / count[s] (called as a map
// over fixed(1, M), so row == s).
template <class A, class G>
struct divide_by_count {
    rows_view<const G> grad_out;
    const std::int64_t* counts;
    rows_view<A> dst;
    SEGRED_HD void operator()(std::int64_t s, std::int64_t) const {
        const std::int64_t c = counts[s];
        for (std::int64_t f = 0; f < dst.width; ++f)
            dst(s, f) = c > 0 ? convert<A>(grad_out(s, f)) / static_cast<A>(c) : A(0);
    }
};

// min/max: element (s, f) of grad_out goes to element (arg[s, f], f) of
// grad_data, numbered row-major; -1 for an empty segment. Map over
// fixed(width, M): element e is in segment s = e / width.
struct arg_element_target {
    const std::int64_t* arg;
    std::int64_t width;
    std::int64_t rows;  // data rows
    std::int64_t* target;
    SEGRED_HD void operator()(std::int64_t e, std::int64_t s) const {
        const std::int64_t a = arg[e];
        target[e] = (a >= 0 && a < rows) ? a * width + (e - s * width) : -1;
    }
};

template <class Policy, class T, class I, class Seg, class O, class R>
void gather_reduce_dispatch(const char* fn, const Policy& policy, rows_view<const T> data, rows_view<const I> idx,
                            const Seg& seg, rows_view<O> out, const R& r, const options& opts) {
    if constexpr (!std::is_void<typename with_arg<R>::type>::value && !R::has_arg) {
        if (opts.arg_ptr != nullptr) {
            gather_segment_reduce_impl(policy, fn, data, idx, seg, out, typename with_arg<R>::type{}, opts);
            return;
        }
    }
    gather_segment_reduce_impl(policy, fn, data, idx, seg, out, r, opts);
}

} // namespace detail

template <class Policy, class T, class I, class Seg, class O, class R = sum>
void gather_segment_reduce(const Policy& policy, rows_view<T> data, rows_view<I> idx, const Seg& segments,
                           rows_view<O> out, const R& reducer = {}, const options& opts = {}) {
    const char* fn = "gather_segment_reduce";
    detail::check_gather_reduce_shapes(fn, data, idx, segments, out, std::is_same<R, count>::value);
    detail::check_reduce_options(fn, out, reducer, opts);
    detail::gather_reduce_dispatch(fn, policy, data.as_const(), idx.as_const(), segments, out, reducer, opts);
}

// grad_data = d loss / d data for out = gather_segment_reduce(..., reducer)
// (sum, mean, min, max; run without accumulate). min/max route each
// gradient to the arg row (opts.arg_out(arg): the forward's saved arg rows,
// else recomputed; split_ties is not offered here). Data rows no position
// reaches get 0; opts.accumulate() adds into grad_data instead.
template <class Policy, class T, class I, class Seg, class O, class G, class GD, class R = sum>
void gather_segment_reduce_backward(const Policy& policy, rows_view<T> data, rows_view<I> idx, const Seg& segments,
                                    rows_view<O> out, rows_view<G> grad_out, rows_view<GD> grad_data,
                                    const R& /*reducer*/ = {}, const options& opts = {}) {
    constexpr bool is_sum = std::is_same<R, sum>::value, is_mean = std::is_same<R, mean>::value;
    constexpr bool is_min = std::is_same<R, min>::value, is_max = std::is_same<R, max>::value;
    static_assert(is_sum || is_mean || is_min || is_max,
                  "segred: gather_segment_reduce_backward supports sum, mean, min and max");
    static_assert(detail::is_gradient_type<GD>(), "segred: grad_data must hold a floating-point type");
    const char* fn = "gather_segment_reduce_backward";
    detail::check_gather_reduce_shapes(fn, data, idx, segments, out);
    detail::check_same_shape(fn, "grad_out", grad_out, "out", out);
    detail::check_same_shape(fn, "grad_data", grad_data, "data", data);
    if (opts.arg_ptr != nullptr && !(is_min || is_max))
        detail::fail(fn, std::string("arg_out (the forward's arg rows) needs min or max, not ") + R::name);
    if (opts.split_ties_mode) detail::fail(fn, "split_ties is not supported by the fused backward");

    using A = detail::grad_t<GD>;
    const auto cdata = data.as_const();
    const auto cidx = idx.as_const();
    const auto cgrad = grad_out.as_const();
    const std::int64_t M = segments.num_segments(), W = data.width, npos = idx.n, data_rows = data.n;
    const options first = detail::internal_options(opts);
    const options later = detail::validated(first);
    // The scatter into grad_data: positions (or elements) with nowhere to go
    // carry -1 and are dropped; empty data rows get 0, or keep grad_data.
    options scatter = detail::internal_options(opts);
    scatter.bounds(bounds_policy::drop).accumulate(opts.accumulate_into);

    // Validates segments and idx; mean's divisor.
    auto counts = make_scratch<std::int64_t>(policy, M);
    gather_segment_reduce_impl(policy, fn, cdata, cidx, segments, rows_view<std::int64_t>{counts.data(), M, 1},
                               count{}, first);

    if constexpr (is_sum || is_mean) {
        auto seg_of = make_scratch<std::int64_t>(policy, npos);
        segment_map_impl(policy, fn, segments, npos, detail::position_segment{seg_of.data()}, later);
        const rows_view<const std::int64_t> pos_seg{seg_of.data(), npos, 1};
        if constexpr (is_sum) {
            gather_segment_reduce_impl(policy, fn, cgrad, pos_seg, ids(cidx.data, data_rows), grad_data, sum{},
                                       scatter);
        } else {
            auto per_seg = make_scratch<A>(policy, M * W);
            const rows_view<A> ps{per_seg.data(), M, W};
            segment_map_impl(policy, fn, fixed(1, M), M, detail::divide_by_count<A, G>{cgrad, counts.data(), ps},
                             later);
            gather_segment_reduce_impl(policy, fn, ps.as_const(), pos_seg, ids(cidx.data, data_rows), grad_data, sum{},
                                       scatter);
        }
    } else {
        const std::int64_t* arg = opts.arg_ptr;
        auto own_arg = make_scratch<std::int64_t>(policy, opts.arg_ptr ? 0 : M * W);
        if (arg == nullptr) {
            using Arg = std::conditional_t<is_max, argmax, argmin>;
            gather_segment_reduce_impl(policy, fn, cdata, cidx, segments,
                                       rows_view<std::int64_t>{own_arg.data(), M, W}, Arg{}, later);
            arg = own_arg.data();
        }
        auto target = make_scratch<std::int64_t>(policy, M * W);
        segment_map_impl(policy, fn, fixed(W, M), M * W, detail::arg_element_target{arg, W, data_rows, target.data()},
                         later);
        segment_reduce_impl(policy, fn, rows_view<const G>{cgrad.data, M * W, 1}, ids(target.data(), data_rows * W),
                            rows_view<GD>{grad_data.data, data_rows * W, 1}, sum{}, scatter);
    }
}

} // namespace segred
