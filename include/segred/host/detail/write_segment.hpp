// segred/host/detail/write_segment.hpp -- how a segment's reduced states land
// in out, arg out and counts: empty-segment fill, accumulate, arg rows.
#pragma once

#include <cstdint>
#include <type_traits>

#include "../../core/numeric.hpp"
#include "../../core/options.hpp"
#include "../../core/reducers.hpp"
#include "../../core/views.hpp"

namespace segred {
namespace host_detail {

// The value an empty segment gets in out.
template <class T, class O, class R>
O empty_value(const R& r, const options& opts) {
    if constexpr (R::has_arg && std::is_same<decltype(r.template identity<T>()), std::int64_t>::value) {
        return detail::to_output<O>(std::int64_t(-1));  // argmin/argmax of nothing: -1, whatever the fill
    } else {
        switch (opts.fill_mode) {
        case fill_kind::identity: return detail::to_output<O>(r.template identity<T>());
        case fill_kind::nan: return detail::to_output<O>(detail::quiet_nan<double>());
        case fill_kind::constant: return detail::to_output<O>(opts.fill_value);
        case fill_kind::zero: break;
        }
        return detail::to_output<O>(0);
    }
}

// Write segment s of `rows` rows whose reduction is st[0..width).
template <class T, class O, class R>
void write_segment(const R& r, const options& opts, const rows_view<O>& out, std::int64_t s,
                   state_t<R, T>* st, std::int64_t rows) {
    const std::int64_t width = out.width;
    if (opts.counts_out) opts.counts_out[s] = rows;
    O* o = out.row(s);
    if (rows == 0) {
        if constexpr (R::has_arg) {
            if (opts.arg_ptr)
                for (std::int64_t f = 0; f < width; ++f) opts.arg_ptr[s * width + f] = -1;
        }
        if (opts.accumulate_into) return;  // an empty segment keeps out
        const O fill = empty_value<T, O>(r, opts);
        for (std::int64_t f = 0; f < width; ++f) o[f] = fill;
        return;
    }
    for (std::int64_t f = 0; f < width; ++f) {
        if constexpr (R::accumulates) {
            if (opts.accumulate_into) {
                // The existing value takes part as one more element, first.
                state_t<R, T> seeded = r.template seed<T>(o[f]);
                r.combine(seeded, st[f]);
                st[f] = seeded;
            }
        }
        o[f] = detail::to_output<O>(r.finalize(st[f]));
        if constexpr (R::has_arg) {
            if (opts.arg_ptr) opts.arg_ptr[s * width + f] = r.arg(st[f]);
        }
    }
}

} // namespace host_detail
} // namespace segred
