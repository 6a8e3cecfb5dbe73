//===- RequireBlockSize.cpp - known block size becomes .reqntid -----------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// convert-gpu-to-nvvm turns a gpu.func's known_block_size into
// nvvm.maxntid (.maxntid: at most this many threads). nvtma kernels are
// compiled for exactly that block (the record's launch "block"), which PTX
// says with .reqntid; ptxas refuses both directives on one kernel.
//
//===----------------------------------------------------------------------===//

#include "nvtma/Dialect/NVTMA/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::nvtma {
#define GEN_PASS_DEF_NVTMAREQUIREBLOCKSIZE
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h.inc"
} // namespace mlir::nvtma

using namespace mlir;

namespace {

struct RequireBlockSize
    : mlir::nvtma::impl::NVTMARequireBlockSizeBase<RequireBlockSize> {
  using Base::Base;

  void runOnOperation() override {
    // What convert-gpu-to-nvvm copies known_block_size to.
    StringAttr known = StringAttr::get(
        &getContext(), gpu::GPUDialect::KnownBlockSizeAttrHelper::getNameStr());
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      auto size = func->getAttrOfType<DenseI32ArrayAttr>(known);
      if (!size || !func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
        return;
      func->removeAttr(NVVM::NVVMDialect::getMaxntidAttrName());
      func->setAttr(NVVM::NVVMDialect::getReqntidAttrName(), size);
    });
  }
};

} // namespace
