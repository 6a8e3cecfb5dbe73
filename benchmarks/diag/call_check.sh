#!/usr/bin/env bash
# The session's checking call: compute-sanitizer over the GPU tests (GEMM with PDL included), the profiling
# step with its overhead lines kept, and ncu of our GEMM beside cuBLASLt's.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1
W=/tmp/w; rm -rf $W; mkdir -p $W/o
OUT=$W/o NVTMA_STEPS="profile sanitize" timeout 470 .ci/gpu-run .dev > $W/run.log 2>&1
cp $W/o/gpu_profile_tests.log $W/o/ws_pipeline_profile.log $W/o/profile_gemm.log $OUT/ 2>/dev/null
for t in memcheck racecheck synccheck; do echo "== $t"; grep -E "SUMMARY|passed|failed|Race reported|ERROR" $W/o/sanitize_$t.log | tail -6; done > $OUT/sanitize.txt
export PYTHONPATH="$PWD/.dev/pkg:$PWD/test/TensorMap" NVTMA_CACHE=0
benchmarks/diag/ncu_gemm.sh ${NCU:-} > $OUT/ncu.txt 2>&1
cat $OUT/sanitize.txt; grep -E "overhead|passed|failed" $OUT/gpu_profile_tests.log | tail -6; tail -3 $OUT/ws_pipeline_profile.log $OUT/profile_gemm.log
