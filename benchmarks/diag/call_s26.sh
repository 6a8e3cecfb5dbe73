#!/bin/bash
# The twenty-first session's test call: every GPU test (test_gpu, the launch ABI, the GEMM's, the runtime's
# with the cache on, profiling) over the artifacts built here. Staged here (.devpack.tgz: .dev/wheels,
# .dev/gpu_art, or .devpack.tar.xz from stage_s41.sh); on the GPU:  bash benchmarks/diag/call_s26.sh. The
# logs come back as one logs.tgz (a call returns only a few files).
set -u
pack=$(ls .devpack.tar.xz .devpack.tgz 2>/dev/null | head -n 1)  # (xz from stage_s41.sh, gzip before)
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(filter="data")' "$pack" && rm -rf /tmp/pk &&
  pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for f in test_gpu.py test_gpu_launch_abi.py test_gpu_gemm.py test_gpu_profile.py; do
  timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider test/python/$f -rfE > "$OUT/${f%.py}.log" 2>&1
  echo "$f rc $?: $(tail -n 1 "$OUT/${f%.py}.log")"
done
NVTMA_CACHE=1 NVTMA_CACHE_DIR=/tmp/nvtma-cache timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider \
  test/python/test_gpu_runtime.py -rfE > "$OUT/test_gpu_runtime.log" 2>&1
echo "test_gpu_runtime.py rc $?: $(tail -n 1 "$OUT/test_gpu_runtime.log")"
grep -h -E '^(FAILED|ERROR)' "$OUT"/*.log | head -n 30
(cd "$OUT" && tar czf logs.tgz ./*.log && rm -f ./*.log)
