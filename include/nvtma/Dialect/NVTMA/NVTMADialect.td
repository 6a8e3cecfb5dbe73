//===- NVTMADialect.td - nvtma dialect definition ----------*- tablegen -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_DIALECT
#define NVTMA_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def NVTMA_Dialect : Dialect {
  let name = "nvtma";
  let cppNamespace = "::mlir::nvtma";
  let summary = "Async copies through NVIDIA's Tensor Memory Accelerator";
  let description = [{
    Every field of the 128-byte TMA descriptor is first-class here: the copy
    atom type `!nvtma.tma_atom` carries the data format, box, swizzle, L2
    promotion, interleave, out-of-bounds fill, element strides, multicast
    factor and CTA group, and its verifier checks them with the same rules the
    CUDA driver enforces (`nvtma::tensormap::validate`).

    Shapes and coordinates are written in MLIR order, outermost dimension
    first, like memref shapes; the descriptor lists dimensions innermost
    first, and the lowering reverses them.

    mbarriers, elect and plain fences come from upstream (`nvgpu`, `nvvm`);
    this dialect adds what upstream lacks: descriptor-carrying atoms, tiled
    and im2col copies with the atom's fields, descriptor management and the
    bulk / DSMEM copies of CuTe's `cpasync`.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect",
  ];
  let extraClassDeclaration = [{
    /// Adds the types (defined with their storage in NVTMATypes.cpp).
    void registerTypes();

    /// Name of the module attribute holding, as JSON, how to build each
    /// kernel's descriptor parameters (written by convert-nvtma-to-nvvm).
    static constexpr ::llvm::StringLiteral getKernelRecordsAttrName() {
      return "nvtma.kernels";
    }
    /// Marker on materialized descriptor parameters of a gpu.func.
    static constexpr ::llvm::StringLiteral getDescriptorArgAttrName() {
      return "nvtma.descriptor";
    }
  }];
}

class NVTMA_Op<string mnemonic, list<Trait> traits = []>
    : Op<NVTMA_Dialect, mnemonic, traits>;

#endif // NVTMA_DIALECT
