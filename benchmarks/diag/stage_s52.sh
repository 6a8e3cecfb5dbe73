#!/bin/bash
# Stages the forty-seventh session's device call (call_s52.sh): the GPU suites' pack (stage_s41.sh SUITES_ONLY=1:
# wipes .dev, makes .devpack.tar.xz), then fp8_mlp's kernels (block-scaled and per tensor, on bf16 activations
# and on the e4m3 ones the model quantizes) and rows_host's, packed as .s52_art.tar.xz (untracked and not
# ignored: it travels with the tree; run(carry=[".devpack.tar.xz"])). About 5 minutes on 2 cores.
set -eu
cd "$(dirname "$0")/../.."
SUITES_ONLY=1 bash benchmarks/diag/stage_s41.sh
export PYTHONPATH=$PWD/build/dev/python_packages:$PWD/test/python:$PWD/test/TensorMap:$PWD/benchmarks NVTMA_CACHE=0
py=.venv/bin/python
$py -W ignore examples/fp8_mlp.py --m 1 8 64 600 --aot .dev/ex_art/mlp > /dev/null
$py -W ignore examples/fp8_mlp.py --m 1 8 64 --scale tensor --aot .dev/ex_art/mlp > /dev/null
$py -W ignore benchmarks/diag/rows_host.py build .dev/rows_host
tar cf - .dev/ex_art .dev/rows_host | xz -T2 > .s52_art.tar.xz
ls -la .devpack.tar.xz .s52_art.tar.xz
