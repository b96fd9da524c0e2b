// segred/host/segment_softmax.hpp -- softmax within segments on the CPU.
//
// Two passes: the reduce loop computes each segment's log-sum-exp per column
// (running max and rescaled sum, so no overflow), then every row becomes
// exp(v - lse). Rows outside every segment get the fill value.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "../core/numeric.hpp"
#include "../core/options.hpp"
#include "../core/policy.hpp"
#include "../core/reducers.hpp"
#include "../core/views.hpp"
#include "detail/layout.hpp"
#include "detail/row_fold.hpp"
#include "detail/segment_loops.hpp"

namespace segred {

template <class T, class Seg, class O>
void segment_softmax_impl(const host_policy& p, rows_view<const T> values, const Seg& seg, rows_view<O> out,
                          const options& opts) {
    using A = detail::real_t<T>;
    using S = state_t<logsumexp, T>;
    const logsumexp r{};
    const std::int64_t width = values.width;
    const host_detail::layout L = host_detail::build(p, "segment_softmax", seg, values.n, opts.bounds_mode);

    std::vector<A> lse(static_cast<std::size_t>(L.M * width));
    host_detail::reduce_segments(p, L, width, host_detail::make_row_fold(r, values, width),
                                 [&](std::int64_t s, S* st, std::int64_t) {
                                     for (std::int64_t f = 0; f < width; ++f)
                                         lse[static_cast<std::size_t>(s * width + f)] = r.finalize(st[f]);
                                 });

    if (L.covered() != values.n) {
        O fill = detail::to_output<O>(0);
        if (opts.fill_mode == fill_kind::nan) fill = detail::to_output<O>(detail::quiet_nan<double>());
        if (opts.fill_mode == fill_kind::constant) fill = detail::to_output<O>(opts.fill_value);
        host_detail::parallel_chunks(p, out.size(), std::int64_t(1) << 16, [&](std::int64_t lo, std::int64_t hi) {
            for (std::int64_t i = lo; i < hi; ++i) out.data[i] = fill;
        });
    }
    host_detail::for_each_segment_piece(p, L, width, [&](std::int64_t s, std::int64_t k0, std::int64_t k1) {
        const A* l = lse.data() + s * width;
        for (std::int64_t k = k0; k < k1; ++k) {
            const std::int64_t row = L.row(k);
            const T* v = values.row(row);
            O* o = out.row(row);
            for (std::int64_t f = 0; f < width; ++f)
                o[f] = detail::to_output<O>(std::exp(detail::convert<A>(v[f]) - l[f]));
        }
    });
}

} // namespace segred
