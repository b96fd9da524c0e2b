// segred/host/gather_segment_reduce.hpp -- the fused gather-then-reduce on
// the CPU: the descriptor's layout over positions gets one more indirection,
// position k -> data row idx[k], so the gathered rows are never copied.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/options.hpp"
#include "../core/policy.hpp"
#include "../core/views.hpp"
#include "detail/layout.hpp"
#include "detail/parallel.hpp"
#include "segment_reduce.hpp"

namespace segred {
namespace host_detail {

// Compose L (segments over npos positions) with idx: afterwards L.row(k) is
// the data row idx[old L.row(k)]. drop: positions whose idx is outside
// [0, rows) leave their segments (which then get new starts).
template <class I>
void route_through(const host_policy& p, layout& L, const I* idx, std::int64_t rows, bool drop) {
    const std::int64_t first = L.M > 0 ? L.begin(0) : 0, last = L.M > 0 ? L.end(L.M - 1) : 0;
    auto bad = [&](std::int64_t k) {
        const std::int64_t r = static_cast<std::int64_t>(idx[L.row(k)]);
        return r < 0 || r >= rows;
    };
    if (!drop || first_bad(p, last - first, [&](std::int64_t i) { return bad(first + i); }) < 0) {
        if (L.perm != nullptr) {  // the counting sort's own permutation: compose in place
            std::int64_t* perm = L.own_perm.get();
            parallel_chunks(p, last - first, std::int64_t(1) << 16, [&](std::int64_t lo, std::int64_t hi) {
                for (std::int64_t k = first + lo; k < first + hi; ++k)
                    perm[k] = static_cast<std::int64_t>(idx[perm[k]]);
            });
        } else if constexpr (std::is_same<I, std::int64_t>::value) {
            L.perm = idx;  // position k is row idx[k]: the caller's array serves as is
        } else {
            L.own_perm = make_big_array<std::int64_t>(last);
            std::int64_t* perm = L.own_perm.get();
            parallel_chunks(p, last - first, std::int64_t(1) << 16, [&](std::int64_t lo, std::int64_t hi) {
                for (std::int64_t k = first + lo; k < first + hi; ++k) perm[k] = static_cast<std::int64_t>(idx[k]);
            });
            L.perm = perm;
        }
        return;
    }
    // Compaction: count each segment's good positions, then copy them in order.
    big_array<std::int64_t> starts = make_big_array<std::int64_t>(L.M + 1);
    starts[0] = 0;
    parallel_chunks(p, L.M, segments_per_chunk, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t s = lo; s < hi; ++s) {
            std::int64_t c = 0;
            for (std::int64_t k = L.begin(s); k < L.end(s); ++k) c += bad(k) ? 0 : 1;
            starts[static_cast<std::size_t>(s + 1)] = c;
        }
    });
    for (std::int64_t s = 1; s <= L.M; ++s) starts[static_cast<std::size_t>(s)] += starts[static_cast<std::size_t>(s - 1)];
    big_array<std::int64_t> perm = make_big_array<std::int64_t>(starts[static_cast<std::size_t>(L.M)]);
    parallel_chunks(p, L.M, segments_per_chunk, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t s = lo; s < hi; ++s) {
            std::int64_t out = starts[static_cast<std::size_t>(s)];
            for (std::int64_t k = L.begin(s); k < L.end(s); ++k)
                if (!bad(k)) perm[static_cast<std::size_t>(out++)] = static_cast<std::int64_t>(idx[L.row(k)]);
        }
    });
    L.fixed_size = -1;
    L.own_starts = std::move(starts);
    L.own_perm = std::move(perm);
    L.starts = L.own_starts.get();
    L.perm = L.own_perm.get();
}

} // namespace host_detail

template <class T, class I, class Seg, class O, class R>
void gather_segment_reduce_impl(const host_policy& p, const char* fn, rows_view<const T> data, rows_view<const I> idx,
                                const Seg& seg, rows_view<O> out, const R& r, const options& opts) {
    host_detail::layout L = host_detail::build(p, fn, seg, idx.n, opts.bounds_mode);
    if (opts.bounds_mode == bounds_policy::check)
        host_detail::check_ids_in_range(p, fn, "idx", idx.data, idx.n, data.n);
    host_detail::route_through(p, L, idx.data, data.n, opts.bounds_mode == bounds_policy::drop);
    host_detail::reduce_layout(p, L, data, out, r, opts);
}

} // namespace segred
