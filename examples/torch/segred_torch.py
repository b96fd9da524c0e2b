"""segred's differentiable op pairs as torch.autograd.Functions.

The C++/CUDA side is segred_torch.cu, built just in time on first use with
torch.utils.cpp_extension.load (ninja; a CUDA extension takes a few minutes
the first time, then comes from PyTorch's extension cache). Every forward
and every backward below calls segred: segred::host for CPU tensors,
segred::cuda::par on the current stream for CUDA tensors. None of them uses
torch's scatter or index ops.

Values are float32 or float64; ids and offsets int64. A 1-D tensor [n] is a
column of width 1, a 2-D tensor [n, F] has the trailing feature dimension F.

    import segred_torch as st
    out = st.segment_reduce(values, offsets, "max")   # CSR offsets [M + 1]
    out = st.accumarray(values, ids, M, "mean")       # unsorted ids in [0, M)
    out = st.bincount(weights, ids, B)                # weighted bincount
    out = st.gather(src, ids)                         # src[ids]
    out = st.segment_softmax(values, ids, M)
    out = st.soft_histogram(positions, weights, lo, hi, B)

Build: with a CUDA toolkit and a GPU, nvcc builds segred_torch.cu for the
GPU's architecture (-arch=sm_XY; SEGRED_TORCH_CUDA_ARCH=sm_90 names one
instead, and also forces the CUDA build on a machine without a GPU).
Without a toolkit or a GPU, or with SEGRED_TORCH_CPU_ONLY=1, the same source
is compiled as C++ (extension segred_torch_cpu): the host backend alone.
SEGRED_TORCH_VERBOSE=1 shows the build; MAX_JOBS caps ninja's jobs.
"""

import os

import torch
from torch.autograd.function import once_differentiable

_HERE = os.path.dirname(os.path.abspath(__file__))
_INCLUDE = os.path.normpath(os.path.join(_HERE, "..", "..", "include"))
_SOURCE = os.path.join(_HERE, "segred_torch.cu")

_ext = None


def _cuda_toolkit_available():
    from torch.utils import cpp_extension

    return torch.version.cuda is not None and cpp_extension.CUDA_HOME is not None


def load(verbose=None):
    """Builds (or loads from the cache) the extension and returns it."""
    global _ext
    if _ext is not None:
        return _ext
    from torch.utils import cpp_extension

    if verbose is None:
        verbose = os.environ.get("SEGRED_TORCH_VERBOSE", "0") == "1"
    cflags = ["-std=c++17", "-O2"]
    arch = os.environ.get("SEGRED_TORCH_CUDA_ARCH")  # e.g. sm_90; default: the current GPU's
    # CUDA build when a toolkit is there and a GPU (or an explicit arch) says
    # for what; else the same source as C++, host backend only.
    cpu_only = (
        os.environ.get("SEGRED_TORCH_CPU_ONLY", "0") == "1"
        or not _cuda_toolkit_available()
        or (arch is None and not torch.cuda.is_available())
    )
    if cpu_only:
        # The same source compiled as C++: host backend only.
        build_dir = os.path.join(cpp_extension._get_build_directory("segred_torch_cpu", verbose), "src")
        os.makedirs(build_dir, exist_ok=True)
        cpp = os.path.join(build_dir, "segred_torch.cpp")
        with open(_SOURCE, "rb") as f:
            text = f.read()
        if not os.path.exists(cpp) or open(cpp, "rb").read() != text:  # keep the mtime: no needless rebuild
            with open(cpp, "wb") as f:
                f.write(text)
        _ext = cpp_extension.load(
            name="segred_torch_cpu",
            sources=[cpp],
            extra_include_paths=[_INCLUDE],
            extra_cflags=cflags + ["-DSEGRED_TORCH_CPU_ONLY"],
            verbose=verbose,
        )
    else:
        if arch is None:
            major, minor = torch.cuda.get_device_capability()
            arch = "sm_%d%d" % (major, minor)
        cuda_flags = ["-arch=" + arch, "-std=c++17", "-O2"]
        _ext = cpp_extension.load(
            name="segred_torch",
            sources=[_SOURCE],
            extra_include_paths=[_INCLUDE],
            extra_cflags=cflags,
            extra_cuda_cflags=cuda_flags,
            verbose=verbose,
        )
    return _ext


def _c(t):
    return t.contiguous()


def _ids(t):
    return t.contiguous().to(torch.int64)


class SegmentReduce(torch.autograd.Function):
    """segment_reduce over CSR offsets [M + 1]; reduce in sum, mean, max.

    max saves the forward's arg rows (options{}.arg_out) and its backward
    routes each gradient to that row (ties: the lowest row)."""

    @staticmethod
    def forward(ctx, values, offsets, reduce):
        values, offsets = _c(values), _ids(offsets)
        out, arg = load().segment_reduce_fwd(values, offsets, reduce)
        ctx.reduce = reduce
        ctx.save_for_backward(values, offsets, out, arg)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        values, offsets, out, arg = ctx.saved_tensors
        grad = load().segment_reduce_bwd(values, offsets, out, arg, grad_out, ctx.reduce)
        return grad, None, None


class AccumArray(torch.autograd.Function):
    """accumarray over unsorted ids in [0, M); reduce in sum, mean."""

    @staticmethod
    def forward(ctx, values, ids, M, reduce):
        values, ids = _c(values), _ids(ids)
        out = load().accumarray_fwd(values, ids, M, reduce)
        ctx.reduce = reduce
        ctx.save_for_backward(values, ids, out)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        values, ids, out = ctx.saved_tensors
        return load().accumarray_bwd(values, ids, out, grad_out, ctx.reduce), None, None, None


class Bincount(torch.autograd.Function):
    """Weighted bincount into B bins; the gradient w.r.t. the weights."""

    @staticmethod
    def forward(ctx, weights, ids, B):
        weights, ids = _c(weights), _ids(ids)
        ctx.save_for_backward(weights, ids)
        return load().bincount_fwd(weights, ids, B)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        weights, ids = ctx.saved_tensors
        return load().bincount_bwd(ids, grad_out, weights), None, None


class Gather(torch.autograd.Function):
    """out = src[ids]; the backward is segred::gather_backward (index_add_)."""

    @staticmethod
    def forward(ctx, src, ids):
        src, ids = _c(src), _ids(ids)
        ctx.save_for_backward(src, ids)
        return load().gather_fwd(src, ids)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        src, ids = ctx.saved_tensors
        return load().gather_bwd(grad_out, ids, src), None


class SegmentSoftmax(torch.autograd.Function):
    """Softmax within each group of rows sharing an id in [0, M), per column.
    The backward needs the forward's output alone."""

    @staticmethod
    def forward(ctx, values, ids, M):
        values, ids = _c(values), _ids(ids)
        out = load().softmax_fwd(values, ids, M)
        ctx.M = M
        ctx.save_for_backward(out, ids)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        out, ids = ctx.saved_tensors
        return load().softmax_bwd(out, ids, ctx.M, grad_out), None, None


class SoftHistogram(torch.autograd.Function):
    """B bins over [lo, hi]; each position splits its weight linearly between
    the two nearest bin centers (clamped at the ends). Gradients w.r.t. the
    positions [n] and the weights [n] or [n, F]."""

    @staticmethod
    def forward(ctx, positions, weights, lo, hi, B):
        positions, weights = _c(positions), _c(weights)
        ctx.lo, ctx.hi = float(lo), float(hi)
        ctx.save_for_backward(positions, weights)
        return load().soft_histogram_fwd(positions, weights, ctx.lo, ctx.hi, B)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        positions, weights = ctx.saved_tensors
        want_p, want_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        gp, gw = load().soft_histogram_bwd(positions, weights, ctx.lo, ctx.hi, grad_out, want_p, want_w)
        return (gp if want_p else None), (gw if want_w else None), None, None, None


def segment_reduce(values, offsets, reduce="sum"):
    return SegmentReduce.apply(values, offsets, reduce)


def accumarray(values, ids, M, reduce="sum"):
    return AccumArray.apply(values, ids, int(M), reduce)


def bincount(weights, ids, B):
    return Bincount.apply(weights, ids, int(B))


def gather(src, ids):
    return Gather.apply(src, ids)


def segment_softmax(values, ids, M):
    return SegmentSoftmax.apply(values, ids, int(M))


def soft_histogram(positions, weights, lo, hi, B):
    return SoftHistogram.apply(positions, weights, lo, hi, int(B))
