#!/bin/bash
# The fifty-third session's device call (staged by stage_s41.sh: the suites' kernels and the GEMM table's): the
# GPU suites at this tree (the fifty-second session's runtime input checks and its static shared memory test,
# test_gpu.py::test_static_shared_memory_past_48_kib_on_sm_90a, never run yet), compute-sanitizer over that test,
# then full gemm_bench.py runs (#13's table, W rotated over 256 MiB, cuBLASLt and cuBLAS in the same process)
# while time is left.
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s57.sh > $OUT/s57.txt 2>&1; cat $OUT/s57.txt")
set -u
. "$(dirname "$0")/packs.sh"
suites_and_overhead
for tool in memcheck racecheck synccheck; do sanitize $tool test_gpu.py static_shared_memory; done
SKIP_SUITES=1 LIMIT=$((${LIMIT:-585} - SECONDS)) bash "$(dirname "$0")/call_s41.sh"
