#!/bin/bash
# The forty-fifth session's device call: every GPU suite (call_s26.sh), then diag/cluster_sync16.py's probes
# under compute-sanitizer synccheck (each kernel and cluster size its own process), then test_gpu.py's
# multicast tests under synccheck, then full GEMM benchmark runs while time is left (if staged).
# Staged here (SUITES_ONLY=1 stage_s41.sh; without it the GEMM runs too). What comes back: summary.txt,
# logs.tgz, sync16.log, gemm-N.jsonl.
set -u
bash benchmarks/diag/call_s26.sh
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_CACHE=0 PYTHONUNBUFFERED=1
cs="compute-sanitizer --report-api-errors no --tool synccheck"
for name in sync_only arrive_wait local_tx multicast; do
  for c in 8 16; do
    timeout 60 $cs python3 benchmarks/diag/cluster_sync16.py run .dev/cs16 $name $c > /tmp/cs.log 2>&1
    rc=$?
    echo "== $name $c rc $rc: $(grep -c 'Missing wait' /tmp/cs.log) 'Missing wait' reports," \
         "$(grep -m1 -o 'ERROR SUMMARY: [0-9]* error' /tmp/cs.log), $(grep -m1 'output' /tmp/cs.log)" | tee -a "$OUT/sync16.log"
    grep -m4 -A6 'Barrier error' /tmp/cs.log >> "$OUT/sync16.log"
  done
done
NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art timeout 120 $cs python3 -m pytest -q -m gpu -p no:cacheprovider \
  test/python/test_gpu.py -k multicast > /tmp/mc.log 2>&1
echo "synccheck test_gpu -k multicast rc $?: $(grep -m1 -o 'ERROR SUMMARY: [0-9]* error' /tmp/mc.log), $(tail -n 1 /tmp/mc.log)"
[ -d .dev/gemm_art ] || exit 0
export PYTHONPATH=/tmp/pk
for i in 1 2 3; do
  left=$((${LIMIT:-590} - SECONDS))
  [ $left -lt 200 ] && break
  timeout $left python3 benchmarks/gemm_bench.py run .dev/gemm_art > "$OUT/gemm-$i.jsonl" 2> /dev/null
  echo "gemm run $i rc $? at ${SECONDS}s: $(grep -c '"correct": true' "$OUT/gemm-$i.jsonl") correct," \
       "$(grep -c '"correct": false\|"error"' "$OUT/gemm-$i.jsonl") wrong/errors"
done
