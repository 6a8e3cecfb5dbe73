/*===-- nvtma-c/Dialects.h - C API of the nvtma dialect ------------*- C -*-===*\
|*                                                                            *|
|* Part of the nvtma project, under the Apache License v2.0 with LLVM         *|
|* Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef NVTMA_C_DIALECTS_H
#define NVTMA_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(NVTMA, nvtma);

/* nvtma and every upstream dialect, interface, target and translation the
   lowering to a gpu.binary needs. */
MLIR_CAPI_EXPORTED void nvtmaRegisterAllDialects(MlirDialectRegistry registry);

/* The nvtma passes and pipelines and the upstream passes they use. */
MLIR_CAPI_EXPORTED void nvtmaRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* NVTMA_C_DIALECTS_H */
