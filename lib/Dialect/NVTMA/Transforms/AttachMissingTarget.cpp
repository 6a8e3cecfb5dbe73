//===- AttachMissingTarget.cpp - default NVVM target for gpu.modules ------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "nvtma/Dialect/NVTMA/NVTMADialect.h"
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
    auto targetWith = [&](ArrayAttr files) {
      return NVVM::NVVMTargetAttr::get(ctx, target.optLevel,
                                       "nvptx64-nvidia-cuda",
                                       target.chip->name, target.features,
                                       /*targetFlags=*/nullptr, files);
    };
    SmallVector<Attribute> files;
    for (const std::string &path : link)
      files.push_back(StringAttr::get(ctx, path));
    NVVM::NVVMTargetAttr plain = targetWith(nullptr);
    NVVM::NVVMTargetAttr linked =
        files.empty() ? plain : targetWith(ArrayAttr::get(ctx, files));
    bool failed = false;
    getOperation().walk([&](gpu::GPUModuleOp module) {
      Attribute wants = module->getAttr(kLinkAttr);
      SmallVector<Attribute> targets;
      if (ArrayAttr old = module.getTargetsAttr()) {
        if (llvm::any_of(old, llvm::IsaPred<NVVM::NVVMTargetAttr>)) {
          if (wants) {
            module.emitError() << "has its own #nvvm.target and " << kLinkAttr
                               << " = " << wants
                               << ": list the bitcode in that target's link "
                                  "parameter instead";
            failed = true;
          }
          return;
        }
        targets.append(old.begin(), old.end());
      }
      if (wants && files.empty()) {
        module.emitError() << "asks for device libraries " << kLinkAttr
                           << " = " << wants
                           << ", but no bitcode was given to link (the "
                              "pipeline's link option)";
        failed = true;
        return;
      }
      targets.push_back(wants ? linked : plain);
      module.setTargetsAttr(ArrayAttr::get(ctx, targets));
    });
    if (failed)
      signalPassFailure();
  }

  static constexpr llvm::StringLiteral kLinkAttr =
      mlir::nvtma::NVTMADialect::getLinkAttrName();

  ::nvtma::target::Resolved target;
};

} // namespace
