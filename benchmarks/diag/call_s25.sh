#!/bin/bash
# The twentieth session's last device call: the GEMM's GPU tests, the eager host-time breakdown
# (diag/gemm_host.py, with the kc operand views), then `runs` full gemm_bench runs. Staged here (.devpack.tgz:
# .dev/wheels, .dev/gpu_art, .dev/host, .dev/gf); on the GPU:  bash benchmarks/diag/call_s25.sh RUNS
set -u
runs=${1:-2}
tar xzf .devpack.tgz && rm -rf /tmp/pk && pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python:$PWD/benchmarks NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 150 python3 -m pytest -q -m gpu test/python/test_gpu_gemm.py -p no:cacheprovider 2>&1 | tail -n 3
timeout 120 python3 benchmarks/diag/gemm_host.py run .dev/host > "$OUT/host.jsonl" 2> "$OUT/host.err"; echo "host rc $?"
for i in $(seq 1 "$runs"); do
  timeout 200 python3 benchmarks/gemm_bench.py run .dev/gf > "$OUT/g$i.jsonl" 2> "$OUT/g$i.err"; echo "run $i rc $? $(wc -l < "$OUT/g$i.jsonl") lines"
done
