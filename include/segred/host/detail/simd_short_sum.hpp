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
#include <type_traits>

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

// rows[i] = row i of the V::width runs of Len rows each that lie back to
// back from x, lane j holding run j's: whole runs loaded and transposed
// where the shape allows (float runs of 2, 4 or 8 rows, double runs of an
// even length), else each row gathered lane by lane.
template <int Len, class A>
SEGRED_FORCE_INLINE void load_run_rows(const A* x, typename sse_lanes<A>::reg* rows) {
    using V = sse_lanes<A>;
    if constexpr (std::is_same<A, float>::value && (Len == 4 || Len == 8)) {
        for (int h = 0; h < Len; h += 4) {
            __m128 r0 = V::load(x + h), r1 = V::load(x + Len + h), r2 = V::load(x + 2 * Len + h),
                   r3 = V::load(x + 3 * Len + h);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            rows[h] = r0, rows[h + 1] = r1, rows[h + 2] = r2, rows[h + 3] = r3;
        }
    } else if constexpr (std::is_same<A, float>::value && Len == 2) {
        const __m128 a = V::load(x), b = V::load(x + 4);
        rows[0] = _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
        rows[1] = _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    } else if constexpr (std::is_same<A, double>::value && Len % 2 == 0) {
        for (int i = 0; i < Len; i += 2) {
            const __m128d a = V::load(x + i), b = V::load(x + Len + i);
            rows[i] = _mm_unpacklo_pd(a, b);
            rows[i + 1] = _mm_unpackhi_pd(a, b);
        }
    } else {
        for (int i = 0; i < Len; ++i) rows[i] = V::gather(x + i, Len);
    }
}

// K runs of Len rows each, back to back from x: out[j] is run j's sum from
// +0, left to right (the bits of masked_sum_in_order). The lanes of a
// register take as many runs at once: consecutive segments of one length
// (fixed-length layouts, long stretches of equal lengths) then cost a vector
// add per row of V::width segments rather than a chain of dependent adds
// per segment.
template <int K, int Len, class A>
SEGRED_FORCE_INLINE void equal_short_sums(const A* x, A* out) {
    using V = sse_lanes<A>;
    static_assert(K % V::width == 0, "whole registers of runs");
    for (int g = 0; g < K; g += V::width) {
        typename V::reg rows[Len], a = V::none();
        load_run_rows<Len>(x + g * Len, rows);
        for (int i = 0; i < Len; ++i) a = V::add(a, rows[i]);
        V::store(out + g, a);
    }
}

// The sums of V::width runs at once, run j of len[j] <= short_sum_rows rows
// from x + b[j], each from +0, left to right (the bits of
// masked_sum_in_order): 8 rows of each run read and transposed, lane j
// taking run j's, the rows past a run masked to +0. Lengths that vary from
// one segment to the next (power law) then cost no branch on a length;
// x + b[j] .. + short_sum_rows must be readable. n holds the lengths in
// V::lane_lengths' form; the sums stay in a register, lane j run j's.
template <class A, class B>
SEGRED_FORCE_INLINE typename sse_lanes<A>::reg mixed_short_sums(const A* x, const B* b, __m128i n) {
    using V = sse_lanes<A>;
    static_assert(short_sum_rows == 8, "lane_rows8 reads 8 rows");
    typename V::reg rows[8], a = V::none();
    V::lane_rows8(x, b, rows);
    for (int i = 0; i < 8; ++i) a = V::add(a, V::rows_below(rows[i], n, i));
    return a;
}

// The same for a length known at run time, 2 <= len <= short_sum_rows.
template <int K, class A>
SEGRED_FORCE_INLINE void equal_short_sums(const A* x, std::int64_t len, A* out) {
    static_assert(short_sum_rows == 8, "one case per length");
    switch (len) {
    case 2: return equal_short_sums<K, 2>(x, out);
    case 3: return equal_short_sums<K, 3>(x, out);
    case 4: return equal_short_sums<K, 4>(x, out);
    case 5: return equal_short_sums<K, 5>(x, out);
    case 6: return equal_short_sums<K, 6>(x, out);
    case 7: return equal_short_sums<K, 7>(x, out);
    default: return equal_short_sums<K, 8>(x, out);
    }
}
#endif

} // namespace host_detail
} // namespace segred
