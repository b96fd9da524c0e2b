// tests/common/reduce_harness.hpp -- random segment_reduce / accumarray
// trials checked against the independent reference (reference.hpp).
//
// Backend-neutral: every entry point takes the execution policy and a memory
// adaptor (test_util.hpp's host_memory for the CPU; a CUDA adaptor supplies
// device buffers), so the CUDA tests can run the same trials.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <segred/segred.hpp>

#include "reference.hpp"
#include "test_util.hpp"

namespace segtest {

enum class form { offsets, lengths, sorted_ids, ids, fixed, subscripts };

inline const char* form_name(form f) {
    switch (f) {
    case form::offsets: return "offsets";
    case form::lengths: return "lengths";
    case form::sorted_ids: return "sorted_ids";
    case form::ids: return "ids";
    case form::fixed: return "fixed";
    case form::subscripts: return "subscripts";
    }
    return "?";
}

inline const char* bounds_name(segred::bounds_policy b) {
    switch (b) {
    case segred::bounds_policy::check: return "check";
    case segred::bounds_policy::drop: return "drop";
    case segred::bounds_policy::unchecked: return "unchecked";
    }
    return "?";
}

inline const char* fill_name(segref::fill f) {
    switch (f) {
    case segref::fill::zero: return "zero";
    case segref::fill::identity: return "identity";
    case segref::fill::nan: return "nan";
    case segref::fill::constant: return "constant";
    }
    return "?";
}

// The raw arrays of one segmentation, in one form.
template <class I>
struct seg_input {
    form kind = form::ids;
    i64 M = 0;                  // segments (product of shape for subscripts)
    i64 n = 0;                  // value rows
    std::vector<I> idx;         // offsets [M+1] | lengths [M] | (sorted) ids [n] | subscripts [n*ndim]
    i64 fixed_size = 0;         // fixed
    std::vector<i64> shape;     // subscripts

    // What the reference makes of it (drop: the drop bounds policy).
    segref::row_lists rows(bool drop) const {
        switch (kind) {
        case form::offsets: return segref::from_offsets(idx.data(), M, n, drop);
        case form::lengths: return segref::from_lengths(idx.data(), M, n, drop);
        case form::sorted_ids: return segref::from_sorted_ids(idx.data(), M, n, drop);
        case form::ids: return segref::from_ids(idx.data(), M, n, drop);
        case form::fixed: return segref::from_fixed(fixed_size, M, n);
        case form::subscripts: return segref::from_subscripts(idx.data(), shape, n, drop);
        }
        return {};
    }

    std::string describe() const {
        std::ostringstream os;
        os << form_name(kind) << ": M = " << M << ", n = " << n;
        if (kind == form::fixed) os << ", size = " << fixed_size;
        if (kind == form::subscripts) {
            os << ", shape = {";
            for (std::size_t d = 0; d < shape.size(); ++d) os << (d ? ", " : "") << shape[d];
            os << "}";
        }
        if (!idx.empty() && idx.size() <= 64) {
            os << ", " << (kind == form::offsets ? "offsets" : kind == form::lengths ? "lengths" : "indices") << " = [";
            for (std::size_t k = 0; k < idx.size(); ++k) os << (k ? "," : "") << static_cast<i64>(idx[k]);
            os << "]";
        }
        return os.str();
    }
};

// The segred descriptor for s, over the index array at p (host or device).
template <form F, class I>
auto make_desc(const I* p, const seg_input<I>& s) {
    if constexpr (F == form::offsets) return segred::offsets(p, s.M);
    else if constexpr (F == form::lengths) return segred::lengths(p, s.M);
    else if constexpr (F == form::sorted_ids) return segred::sorted_ids(p, s.M);
    else if constexpr (F == form::ids) return segred::ids(p, s.M);
    else if constexpr (F == form::fixed) return segred::fixed(s.fixed_size, s.M);
    else return segred::subscripts(p, static_cast<int>(s.shape.size()), s.shape.data());
}

// A random segmentation in form f: up to 40 segments, about a quarter of
// them empty. corrupt: input that only the drop policy accepts (out-of-range
// and unsorted ids, offsets out of order or outside [0, n], negative lengths
// and a wrong sum, out-of-range subscripts); fixed has no such input.
template <class I>
seg_input<I> random_segments(segref::rng& g, form f, bool corrupt, i64 max_M = 40, i64 max_n = 300) {
    using segref::coin;
    using segref::uniform_int;
    seg_input<I> s;
    s.kind = f;
    const i64 M = coin(g, 0.08) ? 0 : uniform_int(g, 1, max_M);
    const i64 max_len = uniform_int(g, 1, 12);
    switch (f) {
    case form::offsets: {
        const std::vector<i64> len = segref::random_lengths(g, M, max_len, 0.25);
        const i64 lead = coin(g, 0.3) ? uniform_int(g, 0, 3) : 0, tail = coin(g, 0.3) ? uniform_int(g, 0, 3) : 0;
        s.M = M;
        s.n = lead + segref::total(len) + tail;
        s.idx = segref::offsets_from_lengths<I>(len, lead);
        if (corrupt)
            for (I& o : s.idx)
                if (coin(g, 0.2)) o = static_cast<I>(uniform_int(g, -3, s.n + 3));
        break;
    }
    case form::lengths: {
        std::vector<i64> len = segref::random_lengths(g, M, max_len, 0.25);
        s.M = M;
        s.n = segref::total(len);
        if (corrupt && M > 0) {
            for (i64& l : len)
                if (coin(g, 0.2)) l = uniform_int(g, -3, -1);
            s.n = std::max<i64>(0, s.n + uniform_int(g, -5, 5));
        }
        s.idx.assign(len.begin(), len.end());
        break;
    }
    case form::sorted_ids: {
        const std::vector<i64> len = segref::random_lengths(g, M, max_len, 0.25);
        s.M = M;
        s.idx = segref::sorted_ids_from_lengths<I>(len);
        s.n = static_cast<i64>(s.idx.size());
        if (corrupt)
            for (I& v : s.idx)
                if (coin(g, 0.15)) v = static_cast<I>(uniform_int(g, -2, M + 1));
        break;
    }
    case form::ids: {
        s.n = uniform_int(g, 0, max_n);
        s.M = (M == 0 && s.n > 0 && !corrupt) ? 1 : M;
        s.idx = s.M > 0 ? segref::random_ids<I>(g, s.n, 0, s.M - 1) : std::vector<I>(static_cast<std::size_t>(s.n), I(0));
        if (corrupt)
            for (I& v : s.idx)
                if (s.M == 0 || coin(g, 0.15))
                    v = static_cast<I>(coin(g, 0.5) ? uniform_int(g, -3, -1) : s.M + uniform_int(g, 0, 3));
        break;
    }
    case form::fixed: {
        s.fixed_size = uniform_int(g, 0, 8);
        s.M = M;
        s.n = s.fixed_size * M;
        break;
    }
    case form::subscripts: {
        const i64 ndim = uniform_int(g, 1, 3);
        for (i64 d = 0; d < ndim; ++d) s.shape.push_back(uniform_int(g, 1, 5));
        s.n = uniform_int(g, 0, max_n);
        s.idx = segref::random_subscripts<I>(g, s.n, s.shape, corrupt ? 0.05 : 0.0);
        if (corrupt && coin(g, 0.1)) s.shape[0] = 0;  // an empty output: every row dropped
        s.M = segref::shape_product(s.shape);
        break;
    }
    }
    return s;
}

// One trial's options.
struct trial_config {
    i64 width = 1;
    i64 out_width = 1;  // width, or 1 for a count column
    segred::bounds_policy bounds = segred::bounds_policy::check;
    segref::fill fill_mode = segref::fill::zero;
    double fill_value = 0.0;
    bool accumulate = false;
    bool counts = false;
    bool arg = false;
    bool nan = false;  // sprinkle NaN into floating-point values
    segref::value_kind kind = segref::value_kind::general;
    bool via_accumarray = false;
    bool deterministic = false;  // options::deterministic (the GPU's sorted path for unsorted sum/mean/count)
    bool shifted = false;        // values and out start one element into their allocations (not 16-byte aligned)

    std::string describe() const {
        std::ostringstream os;
        os << "width " << width << ", out width " << out_width << ", bounds " << bounds_name(bounds) << ", fill "
           << fill_name(fill_mode);
        if (fill_mode == segref::fill::constant) os << " " << fill_value;
        if (accumulate) os << ", accumulate";
        if (counts) os << ", counts";
        if (arg) os << ", arg_out";
        if (nan) os << ", with NaN";
        if (via_accumarray) os << ", via accumarray";
        if (deterministic) os << ", deterministic";
        if (shifted) os << ", values and out one element into their allocations";
        return os.str();
    }
};

inline segred::options to_options(const trial_config& c) {
    segred::options o;
    switch (c.fill_mode) {
    case segref::fill::zero: break;
    case segref::fill::identity: o.fill_identity(); break;
    case segref::fill::nan: o.fill_nan(); break;
    case segref::fill::constant: o.fill(c.fill_value); break;
    }
    o.accumulate(c.accumulate).bounds(c.bounds).deterministic(c.deterministic);
    return o;
}

template <form F, class T, class O>
trial_config random_config(segref::rng& g, segref::op o) {
    using segref::coin;
    trial_config c;
    c.width = coin(g, 0.5) ? 1 : 3;
    c.out_width = (o == segref::op::count && c.width == 3 && coin(g, 0.5)) ? 1 : c.width;
    const i64 b = segref::uniform_int(g, 0, 99);
    c.bounds = b < 45 ? segred::bounds_policy::check : b < 65 ? segred::bounds_policy::unchecked
                                                              : segred::bounds_policy::drop;
    const i64 fm = segref::uniform_int(g, 0, std::is_floating_point<O>::value ? 3 : 2);
    c.fill_mode = fm == 0 ? segref::fill::zero : fm == 1 ? segref::fill::constant : fm == 2 ? segref::fill::identity
                                                                                             : segref::fill::nan;
    c.fill_value = std::is_integral<O>::value ? 0.5 * static_cast<double>(segref::uniform_int(g, -20, 20))
                                              : 0.1 * static_cast<double>(segref::uniform_int(g, -50, 50));
    c.accumulate = segref::accumulates(o) && coin(g, 0.3);
    c.counts = coin(g, 0.5);
    c.arg = segref::has_arg(o) && !c.accumulate && coin(g, 0.5);
    c.nan = std::is_floating_point<T>::value && o != segref::op::maxabs && coin(g, 0.2);
    if (o == segref::op::prod) c.kind = segref::value_kind::product;
    else if (segref::has_arg(o) || o == segref::op::any || o == segref::op::all)
        c.kind = coin(g, 0.5) ? segref::value_kind::ties : segref::value_kind::general;
    c.via_accumarray = (F == form::ids || F == form::subscripts) && coin(g, 0.5);
    c.deterministic = coin(g, 0.3);
    return c;
}

// The existing out of an accumulate trial: values the op can take in.
template <class O>
std::vector<O> initial_out(segref::rng& g, segref::op o, i64 size) {
    switch (o) {
    case segref::op::count: return segref::random_ids<O>(g, size, 0, 5);
    case segref::op::prod: return segref::random_values<O>(g, size, segref::value_kind::product);
    case segref::op::any:
    case segref::op::all: return segref::random_values<O>(g, size, segref::value_kind::ties);
    default: return segref::random_values<O>(g, size, segref::value_kind::general);
    }
}

// One reduction case on the host: the input, the existing out, the
// reference result and the comparison. Templated on the value and output
// types only, so the many (form, index, reducer) instantiations share it.
template <class T, class O>
struct reduce_case {
    segref::op o = segref::op::sum;
    int ddof = 0;
    trial_config c;
    std::vector<O> out0;               // out before the call
    std::vector<std::int64_t> arg0, cnt0;
    segref::result ref;

    template <class I>
    reduce_case(segref::op o_, int ddof_, const trial_config& c_, const seg_input<I>& s, const std::vector<T>& values,
                segref::rng& g)
        : o(o_), ddof(ddof_), c(c_) {
        const i64 M = s.M, ow = c.out_width;
        segref::params p;
        p.o = o;
        p.ddof = ddof;
        p.fill_mode = c.fill_mode;
        p.fill_value = c.fill_value;
        p.accumulate = c.accumulate;
        p.out_width = ow;
        if (c.accumulate) {
            out0 = initial_out<O>(g, o, M * ow);
            p.initial.assign(out0.begin(), out0.end());
        } else {
            out0.assign(static_cast<std::size_t>(M * ow), static_cast<O>(77));  // must all be overwritten
        }
        arg0.assign(static_cast<std::size_t>(M * ow), -7);
        cnt0.assign(static_cast<std::size_t>(M), -7);
        ref = segref::reduce<T>(values.data(), c.width, s.rows(c.bounds == segred::bounds_policy::drop), p);
    }

    void verify(const std::vector<O>& out, const std::vector<std::int64_t>& arg,
                const std::vector<std::int64_t>& cnt) const {
        EXPECT_TRUE(near_all(out, as_out<O>(ref.out), &ref.scale, rtol_for<T>(o), "out"));
        EXPECT_TRUE(equal_all(arg, c.arg ? ref.arg : arg0, "arg_out"));
        EXPECT_TRUE(equal_all(cnt, c.counts ? ref.counts : cnt0, "counts"));
    }
};

// Run segment_reduce (or accumarray) once on the given input and compare
// out, arg out and counts with the reference.
template <form F, class T, class I, class O, class R, class Policy, class Mem = host_memory>
void check_reduce(const Policy& pol, const R& reducer, segref::op o, int ddof, const trial_config& c,
                  const seg_input<I>& s, const std::vector<T>& values, segref::rng& g, const Mem& mem = Mem{}) {
    const reduce_case<T, O> rc(o, ddof, c, s, values, g);
    const std::size_t lead = c.shifted ? 1 : 0;  // elements before values and out
    std::vector<T> stored(lead, T(0));
    stored.insert(stored.end(), values.begin(), values.end());
    std::vector<O> stored_out(lead, O(0));
    stored_out.insert(stored_out.end(), rc.out0.begin(), rc.out0.end());
    auto d_vals = mem.to_device(stored);
    auto d_idx = mem.to_device(s.idx);
    auto d_out = mem.to_device(stored_out);
    auto d_arg = mem.to_device(rc.arg0);
    auto d_cnt = mem.to_device(rc.cnt0);
    segred::options opts = to_options(c);
    if (c.counts) opts.counts(d_cnt.data());
    if (c.arg) opts.arg_out(d_arg.data());
    const auto desc = make_desc<F>(static_cast<const I*>(d_idx.data()), s);
    const auto vin = segred::rows(static_cast<const T*>(d_vals.data()) + lead, s.n, c.width);
    const auto vout = segred::rows(d_out.data() + lead, s.M, c.out_width);
    try {
        if constexpr (F == form::ids || F == form::subscripts) {
            if (c.via_accumarray) segred::accumarray(pol, vin, desc, vout, reducer, opts);
            else segred::segment_reduce(pol, vin, desc, vout, reducer, opts);
        } else {
            segred::segment_reduce(pol, vin, desc, vout, reducer, opts);
        }
    } catch (const std::exception& e) {
        ADD_FAILURE() << "unexpected exception: " << e.what();
        return;
    }
    std::vector<O> out = mem.to_host(d_out);
    out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(lead));
    rc.verify(out, mem.to_host(d_arg), mem.to_host(d_cnt));
}

// A random trial's input.
template <class T, class I>
struct trial_input {
    trial_config c;
    seg_input<I> s;
    std::vector<T> values;
    std::string note;
};

template <form F, class T, class I, class O>
trial_input<T, I> random_trial(segref::rng& g, segref::op o, int t) {
    trial_input<T, I> in;
    in.c = random_config<F, T, O>(g, o);
    in.s = random_segments<I>(g, F, in.c.bounds == segred::bounds_policy::drop);
    in.values = segref::random_values<T>(g, in.s.n * in.c.width, in.c.kind);
    if constexpr (std::is_floating_point<T>::value) {
        if (in.c.nan)
            for (T& v : in.values)
                if (segref::coin(g, 0.05)) v = std::numeric_limits<T>::quiet_NaN();
    }
    in.note = std::string(segref::name(o)) + " trial " + std::to_string(t) + ": " + in.c.describe() + "; " +
              in.s.describe();
    return in;
}

// `trials` random trials of one reducer in form F.
template <form F, class T, class I, class O, class R, class Policy, class Mem = host_memory>
void reduce_trials(const Policy& pol, segref::rng& g, const R& reducer, segref::op o, int ddof, int trials,
                   const Mem& mem = Mem{}) {
    for (int t = 0; t < trials; ++t) {
        const trial_input<T, I> in = random_trial<F, T, I, O>(g, o, t);
        SCOPED_TRACE(in.note);
        check_reduce<F, T, I, O>(pol, reducer, o, ddof, in.c, in.s, in.values, g, mem);
        if (::testing::Test::HasFailure()) return;  // one failing trial says enough
    }
}

// Custom reducer of the tests: max(|a|, |b|) with identity 0.
struct maxabs_op {
    SEGRED_HD double operator()(double a, double b) const {
        a = a < 0 ? -a : a;
        b = b < 0 ? -b : b;
        return a < b ? b : a;
    }
};

// Output types: arg rows and counts in int64; var/std/logsumexp of integers
// in double; the rest in the value type.
template <class T>
using real_out = std::conditional_t<std::is_integral<T>::value, double, T>;

// Every reducer in form F, `trials` random trials each.
template <form F, class T, class I, class Policy, class Mem = host_memory>
void all_reducer_trials(const Policy& pol, segref::rng& g, int trials, const Mem& mem = Mem{}) {
    using segref::op;
    reduce_trials<F, T, I, T>(pol, g, segred::sum{}, op::sum, 0, trials, mem);
    reduce_trials<F, T, I, T>(pol, g, segred::prod{}, op::prod, 0, trials, mem);
    reduce_trials<F, T, I, T>(pol, g, segred::min{}, op::min, 0, trials, mem);
    reduce_trials<F, T, I, T>(pol, g, segred::max{}, op::max, 0, trials, mem);
    reduce_trials<F, T, I, T>(pol, g, segred::mean{}, op::mean, 0, trials, mem);
    reduce_trials<F, T, I, std::int64_t>(pol, g, segred::count{}, op::count, 0, trials, mem);
    reduce_trials<F, T, I, std::int64_t>(pol, g, segred::argmin{}, op::argmin, 0, trials, mem);
    reduce_trials<F, T, I, std::int64_t>(pol, g, segred::argmax{}, op::argmax, 0, trials, mem);
    reduce_trials<F, T, I, T>(pol, g, segred::any{}, op::any, 0, trials, mem);
    reduce_trials<F, T, I, T>(pol, g, segred::all{}, op::all, 0, trials, mem);
    reduce_trials<F, T, I, real_out<T>>(pol, g, segred::logsumexp{}, op::logsumexp, 0, trials, mem);
    reduce_trials<F, T, I, real_out<T>>(pol, g, segred::var{}, op::var, 0, trials, mem);
    reduce_trials<F, T, I, real_out<T>>(pol, g, segred::var{1}, op::var, 1, trials, mem);
    reduce_trials<F, T, I, real_out<T>>(pol, g, segred::stddev{}, op::stddev, 0, trials, mem);
    reduce_trials<F, T, I, real_out<T>>(pol, g, segred::stddev{1}, op::stddev, 1, trials, mem);
    reduce_trials<F, T, I, T>(pol, g, segred::reducer(maxabs_op{}, 0.0), op::maxabs, 0, trials, mem);
}

} // namespace segtest
