#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck; device errors only: cuda.bindings' failed symbol lookups
# are API errors, not reported) over the GEMV tests, the PDL GEMV's stream/graph test among them, and the
# GEMM's stream/graph and typed-error tests. Staged like call_s26.sh; on the GPU:  bash benchmarks/diag/sanitize_s26.sh
set -u
tar xzf .devpack.tgz && rm -rf /tmp/pk && pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
mkdir -p "$OUT"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  ( timeout 400 "$cs" --report-api-errors no --print-limit 20 --tool $tool python3 -m pytest -q -p no:cacheprovider \
      -m gpu test/python/test_gpu.py test/python/test_gpu_gemm.py -k "gemv or stream_and_graphs or typed_errors" 2>&1 \
      | grep -E "=====|passed|failed|Error" | head -40 > "$OUT/$tool.log" ) &
done
wait
for tool in memcheck racecheck synccheck; do echo "$tool: $(grep -E 'ERROR SUMMARY|passed|failed' "$OUT/$tool.log" | tr '\n' ' ')"; done
