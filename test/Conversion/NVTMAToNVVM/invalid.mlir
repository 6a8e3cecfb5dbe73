// RUN: nvtma-opt %s -convert-nvtma-to-nvvm -split-input-file -verify-diagnostics

// The lowering needs atoms to be kernel parameters already.
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    // expected-error @+1 {{is not materialized: run nvtma-materialize-descriptors first}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}
