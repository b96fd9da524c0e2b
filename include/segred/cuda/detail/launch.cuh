// segred/cuda/detail/launch.cuh -- grid sizing, the kernel attribute macro,
// and small copies that the check policy needs.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <utility>

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

// Programmatic dependent launch (compute capability 9.0 and later): a kernel
// launched by launch_dependent may be scheduled before the kernel ahead of
// it in the stream has finished, and waits in wait_for_prior_grids (at its
// top) until that one's writes are visible. What it saves is the launch gap
// between the two: the giant passes after a segment pass that listed no
// giant cost 8 us of gaps on an H200 against kernels of 80-100 us. Earlier
// devices launch it as any kernel (the wait is then a no-op).
__device__ __forceinline__ void wait_for_prior_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

template <class... Params, class... Args>
void launch_dependent(const par_t& p, unsigned grid, int threads, void (*kernel)(Params...), Args&&... args) {
    cudaLaunchAttribute attr[1]{};
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(grid);
    config.blockDim = dim3(static_cast<unsigned>(threads));
    config.stream = p.stream;
    config.attrs = attr;
    config.numAttrs = device_attribute(cudaDevAttrComputeCapabilityMajor) >= 9 ? 1 : 0;
    SEGRED_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

// Block-private accumulators in shared memory (the scatter kernels' sums and
// counts). Within the 48 KiB any block gets without opting in, blocks of
// block_threads, several an SM, each with its own copy (fewer threads on
// each hot address). Beyond, up to what the device lets one block opt into
// (227 KiB on sm_90), blocks of up to private_block_threads_max threads: one
// or two copies an SM, each with enough warps to keep loads in flight (H200,
// 2^26 uniform ids into 32768 float sums, a plain loop: 842 GB/s with 512
// threads a block, 1602 with 1024; global atomics 533).
constexpr std::size_t default_shared_bytes = 48 * 1024;
constexpr int private_block_threads_max = 1024;

// The most dynamic shared memory a block of `kernel` can take: what the
// device lets it opt into (opt_in), else the default 48 KiB; less its static
// shared memory either way.
template <class Kernel>
std::size_t private_shared_limit(Kernel kernel, bool opt_in) {
    cudaFuncAttributes attrs{};
    SEGRED_CUDA_CHECK(cudaFuncGetAttributes(&attrs, kernel));
    const std::size_t total =
        opt_in ? static_cast<std::size_t>(device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin))
               : default_shared_bytes;
    return total > attrs.sharedSizeBytes ? total - attrs.sharedSizeBytes : 0;
}

// Let `kernel` take up to private_shared_limit(kernel, true) bytes of
// dynamic shared memory. Always that whole limit, never one call's own size:
// a host thread that lowered the attribute to its size could make another
// thread's larger launch of the same kernel fail between its own set and
// launch. Set on every call that needs it: a device reset forgets it.
template <class Kernel>
void opt_in_whole_shared_limit(Kernel kernel) {
    SEGRED_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(private_shared_limit(kernel, true))));
}

// Before a launch of `kernel` with `shared` bytes of dynamic shared memory:
// opt in (as above) when they pass what it gets without. The caller has
// checked that they fit private_shared_limit(kernel, true).
template <class Kernel>
void allow_dynamic_shared(Kernel kernel, std::size_t shared) {
    if (shared > private_shared_limit(kernel, false)) opt_in_whole_shared_limit(kernel);
}

struct private_launch {
    unsigned blocks;
    int threads;
};

// Block size and grid for `kernel` with `bytes` of private accumulators a
// block (at most private_shared_limit(kernel, true)), opting in where
// needed (opt_in_whole_shared_limit); large_threads: the block size past the
// default limit, at most the kernel's launch bounds. The grid is as many
// blocks as are resident at once, no more: each block zeroes and flushes its
// accumulators, so blocks beyond one full wave only add flushes.
template <class Kernel>
private_launch plan_private_launch(Kernel kernel, std::size_t bytes, std::int64_t work, int large_threads) {
    const bool large = bytes > private_shared_limit(kernel, false);
    const int threads = large ? large_threads : block_threads;
    if (large) opt_in_whole_shared_limit(kernel);
    const int sms = device_attribute(cudaDevAttrMultiProcessorCount);
    int per_sm = 0;
    SEGRED_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes));
    return {std::min(grid_for(work, threads), static_cast<unsigned>(std::max(per_sm, 1) * sms)), threads};
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
