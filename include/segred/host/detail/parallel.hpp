// segred/host/detail/parallel.hpp -- the CPU loop primitives.
//
// OpenMP when the including translation unit is compiled with it, serial
// loops otherwise. Work is split into chunks whose boundaries depend only on
// the problem size, never on the thread count, and every chunk writes its own
// outputs, so results are bit-identical whatever the number of threads.
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "../../core/policy.hpp"

namespace segred {
namespace host_detail {

inline int thread_count(const host_policy& p) {
#if defined(_OPENMP)
    return p.num_threads > 0 ? p.num_threads : omp_get_max_threads();
#else
    (void)p;
    return 1;
#endif
}

// f(lo, hi) for consecutive chunks [lo, hi) of [0, n), each `grain` long.
// Chunks are handed out dynamically: segments can be very uneven.
template <class F>
void parallel_chunks(const host_policy& p, std::int64_t n, std::int64_t grain, F&& f) {
    if (n <= 0) return;
    grain = std::max<std::int64_t>(grain, 1);
    const std::int64_t chunks = (n + grain - 1) / grain;
#if defined(_OPENMP)
    const int threads = static_cast<int>(std::min<std::int64_t>(thread_count(p), chunks));
    if (threads > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (std::int64_t c = 0; c < chunks; ++c) f(c * grain, std::min(n, (c + 1) * grain));
        return;
    }
#else
    (void)p;
#endif
    for (std::int64_t c = 0; c < chunks; ++c) f(c * grain, std::min(n, (c + 1) * grain));
}

// f(b) for b in [0, blocks), one block per thread where possible.
template <class F>
void parallel_blocks(const host_policy& p, std::int64_t blocks, F&& f) {
#if defined(_OPENMP)
    const int threads = static_cast<int>(std::min<std::int64_t>(thread_count(p), blocks));
    if (threads > 1) {
#pragma omp parallel for schedule(static, 1) num_threads(threads)
        for (std::int64_t b = 0; b < blocks; ++b) f(b);
        return;
    }
#else
    (void)p;
#endif
    for (std::int64_t b = 0; b < blocks; ++b) f(b);
}

// The smallest i in [0, n) with bad(i), or -1: the "first bad position" that
// segred::error messages report, found in parallel.
template <class Pred>
std::int64_t first_bad(const host_policy& p, std::int64_t n, Pred&& bad) {
    constexpr std::int64_t grain = std::int64_t(1) << 16;
    const std::int64_t chunks = (n + grain - 1) / grain;
    std::int64_t best = n;
    auto scan = [&](std::int64_t c) {
        const std::int64_t hi = std::min(n, (c + 1) * grain);
        for (std::int64_t i = c * grain; i < hi; ++i)
            if (bad(i)) return i;
        return n;
    };
#if defined(_OPENMP)
    const int threads = static_cast<int>(std::min<std::int64_t>(thread_count(p), chunks));
    if (threads > 1) {
#pragma omp parallel for schedule(static) reduction(min : best) num_threads(threads)
        for (std::int64_t c = 0; c < chunks; ++c) best = std::min(best, scan(c));
        return best == n ? -1 : best;
    }
#else
    (void)p;
#endif
    for (std::int64_t c = 0; c < chunks && best == n; ++c) best = scan(c);
    return best == n ? -1 : best;
}

} // namespace host_detail
} // namespace segred
