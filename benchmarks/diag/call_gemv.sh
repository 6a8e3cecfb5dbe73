#!/bin/bash
# The twenty-first session's GEMV probe: gemv_probe.py's kernels built here into .dev/gemv, staged with the
# runtime wheel in .devpack.tgz, run twice. On the GPU:  bash benchmarks/diag/call_gemv.sh
set -u
tar xzf .devpack.tgz && rm -rf /tmp/pk && pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/benchmarks NVTMA_CACHE=0
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
for i in 1 2; do
timeout 250 python3 benchmarks/diag/gemv_probe.py run .dev/gemv > "$OUT/gemv$i.jsonl" 2> "$OUT/gemv$i.err"; echo "rc $? $(wc -l < $OUT/gemv$i.jsonl)"; tail -3 $OUT/gemv$i.err
done
