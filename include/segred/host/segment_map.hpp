// segred/host/segment_map.hpp -- the host's row-wise primitives of
// core/backend.hpp: segment_map_impl, fill_impl and make_scratch.
#pragma once

#include <cstdint>
#include <memory>

#include "../core/backend.hpp"
#include "../core/descriptors.hpp"
#include "../core/options.hpp"
#include "../core/policy.hpp"
#include "../core/views.hpp"
#include "detail/layout.hpp"
#include "detail/parallel.hpp"
#include "detail/segment_loops.hpp"

namespace segred {

// Owning host buffer of `count` uninitialized T (as device memory would be).
template <class T>
class host_scratch {
public:
    explicit host_scratch(std::int64_t count) : p_(new T[static_cast<std::size_t>(count > 0 ? count : 0)]) {}
    T* data() const { return p_.get(); }

private:
    std::unique_ptr<T[]> p_;
};

template <class T>
host_scratch<T> make_scratch(const host_policy&, std::int64_t count) {
    return host_scratch<T>(count);
}

template <class O>
void fill_impl(const host_policy& p, rows_view<O> out, O value) {
    host_detail::parallel_chunks(p, out.size(), std::int64_t(1) << 16, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t i = lo; i < hi; ++i) out.data[i] = value;
    });
}

namespace host_detail {

// Rows per dynamic chunk of the per-row loops, and the width handed to
// for_each_segment_piece: a map does a few width-long loops per row, so
// pieces of 4096 rows keep one giant segment spread over the threads.
constexpr std::int64_t map_rows_per_chunk = 4096;
constexpr std::int64_t map_piece_width = 16;

// Per-row descriptors need no layout: each row knows its segment.
template <class Seg, class F>
void map_each_row(const host_policy& p, const Seg& seg, std::int64_t n, const F& f) {
    parallel_chunks(p, n, map_rows_per_chunk, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t i = lo; i < hi; ++i) f(i, detail::row_segment(seg, i));
    });
}

} // namespace host_detail

// f(row, s) once for every row in [0, n): s is the row's segment, -1 for a
// row in no segment. Validation is segment_reduce's (same messages, same
// drop rules), and it finishes before f is first called.
template <class Seg, class F>
void segment_map_impl(const host_policy& p, const char* fn, const Seg& seg, std::int64_t n, const F& f,
                      const options& opts) {
    const bounds_policy b = opts.bounds_mode;
    if constexpr (Seg::kind == segment_kind::ids) {
        if (b == bounds_policy::check) host_detail::check_ids_in_range(p, fn, "ids", seg.ptr, n, seg.M);
        host_detail::map_each_row(p, seg, n, f);
    } else if constexpr (Seg::kind == segment_kind::sorted_ids) {
        // Valid sorted ids and (under drop) unsorted ones both send a row to
        // its own id, so no starts are needed.
        if (b == bounds_policy::check) host_detail::check_sorted_ids(p, fn, seg, n);
        host_detail::map_each_row(p, seg, n, f);
    } else if constexpr (Seg::kind == segment_kind::subscripts) {
        if (b == bounds_policy::check) host_detail::check_subscripts(p, fn, seg, n);
        host_detail::map_each_row(p, seg, n, f);
    } else {
        // offsets, lengths, fixed: contiguous segments covering the rows
        // [begin(0), end(M - 1)); the rows before and after are in none.
        const host_detail::layout L = host_detail::build(p, fn, seg, n, b);
        host_detail::for_each_segment_piece(p, L, host_detail::map_piece_width,
                                            [&](std::int64_t s, std::int64_t k0, std::int64_t k1) {
                                                for (std::int64_t k = k0; k < k1; ++k) f(k, s);
                                            });
        const std::int64_t first = L.M > 0 ? L.begin(0) : 0, last = L.M > 0 ? L.end(L.M - 1) : 0;
        auto outside = [&](std::int64_t lo, std::int64_t hi) {
            for (std::int64_t i = lo; i < hi; ++i) f(i, std::int64_t(-1));
        };
        host_detail::parallel_chunks(p, first, host_detail::map_rows_per_chunk, outside);
        host_detail::parallel_chunks(p, n - last, host_detail::map_rows_per_chunk,
                                     [&](std::int64_t lo, std::int64_t hi) { outside(last + lo, last + hi); });
    }
}

} // namespace segred
