#!/bin/bash
# The fiftieth session's device call (staged by stage_s41.sh: the suites' kernels and the GEMM table's): the GPU
# suites with the numeric and barrier dialect ops that replaced the DSL's intrinsic calls by name (float_fn,
# truncf_rz, fptoint_sat, activemask, barrier_sync), compute-sanitizer over the tests that run them (the float
# functions, the conversions, the elections), then full gemm_bench.py runs (#13's table at this tree, W rotated
# over 256 MiB, cuBLASLt and cuBLAS in the same process) while time is left.
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s55.sh > $OUT/s55.txt 2>&1; cat $OUT/s55.txt")
set -u
. "$(dirname "$0")/packs.sh"
suites_and_overhead
NEW="float_functions or float_conversions or elections_ending"
for tool in memcheck racecheck synccheck; do sanitize $tool test_gpu.py "$NEW"; done
SKIP_SUITES=1 LIMIT=${LIMIT:-585} bash "$(dirname "$0")/call_s41.sh"
