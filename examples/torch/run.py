#!/usr/bin/env python3
"""Builds the segred PyTorch extension and checks every autograd Function.

    python3 examples/torch/run.py

For CPU tensors, and for CUDA tensors when torch.cuda.is_available():
  (a) torch.autograd.gradcheck of each Function on small float64 inputs;
  (b) forward and gradients against PyTorch's own ops on the same inputs
      (scatter_reduce, index_add, torch.segment_reduce, src[idx],
      torch.bincount, a per-segment softmax built from scatter ops, a soft
      histogram built from index_add), in float32 and float64.
One line per check, PASS or FAIL; the exit status is 1 if any check failed.
Without PyTorch (or without ninja, which torch's JIT build needs) it says so
and exits 0. Nothing is downloaded.
"""

import os
import sys
import time
import traceback

try:
    import torch
except ImportError:
    print("SKIP: PyTorch is not installed (import torch failed); the segred PyTorch example was not run")
    sys.exit(0)

try:
    from torch.utils import cpp_extension

    cpp_extension.verify_ninja_availability()
except Exception as e:  # noqa: BLE001
    print("SKIP: ninja is not available (%s); torch.utils.cpp_extension cannot build the example" % e)
    sys.exit(0)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import segred_torch as st  # noqa: E402

os.environ.setdefault("MAX_JOBS", str(os.cpu_count() or 1))

RESULTS = []  # (ok, line)


def report(ok, device, what, detail=""):
    line = "%s  %-4s  %s%s" % ("PASS" if ok else "FAIL", device, what, ("  " + detail) if detail else "")
    print(line, flush=True)
    RESULTS.append(ok)


def run_check(device, what, fn):
    """fn returns (ok, detail) or raises."""
    try:
        ok, detail = fn()
    except Exception as e:  # noqa: BLE001
        ok, detail = False, "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        traceback.print_exc(file=sys.stdout)
    report(ok, device, what, detail)


def shape_str(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


# ---------------------------------------------------------------------------
# Inputs. n = 12 rows, width 1 (1-D) or F = 3, made on the CPU from a fixed
# seed, then moved.

N, F = 12, 3
OFFSETS_EMPTY = [0, 3, 3, 7, 12]  # M = 4 with an empty segment 1
OFFSETS_FULL = [0, 3, 4, 8, 12]  # M = 4, no empty segment (torch.segment_reduce's max fills -inf)
M_IDS = 5  # ids in [0, 5); id 3 never occurs
IDS = [4, 0, 2, 0, 1, 4, 2, 2, 0, 1, 4, 0]
GATHER_IDS = [3, 0, 0, 5, 1, 3, 3, 2, 0, 4]  # into a src of 6 rows; row 5 once, rows 0 and 3 three times
N_SRC = 6
BINS = 5
LO, HI = 0.0, 1.0  # 5 bins of width 0.2, centers 0.1, 0.3, ..., 0.9
# Away from the centers (where the derivative jumps) and from the clamping
# edges; 0.05, -0.2 and 1.3 are clamped (gradient 0 w.r.t. the position).
POSITIONS = [0.05, 0.17, 0.23, 0.38, 0.41, 0.52, 0.66, 0.74, 0.88, 0.95, -0.2, 1.3]


def make_inputs(device, dtype, wide, seed=0):
    g = torch.Generator().manual_seed(seed)
    shape = (N, F) if wide else (N,)
    src_shape = (N_SRC, F) if wide else (N_SRC,)
    n_el = N * (F if wide else 1)
    # Distinct values at least 0.25 apart (max needs no ties), in random order.
    distinct = (torch.randperm(n_el, generator=g).to(torch.float64) * 0.25 - 1.5).reshape(shape)
    distinct = distinct + 0.01 * torch.rand(shape, generator=g, dtype=torch.float64)
    x = {
        "values": torch.randn(shape, generator=g, dtype=torch.float64),
        "distinct": distinct,
        "src": torch.randn(src_shape, generator=g, dtype=torch.float64),
        "weights": torch.rand(shape, generator=g, dtype=torch.float64) + 0.5,
        "positions": torch.tensor(POSITIONS, dtype=torch.float64),
    }
    x = {k: v.to(device=device, dtype=dtype) for k, v in x.items()}
    x["offsets_empty"] = torch.tensor(OFFSETS_EMPTY, dtype=torch.int64, device=device)
    x["offsets_full"] = torch.tensor(OFFSETS_FULL, dtype=torch.int64, device=device)
    x["ids"] = torch.tensor(IDS, dtype=torch.int64, device=device)
    x["gather_ids"] = torch.tensor(GATHER_IDS, dtype=torch.int64, device=device)
    return x


def ids_from_offsets(offsets, n):
    """Row i's segment for CSR offsets (rows before offsets[0] or after
    offsets[-1] do not occur in these inputs)."""
    counts = offsets[1:] - offsets[:-1]
    return torch.repeat_interleave(torch.arange(counts.numel(), device=offsets.device), counts, output_size=n)


# ---------------------------------------------------------------------------
# PyTorch references, built from torch's own ops.


def ref_scatter_reduce(values, ids, M, reduce):
    """scatter_reduce with include_self=False: empty rows keep 0, as segred's
    default fill. reduce in sum, mean, amax."""
    out_shape = (M,) + tuple(values.shape[1:])
    index = ids if values.dim() == 1 else ids.view(-1, 1).expand_as(values)
    return torch.zeros(out_shape, dtype=values.dtype, device=values.device).scatter_reduce(
        0, index, values, reduce, include_self=False
    )


def ref_index_add(values, ids, M):
    out_shape = (M,) + tuple(values.shape[1:])
    return torch.zeros(out_shape, dtype=values.dtype, device=values.device).index_add(0, ids, values)


def ref_segment_softmax(values, ids, M):
    """softmax per segment from scatter ops: the segment max (detached: the
    softmax does not depend on the shift), exp, index_add, divide."""
    m = ref_scatter_reduce(values.detach(), ids, M, "amax")
    e = torch.exp(values - m[ids])
    s = ref_index_add(e, ids, M)
    return e / s[ids]


def ref_soft_histogram(positions, weights, lo, hi, B):
    """Linear split between the two nearest bin centers, clamped at the end
    centers, from clamp / floor / index_add."""
    d = (hi - lo) / B
    t = ((positions - lo) / d - 0.5).clamp(0.0, B - 1.0)
    lower = torch.floor(t.detach()).clamp(max=B - 2).to(torch.int64)
    frac = t - lower.to(t.dtype)
    if weights.dim() == 2:
        frac = frac.unsqueeze(1)
    return ref_index_add(weights * (1 - frac), lower, B) + ref_index_add(weights * frac, lower + 1, B)


# ---------------------------------------------------------------------------
# (a) gradcheck


def gradcheck_checks(device):
    def gc(what, fn, inputs):
        def go():
            ok = torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-7, rtol=1e-5, raise_exception=True)
            return ok, ""

        run_check(device, "gradcheck  " + what, go)

    for wide in (False, True):
        x = make_inputs(device, torch.float64, wide)
        shp = shape_str(x["values"])

        def req(t):
            return t.detach().clone().requires_grad_(True)

        for reduce in ("sum", "mean", "max"):
            v = req(x["distinct"] if reduce == "max" else x["values"])
            gc(
                "segment_reduce(%s) offsets=%s values %s" % (reduce, OFFSETS_EMPTY, shp),
                lambda v, r=reduce: st.segment_reduce(v, x["offsets_empty"], r),
                (v,),
            )
        for reduce in ("sum", "mean"):
            gc(
                "accumarray(%s) ids M=%d values %s" % (reduce, M_IDS, shp),
                lambda v, r=reduce: st.accumarray(v, x["ids"], M_IDS, r),
                (req(x["values"]),),
            )
        gc(
            "bincount weights %s bins=%d (d/d weights)" % (shp, M_IDS),
            lambda w: st.bincount(w, x["ids"], M_IDS),
            (req(x["weights"]),),
        )
        gc(
            "gather src %s ids[%d]" % (shape_str(x["src"]), len(GATHER_IDS)),
            lambda s: st.gather(s, x["gather_ids"]),
            (req(x["src"]),),
        )
        gc(
            "segment_softmax ids M=%d values %s" % (M_IDS, shp),
            lambda v: st.segment_softmax(v, x["ids"], M_IDS),
            (req(x["values"]),),
        )
        gc(
            "soft_histogram positions [%d] weights %s bins=%d (d/d positions, weights)" % (N, shp, BINS),
            lambda p, w: st.soft_histogram(p, w, LO, HI, BINS),
            (req(x["positions"]), req(x["weights"])),
        )


# ---------------------------------------------------------------------------
# (b) against PyTorch's own ops


def close(a, b, dtype):
    if dtype == torch.float64:
        return torch.allclose(a, b, rtol=1e-10, atol=1e-12)
    return torch.allclose(a, b, rtol=1e-5, atol=1e-6)


def maxdiff(a, b):
    return (a.double() - b.double()).abs().max().item() if a.numel() else 0.0


def compare(device, dtype, what, ours_fn, ref_fn, inputs, grad_seed=1):
    """Runs ours_fn and ref_fn on fresh leaf copies of inputs, compares the
    outputs, then backpropagates one random upstream gradient through both
    and compares every input gradient."""

    def go():
        ours_in = [t.detach().clone().requires_grad_(True) for t in inputs]
        ref_in = [t.detach().clone().requires_grad_(True) for t in inputs]
        out = ours_fn(*ours_in)
        ref = ref_fn(*ref_in)
        if out.shape != ref.shape or out.dtype != ref.dtype:
            return False, "forward: %s %s vs %s %s" % (shape_str(out), out.dtype, shape_str(ref), ref.dtype)
        details = ["out max|diff| %.1e" % maxdiff(out, ref)]
        ok = close(out, ref, dtype)
        g = torch.randn(out.shape, generator=torch.Generator().manual_seed(grad_seed), dtype=torch.float64)
        g = g.to(device=out.device, dtype=out.dtype)
        grads = torch.autograd.grad(out, ours_in, g)
        ref_grads = torch.autograd.grad(ref, ref_in, g)
        for k, (a, b) in enumerate(zip(grads, ref_grads)):
            details.append("grad%d max|diff| %.1e" % (k, maxdiff(a, b)))
            ok = ok and a.shape == b.shape and close(a, b, dtype)
        return ok, ", ".join(details)

    run_check(device, "%-7s %s" % (str(dtype).replace("torch.", ""), what), go)


def comparison_checks(device):
    for dtype in (torch.float32, torch.float64):
        for wide in (False, True):
            x = make_inputs(device, dtype, wide, seed=7)
            shp = shape_str(x["values"])
            oe, of_, ids = x["offsets_empty"], x["offsets_full"], x["ids"]
            seg_ids = ids_from_offsets(oe, N)

            # segment_reduce over offsets vs torch.segment_reduce (no empty
            # segment: torch's max would fill it with -inf) ...
            for reduce in ("sum", "mean", "max"):
                vals = x["distinct"] if reduce == "max" else x["values"]
                compare(
                    device,
                    dtype,
                    "segment_reduce(%s) %s vs torch.segment_reduce(offsets=)" % (reduce, shp),
                    lambda v, r=reduce: st.segment_reduce(v, of_, r),
                    lambda v, r=reduce: torch.segment_reduce(v, r, offsets=of_, axis=0),
                    (vals,),
                )
            # ... and with an empty segment vs scatter_reduce(include_self=False).
            for reduce, tr in (("sum", "sum"), ("mean", "mean"), ("max", "amax")):
                vals = x["distinct"] if reduce == "max" else x["values"]
                compare(
                    device,
                    dtype,
                    "segment_reduce(%s) %s, empty segment, vs scatter_reduce(%s)" % (reduce, shp, tr),
                    lambda v, r=reduce: st.segment_reduce(v, oe, r),
                    lambda v, t=tr: ref_scatter_reduce(v, seg_ids, 4, t),
                    (vals,),
                )
            # accumarray over unsorted ids.
            for reduce in ("sum", "mean"):
                compare(
                    device,
                    dtype,
                    "accumarray(%s) %s vs scatter_reduce(%s)" % (reduce, shp, reduce),
                    lambda v, r=reduce: st.accumarray(v, ids, M_IDS, r),
                    lambda v, r=reduce: ref_scatter_reduce(v, ids, M_IDS, r),
                    (x["values"],),
                )
            compare(
                device,
                dtype,
                "accumarray(sum) %s vs index_add" % shp,
                lambda v: st.accumarray(v, ids, M_IDS, "sum"),
                lambda v: ref_index_add(v, ids, M_IDS),
                (x["values"],),
            )
            # Weighted bincount: forward vs torch.bincount(weights=) column by
            # column; gradient vs the index_add formulation (torch.bincount
            # has no derivative).
            w = x["weights"]

            def bincount_forward():
                ours = st.bincount(w, ids, M_IDS)
                cols = [w] if w.dim() == 1 else [w[:, f] for f in range(w.shape[1])]
                ref = [torch.bincount(ids, weights=c, minlength=M_IDS).to(dtype) for c in cols]
                ref = ref[0] if w.dim() == 1 else torch.stack(ref, dim=1)
                return close(ours, ref, dtype), "out max|diff| %.1e" % maxdiff(ours, ref)

            run_check(
                device,
                "%-7s bincount weights %s vs torch.bincount(weights=)" % (str(dtype).replace("torch.", ""), shp),
                bincount_forward,
            )
            compare(
                device,
                dtype,
                "bincount weights %s (and d/d weights) vs index_add" % shp,
                lambda w_: st.bincount(w_, ids, M_IDS),
                lambda w_: ref_index_add(w_, ids, M_IDS),
                (w,),
            )
            # gather vs src[idx] and its backward; gather_backward vs index_add_.
            gi = x["gather_ids"]
            compare(
                device,
                dtype,
                "gather src %s vs src[idx] (backward: index_put accumulate)" % shape_str(x["src"]),
                lambda s: st.gather(s, gi),
                lambda s: s[gi],
                (x["src"],),
            )

            def gather_backward_vs_index_add():
                src = x["src"].detach().clone().requires_grad_(True)
                out = st.gather(src, gi)
                g = torch.randn(out.shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
                g = g.to(device=out.device, dtype=dtype)
                (ours,) = torch.autograd.grad(out, src, g)
                ref = torch.zeros_like(x["src"]).index_add_(0, gi, g)
                return close(ours, ref, dtype), "grad max|diff| %.1e" % maxdiff(ours, ref)

            run_check(
                device,
                "%-7s gather_backward src %s vs index_add_"
                % (str(dtype).replace("torch.", ""), shape_str(x["src"])),
                gather_backward_vs_index_add,
            )
            # segment_softmax vs the scatter-built softmax.
            compare(
                device,
                dtype,
                "segment_softmax %s vs softmax from scatter_reduce(amax)/index_add" % shp,
                lambda v: st.segment_softmax(v, ids, M_IDS),
                lambda v: ref_segment_softmax(v, ids, M_IDS),
                (x["values"],),
            )
            # soft histogram vs its index_add formulation (positions and weights).
            compare(
                device,
                dtype,
                "soft_histogram weights %s vs clamp/floor/index_add reference" % shp,
                lambda p, w_: st.soft_histogram(p, w_, LO, HI, BINS),
                lambda p, w_: ref_soft_histogram(p, w_, LO, HI, BINS),
                (x["positions"], w),
            )


def stream_check(device):
    """On a side stream: segred runs on torch's current stream."""

    def go():
        x = make_inputs(device, torch.float32, True, seed=11)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            v = x["values"].detach().clone().requires_grad_(True)
            out = st.segment_softmax(v, x["ids"], M_IDS)
            (grad,) = torch.autograd.grad(out.sum() + (out * out).sum(), v)
        torch.cuda.current_stream().wait_stream(s)
        vr = x["values"].detach().clone().requires_grad_(True)
        ref = ref_segment_softmax(vr, x["ids"], M_IDS)
        (gref,) = torch.autograd.grad(ref.sum() + (ref * ref).sum(), vr)
        ok = close(out.detach(), ref.detach(), torch.float32) and close(grad, gref, torch.float32)
        return ok, "out max|diff| %.1e, grad max|diff| %.1e" % (maxdiff(out.detach(), ref.detach()), maxdiff(grad, gref))

    run_check(device, "float32 segment_softmax on a side stream (forward and backward) vs reference", go)


def error_check(device):
    """A bad id surfaces as a RuntimeError carrying segred's message."""

    def go():
        v = torch.ones(3, dtype=torch.float64, device=device)
        bad = torch.tensor([0, 7, 1], dtype=torch.int64, device=device)
        try:
            st.accumarray(v, bad, 2, "sum")
        except RuntimeError as e:
            msg = str(e).splitlines()[0]
            return "out of range" in msg, "raised: " + msg
        return False, "no error raised"

    run_check(device, "error: accumarray with ids[1] = 7 >= M = 2 raises segred's message", go)


def main():
    print("torch %s, Python %s" % (torch.__version__, sys.version.split()[0]))
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
        print("GPU: %s (torch CUDA %s)" % (torch.cuda.get_device_name(0), torch.version.cuda))
    else:
        print("no CUDA device: CPU checks only")
    t0 = time.time()
    try:
        ext = st.load()
    except Exception:  # noqa: BLE001
        traceback.print_exc(file=sys.stdout)
        print("FAIL  build of the segred PyTorch extension")
        print("0 passed, 1 failed")
        return 1
    print(
        "extension built/loaded in %.1f s (%s)"
        % (time.time() - t0, "CUDA and host backends" if ext.with_cuda else "host backend only")
    )
    if "cuda" in devices and not ext.with_cuda:
        print("FAIL  the extension was built without CUDA although a GPU is present")
        RESULTS.append(False)
        devices = ["cpu"]
    for device in devices:
        gradcheck_checks(device)
        comparison_checks(device)
        error_check(device)
        if device == "cuda":
            stream_check(device)
            torch.cuda.synchronize()
    passed = sum(1 for ok in RESULTS if ok)
    failed = len(RESULTS) - passed
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
