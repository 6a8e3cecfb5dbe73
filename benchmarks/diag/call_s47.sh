#!/bin/bash
# The forty-third session's device call: the GPU suites at the session's tree (call_s26.sh), racecheck over the
# groups call_s46.sh names in RACE_GROUPS (default "rest rows": the runtime/profile/ABI tests each in its own
# process, the new M > 256 tests), then racecheck over the fused-quantization GEMMs one fused call a case
# (race_fused.py, cases FUSED_FIRST.., only the GEMM instrumented) until LIMIT seconds from the start.
# With .dev/rows_art carried, benchmarks/rows_bench.py runs after the suites; MEMCHECK=1 runs memcheck over the
# M > 256 and profile tests before the fused racecheck; SKIP_SUITES=1 leaves the suites out; ROWS_LIMIT: rows_bench's
# seconds (240). Staged here:
# SUITES_ONLY=1 benchmarks/diag/stage_s41.sh (and rows_bench.py build .dev/rows_art). Then:
# run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s47.sh > $OUT/s47.txt 2>&1; cat $OUT/s47.txt")
set -u
here=$(dirname "$0")
[ -n "${SKIP_SUITES:-}" ] || bash "$here/call_s26.sh"
# benchmarks/rows_bench.py build .dev/rows_art here, carried beside the pack as it is or as .rows_art.tar.xz
# (tar cf - .dev/rows_art | xz -T2 > .rows_art.tar.xz: 107 kernels are 55 MB, near a call's 64 MiB)
[ -f .rows_art.tar.xz ] && python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(filter="data")' \
  .rows_art.tar.xz
if [ -d .dev/rows_art ]; then
  PYTHONPATH=/tmp/pk:$PWD/benchmarks NVTMA_CACHE=0 timeout "${ROWS_LIMIT:-240}" python3 benchmarks/rows_bench.py run \
    .dev/rows_art > "$OUT/rows_bench.jsonl" 2> "$OUT/rows_bench.err"
  echo "rows_bench rc $?: $(wc -l < "$OUT/rows_bench.jsonl") lines"
fi
[ -z "${RACE_GROUPS-rest rows}" ] || RACE_GROUPS="${RACE_GROUPS-rest rows}" bash "$here/call_s46.sh"
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
if [ -n "${MEMCHECK:-}" ]; then  # memcheck over the tests of the session's new or changed kernels
  timeout 120 compute-sanitizer --report-api-errors no --print-limit 20 --tool memcheck python3 -m pytest -q \
    -p no:cacheprovider -m gpu test/python/test_gpu_gemm.py -k takes_more_than_256 test/python/test_gpu_profile.py \
    > "$OUT/memcheck.log" 2>&1
  echo "== memcheck rc $?: $(grep -E -m1 '(passed|failed)' "$OUT/memcheck.log")" \
       "| $(grep -m1 'ERROR SUMMARY' "$OUT/memcheck.log")"
fi
filter=$(compute-sanitizer --help 2>&1 | grep -q -- '--kernel-name ' && echo "--kernel-name kne=gemm")
left=$((${LIMIT:-560} - SECONDS))
[ "$left" -gt 30 ] || { echo "== no time left for the fused racecheck"; exit 0; }
echo "== fused racecheck (${filter:-every kernel}), $left s"
timeout "$left" compute-sanitizer --report-api-errors no --print-limit 20 --tool racecheck $filter \
  python3 "$here/race_fused.py" "${FUSED_FIRST:-0}" > "$OUT/race-fused.log" 2>&1
echo "rc $?"; grep -E '^\[|RACECHECK SUMMARY|Error|WRONG' "$OUT/race-fused.log" | head -n 60
