//===- NVTMADialect.cpp - nvtma dialect -----------------------------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "nvtma/Dialect/NVTMA/NVTMADialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nvtma;

#include "nvtma/Dialect/NVTMA/NVTMAOpsDialect.cpp.inc"
#include "nvtma/Dialect/NVTMA/NVTMAOpsEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "nvtma/Dialect/NVTMA/NVTMAOpsAttrs.cpp.inc"

void NVTMADialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "nvtma/Dialect/NVTMA/NVTMAOps.cpp.inc"
      >();
  registerTypes();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "nvtma/Dialect/NVTMA/NVTMAOpsAttrs.cpp.inc"
      >();
}

Operation *NVTMADialect::materializeConstant(OpBuilder &builder, Attribute value,
                                             Type type, Location loc) {
  if (auto i = dyn_cast<IntegerAttr>(value))
    return arith::ConstantOp::create(builder, loc, type, i);
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

/// The most dynamic shared memory one CTA may use on sm_90 and sm_100.
static constexpr int64_t kMaxDynamicSmem = 227 * 1024;

LogicalResult NVTMADialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name == getKernelRecordsAttrName()) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << name << " must be a string (the kernel "
                             << "records, JSON), got " << attr.getValue();
    return success();
  }
  if (name == getDynamicSmemAttrName()) {
    auto i = dyn_cast<IntegerAttr>(attr.getValue());
    if (!i || !i.getType().isSignlessInteger())
      return op->emitError() << name << " must be a signless integer (bytes "
                             << "of dynamic shared memory), got "
                             << attr.getValue();
    if (i.getValue().getSignificantBits() > 64 || i.getInt() < 0 ||
        i.getInt() > kMaxDynamicSmem)
      return op->emitError() << name << " is "
                             << llvm::toString(i.getValue(), 10, true)
                             << " bytes, the range is 0.." << kMaxDynamicSmem
                             << " (227 KiB)";
    return success();
  }
  if (name == getPdlAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << name << " is a unit attribute (the kernel is "
                             << "launched with programmatic dependent launch), "
                             << "got " << attr.getValue();
    return success();
  }
  if (name == getMaxGridAttrName()) {
    auto i = dyn_cast<IntegerAttr>(attr.getValue());
    if (!i || !i.getType().isSignlessInteger())
      return op->emitError() << name << " must be a signless integer (the "
                             << "most CTAs a grid may have), got "
                             << attr.getValue();
    if (i.getValue().getSignificantBits() > 64 || i.getInt() < 1)
      return op->emitError() << name << " is "
                             << llvm::toString(i.getValue(), 10, true)
                             << ", a grid's CTA limit is at least 1";
    return success();
  }
  if (name == getLinkAttrName()) {
    auto list = dyn_cast<ArrayAttr>(attr.getValue());
    if (!isa<gpu::GPUModuleOp>(op))
      return op->emitError() << name << " belongs on a gpu.module (the "
                             << "device libraries linked into it), not on '"
                             << op->getName() << "'";
    if (!list || list.empty() ||
        !llvm::all_of(list, [](Attribute a) {
          auto s = dyn_cast<StringAttr>(a);
          return s && !s.getValue().empty();
        }))
      return op->emitError() << name << " must list device library names "
                             << "(non-empty strings, like \"nvshmem\"), got "
                             << attr.getValue();
    return success();
  }
  if (name == getConvergentAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << name << " is a unit attribute (the LLVM IR "
                             << "call is convergent), got " << attr.getValue();
    if (!isa<LLVM::InlineAsmOp, LLVM::CallOp, LLVM::CallIntrinsicOp>(op))
      return op->emitError() << name << " belongs on an llvm.inline_asm, "
                             << "llvm.call or llvm.call_intrinsic (ops that "
                             << "translate to a call), not on '"
                             << op->getName() << "'";
    return success();
  }
  if (name == getDescriptorParamsAttrName()) {
    auto list = dyn_cast<ArrayAttr>(attr.getValue());
    if (!list || !llvm::all_of(list, llvm::IsaPred<DescriptorAttr>))
      return op->emitError() << name << " must list #nvtma.descriptor "
                             << "attributes, got " << attr.getValue();
    return success();
  }
  return success();
}

LogicalResult NVTMADialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned region,
                                                     unsigned index,
                                                     NamedAttribute attr) {
  if (attr.getName() != getDescriptorArgAttrName())
    return success();
  auto desc = dyn_cast<DescriptorAttr>(attr.getValue());
  if (!desc)
    return op->emitError() << attr.getName() << " on argument " << index
                           << " must be a #nvtma.descriptor, got "
                           << attr.getValue();
  auto func = dyn_cast<gpu::GPUFuncOp>(op);
  if (!func || region != 0)
    return op->emitError() << attr.getName() << " is for gpu.func kernel "
                           << "parameters";
  if (!isa<LLVM::LLVMPointerType>(func.getArgumentTypes()[index]))
    return op->emitError() << "descriptor parameter " << index
                           << " must be an !llvm.ptr, it is "
                           << func.getArgumentTypes()[index];
  if (desc.getBinds() >= func.getNumArguments() ||
      !isa<MemRefType>(func.getArgumentTypes()[desc.getBinds()]))
    return op->emitError() << "descriptor parameter " << index << " binds "
                           << "argument " << desc.getBinds()
                           << ", which is not a memref parameter";
  return success();
}
