// segred/host/detail/simd_short_sum.hpp -- the sum of a run of at most 8
// floats or doubles with no branch on the run's length.
//
// Random short lengths (power-law segments) mispredict a row loop's exit
// about once a segment, which costs more than the segment's adds. Here a
// fixed 4 or 8 rows are read, those past the run are masked to +0 and all
// are added one by one, left to right, from +0. A sum that starts at +0 is
// never -0 (x + y is -0 only when both are), so each added +0 leaves it as
// it was: the result has the bits of the row-by-row sum, NaN and
// infinities included.
#pragma once

#include <cstdint>

#include "../../core/config.hpp"
#include "sse_lanes.hpp"

namespace segred {
namespace host_detail {

// Rows a short sum reads: the run holds at most this many.
constexpr int short_sum_rows = 8;

#if SEGRED_HOST_SSE2
// x[0] + .. + x[len - 1] from +0, left to right, for 0 <= len <= Rows;
// x[0, Rows) must be readable.
template <int Rows, class A>
SEGRED_FORCE_INLINE A masked_sum_in_order(const A* x, int len) {
    using V = sse_lanes<A>;
    const __m128i n = _mm_set1_epi32(len);
    typename V::reg a = V::none();
    for (int i = 0; i < Rows; i += V::width) a = V::add_in_order(a, V::below(V::load(x + i), n, i));
    return V::first(a);
}

// The same for 0 <= len <= short_sum_rows, reading 4 rows when the run
// fits in them (most power-law runs do) and short_sum_rows otherwise.
template <class A>
SEGRED_FORCE_INLINE A short_sum(const A* x, std::int64_t len) {
    const int l = static_cast<int>(len);
    return l <= 4 ? masked_sum_in_order<4>(x, l) : masked_sum_in_order<short_sum_rows>(x, l);
}
#endif

} // namespace host_detail
} // namespace segred
