//===- NVTMADialect.h - nvtma dialect ---------------------------*- C++ -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_DIALECT_NVTMA_NVTMADIALECT_H
#define NVTMA_DIALECT_NVTMA_NVTMADIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "nvtma/Dialect/NVTMA/NVTMAOpsDialect.h.inc"
#include "nvtma/Dialect/NVTMA/NVTMAOpsEnums.h.inc"

namespace mlir::nvtma {
/// `[1, 2, 3]` (the atom type's list fields).
FailureOr<SmallVector<int64_t>> parseIntList(AsmParser &parser);
void printIntList(AsmPrinter &printer, ArrayRef<int64_t> values);
} // namespace mlir::nvtma

#define GET_TYPEDEF_CLASSES
#include "nvtma/Dialect/NVTMA/NVTMAOpsTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "nvtma/Dialect/NVTMA/NVTMAOpsAttrs.h.inc"

#define GET_OP_CLASSES
#include "nvtma/Dialect/NVTMA/NVTMAOps.h.inc"

namespace nvtma::tensormap {
struct Params;
} // namespace nvtma::tensormap

namespace mlir::nvtma {

/// Fills `params` with the atom's static descriptor fields, reversed to the
/// descriptor's innermost-first order. `globalShape` / `globalStrides`
/// (elements, outermost first; ShapedType::kDynamic where unknown) fill the
/// tensor fields; unknown ones get placeholders that satisfy every rule, so
/// validating the result checks exactly what is static.
void fillDescriptorParams(TmaAtomType atom, ArrayRef<int64_t> globalShape,
                          ArrayRef<int64_t> globalStrides,
                          ::nvtma::tensormap::Params &params);

/// Runs the driver's rules (nvtma::tensormap::validate) on the atom and the
/// static parts of its tensor; emits the broken rule through `emitError`.
LogicalResult verifyDescriptor(TmaAtomType atom, ArrayRef<int64_t> globalShape,
                               ArrayRef<int64_t> globalStrides, unsigned sm,
                               function_ref<InFlightDiagnostic()> emitError);

/// The sm version of the nearest enclosing gpu.module's NVVM target (90 for
/// "sm_90a"), and whether it has the architecture-specific "a" suffix.
/// std::nullopt when there is no NVVM target.
std::optional<std::pair<unsigned, bool>> getTargetSM(Operation *op);

/// Why copies with `atom` cannot be selected for sm_`sm` (`archSpecific`: a
/// chip with the a or f suffix) with PTX ISA `ptx` (0: not known), or ""
/// when they can.
std::string blackwellTmaFamilyError(TmaAtomType atom, unsigned sm,
                                    bool archSpecific, unsigned ptx = 0);

/// Whether MLIR can compute the strides of `type`: for an identity layout
/// it multiplies the static sizes from the innermost in int64 and asserts
/// (ending the process) on overflow, e.g. memref<256x1099511627776x256x4096xf16>.
bool hasComputableStrides(MemRefType type);

/// getStridesAndOffset that cannot assert: fails for memrefs whose strides
/// MLIR cannot compute (see hasComputableStrides) and non-strided layouts.
LogicalResult getStridesAndOffsetChecked(MemRefType type,
                                         SmallVectorImpl<int64_t> &strides,
                                         int64_t &offset);

/// The mask create_tma_multicast_mask makes: `pattern` (one bit per CTA
/// along `mode`) shifted left by sum(coords[d] * strides[d]), the rank of the
/// CTA whose coordinate along `mode` is 0 (strides[mode] is 0). The folder
/// and the lowering both build the mask from this.
struct MulticastMaskLayout {
  uint32_t pattern = 0;
  SmallVector<int64_t> strides;
};
MulticastMaskLayout getMulticastMaskLayout(ArrayRef<int64_t> clusterShape,
                                           int64_t mode);

/// Number of bytes of an element of `type` (fractions for sub-byte types are
/// rounded up; only used for diagnostics and byte counts of whole tiles).
int64_t getElementBitWidth(Type type);

} // namespace mlir::nvtma

#endif // NVTMA_DIALECT_NVTMA_NVTMADIALECT_H
