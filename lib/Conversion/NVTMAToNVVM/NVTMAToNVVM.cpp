//===- NVTMAToNVVM.cpp - nvtma to NVVM conversion -------------------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The lowering patterns of convert-nvtma-to-nvvm, one per op (the copy
// kinds share one base), run in one conversion with the nvgpu mbarrier
// lowering. Descriptors are kernel parameters by now
// (nvtma-materialize-descriptors) and the target was checked
// (nvtma-check-target): nothing here checks or records anything.
//
//===----------------------------------------------------------------------===//

#include "nvtma/Conversion/NVTMAToNVVM.h"
#include "nvtma/Dialect/NVTMA/NVTMADialect.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::nvtma {
#define GEN_PASS_DEF_CONVERTNVTMATONVVM
#include "nvtma/Conversion/Passes.h.inc"
} // namespace mlir::nvtma

using namespace mlir;
using namespace mlir::nvtma;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// An i32 constant.
static Value i32Const(OpBuilder &b, Location loc, int64_t v) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(v));
}

/// Truncates a converted index (i64) to the i32 TMA coordinates take.
static Value toI32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isInteger(32))
    return v;
  return LLVM::TruncOp::create(b, loc, b.getI32Type(), v);
}

/// The address of element 0 of a converted memref (aligned pointer plus
/// offset), in the memref's address space.
static Value memrefBase(OpBuilder &b, Location loc,
                        const LLVMTypeConverter &converter, MemRefType type,
                        Value desc) {
  SmallVector<Value> zeros(
      type.getRank(), LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                               b.getI64IntegerAttr(0)));
  return LLVM::getStridedElementPtr(b, loc, converter, type, desc, zeros);
}

/// `ptr + bytes` for an LLVM pointer.
static Value offsetBytes(OpBuilder &b, Location loc, Value ptr, int64_t bytes) {
  if (!bytes)
    return ptr;
  return LLVM::GEPOp::create(b, loc, ptr.getType(), b.getI8Type(), ptr,
                             ArrayRef<LLVM::GEPArg>{LLVM::GEPArg(int32_t(bytes))});
}

/// Casts a pointer to another address space.
static Value castPtr(OpBuilder &b, Location loc, Value ptr, unsigned as) {
  auto type = LLVM::LLVMPointerType::get(b.getContext(), as);
  if (ptr.getType() == type)
    return ptr;
  return LLVM::AddrSpaceCastOp::create(b, loc, type, ptr);
}

/// Emits `asmString` as volatile inline PTX with side effects.
static void inlinePtx(OpBuilder &b, Location loc, StringRef asmString,
                      StringRef constraints, ValueRange operands) {
  LLVM::InlineAsmOp::create(
      b, loc, TypeRange{}, operands, asmString, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
}

/// Emits `asmString` as volatile inline PTX with one result of `type`.
static Value inlinePtxResult(OpBuilder &b, Location loc, Type type,
                             StringRef asmString, StringRef constraints,
                             ValueRange operands) {
  return LLVM::InlineAsmOp::create(
             b, loc, type, operands, asmString, constraints,
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::TailCallKind::None,
             LLVM::AsmDialectAttr::get(b.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             ArrayAttr())
      .getResult(0);
}

/// `v`, the result of inline PTX that the warp (or warpgroup) runs together:
/// its LLVM IR call is convergent (nvtma.convergent), so LLVM neither
/// duplicates it into paths that split the warp nor merges it past a branch.
static Value convergent(Value v) {
  v.getDefiningOp()->setAttr(NVTMADialect::getConvergentAttrName(),
                             UnitAttr::get(v.getContext()));
  return v;
}

/// A 32-bit shared-state-space address for inline PTX ("r" operands).
static Value sharedAddr32(OpBuilder &b, Location loc, Value ptr) {
  return LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), ptr);
}

/// Runs `body` in one elected lane of the calling warp: TMA instructions are
/// issued by a single thread. Uses scf.if so it also works inside scf
/// regions, which must keep a single block.
static void inElectedLane(OpBuilder &b, Location loc,
                          function_ref<void(OpBuilder &)> body) {
  Value elected = NVVM::ElectSyncOp::create(b, loc, b.getI1Type(), Value());
  auto ifOp = scf::IfOp::create(b, loc, elected, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body(b);
}

/// Address of mbarrier `id` of a converted !nvgpu.mbarrier.group.
static Value mbarrierPtr(OpBuilder &b, Location loc,
                         const LLVMTypeConverter &converter,
                         nvgpu::MBarrierGroupType type, Value desc, Value id) {
  MemRefType memref = nvgpu::getMBarrierMemrefType(b.getContext(), type);
  return LLVM::getStridedElementPtr(b, loc, converter, memref, desc, {id});
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

/// What every box of one nvtma.copy needs.
struct BoxCopy {
  TmaAtomType atom;
  Value desc;     ///< the descriptor (generic pointer)
  Value dst;      ///< this box's bytes in shared memory
  SmallVector<Value> coords; ///< PTX order: innermost first
  Value barrier, mask, hint; ///< loads: mbarrier, multicast mask; any: hint
  SmallVector<Value> offsets; ///< im2col loads, PTX order
};

/// Calls `body(b, coords, linear)` for each box of the atom's tile at
/// `coords` (i32, outermost first), in one elected lane: `coords` the box's
/// global coordinates in PTX order (innermost first; gather4: {column,
/// row0..row3}), `linear` its index among the tile's boxes. With
/// `sliceRank`, a multicast atom's CTA takes slice `sliceRank` of the
/// tile's outermost dim (one box).
static void forEachBox(
    OpBuilder &rewriter, Location loc, TmaAtomType atom, ArrayRef<Value> coords,
    Value sliceRank,
    function_ref<void(OpBuilder &, ArrayRef<Value>, int64_t)> body) {
  ArrayRef<int64_t> box = atom.getBox(), tile = atom.getTileShape();
  unsigned n = box.size();
  SmallVector<int64_t> grid(n);
  for (unsigned i = 0; i < n; ++i)
    grid[i] = tile[i] / box[i];
  if (atom.isMulticast())
    grid[0] = 1;
  int64_t numBoxes = 1;
  for (int64_t g : grid)
    numBoxes *= g;
  const bool gather4 = atom.getKind() == CopyKind::Gather4Load;
  inElectedLane(rewriter, loc, [&](OpBuilder &b) {
    for (int64_t linear = 0; linear < numBoxes; ++linear) {
      // Grid index of this box, outermost first.
      SmallVector<int64_t> g(n);
      for (int64_t r = linear, i = n - 1; i >= 0; --i) {
        g[i] = r % grid[i];
        r /= grid[i];
      }
      SmallVector<Value> boxCoords(coords);
      for (unsigned i = 0; i < n && !gather4; ++i)
        if (g[i])
          boxCoords[i] = LLVM::AddOp::create(
              b, loc, boxCoords[i], i32Const(b, loc, g[i] * box[i]));
      if (sliceRank) {
        Value rows =
            LLVM::MulOp::create(b, loc, sliceRank, i32Const(b, loc, box[0]));
        boxCoords[0] = LLVM::AddOp::create(b, loc, boxCoords[0], rows);
      }
      // The descriptor lists dims innermost first; gather4 takes
      // {column, row0..row3}.
      SmallVector<Value> ptx;
      if (gather4) {
        ptx.push_back(boxCoords[4]);
        ptx.append(boxCoords.begin(), boxCoords.begin() + 4);
      } else {
        ptx.assign(boxCoords.rbegin(), boxCoords.rend());
      }
      body(b, ptx, linear);
    }
  });
}

/// The coordinates of an op's adaptor as i32 values.
static SmallVector<Value> i32Coords(OpBuilder &b, Location loc,
                                    ValueRange coordinates) {
  SmallVector<Value> coords;
  for (Value c : coordinates)
    coords.push_back(toI32(b, loc, c));
  return coords;
}

/// The shared half of nvtma.copy's lowering: one TMA instruction per box of
/// the atom's tile (for multicast, the CTA's slice of the outermost dim),
/// issued by one elected lane. A derived pattern handles the atoms
/// `handles` accepts and emits the instruction for one box.
struct TmaCopyLowering : ConvertOpToLLVMPattern<CopyOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  virtual bool handles(TmaAtomType atom) const = 0;
  virtual void emitBox(OpBuilder &b, Location loc, const BoxCopy &box) const = 0;

  LogicalResult
  matchAndRewrite(CopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    TmaAtomType atom = op.getAtom().getType();
    if (!handles(atom))
      return rewriter.notifyMatchFailure(op, "another copy kind");
    Location loc = op.getLoc();
    const LLVMTypeConverter &converter = *getTypeConverter();
    BoxCopy copy;
    copy.atom = atom;
    copy.desc = adaptor.getAtom();
    copy.mask = adaptor.getMask();
    copy.hint = adaptor.getCacheHint();
    if (op.getBarriers())
      copy.barrier = mbarrierPtr(rewriter, loc, converter,
                                 op.getBarriers().getType(),
                                 adaptor.getBarriers(), adaptor.getBarrierId());
    for (Value o : llvm::reverse(adaptor.getOffsets()))
      copy.offsets.push_back(o);
    Value smem = memrefBase(rewriter, loc, converter, op.getSmem().getType(),
                            adaptor.getSmem());
    // Multicast: this CTA loads slice `cta` of the outermost dim, into that
    // slice of every masked CTA's smem. A tiled tile lies box after box, each
    // of the tile's whole dim 0 (the multicast slices one after another), as
    // nvtma.copy's verifier has it; an im2col tile keeps its boxes' order.
    Value sliceRank;
    if (adaptor.getCtaRank())
      sliceRank = toI32(rewriter, loc, adaptor.getCtaRank());
    const int64_t boxBytes = atom.getBoxBytes();
    const int64_t tileBoxBytes =
        atom.isMulticast() && !atom.isIm2col()
            ? boxBytes * (atom.getTileShape()[0] / atom.getBox()[0])
            : boxBytes;
    forEachBox(rewriter, loc, atom,
               i32Coords(rewriter, loc, adaptor.getCoordinates()), sliceRank,
               [&](OpBuilder &b, ArrayRef<Value> coords, int64_t linear) {
                 copy.dst = offsetBytes(b, loc, smem, linear * tileBoxBytes);
                 if (sliceRank) {
                   Value bytes = LLVM::MulOp::create(
                       b, loc, sliceRank, i32Const(b, loc, boxBytes));
                   copy.dst = LLVM::GEPOp::create(b, loc, copy.dst.getType(),
                                                  b.getI8Type(), copy.dst,
                                                  ValueRange{bytes});
                 }
                 copy.coords.assign(coords.begin(), coords.end());
                 emitBox(b, loc, copy);
               });
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvtma.prefetch: cp.async.bulk.prefetch.tensor.Nd.L2.global.tile per box.
struct TmaPrefetchLowering : ConvertOpToLLVMPattern<PrefetchOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(PrefetchOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value sliceRank;
    if (adaptor.getCtaRank())
      sliceRank = toI32(rewriter, loc, adaptor.getCtaRank());
    Value desc = adaptor.getAtom(), hint = adaptor.getCacheHint();
    forEachBox(rewriter, loc, op.getAtom().getType(),
               i32Coords(rewriter, loc, adaptor.getCoordinates()), sliceRank,
               [&](OpBuilder &b, ArrayRef<Value> coords, int64_t) {
                 NVVM::CpAsyncBulkTensorPrefetchOp::create(
                     b, loc, desc, coords, ValueRange{},
                     NVVM::TMALoadMode::TILE, hint);
               });
    rewriter.eraseOp(op);
    return success();
  }
};

/// Loads (tile, multicast, im2col, gather4):
/// cp.async.bulk.tensor.Nd.shared::cluster.global.{tile,im2col,tile::gather4}.
struct TmaLoadLowering : TmaCopyLowering {
  using TmaCopyLowering::TmaCopyLowering;
  bool handles(TmaAtomType atom) const override { return atom.isLoad(); }
  void emitBox(OpBuilder &b, Location loc, const BoxCopy &c) const override {
    auto mode = c.atom.isIm2col() ? NVVM::TMALoadMode::IM2COL
                : c.atom.getKind() == CopyKind::Gather4Load
                    ? NVVM::TMALoadMode::TILE_GATHER4
                    : NVVM::TMALoadMode::TILE;
    NVVM::CTAGroupKindAttr group;
    if (c.atom.getCtaGroup() == 2)
      group = NVVM::CTAGroupKindAttr::get(b.getContext(),
                                          NVVM::CTAGroupKind::CTA_2);
    // The shared::cluster form: the shared::cta form needs PTX 8.6.
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, castPtr(b, loc, c.dst, 7), c.desc, c.coords, c.barrier,
        c.offsets, c.mask, c.hint, mode, /*isCTAOnly=*/false, group, Value());
  }
};

/// Stores (tile, im2col):
/// cp.async.bulk.tensor.Nd.global.shared::cta.{tile,im2col}.bulk_group.
struct TmaStoreLowering : TmaCopyLowering {
  using TmaCopyLowering::TmaCopyLowering;
  bool handles(TmaAtomType atom) const override {
    return !atom.isLoad() && atom.getKind() != CopyKind::Reduce;
  }
  void emitBox(OpBuilder &b, Location loc, const BoxCopy &c) const override {
    NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
        b, loc, c.desc, c.dst, c.coords, c.hint,
        c.atom.isIm2col() ? NVVM::TMAStoreMode::IM2COL
                          : NVVM::TMAStoreMode::TILE,
        Value());
  }
};

/// Reductions: cp.reduce.async.bulk.tensor.Nd.global.shared::cta.<op>.
struct TmaReduceLowering : TmaCopyLowering {
  using TmaCopyLowering::TmaCopyLowering;
  bool handles(TmaAtomType atom) const override {
    return atom.getKind() == CopyKind::Reduce;
  }
  void emitBox(OpBuilder &b, Location loc, const BoxCopy &c) const override {
    // ReductionKind keeps NVVM's TMAReduxKind values.
    auto red = static_cast<NVVM::TMAReduxKind>(
        static_cast<uint32_t>(c.atom.getReduction()));
    NVVM::CpAsyncBulkTensorReduceOp::create(
        b, loc, c.desc, c.dst, NVVM::TMAReduxKindAttr::get(b.getContext(), red),
        NVVM::TMAStoreModeAttr::get(b.getContext(), NVVM::TMAStoreMode::TILE),
        c.coords, c.hint);
  }
};

/// nvtma.tma_partition: tile_coords[i] * tile[i].
struct TmaPartitionLowering : ConvertOpToLLVMPattern<TmaPartitionOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TmaPartitionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ArrayRef<int64_t> tile = op.getAtom().getType().getTileShape();
    SmallVector<Value> coords;
    for (auto [i, t] : llvm::enumerate(adaptor.getTileCoords())) {
      Value extent = LLVM::ConstantOp::create(
          rewriter, loc, t.getType(), rewriter.getIntegerAttr(t.getType(), tile[i]));
      coords.push_back(LLVM::MulOp::create(rewriter, loc, t, extent));
    }
    rewriter.replaceOp(op, coords);
    return success();
  }
};

/// nvtma.create_tma_multicast_mask: the pattern of getMulticastMaskLayout,
/// shifted to the group's first CTA.
struct CreateTmaMulticastMaskLowering
    : ConvertOpToLLVMPattern<CreateTmaMulticastMaskOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(CreateTmaMulticastMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MulticastMaskLayout layout =
        getMulticastMaskLayout(op.getClusterShape(), op.getMode());
    Value base = i32Const(rewriter, loc, 0);
    for (auto [c, stride] : llvm::zip(adaptor.getCtaCoords(), layout.strides))
      if (stride)
        base = LLVM::AddOp::create(
            rewriter, loc, base,
            LLVM::MulOp::create(rewriter, loc, toI32(rewriter, loc, c),
                                i32Const(rewriter, loc, stride)));
    Value mask = LLVM::ShlOp::create(
        rewriter, loc, i32Const(rewriter, loc, layout.pattern), base);
    rewriter.replaceOpWithNewOp<LLVM::TruncOp>(op, rewriter.getI16Type(), mask);
    return success();
  }
};

/// nvtma.atom_from_descriptor: the atom is the (generic) pointer.
struct AtomFromDescriptorLowering
    : ConvertOpToLLVMPattern<AtomFromDescriptorOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(AtomFromDescriptorOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, castPtr(rewriter, op.getLoc(), adaptor.getDesc(), 0));
    return success();
  }
};

/// nvtma.prefetch_descriptor -> prefetch.tensormap (nvvm.prefetch).
struct PrefetchDescriptorLowering
    : ConvertOpToLLVMPattern<PrefetchDescriptorOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(PrefetchDescriptorOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value desc = adaptor.getAtom();
    inElectedLane(rewriter, loc, [&](OpBuilder &b) {
      NVVM::PrefetchOp::create(b, loc, /*cacheLevel=*/nullptr,
                               /*evictPriority=*/nullptr, desc,
                               /*predicate=*/Value(), /*tensormap=*/true);
    });
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvtma.copy_tensormap: sixteen 8-byte loads and stores.
struct CopyTensormapLowering : ConvertOpToLLVMPattern<CopyTensormapOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(CopyTensormapOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i64 = rewriter.getI64Type();
    for (int i = 0; i < 16; ++i) {
      Value src = offsetBytes(rewriter, loc, adaptor.getAtom(), 8 * i);
      Value dst = offsetBytes(rewriter, loc, adaptor.getDst(), 8 * i);
      Value v = LLVM::LoadOp::create(rewriter, loc, i64, src, /*alignment=*/8);
      LLVM::StoreOp::create(rewriter, loc, v, dst, /*alignment=*/8);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvtma.update_tma_descriptor -> tensormap.replace of address, dims and
/// strides.
struct UpdateTmaDescriptorLowering
    : ConvertOpToLLVMPattern<UpdateTmaDescriptorOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(UpdateTmaDescriptorOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MemRefType type = op.getTensor().getType();
    MemRefDescriptor tensor(adaptor.getTensor());
    unsigned as = cast<LLVM::LLVMPointerType>(op.getDesc().getType())
                      .getAddressSpace();
    if (as != 1 && as != 3)
      return rewriter.notifyMatchFailure(op, "descriptor must be global or shared");
    std::string space = as == 1 ? "global" : "shared::cta";
    Value addr = as == 1 ? LLVM::PtrToIntOp::create(rewriter, loc,
                                                    rewriter.getI64Type(),
                                                    adaptor.getDesc())
                               .getResult()
                         : sharedAddr32(rewriter, loc, adaptor.getDesc());
    std::string addrC = as == 1 ? "l" : "r";
    // A stride's bytes: stride x bits / 8 (as the host encoder counts them;
    // bits / 8 alone made every sub-byte stride 0).
    int64_t bits = getElementBitWidth(type.getElementType());
    int64_t rank = type.getRank();
    Value base = memrefBase(rewriter, loc, *getTypeConverter(), type,
                            adaptor.getTensor());
    Value baseInt =
        LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI64Type(), base);
    // One elected lane writes; the fences that follow publish it.
    inElectedLane(rewriter, loc, [&](OpBuilder &b) {
      inlinePtx(b, loc,
                "tensormap.replace.tile.global_address." + space +
                    ".b1024.b64 [$0], $1;",
                addrC + ",l", {addr, baseInt});
      for (int64_t d = 0; d < rank; ++d) {
        // Descriptor dim i is tensor dim rank-1-i.
        int64_t i = rank - 1 - d;
        Value size = toI32(b, loc, tensor.size(b, loc, d));
        inlinePtx(b, loc,
                  "tensormap.replace.tile.global_dim." + space +
                      ".b1024.b32 [$0], " + std::to_string(i) + ", $1;",
                  addrC + ",r", {addr, size});
        if (i == 0)
          continue;
        auto constant = [&](int64_t v) {
          return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                          b.getI64IntegerAttr(v));
        };
        Value stride = LLVM::MulOp::create(b, loc, tensor.stride(b, loc, d),
                                           constant(bits % 8 ? bits : bits / 8));
        if (bits % 8)
          stride = LLVM::UDivOp::create(b, loc, stride, constant(8));
        inlinePtx(b, loc,
                  "tensormap.replace.tile.global_stride." + space +
                      ".b1024.b64 [$0], " + std::to_string(i - 1) + ", $1;",
                  addrC + ",l", {addr, stride});
      }
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct FenceTmaDescAcquireLowering
    : ConvertOpToLLVMPattern<FenceTmaDescAcquireOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(FenceTmaDescAcquireOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Inline PTX rather than the NVVM intrinsic, which LLVM cannot select on
    // every PTX version (and then aborts the process).
    Location loc = op.getLoc();
    Value p = LLVM::PtrToIntOp::create(
        rewriter, loc, rewriter.getI64Type(),
        castPtr(rewriter, loc, adaptor.getDesc(), 0));
    inlinePtx(rewriter, loc,
              "fence.proxy.tensormap::generic.acquire.gpu [$0], 128;", "l",
              {p});
    rewriter.eraseOp(op);
    return success();
  }
};

struct FenceTmaDescReleaseLowering
    : ConvertOpToLLVMPattern<FenceTmaDescReleaseOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(FenceTmaDescReleaseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    inlinePtx(rewriter, op.getLoc(),
              "fence.proxy.tensormap::generic.release.gpu;", "", {});
    rewriter.eraseOp(op);
    return success();
  }
};

struct CpFenceTmaDescReleaseLowering
    : ConvertOpToLLVMPattern<CpFenceTmaDescReleaseOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(CpFenceTmaDescReleaseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value g = LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI64Type(),
                                       adaptor.getGlobalDesc());
    Value s = sharedAddr32(rewriter, loc, adaptor.getSharedDesc());
    inlinePtx(rewriter, loc,
              "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic."
              "release.gpu.sync.aligned [$0], [$1], 128;",
              "l,r", {g, s});
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvtma.bulk_copy: cp.async.bulk in each direction.
struct BulkCopyLowering : ConvertOpToLLVMPattern<BulkCopyOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(BulkCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value barrier;
    if (op.getBarriers())
      barrier = mbarrierPtr(rewriter, loc, *getTypeConverter(),
                            op.getBarriers().getType(), adaptor.getBarriers(),
                            adaptor.getBarrierId());
    Value dst = adaptor.getDst(), src = adaptor.getSrc();
    Value size = adaptor.getSize(), mask = adaptor.getMask();
    Value remote = adaptor.getRemoteBarrier();
    BulkCopyKind kind = op.getKind();
    inElectedLane(rewriter, loc, [&](OpBuilder &b) {
      switch (kind) {
      case BulkCopyKind::G2S:
      case BulkCopyKind::G2SMulticast:
        NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
            b, loc, castPtr(b, loc, dst, 7), src, barrier, size, mask,
            Value());
        break;
      case BulkCopyKind::S2G:
      case BulkCopyKind::S2GByteMask:
        NVVM::CpAsyncBulkSharedCTAToGlobalOp::create(b, loc, dst, src, size,
                                                     Value(), mask);
        break;
      case BulkCopyKind::S2SCluster:
        inlinePtx(b, loc,
                  "cp.async.bulk.shared::cluster.shared::cta.mbarrier::"
                  "complete_tx::bytes [$0], [$1], $2, [$3];",
                  "r,r,r,r",
                  {sharedAddr32(b, loc, dst), sharedAddr32(b, loc, src), size,
                   sharedAddr32(b, loc, remote)});
        break;
      }
    });
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvtma.cp_async -> cp.async.{ca,cg}.shared.global (src_size: zero fill).
struct CpAsyncLowering : ConvertOpToLLVMPattern<CpAsyncOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(CpAsyncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto mode = op.getCacheMode() == LoadCacheMode::GLOBAL
                    ? NVVM::LoadCacheModifierKind::CG
                    : NVVM::LoadCacheModifierKind::CA;
    NVVM::CpAsyncOp::create(
        rewriter, op.getLoc(), adaptor.getDst(), adaptor.getSrc(),
        rewriter.getI32IntegerAttr(op.getSize()),
        NVVM::LoadCacheModifierKindAttr::get(getContext(), mode),
        adaptor.getSrcSize());
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvtma.dsmem_store -> st.async.shared::cluster.mbarrier::complete_tx.
struct DsmemStoreLowering : ConvertOpToLLVMPattern<DsmemStoreOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(DsmemStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type t = op.getValue().getType();
    SmallVector<Value> parts;
    Type scalar = t;
    int64_t lanes = 1;
    if (auto v = dyn_cast<VectorType>(t)) {
      scalar = v.getElementType();
      lanes = v.getNumElements();
    }
    unsigned bits = scalar.getIntOrFloatBitWidth();
    Type intTy = rewriter.getIntegerType(bits);
    for (int64_t i = 0; i < lanes; ++i) {
      Value e = adaptor.getValue();
      if (lanes > 1)
        e = LLVM::ExtractElementOp::create(
            rewriter, loc, e, i32Const(rewriter, loc, i));
      if (e.getType() != intTy)
        e = LLVM::BitcastOp::create(rewriter, loc, intTy, e);
      parts.push_back(e);
    }
    std::string vec = lanes > 1 ? ".v" + std::to_string(lanes) : "";
    std::string asmStr = "st.async.shared::cluster.mbarrier::complete_tx::bytes" +
                         vec + ".b" + std::to_string(bits) + " [$0], ";
    std::string cons = "r";
    if (lanes > 1)
      asmStr += "{";
    for (int64_t i = 0; i < lanes; ++i) {
      asmStr += (i ? ", $" : "$") + std::to_string(i + 1);
      cons += bits == 64 ? ",l" : ",r";
    }
    if (lanes > 1)
      asmStr += "}";
    asmStr += ", [$" + std::to_string(lanes + 1) + "];";
    cons += ",r";
    SmallVector<Value> operands{sharedAddr32(rewriter, loc, adaptor.getDst())};
    operands.append(parts);
    operands.push_back(sharedAddr32(rewriter, loc, adaptor.getRemoteBarrier()));
    inlinePtx(rewriter, loc, asmStr, cons, operands);
    rewriter.eraseOp(op);
    return success();
  }
};

struct BulkCommitGroupLowering : ConvertOpToLLVMPattern<BulkCommitGroupOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(BulkCommitGroupOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncBulkCommitGroupOp>(op);
    return success();
  }
};

struct BulkWaitGroupLowering : ConvertOpToLLVMPattern<BulkWaitGroupOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(BulkWaitGroupOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncBulkWaitGroupOp>(
        op, rewriter.getI32IntegerAttr(op.getPending()),
        op.getRead() ? rewriter.getUnitAttr() : UnitAttr());
    return success();
  }
};

struct AddressOfLowering : ConvertOpToLLVMPattern<AddressOfOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(AddressOfOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value p = LLVM::getStridedElementPtr(
        rewriter, op.getLoc(), *getTypeConverter(), op.getMemref().getType(),
        adaptor.getMemref(), adaptor.getIndices());
    rewriter.replaceOp(op, castPtr(rewriter, op.getLoc(), p,
                                   op.getPtr().getType().getAddressSpace()));
    return success();
  }
};

struct MBarrierAddressLowering : ConvertOpToLLVMPattern<MBarrierAddressOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(MBarrierAddressOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, mbarrierPtr(rewriter, op.getLoc(),
                                       *getTypeConverter(),
                                       op.getBarriers().getType(),
                                       adaptor.getBarriers(),
                                       adaptor.getBarrierId()));
    return success();
  }
};

/// nvtma.read_special_register -> a volatile `mov.u32`.
struct ReadSpecialRegisterLowering
    : ConvertOpToLLVMPattern<ReadSpecialRegisterOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(ReadSpecialRegisterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // tid_x -> %tid.x
    std::string reg = stringifySpecialRegister(op.getReg()).str();
    std::replace(reg.begin(), reg.end(), '_', '.');
    rewriter.replaceOp(op, inlinePtxResult(rewriter, op.getLoc(),
                                           rewriter.getI32Type(),
                                           "mov.u32 $0, %" + reg + ";", "=r",
                                           {}));
    return success();
  }
};

/// nvtma.elect_active -> activemask and elect.sync as one inline-PTX
/// statement whose comment numbers the op: no two are alike, so LLVM merges
/// none of them (see the op's description).
struct ElectActiveLowering : ConvertOpToLLVMPattern<ElectActiveOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(ElectActiveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    std::string text = "{ .reg .pred p; .reg .b32 m; activemask.b32 m; "
                       "elect.sync _|p, m; selp.u32 $0, 1, 0, p; } "
                       "// elect_active " +
                       std::to_string(site++);
    Value one = convergent(inlinePtxResult(
        rewriter, loc, rewriter.getI32Type(), text, "=r", {}));
    rewriter.replaceOpWithNewOp<LLVM::ICmpOp>(op, LLVM::ICmpPredicate::ne, one,
                                              i32Const(rewriter, loc, 0));
    return success();
  }
  /// Numbers the sites of one run of the pass (they need only differ).
  mutable unsigned site = 0;
};

/// nvtma.wgmma_mma_async_rs -> wgmma.mma_async with A from registers.
struct WgmmaMmaAsyncRsLowering : ConvertOpToLLVMPattern<WgmmaMmaAsyncRsOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(WgmmaMmaAsyncRsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto accType = cast<LLVM::LLVMStructType>(op.getAcc().getType());
    unsigned n = accType.getBody().size();
    WgmmaType ta = op.getTypeA();
    int k = ta == WgmmaType::TF32 ? 8
            : ta == WgmmaType::F16 || ta == WgmmaType::BF16 ? 16
                                                             : 32;
    auto reg = [](unsigned i) { return "$" + std::to_string(i); };
    std::string d, a;
    for (unsigned i = 0; i < n; ++i)
      d += (i ? ", " : "") + reg(i);
    for (unsigned i = 0; i < 4; ++i)
      a += (i ? ", " : "") + reg(n + i);
    // B is K-major: f16/bf16 take the (zero) transpose flag, the others none.
    bool transposable = ta == WgmmaType::F16 || ta == WgmmaType::BF16;
    std::string text = "{ .reg .pred p; setp.ne.b32 p, " + reg(2 * n + 5) +
                       ", 0; wgmma.mma_async.sync.aligned.m64n" +
                       std::to_string(op.getN()) + "k" + std::to_string(k) +
                       ".f32." + stringifyWgmmaType(ta).str() + "." +
                       stringifyWgmmaType(op.getTypeB()).str();
    text += " {" + d + "}, {" + a + "}, " + reg(n + 4) + ", p, " +
            std::to_string(int32_t(op.getScaleA())) + ", " +
            std::to_string(int32_t(op.getScaleB())) +
            (transposable ? ", 0" : "") + "; }";
    SmallVector<Value> operands;
    for (unsigned i = 0; i < 4; ++i)
      operands.push_back(LLVM::ExtractElementOp::create(
          rewriter, loc, adaptor.getA(), i32Const(rewriter, loc, i)));
    operands.push_back(adaptor.getBDesc());
    for (unsigned i = 0; i < n; ++i)
      operands.push_back(LLVM::ExtractValueOp::create(
          rewriter, loc, adaptor.getAcc(), ArrayRef<int64_t>{int64_t(i)}));
    operands.push_back(LLVM::ZExtOp::create(rewriter, loc,
                                            rewriter.getI32Type(),
                                            adaptor.getScaleD()));
    // D's registers are outputs tied to the accumulator's inputs.
    std::string cons;
    for (unsigned i = 0; i < n; ++i)
      cons += "=f,";
    cons += "r,r,r,r,l";
    for (unsigned i = 0; i < n; ++i)
      cons += "," + std::to_string(i);
    cons += ",r";
    rewriter.replaceOp(op, convergent(inlinePtxResult(rewriter, loc, accType,
                                                      text, cons, operands)));
    return success();
  }
};

/// nvtma.vector_atomic_add -> atom/red .add on a vector.
struct VectorAtomicAddLowering : ConvertOpToLLVMPattern<VectorAtomicAddOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(VectorAtomicAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto v = cast<VectorType>(op.getValue().getType());
    unsigned as =
        cast<LLVM::LLVMPointerType>(op.getPtr().getType()).getAddressSpace();
    std::string space = as == 1 ? ".global" : as == 3 ? ".shared" : "";
    std::string scope = "." + stringifyAtomicScope(op.getScope()).str();
    Type elem = v.getElementType();
    if (!elem.isF32()) {
      // 2 x f16/bf16 as one 32-bit register.
      std::string t = elem.isF16() ? "f16x2" : "bf16x2";
      Value bits = LLVM::BitcastOp::create(rewriter, loc,
                                           rewriter.getI32Type(),
                                           adaptor.getValue());
      if (!op.getResult()) {
        inlinePtx(rewriter, loc,
                  "red" + scope + space + ".add.noftz." + t + " [$0], $1;",
                  "l,r", {adaptor.getPtr(), bits});
        rewriter.eraseOp(op);
        return success();
      }
      Value old = inlinePtxResult(
          rewriter, loc, rewriter.getI32Type(),
          "atom" + scope + space + ".add.noftz." + t + " $0, [$1], $2;",
          "=r,l,r", {adaptor.getPtr(), bits});
      rewriter.replaceOpWithNewOp<LLVM::BitcastOp>(op, v, old);
      return success();
    }
    int64_t lanes = v.getNumElements();
    std::string regs, cons = "l";
    SmallVector<Value> operands{adaptor.getPtr()};
    for (int64_t i = 0; i < lanes; ++i) {
      regs += (i ? ", $" : "$") + std::to_string(i + 1);
      cons += ",f";
      operands.push_back(LLVM::ExtractElementOp::create(
          rewriter, loc, adaptor.getValue(), i32Const(rewriter, loc, i)));
    }
    inlinePtx(rewriter, loc,
              "red" + scope + ".global.add.v" + std::to_string(lanes) +
                  ".f32 [$0], {" + regs + "};",
              cons, operands);
    rewriter.eraseOp(op);
    return success();
  }
};

/// A call of LLVM intrinsic `name` on `args`, with one result of `type`
/// (none if null).
static Value callIntrinsic(OpBuilder &b, Location loc, Type type,
                           StringRef name, ValueRange args) {
  auto call = LLVM::CallIntrinsicOp::create(
      b, loc, type ? TypeRange(type) : TypeRange(), b.getStringAttr(name),
      args, LLVM::FastmathFlagsAttr::get(b.getContext(),
                                         LLVM::FastmathFlags::none),
      /*op_bundle_operands=*/{}, /*op_bundle_tags=*/{}, /*arg_attrs=*/{},
      /*res_attrs=*/{});
  return type ? call.getResult(0) : Value();
}

/// nvtma.activemask -> llvm.nvvm.activemask.
struct ActivemaskLowering : ConvertOpToLLVMPattern<ActivemaskOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(ActivemaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, callIntrinsic(rewriter, op.getLoc(),
                                         rewriter.getI32Type(),
                                         "llvm.nvvm.activemask", {}));
    return success();
  }
};

/// nvtma.barrier_sync -> nvvm.barrier (barrier.cta.sync.aligned).
struct BarrierSyncLowering : ConvertOpToLLVMPattern<BarrierSyncOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(BarrierSyncOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::BarrierOp::create(rewriter, op.getLoc(), TypeRange(),
                            adaptor.getId(), adaptor.getCount(),
                            NVVM::BarrierReductionAttr(), Value());
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvtma.float_fn -> the NVVM (or llvm.sqrt) intrinsic of its instruction.
struct FloatFnLowering : ConvertOpToLLVMPattern<FloatFnOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(FloatFnOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool f64 = op.getType().isF64();
    StringRef name;
    switch (op.getFn()) {
    case FloatFn::EX2_APPROX:
      name = "llvm.nvvm.ex2.approx.f32";
      break;
    case FloatFn::LG2_APPROX:
      name = "llvm.nvvm.lg2.approx.f";
      break;
    case FloatFn::RSQRT_APPROX:
      name = f64 ? "llvm.nvvm.rsqrt.approx.d" : "llvm.nvvm.rsqrt.approx.f";
      break;
    case FloatFn::SIN_APPROX:
      name = "llvm.nvvm.sin.approx.f";
      break;
    case FloatFn::COS_APPROX:
      name = "llvm.nvvm.cos.approx.f";
      break;
    case FloatFn::DIV_APPROX:
      name = "llvm.nvvm.div.approx.f";
      break;
    case FloatFn::SQRT_RN:
      name = f64 ? "llvm.sqrt.f64" : "llvm.sqrt.f32";
      break;
    }
    rewriter.replaceOp(op, callIntrinsic(rewriter, op.getLoc(), op.getType(),
                                         name, adaptor.getOperands()));
    return success();
  }
};

/// nvtma.truncf_rz -> llvm.nvvm.d2f.rz (cvt.rz.f32.f64).
struct TruncFRzLowering : ConvertOpToLLVMPattern<TruncFRzOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(TruncFRzOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, callIntrinsic(rewriter, op.getLoc(),
                                         rewriter.getF32Type(),
                                         "llvm.nvvm.d2f.rz",
                                         adaptor.getValue()));
    return success();
  }
};

/// nvtma.fptoint_sat -> one cvt.rzi for a scalar to 32 or 64 bits
/// (llvm.nvvm.f2i.rz and its kin, with NaN selected to 0 where cvt.rzi
/// gives the top bit), else llvm.fptosi.sat / llvm.fptoui.sat.
struct FPToIntSatLowering : ConvertOpToLLVMPattern<FPToIntSatOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(FPToIntSatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value v = adaptor.getValue();
    Type src = v.getType(), dst = op.getType();
    bool isUnsigned = op.getIsUnsigned();
    unsigned width = getElementTypeOrSelf(dst).getIntOrFloatBitWidth();
    bool fromF64 = getElementTypeOrSelf(src).isF64();
    if (!isa<VectorType>(src) && (width == 32 || width == 64)) {
      std::string name = std::string("llvm.nvvm.") + (fromF64 ? "d" : "f") +
                         "2" +
                         (width == 32 ? (isUnsigned ? "ui" : "i")
                                      : (isUnsigned ? "ull" : "ll")) +
                         ".rz";
      Value r = callIntrinsic(rewriter, loc, dst, name, v);
      // cvt.rzi of NaN is 0 only from below f64 to below 64 bits, else the
      // top bit (and LLVM folds constants alike).
      if (width == 64 || fromF64) {
        Value nan = LLVM::FCmpOp::create(rewriter, loc,
                                         LLVM::FCmpPredicate::uno, v, v);
        Value zero = LLVM::ConstantOp::create(
            rewriter, loc, dst, rewriter.getIntegerAttr(dst, 0));
        r = LLVM::SelectOp::create(rewriter, loc, nan, zero, r);
      }
      rewriter.replaceOp(op, r);
      return success();
    }
    auto suffix = [](Type t) {
      std::string s;
      if (auto vt = dyn_cast<VectorType>(t)) {
        s = "v" + std::to_string(vt.getNumElements());
        t = vt.getElementType();
      }
      return s + (t.isInteger() ? "i" : "f") +
             std::to_string(t.getIntOrFloatBitWidth());
    };
    std::string name = std::string("llvm.") +
                       (isUnsigned ? "fptoui" : "fptosi") + ".sat." +
                       suffix(dst) + "." + suffix(src);
    rewriter.replaceOp(op, callIntrinsic(rewriter, loc, dst, name, v));
    return success();
  }
};

} // namespace

void mlir::nvtma::populateNVTMAToNVVMConversionPatterns(
    LLVMTypeConverter &converter, RewritePatternSet &patterns) {
  converter.addConversion([ctx = &converter.getContext()](TmaAtomType) {
    return LLVM::LLVMPointerType::get(ctx);
  });
  patterns.add<
      TmaLoadLowering,             // nvtma.copy of a load atom
      TmaStoreLowering,            // nvtma.copy of a store atom
      TmaReduceLowering,           // nvtma.copy of a reduce atom
      TmaPartitionLowering,        // nvtma.tma_partition
      CreateTmaMulticastMaskLowering, // nvtma.create_tma_multicast_mask
      AtomFromDescriptorLowering,  // nvtma.atom_from_descriptor
      TmaPrefetchLowering,         // nvtma.prefetch
      PrefetchDescriptorLowering,  // nvtma.prefetch_descriptor
      CopyTensormapLowering,       // nvtma.copy_tensormap
      UpdateTmaDescriptorLowering, // nvtma.update_tma_descriptor
      FenceTmaDescAcquireLowering, // nvtma.fence_tma_desc_acquire
      FenceTmaDescReleaseLowering, // nvtma.fence_tma_desc_release
      CpFenceTmaDescReleaseLowering, // nvtma.cp_fence_tma_desc_release
      BulkCopyLowering,            // nvtma.bulk_copy
      CpAsyncLowering,             // nvtma.cp_async
      DsmemStoreLowering,          // nvtma.dsmem_store
      BulkCommitGroupLowering,     // nvtma.bulk_commit_group
      BulkWaitGroupLowering,       // nvtma.bulk_wait_group
      AddressOfLowering,           // nvtma.address_of
      MBarrierAddressLowering,     // nvtma.mbarrier_address
      ReadSpecialRegisterLowering, // nvtma.read_special_register
      ElectActiveLowering,         // nvtma.elect_active
      WgmmaMmaAsyncRsLowering,     // nvtma.wgmma_mma_async_rs
      VectorAtomicAddLowering,     // nvtma.vector_atomic_add
      ActivemaskLowering,          // nvtma.activemask
      BarrierSyncLowering,         // nvtma.barrier_sync
      FloatFnLowering,             // nvtma.float_fn
      TruncFRzLowering,            // nvtma.truncf_rz
      FPToIntSatLowering           // nvtma.fptoint_sat
      >(converter);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct ConvertNVTMAToNVVMPass
    : mlir::nvtma::impl::ConvertNVTMAToNVVMBase<ConvertNVTMAToNVVMPass> {
  using ConvertNVTMAToNVVMBase::ConvertNVTMAToNVVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();

    // Atoms must be kernel parameters by now.
    WalkResult unmaterialized = module.walk([](MakeTiledTmaAtomOp op) {
      op.emitOpError() << "is not materialized: run "
                          "nvtma-materialize-descriptors first";
      return WalkResult::interrupt();
    });
    if (unmaterialized.wasInterrupted())
      return signalPassFailure();

    LowerToLLVMOptions options(ctx);
    LLVMTypeConverter converter(ctx, options);
    nvgpu::populateCommonGPUTypeAndAttributeConversions(converter);
    converter.addConversion([&](nvgpu::MBarrierGroupType type) -> Type {
      return converter.convertType(nvgpu::getMBarrierMemrefType(ctx, type));
    });
    RewritePatternSet patterns(ctx);
    populateNVTMAToNVVMConversionPatterns(converter, patterns);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<NVTMADialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
