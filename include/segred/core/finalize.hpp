// segred/core/finalize.hpp -- how one reduced state lands in out: empty
// segment fill, accumulate, arg rows. Host and device code alike, so both
// backends apply the same rules.
#pragma once

#include <cstdint>
#include <type_traits>

#include "config.hpp"
#include "numeric.hpp"
#include "options.hpp"
#include "reducers.hpp"
#include "views.hpp"

namespace segred {
namespace detail {

// The value an empty segment gets in out (argmin/argmax of nothing: -1,
// whatever the fill).
template <class T, class O, class R>
SEGRED_HD O empty_value(const R& r, const options& opts) {
    // Test the reducer type, not its identity's type: min/max with an arg out
    // (min_with_arg / max_with_arg) also have has_arg, and their identity is
    // an int64 for int64 values, which must still get the fill.
    if constexpr (std::is_same<R, segred::argmin>::value || std::is_same<R, segred::argmax>::value) {
        return to_output<O>(std::int64_t(-1));
    } else {
        if (opts.fill_mode == fill_kind::identity) return to_output<O>(r.template identity<T>());
        if (opts.fill_mode == fill_kind::nan) return to_output<O>(quiet_nan<double>());
        if (opts.fill_mode == fill_kind::constant) return to_output<O>(opts.fill_value);
        return to_output<O>(0);
    }
}

// Whether the fill of an empty segment is 0 for a reducer whose identity is
// 0 (sum, count): a zero or identity fill, or the constant 0. Both backends
// then let an untouched zero accumulator stand for an empty segment.
inline bool zero_fill(const options& opts) {
    return opts.fill_mode == fill_kind::zero || opts.fill_mode == fill_kind::identity ||
           (opts.fill_mode == fill_kind::constant && opts.fill_value == 0.0);
}

// The result of a segment whose rows reduced to `st`, in O. rows() gives
// its row count and is called only by reducers whose result divides by it
// (mean_of_rows), so a writer of other reducers need not work it out.
template <class O, class R, class S, class Rows>
SEGRED_HD O finalized(const R& r, const S& st, Rows&& rows) {
    if constexpr (divides_by_rows<R>) {
        return to_output<O>(r.finalize_rows(st, rows()));
    } else {
        return to_output<O>(r.finalize(st));
    }
}

// Write column f of segment s, whose `rows` rows reduced to `st`. An empty
// segment gets the fill value, or keeps out under accumulate; otherwise with
// accumulate the existing value takes part as one more element, first.
template <class T, class O, class R>
SEGRED_HD void write_result(const R& r, const options& opts, const rows_view<O>& out, std::int64_t s, std::int64_t f,
                            state_t<R, T> st, std::int64_t rows) {
    O& o = out(s, f);
    if constexpr (R::has_arg) {
        if (opts.arg_ptr) opts.arg_ptr[s * out.width + f] = rows == 0 ? -1 : r.arg(st);
    }
    if (rows == 0) {
        if (!opts.accumulate_into) o = empty_value<T, O>(r, opts);
        return;
    }
    if constexpr (R::accumulates) {
        if (opts.accumulate_into) {
            state_t<R, T> seeded = r.template seed<T>(o);
            r.combine(seeded, st);
            st = seeded;
            if constexpr (divides_by_rows<R>) ++rows;  // the existing value is one more row
        }
    }
    o = finalized<O>(r, st, [&] { return rows; });
}

} // namespace detail
} // namespace segred
