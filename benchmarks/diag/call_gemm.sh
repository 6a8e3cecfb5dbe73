#!/usr/bin/env bash
# A device call: the diag experiments staged in .dev (stages, chain, m_sweep, overlap, config_probe: benchmarks/diag/<e>*.py), then
# .ci/gpu-run's steps $STEPS (default: gemm, the GEMM's GPU tests and its benchmark with $BENCH,
# default --sweep as staged). Everything lands in $OUT/results.tgz (the run tool returns few files).
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1
W=/tmp/w; rm -rf $W; mkdir -p $W/o $W/r
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader > $W/r/machine.txt
rm -rf /tmp/pkg; python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/pkg .dev/wheels/nvtma_runtime-*.whl
for e in stages chain m_sweep overlap config_probe; do
  [ -d .dev/$e ] || continue
  py=$(ls benchmarks/diag/$e*.py)
  PYTHONPATH=/tmp/pkg NVTMA_CACHE=0 timeout 150 python3 $py run .dev/$e > $W/r/$e.jsonl 2> $W/r/${e}_stderr.txt
  tail -3 $W/r/${e}_stderr.txt
done
OUT=$W/o NVTMA_STEPS="${STEPS:-gemm}" NVTMA_GEMM_BENCH_FLAGS="${BENCH:---sweep}" \
  timeout $((${LIMIT:-585} - SECONDS)) .ci/gpu-run .dev > $W/r/run.log 2>&1
cp $W/o/* $W/r/ 2>/dev/null
tar czf $OUT/results.tgz -C $W/r .
cat $W/r/machine.txt; grep -hE "passed|failed|error" $W/r/*tests*.log $W/r/sanitize_*.log 2>/dev/null | tail -20
[ -f $W/r/examples.log ] && grep -cE "correct" $W/r/examples.log
[ -f $W/r/gemm_bench.jsonl ] && { grep -c '"correct": true' $W/r/gemm_bench.jsonl; grep -c '"correct": false\|error' $W/r/gemm_bench.jsonl; }
tail -3 $W/r/gemm_bench_stderr.log 2>/dev/null; ls $W/r
