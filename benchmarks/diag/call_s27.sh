#!/bin/bash
# The twenty-second session's calls. Staged here (.devpack.tgz: .dev/wheels, .dev/gpu_art, .dev/gf from
# gemm_bench.py build); on the GPU:  [SUITES=gemm|all] [SAN=1] [RUNS=N] bash benchmarks/diag/call_s27.sh
#   SUITES=gemm (the default): the GEMM's GPU tests; all: every GPU suite (call_s26.sh)
#   SAN=1: then compute-sanitizer (memcheck, racecheck, synccheck; device errors only) over the GEMM tests of x
#          as the wgmmas' A and the stream/graph ones
# then up to RUNS (3) full gemm_bench.py runs (every candidate, x as A too) while the call's time lasts.
# The first call: the default; the last: SUITES=all SAN=1.
set -u
t0=$(date +%s)
if [ "${SUITES:-gemm}" = all ]; then
  bash benchmarks/diag/call_s26.sh
fi
tar xzf .devpack.tgz && rm -rf /tmp/pk && pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python:$PWD/benchmarks NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
mkdir -p "$OUT"
if [ "${SUITES:-gemm}" = gemm ]; then
  timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider test/python/test_gpu_gemm.py -rfE > "$OUT/test_gpu_gemm.log" 2>&1
  echo "test_gpu_gemm.py rc $?: $(tail -n 1 "$OUT/test_gpu_gemm.log") at $(( $(date +%s) - t0 )) s"
fi
if [ "${SAN:-0}" = 1 ]; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in memcheck racecheck synccheck; do
    ( timeout 200 "$cs" --report-api-errors no --print-limit 20 --tool $tool python3 -m pytest -q -p no:cacheprovider \
        -m gpu test/python/test_gpu_gemm.py -k "x_as_the_wgmmas_a or stream_and_graphs" 2>&1 \
        | grep -E "=====|passed|failed|Error" | head -40 > "$OUT/$tool.log" ) &
  done
  wait
  for tool in memcheck racecheck synccheck; do echo "$tool: $(grep -E 'SUMMARY|passed|failed' "$OUT/$tool.log" | tr '\n' ' ')"; done
fi
for i in $(seq 1 "${RUNS:-3}"); do
  left=$(( 570 - ($(date +%s) - t0) ))
  [ "$left" -lt 90 ] && break
  timeout "$left" python3 benchmarks/gemm_bench.py run .dev/gf > "$OUT/g$i.jsonl" 2> "$OUT/g$i.err"
  echo "run $i rc $? $(wc -l < "$OUT/g$i.jsonl") lines at $(( $(date +%s) - t0 )) s"; tail -2 "$OUT/g$i.err"
done
