#!/bin/bash
# The forty-first session's device call: every GPU suite (call_s26.sh), then full GEMM benchmark runs
# (gemm_bench.py run over .dev/gemm_art) while time is left.
# Staged here (stage_s41.sh): .devpack.tar.xz of .dev/wheels, .dev/gpu_art, .dev/bench, .dev/gemm_art.
# What comes back: summary.txt, logs.tgz (the suites' logs), gemm-N.jsonl, gemm-errs.tgz.
set -u
[ -n "${SKIP_SUITES:-}" ] || bash benchmarks/diag/call_s26.sh  # (SKIP_SUITES=1: the pack installed already)
export PYTHONPATH=/tmp/pk NVTMA_CACHE=0 PYTHONUNBUFFERED=1
for i in 1 2 3; do
  left=$((${LIMIT:-590} - SECONDS))
  [ $left -lt 200 ] && break
  timeout $left python3 benchmarks/gemm_bench.py run .dev/gemm_art > "$OUT/gemm-$i.jsonl" 2> "$OUT/gemm-$i.err"
  echo "gemm run $i rc $? at ${SECONDS}s: $(grep -c '"correct": true' "$OUT/gemm-$i.jsonl") correct," \
       "$(grep -c '"correct": false\|"error"' "$OUT/gemm-$i.jsonl") wrong/errors"
done
(cd "$OUT" && ls ./gemm-*.err > /dev/null 2>&1 && tar czf gemm-errs.tgz ./gemm-*.err && rm -f ./gemm-*.err)
