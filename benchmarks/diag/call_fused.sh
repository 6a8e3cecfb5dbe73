#!/usr/bin/env bash
# A device call (eighth session): the GEMM's fused bf16-x quantization, first on the GPU in its final form.
# Its GPU tests alone (120 s: a hang costs that), the other GEMM tests, then -- only if the fused tests
# passed -- diag/config_probe (e4m3 x / fused / quantize_x then the GEMM) and, with SAN=1, the three
# compute-sanitizer tools over the fused tests. Everything lands in $OUT/results.tgz.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1 NVTMA_CACHE=0 PYTHONDONTWRITEBYTECODE=1
W=/tmp/w; rm -rf $W; mkdir -p $W/r
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader > $W/r/machine.txt
rm -rf /tmp/pkg; python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/pkg .dev/wheels/nvtma_runtime-*.whl
export PYTHONPATH=/tmp/pkg:$PWD/test/TensorMap NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art
timeout ${FT:-120} python3 -m pytest -q -p no:cacheprovider -m gpu test/python/test_gpu_gemm.py -k inside -rA > $W/r/fused_tests.log 2>&1
frc=$?; echo "fused tests exit $frc"; grep -E "FAILED|passed|failed" $W/r/fused_tests.log | tail -8
[ "${OTHER:-1}" = 1 ] && { timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu test/python/test_gpu_gemm.py -k "not inside" -rA > $W/r/gemm_tests.log 2>&1; echo "gemm tests exit $?"; tail -1 $W/r/gemm_tests.log; }
if [ $frc = 0 ] && [ -d .dev/config_probe ] && [ "${PROBE:-1}" = 1 ]; then
  timeout ${PT:-200} python3 benchmarks/diag/config_probe.py run .dev/config_probe > $W/r/config_probe.jsonl 2> $W/r/config_probe_stderr.txt
  echo "probe exit $?"; tail -2 $W/r/config_probe_stderr.txt; wc -l < $W/r/config_probe.jsonl
fi
if [ $frc = 0 ] && [ "${SAN:-0}" = 1 ]; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in memcheck racecheck synccheck; do
    ( timeout ${ST:-300} "$cs" --tool $tool --report-api-errors no --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
        -m gpu -k inside test/python/test_gpu_gemm.py -x 2>&1 | grep -E "=====|passed|failed|Error" | head -150 \
        > $W/r/sanitize_fused_$tool.log ) &
  done
  wait
  for tool in memcheck racecheck synccheck; do echo "== $tool"; grep -E "SUMMARY|passed|failed|Race reported" $W/r/sanitize_fused_$tool.log | tail -6; done
fi
tar czf $OUT/results.tgz -C $W/r .
