#!/bin/bash
# The forty-sixth session's device call: where the fused-quantization racecheck (race_fused.py) spends its time.
# Session 44's run printed nothing in 382 s on an H100, so each case now prints when it starts and ends. First
# the same cases without the tool (their plain time), then racecheck with only the GEMM instrumented, then
# without the kernel filter (FILTERLESS=1). Staged here: SUITES_ONLY=1 benchmarks/diag/stage_s41.sh. Then:
# run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s50.sh > $OUT/s50.txt 2>&1; cat $OUT/s50.txt")
set -u
here=$(dirname "$0")
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(filter="data")' .devpack.tar.xz && rm -rf /tmp/pk &&
  pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
compute-sanitizer --version | tail -n 1
echo "== plain"
timeout 120 python3 "$here/race_fused.py" "${FUSED_FIRST:-0}" 2>&1 | tail -n 40
filter=$(compute-sanitizer --help 2>&1 | grep -q -- '--kernel-name ' && echo "--kernel-name kne=gemm")
[ -n "${FILTERLESS:-}" ] && filter=""
left=$((${LIMIT:-560} - SECONDS))
echo "== racecheck (${filter:-every kernel}), $left s"
timeout "$left" compute-sanitizer --report-api-errors no --print-limit 20 --tool racecheck $filter \
  python3 "$here/race_fused.py" "${FUSED_FIRST:-0}" > "$OUT/race-fused.log" 2>&1
echo "rc $?"; grep -v '^=========     ' "$OUT/race-fused.log" | head -n 80
