//===- NVTMAToNVVM.h - nvtma to NVVM conversion -----------------*- C++ -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_CONVERSION_NVTMATONVVM_H
#define NVTMA_CONVERSION_NVTMATONVVM_H

#include "mlir/Pass/Pass.h"
#include <memory>

namespace mlir {
class LLVMTypeConverter;
class RewritePatternSet;
class ModuleOp;

namespace nvtma {

#define GEN_PASS_DECL
#include "nvtma/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nvtma/Conversion/Passes.h.inc"

/// Adds the nvtma type conversion (atoms become generic pointers) and the
/// lowering of every nvtma op to `patterns`.
void populateNVTMAToNVVMConversionPatterns(LLVMTypeConverter &converter,
                                           RewritePatternSet &patterns);

} // namespace nvtma
} // namespace mlir

#endif // NVTMA_CONVERSION_NVTMATONVVM_H
