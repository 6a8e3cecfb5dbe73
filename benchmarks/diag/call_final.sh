#!/usr/bin/env bash
# The session's measuring call: GPU tests (runtime, launch cost), the GEMM (tests, full benchmark with the
# L2 sweep), profiling (tests with the overhead, traced examples), the examples, and ncu of two GEMMs.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1
W=/tmp/w; rm -rf $W; mkdir -p $W/o
OUT=$W/o NVTMA_STEPS="${STEPS:-tests gemm profile examples}" NVTMA_GEMM_BENCH_FLAGS="--sweep" timeout 520 .ci/gpu-run .dev \
  > $W/run.log 2>&1
export PYTHONPATH="$PWD/.dev/pkg:$PWD/test/TensorMap" NVTMA_CACHE=0
benchmarks/diag/ncu_gemm.sh ${NCU:-} > $W/o/ncu.txt 2>&1
{ cat $W/o/machine.txt; for f in gpu_tests gpu_runtime_tests gpu_gemm_tests gpu_profile_tests ws_pipeline_profile \
    profile_gemm examples; do [ -f $W/o/$f.log ] && { echo "== $f"; tail -40 $W/o/$f.log; }; done
  echo "== launch"; cat $W/o/launch_bench.json 2>/dev/null; echo "== run"; tail -30 $W/run.log; } > $OUT/summary.txt 2>&1
cp $W/o/gemm_bench.jsonl $W/o/ncu.txt $W/o/launch_bench.json $OUT/ 2>/dev/null
grep -E "passed|failed|launch|overhead|correct|WRONG|error" $OUT/summary.txt | tail -40
