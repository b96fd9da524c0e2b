// segred/host/detail/simd_arg_extremum.hpp -- the extremum of a run of
// floats or doubles and the first row holding it, in one pass of SSE2
// lanes, for the host folds of argmax and argmin over mid-length runs.
//
// The block fold of the arg forms (row_fold::fold_arg_blocks) reads a
// block twice: once for its extremum, then, where that beats the state so
// far, again for the first row equal to it. On runs shorter than a block
// the second read always happens, and argmax over sorted 32-row segments
// ran at 0.6x max's speed. Here each lane keeps its extremum and the step
// (8 rows a step) at which it last grew: a strict compare, so a lane keeps
// the first of equal values, as the scalar fold does. The step's first row
// is kept as a value of the lanes' own type (exact below 2^24 rows), so
// that taking it is an AND and a MAX, like the extremum. At the end the
// lanes equal to the extremum of all lanes give their rows, and the lowest
// row wins. A NaN anywhere sends the run back to the scalar fold, which
// handles it.
#pragma once

#include <cstdint>

#include "sse_lanes.hpp"

namespace segred {
namespace host_detail {

#if SEGRED_HOST_SSE2
// Rows a step of simd_arg_extremum_row.
constexpr int arg_extremum_step = 8;

// The max (Max) or min of x[0, n) into `value` and the lowest row holding
// it into `row`, where no value is NaN (false, and both untouched, where
// one is): the sequential fold's result on numbers (+0 and -0 compare
// equal, so the first of them wins; value is x[row]). For
// arg_extremum_step <= n < 2^24. Rows past the whole steps are folded one
// at a time, after the lanes.
template <bool Max, class A>
SEGRED_FORCE_INLINE bool simd_arg_extremum_row(const A* x, std::int64_t n, A& value, std::int64_t& row) {
    using V = sse_lanes<A>;
    using reg = typename V::reg;
    constexpr int regs = arg_extremum_step / V::width;
    static_assert(regs % 2 == 0, "NaN tests take registers in pairs");
    auto pick = [](reg v, reg l) { return Max ? V::max(v, l) : V::min(v, l); };
    auto beats = [](reg v, reg l) { return Max ? V::greater(v, l) : V::greater(l, v); };
    // at[r]: the first row of the step at which each lane last grew.
    reg best[regs], at[regs], bad = V::none();
    for (int r = 0; r < regs; ++r) {
        best[r] = V::load(x + r * V::width);
        at[r] = V::none();  // step 0, row +0
    }
    for (int r = 0; r < regs; r += 2) bad = V::either(bad, V::either_unordered(best[r], best[r + 1]));
    const std::int64_t steps = n / arg_extremum_step;
    const reg step = V::splat(static_cast<A>(arg_extremum_step));
    reg s = V::none();  // this step's first row (a chain of adds no longer than the extremum's)
    for (std::int64_t i = 1; i < steps; ++i) {
        s = V::add(s, step);
        const A* p = x + i * arg_extremum_step;
        reg v[regs];
        for (int r = 0; r < regs; ++r) v[r] = V::load(p + r * V::width);
        for (int r = 0; r < regs; r += 2) bad = V::either(bad, V::either_unordered(v[r], v[r + 1]));
        for (int r = 0; r < regs; ++r) {
            // The step's row only grows, so MAX with it (or +0 where the
            // lane does not grow) is the select.
            at[r] = V::max(V::both(beats(v[r], best[r]), s), at[r]);
            best[r] = pick(v[r], best[r]);
        }
    }
    if (V::any(bad)) return false;
    // The extremum of all lanes, in every lane.
    reg t = best[0];
    for (int r = 1; r < regs; ++r) t = pick(best[r], t);
    t = pick(V::upper_half(t), t);
    if constexpr (V::width == 4) t = pick(V::second(t), t);
    const reg m = V::splat(V::first(t));
    // Each lane's row where it holds that extremum, n elsewhere (a MAX with
    // n or +0, rows being at least +0); the lowest of them.
    const reg none = V::splat(static_cast<A>(n));
    reg low = none;
    for (int r = 0; r < regs; ++r) {
        const reg rows = V::add(at[r], V::counting_from(static_cast<A>(r * V::width)));
        low = V::min(V::max(rows, V::and_not(V::equal(best[r], m), none)), low);
    }
    low = V::min(V::upper_half(low), low);
    if constexpr (V::width == 4) low = V::min(V::second(low), low);
    std::int64_t k = static_cast<std::int64_t>(V::first(low));
    A e = x[k];
    for (std::int64_t j = steps * arg_extremum_step; j < n; ++j) {
        if (x[j] != x[j]) return false;
        if (Max ? x[j] > e : x[j] < e) e = x[j], k = j;
    }
    value = e;
    row = k;
    return true;
}
#endif

} // namespace host_detail
} // namespace segred
