#!/bin/bash
# The forty-eighth session's last device call (staged by stage_s53.sh): the GPU suites at the session's final
# library (compile reads a gpu.module's libraries and own target from the parsed IR), then NVSHMEM on one PE:
# test_nvshmem.py's GPU tests and examples/nvshmem_allgather.py over the kernels linked here through the new path.
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s53b.sh > $OUT/s53b.txt 2>&1; cat $OUT/s53b.txt")
set -u
here=$(dirname "$0")
bash "$here/call_s26.sh"
export PYTHONPATH=/tmp/pk:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0 NVSHMEM_DISABLE_NVLS=1
python3 -m pip show nvidia-nvshmem-cu13 2>/dev/null | sed -n 2p
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu test/python/test_nvshmem.py -rA 2>&1 |
  grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|error" | tail -20
timeout 100 python3 examples/nvshmem_allgather.py --from .dev/gpu_art/nvshmem 2>&1 | tail -6
