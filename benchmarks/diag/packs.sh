#!/bin/bash
# Sourced by the device-call scripts (call_s51.sh on): the packs a call's tree carries, unpacked.
# untar FILE: a .tar.xz pack into the tree (tarfile's data filter: no links or paths out of it).
untar() { python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(filter="data")' "$1"; }
# install_pack: the GPU pack (.devpack.tar.xz: stage_s41.sh) unpacked and its nvtma wheel installed into /tmp/pk,
# once a machine (a warm machine keeps it), or again with FRESH=1 (a pack staged after the machine's last call).
install_pack() {
  if [ -n "${FRESH:-}" ] || [ ! -d /tmp/pk ]; then
    untar .devpack.tar.xz && rm -rf /tmp/pk && pip install -q --no-index --no-deps --target /tmp/pk .dev/wheels/*.whl 2>/dev/null
  fi
}
# prelude ART: a call's start: the GPU suites (call_s26.sh; SKIP_SUITES=1 leaves them out), the pack installed,
# the call's own artifacts (ART, a .tar.xz) unpacked, and the GPU named.
prelude() {
  [ -n "${SKIP_SUITES:-}" ] || bash "$(dirname "${BASH_SOURCE[0]}")/call_s26.sh"
  install_pack
  untar "$1"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
}
# suites_and_overhead: the GPU suites (call_s26.sh, which installs the pack), then the profiling overhead tests'
# figures (test_gpu_profile.py -k overhead, -s), with the pack's PYTHONPATH and artifacts exported for what follows.
suites_and_overhead() {
  bash "$(dirname "${BASH_SOURCE[0]}")/call_s26.sh"
  export PYTHONPATH=/tmp/pk:$PWD/test/TensorMap:$PWD/test/python NVTMA_GPU_ARTIFACTS=$PWD/.dev/gpu_art NVTMA_CACHE=0
  timeout 120 python3 -m pytest -q -s -p no:cacheprovider -m gpu test/python/test_gpu_profile.py -k overhead 2>&1 |
    grep -E "overhead|passed|failed"
}
# sanitize TOOL FILE K: one compute-sanitizer tool over FILE's GPU tests that -k K picks; its log goes to $OUT.
sanitize() {
  timeout 200 compute-sanitizer --report-api-errors no --print-limit 20 --tool "$1" python3 -m pytest -q \
    -p no:cacheprovider -m gpu "test/python/$2" -k "$3" > "$OUT/$1-${2%.py}.log" 2>&1
  echo "$1 $2 rc $?: $(grep -E -m1 '(passed|failed)' "$OUT/$1-${2%.py}.log") | $(grep -m1 'SUMMARY' \
    "$OUT/$1-${2%.py}.log")"
}
