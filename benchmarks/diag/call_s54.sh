#!/bin/bash
# The forty-ninth session's device call (staged by stage_s53.sh): the GPU suites with the dialect ops that
# replaced the DSL's inline PTX (read_special_register, elect_active, wgmma_mma_async_rs, vector_atomic_add),
# racecheck and memcheck over the tests that run them (the profiler's split-warp and ws_pipeline traces, the
# per-site elections, vector atomics, A from registers), then NVSHMEM on one PE (call_s53b's part); with
# AUTOTUNE=1 (the second call), racecheck over the autotune tests (the GEMM's and the runtime's) last.
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s54.sh > $OUT/s54.txt 2>&1; cat $OUT/s54.txt")
set -u
. "$(dirname "$0")/packs.sh"
suites_and_overhead
sanitize racecheck test_gpu_profile.py "splits_every_warp or ws_pipeline_trace or ending_both_arms"
NEW="vector_atomics or elections_ending or from_registers or share_memory"
sanitize racecheck test_gpu.py "$NEW"
sanitize memcheck test_gpu.py "$NEW"
sanitize synccheck test_gpu.py "$NEW"
export NVSHMEM_DISABLE_NVLS=1
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu test/python/test_nvshmem.py -rA 2>&1 |
  grep -E "passed|failed|error" | tail -3
timeout 100 python3 examples/nvshmem_allgather.py --from .dev/gpu_art/nvshmem 2>&1 | tail -3
if [ -n "${AUTOTUNE:-}" ]; then
  sanitize racecheck test_gpu_gemm.py autotune
  NVTMA_CACHE=1 NVTMA_CACHE_DIR=/tmp/nvtma-cache-rc sanitize racecheck test_gpu_runtime.py autotune
fi
