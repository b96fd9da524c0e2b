// segred/core/backend.hpp -- the primitives every backend provides, and the
// small shared helpers the backend-neutral front-ends build on.
//
// A backend is a policy type P (segred::host_policy, segred::cuda::par_t) plus
// these overloads in P's namespace, found by argument-dependent lookup:
//
//   segment_reduce_impl(const P&, const char* fn, rows_view<const T> values, const Seg& seg,
//                       rows_view<O> out, const R& reducer, const options& opts)
//       validate seg (under opts.bounds_mode; errors name fn), reduce every
//       segment's rows with R into out (core/finalize.hpp's rules).
//
//   gather_segment_reduce_impl(const P&, const char* fn, rows_view<const T> data,
//                              rows_view<const I> idx, const Seg& seg, rows_view<O> out,
//                              const R& reducer, const options& opts)
//       as segment_reduce_impl, but seg groups the idx.n *positions*, and
//       position k carries data row idx[k] (the arg out and reducer row are that
//       data row). check: seg first, then idx[k] in [0, data.n) ("idx[k] = v is
//       out of range [0, data.n)"); drop: a position with a bad idx belongs to
//       no segment.
//
//   segment_map_impl(const P&, const char* fn, const Seg& seg, std::int64_t n, const F& f,
//                    const options& opts)
//       validate seg exactly as segment_reduce_impl does (same errors, same
//       drop rules; nothing is called when it throws), then call f(row, s)
//       exactly once for every row in [0, n): s is the row's segment, or -1
//       when the row belongs to no segment (dropped, outside the offsets).
//       Calls may run concurrently and in any order: f writes only row `row`.
//       F's operator() is SEGRED_HD and const; F holds only views/pointers.
//
//   fill_impl(const P&, rows_view<O> out, O value)
//       every element of out := value.
//
//   make_scratch<T>(const P&, std::int64_t count)
//       an owning buffer of `count` uninitialized T (device memory on CUDA,
//       stream-ordered), with T* data() const; freed when it goes out of scope.
//
// The backward front-ends (segment_reduce_backward.hpp and friends) are
// written once against these five calls.
#pragma once

#include <cstdint>

#include "config.hpp"
#include "descriptors.hpp"
#include "options.hpp"

namespace segred {

namespace detail {
struct no_backend {};
} // namespace detail

// Never defined or called. C++17 parses `make_scratch<T>(policy, n)` as a
// template call, and so lets argument-dependent lookup find the backend's
// overload, only if some function template of that name is visible where the
// front-end is defined; this declaration is that template.
template <class T>
void make_scratch(detail::no_backend);

namespace detail {

// The segment of row i under a per-row descriptor (ids, sorted ids, N-D
// subscripts), or -1 when its id is out of range (a row the drop policy
// skips). Backends use it in segment_map_impl, which needs no sort: every
// row is visited on its own.
template <class I>
SEGRED_HD std::int64_t row_segment(const ids_desc<I>& d, std::int64_t i) {
    const std::int64_t k = static_cast<std::int64_t>(d.ptr[i]);
    return (k >= 0 && k < d.M) ? k : -1;
}
template <class I>
SEGRED_HD std::int64_t row_segment(const sorted_ids_desc<I>& d, std::int64_t i) {
    // Under drop, unsorted "sorted" ids still send each row to its own id.
    const std::int64_t k = static_cast<std::int64_t>(d.ptr[i]);
    return (k >= 0 && k < d.M) ? k : -1;
}
template <class I>
SEGRED_HD std::int64_t row_segment(const subscripts_desc<I>& d, std::int64_t i) {
    return d.linear_index(i);
}

// Options for the internal passes of a composed algorithm: only the bounds
// policy and the determinism request carry over; fill, counts, arg out and
// accumulate belong to the user's output, not to scratch.
inline options internal_options(const options& user) {
    options o;
    o.bounds_mode = user.bounds_mode;
    o.deterministic_mode = user.deterministic_mode;
    return o;
}

// After a pass has validated the descriptor under `check`, the later passes
// over the same descriptor skip the O(n) scans: `unchecked` and `check`
// agree on valid input. drop stays drop (it changes what is computed).
inline options validated(options o) {
    if (o.bounds_mode == bounds_policy::check) o.bounds_mode = bounds_policy::unchecked;
    return o;
}

} // namespace detail
} // namespace segred
