//===- NVTMADialect.cpp - nvtma dialect -----------------------------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "nvtma/Dialect/NVTMA/NVTMADialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
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
