// segred/host/gather.hpp -- gather on the CPU.
#pragma once

#include <cstdint>

#include "../core/checks.hpp"
#include "../core/numeric.hpp"
#include "../core/options.hpp"
#include "../core/policy.hpp"
#include "../core/views.hpp"
#include "detail/layout.hpp"
#include "detail/parallel.hpp"

namespace segred {

template <class T, class I, class O>
void gather_impl(const host_policy& p, rows_view<const T> src, rows_view<const I> id_vec, rows_view<O> out,
                 const options& opts) {
    const std::int64_t M = src.n, width = src.width;
    if (opts.bounds_mode == bounds_policy::check)
        host_detail::check_ids_in_range(p, "gather", "ids", id_vec.data, id_vec.n, M);
    O fill = detail::to_output<O>(0);
    if (opts.fill_mode == fill_kind::nan) fill = detail::to_output<O>(detail::quiet_nan<double>());
    if (opts.fill_mode == fill_kind::constant) fill = detail::to_output<O>(opts.fill_value);
    host_detail::parallel_chunks(p, out.n, std::max<std::int64_t>(1, 4096 / width), [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t i = lo; i < hi; ++i) {
            const std::int64_t k = static_cast<std::int64_t>(id_vec.data[i]);
            O* o = out.row(i);
            if (k < 0 || k >= M) {  // only reached under drop (or a broken unchecked promise)
                for (std::int64_t f = 0; f < width; ++f) o[f] = fill;
                continue;
            }
            const T* v = src.row(k);
            for (std::int64_t f = 0; f < width; ++f) o[f] = detail::to_output<O>(v[f]);
        }
    });
}

} // namespace segred
