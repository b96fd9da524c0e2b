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
namespace host_detail {

// Reduce the segments of a built layout into out (shared by segment_reduce
// and the fused gather_segment_reduce, whose layout maps positions to rows).
template <class T, class O, class R>
void reduce_layout(const host_policy& p, const layout& L, rows_view<const T> values, rows_view<O> out, const R& r,
                   const options& opts) {
    using S = state_t<R, T>;
    const std::int64_t width = out.width;  // equals values.width except for a count column
    reduce_segments<S>(
        p, L, width, [&] { return r.template init<T>(); },
        [&](S* st, std::int64_t row) {
            const T* v = values.row(row);
            for (std::int64_t f = 0; f < width; ++f) r.update(st[f], v[f], row);
        },
        [&](S& a, const S& b) { r.combine(a, b); },
        [&](std::int64_t s, S* st, std::int64_t rows) { write_segment<T>(r, opts, out, s, st, rows); });
}

} // namespace host_detail

template <class T, class Seg, class O, class R>
void segment_reduce_impl(const host_policy& p, const char* fn, rows_view<const T> values, const Seg& seg,
                         rows_view<O> out, const R& r, const options& opts) {
    const host_detail::layout L = host_detail::build(p, fn, seg, values.n, opts.bounds_mode);
    host_detail::reduce_layout(p, L, values, out, r, opts);
}

} // namespace segred
