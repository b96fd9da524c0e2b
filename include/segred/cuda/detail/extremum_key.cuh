// segred/cuda/detail/extremum_key.cuh -- a (value, row) of min / max /
// argmin / argmax packed into one 64-bit key whose unsigned order is the
// reducer's order, and the way back.
//
// The value's order-preserving 32 bits on top (inverted for min; NaN above
// everything, as NaN wins), then the inverted row, so that among equal
// values the lowest row wins. A segment's winner is then the maximum of its
// keys, whatever order they are compared in. Key 0 never comes from a row
// (rows stay below 2^32 - 1), so it marks an empty segment.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace segred {
namespace cuda {
namespace detail {

inline namespace SEGRED_ABI_NS {

// Order-preserving 32 bits of a compare value (NaN: all ones; -0 as +0).
template <class C>
__device__ std::uint32_t ordered_bits(C c) {
    if constexpr (std::is_floating_point<C>::value) {
        if (c != c) return 0xffffffffu;
        const float f = c == 0.0f ? 0.0f : static_cast<float>(c);
        std::uint32_t b;
        std::memcpy(&b, &f, sizeof b);
        return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    } else if constexpr (std::is_signed<C>::value) {
        return static_cast<std::uint32_t>(static_cast<std::int32_t>(c)) ^ 0x80000000u;
    } else {
        return static_cast<std::uint32_t>(c);
    }
}

template <bool Max, class C>
__device__ unsigned long long extremum_key(C c, std::int64_t row) {
    std::uint32_t top = ordered_bits(c);
    if (!Max && top != 0xffffffffu) top = ~top;  // NaN stays on top for min too
    return (static_cast<unsigned long long>(top) << 32) | (0xffffffffull - static_cast<unsigned long long>(row));
}

// The row of a key (not 0).
__device__ inline std::int64_t key_row(unsigned long long key) {
    return static_cast<std::int64_t>(0xffffffffull - (key & 0xffffffffull));
}

// The compare value of a key (not 0) into c, and true; false where the key
// does not tell it: NaN (its payload is not kept) and zero (-0 and +0 share
// their bits), whose value is then read from the key's row.
template <bool Max, class C>
__device__ bool key_value(unsigned long long key, C& c) {
    std::uint32_t top = static_cast<std::uint32_t>(key >> 32);
    if constexpr (std::is_floating_point<C>::value) {
        if (top == 0xffffffffu) return false;
        if (!Max) top = ~top;
        if (top == 0x80000000u) return false;  // ordered_bits of both zeros
        const std::uint32_t b = (top & 0x80000000u) ? (top & 0x7fffffffu) : ~top;
        float f;
        std::memcpy(&f, &b, sizeof f);
        c = static_cast<C>(f);
    } else {
        if (!Max) top = ~top;
        if constexpr (std::is_signed<C>::value) {
            c = static_cast<C>(static_cast<std::int32_t>(top ^ 0x80000000u));
        } else {
            c = static_cast<C>(top);
        }
    }
    return true;
}

} // namespace SEGRED_ABI_NS

} // namespace detail
} // namespace cuda
} // namespace segred
