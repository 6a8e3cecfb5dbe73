#!/bin/bash
# The forty-eighth session's profiler call (staged by stage_s53.sh): the GPU suites with the profiler's events
# taking their slots by a shared atomic (call_s26.sh), the profiling overhead tests' figures (-s), then racecheck
# over the split-warp and ws_pipeline profiling tests (the events' count: no warp syncs around it now; RACE_K:
# pytest's -k for it; the second run added "or ending_both_arms", the per-site elections' test).
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s53d.sh > $OUT/s53d.txt 2>&1; cat $OUT/s53d.txt")
set -u
here=$(dirname "$0")
bash "$here/call_s26.sh"
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
. "$here/packs.sh"
overhead_figures
sanitize racecheck test_gpu_profile.py "${RACE_K:-splits_every_warp or ws_pipeline_trace}"
