// RUN: nvtma-opt %s -nvtma-finalize-descriptor-params -split-input-file -verify-diagnostics | FileCheck %s

// After convert-gpu-to-nvvm (which dropped llvm.byval and the
// #nvtma.descriptor), the trailing parameters the kernel's
// nvtma.descriptor_params lists become 128-byte grid constants.
// CHECK-LABEL: llvm.func @k
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: i64,
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
llvm.func @k(%p: !llvm.ptr, %n: i64, %d0: !llvm.ptr {llvm.align = 64 : i64}, %d1: !llvm.ptr {llvm.align = 64 : i64})
    attributes {nvvm.kernel, nvtma.descriptor_params = [
      #nvtma.descriptor<binds = 0, atom = !nvtma.tma_atom<load, f16, box = [64, 64]>>,
      #nvtma.descriptor<binds = 0, atom = !nvtma.tma_atom<store, f16, box = [64, 64]>>]} {
  llvm.return
}

// -----

// A parameter that is not what materialization made is an error, not a
// silently wrong ABI.
// expected-error @+1 {{parameter 1 should be a descriptor (an !llvm.ptr with llvm.align = 64), it is 'i64'}}
llvm.func @k(%p: !llvm.ptr, %n: i64)
    attributes {nvvm.kernel, nvtma.descriptor_params = [#nvtma.descriptor<binds = 0, atom = !nvtma.tma_atom<load, f16, box = [64, 64]>>]} {
  llvm.return
}

// -----

// expected-error @+1 {{has 0 parameters, its nvtma.descriptor_params lists 1 descriptors}}
llvm.func @k() attributes {nvvm.kernel, nvtma.descriptor_params = [#nvtma.descriptor<binds = 0, atom = !nvtma.tma_atom<load, f16, box = [64, 64]>>]} {
  llvm.return
}
