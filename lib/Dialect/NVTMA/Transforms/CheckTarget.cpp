//===- CheckTarget.cpp - diagnose what NVPTX cannot select ----------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Everything here would otherwise reach LLVM, whose NVPTX backend ends the
// process on it instead of reporting an error.
//
//===----------------------------------------------------------------------===//

#include "nvtma/Dialect/NVTMA/NVTMADialect.h"
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h"
#include "nvtma/Target/TargetInfo.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::nvtma {
#define GEN_PASS_DEF_NVTMACHECKTARGET
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h.inc"
} // namespace mlir::nvtma

using namespace mlir;
using namespace mlir::nvtma;
namespace tgt = ::nvtma::target;

namespace {

/// What the ops of one gpu.module may use.
struct Arch {
  unsigned sm = 0;
  bool archSpecific = false; ///< an `a` or `f` chip
  unsigned ptx = 0;          ///< 0: unknown (no target, no ptx= option)
  bool fromOption = false;   ///< sm came from the pass option
  unsigned maxStaticSmem = 0; ///< tgt::maxStaticSharedMemory
};

/// Checks one NVVM target against TargetInfo; emits on `module`.
LogicalResult checkNVVMTarget(gpu::GPUModuleOp module,
                              NVVM::NVVMTargetAttr target, Arch &arch) {
  // A target written in the IR with no +ptx feature gets the chip's oldest
  // PTX ISA from LLVM.
  tgt::Resolved r;
  std::string error;
  if (!tgt::resolve(target.getChip(), target.getFeatures(), target.getO(), r,
                    error, /*defaultPtx=*/0))
    return emitError(module.getLoc()) << "gpu.module @" << module.getName() << ": "
                              << error;
  // The 32-bit ABI (nvptx-nvidia-cuda): ptxas refuses it from sm_90 on, and
  // the runtime passes every pointer parameter in 8 bytes.
  StringRef triple = target.getTriple();
  if (triple != "nvptx64-nvidia-cuda")
    return emitError(module.getLoc())
           << "gpu.module @" << module.getName() << ": triple '" << triple
           << "' is not one nvtma compiles; supported: nvptx64-nvidia-cuda "
              "(64-bit: ptxas refuses the 32-bit ABI on sm_90 and newer, and "
              "nvtma's launch passes 64-bit pointers)";
  arch.sm = r.chip->sm;
  arch.archSpecific = r.chip->suffix != 0;
  arch.ptx = r.ptx;
  arch.maxStaticSmem = tgt::maxStaticSharedMemory(*r.chip);
  return success();
}

/// Checks that every nvtma op of `module` can be selected for `arch`.
LogicalResult checkOps(gpu::GPUModuleOp module, const Arch &arch) {
  bool ok = true;
  if (arch.sm < tgt::kMinTmaSM) {
    emitError(module.getLoc()) << "nvtma needs sm_90 or newer (TMA), the target is "
                          "sm_"
                       << arch.sm;
    return failure();
  }
  if (arch.ptx && arch.ptx < 80) {
    emitError(module.getLoc()) << "nvtma needs PTX ISA 8.0 or newer (+ptx80), the "
                          "target has +ptx"
                       << arch.ptx;
    return failure();
  }
  module.walk([&](Operation *op) {
    Type atomType;
    if (auto c = dyn_cast<CopyOp>(op))
      atomType = c.getAtom().getType();
    else if (auto m = dyn_cast<MakeTiledTmaAtomOp>(op))
      atomType = m.getAtom().getType();
    auto atom = dyn_cast_or_null<TmaAtomType>(atomType);
    if (atom && atom.getRequiredSM() > arch.sm) {
      op->emitOpError() << "needs sm_" << atom.getRequiredSM()
                        << ", lowering for sm_" << arch.sm;
      ok = false;
    } else if (atom && !arch.fromOption) {
      if (std::string why =
              blackwellTmaFamilyError(atom, arch.sm, arch.archSpecific,
                                      arch.ptx);
          !why.empty()) {
        op->emitOpError() << why;
        ok = false;
      }
    }
    if (isa<UpdateTmaDescriptorOp>(op) && !arch.archSpecific &&
        !arch.fromOption) {
      op->emitOpError() << "tensormap.replace needs an architecture-specific "
                           "target (sm_"
                        << arch.sm << "a)";
      ok = false;
    }
    // wgmma is sm_90a's alone (a chip from the option says no suffix).
    if (isa<WgmmaMmaAsyncRsOp>(op) &&
        (arch.sm != 90 || (!arch.archSpecific && !arch.fromOption))) {
      op->emitOpError() << "wgmma needs sm_90a, the target is sm_" << arch.sm
                        << (arch.archSpecific ? "a" : "");
      ok = false;
    }
    // The f32 vector red forms arrived in PTX 8.1.
    auto add = dyn_cast<VectorAtomicAddOp>(op);
    if (add && arch.ptx && arch.ptx < 81 &&
        cast<VectorType>(add.getValue().getType()).getElementType().isF32()) {
      op->emitOpError() << "of " << add.getValue().getType()
                        << " needs PTX ISA 8.1 (+ptx81), the target has +ptx"
                        << arch.ptx;
      ok = false;
    }
    // tensormap.replace and the tensormap proxy fences arrived in PTX 8.3.
    if (isa<UpdateTmaDescriptorOp, FenceTmaDescAcquireOp,
            FenceTmaDescReleaseOp, CpFenceTmaDescReleaseOp>(op) &&
        arch.ptx && arch.ptx < 83) {
      op->emitOpError() << "needs PTX ISA 8.3 (+ptx83), the target has +ptx"
                        << arch.ptx;
      ok = false;
    }
  });
  return success(ok);
}

/// GPUFuncOpLowering asserts on an llvm.align that is not a positive power
/// of two of a signless integer type.
LogicalResult checkAlignments(gpu::GPUFuncOp func) {
  for (NamedAttribute na : func->getAttrs()) {
    auto dicts = dyn_cast<ArrayAttr>(na.getValue());
    if (!dicts)
      continue;
    for (Attribute d : dicts) {
      auto dict = dyn_cast<DictionaryAttr>(d);
      Attribute align = dict ? dict.get("llvm.align") : Attribute();
      if (!align)
        continue;
      auto i = dyn_cast<IntegerAttr>(align);
      if (!i || !(i.getType().isSignlessInteger() || i.getType().isIndex()) ||
          i.getValue().getSignificantBits() > 64 || // getSExtValue asserts
          i.getValue().getSExtValue() <= 0 ||
          !llvm::isPowerOf2_64(i.getValue().getSExtValue()))
        return func.emitError() << "llvm.align must be a positive power of "
                                   "two of a signless integer type, got "
                                << align;
    }
  }
  return success();
}

/// NVPTX asserts on an alloca in the shared address space: shared memory
/// comes from workgroup attributions or gpu.dynamic_shared_memory.
LogicalResult checkSharedAlloc(Operation *op) {
  auto type = cast<MemRefType>(op->getResult(0).getType());
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  auto num = dyn_cast_or_null<IntegerAttr>(type.getMemorySpace());
  if ((space && space.getValue() == gpu::AddressSpace::Workgroup) ||
      (num && num.getValue() == 3)) // any width (getInt asserts past 64 bits)
    return op->emitOpError() << "cannot allocate shared memory in a kernel "
                                "body; use a gpu.func workgroup attribution "
                                "or gpu.dynamic_shared_memory";
  return success();
}

/// Why an integer memory space (of a memref or an mbarrier group) would
/// assert in the lowering, or "" when it would not: the memref type
/// conversion reads it with getInt (signless, at most 64 bits) and LLVM's
/// address spaces are 24-bit.
std::string badIntegerSpace(Attribute space) {
  auto num = dyn_cast_or_null<IntegerAttr>(space);
  if (!num)
    return "";
  if (!num.getType().isSignlessInteger())
    return "is not a signless integer";
  if (num.getValue().getActiveBits() > 24)
    return "is not an address space LLVM has (0 to 2^24 - 1)";
  return "";
}

/// The most scalars a vector, LLVM array or LLVM struct may hold: LLVM's
/// instruction selection asserts ("too many operands to fit into SDNode",
/// "NumValues wasn't wide enough") on a vector of 40000 lanes stored and an
/// array of 65536 elements as a value (32768 passed every op tried, but a
/// struct that large took minutes); a thread's registers hold 255 32-bit
/// values.
constexpr uint64_t kMaxScalars = 16384;

/// The widest integer: PTX's widest register is .b128; past it LLVM's NVPTX
/// backend asserts (an i129 store, an i4194305 shift in InstCombine, past
/// 2^23 bits in the translation).
constexpr unsigned kMaxIntegerBits = 128;

/// The elements of a static shape (saturated).
uint64_t shapeProduct(ArrayRef<int64_t> shape) {
  uint64_t n = 1;
  for (int64_t d : shape)
    n = llvm::SaturatingMultiply(n, static_cast<uint64_t>(d));
  return n;
}

/// The scalars a value of type `t` holds (saturated): a vector's lanes, an
/// LLVM array's or struct's elements' scalars, else 1.
uint64_t scalarCount(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    return shapeProduct(v.getShape());
  if (auto a = dyn_cast<LLVM::LLVMArrayType>(t))
    return llvm::SaturatingMultiply(a.getNumElements(),
                                    scalarCount(a.getElementType()));
  if (auto st = dyn_cast<LLVM::LLVMStructType>(t)) {
    uint64_t n = 0;
    if (!st.isOpaque())
      for (Type f : st.getBody())
        n = llvm::SaturatingAdd(n, scalarCount(f));
    return n;
  }
  return 1;
}

/// What LLVM's NVPTX backend aborts on in type `t` or a type it is built of
/// (empty: nothing): more than kMaxScalars in a vector or an aggregate, an
/// integer wider than kMaxIntegerBits, an f80 or f128 (their arithmetic
/// needs library calls, which NVPTX has none of).
std::string unselectableType(Type t) {
  std::string why;
  // (outermost first: the type the user wrote)
  t.walk<WalkOrder::PreOrder>([&](Type sub) {
    if (!why.empty())
      return;
    llvm::raw_string_ostream os(why);
    if (isa<VectorType, LLVM::LLVMArrayType, LLVM::LLVMStructType>(sub)) {
      if (uint64_t n = scalarCount(sub); n > kMaxScalars)
        os << "uses '" << sub << "', " << n
           << " scalars; nvtma compiles vectors, LLVM arrays and LLVM structs "
              "of at most "
           << kMaxScalars << " (LLVM's instruction selection aborts on larger "
           << "ones)";
    } else if (auto i = dyn_cast<IntegerType>(sub);
               i && i.getWidth() > kMaxIntegerBits) {
      os << "uses '" << sub << "': nvtma compiles integers of at most "
         << kMaxIntegerBits << " bits (PTX's widest register; LLVM's NVPTX "
         << "backend aborts on wider ones)";
    } else if (isa<Float80Type, Float128Type>(sub)) {
      os << "uses '" << sub << "', which PTX has no type for (LLVM's NVPTX "
         << "backend aborts on its arithmetic, which needs library calls)";
    }
  });
  return why;
}

/// int <-> float conversions, which LLVM's NVPTX backend aborts on
/// ("unsupported library call operation") past 64-bit integers.
bool isIntFloatConversion(Operation *op) {
  if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op))
    return call.getIntrin().starts_with("llvm.fptosi.sat") ||
           call.getIntrin().starts_with("llvm.fptoui.sat");
  return isa<arith::SIToFPOp, arith::UIToFPOp, arith::FPToSIOp,
             arith::FPToUIOp, LLVM::SIToFPOp, LLVM::UIToFPOp, LLVM::FPToSIOp,
             LLVM::FPToUIOp>(op);
}

/// The bytes a value of type `t` takes in memory (saturated; an LLVM
/// struct's padding not counted): a memref's elements, a vector's lanes, an
/// LLVM array's or struct's elements, a scalar's bits rounded up to bytes,
/// 8 for anything else (pointers).
uint64_t storageBytes(Type t) {
  if (auto m = dyn_cast<MemRefType>(t))
    return llvm::SaturatingMultiply(shapeProduct(m.getShape()),
                                    storageBytes(m.getElementType()));
  if (auto v = dyn_cast<VectorType>(t)) // (its lanes packed: vector<8xi1> is 1)
    return v.getElementType().isIntOrFloat()
               ? llvm::divideCeil(
                     llvm::SaturatingMultiply(
                         shapeProduct(v.getShape()),
                         uint64_t(v.getElementType().getIntOrFloatBitWidth())),
                     8)
               : llvm::SaturatingMultiply(shapeProduct(v.getShape()),
                                          storageBytes(v.getElementType()));
  if (auto a = dyn_cast<LLVM::LLVMArrayType>(t))
    return llvm::SaturatingMultiply(a.getNumElements(),
                                    storageBytes(a.getElementType()));
  if (auto st = dyn_cast<LLVM::LLVMStructType>(t)) {
    uint64_t n = 0;
    if (!st.isOpaque())
      for (Type f : st.getBody())
        n = llvm::SaturatingAdd(n, storageBytes(f));
    return n;
  }
  if (t.isIntOrFloat())
    return llvm::divideCeil(t.getIntOrFloatBitWidth(), 8);
  return 8;
}

/// The bytes of `op` if it is a global in shared memory (memref.global in
/// the workgroup space, llvm.mlir.global in address space 3), else 0.
uint64_t sharedGlobalBytes(Operation *op) {
  if (auto g = dyn_cast<memref::GlobalOp>(op)) {
    MemRefType type = g.getType();
    Attribute space = type.getMemorySpace();
    auto gpuSpace = dyn_cast_or_null<gpu::AddressSpaceAttr>(space);
    auto num = dyn_cast_or_null<IntegerAttr>(space);
    bool shared =
        (gpuSpace &&
         gpuSpace.getValue() == gpu::GPUDialect::getWorkgroupAddressSpace()) ||
        (num && num.getValue() == 3);
    return shared && type.hasStaticShape() ? storageBytes(type) : 0;
  }
  if (auto g = dyn_cast<LLVM::GlobalOp>(op))
    return g.getAddrSpace() == 3 ? storageBytes(g.getGlobalType()) : 0;
  return 0;
}

/// A gpu.func's static shared memory: its workgroup attributions, and the
/// shared globals and mbarrier groups it or a function it calls uses,
/// summed (for a kernel, what each of its CTAs holds), at most `limit`
/// bytes (the module's chips' maxStaticSharedMemory). Past it ptxas refuses the kernel with no line;
/// where the size wraps at 2^32 bytes it takes it, giving the kernel that
/// much less (a 2^30-float global: none), which then reads and writes past
/// its shared memory.
LogicalResult checkStaticSharedMemory(gpu::GPUFuncOp func,
                                      SymbolTable &symbols, uint64_t limit,
                                      StringRef chip) {
  uint64_t attributions = 0;
  for (BlockArgument a : func.getWorkgroupAttributions())
    if (auto type = dyn_cast<MemRefType>(a.getType());
        type && type.hasStaticShape()) // (else the op's verifier)
      attributions = llvm::SaturatingAdd(attributions, storageBytes(type));
  // The shared globals named in the kernel and the functions it reaches,
  // and the ones their nvgpu.mbarrier.create ops become (8 bytes a barrier).
  uint64_t globals = 0, barriers = 0;
  SmallVector<StringRef> names;
  llvm::SmallPtrSet<Operation *, 8> seen{func};
  SmallVector<Operation *> work{func};
  while (!work.empty()) {
    Operation *fn = work.pop_back_val();
    fn->walk([&](nvgpu::MBarrierCreateOp create) {
      nvgpu::MBarrierGroupType group = create.getBarriers().getType();
      // (a space checkTypes refuses would assert in the query)
      if (badIntegerSpace(group.getMemorySpace()).empty() &&
          nvgpu::NVGPUDialect::isSharedMemoryAddressSpace(
              group.getMemorySpace()))
        barriers = llvm::SaturatingAdd(
            barriers, uint64_t(group.getNumBarriers()) * 8);
    });
    auto uses = SymbolTable::getSymbolUses(&fn->getRegion(0));
    if (!uses)
      continue;
    for (const SymbolTable::SymbolUse &use : *uses) {
      Operation *target =
          symbols.lookup(use.getSymbolRef().getRootReference());
      if (!target || !seen.insert(target).second)
        continue;
      if (isa<FunctionOpInterface>(target) && target->getNumRegions() == 1)
        work.push_back(target);
      else if (uint64_t bytes = sharedGlobalBytes(target)) {
        globals = llvm::SaturatingAdd(globals, bytes);
        names.push_back(SymbolTable::getSymbolName(target).getValue());
      }
    }
  }
  uint64_t bytes = llvm::SaturatingAdd(
      attributions, llvm::SaturatingAdd(globals, barriers));
  if (bytes <= limit)
    return success();
  InFlightDiagnostic d = func.emitOpError();
  if (bytes == attributions) {
    d << "has " << bytes << " bytes of workgroup attributions";
  } else {
    d << "has " << bytes << " bytes of static shared memory (";
    llvm::ListSeparator sep;
    if (attributions)
      d << StringRef(sep) << attributions << " of workgroup attributions";
    if (globals) {
      llvm::sort(names);
      d << StringRef(sep) << globals << " of the shared globals it uses:";
      for (StringRef name : names)
        d << " @" << name;
    }
    if (barriers)
      d << StringRef(sep) << barriers << " of its mbarrier groups";
    d << ")";
  }
  d << "; ptxas gives a kernel of " << chip << " at most " << limit
    << " bytes of static shared memory";
  if (limit == 48 * 1024) // (a chip whose CTAs take more as dynamic)
    d << " (more is dynamic shared memory: gpu.dynamic_shared_memory, with "
         "nvtma.dynamic_smem)";
  return d;
}

/// Types the lowering asserts on instead of reporting: an identity-layout
/// memref whose size overflows int64 (its strides), a memref or mbarrier
/// group whose integer memory space is not a signless one below 2^24, and
/// an LLVM pointer in an address space past 2^24 (LLVM's limit; 2^32 - 1,
/// !llvm.ptr<-1>, is a DenseMap's empty key there), and unselectableType's.
LogicalResult checkTypes(Operation *op) {
  auto check = [&](Type t) -> LogicalResult {
    if (std::string why = unselectableType(t); !why.empty())
      return op->emitOpError() << why;
    if (auto p = dyn_cast<LLVM::LLVMPointerType>(t);
        p && p.getAddressSpace() >= (1u << 24))
      return op->emitOpError() << "uses " << t << ": address space "
                               << p.getAddressSpace()
                               << " is past LLVM's 2^24 - 1";
    if (auto g = dyn_cast<nvgpu::MBarrierGroupType>(t))
      if (std::string why = badIntegerSpace(g.getMemorySpace()); !why.empty())
        return op->emitOpError() << "uses " << t << ", whose memory space "
                                 << g.getMemorySpace() << " " << why;
    auto m = dyn_cast<MemRefType>(t);
    if (!m)
      return success();
    if (std::string why = badIntegerSpace(m.getMemorySpace()); !why.empty())
      return op->emitOpError() << "uses " << m << ", whose memory space "
                               << m.getMemorySpace() << " " << why;
    if (hasComputableStrides(m))
      return success();
    return op->emitOpError() << "uses " << m
                             << ", which has more elements than int64 "
                                "counts; LLVM's memref lowering cannot "
                                "describe it";
  };
  for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                         op->getResultTypes()))
    if (failed(check(t)))
      return failure();
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (BlockArgument arg : block.getArguments())
        if (failed(check(arg.getType())))
          return failure();
  // A declaration's signature (a function with a body has its arguments).
  if (auto function = dyn_cast<FunctionOpInterface>(op))
    if (failed(check(function.getFunctionType())))
      return failure();
  if (isIntFloatConversion(op))
    for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                           op->getResultTypes()))
      if (auto i = dyn_cast<IntegerType>(getElementTypeOrSelf(t));
          i && i.getWidth() > 64)
        return op->emitOpError()
               << "converts between a float and " << t
               << ": nvtma converts integers of at most 64 bits (LLVM's "
                  "NVPTX backend would need a library call for it)";
  // The DSL's inline PTX says the alignment its address needs (the
  // records read it): a positive power of two of a signless integer.
  if (auto a = op->getAttr("nvtma.align")) {
    auto i = dyn_cast<IntegerAttr>(a);
    if (!i || !i.getType().isSignlessInteger() ||
        i.getValue().getActiveBits() > 32 || !i.getValue().isPowerOf2())
      return op->emitOpError()
             << "nvtma.align must be a power of two of a signless integer "
                "type below 2^32, got "
             << a;
  }
  // The vector.bitcast folder asserts on index lanes (no fixed bit width).
  if (op->getName().getStringRef() == "vector.bitcast" &&
      llvm::any_of(llvm::concat<const Type>(op->getOperandTypes(),
                                            op->getResultTypes()),
                   [](Type t) {
                     auto v = dyn_cast<VectorType>(t);
                     return v && v.getElementType().isIndex();
                   }))
    return op->emitOpError() << "bitcasts index lanes, which have no fixed "
                                "bit width";
  // ExpandStridedMetadata asserts on a reassociation group with two
  // dynamic sizes (the verifier takes it).
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(op))
    for (const ReassociationIndices &group :
         expand.getReassociationIndices())
      if (llvm::count_if(group, [&](int64_t d) {
            return expand.getResultType().isDynamicDim(d);
          }) > 1)
        return op->emitOpError()
               << "expands a dim into several dynamic ones, which "
                  "expand-strided-metadata cannot lower";
  return success();
}

/// A symbol's name as PTX takes it: NVPTX ends the process on a name it
/// cannot print unquoted ("Symbol name with unsupported characters"), an
/// LLVM module refuses a definition in the intrinsics' `llvm.` namespace,
/// and ptxas refuses a kernel whose name is not a PTX identifier (LLVM
/// renames the dots of internal symbols only).
LogicalResult checkSymbolName(Operation *op) {
  auto symbol = dyn_cast<SymbolOpInterface>(op);
  if (!symbol || isa<gpu::GPUModuleOp>(op))
    return success();
  StringRef name = symbol.getName();
  auto quoted = [&] {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << '"';
    llvm::printEscapedString(name, os);
    os << '"';
    return text;
  };
  bool kernel = isa<gpu::GPUFuncOp>(op) && cast<gpu::GPUFuncOp>(op).isKernel();
  auto follows = [&](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$' || (c == '.' && !kernel);
  };
  if (name.empty() || llvm::isDigit(name.front()) || name == "_" ||
      name == "$" || !llvm::all_of(name, follows))
    return op->emitOpError()
           << "symbol " << quoted()
           << " is not a name PTX takes: ASCII letters, digits, '_' and '$'"
           << (kernel ? "" : " (and '.')")
           << ", not starting with a digit";
  auto function = dyn_cast<FunctionOpInterface>(op);
  bool declaration = function ? function.isExternal() : symbol.isDeclaration();
  if (name.starts_with("llvm.") && !declaration)
    return op->emitOpError() << "defines " << quoted()
                             << " in the llvm. namespace, which LLVM keeps "
                                "for its intrinsics";
  return success();
}

/// A function's signature as convert-gpu-to-nvvm converts it, with the
/// converter it uses: a type with no LLVM form (a TMA atom, an mbarrier
/// group, a tensor, a tuple) left only "failed to legalize operation
/// 'gpu.func'", naming neither the parameter nor its type.
LogicalResult checkSignature(FunctionOpInterface function,
                             const LLVMTypeConverter &converter) {
  auto check = [&](StringRef what, unsigned i, Type t) -> LogicalResult {
    if (converter.convertType(t))
      return success();
    return function->emitOpError()
           << what << " " << i << " has type " << t
           << ", which has no LLVM form: a function in a gpu.module takes "
              "and returns integers, floats, index, vectors, memrefs and "
              "LLVM types (TMA atoms and mbarrier groups are made inside "
              "the function that uses them)";
  };
  for (auto [i, t] : llvm::enumerate(function.getArgumentTypes()))
    if (failed(check("parameter", i, t)))
      return failure();
  for (auto [i, t] : llvm::enumerate(function.getResultTypes()))
    if (failed(check("result", i, t)))
      return failure();
  return success();
}

struct CheckTarget : mlir::nvtma::impl::NVTMACheckTargetBase<CheckTarget> {
  using Base::Base;

  void runOnOperation() override {
    bool ok = true;
    LLVMTypeConverter converter(&getContext());
    configureGpuToNVVMTypeConverter(converter);
    getOperation().walk([&](gpu::GPUModuleOp module) {
      bool usesNVTMA = false;
      SmallVector<gpu::GPUFuncOp> funcs;
      module.walk([&](Operation *op) {
        if (isa<NVTMADialect>(op->getDialect()))
          usesNVTMA = true;
        if (auto func = dyn_cast<gpu::GPUFuncOp>(op)) {
          ok &= succeeded(checkAlignments(func));
          funcs.push_back(func);
        }
        if (isa<memref::AllocaOp, memref::AllocOp>(op))
          ok &= succeeded(checkSharedAlloc(op));
        bool typesOk = succeeded(checkTypes(op));
        ok &= typesOk;
        ok &= succeeded(checkSymbolName(op));
        // (where checkTypes passed: it says more of a memref's memory space)
        if (auto function = dyn_cast<FunctionOpInterface>(op);
            function && typesOk)
          ok &= succeeded(checkSignature(function, converter));
      });
      SmallVector<Arch> arches;
      // A kernel's static shared memory: at most what the least of the
      // module's chips takes (with none known, what the most of any takes).
      uint64_t smemLimit = 227 * 1024;
      std::string smemChip = "any chip";
      bool chipKnown = false;
      if (ArrayAttr targets = module.getTargetsAttr())
        for (Attribute a : targets)
          if (auto t = dyn_cast<NVVM::NVVMTargetAttr>(a)) {
            Arch arch;
            if (failed(checkNVVMTarget(module, t, arch))) {
              ok = false;
              continue;
            }
            arches.push_back(arch);
            if (!chipKnown || arch.maxStaticSmem < smemLimit) {
              smemLimit = arch.maxStaticSmem;
              smemChip = t.getChip().str();
              chipKnown = true;
            }
          }
      SymbolTable symbols(module);
      for (gpu::GPUFuncOp func : funcs)
        ok &= succeeded(
            checkStaticSharedMemory(func, symbols, smemLimit, smemChip));
      if (!usesNVTMA)
        return;
      if (sm) {
        // The option overrides the module's targets.
        Arch arch;
        arch.sm = sm;
        arch.ptx = ptx ? unsigned(ptx) : (arches.empty() ? 0 : arches[0].ptx);
        arch.fromOption = true;
        arches.assign(1, arch);
      } else if (!module.getTargetsAttr() ||
                 !llvm::any_of(module.getTargetsAttr(),
                               llvm::IsaPred<NVVM::NVVMTargetAttr>)) {
        emitError(module.getLoc())
            << "nvtma-check-target: gpu.module @" << module.getName()
            << " has no #nvvm.target chip and no sm= option was given; "
               "attach a target (nvtma-attach-missing-target chip=sm_90a) "
               "or pass sm=90";
        ok = false;
        return;
      } else if (ptx) {
        for (Arch &arch : arches)
          arch.ptx = ptx;
      }
      for (const Arch &arch : arches)
        ok &= succeeded(checkOps(module, arch));
    });
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
