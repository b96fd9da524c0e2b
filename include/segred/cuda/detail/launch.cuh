// segred/cuda/detail/launch.cuh -- grid sizing, the kernel attribute macro,
// and small copies that the check policy needs.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "../../core/config.hpp"
#include "../error.cuh"
#include "../policy.cuh"

// Kernels get hidden visibility and live in the versioned inline namespace
// segred::cuda::detail::SEGRED_ABI_NS (see core/config.hpp).
#define SEGRED_KERNEL __global__ SEGRED_HIDDEN

namespace segred {
namespace cuda {
namespace detail {

constexpr int block_threads = 256;

// The larger of two values: the operator of the max-scans (offsets made
// monotone under drop; a tile's derived keys carried across threads).
struct max_of {
    template <class X>
    __device__ X operator()(const X& a, const X& b) const { return a < b ? b : a; }
};

// An attribute of the current device.
inline int device_attribute(cudaDeviceAttr attr) {
    int device = 0, value = 0;
    SEGRED_CUDA_CHECK(cudaGetDevice(&device));
    SEGRED_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
    return value;
}

// Blocks for a grid-stride loop over `work` threads: enough to fill the
// device several times over, never more than the work needs.
inline unsigned grid_for(std::int64_t work, int threads = block_threads) {
    const int sms = device_attribute(cudaDevAttrMultiProcessorCount);
    const std::int64_t wanted = (std::max<std::int64_t>(work, 1) + threads - 1) / threads;
    return static_cast<unsigned>(std::min<std::int64_t>(wanted, std::int64_t(sms) * 16));
}

// Copy one value back to the host. Synchronizes the stream: only the check
// policy and error reporting do this.
template <class T>
T read_back(const par_t& p, const T* device_ptr) {
    T v{};
    SEGRED_CUDA_CHECK(cudaMemcpyAsync(&v, device_ptr, sizeof(T), cudaMemcpyDeviceToHost, p.stream));
    SEGRED_CUDA_CHECK(cudaStreamSynchronize(p.stream));
    return v;
}

} // namespace detail
} // namespace cuda
} // namespace segred
