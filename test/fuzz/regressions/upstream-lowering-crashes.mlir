// RUN: nvtma-opt %s -convert-nvtma-to-nvvm -split-input-file -verify-diagnostics

// GPUFuncOpLowering asserts on a non-signless llvm.align.
// expected-error @+2 {{llvm.align must be a positive power of two of a signless integer type, got 1024 : ui32}}
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k() workgroup(%s: memref<64xf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : ui32}) kernel {
    gpu.return
  }
}

// -----

// LLVM aborts ("LLVM ERROR: PTX version 7.8 does not support target
// 'sm_90a'") when asked for it.
// expected-error @+1 {{PTX ISA +ptx78 is too old for sm_90a (needs +ptx80)}}
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx78">] {
  gpu.func @k() kernel {
    gpu.return
  }
}
