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
#include "llvm/Support/JSON.h"

namespace mlir::nvtma {
#define GEN_PASS_DEF_NVTMAFINALIZEDESCRIPTORPARAMS
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h.inc"
} // namespace mlir::nvtma

using namespace mlir;

namespace {

struct FinalizeDescriptorParams
    : mlir::nvtma::impl::NVTMAFinalizeDescriptorParamsBase<FinalizeDescriptorParams> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto records = module->getAttrOfType<StringAttr>(
        mlir::nvtma::NVTMADialect::getKernelRecordsAttrName());
    if (!records)
      return;
    auto parsed = llvm::json::parse(records.getValue());
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      module.emitError() << "nvtma.kernels is not valid JSON";
      return signalPassFailure();
    }
    const llvm::json::Object *kernels =
        parsed->getAsObject() ? parsed->getAsObject()->getObject("kernels")
                              : nullptr;
    if (!kernels)
      return;
    Builder b(&getContext());
    WalkResult result = module.walk([&](LLVM::LLVMFuncOp func) {
      const llvm::json::Object *kernel = kernels->getObject(func.getName());
      if (!kernel || !func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
        return WalkResult::advance();
      unsigned numDescs = 0;
      if (const llvm::json::Array *params = kernel->getArray("params"))
        for (const llvm::json::Value &p : *params)
          if (const llvm::json::Object *o = p.getAsObject())
            if (o->getString("kind") == "descriptor")
              ++numDescs;
      unsigned n = func.getNumArguments();
      if (numDescs > n) {
        func.emitError() << "has " << n << " parameters, its nvtma record "
                         << "lists " << numDescs << " descriptors";
        return WalkResult::interrupt();
      }
      for (unsigned i = n - numDescs; i < n; ++i) {
        if (!isa<LLVM::LLVMPointerType>(func.getArgumentTypes()[i])) {
          func.emitError() << "parameter " << i << " should be a descriptor "
                           << "pointer, it is " << func.getArgumentTypes()[i];
          return WalkResult::interrupt();
        }
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), 128)));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(64));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                        b.getUnitAttr());
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
