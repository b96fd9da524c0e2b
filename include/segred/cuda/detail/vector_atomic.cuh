// segred/cuda/detail/vector_atomic.cuh -- four float columns added by one
// atomic.
//
// Wide unsorted rows add one value a column into scattered accumulators, and
// the L2's atomic units bound them, not the bytes. sm_90 adds four
// consecutive floats in one 16-byte atomic (red.global.add.v4.f32), so a row
// of F floats costs F/4 atomic operations instead of F. Older devices take
// four 4-byte atomics: the same adds, so the result is the same sum up to
// the order of the additions, which atomics never fix anyway.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../core/numeric.hpp"
#include "../../core/views.hpp"

namespace segred {
namespace cuda {
namespace detail {

constexpr int atomic_columns = 4;  // floats in one vector atomic

// Four float sums carried by one thread, added column by column.
struct float_columns4 {
    float c[atomic_columns] = {0.f, 0.f, 0.f, 0.f};
    __device__ float_columns4& operator+=(const float_columns4& o) {
        for (int j = 0; j < atomic_columns; ++j) c[j] += o.c[j];
        return *this;
    }
};

// Value types whose four consecutive elements are one aligned load (16 bytes
// of float, 8 of half or bfloat16) and accumulate in float.
template <class T, class A>
constexpr bool adds_in_vectors = std::is_same<A, float>::value && (sizeof(T) == 4 || sizeof(T) == 2);

// Whether every row's columns can go four at a time: the width is a multiple
// of four and both the values and the accumulators are aligned for the
// vector (so every row start is too).
template <class T, class A>
bool rows_add_in_vectors(const rows_view<const T>& values, const A* acc, std::int64_t F) {
    if constexpr (!adds_in_vectors<T, A>) {
        return false;
    } else {
        return F == values.width && F % atomic_columns == 0 && acc != nullptr &&
               reinterpret_cast<std::uintptr_t>(values.data) % (atomic_columns * sizeof(T)) == 0 &&
               reinterpret_cast<std::uintptr_t>(acc) % (atomic_columns * sizeof(float)) == 0;
    }
}

inline namespace SEGRED_ABI_NS {

// Four consecutive values at p (aligned to four elements) as floats.
template <class T>
__device__ float_columns4 load_columns4(const T* p) {
    T e[atomic_columns];
    if constexpr (sizeof(T) == 4) {
        const uint4 raw = *reinterpret_cast<const uint4*>(p);
        memcpy(e, &raw, sizeof raw);
    } else {
        const uint2 raw = *reinterpret_cast<const uint2*>(p);
        memcpy(e, &raw, sizeof raw);
    }
    float_columns4 x;
    for (int j = 0; j < atomic_columns; ++j) x.c[j] = segred::detail::convert<float>(e[j]);
    return x;
}

// acc[0..3] += v, acc in global memory and 16-byte aligned.
__device__ inline void atomic_add_columns4(float* acc, const float_columns4& v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(acc)),
                 "f"(v.c[0]), "f"(v.c[1]), "f"(v.c[2]), "f"(v.c[3])
                 : "memory");
#else
    for (int j = 0; j < atomic_columns; ++j) atomicAdd(acc + j, v.c[j]);
#endif
}

} // namespace SEGRED_ABI_NS
} // namespace detail
} // namespace cuda
} // namespace segred
