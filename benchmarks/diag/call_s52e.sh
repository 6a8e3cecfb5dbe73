#!/bin/bash
# The forty-seventh session's check of block x scales taken as views of a block of the storage's rows
# (block_scales_for_kernel): the GEMM's GPU tests (test_gpu_gemm.py: row blocks of block-scaled x among them), then
# rows_host (staged by stage_s52.sh).
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s52e.sh > $OUT/s52e.txt 2>&1; cat $OUT/s52e.txt")
set -u
. "$(dirname "$0")/packs.sh"
FRESH=1 install_pack
untar .s52_art.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0 \
  timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider test/python/test_gpu_gemm.py -rfE 2>&1 | tail -n 4
PYTHONPATH=/tmp/pk:$PWD/benchmarks NVTMA_CACHE=0 timeout 60 python3 -W ignore benchmarks/diag/rows_host.py run \
  .dev/rows_host 2>&1 | grep '^{'
