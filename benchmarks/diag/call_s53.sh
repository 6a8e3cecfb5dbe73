#!/bin/bash
# The forty-eighth session's first device call (staged by stage_s52.sh): the GPU suites at the forty-seventh
# session's final library (its review mends: row blocks sharing prepared calls by signature, the first call
# planning without a y, aligned f32 block-scale views), rows_host, and examples/fp8_mlp.py --run (its compiled
# checks now functions of their own) block-scaled at M = 1, 8, 64, 600 and per tensor at 1, 8, 64.
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s53.sh > $OUT/s53.txt 2>&1; cat $OUT/s53.txt")
set -u
. "$(dirname "$0")/packs.sh"
here=$(dirname "$0")
prelude .s52_art.tar.xz
(
  export PYTHONPATH=/tmp/pk NVTMA_CACHE=0
  timeout 150 python3 -W ignore examples/fp8_mlp.py --from .dev/ex_art/mlp --run --m 1 8 64 600 2>&1 |
    grep -E "^M=[0-9]+:|^ran on|Error" | sed "s/^/fp8_mlp block: /"
  timeout 120 python3 -W ignore examples/fp8_mlp.py --from .dev/ex_art/mlp --run --scale tensor --m 1 8 64 2>&1 |
    grep -E "^M=[0-9]+:|^ran on|Error" | sed "s/^/fp8_mlp tensor: /"
  PYTHONPATH=/tmp/pk:$PWD/benchmarks timeout 90 python3 -W ignore "$here/rows_host.py" run .dev/rows_host 2>&1 |
    grep -v "^\s*$" | tail -n 12
)
