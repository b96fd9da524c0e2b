// tests/cuda/cuda_test_util.cuh -- device memory for the shared harness,
// and the fixture that skips every CUDA test, with a clear message, on a
// machine without a usable GPU (CI compiles the CUDA tests but has none).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace segtest {

// Owning device array; data() is a device pointer.
template <class T>
class device_vector {
public:
    device_vector() = default;
    explicit device_vector(std::size_t n) : n_(n) {
        if (n > 0 && cudaMalloc(&p_, n * sizeof(T)) != cudaSuccess) throw std::bad_alloc();
    }
    device_vector(device_vector&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(o.n_) {}
    device_vector& operator=(device_vector&& o) noexcept {
        std::swap(p_, o.p_);
        std::swap(n_, o.n_);
        return *this;
    }
    device_vector(const device_vector&) = delete;
    ~device_vector() {
        if (p_) cudaFree(p_);
    }
    T* data() const { return p_; }
    std::size_t size() const { return n_; }

private:
    T* p_ = nullptr;
    std::size_t n_ = 0;
};

inline void cuda_ok(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// The harness's memory adaptor for the GPU (host_memory's twin).
struct device_memory {
    template <class T>
    device_vector<T> to_device(const std::vector<T>& h) const {
        device_vector<T> d(h.size());
        if (!h.empty()) cuda_ok(cudaMemcpy(d.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "to_device");
        return d;
    }
    template <class T>
    std::vector<T> to_host(const device_vector<T>& d) const {
        std::vector<T> h(d.size());
        if (!h.empty()) cuda_ok(cudaMemcpy(h.data(), d.data(), h.size() * sizeof(T), cudaMemcpyDeviceToHost), "to_host");
        return h;
    }
};

// Empty string when a GPU is usable, else why not.
inline const std::string& gpu_unavailable_reason() {
    static const std::string reason = [] {
        int count = 0;
        const cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")";
        }
        if (count == 0) return std::string("no CUDA device");
        return std::string();
    }();
    return reason;
}

class CudaTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!gpu_unavailable_reason().empty())
            GTEST_SKIP() << "CUDA test skipped: " << gpu_unavailable_reason()
                         << "; the CUDA code compiled, run this binary on a machine with a GPU to test it";
    }
    void TearDown() override {
        if (!gpu_unavailable_reason().empty()) return;
        // No test may leave a CUDA error behind (sticky or not).
        EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    }
};

} // namespace segtest
