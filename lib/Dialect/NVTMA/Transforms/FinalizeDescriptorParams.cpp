//===- FinalizeDescriptorParams.cpp - descriptor parameter ABI ------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "nvtma/Dialect/NVTMA/NVTMADialect.h"
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::nvtma {
#define GEN_PASS_DEF_NVTMAFINALIZEDESCRIPTORPARAMS
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h.inc"
} // namespace mlir::nvtma

using namespace mlir;
using namespace mlir::nvtma;

namespace {

/// The descriptor parameters of a lowered kernel: the trailing parameters
/// listed by its nvtma.descriptor_params (materialization appends them),
/// each still an !llvm.ptr with the llvm.align 64 materialization gave it.
LogicalResult finalize(LLVM::LLVMFuncOp func, ArrayAttr descriptors) {
  Builder b(func.getContext());
  unsigned n = func.getNumArguments(), k = descriptors.size();
  if (k > n)
    return func.emitError() << "has " << n << " parameters, its "
                            << NVTMADialect::getDescriptorParamsAttrName()
                            << " lists " << k << " descriptors";
  for (unsigned i = n - k; i < n; ++i) {
    auto align = func.getArgAttrOfType<IntegerAttr>(
        i, LLVM::LLVMDialect::getAlignAttrName());
    if (!isa<LLVM::LLVMPointerType>(func.getArgumentTypes()[i]) || !align ||
        align.getValue() != 64) // any width (getInt asserts on ui32, i128)
      return func.emitError()
             << "parameter " << i << " should be a descriptor (an !llvm.ptr "
             << "with llvm.align = 64), it is " << func.getArgumentTypes()[i];
    func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                    TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), 128)));
    func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                    b.getUnitAttr());
  }
  return success();
}

struct FinalizeDescriptorParams
    : mlir::nvtma::impl::NVTMAFinalizeDescriptorParamsBase<
          FinalizeDescriptorParams> {
  using Base::Base;

  void runOnOperation() override {
    WalkResult walk = getOperation().walk([](LLVM::LLVMFuncOp func) {
      auto descriptors = func->getAttrOfType<ArrayAttr>(
          NVTMADialect::getDescriptorParamsAttrName());
      if (!descriptors ||
          !func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
        return WalkResult::advance();
      return failed(finalize(func, descriptors)) ? WalkResult::interrupt()
                                                 : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
