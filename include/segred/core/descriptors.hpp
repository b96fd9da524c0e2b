// segred/core/descriptors.hpp -- how rows map to segments.
//
//   offsets(ptr, M)      CSR: M+1 non-decreasing offsets into the rows
//   lengths(ptr, M)      M non-negative lengths summing to n
//   sorted_ids(ptr, M)   one non-decreasing id in [0, M) per row
//   ids(ptr, M)          one id in [0, M) per row, any order
//   fixed(size, M)       M consecutive segments of `size` rows (n == size * M)
//   subscripts(ptr, {d0, d1, ...})
//                        N-D subscripts, one [ndim] row per value row, into an
//                        output of shape d0 x d1 x ... stored row-major (C
//                        order, as numpy-groupies); 0-based, unlike MATLAB.
//
// Descriptors are small values that hold pointers; they are passed by value to
// kernels, so they hold no std:: containers.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "config.hpp"

namespace segred {

enum class segment_kind { offsets, lengths, sorted_ids, ids, fixed, subscripts };

template <class I>
struct offsets_desc {
    static_assert(std::is_integral<I>::value, "offsets must be an integer type");
    static constexpr segment_kind kind = segment_kind::offsets;
    using index_type = I;
    const I* ptr;
    std::int64_t M;
    SEGRED_HD std::int64_t num_segments() const { return M; }
};

template <class I>
struct lengths_desc {
    static_assert(std::is_integral<I>::value, "lengths must be an integer type");
    static constexpr segment_kind kind = segment_kind::lengths;
    using index_type = I;
    const I* ptr;
    std::int64_t M;
    SEGRED_HD std::int64_t num_segments() const { return M; }
};

template <class I>
struct sorted_ids_desc {
    static_assert(std::is_integral<I>::value, "ids must be an integer type");
    static constexpr segment_kind kind = segment_kind::sorted_ids;
    using index_type = I;
    const I* ptr;
    std::int64_t M;
    SEGRED_HD std::int64_t num_segments() const { return M; }
};

template <class I>
struct ids_desc {
    static_assert(std::is_integral<I>::value, "ids must be an integer type");
    static constexpr segment_kind kind = segment_kind::ids;
    using index_type = I;
    const I* ptr;
    std::int64_t M;
    SEGRED_HD std::int64_t num_segments() const { return M; }
};

struct fixed_desc {
    static constexpr segment_kind kind = segment_kind::fixed;
    using index_type = std::int64_t;
    std::int64_t size;
    std::int64_t M;
    SEGRED_HD std::int64_t num_segments() const { return M; }
};

// Up to 8 dimensions, held inline so the descriptor copies to a kernel by value.
inline constexpr int max_subscript_dims = 8;

template <class I>
struct subscripts_desc {
    static_assert(std::is_integral<I>::value, "subscripts must be an integer type");
    static constexpr segment_kind kind = segment_kind::subscripts;
    using index_type = I;
    const I* ptr;  // [n, ndim], row-major
    int ndim;
    std::int64_t shape[max_subscript_dims];

    SEGRED_HD std::int64_t num_segments() const {
        std::int64_t m = 1;
        for (int d = 0; d < ndim; ++d) m *= shape[d];
        return m;
    }
    // Row-major linear index of row i's subscripts, or -1 when one of them is
    // outside its dimension (such a row is out of range, like a bad id).
    SEGRED_HD std::int64_t linear_index(std::int64_t i) const {
        const I* s = ptr + i * ndim;
        std::int64_t lin = 0;
        for (int d = 0; d < ndim; ++d) {
            const std::int64_t v = static_cast<std::int64_t>(s[d]);
            if (v < 0 || v >= shape[d]) return -1;
            lin = lin * shape[d] + v;
        }
        return lin;
    }
};

template <class I>
offsets_desc<I> offsets(const I* ptr, std::int64_t M) { return {ptr, M}; }
template <class I>
lengths_desc<I> lengths(const I* ptr, std::int64_t M) { return {ptr, M}; }
template <class I>
sorted_ids_desc<I> sorted_ids(const I* ptr, std::int64_t M) { return {ptr, M}; }
template <class I>
ids_desc<I> ids(const I* ptr, std::int64_t M) { return {ptr, M}; }
inline fixed_desc fixed(std::int64_t size, std::int64_t M) { return {size, M}; }

// ndim must be 1..max_subscript_dims; the front-ends check it and throw
// segred::error otherwise (a descriptor holds no error state).
template <class I>
subscripts_desc<I> subscripts(const I* ptr, int ndim, const std::int64_t* shape) {
    subscripts_desc<I> d{ptr, ndim, {}};
    for (int k = 0; k < ndim && k < max_subscript_dims; ++k) d.shape[k] = shape[k];
    return d;
}
template <class I>
subscripts_desc<I> subscripts(const I* ptr, std::initializer_list<std::int64_t> shape) {
    subscripts_desc<I> d{ptr, static_cast<int>(shape.size()), {}};
    int k = 0;
    for (std::int64_t s : shape) {
        if (k < max_subscript_dims) d.shape[k] = s;
        ++k;
    }
    return d;
}

template <class D>
struct is_sorted_form
    : std::integral_constant<bool, D::kind == segment_kind::offsets || D::kind == segment_kind::lengths ||
                                       D::kind == segment_kind::sorted_ids || D::kind == segment_kind::fixed> {};

} // namespace segred
