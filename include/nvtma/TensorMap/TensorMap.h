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

// The descriptor enums: CUDA's names and values, from Schema.def.
#define NVTMA_ENUM(Name, OdsName, CudaPrefix, Description)                     \
  enum class Name : uint32_t {
#define NVTMA_CASE(Enum, Symbol, Value, Spelling, CudaSuffix) Symbol = Value,
#define NVTMA_ENUM_END(Name)                                                   \
  }                                                                            \
  ;
#include "nvtma/TensorMap/Schema.def"

/// Which driver entry point the parameters are for.
enum class Mode : uint32_t { Tiled = 0, Im2col = 1 };

constexpr unsigned kMaxRank = 5;
constexpr unsigned kDescriptorBytes = 128;

/// The driver's arguments. Enum fields hold raw values so that out-of-range
/// values coming from C or Python are diagnosed instead of being undefined.
struct Params {
  Mode mode = Mode::Tiled;
  DataType dataType = DataType::FLOAT16;
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
  Interleave interleave = Interleave::NONE;
  Swizzle swizzle = Swizzle::NONE;
  L2Promotion l2Promotion = L2Promotion::L2_128B;
  OOBFill oobFill = OOBFill::NONE;
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
  TileDimRange,
  TileMulticastSplit,
  ElementBitsRange,
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

/// Bytes of a row that `swizzle` permutes: 32, 64 or 128; 0 for NONE and
/// for values that are not a CUtensorMapSwizzle.
unsigned swizzleSpanBytes(Swizzle swizzle);

/// CuTe's TMA box for a tile (make_tiled_tma_atom's rule): the tile, split
/// over `numMulticast` CTAs along its outermost dim, cut into the largest
/// boxes of at most 256 elements per dim whose extents divide it; the
/// innermost box dim also fits the swizzle span, except for interleaved
/// layouts (the driver checks no span there). `tile` and `box` have `rank`
/// entries, outermost first (MLIR's order). Returns false, with `diag`
/// filled, for a rank outside 1..5, a non-positive extent, a tile that does
/// not split over the CTAs, or an unknown element size or enum.
bool cuteBox(const int64_t *tile, unsigned rank, unsigned numMulticast,
             Swizzle swizzle, unsigned elementBits, Interleave interleave,
             int64_t *box, Diagnostic *diag = nullptr);

/// One case of a descriptor enum, as Schema.def writes it.
struct EnumCase {
  const char *symbol;     ///< "U4X16_ALIGN8B"
  uint32_t value;         ///< 13
  const char *spelling;   ///< "u4x16_align8b" (the dialect's)
  const char *cudaSuffix; ///< "16U4_ALIGN8B" (CUDA's name without prefix)
};

/// One descriptor enum.
struct EnumInfo {
  const char *name;        ///< "DataType" (C++ and Python)
  const char *odsName;     ///< "TmaFormat" (the dialect's)
  const char *cudaPrefix;  ///< "CU_TENSOR_MAP_DATA_TYPE_"
  const char *description;
  const EnumCase *cases;
  size_t numCases;
};

/// The descriptor enums of Schema.def, in its order.
size_t numEnums();
const EnumInfo &enumInfo(size_t i);

/// Bytes of shared memory one copy with these parameters fills (the value the
/// driver stores in the descriptor, and checks against 228 KiB).
uint64_t boxBytes(const Params &p);

/// The byte alignment the driver requires of the global address and of each
/// global stride: 32 for a 32-byte interleave and the 16-byte-aligned packed
/// types, else 16.
unsigned globalAlign(const Params &p);

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
