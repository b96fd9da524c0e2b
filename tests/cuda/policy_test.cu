// The CUDA policy and contract: streams, the allocator hook, run-to-run
// determinism (bit for bit), bad input under check / drop, cuda_error, the
// promise that drop and unchecked never synchronize, and n above 2^31.
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <utility>
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

class CudaPolicy : public segtest::CudaTest {};

// Runs f three times into fresh outputs and expects the same bits each time.
template <class F>
void expect_same_bits_3x(F&& f, const char* what) {
    const std::vector<float> a = f(), b = f(), c = f();
    EXPECT_TRUE(segtest::same_bits(a, b, what));
    EXPECT_TRUE(segtest::same_bits(a, c, what));
}

TEST_F(CudaPolicy, RunToRunDeterminism) {
    SEGRED_SEEDED_RNG(g);
    const i64 n = 1 << 21, M = 300;
    std::vector<std::int32_t> ids = segref::random_ids<std::int32_t>(g, n, 0, M - 1);
    for (i64 i = 0; i < n / 2; ++i) ids[static_cast<std::size_t>(i)] = 7;  // one hot id: long multi-piece segment
    std::vector<std::int32_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    const std::vector<float> v = segref::random_values<float>(g, n * 3, segref::value_kind::general);
    auto d_v = mem.to_device(v);
    auto d_ids = mem.to_device(ids), d_sorted = mem.to_device(sorted);
    auto run = [&](auto desc, auto reducer, segred::options opts) {
        return [&, desc, reducer, opts] {
            auto d_o = mem.to_device(std::vector<float>(static_cast<std::size_t>(M * 3)));
            segred::segment_reduce(segred::cuda::par, segred::rows(d_v.data(), n, 3), desc,
                                   segred::rows(d_o.data(), M, 3), reducer, opts);
            return mem.to_host(d_o);
        };
    };
    expect_same_bits_3x(run(segred::sorted_ids(d_sorted.data(), M), segred::sum{}, {}), "sorted sum");
    expect_same_bits_3x(run(segred::sorted_ids(d_sorted.data(), M), segred::logsumexp{}, {}), "sorted logsumexp");
    expect_same_bits_3x(run(segred::ids(d_ids.data(), M), segred::sum{}, segred::options{}.deterministic()),
                        "deterministic unsorted sum");
    expect_same_bits_3x(run(segred::ids(d_ids.data(), M), segred::mean{}, segred::options{}.deterministic()),
                        "deterministic unsorted mean");
    expect_same_bits_3x(run(segred::ids(d_ids.data(), M), segred::var{}, {}), "unsorted var (always sorted path)");
}

// A deterministic sum and mean of one column over the unsorted ids: sum
// into zeros, sum accumulated onto values with counts, mean with a fill.
// Values are small integers, so every sum is exact and equals the double
// reference whatever the order; the same bits come back on a second run.
// Then values with fractions: near the reference, and the same bits again
// (a race between two adds to one total would change them).
template <class T, class I>
void check_deterministic_sums(segref::rng& g, const std::vector<I>& ids, i64 M) {
    const i64 n = static_cast<i64>(ids.size());
    std::vector<T> v(static_cast<std::size_t>(n));
    for (T& x : v) x = static_cast<T>(segref::uniform_int(g, -2, 2));
    const segref::row_lists segs = segref::from_ids(ids.data(), M, n, false);
    auto d_v = mem.to_device(v);
    auto d_ids = mem.to_device(ids);
    const auto desc = segred::ids(static_cast<const I*>(d_ids.data()), M);
    auto in = segred::rows(static_cast<const T*>(d_v.data()), n);
    auto run = [&](auto reducer, segred::options opts, const std::vector<T>& start) {
        auto d_o = mem.to_device(start);
        segred::segment_reduce(segred::cuda::par, in, desc, segred::rows(d_o.data(), M), reducer,
                               opts.deterministic());
        return mem.to_host(d_o);
    };
    const std::vector<T> zeros(static_cast<std::size_t>(M), T(0));
    segref::params p;
    p.o = segref::op::sum;
    const std::vector<T> sum = run(segred::sum{}, {}, zeros);
    EXPECT_TRUE(segtest::equal_all(sum, segref::reduce<T>(v.data(), 1, segs, p).out, "sum"));
    EXPECT_TRUE(segtest::same_bits(sum, run(segred::sum{}, {}, zeros), "sum, second run"));
    // accumulate onto existing values, with counts.
    std::vector<T> start(static_cast<std::size_t>(M));
    for (T& x : start) x = static_cast<T>(segref::uniform_int(g, -9, 9));
    auto d_cnt = mem.to_device(std::vector<std::int64_t>(static_cast<std::size_t>(M), -5));
    const std::vector<T> acc = run(segred::sum{}, segred::options{}.accumulate().counts(d_cnt.data()), start);
    p.accumulate = true;
    p.initial.assign(start.begin(), start.end());
    const segref::result racc = segref::reduce<T>(v.data(), 1, segs, p);
    EXPECT_TRUE(segtest::equal_all(acc, racc.out, "accumulated sum"));
    EXPECT_TRUE(segtest::equal_all(mem.to_host(d_cnt), racc.counts, "counts"));
    // mean, an empty segment filled with -7.
    p = segref::params{};
    p.o = segref::op::mean;
    p.fill_mode = segref::fill::constant;
    p.fill_value = -7;
    const segref::result rmean = segref::reduce<T>(v.data(), 1, segs, p);
    std::vector<double> tol(rmean.out.size());
    for (std::size_t s = 0; s < tol.size(); ++s) tol[s] = std::fabs(rmean.out[s]) + 1e-30;
    const std::vector<T> mean = run(segred::mean{}, segred::options{}.fill(-7), zeros);
    EXPECT_TRUE(segtest::near_all(mean, rmean.out, &tol, sizeof(T) == 8 ? 1e-15 : 1e-6, "mean"));
    EXPECT_TRUE(segtest::same_bits(mean, run(segred::mean{}, segred::options{}.fill(-7), zeros), "mean, second run"));
    // Values in (-10, 10): rounding now depends on the order of the adds.
    for (T& x : v) x = static_cast<T>(segref::uniform_real(g, -10.0, 10.0));
    auto d_fractions = mem.to_device(v);
    in = segred::rows(static_cast<const T*>(d_fractions.data()), n);
    p = segref::params{};
    p.o = segref::op::sum;
    const segref::result rsum = segref::reduce<T>(v.data(), 1, segs, p);
    std::vector<double> scale(static_cast<std::size_t>(M), 0.0);
    for (i64 i = 0; i < n; ++i) scale[static_cast<std::size_t>(ids[static_cast<std::size_t>(i)])] += 10.0;
    for (double& x : scale) x += 1e-30;
    const std::vector<T> fsum = run(segred::sum{}, {}, zeros);
    EXPECT_TRUE(segtest::near_all(fsum, rsum.out, &scale, sizeof(T) == 8 ? 1e-14 : 1e-5, "sum of fractions"));
    EXPECT_TRUE(segtest::same_bits(fsum, run(segred::sum{}, {}, zeros), "sum of fractions, second run"));
    auto d_cnt2 = mem.to_device(std::vector<std::int64_t>(static_cast<std::size_t>(M), 0));
    const std::vector<T> facc = run(segred::sum{}, segred::options{}.accumulate().counts(d_cnt2.data()), zeros);
    EXPECT_TRUE(segtest::near_all(facc, rsum.out, &scale, sizeof(T) == 8 ? 1e-14 : 1e-5, "counted sum of fractions"));
    EXPECT_TRUE(segtest::same_bits(facc, run(segred::sum{}, segred::options{}.accumulate().counts(d_cnt2.data()), zeros),
                                   "counted sum of fractions, second run"));
}

// n rows of ids uniform over [0, M) but for a hot id (a third of the rows, or
// all of them with all_equal: the sorted tiles take them), ids 0 and M - 1,
// and an empty segment 1.
template <class T, class I>
void deterministic_sum_case(segref::rng& g, i64 M, i64 n = 3 * 32768 + 12345, bool all_equal = false) {
    SCOPED_TRACE("M = " + std::to_string(M) + ", n = " + std::to_string(n) + (sizeof(T) == 8 ? ", double" : ", float") +
                 (sizeof(I) == 8 ? ", int64 ids" : ", int32 ids") + (all_equal ? ", all ids equal" : ""));
    std::vector<I> ids = segref::random_ids<I>(g, n, 0, M - 1);
    for (i64 i = 0; i < n; i += all_equal ? 1 : 3) ids[static_cast<std::size_t>(i)] = static_cast<I>(M - 1);  // hot id
    if (M > 2)
        for (auto& k : ids)
            if (k == I(1)) k = I(0);  // segment 1 stays empty
    check_deterministic_sums<T>(g, ids, M);
}

// Few segments (private totals per thread, combined in a fixed order):
// several fold blocks and a partial one, M at and just past the private
// totals' limit (96 float or 64 double segments; past it the sorted tiles).
TEST_F(CudaPolicy, DeterministicSmallM) {
    SEGRED_SEEDED_RNG(g);
    for (i64 M : {1, 2, 64, 96, 97}) deterministic_sum_case<float, std::int32_t>(g, M);
    deterministic_sum_case<float, std::int64_t>(g, 33);
    for (i64 M : {64, 65}) deterministic_sum_case<double, std::int64_t>(g, M);
}

// Segments whose totals fit in a block's shared memory (tiles sorted by id
// there, the blocks' totals combined in a fixed order): one partial tile,
// several tiles a block and a partial last one (2^21 + 12345 rows), 2^16
// rows; M from just past the few-segment path, 4096 (keys of 13 bits: M
// itself marks the rows past n), to 40000 (160 KiB of float sums; with
// counts, as the accumulated sum and the mean need, they take the
// device-wide sort), and 60000 float sums past what fits; double sums at
// 13000 (104 KiB, 156 with counts) and 50000 (past); all ids equal. From
// 8192 segments up to what the claimed tiles hold (16384, 20000 and 13000
// here), the hot id sends the claimed tiles' sample to the sorted tiles.
TEST_F(CudaPolicy, DeterministicSortedTiles) {
    SEGRED_SEEDED_RNG(g);
    const i64 big = (i64(1) << 21) + 12345;
    deterministic_sum_case<float, std::int32_t>(g, 1000, 3000);
    for (i64 M : {97, 4096, 40000, 60000}) deterministic_sum_case<float, std::int32_t>(g, M, big);
    deterministic_sum_case<float, std::int64_t>(g, 16384, big);
    deterministic_sum_case<float, std::int32_t>(g, 20000, big, true);
    for (i64 M : {65, 13000, 50000}) deterministic_sum_case<double, std::int64_t>(g, M, i64(1) << 16);
    deterministic_sum_case<double, std::int32_t>(g, 300, big, true);
}

// Segments whose totals and owners fit in a block's shared memory, ids
// spread thin (tiles added in rounds of claimed ids; what the rounds leave
// goes to the sorted tiles): 2^21 + 12345 rows (515 tiles of 4096, three a
// block, the last one partial) of uniform ids, ids 0 and M - 1 at both ends
// and segment 1 empty, with three tiles (none of those sampled for skew)
// that the rounds cannot finish: one id on 20 rows of tile 5 (past the
// eight rounds: its first eight rows are claimed, the sorted tiles add the
// rest), one on 400 rows of tile 6 (the rounds stall on it after two or
// three), and one id on every row of tile 7 (skewed from the first round:
// sorted whole). M at the path's floor (8192), 16384 with int64 ids, 28000
// (the sum alone fits; with counts, the device-wide sort), and double sums
// at 12000.
template <class T, class I>
void claimed_tiles_case(segref::rng& g, i64 M) {
    SCOPED_TRACE("claimed tiles, M = " + std::to_string(M) + (sizeof(T) == 8 ? ", double" : ", float") +
                 (sizeof(I) == 8 ? ", int64 ids" : ", int32 ids"));
    const i64 n = (i64(1) << 21) + 12345, tile = 4096;
    std::vector<I> ids = segref::random_ids<I>(g, n, 0, M - 1);
    for (auto& k : ids)
        if (k == I(1)) k = I(0);
    ids.front() = I(M - 1);
    ids.back() = I(0);
    ids[1] = I(0);
    ids[static_cast<std::size_t>(n - 2)] = I(M - 1);
    auto spread = [&](i64 t, i64 rows, I id) {  // rows evenly over tile t
        for (i64 j = 0; j < rows; ++j) ids[static_cast<std::size_t>(t * tile + j * (tile / rows))] = id;
    };
    spread(5, 20, I(17));
    spread(6, 400, I(18));
    spread(7, tile, I(M - 1));
    check_deterministic_sums<T>(g, ids, M);
}

TEST_F(CudaPolicy, DeterministicClaimedTiles) {
    SEGRED_SEEDED_RNG(g);
    claimed_tiles_case<float, std::int32_t>(g, 8192);
    claimed_tiles_case<float, std::int64_t>(g, 16384);
    claimed_tiles_case<float, std::int32_t>(g, 28000);
    claimed_tiles_case<double, std::int32_t>(g, 12000);
}

// Host threads calling the deterministic small-M path at once, with M whose
// private totals need different amounts of shared memory (90 and 50 KiB
// past the default 48, and 30 within it): no launch may fail because another
// thread changed the kernel's shared-memory limit between its own setting
// and launch, and each thread's sums stay exact (small integers).
TEST_F(CudaPolicy, DeterministicSmallMFromHostThreadsAtOnce) {
    SEGRED_SEEDED_RNG(g);
    const i64 n = 50000;
    const std::vector<i64> sizes{90, 50, 30};
    std::vector<std::vector<std::int32_t>> ids;
    std::vector<std::vector<float>> expected;
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& x : v) x = static_cast<float>(segref::uniform_int(g, -3, 3));
    for (i64 M : sizes) {
        ids.push_back(segref::random_ids<std::int32_t>(g, n, 0, M - 1));
        segref::params p;
        p.o = segref::op::sum;
        const segref::result r = segref::reduce<float>(v.data(), 1, segref::from_ids(ids.back().data(), M, n, false), p);
        expected.emplace_back(r.out.begin(), r.out.end());
    }
    auto d_v = mem.to_device(v);
    std::vector<std::string> failures(sizes.size());
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < sizes.size(); ++t) {
        threads.emplace_back([&, t] {
            const i64 M = sizes[t];
            cudaStream_t stream;
            if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
                failures[t] = "no stream";
                return;
            }
            try {
                auto d_ids = mem.to_device(ids[t]);
                auto d_o = mem.to_device(std::vector<float>(static_cast<std::size_t>(M)));
                for (int round = 0; round < 200; ++round)
                    segred::segment_reduce(segred::cuda::par.on(stream), segred::rows(d_v.data(), n),
                                           segred::ids(d_ids.data(), M), segred::rows(d_o.data(), M), segred::sum{},
                                           segred::options{}.deterministic().bounds(segred::bounds_policy::unchecked));
                if (cudaStreamSynchronize(stream) != cudaSuccess) failures[t] = "stream failed";
                else if (mem.to_host(d_o) != expected[t]) failures[t] = "wrong sums";
            } catch (const std::exception& e) {
                failures[t] = e.what();
            }
            cudaStreamDestroy(stream);
        });
    }
    for (auto& th : threads) th.join();
    for (std::size_t t = 0; t < sizes.size(); ++t) EXPECT_EQ(failures[t], "") << "M = " << sizes[t];
}

// Every bad input throws segred::error naming argument, position and value,
// and leaves out (and counts) exactly as they were, also with accumulate.
TEST_F(CudaPolicy, BadInputThrowsAndWritesNothing) {
    const std::vector<float> v{1, 2, 3, 4, 5, 6};
    auto d_v = mem.to_device(v);
    const std::vector<float> before{9, 8, 7};
    auto d_o = mem.to_device(before);
    auto d_cnt = mem.to_device(std::vector<std::int64_t>{-3, -3, -3});
    auto expect_error = [&](auto desc, const char* needle, segred::options opts) {
        try {
            segred::segment_reduce(segred::cuda::par, segred::rows(d_v.data(), 6), desc, segred::rows(d_o.data(), 3),
                                   segred::sum{}, opts.counts(d_cnt.data()));
            ADD_FAILURE() << "no error for " << needle;
        } catch (const segred::cuda_error& e) {
            ADD_FAILURE() << "cuda_error instead of segred::error: " << e.what();
        } catch (const segred::error& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
        EXPECT_EQ(mem.to_host(d_o), before);
        EXPECT_EQ(mem.to_host(d_cnt), (std::vector<std::int64_t>{-3, -3, -3}));
    };
    auto bad_ids = mem.to_device(std::vector<std::int32_t>{0, 1, 2, 3, 1, 0});
    auto neg_ids = mem.to_device(std::vector<std::int64_t>{0, 1, -4, 2, 1, 0});
    auto unsorted = mem.to_device(std::vector<std::int32_t>{0, 1, 1, 0, 2, 2});
    auto bad_off = mem.to_device(std::vector<std::int64_t>{0, 4, 2, 6});
    auto long_off = mem.to_device(std::vector<std::int32_t>{0, 2, 4, 9});
    auto neg_len = mem.to_device(std::vector<std::int32_t>{3, -1, 4});
    auto short_len = mem.to_device(std::vector<std::int64_t>{1, 2, 2});
    auto bad_subs = mem.to_device(std::vector<std::int32_t>{0, 0, 0, 1, 0, 2, 0, 3, 0, 0, 0, 1});
    for (bool acc : {false, true}) {
        const segred::options o = segred::options{}.accumulate(acc);
        expect_error(segred::ids(bad_ids.data(), 3), "ids[3] = 3 is out of range [0, 3)", o);
        expect_error(segred::ids(neg_ids.data(), 3), "ids[2] = -4 is out of range [0, 3)", o);
        expect_error(segred::sorted_ids(unsorted.data(), 3), "sorted_ids[3] = 0 is less than sorted_ids[2] = 1", o);
        expect_error(segred::offsets(bad_off.data(), 3), "offsets[2] = 2 is less than offsets[1] = 4", o);
        expect_error(segred::offsets(long_off.data(), 3), "offsets[3] = 9 is past the last row (n = 6)", o);
        expect_error(segred::lengths(neg_len.data(), 3), "lengths[1] = -1 is negative", o);
        expect_error(segred::lengths(short_len.data(), 3), "lengths sum to 5 but values have 6 rows", o);
        expect_error(segred::subscripts(bad_subs.data(), {1, 3}), "subscripts[3, 1] = 3 is out of range [0, 3)", o);
        expect_error(segred::fixed(2, 4), "fixed(2, 4) covers 8 rows but values have 6", o);
    }
    // Under drop the bad rows are skipped instead: ids [0,1,2,3,1,0] -> [1+6, 2+5, 3].
    segred::segment_reduce(segred::cuda::par, segred::rows(d_v.data(), 6), segred::ids(bad_ids.data(), 3),
                           segred::rows(d_o.data(), 3), segred::sum{},
                           segred::options{}.bounds(segred::bounds_policy::drop));
    EXPECT_EQ(mem.to_host(d_o), (std::vector<float>{7, 7, 3}));
    // gather: out-of-range id throws under check, writes the fill under drop.
    auto d_g = mem.to_device(std::vector<float>(6, -1.f));
    EXPECT_THROW(segred::gather(segred::cuda::par, segred::rows(d_v.data(), 3), segred::rows(bad_ids.data(), 6),
                                segred::rows(d_g.data(), 6)),
                 segred::error);
    EXPECT_EQ(mem.to_host(d_g), std::vector<float>(6, -1.f));
    segred::gather(segred::cuda::par, segred::rows(d_v.data(), 3), segred::rows(bad_ids.data(), 6),
                   segred::rows(d_g.data(), 6), segred::options{}.bounds(segred::bounds_policy::drop).fill(-2.0));
    EXPECT_EQ(mem.to_host(d_g), (std::vector<float>{1, 2, 3, -2, 2, 1}));
}

// A sum over segments described by `arr` (make(pointer) gives the
// descriptor) on the host and on the GPU, six rows: the GPU's message is
// the host backend's, word for word, and names `needle` (none: no error,
// and the two outputs agree); after an error the GPU's out keeps its
// contents.
template <class I, class Make>
void expect_host_message(const std::vector<I>& arr, i64 M, Make make, const char* needle) {
    const i64 n = 6;
    const std::vector<float> v{1, 2, 3, 4, 5, 6};
    auto d_v = mem.to_device(v);
    SCOPED_TRACE("M = " + std::to_string(M) + (needle ? std::string(", ") + needle : std::string()));
    std::string host_message, cuda_message;
    std::vector<float> host_out(static_cast<std::size_t>(M), 0.5f);
    try {
        segred::segment_reduce(segred::host, segred::rows(v.data(), n), make(arr.data()),
                               segred::rows(host_out.data(), M), segred::sum{});
    } catch (const segred::error& e) {
        host_message = e.what();
    }
    const std::vector<float> before(static_cast<std::size_t>(M), 0.5f);
    auto d_arr = mem.to_device(arr);
    auto d_o = mem.to_device(before);
    try {
        segred::segment_reduce(segred::cuda::par, segred::rows(d_v.data(), n),
                               make(static_cast<const I*>(d_arr.data())), segred::rows(d_o.data(), M),
                               segred::sum{});
    } catch (const segred::error& e) {
        cuda_message = e.what();
    }
    EXPECT_EQ(cuda_message, host_message);
    if (needle == nullptr) {
        EXPECT_EQ(cuda_message, "");
        EXPECT_EQ(mem.to_host(d_o), host_out);
    } else {
        EXPECT_NE(cuda_message.find(needle), std::string::npos) << cuda_message;
        EXPECT_EQ(mem.to_host(d_o), before);
    }
}

// The checks of offsets and of lengths read one verdict back for all their
// rules (validate.cuh), then judge them in the host backend's order. Each
// rule alone, several at once (a negative first offset before a decrease,
// a decrease before an end past the rows, a negative length before a wrong
// sum), no segments at all, int32 lengths whose sum passes INT32_MAX, and
// the first of two bad places among 300000 (many blocks).
template <class I>
void offsets_and_lengths_verdicts() {
    SCOPED_TRACE(sizeof(I) == 4 ? "int32" : "int64");
    std::vector<I> many(300001, I(6));
    std::fill(many.begin(), many.begin() + 100000, I(0));
    many[200001] = 5;
    many[250000] = 1;
    const std::pair<std::vector<I>, const char*> offsets[] = {
        {{-2, 3, 1, 9}, "offsets[0] = -2 is negative"},
        {{0, 4, 2, 9}, "offsets[2] = 2 is less than offsets[1] = 4"},
        {{0, 2, 4, 9}, "offsets[3] = 9 is past the last row (n = 6)"},
        {{7}, "offsets[0] = 7 is past the last row (n = 6)"},
        {{0, 2, 6}, nullptr},
        {{6}, nullptr},
        {many, "offsets[200001] = 5 is less than offsets[200000] = 6"}};
    for (const auto& [off, needle] : offsets) {
        const i64 M = static_cast<i64>(off.size()) - 1;
        expect_host_message(off, M, [&](const I* p) { return segred::offsets(p, M); }, needle);
    }
    std::vector<I> many_lengths(300000, I(0));
    many_lengths[7] = 6;
    many_lengths[200001] = -1;
    many_lengths[250000] = -3;
    const I big = std::numeric_limits<std::int32_t>::max();
    const std::pair<std::vector<I>, const char*> lengths[] = {
        {{3, -1, 4}, "lengths[1] = -1 is negative"},
        {{1, 2, 2}, "lengths sum to 5 but values have 6 rows"},
        {{-1, 2}, "lengths[0] = -1 is negative"},
        {{}, "lengths sum to 0 but values have 6 rows"},
        {{big, big, 5}, "lengths sum to 4294967299 but values have 6 rows"},
        {{0, 6, 0}, nullptr},
        {many_lengths, "lengths[200001] = -1 is negative"}};
    for (const auto& [len, needle] : lengths) {
        const i64 M = static_cast<i64>(len.size());
        expect_host_message(len, M, [&](const I* p) { return segred::lengths(p, M); }, needle);
    }
}

TEST_F(CudaPolicy, OffsetsAndLengthsChecksNameWhatTheHostNames) {
    offsets_and_lengths_verdicts<std::int32_t>();
    offsets_and_lengths_verdicts<std::int64_t>();
}

// Offsets of segments long enough to be streamed from the caller's offsets
// in place (about 1000 rows each): under check, a decrease and an offset
// past the last row throw before anything is written; under drop the same
// offsets are clamped, and under unchecked valid ones give the check's
// result. int32 and int64 offsets; values small integers, so float sums are
// exact against the double loop.
template <class I>
void long_offsets_policies(segref::rng& g) {
    SCOPED_TRACE(sizeof(I) == 4 ? "int32 offsets" : "int64 offsets");
    const i64 n = 8000, M = 6;
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& x : v) x = static_cast<float>(segref::uniform_int(g, -8, 8));
    auto d_v = mem.to_device(v);
    const std::vector<float> before(static_cast<std::size_t>(M), 5.5f);
    auto d_o = mem.to_device(before);
    auto d_cnt = mem.to_device(std::vector<std::int64_t>(static_cast<std::size_t>(M), -3));
    auto run = [&](const std::vector<I>& off, segred::bounds_policy b) {
        auto d_off = mem.to_device(off);
        segred::segment_reduce(segred::cuda::par, segred::rows(d_v.data(), n), segred::offsets(d_off.data(), M),
                               segred::rows(d_o.data(), M), segred::sum{},
                               segred::options{}.bounds(b).counts(d_cnt.data()));
    };
    // The double loop over offsets clamped into [0, n] and made monotone.
    auto expect_sums = [&](const std::vector<I>& off) {
        std::vector<float> want(static_cast<std::size_t>(M));
        std::vector<std::int64_t> counts(static_cast<std::size_t>(M));
        i64 lo = std::min<i64>(std::max<i64>(off[0], 0), n);
        for (i64 s = 0; s < M; ++s) {
            const i64 hi = std::max(lo, std::min<i64>(std::max<i64>(off[static_cast<std::size_t>(s + 1)], 0), n));
            double sum = 0;
            for (i64 r = lo; r < hi; ++r) sum += v[static_cast<std::size_t>(r)];
            want[static_cast<std::size_t>(s)] = static_cast<float>(sum);
            counts[static_cast<std::size_t>(s)] = hi - lo;
            lo = hi;
        }
        EXPECT_EQ(mem.to_host(d_o), want);
        EXPECT_EQ(mem.to_host(d_cnt), counts);
    };
    const std::vector<I> bad = {0, 3000, 2500, 4000, 6000, 7000, 8000};
    const std::vector<I> past = {3, 1000, 2000, 3000, 4000, 5000, 8001};
    const std::pair<const std::vector<I>*, const char*> errors[] = {
        {&bad, "offsets[2] = 2500 is less than offsets[1] = 3000"},
        {&past, "offsets[6] = 8001 is past the last row (n = 8000)"}};
    for (const auto& [off, needle] : errors) {
        try {
            run(*off, segred::bounds_policy::check);
            ADD_FAILURE() << "no error for " << needle;
        } catch (const segred::error& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
        EXPECT_EQ(mem.to_host(d_o), before);
        EXPECT_EQ(mem.to_host(d_cnt), std::vector<std::int64_t>(static_cast<std::size_t>(M), -3));
    }
    for (const std::vector<I>* off : {&bad, &past}) {
        run(*off, segred::bounds_policy::drop);
        expect_sums(*off);
    }
    const std::vector<I> good = {3, 1003, 1003, 4000, 5999, 7000, 7995};  // 3 rows before, 5 after
    for (segred::bounds_policy b : {segred::bounds_policy::check, segred::bounds_policy::unchecked}) {
        run(good, b);
        expect_sums(good);
    }
}

TEST_F(CudaPolicy, BadLongOffsetsThrowAndWriteNothing) {
    SEGRED_SEEDED_RNG(g);
    long_offsets_policies<std::int32_t>(g);
    long_offsets_policies<std::int64_t>(g);
}

// Lengths whose sum passes 2^32 and wraps, in 32 bits, to exactly the row
// count: one column's short segments scan lengths into 32-bit starts
// (saturated), and the check still names the exact sum and writes nothing;
// under drop the rows past the clamped starts go nowhere, as on the host.
// Two row counts: segments of 2 rows on average (the tiles of derived keys)
// and of 16 (a thread a segment).
TEST_F(CudaPolicy, LengthsSummingPastInt32) {
    constexpr std::int32_t big = INT32_MAX;
    for (const i64 n : {i64(6), i64(48)}) {
        std::vector<float> v(static_cast<std::size_t>(n));
        for (i64 i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
        auto d_v = mem.to_device(v);
        const std::vector<float> before{9, 8, 7};
        auto d_o = mem.to_device(before);
        // int32: 2 (2^31 - 1) + (n + 2) = 2^32 + n; int64: 2^32 + (n - 1) + 1.
        auto wrap32 = mem.to_device(std::vector<std::int32_t>{big, big, static_cast<std::int32_t>(n + 2)});
        auto wrap64 = mem.to_device(std::vector<std::int64_t>{i64(1) << 32, n - 1, 1});
        const std::string sum = "lengths sum to " + std::to_string((i64(1) << 32) + n) + " but values have " +
                                std::to_string(n) + " rows";
        auto expect_sum_error = [&](auto desc) {
            try {
                segred::segment_reduce(segred::cuda::par, segred::rows(d_v.data(), n), desc,
                                       segred::rows(d_o.data(), 3), segred::sum{});
                ADD_FAILURE() << "no error, n = " << n;
            } catch (const segred::error& e) {
                EXPECT_NE(std::string(e.what()).find(sum), std::string::npos) << e.what();
            }
            EXPECT_EQ(mem.to_host(d_o), before);
        };
        expect_sum_error(segred::lengths(wrap32.data(), 3));
        expect_sum_error(segred::lengths(wrap64.data(), 3));

        // Under drop: the host's answer, worked out by hand too.
        const std::vector<std::int32_t> len32{big, big, static_cast<std::int32_t>(n + 2)};
        const std::vector<i64> len64{i64(1) << 32, n - 1, 1};
        const float all = static_cast<float>(n * (n + 1) / 2);
        auto drop_sums = [&](auto desc, auto host_desc) {
            const auto drop = segred::options{}.bounds(segred::bounds_policy::drop);
            segred::segment_reduce(segred::cuda::par, segred::rows(d_v.data(), n), desc, segred::rows(d_o.data(), 3),
                                   segred::sum{}, drop);
            std::vector<float> host(3, -1.f);
            segred::segment_reduce(segred::host, segred::rows(v.data(), n), host_desc, segred::rows(host.data(), 3),
                                   segred::sum{}, drop);
            EXPECT_EQ(host, (std::vector<float>{all, 0, 0}));
            EXPECT_EQ(mem.to_host(d_o), host) << "n = " << n;
        };
        drop_sums(segred::lengths(wrap32.data(), 3), segred::lengths(len32.data(), 3));
        drop_sums(segred::lengths(wrap64.data(), 3), segred::lengths(len64.data(), 3));
    }
}

// A failing CUDA call throws cuda_error naming the call and CUDA's error,
// writes nothing, and leaves no error set behind.
TEST_F(CudaPolicy, CudaErrorsAreReportedOnce) {
    auto d_ids = mem.to_device(std::vector<std::int32_t>{0, 1});
    try {
        // 2^40 bins: the temporary counts cannot be allocated (a fill of -1
        // keeps bincount off the path that adds straight into out).
        segred::bincount(segred::cuda::par, segred::rows(d_ids.data(), 2),
                         segred::rows(static_cast<std::int64_t*>(nullptr) + 1, std::int64_t(1) << 40),
                         segred::options{}.bounds(segred::bounds_policy::drop).fill(-1.0));
        ADD_FAILURE() << "no cuda_error";
    } catch (const segred::cuda_error& e) {
        EXPECT_NE(std::string(e.what()).find("cudaMallocFromPoolAsync"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("cudaErrorMemoryAllocation"), std::string::npos) << e.what();
        EXPECT_EQ(e.code(), static_cast<int>(cudaErrorMemoryAllocation));
    }
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

struct counting_pool {
    std::atomic<int> allocs{0}, frees{0};
    std::atomic<long long> live{0};
};

void* pool_alloc(std::size_t bytes, cudaStream_t s, void* ctx) {
    auto* pool = static_cast<counting_pool*>(ctx);
    void* p = nullptr;
    if (cudaMallocAsync(&p, bytes, s) != cudaSuccess) return nullptr;
    ++pool->allocs;
    pool->live += static_cast<long long>(bytes);
    return p;
}
void pool_free(void* p, std::size_t bytes, cudaStream_t s, void* ctx) {
    auto* pool = static_cast<counting_pool*>(ctx);
    cudaFreeAsync(p, s);
    ++pool->frees;
    pool->live -= static_cast<long long>(bytes);
}

TEST_F(CudaPolicy, StreamAndAllocatorHook) {
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    counting_pool pool;
    const auto par = segred::cuda::par.on(stream).with_allocator({pool_alloc, pool_free, &pool});
    const std::vector<float> v{10, 20, 30, 40, 50, 60};
    auto d_v = mem.to_device(v);
    auto d_ids = mem.to_device(std::vector<std::int64_t>{0, 1, 0, 2, 1, 2});
    auto d_o = mem.to_device(std::vector<float>(3));
    segred::accumarray(par, segred::rows(d_v.data(), 6), segred::ids(d_ids.data(), 3), segred::rows(d_o.data(), 3),
                       segred::max{});
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(mem.to_host(d_o), (std::vector<float>{30, 50, 60}));
    EXPECT_GT(pool.allocs.load(), 0);
    EXPECT_EQ(pool.allocs.load(), pool.frees.load());
    EXPECT_EQ(pool.live.load(), 0);
    cudaStreamDestroy(stream);
}

// Without an allocator hook, temporaries come from segred's own pool on the
// device, not the default one, and it keeps its memory across a
// synchronization (temporary_pool.cuh): after a call that takes temporaries
// (long segments streamed: a carry a chunk) and a device-wide
// synchronization, the pool still holds memory, none of it in use.
TEST_F(CudaPolicy, TemporaryPoolKeepsItsMemory) {
    int device = 0;
    ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
    const cudaMemPool_t pool = segred::cuda::temporary_pool();
    EXPECT_EQ(pool, segred::cuda::temporary_pool(device));
    cudaMemPool_t default_pool = nullptr;
    ASSERT_EQ(cudaDeviceGetDefaultMemPool(&default_pool, device), cudaSuccess);
    EXPECT_NE(pool, default_pool);
    std::uint64_t keep = 0;
    ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), cudaSuccess);
    EXPECT_EQ(keep, segred::cuda::temporary_pool_keep_bytes);

    const i64 n = 8000, M = 4;
    auto d_v = mem.to_device(std::vector<float>(static_cast<std::size_t>(n), 1.0f));
    auto d_off = mem.to_device(std::vector<std::int32_t>{0, 1000, 3000, 3000, 8000});
    auto d_o = mem.to_device(std::vector<float>(static_cast<std::size_t>(M), -1.0f));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(cudaMemPoolTrimTo(pool, 0), cudaSuccess);
    std::uint64_t reserved = 1, used = 1;
    ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved), cudaSuccess);
    EXPECT_EQ(reserved, 0u) << "trimmed";
    segred::segment_reduce(segred::cuda::par, segred::rows(d_v.data(), n), segred::offsets(d_off.data(), M),
                           segred::rows(d_o.data(), M), segred::sum{});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(mem.to_host(d_o), (std::vector<float>{1000, 2000, 0, 5000}));
    ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved), cudaSuccess);
    ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used), cudaSuccess);
    EXPECT_GT(reserved, 0u) << "the call's temporaries kept after a synchronization";
    EXPECT_EQ(used, 0u) << "none in use once the call's work is done";
}

// drop and unchecked must not wait for the stream: with the stream held
// behind a host callback, the calls must return while it is still held.
void CUDART_CB hold_stream(void* flag) {
    auto* released = static_cast<std::atomic<bool>*>(flag);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!released->load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
}

TEST_F(CudaPolicy, DropAndUncheckedNeverSynchronize) {
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    const i64 n = 100000, M = 1000;
    std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
    for (i64 i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = static_cast<std::int32_t>((i * 7919) % M);
    std::vector<std::int32_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    auto d_v = mem.to_device(std::vector<float>(static_cast<std::size_t>(n), 1.f));
    auto d_ids = mem.to_device(ids), d_sorted = mem.to_device(sorted);
    auto d_o = mem.to_device(std::vector<float>(static_cast<std::size_t>(M)));
    auto d_s = mem.to_device(std::vector<float>(static_cast<std::size_t>(n)));
    std::atomic<bool> released{false};
    ASSERT_EQ(cudaLaunchHostFunc(stream, hold_stream, &released), cudaSuccess);
    const auto t0 = std::chrono::steady_clock::now();
    const auto par = segred::cuda::par.on(stream);
    const auto vin = segred::rows(static_cast<const float*>(d_v.data()), n);
    for (auto b : {segred::bounds_policy::drop, segred::bounds_policy::unchecked}) {
        const segred::options o = segred::options{}.bounds(b);
        segred::accumarray(par, vin, segred::ids(d_ids.data(), M), segred::rows(d_o.data(), M), segred::sum{}, o);
        segred::accumarray(par, vin, segred::ids(d_ids.data(), M), segred::rows(d_o.data(), M), segred::max{}, o);
        segred::segment_reduce(par, vin, segred::sorted_ids(d_sorted.data(), M), segred::rows(d_o.data(), M),
                               segred::mean{}, o);
        segred::segment_softmax(par, vin, segred::ids(d_ids.data(), M), segred::rows(d_s.data(), n), o);
        segred::gather(par, segred::rows(static_cast<const float*>(d_v.data()), M), segred::rows(d_ids.data(), n),
                       segred::rows(d_s.data(), n), o);
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    released = true;
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_LT(waited, 5.0) << "a drop/unchecked call waited for the stream";
    std::vector<float> expect(static_cast<std::size_t>(n), 1.f);
    EXPECT_EQ(mem.to_host(d_s), expect);  // the gather ran last: src rows are all 1
    cudaStreamDestroy(stream);
}

__global__ void fill_half_ones(__half* p, std::int64_t n) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = __float2half(1.0f);
}

__global__ void fill_ids_mod(std::int32_t* p, std::int64_t n, std::int32_t m) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = static_cast<std::int32_t>(i % m);
}

__global__ void fill_lengths(std::int32_t* p, std::int64_t M, std::int32_t len) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < M; i += stride) p[i] = len;
}

// n above 2^31 rows, where 32-bit sizes would wrap: fixed segments (of 2^20
// rows, and of 4 through the stage of 16-byte vectors, whose tiles then
// start past row 2^31), lengths of 4 and 16 rows (one column: the tiles of
// derived keys and a thread a segment, from 64-bit starts, since 32-bit
// ones cannot hold n) and a bincount. Needs about 13 GB of device memory;
// skipped where it is short.
TEST_F(CudaPolicy, MoreThan2To31Rows) {
    const i64 M = 2049, size = i64(1) << 20, n = M * size;  // 2^31 + 2^20 rows
    ASSERT_GT(n, i64(1) << 31);
    std::size_t free_bytes = 0, total_bytes = 0;
    ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
    if (free_bytes < std::size_t(16) << 30) GTEST_SKIP() << "needs 16 GB of free device memory";
    {
        segtest::device_vector<__half> v(static_cast<std::size_t>(n));
        fill_half_ones<<<4096, 256>>>(v.data(), n);
        auto d_o = mem.to_device(std::vector<float>(static_cast<std::size_t>(M)));
        segred::segment_reduce(segred::cuda::par, segred::rows(static_cast<const __half*>(v.data()), n),
                               segred::fixed(size, M), segred::rows(d_o.data(), M));
        EXPECT_EQ(mem.to_host(d_o), std::vector<float>(static_cast<std::size_t>(M), static_cast<float>(size)));
        {
            const i64 segments = n / 4;
            segtest::device_vector<float> sums(static_cast<std::size_t>(segments));
            segred::segment_reduce(segred::cuda::par, segred::rows(static_cast<const __half*>(v.data()), n),
                                   segred::fixed(4, segments), segred::rows(sums.data(), segments));
            std::vector<float> host(static_cast<std::size_t>(segments));
            ASSERT_EQ(cudaMemcpy(host.data(), sums.data(), host.size() * sizeof(float), cudaMemcpyDeviceToHost),
                      cudaSuccess);
            const auto wrong = std::find_if(host.begin(), host.end(), [](float x) { return x != 4.f; });
            EXPECT_EQ(wrong, host.end()) << "fixed segments of 4 rows: segment " << (wrong - host.begin()) << " = "
                                         << (wrong == host.end() ? 0.f : *wrong);
        }
        for (const std::int32_t len : {4, 16}) {
            const i64 segments = n / len;
            segtest::device_vector<std::int32_t> lengths(static_cast<std::size_t>(segments));
            fill_lengths<<<4096, 256>>>(lengths.data(), segments, len);
            segtest::device_vector<float> sums(static_cast<std::size_t>(segments));
            segred::segment_reduce(segred::cuda::par, segred::rows(static_cast<const __half*>(v.data()), n),
                                   segred::lengths(static_cast<const std::int32_t*>(lengths.data()), segments),
                                   segred::rows(sums.data(), segments));
            std::vector<float> host(static_cast<std::size_t>(segments));
            ASSERT_EQ(cudaMemcpy(host.data(), sums.data(), host.size() * sizeof(float), cudaMemcpyDeviceToHost),
                      cudaSuccess);
            const auto wrong = std::find_if(host.begin(), host.end(), [&](float x) { return x != float(len); });
            EXPECT_EQ(wrong, host.end()) << "lengths of " << len << ": segment " << (wrong - host.begin()) << " = "
                                         << (wrong == host.end() ? 0.f : *wrong);
        }
    }
    {
        segtest::device_vector<std::int32_t> ids(static_cast<std::size_t>(n));
        fill_ids_mod<<<4096, 256>>>(ids.data(), n, 7);
        auto d_c = mem.to_device(std::vector<std::int64_t>(7));
        segred::bincount(segred::cuda::par, segred::rows(static_cast<const std::int32_t*>(ids.data()), n),
                         segred::rows(d_c.data(), 7));
        std::vector<std::int64_t> expect(7);
        for (i64 k = 0; k < 7; ++k) expect[static_cast<std::size_t>(k)] = n / 7 + (k < n % 7 ? 1 : 0);
        EXPECT_EQ(mem.to_host(d_c), expect);
    }
}

} // namespace
