#!/usr/bin/env bash
# The session's last device call: the profiling tests and examples (trace fix), NVSHMEM on one PE.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1
W=/tmp/w; rm -rf $W; mkdir -p $W/o
OUT=$W/o NVTMA_STEPS="nvshmem profile" timeout 400 .ci/gpu-run .dev > $W/run.log 2>&1
{ cat $W/o/machine.txt; echo "== nvshmem"; cat $W/o/nvshmem.log 2>/dev/null
  for f in gpu_profile_tests ws_pipeline_profile profile_gemm; do echo "== $f"; tail -30 $W/o/$f.log 2>/dev/null; done
  echo "== run"; tail -30 $W/run.log; } > "$OUT/summary.txt"
python3 - "$W/o/ws_pipeline_trace.json" <<'PY' >> "$OUT/summary.txt" 2>&1
import json, sys
t = json.load(open(sys.argv[1])); x = [e for e in t["traceEvents"] if e["ph"] == "X"]
print(f"ws trace: {len(x)} slices, first ts {min(e['ts'] for e in x)}, durations (us) sample {[round(e['dur'], 4) for e in x[:6]]}")
PY
ls "$OUT"
