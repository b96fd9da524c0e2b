// segred/cuda/detail/fill.cuh -- set every element of an array to a value.
#pragma once

#include <cstdint>

#include "launch.cuh"

namespace segred {
namespace cuda {
namespace detail {
inline namespace SEGRED_ABI_NS {

template <class O>
SEGRED_KERNEL void fill_kernel(O* out, std::int64_t count, O value) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) out[i] = value;
}

} // namespace SEGRED_ABI_NS
} // namespace detail
} // namespace cuda
} // namespace segred
