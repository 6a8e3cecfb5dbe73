//===- TensorMapC.cpp - C ABI of the TMA descriptor encoder ---------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "nvtma-c/TensorMap.h"
#include "nvtma/TensorMap/TensorMap.h"

#include <cstring>

using namespace nvtma::tensormap;

namespace {

Params fromC(const nvtmaTensorMapParams &c) {
  Params p;
  p.mode = static_cast<Mode>(c.mode);
  p.dataType = static_cast<DataType>(c.dataType);
  p.rank = c.rank;
  p.globalAddress = c.globalAddress;
  std::memcpy(p.globalDim, c.globalDim, sizeof(p.globalDim));
  std::memcpy(p.globalStrides, c.globalStrides, sizeof(p.globalStrides));
  std::memcpy(p.boxDim, c.boxDim, sizeof(p.boxDim));
  std::memcpy(p.pixelBoxLowerCorner, c.pixelBoxLowerCorner,
              sizeof(p.pixelBoxLowerCorner));
  std::memcpy(p.pixelBoxUpperCorner, c.pixelBoxUpperCorner,
              sizeof(p.pixelBoxUpperCorner));
  p.channelsPerPixel = c.channelsPerPixel;
  p.pixelsPerColumn = c.pixelsPerColumn;
  std::memcpy(p.elementStrides, c.elementStrides, sizeof(p.elementStrides));
  p.interleave = static_cast<Interleave>(c.interleave);
  p.swizzle = static_cast<Swizzle>(c.swizzle);
  p.l2Promotion = static_cast<L2Promotion>(c.l2Promotion);
  p.oobFill = static_cast<OOBFill>(c.oobFill);
  return p;
}

nvtmaTensorMapParams toC(const Params &p) {
  nvtmaTensorMapParams c;
  std::memset(&c, 0, sizeof(c));
  c.mode = static_cast<uint32_t>(p.mode);
  c.dataType = static_cast<uint32_t>(p.dataType);
  c.rank = p.rank;
  c.globalAddress = p.globalAddress;
  std::memcpy(c.globalDim, p.globalDim, sizeof(c.globalDim));
  std::memcpy(c.globalStrides, p.globalStrides, sizeof(c.globalStrides));
  std::memcpy(c.boxDim, p.boxDim, sizeof(c.boxDim));
  std::memcpy(c.pixelBoxLowerCorner, p.pixelBoxLowerCorner,
              sizeof(c.pixelBoxLowerCorner));
  std::memcpy(c.pixelBoxUpperCorner, p.pixelBoxUpperCorner,
              sizeof(c.pixelBoxUpperCorner));
  c.channelsPerPixel = p.channelsPerPixel;
  c.pixelsPerColumn = p.pixelsPerColumn;
  std::memcpy(c.elementStrides, p.elementStrides, sizeof(c.elementStrides));
  c.interleave = static_cast<uint32_t>(p.interleave);
  c.swizzle = static_cast<uint32_t>(p.swizzle);
  c.l2Promotion = static_cast<uint32_t>(p.l2Promotion);
  c.oobFill = static_cast<uint32_t>(p.oobFill);
  return c;
}

int finish(bool ok, const Diagnostic &d, nvtmaTensorMapStatus *status) {
  if (status) {
    status->rule = static_cast<uint32_t>(ok ? Rule::Ok : d.rule);
    status->index = ok ? -1 : d.index;
    status->value = ok ? 0 : d.value;
    std::memcpy(status->message, ok ? "" : d.message,
                ok ? 1 : sizeof(status->message));
  }
  return ok ? 1 : 0;
}

} // namespace

extern "C" {

int nvtmaTensorMapAbiVersion(void) { return NVTMA_TENSORMAP_ABI_VERSION; }

const char *nvtmaTensorMapRuleName(uint32_t rule) {
  return ruleName(static_cast<Rule>(rule));
}

uint32_t nvtmaTensorMapNumRules(void) {
  return static_cast<uint32_t>(Rule::NumRules);
}

int nvtmaTensorMapValidate(const nvtmaTensorMapParams *params, uint32_t sm,
                           nvtmaTensorMapStatus *status) {
  Diagnostic d;
  return finish(validate(fromC(*params), Target{sm}, &d), d, status);
}

int nvtmaTensorMapEncode(const nvtmaTensorMapParams *params, uint32_t sm,
                         uint8_t out[128], nvtmaTensorMapStatus *status) {
  Diagnostic d;
  return finish(encode(fromC(*params), Target{sm}, out, &d), d, status);
}

int nvtmaTensorMapDecode(const uint8_t in[128], nvtmaTensorMapParams *out,
                         nvtmaTensorMapStatus *status) {
  Diagnostic d;
  Params p;
  bool ok = decode(in, p, &d);
  if (ok)
    *out = toC(p);
  return finish(ok, d, status);
}

int nvtmaTensorMapReplaceAddress(uint8_t desc[128], uint64_t address,
                                 nvtmaTensorMapStatus *status) {
  Diagnostic d;
  return finish(replaceAddress(desc, address, &d), d, status);
}

size_t nvtmaTensorMapEncodeBatch(const nvtmaTensorMapParams *params, size_t n,
                                 uint32_t sm, uint8_t *out,
                                 nvtmaTensorMapStatus *status) {
  Diagnostic d;
  for (size_t i = 0; i < n; ++i)
    if (!encode(fromC(params[i]), Target{sm}, out + 128 * i, &d)) {
      finish(false, d, status);
      return i;
    }
  finish(true, d, status);
  return n;
}

} // extern "C"
