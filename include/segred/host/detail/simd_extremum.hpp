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
#else
template <bool Max, int Lanes, class A>
inline bool simd_extremum_lanes(const A*, std::int64_t, A*) {
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

} // namespace host_detail
} // namespace segred
