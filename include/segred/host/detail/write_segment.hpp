// segred/host/detail/write_segment.hpp -- a host segment's states into out,
// arg out and counts, by the shared rules of core/finalize.hpp.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "../../core/config.hpp"
#include "../../core/finalize.hpp"
#include "../../core/reducers.hpp"
#include "sse_lanes.hpp"

namespace segred {
namespace host_detail {

template <class T, class O, class R>
void write_segment(const R& r, const options& opts, const rows_view<O>& out, std::int64_t s,
                   const state_t<R, T>* st, std::int64_t rows) {
    if (opts.counts_out) opts.counts_out[s] = rows;
    for (std::int64_t f = 0; f < out.width; ++f) detail::write_result<T>(r, opts, out, s, f, st[f], rows);
}

// write_segment as a callable for the loops. The common case -- one column,
// no counts, arg out or accumulate -- is decided once, not per segment: a
// segment then costs one store (its finalized state, or the precomputed
// empty value).
template <class T, class O, class R>
struct segment_writer {
    const R& r;
    const options& opts;
    rows_view<O> out;
    bool simple;
    O empty;

    segment_writer(const R& r_, const options& o, rows_view<O> out_)
        : r(r_), opts(o), out(out_),
          simple(out_.width == 1 && !o.counts_out && !o.accumulate_into && !(R::has_arg && o.arg_ptr)),
          empty(detail::empty_value<T, O>(r_, o)) {}

    // Inlined into the loops (one-row segments call it once per row); the
    // general case stays an out-of-line call.
    SEGRED_FORCE_INLINE void operator()(std::int64_t s, state_t<R, T>* st, std::int64_t rows) const {
        if (simple) {
            out.data[s] = rows == 0 ? empty : detail::to_output<O>(r.finalize(st[0]));
            return;
        }
        write_segment<T>(r, opts, out, s, st, rows);
    }

    // A one-column segment whose state the caller holds in a register: taken
    // by value, so the state need not go through memory on the common path.
    SEGRED_FORCE_INLINE void one(std::int64_t s, state_t<R, T> a, std::int64_t rows) const {
        if (simple) {
            out.data[s] = rows == 0 ? empty : detail::to_output<O>(r.finalize(a));
            return;
        }
        state_t<R, T> st[1] = {a};
        write_segment<T>(r, opts, out, s, st, rows);
    }

    // K segments s0, s0+1, .. of `rows` rows each: `simple` and the row
    // count are tested once for the batch, so the common case is a straight
    // loop of K stores that the compiler can vectorize.
    template <int K>
    SEGRED_FORCE_INLINE void equal_batch(std::int64_t s0, const state_t<R, T>* a, std::int64_t rows) const {
        if (simple) {
            if (rows == 0)
                for (int j = 0; j < K; ++j) out.data[s0 + j] = empty;
            else
                for (int j = 0; j < K; ++j) out.data[s0 + j] = detail::to_output<O>(r.finalize(a[j]));
            return;
        }
        equal_batch_general<K>(s0, a, rows);
    }

    // K empty segments s0, s0+1, .. where `simple` holds: K stores of the
    // empty value (the caller writes any of them that are not empty later).
    template <int K>
    SEGRED_FORCE_INLINE void empty_block(std::int64_t s0) const {
        for (int j = 0; j < K; ++j) out.data[s0 + j] = empty;
    }

    // K segments s0, s0+1, .. of rows[j] rows each: `simple` tested once.
    template <int K>
    SEGRED_FORCE_INLINE void mixed_batch(std::int64_t s0, const state_t<R, T>* a, const std::int64_t* rows) const {
        if (simple) {
            for (int j = 0; j < K; ++j)
                out.data[s0 + j] = rows[j] == 0 ? empty : detail::to_output<O>(r.finalize(a[j]));
            return;
        }
        for (int j = 0; j < K; ++j) write_segment<T>(r, opts, out, s0 + j, a + j, rows[j]);
    }

    // Whether mixed_lanes takes a group of runs' sums from their register:
    // sums, means, max and min of float or double written as the same type
    // (where `simple` holds too; a max or min is its own result).
    static constexpr bool lane_sums =
        (std::is_same<R, segred::sum>::value || std::is_same<R, segred::mean>::value ||
         std::is_base_of<detail::extremum<true>, R>::value || std::is_base_of<detail::extremum<false>, R>::value) &&
        std::is_same<O, T>::value && has_sse_lanes<T>;
#if SEGRED_HOST_SSE2
    // The sse_lanes<T>::width segments s0.. whose sums are the lanes of
    // `sums`, n their lengths in lane_lengths' form: a mean's divisions in
    // one instruction, empty segments filled by a mask, one store. (Through
    // states and mixed_batch, power-law sums ran 1.06x slower.) The
    // divisions are mean_of's, lane by lane, so the bits are write_result's.
    template <class Reg>
    SEGRED_FORCE_INLINE void mixed_lanes(std::int64_t s0, Reg sums, __m128i n) const {
        using V = sse_lanes<T>;
        if constexpr (std::is_same<R, segred::mean>::value) sums = V::div(sums, V::lengths_as_values(n));
        V::store(out.data + s0, V::fill_empty(sums, n, V::splat(empty)));
    }
#endif

    // Out of line, so the general case does not crowd the loops' registers.
    // Batches come from one-column loops only: a[j] is segment s0 + j's
    // whole state.
    template <int K>
    SEGRED_HOST_NOINLINE void equal_batch_general(std::int64_t s0, const state_t<R, T>* a, std::int64_t rows) const {
        for (int j = 0; j < K; ++j) write_segment<T>(r, opts, out, s0 + j, a + j, rows);
    }
};

// emit_one(emit, s, a, rows): a one-column state a, held in a register, to an
// emit callable: by value through emit.one where the callable has it (the
// segment_writer), else through a one-element array.
template <class Emit, class State, class = void>
struct has_emit_one : std::false_type {};
template <class Emit, class State>
struct has_emit_one<Emit, State,
                    std::void_t<decltype(std::declval<const Emit&>().one(std::int64_t{}, std::declval<State>(),
                                                                          std::int64_t{}))>> : std::true_type {};

template <class Emit, class State>
SEGRED_FORCE_INLINE void emit_one(Emit& emit, std::int64_t s, const State& a, std::int64_t rows) {
    if constexpr (has_emit_one<std::remove_reference_t<Emit>, State>::value) {
        emit.one(s, a, rows);
    } else {
        State st[1] = {a};
        emit(s, st, rows);
    }
}

// emit_equal_batch<K>(emit, s0, a, rows): K segments s0.. of `rows` rows
// each with states a[0..K), through emit.equal_batch where the callable has
// it.
template <int K, class Emit, class State, class = void>
struct has_equal_batch : std::false_type {};
template <int K, class Emit, class State>
struct has_equal_batch<K, Emit, State,
                       std::void_t<decltype(std::declval<const Emit&>().template equal_batch<K>(
                           std::int64_t{}, std::declval<const State*>(), std::int64_t{}))>> : std::true_type {};

template <int K, class Emit, class State>
SEGRED_FORCE_INLINE void emit_equal_batch(Emit& emit, std::int64_t s0, const State* a, std::int64_t rows) {
    if constexpr (has_equal_batch<K, std::remove_reference_t<Emit>, State>::value) {
        emit.template equal_batch<K>(s0, a, rows);
    } else {
        for (int j = 0; j < K; ++j) emit_one(emit, s0 + j, a[j], rows);
    }
}

// emit_mixed_batch<K>(emit, s0, a, rows): K segments s0.. of rows[j] rows
// each with states a[0..K), through emit.mixed_batch where the callable has
// it.
template <int K, class Emit, class State, class = void>
struct has_mixed_batch : std::false_type {};
template <int K, class Emit, class State>
struct has_mixed_batch<K, Emit, State,
                       std::void_t<decltype(std::declval<const Emit&>().template mixed_batch<K>(
                           std::int64_t{}, std::declval<const State*>(), std::declval<const std::int64_t*>()))>>
    : std::true_type {};

template <int K, class Emit, class State>
SEGRED_FORCE_INLINE void emit_mixed_batch(Emit& emit, std::int64_t s0, const State* a, const std::int64_t* rows) {
    if constexpr (has_mixed_batch<K, std::remove_reference_t<Emit>, State>::value) {
        emit.template mixed_batch<K>(s0, a, rows);
    } else {
        for (int j = 0; j < K; ++j) emit_one(emit, s0 + j, a[j], rows[j]);
    }
}

template <class T, class O, class R>
segment_writer<T, O, R> make_segment_writer(const R& r, const options& opts, rows_view<O> out) {
    return segment_writer<T, O, R>(r, opts, out);
}

} // namespace host_detail
} // namespace segred
