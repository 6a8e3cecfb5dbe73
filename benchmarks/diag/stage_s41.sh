#!/bin/bash
# Stages what call_s41.sh and call_s45.sh run, from this tree (a built build/dev and .venv): the runtime wheel,
# every GPU-test kernel, the profiling cases, diag/cluster_sync16.py's probes, the benchmark kernels and the full
# GEMM table's kernels, packed with xz into .devpack.tar.xz (about 35 MB; gzip made 58 MB of the GEMM table
# alone, and the runtime loads every file an artifact's manifest lists, module.ptx and module.mlir too, so none
# can be left out). Artifact keys hash nvtma's sources: restage after any change to python/nvtma. About 17
# minutes on 2 cores (SUITES_ONLY=1: the GPU suites' kernels and the probes alone, for call_s26.sh and
# call_s45.sh, about 6). Then: run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s41.sh >
# $OUT/summary.txt 2>&1; cat $OUT/summary.txt").
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
if [ -z "${SUITES_ONLY:-}" ]; then
  $py -W ignore benchmarks/build_artifacts.py .dev/bench
  $py -W ignore benchmarks/gemm_bench.py build .dev/gemm_art
  parts="$parts .dev/bench .dev/gemm_art"
fi
tar cf - $parts | xz -T2 -6 > .devpack.tar.xz
ls -la .devpack.tar.xz
