// segred/host/detail/simd_lane_sum.hpp -- the sum of a run of floats or
// doubles in 4 interleaved partial sums (row k into lane k % 4), combined as
// (0 + 2) + (1 + 3): the shape row_fold gives runs of 16 to 255 rows, here in
// SSE2 registers.
//
// The scalar form keeps 4 separate states and a row loop that tests its exit
// every 4 rows; on a segment of 32 rows that loop ran at two thirds of the
// speed of the same adds unrolled, because the next segment's adds could not
// start early enough. Here the lanes are one register (two for doubles), four
// steps of 4 rows go between exit tests, and the last 1 to 3 rows are one
// masked step: rows past the run are read but set to +0, which leaves a lane
// as it was (a lane starts at +0 and so is never -0). Each lane still adds
// its rows one by one from +0 in row order, so the bits are the scalar
// form's, NaN and infinities included.
#pragma once

#include <cstdint>

#include "../../core/config.hpp"
#include "sse_lanes.hpp"

namespace segred {
namespace host_detail {

#if SEGRED_HOST_SSE2
// x[0] .. x[len - 1] in 4 interleaved lanes combined as (0 + 2) + (1 + 3);
// x[0, len rounded up to a multiple of 4) must be readable.
template <class A>
SEGRED_FORCE_INLINE A lane4_sum(const A* x, std::int64_t len) {
    using V = sse_lanes<A>;
    constexpr int regs = 4 / V::width;  // registers that hold the 4 lanes
    typename V::reg l[regs];
    for (int r = 0; r < regs; ++r) l[r] = V::none();
    const std::int64_t whole = len & ~std::int64_t(3);
    std::int64_t k = 0;
    for (; k + 16 <= whole; k += 16)
        for (int step = 0; step < 16; step += 4)
            for (int r = 0; r < regs; ++r) l[r] = V::add(l[r], V::load(x + k + step + r * V::width));
    for (; k < whole; k += 4)
        for (int r = 0; r < regs; ++r) l[r] = V::add(l[r], V::load(x + k + r * V::width));
    if (len > whole) {
        const __m128i tail = _mm_set1_epi32(static_cast<int>(len - whole));
        for (int r = 0; r < regs; ++r)
            l[r] = V::add(l[r], V::below(V::load(x + whole + r * V::width), tail, r * V::width));
    }
    return V::first(V::lane4_total(l));
}
#endif

} // namespace host_detail
} // namespace segred
