// segred/host/detail/sse_lanes.hpp -- one SSE2 register of floats or
// doubles, as the host's vector folds (simd_extremum.hpp, simd_short_sum.hpp)
// use it. Compilers without SSE2 (or other targets) get no lanes: the callers
// keep their scalar folds, with the same results.
#pragma once

#include <cstdint>
#include <type_traits>

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define SEGRED_HOST_SSE2 1
#else
#define SEGRED_HOST_SSE2 0
#endif

namespace segred {
namespace host_detail {

// Whether values of type A have SSE2 lanes here.
template <class A>
constexpr bool has_sse_lanes = SEGRED_HOST_SSE2 && (std::is_same<A, float>::value || std::is_same<A, double>::value);

// The lowest set bit of hits (not 0).
inline int lowest_bit(std::uint64_t hits) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(hits);
#else
    int j = 0;
    while (!((hits >> j) & 1u)) ++j;
    return j;
#endif
}

#if SEGRED_HOST_SSE2
template <class A> struct sse_lanes;
template <> struct sse_lanes<float> {
    using reg = __m128;
    static constexpr int width = 4;
    static reg load(const float* p) { return _mm_loadu_ps(p); }
    static reg splat(float v) { return _mm_set1_ps(v); }
    static void store(float* p, reg v) { _mm_storeu_ps(p, v); }
    static reg max(reg v, reg l) { return _mm_max_ps(v, l); }  // v > l ? v : l, lane by lane
    static reg min(reg v, reg l) { return _mm_min_ps(v, l); }  // v < l ? v : l
    static reg unordered(reg v) { return _mm_cmpunord_ps(v, v); }
    static reg either(reg a, reg b) { return _mm_or_ps(a, b); }
    static reg none() { return _mm_setzero_ps(); }
    static bool any(reg m) { return _mm_movemask_ps(m) != 0; }
    static int bits(reg m) { return _mm_movemask_ps(m); }  // lane j's mask in bit j
    static reg equal(reg a, reg b) { return _mm_cmpeq_ps(a, b); }
    // v, the rows i, i + 1, .. of a run, with those at or past row `len` set
    // to +0.
    static reg below(reg v, __m128i len, int i) {
        return _mm_and_ps(v, _mm_castsi128_ps(_mm_cmpgt_epi32(len, _mm_setr_epi32(i, i + 1, i + 2, i + 3))));
    }
    // a + v[0] + v[1] + v[2] + v[3], added left to right (in lane 0).
    static reg add_in_order(reg a, reg v) {
        a = _mm_add_ss(a, v);
        a = _mm_add_ss(a, _mm_shuffle_ps(v, v, 1));
        a = _mm_add_ss(a, _mm_movehl_ps(v, v));
        return _mm_add_ss(a, _mm_shuffle_ps(v, v, 3));
    }
    static float first(reg a) { return _mm_cvtss_f32(a); }
    static reg add(reg a, reg b) { return _mm_add_ps(a, b); }
    // The run lengths of the 4 lanes, as rows_below takes them.
    static __m128i lane_lengths(const std::int64_t* len) {
        return _mm_setr_epi32(static_cast<int>(len[0]), static_cast<int>(len[1]), static_cast<int>(len[2]),
                              static_cast<int>(len[3]));
    }
    // v with the lanes whose run has at most row i (len <= i) set to +0.
    static reg rows_below(reg v, __m128i len, int i) {
        return _mm_and_ps(v, _mm_castsi128_ps(_mm_cmpgt_epi32(len, _mm_set1_epi32(i))));
    }
    // All ones (a NaN) in the lanes whose run has at most row i (len <= i).
    static reg past_rows(__m128i len, int i) { return _mm_castsi128_ps(_mm_cmplt_epi32(len, _mm_set1_epi32(i + 1))); }
    static reg and_not(reg a, reg b) { return _mm_andnot_ps(a, b); }  // b where a is clear
    // The lane lengths (lane_lengths' form) as values, for a mean's division.
    static reg lengths_as_values(__m128i len) { return _mm_cvtepi32_ps(len); }
    // v, with `fill` in the lanes whose run is empty.
    static reg fill_empty(reg v, __m128i len, reg fill) {
        const reg empty = _mm_castsi128_ps(_mm_cmpeq_epi32(len, _mm_setzero_si128()));
        return _mm_or_ps(_mm_and_ps(empty, fill), _mm_andnot_ps(empty, v));
    }
    static reg div(reg a, reg b) { return _mm_div_ps(a, b); }
    static reg greater(reg a, reg b) { return _mm_cmpgt_ps(a, b); }  // a > b, lane by lane
    static reg both(reg a, reg b) { return _mm_and_ps(a, b); }
    static reg either_unordered(reg a, reg b) { return _mm_cmpunord_ps(a, b); }  // a or b NaN
    static reg counting_from(float i) { return _mm_setr_ps(i, i + 1, i + 2, i + 3); }  // i, i + 1, ..
    // rows[i] = row i of the runs at x + b[0..4), lane j holding run j's,
    // for i < 8: two rows of 4 loaded from each run, transposed. Forced
    // inline: as a call, its rows went through the stack, and power-law
    // sums ran 1.17x slower.
    template <class B>  // b: 16-, 32- or 64-bit row offsets
    SEGRED_FORCE_INLINE static void lane_rows8(const float* x, const B* b, reg* rows) {
        for (int h = 0; h < 8; h += 4) {
            __m128 r0 = load(x + b[0] + h), r1 = load(x + b[1] + h), r2 = load(x + b[2] + h), r3 = load(x + b[3] + h);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            rows[h] = r0, rows[h + 1] = r1, rows[h + 2] = r2, rows[h + 3] = r3;
        }
    }
    // p[0], p[stride], p[2 stride], p[3 stride].
    static reg gather(const float* p, int stride) { return _mm_setr_ps(p[0], p[stride], p[2 * stride], p[3 * stride]); }
    // Four interleaved partial states l0..l3 (one register) combined as
    // v's lanes for rows i, i + 1, .. below `len` (every lane of len alike),
    // `other`'s past them.
    static reg keep_below(reg v, __m128i len, int i, reg other) {
        const reg in = _mm_castsi128_ps(_mm_cmpgt_epi32(len, _mm_setr_epi32(i, i + 1, i + 2, i + 3)));
        return _mm_or_ps(_mm_and_ps(in, v), _mm_andnot_ps(in, other));
    }
    // Lanes 2, 3 in lanes 0, 1; lane 1 in lane 0.
    static reg upper_half(reg v) { return _mm_movehl_ps(v, v); }
    static reg second(reg v) { return _mm_shuffle_ps(v, v, 1); }
    // (l0 + l2) + (l1 + l3), in lane 0.
    static reg lane4_total(const reg* l) {
        const reg h = _mm_add_ps(l[0], _mm_movehl_ps(l[0], l[0]));
        return _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    }
};
template <> struct sse_lanes<double> {
    using reg = __m128d;
    static constexpr int width = 2;
    static reg load(const double* p) { return _mm_loadu_pd(p); }
    static reg splat(double v) { return _mm_set1_pd(v); }
    static void store(double* p, reg v) { _mm_storeu_pd(p, v); }
    static reg max(reg v, reg l) { return _mm_max_pd(v, l); }
    static reg min(reg v, reg l) { return _mm_min_pd(v, l); }
    static reg unordered(reg v) { return _mm_cmpunord_pd(v, v); }
    static reg either(reg a, reg b) { return _mm_or_pd(a, b); }
    static reg none() { return _mm_setzero_pd(); }
    static bool any(reg m) { return _mm_movemask_pd(m) != 0; }
    static int bits(reg m) { return _mm_movemask_pd(m); }  // lane j's mask in bit j
    static reg equal(reg a, reg b) { return _mm_cmpeq_pd(a, b); }
    static reg below(reg v, __m128i len, int i) {  // both 32-bit halves of a lane compare alike
        return _mm_and_pd(v, _mm_castsi128_pd(_mm_cmpgt_epi32(len, _mm_setr_epi32(i, i, i + 1, i + 1))));
    }
    static reg add_in_order(reg a, reg v) { return _mm_add_sd(_mm_add_sd(a, v), _mm_unpackhi_pd(v, v)); }
    static double first(reg a) { return _mm_cvtsd_f64(a); }
    static reg add(reg a, reg b) { return _mm_add_pd(a, b); }
    static __m128i lane_lengths(const std::int64_t* len) {  // both 32-bit halves of a lane alike
        return _mm_setr_epi32(static_cast<int>(len[0]), static_cast<int>(len[0]), static_cast<int>(len[1]),
                              static_cast<int>(len[1]));
    }
    static reg rows_below(reg v, __m128i len, int i) {
        return _mm_and_pd(v, _mm_castsi128_pd(_mm_cmpgt_epi32(len, _mm_set1_epi32(i))));
    }
    static reg past_rows(__m128i len, int i) {  // both halves of a lane compare alike
        return _mm_castsi128_pd(_mm_cmplt_epi32(len, _mm_set1_epi32(i + 1)));
    }
    static reg and_not(reg a, reg b) { return _mm_andnot_pd(a, b); }
    static reg lengths_as_values(__m128i len) {  // lanes 0 and 2 hold the two lengths
        return _mm_cvtepi32_pd(_mm_shuffle_epi32(len, _MM_SHUFFLE(3, 1, 2, 0)));
    }
    static reg fill_empty(reg v, __m128i len, reg fill) {  // both halves of a lane compare alike
        const reg empty = _mm_castsi128_pd(_mm_cmpeq_epi32(len, _mm_setzero_si128()));
        return _mm_or_pd(_mm_and_pd(empty, fill), _mm_andnot_pd(empty, v));
    }
    static reg div(reg a, reg b) { return _mm_div_pd(a, b); }
    static reg greater(reg a, reg b) { return _mm_cmpgt_pd(a, b); }
    static reg both(reg a, reg b) { return _mm_and_pd(a, b); }
    static reg either_unordered(reg a, reg b) { return _mm_cmpunord_pd(a, b); }
    static reg counting_from(double i) { return _mm_setr_pd(i, i + 1); }
    template <class B>  // b: 16-, 32- or 64-bit row offsets
    SEGRED_FORCE_INLINE static void lane_rows8(const double* x, const B* b, reg* rows) {
        for (int i = 0; i < 8; i += 2) {
            const __m128d r0 = load(x + b[0] + i), r1 = load(x + b[1] + i);
            rows[i] = _mm_unpacklo_pd(r0, r1);
            rows[i + 1] = _mm_unpackhi_pd(r0, r1);
        }
    }
    static reg gather(const double* p, int stride) { return _mm_setr_pd(p[0], p[stride]); }
    static reg upper_half(reg v) { return _mm_unpackhi_pd(v, v); }  // lane 1 in lane 0
    static reg keep_below(reg v, __m128i len, int i, reg other) {  // both 32-bit halves of a lane alike
        const reg in = _mm_castsi128_pd(_mm_cmpgt_epi32(len, _mm_setr_epi32(i, i, i + 1, i + 1)));
        return _mm_or_pd(_mm_and_pd(in, v), _mm_andnot_pd(in, other));
    }
    static reg lane4_total(const reg* l) {  // l[0] holds l0, l1 and l[1] holds l2, l3
        const reg h = _mm_add_pd(l[0], l[1]);
        return _mm_add_sd(h, _mm_unpackhi_pd(h, h));
    }
};

// The lengths b[j + 1] - b[j] of the four runs whose bounds are b[0..4],
// 32- or 16-bit, in four 32-bit lanes: narrow bounds (int32 offsets, the
// 16-bit ends of a window of sorted ids) give a group of runs its lengths
// in two loads and a subtraction.
inline __m128i run_lengths4(const std::int32_t* b) {
    return _mm_sub_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 1)),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)));
}
inline __m128i run_lengths4(const std::int16_t* b) {
    const __m128i d = _mm_sub_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 1)),
                                    _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b)));
    return _mm_srai_epi32(_mm_unpacklo_epi16(d, d), 16);  // sign-extended
}

// How many of the bounds b[0], b[1], .. b[31] equal v before the first that
// does not (32 if all do): the empty segments after one that ends at v, told
// in a few compares (8 for 32-bit bounds) and no branch.
inline int leading_equal32(const std::int32_t* b, std::int32_t v) {
    const __m128i x = _mm_set1_epi32(v);
    std::uint64_t unequal = std::uint64_t(1) << 32;  // stops the count at 32
    for (int k = 0; k < 8; ++k) {
        const __m128i eq = _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 4 * k)), x);
        unequal |= static_cast<std::uint64_t>(~_mm_movemask_ps(_mm_castsi128_ps(eq)) & 0xF) << (4 * k);
    }
    return lowest_bit(unequal);
}
inline int leading_equal32(const std::int64_t* b, std::int64_t v) {
    const __m128i x = _mm_set1_epi64x(v);
    std::uint64_t unequal = std::uint64_t(1) << 32;
    for (int k = 0; k < 16; ++k) {
        const __m128i halves = _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 * k)), x);
        // (SSE2 compares 32 bits at a time: a bound is equal where both halves are.)
        const __m128i eq = _mm_and_si128(halves, _mm_shuffle_epi32(halves, _MM_SHUFFLE(2, 3, 0, 1)));
        unequal |= static_cast<std::uint64_t>(~_mm_movemask_pd(_mm_castsi128_pd(eq)) & 0x3) << (2 * k);
    }
    return lowest_bit(unequal);
}
inline int leading_equal32(const std::int16_t* b, std::int16_t v) {
    const __m128i x = _mm_set1_epi16(v);
    std::uint64_t unequal = std::uint64_t(1) << 32;
    for (int k = 0; k < 2; ++k) {
        const __m128i lo = _mm_cmpeq_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * k)), x);
        const __m128i hi = _mm_cmpeq_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * k + 8)), x);
        unequal |= static_cast<std::uint64_t>(~_mm_movemask_epi8(_mm_packs_epi16(lo, hi)) & 0xFFFF) << (16 * k);
    }
    return lowest_bit(unequal);
}

// Whether every lane of n lies in [0, most].
inline bool lengths_within(__m128i n, int most) {
    const __m128i out = _mm_or_si128(_mm_cmpgt_epi32(n, _mm_set1_epi32(most)), _mm_cmpgt_epi32(_mm_setzero_si128(), n));
    return _mm_movemask_epi8(out) == 0;
}
#endif

} // namespace host_detail
} // namespace segred
