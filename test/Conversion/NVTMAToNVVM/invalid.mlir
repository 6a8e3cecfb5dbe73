// RUN: nvtma-opt %s -convert-nvtma-to-nvvm -split-input-file -verify-diagnostics

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %v = memref.subview %A[0, 0] [128, 128] [1, 1] : memref<256x256xf16> to memref<128x128xf16, strided<[256, 1]>>
    // expected-error @+1 {{the tensor must be an argument of the enclosing kernel}}
    %a = nvtma.make_tiled_tma_atom %v {cta_tiler = array<i64: 64, 64>} : memref<128x128xf16, strided<[256, 1]>> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  // expected-error @+1 {{nvtma.make_tiled_tma_atom must be in a gpu.func kernel}}
  gpu.func @device(%A: memref<256x256xf16>) {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}
