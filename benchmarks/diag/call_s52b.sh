#!/bin/bash
# The forty-seventh session's second device call (staged by stage_s52.sh): rows_host with cProfile (where an eager
# call past 512 rows spends its host time), and racecheck over the GEMM's torch.compile test and its autotune
# tests, each alone and given RACE_S seconds (150 s together did not finish them).
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s52b.sh > $OUT/s52b.txt 2>&1; cat $OUT/s52b.txt")
set -u
. "$(dirname "$0")/packs.sh"
here=$(dirname "$0")
install_pack
untar .s52_art.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
race() {  # name, pytest -k expression
  local t0=$SECONDS
  NVTMA_SANITIZER=1 PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0 \
    timeout "${RACE_S:-400}" "$cs" --tool racecheck --report-api-errors no --print-limit 20 python3 -m pytest -q \
    -m gpu -p no:cacheprovider test/python/test_gpu_gemm.py -k "$2" > "/tmp/race_$1.log" 2>&1
  echo "== racecheck $1 ($2): rc $? in $((SECONDS - t0)) s"
  grep -E "=====|passed|failed|Error" "/tmp/race_$1.log" | head -n 20
}
race torch_op "torch_op" > /tmp/r1.txt &
race autotune "autotune" > /tmp/r2.txt &
PYTHONPATH=/tmp/pk:$PWD/benchmarks NVTMA_CACHE=0 timeout 120 python3 -W ignore "$here/rows_host.py" run .dev/rows_host 2>&1 |
  tail -n 45
wait
cat /tmp/r1.txt /tmp/r2.txt
