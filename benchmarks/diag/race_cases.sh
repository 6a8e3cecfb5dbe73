#!/bin/bash
# Which fused-quantization GEMMs do not finish under compute-sanitizer (session 46: race_fused.py's case 9,
# x multicast over a 2-CTA cluster, never returned under racecheck; cases 0-8 took 0.0-0.2 s a call). Each run
# is one case in a process of its own under a time limit: "TOOL FILTER QUANTIZE CASE" lines from RUNS.
# Staged as call_s50.sh's; run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/race_cases.sh").
set -u
here=$(dirname "$0")
[ -d /tmp/pk ] || { python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(filter="data")' \
  .devpack.tar.xz && pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null; }
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
while read -r tool filter quantize case; do
  [ -n "$tool" ] || continue
  f=(); [ "$filter" != "-" ] && f=(--kernel-name "$filter")
  start=$SECONDS
  out=$(RACE_QUANTIZE=$quantize timeout "${EACH:-30}" compute-sanitizer --report-api-errors no --print-limit 5 \
        --tool "$tool" ${f[@]+"${f[@]}"} python3 "$here/race_fused.py" "$case" "$((case + 1))" 2>&1)
  rc=$?
  echo "== $tool $filter $quantize case $case: rc $rc in $((SECONDS - start)) s"
  echo "$out" | grep -E '  \[|SUMMARY|rror' | grep -v 'inputs ready' | head -n 6
done <<< "${RUNS}"
