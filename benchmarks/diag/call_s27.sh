#!/bin/bash
# The twenty-second session's call: the GEMM's GPU tests (x as the wgmmas' A among them) over the artifacts
# built here, then stream_floor.py's `xa` probe set (built here into .dev/xa). Staged here (.devpack.tgz:
# .dev/wheels, .dev/gpu_art, .dev/xa); on the GPU:  [RUNS=N] [TESTS=0] bash benchmarks/diag/call_s27.sh
set -u
tar xzf .devpack.tgz && rm -rf /tmp/pk && pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python:$PWD/benchmarks NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
if [ "${TESTS:-1}" = 1 ]; then
  timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider test/python/test_gpu_gemm.py -rfE > "$OUT/test_gpu_gemm.log" 2>&1
  echo "test_gpu_gemm.py rc $?: $(tail -n 1 "$OUT/test_gpu_gemm.log")"
fi
for i in $(seq 1 "${RUNS:-1}"); do
  timeout 280 python3 benchmarks/diag/stream_floor.py run-xa .dev/xa > "$OUT/xa$i.jsonl" 2> "$OUT/xa$i.err"
  echo "xa run $i rc $? $(wc -l < "$OUT/xa$i.jsonl")"; tail -2 "$OUT/xa$i.err"
done
