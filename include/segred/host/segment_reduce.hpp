// segred/host/segment_reduce.hpp -- segment_reduce / accumarray / bincount /
// gather_backward on the CPU.
#pragma once

#include <cstdint>

#include "../core/options.hpp"
#include "../core/policy.hpp"
#include "../core/reducers.hpp"
#include "../core/views.hpp"
#include "detail/layout.hpp"
#include "detail/segment_loops.hpp"
#include "detail/write_segment.hpp"

namespace segred {

template <class T, class Seg, class O, class R>
void segment_reduce_impl(const host_policy& p, const char* fn, rows_view<const T> values, const Seg& seg,
                         rows_view<O> out, const R& r, const options& opts) {
    using S = state_t<R, T>;
    const host_detail::layout L = host_detail::build(p, fn, seg, values.n, opts.bounds_mode);
    const std::int64_t width = out.width;  // equals values.width except for a count column
    host_detail::reduce_segments<S>(
        p, L, width, [&] { return r.template init<T>(); },
        [&](S* st, std::int64_t row) {
            const T* v = values.row(row);
            for (std::int64_t f = 0; f < width; ++f) r.update(st[f], v[f], row);
        },
        [&](S& a, const S& b) { r.combine(a, b); },
        [&](std::int64_t s, S* st, std::int64_t rows) { host_detail::write_segment<T>(r, opts, out, s, st, rows); });
}

} // namespace segred
