// Large inputs against the reference, shared by the host and CUDA tests: the
// loop shapes that small random trials never reach.
//
// Host: unsorted ids and subscripts take a blocked scatter when segments are
// few (rows > 4 blocks of max(65536/width, 8M)), owned id ranges when they are
// many but their states fit in 2 MB, and a stable partition by id range
// beyond; sorted ids are reduced as runs cut at chunks of 65536/width rows.
// GPU: sorted forms of one column are reduced in tiles of 4096 rows whose
// crossing runs are joined by a second kernel. So the inputs hold runs that
// cross many chunks/tiles (a giant segment), a segment that ends exactly on a
// boundary, empty ids in a gap at a boundary, empty segments first and last,
// and rows outside every offset.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "reduce_harness.hpp"
#include "test_util.hpp"

namespace segtest {

// Reducers with every kind of state: a scalar, a (value, row) pair, a
// (sum, count) pair, an integer count, and logsumexp's (max, sum). Each runs
// with fresh random options (and `width` columns when given), and sum and
// count once more as a plain zero-filled reduction, and sum once more with
// `deterministic` (the CUDA backend's sorted path for unsorted ids); make(corrupt)
// builds the input, with bad indices when corrupt (only then is the bounds
// policy drop).
template <form F, class T, class I, class Policies, class Mem>
void large_every_state(segref::rng& g, const Policies& policies, const Mem& mem,
                       const std::function<seg_input<I>(bool corrupt)>& make, i64 width = 0) {
    using segref::op;
    // plain: a zero-filled sum or count with no accumulate, counts or arg
    // out, the case both backends fold straight into the output.
    auto run = [&](auto reducer, op o, auto out_tag, bool plain = false, bool deterministic = false) {
        using O = decltype(out_tag);
        trial_config c = random_config<F, T, O>(g, o);
        if (width > 0) {  // a fixed width instead of the random 1 or 3
            c.out_width = c.out_width == c.width ? width : 1;
            c.width = width;
        }
        if (plain) {
            c.fill_mode = segref::fill::zero;
            c.accumulate = c.counts = c.arg = false;
        }
        if (deterministic) c.deterministic = true;
        const seg_input<I> s = make(c.bounds == segred::bounds_policy::drop);
        std::vector<T> values = segref::random_values<T>(g, s.n * c.width, c.kind);
        if (c.nan)
            for (T& v : values)
                if (segref::coin(g, 0.001)) v = std::numeric_limits<T>::quiet_NaN();
        for (std::size_t k = 0; k < policies.size(); ++k) {
            SCOPED_TRACE(std::string(segref::name(o)) + ", policy " + std::to_string(k) + ": " + c.describe() + "; " +
                         s.describe());
            check_reduce<F, T, I, O>(policies[k], reducer, o, 0, c, s, values, g, mem);
        }
    };
    run(segred::sum{}, op::sum, T{});
    run(segred::sum{}, op::sum, T{}, true);
    run(segred::sum{}, op::sum, T{}, false, true);
    run(segred::count{}, op::count, std::int64_t{}, true);
    run(segred::max{}, op::max, T{});
    run(segred::argmin{}, op::argmin, std::int64_t{});
    run(segred::mean{}, op::mean, T{});
    run(segred::count{}, op::count, std::int64_t{});
    run(segred::logsumexp{}, op::logsumexp, T{});
}

// n ids in [0, M): 30% on one hot id, the first 0 and the last M-1; with
// corrupt, 1% out of range.
template <class I>
seg_input<I> large_unsorted(segref::rng& g, i64 n, i64 M, bool corrupt) {
    seg_input<I> s;
    s.kind = form::ids;
    s.n = n;
    s.M = M;
    s.idx = segref::random_ids<I>(g, n, 0, M - 1);
    for (I& v : s.idx) {
        if (segref::coin(g, 0.3)) v = I(M / 2);
        if (corrupt && segref::coin(g, 0.01)) v = static_cast<I>(segref::coin(g, 0.5) ? -1 : M);
    }
    s.idx.front() = I(0);
    s.idx.back() = static_cast<I>(M - 1);
    return s;
}

// n ids in runs of 1 to 20 equal ids (so most rows repeat their
// predecessor), each run's id uniform in [0, M); with corrupt, 1% of the runs
// out of range.
template <class I>
seg_input<I> large_repeating(segref::rng& g, i64 n, i64 M, bool corrupt) {
    seg_input<I> s;
    s.kind = form::ids;
    s.n = n;
    s.M = M;
    s.idx.reserve(static_cast<std::size_t>(n));
    while (static_cast<i64>(s.idx.size()) < n) {
        I id = static_cast<I>(segref::uniform_int(g, 0, M - 1));
        if (corrupt && segref::coin(g, 0.01)) id = static_cast<I>(segref::coin(g, 0.5) ? -1 : M);
        for (i64 k = segref::uniform_int(g, 1, 20); k > 0 && static_cast<i64>(s.idx.size()) < n; --k) s.idx.push_back(id);
    }
    return s;
}

template <class I>
seg_input<I> large_subscripts(segref::rng& g, i64 n, const std::vector<i64>& shape, bool corrupt) {
    seg_input<I> s;
    s.kind = form::subscripts;
    s.n = n;
    s.shape = shape;
    s.M = segref::shape_product(shape);
    s.idx = segref::random_subscripts<I>(g, s.n, shape, corrupt ? 0.01 : 0.0);
    return s;
}

// About 300000 rows of segments: two empty first, a segment ending exactly at
// row 65536, an empty id in the gap there, 1500 short ones (30% empty), a
// giant one of 200000 rows, 1500 more short ones, two empty last.
inline std::vector<i64> large_lengths(segref::rng& g) {
    std::vector<i64> len = {0, 0, 5, 65536 - 5, 0};
    const std::vector<i64> small = segref::random_lengths(g, 3000, 30, 0.3);
    len.insert(len.end(), small.begin(), small.begin() + 1500);
    len.push_back(0);
    len.push_back(200000);
    len.insert(len.end(), small.begin() + 1500, small.end());
    len.push_back(0);
    len.push_back(0);
    return len;
}

// About 220000 rows in 150000 segments of at most 3 rows (30% empty), with
// 5000 empty ones in a row and one of 9000 rows in the middle: averages of
// one or two rows a segment, where the GPU derives offsets' and lengths' row
// keys in shared memory, with tiles of thousands of segments and of one.
inline std::vector<i64> short_lengths(segref::rng& g) {
    std::vector<i64> len = {0, 1};
    const std::vector<i64> small = segref::random_lengths(g, 150000, 3, 0.3);
    len.insert(len.end(), small.begin(), small.begin() + 70000);
    len.insert(len.end(), 5000, 0);
    len.push_back(9000);
    len.insert(len.end(), small.begin() + 70000, small.end());
    len.push_back(0);
    return len;
}

// A million segments, 2000 of them holding 1 to 100 rows and the rest
// empty, the first and last among the held: long gaps of empty segments,
// which the GPU's tile reduction hands to a kernel of their own.
inline std::vector<i64> sparse_lengths(segref::rng& g) {
    std::vector<i64> len(1000000, 0);
    for (int k = 0; k < 2000; ++k)
        len[static_cast<std::size_t>(segref::uniform_int(g, 0, 999999))] = segref::uniform_int(g, 1, 100);
    len.front() = 3;
    len.back() = 2;
    return len;
}

// The sorted form F over segment lengths `len`: offsets with 3 rows before
// the first segment and 4 after the last; corrupt: a bad index that drop
// must handle.
template <form F, class I>
seg_input<I> sorted_from_lengths(segref::rng& g, const std::vector<i64>& len, bool corrupt) {
    seg_input<I> s;
    s.kind = F;
    s.M = static_cast<i64>(len.size());
    if constexpr (F == form::sorted_ids) {
        s.idx = segref::sorted_ids_from_lengths<I>(len);
        s.n = static_cast<i64>(s.idx.size());
        if (corrupt)  // under drop an unsorted id turns the input into plain ids
            s.idx[static_cast<std::size_t>(segref::uniform_int(g, 0, s.n - 1))] = static_cast<I>(s.M + 1);
    } else if constexpr (F == form::offsets) {
        s.idx = segref::offsets_from_lengths<I>(len, 3);
        s.n = static_cast<i64>(s.idx.back()) + 4;
        if (corrupt) s.idx[7] = static_cast<I>(s.n + 2);
    } else {
        s.idx.assign(len.begin(), len.end());
        s.n = segref::total(len);
        if (corrupt) s.idx[9] = I(-2);
    }
    return s;
}

template <form F, class I>
seg_input<I> large_sorted(segref::rng& g, bool corrupt) {
    return sorted_from_lengths<F, I>(g, large_lengths(g), corrupt);
}

inline seg_input<std::int32_t> large_fixed(i64 size, i64 M) {
    seg_input<std::int32_t> s;
    s.kind = form::fixed;
    s.fixed_size = size;
    s.M = M;
    s.n = size * M;
    return s;
}

// Every sorted form over large_lengths (sorted ids, offsets, lengths),
// offsets and lengths over short_lengths, sorted ids over sparse_lengths,
// then fixed segments of
// `fixed_size` rows and of 3 rows, about 300000 rows each.
template <class T, class I, class Policies, class Mem>
void large_sorted_forms(segref::rng& g, const Policies& policies, const Mem& mem, i64 fixed_size) {
    large_every_state<form::sorted_ids, T, I>(g, policies, mem,
                                              [&](bool corrupt) { return large_sorted<form::sorted_ids, I>(g, corrupt); });
    large_every_state<form::offsets, T, I>(g, policies, mem,
                                           [&](bool corrupt) { return large_sorted<form::offsets, I>(g, corrupt); });
    large_every_state<form::lengths, T, I>(g, policies, mem,
                                           [&](bool corrupt) { return large_sorted<form::lengths, I>(g, corrupt); });
    large_every_state<form::offsets, T, I>(
        g, policies, mem,
        [&](bool corrupt) { return sorted_from_lengths<form::offsets, I>(g, short_lengths(g), corrupt); });
    large_every_state<form::lengths, T, I>(
        g, policies, mem,
        [&](bool corrupt) { return sorted_from_lengths<form::lengths, I>(g, short_lengths(g), corrupt); });
    large_every_state<form::sorted_ids, T, I>(
        g, policies, mem,
        [&](bool corrupt) { return sorted_from_lengths<form::sorted_ids, I>(g, sparse_lengths(g), corrupt); });
    for (i64 size : {fixed_size, i64(3)})
        large_every_state<form::fixed, T, std::int32_t>(g, policies, mem,
                                                        [&](bool) { return large_fixed(size, 300000 / size); });
}

// Wide rows (8 and 40 columns) over about 80000 rows of sorted segments: a
// giant one of 70000 rows, 500 short ones (30% empty), empty ones first and
// last. The GPU reduces rows of 8 columns or more a warp per segment.
template <class T, class I, class Policies, class Mem>
void large_wide_sorted_forms(segref::rng& g, const Policies& policies, const Mem& mem) {
    std::vector<i64> len = {0, 3, 70000, 0};
    const std::vector<i64> small = segref::random_lengths(g, 500, 30, 0.3);
    len.insert(len.end(), small.begin(), small.end());
    len.push_back(0);
    for (i64 width : {8, 40}) {
        large_every_state<form::sorted_ids, T, I>(
            g, policies, mem, [&](bool corrupt) { return sorted_from_lengths<form::sorted_ids, I>(g, len, corrupt); },
            width);
        large_every_state<form::offsets, T, I>(
            g, policies, mem, [&](bool corrupt) { return sorted_from_lengths<form::offsets, I>(g, len, corrupt); },
            width);
    }
}

} // namespace segtest
