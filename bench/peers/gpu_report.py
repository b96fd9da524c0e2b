#!/usr/bin/env python3
"""Merges the GPU benchmark results of segred and its peers into one markdown
table per family and a plot of the two main sweeps.

    python3 bench/peers/gpu_report.py --out-dir OUT OUT/segred.json OUT/peers.json OUT/torch.jsonl OUT/jax.jsonl
    python3 bench/peers/gpu_report.py --self-test [--cases cases.txt]   # synthetic results, no GPU needed

Inputs: Google Benchmark JSON of segred_gpu_bench and segred_gpu_peers (a file
cut short by a killed run is read up to its last complete entry), and the JSON
lines of gpu_peers.py. Results are joined on the case name (gpu_cases.py).

GB/s is recomputed here from each result's median time and the case's model
bytes (gpu_cases.model_bytes), so every implementation of a case is measured
against the same bytes and a GB/s ratio is a time ratio. "of copy" divides by
the device-to-device copy measured in the same process as the result. A peer's
cell is marked "!" when its output checksum differs from segred's beyond the
case's tolerance, or its index fingerprint differs (different inputs); the
notes under each table say which.

Writes OUT/report.md (also printed), OUT/results.json (every result, merged)
and OUT/gpu_sweeps.png (matplotlib) or, without matplotlib, OUT/gpu_sweeps.svg.
"""

import argparse
import json
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_cases  # noqa: E402

FORM_ORDER = {f: i for i, f in enumerate(("fixed", "offsets", "lengths", "sorted_ids", "ids"))}
DIST_ORDER = {d: i for i, d in enumerate(("fixed", "uniform", "pareto", "giant", "empty90", "zipf", "hot50", "same"))}
DTYPE_ORDER = {d: i for i, d in enumerate(("f32", "f16", "bf16", "f64", "none"))}
OP_ORDER = {o: i for i, o in enumerate(gpu_cases.OPS)}
# Peer columns appear in this order when present.
PEER_ORDER = ("cub.segmented_reduce", "cub.reduce_by_key", "cub.histogram_even", "atomic.scatter",
              "torch.segment_reduce", "torch.index_add", "torch.index_put_acc", "torch.scatter_reduce",
              "torch.bincount", "jax.segment_sum", "jax.segment_max", "jax.bincount")


# ---------------------------------------------------------------------------
# Loading

def _read_gb_json(path):
    """Google Benchmark JSON; a run killed mid-way leaves the file without its
    closing brackets, so cut after the last complete entry and close it."""
    with open(path) as f:
        text = f.read()
    try:
        return json.loads(text), False
    except ValueError:
        cut = text.rfind("\n    }")
        if cut < 0:
            raise
        return json.loads(text[:cut + len("\n    }")] + "\n  ]\n}\n"), True


def load_gb(path, warnings):
    data, truncated = _read_gb_json(path)
    ctx = data.get("context", {})
    source = {"path": path, "producer": ctx.get("producer", os.path.basename(path)),
              "device": ctx.get("device"), "rows_log2": int(ctx.get("rows_log2", 26)), "copy_gbps": None}
    if truncated:
        warnings.append("%s was cut short (killed run?): read up to its last complete result" % path)
    # With --benchmark_repetitions, prefer the median aggregate of each run.
    by_run = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        by_run.setdefault(b.get("run_name", b["name"]), []).append(b)
    results = []
    for run_name, entries in by_run.items():
        agg = [b for b in entries if b.get("run_type") == "aggregate"]
        b = agg[0] if agg else sorted(entries, key=lambda e: e.get("ms", 0.0))[len(entries) // 2]
        impl, case = gpu_cases.split_benchmark_name(run_name)
        rec = {"impl": impl or source["producer"], "case": case, "source": path}
        if b.get("error_occurred"):
            rec["error"] = b.get("error_message", "error")
        else:
            for key, field in (("ms", "ms"), ("bytes", "bytes"), ("in_fp", "in_fp"), ("out_sum", "out_sum")):
                if key in b:
                    rec[field] = float(b[key])
            rec["iters"] = b.get("iterations")
        results.append(rec)
    return source, results


def load_jsonl(path, warnings):
    source = {"path": path, "producer": os.path.basename(path), "device": None, "rows_log2": 26, "copy_gbps": None}
    results = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except ValueError:
                warnings.append("%s:%d: not JSON, skipped" % (path, n))
                continue
            if row.get("meta") == "start":
                source.update(producer="gpu_peers.py (%s)" % ",".join(row.get("groups", [])),
                              device=row.get("device"), rows_log2=int(row.get("rows_log2", 26)))
                if row.get("jax_error"):
                    warnings.append("%s: %s" % (path, row["jax_error"]))
            elif row.get("meta") == "end":
                if row.get("budget_exhausted"):
                    warnings.append("%s: time budget reached after %s of %s cases" % (path, row.get("done"),
                                                                                        row.get("total")))
            else:
                row["source"] = path
                results.append(row)
    return source, results


def load(paths, warnings):
    """-> (sources by path, results): copies become their source's reference."""
    sources, results = {}, []
    for p in paths:
        if not os.path.exists(p):
            warnings.append("%s: missing, skipped" % p)
            continue
        try:
            with open(p) as f:
                head = f.read(200)
            is_gb = head.lstrip().startswith("{") and '"context"' in head  # JSON lines start with "meta"
            src, res = (load_gb if is_gb else load_jsonl)(p, warnings)
        except (OSError, ValueError) as e:
            warnings.append("%s: unreadable (%s), skipped" % (p, e))
            continue
        sources[p] = src
        for r in res:
            if r["case"] == "copy":
                if src["copy_gbps"] is None and "ms" in r:
                    src["copy_gbps"] = 2.0 * 4 * (1 << src["rows_log2"]) / (r["ms"] * 1e-3) / 1e9
            else:
                results.append(r)
    return sources, results


def finish(sources, results, warnings):
    """Parses case names, recomputes GB/s from the model bytes, joins by (impl, case)."""
    table = {}
    for r in results:
        try:
            c = gpu_cases.parse(r["case"])
        except ValueError as e:
            warnings.append("%s: %s" % (r["source"], e))
            continue
        src = sources[r["source"]]
        r["parsed"] = c
        if "ms" in r and "error" not in r:
            model = gpu_cases.model_bytes(c, src["rows_log2"])
            if "bytes" in r and abs(r["bytes"] - model) > 1e-9 * model:
                warnings.append("%s %s: producer counted %.0f bytes, the model says %.0f" % (r["impl"], r["case"],
                                                                                           r["bytes"], model))
            r["gbps"] = model / (r["ms"] * 1e-3) / 1e9
            r["frac"] = r["gbps"] / src["copy_gbps"] if src["copy_gbps"] else None
        key = (r["impl"], r["case"])
        if key in table:
            warnings.append("%s %s: given twice, the later result kept" % key)
        table[key] = r
    logs = {s["rows_log2"] for s in sources.values()}
    if len(logs) > 1:
        warnings.append("inputs disagree on rows_log2: %s" % sorted(logs))
    return table


# ---------------------------------------------------------------------------
# Families

POINTS = {("offsets", "fixed", "L32"), ("offsets", "fixed", "L1024"), ("ids", "uniform", "M65536"),
          ("ids", "uniform", "M16777216")}


def _base(c):
    return c.dtype == "f32" and c.idtype == "i32" and c.width == 1


def _point(c):
    return (c.form, c.dist, c.param)


def _widths_pred(c, rows_log2):
    if c.op != "sum" or c.dtype != "f32" or c.idtype != "i32":
        return False
    if _point(c) == ("offsets", "fixed", "L32") or _point(c) == ("ids", "uniform", "M64"):
        return True
    return c.form == "ids" and c.dist == "uniform" and gpu_cases.param_value(c) == gpu_cases.rows(c, rows_log2) // 16


def _sort_key(c):
    return (FORM_ORDER[c.form], DIST_ORDER[c.dist], gpu_cases.param_value(c) or 0, DTYPE_ORDER[c.dtype], c.idtype,
            c.width, OP_ORDER[c.op])


def _op_first_key(c):
    return (OP_ORDER[c.op],) + _sort_key(c)


def _widths_key(c):
    return (FORM_ORDER[c.form], 0 if c.param in ("L32", "M64") else 1, c.width)


# (key, title, predicate(case, rows_log2), sort key)
FAMILIES = [
    ("sorted", "Sorted forms by segment length (sum, f32, int32 indices, width 1)",
     lambda c, n: c.op == "sum" and c.form in gpu_cases.SORTED_FORMS and _base(c), _sort_key),
    ("unsorted_m", "Unsorted ids uniform in [0, M) (sum, f32, int32 ids, width 1)",
     lambda c, n: c.op == "sum" and c.form == "ids" and c.dist == "uniform" and _base(c), _sort_key),
    ("skews", "Unsorted ids, skewed, M = 2^20 (sum, f32, int32 ids, width 1)",
     lambda c, n: c.op == "sum" and c.form == "ids" and c.param == "M1048576" and _base(c), _sort_key),
    ("reducers", "Reducers (f32, int32 indices, width 1)",
     lambda c, n: c.op in ("sum", "mean", "max", "argmax") and _point(c) in POINTS and _base(c), _sort_key),
    ("dtypes", "Value and index types (sum, width 1)",
     lambda c, n: (c.op == "sum" and c.width == 1
                   and (_point(c) in POINTS or _point(c) == ("sorted_ids", "fixed", "L32"))), _sort_key),
    ("widths", "Widths at equal bytes: rows = 2^rows_log2 / width (sum, f32, int32 indices)", _widths_pred,
     _widths_key),
    ("bincount", "bincount: counts (int32) and weighted (f32)",
     lambda c, n: c.op in ("bincount", "bincount_w"), _op_first_key),
    ("gather_bwd", "gather_backward (scatter-add of the gradient, f32)",
     lambda c, n: c.op == "gather_bwd", _sort_key),
    ("deterministic", "Deterministic unsorted sum (options::deterministic; the atomic path alongside)",
     lambda c, n: c.op == "sum_det", _sort_key),
]


def fmt_gbps(x):
    if x is None:
        return ""
    return "%.0f" % x if x >= 100 else "%.1f" % x if x >= 1 else "%.2f" % x


def compare(peer, ref):
    """Why a peer's result disagrees with segred's, or None."""
    c = ref["parsed"]
    if peer.get("in_fp") and ref.get("in_fp") and peer["in_fp"] != ref["in_fp"]:
        return "index fingerprint %.0f, segred's %.0f: different inputs" % (peer["in_fp"], ref["in_fp"])
    a, b = peer.get("out_sum"), ref.get("out_sum")
    if a is None or b is None:
        return None
    tol = gpu_cases.tolerance(c)
    rel = abs(a - b) / max(abs(b), 1e-30)
    if rel > tol:
        return "output checksum %.6g, segred's %.6g (relative difference %.2g > %.0g)" % (a, b, rel, tol)
    return None


def render_family(fam, table, rows_log2):
    key, title, pred, sort_key = fam
    cases = sorted({r["case"] for r in table.values() if pred(r["parsed"], rows_log2)},
                   key=lambda n: sort_key(gpu_cases.parse(n)))
    if not cases:
        return None
    parsed = [gpu_cases.parse(n) for n in cases]
    fields = [f for f in gpu_cases.Case._fields if len({getattr(c, f) for c in parsed}) > 1]

    def label(c):
        return " ".join(("w%d" % c.width) if f == "width" else str(getattr(c, f)) for f in fields) or "-"

    impls = {i for (i, n) in table if n in cases and i != "segred"}
    peers = [p for p in PEER_ORDER if p in impls] + sorted(impls - set(PEER_ORDER))
    extra = key == "deterministic"
    head = ["case", "segred GB/s", "of copy"] + (["segred atomic sum"] if extra else []) + peers + \
        ["best peer", "segred / best"]
    lines = ["### " + title, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = []
    for name, c in zip(cases, parsed):
        ref = table.get(("segred", name))
        seg = ref.get("gbps") if ref else None
        row = [label(c)]
        if ref is None:
            row += ["(none)", ""]
        elif "error" in ref:
            row += ["err", ""]
            notes.append("segred %s: %s" % (name, ref["error"]))
        else:
            row += [fmt_gbps(seg), "%.2f" % ref["frac"] if ref.get("frac") is not None else ""]
        if extra:
            atomic = table.get(("segred", name.replace("sum_det/", "sum/", 1)))
            row.append(fmt_gbps(atomic.get("gbps")) if atomic else "")
        best = None
        for p in peers:
            r = table.get((p, name))
            if r is None:
                row.append("")
            elif "error" in r:
                row.append("err")
                notes.append("%s %s: %s" % (p, name, r["error"]))
            else:
                why = compare(r, ref) if ref and "error" not in ref else None
                row.append(fmt_gbps(r["gbps"]) + ("!" if why else ""))
                if why:
                    notes.append("! %s %s: %s" % (p, name, why))
                if best is None or r["gbps"] > best[1]:
                    best = (p, r["gbps"])
        row.append(best[0] if best else "")
        row.append("%.2f" % (seg / best[1]) if best and seg else "")
        lines.append("| " + " | ".join(row) + " |")
    if notes:
        lines += [""] + ["- " + n for n in notes]
    return "\n".join(lines)


def render(sources, table, warnings):
    rows_log2 = max((s["rows_log2"] for s in sources.values()), default=26)
    out = ["# segred GPU benchmarks", ""]
    devices = sorted({s["device"] for s in sources.values() if s["device"]})
    out.append("Device: %s. Rows: 2^%d at width 1 (2^%d / width otherwise)." % (", ".join(devices) or "unknown",
                                                                                 rows_log2, rows_log2))
    out.append("")
    out.append("Copy reference (device-to-device, read + write), per process:")
    for s in sources.values():
        out.append("- %s: %s" % (s["producer"], fmt_gbps(s["copy_gbps"]) + " GB/s" if s["copy_gbps"] else "not measured"))
    out.append("")
    out.append("GB/s of model bytes (each input read once, each output written once) at the median time; "
               "\"of copy\" is segred's GB/s over its run's copy; \"segred / best\" over the fastest peer of "
               "the same case.")
    for fam in FAMILIES:
        text = render_family(fam, table, rows_log2)
        if text:
            out += ["", text]
    if warnings:
        out += ["", "### Warnings", ""] + ["- " + w for w in warnings]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# Plot: GB/s against segment length (sorted, fixed lengths) and against M
# (unsorted, uniform ids), every implementation of the sum.

def sweep_series(table):
    panels = [("Sorted: every segment L rows (sum, f32, int32)", "segment length L", {}),
              ("Unsorted: ids uniform in [0, M) (sum, f32, int32)", "M", {})]
    for (impl, name), r in table.items():
        c = r["parsed"]
        if "gbps" not in r or not _base(c):
            continue
        if c.op == "sum" and c.form in gpu_cases.SORTED_FORMS and c.dist == "fixed":
            panels[0][2].setdefault("%s [%s]" % (impl, c.form), []).append((gpu_cases.param_value(c), r["gbps"]))
        elif c.op in ("sum", "sum_det") and c.form == "ids" and c.dist == "uniform":
            lab = impl + (" [deterministic]" if c.op == "sum_det" else "")
            panels[1][2].setdefault(lab, []).append((gpu_cases.param_value(c), r["gbps"]))
    for _, _, series in panels:
        for pts in series.values():
            pts.sort()
    return panels


def plot_png(panels, copy_gbps, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(15, 6))
    for ax, (title, xlabel, series) in zip(axes, panels):
        for lab in sorted(series, key=lambda s: (not s.startswith("segred"), s)):
            xs, ys = zip(*series[lab])
            ax.plot(xs, ys, marker="o", linewidth=2.5 if lab.startswith("segred") else 1.2, label=lab)
        if copy_gbps:
            ax.axhline(copy_gbps, color="gray", linestyle="--", label="copy")
        ax.set_xscale("log", base=2)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("GB/s")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
          "#7f7f7f", "#393b79", "#637939")


def _esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plot_svg(panels, copy_gbps, path):
    """The same two panels, drawn by hand (no matplotlib on the machine); legends below the panels."""
    pw, ph, top, left, gap = 560, 380, 50, 80, 130
    rows_needed = max((len(series) + 1) // 2 for _, _, series in panels)
    W, H = left + 2 * pw + gap + 40, top + ph + 60 + 16 * rows_needed + 20
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="12">' % (W, H), '<rect width="100%" height="100%" fill="white"/>']
    for k, (title, xlabel, series) in enumerate(panels):
        x0 = left + k * (pw + gap)
        pts = [p for s in series.values() for p in s]
        if not pts:
            continue
        lx = [math.log2(x) for x, _ in pts]
        xmin, xmax = min(lx), max(lx)
        if xmax == xmin:
            xmax = xmin + 1
        ymax = max([y for _, y in pts] + [copy_gbps or 0]) * 1.1
        step = 10 ** math.floor(math.log10(ymax / 5)) if ymax > 0 else 1
        step *= next(m for m in (1, 2, 5, 10) if ymax / (step * m) <= 6)

        def X(x):
            return x0 + (math.log2(x) - xmin) / (xmax - xmin) * pw

        def Y(y):
            return top + ph - y / ymax * ph

        svg.append('<text x="%d" y="%d" font-size="14" font-weight="bold">%s</text>' % (x0, top - 20, _esc(title)))
        svg.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' % (x0, top, pw, ph))
        y = 0.0
        while y <= ymax:
            svg.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (x0, Y(y), x0 + pw, Y(y)))
            svg.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (x0 - 5, Y(y) + 4, y))
            y += step
        for e in range(int(math.floor(xmin)), int(math.ceil(xmax)) + 1):
            if (e - int(math.floor(xmin))) % 2 == 0 or xmax - xmin <= 12:
                svg.append('<text x="%.1f" y="%d" text-anchor="middle">2^%d</text>' % (X(2 ** e), top + ph + 16, e))
        svg.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (x0 + pw // 2, top + ph + 34,
                                                                           _esc(xlabel)))
        svg.append('<text x="%d" y="%d" transform="rotate(-90 %d %d)" text-anchor="middle">GB/s</text>'
                   % (x0 - 50, top + ph // 2, x0 - 50, top + ph // 2))
        if copy_gbps:
            svg.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="gray" stroke-dasharray="6,4"/>'
                       % (x0, Y(copy_gbps), x0 + pw, Y(copy_gbps)))
            svg.append('<text x="%d" y="%.1f" text-anchor="end" fill="gray">copy</text>'
                       % (x0 + pw - 4, Y(copy_gbps) - 4))
        labels = sorted(series, key=lambda s: (not s.startswith("segred"), s))
        for i, lab in enumerate(labels):
            col = COLORS[i % len(COLORS)]
            width = 3 if lab.startswith("segred") else 1.5
            xy = " ".join("%.1f,%.1f" % (X(x), Y(y)) for x, y in series[lab])
            svg.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="%s"/>' % (xy, col, width))
            for x, y in series[lab]:
                svg.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (X(x), Y(y), col))
            lx0, ly = x0 + (i % 2) * (pw // 2), top + ph + 60 + 16 * (i // 2)
            svg.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>'
                       % (lx0, ly - 4, lx0 + 16, ly - 4, col))
            svg.append('<text x="%d" y="%d" font-size="11">%s</text>' % (lx0 + 20, ly, _esc(lab)))
    svg.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(svg) + "\n")


def plot(table, copy_gbps, out_dir, force_svg=False):
    panels = sweep_series(table)
    if not force_svg:
        try:
            path = os.path.join(out_dir, "gpu_sweeps.png")
            plot_png(panels, copy_gbps, path)
            return path
        except ImportError:
            pass
    path = os.path.join(out_dir, "gpu_sweeps.svg")
    plot_svg(panels, copy_gbps, path)
    return path


# ---------------------------------------------------------------------------

def report(paths, out_dir, force_svg=False):
    """Loads, renders and writes everything; returns (markdown, plot path, table)."""
    warnings = []
    sources, results = load(paths, warnings)
    table = finish(sources, results, warnings)
    segred_copy = next((s["copy_gbps"] for s in sources.values() if s["producer"] == "segred_gpu_bench"), None)
    os.makedirs(out_dir, exist_ok=True)
    plot_path = plot(table, segred_copy, out_dir, force_svg)
    text = render(sources, table, warnings)
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(text)
    merged = [{k: v for k, v in r.items() if k != "parsed"} for r in table.values()]
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"sources": list(sources.values()), "results": merged}, f, indent=1)
    return text, plot_path, table


# Self-test: synthetic producer files in the exact formats, including the
# awkward parts (a killed run, an error, a wrong checksum, a missing file).

SAMPLE_CASES = [
    "sum/offsets/fixed/L1/f32/i32/w1", "sum/offsets/fixed/L32/f32/i32/w1", "sum/offsets/fixed/L1024/f32/i32/w1",
    "sum/lengths/fixed/L32/f32/i32/w1", "sum/sorted_ids/fixed/L32/f32/i32/w1", "sum/fixed/fixed/L32/f32/i32/w1",
    "sum/offsets/pareto/a1.5/f32/i32/w1", "sum/ids/uniform/M64/f32/i32/w1", "sum/ids/uniform/M65536/f32/i32/w1",
    "sum/ids/uniform/M16777216/f32/i32/w1", "sum/ids/uniform/M1048576/f32/i32/w1", "sum/ids/zipf/M1048576/f32/i32/w1",
    "sum_det/ids/uniform/M65536/f32/i32/w1", "max/offsets/fixed/L32/f32/i32/w1", "max/ids/uniform/M65536/f32/i32/w1",
    "argmax/ids/uniform/M65536/f32/i32/w1", "sum/ids/uniform/M65536/f16/i32/w1", "sum/offsets/fixed/L32/f32/i64/w1",
    "sum/offsets/fixed/L32/f32/i32/w64", "sum/ids/uniform/M65536/f32/i32/w64", "bincount/ids/uniform/M64/none/i32/w1",
    "bincount_w/ids/uniform/M64/f32/i32/w1", "gather_bwd/ids/uniform/M65536/f32/i32/w1",
]


def _cpp_peers(c):
    """gpu_peers.cu's table, for the synthetic results."""
    out = []
    if c.form == "offsets" and c.op in ("sum", "max") and c.dtype == "f32" and c.width == 1:
        out.append("cub.segmented_reduce")
    if c.form == "sorted_ids" and c.op == "sum" and _base(c):
        out.append("cub.reduce_by_key")
    if c.op == "bincount":
        out.append("cub.histogram_even")
    if c.form == "ids" and c.op in ("sum", "max", "bincount", "bincount_w", "gather_bwd"):
        out.append("atomic.scatter")
    return out


def self_test(cases_path):
    import gpu_peers
    cases = gpu_cases.read_case_list(cases_path) if cases_path else SAMPLE_CASES
    log2 = 26
    tmp = tempfile.mkdtemp(prefix="gpu_report_selftest_")

    def ms_for(impl, name, k):
        return gpu_cases.model_bytes(gpu_cases.parse(name), log2) / ((300 + 97 * (k % 17)) * 1e9) * 1e3 * \
            (1 if impl == "segred" else 1.3 + 0.1 * (len(impl) % 5))

    def gb_entry(impl, name, k, **extra):
        e = {"name": "%s/%s/manual_time" % (impl, name), "run_name": "%s/%s/manual_time" % (impl, name),
             "run_type": "iteration", "iterations": 100, "real_time": 1.0, "time_unit": "us"}
        if extra.get("error"):
            e.update(error_occurred=True, error_message=extra["error"])
            return e
        c = gpu_cases.parse(name)
        e.update({"ms": ms_for(impl, name, k), "bytes": gpu_cases.model_bytes(c, log2), "in_fp": 1000.0 + k,
                  "out_sum": 5e6 + k, "GB/s": 0.0, "frac_copy": 0.0})
        return e

    def gb_file(path, producer, entries, cut):
        copy = {"name": "copy/manual_time", "run_name": "copy/manual_time", "run_type": "iteration",
                "ms": 2.0 * 4 * (1 << log2) / 3.4e12 * 1e3}
        doc = {"context": {"producer": producer, "device": "Fake H100", "rows_log2": str(log2)},
               "benchmarks": [copy] + entries}
        text = json.dumps(doc, indent=2)  # Google Benchmark's layout too: each entry ends with "\n    }"
        if cut:
            text = text[:text.rfind("\n    }") - 5]  # killed inside the last entry
        with open(path, "w") as f:
            f.write(text)

    seg = [gb_entry("segred", n, k, error="boom" if k == 3 else None) for k, n in enumerate(cases)]
    gb_file(os.path.join(tmp, "segred.json"), "segred_gpu_bench", seg, cut=False)
    peers = [gb_entry(p, n, k) for k, n in enumerate(cases) for p in _cpp_peers(gpu_cases.parse(n))]
    gb_file(os.path.join(tmp, "peers.json"), "segred_gpu_peers", peers, cut=True)
    with open(os.path.join(tmp, "torch.jsonl"), "w") as f:
        f.write(json.dumps({"meta": "start", "groups": ["torch"], "device": "Fake H100", "rows_log2": log2}) + "\n")
        f.write(json.dumps({"impl": "torch", "case": "copy", "ms": 2.0 * 4 * (1 << log2) / 3.2e12 * 1e3}) + "\n")
        for k, n in enumerate(cases):
            c = gpu_cases.parse(n)
            for impl in gpu_peers.torch_impls(c) + gpu_peers.jax_impls(c, False):
                wrong = 1.5 if (k == 1 and impl.startswith("torch")) else 1.0
                f.write(json.dumps({"impl": impl, "case": n, "ms": ms_for(impl, n, k), "in_fp": 1000.0 + k,
                                    "out_sum": (5e6 + k) * wrong, "bytes": gpu_cases.model_bytes(c, log2)}) + "\n")
        f.write(json.dumps({"impl": "torch.index_add", "case": cases[-1], "error": "RuntimeError: fake"}) + "\n")
        f.write('{"impl": "torch.index_add", "case": "sum/ids/uniform/M64/f32/i32/w1", "ms": 1.0, "in_f')
    paths = [os.path.join(tmp, f) for f in ("segred.json", "peers.json", "torch.jsonl", "missing.jsonl")]
    text, plot_path, table = report(paths, tmp)
    svg_text, svg_path, _ = report(paths, os.path.join(tmp, "svg"), force_svg=True)
    print(text)
    checks = [
        ("one table per family present in the sample", text.count("\n### ") >= 9),
        ("segred rows joined", ("segred", cases[0]) in table),
        ("error shown", "| err |" in text or "err |" in text),
        ("checksum mismatch flagged", "!" in text and "output checksum" in text),
        ("truncated file noticed", "cut short" in text),
        ("missing file noticed", "missing.jsonl: missing" in text),
        ("broken JSON line noticed", "not JSON" in text),
        ("ratios computed", "segred / best" in text),
        ("plot written", os.path.getsize(plot_path) > 1000),
        ("svg written", svg_path.endswith(".svg") and open(svg_path).read().startswith("<svg")),
    ]
    bad = [what for what, ok in checks if not ok]
    print("self-test files: %s" % tmp)
    print("self-test: %d passed, %d failed%s" % (len(checks) - len(bad), len(bad), (": " + ", ".join(bad)) if bad else ""))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="*", help="Google Benchmark JSON files and gpu_peers.py JSON lines")
    ap.add_argument("--out-dir", default=".", help="where report.md, results.json and the plot go")
    ap.add_argument("--svg", action="store_true", help="write the plot as SVG even when matplotlib is there")
    ap.add_argument("--self-test", action="store_true", help="render synthetic results and check the report")
    ap.add_argument("--cases", help="with --self-test: a --benchmark_list_tests listing to use as the cases")
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.cases)
    if not args.inputs:
        ap.error("no inputs")
    text, plot_path, _ = report(args.inputs, args.out_dir, args.svg)
    print(text)
    print("wrote %s, %s, %s" % (os.path.join(args.out_dir, "report.md"), os.path.join(args.out_dir, "results.json"),
                                plot_path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
