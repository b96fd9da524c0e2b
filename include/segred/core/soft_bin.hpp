// segred/core/soft_bin.hpp -- the geometry of soft_histogram and the
// functors its forward and backward map over the values, host and device
// code alike.
//
// B bins of width d = (hi - lo) / B have centers c_b = lo + (b + 0.5) d. A
// position x between two centers splits its weight linearly between them:
// with t = (x - lo) / d - 0.5, bin floor(t) gets 1 - frac(t) and the next
// bin frac(t). At or beyond the first (last) center, everything goes to the
// first (last) bin: positions are clamped, so the histogram keeps the total
// weight. NaN positions belong to no bin.
#pragma once

#include <cstdint>

#include "config.hpp"
#include "grad_sink.hpp"
#include "numeric.hpp"
#include "views.hpp"

namespace segred {
namespace detail {

template <class A>
struct soft_bin {
    std::int64_t lower;  // the bin at or below x (-1: a NaN position)
    std::int64_t upper;  // the next bin, -1 where clamped
    A upper_share;       // frac(t): the upper bin's share
    bool interior;       // between two centers: the shares move with x
};

template <class A>
SEGRED_HD soft_bin<A> locate_soft_bin(A x, A lo, A hi, std::int64_t bins) {
    if (is_nan(x)) return {-1, -1, A(0), false};
    const A t = (x - lo) * (static_cast<A>(bins) / (hi - lo)) - A(0.5);
    if (!(t > A(0))) return {0, -1, A(0), false};
    if (!(t < static_cast<A>(bins - 1))) return {bins - 1, -1, A(0), false};
    std::int64_t b = static_cast<std::int64_t>(t);  // t > 0: truncation is floor
    if (b > bins - 2) b = bins - 2;                 // rounding just below bins - 1
    return {b, b + 1, t - static_cast<A>(b), true};
}

// Forward, one pass per share: bin[i] = the lower (upper) bin of value i and
// share[i, :] = its share of weights[i, :] (weight 1 when weights.data is
// null). Called over fixed(n, 1).
template <class V, class Geo, class P, class W>
struct soft_bin_share {
    rows_view<const P> positions;
    rows_view<const W> weights;
    Geo lo, hi;
    std::int64_t bins;
    bool upper;
    std::int64_t* bin;
    rows_view<V> share;
    SEGRED_HD void operator()(std::int64_t i, std::int64_t) const {
        const soft_bin<Geo> b = locate_soft_bin(convert<Geo>(positions(i, 0)), lo, hi, bins);
        const V up = convert<V>(b.upper_share);
        const V part = upper ? up : (b.upper >= 0 ? V(1) - up : V(1));
        bin[i] = upper ? b.upper : b.lower;
        for (std::int64_t f = 0; f < share.width; ++f)
            share(i, f) = part * (weights.data ? convert<V>(weights(i, f)) : V(1));
    }
};

// Backward for value i: d/d weights[i, f] = its shares of grad_out[:, f];
// d/d positions[i] = sum_f weights[i, f] (g[upper, f] - g[lower, f]) * B / (hi - lo)
// between two centers, 0 where clamped. A null sink is skipped.
template <class A, class Geo, class P, class W, class G, class GP, class GW>
struct soft_bin_grad {
    rows_view<const P> positions;
    rows_view<const W> weights;
    Geo lo, hi;
    std::int64_t bins;
    rows_view<const G> grad_out;
    grad_sink<GP> grad_positions;
    grad_sink<GW> grad_weights;
    SEGRED_HD void operator()(std::int64_t i, std::int64_t) const {
        const soft_bin<Geo> b = locate_soft_bin(convert<Geo>(positions(i, 0)), lo, hi, bins);
        const bool want_w = grad_weights.g.data != nullptr, want_p = grad_positions.g.data != nullptr;
        if (b.lower < 0) {  // NaN position: in no bin
            if (want_w) grad_weights.zero_row(i);
            if (want_p) grad_positions.zero_row(i);
            return;
        }
        const A up = convert<A>(b.upper_share);
        const A low = b.upper >= 0 ? A(1) - up : A(1);
        A slope = A(0);
        for (std::int64_t f = 0; f < grad_out.width; ++f) {
            const A gl = convert<A>(grad_out(b.lower, f));
            const A gu = b.upper >= 0 ? convert<A>(grad_out(b.upper, f)) : A(0);
            if (want_w) grad_weights.put(i, f, low * gl + up * gu);
            if (b.interior) slope += (weights.data ? convert<A>(weights(i, f)) : A(1)) * (gu - gl);
        }
        if (!want_p) return;
        const A dt_dx = convert<A>(static_cast<Geo>(bins) / (hi - lo));
        grad_positions.put(i, 0, b.interior ? slope * dt_dx : A(0));
    }
};

} // namespace detail
} // namespace segred
