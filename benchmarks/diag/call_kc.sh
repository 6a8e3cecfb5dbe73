#!/bin/bash
# The nineteenth session's device call: the GEMM's GPU tests, compute-sanitizer over the tests of stages of
# several K steps (gemm_spec kc), then `runs` full gemm_bench runs. Staged here (.devpack.tgz: .dev/wheels, the
# runtime wheel; .dev/gpu_art, the GPU tests' kernels; .dev/gf, gemm_bench's); on the GPU:
#   bash benchmarks/diag/call_kc.sh RUNS [SANITIZE=1]
set -u
runs=${1:-2}; sanitize=${2:-1}
tar xzf .devpack.tgz && rm -rf /tmp/pk && pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python:$PWD/benchmarks NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
mkdir -p "$OUT"
timeout 120 python3 -m pytest -q -m gpu test/python/test_gpu_gemm.py -p no:cacheprovider 2>&1 | tail -n 3
if [ "$sanitize" = 1 ]; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in memcheck racecheck synccheck; do
    ( timeout 240 "$cs" --tool $tool --report-api-errors no --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
        -m gpu test/python/test_gpu_gemm.py -k several_k_steps 2>&1 | grep -E "=====|passed|failed|Error" \
        | head -100 > "$OUT/sanitize_$tool.log" ) &
  done
  wait
  for tool in memcheck racecheck synccheck; do echo "== $tool"; grep -E "SUMMARY|passed|failed|Race" "$OUT/sanitize_$tool.log" | tail -4; done
fi
for i in $(seq 1 "$runs"); do
  timeout 200 python3 benchmarks/gemm_bench.py run .dev/gf > "$OUT/g$i.jsonl" 2> "$OUT/g$i.err"; echo "run $i rc $? $(wc -l < "$OUT/g$i.jsonl") lines"
done
