// segred/segment_softmax_backward.hpp -- gradient of segment_softmax with
// respect to its input, from its output y alone:
//
//   grad_values[i, f] = y[i, f] * (g[i, f] - sum over i's segment of g * y)
//
// Three backend-neutral passes: a map writes g * y per row, a sum reduction
// gives each segment's dot product, a second map writes the gradient. Rows
// in no segment (the forward wrote them the fill value) get 0.
#pragma once

#include <cstdint>
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

// products[i, :] = g[i, :] * y[i, :] for rows in a segment.
template <class A, class Y, class G>
struct softmax_products {
    rows_view<const Y> y;
    rows_view<const G> grad_out;
    rows_view<A> products;
    SEGRED_HD void operator()(std::int64_t row, std::int64_t s) const {
        if (s < 0) return;  // never read: the reduction visits segment rows only
        for (std::int64_t f = 0; f < y.width; ++f)
            products(row, f) = convert<A>(grad_out(row, f)) * convert<A>(y(row, f));
    }
};

template <class A, class Y, class G, class D>
struct softmax_rule {
    rows_view<const Y> y;
    rows_view<const G> grad_out;
    const D* dots;  // [M, width]
    SEGRED_HD A operator()(std::int64_t row, std::int64_t s, std::int64_t f) const {
        return convert<A>(y(row, f)) * (convert<A>(grad_out(row, f)) - convert<A>(dots[s * y.width + f]));
    }
};

} // namespace detail

// out: the forward's softmax output y; grad_out: d loss / d y. With
// opts.accumulate() the gradient is added into grad_values.
template <class Policy, class Y, class Seg, class G, class GV>
void segment_softmax_backward(const Policy& policy, rows_view<Y> out, const Seg& segments, rows_view<G> grad_out,
                              rows_view<GV> grad_values, const options& opts = {}) {
    static_assert(detail::is_gradient_type<GV>(), "segred: grad_values must hold a floating-point type");
    const char* fn = "segment_softmax_backward";
    detail::check_view(fn, "out", out);
    detail::check_segments(fn, out, segments);
    detail::check_same_shape(fn, "grad_out", grad_out, "out", out);
    detail::check_same_shape(fn, "grad_values", grad_values, "out", out);
    if (opts.arg_ptr != nullptr) detail::fail(fn, "arg_out is not defined for softmax");

    using A = detail::grad_t<GV>;
    const std::int64_t M = segments.num_segments(), n = out.n, W = out.width;
    const options first = detail::internal_options(opts);
    const options later = detail::validated(first);
    const auto y = out.as_const();
    const auto g = grad_out.as_const();

    // The products go to grad_values itself when it is about to be
    // overwritten anyway and holds the compute type; else to scratch.
    constexpr bool reuse_output = std::is_same<std::remove_cv_t<GV>, A>::value;
    const bool in_place = reuse_output && !opts.accumulate_into;
    auto scratch_products = make_scratch<A>(policy, in_place ? 0 : n * W);
    A* products = nullptr;
    if constexpr (reuse_output) products = in_place ? grad_values.data : scratch_products.data();
    else products = scratch_products.data();
    const rows_view<A> pv{products, n, W};

    auto dots = make_scratch<A>(policy, M * W);
    segment_map_impl(policy, fn, segments, n, detail::softmax_products<A, Y, G>{y, g, pv}, first);
    segment_reduce_impl(policy, fn, pv.as_const(), segments, rows_view<A>{dots.data(), M, W}, sum{}, later);
    segment_map_impl(policy, fn, segments, n,
                     detail::make_row_grad(detail::softmax_rule<A, Y, G, A>{y, g, dots.data()}, grad_values,
                                           opts.accumulate_into),
                     later);
}

} // namespace segred
