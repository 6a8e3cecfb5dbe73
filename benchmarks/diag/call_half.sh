#!/usr/bin/env bash
# Thirteenth session: the GEMM's GPU tests (the half boxes included) beside compute-sanitizer over the half-box tests,
# then benchmarks/diag/m_sweep.py over .dev/msweep_art. Staged here: .dev/wheels, .dev/gpu_art, .dev/msweep_art.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1
rm -rf /tmp/pk; pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  ( timeout 230 $cs --tool $tool --report-api-errors no python3 -m pytest -q -p no:cacheprovider -m gpu \
      test/python/test_gpu_gemm.py -k half_boxes 2>&1 | grep -E "=====|passed|failed|Error" | head -60 > $OUT/sanitize_$tool.log ) &
done
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu test/python/test_gpu_gemm.py -rA 2>&1 \
  | grep -E "PASSED|FAILED|ERROR|passed|failed|error|Error|assert" | tail -90 > $OUT/gpu_gemm_tests.log
tail -3 $OUT/gpu_gemm_tests.log
wait  # the sanitizers off the GPU before the timings
timeout 320 python3 benchmarks/diag/m_sweep.py run .dev/msweep_art > $OUT/m_sweep.jsonl 2> $OUT/m_sweep.err
tail -3 $OUT/m_sweep.err
for t in memcheck racecheck synccheck; do echo "== $t"; grep -E "SUMMARY|passed|failed|Race" $OUT/sanitize_$t.log | tail -4; done
# then, where asked (STEPS), .ci/gpu-run's steps over the full staging (.ci/stage-gpu), logs under $OUT/run
if [ -n "${STEPS:-}" ]; then
  mkdir -p $OUT/run
  OUT=$OUT/run NVTMA_STEPS="$STEPS" timeout ${RUN_LIMIT:-380} .ci/gpu-run .dev > $OUT/run/run.log 2>&1
  grep -E "passed|failed|correct|WRONG|rror" $OUT/run/run.log | tail -30
fi
