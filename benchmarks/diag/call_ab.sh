#!/usr/bin/env bash
# A device call (tenth session; it replaces the ninth's call_epilogue.sh): the GEMM's GPU tests and full
# benchmark at this tree's kernels (STEPS adds .ci/gpu-run's others), then, where it is staged, the same
# benchmark over .dev/gemm_art_old (the kernels of an earlier commit, staged by
# `PYTHONPATH=<that commit's package> gemm_bench.py build .dev/gemm_art_old`, with that commit's gemm.py as
# .dev/old_gemm.py where its host side differs: an A/B in one run), the
# traced GEMMs staged as .dev/ex/prof_*/ (examples/profile_gemm.py arguments in args), compute-sanitizer's
# three tools over the GEMM's GPU tests, and the fp8_gemm examples (QUICK=1: the tests and the two benchmark
# runs only; BF: gemm_bench.py's flags for both, e.g. --quick). Results land in $OUT.
set -u
tar xzf .devpack.tgz
W=/tmp/w; rm -rf $W; mkdir -p $W/o
OUT=$W/o NVTMA_STEPS="${STEPS:-gemm}" NVTMA_GEMM_BENCH_FLAGS="${BF:- }" timeout ${GT:-200} .ci/gpu-run .dev > $W/run.log 2>&1
cp $W/o/*.jsonl $W/o/*.log $W/run.log "$OUT/" 2>/dev/null
export PYTHONPATH="$PWD/.dev/pkg:$PWD/test/TensorMap" NVTMA_GPU_ARTIFACTS="$PWD/.dev/gpu_art" NVTMA_CACHE=0
# the earlier commit's gemm.py (.dev/old_gemm.py, where its host side differs too) runs its own kernels
old=$PWD/.dev/pkg
if [ -f .dev/old_gemm.py ]; then
  old=/tmp/oldpkg; rm -rf $old; cp -r .dev/pkg $old; cp .dev/old_gemm.py $old/nvtma/kernels/gemm.py
fi
[ -d .dev/gemm_art_old ] && PYTHONPATH="$old:$PWD/test/TensorMap" timeout ${OT:-200} python3 \
  benchmarks/gemm_bench.py run .dev/gemm_art_old ${BF:-} > "$OUT/gemm_bench_old.jsonl" 2> "$OUT/gemm_bench_old_stderr.log"
[ -n "${QUICK:-}" ] && { tail -1 "$OUT/gpu_gemm_tests.log"; grep -c '"correct": true' "$OUT"/gemm_bench*.jsonl; exit 0; }
for d in .dev/ex/prof_*/; do
  [ -f "$d/args" ] && timeout 60 python3 examples/profile_gemm.py $(cat "$d/args") --run --from "$d" 2>&1 | tail -14
done > "$OUT/profile_gemm_configs.log"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
  ( timeout ${ST:-120} "$cs" --tool $tool --report-api-errors no --print-limit 20 python3 -m pytest -q \
      -p no:cacheprovider -m gpu test/python/test_gpu_gemm.py -x 2>&1 | grep -E "=====|passed|failed|Error" \
      | head -60 > "$OUT/sanitize_$tool.txt" ) &
done
wait
for f in "tensor --m 70 --n 4096 --k 7168" "block --m 8 --n 7168 --k 2048" \
    "row --m 128 --n 2112 --k 7168 --config 128,64,1,0,2" "bf16 --m 5 --n 7168 --k 2048"; do
  echo "== fp8_gemm --scale $f"; timeout 60 python3 examples/fp8_gemm.py --scale $f --run --bench --from .dev/ex/fp8_gemm 2>&1 | tail -2
done > "$OUT/examples.log"
tail -1 "$OUT/gpu_gemm_tests.log"; grep -c '"correct": true' "$OUT/gemm_bench.jsonl" "$OUT/gemm_bench_old.jsonl"
grep -hE "SUMMARY|passed|failed" "$OUT"/sanitize_*.txt; grep -c correct "$OUT/examples.log"
grep -E "epilogue|plain" "$OUT/profile_gemm_configs.log"
