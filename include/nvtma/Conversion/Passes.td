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
    with them). The architecture (`sm`) and PTX ISA (`ptx`) come from the
    gpu.module's `#nvvm.target` unless given; features the target cannot
    run are diagnosed here, before LLVM sees them.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect",
  ];
  let options = [
    Option<"sm", "sm", "unsigned", "0",
           "SM version to lower for (0: the gpu.module's NVVM target)">,
    Option<"ptx", "ptx", "unsigned", "0",
           "PTX ISA version times 10 (0: from the target's +ptxNN feature)">,
  ];
}

#endif // NVTMA_CONVERSION_PASSES
