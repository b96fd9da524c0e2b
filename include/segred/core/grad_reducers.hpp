// segred/core/grad_reducers.hpp -- internal reducers the backward passes
// need, written to the same reducer interface as core/reducers.hpp so every
// backend's segment_reduce_impl runs them unchanged.
//
//   nonzero_prod     product of the segment's nonzero values (1 if none):
//                    prod's gradient without ever dividing by zero
//   zero_count       how many values are exactly 0
//   tie_count<Max>   how many values equal the segment's max (min); when the
//                    extremum is NaN, how many NaNs (min/max propagate NaN)
//
// They are internal (segred::detail) and never take part in accumulate.
#pragma once

#include <cstdint>

#include "config.hpp"
#include "numeric.hpp"
#include "reducers.hpp"

namespace segred {
namespace detail {

struct nonzero_prod {
    static constexpr const char* name = "nonzero_prod";
    static constexpr bool accumulates = false;
    static constexpr bool has_arg = false;
    template <class T> using state = accum_t<T>;
    template <class T> SEGRED_HD state<T> init() const { return state<T>(1); }
    template <class T> SEGRED_HD void update(state<T>& s, const T& v, std::int64_t) const {
        const state<T> x = convert<state<T>>(v);
        if (x != state<T>(0)) s *= x;  // NaN != 0: a NaN still poisons the product
    }
    template <class S> SEGRED_HD void combine(S& a, const S& b) const { a *= b; }
    template <class S> SEGRED_HD S finalize(const S& s) const { return s; }
    template <class T> SEGRED_HD state<T> identity() const { return state<T>(1); }
    template <class T, class O> SEGRED_HD state<T> seed(const O&) const { return init<T>(); }
};

struct zero_count {
    static constexpr const char* name = "zero_count";
    static constexpr bool accumulates = false;
    static constexpr bool has_arg = false;
    template <class T> using state = std::int64_t;
    template <class T> SEGRED_HD state<T> init() const { return 0; }
    template <class T> SEGRED_HD void update(state<T>& s, const T& v, std::int64_t) const {
        if (convert<accum_t<T>>(v) == accum_t<T>(0)) ++s;
    }
    template <class S> SEGRED_HD void combine(S& a, const S& b) const { a += b; }
    template <class S> SEGRED_HD S finalize(const S& s) const { return s; }
    template <class T> SEGRED_HD std::int64_t identity() const { return 0; }
    template <class T, class O> SEGRED_HD state<T> seed(const O&) const { return 0; }
};

template <class A>
struct value_count {
    A value;
    std::int64_t n;  // how many values equal `value` (NaN: how many NaNs)
};

// Extremum and its multiplicity. Associative and commutative: the count of
// the better value wins, equal values add their counts.
template <bool Max>
struct tie_count {
    static constexpr const char* name = Max ? "max" : "min";
    static constexpr bool accumulates = false;
    static constexpr bool has_arg = false;
    template <class T> using state = value_count<compare_t<T>>;
    template <class T> SEGRED_HD state<T> init() const {
        return {Max ? lowest<compare_t<T>>() : highest<compare_t<T>>(), 0};
    }
    template <class T> SEGRED_HD void update(state<T>& s, const T& v, std::int64_t) const {
        combine(s, state<T>{convert<compare_t<T>>(v), 1});
    }
    template <class S> SEGRED_HD void combine(S& a, const S& b) const {
        const bool an = is_nan(a.value), bn = is_nan(b.value);
        if (an != bn) {
            if (bn) a = b;  // NaN beats every number
            return;
        }
        if (an || a.value == b.value) {
            a.n += b.n;
        } else if (Max ? b.value > a.value : b.value < a.value) {
            a = b;
        }
    }
    template <class S> SEGRED_HD std::int64_t finalize(const S& s) const { return s.n; }
    template <class T> SEGRED_HD std::int64_t identity() const { return 0; }
    template <class T, class O> SEGRED_HD state<T> seed(const O&) const { return init<T>(); }
};

} // namespace detail
} // namespace segred
