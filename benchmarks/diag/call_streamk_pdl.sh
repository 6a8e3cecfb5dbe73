#!/usr/bin/env bash
# A device call: the GEMM's GPU tests, the PDL experiment, then the full benchmark with the L2 sweep.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1
W=/tmp/w; rm -rf $W; mkdir -p $W/o
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/pkg .dev/wheels/nvtma_runtime-*.whl
PYTHONPATH=/tmp/pkg NVTMA_CACHE=0 timeout 150 python3 benchmarks/diag/pdl_experiment.py run .dev/pdl > $OUT/pdl.jsonl 2> $OUT/pdl_stderr.txt
cat $OUT/pdl.jsonl; tail -5 $OUT/pdl_stderr.txt
OUT=$W/o NVTMA_STEPS="gemm" NVTMA_GEMM_BENCH_FLAGS="--sweep" timeout 420 .ci/gpu-run .dev > $W/run.log 2>&1
cp $W/o/gemm_bench.jsonl $OUT/ 2>/dev/null
{ tail -15 $W/o/gpu_gemm_tests.log; tail -5 $W/o/gemm_bench_stderr.log; tail -5 $W/run.log; } > $OUT/summary.txt
cat $OUT/summary.txt; wc -l $OUT/gemm_bench.jsonl
