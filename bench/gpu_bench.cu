// GPU benchmarks of segred's CUDA backend, against a device-to-device copy of
// the same bytes measured in the same process.
//
//   segred_gpu_bench --benchmark_min_time=0.05 --benchmark_out=segred.json --benchmark_out_format=json
//   segred_gpu_bench --benchmark_list_tests=true     # the case names; needs no GPU
//   segred_gpu_bench --rows_log2=20 ...              # smaller inputs, for a quick smoke run
//
// Case names: `<impl>/<op>/<form>/<dist>/<param>/<dtype>/<idtype>/w<width>`,
// e.g. `segred/sum/offsets/fixed/L32/f32/i32/w1`; Google Benchmark appends
// `/manual_time`. The part after `<impl>/` is the case; bench/gpu_peers.cu and
// bench/peers/gpu_peers.py use the same case names on the same bytes, and
// bench/peers/gpu_report.py joins them. The fields:
//   op      sum, sum_det (sum with options::deterministic), mean, max, argmax,
//           bincount (counts, int32 out), bincount_w (weighted), gather_bwd
//   form    offsets, lengths, sorted_ids, fixed (sorted forms), ids (unsorted)
//   dist    sorted forms: fixed (every segment L rows), uniform (lengths uniform
//           in [0, 2L]), pareto (floor(U^(-1/1.5)), at least 1), giant (one
//           segment of half the rows, the others 1 to 3 rows), empty90 (90%
//           empty, the others 1 to 64 rows);
//           ids: uniform (in [0, M)), zipf (s = 1.1 over M ids, ranks
//           scattered by a fixed bijection), hot50 (half the rows on id 0, the
//           rest uniform), same (every id 0)
//   param   L<len> (fixed, uniform), a1.5 (pareto), half (giant), p0.9
//           (empty90), M<segments> (ids)
//   dtype   f32, f16, bf16, f64 (values and output); none for bincount
//   idtype  i32, i64 (offsets, lengths or ids; nominal for fixed)
//   width   columns per row; rows = 2^rows_log2 / width, so every width moves
//           about the same bytes
//
// Measurement:
// - Inputs are generated on the device by a counter-based hash (mix32 below),
//   so every producer (this file, gpu_peers.cu, gpu_peers.py) builds the same
//   bytes for the same case name without a host RNG pass over 2^26 rows.
// - Each timed call is bracketed by CUDA events on the stream it runs on;
//   before it, outside the events, a kernel reads a buffer of
//   max(256 MiB, 4 x L2) so the timed call finds none of its inputs in L2
//   (a read, so no dirty lines are left to be written back inside the timing).
//   Inputs are also at least 128 MiB, more than twice the L2 of an H100/H200.
// - Two untimed warm-up calls per run (lazy module loading, memory pool
//   growth); the default memory pool keeps what it grew (release threshold
//   max), as a caching allocator would.
// - Reported per case (counters): GB/s of model bytes (each input read once,
//   each output written once) at the median time of the timed calls, that as
//   a fraction of the copy in the same run (frac_copy), the median time (ms),
//   the model bytes, a fingerprint of the index array (in_fp) and a checksum of
//   the output (out_sum), which the report compares across implementations.
// - segred calls use bounds_policy::unchecked: no validation scan, no
//   synchronization (check adds one read of the indices and one sync).
//
// The first part of this file (up to SEGRED_GPU_BENCH_SHARED_ONLY) holds the
// case list, the input generators, the timing and the driver; gpu_peers.cu
// includes it with that macro defined, so both binaries run the same cases on
// the same bytes and only the tables of what runs each case differ.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <benchmark/benchmark.h>
#include <cub/device/device_scan.cuh>
#ifndef SEGRED_GPU_BENCH_SHARED_ONLY
#include <segred/cuda/temporary_pool.cuh>  // kept like the default pool (below)
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace gpu_bench {

// ---------------------------------------------------------------------------
// Errors: every CUDA call is checked and a failure throws, so one broken case
// is reported as that case's error (SkipWithError) instead of a wrong number.

[[noreturn]] inline void fail(const std::string& msg) { throw std::runtime_error(msg); }

// `call` is the checked expression; its function name is enough to report.
inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
    if (e != cudaSuccess) {
        const std::string expr(call), path(file);
        fail(expr.substr(0, expr.find('(')) + " failed (" + path.substr(path.find_last_of('/') + 1) + ":" +
             std::to_string(line) + "): " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
    }
}
#define GB_CHECK(call) ::gpu_bench::check_cuda((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors show up here.
#define GB_CHECK_LAUNCH() ::gpu_bench::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

// Owning device array of n elements; dev_array(0) still allocates one, so its
// pointer is valid (a default-constructed one holds nothing).
template <class T>
class dev_array {
public:
    dev_array() = default;
    explicit dev_array(std::int64_t n) : n_(n) {
        GB_CHECK(cudaMalloc(&p_, static_cast<std::size_t>(std::max<std::int64_t>(n, 1)) * sizeof(T)));
    }
    dev_array(dev_array&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
    dev_array& operator=(dev_array&& o) noexcept {
        std::swap(p_, o.p_);
        std::swap(n_, o.n_);
        return *this;
    }
    dev_array(const dev_array&) = delete;
    dev_array& operator=(const dev_array&) = delete;
    ~dev_array() {
        if (p_ != nullptr) cudaFree(p_);  // no throw from a destructor; a failure here resurfaces at the next check
    }
    T* get() const { return p_; }
    std::int64_t size() const { return n_; }

private:
    T* p_ = nullptr;
    std::int64_t n_ = 0;
};

// Grid of one thread per element (blocks of 256), for n < 2^31 * 256.
inline unsigned grid_for(std::int64_t n) { return static_cast<unsigned>(std::max<std::int64_t>(1, (n + 255) / 256)); }

// ---------------------------------------------------------------------------
// Cases

enum class op_kind { sum, sum_det, mean, max, argmax, bincount, bincount_w, gather_bwd };
enum class form_kind { offsets, lengths, sorted_ids, fixed, ids };
enum class dist_kind { fixed, uniform, pareto, giant, empty90, zipf, hot50, same };
enum class value_kind { f32, f16, bf16, f64, none };
enum class index_kind { i32, i64 };

inline const char* name_of(op_kind o) {
    constexpr const char* n[] = {"sum", "sum_det", "mean", "max", "argmax", "bincount", "bincount_w", "gather_bwd"};
    return n[static_cast<int>(o)];
}
inline const char* name_of(form_kind f) {
    constexpr const char* n[] = {"offsets", "lengths", "sorted_ids", "fixed", "ids"};
    return n[static_cast<int>(f)];
}
inline const char* name_of(dist_kind d) {
    constexpr const char* n[] = {"fixed", "uniform", "pareto", "giant", "empty90", "zipf", "hot50", "same"};
    return n[static_cast<int>(d)];
}
inline const char* name_of(value_kind v) {
    constexpr const char* n[] = {"f32", "f16", "bf16", "f64", "none"};
    return n[static_cast<int>(v)];
}
inline const char* name_of(index_kind i) { return i == index_kind::i32 ? "i32" : "i64"; }

inline std::int64_t bytes_of(value_kind v) {
    constexpr std::int64_t b[] = {4, 2, 2, 8, 0};
    return b[static_cast<int>(v)];
}
inline std::int64_t bytes_of(index_kind i) { return i == index_kind::i32 ? 4 : 8; }

// Mean of floor(U^(-1/1.5)) for U uniform in (0, 1]: sum over k >= 1 of k^-1.5 = zeta(1.5).
constexpr double kZeta15 = 2.6123753486854883;

// Rows at width 1 (2^26 unless --rows_log2 says otherwise).
inline std::int64_t g_rows_log2 = 26;
inline std::int64_t total_rows() { return std::int64_t(1) << g_rows_log2; }

struct case_spec {
    op_kind op = op_kind::sum;
    form_kind form = form_kind::offsets;
    dist_kind dist = dist_kind::fixed;
    std::int64_t param = 0;  // L for fixed/uniform lengths, M for ids; unused otherwise
    value_kind vt = value_kind::f32;
    index_kind it = index_kind::i32;
    std::int64_t width = 1;

    bool unsorted() const { return form == form_kind::ids; }
    bool has_values() const { return op != op_kind::bincount; }
    std::int64_t rows() const { return total_rows() / width; }

    // Number of segments M (the output's rows). Mirrored by gpu_cases.py.
    std::int64_t segments() const {
        const std::int64_t r = rows();
        if (unsorted()) return param;
        switch (dist) {
        case dist_kind::fixed:
        case dist_kind::uniform: return r / param;
        case dist_kind::pareto: return static_cast<std::int64_t>(static_cast<double>(r) / kZeta15);
        case dist_kind::giant: return r / 4 + 1;  // half the rows in one segment, the rest in segments of 2 on average
        case dist_kind::empty90: return r * 4 / 13;  // mean length 0.1 * 32.5
        default: fail("segments(): no sorted distribution " + std::string(name_of(dist)));
        }
    }

    std::string param_label() const {
        if (unsorted()) return "M" + std::to_string(param);
        switch (dist) {
        case dist_kind::pareto: return "a1.5";
        case dist_kind::giant: return "half";
        case dist_kind::empty90: return "p0.9";
        default: return "L" + std::to_string(param);
        }
    }

    std::string name() const {
        return std::string(name_of(op)) + "/" + name_of(form) + "/" + name_of(dist) + "/" + param_label() + "/" +
               name_of(vt) + "/" + name_of(it) + "/w" + std::to_string(width);
    }

    // Key of the generated inputs: cases that differ only in op (other than
    // the value-less bincount) share them.
    std::string input_key() const {
        return std::string(has_values() ? name_of(vt) : "none") + "/" + name_of(form) + "/" + name_of(dist) + "/" +
               param_label() + "/" + name_of(it) + "/w" + std::to_string(width) + "/rows" + std::to_string(rows());
    }

    // Model bytes: values read once, the index array read once, the output
    // written once. Mirrored by gpu_cases.py (model_bytes).
    double model_bytes() const {
        const double r = static_cast<double>(rows()), M = static_cast<double>(segments()),
                     W = static_cast<double>(width);
        const double sv = static_cast<double>(bytes_of(has_values() ? vt : value_kind::none));
        const double si = static_cast<double>(bytes_of(it));
        double index = 0;
        switch (form) {
        case form_kind::offsets: index = (M + 1) * si; break;
        case form_kind::lengths: index = M * si; break;
        case form_kind::sorted_ids:
        case form_kind::ids: index = r * si; break;
        case form_kind::fixed: break;
        }
        const double out_elem = op == op_kind::argmax ? 8.0 : op == op_kind::bincount ? 4.0 : sv;
        return r * W * sv + index + M * W * out_elem;
    }

    bool valid() const {
        if (width < 1 || total_rows() % width != 0 || rows() < 1) return false;
        if (unsorted()) {
            const bool pow2 = param > 0 && (param & (param - 1)) == 0;
            return param >= 1 && (dist != dist_kind::zipf || pow2);
        }
        if (dist == dist_kind::fixed || dist == dist_kind::uniform)
            if (param < 1 || param > rows() || (dist == dist_kind::fixed && rows() % param != 0)) return false;
        return segments() >= 1;
    }
};

// Every case, in the order they run. One list for all producers: gpu_peers.cu
// registers the cases it has a peer for, gpu_peers.py reads the names from
// --benchmark_list_tests.
inline std::vector<case_spec> all_cases() {
    std::vector<case_spec> out;
    std::set<std::string> seen;
    auto add = [&](op_kind op, form_kind form, dist_kind dist, std::int64_t param, value_kind vt = value_kind::f32,
                   index_kind it = index_kind::i32, std::int64_t width = 1) {
        case_spec c{op, form, dist, param, vt, it, width};
        if (c.valid() && seen.insert(c.name()).second) out.push_back(c);
    };
    using O = op_kind;
    using F = form_kind;
    using D = dist_kind;
    const std::int64_t K = 1024, Mi = K * K;
    const std::int64_t lens[] = {1, 4, 32, K, Mi};

    // 1. Main sweep, sorted forms: fp32 sum, int32 indices, width 1.
    for (F f : {F::offsets, F::lengths, F::sorted_ids}) {
        for (std::int64_t L : lens) add(O::sum, f, D::fixed, L);
        add(O::sum, f, D::uniform, 32);
        add(O::sum, f, D::pareto, 0);
        add(O::sum, f, D::giant, 0);
        add(O::sum, f, D::empty90, 0);
    }
    for (std::int64_t L : lens) add(O::sum, F::fixed, D::fixed, L);

    // 2. Main sweep, unsorted ids: M from 64 to 2^26, then the skews at M = 2^20;
    //    the same points on the deterministic (sorted) path.
    for (O op : {O::sum, O::sum_det}) {
        for (std::int64_t M : {std::int64_t(64), 16 * K, 32 * K, 64 * K, 2 * Mi, 16 * Mi, 64 * Mi})
            add(op, F::ids, D::uniform, M);
        for (D d : {D::uniform, D::zipf, D::hot50, D::same}) add(op, F::ids, d, Mi);
    }
    // Block-private accumulators past 48 KiB (M = 2^14: 64 KiB of fp32 sums,
    // 128 KiB of sums and counts); max and argmax there keep global keys
    // (128 KiB of shared keys ran at 0.55x). Skewed there too: hot ids
    // serialized on one shared address until warps kept them in registers.
    for (D d : {D::zipf, D::hot50, D::same}) add(O::sum, F::ids, d, 16 * K);
    // Past three quarters of the L2 (2^24 fp32 sums: 64 MiB): rows
    // partitioned into buckets of ids, each summed in shared memory; the
    // skews there (hot ids crowd one bucket).
    for (D d : {D::zipf, D::hot50, D::same}) add(O::sum, F::ids, d, 16 * Mi);
    // Past it: the first 57856 ids in shared memory, the rest global.
    add(O::sum, F::ids, D::uniform, 100000);
    for (std::int64_t M : {64 * K, 128 * K}) add(O::sum, F::ids, D::zipf, M);
    for (O op : {O::mean, O::max, O::argmax}) add(op, F::ids, D::uniform, 16 * K);
    // The deterministic path's tiles sorted in shared memory (up to about
    // 53000 fp32 sums a block), skewed and all equal; from 8192 to about
    // 28000 fp32 sums, tiles added in rounds of claimed ids.
    for (std::int64_t M : {std::int64_t(1024), 4 * K, 8 * K, std::int64_t(24000), std::int64_t(50000)})
        add(O::sum_det, F::ids, D::uniform, M);
    for (D d : {D::zipf, D::same}) add(O::sum_det, F::ids, d, 16 * K);
    for (std::int64_t M : {std::int64_t(1024), 2 * K})  // 64 and 128 KiB of sums
        add(O::sum, F::ids, D::uniform, M, value_kind::f32, index_kind::i32, 16);

    // Representative points for the cross-sections: short and long segments,
    // few and many unsorted ids.
    struct point {
        F form;
        D dist;
        std::int64_t param;
    };
    const point points[] = {{F::offsets, D::fixed, 32}, {F::offsets, D::fixed, K}, {F::ids, D::uniform, 64 * K},
                            {F::ids, D::uniform, 16 * Mi}};

    // 3. Reducers.
    for (O op : {O::mean, O::max, O::argmax})
        for (const point& p : points) add(op, p.form, p.dist, p.param);
    // Unsorted max and argmax on either side of three quarters of the L2
    // (2^21 and 2^26 ids; 2^24 above): past it, rows partitioned into
    // buckets of ids, each bucket's 8-byte keys in shared memory; skewed
    // there (hot ids crowd one bucket; all equal: tiles added by the counting
    // pass).
    for (O op : {O::max, O::argmax}) {
        for (std::int64_t M : {2 * Mi, 64 * Mi}) add(op, F::ids, D::uniform, M);
        for (D d : {D::zipf, D::same}) add(op, F::ids, d, 16 * Mi);
    }

    // 4. Value types, then 64-bit indices (sorted ids too: their path differs from offsets).
    for (value_kind vt : {value_kind::f16, value_kind::bf16, value_kind::f64})
        for (const point& p : points) add(O::sum, p.form, p.dist, p.param, vt);
    for (const point& p : {point{F::offsets, D::fixed, 32}, point{F::sorted_ids, D::fixed, 32},
                           point{F::ids, D::uniform, 64 * K}, point{F::ids, D::uniform, 16 * Mi}})
        add(O::sum, p.form, p.dist, p.param, value_kind::f32, index_kind::i64);

    // 5. Widths at the same total bytes (rows = 2^26 / width): segments of 32
    //    rows, 64 ids, and ids averaging 16 rows each (GNN-like).
    for (std::int64_t w : {std::int64_t(1), std::int64_t(16), std::int64_t(64), std::int64_t(256)}) {
        const std::int64_t rows = total_rows() / w;
        add(O::sum, F::offsets, D::fixed, 32, value_kind::f32, index_kind::i32, w);
        add(O::sum, F::ids, D::uniform, 64, value_kind::f32, index_kind::i32, w);
        add(O::sum, F::ids, D::uniform, rows / 16, value_kind::f32, index_kind::i32, w);
        add(O::sum_det, F::ids, D::uniform, rows / 16, value_kind::f32, index_kind::i32, w);
    }
    // Wide sorted rows in the other value types (a 16-byte vector is 8 halves
    // or 2 doubles a lane) and with the other states (sum and count, value and row).
    for (std::int64_t w : {std::int64_t(16), std::int64_t(64), std::int64_t(256)})
        for (value_kind vt : {value_kind::f16, value_kind::f64})
            add(O::sum, F::offsets, D::fixed, 32, vt, index_kind::i32, w);
    for (O op : {O::mean, O::argmax}) add(op, F::offsets, D::fixed, 32, value_kind::f32, index_kind::i32, 64);
    // Wide half-precision rows over unsorted ids (four columns a vector atomic
    // from 8-byte loads), ids averaging 16 rows each.
    add(O::sum, F::ids, D::uniform, total_rows() / 64 / 16, value_kind::f16, index_kind::i32, 64);
    // Rows of 4 and 8 floats (one and two 16-byte vectors), and short or
    // mixed segments of wider rows: a thread per segment and vector of
    // columns where segments are short, a warp per segment where they are
    // long (cuda/detail/reduce_layout.cuh).
    for (std::int64_t w : {std::int64_t(4), std::int64_t(8)})
        for (std::int64_t L : {std::int64_t(4), std::int64_t(32), std::int64_t(1024)})
            add(O::sum, F::offsets, D::fixed, L, value_kind::f32, index_kind::i32, w);
    for (std::int64_t w : {std::int64_t(16), std::int64_t(64)})
        for (std::int64_t L : {std::int64_t(1), std::int64_t(4)})
            add(O::sum, F::offsets, D::fixed, L, value_kind::f32, index_kind::i32, w);
    for (std::int64_t w : {std::int64_t(4), std::int64_t(16), std::int64_t(64)})
        add(O::sum, F::offsets, D::uniform, 32, value_kind::f32, index_kind::i32, w);
    for (std::int64_t w : {std::int64_t(4), std::int64_t(16)})
        add(O::max, F::offsets, D::fixed, 32, value_kind::f32, index_kind::i32, w);

    // 6. bincount, unweighted (int32 counts) and weighted (fp32).
    for (O op : {O::bincount, O::bincount_w}) {
        const value_kind vt = op == O::bincount ? value_kind::none : value_kind::f32;
        for (std::int64_t M : {std::int64_t(64), 16 * K, 64 * K, 16 * Mi}) add(op, F::ids, D::uniform, M, vt);
        add(op, F::ids, D::zipf, Mi, vt);
    }

    // 7. gather_backward into a table of M rows: width 1 with M = 2^16 and 2^24
    //    (1024 and 4 uses per row); width 64 (2^20 gradient rows) with M = 2^14
    //    and 2^18 (64 and 4 uses per row).
    add(O::gather_bwd, F::ids, D::uniform, 64 * K);
    add(O::gather_bwd, F::ids, D::uniform, 16 * Mi);
    add(O::gather_bwd, F::ids, D::uniform, 16 * K, value_kind::f32, index_kind::i32, 64);
    add(O::gather_bwd, F::ids, D::uniform, 256 * K, value_kind::f32, index_kind::i32, 64);
    return out;
}

// ---------------------------------------------------------------------------
// Input generation. Counter-based: element i of a stream is a function of
// (stream key, i) alone, so kernels are trivially parallel and gpu_peers.py
// rebuilds the same bytes with torch integer ops. Mirrored there; change both.

// lowbias32 (Chris Wellons' integer hash): a bijection on 32 bits.
__host__ __device__ inline std::uint32_t mix32(std::uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}
constexpr std::uint32_t kKeyValues = 0x243F6A88U, kKeyIds = 0x85A308D3U, kKeyLengths = 0x13198A2EU;
__host__ __device__ inline std::uint32_t rnd(std::uint32_t key, std::int64_t i) {
    return mix32(mix32(static_cast<std::uint32_t>(i)) ^ key);
}

// Value element e: 24 random bits as a float in [-1, 1), exactly representable
// in fp32 (so the fp16/bf16 values are its round-to-nearest-even conversions).
__host__ __device__ inline float value_at(std::int64_t e) {
    return static_cast<float>(rnd(kKeyValues, e) >> 8) * (1.0f / 8388608.0f) - 1.0f;
}

template <class T>
__device__ inline T from_float(float x) {
    if constexpr (std::is_same<T, __half>::value) return __float2half_rn(x);
    else if constexpr (std::is_same<T, __nv_bfloat16>::value) return __float2bfloat16_rn(x);
    else return static_cast<T>(x);
}

template <class T>
__global__ void k_values(T* v, std::int64_t n) {
    const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e < n) v[e] = from_float<T>(value_at(e));
}

// Upper bound: the number of entries of the sorted a[0..n) that are <= x.
template <class T>
__host__ __device__ inline std::int64_t count_le(const T* a, std::int64_t n, T x) {
    std::int64_t lo = 0, hi = n;
    while (lo < hi) {
        const std::int64_t mid = (lo + hi) / 2;
        if (a[mid] <= x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// Unsorted id of row i. zipf_cdf: cumulative weights (k+1)^-1.1, k < M.
__host__ __device__ inline std::uint64_t id_at(dist_kind dist, std::int64_t M, std::int64_t i,
                                                const double* zipf_cdf) {
    const std::uint64_t h = rnd(kKeyIds, i);
    const std::uint64_t m = static_cast<std::uint64_t>(M);
    switch (dist) {
    case dist_kind::uniform: return (h * m) >> 32;
    case dist_kind::zipf: {
        const double x = static_cast<double>(h) * 2.3283064365386963e-10 * zipf_cdf[M - 1];
        const std::int64_t rank = count_le(zipf_cdf, M, x);
        // odd multiplier: a bijection on [0, M) for M a power of two, so hot ids are scattered
        return (static_cast<std::uint64_t>(rank < M ? rank : M - 1) * 0x9E3779B1ULL) & (m - 1);
    }
    case dist_kind::hot50: return (h & 1U) ? 0 : ((h >> 1) * m) >> 31;
    default: return 0;  // same
    }
}

template <class I>
__global__ void k_ids(I* ids, std::int64_t rows, dist_kind dist, std::int64_t M, const double* zipf_cdf) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < rows) ids[i] = static_cast<I>(id_at(dist, M, i, zipf_cdf));
}

// Length of sorted segment s (before the offsets are fitted to the rows).
__host__ __device__ inline std::int64_t length_at(dist_kind dist, std::int64_t s, std::int64_t M, std::int64_t L,
                                                   std::int64_t rows) {
    const std::uint32_t h = rnd(kKeyLengths, s);
    switch (dist) {
    case dist_kind::fixed: return L;
    case dist_kind::uniform: return static_cast<std::int64_t>(h % static_cast<std::uint32_t>(2 * L + 1));
    case dist_kind::pareto:
        return static_cast<std::int64_t>(floor(pow((static_cast<double>(h) + 1.0) * 2.3283064365386963e-10, -1.0 / 1.5)));
    case dist_kind::giant: return s == M / 2 ? rows / 2 : 1 + static_cast<std::int64_t>(h % 3U);
    default: return h % 10U == 0 ? 1 + static_cast<std::int64_t>((h / 10U) % 64U) : 0;  // empty90
    }
}

__global__ void k_lengths(std::int64_t* len, std::int64_t M, dist_kind dist, std::int64_t L, std::int64_t rows) {
    const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s < M) len[s] = length_at(dist, s, M, L, rows);
}

// After the exclusive sum: clamp to the rows and end at exactly `rows`, so the
// last segments absorb the difference between the drawn lengths and the rows.
__global__ void k_fit_offsets(std::int64_t* off, std::int64_t M, std::int64_t rows) {
    const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s < M) off[s] = off[s] < rows ? off[s] : rows;
    else if (s == M) off[M] = rows;
}

template <class I>
__global__ void k_narrow(const std::int64_t* in, I* out, std::int64_t n) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = static_cast<I>(in[i]);
}

template <class I>
__global__ void k_lengths_of(const std::int64_t* off, I* len, std::int64_t M) {
    const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s < M) len[s] = static_cast<I>(off[s + 1] - off[s]);
}

// Sorted id of row i: the last segment s with off[s] <= i (so empty segments are skipped).
template <class I>
__global__ void k_sorted_ids(const std::int64_t* off, std::int64_t M, I* ids, std::int64_t rows) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < rows) ids[i] = static_cast<I>(count_le(off, M + 1, i) - 1);
}

// Cumulative Zipf weights, summed on the host in order (gpu_peers.py sums the
// same doubles in the same order, so both sample the same ids).
inline std::vector<double> zipf_cdf(std::int64_t M) {
    std::vector<double> cdf(static_cast<std::size_t>(M));
    double acc = 0;
    for (std::int64_t k = 0; k < M; ++k) {
        acc += std::pow(static_cast<double>(k + 1), -1.1);
        cdf[static_cast<std::size_t>(k)] = acc;
    }
    return cdf;
}

// ---------------------------------------------------------------------------
// Checksums, compared across implementations by the report.
//   integer arrays: sum of a[k] * ((k mod 1024) + 1), mod 2^50 (exact in a
//                   double; position-weighted so misplaced counts show);
//   floating arrays: sum of |a[k]| over entries that are finite and at most
//                   1e30 (empty segments read 0, -inf, NaN or the lowest float
//                   depending on the implementation; all count as 0).

__device__ inline double as_double(float x) { return x; }
__device__ inline double as_double(double x) { return x; }
__device__ inline double as_double(__half x) { return __half2float(x); }
__device__ inline double as_double(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T>
__global__ void k_checksum(const T* a, std::int64_t n, double* fsum, unsigned long long* isum) {
    double f = 0;
    unsigned long long s = 0;
    for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
         k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        if constexpr (std::is_integral<T>::value) {
            s += static_cast<unsigned long long>(static_cast<long long>(a[k])) *
                 static_cast<unsigned long long>((k & 1023) + 1);
        } else {
            const double x = as_double(a[k]);
            if (isfinite(x) && fabs(x) <= 1e30) f += fabs(x);
        }
    }
    for (int d = 16; d > 0; d /= 2) {
        f += __shfl_down_sync(0xffffffffU, f, d);
        s += __shfl_down_sync(0xffffffffU, s, d);
    }
    if ((threadIdx.x & 31) == 0) {
        if constexpr (std::is_integral<T>::value) atomicAdd(isum, s);
        else atomicAdd(fsum, f);
    }
}

template <class T>
double checksum(const T* a, std::int64_t n) {
    dev_array<double> fsum(1);
    dev_array<unsigned long long> isum(1);
    GB_CHECK(cudaMemset(fsum.get(), 0, sizeof(double)));
    GB_CHECK(cudaMemset(isum.get(), 0, sizeof(unsigned long long)));
    const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(grid_for(n), 4096));
    k_checksum<T><<<grid, 256>>>(a, n, fsum.get(), isum.get());
    GB_CHECK_LAUNCH();
    double f = 0;
    unsigned long long s = 0;
    GB_CHECK(cudaMemcpy(&f, fsum.get(), sizeof f, cudaMemcpyDeviceToHost));
    GB_CHECK(cudaMemcpy(&s, isum.get(), sizeof s, cudaMemcpyDeviceToHost));
    if constexpr (std::is_integral<T>::value) return static_cast<double>(s & ((1ULL << 50) - 1));
    else return f;
}

// ---------------------------------------------------------------------------
// Inputs of one case, on the device.

template <class T, class I>
struct inputs {
    std::int64_t rows = 0, M = 0, width = 1, L = 0;
    dev_array<T> values;  // rows x width, row-major (one element if the op has no values)
    dev_array<I> index;   // offsets [M+1], lengths [M], sorted or unsorted ids [rows]; empty for fixed
    double index_fp = 0;  // checksum of the index array
};

template <class T, class I>
std::shared_ptr<inputs<T, I>> generate(const case_spec& c) {
    auto in = std::make_shared<inputs<T, I>>();
    in->rows = c.rows();
    in->M = c.segments();
    in->width = c.width;
    in->L = c.param;
    const std::int64_t rows = in->rows, M = in->M;
    if (c.has_values()) {
        const std::int64_t n = rows * c.width;
        if (n > (std::int64_t(1) << 32)) fail("more than 2^32 value elements: the hash streams are 32-bit");
        in->values = dev_array<T>(n);
        k_values<T><<<grid_for(n), 256>>>(in->values.get(), n);
        GB_CHECK_LAUNCH();
    } else {
        in->values = dev_array<T>(0);
    }

    if (c.form == form_kind::ids) {
        in->index = dev_array<I>(rows);
        dev_array<double> cdf;
        if (c.dist == dist_kind::zipf) {
            const std::vector<double> h = zipf_cdf(M);
            cdf = dev_array<double>(M);
            GB_CHECK(cudaMemcpy(cdf.get(), h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice));
        }
        k_ids<I><<<grid_for(rows), 256>>>(in->index.get(), rows, c.dist, M, cdf.get());
        GB_CHECK_LAUNCH();
        GB_CHECK(cudaDeviceSynchronize());  // before cdf is freed
    } else if (c.form != form_kind::fixed) {
        dev_array<std::int64_t> off(M + 1);
        k_lengths<<<grid_for(M), 256>>>(off.get(), M, c.dist, c.param, rows);
        GB_CHECK_LAUNCH();
        // In-place exclusive sum of the lengths in off[0..M).
        std::size_t temp_bytes = 0;
        GB_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, off.get(), off.get(), M));
        dev_array<unsigned char> temp(static_cast<std::int64_t>(temp_bytes));
        GB_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, off.get(), off.get(), M));
        k_fit_offsets<<<grid_for(M + 1), 256>>>(off.get(), M, rows);
        GB_CHECK_LAUNCH();
        if (c.form == form_kind::offsets) {
            in->index = dev_array<I>(M + 1);
            k_narrow<I><<<grid_for(M + 1), 256>>>(off.get(), in->index.get(), M + 1);
        } else if (c.form == form_kind::lengths) {
            in->index = dev_array<I>(M);
            k_lengths_of<I><<<grid_for(M), 256>>>(off.get(), in->index.get(), M);
        } else {
            in->index = dev_array<I>(rows);
            k_sorted_ids<I><<<grid_for(rows), 256>>>(off.get(), M, in->index.get(), rows);
        }
        GB_CHECK_LAUNCH();
        GB_CHECK(cudaDeviceSynchronize());  // before off and temp are freed
    }
    if (in->index.size() > 0) in->index_fp = checksum(in->index.get(), in->index.size());
    GB_CHECK(cudaDeviceSynchronize());
    return in;
}

// Google Benchmark calls a case's function several times while it settles the
// iteration count, and consecutive cases often share inputs: the inputs of the
// last case are kept, one set for all value and index types, so memory stays
// bounded.
struct input_cache {
    std::string key;
    std::shared_ptr<void> held;
};
inline input_cache& the_input_cache() {
    static input_cache cache;
    return cache;
}

template <class T, class I>
std::shared_ptr<inputs<T, I>> inputs_for(const case_spec& c) {
    input_cache& cache = the_input_cache();
    const std::string k = c.input_key() + "/" + typeid(T).name() + "/" + typeid(I).name();
    if (k != cache.key) {
        cache.held.reset();  // free the previous inputs before generating the next
        cache.key.clear();
        cache.held = generate<T, I>(c);
        cache.key = k;
    }
    return std::static_pointer_cast<inputs<T, I>>(cache.held);
}

// ---------------------------------------------------------------------------
// Timing

// Reads a buffer larger than L2, evicting what the previous call left there.
__global__ void k_flush(const int4* buf, std::int64_t n, int* sink) {
    int acc = 0;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const int4 v = buf[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x5EED) *sink = acc;  // the buffer is zero: never taken, but the loads cannot be dropped
}

struct l2_flusher {
    std::int64_t bytes = 0;
    dev_array<int4> buf;
    dev_array<int> sink{1};
    l2_flusher() {
        int dev = 0, l2 = 0;
        GB_CHECK(cudaGetDevice(&dev));
        GB_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
        bytes = std::max<std::int64_t>(std::int64_t(256) << 20, std::int64_t(4) * l2);
        buf = dev_array<int4>(bytes / 16);
        GB_CHECK(cudaMemset(buf.get(), 0, static_cast<std::size_t>(bytes)));
    }
    void operator()() const {
        k_flush<<<1024, 256>>>(buf.get(), buf.size(), sink.get());
        GB_CHECK_LAUNCH();
    }
};
inline const l2_flusher& flusher() {
    static const l2_flusher f;
    return f;
}

struct event_pair {
    cudaEvent_t a = nullptr, b = nullptr;
    event_pair() {
        GB_CHECK(cudaEventCreate(&a));
        GB_CHECK(cudaEventCreate(&b));
    }
    ~event_pair() {
        cudaEventDestroy(a);
        cudaEventDestroy(b);
    }
    event_pair(const event_pair&) = delete;
    event_pair& operator=(const event_pair&) = delete;
};

// Times f (work queued on the legacy default stream) once per benchmark
// iteration; returns the median in milliseconds.
template <class F>
double time_calls(benchmark::State& st, F&& f) {
    const l2_flusher& flush = flusher();
    f();
    f();
    GB_CHECK(cudaDeviceSynchronize());
    event_pair ev;
    std::vector<double> ms;
    for (auto _ : st) {
        flush();
        GB_CHECK(cudaEventRecord(ev.a, 0));
        f();
        GB_CHECK(cudaEventRecord(ev.b, 0));
        GB_CHECK(cudaEventSynchronize(ev.b));
        float t = 0;
        GB_CHECK(cudaEventElapsedTime(&t, ev.a, ev.b));
        st.SetIterationTime(static_cast<double>(t) / 1e3);
        ms.push_back(t);
    }
    GB_CHECK(cudaDeviceSynchronize());
    if (ms.empty()) fail("no timed iteration");
    std::sort(ms.begin(), ms.end());
    const std::size_t h = ms.size() / 2;
    return ms.size() % 2 ? ms[h] : (ms[h - 1] + ms[h]) / 2;
}

// GB/s of the device-to-device copy, set by the copy case (which runs first).
inline double g_copy_gbps = 0;

inline void report(benchmark::State& st, double bytes, double median_ms, double in_fp, double out_sum) {
    const double gbps = bytes / (median_ms * 1e-3) / 1e9;
    st.counters["GB/s"] = gbps;
    st.counters["frac_copy"] = g_copy_gbps > 0 ? gbps / g_copy_gbps : 0.0;
    st.counters["ms"] = median_ms;
    st.counters["bytes"] = bytes;
    st.counters["in_fp"] = in_fp;
    st.counters["out_sum"] = out_sum;
}

// cudaMemcpyAsync of 2^rows_log2 fp32 (read + write), the reference of every fraction.
inline void bench_copy(benchmark::State& st) {
    const std::int64_t n = total_rows();
    dev_array<float> a(n), b(n);
    GB_CHECK(cudaMemset(a.get(), 0, static_cast<std::size_t>(n) * sizeof(float)));
    GB_CHECK(cudaMemset(b.get(), 0, static_cast<std::size_t>(n) * sizeof(float)));
    const double ms = time_calls(st, [&] {
        GB_CHECK(cudaMemcpyAsync(b.get(), a.get(), static_cast<std::size_t>(n) * sizeof(float),
                                 cudaMemcpyDeviceToDevice, 0));
    });
    const double bytes = 2.0 * static_cast<double>(n) * sizeof(float);
    g_copy_gbps = bytes / (ms * 1e-3) / 1e9;
    report(st, bytes, ms, 0, 0);
}

// ---------------------------------------------------------------------------
// Driver: a table says which function runs which (op, form, dtype, idtype);
// every case of all_cases() with a matching entry is registered as
// `<impl>/<case name>`.

using runner_fn = void (*)(benchmark::State&, const case_spec&);
struct runner {
    const char* impl;
    op_kind op;
    form_kind form;
    value_kind vt;
    index_kind it;
    runner_fn fn;
    bool width1_only;  // CUB's segmented reduce, reduce-by-key and histogram take one column
};

template <class T>
constexpr value_kind value_kind_of() {
    if constexpr (std::is_same<T, float>::value) return value_kind::f32;
    else if constexpr (std::is_same<T, __half>::value) return value_kind::f16;
    else if constexpr (std::is_same<T, __nv_bfloat16>::value) return value_kind::bf16;
    else {
        static_assert(std::is_same<T, double>::value, "value types: float, __half, __nv_bfloat16, double");
        return value_kind::f64;
    }
}
template <class I>
constexpr index_kind index_kind_of() {
    static_assert(std::is_same<I, std::int32_t>::value || std::is_same<I, std::int64_t>::value, "ids: int32, int64");
    return std::is_same<I, std::int32_t>::value ? index_kind::i32 : index_kind::i64;
}

// Strips --rows_log2=K (ours) from argv; the rest goes to Google Benchmark.
inline void parse_own_flags(int& argc, char** argv) {
    int kept = 1;
    for (int i = 1; i < argc; ++i) {
        const char* flag = "--rows_log2=";
        if (std::strncmp(argv[i], flag, std::strlen(flag)) == 0) {
            g_rows_log2 = std::atoll(argv[i] + std::strlen(flag));
            if (g_rows_log2 < 10 || g_rows_log2 > 30) {
                std::fprintf(stderr, "--rows_log2 must be in [10, 30]\n");
                std::exit(2);
            }
        } else {
            argv[kept++] = argv[i];
        }
    }
    argc = kept;
}

// Device facts in the JSON context; the memory pool keeps what it grows.
// Without a device (listing the cases on a build machine) it only says so.
inline void setup_device(const char* producer) {
    benchmark::AddCustomContext("producer", producer);
    benchmark::AddCustomContext("rows_log2", std::to_string(g_rows_log2));
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        std::fprintf(stderr, "%s: no CUDA device; listing works, running does not\n", producer);
        return;
    }
    int dev = 0;
    GB_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp p{};
    GB_CHECK(cudaGetDeviceProperties(&p, dev));
    cudaMemPool_t pool;
    GB_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
    std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
    GB_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
#ifndef SEGRED_GPU_BENCH_SHARED_ONLY
    // segred's temporaries come from its own pool (segred/cuda/temporary_pool.cuh),
    // which keeps 256 MiB: keep all of it too, as the default pool above.
    GB_CHECK(cudaMemPoolSetAttribute(segred::cuda::temporary_pool(dev), cudaMemPoolAttrReleaseThreshold, &keep));
#endif
    int driver = 0, runtime = 0;
    GB_CHECK(cudaDriverGetVersion(&driver));
    GB_CHECK(cudaRuntimeGetVersion(&runtime));
    benchmark::AddCustomContext("device", p.name);
    benchmark::AddCustomContext("sm_count", std::to_string(p.multiProcessorCount));
    benchmark::AddCustomContext("l2_bytes", std::to_string(p.l2CacheSize));
    benchmark::AddCustomContext("cuda_driver", std::to_string(driver));
    benchmark::AddCustomContext("cuda_runtime", std::to_string(runtime));
}

inline int run_main(int argc, char** argv, const char* producer, const std::vector<runner>& table,
                    bool every_case_needs_a_runner) {
    parse_own_flags(argc, argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    try {
        setup_device(producer);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", producer, e.what());
        return 1;
    }

    benchmark::RegisterBenchmark("copy", [](benchmark::State& st) {
        try {
            bench_copy(st);
        } catch (const std::exception& e) {
            st.SkipWithError(e.what());
        }
    })->UseManualTime()->Unit(benchmark::kMicrosecond);

    int registered = 0;
    for (const case_spec& c : all_cases()) {
        bool any = false;
        for (const runner& r : table) {
            if (r.op != c.op || r.form != c.form || r.vt != c.vt || r.it != c.it) continue;
            if (r.width1_only && c.width != 1) continue;
            any = true;
            const runner_fn fn = r.fn;
            benchmark::RegisterBenchmark((std::string(r.impl) + "/" + c.name()).c_str(),
                                         [fn, c](benchmark::State& st) {
                                             try {
                                                 fn(st, c);
                                             } catch (const std::exception& e) {
                                                 st.SkipWithError(e.what());
                                             }
                                         })
                ->UseManualTime()
                ->Unit(benchmark::kMicrosecond);
            ++registered;
        }
        if (!any && every_case_needs_a_runner) {
            std::fprintf(stderr, "%s: no runner for case %s\n", producer, c.name().c_str());
            return 1;
        }
    }
    std::fprintf(stderr, "%s: %d cases, rows = 2^%lld\n", producer, registered, static_cast<long long>(g_rows_log2));
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

} // namespace gpu_bench

#ifndef SEGRED_GPU_BENCH_SHARED_ONLY
// ---------------------------------------------------------------------------
// segred's runners.
#include <segred/segred.hpp>

namespace {

using namespace gpu_bench;

template <class T, op_kind OP>
using out_t = std::conditional_t<OP == op_kind::argmax, std::int64_t,
                                 std::conditional_t<OP == op_kind::bincount, std::int32_t, T>>;

template <op_kind OP>
auto reducer_of() {
    if constexpr (OP == op_kind::mean) return segred::mean{};
    else if constexpr (OP == op_kind::max) return segred::max{};
    else if constexpr (OP == op_kind::argmax) return segred::argmax{};
    else return segred::sum{};
}

template <form_kind F, class I>
auto descriptor_of(const I* idx, std::int64_t M, std::int64_t L) {
    if constexpr (F == form_kind::offsets) return segred::offsets(idx, M);
    else if constexpr (F == form_kind::lengths) return segred::lengths(idx, M);
    else if constexpr (F == form_kind::sorted_ids) return segred::sorted_ids(idx, M);
    else if constexpr (F == form_kind::fixed) return segred::fixed(L, M);
    else return segred::ids(idx, M);
}

template <class T, class I, op_kind OP, form_kind F>
void run_segred(benchmark::State& st, const case_spec& c) {
    const auto in = inputs_for<T, I>(c);
    using O = out_t<T, OP>;
    const std::int64_t rows = in->rows, M = in->M, W = in->width;
    const std::int64_t out_width = OP == op_kind::bincount ? 1 : W;
    dev_array<O> out(M * out_width);
    const T* v = in->values.get();
    const I* idx = in->index.get();
    const auto pol = segred::cuda::par;
    const auto opts =
        segred::options{}.bounds(segred::bounds_policy::unchecked).deterministic(OP == op_kind::sum_det);
    const auto o = segred::rows(out.get(), M, out_width);
    const double ms = time_calls(st, [&] {
        if constexpr (OP == op_kind::bincount) {
            segred::bincount(pol, segred::rows(idx, rows), o, opts);
        } else if constexpr (OP == op_kind::bincount_w) {
            segred::bincount(pol, segred::rows(v, rows), segred::rows(idx, rows), o, opts);
        } else if constexpr (OP == op_kind::gather_bwd) {
            segred::gather_backward(pol, segred::rows(v, rows, W), segred::rows(idx, rows), o, opts);
        } else if constexpr (F == form_kind::ids) {
            segred::accumarray(pol, segred::rows(v, rows, W), segred::ids(idx, M), o, reducer_of<OP>(), opts);
        } else {
            segred::segment_reduce(pol, segred::rows(v, rows, W), descriptor_of<F>(idx, M, in->L), o,
                                   reducer_of<OP>(), opts);
        }
    });
    report(st, c.model_bytes(), ms, in->index_fp, checksum(out.get(), out.size()));
}

// Each entry is one instantiation of segred's templates; keep the list to
// what all_cases() needs (compile time grows with every line).
template <class T, class I, op_kind OP, form_kind F>
runner entry() {
    const value_kind vt = OP == op_kind::bincount ? value_kind::none : value_kind_of<T>();
    return runner{"segred", OP, F, vt, index_kind_of<I>(), &run_segred<T, I, OP, F>, false};
}

std::vector<runner> segred_runners() {
    using O = op_kind;
    using F = form_kind;
    using i32 = std::int32_t;
    using i64 = std::int64_t;
    return {
        // main sweep: fp32 sum over every form, int32 indices
        entry<float, i32, O::sum, F::offsets>(), entry<float, i32, O::sum, F::lengths>(),
        entry<float, i32, O::sum, F::sorted_ids>(), entry<float, i32, O::sum, F::fixed>(),
        entry<float, i32, O::sum, F::ids>(), entry<float, i32, O::sum_det, F::ids>(),
        // reducers
        entry<float, i32, O::mean, F::offsets>(), entry<float, i32, O::mean, F::ids>(),
        entry<float, i32, O::max, F::offsets>(), entry<float, i32, O::max, F::ids>(),
        entry<float, i32, O::argmax, F::offsets>(), entry<float, i32, O::argmax, F::ids>(),
        // value types
        entry<__half, i32, O::sum, F::offsets>(), entry<__half, i32, O::sum, F::ids>(),
        entry<__nv_bfloat16, i32, O::sum, F::offsets>(), entry<__nv_bfloat16, i32, O::sum, F::ids>(),
        entry<double, i32, O::sum, F::offsets>(), entry<double, i32, O::sum, F::ids>(),
        // 64-bit indices
        entry<float, i64, O::sum, F::offsets>(), entry<float, i64, O::sum, F::sorted_ids>(),
        entry<float, i64, O::sum, F::ids>(),
        // bincount and gather_backward
        entry<float, i32, O::bincount, F::ids>(), entry<float, i32, O::bincount_w, F::ids>(),
        entry<float, i32, O::gather_bwd, F::ids>(),
    };
}

} // namespace

int main(int argc, char** argv) {
    return gpu_bench::run_main(argc, argv, "segred_gpu_bench", segred_runners(), true);
}
#endif // SEGRED_GPU_BENCH_SHARED_ONLY
