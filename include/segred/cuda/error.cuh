// segred/cuda/error.cuh -- every CUDA runtime call is checked; a failure
// throws segred::cuda_error naming the call and CUDA's error string.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "../core/error.hpp"

namespace segred {
namespace cuda {
namespace detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call) {
    // Clear the error where it is not sticky, so it is reported exactly once:
    // here, by the exception. A sticky error (a kernel fault) stays set by
    // CUDA's design and every later call reports it too.
    (void)cudaGetLastError();
    throw cuda_error(std::string("segred: ") + call + " failed: " + cudaGetErrorName(e) + " (" +
                         cudaGetErrorString(e) + ")",
                     static_cast<int>(e));
}

} // namespace detail
} // namespace cuda
} // namespace segred

#define SEGRED_CUDA_CHECK(call)                                                                                   \
    do {                                                                                                          \
        const cudaError_t segred_status_ = (call);                                                                \
        if (segred_status_ != cudaSuccess) ::segred::cuda::detail::throw_cuda_error(segred_status_, #call);      \
    } while (0)

