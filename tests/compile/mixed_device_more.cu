// A second nvcc TU of segred_mixed_link instantiating the same CUDA kernels
// as mixed_device.cu (see there).
#include <segred/segred.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

bool cuda_sum_from_other_tu(const float* d_values, const std::int32_t* d_ids, float* d_out) {
    segred::segment_reduce(segred::cuda::par, segred::rows(d_values, 6), segred::sorted_ids(d_ids, 3),
                           segred::rows(d_out, 3), segred::sum{});
    std::vector<float> got(3);
    cudaMemcpy(got.data(), d_out, 3 * sizeof(float), cudaMemcpyDeviceToHost);
    return got == std::vector<float>{3, 7, 11};
}
