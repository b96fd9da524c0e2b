// segred/core/numeric.hpp -- accumulation types, limits, NaN tests and
// conversions usable in host and device code alike.
//
// std::numeric_limits members are constexpr host functions, which nvcc only
// lets device code call under --expt-relaxed-constexpr; segred must not impose
// that flag on its users, so the few limits it needs are spelled out here.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "config.hpp"

namespace segred {
namespace detail {

// Accumulation type of a value type: fp16/bf16 (any non-arithmetic type that
// converts to float) accumulate in float, float in float, double in double,
// integers in 64 bits.
template <class T, class = void>
struct accum {
    using type = float;
};
template <class T>
struct accum<T, std::enable_if_t<std::is_floating_point<T>::value>> {
    using type = T;
};
template <class T>
struct accum<T, std::enable_if_t<std::is_integral<T>::value && std::is_signed<T>::value>> {
    using type = std::int64_t;
};
template <class T>
struct accum<T, std::enable_if_t<std::is_integral<T>::value && !std::is_signed<T>::value>> {
    using type = std::uint64_t;
};
template <class T>
using accum_t = typename accum<T>::type;

// Type in which min/max compare: the value type itself when arithmetic (so
// the identity of min over int32 is INT32_MAX), float for fp16/bf16.
template <class T>
using compare_t = std::conditional_t<std::is_arithmetic<T>::value, T, float>;

// Real type for mean/var/logsumexp of integers: double.
template <class T>
using real_t = std::conditional_t<std::is_floating_point<accum_t<T>>::value, accum_t<T>, double>;

// Convert any supported value (arithmetic, __half, __nv_bfloat16) to A.
// Non-arithmetic types go through float, their only unambiguous conversion.
template <class A, class T>
SEGRED_HD A convert(const T& v) {
    if constexpr (std::is_arithmetic<T>::value || std::is_arithmetic<A>::value == false) {
        return static_cast<A>(v);
    } else {
        return static_cast<A>(static_cast<float>(v));
    }
}

// Convert an accumulated result to the output element type O.
template <class O, class A>
SEGRED_HD O to_output(const A& v) {
    if constexpr (std::is_arithmetic<O>::value) {
        return static_cast<O>(v);
    } else {
        return O(static_cast<float>(v));
    }
}

template <class A>
SEGRED_HD bool is_nan(const A& v) {
    if constexpr (std::is_floating_point<A>::value) {
        return v != v;
    } else {
        return false;
    }
}

template <class A>
SEGRED_HD A highest() {
    if constexpr (std::is_floating_point<A>::value) {
        return static_cast<A>(INFINITY);
    } else if constexpr (std::is_signed<A>::value) {
        return static_cast<A>(static_cast<std::make_unsigned_t<A>>(~std::make_unsigned_t<A>(0)) >> 1);
    } else {
        return static_cast<A>(~A(0));
    }
}

template <class A>
SEGRED_HD A lowest() {
    if constexpr (std::is_floating_point<A>::value) {
        return -static_cast<A>(INFINITY);
    } else if constexpr (std::is_signed<A>::value) {
        return static_cast<A>(-highest<A>() - 1);
    } else {
        return A(0);
    }
}

template <class A>
SEGRED_HD A quiet_nan() {
    return static_cast<A>(NAN);
}

} // namespace detail
} // namespace segred
