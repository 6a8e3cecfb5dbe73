#!/bin/bash
# The twenty-second session's call: the GEMM's GPU tests (x as the wgmmas' A among them) over the artifacts
# built here, then full gemm_bench runs (every candidate, x as A too) within the call's time. Staged here
# (.devpack.tgz: .dev/wheels, .dev/gpu_art, .dev/gf); on the GPU:  [TESTS=0] bash benchmarks/diag/call_s27.sh
set -u
t0=$(date +%s)
tar xzf .devpack.tgz && rm -rf /tmp/pk && pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python:$PWD/benchmarks NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
if [ "${TESTS:-1}" = 1 ]; then
  timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider test/python/test_gpu_gemm.py -rfE > "$OUT/test_gpu_gemm.log" 2>&1
  echo "test_gpu_gemm.py rc $?: $(tail -n 1 "$OUT/test_gpu_gemm.log") at $(( $(date +%s) - t0 )) s"
fi
for i in 1 2 3; do
  left=$(( 575 - ($(date +%s) - t0) ))
  [ "$left" -lt 60 ] && break
  timeout "$left" python3 benchmarks/gemm_bench.py run .dev/gf > "$OUT/g$i.jsonl" 2> "$OUT/g$i.err"
  echo "run $i rc $? $(wc -l < "$OUT/g$i.jsonl") lines at $(( $(date +%s) - t0 )) s"; tail -2 "$OUT/g$i.err"
done
