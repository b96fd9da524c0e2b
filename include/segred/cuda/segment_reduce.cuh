// segred/cuda/segment_reduce.cuh -- segment_reduce / accumarray / bincount /
// gather_backward on the GPU.
//
// Synchronization: none, except that the `check` bounds policy (the
// default) reads its verdict back to the host before anything is written,
// so it waits for the stream once per descriptor scan. `drop` and
// `unchecked` never synchronize.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "../core/descriptors.hpp"
#include "../core/finalize.hpp"
#include "../core/numeric.hpp"
#include "../core/options.hpp"
#include "../core/reducers.hpp"
#include "../core/views.hpp"
#include "detail/bucket_scatter.cuh"
#include "detail/extremum_scatter.cuh"
#include "detail/layout.cuh"
#include "detail/reduce_layout.cuh"
#include "detail/scatter_kernels.cuh"
#include "detail/short_fixed.cuh"
#include "detail/small_m_reduce.cuh"
#include "detail/sort_reduce.cuh"
#include "detail/stream_reduce.cuh"
#include "detail/tile_claim_reduce.cuh"
#include "detail/tile_sort_reduce.cuh"
#include "detail/tile_reduce.cuh"
#include "detail/validate.cuh"
#include "policy.cuh"

namespace segred {
namespace cuda {
namespace detail {

// Whether the scatter can add straight into out: the reducer's total is the
// output itself and an empty segment's output is 0, exactly what the adds
// leave there (with accumulate, an empty segment keeps out, as adding nothing
// does). Counts go into int64 outputs, and, where 32-bit adds are the faster
// ones (narrow), into 32-bit integer outputs from 0 when fewer than 2^31
// rows come (no count can wrap).
template <class T, class O, class R>
bool scatters_into_out(const rows_view<O>& out, std::int64_t n, bool narrow, const options& opts) {
    using A = segred::detail::accum_t<T>;
    constexpr bool sum_into_total = std::is_same<R, segred::sum>::value && std::is_same<O, A>::value;
    constexpr bool counts = std::is_same<R, segred::count>::value;
    constexpr bool count_into_int64 = counts && std::is_same<O, std::int64_t>::value;
    constexpr bool count_into_int32 = counts && std::is_integral<O>::value && sizeof(O) == 4;
    if (opts.counts_out) return false;
    if (count_into_int32)
        return narrow && out.width == 1 && n < (std::int64_t(1) << 31) && !opts.accumulate_into &&
               segred::detail::zero_fill(opts);
    if (!(sum_into_total || (count_into_int64 && out.width == 1))) return false;
    return opts.accumulate_into || segred::detail::zero_fill(opts);
}

// Float sums into F columns whose rows take four columns a vector atomic
// (rows_add_in_vectors): launched, and true; else false.
template <class T, class A, class SegOf>
bool scatter_in_columns4(const par_t& p, rows_view<const T> values, SegOf seg_of, std::int64_t F, A* acc,
                         count_sink counts) {
    if constexpr (adds_in_vectors<T, A>) {
        if (rows_add_in_vectors(values, acc, F)) {
            scatter_columns4_kernel<T><<<grid_for(scatter_work(values.n, values.width, true)), block_threads, 0,
                                         p.stream>>>(values, seg_of, acc, counts);
            return true;
        }
    }
    return false;
}

template <class T, class O, class R, class SegOf>
void scatter_reduce(const par_t& p, rows_view<const T> values, SegOf seg_of, std::int64_t M, rows_view<O> out,
                    const R& r, const options& opts) {
    using A = segred::detail::accum_t<T>;
    constexpr bool sums = !std::is_same<R, segred::count>::value;
    const std::int64_t F = out.width;
    // Counts by 32-bit adds where 64-bit counts would not fit in L2.
    const bool narrow = M * std::int64_t(sizeof(unsigned long long)) > device_attribute(cudaDevAttrL2CacheSize);
    const bool direct = scatters_into_out<T, O, R>(out, values.n, narrow, opts);
    const bool counted = !direct && !sum_needs_no_counts<R>(opts);
    temp_buffer<A> acc(p, sums && !direct ? M * F : 0);
    temp_buffer<unsigned long long> counts(p, counted ? M : 0);
    A* acc_ptr = acc.get();
    count_sink count_to;
    if (direct) {
        acc_ptr = sums ? reinterpret_cast<A*>(out.data) : nullptr;
        if (!opts.accumulate_into)
            SEGRED_CUDA_CHECK(cudaMemsetAsync(out.data, 0, static_cast<std::size_t>(out.size()) * sizeof(O), p.stream));
    } else if (sums) {
        SEGRED_CUDA_CHECK(cudaMemsetAsync(acc_ptr, 0, static_cast<std::size_t>(M * F) * sizeof(A), p.stream));
    }
    if (counted)
        SEGRED_CUDA_CHECK(
            cudaMemsetAsync(counts.get(), 0, static_cast<std::size_t>(M) * sizeof(unsigned long long), p.stream));
    // 64-bit counts from 0 stay below 2^32 with fewer than 2^32 rows; an
    // accumulated int64 out may already hold anything.
    const bool below_2_32 = values.n < (std::int64_t(1) << 32);
    auto counts_at = [&](void* words, bool from_zero) {
        if (!narrow) return count_sink{static_cast<unsigned long long*>(words)};
        return count_sink{nullptr, static_cast<unsigned int*>(words), 2, !(from_zero && below_2_32)};
    };
    if (direct && !sums)
        count_to = sizeof(O) == 4 ? count_sink{nullptr, reinterpret_cast<unsigned int*>(out.data)}
                                  : counts_at(out.data, !opts.accumulate_into);
    if (counted) count_to = counts_at(counts.get(), true);
    const bool count_words = count_to.wide != nullptr || count_to.narrow != nullptr;
    // One column or wider rows, each kernel with its own loop only.
    auto launch = [&](auto one_column) {
        constexpr bool one = decltype(one_column)::value;
        // One column into more accumulators than the L2 holds: rows
        // partitioned by id range, then summed in shared memory.
        if constexpr (one) {
            if (bucket_scatter<sums, T, A>(p, values, seg_of, M, acc_ptr, count_to)) return;
        }
        const auto shared_kernel = scatter_shared_kernel<sums, T, A, one, SegOf>;
        const auto split_kernel = scatter_shared_kernel<sums, T, A, true, SegOf, true>;  // one column only
        const std::size_t limit = one ? std::min(private_shared_limit(shared_kernel, true),
                                                 private_shared_limit(split_kernel, true))
                                      : private_shared_limit(shared_kernel, false);
        const shared_share share = scatter_shared_ids<A>(values.n, M, F, sums, count_words, limit);
        auto launch_shared_as = [&](auto kernel, const shared_share& s, count_sink c) {
            const private_launch grid =
                plan_private_launch(kernel, s.bytes, scatter_work(values.n, F), shared_scatter_threads(one));
            kernel<<<grid.blocks, grid.threads, s.bytes, p.stream>>>(values, seg_of, M, s.held, F, acc_ptr, c);
        };
        auto launch_shared = [&](auto kernel) { launch_shared_as(kernel, share, count_to); };
        if constexpr (one) {
            // Sums with counts (means; sums with counts out, a fill value or
            // accumulate) whose totals and counts together would leave ids
            // to global atomics: the sums in one pass and the counts in
            // another, each holding its own ids in shared memory
            // (counts_together_leave_out, counts_alone_hold_more).
            if (sums && count_words && counts_together_leave_out(M, share)) {
                const shared_share alone = scatter_shared_ids<A>(values.n, M, F, true, false, limit);
                const auto count_kernel = scatter_shared_kernel<false, T, A, true, SegOf>;
                const auto count_split_kernel = scatter_shared_kernel<false, T, A, true, SegOf, true>;
                const shared_share counted = scatter_shared_ids<A>(
                    values.n, M, F, false, true,
                    std::min(private_shared_limit(count_kernel, true), private_shared_limit(count_split_kernel, true)));
                if (counts_alone_hold_more(share, alone, counted)) {
                    launch_shared_as(alone.held == M ? shared_kernel : split_kernel, alone, count_sink{});
                    launch_shared_as(counted.held == M ? count_kernel : count_split_kernel, counted, count_to);
                    return;
                }
            }
        }
        if (share.held == M) {
            launch_shared(shared_kernel);
        } else if (share.held > 0) {
            launch_shared(split_kernel);  // share.held < M only with one column
        } else if (one || !(sums && scatter_in_columns4(p, values, seg_of, F, acc_ptr, count_to))) {
            scatter_global_kernel<sums, T, A, one><<<grid_for(scatter_work(values.n, F)), block_threads, 0,
                                                     p.stream>>>(values, seg_of, F, acc_ptr, count_to);
        }
    };
    if (values.n > 0) {
        if (F == 1) launch(std::true_type{});
        else launch(std::false_type{});
        SEGRED_CUDA_CHECK(cudaGetLastError());
    }
    if (direct) return;
    finish_scatter_kernel<T><<<grid_for(M * F), block_threads, 0, p.stream>>>(acc_ptr, counts.get(), M, out, r,
                                                                                opts);
    SEGRED_CUDA_CHECK(cudaGetLastError());
}

} // namespace detail

template <class T, class Seg, class O, class R>
void segment_reduce_impl(const par_t& p, const char* fn, rows_view<const T> values, const Seg& seg,
                         rows_view<O> out, const R& r, const options& opts) {
    constexpr bool unsorted = Seg::kind == segment_kind::ids || Seg::kind == segment_kind::subscripts;
    if constexpr (unsorted) {
        // Atomic paths: sum/mean/count unless deterministic is asked for and
        // the adds are floating-point (they round differently in another
        // order; counts and sums of integers, in 64-bit integers, are exact
        // in any order); min/max and their args always (the packed key's
        // maximum does not depend on the order).
        constexpr bool exact_adds =
            std::is_same<R, segred::count>::value || std::is_integral<segred::detail::accum_t<T>>::value;
        const bool adds = detail::is_atomic_reducer<R>::value && (exact_adds || !opts.deterministic_mode);
        const bool extremum = detail::extremum_scatter_fits<T, R>(values, opts);
        if (adds || extremum) {
            std::int64_t M = 0;
            if constexpr (Seg::kind == segment_kind::ids) {
                if (opts.bounds_mode == bounds_policy::check) detail::check_ids(p, fn, "ids", seg.ptr, values.n, seg.M);
                M = seg.M;
            } else {
                if (opts.bounds_mode == bounds_policy::check) detail::check_subscripts(p, fn, seg, values.n);
                M = seg.num_segments();
            }
            if constexpr (detail::is_atomic_reducer<R>::value) {
                detail::scatter_reduce(p, values, detail::segment_of_row<Seg>{seg}, M, out, r, opts);
            } else if constexpr (detail::extremum_scatter_applies<T, R>()) {
                detail::extremum_scatter(p, values, detail::segment_of_row<Seg>{seg}, M, out, r, opts);
            }
            return;
        }
    }
    const bool one_column = values.width == 1 && out.width == 1 && values.n > 0;
    if constexpr (Seg::kind == segment_kind::ids && detail::is_atomic_reducer<R>::value) {
        // Deterministic sums of one column: into few segments, private
        // totals per thread combined in a fixed order (small_m_reduce.cuh);
        // into segments whose totals fit in a block's shared memory, tiles
        // added in rounds of claimed ids (tile_claim_reduce.cuh) where rows
        // rarely share an id within a tile and the owners fit too, else tiles
        // sorted by id in shared memory (tile_sort_reduce.cuh); else values
        // sorted by id, then the tile reduction (sort_reduce.cuh). Under
        // drop, rows of bad ids must go nowhere, so the (id, row) sort below
        // handles them.
        if (one_column && seg.M > 0 && opts.bounds_mode != bounds_policy::drop) {
            if (opts.bounds_mode == bounds_policy::check) detail::check_ids(p, fn, "ids", seg.ptr, values.n, seg.M);
            using I = typename Seg::index_type;
            // Only floating-point sums come here (integer ones are exact on
            // the atomic path): the sorted-tile kernels are built for no other.
            constexpr bool float_sums = !std::is_same<R, segred::count>::value &&
                                        std::is_floating_point<segred::detail::accum_t<T>>::value;
            if (detail::small_m_applies<T, R>(seg.M)) {
                detail::small_m_then_finish(p, values, seg.ptr, seg.M, out, r, opts);
                return;
            }
            if constexpr (float_sums) {
                if (detail::tile_claim_applies<T, I, R>(seg.M, values.n, opts)) {
                    detail::tile_claim_then_finish(p, values, seg.ptr, seg.M, out, r, opts);
                    return;
                }
                if (detail::tile_sort_applies<T, I, R>(seg.M, opts)) {
                    detail::tile_sort_then_finish(p, values, seg.ptr, seg.M, out, r, opts);
                    return;
                }
            }
            detail::sort_then_reduce(p, values, seg.ptr, seg.M, out, r, opts);
            return;
        }
    }
    // One-column rows of sorted forms: the row-parallel tile reduction.
    if constexpr (Seg::kind == segment_kind::sorted_ids) {
        if (one_column && opts.bounds_mode != bounds_policy::drop) {
            if (opts.bounds_mode == bounds_policy::check) detail::check_sorted_ids(p, fn, seg, values.n);
            using I = typename Seg::index_type;
            detail::tile_reduce<I>(p, values, detail::id_keys<I>{seg.ptr}, seg.M, out, r, opts);
            return;
        }
    }
    if constexpr (Seg::kind == segment_kind::fixed) {
        // Short segments of one column: a block's rows through shared
        // memory in 16-byte vectors, a thread a segment (short_fixed.cuh).
        if (one_column && detail::short_fixed_applies(values.data, seg.size, seg.M)) {
            detail::short_fixed_reduce(p, values.data, seg.size, seg.M, out, r, opts);
            return;
        }
        // One-row segments whose values are not 16-byte aligned: a thread a row.
        if (one_column && seg.size == 1) {  // M == n > 0 (checked up front)
            detail::one_row_segments_kernel<T><<<detail::grid_for(values.n), detail::block_threads, 0, p.stream>>>(
                values, out, r, opts);
            SEGRED_CUDA_CHECK(cudaGetLastError());
            return;
        }
        if (one_column && seg.size > 0 && !detail::fixed_units_apply<T>(seg.size)) {
            detail::reduce_computed_keys(p, values, detail::fixed_keys{seg.size, seg.M}, seg.M, out, r, opts, seg.size,
                                         detail::stream_min_fixed_rows, detail::fixed_rows_chunked<T>(seg.size));
            return;
        }
        // Fixed segments need no layout in memory: starts are s * size. Rows
        // of several columns come here, and short segments of one column
        // (detail::fixed_units_apply): a thread (or two) a segment.
        detail::reduce_positions(p, values, detail::fixed_starts{seg.size}, nullptr, seg.M, out, r, opts, seg.size);
    } else {
        // One-column segments from starts: the tile reduction. Short segments
        // derive their keys in shared memory (as labels of 16 or 32 bits, so
        // for M below INT_MAX) from the caller's offsets in place, whatever
        // their type (under drop, only once they are made monotone); long
        // ones compute them from int64 starts, and the longest are streamed
        // (reduce_computed_keys).
        constexpr bool starts_form = Seg::kind == segment_kind::offsets || Seg::kind == segment_kind::lengths;
        const std::int64_t M = seg.num_segments();
        // One column in segments of 6 to 79 rows on average (71 for the arg
        // forms): a thread (or two) a segment, as for rows of several
        // columns (detail::column_units_apply).
        const bool units = one_column && detail::column_units_apply<R>(values.n, M);
        const bool derive = one_column && !units && M > 0 && M < std::numeric_limits<int>::max() &&
                            values.n <= M * detail::derive_max_rows_per_segment;
        if constexpr (Seg::kind == segment_kind::offsets) {
            if (derive && opts.bounds_mode != bounds_policy::drop) {
                if (opts.bounds_mode == bounds_policy::check) detail::check_offsets(p, fn, seg, values.n);
                using I = typename Seg::index_type;
                detail::tile_reduce<detail::derived_label>(p, values, detail::start_keys<I, true>{seg.ptr, M}, M, out,
                                                           r, opts);
                return;
            }
            // Long segments of one column, streamed from the caller's offsets
            // in place: the layout's int64 copy of them costs a pass and two
            // launches the stream cannot overlap (2^26 rows, H100, int32
            // offsets: fp32 1.01-1.02x, fp16 1.03x; under drop the layout
            // makes them monotone first).
            if (one_column && !units && M > 0 && opts.bounds_mode != bounds_policy::drop &&
                values.n / M >= detail::stream_min_avg_rows && detail::vectors_apply(values.data)) {
                if (opts.bounds_mode == bounds_policy::check) detail::check_offsets(p, fn, seg, values.n);
                using I = typename Seg::index_type;
                detail::stream_reduce(p, values, detail::start_keys<I, false>{seg.ptr, M}, M, out, r, opts);
                return;
            }
            // Rows of several columns, and units of one, read the caller's
            // offsets in place (under drop, only once they are made monotone,
            // in the layout).
            if ((!one_column || units) && opts.bounds_mode != bounds_policy::drop) {
                if (opts.bounds_mode == bounds_policy::check) detail::check_offsets(p, fn, seg, values.n);
                using I = typename Seg::index_type;
                detail::reduce_positions(p, values, detail::offset_starts<I>{seg.ptr}, nullptr, M, out, r, opts);
                return;
            }
        }
        if constexpr (Seg::kind == segment_kind::lengths) {
            // Short segments of one column from lengths: their starts as
            // 32-bit offsets, read in place as the caller's offsets are
            // (under every bounds policy: the starts are made monotone).
            if ((derive || units) && detail::starts32_fit(values.n)) {
                const auto starts = detail::lengths_to_starts32(p, fn, seg, values.n, opts.bounds_mode);
                if (derive)
                    detail::tile_reduce<detail::derived_label>(
                        p, values, detail::start_keys<std::int32_t, true>{starts.get(), M}, M, out, r, opts);
                else
                    detail::reduce_positions(p, values, detail::offset_starts<std::int32_t>{starts.get()}, nullptr,
                                             M, out, r, opts);
                return;
            }
        }
        const detail::device_layout L = detail::build_layout(p, fn, seg, values.n, opts.bounds_mode);
        if constexpr (starts_form) {
            if (one_column && !units && L.M > 0) {
                if (derive)
                    detail::tile_reduce<detail::derived_label>(
                        p, values, detail::start_keys<std::int64_t, true>{L.starts, M}, M, out, r, opts);
                else
                    detail::reduce_computed_keys(p, values, detail::start_keys<std::int64_t, false>{L.starts, M}, M,
                                                 out, r, opts, values.n / M, detail::stream_min_avg_rows,
                                                 values.n >= M * detail::chunk_min_avg_rows);
                return;
            }
        }
        detail::reduce_layout(p, values, L, out, r, opts);
    }
}

} // namespace cuda
} // namespace segred
