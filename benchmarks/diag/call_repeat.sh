#!/usr/bin/env bash
# A device call: the assembler experiment, and the launch-cost and profiling-overhead measurements again.
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/pkg .dev/wheels/nvtma_runtime-*.whl
export PYTHONPATH="/tmp/pkg:$PWD/test/TensorMap" NVTMA_CACHE=0 NVTMA_GPU_ARTIFACTS="$PWD/.dev/gpu_art"
timeout 200 python3 benchmarks/diag/assembler_experiment.py run .dev/asm > $OUT/assembler.jsonl 2> $OUT/assembler_stderr.txt
timeout 120 python3 benchmarks/launch_bench.py --artifacts .dev/bench_art > $OUT/launch_bench.json 2> /dev/null
timeout 200 python3 -m pytest -q -s -p no:cacheprovider -m gpu test/python/test_gpu_profile.py -rA > $OUT/profile_tests.log 2>&1
cat $OUT/assembler.jsonl; tail -3 $OUT/assembler_stderr.txt; cat $OUT/launch_bench.json; grep -E "overhead|passed|failed" $OUT/profile_tests.log
