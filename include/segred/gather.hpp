// segred/gather.hpp -- out[i, :] = src[ids[i], :] and its backward.
//
// gather_backward is a scatter-add (index_add_): grad_src[k, :] = sum of
// grad_out[i, :] over i with ids[i] == k; with accumulate it adds into the
// existing grad_src. It runs as a sum reduction over unsorted ids, never as
// a sort-based index_put.
#pragma once

#include "core/checks.hpp"
#include "segment_reduce.hpp"

namespace segred {

// Out-of-range ids: check throws; drop writes the fill value (0 unless set)
// to that output row, as JAX's FILL_OR_DROP gather does.
template <class Policy, class T, class I, class O>
void gather(const Policy& policy, rows_view<T> src, rows_view<I> id_vec, rows_view<O> out,
            const options& opts = {}) {
    detail::check_view("gather", "src", src);
    detail::check_index_vector("gather", "ids", id_vec);
    detail::check_view("gather", "out", out);
    if (out.n != id_vec.n)
        detail::fail("gather", "out has " + detail::to_str(out.n) + " rows but ids have " + detail::to_str(id_vec.n));
    if (out.width != src.width)
        detail::fail("gather", "out has width " + detail::to_str(out.width) + " but src has width " +
                                   detail::to_str(src.width));
    if (opts.fill_mode == fill_kind::nan && std::is_integral<std::remove_cv_t<O>>::value)
        detail::fail("gather", "fill_nan() needs a floating-point output; out holds integers");
    // Options that belong to reductions are refused rather than ignored.
    if (opts.accumulate_into) detail::fail("gather", "accumulate is not defined for gather");
    if (opts.counts_out != nullptr) detail::fail("gather", "counts are not defined for gather");
    if (opts.arg_ptr != nullptr) detail::fail("gather", "arg_out is not defined for gather");
    gather_impl(policy, src.as_const(), id_vec.as_const(), out, opts);
}

template <class Policy, class G, class I, class O>
void gather_backward(const Policy& policy, rows_view<G> grad_out, rows_view<I> id_vec, rows_view<O> grad_src,
                     const options& opts = {}) {
    detail::check_index_vector("gather_backward", "ids", id_vec);
    detail::check_view("gather_backward", "grad_out", grad_out);
    if (grad_out.n != id_vec.n)
        detail::fail("gather_backward", "grad_out has " + detail::to_str(grad_out.n) + " rows but ids have " +
                                            detail::to_str(id_vec.n));
    detail::reduce_front("gather_backward", policy, grad_out, ids(id_vec.data, grad_src.n), grad_src, sum{}, opts);
}

} // namespace segred
