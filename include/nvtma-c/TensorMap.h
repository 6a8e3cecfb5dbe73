/*===-- nvtma-c/TensorMap.h - C ABI of the TMA descriptor encoder --*- C -*-===*\
|*                                                                            *|
|* Part of the nvtma project, under the Apache License v2.0 with LLVM         *|
|* Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception        *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* A plain C interface over nvtma::tensormap, built as its own small shared   *|
|* library (libnvtma_tensormap) so that the pure-Python runtime can load it   *|
|* with ctypes under any Python, without the MLIR extension.                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef NVTMA_C_TENSORMAP_H
#define NVTMA_C_TENSORMAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NVTMA_TENSORMAP_ABI_VERSION 1

#if defined(_WIN32)
#define NVTMA_TENSORMAP_API __declspec(dllexport)
#else
#define NVTMA_TENSORMAP_API __attribute__((visibility("default")))
#endif

/* Field for field the driver's arguments; enums hold CUDA's values. */
typedef struct nvtmaTensorMapParams {
  uint32_t mode; /* 0 tiled, 1 im2col */
  uint32_t dataType;
  uint32_t rank;
  uint32_t interleave;
  uint32_t swizzle;
  uint32_t l2Promotion;
  uint32_t oobFill;
  uint32_t channelsPerPixel;
  uint32_t pixelsPerColumn;
  uint32_t boxDim[5];
  uint32_t elementStrides[5];
  int32_t pixelBoxLowerCorner[3];
  int32_t pixelBoxUpperCorner[3];
  uint64_t globalAddress;
  uint64_t globalDim[5];
  uint64_t globalStrides[4];
} nvtmaTensorMapParams;

/* Result of a call: rule 0 is success; otherwise the broken rule, the index
   of the offending dimension (-1 if none), its value and a message. */
typedef struct nvtmaTensorMapStatus {
  uint32_t rule;
  int32_t index;
  int64_t value;
  char message[192];
} nvtmaTensorMapStatus;

NVTMA_TENSORMAP_API int nvtmaTensorMapAbiVersion(void);
NVTMA_TENSORMAP_API const char *nvtmaTensorMapRuleName(uint32_t rule);
NVTMA_TENSORMAP_API uint32_t nvtmaTensorMapNumRules(void);

/* Each returns 1 on success, 0 on failure (status says why); status may be
   NULL. sm is 90 or 100. */
NVTMA_TENSORMAP_API int nvtmaTensorMapValidate(const nvtmaTensorMapParams *params, uint32_t sm,
                           nvtmaTensorMapStatus *status);
NVTMA_TENSORMAP_API int nvtmaTensorMapEncode(const nvtmaTensorMapParams *params, uint32_t sm,
                         uint8_t out[128], nvtmaTensorMapStatus *status);
NVTMA_TENSORMAP_API int nvtmaTensorMapDecode(const uint8_t in[128], nvtmaTensorMapParams *out,
                         nvtmaTensorMapStatus *status);
NVTMA_TENSORMAP_API int nvtmaTensorMapReplaceAddress(uint8_t desc[128], uint64_t address,
                                 nvtmaTensorMapStatus *status);
/* Encodes n descriptors (params[i] -> out + 128*i); returns how many
   succeeded before the first failure (status describes it). */
NVTMA_TENSORMAP_API size_t nvtmaTensorMapEncodeBatch(const nvtmaTensorMapParams *params, size_t n,
                                 uint32_t sm, uint8_t *out,
                                 nvtmaTensorMapStatus *status);

#ifdef __cplusplus
}
#endif

#endif /* NVTMA_C_TENSORMAP_H */
