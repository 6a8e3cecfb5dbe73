// RUN: nvtma-opt %s -nvtma-materialize-descriptors -split-input-file -verify-diagnostics | FileCheck %s

// Each distinct (tensor, atom) becomes one 64-byte-aligned pointer parameter
// appended to the kernel, carrying a typed #nvtma.descriptor; the kernel
// lists them in nvtma.descriptor_params (which outlives convert-gpu-to-nvvm).
// CHECK-LABEL: gpu.func @two_atoms
// CHECK-SAME: (%[[A:.*]]: memref<256x256xf16>, %[[B:.*]]: memref<256x256xf16>,
// CHECK-SAME: %[[D0:.*]]: !llvm.ptr {llvm.align = 64 : i64, nvtma.descriptor = #nvtma.descriptor<binds = 0, atom = !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = l2_256b>>},
// CHECK-SAME: %[[D1:.*]]: !llvm.ptr {llvm.align = 64 : i64, nvtma.descriptor = #nvtma.descriptor<binds = 1, atom = !nvtma.tma_atom<store, f16, box = [64, 64]>>})
// CHECK-SAME: nvtma.descriptor_params = [#nvtma.descriptor<binds = 0, {{.*}}>, #nvtma.descriptor<binds = 1, {{.*}}>]
// CHECK-NOT: make_tiled_tma_atom
// CHECK: %[[C0:.*]] = builtin.unrealized_conversion_cast %[[D0]] : !llvm.ptr to !nvtma.tma_atom<load
// CHECK: %[[C1:.*]] = builtin.unrealized_conversion_cast %[[D0]] : !llvm.ptr to !nvtma.tma_atom<load
// CHECK: %[[C2:.*]] = builtin.unrealized_conversion_cast %[[D1]] : !llvm.ptr to !nvtma.tma_atom<store
// CHECK: nvtma.prefetch_descriptor %[[C0]]
// CHECK: nvtma.prefetch_descriptor %[[C1]]
// CHECK: nvtma.prefetch_descriptor %[[C2]]
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @two_atoms(%A: memref<256x256xf16>, %B: memref<256x256xf16>) kernel {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = l2_256b>
    %a2 = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = l2_256b>
    %b = nvtma.make_tiled_tma_atom %B {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<store, f16, box = [64, 64]>
    nvtma.prefetch_descriptor %a : !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = l2_256b>
    nvtma.prefetch_descriptor %a2 : !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = l2_256b>
    nvtma.prefetch_descriptor %b : !nvtma.tma_atom<store, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

// A kernel without atoms is left alone.
// CHECK-LABEL: gpu.func @none
// CHECK-NOT: nvtma.descriptor_params
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @none(%A: memref<256x256xf16>) kernel {
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
  gpu.func @device(%A: memref<256x256xf16>) {
    // expected-error @+1 {{must be in a gpu.func kernel (descriptors are kernel parameters), @device is not one}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}
