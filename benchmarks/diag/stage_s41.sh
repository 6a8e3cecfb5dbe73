#!/bin/bash
# Stages what call_s41.sh runs, from this tree (a built build/dev and .venv): the runtime wheel, every
# GPU-test kernel, the profiling cases, the benchmark kernels and the full GEMM table's kernels, packed
# into .devpack.tgz without the GEMM table's module.mlir/.ptx (the runtime loads kernels.json and
# module.cubin; 23 MB instead of 447). Artifact keys hash nvtma's sources: restage after any change
# to python/nvtma. About 15 minutes on 2 cores. Then: run(carry=[".devpack.tgz"],
# command="bash benchmarks/diag/call_s41.sh > $OUT/summary.txt 2>&1; cat $OUT/summary.txt").
set -eu
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD/build/dev/python_packages:$PWD/test/python:$PWD/test/TensorMap NVTMA_CACHE=0
py=.venv/bin/python
rm -rf .dev .devpack.tgz
$py python/runtime-wheel/backend.py .dev/wheels
$py -W ignore test/python/build_gpu_artifacts.py .dev/gpu_art
$py -W ignore test/python/profile_cases.py .dev/gpu_art
$py -W ignore benchmarks/build_artifacts.py .dev/bench
$py -W ignore benchmarks/gemm_bench.py build .dev/gemm_art
tar czf .devpack.tgz --exclude='gemm_art/*/module.mlir' --exclude='gemm_art/*/module.ptx' \
  .dev/wheels .dev/gpu_art .dev/bench .dev/gemm_art
ls -la .devpack.tgz
