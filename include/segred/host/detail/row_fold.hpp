// segred/host/detail/row_fold.hpp -- the per-row work of a reduction, shared
// by every host loop shape (segments of a layout, sorted runs, scatter).
#pragma once

#include <cstdint>

#include "../../core/reducers.hpp"
#include "../../core/views.hpp"

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
    // folded in `lanes` interleaved partial states combined in lane order
    // (a fixed order, so still the same bits on any thread count), which
    // hides the latency of each floating-point add.
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

    // The fold of column 0 of rows [k0, k1), returned in a register.
    SEGRED_FORCE_INLINE state fold_one(std::int64_t k0, std::int64_t k1) const {
        if (k1 - k0 < 4 * lanes) {
            state a = init();
            for (std::int64_t k = k0; k < k1; ++k) update_one(a, k);
            return a;
        }
        state l[lanes] = {init(), init(), init(), init()};
        std::int64_t k = k0;
        for (; k + lanes <= k1; k += lanes)
            for (std::int64_t j = 0; j < lanes; ++j) update_one(l[j], k + j);
        for (std::int64_t j = 0; k < k1; ++k, ++j) update_one(l[j], k);
        combine(l[0], l[1]);
        combine(l[2], l[3]);
        combine(l[0], l[2]);
        return l[0];
    }

  private:
    static constexpr std::int64_t lanes = 4;
};

template <class T, class R>
row_fold<T, R> make_row_fold(const R& r, rows_view<const T> values, std::int64_t width) {
    return row_fold<T, R>{r, values, width};
}

} // namespace host_detail
} // namespace segred
