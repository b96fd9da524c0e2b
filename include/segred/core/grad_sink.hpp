// segred/core/grad_sink.hpp -- where backward functors put a gradient:
// overwrite, or add into the existing value under options::accumulate, in
// host and device code alike.
#pragma once

#include <cstdint>
#include <type_traits>

#include "config.hpp"
#include "numeric.hpp"
#include "views.hpp"

namespace segred {
namespace detail {

// Type gradients are computed in: float for float (and fp16/bf16), double
// for double.
template <class GV>
using grad_t = real_t<std::remove_cv_t<GV>>;

template <class GV>
struct grad_sink {
    rows_view<GV> g;
    bool accumulate;

    template <class A>
    SEGRED_HD void put(std::int64_t row, std::int64_t f, const A& x) const {
        GV& d = g(row, f);
        d = accumulate ? to_output<GV>(convert<A>(d) + x) : to_output<GV>(x);
    }
    // A row no segment owns: its gradient is 0, i.e. untouched when accumulating.
    SEGRED_HD void zero_row(std::int64_t row) const {
        if (accumulate) return;
        for (std::int64_t f = 0; f < g.width; ++f) g(row, f) = to_output<GV>(0);
    }
};

// The segment_map_impl functor of every row-wise backward: row `row` of
// segment s gets rule(row, s, f) in column f; rows in no segment get 0.
template <class Rule, class GV>
struct row_grad {
    Rule rule;
    grad_sink<GV> sink;

    SEGRED_HD void operator()(std::int64_t row, std::int64_t s) const {
        if (s < 0) {
            sink.zero_row(row);
            return;
        }
        for (std::int64_t f = 0; f < sink.g.width; ++f) sink.put(row, f, rule(row, s, f));
    }
};

template <class Rule, class GV>
row_grad<Rule, GV> make_row_grad(const Rule& rule, rows_view<GV> grad, bool accumulate) {
    return row_grad<Rule, GV>{rule, grad_sink<GV>{grad, accumulate}};
}

} // namespace detail
} // namespace segred
