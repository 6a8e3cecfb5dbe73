#!/bin/bash
# Stages the first device call of the next session (call_s51.sh): what the forty-sixth session changed and could
# not run on a GPU. The GPU suites' pack (stage_s41.sh SUITES_ONLY=1: wipes .dev, makes .devpack.tar.xz), then
# the examples' kernels (fp8_gemm at five flag sets, fp8_mlp block-scaled and per tensor) and the fused
# cluster cases with the cluster barriers (race_fused.py build), packed as .s51_art.tar.xz (both packs travel:
# run(carry=[".devpack.tar.xz"]); .s51_art.tar.xz is untracked and not ignored). About 5 minutes on 2 cores.
set -eu
cd "$(dirname "$0")/../.."
SUITES_ONLY=1 bash benchmarks/diag/stage_s41.sh
export PYTHONPATH=$PWD/build/dev/python_packages:$PWD/test/python:$PWD/test/TensorMap:$PWD/benchmarks NVTMA_CACHE=0
py=.venv/bin/python
while read -r flags; do
  $py -W ignore examples/fp8_gemm.py $flags --aot .dev/ex_art/fp8_gemm > /dev/null
done < <(sed -n 's/^  "\(.*\)"$/\1/p' benchmarks/diag/call_s51.sh)
$py -W ignore examples/fp8_mlp.py --m 1 8 64 200 600 --aot .dev/ex_art/mlp > /dev/null
$py -W ignore examples/fp8_mlp.py --m 1 8 64 --scale tensor --aot .dev/ex_art/mlp > /dev/null
$py -W ignore benchmarks/diag/race_fused.py build .dev/race_diag > /dev/null
tar cf - .dev/ex_art .dev/race_diag | xz -T2 > .s51_art.tar.xz
ls -la .devpack.tar.xz .s51_art.tar.xz
