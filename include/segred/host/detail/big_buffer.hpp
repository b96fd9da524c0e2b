// segred/host/detail/big_buffer.hpp -- arrays for the host algorithms'
// temporaries, backed by 2 MiB pages when they are large.
//
// A fresh temporary of many megabytes (the partitioned scatter's entries,
// states as large as the output) comes from mmap, and its first touch costs
// a page fault every 4 KiB: on a 2-core KVM guest, 125 ms for 128 MiB, more
// than the pass that fills it, and 22 ms with 2 MiB pages. Linux backs a
// 2 MiB-aligned range with transparent huge pages when asked (madvise),
// also where they are enabled for "madvise" only. The advice is only a
// hint: where it is refused, or off Linux, the array is an ordinary one.
// Blocks of that size are kept between calls, up to a limit, and handed out
// again (kept_temporaries.hpp): then not even the kernel's zeroing of fresh
// pages is paid again.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

#include "../kept_temporaries.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace segred {
namespace host_detail {

constexpr std::size_t huge_page_bytes = std::size_t(2) << 20;
// From this size on, a temporary is worth aligning to huge pages (it spans
// several of them; below, the rounding would waste a large part of it).
constexpr std::size_t big_buffer_min_bytes = std::size_t(8) << 20;

// A block of at least `bytes` for a temporary of that size, its size in
// `size` when it comes back through give_block (a large one, kept between
// calls or fresh), else 0 (a small one, from malloc).
inline void* take_block(std::size_t bytes, std::size_t& size) {
    size = 0;
    if (bytes < big_buffer_min_bytes) {
        void* p = std::malloc(bytes);
        if (p == nullptr) throw std::bad_alloc();
        return p;
    }
    const std::size_t rounded = (bytes + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
    if (void* kept = kept_temporaries().take(rounded, size)) return kept;
    void* p = nullptr;
#if defined(__linux__)
    if (posix_memalign(&p, huge_page_bytes, rounded) != 0) throw std::bad_alloc();
    (void)madvise(p, rounded, MADV_HUGEPAGE);
#else
    p = std::malloc(rounded);
    if (p == nullptr) throw std::bad_alloc();
#endif
    size = rounded;
    return p;
}

inline void give_block(void* p, std::size_t size) noexcept {
    if (size == 0)
        std::free(p);
    else
        kept_temporaries().give(p, size);
}

template <class T>
struct big_delete {
    std::size_t count = 0;
    std::size_t block = 0;  // take_block's size
    void operator()(T* a) const {
        if (!std::is_trivially_destructible<T>::value)
            for (std::size_t i = 0; i < count; ++i) a[i].~T();
        give_block(a, block);
    }
};

template <class T>
using big_array = std::unique_ptr<T[], big_delete<T>>;

// count default-initialized T (left unwritten when T is trivial, as new T[]
// leaves them: a kept block holds what its last user wrote).
template <class T>
big_array<T> make_big_array(std::int64_t count) {
    static_assert(alignof(T) <= alignof(std::max_align_t), "malloc does not align over-aligned types");
    const std::size_t n = static_cast<std::size_t>(count > 0 ? count : 0);
    std::size_t block = 0;
    T* const a = static_cast<T*>(take_block((n > 0 ? n : 1) * sizeof(T), block));
    if (!std::is_trivially_default_constructible<T>::value) {
        std::size_t made = 0;
        try {
            for (; made < n; ++made) ::new (static_cast<void*>(a + made)) T;
        } catch (...) {
            for (std::size_t i = 0; i < made; ++i) a[i].~T();
            give_block(a, block);
            throw;
        }
    }
    return big_array<T>(a, big_delete<T>{n, block});
}

// The same, every element 0 (arithmetic T).
template <class T>
big_array<T> make_zeroed_big_array(std::int64_t count) {
    static_assert(std::is_arithmetic<T>::value, "zeroing is for counters and flags");
    big_array<T> a = make_big_array<T>(count);
    std::fill(a.get(), a.get() + (count > 0 ? count : 0), T(0));
    return a;
}

} // namespace host_detail
} // namespace segred
