// segred/cuda/detail/async_copy.cuh -- rows copied from device memory into
// shared memory by cp.async, without a trip through registers.
//
// Kernels that stage a tile of rows (the tile reduce, the bucketed
// partition) start the copies first and use the rows after a barrier: the
// loads are all in flight at once, and no register holds a row meanwhile.
// cp.async (sm_80 and later) moves 4, 8 or 16 bytes; other types go through
// registers in the callers.
#pragma once

#include <cuda_runtime.h>

namespace segred {
namespace cuda {
namespace detail {

template <class X>
constexpr bool async_copyable = sizeof(X) == 4 || sizeof(X) == 8 || sizeof(X) == 16;

// A stage is addressed by 32-bit shared-memory addresses held in
// registers. Through generic pointers into the dynamic shared memory, the
// compiler, short of registers (the tile reduce under tile_min_blocks),
// recomputes the shared window's base for every row it loads and every copy
// it starts: eight instructions where one add does. pinned() hides where an
// address came from, so it stays in its register instead.
__device__ __forceinline__ unsigned pinned(unsigned a) {
    asm volatile("" : "+r"(a));
    return a;
}

__device__ __forceinline__ unsigned shared_address(const void* p) {
    return pinned(static_cast<unsigned>(__cvta_generic_to_shared(p)));
}

template <int Bytes>
__device__ __forceinline__ void copy_async(unsigned dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(src), "n"(Bytes) : "memory");
}

// A 16-byte chunk, around L1: each value is read once.
__device__ __forceinline__ void copy_chunk_async(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}

} // namespace detail
} // namespace cuda
} // namespace segred
