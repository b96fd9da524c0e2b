// segred/core/policy.hpp -- the host execution policy. The CUDA policy,
// segred::cuda::par, lives in <segred/cuda.cuh>.
#pragma once

namespace segred {

// CPU loops: OpenMP threads when the including translation unit is compiled
// with OpenMP, serial otherwise. threads(k) caps the thread count (0: the
// OpenMP default). Results are bit-identical whatever the thread count.
struct host_policy {
    int num_threads = 0;
    constexpr host_policy threads(int k) const { return host_policy{k}; }
};

inline constexpr host_policy host{};

} // namespace segred
