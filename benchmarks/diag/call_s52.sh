#!/bin/bash
# The forty-seventh session's device call (staged by stage_s52.sh): the GPU suites (SKIP_SUITES=1 leaves them
# out), examples/fp8_mlp.py --run --bench block-scaled and per tensor (each step also with the activations
# quantized by the model, which inductor fuses into the norm and SiLU), block-scaled at 600 rows (row blocks on
# the model's e4m3 x), rows_host (an eager call past 512 rows, kept as one prepared call, against as before), and
# racecheck over the GEMM's torch.compile and autotune tests.
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s52.sh > $OUT/s52.txt 2>&1; cat $OUT/s52.txt")
set -u
. "$(dirname "$0")/packs.sh"
here=$(dirname "$0")
prelude .s52_art.tar.xz
(
  export PYTHONPATH=/tmp/pk NVTMA_CACHE=0
  timeout 240 python3 -W ignore examples/fp8_mlp.py --from .dev/ex_art/mlp --run --bench --m 1 8 64 2>&1 |
    grep -E "^M=[0-9]+:|layers|^ran on|Error" | sed "s/^/fp8_mlp block: /"
  timeout 200 python3 -W ignore examples/fp8_mlp.py --from .dev/ex_art/mlp --run --bench --scale tensor \
    --m 1 8 64 2>&1 | grep -E "^M=[0-9]+:|layers|^ran on|Error" | sed "s/^/fp8_mlp tensor: /"
  timeout 100 python3 -W ignore examples/fp8_mlp.py --from .dev/ex_art/mlp --run --m 600 2>&1 |
    grep -E "^M=[0-9]+:|^ran on|Error" | sed "s/^/fp8_mlp block: /"
  PYTHONPATH=/tmp/pk:$PWD/benchmarks timeout 60 python3 -W ignore "$here/rows_host.py" run .dev/rows_host 2>&1 |
    tail -n 8
)
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
NVTMA_SANITIZER=1 PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0 \
  timeout "${RACE_S:-150}" "$cs" --tool racecheck --report-api-errors no --print-limit 20 python3 -m pytest -q -m gpu \
  -p no:cacheprovider test/python/test_gpu_gemm.py -k "torch_op or autotune" 2>&1 |
  grep -E "=====|passed|failed|Error" | head -n 30 | sed "s/^/racecheck: /"
echo "racecheck rc ${PIPESTATUS[0]}"
