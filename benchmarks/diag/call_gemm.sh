#!/usr/bin/env bash
# A device call: the ring-depth experiment (if staged), the GEMM's GPU tests and its full benchmark with the L2 sweep (staged with
# NVTMA_GEMM_BENCH_FLAGS=--sweep), results into $OUT.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1
W=/tmp/w; rm -rf $W; mkdir -p $W/o
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader > $OUT/machine.txt
if [ -d .dev/stages ]; then  # the ring-depth experiment, when staged
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/pkg .dev/wheels/nvtma_runtime-*.whl
  PYTHONPATH=/tmp/pkg NVTMA_CACHE=0 timeout 120 python3 benchmarks/diag/stages_experiment.py run .dev/stages \
    > $OUT/stages.jsonl 2> $OUT/stages_stderr.txt
  cat $OUT/stages.jsonl; tail -3 $OUT/stages_stderr.txt
fi
OUT=$W/o NVTMA_STEPS=gemm NVTMA_GEMM_BENCH_FLAGS="--sweep" timeout $((${LIMIT:-585} - SECONDS)) .ci/gpu-run .dev > $W/run.log 2>&1
cp $W/o/gemm_bench.jsonl $W/o/gpu_gemm_tests.log $W/o/gemm_bench_stderr.log $W/run.log $OUT/ 2>/dev/null
cat $OUT/machine.txt $W/o/gpu_gemm_tests.log; tail -3 $W/o/gemm_bench_stderr.log
grep -c '"correct": true' $W/o/gemm_bench.jsonl; grep -c '"correct": false\|error' $W/o/gemm_bench.jsonl
