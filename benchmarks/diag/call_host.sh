#!/usr/bin/env bash
# Fourteenth session: the GPU tests the prepared Gemm calls and the launch's nn.Parameter path touch
# (.ci/gpu-run's "tests" and "examples", test_gpu_gemm.py, memcheck over the new Gemm tests), then
# benchmarks/diag/gemm_host.py. Staged here: .ci/stage-gpu .dev, gemm_host.py build .dev/host_art.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1
mkdir -p $OUT/run
OUT=$OUT/run NVTMA_STEPS="${STEPS:-tests examples}" timeout 330 .ci/gpu-run .dev > $OUT/run/run.log 2>&1
grep -E "passed|failed|correct|WRONG|rror" $OUT/run/run.log | tail -30
export PYTHONPATH=$PWD/.dev/pkg:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu test/python/test_gpu_gemm.py -rA 2>&1 \
  | grep -E "PASSED|FAILED|ERROR|passed|failed|error|Error|assert" | tail -100 > $OUT/gpu_gemm_tests.log
tail -2 $OUT/gpu_gemm_tests.log
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 200 $cs --tool memcheck --report-api-errors no python3 -m pytest -q -p no:cacheprovider -m gpu \
  test/python/test_gpu_gemm.py -k "new_tensors or f32 or stream or typed or empty" 2>&1 | grep -E "SUMMARY|passed|failed" | tail -4
timeout 240 python3 benchmarks/diag/gemm_host.py run .dev/host_art > $OUT/gemm_host.jsonl 2> $OUT/gemm_host.err
cat $OUT/gemm_host.jsonl; tail -45 $OUT/gemm_host.err
