#!/bin/bash
# Stages what call_s45.sh runs, from this tree (a built build/dev and .venv): the runtime wheel, every GPU-test
# kernel, the profiling cases and diag/cluster_sync16.py's probes (GEMM=1: the full GEMM table's kernels too),
# packed with xz into .devpack.tar.xz. Artifact keys hash nvtma's sources: restage after any change to
# python/nvtma. About 6 minutes on 2 cores (17 with GEMM=1). Then: run(carry=[".devpack.tar.xz"],
# command="bash benchmarks/diag/call_s45.sh > $OUT/summary.txt 2>&1; cat $OUT/summary.txt").
set -eu
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD/build/dev/python_packages:$PWD/test/python:$PWD/test/TensorMap NVTMA_CACHE=0
py=.venv/bin/python
rm -rf .dev .devpack.tgz .devpack.tar.xz
$py python/runtime-wheel/backend.py .dev/wheels
$py -W ignore test/python/build_gpu_artifacts.py .dev/gpu_art
$py -W ignore test/python/profile_cases.py .dev/gpu_art
$py -W ignore benchmarks/diag/cluster_sync16.py build .dev/cs16
parts=".dev/wheels .dev/gpu_art .dev/cs16"
if [ -n "${GEMM:-}" ]; then
  $py -W ignore benchmarks/gemm_bench.py build .dev/gemm_art
  parts="$parts .dev/gemm_art"
fi
tar cf - $parts | xz -T2 -6 > .devpack.tar.xz
ls -la .devpack.tar.xz
