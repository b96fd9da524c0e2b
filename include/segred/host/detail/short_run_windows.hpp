// segred/host/detail/short_run_windows.hpp -- sorted ids whose runs are
// short, folded a window of rows at a time as offsets.
//
// A loop over runs of sorted ids leaves each run's row loop when the next id
// differs: with lengths that vary (power law) that exit is mispredicted
// about once a run, which costs more than the run's adds. Here a window of
// rows is first turned into the ends of its segments, with no branch per
// row: each row writes the end of its id's run (the last write wins), and a
// running max then gives each empty segment the end of the one before it.
// The window's segments then fold by the offsets' loop
// (fold_one_column_segments): runs of up to 8 rows in vector lanes with no
// branch on their length, streaks of one length in batches. The rows of a
// run are folded as the run loop folds them (left to right up to 15 rows, a
// fixed lane tree from 16), so the bits are the same.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>

#include "prefetch.hpp"
#include "segment_loops.hpp"
#include "sse_lanes.hpp"

namespace segred {
namespace host_detail {

// Rows a window holds, and the fewest runs (non-empty segments) a window
// must hold for the next one to be tried: at most 6 rows a run on average.
// Longer runs keep the run loop, which folds them straight from the ids as
// fast or faster without the extra pass (random lengths of 0 to 16 rows,
// 8 on average: 0.81x through windows).
constexpr std::int64_t short_run_window = 2048;
constexpr std::int64_t short_run_min_runs = short_run_window / 6;
// At most this many segments a window: a window of mostly empty segments
// keeps the run loop, whose empty segments cost a store each too.
constexpr std::int64_t short_run_max_segments = 2 * short_run_window;
// A window's ends are rows counted from its first, at most
// short_run_window: 16 bits each, so that the running max takes 8 at a
// time in a vector register.
using window_row = std::int16_t;
static_assert(short_run_window <= std::numeric_limits<window_row>::max(), "a window's rows fit its ends");

// x[j] = max(x[0..j]) for j < count, x holding values >= 0; x must have
// room for count rounded up to 8.
inline void running_max(window_row* x, std::int64_t count) {
#if SEGRED_HOST_SSE2
    __m128i carry = _mm_setzero_si128();
    for (std::int64_t j = 0; j < count; j += 8) {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + j));
        v = _mm_max_epi16(v, _mm_slli_si128(v, 2));
        v = _mm_max_epi16(v, _mm_slli_si128(v, 4));
        v = _mm_max_epi16(v, _mm_slli_si128(v, 8));
        v = _mm_max_epi16(v, carry);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(x + j), v);
        carry = _mm_shufflehi_epi16(v, _MM_SHUFFLE(3, 3, 3, 3));
        carry = _mm_unpackhi_epi64(carry, carry);
    }
#else
    for (std::int64_t j = 1; j < count; ++j) x[j] = std::max(x[j], x[j - 1]);
#endif
}

// Whether the rows [from, to) of sorted ids span enough segments for runs
// of at most 6 rows on average (short_run_min_runs a window), by their
// first and last ids alone.
template <class I>
bool spans_short_runs(const I* ids, std::int64_t from, std::int64_t to) {
    const std::int64_t span = static_cast<std::int64_t>(ids[to - 1]) - static_cast<std::int64_t>(ids[from]);
    return span * short_run_window >= short_run_min_runs * (to - from);
}

// Whether the rows [from, to) of sorted ids, which the run loop has just
// folded (to - from >= short_run_window), held short_run_min_runs runs or
// more in their first short_run_window rows. First, whether they spanned
// that many segments (two ids); then, only if so, the runs themselves,
// estimated from one row in each 32 that starts a run or not, at a place
// in the 32 that varies from one to the next (at a fixed place, runs of 40
// rows started at every fifth). Where segments are long the run loop skips
// most ids, and sampling them all cost 1024-row segments 40%; where they
// are short it has read them, and the samples are in cache. (Counting the
// runs in the run loop slowed it by 6% on random lengths of 0 to 16 rows.)
template <class I>
bool short_runs_after(const I* ids, std::int64_t from, std::int64_t to) {
    if (!spans_short_runs(ids, from, to)) return false;
    constexpr int samples = static_cast<int>(short_run_window / 32) - 1;
    const I* w = ids + from;
    int starts = 0;
    for (int j = 1; j <= samples; ++j) {
        const int r = 32 * j + ((j * 13) & 31);
        starts += w[r] != w[r - 1];
    }
    return starts * 32 >= short_run_min_runs;
}

// How many of x[0..count) are 0.
inline std::int64_t empty_ends(const window_row* x, std::int64_t count) {
    std::int64_t j = 0, zeros = 0;
#if SEGRED_HOST_SSE2
    // Each 16-bit lane counts its zeros down from 0 (a compare gives -1 a
    // zero; at most count / 8 <= 512 a lane): no popcount, which without
    // a -mpopcnt build is a library call per 8 ends (4.5% of power-law
    // sorted-id sums).
    static_assert(short_run_max_segments + 2 <= 8 * 32767, "a lane's count fits 16 bits");
    __m128i down = _mm_setzero_si128();
    for (; j + 8 <= count; j += 8) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + j));
        down = _mm_add_epi16(down, _mm_cmpeq_epi16(v, _mm_setzero_si128()));
    }
    // Lanes summed as 32-bit pairs (madd by -1 negates them too).
    __m128i sum = _mm_madd_epi16(down, _mm_set1_epi16(-1));
    sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, _MM_SHUFFLE(1, 0, 3, 2)));
    sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, _MM_SHUFFLE(2, 3, 0, 1)));
    zeros = _mm_cvtsi128_si32(sum);
#endif
    for (; j < count; ++j) zeros += x[j] == 0;
    return zeros;
}

// The segments of one window as a layout (begin, end) for the offsets'
// loop: first + ends[s - base + 1] is the row after segment s, first +
// ends[0] the first row of segment base.
struct window_segments {
    const window_row* ends;
    std::int64_t base, first;
    std::int64_t begin(std::int64_t s) const { return first + ends[s - base]; }
    std::int64_t end(std::int64_t s) const { return first + ends[s - base + 1]; }
    // As narrow bounds (has_narrow_bounds).
    const window_row* bounds(std::int64_t s) const { return ends + (s - base); }
    std::int64_t bounds_first() const { return first; }
};

// Room for a window's ends: short_run_max_segments + 2, rounded up to 8.
constexpr std::int64_t window_ends_room = (short_run_max_segments + 2 + 7) / 8 * 8;

// The window of one-column rows [k, k + short_run_window) of sorted ids (k
// starts a run, all rows are below hi) folded as offsets when it spans
// enough segments: its segments up to (not with) the id of its last row
// are folded and emitted, empty ones included, and the row that starts the
// last id's run is returned. Returns k, with nothing done, when the window
// does not qualify. ends: room for window_ends_room entries, made on first
// use. runs: set to the number of non-empty segments folded. Out of line:
// inlined, it slowed the run loop around it by 5-8% where it never ran.
template <class F, class I, class Emit>
SEGRED_HOST_NOINLINE std::int64_t fold_short_run_window(const I* ids, std::int64_t k, std::int64_t hi, const F& folder,
                                                        Emit& emit, std::unique_ptr<window_row[]>& ends,
                                                        std::int64_t& runs) {
    constexpr std::int64_t W = short_run_window;
    if (hi - k < W) return k;
    const std::int64_t base = static_cast<std::int64_t>(ids[k]);
    const std::int64_t span = static_cast<std::int64_t>(ids[k + W - 1]) - base;
    if (span < short_run_min_runs || span > short_run_max_segments) return k;
    const I* w = ids + k;
    // Runs of one length up to 4 rows: the run loop predicts their ends and
    // takes one-row runs in batches. Its first run's length, then the rows
    // where runs of that length would start half way and at the end.
    const std::int64_t first_len = 1 + (w[1] == w[0]) + (w[2] == w[0]) + (w[3] == w[0]);
    if (w[first_len] != w[0] && first_len * span < W) {
        auto starts_at = [&](std::int64_t j) {
            return static_cast<std::int64_t>(w[first_len * j]) == base + j &&
                   static_cast<std::int64_t>(w[first_len * j - 1]) == base + j - 1;
        };
        if (starts_at(span) && starts_at(span / 2)) return k;
    }
    if (!ends) ends.reset(new window_row[window_ends_room]);
    window_row* x = ends.get();
    std::memset(x, 0, static_cast<std::size_t>((span + 2 + 7) / 8 * 8) * sizeof(window_row));
    // Clamped, so that ids that break the promise of order (under unchecked
    // bounds) give wrong sums, never a write outside the buffer. The
    // window's values are fetched meanwhile: the ids alone, then the values
    // alone, each one stream from memory, ran slower than the run loop that
    // reads both at once.
    const std::uint64_t top = static_cast<std::uint64_t>(span + 1);
    const char* values = reinterpret_cast<const char*>(folder.values.data + k * folder.values.width);
    const std::int64_t row_bytes = folder.values.width * static_cast<std::int64_t>(sizeof(*folder.values.data));
    for (int r0 = 0; r0 < W; r0 += 16) {
        prefetch_read(values + r0 * row_bytes);
        for (int r = r0; r < r0 + 16; ++r)
            x[std::min(static_cast<std::uint64_t>(static_cast<std::int64_t>(w[r]) - base + 1), top)] =
                static_cast<window_row>(r + 1);
    }
    runs = span - empty_ends(x + 1, span);
    running_max(x, span + 1);
    // No segment of a window is longer than `piece`: none goes to on_long.
    fold_one_column_segments(window_segments{x, base, k}, base, base + span, folder, emit,
                             std::numeric_limits<std::int64_t>::max(), [](std::int64_t) {});
    return k + x[span];
}

} // namespace host_detail
} // namespace segred
