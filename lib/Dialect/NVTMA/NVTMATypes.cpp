//===- NVTMATypes.cpp - nvtma types ---------------------------------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "nvtma/Dialect/NVTMA/NVTMADialect.h"
#include "nvtma/Target/TargetInfo.h"
#include "nvtma/TensorMap/TensorMap.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nvtma;
namespace tmap = ::nvtma::tensormap;

#define GET_TYPEDEF_CLASSES
#include "nvtma/Dialect/NVTMA/NVTMAOpsTypes.cpp.inc"

// The ODS enums are generated from nvtma/TensorMap/Schema.def at configure
// time; a stale generated file fails here, case by case.
namespace {
#define NVTMA_ENUM(Name, OdsName, CudaPrefix, Description)                     \
  using OdsOf##Name = ::mlir::nvtma::OdsName;                                  \
  static_assert(getMaxEnumValFor##OdsName() + 1 ==                             \
                    0
#define NVTMA_CASE(Enum, Symbol, Value, Spelling, CudaSuffix) +1
#define NVTMA_ENUM_END(Name)                                                   \
  , "the ODS enum has another number of cases than Schema.def's " #Name);
#include "nvtma/TensorMap/Schema.def"
#define NVTMA_CASE(Enum, Symbol, Value, Spelling, CudaSuffix)                  \
  static_assert(static_cast<uint32_t>(OdsOf##Enum::Symbol) == (Value) &&       \
                    static_cast<uint32_t>(tmap::Enum::Symbol) == (Value),      \
                "ODS and Schema.def disagree on " #Enum "::" #Symbol);
#include "nvtma/TensorMap/Schema.def"
} // namespace

void NVTMADialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "nvtma/Dialect/NVTMA/NVTMAOpsTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

int64_t mlir::nvtma::getElementBitWidth(Type type) {
  if (type.isIntOrFloat())
    return type.getIntOrFloatBitWidth();
  if (isa<IndexType>(type))
    return 64;
  return 0;
}

bool mlir::nvtma::hasComputableStrides(MemRefType type) {
  if (!type.getLayout().isIdentity())
    return true;
  // makeCanonicalStridedLayoutExpr's running product: every positive
  // static size (dynamic and zero ones are skipped, not stopped at).
  int64_t running = 1;
  for (int64_t size : type.getShape())
    if (size > 0 && llvm::MulOverflow(running, size, running))
      return false;
  return true;
}

LogicalResult
mlir::nvtma::getStridesAndOffsetChecked(MemRefType type,
                                        SmallVectorImpl<int64_t> &strides,
                                        int64_t &offset) {
  if (!hasComputableStrides(type))
    return failure();
  return type.getStridesAndOffset(strides, offset);
}

static bool isIm2colKind(CopyKind k) {
  return k == CopyKind::Im2colLoad || k == CopyKind::Im2colLoadMulticast ||
         k == CopyKind::Im2colStore;
}

static bool isMulticastKind(CopyKind k) {
  return k == CopyKind::LoadMulticast || k == CopyKind::Im2colLoadMulticast;
}

static unsigned formatBits(TmaFormat f) {
  return tmap::elementBits(static_cast<tmap::DataType>(f));
}

static bool isPackedFormat(TmaFormat f) {
  return f == TmaFormat::U4X16_ALIGN8B || f == TmaFormat::U4X16_ALIGN16B ||
         f == TmaFormat::U6X16_ALIGN16B;
}

std::optional<TmaFormat> TmaAtomType::getDefaultFormat(Type t) {
  if (t.isF16())
    return TmaFormat::FLOAT16;
  if (t.isBF16())
    return TmaFormat::BFLOAT16;
  if (t.isF32())
    return TmaFormat::FLOAT32;
  if (t.isF64())
    return TmaFormat::FLOAT64;
  if (auto i = dyn_cast<IntegerType>(t)) {
    switch (i.getWidth()) {
    case 8:
      return TmaFormat::UINT8;
    case 16:
      return TmaFormat::UINT16;
    case 32:
      return i.isUnsigned() ? TmaFormat::UINT32 : TmaFormat::INT32;
    case 64:
      return i.isUnsigned() ? TmaFormat::UINT64 : TmaFormat::INT64;
    default:
      return std::nullopt;
    }
  }
  // fp8 / fp6 / fp4 and friends travel as raw bytes, like CuTe's
  // internal_type.
  if (isa<FloatType>(t) && t.getIntOrFloatBitWidth() == 8)
    return TmaFormat::UINT8;
  return std::nullopt;
}

bool TmaAtomType::isLoad() const {
  CopyKind k = getKind();
  return k == CopyKind::Load || k == CopyKind::LoadMulticast ||
         k == CopyKind::Im2colLoad || k == CopyKind::Im2colLoadMulticast ||
         k == CopyKind::Gather4Load;
}
bool TmaAtomType::isIm2col() const { return isIm2colKind(getKind()); }
bool TmaAtomType::isMulticast() const { return isMulticastKind(getKind()); }

TmaFormat TmaAtomType::getFormat() const {
  if (std::optional<TmaFormat> f = getTmaFormat())
    return *f;
  // The builder stored no tma_format only where the element type has one.
  return *getDefaultFormat(getElementType());
}

ArrayRef<int64_t> TmaAtomType::getTileShape() const {
  return getTile().empty() ? getBox() : getTile();
}

SmallVector<int64_t> TmaAtomType::getElementStridesOrOnes() const {
  if (!getElementStrides().empty())
    return SmallVector<int64_t>(getElementStrides());
  return SmallVector<int64_t>(getTensorRank(), 1);
}

unsigned TmaAtomType::getTensorRank() const {
  return isIm2col() ? getLowerCorner().size() + 2 : getBox().size();
}

int64_t TmaAtomType::getBoxBytes() const {
  int64_t bits = formatBits(getFormat());
  for (int64_t b : getBox())
    bits *= b;
  return bits / 8;
}

int64_t TmaAtomType::getTileBytes() const {
  int64_t bits = formatBits(getFormat());
  for (int64_t b : getTileShape())
    bits *= b;
  return bits / 8;
}

unsigned TmaAtomType::getRequiredSM() const {
  if (isPackedFormat(getFormat()) || getCtaGroup() == 2 ||
      getKind() == CopyKind::Gather4Load ||
      static_cast<uint32_t>(getSwizzle()) >= 4)
    return 100;
  return 90;
}

namespace {
/// The descriptor-relevant fields of an atom, whether it exists yet or is
/// being verified.
struct AtomFields {
  CopyKind kind;
  TmaFormat format;
  ArrayRef<int64_t> box, elementStrides, lowerCorner, upperCorner;
  Swizzle swizzle;
  L2Promotion l2Promotion;
  Interleave interleave;
  OOBFill oobFill;

  static AtomFields of(TmaAtomType t) {
    return {t.getKind(),           t.getFormat(),     t.getBox(),
            t.getElementStrides(), t.getLowerCorner(), t.getUpperCorner(),
            t.getSwizzle(),        t.getL2Promotion(), t.getInterleave(),
            t.getOobFill()};
  }
  unsigned rank() const {
    return isIm2colKind(kind) ? lowerCorner.size() + 2 : box.size();
  }
};
} // namespace

static uint32_t clampU32(int64_t v) {
  return v < 0 ? 0 : v > 0xFFFFFFFFll ? 0xFFFFFFFFu : uint32_t(v);
}

static int32_t clampI32(int64_t v) {
  return int32_t(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
}

/// The smallest extent >= `v` that the packed formats allow for the innermost
/// descriptor dim: a multiple of 128 values (16-byte-aligned kinds) or of 2
/// (16U4_ALIGN8B).
static int64_t roundForFormat(TmaFormat f, int64_t v) {
  if (f == TmaFormat::U4X16_ALIGN16B || f == TmaFormat::U6X16_ALIGN16B)
    return (v + 127) / 128 * 128;
  if (f == TmaFormat::U4X16_ALIGN8B)
    return (v + 1) / 2 * 2;
  return v;
}

/// Fills the fields every descriptor has. `placeholderDim(i)` gives the
/// extent of descriptor dim i where the tensor's is unknown: one that
/// satisfies every rule, so validating the result checks exactly what is
/// static. Unknown strides get 256 bytes (aligned for every format).
static void fillCommon(const AtomFields &a, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> strides, unsigned rank,
                       function_ref<int64_t(unsigned)> placeholderDim,
                       tmap::Params &p) {
  const uint64_t bits = formatBits(a.format);
  p.dataType = static_cast<tmap::DataType>(a.format);
  p.rank = rank;
  p.interleave = static_cast<tmap::Interleave>(a.interleave);
  p.swizzle = static_cast<tmap::Swizzle>(a.swizzle);
  p.l2Promotion = static_cast<tmap::L2Promotion>(a.l2Promotion);
  p.oobFill = static_cast<tmap::OOBFill>(a.oobFill);
  for (unsigned i = 0; i < rank && i < tmap::kMaxRank; ++i) {
    unsigned m = rank - 1 - i; // the tensor dim of descriptor dim i
    p.elementStrides[i] =
        m < a.elementStrides.size() ? clampU32(a.elementStrides[m]) : 1;
    bool known = m < shape.size() && !ShapedType::isDynamic(shape[m]);
    int64_t dim = known ? shape[m] : placeholderDim(i);
    p.globalDim[i] = dim < 0 ? 0 : uint64_t(dim);
    if (i == 0)
      continue;
    uint64_t stride = 256;
    if (m < strides.size() && !ShapedType::isDynamic(strides[m])) {
      // Bytes, saturated: a stride whose byte count does not fit 64 bits
      // is out of range either way.
      unsigned __int128 bytes =
          strides[m] < 0 ? ~(unsigned __int128)0
                         : (unsigned __int128)strides[m] * bits / 8;
      stride = bytes > UINT64_MAX ? UINT64_MAX : uint64_t(bytes);
    }
    p.globalStrides[i - 1] = stride;
  }
}

/// A tiled atom: the box, and box-sized placeholder extents.
static void fillTiledParams(const AtomFields &a, ArrayRef<int64_t> shape,
                            ArrayRef<int64_t> strides, tmap::Params &p) {
  const unsigned rank = a.box.size();
  p.mode = tmap::Mode::Tiled;
  fillCommon(
      a, shape, strides, rank,
      [&](unsigned i) {
        int64_t dim = std::clamp<int64_t>(a.box[rank - 1 - i], 1, 1 << 16);
        return i == 0 ? roundForFormat(a.format, dim) : dim;
      },
      p);
  for (unsigned i = 0; i < rank && i < tmap::kMaxRank; ++i)
    p.boxDim[i] = clampU32(a.box[rank - 1 - i]);
}

/// An im2col atom: box = [pixels per column, channels per pixel], corners
/// over the spatial dims. Unknown spatial dims get 2^17 (non-empty for any
/// corner offset the rank allows), the others one box.
static void fillIm2colParams(const AtomFields &a, ArrayRef<int64_t> shape,
                             ArrayRef<int64_t> strides, tmap::Params &p) {
  const unsigned rank = a.lowerCorner.size() + 2;
  const int64_t pixels = a.box.size() == 2 ? a.box[0] : 0;
  const int64_t channels = a.box.size() == 2 ? a.box[1] : 0;
  // The spatial dims are 1..rank-2, or 0..rank-3 for interleaved layouts.
  const unsigned firstSpatial = a.interleave == Interleave::NONE ? 1 : 0;
  p.mode = tmap::Mode::Im2col;
  fillCommon(
      a, shape, strides, rank,
      [&](unsigned i) -> int64_t {
        if (i >= firstSpatial && i < firstSpatial + rank - 2)
          return int64_t(1) << 17;
        int64_t dim = i == 0 ? std::clamp<int64_t>(channels, 1, 1 << 16) : 1;
        return i == 0 ? roundForFormat(a.format, dim) : dim;
      },
      p);
  p.channelsPerPixel = clampU32(channels);
  p.pixelsPerColumn = clampU32(pixels);
  for (unsigned j = 0; j < a.lowerCorner.size() && j < 3; ++j)
    p.pixelBoxLowerCorner[j] = clampI32(a.lowerCorner[j]);
  for (unsigned j = 0; j < a.upperCorner.size() && j < 3; ++j)
    p.pixelBoxUpperCorner[j] = clampI32(a.upperCorner[j]);
}

/// The driver's parameters for `a` over a tensor of `shape` / `strides`
/// (elements, outermost first; kDynamic where unknown), in the
/// descriptor's innermost-first order.
static void fillParams(const AtomFields &a, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> strides, tmap::Params &p) {
  p = tmap::Params();
  if (isIm2colKind(a.kind))
    fillIm2colParams(a, shape, strides, p);
  else
    fillTiledParams(a, shape, strides, p);
}

static LogicalResult
verifyFields(const AtomFields &a, ArrayRef<int64_t> shape,
             ArrayRef<int64_t> strides, unsigned sm,
             function_ref<InFlightDiagnostic()> emitError) {
  tmap::Params p;
  fillParams(a, shape, strides, p);
  tmap::Diagnostic diag;
  if (tmap::validate(p, tmap::Target{sm}, &diag))
    return success();
  InFlightDiagnostic err = emitError() << diag.message;
  // The driver counts dims from the innermost; name the tensor dim too.
  int rank = int(p.rank);
  switch (diag.rule) {
  case tmap::Rule::GlobalStrideAlign:
  case tmap::Rule::GlobalStrideRange:
    err << " (the stride of tensor dim " << (rank - 2 - diag.index) << ")";
    break;
  case tmap::Rule::GlobalDimRange:
  case tmap::Rule::BoxDimRange:
  case tmap::Rule::ElementStrideRange:
    if (diag.index >= 0)
      err << " (descriptor dims count from the innermost: tensor dim "
          << (rank - 1 - diag.index) << ")";
    break;
  default:
    break;
  }
  return err;
}

void mlir::nvtma::fillDescriptorParams(TmaAtomType atom,
                                       ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> strides,
                                       tmap::Params &p) {
  fillParams(AtomFields::of(atom), shape, strides, p);
}

LogicalResult
mlir::nvtma::verifyDescriptor(TmaAtomType atom, ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> strides, unsigned sm,
                              function_ref<InFlightDiagnostic()> emitError) {
  return verifyFields(AtomFields::of(atom), shape, strides, sm, emitError);
}

std::optional<std::pair<unsigned, bool>>
mlir::nvtma::getTargetSM(Operation *op) {
  auto module = op->getParentOfType<gpu::GPUModuleOp>();
  if (!module || !module.getTargets())
    return std::nullopt;
  for (Attribute a : *module.getTargets()) {
    auto target = dyn_cast<NVVM::NVVMTargetAttr>(a);
    if (!target)
      continue;
    // A chip LLVM does not know is nvtma-check-target's to report.
    const ::nvtma::target::Chip *chip =
        ::nvtma::target::lookupChip(target.getChip());
    if (!chip)
      return std::nullopt;
    return std::make_pair(chip->sm, chip->suffix != 0);
  }
  return std::nullopt;
}

std::string mlir::nvtma::blackwellTmaFamilyError(TmaAtomType atom, unsigned sm,
                                                 bool archSpecific,
                                                 unsigned ptx) {
  // gather4 and cta_group::2 copies: LLVM selects them only for the sm_100
  // and sm_110 families' a/f chips (plain sm_100 and sm_12x abort).
  bool gather4 = atom.getKind() == CopyKind::Gather4Load;
  if (!gather4 && atom.getCtaGroup() != 2)
    return "";
  // PTX ISA 9.0 renamed sm_101 to sm_110: LLVM 22 selects these copies for
  // sm_101a/sm_101f only up to +ptx88 ("Cannot select" with +ptx90).
  if (archSpecific && sm == 101 && ptx >= 90)
    return (llvm::Twine(gather4 ? "gather4" : "cta_group::2") +
            " TMA copies for sm_101 need +ptx88 or older (PTX ISA 9.0 "
            "renamed sm_101 to sm_110; target sm_110a or sm_110f instead), "
            "the target is sm_101 (a/f) with +ptx" +
            llvm::Twine(ptx))
        .str();
  if (archSpecific && (sm / 10 == 10 || sm / 10 == 11))
    return "";
  return (llvm::Twine(gather4 ? "gather4" : "cta_group::2") +
          " TMA copies need an sm_100 or sm_110 family target with the a or "
          "f suffix (sm_100a, sm_100f, sm_103a, sm_110f ...), the target is "
          "sm_" +
          llvm::Twine(sm) + (archSpecific ? " (a/f)" : ""))
      .str();
}

//===----------------------------------------------------------------------===//
// TmaAtomType
//===----------------------------------------------------------------------===//

LogicalResult TmaAtomType::verify(
    function_ref<InFlightDiagnostic()> emitError, CopyKind kind,
    Type elementType, std::optional<TmaFormat> tmaFormatOrDefault,
    ArrayRef<int64_t> box, ArrayRef<int64_t> tileOrEmpty, Swizzle swizzle,
    L2Promotion l2Promotion, Interleave interleave, OOBFill oobFill,
    ArrayRef<int64_t> elementStrides, unsigned multicast, unsigned ctaGroup,
    ReductionKind reduction, ArrayRef<int64_t> lowerCorner,
    ArrayRef<int64_t> upperCorner) {
  // Absent fields take their defaults (the builder stores them absent).
  std::optional<TmaFormat> format =
      tmaFormatOrDefault ? tmaFormatOrDefault : getDefaultFormat(elementType);
  if (!format)
    return emitError() << "element type " << elementType
                       << " has no default tma_format; give one";
  TmaFormat tmaFormat = *format;
  ArrayRef<int64_t> tile = tileOrEmpty.empty() ? box : tileOrEmpty;
  const bool im2col = isIm2colKind(kind);
  int64_t elemBits = getElementBitWidth(elementType);
  if (!elemBits)
    return emitError() << "element type " << elementType
                       << " is not an integer or float type";
  unsigned fmtBits = formatBits(tmaFormat);
  if (isPackedFormat(tmaFormat) ? elemBits != (tmaFormat == TmaFormat::U6X16_ALIGN16B ? 6 : 4)
                                : elemBits != fmtBits)
    return emitError() << "tma_format " << stringifyTmaFormat(tmaFormat)
                       << " has " << fmtBits << "-bit elements, element type "
                       << elementType << " has " << elemBits;
  if (box.empty() || box.size() > 5)
    return emitError() << "box has " << box.size() << " dims, the range is 1..5";
  if (im2col) {
    if (box.size() != 2)
      return emitError() << "an im2col box is [pixels, channels], got "
                         << box.size() << " dims";
    if (lowerCorner.empty() || lowerCorner.size() > 3 ||
        lowerCorner.size() != upperCorner.size())
      return emitError() << "an im2col atom needs 1..3 lower_corner and as "
                            "many upper_corner offsets, got "
                         << lowerCorner.size() << " and " << upperCorner.size();
  } else if (!lowerCorner.empty() || !upperCorner.empty()) {
    return emitError() << "lower_corner / upper_corner are for im2col atoms";
  }
  if (kind == CopyKind::Gather4Load && (box.size() != 2 || box[0] != 4))
    return emitError() << "a gather4 box is [4, columns] (2-D, four rows)";
  if (tile.size() != box.size())
    return emitError() << "tile has " << tile.size() << " dims, box has "
                       << box.size();
  for (auto [i, b] : llvm::enumerate(box)) {
    if (b <= 0 || tile[i] <= 0 || tile[i] % b)
      return emitError() << "tile dim " << i << " is " << tile[i]
                         << ", it must be a positive multiple of box dim "
                         << i << " (" << b << ")";
  }
  unsigned rank = im2col ? lowerCorner.size() + 2 : box.size();
  if (!elementStrides.empty() && elementStrides.size() != rank)
    return emitError() << "element_strides has " << elementStrides.size()
                       << " entries, the tensor rank is " << rank;
  if (multicast < 1 || multicast > 16)
    return emitError() << "multicast is " << multicast
                       << ", a cluster holds 1..16 CTAs";
  if (multicast > 1 && !isMulticastKind(kind))
    return emitError() << "multicast " << multicast << " needs a "
                       << "load_multicast or im2col_load_multicast atom";
  // A multicast load's CTAs each load one slice of the tile's outermost dim:
  // box dim 0 is the slice, the tile's dim 0 all of them.
  if (multicast > 1 && !im2col && tile[0] != box[0] * multicast)
    return emitError() << "multicast-slice: tile dim 0 is " << tile[0]
                       << ", a multicast atom's is box dim 0 (" << box[0]
                       << ") times multicast (" << multicast << ")";
  if (ctaGroup != 1 && ctaGroup != 2)
    return emitError() << "cta_group is " << ctaGroup << ", expected 1 or 2";
  if (reduction != ReductionKind::ADD && kind != CopyKind::Reduce)
    return emitError() << "reduction is for reduce atoms";
  if (kind == CopyKind::Reduce) {
    // cp.reduce.async.bulk.tensor takes its element type from the
    // descriptor; the PTX ISA lists which formats each reduction accepts
    // (others fault at run time: min on float32 does on the H200).
    using F = TmaFormat;
    ArrayRef<F> ok;
    static constexpr F addOk[] = {F::UINT32, F::INT32,   F::UINT64,  F::FLOAT32,
                                  F::FLOAT32_FTZ, F::FLOAT16, F::BFLOAT16};
    static constexpr F minMaxOk[] = {F::UINT32, F::INT32, F::UINT64,
                                     F::INT64,  F::FLOAT16, F::BFLOAT16};
    static constexpr F incDecOk[] = {F::UINT32, F::INT32};
    static constexpr F bitwiseOk[] = {F::UINT32, F::INT32, F::UINT64, F::INT64};
    switch (reduction) {
    case ReductionKind::ADD:
      ok = addOk;
      break;
    case ReductionKind::MIN:
    case ReductionKind::MAX:
      ok = minMaxOk;
      break;
    case ReductionKind::INC:
    case ReductionKind::DEC:
      ok = incDecOk;
      break;
    default:
      ok = bitwiseOk;
      break;
    }
    if (!llvm::is_contained(ok, tmaFormat)) {
      auto diag = emitError();
      diag << "reduce-format: reduction " << stringifyReductionKind(reduction)
           << " does not take tma_format " << stringifyTmaFormat(tmaFormat)
           << "; cp.reduce.async.bulk.tensor." << stringifyReductionKind(reduction)
           << " takes ";
      llvm::interleaveComma(ok, diag, [&](F f) { diag << stringifyTmaFormat(f); });
      return diag;
    }
  }
  // The tensor's dims are unknown here: check every static field by the
  // driver's rules with placeholder extents (see fillParams). Architecture
  // rules are the ops' business (they know their target), so check as sm_100.
  AtomFields fields{kind,           tmaFormat,   box,        elementStrides,
                    lowerCorner,    upperCorner, swizzle,    l2Promotion,
                    interleave,     oobFill};
  return verifyFields(fields, {}, {}, 100, emitError);
}

//===----------------------------------------------------------------------===//
// Int lists of the atom's declarative assembly format
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> mlir::nvtma::parseIntList(AsmParser &parser) {
  SmallVector<int64_t> out;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        int64_t v;
        if (parser.parseInteger(v))
          return failure();
        out.push_back(v);
        return success();
      }))
    return failure();
  return out;
}

void mlir::nvtma::printIntList(AsmPrinter &printer, ArrayRef<int64_t> v) {
  printer << '[';
  llvm::interleaveComma(v, printer);
  printer << ']';
}
