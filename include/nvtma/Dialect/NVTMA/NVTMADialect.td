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
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
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

    /// Name of the module attribute holding, as JSON, every kernel's
    /// parameters and launch configuration (the kernel records the runtime
    /// reads; written by nvtma-write-kernel-records).
    static constexpr ::llvm::StringLiteral getKernelRecordsAttrName() {
      return "nvtma.kernels";
    }
    /// The #nvtma.descriptor on a materialized descriptor parameter.
    static constexpr ::llvm::StringLiteral getDescriptorArgAttrName() {
      return "nvtma.descriptor";
    }
    /// On a kernel with descriptor parameters: their #nvtma.descriptor
    /// attributes in parameter order. They are the kernel's trailing
    /// parameters; the list outlives convert-gpu-to-nvvm, which drops
    /// argument attributes it does not know.
    static constexpr ::llvm::StringLiteral getDescriptorParamsAttrName() {
      return "nvtma.descriptor_params";
    }
    /// Bytes of dynamic shared memory a kernel needs (an integer, 0 if
    /// absent); the kernel record's launch "smem".
    static constexpr ::llvm::StringLiteral getDynamicSmemAttrName() {
      return "nvtma.dynamic_smem";
    }
    /// A unit attribute on a kernel written for programmatic dependent
    /// launch (it waits with griddepcontrol.wait before it reads what the
    /// stream's earlier kernels write); the kernel record's launch "pdl".
    static constexpr ::llvm::StringLiteral getPdlAttrName() {
      return "nvtma.pdl";
    }
    /// Unit attribute on an llvm.inline_asm, llvm.call or
    /// llvm.call_intrinsic: its LLVM IR call is convergent (the dialect's LLVM
    /// IR translation marks it), so LLVM does not make it control dependent
    /// on more values (warp-collective PTX).
    static constexpr ::llvm::StringLiteral getConvergentAttrName() {
      return "nvtma.convergent";
    }
    /// The most CTAs a grid of this kernel may have (a positive integer),
    /// where its work split is right only up to that many (32-bit share
    /// arithmetic); the kernel record's launch "max_grid", which the launch
    /// enforces.
    static constexpr ::llvm::StringLiteral getMaxGridAttrName() {
      return "nvtma.max_grid";
    }
    /// A unit argument attribute: this signless integer parameter holds an
    /// unsigned value (the kernel record's "signed": false, by which the
    /// launch bounds a Python int).
    static constexpr ::llvm::StringLiteral getUnsignedArgAttrName() {
      return "nvtma.unsigned";
    }
    /// On a gpu.module: the device libraries (names, strings) whose LLVM
    /// bitcode is linked into it before LLVM makes PTX ("nvshmem"; the
    /// compiler resolves each name to its file, the pipeline's link option).
    static constexpr ::llvm::StringLiteral getLinkAttrName() {
      return "nvtma.link";
    }
  }];
}

class NVTMA_Op<string mnemonic, list<Trait> traits = []>
    : Op<NVTMA_Dialect, mnemonic, traits>;

#endif // NVTMA_DIALECT
