// segred/segment_softmax.hpp -- softmax within each segment, per column.
//
// out[i, f] = exp(v[i, f] - max_s) / sum over the segment of exp(v - max_s),
// for every descriptor (GNN attention uses ids). Rows dropped by
// bounds::drop get the fill value (0 unless set).
#pragma once

#include "core/checks.hpp"
#include "core/descriptors.hpp"
#include "core/options.hpp"
#include "core/views.hpp"

namespace segred {

template <class Policy, class T, class Seg, class O>
void segment_softmax(const Policy& policy, rows_view<T> values, const Seg& segments, rows_view<O> out,
                     const options& opts = {}) {
    const char* fn = "segment_softmax";
    detail::check_view(fn, "values", values);
    detail::check_view(fn, "out", out);
    detail::check_segments(fn, values, segments);
    if (out.n != values.n || out.width != values.width)
        detail::fail(fn, "out is [" + detail::to_str(out.n) + ", " + detail::to_str(out.width) +
                             "] but values are [" + detail::to_str(values.n) + ", " + detail::to_str(values.width) +
                             "]");
    static_assert(std::is_floating_point<std::remove_cv_t<O>>::value || !std::is_arithmetic<std::remove_cv_t<O>>::value,
                  "segment_softmax writes probabilities: out must hold a floating-point type");
    if (opts.accumulate_into) detail::fail(fn, "accumulate is not defined for softmax");
    if (opts.arg_ptr != nullptr) detail::fail(fn, "arg_out is not defined for softmax");
    segment_softmax_impl(policy, values.as_const(), segments, out, opts);
}

} // namespace segred
