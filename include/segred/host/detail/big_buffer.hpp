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
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace segred {
namespace host_detail {

constexpr std::size_t huge_page_bytes = std::size_t(2) << 20;
// From this size on, a temporary is worth aligning to huge pages (it spans
// several of them; below, the rounding would waste a large part of it).
constexpr std::size_t big_buffer_min_bytes = std::size_t(8) << 20;

// count default-initialized T (left unwritten when T is trivial, as new T[]
// leaves them), released by big_delete.
template <class T>
T* big_new(std::size_t count) {
    const std::size_t bytes = (count > 0 ? count : 1) * sizeof(T);
    void* p = nullptr;
#if defined(__linux__)
    if (bytes >= big_buffer_min_bytes) {
        const std::size_t rounded = (bytes + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
        if (posix_memalign(&p, huge_page_bytes, rounded) != 0) throw std::bad_alloc();
        (void)madvise(p, rounded, MADV_HUGEPAGE);
    }
#endif
    if (p == nullptr) {
        static_assert(alignof(T) <= alignof(std::max_align_t), "malloc does not align over-aligned types");
        p = std::malloc(bytes);
        if (p == nullptr) throw std::bad_alloc();
    }
    T* a = static_cast<T*>(p);
    if (!std::is_trivially_default_constructible<T>::value)
        for (std::size_t i = 0; i < count; ++i) ::new (static_cast<void*>(a + i)) T;
    return a;
}

template <class T>
struct big_delete {
    std::size_t count = 0;
    void operator()(T* a) const {
        if (!std::is_trivially_destructible<T>::value)
            for (std::size_t i = 0; i < count; ++i) a[i].~T();
        std::free(a);
    }
};

template <class T>
using big_array = std::unique_ptr<T[], big_delete<T>>;

template <class T>
big_array<T> make_big_array(std::int64_t count) {
    const std::size_t n = static_cast<std::size_t>(count > 0 ? count : 0);
    return big_array<T>(big_new<T>(n), big_delete<T>{n});
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
