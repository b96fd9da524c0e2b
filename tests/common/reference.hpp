// tests/common/reference.hpp -- an independent reference for segred's tests.
//
// Plain sequential double-precision code that shares nothing with the library:
// no segred header is included. It has three parts:
//
//   1. Descriptor interpretation: every segment form (offsets, lengths, sorted
//      ids, ids, fixed, N-D subscripts) becomes `row_lists`, the rows of each
//      segment in increasing order, with the `drop` bounds policy applied when
//      asked. Without drop the input must be valid; invalid input throws
//      std::logic_error (a bug in the test, never an expected outcome).
//   2. Reductions over row_lists: every reducer, fill mode, accumulate, counts
//      and arg rows, computed in double; plus softmax, gather and index_add.
//      Each result element carries an error `scale` so callers can compare a
//      float or double implementation with a relative tolerance.
//   3. Generators for random segmentations, descriptors and values.
//
// Everything is header-only and host-only, so the CUDA tests can reuse it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace segref {

using i64 = std::int64_t;

// rows[s] = the value rows of segment s, in increasing order.
using row_lists = std::vector<std::vector<i64>>;

[[noreturn]] inline void invalid(const std::string& what) {
    throw std::logic_error("segref: invalid input given to the reference without drop: " + what);
}

// ---------------------------------------------------------------------------
// 1. Descriptor interpretation

// CSR offsets (M+1 values). Rows outside [off[0], off[M]) belong to no segment.
// drop: every offset is clamped into [0, n] and then raised to the running
// maximum of the clamped offsets before it.
template <class I>
row_lists from_offsets(const I* off, i64 M, i64 n, bool drop) {
    row_lists s(static_cast<std::size_t>(M));
    if (M == 0) return s;
    std::vector<i64> o(static_cast<std::size_t>(M + 1));
    i64 prev = 0;
    for (i64 k = 0; k <= M; ++k) {
        i64 v = static_cast<i64>(off[k]);
        if (drop) {
            v = std::min(std::max<i64>(v, 0), n);
            v = std::max(v, prev);
        } else if (v < 0 || v > n || (k > 0 && v < prev)) {
            invalid("offsets[" + std::to_string(k) + "]");
        }
        o[static_cast<std::size_t>(k)] = prev = v;
    }
    for (i64 k = 0; k < M; ++k)
        for (i64 r = o[static_cast<std::size_t>(k)]; r < o[static_cast<std::size_t>(k + 1)]; ++r)
            s[static_cast<std::size_t>(k)].push_back(r);
    return s;
}

// M lengths; without drop they must be non-negative and sum to n. drop: a
// negative length counts as 0 and coverage stops at row n.
template <class I>
row_lists from_lengths(const I* len, i64 M, i64 n, bool drop) {
    row_lists s(static_cast<std::size_t>(M));
    i64 r = 0;
    for (i64 k = 0; k < M; ++k) {
        i64 l = static_cast<i64>(len[k]);
        if (drop) {
            l = std::min(std::max<i64>(l, 0), n - r);
        } else if (l < 0) {
            invalid("lengths[" + std::to_string(k) + "]");
        }
        for (i64 j = 0; j < l; ++j) s[static_cast<std::size_t>(k)].push_back(r++);
    }
    if (!drop && r != n) invalid("lengths sum");
    return s;
}

// One id per row, any order; out-of-range ids are skipped under drop.
template <class I>
row_lists from_ids(const I* ids, i64 M, i64 n, bool drop) {
    row_lists s(static_cast<std::size_t>(M));
    for (i64 i = 0; i < n; ++i) {
        const i64 k = static_cast<i64>(ids[i]);
        if (k < 0 || k >= M) {
            if (drop) continue;
            invalid("ids[" + std::to_string(i) + "]");
        }
        s[static_cast<std::size_t>(k)].push_back(i);
    }
    return s;
}

// Non-decreasing ids; under drop they behave exactly as unsorted ids.
template <class I>
row_lists from_sorted_ids(const I* ids, i64 M, i64 n, bool drop) {
    if (!drop)
        for (i64 i = 1; i < n; ++i)
            if (ids[i] < ids[i - 1]) invalid("sorted_ids[" + std::to_string(i) + "] decreases");
    return from_ids(ids, M, n, drop);
}

inline row_lists from_fixed(i64 size, i64 M, i64 n) {
    if (size < 0 || M < 0 || size * M != n) invalid("fixed");
    row_lists s(static_cast<std::size_t>(M));
    for (i64 k = 0; k < M; ++k)
        for (i64 j = 0; j < size; ++j) s[static_cast<std::size_t>(k)].push_back(k * size + j);
    return s;
}

inline i64 shape_product(const std::vector<i64>& shape) {
    i64 m = 1;
    for (i64 d : shape) m *= d;
    return m;
}

// [n, ndim] 0-based subscripts, row-major (C order) linearization.
template <class I>
row_lists from_subscripts(const I* subs, const std::vector<i64>& shape, i64 n, bool drop) {
    const i64 ndim = static_cast<i64>(shape.size());
    row_lists s(static_cast<std::size_t>(shape_product(shape)));
    for (i64 i = 0; i < n; ++i) {
        i64 lin = 0;
        bool ok = true;
        for (i64 d = 0; d < ndim; ++d) {
            const i64 v = static_cast<i64>(subs[i * ndim + d]);
            if (v < 0 || v >= shape[static_cast<std::size_t>(d)]) ok = false;
            lin = lin * shape[static_cast<std::size_t>(d)] + v;
        }
        if (!ok) {
            if (drop) continue;
            invalid("subscripts row " + std::to_string(i));
        }
        s[static_cast<std::size_t>(lin)].push_back(i);
    }
    return s;
}

// ---------------------------------------------------------------------------
// 2. Reductions

enum class op { sum, prod, min, max, mean, count, argmin, argmax, any, all, logsumexp, var, stddev, maxabs };
// maxabs is the custom reducer the tests build: reducer(max(|a|, |b|), 0).

inline const char* name(op o) {
    switch (o) {
    case op::sum: return "sum";
    case op::prod: return "prod";
    case op::min: return "min";
    case op::max: return "max";
    case op::mean: return "mean";
    case op::count: return "count";
    case op::argmin: return "argmin";
    case op::argmax: return "argmax";
    case op::any: return "any";
    case op::all: return "all";
    case op::logsumexp: return "logsumexp";
    case op::var: return "var";
    case op::stddev: return "std";
    case op::maxabs: return "custom(maxabs)";
    }
    return "?";
}

// May the existing output take part (options::accumulate)?
inline bool accumulates(op o) { return o != op::argmin && o != op::argmax && o != op::var && o != op::stddev; }
// May an arg out be requested?
inline bool has_arg(op o) { return o == op::min || o == op::max || o == op::argmin || o == op::argmax; }
// Is the value written the winning row?
inline bool returns_arg(op o) { return o == op::argmin || o == op::argmax; }

enum class fill { zero, identity, nan, constant };

// The reducer's identity for values of type T (what fill_identity() writes).
template <class T>
double identity(op o) {
    constexpr bool integral = std::is_integral<T>::value;
    const double inf = std::numeric_limits<double>::infinity();
    switch (o) {
    case op::prod:
    case op::all: return 1.0;
    case op::min: return integral ? static_cast<double>(std::numeric_limits<T>::max()) : inf;
    case op::max: return integral ? static_cast<double>(std::numeric_limits<T>::lowest()) : -inf;
    case op::logsumexp: return -inf;
    case op::var:
    case op::stddev: return std::numeric_limits<double>::quiet_NaN();
    case op::argmin:
    case op::argmax: return -1.0;
    default: return 0.0;
    }
}

struct params {
    op o = op::sum;
    int ddof = 0;                // var / stddev
    fill fill_mode = fill::zero;
    double fill_value = 0.0;     // fill::constant
    bool accumulate = false;     // existing out takes part, first
    std::vector<double> initial; // [M * out_width]: the existing out when accumulate
    i64 out_width = -1;          // -1: the values' width (count may use 1)
};

struct result {
    std::vector<double> out;   // [M * out_width]
    std::vector<double> scale; // error scale of each out element (see compare)
    std::vector<i64> arg;      // [M * out_width]: winning row, -1 for none
    std::vector<i64> counts;   // [M]: rows per segment
};

namespace detail {

inline bool has_nan(const std::vector<double>& x) {
    for (double v : x)
        if (std::isnan(v)) return true;
    return false;
}

// Winning position in x (first NaN, else first extreme value), or -1 if empty.
inline i64 arg_extreme(const std::vector<double>& x, bool is_max) {
    i64 best = -1;
    for (std::size_t j = 0; j < x.size(); ++j) {
        if (std::isnan(x[j])) return static_cast<i64>(j);
        if (best < 0 || (is_max ? x[j] > x[static_cast<std::size_t>(best)] : x[j] < x[static_cast<std::size_t>(best)]))
            best = static_cast<i64>(j);
    }
    return best;
}

struct cell {
    double value;
    double scale;
};

// Reduce a non-empty list x (which includes the existing value first when
// accumulating; count is handled by the caller).
inline cell reduce_list(op o, int ddof, const std::vector<double>& x) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double cnt = static_cast<double>(x.size());
    double abs_sum = 0.0, sum = 0.0, sq = 0.0;
    for (double v : x) {
        sum += v;
        abs_sum += std::fabs(v);
        sq += v * v;
    }
    switch (o) {
    case op::sum: return {sum, abs_sum};
    case op::prod: {
        double p = 1.0;
        for (double v : x) p *= v;
        return {p, std::fabs(p)};
    }
    case op::min:
    case op::max: {
        const i64 j = arg_extreme(x, o == op::max);
        return {x[static_cast<std::size_t>(j)], 0.0};
    }
    case op::mean: return {sum / cnt, abs_sum / cnt};
    case op::any: {
        bool r = false;
        for (double v : x) r = r || v != 0.0;  // NaN != 0: true, as NumPy
        return {r ? 1.0 : 0.0, 0.0};
    }
    case op::all: {
        bool r = true;
        for (double v : x) r = r && v != 0.0;
        return {r ? 1.0 : 0.0, 0.0};
    }
    case op::logsumexp: {
        if (has_nan(x)) return {nan, 0.0};
        double m = -std::numeric_limits<double>::infinity();
        for (double v : x) m = std::max(m, v);
        if (std::isinf(m)) return {m, 0.0};
        double s = 0.0;
        for (double v : x) s += std::exp(v - m);
        const double r = m + std::log(s);
        return {r, std::max(1.0, std::fabs(m) + std::log(cnt))};
    }
    case op::var:
    case op::stddev: {
        if (x.size() <= static_cast<std::size_t>(std::max(ddof, 0))) return {nan, 0.0};
        if (has_nan(x)) return {nan, 0.0};
        const double mean = sum / cnt;
        double m2 = 0.0;
        for (double v : x) m2 += (v - mean) * (v - mean);
        const double denom = cnt - ddof;
        const double v = m2 / denom, vs = sq / denom;
        if (o == op::var) return {v, vs};
        return {std::sqrt(v), std::sqrt(vs)};
    }
    case op::maxabs: {
        double m = 0.0;
        for (double v : x) m = std::max(m, std::fabs(v));
        return {m, 0.0};
    }
    default: break;
    }
    invalid("reduce_list op");
}

} // namespace detail

// Reduce `values` ([n, width], row-major) over the segments of `segs`.
template <class T>
result reduce(const T* values, i64 width, const row_lists& segs, const params& p) {
    const i64 M = static_cast<i64>(segs.size());
    const i64 ow = p.out_width < 0 ? width : p.out_width;
    if (p.accumulate && static_cast<i64>(p.initial.size()) != M * ow) invalid("params.initial size");
    if (p.accumulate && !accumulates(p.o)) invalid("accumulate with a non-accumulating op");
    result r;
    r.out.assign(static_cast<std::size_t>(M * ow), 0.0);
    r.scale.assign(static_cast<std::size_t>(M * ow), 0.0);
    r.arg.assign(static_cast<std::size_t>(M * ow), -1);
    r.counts.assign(static_cast<std::size_t>(M), 0);
    std::vector<double> x;
    for (i64 s = 0; s < M; ++s) {
        const std::vector<i64>& rows = segs[static_cast<std::size_t>(s)];
        r.counts[static_cast<std::size_t>(s)] = static_cast<i64>(rows.size());
        for (i64 f = 0; f < ow; ++f) {
            const std::size_t o = static_cast<std::size_t>(s * ow + f);
            if (rows.empty()) {
                if (p.accumulate) {
                    r.out[o] = p.initial[o];
                } else if (returns_arg(p.o)) {
                    r.out[o] = -1.0;
                } else {
                    switch (p.fill_mode) {
                    case fill::zero: r.out[o] = 0.0; break;
                    case fill::constant: r.out[o] = p.fill_value; break;
                    case fill::nan: r.out[o] = std::numeric_limits<double>::quiet_NaN(); break;
                    case fill::identity: r.out[o] = identity<T>(p.o); break;
                    }
                }
                continue;
            }
            x.clear();
            for (i64 row : rows) x.push_back(static_cast<double>(values[row * width + f]));
            if (p.o == op::count) {
                r.out[o] = static_cast<double>(rows.size()) + (p.accumulate ? p.initial[o] : 0.0);
                continue;
            }
            if (has_arg(p.o)) {
                const i64 j = detail::arg_extreme(x, p.o == op::max || p.o == op::argmax);
                r.arg[o] = rows[static_cast<std::size_t>(j)];
                if (returns_arg(p.o)) {
                    r.out[o] = static_cast<double>(r.arg[o]);
                    continue;
                }
            }
            if (p.accumulate) x.insert(x.begin(), p.initial[o]);
            const detail::cell c = detail::reduce_list(p.o, p.ddof, x);
            r.out[o] = c.value;
            r.scale[o] = c.scale;
        }
    }
    return r;
}

// Softmax within each segment, per column; rows in no segment get `fill`.
template <class T>
std::vector<double> softmax(const T* values, i64 n, i64 width, const row_lists& segs, double fill) {
    std::vector<double> out(static_cast<std::size_t>(n * width), fill);
    for (const std::vector<i64>& rows : segs) {
        if (rows.empty()) continue;
        for (i64 f = 0; f < width; ++f) {
            double m = -std::numeric_limits<double>::infinity();
            for (i64 r : rows) m = std::max(m, static_cast<double>(values[r * width + f]));
            double s = 0.0;
            for (i64 r : rows) s += std::exp(static_cast<double>(values[r * width + f]) - m);
            for (i64 r : rows)
                out[static_cast<std::size_t>(r * width + f)] = std::exp(static_cast<double>(values[r * width + f]) - m) / s;
        }
    }
    return out;
}

// out[i, :] = src[ids[i], :]; an out-of-range id (drop) gives `fill`.
template <class T, class I>
std::vector<double> gather(const T* src, i64 src_rows, i64 width, const I* ids, i64 n, bool drop, double fill) {
    std::vector<double> out(static_cast<std::size_t>(n * width));
    for (i64 i = 0; i < n; ++i) {
        const i64 k = static_cast<i64>(ids[i]);
        const bool ok = k >= 0 && k < src_rows;
        if (!ok && !drop) invalid("gather ids[" + std::to_string(i) + "]");
        for (i64 f = 0; f < width; ++f)
            out[static_cast<std::size_t>(i * width + f)] = ok ? static_cast<double>(src[k * width + f]) : fill;
    }
    return out;
}

// The conversion segred applies when it stores a double result in O:
// truncation toward zero for integers, rounding for float. Values outside an
// integer type's range (an identity such as INT64_MAX that double cannot hold
// exactly) and NaN are returned unchanged, to be compared in double.
template <class O>
double as_out(double v) {
    if constexpr (std::is_integral<O>::value) {
        if (std::isnan(v) || v >= static_cast<double>(std::numeric_limits<O>::max()) ||
            v <= static_cast<double>(std::numeric_limits<O>::lowest()))
            return v;
        return static_cast<double>(static_cast<O>(std::trunc(v)));
    } else {
        return static_cast<double>(static_cast<O>(v));
    }
}

// ---------------------------------------------------------------------------
// 3. Generators

using rng = std::mt19937_64;

inline i64 uniform_int(rng& g, i64 lo, i64 hi) {  // inclusive
    return std::uniform_int_distribution<i64>(lo, hi)(g);
}
inline double uniform_real(rng& g, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g); }
inline bool coin(rng& g, double p_true) { return std::bernoulli_distribution(p_true)(g); }

// M segment lengths: empty with probability p_empty, else 1..max_len.
inline std::vector<i64> random_lengths(rng& g, i64 M, i64 max_len, double p_empty) {
    std::vector<i64> len(static_cast<std::size_t>(M));
    for (i64& l : len) l = coin(g, p_empty) ? 0 : uniform_int(g, 1, std::max<i64>(max_len, 1));
    return len;
}

inline i64 total(const std::vector<i64>& len) {
    i64 t = 0;
    for (i64 l : len) t += l;
    return t;
}

// M+1 offsets starting at `lead`.
template <class I>
std::vector<I> offsets_from_lengths(const std::vector<i64>& len, i64 lead = 0) {
    std::vector<I> off(len.size() + 1);
    i64 run = lead;
    off[0] = static_cast<I>(run);
    for (std::size_t k = 0; k < len.size(); ++k) off[k + 1] = static_cast<I>(run += len[k]);
    return off;
}

template <class I>
std::vector<I> sorted_ids_from_lengths(const std::vector<i64>& len) {
    std::vector<I> ids;
    for (std::size_t k = 0; k < len.size(); ++k)
        for (i64 j = 0; j < len[k]; ++j) ids.push_back(static_cast<I>(k));
    return ids;
}

// n ids uniform in [0, M) (M > 0), or in [lo, hi] when given.
template <class I>
std::vector<I> random_ids(rng& g, i64 n, i64 lo, i64 hi) {
    std::vector<I> ids(static_cast<std::size_t>(n));
    for (I& v : ids) v = static_cast<I>(uniform_int(g, lo, hi));
    return ids;
}

// [n, ndim] subscripts within shape; each one is replaced by an out-of-range
// value with probability p_bad.
template <class I>
std::vector<I> random_subscripts(rng& g, i64 n, const std::vector<i64>& shape, double p_bad = 0.0) {
    const std::size_t nd = shape.size();
    std::vector<I> s(static_cast<std::size_t>(n) * nd);
    for (i64 i = 0; i < n; ++i)
        for (std::size_t d = 0; d < nd; ++d) {
            i64 v = uniform_int(g, 0, shape[d] - 1);
            if (p_bad > 0 && coin(g, p_bad)) v = coin(g, 0.5) ? -uniform_int(g, 1, 3) : shape[d] + uniform_int(g, 0, 3);
            s[static_cast<std::size_t>(i) * nd + d] = static_cast<I>(v);
        }
    return s;
}

enum class value_kind {
    general,  // floats uniform in [-10, 10]; ints in [-100, 100]
    ties,     // few distinct values (steps of 0.5 in [-5, 5]; ints in [-5, 5]): many ties
    product,  // magnitudes near 1 (floats 0.5..1.5 with a sign; ints in {-2,-1,0,1,2}, mostly +-1)
    exact,    // floats on a 1/8 grid in [-4, 4] (sums of 10^6 of them are exact); ints in [-100, 100]
};

template <class T>
std::vector<T> random_values(rng& g, i64 count, value_kind kind) {
    std::vector<T> v(static_cast<std::size_t>(count));
    for (T& x : v) {
        if constexpr (std::is_integral<T>::value) {
            switch (kind) {
            case value_kind::ties: x = static_cast<T>(uniform_int(g, -5, 5)); break;
            case value_kind::product: {
                const i64 r = uniform_int(g, 0, 19);
                x = static_cast<T>(r < 8 ? 1 : r < 16 ? -1 : r < 18 ? 2 : r < 19 ? -2 : 0);
                break;
            }
            default: x = static_cast<T>(uniform_int(g, -100, 100)); break;
            }
        } else {
            switch (kind) {
            case value_kind::ties: x = static_cast<T>(0.5 * static_cast<double>(uniform_int(g, -10, 10))); break;
            case value_kind::product:
                x = static_cast<T>((coin(g, 0.5) ? 1.0 : -1.0) * uniform_real(g, 0.5, 1.5));
                break;
            case value_kind::exact: x = static_cast<T>(static_cast<double>(uniform_int(g, -32, 32)) / 8.0); break;
            default: x = static_cast<T>(uniform_real(g, -10.0, 10.0)); break;
            }
        }
    }
    return v;
}

} // namespace segref
