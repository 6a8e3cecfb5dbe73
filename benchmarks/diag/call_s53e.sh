#!/bin/bash
# The profiler's overhead before and after its events took their slots atomically, on one machine, interleaved:
# the profiling tests' overhead figures (-s) with the pack of dd1938e^ (.oldprof.tar.xz: its runtime wheel and
# test/python/profile_cases.py's kernels, built in a worktree of that commit) and with this session's
# (.devpack.tar.xz, stage_s53.sh), twice each.
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s53e.sh > $OUT/s53e.txt 2>&1; cat $OUT/s53e.txt")
set -u
. "$(dirname "$0")/packs.sh"
FRESH=1 install_pack
mkdir -p /tmp/old && (cd /tmp/old && untar "$OLDPWD/.oldprof.tar.xz") && rm -rf /tmp/pkold &&
  pip install -q --no-index --no-deps --target /tmp/pkold /tmp/old/.dev/wheels/*.whl 2>/dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  for which in old new; do
    if [ $which = old ]; then pk=/tmp/pkold art=/tmp/old/.dev/gpu_art; else pk=/tmp/pk art=$PWD/.dev/gpu_art; fi
    PYTHONPATH=$pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$art NVTMA_CACHE=0 timeout 120 \
      python3 -m pytest -q -s -p no:cacheprovider -m gpu test/python/test_gpu_profile.py -k "overhead or splits" 2>&1 |
      grep -E "overhead|passed|failed" | sed "s/^/$which $round: /"
  done
done
