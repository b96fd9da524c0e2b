// The nvcc half of segred_mixed_link (see mixed_host.cpp). Under nvcc the
// umbrella also pulls in the CUDA backend, <segred/cuda.cuh>. This TU and
// mixed_device_more.cu instantiate the same CUDA kernels: the header must
// define each of them once per program (templates), or the link fails.
// With a GPU present the CUDA result is checked too; without one, only the
// link is proven.
#include <segred/segred.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

// Defined in mixed_device_more.cu: the same reduction, from another TU.
bool cuda_sum_from_other_tu(const float* d_values, const std::int32_t* d_ids, float* d_out);

bool mixed_device_tu_ok() {
    // Worked example: data [1..6], sorted ids [0,0,1,1,2,2] -> sums [3,7,11].
    const std::vector<float> v = {1, 2, 3, 4, 5, 6};
    const std::vector<std::int32_t> id = {0, 0, 1, 1, 2, 2};
    std::vector<float> out(3);
    segred::segment_reduce(segred::host, segred::rows(v.data(), 6), segred::sorted_ids(id.data(), 3),
                           segred::rows(out.data(), 3), segred::sum{});
    if (out != std::vector<float>{3, 7, 11}) return false;

    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        (void)cudaGetLastError();
        return true;  // no GPU: the link itself is the test
    }
    float *dv = nullptr, *dout = nullptr;
    std::int32_t* did = nullptr;
    cudaMalloc(&dv, 6 * sizeof(float));
    cudaMalloc(&did, 6 * sizeof(std::int32_t));
    cudaMalloc(&dout, 3 * sizeof(float));
    cudaMemcpy(dv, v.data(), 6 * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(did, id.data(), 6 * sizeof(std::int32_t), cudaMemcpyHostToDevice);
    segred::segment_reduce(segred::cuda::par, segred::rows(static_cast<const float*>(dv), 6),
                           segred::sorted_ids(static_cast<const std::int32_t*>(did), 3), segred::rows(dout, 3),
                           segred::sum{});
    std::vector<float> got(3);
    cudaMemcpy(got.data(), dout, 3 * sizeof(float), cudaMemcpyDeviceToHost);
    const bool ok = got == std::vector<float>{3, 7, 11} && cuda_sum_from_other_tu(dv, did, dout);
    cudaFree(dv);
    cudaFree(did);
    cudaFree(dout);
    return ok;
}
