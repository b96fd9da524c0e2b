// segred/host/detail/simd_extremum.hpp -- the max or min of a run of floats
// or doubles in SSE2 lanes, for the host folds of max, min and their arg
// forms.
//
// The scalar fold of a NaN-propagating extremum tests each value for NaN
// before it compares, and the compiler keeps that loop scalar: max ran at a
// quarter of sum's speed. Here the lanes hold `v > l ? v : l` (MAXPS: equal
// values and a NaN in v keep l), which is exactly the scalar step on
// numbers, and a separate mask records whether any value was NaN; the
// caller then redoes the run with the scalar step, which handles NaN.
// Compilers without SSE2 (or other targets) get no vector path: the callers
// fall back to the scalar fold, with the same results.
#pragma once

#include <cstdint>

#include "sse_lanes.hpp"

namespace segred {
namespace host_detail {

// Whether values of type A have a vector extremum here.
template <class A>
constexpr bool has_simd_extremum = has_sse_lanes<A>;

#if SEGRED_HOST_SSE2
// Folds x[0, n) (n a multiple of Lanes) into Lanes interleaved lanes, value
// i into lane i % Lanes, each lane starting from l[j]: the lanes the scalar
// fold gives on numbers. Returns false, leaving l untouched, when any value
// is NaN.
template <bool Max, int Lanes, class A>
inline bool simd_extremum_lanes(const A* x, std::int64_t n, A* l) {
    using V = sse_lanes<A>;
    constexpr int regs = Lanes / V::width;
    static_assert(regs >= 1 && Lanes % V::width == 0, "lanes fill whole registers");
    typename V::reg acc[regs], bad = V::none();
    for (int r = 0; r < regs; ++r) acc[r] = V::load(l + r * V::width);
    for (std::int64_t i = 0; i < n; i += Lanes)
        for (int r = 0; r < regs; ++r) {
            const typename V::reg v = V::load(x + i + r * V::width);
            bad = V::either(bad, V::unordered(v));
            acc[r] = Max ? V::max(v, acc[r]) : V::min(v, acc[r]);
        }
    if (V::any(bad)) return false;
    for (int r = 0; r < regs; ++r) V::store(l + r * V::width, acc[r]);
    return true;
}

// The fold of x[0, n) into Lanes lanes from `init` (value i into lane
// i % Lanes, whole rounds first, then the last part round into the first
// lanes) with the lanes then combined as the scalar fold combines them
// (row_fold::fold_lanes: lane j with lane j + half, half = Lanes / 2 .. 1,
// the later one taken when greater), all in registers: on numbers the
// same bits as that fold, without its per-row and per-combine NaN tests.
// False, and out untouched, when any value is NaN. Lanes: a power of two
// of whole registers. `readable`: elements that may be read from x (at
// least n); the part round reads a whole round where they allow.
template <bool Max, int Lanes, class A>
inline bool simd_extremum_combined(const A* x, std::int64_t n, std::int64_t readable, A init, A& out) {
    using V = sse_lanes<A>;
    using reg = typename V::reg;
    constexpr int regs = Lanes / V::width;
    static_assert(regs >= 1 && Lanes % V::width == 0 && (regs & (regs - 1)) == 0, "a power of two of registers");
    auto pick = [](reg later, reg l) { return Max ? V::max(later, l) : V::min(later, l); };
    reg acc[regs], bad = V::none();
    for (int r = 0; r < regs; ++r) acc[r] = V::splat(init);
    const std::int64_t main = n / Lanes * Lanes;
    auto round = [&](const A* p) {
        for (int r = 0; r < regs; ++r) {
            const reg v = V::load(p + r * V::width);
            bad = V::either(bad, V::unordered(v));
            acc[r] = pick(v, acc[r]);
        }
    };
    for (std::int64_t i = 0; i < main; i += Lanes) round(x + i);
    if (main < n) {
        // The part round, its missing lanes at init: picking init keeps a
        // lane (it never passes init). Read whole where the rows after the
        // range may be read (a round through a buffer costs a failed
        // store-to-load forward).
        if (main + Lanes <= readable) {
            const __m128i rest = _mm_set1_epi32(static_cast<int>(n - main));
            const reg fill = V::splat(init);
            for (int r = 0; r < regs; ++r) {
                const reg v = V::keep_below(V::load(x + main + r * V::width), rest, r * V::width, fill);
                bad = V::either(bad, V::unordered(v));
                acc[r] = pick(v, acc[r]);
            }
        } else {
            A part[Lanes];
            for (int j = 0; j < Lanes; ++j) part[j] = main + j < n ? x[main + j] : init;
            round(part);
        }
    }
    if (V::any(bad)) return false;
    for (int half = regs / 2; half >= 1; half /= 2)
        for (int r = 0; r < half; ++r) acc[r] = pick(acc[r + half], acc[r]);
    reg t = pick(V::upper_half(acc[0]), acc[0]);
    if constexpr (V::width == 4) t = pick(V::second(t), t);
    out = V::first(t);
    return true;
}
#else
template <bool Max, int Lanes, class A>
inline bool simd_extremum_lanes(const A*, std::int64_t, A*) {
    return false;
}
template <bool Max, int Lanes, class A>
inline bool simd_extremum_combined(const A*, std::int64_t, std::int64_t, A, A&) {
    return false;
}
#endif

// The extremum of x[0, n) for n >= 1 when no value is NaN (false when one
// is). Which of two equal values (+0 and -0) it returns is unspecified: the
// arg fold only compares against it.
template <bool Max, class A>
inline bool simd_extremum_of(const A* x, std::int64_t n, A& out) {
    constexpr int Lanes = 8;
    A l[Lanes];
    const std::int64_t main = n / Lanes * Lanes;
    for (int j = 0; j < Lanes; ++j) l[j] = x[0];
    if (!simd_extremum_lanes<Max, Lanes>(x, main, l)) return false;
    A m = l[0];
    for (int j = 1; j < Lanes; ++j) m = Max ? (l[j] > m ? l[j] : m) : (l[j] < m ? l[j] : m);
    for (std::int64_t i = main; i < n; ++i) {
        if (x[i] != x[i]) return false;
        m = Max ? (x[i] > m ? x[i] : m) : (x[i] < m ? x[i] : m);
    }
    out = m;
    return true;
}

#if SEGRED_HOST_SSE2
// Lane j of register r of v equal to target, in bit r * width + j.
template <class A, int Regs>
inline unsigned equal_lanes(const typename sse_lanes<A>::reg (&v)[Regs], typename sse_lanes<A>::reg target) {
    using V = sse_lanes<A>;
    unsigned hits = 0;
    for (int r = 0; r < Regs; ++r) hits |= static_cast<unsigned>(V::bits(V::equal(v[r], target))) << (r * V::width);
    return hits;
}
#endif

// The first i in [0, n) with x[i] == m, for an m that is not NaN and that
// some x[i] equals (-0 equals +0, as in the scalar compare). Rows are
// compared 32 at a time in vector registers, their masks joined into one
// word, so that a run of 32 rows takes no branch on where the row is
// (the scan a row at a time, mispredicted where it stopped, was half of
// argmax's time over 32-row segments; 16 rows at a time still a quarter).
template <class A>
inline std::int64_t first_equal(const A* x, std::int64_t n, A m) {
    std::int64_t i = 0;
#if SEGRED_HOST_SSE2
    if constexpr (has_sse_lanes<A>) {
        using V = sse_lanes<A>;
        constexpr int step = 32, regs = step / V::width;
        const typename V::reg target = V::splat(m);
        for (; i + step <= n; i += step) {
            typename V::reg v[regs];
            for (int r = 0; r < regs; ++r) v[r] = V::load(x + i + r * V::width);
            const unsigned hits = equal_lanes<A>(v, target);
            if (hits != 0) return i + lowest_bit(hits);
        }
        for (; i + V::width <= n; i += V::width) {
            const int hits = V::bits(V::equal(V::load(x + i), target));
            if (hits != 0) return i + lowest_bit(static_cast<unsigned>(hits));
        }
    }
#endif
    while (!(x[i] == m)) ++i;
    return i;
}

#if SEGRED_HOST_SSE2
// The max (Max) or min of sse_lanes<A>::width runs at once, run j of
// len[j] <= 8 rows from x + b[j] (n: the lengths in lane_lengths' form; 8
// rows readable from each), lane j holding run j's: 8 rows of each run read
// and transposed (lane_rows8), then folded left to right from the run's
// first row. Rows past a run are made all ones, a NaN, which MAXPS and MINPS
// pass over (they keep their second operand where the compare fails), so
// there is no branch on a length: the scalar fold's bits on numbers (its
// strict compare keeps the first of equal values, as these do). False, and
// out untouched, where a row of a run is NaN (the caller then takes the
// scalar step). An empty run's lane is unspecified. Runs of power-law
// lengths (about 3 rows) each took a call of the short fold, at a third of
// sum's speed, where sums share a register four runs at a time.
template <bool Max, class A, class B>
SEGRED_FORCE_INLINE bool mixed_short_extremes(const A* x, const B* b, __m128i n, typename sse_lanes<A>::reg& out,
                                              typename sse_lanes<A>::reg (&rows)[8]) {
    using V = sse_lanes<A>;
    using reg = typename V::reg;
    V::lane_rows8(x, b, rows);
    reg a = rows[0], bad = V::and_not(V::past_rows(n, 0), V::unordered(rows[0]));
    for (int i = 1; i < 8; ++i) {
        const reg past = V::past_rows(n, i);
        bad = V::either(bad, V::and_not(past, V::unordered(rows[i])));
        const reg v = V::either(rows[i], past);
        a = Max ? V::max(v, a) : V::min(v, a);
    }
    if (V::any(bad)) return false;
    out = a;
    return true;
}
// (The same without the rows.)
template <bool Max, class A, class B>
SEGRED_FORCE_INLINE bool mixed_short_extremes(const A* x, const B* b, __m128i n, typename sse_lanes<A>::reg& out) {
    typename sse_lanes<A>::reg rows[8];
    return mixed_short_extremes<Max>(x, b, n, out, rows);
}

// The same, and the first row of each run equal to its extremum (row[j] for
// run j; unspecified for an empty run): the arg forms' row, which the
// scalar fold keeps (the first of equal values, -0 equal to +0). The rows'
// equality masks are joined into one word (equal_lanes: row i's lanes at
// bits i * width) and each lane's lowest bit taken. Rows past a run need no
// mask: one of the run's own rows, all before them, holds its extremum.
template <bool Max, class A, class B>
SEGRED_FORCE_INLINE bool mixed_short_extreme_rows(const A* x, const B* b, __m128i n, typename sse_lanes<A>::reg& out,
                                                  int (&row)[sse_lanes<A>::width]) {
    using V = sse_lanes<A>;
    constexpr int W = V::width;
    typename V::reg rows[8];
    if (!mixed_short_extremes<Max>(x, b, n, out, rows)) return false;
    // Row 8 of every lane set too: an empty run's lane may match no row.
    const std::uint64_t hits = equal_lanes<A>(rows, out) | ((std::uint64_t(1) << W) - 1) << (8 * W);
    constexpr std::uint64_t lane0 = W == 4 ? 0x111111111ull : 0x15555ull;  // bits i * W, i = 0..8
    for (int j = 0; j < W; ++j) row[j] = lowest_bit((hits >> j) & lane0) / W;
    return true;
}
#endif

// The first row of x[0, len) (1 <= len <= short_extremum_rows, that many
// values readable from x) whose value is the run's max (Max) or min, with
// no branch on len: false, and row untouched, where one of the len values
// is NaN (the caller then folds the run with the scalar step). That row is
// the one the scalar fold keeps: its strict compare keeps the first of
// equal values, and -0 equals +0, so the first zero gives a zero extremum
// its sign. Rows past len take x[0]'s value, which never displaces it.
// Branches on the length of runs of 1 to 15 rows held max over power-law
// lengths to a third of sum's speed.
constexpr int short_extremum_rows = 16;

#if SEGRED_HOST_SSE2
template <bool Max, class A>
inline bool simd_short_extremum_row(const A* x, std::int64_t len, std::int64_t& row) {
    using V = sse_lanes<A>;
    using reg = typename V::reg;
    constexpr int regs = short_extremum_rows / V::width;
    auto pick = [](reg later, reg l) { return Max ? V::max(later, l) : V::min(later, l); };
    const __m128i n = _mm_set1_epi32(static_cast<int>(len));
    const reg first = V::splat(x[0]);
    reg v[regs], bad = V::none();
    for (int r = 0; r < regs; ++r) {
        v[r] = V::keep_below(V::load(x + r * V::width), n, r * V::width, first);
        bad = V::either(bad, V::unordered(v[r]));
    }
    if (V::any(bad)) return false;
    reg m = v[0];
    for (int r = 1; r < regs; ++r) m = pick(v[r], m);
    m = pick(V::upper_half(m), m);
    if constexpr (V::width == 4) m = pick(V::second(m), m);
    row = lowest_bit(equal_lanes<A>(v, V::splat(V::first(m))));
    return true;
}
#else
template <bool Max, class A>
inline bool simd_short_extremum_row(const A*, std::int64_t, std::int64_t&) {
    return false;
}
#endif

} // namespace host_detail
} // namespace segred
