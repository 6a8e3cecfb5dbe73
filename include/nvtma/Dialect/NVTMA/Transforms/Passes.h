//===- Passes.h - nvtma transformation passes -------------------*- C++ -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_DIALECT_NVTMA_TRANSFORMS_PASSES_H
#define NVTMA_DIALECT_NVTMA_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"
#include <memory>
#include <string>

namespace mlir {
class ModuleOp;
namespace nvtma {

#define GEN_PASS_DECL
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h.inc"

} // namespace nvtma
} // namespace mlir

#endif // NVTMA_DIALECT_NVTMA_TRANSFORMS_PASSES_H
