//===- TensorMap.h - TMA descriptor validator, encoder, decoder -*- C++ -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The 128-byte CUtensorMap, built without the CUDA driver. The rules and the
// byte layout were learned from the driver itself (see
// test/TensorMap/gen_driver_vectors.py and the vectors next to it); every
// accepted case there encodes byte-for-byte like cuTensorMapEncodeTiled /
// cuTensorMapEncodeIm2col, and every rejected case is rejected here too.
//
// This library depends on nothing but the C++ standard library: no MLIR, no
// CUDA headers. Enum values are CUDA's CUtensorMap* values.
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_TENSORMAP_TENSORMAP_H
#define NVTMA_TENSORMAP_TENSORMAP_H

#include <cstddef>
#include <cstdint>

namespace nvtma::tensormap {

/// CUtensorMapDataType.
enum class DataType : uint32_t {
  UInt8 = 0,
  UInt16 = 1,
  UInt32 = 2,
  Int32 = 3,
  UInt64 = 4,
  Int64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  BFloat16 = 9,
  Float32Ftz = 10,
  TFloat32 = 11,
  TFloat32Ftz = 12,
  U4x16Align8B = 13,
  U4x16Align16B = 14,
  U6x16Align16B = 15,
};
/// CUtensorMapInterleave.
enum class Interleave : uint32_t { None = 0, B16 = 1, B32 = 2 };
/// CUtensorMapSwizzle.
enum class Swizzle : uint32_t {
  None = 0,
  B32 = 1,
  B64 = 2,
  B128 = 3,
  B128Atom32B = 4,
  B128Atom32BFlip8B = 5,
  B128Atom64B = 6,
};
/// CUtensorMapL2promotion.
enum class L2Promotion : uint32_t { None = 0, L2_64B = 1, L2_128B = 2, L2_256B = 3 };
/// CUtensorMapFloatOOBfill.
enum class OOBFill : uint32_t { None = 0, NanRequestZeroFMA = 1 };
/// Which driver entry point the parameters are for.
enum class Mode : uint32_t { Tiled = 0, Im2col = 1 };

constexpr unsigned kMaxRank = 5;
constexpr unsigned kDescriptorBytes = 128;

/// The driver's arguments. Enum fields hold raw values so that out-of-range
/// values coming from C or Python are diagnosed instead of being undefined.
struct Params {
  Mode mode = Mode::Tiled;
  DataType dataType = DataType::Float16;
  uint32_t rank = 0;
  uint64_t globalAddress = 0;
  uint64_t globalDim[kMaxRank] = {};
  uint64_t globalStrides[kMaxRank - 1] = {}; ///< bytes, dims 1..rank-1
  uint32_t boxDim[kMaxRank] = {};            ///< tiled only
  int32_t pixelBoxLowerCorner[3] = {};       ///< im2col only, rank-2 entries
  int32_t pixelBoxUpperCorner[3] = {};       ///< im2col only, rank-2 entries
  uint32_t channelsPerPixel = 0;             ///< im2col only
  uint32_t pixelsPerColumn = 0;              ///< im2col only
  uint32_t elementStrides[kMaxRank] = {};
  Interleave interleave = Interleave::None;
  Swizzle swizzle = Swizzle::None;
  L2Promotion l2Promotion = L2Promotion::L2_128B;
  OOBFill oobFill = OOBFill::None;
};

/// The GPU the descriptor is for: 90 (Hopper) or 100 (Blackwell). Rules that
/// differ by architecture (packed types, 128B-atom swizzles) use it.
struct Target {
  unsigned sm = 90;
};

/// Every rule the validator knows, one per driver check.
enum class Rule : uint32_t {
  Ok = 0,
  TargetArch,
  DataTypeRange,
  InterleaveRange,
  SwizzleRange,
  L2PromotionRange,
  OOBFillRange,
  ModeRange,
  DataTypeArch,
  RankRange,
  InterleaveRank,
  AddressAlign,
  AddressRange,
  GlobalDimRange,
  GlobalDimPacked,
  GlobalStrideAlign,
  GlobalStrideRange,
  BoxDimRange,
  BoxInnerBytes,
  BoxDimPacked,
  ChannelsPerPixelRange,
  PixelsPerColumnRange,
  ElementStrideRange,
  SwizzleArch,
  SwizzleSpan,
  SwizzlePacked,
  OOBFillDataType,
  CornerRange,
  BoxSharedMemory,
  Im2colBoxArea,
  EncodingUnverified,
  DescriptorLayout,
  NumRules,
};

/// A broken rule: which one, which dimension (-1 if none) and a message that
/// names the rule and the offending value.
struct Diagnostic {
  Rule rule = Rule::Ok;
  int index = -1;
  int64_t value = 0;
  char message[192] = {};
};

/// Stable kebab-case name of a rule (`box-dim-range`).
const char *ruleName(Rule rule);

/// Size in bits of one element of `type` as laid out in global memory
/// (packed types: 4 or 8 bits per value). 0 for an unknown type.
unsigned elementBits(DataType type);

/// Bytes of shared memory one copy with these parameters fills (the value the
/// driver stores in the descriptor, and checks against 228 KiB).
uint64_t boxBytes(const Params &p);

/// Checks every rule the driver enforces. Returns true when `p` is accepted;
/// otherwise fills `diag` (if non-null) with the first broken rule.
bool validate(const Params &p, const Target &target, Diagnostic *diag = nullptr);

/// Validates, then writes the driver's exact 128 bytes to `out`.
bool encode(const Params &p, const Target &target,
            uint8_t out[kDescriptorBytes], Diagnostic *diag = nullptr);

/// Reads every field back from a descriptor (the inverse of encode). Fails
/// with Rule::DescriptorLayout when the bytes are not a layout encode makes.
bool decode(const uint8_t in[kDescriptorBytes], Params &out,
            Diagnostic *diag = nullptr);

/// Replaces the global address of an encoded descriptor in place, like
/// cuTensorMapReplaceAddress (alignment rules included).
bool replaceAddress(uint8_t desc[kDescriptorBytes], uint64_t address,
                    Diagnostic *diag = nullptr);

} // namespace nvtma::tensormap

#endif // NVTMA_TENSORMAP_TENSORMAP_H
