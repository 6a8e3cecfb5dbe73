/*===-- nvtma-c/Dialects.h - C API of the nvtma dialect ------------*- C -*-===*\
|*                                                                            *|
|* Part of the nvtma project, under the Apache License v2.0 with LLVM         *|
|* Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef NVTMA_C_DIALECTS_H
#define NVTMA_C_DIALECTS_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(NVTMA, nvtma);

/* nvtma and every upstream dialect, interface, target and translation the
   lowering to a gpu.binary needs. */
MLIR_CAPI_EXPORTED void nvtmaRegisterAllDialects(MlirDialectRegistry registry);

/* The nvtma passes and pipelines and the upstream passes they use. */
MLIR_CAPI_EXPORTED void nvtmaRegisterAllPasses(void);

/* Runs the input screen (nvtma/Support/InputScreen.h) over IR text. On
   failure calls `error` once with "line:column: error: message" and returns
   failure. */
MLIR_CAPI_EXPORTED MlirLogicalResult nvtmaScreenInput(MlirStringRef text,
                                                      MlirStringCallback error,
                                                      void *userData);

/* Checks options of the nvtma-to-ptx pipeline against the chips, PTX
   versions and opt levels LLVM's NVPTX backend takes (nvtma/Target/
   TargetInfo.h) and the binary formats. On failure calls `error` once with a
   message naming the value and the supported set and returns failure. */
MLIR_CAPI_EXPORTED MlirLogicalResult nvtmaVerifyPipelineOptions(
    MlirStringRef chip, MlirStringRef features, MlirStringRef format,
    int optLevel, MlirStringCallback error, void *userData);

/* Walks the gpu.modules of a parsed, verified module before the
   nvtma-to-ptx pipeline runs. A gpu.module's own #nvvm.target wins over the
   pipeline's options, so it is checked against the compile's chip and, where
   `optLevel` is 0-3 (not -1: the compile left it open), its opt level; a
   module with more than one, or with one and nvtma.link, is refused too.
   Then calls `library` once for each device library name the modules'
   nvtma.link lists ask for (the verifier checked the lists' form), and
   `linkedFile` once for each bitcode file their own targets' link lists
   name, in order, each once. Where a module is refused, calls `error` once
   with a message naming the module and the values, and returns failure
   (before any other callback). */
MLIR_CAPI_EXPORTED MlirLogicalResult nvtmaCheckGPUModules(
    MlirOperation module, MlirStringRef chip, int optLevel,
    MlirStringCallback library, MlirStringCallback linkedFile,
    MlirStringCallback error, void *userData);

/* Adds the nvtma-to-ptx pipeline to `pm` (a builtin.module pass manager),
   its options given directly rather than as pipeline text, so a `link` path
   (LLVM bitcode for gpu.modules marked nvtma.link) may hold any character.
   The chip, features, format and opt level must have passed
   nvtmaVerifyPipelineOptions. */
MLIR_CAPI_EXPORTED void nvtmaAddNVTMAToPTXPipeline(
    MlirOpPassManager pm, MlirStringRef chip, MlirStringRef features,
    MlirStringRef format, int optLevel, intptr_t numLink,
    const MlirStringRef *link);

/* The !nvtma.tma_atom type. Enum fields take the dialect's spellings
   ("swizzle_128b"); an empty tmaFormat, tile or elementStrides takes its
   default. Returns a null type, with the reason emitted as an error
   diagnostic on `context` (unknown spelling, or the verifier's rule), when
   the fields do not make an atom. */
MLIR_CAPI_EXPORTED MlirType nvtmaTmaAtomTypeGet(
    MlirContext context, MlirStringRef kind, MlirType elementType,
    MlirStringRef tmaFormat, intptr_t numBox, const int64_t *box,
    intptr_t numTile, const int64_t *tile, MlirStringRef swizzle,
    MlirStringRef l2Promotion, MlirStringRef interleave, MlirStringRef oobFill,
    intptr_t numElementStrides, const int64_t *elementStrides,
    unsigned multicast, unsigned ctaGroup, MlirStringRef reduction,
    intptr_t numLowerCorner, const int64_t *lowerCorner,
    intptr_t numUpperCorner, const int64_t *upperCorner);

/* Types and attributes of upstream dialects the DSL builds, which MLIR's
   Python bindings do not construct. */

/* #gpu.address_space<workgroup> */
MLIR_CAPI_EXPORTED MlirAttribute
nvtmaGPUWorkgroupAddressSpaceGet(MlirContext context);
/* !nvgpu.mbarrier.group of `numBarriers` in workgroup memory */
MLIR_CAPI_EXPORTED MlirType nvtmaNVGPUMBarrierGroupTypeGet(MlirContext context,
                                                           unsigned numBarriers);
/* !nvgpu.mbarrier.token */
MLIR_CAPI_EXPORTED MlirType nvtmaNVGPUMBarrierTokenTypeGet(MlirContext context);
/* #nvvm.shape<m, n, k> */
MLIR_CAPI_EXPORTED MlirAttribute nvtmaNVVMMMAShapeAttrGet(MlirContext context,
                                                          int m, int n, int k);
/* #nvvm.ld_st_matrix_shape<m, n> */
MLIR_CAPI_EXPORTED MlirAttribute
nvtmaNVVMLdStMatrixShapeAttrGet(MlirContext context, int m, int n);
/* #llvm.loop_annotation<unroll = ...>: count 0 for full unrolling, 1 to
   disable unrolling, n > 1 to unroll n times. */
MLIR_CAPI_EXPORTED MlirAttribute
nvtmaLLVMLoopUnrollAnnotationGet(MlirContext context, int64_t count);

/* The names of the attributes the kernel language sets, from the dialects
   that define them: gpu.container_module on the module, a kernel's
   known_cluster_size, nvtma.dynamic_smem, nvtma.pdl, nvtma.max_grid,
   nvtma.unsigned, a gpu.module's nvtma.link, and the loop annotation an
   scf.for passes on to the llvm.br of its latch. */
MLIR_CAPI_EXPORTED MlirStringRef nvtmaGPUContainerModuleAttrName(void);
MLIR_CAPI_EXPORTED MlirStringRef
nvtmaGPUKnownClusterSizeAttrName(MlirContext context);
MLIR_CAPI_EXPORTED MlirStringRef nvtmaDynamicSmemAttrName(void);
MLIR_CAPI_EXPORTED MlirStringRef nvtmaPdlAttrName(void);
MLIR_CAPI_EXPORTED MlirStringRef nvtmaLinkAttrName(void);
MLIR_CAPI_EXPORTED MlirStringRef nvtmaMaxGridAttrName(void);
MLIR_CAPI_EXPORTED MlirStringRef nvtmaUnsignedArgAttrName(void);
MLIR_CAPI_EXPORTED MlirStringRef
nvtmaLLVMLoopAnnotationAttrName(MlirContext context);

MLIR_CAPI_EXPORTED bool nvtmaTypeIsATmaAtom(MlirType type);

/* Bytes one TMA instruction / one nvtma.copy of the atom moves. */
MLIR_CAPI_EXPORTED int64_t nvtmaTmaAtomTypeGetBoxBytes(MlirType type);
MLIR_CAPI_EXPORTED int64_t nvtmaTmaAtomTypeGetTileBytes(MlirType type);

#ifdef __cplusplus
}
#endif

#endif /* NVTMA_C_DIALECTS_H */
