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
  let summary = "lower nvtma ops to NVVM and LLVM";
  let description = [{
    The lowering patterns, one per op (and the nvgpu mbarrier lowering in
    the same conversion): copies become `cp.async.bulk.tensor` /
    `cp.reduce.async.bulk.tensor` issued by one elected lane, descriptor
    management becomes `prefetch.tensormap`, `tensormap.replace` and the
    tensormap proxy fences, `tma_partition` and `create_tma_multicast_mask`
    become integer arithmetic. An atom is the generic pointer to its
    descriptor.

    Expects the atoms of kernels to be parameters already
    (`nvtma-materialize-descriptors`) and the target to have been checked
    (`nvtma-check-target`): this pass only lowers.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect",
  ];
}

#endif // NVTMA_CONVERSION_PASSES
