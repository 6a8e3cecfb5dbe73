#!/bin/bash
# The forty-eighth session's GEMM table call: full gemm_bench.py runs over the table's kernels (.dev/gemm_art,
# built at the session's tree; no suites: call_s53b.sh ran them) while time is left, W rotated over 256 MiB,
# cuBLASLt and cuBLAS in the same process: call_s41.sh's runs. What comes back: gemm-N.jsonl, gemm-errs.tgz.
#   run(carry=[".devpack.tar.xz"], command="FRESH=1 bash benchmarks/diag/call_s53c.sh > $OUT/s53c.txt 2>&1; cat $OUT/s53c.txt")
set -u
. "$(dirname "$0")/packs.sh"
install_pack
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SKIP_SUITES=1 LIMIT=${LIMIT:-585} bash "$(dirname "$0")/call_s41.sh"
