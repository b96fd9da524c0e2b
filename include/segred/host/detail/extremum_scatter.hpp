// segred/host/detail/extremum_scatter.hpp -- unsorted max and min with a
// fill value: which segments got rows, found after the scatter instead of
// on every row.
//
// A max or min writes the fill value to an empty segment, so the scatter
// must know which segments got no rows. Marking a byte per row (row_seen)
// costs a store a row beside the state's read-modify-write: max over 2^24
// rows into 2^14 float segments ran at 2.2x the time of the same sum on the
// 2-core VM. But a segment whose state is no longer its initial value has
// had a row; only segments still at the initial value (-inf for max) can be
// empty, and a row of -inf is the only way a non-empty one stays there. So
// the scatter runs with no tally, segments still at their initial state are
// set aside, and only when there are some does one more pass over the ids
// mark those that have rows. The states are the same (combining an initial
// state into another is a no-op for max and min), so the result bits are.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../../core/policy.hpp"
#include "big_buffer.hpp"
#include "row_fold.hpp"
#include "scatter.hpp"

namespace segred {
namespace host_detail {

// Where the set-aside segments' marks (a byte a segment) stay in cache: the
// scatter's states fit the slice that its in-cache shapes work in (beyond,
// the partitioned scatter's fold marks bytes in cache already, and the pass
// over the ids would miss on every row). Plain max and min of an arithmetic
// state (one value; init is never NaN, so a NaN state always came from a
// row).
template <class T, class R>
constexpr bool extremum_scatter_fits =
    row_fold<T, R>::plain_extremum != 0 && std::is_arithmetic<typename row_fold<T, R>::state>::value;

template <class T, class R>
bool extremum_scatter_applies(std::int64_t M, std::int64_t width) {
    return extremum_scatter_fits<T, R> &&
           static_cast<std::int64_t>(sizeof(typename row_fold<T, R>::state)) * M * width <= partition_bytes;
}

template <class F, class IdOf, class Emit>
void extremum_scatter(const host_policy& p, std::int64_t n, std::int64_t M, std::int64_t width, const F& folder,
                      IdOf&& id_of, Emit&& emit) {
    using State = typename F::state;
    const State init = folder.init();
    // Set-aside marks: 1 = the state is initial, 2 = and a row came. emit
    // runs on several threads, each on its own segments: bytes, so no two
    // threads write the same object.
    big_array<unsigned char> mark = make_zeroed_big_array<unsigned char>(M);
    scatter_segments<no_tally>(p, n, M, width, folder, id_of, [&](std::int64_t s, State* st, std::int64_t rows) {
        bool initial = true;
        for (std::int64_t f = 0; f < width; ++f) initial = initial && st[f] == init;
        if (!initial) {
            emit(s, st, rows);
            return;
        }
        mark[static_cast<std::size_t>(s)] = 1;
    });
    bool any = false;
    for (std::int64_t s = 0; s < M && !any; ++s) any = mark[static_cast<std::size_t>(s)] != 0;
    if (!any) return;
    // One thread: the marks are plain bytes that rows of any block may hit.
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t k = id_of(i);
        if (k >= 0 && mark[static_cast<std::size_t>(k)] == 1) mark[static_cast<std::size_t>(k)] = 2;
    }
    parallel_chunks(p, M, std::int64_t(1) << 12, [&](std::int64_t lo, std::int64_t hi) {
        std::vector<State> st(static_cast<std::size_t>(width));  // emit may finish the states in place
        for (std::int64_t s = lo; s < hi; ++s) {
            const unsigned char m = mark[static_cast<std::size_t>(s)];
            if (m == 0) continue;
            std::fill(st.begin(), st.end(), init);
            emit(s, st.data(), m == 2 ? 1 : 0);
        }
    });
}

} // namespace host_detail
} // namespace segred
