#!/bin/bash
# Stages the forty-eighth session's last device call (call_s53b.sh): the GPU suites' pack (stage_s41.sh
# SUITES_ONLY=1), plus the NVSHMEM cases (test/python/nvshmem_cases.py: the probe, all-gather, all-reduce)
# linked against NVSHMEM 3.4.5's device bitcode, the version torch 2.11 installs on the GPU box
# (NVTMA_NVSHMEM_BITCODE: a folder holding libnvshmem_device.bc, e.g. from
# `pip install --no-deps --target /tmp/nvshm345 nvidia-nvshmem-cu13==3.4.5`). About 7 minutes on 2 cores.
set -eu
cd "$(dirname "$0")/../.."
: "${NVTMA_NVSHMEM_BITCODE:?set it to the libnvshmem_device.bc of NVSHMEM 3.4.5, or its folder}"
export NVTMA_NVSHMEM_BITCODE
SUITES_ONLY=1 bash benchmarks/diag/stage_s41.sh
export PYTHONPATH=$PWD/build/dev/python_packages:$PWD/test/python NVTMA_CACHE=0
.venv/bin/python -W ignore test/python/nvshmem_cases.py .dev/gpu_art
tar cf - .dev/wheels .dev/gpu_art .dev/cs16 | xz -T2 -6 > .devpack.tar.xz
ls -la .devpack.tar.xz
