// segred/bincount_backward.hpp -- gradient of the weighted bincount with
// respect to the weights: a gather,
//
//   grad_weights[i, :] = grad_out[ids[i], :]   (0 for a dropped id)
//
// run as one segment_map_impl over ids(ids, grad_out.n), so the ids are
// validated with bincount's rules and messages and no sort is needed.
#pragma once

#include <cstdint>

#include "core/backend.hpp"
#include "core/backward_checks.hpp"
#include "core/checks.hpp"
#include "core/descriptors.hpp"
#include "core/grad_sink.hpp"
#include "core/options.hpp"
#include "core/views.hpp"

namespace segred {
namespace detail {

template <class A, class G>
struct gather_rule {
    rows_view<const G> grad_out;
    SEGRED_HD A operator()(std::int64_t, std::int64_t s, std::int64_t f) const { return convert<A>(grad_out(s, f)); }
};

} // namespace detail

// grad_out: [B, width], d loss / d out of bincount(policy, weights, ids, out);
// grad_weights: [n, width]. opts.accumulate() adds into grad_weights.
template <class Policy, class I, class G, class GW>
void bincount_backward(const Policy& policy, rows_view<I> id_vec, rows_view<G> grad_out, rows_view<GW> grad_weights,
                       const options& opts = {}) {
    static_assert(detail::is_gradient_type<GW>(), "segred: grad_weights must hold a floating-point type");
    const char* fn = "bincount_backward";
    detail::check_index_vector(fn, "ids", id_vec);
    detail::check_view(fn, "grad_out", grad_out);
    detail::check_view(fn, "grad_weights", grad_weights);
    if (grad_weights.n != id_vec.n)
        detail::fail(fn, "grad_weights have " + detail::to_str(grad_weights.n) + " rows but ids have " +
                             detail::to_str(id_vec.n));
    if (grad_weights.width != grad_out.width)
        detail::fail(fn, "grad_weights have width " + detail::to_str(grad_weights.width) + " but grad_out has width " +
                             detail::to_str(grad_out.width));
    using A = detail::grad_t<GW>;
    segment_map_impl(policy, fn, ids(id_vec.as_const().data, grad_out.n), id_vec.n,
                     detail::make_row_grad(detail::gather_rule<A, G>{grad_out.as_const()}, grad_weights,
                                           opts.accumulate_into),
                     detail::internal_options(opts));
}

} // namespace segred
