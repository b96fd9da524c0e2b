#!/usr/bin/env python3
"""segred's host backend side by side with NumPy and PyTorch, on the same
sizes and distributions as bench/host_bench.cpp, in one markdown table.

    python3 bench/peers/host_peers.py [--bench PATH] [--quick] [--threads 1,2] [--rounds K] [--no-venv]

Unless --no-venv is given, the peers run in a virtual environment at the
repository root (.bench-venv/, ignored by git), made on first use with numpy
and torch from PyPI; the script then runs itself again inside it. These are
benchmark-only dependencies, never the tests'. PyPI's torch wheel for Linux
x86_64 brings CUDA libraries (a few GB installed); pip's own settings
(PIP_INDEX_URL, PIP_EXTRA_INDEX_URL) apply, e.g. to take a CPU-only build from
another index. Without torch the table keeps its numpy columns.

The segred columns come from the benchmark binary (--bench, default
build/default/bench/segred_host_bench), run here with --benchmark_format=json
on the matching cases. Every column is GB/s of the same model bytes (each
input read once, each output written once, ids counted as the int32 segred
reads), so that a ratio of GB/s is a ratio of times.

Each case is measured in K rounds (--rounds, default 1), one after another;
a round runs segred on the case, then its peers, so that each ratio compares
times taken within seconds of each other. The table gives the median over
the rounds of each column and of each round's ratio, and with K > 1 the
lowest and highest ratio: on a shared VM one build's GB/s can move by more
between minutes than a target's margin, and a ratio of two runs made minutes
apart would carry that drift.
"""
import argparse
import functools
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".bench-venv"
N = 1 << 24  # values per case, as in host_bench.cpp
F32, I32 = 4, 4  # bytes of a value and of an id as segred reads them
TORCH = False  # whether torch imported, set in main()


def note(msg):
    """Progress and notes go to stderr, so stdout is the table alone."""
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# The virtual environment.

def venv_python():
    return VENV / "bin" / "python"


def importable(module):
    return subprocess.run([str(venv_python()), "-c", f"import {module}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def enter_venv():
    """Make .bench-venv with numpy and torch when missing, then re-run this
    script inside it (does not return)."""
    if not venv_python().exists():
        note(f"creating {VENV.name}/")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    for pkg in ("numpy", "torch"):
        if importable(pkg):
            continue
        note(f"installing {pkg} into {VENV.name}/" + (" (from PyPI: a download of a few GB)" if pkg == "torch" else ""))
        t0 = time.time()
        ok = subprocess.run([str(venv_python()), "-m", "pip", "install", pkg], stdout=sys.stderr).returncode == 0
        note(f"pip install {pkg}: {'done' if ok else 'FAILED'} in {time.time() - t0:.0f} s")
        if not ok and pkg == "numpy":
            sys.exit("numpy is required; see pip's output above")
    os.execv(str(venv_python()), [str(venv_python()), str(Path(__file__).resolve())] + sys.argv[1:])


# ---------------------------------------------------------------------------
# Inputs: the distributions of host_bench.cpp (same laws and parameters; the
# random streams differ).

def rng(seed):
    import numpy as np
    return np.random.default_rng(seed)


@functools.lru_cache(maxsize=None)
def values():
    import numpy as np
    return rng(1).uniform(-1, 1, N).astype(np.float32)


@functools.lru_cache(maxsize=2)
def unsorted_ids(dist, M, n):
    import numpy as np
    g = rng(2)
    if dist == "uniform":
        return g.integers(0, M, n, dtype=np.int64)
    if dist == "zipf":
        # Rank k drawn with probability proportional to (k + 1)^-1.1, spread over
        # [0, M) by the same prime multiplication as host_bench.cpp.
        cdf = np.cumsum(np.arange(1, M + 1, dtype=np.float64) ** -1.1)
        k = np.minimum(np.searchsorted(cdf, g.random(n) * cdf[-1], side="right"), M - 1)
        return (k * 2654435761) % M
    if dist == "equal":
        return np.full(n, M // 2, dtype=np.int64)
    raise ValueError(dist)


@functools.lru_cache(maxsize=1)
def sorted_lengths(dist, param, n):
    import numpy as np
    g = rng(3)
    if dist == "const":
        return np.full(n // param, param, dtype=np.int64)
    if dist == "powerlaw":
        # Pareto with minimum 1, clipped at 2^20 rows; the last segment is cut to end at row n.
        draws = np.minimum(np.floor((1.0 - g.random(n)) ** (-1.0 / param)), 1 << 20).astype(np.int64)
        ends = np.cumsum(draws)
        k = int(np.searchsorted(ends, n)) + 1
        lengths = draws[:k].copy()
        lengths[-1] -= ends[k - 1] - n
        return lengths
    if dist == "empty90":
        # A random tenth of the M segments are non-empty and share the rows evenly.
        lengths = np.zeros(param, dtype=np.int64)
        nonempty = np.flatnonzero(g.random(param) < 0.1)
        lengths[nonempty] = n // len(nonempty)
        lengths[nonempty[: n % len(nonempty)]] += 1
        return lengths
    raise ValueError(dist)


def offsets_of(lengths):
    import numpy as np
    return np.concatenate(([0], np.cumsum(lengths)))


# ---------------------------------------------------------------------------
# Cases. Each peer is a function of the inputs returning the call to time; a
# call produces and returns the whole output, allocation included, as segred's
# writes it.

class Case:
    """inputs() returns a dict of arrays (and torch views of them) with "nbytes",
    the model bytes of one call; each peer is (name, make), make(inputs) giving
    the call to time."""

    def __init__(self, label, segred, inputs, numpy_peer, torch_peer):
        self.label, self.segred, self.inputs = label, segred, inputs
        self.numpy_peer, self.torch_peer = numpy_peer, torch_peer


def pow2(x):
    return f"2^{x.bit_length() - 1}" if x >= 1 << 14 and x & (x - 1) == 0 else str(x)


def bench_name(op, form, dist, param, width=1):
    return f"BM_Host/{op}/{form}/{dist}/{param}/f32/i32/w{width}"


def unsorted_case(op, dist, M, width=1):
    import numpy as np
    n = N // width

    def inputs():
        v = values().reshape(n, width) if width > 1 else values()
        ids = unsorted_ids(dist, M, n)
        d = {"v": v, "ids": ids, "M": M, "shape": (M, width) if width > 1 else (M,),
             "nbytes": N * F32 + n * I32 + M * width * F32}
        if TORCH:
            import torch
            d["tv"], d["tids"] = torch.from_numpy(v), torch.from_numpy(ids)
        return d

    def add_at(d):
        def call():
            out = np.zeros(d["shape"], np.float32)
            np.add.at(out, d["ids"], d["v"])
            return out
        return call

    def maximum_at(d):
        # Starts at -inf so that every row counts (np.maximum.at has no
        # include_self=False); an empty segment keeps -inf where segred writes 0.
        def call():
            out = np.full(d["shape"], -np.inf, np.float32)
            np.maximum.at(out, d["ids"], d["v"])
            return out
        return call

    def bincount(d):
        return lambda: np.bincount(d["ids"], weights=d["v"], minlength=d["M"])

    def index_add(d):
        import torch
        return lambda: torch.zeros(d["shape"]).index_add_(0, d["tids"], d["tv"])

    def scatter_amax(d):
        import torch
        return lambda: torch.zeros(d["shape"]).scatter_reduce_(0, d["tids"], d["tv"], "amax", include_self=False)

    def torch_bincount(d):
        import torch
        return lambda: torch.bincount(d["tids"], weights=d["tv"], minlength=d["M"])

    peers = {"sum": (("np.add.at", add_at), ("index_add_", index_add)),
             "gather_backward": (("np.add.at", add_at), ("index_add_", index_add)),
             "max": (("np.maximum.at", maximum_at), ("scatter_reduce amax", scatter_amax)),
             "bincount": (("np.bincount", bincount), ("torch.bincount", torch_bincount))}[op]
    what = {"sum": "unsorted sum", "max": "unsorted max", "bincount": "bincount weighted",
            "gather_backward": "gather_backward"}[op]
    label = f"{what} M={pow2(M)} {dist}" + (f" w{width}" if width > 1 else "")
    return Case(label, bench_name(op, "ids", dist, f"M{M}", width), inputs, *peers)


def sorted_case(op, dist, param):
    import numpy as np
    label_param = {"const": f"len={pow2(param)}", "powerlaw": f"power-law a={param}",
                   "empty90": f"90% empty M={pow2(param)}"}[dist]
    name_param = {"const": f"len{param}", "powerlaw": f"a{param}", "empty90": f"M{param}"}[dist]

    def inputs():
        lengths = sorted_lengths(dist, param, N)
        M = len(lengths)
        d = {"v": values(), "offsets": offsets_of(lengths), "M": M, "nbytes": N * F32 + (M + 1) * I32 + M * F32}
        if TORCH:
            import torch
            d["tv"], d["tlengths"] = torch.from_numpy(d["v"]), torch.from_numpy(lengths)
        return d

    ufunc, reduce = {"sum": (np.add, "sum"), "max": (np.maximum, "max")}[op]

    def reduceat(d):
        offs = d["offsets"]

        # reduceat gives a[start] for an empty segment (and fails on one at the
        # end), so with empty segments the correct result takes a mask and a
        # scatter, timed as part of the call.
        def masked():
            nonempty = offs[1:] > offs[:-1]
            out = np.zeros(d["M"], np.float32)
            out[nonempty] = ufunc.reduceat(d["v"], offs[:-1][nonempty])
            return out

        return (lambda: ufunc.reduceat(d["v"], offs[:-1])) if dist != "empty90" else masked

    def segment_reduce(d):
        import torch
        # unsafe=True skips torch's check of the lengths, as segred's unchecked bounds.
        return lambda: torch.segment_reduce(d["tv"], reduce, lengths=d["tlengths"], unsafe=True)

    return Case(f"sorted {op} {label_param}", bench_name(op, "offsets", dist, name_param), inputs,
                (f"np.{ufunc.__name__}.reduceat", reduceat), ("segment_reduce", segment_reduce))


def memcpy_case():
    import numpy as np

    def inputs():
        d = {"v": values(), "dst": np.ones(N, np.float32), "nbytes": 2 * N * F32}
        if TORCH:
            import torch
            d["tv"], d["tdst"] = torch.from_numpy(d["v"]), torch.from_numpy(d["dst"])
        return d

    return Case("memcpy 64 MiB", "BM_Host/memcpy/-/-/64MiB/-/-/w1", inputs,
                ("np.copyto", lambda d: lambda: np.copyto(d["dst"], d["v"])),
                ("copy_", lambda d: lambda: d["tdst"].copy_(d["tv"])))


def cases():
    out = [memcpy_case()]
    for M in (16, 1 << 14, 1 << 19, 1 << 22, 1 << 24):
        for dist in ("uniform", "zipf", "equal"):
            out.append(unsorted_case("sum", dist, M))
    for M in (1 << 14, 1 << 22):
        out += [unsorted_case("max", "uniform", M), unsorted_case("bincount", "uniform", M),
                unsorted_case("gather_backward", "uniform", M)]
    # Width 64 keeps the bytes: N / 64 rows of 64 columns, M / 64 output rows.
    for M in (1 << 14, 1 << 22):
        out.append(unsorted_case("gather_backward", "uniform", M // 64, width=64))
    for length in (1, 4, 32, 1024, 1 << 20):
        out.append(sorted_case("sum", "const", length))
    out += [sorted_case("sum", "powerlaw", 1.5), sorted_case("sum", "empty90", N // 4),
            sorted_case("max", "const", 32)]
    return out


# ---------------------------------------------------------------------------
# Measuring.

def median_seconds(call, reps):
    call()  # warm-up: first touch of the output, lazy initialization
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_segred(bench, case_list, threads, quick):
    """GB/s of each segred case, keyed by (name without /t<k>, k): the median of
    3 repetitions (1 with --quick), as a burst of other load on the machine
    slows one repetition down."""
    if not Path(bench).is_file():
        note(f"no segred benchmark at {bench} (build target segred_host_bench); segred columns left empty")
        return {}
    # Google Benchmark reads the filter as a POSIX extended regex; names hold no
    # special character but the dot of "a1.5".
    names = [f"{c.segred}/t{t}".replace(".", "[.]") for c in case_list for t in threads]
    cmd = [str(bench), "--benchmark_format=json", f"--benchmark_filter=^({'|'.join(names)})/real_time$",
           f"--benchmark_min_time={0.1 if quick else 0.2}", f"--benchmark_repetitions={1 if quick else 3}",
           "--benchmark_report_aggregates_only=true"]
    note(f"running {Path(bench).name} on {len(names)} case(s)")
    res = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if res.returncode != 0:
        note(f"{bench} exited with {res.returncode}; segred columns left empty")
        return {}
    got = {}
    for b in json.loads(res.stdout)["benchmarks"]:
        if b.get("aggregate_name", "median") != "median":  # a single repetition has no aggregates
            continue
        m = re.fullmatch(r"(.*)/t(\d+)/real_time", b["run_name"])
        got[(m.group(1), int(m.group(2)))] = b["GB/s"]
    return got


def run_peers(c, d, threads, reps):
    """GB/s of case c's peers on its inputs d: ('numpy', label) at 1 thread,
    ('torch', label, t)."""
    got = {("numpy", c.label): d["nbytes"] / median_seconds(c.numpy_peer[1](d), reps) / 1e9}
    if TORCH:
        import torch
        for t in threads:
            torch.set_num_threads(t)
            got[("torch", c.label, t)] = d["nbytes"] / median_seconds(c.torch_peer[1](d), reps) / 1e9
    return got


def run_rounds(bench, case_list, threads, quick, rounds):
    """A list of rounds, each a pair of dicts (segred's GB/s as run_segred
    keys them, the peers' as run_peers does). Round after round of one case
    before the next case, so a case's inputs are made once."""
    out = [({}, {}) for _ in range(rounds)]
    for c in case_list:
        note(f"case: {c.label}")
        d = c.inputs()
        for seg, peers in out:
            seg.update(run_segred(bench, [c], threads, quick))
            peers.update(run_peers(c, d, threads, reps=3 if quick else 7))
    return out


# ---------------------------------------------------------------------------
# The table.

def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def fmt(x):
    return "" if x is None else f"{x:.2f}"


def median_of(xs):
    xs = [x for x in xs if x]
    return statistics.median(xs) if xs else None


def best_peer(peers, c, t):
    """(GB/s, who) of the faster peer at t threads; numpy runs on one thread whatever t."""
    cands = [(peers.get(("numpy", c.label)), "numpy"), (peers.get(("torch", c.label, t)), "torch")]
    return max(((g, who) for g, who in cands if g), default=None)


def ratio_cell(rounds, c, t):
    """The median over the rounds of segred / best peer at t threads, the peer
    that was best most often, and with several rounds the lowest and highest."""
    got = []
    for seg, peers in rounds:
        s, best = seg.get((c.segred, t)), best_peer(peers, c, t)
        if s and best:
            got.append((s / best[0], best[1]))
    if not got:
        return ""
    ratios = [r for r, _ in got]
    who = max(set(w for _, w in got), key=[w for _, w in got].count)
    cell = f"{statistics.median(ratios):.2f} ({who})"
    return cell + (f" [{min(ratios):.2f}-{max(ratios):.2f}]" if len(got) > 1 else "")


def table(case_list, threads, rounds):
    head = ["case"] + [f"segred {t}t" for t in threads] + ["numpy op", "numpy 1t"]
    if TORCH:
        head += ["torch op"] + [f"torch {t}t" for t in threads]
    head += [f"segred / best peer, {t}t" for t in threads]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in case_list:
        seg = [median_of(s.get((c.segred, t)) for s, _ in rounds) for t in threads]
        row = [c.label] + [fmt(x) for x in seg]
        row += [c.numpy_peer[0], fmt(median_of(p.get(("numpy", c.label)) for _, p in rounds))]
        if TORCH:
            row += [c.torch_peer[0]] + [fmt(median_of(p.get(("torch", c.label, t)) for _, p in rounds))
                                        for t in threads]
        row += [ratio_cell(rounds, c, t) for t in threads]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", default=str(REPO / "build/default/bench/segred_host_bench"),
                    help="segred_host_bench binary (default: %(default)s)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions and a shorter segred run")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="rounds of segred then peers on each case; the table gives medians (default: %(default)s)")
    ap.add_argument("--no-venv", action="store_true", help="use the current interpreter as it is")
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]

    if not args.no_venv and Path(sys.prefix).resolve() != VENV.resolve():
        enter_venv()

    global TORCH
    try:
        import torch
        TORCH = True
    except (ImportError, OSError) as e:  # OSError: a wheel whose shared libraries are missing
        note(f"torch unavailable ({e}); numpy columns only")
        TORCH = False
    try:
        import numpy as np
    except ImportError:
        sys.exit("numpy is required: run without --no-venv, or install it for this interpreter")

    if args.rounds < 1:
        sys.exit("--rounds must be at least 1")
    case_list = cases()
    load = os.getloadavg()[0]
    t0 = time.time()
    rounds = run_rounds(args.bench, case_list, threads, args.quick, args.rounds)
    note(f"{args.rounds} round(s): {time.time() - t0:.0f} s")

    print(f"Host: {cpu_model()}, {os.cpu_count()} cores, load average {load:.1f} at the start; "
          f"numpy {np.__version__} (1 thread)" + (f", torch {torch.__version__}" if TORCH else ", no torch")
          + "; N = 2^24 fp32 values, segred ids int32, peers' ids int64.\n")
    print(table(case_list, threads, rounds))
    print("\nGB/s of model bytes: values read once, ids (or offsets) read once, output written once; "
          "the same bytes for every column of a row, so ratios are ratios of time. Ids are counted at "
          "4 bytes (int32, as segred reads them); numpy and torch read int64 ids, 4 more bytes a row "
          "that they are not credited for. np.bincount writes float64. Each peer call allocates and "
          "fills its output (np.zeros / torch.zeros), as segred writes every output row. "
          "torch runs at t threads by torch.set_num_threads(t). Peers: median of the timed runs after one warm-up; segred: median of Google Benchmark repetitions, "
          "same machine, just before the case's peers. The memcpy row's segred columns are host_bench's own copy at that "
          f"thread count. Rounds: {args.rounds} a case; each column is the median over them, each ratio the "
          "median of the rounds' own ratios" + (", with their range in brackets." if args.rounds > 1 else "."))


if __name__ == "__main__":
    main()
