// Inputs the fuzzer found crashing upstream lowerings or LLVM; each must now
// be a diagnostic of nvtma-check-target (the first pass of nvtma-to-ptx).
// RUN: nvtma-opt %s -nvtma-check-target -split-input-file -verify-diagnostics
// RUN: not nvtma-opt %s -nvtma-to-ptx -split-input-file 2>&1 | FileCheck %s

// GPUFuncOpLowering asserts on a non-signless llvm.align.
// CHECK: error: llvm.align must be a positive power of two
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  // expected-error @+1 {{llvm.align must be a positive power of two of a signless integer type, got 1024 : ui32}}
  gpu.func @k() workgroup(%s: memref<64xf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : ui32}) kernel {
    gpu.return
  }
}

// -----

// LLVM aborts ("LLVM ERROR: PTX version 7.8 does not support target
// 'sm_90a'") when asked for it.
// CHECK: error: gpu.module @m: +ptx78 is too old for sm_90a
// expected-error @+1 {{gpu.module @m: +ptx78 is too old for sm_90a, it needs +ptx80 or newer}}
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx78">] {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// An IR-level target with a chip LLVM 22 knows but a PTX version it cannot
// emit for it ended nvtma-opt with "LLVM ERROR" (issue 16).
// CHECK: error: gpu.module @m: +ptx86 is too old for sm_100f
// expected-error @+1 {{gpu.module @m: +ptx86 is too old for sm_100f, it needs +ptx88 or newer}}
gpu.module @m [#nvvm.target<chip = "sm_100f", features = "+ptx86">] {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// A chip LLVM 22 does not know: "Cannot select" on the first TMA
// instruction (issue 16).
// CHECK: error: gpu.module @m: chip 'sm_91a' is not one LLVM's NVPTX backend can select
// expected-error @+1 {{gpu.module @m: chip 'sm_91a' is not one LLVM's NVPTX backend can select}}
gpu.module @m [#nvvm.target<chip = "sm_91a", features = "+ptx86">] {
  gpu.func @k() kernel {
    nvtma.bulk_commit_group
    gpu.return
  }
}
