#!/bin/bash
# The forty-eighth session's GEMM table call: full gemm_bench.py runs over the table's kernels (.dev/gemm_art,
# built at the session's tree; no suites: call_s53b.sh ran them) while time is left, W rotated over 256 MiB,
# cuBLASLt and cuBLAS in the same process. What comes back: gemm-N.jsonl, gemm-errs.tgz.
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s53c.sh > $OUT/s53c.txt 2>&1; cat $OUT/s53c.txt")
set -u
. "$(dirname "$0")/packs.sh"
install_pack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export PYTHONPATH=/tmp/pk NVTMA_CACHE=0 PYTHONUNBUFFERED=1
for i in 1 2 3; do
  left=$((${LIMIT:-585} - SECONDS))
  [ $left -lt 200 ] && break
  timeout $left python3 benchmarks/gemm_bench.py run .dev/gemm_art > "$OUT/gemm-$i.jsonl" 2> "$OUT/gemm-$i.err"
  echo "gemm run $i rc $? at ${SECONDS}s: $(grep -c '"correct": true' "$OUT/gemm-$i.jsonl") correct," \
       "$(grep -c '"correct": false\|"error"' "$OUT/gemm-$i.jsonl") wrong/errors"
done
(cd "$OUT" && ls ./gemm-*.err > /dev/null 2>&1 && tar czf gemm-errs.tgz ./gemm-*.err && rm -f ./gemm-*.err)
