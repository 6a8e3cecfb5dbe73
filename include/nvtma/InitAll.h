//===- InitAll.h - register nvtma and what it lowers through ----*- C++ -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_INITALL_H
#define NVTMA_INITALL_H

namespace mlir {
class DialectRegistry;
namespace nvtma {

/// nvtma plus the upstream dialects, interfaces, NVVM target and LLVM IR
/// translations needed to go from nvtma to a gpu.binary.
void registerAllDialects(DialectRegistry &registry);

/// The nvtma passes and pipelines plus the upstream passes they use. Safe to
/// call more than once.
void registerAllPasses();

} // namespace nvtma
} // namespace mlir

#endif // NVTMA_INITALL_H
