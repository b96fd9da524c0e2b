// segred/segment_reduce.hpp -- segment_reduce and accumarray front-ends.
//
// Backend-neutral: they check sizes, pick the reducer variant, and hand over
// to segment_reduce_impl(policy, ...), found by argument-dependent lookup in
// the policy's namespace (segred for host, segred::cuda for the GPU).
#pragma once

#include <type_traits>

#include "core/checks.hpp"
#include "core/descriptors.hpp"
#include "core/options.hpp"
#include "core/reducers.hpp"
#include "core/views.hpp"

namespace segred {
namespace detail {

template <class Policy, class T, class Seg, class O, class R>
void reduce_front(const char* fn, const Policy& policy, rows_view<T> values, const Seg& segments, rows_view<O> out,
                  const R& reducer, const options& opts) {
    check_reduce_args(fn, values, segments, out, reducer, opts);
    if constexpr (!std::is_void<typename with_arg<R>::type>::value && !R::has_arg) {
        // min/max with an arg out run as the value form of argmin/argmax.
        if (opts.arg_ptr != nullptr) {
            segment_reduce_impl(policy, fn, values.as_const(), segments, out, typename with_arg<R>::type{}, opts);
            return;
        }
    }
    segment_reduce_impl(policy, fn, values.as_const(), segments, out, reducer, opts);
}

} // namespace detail

// out[s, :] = reduce of the rows of segment s, for every segment descriptor.
template <class Policy, class T, class Seg, class O, class R = sum>
void segment_reduce(const Policy& policy, rows_view<T> values, const Seg& segments, rows_view<O> out,
                    const R& reducer = {}, const options& opts = {}) {
    detail::reduce_front("segment_reduce", policy, values, segments, out, reducer, opts);
}

// MATLAB/NumPy-style accumarray: rows grouped by unsorted ids or by N-D
// subscripts into an output of given shape; the default reducer is sum and
// empty cells get the fill value (0 unless set in opts).
template <class Policy, class T, class Seg, class O, class R = sum>
void accumarray(const Policy& policy, rows_view<T> values, const Seg& subs, rows_view<O> out, const R& reducer = {},
                const options& opts = {}) {
    static_assert(Seg::kind == segment_kind::ids || Seg::kind == segment_kind::subscripts,
                  "accumarray groups by segred::ids(...) or segred::subscripts(...); "
                  "use segment_reduce for sorted forms");
    detail::reduce_front("accumarray", policy, values, subs, out, reducer, opts);
}

} // namespace segred
