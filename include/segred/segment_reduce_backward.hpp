// segred/segment_reduce_backward.hpp -- gradient of segment_reduce /
// accumarray with respect to the values.
//
// Backend-neutral: composed of the backend primitives of core/backend.hpp
// (segment_reduce_impl, segment_map_impl, make_scratch), called unqualified
// so that argument-dependent lookup on the policy picks the backend. Every
// row of values gets its gradient in one segment_map_impl pass; what a rule
// needs per segment (row counts, arg rows, zero counts...) comes from one or
// two reductions into scratch first. The first pass validates the
// descriptor; the later ones skip the validation scans (detail::validated).
//
// See docs/BACKWARD.md for the rules (ties, prod's zeros, std at 0).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/backend.hpp"
#include "core/backward_checks.hpp"
#include "core/checks.hpp"
#include "core/descriptors.hpp"
#include "core/grad_reducers.hpp"
#include "core/grad_sink.hpp"
#include "core/options.hpp"
#include "core/reduce_grad.hpp"
#include "core/reducers.hpp"
#include "core/views.hpp"

namespace segred {
namespace detail {

template <class R>
struct has_backward
    : std::integral_constant<bool, std::is_same<R, segred::sum>::value || std::is_same<R, segred::mean>::value ||
                                       std::is_same<R, segred::min>::value || std::is_same<R, segred::max>::value ||
                                       std::is_same<R, segred::prod>::value ||
                                       std::is_same<R, segred::logsumexp>::value ||
                                       std::is_same<R, segred::var>::value ||
                                       std::is_same<R, segred::stddev>::value> {};

template <class T, class Seg, class O, class G, class GV, class R>
void check_reduce_backward_args(const char* fn, const rows_view<T>& values, const Seg& seg, const rows_view<O>& out,
                                const rows_view<G>& grad_out, const rows_view<GV>& grad_values, const R&,
                                const options& opts) {
    check_view(fn, "values", values);
    check_view(fn, "out", out);
    check_segments(fn, values, seg);
    const std::int64_t M = seg.num_segments();
    if (out.n != M) fail(fn, "out has " + to_str(out.n) + " rows but the segments describe M = " + to_str(M));
    if (out.width != values.width)
        fail(fn, "out has width " + to_str(out.width) + " but values have width " + to_str(values.width));
    check_same_shape(fn, "grad_out", grad_out, "out", out);
    check_same_shape(fn, "grad_values", grad_values, "values", values);
    constexpr bool extremum = std::is_same<R, segred::min>::value || std::is_same<R, segred::max>::value;
    if (opts.arg_ptr != nullptr && !extremum)
        fail(fn, std::string("arg_out (the forward's arg rows) needs min or max, not ") + R::name);
}

template <class Policy, class T, class Seg, class O, class G, class GV, class R>
void reduce_backward(const char* fn, const Policy& policy, rows_view<const T> values, const Seg& seg,
                     rows_view<const O> out, rows_view<const G> grad_out, rows_view<GV> grad_values, const R& r,
                     const options& opts) {
    using A = grad_t<GV>;
    const std::int64_t M = seg.num_segments(), n = values.n, W = values.width;
    const options first = internal_options(opts);  // validates the descriptor
    const options later = validated(first);
    const bool acc = opts.accumulate_into;

    if constexpr (std::is_same<R, segred::sum>::value) {
        segment_map_impl(policy, fn, seg, n, make_row_grad(linear_rule<A, G>{grad_out, nullptr}, grad_values, acc),
                         first);
    } else if constexpr (std::is_same<R, segred::mean>::value) {
        auto counts = make_scratch<std::int64_t>(policy, M);
        segment_reduce_impl(policy, fn, values, seg, rows_view<std::int64_t>{counts.data(), M, 1}, count{}, first);
        segment_map_impl(policy, fn, seg, n,
                         make_row_grad(linear_rule<A, G>{grad_out, counts.data()}, grad_values, acc), later);
    } else if constexpr (std::is_same<R, segred::min>::value || std::is_same<R, segred::max>::value) {
        constexpr bool is_max = std::is_same<R, segred::max>::value;
        if (opts.split_ties_mode) {
            auto ties = make_scratch<std::int64_t>(policy, M * W);
            segment_reduce_impl(policy, fn, values, seg, rows_view<std::int64_t>{ties.data(), M, W},
                                tie_count<is_max>{}, first);
            segment_map_impl(policy, fn, seg, n,
                             make_row_grad(tie_rule<A, T, O, G>{values, out, grad_out, ties.data()}, grad_values, acc),
                             later);
        } else if (opts.arg_ptr != nullptr) {
            segment_map_impl(policy, fn, seg, n,
                             make_row_grad(arg_rule<A, G>{grad_out, opts.arg_ptr}, grad_values, acc), first);
        } else {
            using Arg = std::conditional_t<is_max, segred::argmax, segred::argmin>;
            auto arg = make_scratch<std::int64_t>(policy, M * W);
            segment_reduce_impl(policy, fn, values, seg, rows_view<std::int64_t>{arg.data(), M, W}, Arg{}, first);
            segment_map_impl(policy, fn, seg, n, make_row_grad(arg_rule<A, G>{grad_out, arg.data()}, grad_values, acc),
                             later);
        }
    } else if constexpr (std::is_same<R, segred::prod>::value) {
        using P = accum_t<T>;
        auto zeros = make_scratch<std::int64_t>(policy, M * W);
        auto nzprod = make_scratch<P>(policy, M * W);
        segment_reduce_impl(policy, fn, values, seg, rows_view<std::int64_t>{zeros.data(), M, W}, zero_count{},
                            first);
        segment_reduce_impl(policy, fn, values, seg, rows_view<P>{nzprod.data(), M, W}, nonzero_prod{}, later);
        segment_map_impl(
            policy, fn, seg, n,
            make_row_grad(prod_rule<A, T, P, G>{values, grad_out, zeros.data(), nzprod.data()}, grad_values, acc),
            later);
    } else if constexpr (std::is_same<R, segred::logsumexp>::value) {
        segment_map_impl(policy, fn, seg, n,
                         make_row_grad(logsumexp_rule<A, T, O, G>{values, out, grad_out}, grad_values, acc), first);
    } else {  // var, stddev
        constexpr bool is_std = std::is_same<R, segred::stddev>::value;
        using MA = real_t<T>;
        auto mean_s = make_scratch<MA>(policy, M * W);
        auto counts = make_scratch<std::int64_t>(policy, M);
        options with_counts = first;
        with_counts.counts(counts.data());
        segment_reduce_impl(policy, fn, values, seg, rows_view<MA>{mean_s.data(), M, W}, segred::mean{}, with_counts);
        const variance_rule<is_std, A, T, O, G, MA> rule{values, out, grad_out, mean_s.data(), counts.data(), r.ddof};
        segment_map_impl(policy, fn, seg, n, make_row_grad(rule, grad_values, acc), later);
    }
    (void)r;
}

template <class Policy, class T, class Seg, class O, class G, class GV, class R>
void reduce_backward_front(const char* fn, const Policy& policy, rows_view<T> values, const Seg& seg,
                           rows_view<O> out, rows_view<G> grad_out, rows_view<GV> grad_values, const R& r,
                           const options& opts) {
    static_assert(has_backward<R>::value,
                  "segred: a backward exists for sum, mean, min, max, prod, logsumexp, var and stddev only "
                  "(count, any, all, argmin, argmax are piecewise constant; custom reducers have no known derivative)");
    static_assert(is_gradient_type<GV>(), "segred: grad_values must hold a floating-point type");
    static_assert(!std::is_const<GV>::value, "segred: grad_values is written: it cannot be a view of const");
    check_reduce_backward_args(fn, values, seg, out, grad_out, grad_values, r, opts);
    reduce_backward(fn, policy, values.as_const(), seg, out.as_const(), grad_out.as_const(), grad_values, r, opts);
}

} // namespace detail

// grad_values[i, :] = d loss / d values[i, :] given grad_out = d loss / d out,
// where out = segment_reduce(policy, values, segments, out, reducer) was the
// forward (run without accumulate). out is the forward's result (logsumexp,
// std and split ties read it). With opts.arg_out(arg) the forward's saved arg
// rows route min/max gradients; without, they are recomputed. Rows in no
// segment get 0. opts.accumulate() adds into grad_values instead.
template <class Policy, class T, class Seg, class O, class G, class GV, class R = sum>
void segment_reduce_backward(const Policy& policy, rows_view<T> values, const Seg& segments, rows_view<O> out,
                             rows_view<G> grad_out, rows_view<GV> grad_values, const R& reducer = {},
                             const options& opts = {}) {
    detail::reduce_backward_front("segment_reduce_backward", policy, values, segments, out, grad_out, grad_values,
                                  reducer, opts);
}

// The backward of accumarray: unsorted ids or N-D subscripts.
template <class Policy, class T, class Seg, class O, class G, class GV, class R = sum>
void accumarray_backward(const Policy& policy, rows_view<T> values, const Seg& subs, rows_view<O> out,
                         rows_view<G> grad_out, rows_view<GV> grad_values, const R& reducer = {},
                         const options& opts = {}) {
    static_assert(Seg::kind == segment_kind::ids || Seg::kind == segment_kind::subscripts,
                  "accumarray_backward groups by segred::ids(...) or segred::subscripts(...); "
                  "use segment_reduce_backward for sorted forms");
    detail::reduce_backward_front("accumarray_backward", policy, values, subs, out, grad_out, grad_values, reducer,
                                  opts);
}

} // namespace segred
