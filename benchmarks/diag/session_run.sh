#!/usr/bin/env bash
# One device call: GEMM tests + benchmark, DSL-vs-IR, then compute-sanitizer over the GPU tests.
# Only a few files land in $OUT (the device returns at most 8).
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1 NVTMA_GEMM_BENCH_FLAGS="--sweep"
W=/tmp/w; rm -rf $W; mkdir -p $W
OUT=$W/g NVTMA_STEPS="gemm dslir" timeout 300 .ci/gpu-run .dev > $W/g.log 2>&1
cp $W/g/gemm_bench.jsonl $W/g/dsl_vs_ir.jsonl "$OUT/" 2>/dev/null
export PYTHONPATH="$PWD/.dev/pkg:$PWD/test/TensorMap" NVTMA_GPU_ARTIFACTS="$PWD/.dev/gpu_art" NVTMA_CACHE=0
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  ( timeout 280 "$cs" --tool $tool --report-api-errors no --print-limit 20 python3 -m pytest -q -p no:cacheprovider \
      -m gpu test/python/test_gpu.py test/python/test_gpu_gemm.py 2>&1 | grep -E "=====|passed|failed|rror|Race|Hazard" \
      | head -80 > $W/san_$tool.log ) &
done
wait
{ for tool in memcheck racecheck synccheck; do echo "== $tool"; cat $W/san_$tool.log; done; echo "== run"; tail -30 $W/g.log; } > "$OUT/sanitize_and_log.txt"
ls "$OUT"
