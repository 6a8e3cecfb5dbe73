//===- TensorMap.cpp - TMA descriptor validator, encoder, decoder ---------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Byte layout of the descriptor (little endian), as the sm_90 driver writes it:
//   [0,8)    global address
//   [8,12)   bit 0 im2col, [6:4] rank-1, [10:7] format code, [12:11]
//            interleave, [14:13] swizzle, 15 NaN OOB fill, 16 tf32, [18:17]
//            L2 promotion
//   [12,28)  global strides >> 4, low 32 bits each; [28,30) their bits 32..35,
//            one nibble per stride
//   [32,52)  global dims - 1
//   [52,54)  element strides - 1, 3 bits each
//   [55,60)  tiled: box dims - 1, one byte each
//   [55]     im2col: channels per pixel - 1; [56,58) lower corner, [58,60)
//            upper corner (rank 3: one 16-bit, rank 4: two 8-bit, rank 5:
//            three 5-bit signed fields); [60,62) pixels per column - 1
//   [64,68)  bytes one copy fills in shared memory
//   [72,74)  0x10 without swizzle, else 0x80 << swizzle
// Everything else is zero.
//
//===----------------------------------------------------------------------===//

#include "nvtma/TensorMap/TensorMap.h"

#include <cstdarg>
#include <cstdio>
#include <algorithm>
#include <cstring>

using namespace nvtma::tensormap;

namespace {

constexpr uint64_t kMaxGlobalDim = uint64_t(1) << 32;
constexpr uint64_t kMaxGlobalStride = uint64_t(1) << 40; // exclusive
constexpr uint64_t kMaxAddress = uint64_t(1) << 57;      // exclusive
constexpr uint64_t kSharedMemoryPerSM = 228 * 1024;

// Per-type tables, indexed by CUtensorMapDataType value (Schema.def lists
// the values densely from 0).
#define NVTMA_DATA_TYPE(Symbol, Value, Spelling, CudaSuffix, Bits, FormatCode,  \
                        Tf32)                                                  \
  +1
constexpr unsigned kNumDataTypes = 0
#include "nvtma/TensorMap/Schema.def"
    ;

struct TypeInfo {
  uint8_t bits;
  int8_t formatCode; ///< -1: no observed encoding
  bool tf32;
  const char *cudaSuffix;
};
constexpr TypeInfo kTypes[] = {
#define NVTMA_DATA_TYPE(Symbol, Value, Spelling, CudaSuffix, Bits, FormatCode,  \
                        Tf32)                                                  \
  {Bits, FormatCode, Tf32 != 0, CudaSuffix},
#include "nvtma/TensorMap/Schema.def"
};
static_assert(sizeof(kTypes) / sizeof(kTypes[0]) == kNumDataTypes);

constexpr unsigned kSwizzleSpan[] = {
#define NVTMA_SWIZZLE(Symbol, Value, Spelling, CudaSuffix, SpanBytes) SpanBytes,
#include "nvtma/TensorMap/Schema.def"
};
constexpr unsigned kNumSwizzles = sizeof(kSwizzleSpan) / sizeof(unsigned);

/// One past the largest value of each enum: its valid range, dense from 0.
#define NVTMA_ENUM(Name, OdsName, CudaPrefix, Description)                     \
  constexpr uint32_t kEnd##Name = 0
#define NVTMA_CASE(Enum, Symbol, Value, Spelling, CudaSuffix) +1
#define NVTMA_ENUM_END(Name) ;
#include "nvtma/TensorMap/Schema.def"

// Dense values are what the tables above and the range checks assume.
#define NVTMA_ENUM(Name, OdsName, CudaPrefix, Description)                     \
  constexpr uint32_t kDense##Name[] = {
#define NVTMA_CASE(Enum, Symbol, Value, Spelling, CudaSuffix) Value,
#define NVTMA_ENUM_END(Name)                                                   \
  }                                                                            \
  ;                                                                            \
  static_assert(isDense(kDense##Name), #Name " values are not 0, 1, ...");
template <size_t N> constexpr bool isDense(const uint32_t (&v)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (v[i] != i)
      return false;
  return true;
}
#include "nvtma/TensorMap/Schema.def"

const char *const kRuleNames[] = {
    "ok",
    "target-arch",
    "data-type-range",
    "interleave-range",
    "swizzle-range",
    "l2-promotion-range",
    "oob-fill-range",
    "mode-range",
    "data-type-arch",
    "rank-range",
    "interleave-rank",
    "address-align",
    "address-range",
    "global-dim-range",
    "global-dim-packed",
    "global-stride-align",
    "global-stride-range",
    "box-dim-range",
    "box-inner-bytes",
    "box-dim-packed",
    "channels-per-pixel-range",
    "pixels-per-column-range",
    "element-stride-range",
    "swizzle-arch",
    "swizzle-span",
    "swizzle-packed",
    "oob-fill-data-type",
    "corner-range",
    "box-shared-memory",
    "im2col-box-area",
    "encoding-unverified",
    "descriptor-layout",
    "tile-dim-range",
    "tile-multicast-split",
    "element-bits-range",
};
static_assert(sizeof(kRuleNames) / sizeof(kRuleNames[0]) ==
                  static_cast<size_t>(Rule::NumRules),
              "one name per rule");

/// Records a broken rule; always returns false so checks read
/// `return fail(...)`. The message is only formatted on failure.
[[gnu::format(printf, 5, 6)]] bool fail(Diagnostic *diag, Rule rule, int index,
                                        int64_t value, const char *fmt, ...) {
  if (!diag)
    return false;
  diag->rule = rule;
  diag->index = index;
  diag->value = value;
  int n = std::snprintf(diag->message, sizeof(diag->message), "%s: ",
                        ruleName(rule));
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(diag->message + n, sizeof(diag->message) - n, fmt, args);
  va_end(args);
  return false;
}

bool isPacked(DataType t) {
  return t == DataType::U4X16_ALIGN8B || t == DataType::U4X16_ALIGN16B ||
         t == DataType::U6X16_ALIGN16B;
}
bool isPacked16B(DataType t) {
  return t == DataType::U4X16_ALIGN16B || t == DataType::U6X16_ALIGN16B;
}
bool isFloat(DataType t) {
  auto v = static_cast<uint32_t>(t);
  return v >= 6 && v <= 12;
}

/// Field width in bits of one im2col corner offset, by rank.
unsigned cornerBits(uint32_t rank) {
  return rank == 3 ? 16 : rank == 4 ? 8 : 5;
}

/// The spatial dimension the j-th corner offset applies to: W, H, D are
/// dims 1.. normally, dims 0.. when the layout is interleaved.
unsigned cornerDim(const Params &p, unsigned j) {
  return p.interleave == Interleave::NONE ? j + 1 : j;
}

int32_t wrapToInt32(uint64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v));
}

template <typename T> void store(uint8_t *out, unsigned offset, T value) {
  std::memcpy(out + offset, &value, sizeof(T));
}
template <typename T> T load(const uint8_t *in, unsigned offset) {
  T value;
  std::memcpy(&value, in + offset, sizeof(T));
  return value;
}

bool checkEnums(const Params &p, Diagnostic *diag) {
  auto v = [](auto e) { return static_cast<uint32_t>(e); };
  if (v(p.mode) > 1)
    return fail(diag, Rule::ModeRange, -1, v(p.mode),
                "mode is %u, expected 0 (tiled) or 1 (im2col)", v(p.mode));
  if (v(p.dataType) >= kEndDataType)
    return fail(diag, Rule::DataTypeRange, -1, v(p.dataType),
                "data type is %u, not a CUtensorMapDataType (0..%u)",
                v(p.dataType), kEndDataType - 1);
  if (v(p.interleave) >= kEndInterleave)
    return fail(diag, Rule::InterleaveRange, -1, v(p.interleave),
                "interleave is %u, not a CUtensorMapInterleave (0..%u)",
                v(p.interleave), kEndInterleave - 1);
  if (v(p.swizzle) >= kEndSwizzle)
    return fail(diag, Rule::SwizzleRange, -1, v(p.swizzle),
                "swizzle is %u, not a CUtensorMapSwizzle (0..%u)",
                v(p.swizzle), kEndSwizzle - 1);
  if (v(p.l2Promotion) >= kEndL2Promotion)
    return fail(diag, Rule::L2PromotionRange, -1, v(p.l2Promotion),
                "l2 promotion is %u, not a CUtensorMapL2promotion (0..%u)",
                v(p.l2Promotion), kEndL2Promotion - 1);
  if (v(p.oobFill) >= kEndOOBFill)
    return fail(diag, Rule::OOBFillRange, -1, v(p.oobFill),
                "oob fill is %u, not a CUtensorMapFloatOOBfill (0..%u)",
                v(p.oobFill), kEndOOBFill - 1);
  return true;
}

} // namespace

const char *nvtma::tensormap::ruleName(Rule rule) {
  auto i = static_cast<size_t>(rule);
  return i < static_cast<size_t>(Rule::NumRules) ? kRuleNames[i] : "unknown";
}

unsigned nvtma::tensormap::elementBits(DataType type) {
  auto i = static_cast<uint32_t>(type);
  return i < kNumDataTypes ? kTypes[i].bits : 0;
}

unsigned nvtma::tensormap::swizzleSpanBytes(Swizzle swizzle) {
  auto i = static_cast<uint32_t>(swizzle);
  return i < kNumSwizzles ? kSwizzleSpan[i] : 0;
}

bool nvtma::tensormap::cuteBox(const int64_t *tile, unsigned rank,
                               unsigned numMulticast, Swizzle swizzle,
                               unsigned bits, Interleave interleave,
                               int64_t *box, Diagnostic *diag) {
  if (rank < 1 || rank > kMaxRank)
    return fail(diag, Rule::RankRange, -1, rank,
                "the tile has %u dims, the range is 1..%u", rank, kMaxRank);
  if (static_cast<uint32_t>(swizzle) >= kEndSwizzle)
    return fail(diag, Rule::SwizzleRange, -1, static_cast<uint32_t>(swizzle),
                "swizzle is %u, not a CUtensorMapSwizzle (0..%u)",
                static_cast<uint32_t>(swizzle), kEndSwizzle - 1);
  if (static_cast<uint32_t>(interleave) >= kEndInterleave)
    return fail(diag, Rule::InterleaveRange, -1,
                static_cast<uint32_t>(interleave),
                "interleave is %u, not a CUtensorMapInterleave (0..%u)",
                static_cast<uint32_t>(interleave), kEndInterleave - 1);
  if (bits == 0 || bits > 64)
    return fail(diag, Rule::ElementBitsRange, -1, bits,
                "an element of %u bits: the range is 1..64", bits);
  if (numMulticast < 1 || numMulticast > 16)
    return fail(diag, Rule::TileMulticastSplit, -1, numMulticast,
                "%u multicast CTAs: a cluster holds 1..16", numMulticast);
  for (unsigned i = 0; i < rank; ++i)
    if (tile[i] < 1)
      return fail(diag, Rule::TileDimRange, int(i), tile[i],
                  "tile dim %u is %lld, it must be positive", i,
                  (long long)tile[i]);
  if (tile[0] % numMulticast)
    return fail(diag, Rule::TileMulticastSplit, 0, tile[0],
                "tile dim 0 (%lld) does not split over %u multicast CTAs",
                (long long)tile[0], numMulticast);
  const unsigned span = swizzleSpanBytes(swizzle);
  for (unsigned i = 0; i < rank; ++i) {
    int64_t extent = i == 0 ? tile[0] / numMulticast : tile[i];
    int64_t cap = 256;
    // The span limits the innermost dim only where the driver checks it:
    // not for interleaved layouts.
    if (i + 1 == rank && span && interleave == Interleave::NONE)
      cap = std::min<int64_t>(cap, std::max<int64_t>(1, span * 8 / bits));
    int64_t b = std::min(extent, cap);
    while (b > 1 && extent % b)
      --b;
    box[i] = b;
  }
  return true;
}

namespace {
#define NVTMA_ENUM(Name, OdsName, CudaPrefix, Description)                     \
  constexpr EnumCase kCases##Name[] = {
#define NVTMA_CASE(Enum, Symbol, Value, Spelling, CudaSuffix)                  \
  {#Symbol, Value, Spelling, CudaSuffix},
#define NVTMA_ENUM_END(Name) };
#include "nvtma/TensorMap/Schema.def"

constexpr EnumInfo kEnums[] = {
#define NVTMA_ENUM(Name, OdsName, CudaPrefix, Description)                     \
  {#Name,         #OdsName,                                                    \
   CudaPrefix,    Description,                                                 \
   kCases##Name,  sizeof(kCases##Name) / sizeof(EnumCase)},
#include "nvtma/TensorMap/Schema.def"
};
} // namespace

size_t nvtma::tensormap::numEnums() { return sizeof(kEnums) / sizeof(EnumInfo); }

const EnumInfo &nvtma::tensormap::enumInfo(size_t i) { return kEnums[i]; }

uint64_t nvtma::tensormap::boxBytes(const Params &p) {
  uint64_t bits = elementBits(p.dataType);
  if (p.mode == Mode::Im2col)
    return uint64_t(p.channelsPerPixel) * p.pixelsPerColumn * bits / 8;
  // The driver counts floor(box / elementStride) elements per dimension.
  for (unsigned i = 0; i < p.rank && i < kMaxRank; ++i)
    bits *= p.elementStrides[i] ? p.boxDim[i] / p.elementStrides[i] : 0;
  return bits / 8;
}

unsigned nvtma::tensormap::globalAlign(const Params &p) {
  return p.interleave == Interleave::INTERLEAVE_32B || isPacked16B(p.dataType)
             ? 32
             : 16;
}

bool nvtma::tensormap::validate(const Params &p, const Target &target,
                                Diagnostic *diag) {
  if (target.sm != 90 && target.sm != 100)
    return fail(diag, Rule::TargetArch, -1, target.sm,
                "sm_%u is not a target nvtma knows the driver's rules for "
                "(sm_90, sm_100)",
                target.sm);
  if (!checkEnums(p, diag))
    return false;
  const bool im2col = p.mode == Mode::Im2col;
  const bool sm100 = target.sm >= 100;
  const DataType type = p.dataType;
  if (isPacked(type) && !sm100)
    return fail(diag, Rule::DataTypeArch, -1, static_cast<uint32_t>(type),
                "packed data type %s needs sm_100, the target is sm_%u",
                kTypes[static_cast<uint32_t>(type)].cudaSuffix, target.sm);

  const uint32_t minRank = im2col ? 3 : 1;
  if (p.rank < minRank || p.rank > kMaxRank)
    return fail(diag, Rule::RankRange, -1, p.rank,
                "rank is %u, %s needs %u..5", p.rank,
                im2col ? "im2col" : "a tiled map", minRank);
  if (p.interleave != Interleave::NONE && p.rank < 3)
    return fail(diag, Rule::InterleaveRank, -1, p.rank,
                "rank is %u, an interleaved layout needs rank >= 3", p.rank);

  const uint64_t align = globalAlign(p);
  if (p.globalAddress % align)
    return fail(diag, Rule::AddressAlign, -1,
                static_cast<int64_t>(p.globalAddress),
                "global address 0x%llx is not %llu-byte aligned",
                (unsigned long long)p.globalAddress,
                (unsigned long long)align);
  if (p.globalAddress >= kMaxAddress)
    return fail(diag, Rule::AddressRange, -1,
                static_cast<int64_t>(p.globalAddress),
                "global address 0x%llx is past the 57-bit address space",
                (unsigned long long)p.globalAddress);

  for (unsigned i = 0; i < p.rank; ++i) {
    uint64_t d = p.globalDim[i];
    if (d == 0 || d > kMaxGlobalDim)
      return fail(diag, Rule::GlobalDimRange, i, static_cast<int64_t>(d),
                  "global dim %u is %llu, the range is 1..2^32", i,
                  (unsigned long long)d);
  }
  if (isPacked16B(type) && p.globalDim[0] % 128)
    return fail(diag, Rule::GlobalDimPacked, 0,
                static_cast<int64_t>(p.globalDim[0]),
                "global dim 0 is %llu, a 16-byte-aligned packed type needs a "
                "multiple of 128",
                (unsigned long long)p.globalDim[0]);
  if (type == DataType::U4X16_ALIGN8B && p.globalDim[0] % 2)
    return fail(diag, Rule::GlobalDimPacked, 0,
                static_cast<int64_t>(p.globalDim[0]),
                "global dim 0 is %llu, 16U4_ALIGN8B needs a multiple of 2",
                (unsigned long long)p.globalDim[0]);
  for (unsigned i = 0; i + 1 < p.rank; ++i) {
    uint64_t s = p.globalStrides[i];
    if (s % align)
      return fail(diag, Rule::GlobalStrideAlign, i, static_cast<int64_t>(s),
                  "global stride %u is %llu bytes, not a multiple of %llu", i,
                  (unsigned long long)s, (unsigned long long)align);
    if (s >= kMaxGlobalStride)
      return fail(diag, Rule::GlobalStrideRange, i, static_cast<int64_t>(s),
                  "global stride %u is %llu bytes, the limit is below 2^40", i,
                  (unsigned long long)s);
  }

  const unsigned bits = elementBits(type);
  uint64_t inner;
  if (im2col) {
    if (p.channelsPerPixel == 0 || p.channelsPerPixel > 256)
      return fail(diag, Rule::ChannelsPerPixelRange, -1, p.channelsPerPixel,
                  "channels per pixel is %u, the range is 1..256",
                  p.channelsPerPixel);
    if (p.pixelsPerColumn == 0 || p.pixelsPerColumn > 1024)
      return fail(diag, Rule::PixelsPerColumnRange, -1, p.pixelsPerColumn,
                  "pixels per column is %u, the range is 1..1024",
                  p.pixelsPerColumn);
    if (isPacked16B(type) && p.channelsPerPixel != 128)
      return fail(diag, Rule::BoxDimPacked, -1, p.channelsPerPixel,
                  "channels per pixel is %u, a 16-byte-aligned packed type "
                  "needs 128",
                  p.channelsPerPixel);
    inner = uint64_t(p.channelsPerPixel) * bits;
  } else {
    for (unsigned i = 0; i < p.rank; ++i)
      if (p.boxDim[i] == 0 || p.boxDim[i] > 256)
        return fail(diag, Rule::BoxDimRange, i, p.boxDim[i],
                    "box dim %u is %u elements, the range is 1..256", i,
                    p.boxDim[i]);
    if (isPacked16B(type) && p.boxDim[0] != 128)
      return fail(diag, Rule::BoxDimPacked, 0, p.boxDim[0],
                  "box dim 0 is %u, a 16-byte-aligned packed type needs 128",
                  p.boxDim[0]);
    inner = uint64_t(p.boxDim[0]) * bits;
  }
  // The driver checks this for every interleave, not only NONE as documented.
  if (inner % 128)
    return fail(diag, Rule::BoxInnerBytes, im2col ? -1 : 0,
                static_cast<int64_t>(inner / 8),
                "the inner box is %llu%s bytes, not a multiple of 16",
                (unsigned long long)(inner / 8), inner % 8 ? ".5" : "");
  for (unsigned i = 0; i < p.rank; ++i)
    if (p.elementStrides[i] == 0 || p.elementStrides[i] > 8)
      return fail(diag, Rule::ElementStrideRange, i, p.elementStrides[i],
                  "element stride %u is %u, the range is 1..8", i,
                  p.elementStrides[i]);

  const auto swz = static_cast<uint32_t>(p.swizzle);
  if (swz >= 4 && !sm100)
    return fail(diag, Rule::SwizzleArch, -1, swz,
                "128B-atom swizzle %u needs sm_100, the target is sm_%u", swz,
                target.sm);
  if (p.interleave == Interleave::NONE && swz && inner / 8 > kSwizzleSpan[swz])
    return fail(diag, Rule::SwizzleSpan, -1, static_cast<int64_t>(inner / 8),
                "the inner box is %llu bytes, swizzle %uB spans only %u",
                (unsigned long long)(inner / 8), kSwizzleSpan[swz],
                kSwizzleSpan[swz]);
  if (type == DataType::U6X16_ALIGN16B &&
      !(swz == 0 || swz == 3 || swz == 4 || swz == 6))
    return fail(diag, Rule::SwizzlePacked, -1, swz,
                "swizzle %u is not one 16U6_ALIGN16B supports (none, 128B, "
                "128B_ATOM_32B, 128B_ATOM_64B)",
                swz);
  if (type == DataType::U6X16_ALIGN16B && p.interleave != Interleave::NONE)
    return fail(diag, Rule::SwizzlePacked, -1,
                static_cast<uint32_t>(p.interleave),
                "16U6_ALIGN16B needs interleave none, got %u",
                static_cast<uint32_t>(p.interleave));
  if (type == DataType::U4X16_ALIGN16B && !(swz == 0 || swz == 3 || swz == 4))
    return fail(diag, Rule::SwizzlePacked, -1, swz,
                "swizzle %u is not one 16U4_ALIGN16B supports (none, 128B, "
                "128B_ATOM_32B)",
                swz);
  if (p.oobFill == OOBFill::NAN_REQUEST_ZERO_FMA && !isFloat(type))
    return fail(diag, Rule::OOBFillDataType, -1, static_cast<uint32_t>(type),
                "NaN out-of-bounds fill needs a floating-point type, data type "
                "is %s",
                kTypes[static_cast<uint32_t>(type)].cudaSuffix);

  if (im2col) {
    const unsigned cb = cornerBits(p.rank);
    const int32_t lo = -(1 << (cb - 1)), hi = (1 << (cb - 1)) - 1;
    for (unsigned j = 0; j + 2 < p.rank; ++j) {
      for (int upper = 0; upper < 2; ++upper) {
        int32_t v = upper ? p.pixelBoxUpperCorner[j] : p.pixelBoxLowerCorner[j];
        if (v < lo || v > hi)
          return fail(diag, Rule::CornerRange, j, v,
                      "%s corner %u is %d, rank %u allows %d..%d",
                      upper ? "upper" : "lower", j, v, p.rank, lo, hi);
      }
    }
  }
  const uint64_t smem = boxBytes(p);
  if (smem > kSharedMemoryPerSM)
    return fail(diag, Rule::BoxSharedMemory, -1, static_cast<int64_t>(smem),
                "one box fills %llu bytes of shared memory, the limit is %llu",
                (unsigned long long)smem,
                (unsigned long long)kSharedMemoryPerSM);
  if (im2col) {
    // The driver computes dim + upper in 32-bit signed arithmetic, then
    // subtracts lower: huge dims wrap exactly as they do there.
    for (unsigned j = 0; j + 2 < p.rank; ++j) {
      unsigned d = cornerDim(p, j);
      int64_t extent = int64_t(wrapToInt32(p.globalDim[d] +
                                           uint64_t(int64_t(
                                               p.pixelBoxUpperCorner[j])))) -
                       p.pixelBoxLowerCorner[j];
      if (extent <= 0)
        return fail(diag, Rule::Im2colBoxArea, j, extent,
                    "the pixel box along dim %u is empty (%lld = int32(dim "
                    "%llu + upper %d) - lower %d)",
                    d, (long long)extent, (unsigned long long)p.globalDim[d],
                    p.pixelBoxUpperCorner[j], p.pixelBoxLowerCorner[j]);
    }
  }
  return true;
}

bool nvtma::tensormap::encode(const Params &p, const Target &target,
                              uint8_t out[kDescriptorBytes], Diagnostic *diag) {
  if (!validate(p, target, diag))
    return false;
  const auto type = static_cast<uint32_t>(p.dataType);
  const auto swz = static_cast<uint32_t>(p.swizzle);
  // Only sm_90 driver output has been observed; refuse what it cannot show.
  const bool unobserved = kTypes[type].formatCode < 0;
  if (unobserved || swz >= 4)
    return fail(diag, Rule::EncodingUnverified, -1, unobserved ? type : swz,
                "the encoding of %s %u has not been observed from a driver; "
                "nvtma will not guess its bits",
                unobserved ? "data type" : "swizzle", unobserved ? type : swz);
  std::memset(out, 0, kDescriptorBytes);
  store<uint64_t>(out, 0, p.globalAddress);
  uint32_t word = (p.mode == Mode::Im2col ? 1u : 0u) | (p.rank - 1) << 4 |
                  uint32_t(kTypes[type].formatCode) << 7 |
                  static_cast<uint32_t>(p.interleave) << 11 | swz << 13 |
                  static_cast<uint32_t>(p.oobFill) << 15 |
                  uint32_t(kTypes[type].tf32) << 16 |
                  static_cast<uint32_t>(p.l2Promotion) << 17;
  store<uint32_t>(out, 8, word);
  uint16_t strideHigh = 0;
  for (unsigned i = 0; i + 1 < p.rank; ++i) {
    uint64_t s = p.globalStrides[i] >> 4;
    store<uint32_t>(out, 12 + 4 * i, static_cast<uint32_t>(s));
    strideHigh |= static_cast<uint16_t>((s >> 32) & 0xF) << (4 * i);
  }
  store<uint16_t>(out, 28, strideHigh);
  for (unsigned i = 0; i < p.rank; ++i)
    store<uint32_t>(out, 32 + 4 * i, static_cast<uint32_t>(p.globalDim[i] - 1));
  uint16_t es = 0;
  for (unsigned i = 0; i < p.rank; ++i)
    es |= static_cast<uint16_t>(p.elementStrides[i] - 1) << (3 * i);
  store<uint16_t>(out, 52, es);
  if (p.mode == Mode::Im2col) {
    out[55] = static_cast<uint8_t>(p.channelsPerPixel - 1);
    const unsigned cb = cornerBits(p.rank);
    const uint32_t mask = (1u << cb) - 1;
    uint32_t lo = 0, up = 0;
    for (unsigned j = 0; j + 2 < p.rank; ++j) {
      lo |= (static_cast<uint32_t>(p.pixelBoxLowerCorner[j]) & mask) << (cb * j);
      up |= (static_cast<uint32_t>(p.pixelBoxUpperCorner[j]) & mask) << (cb * j);
    }
    store<uint16_t>(out, 56, static_cast<uint16_t>(lo));
    store<uint16_t>(out, 58, static_cast<uint16_t>(up));
    store<uint16_t>(out, 60, static_cast<uint16_t>(p.pixelsPerColumn - 1));
  } else {
    for (unsigned i = 0; i < p.rank; ++i)
      out[55 + i] = static_cast<uint8_t>(p.boxDim[i] - 1);
  }
  store<uint32_t>(out, 64, static_cast<uint32_t>(boxBytes(p)));
  store<uint16_t>(out, 72, static_cast<uint16_t>(swz ? 0x80u << swz : 0x10u));
  return true;
}

bool nvtma::tensormap::decode(const uint8_t in[kDescriptorBytes], Params &p,
                              Diagnostic *diag) {
  p = Params();
  const uint32_t word = load<uint32_t>(in, 8);
  if (word >> 19)
    return fail(diag, Rule::DescriptorLayout, 8, word,
                "header word 0x%08x has bits above 18 set", word);
  if (word & 0xE)
    return fail(diag, Rule::DescriptorLayout, 8, word,
                "header word 0x%08x has bits 1..3 set", word);
  p.mode = (word & 1) ? Mode::Im2col : Mode::Tiled;
  // Three bits hold ranks up to 8; the arrays below hold 5 (kMaxRank).
  p.rank = ((word >> 4) & 7) + 1;
  if (p.rank > kMaxRank)
    return fail(diag, Rule::DescriptorLayout, 8, p.rank,
                "the rank field is %u, a descriptor has rank 1..%u", p.rank,
                kMaxRank);
  const uint32_t code = (word >> 7) & 0xF;
  const bool tf32 = (word >> 16) & 1;
  // Format codes 7 and 8 are shared: the tf32 bit picks TFLOAT32(_FTZ) over
  // FLOAT32 / FLOAT32_FTZ.
  int type = -1;
  for (unsigned t = 0; t < kNumDataTypes && type < 0; ++t)
    if (kTypes[t].formatCode == int(code) && kTypes[t].tf32 == tf32)
      type = int(t);
  if (type < 0)
    return fail(diag, Rule::DescriptorLayout, 8, code,
                "format code %u%s is not one the driver writes", code,
                tf32 ? " with the tf32 bit" : "");
  p.dataType = static_cast<DataType>(type);
  p.interleave = static_cast<Interleave>((word >> 11) & 3);
  p.swizzle = static_cast<Swizzle>((word >> 13) & 3);
  p.oobFill = static_cast<OOBFill>((word >> 15) & 1);
  p.l2Promotion = static_cast<L2Promotion>((word >> 17) & 3);
  if (static_cast<uint32_t>(p.interleave) == 3)
    return fail(diag, Rule::DescriptorLayout, 8, 3,
                "interleave field is 3, not a CUtensorMapInterleave");
  p.globalAddress = load<uint64_t>(in, 0);
  const uint16_t strideHigh = load<uint16_t>(in, 28);
  for (unsigned i = 0; i + 1 < p.rank; ++i)
    p.globalStrides[i] =
        (uint64_t(load<uint32_t>(in, 12 + 4 * i)) |
         uint64_t((strideHigh >> (4 * i)) & 0xF) << 32)
        << 4;
  for (unsigned i = 0; i < p.rank; ++i)
    p.globalDim[i] = uint64_t(load<uint32_t>(in, 32 + 4 * i)) + 1;
  const uint16_t es = load<uint16_t>(in, 52);
  for (unsigned i = 0; i < p.rank; ++i)
    p.elementStrides[i] = ((es >> (3 * i)) & 7) + 1;
  if (p.mode == Mode::Im2col) {
    p.channelsPerPixel = uint32_t(in[55]) + 1;
    const unsigned cb = cornerBits(p.rank);
    const uint32_t lo = load<uint16_t>(in, 56), up = load<uint16_t>(in, 58);
    for (unsigned j = 0; j + 2 < p.rank; ++j) {
      auto sext = [cb](uint32_t v) {
        v &= (1u << cb) - 1;
        return static_cast<int32_t>(v ^ (1u << (cb - 1))) - (1 << (cb - 1));
      };
      p.pixelBoxLowerCorner[j] = sext(lo >> (cb * j));
      p.pixelBoxUpperCorner[j] = sext(up >> (cb * j));
    }
    p.pixelsPerColumn = uint32_t(load<uint16_t>(in, 60)) + 1;
  } else {
    for (unsigned i = 0; i < p.rank; ++i)
      p.boxDim[i] = uint32_t(in[55 + i]) + 1;
  }
  // Re-encode and compare: a decoded descriptor must be exactly what encode
  // (and so the driver) writes for these fields.
  uint8_t again[kDescriptorBytes];
  Diagnostic inner;
  if (!encode(p, Target{90}, again, &inner))
    return fail(diag, Rule::DescriptorLayout, static_cast<int>(inner.rule),
                inner.value, "the fields decode to parameters the driver "
                "rejects (%s)",
                inner.message);
  for (unsigned i = 0; i < kDescriptorBytes; ++i)
    if (again[i] != in[i])
      return fail(diag, Rule::DescriptorLayout, i, in[i],
                  "byte %u is 0x%02x, a descriptor with these fields has "
                  "0x%02x there",
                  i, in[i], again[i]);
  return true;
}

bool nvtma::tensormap::replaceAddress(uint8_t desc[kDescriptorBytes],
                                      uint64_t address, Diagnostic *diag) {
  Params p;
  if (!decode(desc, p, diag))
    return false;
  p.globalAddress = address;
  return encode(p, Target{90}, desc, diag);
}
