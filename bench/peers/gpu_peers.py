#!/usr/bin/env python3
"""torch and JAX peers of segred on the GPU, on the cases of segred_gpu_bench.

    segred_gpu_bench --benchmark_list_tests=true > cases.txt
    python3 bench/peers/gpu_peers.py --cases cases.txt --impl torch --out torch.jsonl
    python3 bench/peers/gpu_peers.py --cases cases.txt --impl jax --out jax.jsonl
    python3 bench/peers/gpu_peers.py --cases cases.txt --dry-run          # what would run; imports nothing
    python3 bench/peers/gpu_peers.py --cases cases.txt --device cpu --rows-log2 14   # the logic, on the CPU

The case names (bench/gpu_bench.cu explains them) fix the inputs completely:
the inputs are rebuilt here with torch integer ops from the same counter-based
hash as gpu_bench.cu, so torch, JAX, CUB and segred reduce the same bytes, and
each result carries the index fingerprint (in_fp) and output checksum
(out_sum) that gpu_report.py compares across implementations. JAX gets the
torch tensors through DLPack, so torch is needed for --impl jax too.

Implementations (one JSON line each per case they apply to):
  torch.segment_reduce   torch.segment_reduce(sum/mean/max, lengths= or offsets=, unsafe=True)
  torch.index_add        torch.zeros(M, W).index_add_(0, ids, values)
  torch.index_put_acc    autograd backward of buf[ids]: index_put_ with accumulate=True
                         (sort-based, deterministic; the peer of gather_bwd and sum_det)
  torch.scatter_reduce   torch.zeros(M, W).scatter_reduce_(0, ids, values, amax/mean, include_self=False)
                         (int64 ids, converted outside the timing: scatter takes no others)
  torch.bincount         torch.bincount(ids, weights, minlength=M)
  jax.segment_sum / jax.segment_max / jax.bincount
                         jitted, indices_are_sorted for sorted ids; skipped for fp64 or
                         int64 cases unless jax_enable_x64 is on

Timing: two warm-up calls, then at least 5 (3 for calls over 0.25 s) timed
calls, up to --min-time seconds in all; the median is reported. Before each
timed call, untimed, a 256 MiB buffer is read to evict the L2 cache. torch is
timed with CUDA events on its stream; JAX by the wall clock around a call and
block_until_ready (so it includes JAX's dispatch, some 10 to 50 us). Each
process measures a device-to-device copy of 2^rows_log2 fp32 with torch as the
reference of its fractions. Output: JSON lines, a meta line first, written as
they come so an interrupted run keeps its results.
"""

import argparse
import json
import math
import os
import re
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_cases  # noqa: E402

FLUSH_BYTES = 256 << 20


# ---------------------------------------------------------------------------
# Which implementation runs which case (no imports: --dry-run uses this alone)

def torch_impls(c):
    out = []
    if c.op in ("sum", "mean", "max") and c.form in ("offsets", "lengths"):
        out.append("torch.segment_reduce")
    if c.op in ("sum", "bincount_w", "gather_bwd") and c.form in ("ids", "sorted_ids"):
        out.append("torch.index_add")
    if c.op in ("sum_det", "gather_bwd"):
        out.append("torch.index_put_acc")
    if c.op in ("mean", "max") and c.form == "ids":
        out.append("torch.scatter_reduce")
    if c.op in ("bincount", "bincount_w") and c.width == 1:
        out.append("torch.bincount")
    return out


def jax_impls(c, x64):
    if not x64 and (c.dtype == "f64" or c.idtype == "i64"):
        return []
    if c.form not in ("ids", "sorted_ids"):
        return []
    if c.op in ("sum", "bincount_w", "gather_bwd"):
        return ["jax.segment_sum"]
    if c.op == "max":
        return ["jax.segment_max"]
    if c.op == "bincount":
        return ["jax.bincount"]
    return []


# ---------------------------------------------------------------------------
# Inputs: gpu_bench.cu's generators, in torch. Every integer stays below 2^63
# in int64 tensors, so no operation relies on wrap-around.

KEY_VALUES, KEY_IDS, KEY_LENGTHS = 0x243F6A88, 0x85A308D3, 0x13198A2E
MASK32 = 0xFFFFFFFF


def _mul32(x, c):
    """x * c mod 2^32 for x < 2^32, split so no product exceeds 2^48."""
    lo, hi = c & 0xFFFF, c >> 16
    return (x * lo + (((x * hi) & 0xFFFF) << 16)) & MASK32


def mix32(x):
    """lowbias32, as gpu_bench.cu mix32, on an int64 tensor of values < 2^32."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def rnd(torch, key, n, device):
    """Elements 0..n-1 of the stream `key` (gpu_bench.cu rnd)."""
    i = torch.arange(n, dtype=torch.int64, device=device)
    return mix32(mix32(i & MASK32) ^ key)


_ZIPF_CDF = {}


def zipf_cdf(M):
    """Cumulative (k+1)^-1.1, summed in order in doubles as gpu_bench.cu does."""
    if M not in _ZIPF_CDF:
        acc, out = 0.0, [0.0] * M
        for k in range(M):
            acc += math.pow(k + 1.0, -1.1)
            out[k] = acc
        _ZIPF_CDF[M] = out
    return _ZIPF_CDF[M]


def fingerprint(torch, a):
    """Sum of a[k] * ((k mod 1024) + 1) mod 2^50: gpu_bench.cu checksum of an integer array."""
    a = a.reshape(-1).to(torch.int64)
    w = (torch.arange(a.numel(), dtype=torch.int64, device=a.device) & 1023) + 1
    return float(int((a * w).sum().item()) & ((1 << 50) - 1))


def out_checksum(torch, out):
    """gpu_bench.cu checksum: position-weighted sum for integers, sum of |x| over
    finite |x| <= 1e30 for floating point (empty segments count as 0)."""
    if not out.is_floating_point():
        return fingerprint(torch, out)
    x = out.reshape(-1).double()
    ok = torch.isfinite(x) & (x.abs() <= 1e30)
    return float(torch.where(ok, x.abs(), torch.zeros_like(x)).sum().item())


def make_inputs(torch, c, rows_log2, device):
    dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64}
    itype = {"i32": torch.int32, "i64": torch.int64}[c.idtype]
    rows, M, W = gpu_cases.rows(c, rows_log2), gpu_cases.segments(c, rows_log2), c.width
    inp = {"rows": rows, "M": M, "W": W, "values": None, "index": None, "in_fp": 0.0}
    if c.op != "bincount":
        h = rnd(torch, KEY_VALUES, rows * W, device)
        v = (h >> 8).to(torch.float32) * (1.0 / 8388608.0) - 1.0
        del h
        inp["values"] = v.to(dtypes[c.dtype]).reshape(rows, W)
    if c.form == "ids":
        h = rnd(torch, KEY_IDS, rows, device)
        if c.dist == "uniform":
            ids = (h * M) >> 32
        elif c.dist == "zipf":
            cdf = torch.tensor(zipf_cdf(M), dtype=torch.float64, device=device)
            x = h.to(torch.float64) * 2.3283064365386963e-10 * cdf[M - 1]
            rank = torch.searchsorted(cdf, x, right=True).clamp_(max=M - 1)
            ids = (rank * 0x9E3779B1) & (M - 1)
        elif c.dist == "hot50":
            ids = torch.where((h & 1) == 1, torch.zeros_like(h), ((h >> 1) * M) >> 31)
        else:
            ids = torch.zeros_like(h)
        inp["index"] = ids.to(itype)
    elif c.form != "fixed":
        h = rnd(torch, KEY_LENGTHS, M, device)
        L = gpu_cases.param_value(c)
        if c.dist == "fixed":
            lens = torch.full_like(h, L)
        elif c.dist == "uniform":
            lens = h % (2 * L + 1)
        elif c.dist == "pareto":
            lens = torch.floor(((h + 1).to(torch.float64) * 2.3283064365386963e-10).pow(-1.0 / 1.5)).to(torch.int64)
        elif c.dist == "giant":
            s = torch.arange(M, dtype=torch.int64, device=device)
            lens = torch.where(s == M // 2, torch.full_like(h, rows // 2), 1 + h % 3)
        else:  # empty90
            lens = torch.where(h % 10 == 0, 1 + (h // 10) % 64, torch.zeros_like(h))
        off = torch.zeros(M + 1, dtype=torch.int64, device=device)
        off[1:] = torch.cumsum(lens, 0)
        off.clamp_(max=rows)
        off[M] = rows
        if c.form == "offsets":
            idx = off
        elif c.form == "lengths":
            idx = off[1:] - off[:-1]
        else:
            idx = torch.searchsorted(off, torch.arange(rows, dtype=torch.int64, device=device), right=True) - 1
        inp["index"] = idx.to(itype)
    if inp["index"] is not None:
        inp["in_fp"] = fingerprint(torch, inp["index"])
    return inp


def input_key(c):
    """Cases with equal keys share inputs (gpu_bench.cu case_spec::input_key)."""
    return (gpu_cases.value_dtype(c), c.form, c.dist, c.param, c.idtype, c.width)


# ---------------------------------------------------------------------------
# Timing

class Timer:
    """Median of timed calls, each after an untimed L2 eviction."""

    def __init__(self, torch, device, min_time):
        self.torch, self.cuda, self.min_time = torch, device == "cuda", min_time
        self.flush_buf = torch.zeros(FLUSH_BYTES // 4, dtype=torch.int32, device=device) if self.cuda else None

    def flush(self):
        if self.cuda:
            self.flush_buf.sum()

    def once_torch(self, fn):
        if not self.cuda:
            t0 = time.perf_counter()
            out = fn()
            return (time.perf_counter() - t0) * 1e3, out
        a, b = self.torch.cuda.Event(enable_timing=True), self.torch.cuda.Event(enable_timing=True)
        self.flush()
        a.record()
        out = fn()
        b.record()
        b.synchronize()
        return a.elapsed_time(b), out

    def measure(self, once):
        """once() -> (ms, out). Returns (median ms, last out, timed calls)."""
        once()
        est, out = once()
        if est > 250:
            n = 3
        else:
            n = max(5, min(100, int(math.ceil(self.min_time * 1e3 / max(est, 1e-3)))))
        times = []
        for _ in range(n):
            ms, out = once()
            times.append(ms)
        return statistics.median(times), out, n

    def copy_ms(self, rows_log2, device):
        """Device-to-device copy of 2^rows_log2 fp32, the reference of the fractions."""
        torch = self.torch
        src = torch.zeros(1 << rows_log2, dtype=torch.float32, device=device)
        dst = torch.empty_like(src)
        ms, _, _ = self.measure(lambda: self.once_torch(lambda: dst.copy_(src)))
        return ms


# ---------------------------------------------------------------------------
# torch implementations: each returns a function that produces the output.

def build_torch(torch, impl, c, inp, device):
    v, idx, M, W = inp["values"], inp["index"], inp["M"], inp["W"]
    vv = v.reshape(-1) if (v is not None and W == 1) else v  # width 1 as a plain vector, as users pass it
    shape = (M,) if W == 1 else (M, W)
    if impl == "torch.segment_reduce":
        kw = {"lengths": idx} if c.form == "lengths" else {"offsets": idx}
        return lambda: torch.segment_reduce(vv, c.op, axis=0, unsafe=True, **kw)
    if impl == "torch.index_add":
        return lambda: torch.zeros(shape, dtype=v.dtype, device=device).index_add_(0, idx, vv)
    if impl == "torch.index_put_acc":
        buf = torch.zeros(shape, dtype=v.dtype, device=device, requires_grad=True)
        y = buf[idx]  # the forward gather, untimed; its backward is what is timed
        return lambda: torch.autograd.grad(y, buf, grad_outputs=vv, retain_graph=True)[0]
    if impl == "torch.scatter_reduce":
        idx64 = idx.to(torch.int64)
        if W > 1:
            idx64 = idx64.reshape(-1, 1).expand(-1, W)
        how = "amax" if c.op == "max" else "mean"
        return lambda: torch.zeros(shape, dtype=v.dtype, device=device).scatter_reduce_(
            0, idx64, vv, how, include_self=False)
    if impl == "torch.bincount":
        weights = vv if c.op == "bincount_w" else None
        return lambda: torch.bincount(idx, weights=weights, minlength=M)
    raise ValueError(impl)


# ---------------------------------------------------------------------------
# JAX

def import_jax(device):
    # JAX would otherwise take 75% of the GPU's memory at start, next to torch's.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    if device == "cpu":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    return jax, jnp


def to_jax(torch, jax, jnp, t):
    """A torch tensor as a JAX array on the same device: DLPack (no copy), else through numpy."""
    try:
        return jnp.from_dlpack(t)
    except Exception:  # noqa: BLE001 -- an older JAX, or a dtype DLPack does not carry
        if t.dtype == torch.bfloat16:
            return jnp.asarray(t.float().cpu().numpy()).astype(jnp.bfloat16)
        return jax.device_put(t.cpu().numpy())


def to_torch(torch, x):
    try:
        return torch.from_dlpack(x)
    except Exception:  # noqa: BLE001
        import numpy as np
        return torch.from_numpy(np.asarray(x).astype(np.float64 if "float" in str(x.dtype) else np.int64))


def build_jax(torch, jax, jnp, impl, c, inp):
    """Returns (jitted function, its arguments)."""
    M, W = inp["M"], inp["W"]
    ids = to_jax(torch, jax, jnp, inp["index"])
    if impl == "jax.bincount":
        return jax.jit(lambda i: jnp.bincount(i, length=M)), (ids,)
    v = inp["values"]
    data = to_jax(torch, jax, jnp, v.reshape(-1) if W == 1 else v)
    op = jax.ops.segment_max if impl == "jax.segment_max" else jax.ops.segment_sum
    is_sorted = c.form == "sorted_ids"
    return jax.jit(lambda d, i: op(d, i, num_segments=M, indices_are_sorted=is_sorted)), (data, ids)


class JaxTimer:
    def __init__(self, jax, jnp):
        self.buf = jnp.zeros(FLUSH_BYTES // 4, dtype=jnp.int32)
        self.reduce = jax.jit(jnp.sum)

    def once(self, f, args):
        self.reduce(self.buf).block_until_ready()
        t0 = time.perf_counter()
        out = f(*args)
        out.block_until_ready()
        return (time.perf_counter() - t0) * 1e3, out


# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", required=True, help="output of segred_gpu_bench --benchmark_list_tests=true")
    ap.add_argument("--impl", default="torch,jax", help="torch, jax or both (comma-separated)")
    ap.add_argument("--out", default="gpu_peers.jsonl", help="JSON lines written here")
    ap.add_argument("--rows-log2", type=int, default=26, help="as segred_gpu_bench --rows_log2 (default 26)")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="cpu: test the logic without a GPU")
    ap.add_argument("--min-time", type=float, default=0.05, help="seconds of timed calls per case (default 0.05)")
    ap.add_argument("--budget-s", type=float, default=240, help="stop starting new cases after this many seconds")
    ap.add_argument("--filter", default="", help="regular expression on case names")
    ap.add_argument("--dry-run", action="store_true", help="list (impl, case) pairs; import and run nothing")
    args = ap.parse_args()

    groups = [g.strip() for g in args.impl.split(",") if g.strip()]
    if not set(groups) <= {"torch", "jax"}:
        ap.error("--impl takes torch, jax or torch,jax")
    cases = [n for n in gpu_cases.read_case_list(args.cases) if re.search(args.filter, n)]
    if not cases:
        ap.error("no segred cases in %s (match %r)" % (args.cases, args.filter))

    if args.dry_run:
        count = 0
        for name in cases:
            c = gpu_cases.parse(name)
            for impl in (torch_impls(c) if "torch" in groups else []) + (jax_impls(c, False) if "jax" in groups else []):
                print("%-22s %s" % (impl, name))
                count += 1
        print("%d runs over %d cases" % (count, len(cases)))
        return 0

    device = args.device
    start = time.time()
    # JAX first, so its CUDA libraries load before torch's in its process.
    jax = jnp = None
    x64 = False
    jax_error = None
    if "jax" in groups:
        try:
            jax, jnp = import_jax(device)
            x64 = bool(jax.config.jax_enable_x64)
            backend = jax.default_backend()
            if device == "cuda" and backend not in ("gpu", "cuda"):
                jax_error = "JAX has no GPU backend (default backend: %s)" % backend
        except Exception as e:  # noqa: BLE001
            jax_error = "import jax failed: %s" % e
        if jax_error:
            print("gpu_peers.py: %s; JAX cases skipped" % jax_error, file=sys.stderr)
            groups.remove("jax")

    try:
        import torch
    except ImportError:
        print("gpu_peers.py: torch is not installed; nothing measured", file=sys.stderr)
        return 1
    if device == "cuda" and not torch.cuda.is_available():
        print("gpu_peers.py: torch sees no CUDA device; nothing measured", file=sys.stderr)
        return 1

    timer = Timer(torch, device, args.min_time)
    jtimer = JaxTimer(jax, jnp) if "jax" in groups else None
    out = open(args.out, "w")

    def emit(row):
        out.write(json.dumps(row) + "\n")
        out.flush()

    meta = {"meta": "start", "producer": "gpu_peers.py", "groups": groups, "rows_log2": args.rows_log2,
            "device": torch.cuda.get_device_name() if device == "cuda" else "cpu", "torch": torch.__version__,
            "jax": getattr(jax, "__version__", None), "jax_x64": x64, "jax_error": jax_error,
            "flush_bytes": FLUSH_BYTES, "min_time": args.min_time}
    emit(meta)
    copy_ms = timer.copy_ms(args.rows_log2, device)
    copy_gbps = 2.0 * 4 * (1 << args.rows_log2) / (copy_ms * 1e-3) / 1e9
    for g in groups:
        emit({"impl": g, "case": "copy", "ms": copy_ms, "gbps": copy_gbps,
              "bytes": 2.0 * 4 * (1 << args.rows_log2), "note": "torch dst.copy_(src) in this process"})

    held_key, inp = None, None
    done = 0
    for name in cases:
        if time.time() - start > args.budget_s:
            print("gpu_peers.py: time budget of %.0f s reached after %d of %d cases" % (args.budget_s, done, len(cases)),
                  file=sys.stderr)
            emit({"meta": "end", "budget_exhausted": True, "done": done, "total": len(cases)})
            return 0
        done += 1
        c = gpu_cases.parse(name)
        impls = (torch_impls(c) if "torch" in groups else []) + (jax_impls(c, x64) if "jax" in groups else [])
        if not impls:
            continue
        bytes_ = gpu_cases.model_bytes(c, args.rows_log2)
        try:
            if input_key(c) != held_key:
                inp, held_key = None, None  # free the previous inputs first
                if device == "cuda":
                    torch.cuda.empty_cache()
                inp = make_inputs(torch, c, args.rows_log2, device)
                held_key = input_key(c)
        except Exception as e:  # noqa: BLE001
            for impl in impls:
                emit({"impl": impl, "case": name, "error": "inputs: %s: %s" % (type(e).__name__, e)})
            continue
        for impl in impls:
            row = {"impl": impl, "case": name, "bytes": bytes_, "in_fp": inp["in_fp"]}
            try:
                if impl.startswith("torch."):
                    fn = build_torch(torch, impl, c, inp, device)
                    ms, result, n = timer.measure(lambda: timer.once_torch(fn))
                    row["out_sum"] = out_checksum(torch, result)
                else:
                    f, fargs = build_jax(torch, jax, jnp, impl, c, inp)
                    ms, result, n = timer.measure(lambda: jtimer.once(f, fargs))
                    row["out_sum"] = out_checksum(torch, to_torch(torch, result))
                    row["note"] = "wall clock incl. dispatch"
                del result
                row.update(ms=ms, gbps=bytes_ / (ms * 1e-3) / 1e9, iters=n)
                row["frac_copy"] = row["gbps"] / copy_gbps
                if impl == "torch.scatter_reduce" and c.idtype == "i32":
                    row["note"] = "ids converted to int64 outside the timing"
            except Exception as e:  # noqa: BLE001
                row["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
                traceback.print_exc(file=sys.stderr)
                if device == "cuda":
                    torch.cuda.empty_cache()
            emit(row)
            if "error" in row:
                print("%-22s %-48s error: %s" % (impl, name, row["error"]), file=sys.stderr)
            else:
                print("%-22s %-48s %9.1f GB/s  %.3f ms" % (impl, name, row["gbps"], row["ms"]), file=sys.stderr)
    emit({"meta": "end", "budget_exhausted": False, "done": done, "total": len(cases),
          "seconds": round(time.time() - start, 1)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
