// RUN: nvtma-opt %s -convert-nvtma-to-nvvm -split-input-file -verify-diagnostics

// Targets that cannot run TMA are refused before LLVM sees them.
gpu.module @m [#nvvm.target<chip = "sm_80", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    // expected-error @+1 {{needs sm_90 or newer ('!nvtma.tma_atom<load, f16, box = [64, 64]>'), the gpu.module targets sm_80}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

// expected-error @+2 {{PTX ISA +ptx78 is too old for sm_90a (needs +ptx80)}}
// expected-error @+1 {{nvtma needs PTX ISA 8.0 or newer (+ptx80), the target has +ptx78}}
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx78">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

// expected-error @+1 {{convert-nvtma-to-nvvm: gpu.module @m has no #nvvm.target chip and no sm= option was given}}
gpu.module @m {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

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
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    // expected-error @+1 {{cannot allocate shared memory in a kernel body; use a gpu.func workgroup attribution or gpu.dynamic_shared_memory}}
    %s = memref.alloca() : memref<64x64xf16, #gpu.address_space<workgroup>>
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

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%g: !llvm.ptr<1>) kernel {
    // expected-error @+1 {{needs PTX ISA 8.3 (+ptx83), the target has +ptx80}}
    nvtma.fence_tma_desc_acquire %g : !llvm.ptr<1>
    gpu.return
  }
}
