// segred/host/segment_reduce.hpp -- segment_reduce / accumarray / bincount /
// gather_backward on the CPU.
#pragma once

#include <cstdint>
#include <type_traits>

#include "../core/finalize.hpp"
#include "../core/options.hpp"
#include "../core/policy.hpp"
#include "../core/reducers.hpp"
#include "../core/views.hpp"
#include "detail/arg_scatter.hpp"
#include "detail/counted_sum.hpp"
#include "detail/extremum_scatter.hpp"
#include "detail/layout.hpp"
#include "detail/row_fold.hpp"
#include "detail/scatter.hpp"
#include "detail/segment_loops.hpp"
#include "detail/sorted_runs.hpp"
#include "detail/write_segment.hpp"

namespace segred {
namespace host_detail {

// Reduce the segments of a built layout into out (shared by segment_reduce
// and the fused gather_segment_reduce, whose layout maps positions to rows).
template <class T, class O, class R>
void reduce_layout(const host_policy& p, const layout& L, rows_view<const T> values, rows_view<O> out, const R& r,
                   const options& opts) {
    reduce_segments(p, L, out.width, make_row_fold(r, values, out.width), make_segment_writer<T>(r, opts, out));
}

// Whether an empty segment's output equals what its untouched initial state
// writes: a sum or count (initial 0) with a zero fill, no counts and no
// accumulate. Then the scatter need not record which segments got rows.
template <class R>
bool empty_is_initial(const options& opts) {
    constexpr bool zero_start = std::is_same<R, segred::sum>::value || std::is_same<R, segred::count>::value;
    return zero_start && !opts.counts_out && !opts.accumulate_into && detail::zero_fill(opts);
}

// The output itself as the scatter's states, where it can be (see
// scatter_segments): an output of exactly the state type. Only asked for
// when empty_is_initial holds, so finalize is the identity (sum, count).
template <class T, class R, class O>
state_t<R, T>* direct_states(rows_view<O> out) {
    if constexpr (std::is_same<state_t<R, T>, O>::value) {
        return out.data;
    } else {
        (void)out;
        return nullptr;
    }
}

// Whether a state is a sum with its row count (mean's).
template <class S>
struct counts_its_rows : std::false_type {};
template <class A>
struct counts_its_rows<detail::sum_count<A>> : std::true_type {};

// A scatter into states that count their rows (counts_its_rows, counted):
// a segment's row count is its first state's, so nothing a row is recorded
// beside them.
template <class T, class O, class R, class IdOf>
void scatter_counting_states(const host_policy& p, rows_view<const T> values, std::int64_t M, rows_view<O> out,
                             const R& r, const options& opts, IdOf&& id_of) {
    const auto emit = make_segment_writer<T>(r, opts, out);
    scatter_segments<no_tally>(p, values.n, M, out.width, make_row_fold(r, values, out.width), id_of,
                               [&](std::int64_t s, state_t<R, T>* st, std::int64_t) { emit(s, st, st[0].n); });
}

// Unsorted ids: a direct scatter, with id_of(i) the segment of row i or -1.
template <class T, class O, class R, class IdOf>
void scatter_reduce(const host_policy& p, rows_view<const T> values, std::int64_t M, rows_view<O> out, const R& r,
                    const options& opts, IdOf&& id_of) {
    if constexpr (counted_fits<T, R>) {
        // Means, and sums with counts, of float sums: the count in a 32-bit
        // half of an 8-byte state (counted_sum.hpp), where a mean's state
        // takes 16 bytes and a sum's counts an int64 array beside it.
        if ((std::is_same<R, segred::mean>::value || opts.counts_out) && counted_applies(values.n)) {
            scatter_counting_states(p, values, M, out, counted<R>{}, opts, id_of);
            return;
        }
    }
    const auto folder = make_row_fold(r, values, out.width);
    const auto emit = make_segment_writer<T>(r, opts, out);
    if constexpr (row_fold<T, R>::arg_extremum != 0) {
        if (out.width == 1 && arg_scatter_applies<detail::compare_t<T>>(p, M)) {  // see arg_scatter.hpp
            arg_scatter(p, values, M, r, opts.counts_out != nullptr, id_of, emit);
            return;
        }
    }
    if (opts.counts_out) {
        scatter_segments<row_counts>(p, values.n, M, out.width, folder, id_of, emit);
        return;
    }
    if (empty_is_initial<R>(opts)) {
        scatter_segments<no_tally>(p, values.n, M, out.width, folder, id_of, emit, direct_states<T, R>(out));
        return;
    }
    if constexpr (extremum_scatter_fits<T, R>) {
        if (extremum_scatter_applies<T, R>(M, out.width)) {  // see extremum_scatter.hpp
            extremum_scatter(p, values.n, M, out.width, folder, id_of, emit);
            return;
        }
    }
    if constexpr (counts_its_rows<state_t<R, T>>::value) {
        // A mean's state counts its rows, so the count tells an empty
        // segment: no byte a row is marked beside it (2-core AMD EPYC VM,
        // 2^24 uniform ids into 16384 fp32 means on one thread: about 2x
        // faster without the marks, 84.5 -> 36.4 ms in one noisy run).
        scatter_counting_states(p, values, M, out, r, opts, id_of);
        return;
    }
    scatter_segments<row_seen>(p, values.n, M, out.width, folder, id_of, emit);
}

} // namespace host_detail

template <class T, class Seg, class O, class R>
void segment_reduce_impl(const host_policy& p, const char* fn, rows_view<const T> values, const Seg& seg,
                         rows_view<O> out, const R& r, const options& opts) {
    const host_detail::layout L = host_detail::build(p, fn, seg, values.n, opts.bounds_mode);
    host_detail::reduce_layout(p, L, values, out, r, opts);
}

template <class T, class I, class O, class R>
void segment_reduce_impl(const host_policy& p, const char* fn, rows_view<const T> values, const ids_desc<I>& seg,
                         rows_view<O> out, const R& r, const options& opts) {
    if (opts.bounds_mode == bounds_policy::check) host_detail::check_ids_in_range(p, fn, "ids", seg.ptr, values.n, seg.M);
    const I* ids = seg.ptr;
    const std::int64_t M = seg.M;
    host_detail::scatter_reduce(p, values, M, out, r, opts, [ids, M](std::int64_t i) {
        const std::int64_t k = static_cast<std::int64_t>(ids[i]);
        return (k >= 0 && k < M) ? k : std::int64_t(-1);
    });
}

template <class T, class I, class O, class R>
void segment_reduce_impl(const host_policy& p, const char* fn, rows_view<const T> values,
                         const subscripts_desc<I>& seg, rows_view<O> out, const R& r, const options& opts) {
    if (opts.bounds_mode == bounds_policy::check) host_detail::check_subscripts(p, fn, seg, values.n);
    host_detail::scatter_reduce(p, values, seg.num_segments(), out, r, opts,
                                [&seg](std::int64_t i) { return seg.linear_index(i); });
}

// Offsets other than int64 under check/unchecked: read in place.
template <class T, class I, class O, class R>
void segment_reduce_impl(const host_policy& p, const char* fn, rows_view<const T> values, const offsets_desc<I>& seg,
                         rows_view<O> out, const R& r, const options& opts) {
    if (opts.bounds_mode == bounds_policy::drop || std::is_same<I, std::int64_t>::value || seg.ptr == nullptr) {
        const host_detail::layout L = host_detail::build(p, fn, seg, values.n, opts.bounds_mode);
        host_detail::reduce_layout(p, L, values, out, r, opts);
        return;
    }
    if (opts.bounds_mode == bounds_policy::check) host_detail::check_offsets(p, fn, seg, values.n);
    host_detail::reduce_segments(p, host_detail::offsets_segments<I>{seg.ptr, seg.M}, out.width,
                                 host_detail::make_row_fold(r, values, out.width),
                                 host_detail::make_segment_writer<T>(r, opts, out));
}

// Sorted ids: runs of equal ids, straight from the ids (no starts array).
template <class T, class I, class O, class R>
void segment_reduce_impl(const host_policy& p, const char* fn, rows_view<const T> values,
                         const sorted_ids_desc<I>& seg, rows_view<O> out, const R& r, const options& opts) {
    if (opts.bounds_mode == bounds_policy::check) {
        host_detail::check_sorted_ids(p, fn, seg, values.n);
    } else if (opts.bounds_mode == bounds_policy::drop && host_detail::first_bad_sorted_id(p, seg, values.n) >= 0) {
        // Under drop, order is only a hint: rows still go to their own id.
        segment_reduce_impl(p, fn, values, ids_desc<I>{seg.ptr, seg.M}, out, r, opts);
        return;
    }
    host_detail::reduce_sorted_runs(
        p, seg.ptr, values.n, seg.M, out.width, host_detail::make_row_fold(r, values, out.width),
        host_detail::make_segment_writer<T>(r, opts, out));
}

} // namespace segred
