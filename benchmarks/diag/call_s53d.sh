#!/bin/bash
# The forty-eighth session's profiler call (staged by stage_s53.sh): the GPU suites with the profiler's events
# taking their slots by a shared atomic (call_s26.sh), the profiling overhead tests' figures (-s), then racecheck
# over the split-warp and ws_pipeline profiling tests (the events' count: no warp syncs around it now; RACE_K:
# pytest's -k for it; the second run added "or ending_both_arms", the per-site elections' test).
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s53d.sh > $OUT/s53d.txt 2>&1; cat $OUT/s53d.txt")
set -u
. "$(dirname "$0")/packs.sh"
suites_and_overhead
sanitize racecheck test_gpu_profile.py "${RACE_K:-splits_every_warp or ws_pipeline_trace}"
