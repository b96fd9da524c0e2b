// segred/host/detail/layout.hpp -- every segment descriptor turned into one
// shape the CPU loops understand, after validating it.
//
// A layout lists, for each segment s, the positions k in
// [begin(s), end(s)); position k stands for value row row(k). Sorted forms
// use the rows themselves (row(k) == k); unsorted ids and subscripts are
// counting-sorted into a permutation that keeps each segment's rows in
// increasing order, which makes every reduction order -- and so every result
// bit -- independent of the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "../../core/checks.hpp"
#include "../../core/descriptors.hpp"
#include "../../core/options.hpp"
#include "big_buffer.hpp"
#include "parallel.hpp"

namespace segred {
namespace host_detail {

struct layout {
    std::int64_t M = 0;
    std::int64_t fixed_size = -1;         // >= 0: segment s is [s*size, (s+1)*size)
    const std::int64_t* starts = nullptr; // else: segment s is [starts[s], starts[s+1])
    const std::int64_t* perm = nullptr;   // nullptr: position k is row k
    big_array<std::int64_t> own_starts;   // storage when starts are not the caller's
    big_array<std::int64_t> own_perm;

    std::int64_t begin(std::int64_t s) const { return fixed_size >= 0 ? s * fixed_size : starts[s]; }
    std::int64_t end(std::int64_t s) const { return begin(s + 1); }
    std::int64_t row(std::int64_t k) const { return perm ? perm[k] : k; }
    // Number of positions, i.e. rows that belong to some segment.
    std::int64_t covered() const { return M == 0 ? 0 : end(M - 1) - begin(0); }
};

inline std::int64_t clamp_row(std::int64_t v, std::int64_t n) { return std::min(std::max<std::int64_t>(v, 0), n); }

// Offsets start at 0 or later, never decrease and end at n or before.
template <class I>
void check_offsets(const host_policy& p, const char* fn, const offsets_desc<I>& d, std::int64_t n) {
    if (static_cast<std::int64_t>(d.ptr[0]) < 0) detail::fail_negative(fn, "offsets", 0, d.ptr[0]);
    const std::int64_t bad = first_bad(p, d.M, [&](std::int64_t i) { return d.ptr[i + 1] < d.ptr[i]; });
    if (bad >= 0) detail::fail_decreasing(fn, "offsets", bad + 1, d.ptr[bad + 1], d.ptr[bad]);
    if (static_cast<std::int64_t>(d.ptr[d.M]) > n) detail::fail_past_end(fn, d.M, d.ptr[d.M], n);
}

template <class I>
layout build(const host_policy& p, const char* fn, const offsets_desc<I>& d, std::int64_t n, bounds_policy b) {
    layout L;
    L.M = d.M;
    if (d.ptr == nullptr) return L;  // M == 0 and n == 0: nothing to describe
    if (b == bounds_policy::check) check_offsets(p, fn, d, n);
    if (b != bounds_policy::drop && std::is_same<I, std::int64_t>::value) {
        L.starts = reinterpret_cast<const std::int64_t*>(d.ptr);
        return L;
    }
    L.own_starts = make_big_array<std::int64_t>(d.M + 1);
    std::int64_t* st = L.own_starts.get();
    if (b != bounds_policy::drop) {  // a plain widening copy
        parallel_chunks(p, d.M + 1, std::int64_t(1) << 16, [&](std::int64_t lo, std::int64_t hi) {
            for (std::int64_t s = lo; s < hi; ++s) st[s] = static_cast<std::int64_t>(d.ptr[s]);
        });
    } else {
        // drop: clamp into [0, n] and make non-decreasing by a running
        // maximum, so a decreasing offset empties the segments it would have
        // reversed.
        std::int64_t run = 0;
        for (std::int64_t s = 0; s <= d.M; ++s) st[s] = run = std::max(clamp_row(static_cast<std::int64_t>(d.ptr[s]), n), run);
    }
    L.starts = st;
    return L;
}

template <class I>
layout build(const host_policy& p, const char* fn, const lengths_desc<I>& d, std::int64_t n, bounds_policy b) {
    if (b == bounds_policy::check) {
        const std::int64_t bad = first_bad(p, d.M, [&](std::int64_t i) { return d.ptr[i] < 0; });
        if (bad >= 0) detail::fail_negative(fn, "lengths", bad, d.ptr[bad]);
    }
    layout L;
    L.M = d.M;
    L.own_starts = make_big_array<std::int64_t>(d.M + 1);
    std::int64_t* st = L.own_starts.get();
    std::int64_t run = 0;
    if (b == bounds_policy::drop) {  // lengths clamped at 0 and the sum at n: a serial scan
        for (std::int64_t s = 0; s < d.M; ++s) {
            st[s] = run;
            run = std::min(run + std::max<std::int64_t>(static_cast<std::int64_t>(d.ptr[s]), 0), n);
        }
    } else {
        // Exclusive sum in two passes over fixed chunks: chunk totals, then
        // each chunk's running sum from its offset.
        constexpr std::int64_t grain = std::int64_t(1) << 16;
        const std::int64_t chunks = (d.M + grain - 1) / grain;
        std::vector<std::int64_t> chunk_sum(static_cast<std::size_t>(chunks) + 1, 0);
        parallel_chunks(p, d.M, grain, [&](std::int64_t lo, std::int64_t hi) {
            std::int64_t t = 0;
            for (std::int64_t s = lo; s < hi; ++s) t += static_cast<std::int64_t>(d.ptr[s]);
            chunk_sum[static_cast<std::size_t>(lo / grain) + 1] = t;
        });
        for (std::size_t c = 1; c < chunk_sum.size(); ++c) chunk_sum[c] += chunk_sum[c - 1];
        parallel_chunks(p, d.M, grain, [&](std::int64_t lo, std::int64_t hi) {
            std::int64_t r = chunk_sum[static_cast<std::size_t>(lo / grain)];
            for (std::int64_t s = lo; s < hi; ++s) {
                st[s] = r;
                r += static_cast<std::int64_t>(d.ptr[s]);
            }
        });
        run = chunk_sum.back();
    }
    st[d.M] = run;
    if (b == bounds_policy::check && run != n) detail::fail_lengths_sum(fn, run, n);
    L.starts = st;
    return L;
}

inline layout build(const host_policy&, const char*, const fixed_desc& d, std::int64_t, bounds_policy) {
    layout L;
    L.M = d.M;
    L.fixed_size = d.size;
    return L;
}

// Counting sort of rows by segment id. id_of(i) gives row i's segment, or -1
// for a row to skip. Rows are split into blocks with a private histogram
// each; block b's rows of segment k land after those of blocks < b, so each
// segment lists its rows in increasing order (a stable sort).
template <class IdOf>
layout counting_sort(const host_policy& p, std::int64_t n, std::int64_t M, IdOf&& id_of) {
    layout L;
    L.M = M;
    // Histograms cost blocks*M words: only as many blocks as keep that near n.
    const std::int64_t budget = std::max<std::int64_t>(n, std::int64_t(1) << 20);
    const std::int64_t blocks =
        std::max<std::int64_t>(1, std::min<std::int64_t>({thread_count(p), budget / std::max<std::int64_t>(M, 1), n}));
    const big_array<std::int64_t> hist = make_zeroed_big_array<std::int64_t>(blocks * M);
    auto block_lo = [&](std::int64_t b) { return n / blocks * b + std::min(b, n % blocks); };
    parallel_blocks(p, blocks, [&](std::int64_t b) {
        std::int64_t* h = hist.get() + b * M;
        for (std::int64_t i = block_lo(b), hi = block_lo(b + 1); i < hi; ++i) {
            const std::int64_t k = id_of(i);
            if (k >= 0) ++h[k];
        }
    });
    L.own_starts = make_big_array<std::int64_t>(M + 1);
    std::int64_t run = 0;
    for (std::int64_t k = 0; k < M; ++k) {
        L.own_starts[static_cast<std::size_t>(k)] = run;
        for (std::int64_t b = 0; b < blocks; ++b) {
            std::int64_t& h = hist[static_cast<std::size_t>(b * M + k)];
            const std::int64_t c = h;
            h = run;  // becomes block b's next write position for segment k
            run += c;
        }
    }
    L.own_starts[static_cast<std::size_t>(M)] = run;
    L.own_perm = make_big_array<std::int64_t>(run);
    parallel_blocks(p, blocks, [&](std::int64_t b) {
        std::int64_t* h = hist.get() + b * M;
        for (std::int64_t i = block_lo(b), hi = block_lo(b + 1); i < hi; ++i) {
            const std::int64_t k = id_of(i);
            if (k >= 0) L.own_perm[static_cast<std::size_t>(h[k]++)] = i;
        }
    });
    L.starts = L.own_starts.get();
    L.perm = L.own_perm.get();
    return L;
}

template <class I>
void check_ids_in_range(const host_policy& p, const char* fn, const char* arg, const I* ids, std::int64_t n,
                        std::int64_t M) {
    const std::int64_t bad = first_bad(p, n, [&](std::int64_t i) {
        const std::int64_t k = static_cast<std::int64_t>(ids[i]);
        return k < 0 || k >= M;
    });
    if (bad >= 0) detail::fail_out_of_range(fn, arg, bad, static_cast<std::int64_t>(ids[bad]), M);
}

template <class I>
layout build(const host_policy& p, const char* fn, const ids_desc<I>& d, std::int64_t n, bounds_policy b) {
    if (b == bounds_policy::check) check_ids_in_range(p, fn, "ids", d.ptr, n, d.M);
    const std::int64_t M = d.M;
    return counting_sort(p, n, M, [&](std::int64_t i) {
        const std::int64_t k = static_cast<std::int64_t>(d.ptr[i]);
        return (k >= 0 && k < M) ? k : std::int64_t(-1);
    });
}

// The first row whose sorted id is out of range or smaller than the one
// before it, or -1.
template <class I>
std::int64_t first_bad_sorted_id(const host_policy& p, const sorted_ids_desc<I>& d, std::int64_t n) {
    const I* ids = d.ptr;
    const std::int64_t M = d.M;
    return first_bad(p, n, [&](std::int64_t i) {
        return ids[i] < 0 || static_cast<std::int64_t>(ids[i]) >= M || (i > 0 && ids[i] < ids[i - 1]);
    });
}

// One scan for both rules, so the message names the first bad row.
template <class I>
void check_sorted_ids(const host_policy& p, const char* fn, const sorted_ids_desc<I>& d, std::int64_t n) {
    const std::int64_t bad = first_bad_sorted_id(p, d, n);
    if (bad < 0) return;
    const I* ids = d.ptr;
    if (ids[bad] < 0 || static_cast<std::int64_t>(ids[bad]) >= d.M)
        detail::fail_out_of_range(fn, "sorted_ids", bad, ids[bad], d.M);
    detail::fail_decreasing(fn, "sorted_ids", bad, ids[bad], ids[bad - 1]);
}

template <class I>
void check_subscripts(const host_policy& p, const char* fn, const subscripts_desc<I>& d, std::int64_t n) {
    const std::int64_t bad = first_bad(p, n, [&](std::int64_t i) { return d.linear_index(i) < 0; });
    if (bad < 0) return;
    int dim = 0;
    while (dim < d.ndim) {
        const std::int64_t v = static_cast<std::int64_t>(d.ptr[bad * d.ndim + dim]);
        if (v < 0 || v >= d.shape[dim]) break;
        ++dim;
    }
    detail::fail_subscript(fn, bad, dim, d.ptr[bad * d.ndim + dim], d.shape[dim]);
}

template <class I>
layout build(const host_policy& p, const char* fn, const sorted_ids_desc<I>& d, std::int64_t n, bounds_policy b) {
    const I* ids = d.ptr;
    const std::int64_t M = d.M;
    if (b == bounds_policy::check) {
        check_sorted_ids(p, fn, d, n);
    } else if (b == bounds_policy::drop && first_bad_sorted_id(p, d, n) >= 0) {
        // Under drop, order is only a hint: rows still go to their own id.
        return build(p, fn, ids_desc<I>{ids, M}, n, b);
    }
    // Segment s starts at the first row whose id is >= s: each row where the
    // id changes fills the starts of the ids it steps over.
    layout L;
    L.M = M;
    L.own_starts = make_big_array<std::int64_t>(M + 1);
    std::int64_t* st = L.own_starts.get();
    parallel_chunks(p, n + 1, std::int64_t(1) << 16, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t i = lo; i < hi; ++i) {
            const std::int64_t prev = i == 0 ? -1 : static_cast<std::int64_t>(ids[i - 1]);
            const std::int64_t cur = i == n ? M : static_cast<std::int64_t>(ids[i]);
            for (std::int64_t s = prev + 1; s <= cur; ++s) st[s] = i;
        }
    });
    L.starts = st;
    return L;
}

template <class I>
layout build(const host_policy& p, const char* fn, const subscripts_desc<I>& d, std::int64_t n, bounds_policy b) {
    const std::int64_t M = d.num_segments();
    if (b == bounds_policy::check) check_subscripts(p, fn, d, n);
    return counting_sort(p, n, M, [&](std::int64_t i) { return d.linear_index(i); });
}

} // namespace host_detail
} // namespace segred
