// segred/cuda/detail/temp_buffer.cuh -- stream-ordered temporary storage
// from the policy's allocator (else segred's pool, temporary_pool.cuh),
// released when the owner goes out of scope (also when an exception
// unwinds), ordered after the work that used it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "../error.cuh"
#include "../policy.cuh"
#include "../temporary_pool.cuh"

namespace segred {
namespace cuda {
namespace detail {

class raw_buffer {
public:
    raw_buffer() = default;
    raw_buffer(const par_t& p, std::size_t bytes) : policy_(p), bytes_(bytes) {
        if (bytes == 0) return;
        if (p.alloc.allocate) {
            ptr_ = p.alloc.allocate(bytes, p.stream, p.alloc.context);
            if (ptr_ == nullptr)
                throw cuda_error("segred: the allocator returned null for " + std::to_string(bytes) + " bytes",
                                 static_cast<int>(cudaErrorMemoryAllocation));
        } else {
            SEGRED_CUDA_CHECK(cudaMallocFromPoolAsync(&ptr_, bytes, temporary_pool(), p.stream));
        }
    }
    raw_buffer(raw_buffer&& o) noexcept : policy_(o.policy_), ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
    raw_buffer& operator=(raw_buffer&& o) noexcept {
        if (this != &o) {
            release();
            policy_ = o.policy_;
            ptr_ = o.ptr_;
            bytes_ = o.bytes_;
            o.ptr_ = nullptr;
        }
        return *this;
    }
    raw_buffer(const raw_buffer&) = delete;
    raw_buffer& operator=(const raw_buffer&) = delete;
    ~raw_buffer() { release(); }

    void* get() const { return ptr_; }
    std::size_t bytes() const { return bytes_; }

private:
    void release() noexcept {
        if (ptr_ == nullptr) return;
        if (policy_.alloc.deallocate) {
            policy_.alloc.deallocate(ptr_, bytes_, policy_.stream, policy_.alloc.context);
        } else if (cudaFreeAsync(ptr_, policy_.stream) != cudaSuccess) {
            // A destructor cannot throw; the failure is a sticky error that
            // the next checked call reports, or one already being reported.
            (void)cudaGetLastError();
        }
        ptr_ = nullptr;
    }

    par_t policy_{};
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

template <class T>
class temp_buffer {
public:
    temp_buffer() = default;
    temp_buffer(const par_t& p, std::int64_t count)
        : raw_(p, static_cast<std::size_t>(count > 0 ? count : 0) * sizeof(T)) {}
    T* get() const { return static_cast<T*>(raw_.get()); }
    T* data() const { return get(); }  // the scratch interface of core/backend.hpp

private:
    raw_buffer raw_;
};

} // namespace detail
} // namespace cuda
} // namespace segred
