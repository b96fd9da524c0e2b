// segred/cuda/temporary_pool.cuh -- the stream-ordered memory pool that
// segred's temporaries come from when the policy names no allocator.
//
// The device's default pool releases every free byte back to the device at
// each synchronization (its release threshold is 0 unless the program sets
// it), so the next allocation maps memory afresh: on an H100, a 1 MiB
// cudaMallocAsync and cudaFreeAsync after a synchronization took 87 us
// against 2 us from a pool that kept its memory. A call under the check
// policy synchronizes to read its verdict, so every such call paid that for
// the temporaries it took after it (a one-column sum of 2^20 rows over
// 1024-row offsets: 239 us a call, 53 us from a pool that kept its memory).
// segred therefore allocates from a pool of its own on each device, which
// keeps up to temporary_pool_keep_bytes, and leaves the default pool, and
// the program's own use of it, as they are.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "error.cuh"

namespace segred {
namespace cuda {

// What segred's pool keeps reserved across synchronizations (its release
// threshold; a third of a percent of an 80 GB device, and only once calls
// have used that much). Temporaries beyond it (the deterministic sort and
// partitioned unsorted rows of tens of millions of rows, layouts of tens of
// millions of segments) go back to the device at a synchronization, as from
// the default pool.
inline constexpr std::uint64_t temporary_pool_keep_bytes = std::uint64_t(256) << 20;

// segred's pool on `device`, made on first use with the threshold above. A
// program may set its attributes (cudaMemPoolSetAttribute) or trim it
// (cudaMemPoolTrimTo). cudaDeviceReset destroys it, as it does every pool:
// a program that resets a device passes its own allocator hook.
inline cudaMemPool_t temporary_pool(int device) {
    static std::mutex guard;
    static std::vector<cudaMemPool_t> pools;
    const std::lock_guard<std::mutex> lock(guard);
    if (device < 0) SEGRED_CUDA_CHECK(cudaErrorInvalidDevice);
    if (pools.size() <= static_cast<std::size_t>(device)) pools.resize(static_cast<std::size_t>(device) + 1, nullptr);
    cudaMemPool_t& pool = pools[static_cast<std::size_t>(device)];
    if (pool == nullptr) {
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.handleTypes = cudaMemHandleTypeNone;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        cudaMemPool_t made = nullptr;
        SEGRED_CUDA_CHECK(cudaMemPoolCreate(&made, &props));
        std::uint64_t keep = temporary_pool_keep_bytes;
        const cudaError_t set = cudaMemPoolSetAttribute(made, cudaMemPoolAttrReleaseThreshold, &keep);
        if (set != cudaSuccess) {
            (void)cudaMemPoolDestroy(made);
            SEGRED_CUDA_CHECK(set);
        }
        pool = made;
    }
    return pool;
}

// segred's pool on the current device.
inline cudaMemPool_t temporary_pool() {
    int device = 0;
    SEGRED_CUDA_CHECK(cudaGetDevice(&device));
    return temporary_pool(device);
}

} // namespace cuda
} // namespace segred
