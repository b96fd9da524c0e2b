// segred/host/detail/write_segment.hpp -- a host segment's states into out,
// arg out and counts, by the shared rules of core/finalize.hpp.
#pragma once

#include <cstdint>

#include "../../core/finalize.hpp"

namespace segred {
namespace host_detail {

template <class T, class O, class R>
void write_segment(const R& r, const options& opts, const rows_view<O>& out, std::int64_t s, state_t<R, T>* st,
                   std::int64_t rows) {
    if (opts.counts_out) opts.counts_out[s] = rows;
    for (std::int64_t f = 0; f < out.width; ++f) detail::write_result<T>(r, opts, out, s, f, st[f], rows);
}

} // namespace host_detail
} // namespace segred
