// segred/host/detail/segment_loops.hpp -- the loops over a layout's segments
// shared by every host algorithm.
//
// Short segments are each handled whole by one thread. Long ones are cut into
// pieces of a fixed number of rows so that one giant segment still keeps every
// thread busy; each piece yields a partial state, and the partials of a
// segment are combined in piece order. Piece size depends only on the width,
// so results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "layout.hpp"
#include "parallel.hpp"

namespace segred {
namespace host_detail {

// Rows per piece of a long segment: about 64K elements of work.
inline std::int64_t piece_rows(std::int64_t width) {
    return std::max<std::int64_t>(1, (std::int64_t(1) << 16) / std::max<std::int64_t>(width, 1));
}

// Segments per dynamic chunk when segments are short.
constexpr std::int64_t segments_per_chunk = 256;

// Reduce every segment of L to `width` states and hand them to
// emit(s, states, rows_in_segment). State is the reducer's state type;
// update(st, row) folds value row `row` into st[0..width).
//
// States are held in plain arrays (state_array), not std::vector<State>:
// any/all have State = bool, and std::vector<bool> has no data().
template <class State>
using state_array = std::unique_ptr<State[]>;

template <class State>
state_array<State> make_states(std::int64_t count) {
    return state_array<State>(new State[static_cast<std::size_t>(count > 0 ? count : 0)]);
}

template <class State, class Init, class Update, class Combine, class Emit>
void reduce_segments(const host_policy& p, const layout& L, std::int64_t width, Init&& init, Update&& update,
                     Combine&& combine, Emit&& emit) {
    const std::int64_t piece = piece_rows(width);
    auto fold = [&](State* st, std::int64_t k0, std::int64_t k1) {
        for (std::int64_t f = 0; f < width; ++f) st[f] = init();
        for (std::int64_t k = k0; k < k1; ++k) update(st, L.row(k));
    };

    // Short segments, whole; long ones are listed for the second phase.
    std::vector<std::int64_t> long_segments;
    std::vector<char> is_long(static_cast<std::size_t>(L.M), 0);
    bool any_long = false;
    for (std::int64_t s = 0; s < L.M && L.fixed_size < 0; ++s) {
        if (L.end(s) - L.begin(s) > piece) {
            is_long[static_cast<std::size_t>(s)] = 1;
            long_segments.push_back(s);
            any_long = true;
        }
    }
    if (L.fixed_size > piece) {
        for (std::int64_t s = 0; s < L.M; ++s) long_segments.push_back(s);
        any_long = L.M > 0;
        std::fill(is_long.begin(), is_long.end(), 1);
    }
    parallel_chunks(p, L.M, segments_per_chunk, [&](std::int64_t lo, std::int64_t hi) {
        const state_array<State> st = make_states<State>(width);
        for (std::int64_t s = lo; s < hi; ++s) {
            if (any_long && is_long[static_cast<std::size_t>(s)]) continue;
            fold(st.get(), L.begin(s), L.end(s));
            emit(s, st.get(), L.end(s) - L.begin(s));
        }
    });
    if (!any_long) return;

    // Long segments: one partial state row per piece, then an ordered merge.
    std::vector<std::int64_t> first_piece(long_segments.size() + 1, 0);
    for (std::size_t j = 0; j < long_segments.size(); ++j) {
        const std::int64_t len = L.end(long_segments[j]) - L.begin(long_segments[j]);
        first_piece[j + 1] = first_piece[j] + (len + piece - 1) / piece;
    }
    const std::int64_t pieces = first_piece.back();
    const state_array<State> partial = make_states<State>(pieces * width);
    std::vector<std::int64_t> owner(static_cast<std::size_t>(pieces));
    for (std::size_t j = 0; j < long_segments.size(); ++j)
        for (std::int64_t q = first_piece[j]; q < first_piece[j + 1]; ++q) owner[static_cast<std::size_t>(q)] =
            static_cast<std::int64_t>(j);
    parallel_chunks(p, pieces, 1, [&](std::int64_t q, std::int64_t) {
        const std::size_t j = static_cast<std::size_t>(owner[static_cast<std::size_t>(q)]);
        const std::int64_t b = L.begin(long_segments[j]) + (q - first_piece[j]) * piece;
        const std::int64_t e = std::min(b + piece, L.end(long_segments[j]));
        fold(partial.get() + q * width, b, e);
    });
    parallel_chunks(p, static_cast<std::int64_t>(long_segments.size()), 1, [&](std::int64_t j, std::int64_t) {
        State* acc = partial.get() + first_piece[static_cast<std::size_t>(j)] * width;
        for (std::int64_t q = first_piece[static_cast<std::size_t>(j)] + 1; q < first_piece[static_cast<std::size_t>(j) + 1]; ++q)
            for (std::int64_t f = 0; f < width; ++f) combine(acc[f], partial[static_cast<std::size_t>(q * width + f)]);
        const std::int64_t s = long_segments[static_cast<std::size_t>(j)];
        emit(s, acc, L.end(s) - L.begin(s));
    });
}

// visit(s, k0, k1) over every segment, long segments cut into pieces, for
// loops whose rows are independent once per-segment values are known.
template <class Visit>
void for_each_segment_piece(const host_policy& p, const layout& L, std::int64_t width, Visit&& visit) {
    const std::int64_t piece = piece_rows(width);
    parallel_chunks(p, L.M, segments_per_chunk, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t s = lo; s < hi; ++s)
            if (L.end(s) - L.begin(s) <= piece) visit(s, L.begin(s), L.end(s));
    });
    for (std::int64_t s = 0; s < L.M; ++s) {
        const std::int64_t b = L.begin(s), len = L.end(s) - b;
        if (len <= piece) continue;
        parallel_chunks(p, len, piece, [&](std::int64_t lo, std::int64_t hi) { visit(s, b + lo, b + hi); });
    }
}

} // namespace host_detail
} // namespace segred
