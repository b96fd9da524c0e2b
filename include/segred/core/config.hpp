// segred/core/config.hpp -- version, the host/device function macro and the
// versioned inline namespace. Safe for plain C++17 and for nvcc.
#pragma once

#define SEGRED_VERSION_MAJOR 0
#define SEGRED_VERSION_MINOR 1
#define SEGRED_VERSION_PATCH 0
#define SEGRED_VERSION_STRING "0.1.0"

// Functions shared by both backends (reducers, descriptors, views) are marked
// SEGRED_HD so nvcc compiles them for the device too; plain C++ sees nothing.
#if defined(__CUDACC__)
#define SEGRED_HD __host__ __device__
#else
#define SEGRED_HD
#endif

// For the few small functions that sit in a per-row or per-segment loop and
// that the compiler would otherwise call (it judges by size, not by trip count).
#if defined(__GNUC__) || defined(__clang__)
#define SEGRED_FORCE_INLINE inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define SEGRED_FORCE_INLINE __forceinline
#else
#define SEGRED_FORCE_INLINE inline
#endif

// For a rare path that the compiler would otherwise inline into a hot loop.
#if defined(__GNUC__) || defined(__clang__)
#define SEGRED_HOST_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define SEGRED_HOST_NOINLINE __declspec(noinline)
#else
#define SEGRED_HOST_NOINLINE
#endif

// A branch the compiler should lay out off the straight path.
#if defined(__GNUC__) || defined(__clang__)
#define SEGRED_HOST_UNLIKELY(c) __builtin_expect(static_cast<bool>(c), 0)
#else
#define SEGRED_HOST_UNLIKELY(c) (c)
#endif

// CUDA kernels and other device symbols live in a versioned inline namespace
// with hidden visibility, so two shared libraries that vendor different segred
// versions never merge each other's kernels at link or load time.
#define SEGRED_ABI_NS v0_1_0
#if defined(_WIN32)
#define SEGRED_HIDDEN
#else
#define SEGRED_HIDDEN __attribute__((visibility("hidden")))
#endif
