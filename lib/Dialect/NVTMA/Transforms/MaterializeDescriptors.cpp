//===- MaterializeDescriptors.cpp - atoms become kernel parameters --------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A TMA descriptor is built on the host (nvtma.tensormap or the driver) and
// passed by value: each nvtma.make_tiled_tma_atom of a kernel becomes a
// parameter that carries its atom and the argument it binds as a typed
// #nvtma.descriptor attribute.
//
//===----------------------------------------------------------------------===//

#include "nvtma/Dialect/NVTMA/NVTMADialect.h"
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::nvtma {
#define GEN_PASS_DEF_NVTMAMATERIALIZEDESCRIPTORS
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h.inc"
} // namespace mlir::nvtma

using namespace mlir;
using namespace mlir::nvtma;

namespace {

/// Replaces each make_tiled_tma_atom of `func` by a parameter, one per
/// distinct (tensor argument, atom type), appended after the others.
LogicalResult materialize(gpu::GPUFuncOp func) {
  MLIRContext *ctx = func.getContext();
  SmallVector<MakeTiledTmaAtomOp> makes;
  func.walk([&](MakeTiledTmaAtomOp op) { makes.push_back(op); });
  if (makes.empty())
    return success();
  if (!func.isKernel())
    return makes.front().emitOpError()
           << "must be in a gpu.func kernel (descriptors are kernel "
              "parameters), @"
           << func.getName() << " is not one";
  Builder b(ctx);
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  SmallVector<Attribute> descriptors;
  llvm::DenseMap<std::pair<unsigned, Type>, BlockArgument> made;
  for (MakeTiledTmaAtomOp op : makes) {
    auto arg = dyn_cast<BlockArgument>(op.getTensor());
    if (!arg || arg.getOwner() != &func.getBody().front())
      return op.emitOpError()
             << "the tensor must be an argument of the enclosing kernel, so "
                "that the launcher knows which tensor the descriptor "
                "describes";
    TmaAtomType atom = op.getAtom().getType();
    auto key = std::make_pair(arg.getArgNumber(), Type(atom));
    BlockArgument param = made.lookup(key);
    if (!param) {
      auto desc = DescriptorAttr::get(ctx, arg.getArgNumber(), atom);
      NamedAttrList attrs;
      attrs.set(LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(64));
      attrs.set(NVTMADialect::getDescriptorArgAttrName(), desc);
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(index, ptrType, attrs.getDictionary(ctx),
                                     op.getLoc())))
        return op.emitOpError() << "could not add the descriptor parameter";
      param = func.getArgument(index);
      made[key] = param;
      descriptors.push_back(desc);
    }
    OpBuilder builder(op);
    auto cast = UnrealizedConversionCastOp::create(builder, op.getLoc(), atom,
                                                   ValueRange{param});
    op.getAtom().replaceAllUsesWith(cast.getResult(0));
    op.erase();
  }
  // Descriptors made by an earlier run stay in front of these.
  if (auto old = func->getAttrOfType<ArrayAttr>(
          NVTMADialect::getDescriptorParamsAttrName()))
    descriptors.insert(descriptors.begin(), old.begin(), old.end());
  func->setAttr(NVTMADialect::getDescriptorParamsAttrName(),
                ArrayAttr::get(ctx, descriptors));
  return success();
}

struct MaterializeDescriptors
    : mlir::nvtma::impl::NVTMAMaterializeDescriptorsBase<
          MaterializeDescriptors> {
  using Base::Base;

  void runOnOperation() override {
    WalkResult walk = getOperation().walk([](gpu::GPUFuncOp func) {
      return failed(materialize(func)) ? WalkResult::interrupt()
                                       : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
