#!/usr/bin/env bash
# A device call: the diag experiments staged in .dev, the GEMM's GPU tests and its full benchmark with the L2 sweep (staged with
# NVTMA_GEMM_BENCH_FLAGS=--sweep), results into $OUT.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1
W=/tmp/w; rm -rf $W; mkdir -p $W/o
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader > $OUT/machine.txt
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/pkg .dev/wheels/nvtma_runtime-*.whl
for e in stages chain; do  # diag experiments, when staged: benchmarks/diag/stages_experiment.py, chain_timeline.py
  [ -d .dev/$e ] || continue
  py=benchmarks/diag/$e*.py
  PYTHONPATH=/tmp/pkg NVTMA_CACHE=0 timeout 120 python3 $py run .dev/$e > $OUT/$e.jsonl 2> $OUT/${e}_stderr.txt
  cat $OUT/$e.jsonl; tail -3 $OUT/${e}_stderr.txt
done
OUT=$W/o NVTMA_STEPS="${STEPS:-gemm}" NVTMA_GEMM_BENCH_FLAGS="--sweep" timeout $((${LIMIT:-585} - SECONDS)) .ci/gpu-run .dev > $W/run.log 2>&1
cp $W/o/gemm_bench.jsonl $W/o/examples.log $W/o/gpu_gemm_tests.log $W/o/gemm_bench_stderr.log $W/run.log $OUT/ 2>/dev/null
cat $OUT/machine.txt $W/o/gpu_gemm_tests.log $W/o/examples.log 2>/dev/null; tail -3 $W/o/gemm_bench_stderr.log
grep -c '"correct": true' $W/o/gemm_bench.jsonl; grep -c '"correct": false\|error' $W/o/gemm_bench.jsonl
