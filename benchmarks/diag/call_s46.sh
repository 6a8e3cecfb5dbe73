#!/bin/bash
# The forty-sixth session's racecheck call: compute-sanitizer racecheck over the GPU tests session 40's run did not
# reach (test_gpu_gemm.py's tests after its 125th, test_gpu.py, the runtime, profiling and launch-ABI tests), one
# sanitizer process at a time (several on one GPU lost the machine in session 45), each group under its own time
# limit so that a slow group cannot starve the next. RACE_GROUPS picks and orders the groups (default: all);
# FUSED picks which of the fused-quantization tests run (each takes about a minute under racecheck).
# Staged here: SUITES_ONLY=1 benchmarks/diag/stage_s41.sh. What comes back: race-<group>.log and summary lines.
set -u
pack=$(ls .devpack.tar.xz 2>/dev/null | head -n 1)
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(filter="data")' "$pack" && rm -rf /tmp/pk &&
  pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cs="compute-sanitizer --report-api-errors no --print-limit 20 --tool racecheck"
collect() { python3 -m pytest --collect-only -q -m gpu -p no:cacheprovider "$@" 2>/dev/null | grep '::'; }
collect test/python/test_gpu_gemm.py > /tmp/gemm.ids
tail -n +126 /tmp/gemm.ids | grep -v -e quantizes_bf16 -e autotune -e torch_compile -e takes_more_than_256_rows > /tmp/gemm-rest.ids
grep quantizes_bf16 /tmp/gemm.ids | tail -n +10 > /tmp/fused-rest.ids
: "${FUSED:=M200-N384-K1040-block M128-N448-K1040-row M16-N4480-K512-tensor M13-N384-K128-row M3-N296-K2048-tensor}"
for f in $FUSED; do grep -F "[$f]" /tmp/fused-rest.ids; done > /tmp/fused.ids
grep takes_more_than_256_rows /tmp/gemm.ids > /tmp/rows.ids
collect test/python/test_gpu.py | grep -v 'multicast_cluster\[16\]' > /tmp/test_gpu.ids
collect test/python/test_gpu_runtime.py test/python/test_gpu_profile.py test/python/test_gpu_launch_abi.py |
  grep -v -e overhead -e torch_compile -e autotune > /tmp/rest.ids
race() { # group, time limit
  local ids=/tmp/$1.ids start=$SECONDS
  timeout "$2" $cs python3 -m pytest -q -p no:cacheprovider -m gpu $(cat "$ids") > "$OUT/race-$1.log" 2>&1
  local rc=$?
  local dots=$(grep -E '^[.FEsx]+( |$)' "$OUT/race-$1.log" | tr -cd '.' | wc -c)
  echo "== $1: $(wc -l < "$ids") tests, $dots passed, rc $rc in $((SECONDS - start)) s: $(grep -E -m1 '(passed|failed)' "$OUT/race-$1.log" | tail -c 120)" \
       "| $(grep -m1 -o 'RACECHECK SUMMARY.*' "$OUT/race-$1.log")"
}
each() { # group, time limit: each test its own process (which one, if one dies)
  local start=$SECONDS t
  while read -r t; do
    [ $((SECONDS - start)) -ge "$2" ] && { echo "== $1: out of time before $t"; break; }
    timeout 120 $cs python3 -m pytest -q -p no:cacheprovider -m gpu "$t" > /tmp/one.log 2>&1
    echo "== $t rc $?: $(grep -E -m1 '(passed|failed|error)' /tmp/one.log | tail -c 100) |" \
         "$(grep -m1 -o 'RACECHECK SUMMARY.*' /tmp/one.log) $(grep -m1 -o 'Error: process.*' /tmp/one.log)"
    cat /tmp/one.log >> "$OUT/race-$1.log"
  done < "/tmp/$1.ids"
}
for g in ${RACE_GROUPS:-gemm-rest test_gpu rest fused}; do
  case $g in
    gemm-rest) race $g 200 ;;
    test_gpu) race $g 170 ;;
    rest) each $g 150 ;;
    rows) race $g 120 ;;
    fused) race $g $((${LIMIT:-560} - SECONDS)) ;;
  esac
done
