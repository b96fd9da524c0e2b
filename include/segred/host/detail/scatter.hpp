// segred/host/detail/scatter.hpp -- unsorted ids reduced by a direct scatter
// into per-segment states, without sorting the rows first.
//
// Two shapes, picked from n, M and the width only (never the thread count),
// so every result bit is the same whatever the number of threads:
//
// - Few segments (blocks): rows are cut into fixed blocks, each several times
//   larger than M. A block folds its rows, in row order, into private states;
//   the blocks' states are then combined per segment in block order.
// - Many segments (owned ranges): a block would be as big as the input, so
//   instead each thread owns a range of segment ids and scans every row,
//   folding only the rows of its own segments. Each segment then sees its
//   rows in row order from one initial state: the plain sequential result.
//
// Both read each value once and touch states that are either private and
// cache-sized, or (owned ranges) written by one thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "parallel.hpp"
#include "segment_loops.hpp"

namespace segred {
namespace host_detail {

// Rows per block of the block shape: enough rows per private state that
// initializing and combining the states stays a small part of the work.
inline std::int64_t scatter_block_rows(std::int64_t M, std::int64_t width) {
    return std::max<std::int64_t>((std::int64_t(1) << 16) / std::max<std::int64_t>(width, 1), 8 * M);
}

// Below this many blocks the owned-range shape is used.
constexpr std::int64_t min_scatter_blocks = 4;

inline void prefetch_write(const void* p) {
#if defined(__GNUC__)
    __builtin_prefetch(p, 1);
#else
    (void)p;
#endif
}

// What a scatter records per segment besides its states: the exact row count
// when counts() was asked for, else only whether any row came (a bit each,
// so the record stays cache-resident when M is large).
struct row_counts {
    std::vector<std::int64_t> c;
    explicit row_counts(std::int64_t m) : c(static_cast<std::size_t>(m), 0) {}
    void hit(std::int64_t k) { ++c[static_cast<std::size_t>(k)]; }
    std::int64_t rows(std::int64_t k) const { return c[static_cast<std::size_t>(k)]; }
    void prefetch(std::int64_t k) const { prefetch_write(c.data() + k); }
};
struct row_seen {
    std::vector<std::uint64_t> bits;
    explicit row_seen(std::int64_t m) : bits(static_cast<std::size_t>((m + 63) / 64), 0) {}
    void hit(std::int64_t k) { bits[static_cast<std::size_t>(k >> 6)] |= std::uint64_t(1) << (k & 63); }
    std::int64_t rows(std::int64_t k) const {
        return static_cast<std::int64_t>((bits[static_cast<std::size_t>(k >> 6)] >> (k & 63)) & 1);
    }
    void prefetch(std::int64_t k) const { prefetch_write(bits.data() + (k >> 6)); }
};

// F is a row folder (row_fold.hpp). id_of(i): segment of row i, or -1 to
// skip it. emit(s, st, rows) receives segment s's states and its number of
// rows; without exact counts (Tally = row_seen), rows is only 0 for empty.
template <class Tally, class F, class IdOf, class Emit>
void scatter_segments(const host_policy& p, std::int64_t n, std::int64_t M, std::int64_t width, const F& folder,
                      IdOf&& id_of, Emit&& emit) {
    using State = typename F::state;
    if (M <= 0) return;
    const std::int64_t block_rows = scatter_block_rows(M, width);
    const std::int64_t blocks = (n + block_rows - 1) / block_rows;
    const std::int64_t span = M * width;
    auto fold_row = [&](State* st, std::int64_t k, std::int64_t i) {
        if (width == 1)
            folder.update_one(st[k], i);
        else
            folder.update(st + k * width, i);
    };

    if (blocks >= min_scatter_blocks) {
        const state_array<State> partial = make_states<State>(blocks * span);
        std::vector<Tally> counts;
        counts.reserve(static_cast<std::size_t>(blocks));
        for (std::int64_t b = 0; b < blocks; ++b) counts.emplace_back(M);
        parallel_chunks(p, blocks, 1, [&](std::int64_t b, std::int64_t) {
            State* st = partial.get() + b * span;
            Tally& cnt = counts[static_cast<std::size_t>(b)];
            for (std::int64_t j = 0; j < span; ++j) st[j] = folder.init();
            for (std::int64_t i = b * block_rows, hi = std::min(n, (b + 1) * block_rows); i < hi; ++i) {
                const std::int64_t k = id_of(i);
                if (k < 0) continue;
                fold_row(st, k, i);
                cnt.hit(k);
            }
        });
        // Combine in block order; segments in chunks so each block's states
        // are read as runs of consecutive memory.
        parallel_chunks(p, M, segments_per_chunk, [&](std::int64_t lo, std::int64_t hi) {
            const state_array<State> acc = make_states<State>((hi - lo) * width);
            std::vector<std::int64_t> rows(static_cast<std::size_t>(hi - lo));
            for (std::int64_t s = lo; s < hi; ++s) rows[static_cast<std::size_t>(s - lo)] = counts[0].rows(s);
            std::copy(partial.get() + lo * width, partial.get() + hi * width, acc.get());
            for (std::int64_t b = 1; b < blocks; ++b) {
                const State* st = partial.get() + b * span;
                const Tally& cnt = counts[static_cast<std::size_t>(b)];
                for (std::int64_t s = lo; s < hi; ++s) {
                    if (cnt.rows(s) == 0) continue;
                    rows[static_cast<std::size_t>(s - lo)] += cnt.rows(s);
                    for (std::int64_t f = 0; f < width; ++f)
                        folder.combine(acc[(s - lo) * width + f], st[s * width + f]);
                }
            }
            for (std::int64_t s = lo; s < hi; ++s)
                emit(s, acc.get() + (s - lo) * width, rows[static_cast<std::size_t>(s - lo)]);
        });
        return;
    }

    // Owned ranges: thread t folds the rows of segments [t*M/T, (t+1)*M/T),
    // range ends rounded to 64 segments so no two threads share a word of
    // the tally. Rows of other threads' segments go to a private spare
    // state, so the loop has no data-dependent branch.
    const std::int64_t owners = std::max<std::int64_t>(1, std::min<std::int64_t>(thread_count(p), M / 64));
    const state_array<State> states = make_states<State>(span + owners * width);
    const std::int64_t spare0 = (M + 63) / 64 * 64;  // spare slots start on a fresh tally word
    Tally tally(spare0 + 64 * owners);
    auto range_lo = [&](std::int64_t t) { return t == owners ? M : (M * t / owners) / 64 * 64; };
    parallel_blocks(p, owners, [&](std::int64_t t) {
        const std::int64_t lo = range_lo(t), own = range_lo(t + 1) - lo, spare = spare0 + 64 * t;
        State* const st = states.get();
        State* const spare_st = st + (span + t * width) - spare * width;  // st row `spare` lands on the spare state
        for (std::int64_t j = lo * width; j < (lo + own) * width; ++j) st[j] = folder.init();
        for (std::int64_t f = 0; f < width; ++f) spare_st[spare * width + f] = folder.init();
        constexpr std::int64_t ahead = 32;  // rows between a prefetch and its use
        for (std::int64_t i = 0; i < n; ++i) {
            if (i + ahead < n) {
                const std::int64_t kp = id_of(i + ahead);
                if (kp >= 0) {
                    prefetch_write(st + kp * width);
                    tally.prefetch(kp);
                }
            }
            const std::int64_t k = id_of(i);
            // One unsigned compare keeps k < lo, k >= lo + own and the skip
            // mark (-1) out; those rows fold into the spare state instead.
            const bool mine = static_cast<std::uint64_t>(k - lo) < static_cast<std::uint64_t>(own);
            const std::int64_t slot = mine ? k : spare;
            fold_row(mine ? st : spare_st, slot, i);
            tally.hit(slot);
        }
    });
    parallel_chunks(p, M, std::int64_t(1) << 12, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t s = lo; s < hi; ++s) emit(s, states.get() + s * width, tally.rows(s));
    });
}

} // namespace host_detail
} // namespace segred
