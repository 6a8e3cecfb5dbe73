#!/bin/bash
# The twenty-second session's last call: every GPU test suite (test_gpu, the launch ABI, the GEMM's, the
# runtime's with the cache on, profiling), compute-sanitizer (memcheck, racecheck, synccheck; device errors
# only) over the GEMM tests of x as the wgmmas' A and the stream/graph ones, then full gemm_bench runs within
# the call's time. Staged here (.devpack.tgz: .dev/wheels, .dev/gpu_art, .dev/gf); on the GPU:
#   bash benchmarks/diag/call_s27_final.sh
set -u
t0=$(date +%s)
tar xzf .devpack.tgz && rm -rf /tmp/pk && pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python:$PWD/benchmarks NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for f in test_gpu.py test_gpu_launch_abi.py test_gpu_gemm.py test_gpu_profile.py; do
  timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider test/python/$f -rfE > "$OUT/${f%.py}.log" 2>&1
  echo "$f rc $?: $(tail -n 1 "$OUT/${f%.py}.log")"
done
NVTMA_CACHE=1 NVTMA_CACHE_DIR=/tmp/nvtma-cache timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider \
  test/python/test_gpu_runtime.py -rfE > "$OUT/test_gpu_runtime.log" 2>&1
echo "test_gpu_runtime.py rc $?: $(tail -n 1 "$OUT/test_gpu_runtime.log") at $(( $(date +%s) - t0 )) s"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  ( timeout 200 "$cs" --report-api-errors no --print-limit 20 --tool $tool python3 -m pytest -q -p no:cacheprovider \
      -m gpu test/python/test_gpu_gemm.py -k "x_as_the_wgmmas_a or stream_and_graphs" 2>&1 \
      | grep -E "=====|passed|failed|Error" | head -40 > "$OUT/$tool.log" ) &
done
wait
for tool in memcheck racecheck synccheck; do echo "$tool: $(grep -E 'ERROR SUMMARY|passed|failed' "$OUT/$tool.log" | tr '\n' ' ')"; done
echo "at $(( $(date +%s) - t0 )) s"
for i in 1 2 3; do
  left=$(( 570 - ($(date +%s) - t0) ))
  [ "$left" -lt 90 ] && break
  timeout "$left" python3 benchmarks/gemm_bench.py run .dev/gf > "$OUT/g$i.jsonl" 2> "$OUT/g$i.err"
  echo "run $i rc $? $(wc -l < "$OUT/g$i.jsonl") lines at $(( $(date +%s) - t0 )) s"; tail -2 "$OUT/g$i.err"
done
