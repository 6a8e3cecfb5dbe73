//===- ExternDynamicSharedMemory.cpp - dynamic shared memory linkage ------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// convert-gpu-to-nvvm lowers gpu.dynamic_shared_memory to an internal
// zero-length shared global. NVPTX demotes that to a static `.shared`
// variable of the kernel ("has been demoted"): the kernel's "dynamic" buffer
// then starts at the static shared variables (mbarriers among them) instead
// of after them, and its end runs past the CTA's allocation. A dynamic
// buffer is PTX's `.extern .shared .b8 name[]`: external linkage. Its
// alignment is raised to 1024 bytes, what a 128-byte-swizzled TMA tile
// needs, so any offset that is a multiple of 1024 is such a tile's address.
//
//===----------------------------------------------------------------------===//

#include "nvtma/Dialect/NVTMA/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::nvtma {
#define GEN_PASS_DEF_NVTMAEXTERNDYNAMICSHAREDMEMORY
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h.inc"
} // namespace mlir::nvtma

using namespace mlir;

namespace {

constexpr uint64_t kAlignment = 1024;

/// The shape upstream gives the buffer: a shared, zero-length array of
/// bytes without an initializer.
bool isDynamicSharedMemory(LLVM::GlobalOp global) {
  auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
  return global.getAddrSpace() ==
             static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) &&
         array && array.getNumElements() == 0 && !global.getValueOrNull() &&
         global.getInitializerRegion().empty() &&
         global.getSymName().starts_with("__dynamic_shmem__");
}

struct ExternDynamicSharedMemory
    : mlir::nvtma::impl::NVTMAExternDynamicSharedMemoryBase<
          ExternDynamicSharedMemory> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([](LLVM::GlobalOp global) {
      if (!isDynamicSharedMemory(global))
        return;
      global.setLinkage(LLVM::Linkage::External);
      global.setVisibility_(LLVM::Visibility::Default);
      if (global.getAlignment().value_or(0) < kAlignment)
        global.setAlignment(kAlignment);
    });
  }
};

} // namespace
