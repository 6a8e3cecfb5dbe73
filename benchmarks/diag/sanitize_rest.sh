#!/usr/bin/env bash
# compute-sanitizer over the GPU tests and examples the earlier sanitizer run did not cover:
# the runtime, profiling, launch-ABI and NVSHMEM tests and every example (device errors only;
# cuda.bindings' failed symbol lookups are API errors, not reported).
set -u
tar xzf .devpack.tgz
export PYTHONUNBUFFERED=1 NVTMA_CACHE=0 NVSHMEM_DISABLE_NVLS=1
d=.dev; rm -rf $d/pkg
python3 -m pip install -q --no-index --no-deps --no-compile --target $d/pkg $d/wheels/nvtma_runtime-*.whl
export PYTHONPATH="$PWD/$d/pkg:$PWD/test/TensorMap" NVTMA_GPU_ARTIFACTS="$PWD/$d/gpu_art"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
S="$cs --report-api-errors no --print-limit 20"
W=$OUT
tests="test/python/test_gpu_runtime.py test/python/test_gpu_profile.py test/python/test_gpu_launch_abi.py test/python/test_nvshmem.py"
for tool in memcheck racecheck synccheck; do
  ( timeout 330 $S --tool $tool python3 -m pytest -q -p no:cacheprovider -m gpu $tests -k "not overhead and not torch_compile and not autotune" 2>&1 \
      | grep -E "=====|passed|failed|Error" | head -60 > $W/tests_$tool.log ) &
done
ex() { # tool
  for e in tma_copy multicast reduce_add im2col ws_pipeline softmax wgmma_gemm transpose; do
    r=--run; case $e in tma_copy|multicast|reduce_add|im2col) r=;; esac
    echo "-- $e"; timeout 90 $S --tool $1 python3 examples/$e.py $r --from $d/ex/$e 2>&1 | grep -E "=====|correct|Error|wrong" | head -8
  done
  echo "-- wgmma_gemm e4m3"; timeout 90 $S --tool $1 python3 examples/wgmma_gemm.py --dtype e4m3 --run --from $d/ex/wgmma_gemm_e4m3 2>&1 | grep -E "=====|correct|Error" | head -8
  echo "-- ws_pipeline profiled"; timeout 90 $S --tool $1 python3 examples/ws_pipeline.py --run --profile /tmp/t.json --from $d/ex/ws_pipeline_prof 2>&1 | grep -E "=====|correct|Error" | head -8
  echo "-- profile_gemm"; timeout 90 $S --tool $1 python3 examples/profile_gemm.py --run --profile /tmp/g.json --from $d/ex/profile_gemm 2>&1 | grep -E "=====|correct|Error" | head -8
  echo "-- nvshmem_allgather"; timeout 90 $S --tool $1 python3 examples/nvshmem_allgather.py --from $d/gpu_art/nvshmem 2>&1 | grep -E "=====|correct|Error" | head -8
}
export -f ex; export S d
( timeout 330 bash -c "ex memcheck" > $W/ex_memcheck.log 2>&1 ) &
( timeout 330 bash -c "ex racecheck" > $W/ex_racecheck.log 2>&1 ) &
wait
ls "$OUT"
