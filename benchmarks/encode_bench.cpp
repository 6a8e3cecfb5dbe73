//===- encode_bench.cpp - nvtma encoder vs cuTensorMapEncodeTiled ---------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Encodes the same descriptor a million times with each encoder and prints
// one JSON line per encoder (ns per descriptor), after checking that both
// produce the same bytes.
//   g++ -O2 -std=c++17 -Iinclude benchmarks/encode_bench.cpp
//       lib/TensorMap/TensorMap.cpp -lcuda -o encode_bench
//
//===----------------------------------------------------------------------===//

#include "nvtma/TensorMap/TensorMap.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda.h>

using namespace nvtma::tensormap;

int main() {
  if (cuInit(0) != CUDA_SUCCESS) {
    std::printf("{\"error\":\"cuInit failed\"}\n");
    return 1;
  }
  CUdevice dev;
  CUcontext ctx;
  cuDeviceGet(&dev, 0);
  cuDevicePrimaryCtxRetain(&ctx, dev);
  cuCtxSetCurrent(ctx);

  Params p;
  p.mode = Mode::Tiled;
  p.dataType = DataType::FLOAT16;
  p.rank = 2;
  p.globalAddress = 0x7f0000000000ull;
  p.globalDim[0] = 16384;
  p.globalDim[1] = 16384;
  p.globalStrides[0] = 16384 * 2;
  p.boxDim[0] = 64;
  p.boxDim[1] = 128;
  p.elementStrides[0] = p.elementStrides[1] = 1;
  p.swizzle = Swizzle::SWIZZLE_128B;
  p.l2Promotion = L2Promotion::L2_256B;

  alignas(64) uint8_t ours[128];
  alignas(64) CUtensorMap theirs;
  cuuint64_t dims[2] = {16384, 16384}, strides[1] = {16384 * 2};
  cuuint32_t box[2] = {64, 128}, es[2] = {1, 1};
  auto driver = [&](uint64_t addr) {
    return cuTensorMapEncodeTiled(&theirs, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                                  (void *)addr, dims, strides, box, es,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  CU_TENSOR_MAP_SWIZZLE_128B,
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  };
  if (!encode(p, Target{90}, ours) || driver(p.globalAddress) != CUDA_SUCCESS ||
      std::memcmp(ours, &theirs, 128) != 0) {
    std::printf("{\"error\":\"encoders disagree\"}\n");
    return 1;
  }
  const int n = 1000000;
  volatile uint8_t sink = 0;
  for (int rep = 0; rep < 2; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      p.globalAddress = 0x7f0000000000ull + 256ull * i;
      encode(p, Target{90}, ours);
      sink ^= ours[3];
    }
    auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      driver(0x7f0000000000ull + 256ull * i);
      sink ^= reinterpret_cast<uint8_t *>(&theirs)[3];
    }
    auto t2 = std::chrono::steady_clock::now();
    if (rep == 1) {
      double a = std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
      double b = std::chrono::duration<double, std::nano>(t2 - t1).count() / n;
      std::printf("{\"bench\":\"encode\",\"encoder\":\"nvtma C++ (validate+encode)\",\"ns_per_descriptor\":%.1f,"
                  "\"vs\":\"cuTensorMapEncodeTiled\",\"vs_ns\":%.1f,\"speedup\":%.2f}\n",
                  a, b, b / a);
    }
  }
  return sink == 255 ? 2 : 0;
}
