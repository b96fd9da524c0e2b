// segred/cuda/detail/cub_call.cuh -- run a CUB device-wide algorithm with
// its two-phase temporary storage protocol, on the policy's allocator.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "../error.cuh"
#include "../policy.cuh"
#include "temp_buffer.cuh"

namespace segred {
namespace cuda {
namespace detail {

// f(void* temp, std::size_t& bytes) -> cudaError_t, called once to size the
// storage and once to run; `what` names the CUB call in a cuda_error.
template <class F>
void cub_call(const par_t& p, const char* what, F&& f) {
    std::size_t bytes = 0;
    cudaError_t e = f(nullptr, bytes);
    if (e != cudaSuccess) throw_cuda_error(e, what);
    raw_buffer storage(p, bytes);
    e = f(storage.get(), bytes);
    if (e != cudaSuccess) throw_cuda_error(e, what);
}

} // namespace detail
} // namespace cuda
} // namespace segred
