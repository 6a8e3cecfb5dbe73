//===- NVTMAOps.td - Python bindings of the nvtma dialect --*- tablegen -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef PYTHON_BINDINGS_NVTMA_OPS
#define PYTHON_BINDINGS_NVTMA_OPS

include "nvtma/Dialect/NVTMA/NVTMA.td"

#endif
