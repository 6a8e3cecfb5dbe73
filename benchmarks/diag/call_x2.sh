#!/usr/bin/env bash
# A device call on the two-GPU kind: the GPU tests of a fresh build, NVSHMEM on one PE and on
# both GPUs (the example and its test), and ncu of the GEMM against cuBLASLt.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1 NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
W=/tmp/w; rm -rf $W; mkdir -p $W/o
python3 -c 'import torch; print("gpus", torch.cuda.device_count())'
OUT=$W/o NVTMA_STEPS="${STEPS:-tests nvshmem}" timeout 420 .ci/gpu-run .dev > $W/run.log 2>&1
export PYTHONPATH="$PWD/.dev/pkg:$PWD/test/TensorMap" NVTMA_GPU_ARTIFACTS="$PWD/.dev/gpu_art" NVTMA_CACHE=0
{ echo "== two GPUs: test_gpu_example_on_every_gpu"
  timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu test/python/test_nvshmem.py -k every_gpu -rA 2>&1 | tail -5
  for c in 4194304 16777216 67108864; do
    echo "== example, --nprocs 2 --count $c"
    timeout 200 python3 examples/nvshmem_allgather.py --nprocs 2 --count $c --from .dev/gpu_art/nvshmem 2>&1 | tail -8
  done; } > $W/o/nvshmem2.log 2>&1
benchmarks/diag/ncu_gemm.sh "4096_7168_1_tensor" "16384_16384_128_tensor" "4096_7168_64_tensor" "7168_2048_1_bf16" \
  > $W/o/ncu_gemm.txt 2>&1
{ cat $W/o/machine.txt; for f in gpu_tests gpu_runtime_tests nvshmem nvshmem2; do echo "== $f"; tail -25 $W/o/$f.log; done
  echo "== launch"; cat $W/o/launch_bench.json; echo "== run"; tail -20 $W/run.log; } > $OUT/summary.txt 2>&1
cp $W/o/ncu_gemm.txt $W/o/nvshmem2.log $OUT/ 2>/dev/null
cat $OUT/summary.txt
