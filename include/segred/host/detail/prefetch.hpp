// segred/host/detail/prefetch.hpp -- hints that a cache line will be read
// or written soon, where the compiler has them; nothing elsewhere.
#pragma once

namespace segred {
namespace host_detail {

inline void prefetch_read(const void* p) {
#if defined(__GNUC__)
    __builtin_prefetch(p, 0);
#else
    (void)p;
#endif
}

inline void prefetch_write(const void* p) {
#if defined(__GNUC__)
    __builtin_prefetch(p, 1);
#else
    (void)p;
#endif
}

} // namespace host_detail
} // namespace segred
