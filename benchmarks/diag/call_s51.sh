#!/bin/bash
# The next session's first device call (staged by stage_s51.sh): the GPU suites (SKIP_SUITES=1 leaves them out),
# then what the forty-sixth session changed and could not run on a GPU: examples/fp8_gemm.py --run at the flag
# sets below (on _example's shared W quantization and check; the last with --bench), examples/fp8_mlp.py --run
# block-scaled and --run --bench per tensor (its weights now static addresses), and racecheck over the fused
# cluster cases built with the cluster barriers (race_fused.py RACE_DIAG_ART: does racecheck finish them?).
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s51.sh > $OUT/s51.txt 2>&1; cat $OUT/s51.txt")
set -u
. "$(dirname "$0")/packs.sh"
here=$(dirname "$0")
FP8_GEMM_FLAGS=(
  "--m 16"
  "--m 8 --scale block"
  "--m 100 --scale row"
  "--m 5 --scale bf16"
  "--m 600 --n 512 --k 1024"
)
prelude .s51_art.tar.xz
(
  export PYTHONPATH=/tmp/pk NVTMA_CACHE=0
  for flags in "${FP8_GEMM_FLAGS[@]}"; do
    bench=; [ "$flags" = "${FP8_GEMM_FLAGS[-1]}" ] && bench=--bench
    timeout 60 python3 -W ignore examples/fp8_gemm.py $flags --from .dev/ex_art/fp8_gemm --run $bench 2>&1 |
      grep -E "^ran on|nvtma .* us|Error" | sed "s/^/fp8_gemm $flags: /"
  done
  timeout 150 python3 -W ignore examples/fp8_mlp.py --from .dev/ex_art/mlp --run --m 1 8 64 200 600 2>&1 |
    grep -E "^M=[0-9]+:|^ran on|Error" | sed "s/^/fp8_mlp block: /"
  timeout 200 python3 -W ignore examples/fp8_mlp.py --from .dev/ex_art/mlp --run --bench --scale tensor \
    --m 1 8 64 2>&1 | grep -E "^M=[0-9]+:|layers|^ran on|Error" | sed "s/^/fp8_mlp tensor: /"
)
RACE_DIAG_ART=$PWD/.dev/race_diag RUNS="${RUNS:-racecheck kne=gemm fused 9
racecheck kne=gemm fused 13}" EACH="${EACH:-90}" bash "$here/race_cases.sh"
