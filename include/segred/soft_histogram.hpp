// segred/soft_histogram.hpp -- a histogram differentiable in the positions:
// each value splits its weight linearly between the two nearest bin
// centers (geometry and clamping in core/soft_bin.hpp).
//
//   soft_histogram(policy, positions [n], weights [n, F], lo, hi, out [B, F], opts)
//   soft_histogram(policy, positions [n], lo, hi, out [B], opts)        weight 1
//
// Positions outside [lo, hi] are clamped (they count fully in the end
// bin), so the bounds policy plays no part; NaN positions count nowhere.
// Empty bins get 0 (the fill options do not apply); opts.accumulate() adds
// into out. The forward is two weighted scatters (lower shares, then upper
// shares) through segment_reduce_impl's sum over bin ids held in scratch.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "core/backend.hpp"
#include "core/backward_checks.hpp"
#include "core/checks.hpp"
#include "core/descriptors.hpp"
#include "core/grad_sink.hpp"
#include "core/options.hpp"
#include "core/reducers.hpp"
#include "core/soft_bin.hpp"
#include "core/views.hpp"

namespace segred {
namespace detail {

// The weights argument of the unweighted forms.
inline const rows_view<const float>* no_weights() { return nullptr; }

// out_name: "out" for the forward, "grad_out" for the backward.
template <class P, class W, class O>
void check_soft_histogram_args(const char* fn, const rows_view<P>& positions, const rows_view<W>* weights, double lo,
                               double hi, const char* out_name, const rows_view<O>& out) {
    const std::string on(out_name);
    check_view(fn, "positions", positions);
    if (positions.width != 1) fail(fn, "positions must have width 1, has width " + to_str(positions.width));
    check_view(fn, out_name, out);
    if (out.n < 1) fail(fn, on + " has no bins; it needs at least one row");
    if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi))
        fail(fn, "the range [lo, hi] = [" + std::to_string(lo) + ", " + std::to_string(hi) +
                     "] must be finite with lo < hi");
    if (weights == nullptr) {  // unweighted: one count per bin
        if (out.width != 1) fail(fn, on + " has width " + to_str(out.width) + "; without weights it must have width 1");
        return;
    }
    check_view(fn, "weights", *weights);
    if (weights->n != positions.n)
        fail(fn, "weights have " + to_str(weights->n) + " rows but positions have " + to_str(positions.n));
    if (weights->width != out.width)
        fail(fn, on + " has width " + to_str(out.width) + " but weights have width " + to_str(weights->width));
}

template <class G, class V>
void check_optional_grad(const char* fn, const char* name, const rows_view<G>& grad, const char* of,
                         const rows_view<V>& like) {
    if (grad.data == nullptr && grad.n == 0) return;  // not wanted
    check_same_shape(fn, name, grad, of, like);
}

template <class Policy, class P, class W, class O>
void soft_histogram_run(const Policy& policy, rows_view<const P> positions, rows_view<const W> weights, double lo,
                        double hi, rows_view<O> out, const options& opts) {
    static_assert(is_gradient_type<O>(), "segred: soft_histogram's out must hold a floating-point type");
    using V = real_t<std::remove_cv_t<O>>;
    using Geo = real_t<std::remove_cv_t<P>>;
    const char* fn = "soft_histogram";
    const std::int64_t n = positions.n, B = out.n, F = out.width;
    auto bin = make_scratch<std::int64_t>(policy, n);
    auto share = make_scratch<V>(policy, n * F);
    const rows_view<V> sv{share.data(), n, F};
    // Bin ids are -1 (no bin) or in range by construction: drop skips the -1s.
    options pass = internal_options(opts);
    pass.bounds(bounds_policy::drop).accumulate(opts.accumulate_into);
    for (const bool upper : {false, true}) {
        const soft_bin_share<V, Geo, P, W> f{positions, weights, static_cast<Geo>(lo), static_cast<Geo>(hi), B,
                                              upper, bin.data(), sv};
        segment_map_impl(policy, fn, fixed(n, 1), n, f, pass);
        segment_reduce_impl(policy, fn, sv.as_const(), ids(bin.data(), B), out, sum{}, pass);
        pass.accumulate(true);
    }
}

template <class Policy, class P, class W, class G, class GP, class GW>
void soft_histogram_backward_run(const Policy& policy, rows_view<const P> positions, rows_view<const W> weights,
                                 double lo, double hi, rows_view<const G> grad_out, rows_view<GP> grad_positions,
                                 rows_view<GW> grad_weights, const options& opts) {
    static_assert(is_gradient_type<GP>() && is_gradient_type<GW>(),
                  "segred: soft_histogram gradients must hold a floating-point type");
    using A = std::common_type_t<grad_t<GP>, grad_t<GW>>;
    using Geo = real_t<std::remove_cv_t<P>>;
    const std::int64_t n = positions.n;
    const bool acc = opts.accumulate_into;
    const soft_bin_grad<A, Geo, P, W, G, GP, GW> f{positions,
                                                   weights,
                                                   static_cast<Geo>(lo),
                                                   static_cast<Geo>(hi),
                                                   grad_out.n,
                                                   grad_out,
                                                   grad_sink<GP>{grad_positions, acc},
                                                   grad_sink<GW>{grad_weights, acc}};
    segment_map_impl(policy, "soft_histogram_backward", fixed(n, 1), n, f, internal_options(opts));
}

} // namespace detail

template <class Policy, class P, class W, class O>
void soft_histogram(const Policy& policy, rows_view<P> positions, rows_view<W> weights, double lo, double hi,
                    rows_view<O> out, const options& opts = {}) {
    detail::check_soft_histogram_args("soft_histogram", positions, &weights, lo, hi, "out", out);
    detail::soft_histogram_run(policy, positions.as_const(), weights.as_const(), lo, hi, out, opts);
}

template <class Policy, class P, class O>
void soft_histogram(const Policy& policy, rows_view<P> positions, double lo, double hi, rows_view<O> out,
                    const options& opts = {}) {
    const rows_view<const float> none{};
    detail::check_soft_histogram_args("soft_histogram", positions, detail::no_weights(), lo, hi, "out", out);
    detail::soft_histogram_run(policy, positions.as_const(), none, lo, hi, out, opts);
}

// grad_out: [B, F], d loss / d out. grad_positions [n, 1] and grad_weights
// [n, F] receive the gradients; pass an empty view (rows_view<T>{}) for one
// you do not need. opts.accumulate() adds into them.
template <class Policy, class P, class W, class G, class GP, class GW>
void soft_histogram_backward(const Policy& policy, rows_view<P> positions, rows_view<W> weights, double lo, double hi,
                             rows_view<G> grad_out, rows_view<GP> grad_positions, rows_view<GW> grad_weights,
                             const options& opts = {}) {
    const char* fn = "soft_histogram_backward";
    detail::check_soft_histogram_args(fn, positions, &weights, lo, hi, "grad_out", grad_out);
    detail::check_optional_grad(fn, "grad_positions", grad_positions, "positions", positions);
    detail::check_optional_grad(fn, "grad_weights", grad_weights, "weights", weights);
    detail::soft_histogram_backward_run(policy, positions.as_const(), weights.as_const(), lo, hi, grad_out.as_const(),
                                        grad_positions, grad_weights, opts);
}

// Unweighted: the gradient with respect to the positions only.
template <class Policy, class P, class G, class GP>
void soft_histogram_backward(const Policy& policy, rows_view<P> positions, double lo, double hi, rows_view<G> grad_out,
                             rows_view<GP> grad_positions, const options& opts = {}) {
    const char* fn = "soft_histogram_backward";
    const rows_view<const float> none{};
    detail::check_soft_histogram_args(fn, positions, detail::no_weights(), lo, hi, "grad_out", grad_out);
    detail::check_optional_grad(fn, "grad_positions", grad_positions, "positions", positions);
    detail::soft_histogram_backward_run(policy, positions.as_const(), none, lo, hi, grad_out.as_const(),
                                        grad_positions, rows_view<float>{}, opts);
}

} // namespace segred
