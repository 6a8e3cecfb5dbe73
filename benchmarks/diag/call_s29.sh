#!/bin/bash
# The twenty-third and twenty-fourth sessions' calls (call_s27.sh's too: SUITES=gemm|all, SAN=1, RUNS=N). Staged here
# (.devpack.tgz, or .devpack.txz with xz: .dev/wheels, .dev/gpu_art with profile_cases.py's kernels, a probe set's
# kernels from `stream_floor.py build-NAME .dev/DIR`, .dev/gf from `gemm_bench.py build` where it is needed); on the
# GPU:  [SUITES=xa|gemm|all|none] [PROBES=N XPROBES=NAME XDIR=DIR] [SAN=1 [SANK=EXPR]] [RUNS=N] bash
# benchmarks/diag/call_s29.sh
#   SUITES=xa (the default): the GEMM's GPU tests of x as the wgmmas' A; k: those -k "$TK" picks; gemm: all the
#   GEMM's; all: every GPU suite (call_s26.sh)
#   PROBES=N (0): N runs of stream_floor.py's probe set NAME (run-NAME .dev/DIR; xkwg in .dev/xk by default);
#   CPROBES=N (0): N runs of config_probe.py's PROBES (its kernels from `config_probe.py build .dev/cp`);
#   ABF=N (0): N runs of ab_probe.py over .dev/abf (AB_FUSED=1 AB_OLD_CONCAT=chain: its kernels from
#   `NVTMA_CACHE=0 AB_FUSED=1 AB_OLD_CONCAT=chain ab_probe.py build .dev/abf`);
#   SAN=1: compute-sanitizer (memcheck, racecheck, synccheck; device errors only) over test_gpu_gemm.py's tests
#   that pytest -k EXPR picks (SANK; by default those of x as A and the stream/graph ones); RUNS=N (0): full
#   gemm_bench.py runs while the call's time lasts (SWEEP=1: the first with the L2-promotion sweep, its kernels
#   built by `gemm_bench.py build .dev/gf --sweep`)
set -u
t0=$(date +%s)
if [ "${SUITES:-xa}" = all ]; then
  bash benchmarks/diag/call_s26.sh
elif [ -f .devpack.txz ]; then
  tar xJf .devpack.txz  # (xz: 930 benchmark kernels in 16 MB, where gzip took 56)
else
  tar xzf .devpack.tgz
fi
rm -rf /tmp/pk && pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python:$PWD/benchmarks NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
mkdir -p "$OUT"
if [ "${SUITES:-xa}" = xa ]; then
  timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider test/python/test_gpu_gemm.py -k "x_as_the_wgmmas_a" -rfE \
    > "$OUT/test_gpu_gemm_xa.log" 2>&1
  echo "x-as-A GPU tests rc $?: $(tail -n 1 "$OUT/test_gpu_gemm_xa.log") at $(( $(date +%s) - t0 )) s"
elif [ "${SUITES:-xa}" = k ]; then  # the GEMM's GPU tests that pytest -k "$TK" picks
  timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider test/python/test_gpu_gemm.py -k "$TK" -rfE \
    > "$OUT/test_gpu_gemm_k.log" 2>&1
  echo "GPU tests -k '$TK' rc $?: $(tail -n 1 "$OUT/test_gpu_gemm_k.log") at $(( $(date +%s) - t0 )) s"
elif [ "${SUITES:-xa}" = gemm ]; then
  timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider test/python/test_gpu_gemm.py -rfE > "$OUT/test_gpu_gemm.log" 2>&1
  echo "test_gpu_gemm.py rc $?: $(tail -n 1 "$OUT/test_gpu_gemm.log") at $(( $(date +%s) - t0 )) s"
fi
for i in $(seq 1 "${PROBES:-0}"); do
  timeout 240 python3 benchmarks/diag/stream_floor.py run-${XPROBES:-xkwg} .dev/${XDIR:-xk} > "$OUT/xk$i.jsonl" \
    2> "$OUT/xk$i.err"
  echo "probes $i rc $? $(wc -l < "$OUT/xk$i.jsonl") lines at $(( $(date +%s) - t0 )) s"; tail -2 "$OUT/xk$i.err"
done
for i in $(seq 1 "${CPROBES:-0}"); do
  timeout 240 python3 benchmarks/diag/config_probe.py run .dev/cp > "$OUT/cp$i.jsonl" 2> "$OUT/cp$i.err"
  echo "config probes $i rc $? $(wc -l < "$OUT/cp$i.jsonl") lines at $(( $(date +%s) - t0 )) s"; tail -2 "$OUT/cp$i.err"
done
for i in $(seq 1 "${ABF:-0}"); do
  AB_FUSED=1 AB_OLD_CONCAT=chain timeout 240 python3 benchmarks/diag/ab_probe.py run .dev/abf > "$OUT/abf$i.jsonl" \
    2> "$OUT/abf$i.err"
  echo "fused A/B $i rc $? $(wc -l < "$OUT/abf$i.jsonl") lines at $(( $(date +%s) - t0 )) s"; tail -2 "$OUT/abf$i.err"
done
if [ "${SAN:-0}" = 1 ]; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in memcheck racecheck synccheck; do
    ( timeout "${SANT:-200}" "$cs" --report-api-errors no --print-limit 20 --tool $tool python3 -m pytest -q -p no:cacheprovider \
        -m gpu test/python/test_gpu_gemm.py -k "${SANK:-x_as_the_wgmmas_a or stream_and_graphs}" 2>&1 \
        | grep -E "=====|passed|failed|Error" | head -40 > "$OUT/$tool.log" ) &
  done
  wait
  for tool in memcheck racecheck synccheck; do echo "$tool: $(grep -E 'SUMMARY|passed|failed' "$OUT/$tool.log" | tr '\n' ' ')"; done
fi
for i in $(seq 1 "${RUNS:-0}"); do
  left=$(( 570 - ($(date +%s) - t0) ))
  [ "$left" -lt 90 ] && break
  sweep=$([ "${SWEEP:-0}" = 1 ] && [ "$i" = 1 ] && echo --sweep)  # SWEEP=1: the first run with the L2 sweep
  timeout "$left" python3 benchmarks/gemm_bench.py run .dev/gf $sweep > "$OUT/g$i.jsonl" 2> "$OUT/g$i.err"
  echo "run $i rc $? $(wc -l < "$OUT/g$i.jsonl") lines at $(( $(date +%s) - t0 )) s"; tail -2 "$OUT/g$i.err"
done
# one file back (a call returns at most 8)
( cd "$OUT" && tar czf /tmp/s29-out.tgz -- * && rm -f -- * && mv /tmp/s29-out.tgz "$OUT/out.tgz" )
