#!/bin/bash
# The forty-seventh session's third device call: what racecheck's runs of the GEMM's torch.compile test (103
# tensors in the CUDA graph pool not tracked as outputs, only under the tool) and autotune tests (the process
# ended abnormally) show: the first with cudagraph trees' allocation history (their origins), the logs' tails.
#   run(carry=[".devpack.tar.xz"], command="bash benchmarks/diag/call_s52c.sh > $OUT/s52c.txt 2>&1; cat $OUT/s52c.txt")
set -u
. "$(dirname "$0")/packs.sh"
install_pack
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
cat > /tmp/hist.py <<'PY'
import sys
import pytest
import torch._inductor.config as c
c.triton.cudagraph_trees_history_recording = True
sys.exit(pytest.main(sys.argv[1:]))
PY
timeout 200 "$cs" --tool racecheck --report-api-errors no --print-limit 5 python3 /tmp/hist.py -q -m gpu \
  -p no:cacheprovider test/python/test_gpu_gemm.py -k torch_op -x > /tmp/t1.log 2>&1 &
timeout 200 "$cs" --tool racecheck --report-api-errors no --print-limit 5 python3 -m pytest -q -m gpu \
  -p no:cacheprovider test/python/test_gpu_gemm.py -k "autotune_times_the_candidates_once" > /tmp/t2.log 2>&1 &
wait
echo "== torch_op with history"; grep -v "^\s*$" /tmp/t1.log | grep -E "Detected|Data Pointer|File|nvtma|gemm|line|=====|passed|failed" | awk '!seen[$0]++' | head -n 60
echo "== autotune_times_the_candidates_once"; tail -n 25 /tmp/t2.log
