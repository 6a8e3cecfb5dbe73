#!/usr/bin/env bash
# The final check of this session in one device call: every GPU test, the GEMM quick benchmark,
# the examples, the launch benchmark; at most a few files back.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1
W=/tmp/w; rm -rf $W; mkdir -p $W
OUT=$W/o NVTMA_STEPS="tests gemm profile examples" timeout 420 .ci/gpu-run .dev > $W/run.log 2>&1
export PYTHONPATH="$PWD/.dev/pkg:$PWD/test/TensorMap" NVTMA_GPU_ARTIFACTS="$PWD/.dev/gpu_art" NVTMA_CACHE=0
timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu test/python/test_gpu_launch_abi.py -rA > $W/o/abi.log 2>&1
cp $W/o/gemm_bench.jsonl "$OUT/" 2>/dev/null
{ for f in gpu_tests gpu_runtime_tests gpu_gemm_tests gpu_profile_tests abi examples ws_pipeline_profile profile_gemm; do
    echo "== $f"; tail -25 $W/o/$f.log 2>/dev/null; done
  echo "== launch"; cat $W/o/launch_bench.json; echo "== run"; tail -20 $W/run.log; } > "$OUT/summary.txt"
ls "$OUT"
