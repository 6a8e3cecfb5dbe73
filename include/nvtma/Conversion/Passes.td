//===- Passes.td - nvtma conversion passes -----------------*- tablegen -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_CONVERSION_PASSES
#define NVTMA_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertNVTMAToNVVM : Pass<"convert-nvtma-to-nvvm", "ModuleOp"> {
  let summary = "lower nvtma ops to NVVM and materialize TMA descriptors";
  let description = [{
    For every `gpu.func` kernel, turns each `nvtma.make_tiled_tma_atom` into
    a 128-byte, 64-byte-aligned `__grid_constant__` parameter
    (`!llvm.ptr {llvm.byval = !llvm.array<128 x i8>, llvm.align = 64,
    nvvm.grid_constant}`) appended to the kernel, and records in the module
    attribute `nvtma.kernels` (JSON) every kernel's parameters and, for each
    descriptor, the tensor argument it binds and every static field of its
    atom (tma_format, box, swizzle, l2_promotion, interleave, oob_fill,
    element strides). When the tensor is fully static the record carries the
    descriptor pre-encoded with address 0, so a launcher only patches the
    address.

    Then lowers every nvtma op to NVVM / LLVM (and the nvgpu mbarrier ops
    with them). Run `nvtma-check-target` first: what the target cannot run
    is diagnosed there, before LLVM sees it.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect",
  ];
}

#endif // NVTMA_CONVERSION_PASSES
