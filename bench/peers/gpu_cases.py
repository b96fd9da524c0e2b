"""Case names of the GPU benchmarks, shared by gpu_peers.py and gpu_report.py.

A case name is `op/form/dist/param/dtype/idtype/w<width>`, e.g.
`sum/offsets/fixed/L32/f32/i32/w1`; bench/gpu_bench.cu defines the cases (its
header comment explains each field) and the functions here mirror its
case_spec: the number of segments and the model bytes of a case. Change them
together. Plain Python, no third-party imports, so the report runs anywhere.
"""

import collections

ZETA_1_5 = 2.6123753486854883  # mean of floor(U^(-1/1.5)); gpu_bench.cu kZeta15
VALUE_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "none": 0}
INDEX_BYTES = {"i32": 4, "i64": 8}
SORTED_FORMS = ("offsets", "lengths", "sorted_ids", "fixed")
SORTED_DISTS = ("fixed", "uniform", "pareto", "giant", "empty90")
UNSORTED_DISTS = ("uniform", "zipf", "hot50", "same")
OPS = ("sum", "sum_det", "mean", "max", "argmax", "bincount", "bincount_w", "gather_bwd")

# Path components Google Benchmark appends to a benchmark's name.
_GB_SUFFIX_PREFIXES = ("manual_time", "real_time", "process_time", "min_time:", "min_warmup_time:",
                       "iterations:", "repeats:", "threads:")

Case = collections.namedtuple("Case", "op form dist param dtype idtype width")


def strip_gb_suffixes(name):
    """'segred/sum/.../w1/manual_time' -> 'segred/sum/.../w1'."""
    parts = name.split("/")
    while parts and parts[-1].startswith(_GB_SUFFIX_PREFIXES):
        parts.pop()
    return "/".join(parts)


def split_benchmark_name(name):
    """A Google Benchmark name -> (impl, case); the copy reference is (None, 'copy')."""
    name = strip_gb_suffixes(name)
    if name == "copy":
        return None, "copy"
    impl, _, case = name.partition("/")
    return impl, case


def parse(case):
    """'sum/offsets/fixed/L32/f32/i32/w1' -> Case; raises ValueError on anything else."""
    parts = case.split("/")
    if len(parts) != 7:
        raise ValueError("case %r: expected 7 fields op/form/dist/param/dtype/idtype/w<width>" % case)
    op, form, dist, param, dtype, idtype, w = parts
    if op not in OPS or dtype not in VALUE_BYTES or idtype not in INDEX_BYTES or not w.startswith("w"):
        raise ValueError("case %r: unknown op, dtype, idtype or width" % case)
    if form == "ids":
        if dist not in UNSORTED_DISTS or not param.startswith("M"):
            raise ValueError("case %r: ids take uniform/zipf/hot50/same and M<count>" % case)
    elif form in SORTED_FORMS:
        if dist not in SORTED_DISTS:
            raise ValueError("case %r: unknown sorted distribution" % case)
    else:
        raise ValueError("case %r: unknown form" % case)
    return Case(op, form, dist, param, dtype, idtype, int(w[1:]))


def param_value(c):
    """The number in L<len> or M<count>, else None (pareto, giant, empty90)."""
    if c.param[:1] in ("L", "M"):
        return int(c.param[1:])
    return None


def rows(c, rows_log2):
    return (1 << rows_log2) // c.width


def segments(c, rows_log2):
    """Number of segments M (the output's rows); gpu_bench.cu case_spec::segments."""
    r = rows(c, rows_log2)
    if c.form == "ids":
        return param_value(c)
    if c.dist in ("fixed", "uniform"):
        return r // param_value(c)
    if c.dist == "pareto":
        return int(r / ZETA_1_5)
    if c.dist == "giant":
        return r // 4 + 1
    return r * 4 // 13  # empty90


def value_dtype(c):
    return "none" if c.op == "bincount" else c.dtype


def model_bytes(c, rows_log2):
    """Values read once, the index array read once, the output written once
    (gpu_bench.cu case_spec::model_bytes); every implementation of a case is
    measured against these bytes, so GB/s ratios are time ratios."""
    r, m, w = rows(c, rows_log2), segments(c, rows_log2), c.width
    sv, si = VALUE_BYTES[value_dtype(c)], INDEX_BYTES[c.idtype]
    index = {"offsets": (m + 1) * si, "lengths": m * si, "sorted_ids": r * si, "ids": r * si, "fixed": 0}[c.form]
    out_elem = 8 if c.op == "argmax" else 4 if c.op == "bincount" else sv
    return float(r * w * sv + index + m * w * out_elem)


def tolerance(c):
    """Relative tolerance of output checksums between implementations: integer
    outputs are exact; half types round each segment's result to 8 or 11 bits."""
    if c.op in ("bincount", "argmax"):
        return 0.0
    return 2e-2 if c.dtype in ("f16", "bf16") else 1e-3


def read_case_list(path):
    """Case names of segred in a `segred_gpu_bench --benchmark_list_tests=true` listing."""
    out = []
    with open(path) as f:
        for line in f:
            impl, case = split_benchmark_name(line.strip())
            if impl == "segred":
                out.append(case)
    return out
