#!/bin/bash
# The twentieth session's probe calls: a stream_floor.py probe set (parts; pre at 656772b) built here into
# .dev/SET, staged with the runtime wheel in .devpack.tgz, run twice; NCU="N_K_M_MODE ..." adds ncu of those
# GEMMs from .dev/parts. On the GPU:  [NCU=...] bash benchmarks/diag/call_parts.sh [SET]
set -u
P=${1:-parts}
tar xzf .devpack.tgz && rm -rf /tmp/pk && pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
export PYTHONPATH=/tmp/pk:$PWD/benchmarks NVTMA_CACHE=0
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
for i in 1 2; do
timeout 250 python3 benchmarks/diag/stream_floor.py run-$P .dev/$P > "$OUT/$P$i.jsonl" 2> "$OUT/$P$i.err"; echo "rc $? $(wc -l < $OUT/$P$i.jsonl)"; tail -3 $OUT/$P$i.err
done
# then ncu of the GEMMs given in NCU (N_K_M_MODE ...) from .dev/parts
if [ -n "${NCU:-}" ]; then ART=.dev/parts bash benchmarks/diag/ncu_gemm.sh $NCU > "$OUT/ncu.txt" 2>&1; tail -c 200 "$OUT/ncu.txt"; fi
