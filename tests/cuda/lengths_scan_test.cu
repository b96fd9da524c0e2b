// The one-pass scan of int32 segment lengths into 32-bit starts
// (cuda/detail/lengths_scan.cuh), against a sequential 64-bit sum: tiles
// of 8192 lengths and the look-back between them, with counts on each side
// of a tile and of a look-back window of 32 tiles, empty segments, sums
// that saturate, negative lengths, and the clamp drop asks for. The public calls over lengths are tested with
// the other sorted forms (reduce_sorted_test.cu, policy_test.cu).
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

#include "common/reference.hpp"
#include "common/test_util.hpp"
#include "cuda/cuda_test_util.cuh"

namespace {

using segtest::device_memory;
using segtest::i64;
const device_memory mem{};

class CudaLengthsScan : public segtest::CudaTest {};

// starts[s] = min(sum of max(len[j], 0) for j < s, hi), for s in [0, M].
std::vector<std::int32_t> reference_starts(const std::vector<std::int32_t>& len, i64 hi) {
    std::vector<std::int32_t> starts;
    starts.reserve(len.size() + 1);
    i64 sum = 0;  // stops growing past hi: no int64 sum can wrap
    for (std::size_t s = 0;; ++s) {
        starts.push_back(static_cast<std::int32_t>(sum < hi ? sum : hi));
        if (s == len.size()) break;
        const i64 l = static_cast<i64>(len[s]);
        if (l > 0) sum = l >= hi - sum ? hi : sum + l;
    }
    return starts;
}

// Scans len with the given hi into a buffer of M + 2 starts whose last one
// must keep its sentinel, and compares with the reference.
void expect_scan(const std::vector<std::int32_t>& len, i64 hi, const std::string& what) {
    const i64 M = static_cast<i64>(len.size());
    auto d_len = mem.to_device(len.empty() ? std::vector<std::int32_t>{0} : len);
    auto d_starts = mem.to_device(std::vector<std::int32_t>(static_cast<std::size_t>(M + 2), -7));
    segred::cuda::detail::scan_lengths_into_int32(segred::cuda::par, d_len.data(), M, hi, d_starts.data());
    std::vector<std::int32_t> got = mem.to_host(d_starts);
    EXPECT_EQ(got.back(), -7) << what << ": wrote past starts[M]";
    got.pop_back();
    const std::vector<std::int32_t> want = reference_starts(len, hi);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t s = 0; s < want.size(); ++s) {
        if (got[s] != want[s]) {
            ADD_FAILURE() << what << ", M = " << M << ": starts[" << s << "] = " << got[s] << ", want " << want[s];
            return;
        }
    }
}

std::vector<std::int32_t> random_lengths(segref::rng& g, i64 M, i64 max_len, double p_empty) {
    std::vector<std::int32_t> len(static_cast<std::size_t>(M));
    for (std::int32_t& l : len)
        l = static_cast<std::int32_t>(segref::coin(g, p_empty) ? 0 : segref::uniform_int(g, 1, max_len));
    return len;
}

TEST_F(CudaLengthsScan, RandomCountsAroundTiles) {
    SEGRED_SEEDED_RNG(g);
    constexpr i64 tile = 8192;
    // 0 and 1 lengths; one tile less, at, and past its end; the element M
    // alone in the last tile; a look-back window of 32 tiles and past it;
    // five hundred tiles.
    for (const i64 M : {i64(0), i64(1), tile - 2, tile - 1, tile, tile + 1, 3 * tile + 5, 32 * tile - 1, 33 * tile + 17,
                        i64(500) * tile + 3}) {
        const std::vector<std::int32_t> len = random_lengths(g, M, 9, 0.3);
        expect_scan(len, INT32_MAX, "random lengths");
        i64 total = 0;
        for (const std::int32_t l : len) total += l;
        // The clamp of drop: starts past the rows stop at the row count.
        expect_scan(len, total / 2, "clamped at half the sum");
    }
}

// Sums that reach INT32_MAX in different tiles, and int32 lengths that
// would wrap a 32-bit sum (2^31 - 1 each): stored saturated from there on.
TEST_F(CudaLengthsScan, SaturatesAtInt32Max) {
    SEGRED_SEEDED_RNG(g);
    const i64 M = 50000;
    std::vector<std::int32_t> len = random_lengths(g, M, 100000, 0.1);  // ~2^31 near s = 47000
    expect_scan(len, INT32_MAX, "sum past INT32_MAX late");
    len[5000] = INT32_MAX;
    len[5001] = INT32_MAX;
    len[5002] = 3;
    expect_scan(len, INT32_MAX, "two INT32_MAX lengths");
    expect_scan(len, 123456789, "clamped below the saturation");
}

// Negative lengths count as 0 (drop's rule; the check refuses them first).
TEST_F(CudaLengthsScan, NegativeLengthsCountAsZero) {
    SEGRED_SEEDED_RNG(g);
    for (const i64 M : {i64(10), i64(70000)}) {
        std::vector<std::int32_t> len32 = random_lengths(g, M, 5, 0.1);
        for (i64 s = 0; s < M; s += 7) len32[static_cast<std::size_t>(s)] = s % 2 ? INT32_MIN : -3;
        expect_scan(len32, INT32_MAX, "negative lengths");
        expect_scan(len32, M, "negative lengths, clamped");
    }
}

} // namespace
