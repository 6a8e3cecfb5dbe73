// Inputs the fuzzer found crashing upstream MLIR / LLVM from nvtma-opt; each
// must now be a diagnostic.
// RUN: not nvtma-opt %s -split-input-file 2>&1 | FileCheck %s

// CHECK: error: dense arrays of 'index' are not supported (use array<i64: ...>)
func.func @f(%m: memref<20x40xf32>) {
  %a = nvtma.make_tiled_tma_atom %m {cta_tiler = array<index: 8, 32>} : memref<20x40xf32> -> !nvtma.tma_atom<load, f32, box = [8, 32]>
  return
}
