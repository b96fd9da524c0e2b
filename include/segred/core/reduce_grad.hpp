// segred/core/reduce_grad.hpp -- per-element gradient rules of
// segment_reduce_backward: rule(row, s, f) is d loss / d values[row, f] for
// a row of segment s, given grad_out and what the forward (or a helper
// reduction) left per segment. Plugged into detail::row_grad
// (core/grad_sink.hpp), they run inside every backend's segment_map_impl.
#pragma once

#include <cmath>
#include <cstdint>

#include "config.hpp"
#include "numeric.hpp"
#include "views.hpp"

namespace segred {
namespace detail {

// sum: g; mean: g / rows in the segment (counts != nullptr).
template <class A, class G>
struct linear_rule {
    rows_view<const G> grad_out;
    const std::int64_t* counts;
    SEGRED_HD A operator()(std::int64_t, std::int64_t s, std::int64_t f) const {
        const A g = convert<A>(grad_out(s, f));
        return counts ? g / static_cast<A>(counts[s]) : g;
    }
};

// min/max: all of g to the arg row (the forward's lowest-row rule).
template <class A, class G>
struct arg_rule {
    rows_view<const G> grad_out;
    const std::int64_t* arg;  // [M, width]
    SEGRED_HD A operator()(std::int64_t row, std::int64_t s, std::int64_t f) const {
        return arg[s * grad_out.width + f] == row ? convert<A>(grad_out(s, f)) : A(0);
    }
};

// min/max with split_ties: g shared evenly by the rows equal to out (when
// out is NaN, by the NaN rows). ties[s, f] counts them.
template <class A, class T, class O, class G>
struct tie_rule {
    rows_view<const T> values;
    rows_view<const O> out;
    rows_view<const G> grad_out;
    const std::int64_t* ties;  // [M, width]
    SEGRED_HD A operator()(std::int64_t row, std::int64_t s, std::int64_t f) const {
        using C = compare_t<T>;
        const C v = convert<C>(values(row, f)), o = convert<C>(out(s, f));
        const bool tied = is_nan(o) ? is_nan(v) : v == o;
        if (!tied) return A(0);
        return convert<A>(grad_out(s, f)) / static_cast<A>(ties[s * grad_out.width + f]);
    }
};

// prod, zeros handled exactly: with z zeros in the segment and P the product
// of its nonzero values,
//   z == 0: g * P / v   (v != 0, so never a division by zero)
//   z == 1: the zero row gets g * P (the product of the others), others 0
//   z >= 2: 0 (every partial product still holds a zero)
template <class A, class T, class P, class G>
struct prod_rule {
    rows_view<const T> values;
    rows_view<const G> grad_out;
    const std::int64_t* zeros;  // [M, width]
    const P* nonzero_prod;      // [M, width]
    SEGRED_HD A operator()(std::int64_t row, std::int64_t s, std::int64_t f) const {
        const std::int64_t i = s * grad_out.width + f;
        const A v = convert<A>(values(row, f));
        const A p = convert<A>(nonzero_prod[i]);
        const A g = convert<A>(grad_out(s, f));
        if (zeros[i] == 0) return g * (p / v);
        if (zeros[i] == 1 && v == A(0)) return g * p;
        return A(0);
    }
};

// logsumexp: g * exp(v - out), the softmax weight. A segment whose out is
// -inf (all values -inf) has no weights to share: 0.
template <class A, class T, class O, class G>
struct logsumexp_rule {
    rows_view<const T> values;
    rows_view<const O> out;
    rows_view<const G> grad_out;
    SEGRED_HD A operator()(std::int64_t row, std::int64_t s, std::int64_t f) const {
        const A o = convert<A>(out(s, f));
        if (o == lowest<A>()) return A(0);
        return convert<A>(grad_out(s, f)) * std::exp(convert<A>(values(row, f)) - o);
    }
};

// var: g * 2 (v - mean) / (n - ddof); std: g * (v - mean) / ((n - ddof) * std),
// 0 where std == 0 (a constant segment: every one-sided derivative of the
// square root is infinite, 0 is the subgradient PyTorch also returns).
// n <= ddof: the forward is NaN, and so is the gradient.
template <bool Sqrt, class A, class T, class O, class G, class MA>
struct variance_rule {
    rows_view<const T> values;
    rows_view<const O> out;  // the forward's std (unused for var)
    rows_view<const G> grad_out;
    const MA* mean;                // [M, width]
    const std::int64_t* counts;    // [M]
    int ddof;
    SEGRED_HD A operator()(std::int64_t row, std::int64_t s, std::int64_t f) const {
        const std::int64_t n = counts[s];
        if (n <= ddof) return quiet_nan<A>();
        const A d = convert<A>(values(row, f)) - convert<A>(mean[s * grad_out.width + f]);
        const A g = convert<A>(grad_out(s, f));
        const A dof = static_cast<A>(n - ddof);
        if constexpr (Sqrt) {
            const A sd = convert<A>(out(s, f));
            if (sd == A(0)) return A(0);
            return g * d / (dof * sd);
        } else {
            return g * A(2) * d / dof;
        }
    }
};

} // namespace detail
} // namespace segred
