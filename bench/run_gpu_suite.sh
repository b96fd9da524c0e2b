#!/usr/bin/env bash
# segred's GPU benchmark suite: segred_gpu_bench, segred_gpu_peers (CUB and a
# plain atomic scatter), the torch and JAX peers (bench/peers/gpu_peers.py),
# then one report (bench/peers/gpu_report.py), all on the same cases.
#
#   bench/run_gpu_suite.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR holds segred_gpu_bench and segred_gpu_peers, directly or in bench/
# (a CMake build directory). Making their shared libraries findable
# (LD_LIBRARY_PATH) is the caller's business. OUT_DIR receives:
#   cases.txt                 the case names (segred_gpu_bench --benchmark_list_tests)
#   segred.json, peers.json   Google Benchmark JSON; segred.txt, peers.txt their console output
#   torch.jsonl, jax.jsonl    gpu_peers.py results; torch.log, jax.log its progress and errors
#   report.md, results.json   the merged tables (also printed at the end) and every result
#   gpu_sweeps.png or .svg    GB/s against segment length and against M
#   device.txt                nvidia-smi's view of the GPU, when nvidia-smi exists
# Environment:
#   SEGRED_BENCH_MIN_TIME     seconds of timed calls per case (default 0.05)
#   SEGRED_ROWS_LOG2          rows at width 1 = 2^this (default 26; smaller for a smoke run)
#   PYTHON                    a python with torch, and JAX for its peers (default python3)
#   SEGRED_TORCH_BUDGET_S     seconds gpu_peers.py may spend starting torch cases (default 90;
#                             an H200 took about 230 for all of them)
# Every step has a time limit (3 to 4 minutes expected in all on an H100, the
# limits add up to 7.5), and a failing step is reported while the others still
# run; a run cut short keeps what it measured. Exit status 1 when segred_gpu_bench or the
# report failed.
set -uo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR OUT_DIR" >&2
    exit 2
fi
build=$1
out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-python3}
min_time=${SEGRED_BENCH_MIN_TIME:-0.05}
rows_log2=${SEGRED_ROWS_LOG2:-26}

find_binary() {
    for d in "$build" "$build/bench"; do
        if [ -x "$d/$1" ]; then
            echo "$d/$1"
            return 0
        fi
    done
    echo "$1 not found in $build or $build/bench" >&2
    return 1
}
bench=$(find_binary segred_gpu_bench) || exit 1
peers=$(find_binary segred_gpu_peers) || exit 1
mkdir -p "$out"

start=$(date +%s)
say() { printf '=== [%4ds] %s\n' "$(( $(date +%s) - start ))" "$*"; }

# step LIMIT_S NAME LOG COMMAND...: runs COMMAND under a time limit, its output
# into LOG ("-": to this terminal); says how it ended.
step() {
    local limit=$1 name=$2 log=$3
    shift 3
    say "$name"
    if [ "$log" = "-" ]; then
        timeout "$limit" "$@"
    else
        timeout "$limit" "$@" > "$log" 2>&1
    fi
    local rc=$?
    if [ $rc -eq 124 ]; then
        say "$name: stopped at its ${limit} s limit (results so far are kept)"
    elif [ $rc -ne 0 ]; then
        say "$name: failed with exit status $rc"
    fi
    return $rc
}

if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv \
        > "$out/device.txt" 2>&1
    cat "$out/device.txt"
fi

status=0
"$bench" --rows_log2="$rows_log2" --benchmark_list_tests=true > "$out/cases.txt" 2> "$out/cases.err" || {
    cat "$out/cases.err" >&2
    exit 1
}
say "$(grep -c '^segred/' "$out/cases.txt") segred cases, min time ${min_time} s, rows 2^${rows_log2}"

gb_args=(--rows_log2="$rows_log2" --benchmark_min_time="$min_time" --benchmark_out_format=json)
step 150 segred_gpu_bench "$out/segred.txt" "$bench" "${gb_args[@]}" --benchmark_out="$out/segred.json" || status=1
step 90 segred_gpu_peers "$out/peers.txt" "$peers" "${gb_args[@]}" --benchmark_out="$out/peers.json"

# gpu_peers.py stops starting cases at --budget-s, before the hard limit.
py_args=(--cases "$out/cases.txt" --rows-log2 "$rows_log2" --min-time "$min_time")
torch_budget=${SEGRED_TORCH_BUDGET_S:-90}
step $((torch_budget + 20)) "gpu_peers.py torch" "$out/torch.log" "$python" "$here/peers/gpu_peers.py" "${py_args[@]}" \
    --impl torch --budget-s "$torch_budget" --out "$out/torch.jsonl"
step 80 "gpu_peers.py jax" "$out/jax.log" "$python" "$here/peers/gpu_peers.py" "${py_args[@]}" --impl jax \
    --budget-s 60 --out "$out/jax.jsonl"

inputs=()
for f in segred.json peers.json torch.jsonl jax.jsonl; do
    [ -s "$out/$f" ] && inputs+=("$out/$f")
done
if [ ${#inputs[@]} -eq 0 ]; then
    say "no results to report"
    exit 1
fi
step 60 gpu_report.py - "$python" "$here/peers/gpu_report.py" --out-dir "$out" "${inputs[@]}" || status=1
say "done: $out/report.md"
exit $status
