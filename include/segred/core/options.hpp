// segred/core/options.hpp -- the one options struct every algorithm takes.
//
//   segred::options{}.fill_nan().arg_out(arg).bounds(segred::bounds_policy::drop)
#pragma once

#include <cstdint>

namespace segred {

// What to do with bad input: ids out of range, non-monotonic offsets or
// sorted ids, lengths that do not sum to n.
enum class bounds_policy {
    check,      // throw segred::error before writing anything (default)
    drop,       // skip rows that map nowhere; clamp offsets into [0, n]
    unchecked,  // the caller promises valid input; no validation scan
};

// Value an empty segment gets (unless accumulate is on, which keeps out).
enum class fill_kind {
    zero,      // 0 (default, as torch_scatter and TF segment_sum)
    identity,  // the reducer's identity: -inf for max, 1 for prod, ...
    nan,       // quiet NaN (floating-point outputs only)
    constant,  // fill_value
};

struct options {
    fill_kind fill_mode = fill_kind::zero;
    double fill_value = 0.0;
    std::int64_t* counts_out = nullptr;   // [M] rows per segment
    std::int64_t* arg_ptr = nullptr;      // [M, width] winning row of min/max
    bool accumulate_into = false;         // combine with existing out
    bounds_policy bounds_mode = bounds_policy::check;
    bool deterministic_mode = false;      // identical bits run to run on every path
    bool split_ties_mode = false;         // min/max backward: share among tied rows

    options& fill(double value) {
        fill_mode = fill_kind::constant;
        fill_value = value;
        return *this;
    }
    options& fill_identity() {
        fill_mode = fill_kind::identity;
        return *this;
    }
    options& fill_nan() {
        fill_mode = fill_kind::nan;
        return *this;
    }
    options& counts(std::int64_t* per_segment_counts) {
        counts_out = per_segment_counts;
        return *this;
    }
    options& arg_out(std::int64_t* winning_rows) {
        arg_ptr = winning_rows;
        return *this;
    }
    options& accumulate(bool on = true) {
        accumulate_into = on;
        return *this;
    }
    options& bounds(bounds_policy policy) {
        bounds_mode = policy;
        return *this;
    }
    options& deterministic(bool on = true) {
        deterministic_mode = on;
        return *this;
    }
    options& split_ties(bool on = true) {
        split_ties_mode = on;
        return *this;
    }
};

} // namespace segred
