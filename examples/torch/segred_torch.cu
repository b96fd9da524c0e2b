// segred_torch.cu -- PyTorch bindings of segred's differentiable op pairs.
//
// Built just in time by segred_torch.py (torch.utils.cpp_extension.load).
// Every forward and every backward here calls segred: on CPU tensors with
// segred::host, on CUDA tensors with segred::cuda::par on PyTorch's current
// stream, its temporary storage taken from PyTorch's caching allocator.
// The autograd wiring (torch.autograd.Function) lives in segred_torch.py.
//
// Compiled by nvcc, both backends are built. The same file compiled as C++
// (SEGRED_TORCH_CPU_ONLY, for a PyTorch without a CUDA toolkit) builds the
// host backend alone, and CUDA tensors are then refused.
//
// Conventions: values are float32 or float64, ids and offsets int64, every
// tensor contiguous (the wrappers make them so). A 1-D tensor is a column
// of width 1; a 2-D tensor [n, F] has width F. Outputs keep the rank of
// their input.
#include <torch/extension.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#if defined(__CUDACC__) && !defined(SEGRED_TORCH_CPU_ONLY)
#define SEGRED_TORCH_CUDA 1
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#endif

#include <segred/segred.hpp>

namespace {

using at::Tensor;

// ---------------------------------------------------------------------------
// Tensors as segred views.

void check_values(const Tensor& t, const char* name) {
    TORCH_CHECK(t.dim() == 1 || t.dim() == 2, "segred_torch: ", name, " must be 1-D [n] or 2-D [n, F], is ",
                t.dim(), "-D");
    TORCH_CHECK(t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble, "segred_torch: ", name,
                " must be float32 or float64, is ", t.scalar_type());
    TORCH_CHECK(t.is_contiguous(), "segred_torch: ", name, " must be contiguous");
}

void check_index(const Tensor& t, const char* name) {
    TORCH_CHECK(t.dim() == 1, "segred_torch: ", name, " must be 1-D, is ", t.dim(), "-D");
    TORCH_CHECK(t.scalar_type() == at::kLong, "segred_torch: ", name, " must be int64, is ", t.scalar_type());
    TORCH_CHECK(t.is_contiguous(), "segred_torch: ", name, " must be contiguous");
}

void check_same_device(const Tensor& a, const Tensor& b, const char* an, const char* bn) {
    TORCH_CHECK(a.device() == b.device(), "segred_torch: ", an, " is on ", a.device(), " but ", bn, " is on ",
                b.device());
}

std::int64_t width_of(const Tensor& t) { return t.dim() == 1 ? 1 : t.size(1); }

template <class T>
segred::rows_view<T> view(const Tensor& t) {
    return segred::rows_view<T>{t.data_ptr<std::remove_const_t<T>>(), t.size(0), width_of(t)};
}

template <class T>
segred::rows_view<const T> cview(const Tensor& t) {
    return segred::rows_view<const T>{t.data_ptr<T>(), t.size(0), width_of(t)};
}

const std::int64_t* iptr(const Tensor& t) { return t.data_ptr<std::int64_t>(); }
std::int64_t* iptr_mut(const Tensor& t) { return t.data_ptr<std::int64_t>(); }

// A [rows] or [rows, F] tensor shaped like `like` (same rank and width).
Tensor empty_rows_like(const Tensor& like, std::int64_t rows, at::ScalarType type) {
    auto opts = like.options().dtype(type);
    return like.dim() == 1 ? at::empty({rows}, opts) : at::empty({rows, like.size(1)}, opts);
}

// ---------------------------------------------------------------------------
// The policy: segred::host for CPU tensors, segred::cuda::par on the current
// stream for CUDA tensors. f is called with the policy.

#ifdef SEGRED_TORCH_CUDA
// segred's temporary storage from PyTorch's caching allocator, stream-ordered
// on the policy's stream.
void* torch_allocate(std::size_t bytes, cudaStream_t stream, void*) {
    return c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(bytes, stream);
}
void torch_deallocate(void* ptr, std::size_t, cudaStream_t, void*) {
    c10::cuda::CUDACachingAllocator::raw_delete(ptr);
}
#endif

template <class F>
void with_policy(const Tensor& t, F&& f) {
    if (t.is_cuda()) {
#ifdef SEGRED_TORCH_CUDA
        const c10::cuda::CUDAGuard guard(t.device());
        const segred::cuda::allocator alloc{&torch_allocate, &torch_deallocate, nullptr};
        f(segred::cuda::par.on(at::cuda::getCurrentCUDAStream().stream()).with_allocator(alloc));
#else
        TORCH_CHECK(false, "segred_torch was built without CUDA (no nvcc); CUDA tensors are not supported");
#endif
    } else {
        TORCH_CHECK(t.device().is_cpu(), "segred_torch: tensors must be on CPU or CUDA, not ", t.device());
        f(segred::host);
    }
}

// segred::error (bad ids, offsets, shapes) becomes a Python RuntimeError
// through pybind11's std::exception translation; nothing else to do.

// f is called with a value of the element type: float or double.
template <class F>
void dispatch_float(const Tensor& t, const char* name, F&& f) {
    switch (t.scalar_type()) {
    case at::kFloat: f(float{}); break;
    case at::kDouble: f(double{}); break;
    default: TORCH_CHECK(false, "segred_torch: ", name, " takes float32 or float64, not ", t.scalar_type());
    }
}

// ---------------------------------------------------------------------------
// segment_reduce over CSR offsets [M + 1]: sum, mean, max.

enum class red { sum, mean, max };

red parse_reduce(const std::string& r) {
    if (r == "sum") return red::sum;
    if (r == "mean") return red::mean;
    if (r == "max") return red::max;
    TORCH_CHECK(false, "segred_torch: reduce must be 'sum', 'mean' or 'max', not '", r, "'");
    return red::sum;
}

// Forward. Returns (out [M(, F)], arg [M, F] int64 for max, else an empty tensor).
std::tuple<Tensor, Tensor> segment_reduce_fwd(const Tensor& values, const Tensor& offsets, const std::string& reduce) {
    check_values(values, "values");
    check_index(offsets, "offsets");
    check_same_device(values, offsets, "values", "offsets");
    TORCH_CHECK(offsets.numel() >= 1, "segred_torch: offsets need at least one entry (M + 1 of them)");
    const red r = parse_reduce(reduce);
    const std::int64_t M = offsets.numel() - 1;
    Tensor out = empty_rows_like(values, M, values.scalar_type());
    Tensor arg = r == red::max ? at::empty({M, width_of(values)}, values.options().dtype(at::kLong))
                               : at::empty({0}, values.options().dtype(at::kLong));
    const auto seg = segred::offsets(iptr(offsets), M);
    dispatch_float(values, "segment_reduce_fwd", [&](auto tag) {
        using T = decltype(tag);
        with_policy(values, [&](const auto& p) {
            switch (r) {
            case red::sum: segred::segment_reduce(p, cview<T>(values), seg, view<T>(out), segred::sum{}); break;
            case red::mean: segred::segment_reduce(p, cview<T>(values), seg, view<T>(out), segred::mean{}); break;
            case red::max:
                segred::segment_reduce(p, cview<T>(values), seg, view<T>(out), segred::max{},
                                       segred::options{}.arg_out(iptr_mut(arg)));
                break;
            }
        });
    });
    return {out, arg};
}

// Backward: the gradient w.r.t. values. max routes through the saved arg rows.
Tensor segment_reduce_bwd(const Tensor& values, const Tensor& offsets, const Tensor& out, const Tensor& arg,
                          const Tensor& grad_out_in, const std::string& reduce) {
    const Tensor grad_out = grad_out_in.contiguous().to(out.scalar_type());
    check_values(values, "values");
    check_index(offsets, "offsets");
    const red r = parse_reduce(reduce);
    const std::int64_t M = offsets.numel() - 1;
    Tensor grad = at::empty_like(values);
    const auto seg = segred::offsets(iptr(offsets), M);
    dispatch_float(values, "segment_reduce_bwd", [&](auto tag) {
        using T = decltype(tag);
        with_policy(values, [&](const auto& p) {
            switch (r) {
            case red::sum:
                segred::segment_reduce_backward(p, cview<T>(values), seg, cview<T>(out), cview<T>(grad_out),
                                                view<T>(grad), segred::sum{});
                break;
            case red::mean:
                segred::segment_reduce_backward(p, cview<T>(values), seg, cview<T>(out), cview<T>(grad_out),
                                                view<T>(grad), segred::mean{});
                break;
            case red::max:
                TORCH_CHECK(arg.numel() == M * width_of(values), "segred_torch: max backward needs the saved arg");
                segred::segment_reduce_backward(p, cview<T>(values), seg, cview<T>(out), cview<T>(grad_out),
                                                view<T>(grad), segred::max{},
                                                segred::options{}.arg_out(iptr_mut(arg)));
                break;
            }
        });
    });
    return grad;
}

// ---------------------------------------------------------------------------
// accumarray over unsorted ids in [0, M): sum, mean.

Tensor accumarray_fwd(const Tensor& values, const Tensor& ids, std::int64_t M, const std::string& reduce) {
    check_values(values, "values");
    check_index(ids, "ids");
    check_same_device(values, ids, "values", "ids");
    const red r = parse_reduce(reduce);
    TORCH_CHECK(r != red::max, "segred_torch: accumarray wraps sum and mean");
    Tensor out = empty_rows_like(values, M, values.scalar_type());
    const auto seg = segred::ids(iptr(ids), M);
    dispatch_float(values, "accumarray_fwd", [&](auto tag) {
        using T = decltype(tag);
        with_policy(values, [&](const auto& p) {
            if (r == red::sum) segred::accumarray(p, cview<T>(values), seg, view<T>(out), segred::sum{});
            else segred::accumarray(p, cview<T>(values), seg, view<T>(out), segred::mean{});
        });
    });
    return out;
}

Tensor accumarray_bwd(const Tensor& values, const Tensor& ids, const Tensor& out, const Tensor& grad_out_in,
                      const std::string& reduce) {
    const Tensor grad_out = grad_out_in.contiguous().to(out.scalar_type());
    const red r = parse_reduce(reduce);
    Tensor grad = at::empty_like(values);
    const auto seg = segred::ids(iptr(ids), out.size(0));
    dispatch_float(values, "accumarray_bwd", [&](auto tag) {
        using T = decltype(tag);
        with_policy(values, [&](const auto& p) {
            if (r == red::sum)
                segred::accumarray_backward(p, cview<T>(values), seg, cview<T>(out), cview<T>(grad_out),
                                            view<T>(grad), segred::sum{});
            else
                segred::accumarray_backward(p, cview<T>(values), seg, cview<T>(out), cview<T>(grad_out),
                                            view<T>(grad), segred::mean{});
        });
    });
    return grad;
}

// ---------------------------------------------------------------------------
// Weighted bincount: out[k, :] = sum of weights[i, :] over ids[i] == k.

Tensor bincount_fwd(const Tensor& weights, const Tensor& ids, std::int64_t bins) {
    check_values(weights, "weights");
    check_index(ids, "ids");
    check_same_device(weights, ids, "weights", "ids");
    Tensor out = empty_rows_like(weights, bins, weights.scalar_type());
    dispatch_float(weights, "bincount_fwd", [&](auto tag) {
        using T = decltype(tag);
        with_policy(weights, [&](const auto& p) {
            segred::bincount(p, cview<T>(weights), cview<std::int64_t>(ids), view<T>(out));
        });
    });
    return out;
}

Tensor bincount_bwd(const Tensor& ids, const Tensor& grad_out_in, const Tensor& weights) {
    const Tensor grad_out = grad_out_in.contiguous().to(weights.scalar_type());
    Tensor grad = at::empty_like(weights);
    dispatch_float(weights, "bincount_bwd", [&](auto tag) {
        using T = decltype(tag);
        with_policy(weights, [&](const auto& p) {
            segred::bincount_backward(p, cview<std::int64_t>(ids), cview<T>(grad_out), view<T>(grad));
        });
    });
    return grad;
}

// ---------------------------------------------------------------------------
// gather: out[i, :] = src[ids[i], :]; backward: index_add_ into [n_src, F].

Tensor gather_fwd(const Tensor& src, const Tensor& ids) {
    check_values(src, "src");
    check_index(ids, "ids");
    check_same_device(src, ids, "src", "ids");
    Tensor out = empty_rows_like(src, ids.numel(), src.scalar_type());
    dispatch_float(src, "gather_fwd", [&](auto tag) {
        using T = decltype(tag);
        with_policy(src, [&](const auto& p) {
            segred::gather(p, cview<T>(src), cview<std::int64_t>(ids), view<T>(out));
        });
    });
    return out;
}

Tensor gather_bwd(const Tensor& grad_out_in, const Tensor& ids, const Tensor& src) {
    const Tensor grad_out = grad_out_in.contiguous().to(src.scalar_type());
    Tensor grad = at::empty_like(src);
    dispatch_float(src, "gather_bwd", [&](auto tag) {
        using T = decltype(tag);
        with_policy(src, [&](const auto& p) {
            segred::gather_backward(p, cview<T>(grad_out), cview<std::int64_t>(ids), view<T>(grad));
        });
    });
    return grad;
}

// ---------------------------------------------------------------------------
// segment_softmax over unsorted ids in [0, M).

Tensor softmax_fwd(const Tensor& values, const Tensor& ids, std::int64_t M) {
    check_values(values, "values");
    check_index(ids, "ids");
    check_same_device(values, ids, "values", "ids");
    Tensor out = at::empty_like(values);
    const auto seg = segred::ids(iptr(ids), M);
    dispatch_float(values, "softmax_fwd", [&](auto tag) {
        using T = decltype(tag);
        with_policy(values, [&](const auto& p) { segred::segment_softmax(p, cview<T>(values), seg, view<T>(out)); });
    });
    return out;
}

Tensor softmax_bwd(const Tensor& out, const Tensor& ids, std::int64_t M, const Tensor& grad_out_in) {
    const Tensor grad_out = grad_out_in.contiguous().to(out.scalar_type());
    Tensor grad = at::empty_like(out);
    const auto seg = segred::ids(iptr(ids), M);
    dispatch_float(out, "softmax_bwd", [&](auto tag) {
        using T = decltype(tag);
        with_policy(out, [&](const auto& p) {
            segred::segment_softmax_backward(p, cview<T>(out), seg, cview<T>(grad_out), view<T>(grad));
        });
    });
    return grad;
}

// ---------------------------------------------------------------------------
// soft histogram: positions [n], weights [n] or [n, F], out [B] or [B, F].

Tensor positions_column(const Tensor& positions) {
    TORCH_CHECK(positions.dim() == 1, "segred_torch: positions must be 1-D [n]");
    return positions;
}

Tensor soft_histogram_fwd(const Tensor& positions, const Tensor& weights, double lo, double hi, std::int64_t bins) {
    check_values(positions_column(positions), "positions");
    check_values(weights, "weights");
    check_same_device(positions, weights, "positions", "weights");
    TORCH_CHECK(positions.scalar_type() == weights.scalar_type(),
                "segred_torch: positions and weights must have one dtype");
    Tensor out = empty_rows_like(weights, bins, weights.scalar_type());
    dispatch_float(weights, "soft_histogram_fwd", [&](auto tag) {
        using T = decltype(tag);
        with_policy(weights, [&](const auto& p) {
            segred::soft_histogram(p, cview<T>(positions), cview<T>(weights), lo, hi, view<T>(out));
        });
    });
    return out;
}

// Returns (grad_positions [n], grad_weights like weights); an unwanted one is
// passed to segred as an empty view and comes back as an empty tensor.
std::tuple<Tensor, Tensor> soft_histogram_bwd(const Tensor& positions, const Tensor& weights, double lo, double hi,
                                              const Tensor& grad_out_in, bool want_positions, bool want_weights) {
    const Tensor grad_out = grad_out_in.contiguous().to(weights.scalar_type());
    Tensor gp = want_positions ? at::empty_like(positions) : at::empty({0}, positions.options());
    Tensor gw = want_weights ? at::empty_like(weights) : at::empty({0}, weights.options());
    dispatch_float(weights, "soft_histogram_bwd", [&](auto tag) {
        using T = decltype(tag);
        const segred::rows_view<T> gpv = want_positions ? view<T>(gp) : segred::rows_view<T>{};
        const segred::rows_view<T> gwv = want_weights ? view<T>(gw) : segred::rows_view<T>{};
        with_policy(weights, [&](const auto& p) {
            segred::soft_histogram_backward(p, cview<T>(positions), cview<T>(weights), lo, hi, cview<T>(grad_out),
                                            gpv, gwv);
        });
    });
    return {gp, gw};
}

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "segred's differentiable op pairs for PyTorch tensors (CPU: segred::host, CUDA: segred::cuda::par)";
#ifdef SEGRED_TORCH_CUDA
    m.attr("with_cuda") = true;
#else
    m.attr("with_cuda") = false;
#endif
    m.def("segment_reduce_fwd", &segment_reduce_fwd, "segment_reduce over CSR offsets (sum, mean, max with arg)");
    m.def("segment_reduce_bwd", &segment_reduce_bwd, "segment_reduce_backward");
    m.def("accumarray_fwd", &accumarray_fwd, "accumarray over unsorted ids (sum, mean)");
    m.def("accumarray_bwd", &accumarray_bwd, "accumarray_backward");
    m.def("bincount_fwd", &bincount_fwd, "weighted bincount");
    m.def("bincount_bwd", &bincount_bwd, "bincount_backward (gradient w.r.t. weights)");
    m.def("gather_fwd", &gather_fwd, "gather rows");
    m.def("gather_bwd", &gather_bwd, "gather_backward (index_add_)");
    m.def("softmax_fwd", &softmax_fwd, "segment_softmax over ids");
    m.def("softmax_bwd", &softmax_bwd, "segment_softmax_backward");
    m.def("soft_histogram_fwd", &soft_histogram_fwd, "weighted soft histogram");
    m.def("soft_histogram_bwd", &soft_histogram_bwd, "soft_histogram_backward (positions, weights)");
}
