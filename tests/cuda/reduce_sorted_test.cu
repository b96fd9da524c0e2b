// segment_reduce on the GPU over the sorted forms (offsets, lengths, sorted
// ids, fixed): every reducer on fresh random inputs against the independent
// double reference, through the same harness as the host tests.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reduce_harness.hpp"
#include "common/test_util.hpp"
#include "cuda/cuda_test_util.cuh"

namespace {

using segtest::form;
using segtest::i64;

// Value/index pairs: each value type and each id type at least once, kept
// few because every pair instantiates every kernel.
using cuda_pairs = ::testing::Types<segtest::vi<float, std::int32_t>, segtest::vi<double, std::int64_t>,
                                    segtest::vi<std::int32_t, std::int64_t>, segtest::vi<std::int64_t, std::int32_t>>;

template <class P>
class CudaSortedReduce : public segtest::CudaTest {};
TYPED_TEST_SUITE(CudaSortedReduce, cuda_pairs, segtest::vi_names);

constexpr int kTrials = 8;

TYPED_TEST(CudaSortedReduce, Offsets) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::offsets, typename TypeParam::value, typename TypeParam::index>(
        segred::cuda::par, g, kTrials, segtest::device_memory{});
}

TYPED_TEST(CudaSortedReduce, Lengths) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::lengths, typename TypeParam::value, typename TypeParam::index>(
        segred::cuda::par, g, kTrials, segtest::device_memory{});
}

TYPED_TEST(CudaSortedReduce, SortedIds) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::sorted_ids, typename TypeParam::value, typename TypeParam::index>(
        segred::cuda::par, g, kTrials, segtest::device_memory{});
}

TYPED_TEST(CudaSortedReduce, Fixed) {
    SEGRED_SEEDED_RNG(g);
    segtest::all_reducer_trials<form::fixed, typename TypeParam::value, typename TypeParam::index>(
        segred::cuda::par, g, kTrials, segtest::device_memory{});
}

// Sum, argmax, and a mean accumulated into `out` with counts, over fresh
// random values on the segments s (rows of c.width columns).
template <form F, class T, class I>
void sum_argmax_and_mean(segref::rng& g, const segtest::seg_input<I>& s, segtest::trial_config c = {}) {
    using segref::op;
    c.out_width = c.width;
    const std::vector<T> v = segref::random_values<T>(g, s.n * c.width, segref::value_kind::general);
    const segtest::device_memory mem;
    segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::sum{}, op::sum, 0, c, s, v, g, mem);
    segtest::check_reduce<F, T, I, std::int64_t>(segred::cuda::par, segred::argmax{}, op::argmax, 0, c, s, v, g, mem);
    c.accumulate = true;
    c.counts = true;
    segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::mean{}, op::mean, 0, c, s, v, g, mem);
}

// Argmax over values with many ties, and argmin over the same with a NaN
// in about one row in a thousand (floats), on the segments s of one column:
// one column's streamed segments and giant pieces fold each lane's 16-byte
// vectors, and the rows before and after them, into one (value, row) state
// a lane, and the lanes of a warp combine by a tree, so a tie must still go
// to the segment's lowest row, and its first NaN must win from any lane or
// place in a vector.
template <form F, class T, class I>
void tied_and_nan_args(segref::rng& g, const segtest::seg_input<I>& s, segtest::trial_config c) {
    c.width = 1;
    c.out_width = 1;
    c.nan = false;
    c.fill_mode = segref::fill::zero;
    std::vector<T> v = segref::random_values<T>(g, s.n, segref::value_kind::ties);
    const segtest::device_memory mem;
    segtest::check_reduce<F, T, I, std::int64_t>(segred::cuda::par, segred::argmax{}, segref::op::argmax, 0, c, s, v,
                                                 g, mem);
    if constexpr (std::is_floating_point<T>::value)
        for (T& x : v)
            if (segref::coin(g, 0.001)) x = std::numeric_limits<T>::quiet_NaN();
    segtest::check_reduce<F, T, I, std::int64_t>(segred::cuda::par, segred::argmin{}, segref::op::argmin, 0, c, s, v,
                                                 g, mem);
}

// A sum accumulated into `out`, with counts: where a sum's state is a value
// (float, double, int64), sorted ids' runs closed inside a thread are
// parked in the stage and written after the fold, through the full write
// (counts, accumulate) rather than a plain store.
template <form F, class T, class I>
void accumulated_sum_with_counts(segref::rng& g, const segtest::seg_input<I>& s, segtest::trial_config c = {}) {
    c.out_width = c.width;
    c.accumulate = true;
    c.counts = true;
    const std::vector<T> v = segref::random_values<T>(g, s.n * c.width, segref::value_kind::general);
    segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::sum{}, segref::op::sum, 0, c, s, v, g,
                                      segtest::device_memory{});
}

// Segments of one row over many full tiles of the row-parallel reduction
// (2048 or 4096 rows), which write their outputs by a separate coalesced
// loop, mixed with what must keep a tile off it: a two-row segment inside a
// tile, an empty segment inside one, segments crossing a tile boundary (in
// either direction), a long gap of empty segments before a tile's first row,
// leading and trailing empty segments; in every sorted form, for sum,
// argmax, and a mean accumulated into the output with counts. Starts
// (offsets, lengths) test a tile whose keys span one segment a row against
// the starts themselves: here such tiles that are not one-row tiles end in
// a segment going on into the next tile (tiles 1 and 3 of 4096 rows),
// begin inside one that came from the last and hold an empty segment (tile
// 2), and hold a two-row and an empty segment (tile 6). With `tail` 0 the
// last tile is a full one-row tile followed by the trailing empty segments.
template <form F, class T, class I>
void one_row_tiles_case(segref::rng& g, i64 tail) {
    SCOPED_TRACE(std::string(segtest::form_name(F)) + ", tail " + std::to_string(tail));
    constexpr i64 tile = 4096;  // a multiple of both tile sizes
    const i64 n = 8 * tile + tail;
    std::vector<i64> len = {0, 0, 0};  // leading empty segments
    for (i64 row = 0; row < n;) {
        i64 l = 1;
        if (row == 2 * tile - 1) l = 3;                      // crosses into the next tile
        if (row == 2 * tile + 500) len.push_back(0);         // and an empty segment in that tile
        if (row == 4 * tile - 1) l = 2;                      // the next tile's first row continues it
        if (row == 3 * tile + 1000) l = 2;                   // two rows inside a tile
        if (row == 5 * tile) len.insert(len.end(), 100, 0);  // a long gap before a tile
        if (row == 6 * tile + 77) len.push_back(0);          // one empty segment inside a tile
        if (row == 6 * tile + 1500) l = 2;                   // and two rows
        l = std::min(l, n - row);
        len.push_back(l);
        row += l;
    }
    len.insert(len.end(), 5, 0);  // trailing empty segments
    segtest::seg_input<I> s;
    s.kind = F;
    s.n = n;
    s.M = static_cast<i64>(len.size());
    if constexpr (F == form::offsets) s.idx = segref::offsets_from_lengths<I>(len);
    if constexpr (F == form::lengths) s.idx.assign(len.begin(), len.end());
    if constexpr (F == form::sorted_ids) s.idx = segref::sorted_ids_from_lengths<I>(len);
    if constexpr (F == form::fixed) {
        s.M = n;
        s.fixed_size = 1;
    }
    sum_argmax_and_mean<F, T>(g, s);
}

TYPED_TEST(CudaSortedReduce, OneRowTiles) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (i64 tail : {i64(123), i64(0)}) {
        one_row_tiles_case<form::offsets, T, I>(g, tail);
        one_row_tiles_case<form::lengths, T, I>(g, tail);
        one_row_tiles_case<form::sorted_ids, T, I>(g, tail);
        one_row_tiles_case<form::fixed, T, I>(g, tail);
    }
}

// Offsets (with `lead` rows before the first and 5 rows past the last) or
// lengths of segments of len rows, `rows` in all.
template <form F, class I>
segtest::seg_input<I> starts_input(const std::vector<i64>& len, i64 rows, i64 lead) {
    segtest::seg_input<I> s;
    s.kind = F;
    s.M = static_cast<i64>(len.size());
    if constexpr (F == form::offsets) {
        s.idx = segref::offsets_from_lengths<I>(len, lead);
        s.n = rows + lead + 5;
    } else {
        s.idx.assign(len.begin(), len.end());
        s.n = rows;
    }
    return s;
}

// Offsets and lengths of segments averaging more than 16 rows: the tile
// reduction computes row keys, each thread's first key coming from marks the
// tile's segment starts leave (tiles of 17 to 512 segments) or from a search
// of the starts (fewer or more). Tiles here hold: random short segments with
// starts on a thread's first row, on the tile's last row and crossing into
// the next tile; 600 segments (500 of them empty); exactly 17 and exactly 16
// segments (either side of the marks' lower bound); 513 and 512 (either side
// of the upper one, empty ones included); then a giant segment. With 0 and 3
// rows before the first offset (keys of -1 in the first tile). With a giant
// segment long enough for the segments to average 64 rows or more (but
// under 384: longer ones are streamed, StreamedLongSegments), values
// of 2, 4 or 8 bytes take chunked tiles (128 bytes of rows a thread, staged
// in 16-byte chunks) where they are 16-byte aligned: there the same layout
// is laid over their tiles, and the last tile is copied row by row; with a
// shorter one (averaging under 64), tiles of rows. Unaligned values
// (shifted) take tiles of rows either way.
template <form F, class T, class I>
void searched_keys_case(segref::rng& g, i64 lead, bool shifted, bool chunked) {
    SCOPED_TRACE(std::string(segtest::form_name(F)) + ", lead " + std::to_string(lead) +
                 (shifted ? ", unaligned" : "") + (chunked ? ", chunked tiles" : ""));
    const i64 per_thread = chunked ? 128 / static_cast<i64>(sizeof(T)) : 16;  // computed keys' rows a thread
    const i64 tile = 256 * per_thread;
    const i64 scale = tile / 4096;  // the offsets below are for 4096-row tiles
    std::vector<i64> len = {0, 0};
    i64 row = 0;
    auto push = [&](i64 l) {
        len.push_back(l);
        row += l;
    };
    auto random_until = [&](i64 stop, i64 max_len) {
        while (row < stop) push(segref::coin(g, 0.25) ? 0 : segref::uniform_int(g, 1, max_len));
    };
    random_until(3000 * scale, 40);
    push(200 * per_thread - row);  // the next segment starts on thread 200's first row
    push(per_thread);              // and the one after on thread 201's
    random_until(4000 * scale, 40);
    push(tile - 1 - row);  // the next starts on the tile's last row
    push(per_thread + 1);  // and ends on the first row of the next tile's thread 1
    len.insert(len.end(), 500, 0);
    for (int k = 0; k < 100; ++k) push(segref::uniform_int(g, 1, 8));
    random_until(2 * tile - 100, 40);
    push(2 * tile + 5 - row);
    for (int k = 0; k < 16; ++k) push(240);  // 17 starts in the third tile, with the one at its row 5
    push(3 * tile + 5 - row);
    for (int k = 0; k < 15; ++k) push(250);  // 16 starts in the fourth
    push(4 * tile + 7 - row);
    len.insert(len.end(), 400, 0);  // 513 starts in the fifth
    for (int k = 0; k < 112; ++k) push(8);
    push(5 * tile + 3 - row);
    len.insert(len.end(), 300, 0);  // 512 starts in the sixth
    for (int k = 0; k < 211; ++k) push(10);
    push(6 * tile + 9 - row);
    push(chunked ? 200000 : 50000);
    len.insert(len.end(), 3, 0);
    const segtest::seg_input<I> s = starts_input<F, I>(len, row, lead);
    if (chunked) {
        ASSERT_GE(s.n, 64 * s.M) << "segments long enough to take chunked tiles";
        ASSERT_LT(s.n, 384 * s.M) << "segments too short to be streamed (StreamedLongSegments)";
    } else {
        ASSERT_LT(s.n, 64 * s.M) << "segments short enough to take tiles of rows";
    }
    segtest::trial_config c;
    c.shifted = shifted;
    sum_argmax_and_mean<F, T>(g, s, c);
}

TYPED_TEST(CudaSortedReduce, SearchedTileKeys) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (bool chunked : {false, true})
        for (bool shifted : {false, true}) {
            for (i64 lead : {i64(0), i64(3)}) searched_keys_case<form::offsets, T, I>(g, lead, shifted, chunked);
            searched_keys_case<form::lengths, T, I>(g, 0, shifted, chunked);
        }
}

// Segment lengths laid out in order: push(l) adds a segment of l rows,
// empties(k) k empty ones, random_until(stop) random ones up to row stop
// (`empty` of them empty, the others 1 to max_len rows, the last cut to end
// there).
struct mixed_lengths {
    mixed_lengths(segref::rng& g_, double empty_, i64 max_len_) : g(g_), empty(empty_), max_len(max_len_) {}
    segref::rng& g;
    double empty;
    i64 max_len;
    std::vector<i64> len;
    i64 row = 0;
    void push(i64 l) {
        len.push_back(l);
        row += l;
    }
    void empties(i64 k) { len.insert(len.end(), static_cast<std::size_t>(k), 0); }
    void random_until(i64 stop) {
        while (row < stop)
            push(segref::coin(g, empty) ? 0 : std::min(segref::uniform_int(g, 1, max_len), stop - row));
    }
};

// Sorted ids laid out by m: segment k's rows take id k.
template <class I>
segtest::seg_input<I> sorted_ids_input(const mixed_lengths& m) {
    segtest::seg_input<I> s;
    s.kind = form::sorted_ids;
    s.M = static_cast<i64>(m.len.size());
    s.n = m.row;
    s.idx = segref::sorted_ids_from_lengths<I>(m.len);
    return s;
}

// A sum and a max over s whose empty segments take a constant fill.
template <form F, class T, class I>
void constant_fill_checks(segref::rng& g, const segtest::seg_input<I>& s) {
    using segref::op;
    segtest::trial_config c;
    c.fill_mode = segref::fill::constant;
    c.fill_value = -7.0;
    const std::vector<T> v = segref::random_values<T>(g, s.n, segref::value_kind::general);
    const segtest::device_memory mem;
    segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::sum{}, op::sum, 0, c, s, v, g, mem);
    segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::max{}, op::max, 0, c, s, v, g, mem);
}

// Rows a thread of a tile of derived keys: 16, or 8 where a value and its
// 2-byte label take more than 8 bytes.
template <class T>
constexpr i64 derived_rows_a_thread() {
    return sizeof(T) + 2 <= 8 ? 16 : 8;
}

// Sum, argmax, an accumulated mean with counts, and a sum and max whose
// empty segments take a constant fill, over the segments m lays out, as
// offsets (`lead` rows before the first) or lengths: short enough for the
// tiles to derive their keys.
template <form F, class T, class I>
void check_derived_layout(segref::rng& g, const mixed_lengths& m, i64 lead) {
    const segtest::seg_input<I> s = starts_input<F, I>(m.len, m.row, lead);
    ASSERT_LE(s.n, 16 * s.M) << "segments long enough to take computed keys";
    sum_argmax_and_mean<F, T>(g, s);
    constant_fill_checks<F, T>(g, s);
}

// Offsets and lengths of short segments (at most 16 rows a segment, empty
// ones counted, so both forms derive their tiles' keys in shared memory).
// Tiles whose non-empty segments average at most 12 rows are folded a
// thread a segment, with segments of over 32 rows in the tile a warp each;
// the others row by row, where the empty segments inside a tile's key range
// are written by the pass that derives the keys, and the fold writes only
// those it meets at the tile's edges. `empty` is the share of empty
// segments among ones of 1 to max_len rows: (0.3, 8) gives tiles folded a
// thread a segment (256 to 2048 segments a tile, the non-empty ones
// averaging 4.5 rows), (0.6, 40) tiles folded row by row (non-empty
// segments averaging 20.5 rows), and (0.9, 8) too (over 2048 segments a
// tile). Each layout holds:
// a gap of 200 empty segments inside a tile; a 50-row and a 300-row segment
// inside tiles (a warp each where segments are short); a gap of 100 between
// a segment ending on a tile's last row and the next tile's first segment;
// a gap of 30 between two threads' rows (a segment ends on thread 4's last
// row); an 80-row segment across a tile boundary and a 15-row one across
// the next (partial heads and tails, each long or short); a segment of
// three tiles' rows (two tiles passed through); empty segments before the
// first row (and rows before the first offset) and after the last (and
// rows past the last offset). Sum, argmax, an accumulated mean with counts,
// and a sum and max whose empty segments take a constant fill.
template <form F, class T, class I>
void derived_tiles_case(segref::rng& g, i64 lead, double empty, i64 max_len) {
    SCOPED_TRACE(std::string(segtest::form_name(F)) + ", lead " + std::to_string(lead) + ", empty " +
                 std::to_string(empty) + ", up to " + std::to_string(max_len) + " rows");
    const i64 per_thread = derived_rows_a_thread<T>();
    const i64 tile = 256 * per_thread;
    mixed_lengths m(g, empty, max_len);
    m.empties(7);
    m.random_until(tile / 4);
    m.empties(200);
    m.random_until(tile / 2);
    m.push(50);
    m.random_until(tile - 20);
    m.push(tile - m.row);  // ends on the first tile's last row
    m.empties(100);
    m.random_until(tile + tile / 2);
    m.push(300);
    m.random_until(2 * tile - 40);
    m.push(80);  // 40 rows either side of the second tile's end
    m.random_until(3 * tile + 5 * per_thread - 9);
    m.push(3 * tile + 5 * per_thread - m.row);  // ends on thread 4's last row of the fourth tile
    m.empties(30);
    m.random_until(4 * tile - 10);
    m.push(15);  // 10 rows, then 5 in the next tile
    m.random_until(5 * tile - 100);
    m.push(3 * tile);  // from the fifth tile over the sixth and seventh into the eighth
    m.random_until(8 * tile + 100);
    m.empties(9);
    check_derived_layout<F, T, I>(g, m, lead);
}

// each(f, lead) for offsets with no rows before the first offset and with
// `lead`, then for lengths: f is std::integral_constant<form, F>.
template <class Each>
void offsets_leads_and_lengths(i64 lead, Each each) {
    for (i64 l : {i64(0), lead}) each(std::integral_constant<form, form::offsets>{}, l);
    each(std::integral_constant<form, form::lengths>{}, i64(0));
}

TYPED_TEST(CudaSortedReduce, DerivedKeyTiles) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (auto [empty, max_len] :
         {std::pair<double, i64>{0.3, 8}, std::pair<double, i64>{0.6, 40}, std::pair<double, i64>{0.9, 8}}) {
        offsets_leads_and_lengths(3, [&, empty = empty, max_len = max_len](auto f, i64 lead) {
            derived_tiles_case<decltype(f)::value, T, I>(g, lead, empty, max_len);
        });
    }
}

// Tiles whose key ranges sit on the bounds of the fold a thread a segment,
// for which the tile's starts are copied into shared memory with its rows
// (k1 - k0 from 256 to half the tile's rows). In each such tile a segment
// comes in from the tile before with 1 to 20 rows, span - 1 segments of
// random lengths (rows dealt out at random, so short ones and empty ones
// mix) follow, and the last goes on into the next tile. Spans: 255 (keys
// derived from the starts in device memory), 256 (the least staged; for
// 4096-row tiles the sample then sends the tile to the row-by-row fold,
// which derives its labels from the staged starts), 257, 512 (the first
// and the last segment both thread 0's), half the tile's rows and one
// more (not staged), then 300. The spans are asserted from the layout itself (with
// no rows before the first offset; `lead` rows shift every tile's rows).
template <form F, class T, class I>
void segment_tile_spans_case(segref::rng& g, i64 lead) {
    SCOPED_TRACE(std::string(segtest::form_name(F)) + ", lead " + std::to_string(lead));
    const i64 tile = 256 * derived_rows_a_thread<T>();
    const std::vector<i64> spans = {255, 256, 257, 512, tile / 2, tile / 2 + 1, 300};
    mixed_lengths m(g, 0.0, 1);
    const i64 before = segref::uniform_int(g, 1, 20);
    m.random_until(tile - before);  // one-row segments up to the first listed tile
    i64 in = segref::uniform_int(g, 1, 20);
    m.push(before + in);  // into the first listed tile
    std::vector<i64> first_key;  // the key of each listed tile's first row
    for (const i64 span : spans) {
        first_key.push_back(static_cast<i64>(m.len.size()) - 1);
        const i64 out = segref::uniform_int(g, 1, 20);
        std::vector<i64> inner(static_cast<std::size_t>(span - 1), 0);
        for (i64 r = 0; r < tile - in - out; ++r) ++inner[static_cast<std::size_t>(segref::uniform_int(g, 0, span - 2))];
        for (const i64 l : inner) m.push(l);
        in = segref::uniform_int(g, 1, 20);
        m.push(out + in);  // the last segment, on into the next tile
    }
    m.random_until(m.row + 100);
    m.empties(3);
    // The keys of each listed tile's first and last rows, from the lengths.
    std::vector<i64> start(m.len.size() + 1, 0);
    for (std::size_t k = 0; k < m.len.size(); ++k) start[k + 1] = start[k] + m.len[k];
    for (std::size_t q = 0; q < spans.size(); ++q) {
        const i64 lo = static_cast<i64>(q + 1) * tile, hi = lo + tile;
        auto key_of = [&](i64 row) {
            return static_cast<i64>(std::upper_bound(start.begin(), start.end(), row) - start.begin()) - 1;
        };
        ASSERT_EQ(key_of(lo), first_key[q]) << "tile " << q;
        ASSERT_EQ(key_of(hi - 1) - key_of(lo), spans[q]) << "tile " << q;
    }
    check_derived_layout<F, T, I>(g, m, lead);
}

TYPED_TEST(CudaSortedReduce, SegmentTileSpans) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    offsets_leads_and_lengths(3, [&](auto f, i64 lead) { segment_tile_spans_case<decltype(f)::value, T, I>(g, lead); });
}

// Tiles of derived keys whose keys span more than 32767 segments, which
// label their rows in 32 bits (the high halves in the other stage's key
// slots) where other tiles take 16: a gap of 40000 empty segments inside the
// first tile, of 70000 (past 16 bits) inside the second with a segment
// crossing into the third, a third and fourth of 1-3-row segments each
// followed by 20 empty ones (no single long gap), and narrow tiles after
// them, which take the same stages again. Rows before the first offset where
// lead > 0, and empty segments past the last row. Sum, argmax, an
// accumulated mean with counts, and a sum and max whose empty segments take
// a constant fill.
template <form F, class T, class I>
void wide_label_tiles_case(segref::rng& g, i64 lead) {
    SCOPED_TRACE(std::string(segtest::form_name(F)) + ", lead " + std::to_string(lead));
    const i64 tile = 256 * derived_rows_a_thread<T>();
    mixed_lengths m(g, 0.2, 6);
    m.random_until(tile / 3);
    m.empties(40000);
    m.random_until(tile + tile / 2);
    m.empties(70000);
    m.random_until(2 * tile - 7);
    m.push(20);  // 7 rows in the second tile, 13 in the third
    while (m.row < 4 * tile) {
        m.push(std::min(segref::uniform_int(g, 1, 3), 4 * tile - m.row));
        m.empties(20);
    }
    m.random_until(6 * tile + 77);
    m.empties(5);
    check_derived_layout<F, T, I>(g, m, lead);
}

TYPED_TEST(CudaSortedReduce, DerivedKeyWideTiles) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    offsets_leads_and_lengths(5, [&](auto f, i64 lead) { wide_label_tiles_case<decltype(f)::value, T, I>(g, lead); });
}

// Sorted ids with empty segments between the keys of a thread's rows. Where
// a sum's or max's state is a value, every run closed in a thread's rows is
// parked in the stage and the gaps before them are written after the fold;
// otherwise (argmax, mean) the first gap of up to 63 empty segments a thread
// meets is held and written after its fold, the others at once in the fold.
// Where runs are parked and a thread folds 16 rows (fp32 values, int32
// ids), the gaps before a thread's open run and before its first row, of 3
// to 64 empty segments, are written by the warp's lanes together, 32
// segments a round. Gaps over 64 go through the gap list. `empty` is the
// share of empty segments among ones of 1 to max_len rows: (0.9, 8) gives
// threads several gaps each, (0.1, 8) single gaps, (0.5, 40) gaps across
// threads' rows, (0.9, 64) (the benchmarks' 90% empty) about one gap of 9
// a thread, several rounds a warp, (0.98, 3) gaps of about 50, some over 64,
// between the runs a thread parks. Each layout holds: gaps
// of 63 (held where it is a thread's first) and 64 (never held) empty
// segments between short segments; a gap of 100 (never held) and then one
// of 5 within a few rows; a gap just before a thread's first row (a segment
// ends on thread 9's last row); a gap at the tile's edge; and empty segments
// past the last row. Sum, argmax, an accumulated mean with counts, an
// accumulated sum with counts, and a sum and max whose empty segments take a
// constant fill.
template <class T, class I>
void sorted_gaps_case(segref::rng& g, double empty, i64 max_len) {
    SCOPED_TRACE("empty " + std::to_string(empty) + ", up to " + std::to_string(max_len) + " rows");
    const i64 per_thread = sizeof(T) + sizeof(I) <= 8 ? 16 : 8;  // staged rows a thread
    const i64 tile = 256 * per_thread;
    mixed_lengths m(g, empty, max_len);
    m.empties(3);
    m.random_until(tile / 4 + 1);
    m.push(2);
    m.empties(63);
    m.push(3);
    m.empties(64);
    m.push(2);
    m.random_until(tile / 2);
    m.push(1);
    m.empties(100);
    m.push(2);
    m.empties(5);
    m.push(2);
    m.random_until(tile + 10 * per_thread - 6);
    m.push(tile + 10 * per_thread - m.row);  // ends on thread 9's last row of the second tile
    m.empties(7);
    m.random_until(3 * tile - 5);
    m.push(3 * tile - m.row);  // ends on the third tile's last row
    m.empties(6);
    m.random_until(4 * tile + 50);
    m.empties(40);
    const segtest::seg_input<I> s = sorted_ids_input<I>(m);
    sum_argmax_and_mean<form::sorted_ids, T>(g, s);
    accumulated_sum_with_counts<form::sorted_ids, T>(g, s);
    constant_fill_checks<form::sorted_ids, T>(g, s);
}

TYPED_TEST(CudaSortedReduce, SortedIdGaps) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (auto [empty, max_len] :
         {std::pair<double, i64>{0.9, 8}, std::pair<double, i64>{0.1, 8}, std::pair<double, i64>{0.5, 40},
          std::pair<double, i64>{0.9, 64}, std::pair<double, i64>{0.98, 3}})
        sorted_gaps_case<T, I>(g, empty, max_len);
}

// Sorted ids are staged in 16-byte chunks of values and of ids and folded a
// group of rows at a time (4 rows of fp32 values with int32 ids, 2 of fp64
// with int64, 4 of int32 with int64, whose ids take two chunks a group, and
// of int64 with int32, whose values do): a group whose last id is still the
// running one is folded after that one compare, any other row by row.
// Segments cycling through 1 to 9 rows put a boundary at every place in a
// group and groups holding two or three boundaries; segments of 30 to 300
// rows (a tenth of them empty) take whole groups, and one crosses each
// tile's edge; a segment of two tiles' rows passes through one; the input
// ends inside a thread's rows and inside a group. From aligned values, and
// from values one element off 16 bytes, staged row by row into the same
// chunks. Sum, argmax, an accumulated mean with counts, an accumulated sum
// with counts (runs parked in the stage, then fully written), and a sum and
// max whose empty segments take a constant fill.
template <class T, class I>
void sorted_chunks_case(segref::rng& g, bool shifted) {
    SCOPED_TRACE(shifted ? "values one element off 16 bytes" : "aligned values");
    const i64 per_thread = sizeof(T) + sizeof(I) <= 8 ? 16 : 8;  // staged rows a thread
    const i64 tile = 256 * per_thread;
    mixed_lengths m(g, 0.1, 300);
    for (i64 l = 1; m.row < tile + tile / 2; l = l % 9 + 1) m.push(l);
    m.random_until(3 * tile - 100);
    m.push(200);  // across the third tile's edge
    m.random_until(4 * tile - 7);
    m.push(2 * tile);  // from the fourth tile over the fifth into the sixth
    m.random_until(6 * tile + 37 * per_thread + 5);  // ends 5 rows into thread 37's rows
    m.empties(3);
    const segtest::seg_input<I> s = sorted_ids_input<I>(m);
    segtest::trial_config c;
    c.shifted = shifted;
    sum_argmax_and_mean<form::sorted_ids, T>(g, s, c);
    accumulated_sum_with_counts<form::sorted_ids, T>(g, s, c);
    constant_fill_checks<form::sorted_ids, T>(g, s);
}

TYPED_TEST(CudaSortedReduce, SortedIdChunks) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (bool shifted : {false, true}) sorted_chunks_case<T, I>(g, shifted);
}

// Fixed segments of one column over several tiles or blocks. From 16-byte
// aligned values, every size of 1 to 16 rows and 17 to 128 goes through the
// shared-memory stage of 16-byte vectors (short_fixed.cuh): tiles of 16
// KiB, the last one part full and ending off a whole vector (the rows past
// it staged one at a time), past 16 rows of floats fewer segments than
// threads, and where a tile holds fewer than 64 segments (floats of 65 rows
// and more, doubles of 33 and more) each segment folded in parts by several
// threads and combined; max and argmax over many ties and NaN check that
// the parts combine to the first extremum's row. Unaligned, most sizes
// below 64 rows go a thread a segment (units; staged in shared memory from
// 16 rows or 64 bytes: 17, 20, 24, 63 floats), the others take tiles of
// computed keys: power-of-two sizes of 16 rows and more of values of at
// most 4 bytes (16, 32 floats: chunked tiles), 4-row floats, 2-row 16-bit
// values, and from 64 rows (aligned from 129; 64, 65, 129, 500: chunked
// tiles); segments straddling threads and tiles, a last tile part full. Aligned, 1000 and 5000 rows are streamed
// (StreamedLongSegments).
template <class T, class I>
void fixed_chunks_case(segref::rng& g, i64 size, bool shifted) {
    SCOPED_TRACE("fixed size " + std::to_string(size) + (shifted ? ", unaligned" : ""));
    segtest::seg_input<I> s;
    s.kind = form::fixed;
    s.fixed_size = size;
    s.M = (5 * 8192 + 77 + size - 1) / size;  // the last tile part full
    s.n = size * s.M;
    segtest::trial_config c;
    c.shifted = shifted;
    sum_argmax_and_mean<form::fixed, T>(g, s, c);
    // Few distinct values (ties in every segment) and, for floats, a NaN in
    // about one segment of 5 at 100 rows.
    std::vector<T> v = segref::random_values<T>(g, s.n, segref::value_kind::ties);
    if constexpr (std::is_floating_point<T>::value)
        for (T& x : v)
            if (segref::coin(g, 0.002)) x = std::numeric_limits<T>::quiet_NaN();
    c.nan = std::is_floating_point<T>::value;
    const segtest::device_memory mem;
    segtest::check_reduce<form::fixed, T, I, T>(segred::cuda::par, segred::max{}, segref::op::max, 0, c, s, v, g, mem);
    segtest::check_reduce<form::fixed, T, I, std::int64_t>(segred::cuda::par, segred::argmax{}, segref::op::argmax, 0,
                                                           c, s, v, g, mem);
}

TYPED_TEST(CudaSortedReduce, FixedChunkedTiles) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (i64 size : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 20, 24, 32, 33, 48, 63, 64, 65, 72, 80, 81, 96, 112, 128, 129, 500, 1000, 5000})
        for (bool shifted : {false, true}) fixed_chunks_case<T, I>(g, size, shifted);
}

// Segments averaging 384 rows or more from starts (and fixed ones of 512
// rows or more), over values of 2, 4 or 8 bytes that start 16-byte aligned,
// are streamed: a warp a chunk of 16 KiB of values, each segment with rows
// in the chunk reduced where it lies, pieces that cross a chunk's edges
// joined after. Chunks of C rows here hold: empty segments first; a segment
// ending on the first chunk's last row and one filling the second exactly;
// one that passes through two whole chunks; a long gap of empty segments
// and a short one inside a chunk; 150 short segments (a lane alone, or the
// warp past 8 rows; 32 segments a round) with empty ones among them;
// segments starting and ending off 16-byte boundaries; a long gap right
// before a chunk's first row; a giant segment through hundreds of chunks
// (a join of three steps: 32 tiles, then 256 a step; its chunk edges'
// keys written by its warp); empty segments after the last row. With 0 and
// 3 rows before the first offset and 5 after the last (keys -1 and M),
// offsets whose rows all lie before the first one, and four segments over
// 400 chunks (their chunk edges' keys written by two warps). Unaligned values
// (shifted) take the tile kernels instead, on the same input. Sum, argmax,
// an accumulated mean with counts; then over values with NaN with a
// constant fill, max, count, and for floating-point values variance and
// log-sum-exp.
template <form F, class T, class I>
void streamed_case(segref::rng& g, const segtest::seg_input<I>& s, bool shifted) {
    segtest::trial_config c;
    c.shifted = shifted;
    sum_argmax_and_mean<F, T>(g, s, c);
    c.nan = true;
    c.fill_mode = segref::fill::constant;
    c.fill_value = -7.0;
    std::vector<T> v = segref::random_values<T>(g, s.n, segref::value_kind::general);
    if constexpr (std::is_floating_point<T>::value) {
        for (T& x : v)  // a few a long segment, none in most short ones
            if (segref::coin(g, 0.001)) x = std::numeric_limits<T>::quiet_NaN();
    }
    const segtest::device_memory mem;
    segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::max{}, segref::op::max, 0, c, s, v, g, mem);
    if constexpr (std::is_floating_point<T>::value) {
        // States of two values (variance, log-sum-exp): joined by combine.
        segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::var{1}, segref::op::var, 1, c, s, v, g, mem);
        segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::logsumexp{}, segref::op::logsumexp, 0, c, s, v,
                                          g, mem);
    }
    segtest::check_reduce<F, T, I, std::int64_t>(segred::cuda::par, segred::count{}, segref::op::count, 0, c, s, v,
                                                 g, mem);
    tied_and_nan_args<F, T>(g, s, c);
}

template <form F, class T, class I>
void streamed_starts_case(segref::rng& g, i64 lead, bool shifted) {
    SCOPED_TRACE(std::string(segtest::form_name(F)) + ", lead " + std::to_string(lead) +
                 (shifted ? ", unaligned" : ""));
    const i64 C = 16384 / static_cast<i64>(sizeof(T));  // rows of a chunk
    std::vector<i64> len = {0, 0};
    i64 row = 0;
    auto push = [&](i64 l) {
        len.push_back(l);
        row += l;
    };
    push(C);                          // ends on the first chunk's last row
    push(C);                          // fills the second
    push(2 * C + C / 2);              // through the third and fourth
    len.insert(len.end(), 70, 0);     // a long gap inside the fifth
    push(333);
    len.insert(len.end(), 5, 0);      // a short one
    for (int k = 0; k < 150; ++k) push(segref::coin(g, 0.2) ? 0 : segref::uniform_int(g, 1, 40));
    push(777);                        // off 16-byte boundaries at both ends
    push(5);
    push(1234);
    push((row / C + 2) * C - row);    // up to a chunk's start
    len.insert(len.end(), 80, 0);     // a long gap right before its first row
    push(3);
    push(1200011);                    // the giant: over 288 chunks (a join's third step)
    push(C - 1);
    len.insert(len.end(), 3, 0);
    const segtest::seg_input<I> s = starts_input<F, I>(len, row, lead);
    ASSERT_GE(s.n, 512 * s.M) << "segments long enough to be streamed";
    streamed_case<F, T>(g, s, shifted);
}

TYPED_TEST(CudaSortedReduce, StreamedLongSegments) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (bool shifted : {false, true}) {
        for (i64 lead : {i64(0), i64(3)}) streamed_starts_case<form::offsets, T, I>(g, lead, shifted);
        streamed_starts_case<form::lengths, T, I>(g, 0, shifted);
        {
            SCOPED_TRACE("every row before the first offset");
            streamed_case<form::offsets, T>(g, starts_input<form::offsets, I>({0, 0}, 0, 5000), shifted);
        }
        const i64 C = 16384 / static_cast<i64>(sizeof(T));
        {
            // Over 256 chunks of one group of 32 segments: two warps write
            // the chunks' edge keys, every other 32 chunks each.
            SCOPED_TRACE("a few long segments");
            const std::vector<i64> few = {300 * C + 17, 0, 2 * C + 5, 100 * C + 3};
            streamed_case<form::offsets, T>(g, starts_input<form::offsets, I>(few, 402 * C + 25, 3), shifted);
            streamed_case<form::lengths, T>(g, starts_input<form::lengths, I>(few, 402 * C + 25, 0), shifted);
        }
        for (i64 size : {i64(512), i64(1000), C + 3, 3 * C + 1, 7 * C + 5}) {
            SCOPED_TRACE("fixed size " + std::to_string(size) + (shifted ? ", unaligned" : ""));
            segtest::seg_input<I> f;
            f.kind = form::fixed;
            f.fixed_size = size;
            f.M = size == 7 * C + 5 ? 1 : (9 * C + 77 + size - 1) / size;  // one segment over every chunk
            f.n = size * f.M;
            streamed_case<form::fixed, T>(g, f, shifted);
        }
    }
}

// Rows of several columns over a layout: a thread per segment and 16-byte
// vector of columns where the width is a multiple of one and the values are
// 16-byte aligned (4 floats or int32s, 2 doubles or int64s), else a column
// a thread; segments over 128 rows take the whole warp, which reads vectors
// of columns too, filling its lanes several rows at a time (8 to 64
// columns: full rows side by side, and 12 or 40 columns, where lanes are
// left over) or over several passes (136, 264). Odd widths, and every one of
// them again from an unaligned start. Short random segments, empty ones
// among them and at both ends, and one of 300 rows.
template <form F, class T, class I>
void wide_rows_case(segref::rng& g, i64 width, bool shifted) {
    SCOPED_TRACE(std::string(segtest::form_name(F)) + ", width " + std::to_string(width) +
                 (shifted ? ", unaligned" : ""));
    std::vector<i64> len = segref::random_lengths(g, 60, 20, 0.2);
    len.insert(len.begin(), 0);
    len.push_back(300);
    len.push_back(0);
    segtest::seg_input<I> s;
    s.kind = F;
    s.M = static_cast<i64>(len.size());
    s.n = 0;
    for (i64 l : len) s.n += l;
    if constexpr (F == form::offsets) s.idx = segref::offsets_from_lengths<I>(len);
    if constexpr (F == form::sorted_ids) s.idx = segref::sorted_ids_from_lengths<I>(len);
    segtest::trial_config c;
    c.width = width;
    c.shifted = shifted;
    sum_argmax_and_mean<F, T>(g, s, c);
}

TYPED_TEST(CudaSortedReduce, WideRows) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (i64 width : {2, 4, 8, 12, 16, 40, 64, 136, 264, 9, 33})
        for (bool shifted : {false, true}) {
            wide_rows_case<form::offsets, T, I>(g, width, shifted);
            wide_rows_case<form::sorted_ids, T, I>(g, width, shifted);
        }
}

// The segments of lengths `len` in form F (offsets, lengths or sorted ids),
// over exactly their rows.
template <form F, class I>
segtest::seg_input<I> segments_of(const std::vector<i64>& len) {
    segtest::seg_input<I> s;
    s.kind = F;
    s.M = static_cast<i64>(len.size());
    s.n = segref::total(len);
    if constexpr (F == form::offsets) s.idx = segref::offsets_from_lengths<I>(len);
    if constexpr (F == form::lengths) s.idx.assign(len.begin(), len.end());
    if constexpr (F == form::sorted_ids) s.idx = segref::sorted_ids_from_lengths<I>(len);
    return s;
}

// Runs over thousands of tiles or chunks: a run that goes on past its
// warp's first two steps of the join (288 tiles) is taken on by the whole
// block, 8 steps of 256 tiles side by side (tile_join.cuh). Streamed chunks
// of C rows (and the tiles of the same input from unaligned values): a run
// from the first chunk that ends on the last row of the block's first
// round (2337 chunks); one that begins on the next chunk and ends on the
// first chunk of its second round; one from inside the next chunk to the
// last row. Then tiles of derived keys and of sorted ids: segments of 1 to
// 3 rows around giants over about 630, 320 and 75 tiles, as in the GPU
// issue's "giant + tiny" lengths (and the same from offsets with 3 rows
// before the first one).
template <class T, class I>
void long_runs_case(segref::rng& g, bool shifted) {
    segtest::trial_config c;
    c.shifted = shifted;
    {
        SCOPED_TRACE(std::string("streamed runs over thousands of chunks") + (shifted ? ", unaligned" : ""));
        const i64 C = 16384 / static_cast<i64>(sizeof(T));
        const std::vector<i64> len = {3, 2337 * C - 3, 2338 * C, 5, 600 * C + 11};
        const segtest::seg_input<I> s = starts_input<form::offsets, I>(len, segref::total(len), 0);
        ASSERT_GE(s.n, 512 * s.M) << "segments long enough to be streamed";
        sum_argmax_and_mean<form::offsets, T>(g, s, c);
    }
    std::vector<i64> len;
    auto tiny = [&](i64 k) {
        for (i64 j = 0; j < k; ++j) len.push_back(segref::uniform_int(g, 1, 3));
    };
    tiny(250000);
    len.push_back(2600011);
    tiny(150000);
    len.push_back(1300007);
    tiny(100000);
    len.push_back(300001);
    tiny(1000);
    SCOPED_TRACE(std::string("short segments around giants") + (shifted ? ", unaligned" : ""));
    const i64 rows = segref::total(len);
    ASSERT_LE(rows, 16 * static_cast<i64>(len.size())) << "segments short enough to derive their keys";
    sum_argmax_and_mean<form::offsets, T>(g, starts_input<form::offsets, I>(len, rows, 3), c);
    sum_argmax_and_mean<form::lengths, T>(g, starts_input<form::lengths, I>(len, rows, 0), c);
    sum_argmax_and_mean<form::sorted_ids, T>(g, segments_of<form::sorted_ids, I>(len), c);
}

TYPED_TEST(CudaSortedReduce, LongRunsJoinedByBlocks) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (bool shifted : {false, true}) long_runs_case<T, I>(g, shifted);
}

// Rows of several columns, segments averaging under 64 rows: a thread per
// segment and vector of columns folds a segment of up to 128 rows alone and
// stores its vector of results at once where out allows; the warp holding
// a longer segment's first vector reduces it, and a giant one (over 65536
// rows) goes to the piece passes. Segments of 0-20 rows, with ones of 128
// and 129 rows and a giant among them. Then segments averaging over 64 rows
// (a warp per segment, narrow rows too), with short and empty ones among
// them. Sums, plain (whole-vector stores where aligned), with counts, and
// with a constant fill for empty segments; argmax (a thread keeps a vector
// of (value, row) states where segments average under 112 vectors, else the
// warp per segment: both occur among these widths and value types); a mean
// accumulated into out with counts (a column at a time). Without the giant
// (`giant` false), short segments of 0-24 rows: about 10 on average, where
// one column takes a thread a segment; with it, two (from 16 rows on
// average; one column's giant has 100001 rows, and segments of 4096, 4097
// and 37251 rows lie around its giant limit, about 44 on average, so that
// the arg forms of floats take two threads too, from 32).
template <form F, class T, class I>
void column_units_case(segref::rng& g, i64 width, bool long_average, bool shifted, bool giant = true) {
    SCOPED_TRACE(std::string(segtest::form_name(F)) + ", width " + std::to_string(width) +
                 (long_average ? ", long segments" : giant ? ", short segments" : ", short segments, no giant") +
                 (shifted ? ", unaligned" : ""));
    std::vector<i64> len;
    if (long_average) {
        for (int s = 0; s < 120; ++s) len.push_back(segref::uniform_int(g, 65, 400));
        for (i64 at : {0, 7, 50, 119}) len[static_cast<std::size_t>(at)] = at % 2 ? 0 : 3;
    } else {
        len = segref::random_lengths(g, 4000, giant ? 20 : 24, 0.2);
        len[1000] = 128;
        len[2000] = 129;
        if (giant) len[3000] = width == 1 ? 100001 : 70001;
        if (giant && width == 1) {
            // One column lists segments past 4096 rows as giants: the last
            // one its warp reduces, the first listed (two pieces), and one
            // of ten pieces.
            len[500] = 4096;
            len[1500] = 4097;
            len[2500] = 37251;
        }
    }
    const segtest::seg_input<I> s = segments_of<F, I>(len);
    segtest::trial_config c;
    c.width = width;
    c.shifted = shifted;
    sum_argmax_and_mean<F, T>(g, s, c);
    using segref::op;
    c.out_width = width;
    const std::vector<T> v = segref::random_values<T>(g, s.n * width, segref::value_kind::general);
    const segtest::device_memory mem;
    segtest::trial_config counted = c;
    counted.counts = true;
    segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::sum{}, op::sum, 0, counted, s, v, g, mem);
    segtest::trial_config filled = c;
    filled.fill_mode = segref::fill::constant;
    filled.fill_value = -7;
    segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::sum{}, op::sum, 0, filled, s, v, g, mem);
    if (width == 1) {
        // Under drop, one column's starts are built (made monotone) first,
        // then reduced by the same units; a max over values with NaN.
        segtest::trial_config dropped = c;
        dropped.bounds = segred::bounds_policy::drop;
        std::vector<T> with_nan = v;
        if constexpr (std::is_floating_point<T>::value)
            for (T& x : with_nan)
                if (segref::coin(g, 0.05)) x = std::numeric_limits<T>::quiet_NaN();
        segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::max{}, op::max, 0, dropped, s, with_nan, g, mem);
        tied_and_nan_args<F, T>(g, s, c);
    }
}

// One column from offsets and lengths averaging about 70 rows: past the 64
// rows a segment where rows of several columns leave the units, and below
// the 80 (72 for the arg forms) where one column does, so that the column
// check and the segment pass must agree on the units (one column up to 79
// rows on average). Segments of 40 to 96 rows, with empty ones, one of 129
// rows (a warp's) and one of 5000 (a giant's pieces) among them; sums,
// argmax and an accumulated mean, aligned and unaligned, and a max over
// values with NaN under drop (the starts made monotone first).
template <form F, class T, class I>
void column_units_past_64_case(segref::rng& g, bool shifted) {
    SCOPED_TRACE(std::string(segtest::form_name(F)) + ", one column, about 70 rows a segment" +
                 (shifted ? ", unaligned" : ""));
    std::vector<i64> len(3000);
    for (i64& l : len) l = segref::uniform_int(g, 40, 96);
    for (std::size_t k : {0u, 17u, 18u, 2999u}) len[k] = 0;
    len[1000] = 129;
    len[2000] = 5000;
    const segtest::seg_input<I> s = segments_of<F, I>(len);
    segtest::trial_config c;
    c.shifted = shifted;
    sum_argmax_and_mean<F, T>(g, s, c);
    segtest::trial_config dropped = c;
    dropped.bounds = segred::bounds_policy::drop;
    std::vector<T> v = segref::random_values<T>(g, s.n, segref::value_kind::general);
    if constexpr (std::is_floating_point<T>::value)
        for (T& x : v)
            if (segref::coin(g, 0.05)) x = std::numeric_limits<T>::quiet_NaN();
    const segtest::device_memory mem;
    segtest::check_reduce<F, T, I, T>(segred::cuda::par, segred::max{}, segref::op::max, 0, dropped, s, v, g, mem);
}

TYPED_TEST(CudaSortedReduce, ColumnUnitsPast64Rows) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (bool shifted : {false, true}) {
        column_units_past_64_case<form::offsets, T, I>(g, shifted);
        column_units_past_64_case<form::lengths, T, I>(g, shifted);
    }
}

// One column from offsets and lengths of 4 to 28 rows (16 on average): a
// thread a segment folds its rows from its block's stage in shared memory
// (column_stage.cuh). 1.3 million segments, so that every block of the pass
// (16 an SM, 2112 on an H200, 256 segments a tile here) takes several
// tiles, its stage rewritten for each. Among them: a stretch of
// 1000 segments of 128 rows (alone, but their tiles overflow the stage and
// read device memory), one of 129 rows (the warp's), and 300 empty ones.
template <form F, class T, class I>
void column_stage_case(segref::rng& g) {
    SCOPED_TRACE(std::string(segtest::form_name(F)) + ", one column, staged");
    std::vector<i64> len(1300000);
    for (i64& l : len) l = segref::uniform_int(g, 4, 28);
    for (std::size_t k = 700000; k < 701000; ++k) len[k] = 128;
    len[800001] = 129;
    for (std::size_t k = 900000; k < 900300; ++k) len[k] = 0;
    sum_argmax_and_mean<F, T>(g, segments_of<F, I>(len));
}

TYPED_TEST(CudaSortedReduce, ColumnStage) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    column_stage_case<form::offsets, T, I>(g);
    column_stage_case<form::lengths, T, I>(g);
}

TYPED_TEST(CudaSortedReduce, ColumnUnits) {
    using T = typename TypeParam::value;
    using I = typename TypeParam::index;
    SEGRED_SEEDED_RNG(g);
    for (bool shifted : {false, true}) {
        for (i64 width : {3, 4, 12, 16}) {
            column_units_case<form::offsets, T, I>(g, width, false, shifted);
            column_units_case<form::sorted_ids, T, I>(g, width, false, shifted);
        }
        column_units_case<form::lengths, T, I>(g, 8, false, shifted);
        // One column from offsets and lengths (units from 6 rows a segment
        // on average), alone and in pairs.
        for (bool giant : {false, true}) {
            column_units_case<form::offsets, T, I>(g, 1, false, shifted, giant);
            column_units_case<form::lengths, T, I>(g, 1, false, shifted, giant);
        }
        for (i64 width : {2, 4, 16}) column_units_case<form::offsets, T, I>(g, width, true, shifted);
        column_units_case<form::sorted_ids, T, I>(g, 5, true, shifted);
    }
    // Fixed segments of several columns: short ones on units, and ones over
    // 65536 rows, the only size for which their piece passes are launched.
    for (i64 size : {3, 70001}) {
        SCOPED_TRACE("fixed segments of " + std::to_string(size) + " rows");
        segtest::seg_input<I> s;
        s.kind = form::fixed;
        s.fixed_size = size;
        s.M = size == 3 ? 5000 : 2;
        s.n = s.M * size;
        segtest::trial_config c;
        c.width = 4;
        sum_argmax_and_mean<form::fixed, T>(g, s, c);
    }
}

} // namespace
