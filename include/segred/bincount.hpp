// segred/bincount.hpp -- occurrence counts and weighted sums per id.
//
// The output's row count plays NumPy's minlength: ids must lie in
// [0, out.n) (bounds policy decides otherwise). Counting is a count
// reduction over ids and the weighted form a sum, so both share the
// segment_reduce machinery of every backend.
#pragma once

#include <type_traits>

#include "core/checks.hpp"
#include "segment_reduce.hpp"

namespace segred {

// out[k] = number of rows i with ids[i] == k.
template <class Policy, class I, class O>
void bincount(const Policy& policy, rows_view<I> id_vec, rows_view<O> out, const options& opts = {}) {
    detail::check_index_vector("bincount", "ids", id_vec);
    detail::check_view("bincount", "out", out);
    if (out.width != 1) detail::fail("bincount", "out must have width 1, has width " + detail::to_str(out.width));
    // count never reads values; the ids themselves serve as the n rows.
    detail::reduce_front("bincount", policy, id_vec, ids(id_vec.data, out.n), out, count{}, opts);
}

// out[k, :] = sum of weights[i, :] over rows i with ids[i] == k.
template <class Policy, class W, class I, class O>
void bincount(const Policy& policy, rows_view<W> weights, rows_view<I> id_vec, rows_view<O> out,
              const options& opts = {}) {
    detail::check_index_vector("bincount", "ids", id_vec);
    detail::check_view("bincount", "weights", weights);
    if (weights.n != id_vec.n)
        detail::fail("bincount", "weights have " + detail::to_str(weights.n) + " rows but ids have " +
                                     detail::to_str(id_vec.n));
    detail::reduce_front("bincount", policy, weights, ids(id_vec.data, out.n), out, sum{}, opts);
}

} // namespace segred
