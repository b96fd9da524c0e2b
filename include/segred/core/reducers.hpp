// segred/core/reducers.hpp -- the reducers, written once for both backends.
//
// A reducer R describes a reduction by an explicit state (torch_scatter's
// init/update/finalize, plus combine so partial results of one segment can be
// merged, which parallel backends need):
//
//   template <class T> using state = ...;          state for value type T
//   template <class T> state<T> init() const;      the empty state
//   template <class T> void update(state<T>&, const T& v, int64_t row) const;
//   template <class S> void combine(S& a, const S& b) const;
//                                                  a := a (+) b; for every
//                                                  built-in reducer the result
//                                                  does not depend on order
//   template <class S> auto finalize(const S&) const;    the segment's value
//   template <class T> auto identity() const;      value for fill_identity()
//   static constexpr bool accumulates;             may seed from existing out
//   template <class T, class O> state<T> seed(const O& existing) const;
//                                                  state holding `existing`
//                                                  as one more element
//   static constexpr bool has_arg;                 tracks the winning row;
//                                                  only then may update read
//                                                  its row argument (the host
//                                                  may pass 0 otherwise)
//
// Every member is SEGRED_HD so the CUDA backend runs the same code.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "config.hpp"
#include "numeric.hpp"

namespace segred {

template <class R, class T>
using state_t = typename R::template state<T>;

struct sum {
    static constexpr const char* name = "sum";
    static constexpr bool accumulates = true;
    static constexpr bool has_arg = false;
    template <class T> using state = detail::accum_t<T>;
    template <class T> SEGRED_HD state<T> init() const { return state<T>(0); }
    template <class T> SEGRED_HD void update(state<T>& s, const T& v, std::int64_t) const {
        s += detail::convert<state<T>>(v);
    }
    template <class S> SEGRED_HD void combine(S& a, const S& b) const { a += b; }
    template <class S> SEGRED_HD S finalize(const S& s) const { return s; }
    template <class T> SEGRED_HD state<T> identity() const { return state<T>(0); }
    template <class T, class O> SEGRED_HD state<T> seed(const O& e) const { return detail::convert<state<T>>(e); }
};

struct prod {
    static constexpr const char* name = "prod";
    static constexpr bool accumulates = true;
    static constexpr bool has_arg = false;
    template <class T> using state = detail::accum_t<T>;
    template <class T> SEGRED_HD state<T> init() const { return state<T>(1); }
    template <class T> SEGRED_HD void update(state<T>& s, const T& v, std::int64_t) const {
        s *= detail::convert<state<T>>(v);
    }
    template <class S> SEGRED_HD void combine(S& a, const S& b) const { a *= b; }
    template <class S> SEGRED_HD S finalize(const S& s) const { return s; }
    template <class T> SEGRED_HD state<T> identity() const { return state<T>(1); }
    template <class T, class O> SEGRED_HD state<T> seed(const O& e) const { return detail::convert<state<T>>(e); }
};

namespace detail {
// NaN-propagating extremum of two values (np.maximum / torch.amax semantics).
template <bool Max, class A>
SEGRED_HD A pick_extremum(const A& a, const A& b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return Max ? (b > a ? b : a) : (b < a ? b : a);
}

template <bool Max>
struct extremum {
    static constexpr bool accumulates = true;
    static constexpr bool has_arg = false;
    template <class T> using state = compare_t<T>;
    template <class T> SEGRED_HD state<T> init() const { return Max ? lowest<state<T>>() : highest<state<T>>(); }
    template <class T> SEGRED_HD void update(state<T>& s, const T& v, std::int64_t) const {
        s = pick_extremum<Max>(s, convert<state<T>>(v));
    }
    template <class S> SEGRED_HD void combine(S& a, const S& b) const { a = pick_extremum<Max>(a, b); }
    template <class S> SEGRED_HD S finalize(const S& s) const { return s; }
    template <class T> SEGRED_HD state<T> identity() const { return init<T>(); }
    template <class T, class O> SEGRED_HD state<T> seed(const O& e) const { return convert<state<T>>(e); }
};

// Value and winning row. A NaN beats every number; among equals the lowest
// row wins, so the result is the same whatever order states are combined in.
template <class A>
struct valued_row {
    A value;
    std::int64_t row;
};

// Rows start at this sentinel so a real row always wins a tie against the
// empty state (a segment of only -inf values still reports its first row).
inline constexpr std::int64_t no_row = static_cast<std::int64_t>(~std::uint64_t(0) >> 1);

template <bool Max, bool ReturnsArg>
struct arg_extremum {
    static constexpr bool accumulates = false;
    static constexpr bool has_arg = true;
    template <class T> using state = valued_row<compare_t<T>>;
    template <class T> SEGRED_HD state<T> init() const {
        return {Max ? lowest<compare_t<T>>() : highest<compare_t<T>>(), no_row};
    }
    template <class S> SEGRED_HD static bool better(const S& b, const S& a) {
        const bool bn = is_nan(b.value), an = is_nan(a.value);
        if (bn != an) return bn;
        if (!bn && b.value != a.value) return Max ? b.value > a.value : b.value < a.value;
        return b.row < a.row;
    }
    template <class T> SEGRED_HD void update(state<T>& s, const T& v, std::int64_t row) const {
        const state<T> c{convert<compare_t<T>>(v), row};
        if (better(c, s)) s = c;
    }
    template <class S> SEGRED_HD void combine(S& a, const S& b) const {
        if (better(b, a)) a = b;
    }
    // The arg form returns the row (-1 for an empty state); the value form,
    // used for min/max with an arg out, returns the value.
    template <class S> SEGRED_HD auto finalize(const S& s) const {
        if constexpr (ReturnsArg) {
            return s.row == no_row ? std::int64_t(-1) : s.row;
        } else {
            return s.value;
        }
    }
    template <class S> SEGRED_HD std::int64_t arg(const S& s) const { return s.row == no_row ? -1 : s.row; }
    template <class T> SEGRED_HD auto identity() const {
        if constexpr (ReturnsArg) {
            return std::int64_t(-1);
        } else {
            return init<T>().value;
        }
    }
    template <class T, class O> SEGRED_HD state<T> seed(const O&) const { return init<T>(); }
};
} // namespace detail

struct min : detail::extremum<false> {
    static constexpr const char* name = "min";
};
struct max : detail::extremum<true> {
    static constexpr const char* name = "max";
};
struct argmin : detail::arg_extremum<false, true> {
    static constexpr const char* name = "argmin";
};
struct argmax : detail::arg_extremum<true, true> {
    static constexpr const char* name = "argmax";
};

namespace detail {
// min/max when the caller asked for the winning row too (options::arg_out).
struct min_with_arg : arg_extremum<false, false> {
    static constexpr const char* name = "min";
};
struct max_with_arg : arg_extremum<true, false> {
    static constexpr const char* name = "max";
};

// The reducer to run when an arg out is requested; void where none applies.
template <class R> struct with_arg { using type = void; };
template <> struct with_arg<segred::min> { using type = min_with_arg; };
template <> struct with_arg<segred::max> { using type = max_with_arg; };
template <> struct with_arg<segred::argmin> { using type = segred::argmin; };
template <> struct with_arg<segred::argmax> { using type = segred::argmax; };

template <class A>
struct sum_count {
    A sum;
    std::int64_t n;
};

// A mean's result from its sum and row count: real for integer sums.
template <class A>
SEGRED_HD auto mean_of(const A& sum, std::int64_t n) {
    using R = std::conditional_t<std::is_floating_point<A>::value, A, double>;
    return static_cast<R>(sum) / static_cast<R>(n);
}
} // namespace detail

// Mean; with `accumulate` the existing output counts as one more element,
// as torch.scatter_reduce(include_self=True) does. Integers give a real mean
// (then converted to the output type).
struct mean {
    static constexpr const char* name = "mean";
    static constexpr bool accumulates = true;
    static constexpr bool has_arg = false;
    template <class T> using state = detail::sum_count<detail::accum_t<T>>;
    template <class T> SEGRED_HD state<T> init() const { return {detail::accum_t<T>(0), 0}; }
    template <class T> SEGRED_HD void update(state<T>& s, const T& v, std::int64_t) const {
        s.sum += detail::convert<detail::accum_t<T>>(v);
        ++s.n;
    }
    template <class S> SEGRED_HD void combine(S& a, const S& b) const {
        a.sum += b.sum;
        a.n += b.n;
    }
    template <class S> SEGRED_HD auto finalize(const S& s) const { return detail::mean_of(s.sum, s.n); }
    template <class T> SEGRED_HD detail::accum_t<T> identity() const { return 0; }
    template <class T, class O> SEGRED_HD state<T> seed(const O& e) const {
        return {detail::convert<detail::accum_t<T>>(e), 1};
    }
};

namespace detail {
// The mean folded as a plain sum, its count taken where the segment is
// written (write_result) from the segment's row count, which inside a
// sorted segment it always equals (rows of ids out of range belong to no
// segment). The GPU's tile reductions take it for float and double means:
// their state is then one value, parked like a sum's, and their folds add
// no 64-bit count row by row. The same sums and divisions as `mean`, so the
// same bits.
// Its fold, identity and seed are the sum's; its result is mean's of the
// sum and the rows (write_result calls finalize_rows, never finalize).
struct mean_of_rows : segred::sum {
    static constexpr const char* name = "mean";
    template <class S> SEGRED_HD auto finalize_rows(const S& s, std::int64_t rows) const { return mean_of(s, rows); }
};

// Whether R's result is its state divided by the segment's row count.
template <class R>
constexpr bool divides_by_rows = std::is_same<R, mean_of_rows>::value;
} // namespace detail

// Number of rows in the segment (rows dropped by bounds::drop do not count).
struct count {
    static constexpr const char* name = "count";
    static constexpr bool accumulates = true;
    static constexpr bool has_arg = false;
    template <class T> using state = std::int64_t;
    template <class T> SEGRED_HD state<T> init() const { return 0; }
    template <class T> SEGRED_HD void update(state<T>& s, const T&, std::int64_t) const { ++s; }
    template <class S> SEGRED_HD void combine(S& a, const S& b) const { a += b; }
    template <class S> SEGRED_HD S finalize(const S& s) const { return s; }
    template <class T> SEGRED_HD std::int64_t identity() const { return 0; }
    template <class T, class O> SEGRED_HD state<T> seed(const O& e) const { return detail::convert<std::int64_t>(e); }
};

namespace detail {
template <bool Any>
struct truth {
    static constexpr bool accumulates = true;
    static constexpr bool has_arg = false;
    template <class T> using state = bool;
    template <class T> SEGRED_HD bool init() const { return !Any; }
    template <class T> SEGRED_HD void update(bool& s, const T& v, std::int64_t) const {
        const bool nz = convert<accum_t<T>>(v) != accum_t<T>(0);  // NaN counts as true, as in NumPy
        s = Any ? (s || nz) : (s && nz);
    }
    SEGRED_HD void combine(bool& a, const bool& b) const { a = Any ? (a || b) : (a && b); }
    SEGRED_HD int finalize(const bool& s) const { return s ? 1 : 0; }
    template <class T> SEGRED_HD int identity() const { return Any ? 0 : 1; }
    template <class T, class O> SEGRED_HD bool seed(const O& e) const { return convert<double>(e) != 0.0; }
};
} // namespace detail

struct any : detail::truth<true> {
    static constexpr const char* name = "any";
};
struct all : detail::truth<false> {
    static constexpr const char* name = "all";
};

namespace detail {
template <class A>
struct max_sumexp {
    A m;  // running maximum
    A s;  // sum of exp(v - m); 0 only in the empty state
};
} // namespace detail

// log(sum(exp(v))) computed stably (running max, rescaled sum).
struct logsumexp {
    static constexpr const char* name = "logsumexp";
    static constexpr bool accumulates = true;
    static constexpr bool has_arg = false;
    template <class T> using state = detail::max_sumexp<detail::real_t<T>>;
    template <class T> SEGRED_HD state<T> init() const { return {detail::lowest<detail::real_t<T>>(), 0}; }
    template <class T> SEGRED_HD void update(state<T>& s, const T& v, std::int64_t) const {
        combine(s, state<T>{detail::convert<detail::real_t<T>>(v), 1});
    }
    template <class S> SEGRED_HD void combine(S& a, const S& b) const {
        using A = decltype(a.m);
        if (b.s == A(0)) return;
        if (a.s == A(0)) {
            a = b;
            return;
        }
        const A m = detail::pick_extremum<true>(a.m, b.m);
        if (detail::is_nan(m)) {
            a.m = m;
            a.s = 1;
            return;
        }
        // Equal maxima scale by exactly 1: keeps +inf - +inf out of exp.
        const A sa = a.m == m ? a.s : a.s * std::exp(a.m - m);
        const A sb = b.m == m ? b.s : b.s * std::exp(b.m - m);
        a.m = m;
        a.s = sa + sb;
    }
    template <class S> SEGRED_HD auto finalize(const S& s) const { return s.m + std::log(s.s); }
    template <class T> SEGRED_HD detail::real_t<T> identity() const { return detail::lowest<detail::real_t<T>>(); }
    template <class T, class O> SEGRED_HD state<T> seed(const O& e) const {
        return {detail::convert<detail::real_t<T>>(e), 1};
    }
};

namespace detail {
template <class A>
struct welford {
    std::int64_t n;
    A mean;
    A m2;  // sum of squared deviations from the mean
};

// Variance by Welford's update and Chan's merge; `ddof` is NumPy's (0: divide
// by n, the default as in np.var; 1: the unbiased estimate of torch.var).
// A segment with n <= ddof gives NaN.
template <bool Sqrt>
struct variance {
    int ddof = 0;
    static constexpr bool accumulates = false;
    static constexpr bool has_arg = false;
    template <class T> using state = welford<real_t<T>>;
    template <class T> SEGRED_HD state<T> init() const { return {0, 0, 0}; }
    template <class T> SEGRED_HD void update(state<T>& s, const T& v, std::int64_t) const {
        using A = real_t<T>;
        const A x = convert<A>(v);
        ++s.n;
        const A d = x - s.mean;
        s.mean += d / static_cast<A>(s.n);
        s.m2 += d * (x - s.mean);
    }
    template <class S> SEGRED_HD void combine(S& a, const S& b) const {
        using A = decltype(a.mean);
        if (b.n == 0) return;
        if (a.n == 0) {
            a = b;
            return;
        }
        const std::int64_t n = a.n + b.n;
        const A d = b.mean - a.mean;
        const A fa = static_cast<A>(a.n), fb = static_cast<A>(b.n), fn = static_cast<A>(n);
        a.mean += d * (fb / fn);
        a.m2 += b.m2 + d * d * (fa * fb / fn);
        a.n = n;
    }
    template <class S> SEGRED_HD auto finalize(const S& s) const {
        using A = decltype(s.mean);
        if (s.n <= ddof) return quiet_nan<A>();
        const A v = s.m2 / static_cast<A>(s.n - ddof);
        if constexpr (Sqrt) {
            return static_cast<A>(std::sqrt(v));
        } else {
            return v;
        }
    }
    template <class T> SEGRED_HD real_t<T> identity() const { return quiet_nan<real_t<T>>(); }
    template <class T, class O> SEGRED_HD state<T> seed(const O&) const { return init<T>(); }
};
} // namespace detail

struct var : detail::variance<false> {
    static constexpr const char* name = "var";
    constexpr var() = default;
    constexpr explicit var(int ddof_) { ddof = ddof_; }
};
// Standard deviation. Named stddev, not std: a segred::std would hide
// namespace std from all code inside namespace segred and from every user who
// writes `using namespace segred`.
struct stddev : detail::variance<true> {
    static constexpr const char* name = "std";
    constexpr stddev() = default;
    constexpr explicit stddev(int ddof_) { ddof = ddof_; }
};

// User reducer from an associative, commutative binary op and its identity.
// The state (and accumulation) type is the identity's type.
template <class Op, class S>
struct custom_reducer {
    static constexpr const char* name = "custom reducer";
    static constexpr bool accumulates = true;
    static constexpr bool has_arg = false;
    Op op;
    S id;
    template <class T> using state = S;
    template <class T> SEGRED_HD S init() const { return id; }
    template <class T> SEGRED_HD void update(S& s, const T& v, std::int64_t) const { s = op(s, detail::convert<S>(v)); }
    SEGRED_HD void combine(S& a, const S& b) const { a = op(a, b); }
    SEGRED_HD S finalize(const S& s) const { return s; }
    template <class T> SEGRED_HD S identity() const { return id; }
    template <class T, class O> SEGRED_HD S seed(const O& e) const { return detail::convert<S>(e); }
};

template <class Op, class S>
custom_reducer<Op, S> reducer(Op op, S identity) {
    return {op, identity};
}

} // namespace segred
