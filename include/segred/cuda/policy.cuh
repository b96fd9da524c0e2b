// segred/cuda/policy.cuh -- segred::cuda::par: the stream and the temporary
// storage allocator ride on the policy, as in Thrust.
//
//   segred::segment_reduce(segred::cuda::par.on(stream), ...);
//   segred::segment_reduce(segred::cuda::par.on(stream).with_allocator(a), ...);
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace segred {
namespace cuda {

// Temporary storage hook: plain function pointers plus a context, so a
// PyTorch caching allocator or an RMM resource plugs in without segred
// depending on either. Both calls are stream-ordered: memory handed out may
// be used by work queued on `stream`, and is given back the same way. Left
// null, segred uses cudaMallocFromPoolAsync from a pool of its own
// (temporary_pool.cuh) / cudaFreeAsync on the policy's stream.
struct allocator {
    void* (*allocate)(std::size_t bytes, cudaStream_t stream, void* context) = nullptr;
    void (*deallocate)(void* ptr, std::size_t bytes, cudaStream_t stream, void* context) = nullptr;
    void* context = nullptr;
};

struct par_t {
    cudaStream_t stream = nullptr;  // the default stream unless on() says otherwise
    allocator alloc{};

    constexpr par_t on(cudaStream_t s) const { return par_t{s, alloc}; }
    constexpr par_t with_allocator(allocator a) const { return par_t{stream, a}; }
};

inline constexpr par_t par{};

} // namespace cuda
} // namespace segred
