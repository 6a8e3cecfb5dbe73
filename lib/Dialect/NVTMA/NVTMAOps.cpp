//===- NVTMAOps.cpp - nvtma operations ------------------------------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "nvtma/Dialect/NVTMA/NVTMADialect.h"
#include "nvtma/TensorMap/TensorMap.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::nvtma;

/// `g2s` rather than `<g2s>` for the bulk copy direction.
static ParseResult parseBulkCopyKind(OpAsmParser &parser, BulkCopyKindAttr &kind) {
  StringRef word;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<BulkCopyKind> k = symbolizeBulkCopyKind(word);
  if (!k)
    return parser.emitError(loc)
           << "'" << word << "' is not a bulk copy kind (g2s, g2s_multicast, s2g, "
              "s2g_bytemask, s2s_cluster)";
  kind = BulkCopyKindAttr::get(parser.getContext(), *k);
  return success();
}

static void printBulkCopyKind(OpAsmPrinter &printer, Operation *,
                              BulkCopyKindAttr kind) {
  printer << stringifyBulkCopyKind(kind.getValue());
}

#define GET_OP_CLASSES
#include "nvtma/Dialect/NVTMA/NVTMAOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Numeric address space of a memref: 0 (generic) without one, the integer
/// (none past 32 bits: getInt() asserted on an i128 one), or the NVPTX
/// number of a #gpu.address_space.
static std::optional<unsigned> getAddressSpace(MemRefType type) {
  Attribute space = type.getMemorySpace();
  if (!space)
    return 0;
  if (auto i = dyn_cast<IntegerAttr>(space)) {
    const APInt &v = i.getValue();
    if (v.getActiveBits() > 32)
      return std::nullopt;
    return static_cast<unsigned>(v.getZExtValue());
  }
  if (auto g = dyn_cast<gpu::AddressSpaceAttr>(space)) {
    switch (g.getValue()) {
    case gpu::AddressSpace::Global:
      return 1;
    case gpu::AddressSpace::Workgroup:
      return 3;
    case gpu::AddressSpace::Private:
      return 5;
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

/// Checks that the enclosing gpu.module's target can run what `atom` needs.
static LogicalResult verifyArch(Operation *op, TmaAtomType atom) {
  auto target = getTargetSM(op);
  if (!target)
    return success();
  unsigned need = atom.getRequiredSM();
  if (target->first < need)
    return op->emitOpError()
           << "needs sm_" << need << " or newer (" << atom
           << "), the gpu.module targets sm_" << target->first;
  if (std::string why =
          blackwellTmaFamilyError(atom, target->first, target->second);
      !why.empty())
    return op->emitOpError() << why;
  // Rules that differ by architecture, e.g. 128B-atom swizzles.
  return verifyDescriptor(atom, {}, {}, target->first >= 100 ? 100 : 90,
                          [&] { return op->emitOpError(); });
}

/// A static tensor dim a TMA copy's coordinates reach the end of: TMA copies
/// take signed 32-bit coordinates in every mode (tile, im2col, gather4), while
/// a descriptor takes dims up to 2^32, so no copy could reach the boxes from
/// element 2^31 on. The launch refuses such a dynamic dim alike (rule
/// coordinate-range), and kernels/copy.py's builders take the same limit.
static LogicalResult
verifyCoordinateRange(ArrayRef<int64_t> shape,
                      function_ref<InFlightDiagnostic()> emitError) {
  for (auto [m, dim] : llvm::enumerate(shape))
    if (!ShapedType::isDynamic(dim) && dim >= (int64_t(1) << 31))
      return emitError() << "coordinate-range: tensor dim " << m << " is "
                         << dim
                         << " elements, the limit is 2^31 - 1; TMA copies "
                            "take signed 32-bit coordinates, none reaches "
                            "element 2^31 of a dim";
  return success();
}

/// What a global tensor must share with the TMA atom that describes it
/// (nvtma.make_tiled_tma_atom, nvtma.update_tma_descriptor): its element
/// type, a global memory space (tensormap.replace writes its address as a
/// global one) and the atom's rank.
static LogicalResult verifyTensorOfAtom(Operation *op, TmaAtomType atom,
                                        MemRefType tensor) {
  if (tensor.getElementType() != atom.getElementType())
    return op->emitOpError()
           << "tensor element type " << tensor.getElementType()
           << " differs from the atom's " << atom.getElementType();
  auto space = getAddressSpace(tensor);
  if (!space || (*space != 0 && *space != 1))
    return op->emitOpError()
           << "tensor must be in global memory, its memory space is "
           << tensor.getMemorySpace();
  if (tensor.getRank() != atom.getTensorRank())
    return op->emitOpError() << "tensor has rank " << tensor.getRank()
                             << ", the atom describes rank "
                             << atom.getTensorRank();
  return success();
}

//===----------------------------------------------------------------------===//
// MakeTiledTmaAtomOp
//===----------------------------------------------------------------------===//

LogicalResult MakeTiledTmaAtomOp::verify() {
  TmaAtomType atom = getAtom().getType();
  MemRefType tensor = getTensor().getType();
  if (failed(verifyTensorOfAtom(*this, atom, tensor)))
    return failure();
  unsigned rank = atom.getTensorRank();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!hasComputableStrides(tensor))
    return emitOpError() << "tensor " << tensor
                         << " has more elements than int64 counts";
  if (failed(tensor.getStridesAndOffset(strides, offset)))
    return emitOpError() << "tensor layout " << tensor.getLayout()
                         << " is not strided";
  if (strides.back() != 1)
    return emitOpError() << "the innermost tensor dim must be contiguous "
                            "(stride 1), its stride is "
                         << (ShapedType::isDynamic(strides.back())
                                 ? std::string("dynamic")
                                 : std::to_string(strides.back()));

  ArrayRef<int64_t> tiler = getCtaTiler();
  if (tiler != atom.getTileShape())
    return emitOpError() << "cta_tiler [" << tiler
                         << "] differs from the atom's tile ["
                         << atom.getTileShape() << "]";
  // CuTe's rule (nvtma::tensormap::cuteBox, the one copy of it): the tile,
  // split over the multicast CTAs along its outermost dim, in the largest
  // boxes <= 256 elements (innermost: <= the swizzle span).
  SmallVector<int64_t> expect(tiler.begin(), tiler.end());
  if (tiler.front() % atom.getMulticast())
    return emitOpError() << "tile dim 0 (" << tiler.front()
                         << ") does not split over " << atom.getMulticast()
                         << " multicast CTAs";
  if (!atom.isIm2col() && atom.getKind() != CopyKind::Gather4Load) {
    ::nvtma::tensormap::Diagnostic diag;
    if (!::nvtma::tensormap::cuteBox(
            tiler.data(), tiler.size(), atom.getMulticast(),
            static_cast<::nvtma::tensormap::Swizzle>(atom.getSwizzle()),
            getElementBitWidth(atom.getElementType()),
            static_cast<::nvtma::tensormap::Interleave>(atom.getInterleave()),
            expect.data(), &diag))
      return emitOpError() << diag.message;
  } else {
    expect.front() /= atom.getMulticast();
  }
  if (ArrayRef<int64_t>(expect) != atom.getBox())
    return emitOpError() << "box [" << atom.getBox()
                         << "] is not the TMA box of tile [" << tiler
                         << "] (multicast " << atom.getMulticast()
                         << ", swizzle " << stringifySwizzle(atom.getSwizzle())
                         << "): expected [" << expect << "]";
  unsigned sm = 100;
  if (auto target = getTargetSM(*this))
    sm = target->first >= 100 ? 100 : 90;
  if (failed(verifyDescriptor(atom, tensor.getShape(), strides, sm,
                              [&] { return emitOpError(); })) ||
      failed(verifyCoordinateRange(tensor.getShape(),
                                   [&] { return emitOpError(); })))
    return failure();
  return verifyArch(*this, atom);
}

//===----------------------------------------------------------------------===//
// TmaPartitionOp
//===----------------------------------------------------------------------===//

void TmaPartitionOp::build(OpBuilder &b, OperationState &state, Value atom,
                           ValueRange tileCoords) {
  SmallVector<Type> results(tileCoords.size(), b.getIndexType());
  build(b, state, results, atom, tileCoords);
}

LogicalResult TmaPartitionOp::verify() {
  auto atom = getAtom().getType();
  size_t n = atom.getTileShape().size();
  if (getTileCoords().size() != n)
    return emitOpError() << "has " << getTileCoords().size()
                         << " tile coordinates, the atom's tile has " << n
                         << " dims";
  if (getCoordinates().size() != n)
    return emitOpError() << "returns " << getCoordinates().size()
                         << " coordinates, expected " << n;
  return success();
}

//===----------------------------------------------------------------------===//
// CreateTmaMulticastMaskOp
//===----------------------------------------------------------------------===//

LogicalResult CreateTmaMulticastMaskOp::verify() {
  ArrayRef<int64_t> shape = getClusterShape();
  if (shape.empty() || shape.size() > 3)
    return emitOpError() << "cluster_shape has " << shape.size()
                         << " dims, expected 1..3 (x, y, z)";
  int64_t size = 1;
  for (int64_t d : shape) {
    if (d <= 0)
      return emitOpError() << "cluster_shape [" << shape
                           << "] has a non-positive dim";
    // Saturate: a dim over 16 already overflows the mask (and a product of
    // huge dims would overflow int64).
    size = d > 16 ? 17 : std::min<int64_t>(size * d, 17);
  }
  if (size > 16)
    return emitOpError() << "cluster_shape [" << shape
                         << "] holds more than 16 CTAs, a multicast mask "
                            "covers at most 16";
  if (getCtaCoords().size() != shape.size())
    return emitOpError() << "has " << getCtaCoords().size()
                         << " CTA coordinates, cluster_shape has "
                         << shape.size() << " dims";
  if (getMode() < 0 || getMode() >= int64_t(shape.size()))
    return emitOpError() << "mode " << getMode() << " is not a dim of "
                         << "cluster_shape [" << shape << "]";
  return success();
}

MulticastMaskLayout mlir::nvtma::getMulticastMaskLayout(ArrayRef<int64_t> shape,
                                                     int64_t mode) {
  // CTA ranks count x fastest: rank = x + X * (y + Y * z).
  MulticastMaskLayout layout;
  int64_t stride = 1, modeStride = 1;
  for (auto [d, extent] : llvm::enumerate(shape)) {
    if (int64_t(d) == mode) {
      modeStride = stride;
      layout.strides.push_back(0);
    } else {
      layout.strides.push_back(stride);
    }
    stride *= extent;
  }
  for (int64_t k = 0; k < shape[mode]; ++k)
    layout.pattern |= 1u << (k * modeStride);
  return layout;
}

OpFoldResult CreateTmaMulticastMaskOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> shape = getClusterShape();
  MulticastMaskLayout layout = getMulticastMaskLayout(shape, getMode());
  int64_t base = 0;
  for (auto [d, a] : llvm::enumerate(adaptor.getCtaCoords())) {
    auto i = dyn_cast_or_null<IntegerAttr>(a);
    if (!i || i.getInt() < 0 || i.getInt() >= shape[d])
      return {};
    base += i.getInt() * layout.strides[d];
  }
  return IntegerAttr::get(IntegerType::get(getContext(), 16),
                          uint16_t(layout.pattern << base));
}

//===----------------------------------------------------------------------===//
// CopyOp
//===----------------------------------------------------------------------===//

LogicalResult CopyOp::verify() {
  TmaAtomType atom = getAtom().getType();
  CopyKind kind = atom.getKind();
  unsigned rank = atom.getTensorRank();
  size_t coords = getCoordinates().size();
  size_t expected = kind == CopyKind::Gather4Load ? 5 : rank;
  if (coords != expected)
    return emitOpError() << "has " << coords << " coordinates, "
                         << stringifyCopyKind(kind) << " of a rank-" << rank
                         << " tensor needs " << expected;
  MemRefType smem = getSmem().getType();
  auto space = getAddressSpace(smem);
  if (!space || *space != 3)
    return emitOpError() << "smem must be in workgroup (shared) memory, its "
                            "memory space is "
                         << smem.getMemorySpace();
  if (smem.getElementType() != atom.getElementType())
    return emitOpError() << "smem element type " << smem.getElementType()
                         << " differs from the atom's "
                         << atom.getElementType();
  // The TMA writes each box densely: a tile split only along its outermost
  // dim is a dense tile; one split along inner dims needs a blocked buffer,
  // one box after another: [number of boxes, box...]. A multicast tile's
  // boxes are each all the CTAs' slices of dim 0 (the tile's whole dim 0).
  ArrayRef<int64_t> tile = atom.getTileShape();
  SmallVector<int64_t> box(atom.getBox());
  if (atom.isMulticast() && !atom.isIm2col())
    box[0] = tile[0];
  int64_t numBoxes = 1;
  bool innerSplit = false;
  for (size_t i = 0; i < box.size(); ++i) {
    numBoxes *= tile[i] / box[i];
    innerSplit |= i > 0 && box[i] != tile[i];
  }
  SmallVector<int64_t> blocked{numBoxes};
  blocked.append(box.begin(), box.end());
  if (smem.getShape() == tile) {
    if (innerSplit)
      return emitOpError()
             << "tile [" << tile << "] is split into boxes [" << box
             << "] along inner dims, which the TMA writes one after another: "
                "give smem the blocked shape ["
             << ArrayRef<int64_t>(blocked) << "]";
  } else if (smem.getShape() != ArrayRef<int64_t>(blocked)) {
    return emitOpError() << "smem shape [" << smem.getShape()
                         << "] differs from the atom's tile [" << tile << "]"
                         << (innerSplit ? " and from its blocked form [" : "")
                         << (innerSplit ? ArrayRef<int64_t>(blocked)
                                        : ArrayRef<int64_t>())
                         << (innerSplit ? "]" : "");
  }
  // The TMA writes densely: any layout whose strides are the row-major ones
  // (a stage slice of a larger buffer, say) will do; the offset may vary.
  SmallVector<int64_t> smemStrides;
  int64_t smemOffset;
  if (!hasComputableStrides(smem))
    return emitOpError() << "smem " << smem
                         << " has more elements than int64 counts";
  bool dense = succeeded(smem.getStridesAndOffset(smemStrides, smemOffset));
  int64_t expect = 1;
  for (int64_t i = smem.getRank() - 1; dense && i >= 0; --i) {
    dense = smemStrides[i] == expect || smem.getDimSize(i) == 1;
    expect *= smem.getDimSize(i);
  }
  if (!dense)
    return emitOpError() << "smem must be dense row-major (the TMA writes it "
                            "densely), its layout is "
                         << smem.getLayout();
  if (atom.isLoad()) {
    if (!getBarriers())
      return emitOpError() << "a " << stringifyCopyKind(kind)
                           << " completes on an mbarrier: give `barrier`";
  } else if (getBarriers()) {
    return emitOpError() << "a " << stringifyCopyKind(kind)
                         << " joins a bulk group and takes no mbarrier";
  }
  if (getMask() && !atom.isMulticast())
    return emitOpError() << "mask is for multicast atoms";
  if (atom.isMulticast() && (!getMask() || !getCtaRank()))
    return emitOpError() << "a multicast load needs its CTA `mask` and its "
                            "rank in the multicast group (`cta`)";
  if (getCtaRank() && !atom.isMulticast())
    return emitOpError() << "cta rank is only for multicast atoms";
  size_t offsets = getOffsets().size();
  size_t wantOffsets =
      (atom.isIm2col() && atom.isLoad()) ? rank - 2 : 0;
  if (offsets != wantOffsets)
    return emitOpError() << "has " << offsets << " im2col offsets, expected "
                         << wantOffsets;
  // A tiled copy starts each row on 16 bytes: on the H200 a load whose
  // innermost coordinate is 4, 8 or 12 bytes into a row (f32 columns 1-3,
  // bf16 1 or 4, or 13 f32 columns: 52 bytes) faults with an illegal
  // instruction (benchmarks/diag/tma_align.py), and so do stores. Checked
  // here where the coordinate is a constant.
  APInt inner;
  if ((kind == CopyKind::Load || kind == CopyKind::LoadMulticast ||
       kind == CopyKind::Store) &&
      atom.getInterleave() == Interleave::NONE &&
      matchPattern(getCoordinates().back(), m_ConstantInt(&inner))) {
    int64_t bits = getElementBitWidth(atom.getElementType());
    int64_t at = inner.getSExtValue();
    if (at * bits % 128)
      return emitOpError() << "innermost coordinate " << at << " is "
                           << at * bits / 8
                           << " bytes into a row: a tiled TMA copy starts "
                              "each row on 16 bytes (a multiple of "
                           << 128 / bits << " " << atom.getElementType()
                           << " elements)";
  }
  return verifyArch(*this, atom);
}

//===----------------------------------------------------------------------===//
// PrefetchOp
//===----------------------------------------------------------------------===//

LogicalResult PrefetchOp::verify() {
  TmaAtomType atom = getAtom().getType();
  CopyKind kind = atom.getKind();
  if (kind != CopyKind::Load && kind != CopyKind::LoadMulticast)
    return emitOpError() << "prefetches the tiles of tile-mode load atoms, not "
                            "of a "
                         << stringifyCopyKind(kind) << " atom";
  unsigned rank = atom.getTensorRank();
  if (getCoordinates().size() != rank)
    return emitOpError() << "has " << getCoordinates().size()
                         << " coordinates, a rank-" << rank
                         << " tensor needs " << rank;
  if (atom.isMulticast() && !getCtaRank())
    return emitOpError() << "a multicast atom's CTA prefetches its slice of "
                            "the tile: give its rank (`cta`)";
  if (getCtaRank() && !atom.isMulticast())
    return emitOpError() << "cta rank is only for multicast atoms";
  return verifyArch(*this, atom);
}

//===----------------------------------------------------------------------===//
// UpdateTmaDescriptorOp
//===----------------------------------------------------------------------===//

LogicalResult UpdateTmaDescriptorOp::verify() {
  TmaAtomType atom = getAtom().getType();
  MemRefType tensor = getTensor().getType();
  if (failed(verifyTensorOfAtom(*this, atom, tensor)))
    return failure();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffsetChecked(tensor, strides, offset)) ||
      strides.back() != 1)
    return emitOpError() << "tensor must be strided with a contiguous "
                            "innermost dim";
  auto target = getTargetSM(*this);
  if (target && !target->second)
    return emitOpError() << "tensormap.replace needs sm_" << target->first
                         << "a (an architecture-specific target), the "
                            "gpu.module targets sm_"
                         << target->first;
  // What the tensor's type fixes (static dims and strides) against the
  // driver's rules now; the launch checks the rest, no driver does on the
  // device.
  if (failed(verifyDescriptor(atom, tensor.getShape(), strides,
                              target && target->first >= 100 ? 100 : 90,
                              [&] { return emitOpError(); })))
    return failure();
  return verifyCoordinateRange(tensor.getShape(),
                               [&] { return emitOpError(); });
}

//===----------------------------------------------------------------------===//
// BulkCopyOp
//===----------------------------------------------------------------------===//

LogicalResult BulkCopyOp::verify() {
  auto as = [](Value v) {
    return cast<LLVM::LLVMPointerType>(v.getType()).getAddressSpace();
  };
  BulkCopyKind kind = getKind();
  unsigned wantDst = 3, wantSrc = 1;
  bool wantBarrier = false, wantRemote = false, wantMask = false;
  switch (kind) {
  case BulkCopyKind::G2S:
    wantBarrier = true;
    break;
  case BulkCopyKind::G2SMulticast:
    wantBarrier = wantMask = true;
    break;
  case BulkCopyKind::S2G:
    wantDst = 1, wantSrc = 3;
    break;
  case BulkCopyKind::S2GByteMask:
    wantDst = 1, wantSrc = 3, wantMask = true;
    break;
  case BulkCopyKind::S2SCluster:
    wantDst = 7, wantSrc = 3, wantRemote = true;
    break;
  }
  StringRef name = stringifyBulkCopyKind(kind);
  if (as(getDst()) != wantDst || as(getSrc()) != wantSrc)
    return emitOpError() << name << " copies !llvm.ptr<" << wantSrc
                         << "> to !llvm.ptr<" << wantDst << ">, got "
                         << getSrc().getType() << " to " << getDst().getType();
  if (bool(getBarriers()) != wantBarrier)
    return emitOpError() << name
                         << (wantBarrier ? " completes on a local mbarrier: "
                                           "give `barrier`"
                                         : " takes no local mbarrier");
  if (bool(getRemoteBarrier()) != wantRemote)
    return emitOpError() << name
                         << (wantRemote ? " completes on the peer CTA's "
                                          "mbarrier: give `remote_barrier`"
                                        : " takes no remote mbarrier");
  if (bool(getMask()) != wantMask)
    return emitOpError() << name << (wantMask ? " needs `mask`"
                                              : " takes no mask");
  if (kind == BulkCopyKind::S2GByteMask)
    if (auto target = getTargetSM(*this); target && target->first < 100)
      return emitOpError() << "s2g_bytemask (.cp_mask) needs sm_100, the "
                              "gpu.module targets sm_"
                           << target->first;
  APInt size;
  if (matchPattern(getSize(), m_ConstantInt(&size)) &&
      (size.getSExtValue() <= 0 || size.getSExtValue() % 16))
    return emitOpError() << "size is " << size.getSExtValue()
                         << " bytes, it must be a positive multiple of 16";
  return success();
}

//===----------------------------------------------------------------------===//
// CpAsyncOp
//===----------------------------------------------------------------------===//

LogicalResult CpAsyncOp::verify() {
  if (getCacheMode() == LoadCacheMode::GLOBAL && getSize() != 16)
    return emitOpError() << "cache mode global (cp.async.cg) copies 16 "
                            "bytes, size is "
                         << getSize();
  return success();
}

//===----------------------------------------------------------------------===//
// AddressOfOp
//===----------------------------------------------------------------------===//

LogicalResult AddressOfOp::verify() {
  MemRefType type = getMemref().getType();
  if (getIndices().size() != size_t(type.getRank()))
    return emitOpError() << "has " << getIndices().size()
                         << " indices for a rank-" << type.getRank()
                         << " memref";
  auto space = getAddressSpace(type);
  unsigned want = cast<LLVM::LLVMPointerType>(getPtr().getType())
                      .getAddressSpace();
  if (!space || *space != want)
    return emitOpError() << "result pointer is in address space " << want
                         << ", the memref's memory space is "
                         << type.getMemorySpace();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffsetChecked(type, strides, offset)))
    return emitOpError() << "memref layout is not strided, or its size "
                            "overflows int64";
  return success();
}

//===----------------------------------------------------------------------===//
// Memory effects of the copies
//===----------------------------------------------------------------------===//

using EffectList =
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>;

/// `effect` on the operand in `range`, if there is one.
template <typename EffectT>
static void addOptional(EffectList &effects, MutableOperandRange range) {
  if (!range.empty())
    effects.emplace_back(EffectT::get(), &range[0]);
}

void CopyOp::getEffects(EffectList &effects) {
  TmaAtomType atom = getAtom().getType();
  effects.emplace_back(MemoryEffects::Read::get(), &getAtomMutable());
  if (atom.isLoad()) {
    // Global memory (through the descriptor) into smem, completing on the
    // mbarrier.
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get(), &getSmemMutable());
    addOptional<MemoryEffects::Write>(effects, getBarriersMutable());
    return;
  }
  effects.emplace_back(MemoryEffects::Read::get(), &getSmemMutable());
  if (atom.getKind() == CopyKind::Reduce)
    effects.emplace_back(MemoryEffects::Read::get());
  effects.emplace_back(MemoryEffects::Write::get());
}

void BulkCopyOp::getEffects(EffectList &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getSrcMutable());
  effects.emplace_back(MemoryEffects::Write::get(), &getDstMutable());
  addOptional<MemoryEffects::Write>(effects, getBarriersMutable());
  addOptional<MemoryEffects::Write>(effects, getRemoteBarrierMutable());
}

void CpAsyncOp::getEffects(EffectList &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getSrcMutable());
  effects.emplace_back(MemoryEffects::Write::get(), &getDstMutable());
}

void DsmemStoreOp::getEffects(EffectList &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), &getDstMutable());
  effects.emplace_back(MemoryEffects::Write::get(), &getRemoteBarrierMutable());
}

/// Whether a wgmma operand type is one of the fp8 ones.
static bool isFp8(WgmmaType t) {
  return t == WgmmaType::E4M3 || t == WgmmaType::E5M2;
}

LogicalResult WgmmaMmaAsyncRsOp::verify() {
  auto acc = cast<LLVM::LLVMStructType>(getAcc().getType());
  int32_t n = getN();
  if (n % 8)
    return emitOpError() << "n = " << n << ": a multiple of 8 in [8, 256]";
  ArrayRef<Type> body = acc.getBody();
  if (int64_t(body.size()) != n / 2 ||
      !llvm::all_of(body, [](Type t) { return t.isF32(); }))
    return emitOpError() << "acc " << acc << ": a 64 x " << n
                         << " tile of f32 accumulators is a struct of "
                         << n / 2 << " f32";
  WgmmaType a = getTypeA(), b = getTypeB();
  if (isFp8(a) != isFp8(b) || (!isFp8(a) && a != b))
    return emitOpError() << "operand types " << stringifyWgmmaType(a)
                         << " and " << stringifyWgmmaType(b)
                         << " do not pair (f16, bf16 and tf32 with "
                            "themselves, fp8 with fp8)";
  return success();
}

LogicalResult VectorAtomicAddOp::verify() {
  auto v = cast<VectorType>(getValue().getType());
  bool f32 = v.getElementType().isF32();
  if (Value r = getResult()) {
    if (f32)
      return emitOpError() << "of " << v
                           << " has no result: the f32 vector forms are "
                              "reductions (red), which return nothing";
    if (r.getType() != v)
      return emitOpError() << "result " << r.getType()
                           << " is not the value's type " << v;
  }
  auto ptr = cast<LLVM::LLVMPointerType>(getPtr().getType());
  if (f32 && ptr.getAddressSpace() != 1)
    return emitOpError() << "of " << v
                         << " needs a global pointer (!llvm.ptr<1>): the "
                            "vector red forms are .global only, got "
                         << getPtr().getType();
  return success();
}

LogicalResult BarrierSyncOp::verify() {
  APInt id, count;
  if (matchPattern(getId(), m_ConstantInt(&id)) && id.uge(16))
    return emitOpError() << "barrier id " << id.getSExtValue()
                         << " is not 0-15 (a CTA has 16 named barriers)";
  if (getCount() && matchPattern(getCount(), m_ConstantInt(&count))) {
    int64_t c = count.getSExtValue();
    if (c < 32 || c > 1024 || c % 32)
      return emitOpError() << "thread count " << c
                           << " is not a multiple of 32 (whole warps) in "
                              "[32, 1024]";
  }
  return success();
}

LogicalResult FloatFnOp::verify() {
  FloatFn fn = getFn();
  unsigned want = fn == FloatFn::DIV_APPROX ? 2 : 1;
  if (getOperands().size() != want)
    return emitOpError() << stringifyFloatFn(fn) << " takes " << want
                         << " operand(s), got " << getOperands().size();
  if (getType().isF64() && fn != FloatFn::SQRT_RN &&
      fn != FloatFn::RSQRT_APPROX)
    return emitOpError() << stringifyFloatFn(fn)
                         << " is f32 only in PTX (f64: sqrt_rn and "
                            "rsqrt_approx), got "
                         << getType();
  return success();
}

LogicalResult FPToIntSatOp::verify() {
  auto lanes = [](Type t) {
    auto v = dyn_cast<VectorType>(t);
    return v ? v.getNumElements() : int64_t(0);
  };
  Type src = getValue().getType(), dst = getResult().getType();
  if (lanes(src) != lanes(dst))
    return emitOpError() << "of " << src << " to " << dst
                         << ": the lane counts differ";
  return success();
}
