#!/usr/bin/env bash
# ncu of the GEMM beside cuBLASLt for each problem N_K_M_MODE given (staged tree in .dev, runtime on PYTHONPATH):
#   benchmarks/diag/ncu_gemm.sh 4096_7168_1_tensor 16384_16384_128_tensor > ncu.txt
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for p in "$@"; do
  echo "== ncu $p"
  timeout 60 $ncu --profile-from-start off --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section Occupancy \
    python3 benchmarks/diag/ncu_gemm.py .dev/gemm_art ${p//_/ } 2>&1 | grep -v "^==PROF==" \
    | grep -E "config|Context|Duration|Throughput|Spilling Requests|Hit Rate|Eligible|Issued|stalled|Occupancy|Registers Per|cycles being"
done
