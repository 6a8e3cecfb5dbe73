//===- NVTMAToLLVMIRTranslation.h - nvtma attributes in LLVM IR -*- C++ -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the nvtma dialect's discardable attributes on LLVM-dialect ops become
// when the module is translated to LLVM IR.
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_TARGET_LLVMIR_NVTMATOLLVMIRTRANSLATION_H
#define NVTMA_TARGET_LLVMIR_NVTMATOLLVMIRTRANSLATION_H

namespace mlir {
class DialectRegistry;
namespace nvtma {

/// `nvtma.convergent` on an `llvm.inline_asm` (which has no attribute of its
/// own for it) makes the LLVM IR call convergent, as clang makes every inline
/// asm in CUDA device code: LLVM then neither duplicates the warp-collective
/// PTX into paths that split the warp nor sinks it past a branch's end.
void registerNVTMADialectTranslation(DialectRegistry &registry);

} // namespace nvtma
} // namespace mlir

#endif // NVTMA_TARGET_LLVMIR_NVTMATOLLVMIRTRANSLATION_H
