// segred/core/backward_checks.hpp -- O(1) shape checks shared by the
// backward front-ends, in the style of core/checks.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "checks.hpp"
#include "views.hpp"

namespace segred {
namespace detail {

inline std::string shape_str(std::int64_t n, std::int64_t width) {
    return "[" + to_str(n) + ", " + to_str(width) + "]";
}

// "grad_out is [3, 2] but out is [4, 2]"
template <class A, class B>
void check_same_shape(const char* fn, const char* a_name, const rows_view<A>& a, const char* b_name,
                      const rows_view<B>& b) {
    check_view(fn, a_name, a);
    if (a.n != b.n || a.width != b.width)
        fail(fn, std::string(a_name) + " is " + shape_str(a.n, a.width) + " but " + b_name + " is " +
                     shape_str(b.n, b.width));
}

// Gradients are real numbers: fp16/bf16 (non-arithmetic types that convert
// to float), float or double.
template <class GV>
constexpr bool is_gradient_type() {
    using V = std::remove_cv_t<GV>;
    return std::is_floating_point<V>::value || !std::is_arithmetic<V>::value;
}

} // namespace detail
} // namespace segred
