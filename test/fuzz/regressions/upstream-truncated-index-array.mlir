// The fuzzer's truncation of a lit input: a dense array of `index` cut off at
// the end of the input made MLIR's parser assert (seen under ASan, 2026-11-29).
// RUN: not nvtma-opt %s 2>&1 | FileCheck %s
// CHECK: error: dense arrays of 'index' are not supported

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @device(%a: memref<256x256xf16>) {
    %A = nvtma.make_tiled_tma_atom %a {cta_tiler = array<index