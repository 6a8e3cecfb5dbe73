//===- AttachMissingTarget.cpp - default NVVM target for gpu.modules ------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "nvtma/Dialect/NVTMA/Transforms/Passes.h"
#include "nvtma/Target/TargetInfo.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::nvtma {
#define GEN_PASS_DEF_NVTMAATTACHMISSINGTARGET
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h.inc"
} // namespace mlir::nvtma

using namespace mlir;

namespace {

struct AttachMissingTarget
    : mlir::nvtma::impl::NVTMAAttachMissingTargetBase<AttachMissingTarget> {
  using Base::Base;

  // The options are checked once, before any module is touched: an
  // NVVMTargetAttr that LLVM cannot serve would end the process later.
  LogicalResult initialize(MLIRContext *ctx) override {
    std::string error;
    if (::nvtma::target::resolve(chip, features, optLevel, target, error))
      return success();
    return emitError(UnknownLoc::get(ctx))
           << "nvtma-attach-missing-target: " << error;
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    auto attr = NVVM::NVVMTargetAttr::get(
        ctx, target.optLevel, "nvptx64-nvidia-cuda", target.chip->name,
        target.features);
    getOperation().walk([&](gpu::GPUModuleOp module) {
      SmallVector<Attribute> targets;
      if (ArrayAttr old = module.getTargetsAttr()) {
        if (llvm::any_of(old, llvm::IsaPred<NVVM::NVVMTargetAttr>))
          return;
        targets.append(old.begin(), old.end());
      }
      targets.push_back(attr);
      module.setTargetsAttr(ArrayAttr::get(ctx, targets));
    });
  }

  ::nvtma::target::Resolved target;
};

} // namespace
