//===- NVTMAToLLVMIRTranslation.cpp - nvtma attributes in LLVM IR ---------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "nvtma/Target/LLVMIR/NVTMAToLLVMIRTranslation.h"
#include "nvtma/Dialect/NVTMA/NVTMADialect.h"

#include "mlir/Target/LLVMIR/LLVMTranslationInterface.h"
#include "llvm/IR/Instructions.h"

using namespace mlir;

namespace {
/// Amends the LLVM IR of ops carrying nvtma's discardable attributes; the
/// others (nvtma.align, the records) say nothing to LLVM.
struct NVTMATranslationInterface : LLVMTranslationDialectInterface {
  using LLVMTranslationDialectInterface::LLVMTranslationDialectInterface;
  LogicalResult
  amendOperation(Operation *op, ArrayRef<llvm::Instruction *> instructions,
                 NamedAttribute attribute,
                 LLVM::ModuleTranslation &) const final {
    if (attribute.getName() != mlir::nvtma::NVTMADialect::getConvergentAttrName())
      return success();
    bool marked = false;
    for (llvm::Instruction *inst : instructions)
      if (auto *call = dyn_cast<llvm::CallInst>(inst)) {
        call->addFnAttr(llvm::Attribute::Convergent);
        marked = true;
      }
    if (!marked)
      return op->emitOpError() << attribute.getName().getValue()
                               << " on an op that translates to no call";
    return success();
  }
};
} // namespace

void mlir::nvtma::registerNVTMADialectTranslation(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, NVTMADialect *dialect) {
    dialect->addInterfaces<NVTMATranslationInterface>();
  });
}
