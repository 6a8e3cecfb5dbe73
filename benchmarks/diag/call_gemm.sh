#!/usr/bin/env bash
# A device call: the GEMM's GPU tests and quick benchmark, the profiling step, and ncu of one GEMM.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1
W=/tmp/w; rm -rf $W; mkdir -p $W/o
OUT=$W/o NVTMA_STEPS="${STEPS:-gemm profile}" timeout ${T:-480} .ci/gpu-run .dev > $W/run.log 2>&1
export PYTHONPATH="$PWD/.dev/pkg:$PWD/test/TensorMap" NVTMA_CACHE=0
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for p in ${NCU:-}; do
  echo "== ncu $p"
  timeout 100 $ncu --profile-from-start off --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section LaunchStats \
    python3 benchmarks/diag/ncu_gemm.py .dev/gemm_art ${p//_/ } 2>&1 | grep -v "^==PROF==" | tail -200
done > $W/o/ncu.txt 2>&1
{ cat $W/o/machine.txt; for f in gpu_gemm_tests gpu_profile_tests ws_pipeline_profile profile_gemm gpu_tests gpu_runtime_tests; do
    [ -f $W/o/$f.log ] && { echo "== $f"; tail -30 $W/o/$f.log; }; done
  echo "== launch"; cat $W/o/launch_bench.json 2>/dev/null; echo "== run"; tail -30 $W/run.log; } > $OUT/summary.txt 2>&1
cp $W/o/gemm_bench.jsonl $W/o/ncu.txt $OUT/ 2>/dev/null
tail -c 6000 $OUT/summary.txt
