// segred/core/views.hpp -- non-owning row views [n, width], row-major.
#pragma once

#include <cstdint>
#include <type_traits>

#include "config.hpp"

namespace segred {

// A contiguous row-major matrix of n rows of `width` elements. Width 1 is a
// plain vector; a larger width is a trailing feature dimension (GNN messages).
// Views of inputs hold `const T`.
template <class T>
struct rows_view {
    using element_type = T;
    using value_type = std::remove_cv_t<T>;

    T* data = nullptr;
    std::int64_t n = 0;
    std::int64_t width = 1;

    SEGRED_HD std::int64_t size() const { return n * width; }
    SEGRED_HD T* row(std::int64_t i) const { return data + i * width; }
    SEGRED_HD T& operator()(std::int64_t i, std::int64_t f) const { return data[i * width + f]; }
    SEGRED_HD rows_view<const value_type> as_const() const { return {data, n, width}; }
};

// rows(ptr, n) is a vector; rows(ptr, n, width) a matrix with `width` columns.
template <class T>
SEGRED_HD rows_view<T> rows(T* data, std::int64_t n, std::int64_t width = 1) {
    return rows_view<T>{data, n, width};
}

} // namespace segred
