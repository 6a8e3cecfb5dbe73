//===- NVTMA.td - nvtma dialect, all definitions -----------*- tablegen -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_TD
#define NVTMA_TD

include "nvtma/Dialect/NVTMA/NVTMADialect.td"
include "nvtma/Dialect/NVTMA/NVTMAEnums.td"
include "nvtma/Dialect/NVTMA/NVTMATypes.td"
include "nvtma/Dialect/NVTMA/NVTMAAttrs.td"
include "nvtma/Dialect/NVTMA/NVTMAOps.td"

#endif // NVTMA_TD
