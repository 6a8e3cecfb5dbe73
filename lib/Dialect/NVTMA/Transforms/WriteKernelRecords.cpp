//===- WriteKernelRecords.cpp - the records the runtime launches from -----===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The kernel records (module attribute `nvtma.kernels`, JSON; the
// runtime's kernels.json) are written here and only here, from typed IR:
// the gpu.func signature (with nvtma.unsigned on integer parameters), the
// #nvtma.descriptor of each descriptor parameter, the alignment the kernel's
// accesses assume of each memref parameter, the descriptors
// nvtma.update_tma_descriptor points at a memref parameter and the launch
// attributes known_block_size, known_cluster_size, nvtma.dynamic_smem,
// nvtma.pdl and nvtma.max_grid. Nothing reads them back in the compiler.
//
//===----------------------------------------------------------------------===//

#include "nvtma/Dialect/NVTMA/NVTMADialect.h"
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h"
#include "nvtma/TensorMap/TensorMap.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/AlignmentAttrInterface.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

namespace mlir::nvtma {
#define GEN_PASS_DEF_NVTMAWRITEKERNELRECORDS
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h.inc"
} // namespace mlir::nvtma

using namespace mlir;
using namespace mlir::nvtma;
namespace tmap = ::nvtma::tensormap;

namespace {

llvm::json::Array jsonInts(ArrayRef<int64_t> v) {
  llvm::json::Array a;
  for (int64_t x : v)
    a.push_back(x);
  return a;
}

/// Ints with ShapedType::kDynamic as null.
llvm::json::Array jsonDims(ArrayRef<int64_t> v) {
  llvm::json::Array a;
  for (int64_t x : v)
    a.push_back(ShapedType::isDynamic(x) ? llvm::json::Value(nullptr)
                                         : llvm::json::Value(x));
  return a;
}

std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

/// Byte alignment of a descriptor's location in memory (CUtensorMap's, as
/// nvtma.copy_tensormap documents it), which tensormap.replace, the
/// tensormap fences and TMA copies through it assume.
constexpr int64_t kTensormapAlign = 64;

/// The static fields of a descriptor of `atom` (its tensor's dims and
/// strides dynamic: the ones tensormap.replace writes at run time).
tmap::Params staticParams(TmaAtomType atom) {
  SmallVector<int64_t> dynamic(atom.getTensorRank(), ShapedType::kDynamic);
  tmap::Params p;
  fillDescriptorParams(atom, dynamic, dynamic, p);
  return p;
}

/// What one use of a pointer into a memref parameter assumes of the
/// parameter's alignment, in bytes (0: nothing).
int64_t pointerUseAlign(OpOperand &use) {
  Operation *op = use.getOwner();
  Value v = use.get();
  if (auto cp = dyn_cast<CpAsyncOp>(op))
    return cp.getSrc() == v ? cp.getSize() : 0;
  if (auto bulk = dyn_cast<BulkCopyOp>(op))
    return bulk.getDst() == v || bulk.getSrc() == v ? 16 : 0;
  if (auto update = dyn_cast<UpdateTmaDescriptorOp>(op))
    return update.getDesc() == v ? kTensormapAlign : 0;
  if (auto release = dyn_cast<CpFenceTmaDescReleaseOp>(op))
    return release.getGlobalDesc() == v ? kTensormapAlign : 0;
  if (isa<AtomFromDescriptorOp, FenceTmaDescAcquireOp>(op))
    return kTensormapAlign;
  // The lowering's stores need 8, but a copied descriptor is there to be
  // used as one (the op asks 64): refusing its destination here is what
  // keeps a later TMA copy through it from faulting.
  if (isa<CopyTensormapOp>(op))
    return kTensormapAlign;
  // A vector atomic accesses the value's bytes as one.
  if (auto add = dyn_cast<VectorAtomicAddOp>(op)) {
    auto t = cast<VectorType>(add.getValue().getType());
    return add.getPtr() == v
               ? t.getNumElements() * t.getElementTypeBitWidth() / 8
               : 0;
  }
  // Inline PTX that accesses memory says what its address must be aligned
  // to.
  if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op))
    if (auto a = asmOp->getAttrOfType<IntegerAttr>("nvtma.align");
        a && a.getValue().getActiveBits() <= 32) // nvtma-check-target's rule
      return static_cast<int64_t>(a.getValue().getZExtValue());
  return 0;
}

/// What one use of a memref derived from a parameter assumes of the
/// parameter's alignment, in bytes (0: nothing).
int64_t memrefUseAlign(OpOperand &use) {
  Operation *op = use.getOwner();
  if (auto update = dyn_cast<UpdateTmaDescriptorOp>(op)) {
    if (update.getTensor() != use.get())
      return 0;
    // The tensor's address and strides go into a descriptor: the driver's
    // rules for them, with the atom's (static) fields.
    return tmap::globalAlign(staticParams(update.getAtom().getType()));
  }
  // vector.load/store, memref.load/store and the like.
  if (auto aligned = dyn_cast<AlignmentAttrOpInterface>(op))
    if (llvm::MaybeAlign a = aligned.getMaybeAlign())
      return static_cast<int64_t>(a->value());
  return 0;
}

/// The values `use` forwards its operand to unchanged: the block arguments
/// and results a region branch op (scf.for's iter_args, scf.while's
/// arguments) or its regions' terminators (scf.yield, scf.condition) pass it
/// on to, and the parameter of a device function (func.call, llvm.call of a
/// function with a body) it is passed as. Empty for any other use.
SmallVector<Value> forwardedTo(OpOperand &use) {
  Operation *op = use.getOwner();
  if (auto call = dyn_cast<CallOpInterface>(op)) {
    OperandRange args = call.getArgOperands();
    unsigned i = use.getOperandNumber() - args.getBeginOperandIndex();
    auto callee = dyn_cast_or_null<CallableOpInterface>(call.resolveCallable());
    Region *body = callee ? callee.getCallableRegion() : nullptr;
    if (i >= args.size() || !body || body->empty() ||
        i >= body->front().getNumArguments())
      return {};
    return {body->front().getArgument(i)};
  }
  auto branch = dyn_cast<RegionBranchOpInterface>(op);
  if (!branch && isa<RegionBranchTerminatorOpInterface>(op))
    branch = dyn_cast_or_null<RegionBranchOpInterface>(op->getParentOp());
  if (!branch)
    return {};
  RegionBranchSuccessorMapping mapping;
  branch.getSuccessorOperandInputMapping(mapping);
  auto it = mapping.find(&use);
  return it == mapping.end() ? SmallVector<Value>() : it->second;
}

/// Whether `op` passes an integer address on with its alignment unchanged
/// or lowered by an offset the access's own alignment covers, like a GEP:
/// the casts and additions between memref.extract_aligned_pointer_as_index
/// and llvm.inttoptr.
bool isAddressArith(Operation *op) {
  return isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::AddIOp,
             LLVM::AddOp>(op);
}

/// Whether `op` may write memory through `v` (null: through any value): a
/// write it declares on that value or on none in particular, or effects it
/// does not declare (an external call).
bool mayWrite(Operation *op, Value v) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return true;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::any_of(list, [&](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Write>(e.getEffect()) &&
           (!v || !e.getValue() || e.getValue() == v);
  });
}

/// Whether the op of `use`, an access (not a view, cast or value forwarded),
/// may write memory through the pointer or memref it takes there. A pointer
/// stored to memory escapes (counted written); a tensor going into a
/// descriptor that stores or reduces (tensormap.replace) is written by that
/// descriptor's copies; the descriptor fences and prefetches only read the
/// descriptor they take.
bool mayWriteThrough(OpOperand &use) {
  Operation *op = use.getOwner();
  if (auto update = dyn_cast<UpdateTmaDescriptorOp>(op);
      update && update.getTensor() == use.get())
    return !update.getAtom().getType().isLoad();
  if (isa<FenceTmaDescAcquireOp, PrefetchDescriptorOp>(op))
    return false;
  // A load reads through its address: the write with no value that a
  // volatile or ordered (atomic) load declares is its ordering of other
  // memory, which writes nothing through this one.
  if (auto load = dyn_cast<LLVM::LoadOp>(op); load && load.getAddr() == use.get())
    return false;
  if (auto store = dyn_cast<LLVM::StoreOp>(op);
      store && store.getValue() == use.get())
    return true;
  return mayWrite(op, use.get());
}

/// Whether an address held as an integer escapes at `use`: stored to memory,
/// or passed to a function or inline PTX, which may write through it.
bool escapesAsInteger(OpOperand &use) {
  Operation *op = use.getOwner();
  if (auto store = dyn_cast<LLVM::StoreOp>(op))
    return store.getValue() == use.get();
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return store.getValue() == use.get();
  return isa<CallOpInterface, LLVM::InlineAsmOp>(op);
}

/// What the kernel's accesses through one memref parameter do with it.
struct Accesses {
  /// The byte alignment they assume of its base address (and, a view or a
  /// pointer being an offset from it by whole strides, of its dynamic
  /// strides in bytes); 0 when none does.
  int64_t align = 0;
  /// Whether any may write it (mayWriteThrough).
  bool writes = false;
};

/// The accesses through memref parameter `arg`: through a view of it
/// (view-like ops) or a pointer into it (nvtma.address_of,
/// memref.extract_aligned_pointer_as_index and llvm.inttoptr, address-space
/// casts, GEPs, selects), following values through region branches
/// (loop-carried, yielded) and into device functions (`forwardedTo`). An
/// address computed otherwise from an integer one (masked, scaled) is
/// followed for writes only: what it is aligned to says nothing of the
/// parameter's alignment.
Accesses traceAccesses(BlockArgument arg) {
  Accesses a;
  // (value, whether an access through it says what the parameter's
  // alignment must be)
  SmallVector<std::pair<Value, int>> work{{arg, 1}};
  llvm::DenseSet<std::pair<Value, int>> seen{{arg, 1}};
  while (!work.empty()) {
    auto [v, exact] = work.pop_back_val();
    auto push = [&, exact = exact](Value r, bool keepsAlign = true) {
      std::pair<Value, int> item{r, exact && keepsAlign};
      if (seen.insert(item).second)
        work.push_back(item);
    };
    bool isPointer = isa<LLVM::LLVMPointerType>(v.getType());
    bool isAddress = v.getType().isIntOrIndex();
    for (OpOperand &use : v.getUses()) {
      Operation *op = use.getOwner();
      if (SmallVector<Value> next = forwardedTo(use); !next.empty()) {
        for (Value r : next)
          push(r);
      } else if (isAddress) {
        // An address as an integer: it matters once it is a pointer again,
        // or where it escapes. Other integer results of pure ops on it (not
        // predicates) may be addresses too.
        if (isAddressArith(op) || isa<LLVM::IntToPtrOp>(op)) {
          push(op->getResult(0));
        } else if (escapesAsInteger(use)) {
          a.writes = true;
        } else if (isMemoryEffectFree(op)) {
          for (Value r : op->getResults())
            if (isa<IndexType>(r.getType()) || r.getType().isInteger(32) ||
                r.getType().isInteger(64))
              push(r, /*keepsAlign=*/false);
        }
      } else if (isPointer) {
        // (a pointer is never a select's condition)
        if (isa<LLVM::AddrSpaceCastOp, LLVM::PtrToIntOp, LLVM::SelectOp,
                arith::SelectOp>(op))
          push(op->getResult(0));
        else if (auto gep = dyn_cast<LLVM::GEPOp>(op);
                 gep && gep.getBase() == v)
          push(gep.getResult());
        else {
          if (exact)
            a.align = std::max(a.align, pointerUseAlign(use));
          a.writes |= mayWriteThrough(use);
        }
      } else if (auto view = dyn_cast<ViewLikeOpInterface>(op);
                 (view && view.getViewSource() == v) ||
                 isa<memref::TransposeOp>(op)) {
        for (Value r : op->getResults())
          if (isa<MemRefType>(r.getType()))
            push(r);
      } else if (auto addr = dyn_cast<AddressOfOp>(op)) {
        if (addr.getMemref() == v)
          push(addr.getPtr());
      } else if (auto ptr = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(
                     op)) {
        push(ptr.getAlignedPointer());
      } else {
        if (exact)
          a.align = std::max(a.align, memrefUseAlign(use));
        a.writes |= mayWriteThrough(use);
      }
    }
  }
  return a;
}

/// Every static field of a descriptor of `atom` (`p` filled from it), in
/// the descriptor's (innermost-first) order.
llvm::json::Object describeAtom(TmaAtomType atom, const tmap::Params &p) {
  llvm::json::Object o;
  o["atom"] = typeString(atom);
  o["mode"] = atom.isIm2col() ? "im2col" : "tiled";
  o["rank"] = p.rank;
  o["tma_format"] = static_cast<int64_t>(p.dataType);
  o["tma_format_name"] = stringifyTmaFormat(atom.getFormat());
  o["element_bits"] = getElementBitWidth(atom.getElementType());
  o["interleave"] = static_cast<int64_t>(p.interleave);
  o["swizzle"] = static_cast<int64_t>(p.swizzle);
  o["l2_promotion"] = static_cast<int64_t>(p.l2Promotion);
  o["l2_promotion_name"] = stringifyL2Promotion(atom.getL2Promotion());
  o["oob_fill"] = static_cast<int64_t>(p.oobFill);
  o["element_strides"] = jsonInts(
      SmallVector<int64_t>(p.elementStrides, p.elementStrides + p.rank));
  if (atom.isIm2col()) {
    unsigned n = p.rank - 2;
    o["pixel_box_lower_corner"] = jsonInts(SmallVector<int64_t>(
        p.pixelBoxLowerCorner, p.pixelBoxLowerCorner + n));
    o["pixel_box_upper_corner"] = jsonInts(SmallVector<int64_t>(
        p.pixelBoxUpperCorner, p.pixelBoxUpperCorner + n));
    o["channels_per_pixel"] = p.channelsPerPixel;
    o["pixels_per_column"] = p.pixelsPerColumn;
  } else {
    o["box_dim"] = jsonInts(SmallVector<int64_t>(p.boxDim, p.boxDim + p.rank));
  }
  return o;
}

/// The atoms of the nvtma.update_tma_descriptor ops whose tensor is memref
/// parameter `arg`, as is, through casts (which keep its runtime shape and
/// strides), region branches (loop-carried, yielded) or calls, in program
/// order without repeats. tensormap.replace writes the tensor's address,
/// dims and byte strides into the descriptor on the device, where no driver
/// checks them: the launch checks them against the driver's rules with these
/// atoms' static fields. A view that computes other dims or strides
/// (subview, transpose, reshape) is not followed: the launch cannot know
/// what the kernel writes then (the op's verifier checks what the view's
/// type fixes).
SmallVector<TmaAtomType> replacingAtoms(BlockArgument arg) {
  llvm::SetVector<TmaAtomType> atoms;
  SmallVector<Value> work{arg};
  llvm::SmallPtrSet<Value, 8> seen{arg};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *op = use.getOwner();
      if (auto update = dyn_cast<UpdateTmaDescriptorOp>(op)) {
        if (update.getTensor() == v)
          atoms.insert(update.getAtom().getType());
        continue;
      }
      for (Value r : forwardedTo(use))
        if (seen.insert(r).second)
          work.push_back(r);
      if (isa<memref::CastOp, memref::AssumeAlignmentOp,
              memref::MemorySpaceCastOp>(op) &&
          isa<MemRefType>(op->getResult(0).getType()) &&
          seen.insert(op->getResult(0)).second)
        work.push_back(op->getResult(0));
    }
  }
  return atoms.takeVector();
}

/// Whether integer or index parameter `type` takes signed values: by its
/// type's signedness, else signed unless marked unsigned (signless integers
/// are signed in the DSL). An i1 is a bool: 0 or 1.
bool isSignedParam(Type type, bool markedUnsigned) {
  if (auto i = dyn_cast<IntegerType>(type)) {
    if (i.getWidth() == 1 || i.isUnsigned())
      return false;
    if (i.isSigned())
      return true;
  }
  return !markedUnsigned;
}

/// How the launcher passes one argument the caller gives; `accesses` are
/// traceAccesses and `replacing` replacingAtoms of a memref parameter;
/// `markedUnsigned` whether an integer parameter carries nvtma.unsigned.
llvm::json::Object describeArg(Type type, const Accesses &accesses,
                               ArrayRef<TmaAtomType> replacing,
                               bool markedUnsigned) {
  llvm::json::Object o;
  o["type"] = typeString(type);
  if (auto m = dyn_cast<MemRefType>(type)) {
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    (void)getStridesAndOffsetChecked(m, strides, offset);
    o["kind"] = "memref";
    o["element"] = typeString(m.getElementType());
    o["element_bits"] = getElementBitWidth(m.getElementType());
    o["shape"] = jsonDims(m.getShape());
    o["strides"] = jsonDims(strides);
    o["offset"] = ShapedType::isDynamic(offset) ? llvm::json::Value(nullptr)
                                                : llvm::json::Value(offset);
    // The launch checks the tensor's address and strides against it: a
    // misaligned access faults the context, past any typed error.
    if (accesses.align)
      o["align"] = accesses.align;
    // The launch refuses a view whose elements share memory (an expanded
    // one) for it: the kernel's writes to them would collide.
    if (accesses.writes)
      o["writes"] = true;
    if (!replacing.empty()) {
      llvm::json::Array maps;
      for (TmaAtomType atom : replacing)
        maps.push_back(describeAtom(atom, staticParams(atom)));
      o["tensormaps"] = std::move(maps);
    }
  } else if (type.isIntOrIndexOrFloat()) {
    o["kind"] = "scalar";
    o["bits"] = isa<IndexType>(type) ? 64 : type.getIntOrFloatBitWidth();
    // The launch bounds a Python int by it: the bits alone let an Int32 take
    // 3e9 (reaching the kernel negative) and a Uint32 take -1.
    if (type.isIntOrIndex())
      o["signed"] = isSignedParam(type, markedUnsigned);
  } else if (auto p = dyn_cast<LLVM::LLVMPointerType>(type)) {
    o["kind"] = "pointer";
    o["address_space"] = p.getAddressSpace();
  } else {
    o["kind"] = "unsupported";
  }
  return o;
}

/// One descriptor parameter: every static field, plus the bytes encoded with
/// address 0 when the tensor is fully static, so a launcher only patches the
/// address.
llvm::json::Object describeDescriptor(DescriptorAttr desc, MemRefType tensor) {
  TmaAtomType atom = desc.getAtom();
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  (void)getStridesAndOffsetChecked(tensor, strides, offset);
  tmap::Params p;
  fillDescriptorParams(atom, tensor.getShape(), strides, p);
  llvm::json::Object o = describeAtom(atom, p);
  o["kind"] = "descriptor";
  o["binds"] = desc.getBinds();
  o["box_bytes"] = atom.getBoxBytes();
  o["tile_bytes"] = atom.getTileBytes();
  bool fullyStatic = tensor.hasStaticShape() &&
                     llvm::none_of(strides, ShapedType::isDynamic);
  uint8_t bytes[tmap::kDescriptorBytes];
  if (fullyStatic && tmap::encode(p, tmap::Target{90}, bytes))
    o["template"] = llvm::toHex(ArrayRef<uint8_t>(bytes), /*LowerCase=*/true);
  else
    o["template"] = nullptr;
  return o;
}

/// [x, y, z] of a launch attribute, checked: positive dims whose product is
/// at most `limit`; null when absent.
FailureOr<llvm::json::Value> launchDims(gpu::GPUFuncOp func, StringRef what,
                                        std::optional<ArrayRef<int32_t>> dims,
                                        int64_t limit) {
  if (!dims)
    return llvm::json::Value(nullptr);
  ArrayRef<int32_t> v = *dims;
  int64_t product = 1;
  for (int32_t d : v) {
    if (d < 1)
      return func.emitError() << what << " [" << v << "] has a dim below 1";
    product *= d;
  }
  if (v.size() != 3 || product > limit)
    return func.emitError() << what << " [" << v << "] holds " << product
                            << " " << (limit == 1024 ? "threads" : "CTAs")
                            << ", the limit is " << limit;
  llvm::json::Array a;
  for (int32_t d : v)
    a.push_back(d);
  return llvm::json::Value(std::move(a));
}

/// Whether a descriptor parameter of `func` that stores or reduces (TMA)
/// binds memref parameter `i`.
bool storedByDescriptor(gpu::GPUFuncOp func, unsigned i) {
  for (unsigned j = 0, e = func.getNumArguments(); j < e; ++j)
    if (auto desc = func.getArgAttrOfType<DescriptorAttr>(
            j, NVTMADialect::getDescriptorArgAttrName());
        desc && desc.getBinds() == i && !desc.getAtom().isLoad())
      return true;
  return false;
}

/// The records are JSON, which holds UTF-8 only, and llvm::json asserts on
/// anything else; a symbol's name in MLIR is any bytes (@"\FF" parses, and
/// so does bytecode that spells it). CheckTarget keeps a kernel's name to
/// PTX's ASCII, but not a gpu.module's, and this pass also runs alone.
LogicalResult checkUTF8Name(Operation *op, StringRef name) {
  if (llvm::json::isUTF8(name))
    return success();
  std::string quoted;
  llvm::raw_string_ostream os(quoted);
  llvm::printEscapedString(name, os);
  return op->emitOpError() << "name \"" << quoted
                           << "\" is not valid UTF-8, which the kernel "
                              "records (JSON) take";
}

FailureOr<llvm::json::Object> describeKernel(gpu::GPUFuncOp func) {
  auto module = func->getParentOfType<gpu::GPUModuleOp>();
  if (failed(checkUTF8Name(func, func.getName())) ||
      failed(checkUTF8Name(module, module.getName())))
    return failure();
  llvm::json::Array params;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto desc = func.getArgAttrOfType<DescriptorAttr>(
        i, NVTMADialect::getDescriptorArgAttrName());
    if (!desc) {
      Accesses accesses;
      SmallVector<TmaAtomType> replacing;
      if (isa<MemRefType>(type) && !func.isExternal()) {
        accesses = traceAccesses(func.getArgument(i));
        replacing = replacingAtoms(func.getArgument(i));
        accesses.writes |= storedByDescriptor(func, i);
      }
      bool markedUnsigned =
          func.getArgAttr(i, NVTMADialect::getUnsignedArgAttrName()) !=
          nullptr;
      if (markedUnsigned && (!type.isIntOrIndex() || type.isSignedInteger()))
        return func.emitError()
               << NVTMADialect::getUnsignedArgAttrName() << " on parameter "
               << i << " of type " << type
               << ", which cannot hold an unsigned value";
      params.push_back(describeArg(type, accesses, replacing, markedUnsigned));
      continue;
    }
    // The dialect's argument verifier made sure binds names a memref.
    params.push_back(describeDescriptor(
        desc, cast<MemRefType>(func.getArgumentTypes()[desc.getBinds()])));
  }
  llvm::json::Object launch;
  FailureOr<llvm::json::Value> block = launchDims(
      func, "known_block_size", func.getKnownBlockSize(), /*limit=*/1024);
  FailureOr<llvm::json::Value> cluster = launchDims(
      func, "known_cluster_size", func.getKnownClusterSize(), /*limit=*/16);
  if (failed(block) || failed(cluster))
    return failure();
  launch["block"] = std::move(*block);
  launch["cluster"] = std::move(*cluster);
  int64_t smem = 0;
  // The dialect's attribute verifier checked its type and range.
  if (auto a = func->getAttrOfType<IntegerAttr>(
          NVTMADialect::getDynamicSmemAttrName()))
    smem = a.getInt();
  launch["smem"] = smem;
  if (func->hasAttr(NVTMADialect::getPdlAttrName()))
    launch["pdl"] = true;
  // The dialect's attribute verifier checked its type and range.
  if (auto a = func->getAttrOfType<IntegerAttr>(
          NVTMADialect::getMaxGridAttrName()))
    launch["max_grid"] = a.getInt();
  llvm::json::Object record;
  record["module"] = module.getName();
  record["params"] = std::move(params);
  record["launch"] = std::move(launch);
  return record;
}

struct WriteKernelRecords
    : mlir::nvtma::impl::NVTMAWriteKernelRecordsBase<WriteKernelRecords> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::json::Object kernels;
    bool any = false;
    WalkResult walk = module.walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel())
        return WalkResult::advance();
      any = true;
      FailureOr<llvm::json::Object> record = describeKernel(func);
      if (failed(record))
        return WalkResult::interrupt();
      kernels[func.getName()] = std::move(*record);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    // Records of kernels lowered by an earlier run stay.
    if (!any && module->hasAttr(NVTMADialect::getKernelRecordsAttrName()))
      return;
    // A module without kernels still gets a record (an empty one) so a
    // launcher can tell it ran.
    llvm::json::Object root;
    root["version"] = 1;
    root["kernels"] = std::move(kernels);
    std::string json;
    llvm::raw_string_ostream os(json);
    os << llvm::json::Value(std::move(root));
    module->setAttr(NVTMADialect::getKernelRecordsAttrName(),
                    StringAttr::get(&getContext(), json));
  }
};

} // namespace
