#!/usr/bin/env bash
# ncu of the GEMM beside cuBLASLt for each problem N_K_M_MODE given (staged tree in .dev, runtime on PYTHONPATH;
# the nvtma kernels from $ART, default .dev/gemm_art, built here by `ncu_gemm.py build DIR N_K_M_MODE ...`; W's L2
# promotion from $NVTMA_L2_W, else the default):
#   benchmarks/diag/ncu_gemm.sh 4096_7168_1_tensor 16384_16384_128_tensor > ncu.txt
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for p in "$@"; do
  echo "== ncu $p"
  timeout 90 $ncu --profile-from-start off --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__m_xbar2l1tex_read_bytes.sum.per_second,lts__t_bytes.sum.per_second,dram__bytes_read.sum,dram__bytes_read.sum.per_second \
    python3 benchmarks/diag/ncu_gemm.py ${ART:-.dev/gemm_art} ${p//_/ } 2>&1 | grep -v "^==PROF==" \
    | grep -E "config|Context|Duration|Throughput|Spilling Requests|Hit Rate|Eligible|Issued|stalled|Occupancy|Registers Per|cycles being|gmma|xbar2l1tex|lts__t_bytes|dram__bytes|Pipe|Busy"
done
