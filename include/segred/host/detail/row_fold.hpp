// segred/host/detail/row_fold.hpp -- the per-row work of a reduction, shared
// by every host loop shape (segments of a layout, sorted runs, scatter).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../../core/reducers.hpp"
#include "../../core/views.hpp"
#include "counted_sum.hpp"
#include "simd_arg_extremum.hpp"
#include "simd_extremum.hpp"
#include "simd_lane_sum.hpp"
#include "simd_short_sum.hpp"

namespace segred {
namespace host_detail {

// Folds value rows into `width` states of reducer R. width is the output's
// width: a count column reads only column 0 of wider values.
template <class T, class R>
struct row_fold {
    using state = state_t<R, T>;
    using value_type = T;
    // Whether update reads the row index (a reducer that records the
    // winning row) rather than only the value.
    static constexpr bool uses_row = R::has_arg;
    // +1 for max, -1 for min, 0 for other reducers: plain (extremum) and
    // arg (value and row) forms, which take the vector folds below on
    // float and double values.
    static constexpr int plain_extremum = std::is_base_of<detail::extremum<true>, R>::value    ? 1
                                          : std::is_base_of<detail::extremum<false>, R>::value ? -1
                                                                                                : 0;
    static constexpr int arg_extremum = std::is_base_of<detail::arg_extremum<true, true>, R>::value ||
                                                std::is_base_of<detail::arg_extremum<true, false>, R>::value
                                            ? 1
                                        : std::is_base_of<detail::arg_extremum<false, true>, R>::value ||
                                                std::is_base_of<detail::arg_extremum<false, false>, R>::value
                                            ? -1
                                            : 0;
    const R& r;
    rows_view<const T> values;
    std::int64_t width;

    state init() const { return r.template init<T>(); }

    void update(state* st, std::int64_t row) const {
        const T* v = values.row(row);
        for (std::int64_t f = 0; f < width; ++f) r.update(st[f], v[f], row);
    }

    void combine(state& a, const state& b) const { r.combine(a, b); }

    // Column 0 of value row `row` into one state: the one-column fast path.
    void update_one(state& a, std::int64_t row) const { r.update(a, values.data[row * values.width], row); }

    // Row `row`'s value v, already read, into one state.
    void update_value(state& a, const T& v, std::int64_t row) const { r.update(a, v, row); }

    // st = the fold of positions [k0, k1), position k being row perm[k]
    // (row k when perm is null). One column keeps its state in registers:
    // the loop then carries no store through memory, and a long range is
    // folded in interleaved partial states (fold_one) combined by a fixed
    // tree, so still the same bits on any thread count.
    void fold(state* st, std::int64_t k0, std::int64_t k1, const std::int64_t* perm = nullptr) const {
        if (width == 1 && perm == nullptr) {
            st[0] = fold_one(k0, k1);
            return;
        }
        for (std::int64_t f = 0; f < width; ++f) st[f] = init();
        if (perm)
            for (std::int64_t k = k0; k < k1; ++k) update(st, perm[k]);
        else
            for (std::int64_t k = k0; k < k1; ++k) update(st, k);
    }

    // The fold of column 0 of rows [k0, k1), returned in a register. Short
    // ranges fold left to right; from 16 rows in 4 interleaved lanes, and
    // from 256 rows, for states of at most 8 bytes, in 16 (enough
    // independent adds in flight to keep up with memory). Lanes are combined
    // by a fixed tree, so the bits depend on the range only.
    SEGRED_FORCE_INLINE state fold_one(std::int64_t k0, std::int64_t k1) const {
        if (k1 - k0 < 16) {
            if constexpr (short_extremum) return fold_short_extremum(k0, k1);
            state a = init();
            for (std::int64_t k = k0; k < k1; ++k) update_one(a, k);
            return a;
        }
        if constexpr (arg_extremum != 0 && has_simd_extremum<T>)
            if (values.width == 1) return k1 - k0 < arg_block ? fold_arg_one_pass(k0, k1) : fold_arg_blocks(k0, k1);
        if (sizeof(state) <= 8 && k1 - k0 >= 256) return fold_lanes<16>(k0, k1);
#if SEGRED_HOST_SSE2
        // The same 4 lanes in a register (simd_lane_sum.hpp), where the
        // rows up to the next multiple of 4 can be read.
        if constexpr (masked_fold)
            if (values.width == 1 && k1 + 3 <= values.n) return sum_state(lane4_sum(values.data + k0, k1 - k0), k1 - k0);
#endif
        return fold_lanes<4>(k0, k1);
    }

    // Sums and means of one-column runs of at most masked_rows rows, from a
    // first row with masked_rows rows readable after it: folded with no
    // branch on the run's length (simd_short_sum.hpp), to the bits fold_one
    // gives. Float and double values, where the host has SSE2 lanes.
    static constexpr int masked_rows = short_sum_rows;
    // Sums and means: a row's place in their fold changes only the
    // rounding, so a scatter may fold rows into interleaved copies of a
    // state (scatter.hpp), where extremes keep the first of equal values.
    static constexpr bool adds =
        std::is_same<R, segred::sum>::value || std::is_same<R, segred::mean>::value || is_counted<R>::value;
    static constexpr bool masked_fold =
        (std::is_same<R, segred::sum>::value || std::is_same<R, segred::mean>::value) &&
        std::is_same<detail::accum_t<T>, T>::value && has_sse_lanes<T>;
    // Max, min and their arg forms of float and double: their runs of at
    // most masked_rows rows take the same groups in a register as sums
    // (fold_mixed_lanes), and one alone the short extremum fold.
    static constexpr bool masked_extremum = (plain_extremum != 0 || arg_extremum != 0) && has_simd_extremum<T>;
    // The one-column segment loop's runs of at most masked_rows rows, with
    // no branch on their length (segment_loops.hpp).
    static constexpr bool masked_runs = masked_fold || masked_extremum;

    SEGRED_FORCE_INLINE state fold_masked(std::int64_t k0, std::int64_t len) const {
#if SEGRED_HOST_SSE2
        if constexpr (masked_fold) return sum_state(short_sum(values.data + k0, len), len);
#endif
        return fold_one(k0, k0 + len);
    }

    // K consecutive runs of len rows each from row b (2 <= len <=
    // masked_rows), run j's state into a[j]: the bits fold_masked gives
    // each (simd_short_sum.hpp). Where masked_fold.
    // Out of line: inlined, its cases crowded the one-row batches' loop.
    template <int K>
    SEGRED_HOST_NOINLINE void fold_equal_short(std::int64_t b, std::int64_t len, state* a) const {
#if SEGRED_HOST_SSE2
        if constexpr (masked_fold) {
            T sums[K];
            equal_short_sums<K>(values.data + b, len, sums);
            for (int j = 0; j < K; ++j) a[j] = sum_state(sums[j], len);
        } else  // (an else, not a return: nvcc warned of an unreachable loop)
#endif
        {
            for (int j = 0; j < K; ++j) a[j] = fold_one(b + j * len, b + (j + 1) * len);
        }
    }

    // Runs that fill the lanes of a register (mixed_short_sums,
    // mixed_short_extremes): W of them at once, run j of len[j] <=
    // masked_rows rows from row b[j], with masked_rows rows readable from
    // each; n holds the lengths in sse_lanes' lane_lengths form. Where
    // masked_runs (W is 1 elsewhere).
    static constexpr int mixed_runs =
#if SEGRED_HOST_SSE2
        masked_runs ? sse_lanes<T>::width : 1;
#else
        1;
#endif
#if SEGRED_HOST_SSE2
    // Their sums (or extremes), lane j run j's, left in the register; row
    // b[j] of the runs is row first + b[j] of the values. A group with a
    // NaN takes the scalar fold run by run.
    template <class B>
    SEGRED_FORCE_INLINE auto fold_mixed_lanes(std::int64_t first, const B* b, __m128i n) const {
        if constexpr (plain_extremum != 0) {
            typename sse_lanes<T>::reg v;
            if (mixed_short_extremes<(plain_extremum > 0)>(values.data + first, b, n, v)) return v;
            T t[mixed_runs];
            fold_mixed_runs_alone(first, b, t);
            return sse_lanes<T>::load(t);
        } else {
            return mixed_short_sums(values.data + first, b, n);
        }
    }
    // The arg forms' group: each run's state (its extremum and first row
    // holding it) straight into a[j]. (Returned in a struct and copied, the
    // states went through a store that a wider load then read back: a fifth
    // of the group loop's samples in a profile over power-law lengths.)
    template <class B>
    SEGRED_FORCE_INLINE void fold_mixed_args(std::int64_t first, const B* b, __m128i n, state* a) const {
        typename sse_lanes<T>::reg v;
        int row[mixed_runs];
        if (!mixed_short_extreme_rows<(arg_extremum > 0)>(values.data + first, b, n, v, row))
            return fold_mixed_runs_alone(first, b, a);
        T t[mixed_runs];
        sse_lanes<T>::store(t, v);
        for (int j = 0; j < mixed_runs; ++j) a[j] = state{t[j], first + b[j] + row[j]};
    }
    // The same, run by run (a run with a NaN; an empty run's is its empty
    // state).
    template <class B>
    SEGRED_HOST_NOINLINE void fold_mixed_runs_alone(std::int64_t first, const B* b, state* a) const {
        for (int j = 0; j < mixed_runs; ++j) a[j] = fold_one(first + b[j], first + b[j + 1]);
    }
    // Those sums (or extremes) as the runs' states, for a writer that takes
    // states.
    template <class Reg>
    SEGRED_FORCE_INLINE void mixed_states(Reg sums, const std::int64_t* len, state* a) const {
        T t[mixed_runs];
        sse_lanes<T>::store(t, sums);
        for (int j = 0; j < mixed_runs; ++j) a[j] = sum_state(t[j], len[j]);
    }
#endif

  private:
    // Max, min and their arg forms of float and double values: runs of
    // fewer than 16 rows without a branch on their length, where the rows
    // after them may be read (simd_short_extremum_row); else, and where a
    // value is NaN, the scalar step. Out of line: inlined into fold_one, it
    // held sorted 32-row segments' max to 0.73x (the loops around fold_one
    // grew).
    static constexpr bool short_extremum = (plain_extremum != 0 || arg_extremum != 0) && has_simd_extremum<T>;
    SEGRED_HOST_NOINLINE state fold_short_extremum(std::int64_t k0, std::int64_t k1) const {
        std::int64_t j;
        if (values.width == 1 && k1 > k0 && k0 + short_extremum_rows <= values.n &&
            simd_short_extremum_row<(plain_extremum + arg_extremum > 0)>(values.data + k0, k1 - k0, j)) {
            const T& x = values.data[k0 + j];
            if constexpr (arg_extremum != 0) return state{x, k0 + j};
            else return x;
        }
        state a = init();
        for (std::int64_t k = k0; k < k1; ++k) update_one(a, k);
        return a;
    }

    // A sum or mean state from the sum of `rows` rows.
    template <class A>
    static state sum_state(const A& total, std::int64_t rows) {
        if constexpr (std::is_same<R, segred::mean>::value) return state{total, rows};
        else return total;
    }

    static constexpr std::int64_t arg_block = 256;
    // The arg forms, block by block: a block's extremum (vector lanes), and
    // only when it beats the state so far, the first row of the block that
    // holds it. That is the sequential fold's result (the best value, its
    // lowest row), reached without a compare and branch on every row, which
    // ran at a fifth of max's speed. A block holding NaN takes the scalar
    // step row by row.
    SEGRED_FORCE_INLINE state fold_arg_blocks(std::int64_t k0, std::int64_t k1) const {
        constexpr bool Max = arg_extremum > 0;
        constexpr std::int64_t block = arg_block;
        const T* x = values.data;
        state a = init();
        for (std::int64_t b = k0; b < k1; b += block) {
            const std::int64_t e = std::min(b + block, k1);
            T m;
            if (!simd_extremum_of<Max>(x + b, e - b, m)) {
                for (std::int64_t k = b; k < e; ++k) update_one(a, k);
                continue;
            }
            // Row b stands for the block: a tie with the state so far keeps
            // its lower row, unless the state is still empty.
            if (!R::better(state{m, b}, a)) continue;
            const std::int64_t k = b + first_equal(x + b, e - b, m);
            a = state{x[k], k};
        }
        return a;
    }

    // The arg forms over fewer rows than a block (and at least 16): one
    // pass keeping each lane's extremum and the step it grew at
    // (simd_arg_extremum.hpp), where the blocks read every row twice (a
    // short range's extremum always beats the empty state). A range with a
    // NaN takes the scalar step row by row.
    SEGRED_FORCE_INLINE state fold_arg_one_pass(std::int64_t k0, std::int64_t k1) const {
#if SEGRED_HOST_SSE2
        T m;
        std::int64_t j;
        if (simd_arg_extremum_row<(arg_extremum > 0)>(values.data + k0, k1 - k0, m, j)) return state{m, k0 + j};
#endif
        state a = init();
        for (std::int64_t k = k0; k < k1; ++k) update_one(a, k);
        return a;
    }

    template <int Lanes>
    SEGRED_FORCE_INLINE state fold_lanes(std::int64_t k0, std::int64_t k1) const {
        state l[Lanes];
        for (int j = 0; j < Lanes; ++j) l[j] = init();
        std::int64_t k = k0;
        // Max and min of numbers fold and combine their lanes in registers
        // (the same bits): lanes stored, then combined with the scalar
        // step's NaN tests, had held segments of 16 to 35 rows to 0.40-0.45x
        // this speed (2-core VM, one thread). A range with a NaN takes the
        // scalar steps below.
        if constexpr (plain_extremum != 0 && has_simd_extremum<T>) {
            state m;
            if (values.width == 1 &&
                simd_extremum_combined<(plain_extremum > 0), Lanes>(values.data + k0, k1 - k0, values.n - k0, l[0],
                                                                    m))
                return m;
        }
        for (; k + Lanes <= k1; k += Lanes)
            for (int j = 0; j < Lanes; ++j) update_one(l[j], k + j);
        for (int j = 0; k < k1; ++k, ++j) update_one(l[j], k);
        for (int half = Lanes / 2; half >= 1; half /= 2)
            for (int j = 0; j < half; ++j) combine(l[j], l[j + half]);
        return l[0];
    }
};

template <class T, class R>
row_fold<T, R> make_row_fold(const R& r, rows_view<const T> values, std::int64_t width) {
    return row_fold<T, R>{r, values, width};
}

} // namespace host_detail
} // namespace segred
