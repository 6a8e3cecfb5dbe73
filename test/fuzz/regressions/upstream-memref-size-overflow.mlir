// The structured atom fuzzer (2026-11-30): MLIR asserts ("integer overflow
// in size computation") when it computes the strides of an identity-layout
// memref whose static sizes multiply past int64 -- every getStridesAndOffset
// does, the verifiers' and the memref lowering's. Each is a diagnostic now.
// RUN: nvtma-opt %s -split-input-file -verify-diagnostics
// RUN: not nvtma-opt %s -split-input-file -nvtma-to-ptx 2>&1 | FileCheck %s

// CHECK: error: 'nvtma.make_tiled_tma_atom' op tensor 'memref<256x1099511627776x256x4096x?xbf16>' has more elements than int64 counts
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%A: memref<256x1099511627776x256x4096x?xbf16>) kernel {
    // expected-error @+1 {{tensor 'memref<256x1099511627776x256x4096x?xbf16>' has more elements than int64 counts}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 32, 2, 1, 1, 32>} : memref<256x1099511627776x256x4096x?xbf16> -> !nvtma.tma_atom<load, bf16, box = [32, 2, 1, 1, 32]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%s: !llvm.ptr<1>) workgroup(%w: memref<1099511627776x1099511627776xf16, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{memref layout is not strided, or its size overflows int64}}
    %p = nvtma.address_of %w[%c0, %c0] : memref<1099511627776x1099511627776xf16, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    gpu.return
  }
}

// -----

// Not an nvtma op: nvtma-check-target (the pipeline's first check) refuses
// it before the memref lowering sees it.
// CHECK: error: 'gpu.func' op uses 'memref<4096x1099511627776x1099511627776xf32>', which has more elements than int64 counts
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%A: memref<4096x1099511627776x1099511627776xf32>) kernel {
    gpu.return
  }
}
