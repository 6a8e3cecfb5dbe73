#!/bin/bash
# The forty-seventh session's last device call (staged by stage_s52.sh): the GPU suites at the final library (each
# prepared call with a launcher of its own), then rows_host (an eager call past 512 rows: kept as one call with its
# own launchers, against shared launchers and against the call as before the session).
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s52d.sh > $OUT/s52d.txt 2>&1; cat $OUT/s52d.txt")
set -u
. "$(dirname "$0")/packs.sh"
here=$(dirname "$0")
bash "$here/call_s26.sh"
untar .s52_art.tar.xz
PYTHONPATH=/tmp/pk:$PWD/benchmarks NVTMA_CACHE=0 timeout 90 python3 -W ignore "$here/rows_host.py" run .dev/rows_host 2>&1 |
  grep -v "^\s*$" | head -n 30
