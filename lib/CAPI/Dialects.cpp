//===- Dialects.cpp - C API and registration of nvtma ---------------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "nvtma-c/Dialects.h"
#include "nvtma/Conversion/NVTMAToNVVM.h"
#include "nvtma/Dialect/NVTMA/NVTMADialect.h"
#include "nvtma/Target/LLVMIR/NVTMAToLLVMIRTranslation.h"
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h"
#include "nvtma/Pipelines/Pipelines.h"
#include "nvtma/Support/InputScreen.h"
#include "nvtma/InitAll.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

using namespace mlir;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(NVTMA, nvtma, mlir::nvtma::NVTMADialect)

void mlir::nvtma::registerAllDialects(DialectRegistry &registry) {
  registry.insert<NVTMADialect, affine::AffineDialect, arith::ArithDialect, cf::ControlFlowDialect,
                  func::FuncDialect, gpu::GPUDialect, index::IndexDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
                  NVVM::NVVMDialect, nvgpu::NVGPUDialect, scf::SCFDialect,
                  ub::UBDialect, vector::VectorDialect>();
  func::registerInlinerExtension(registry);
  // What convert-gpu-to-nvvm uses to lower everything else in a gpu.module.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  // gpu-module-to-binary: the NVVM target and the LLVM IR translations.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerNVTMADialectTranslation(registry);
}

void mlir::nvtma::registerAllPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerConvertNVTMAToNVVM();
    registerNVTMATransformsPasses();
    registerNVTMAPipelines();
    registerArithToLLVMConversionPass();
    registerConvertControlFlowToLLVMPass();
    registerConvertFuncToLLVMPass();
    registerConvertGpuOpsToNVVMOps();
    registerConvertIndexToLLVMPass();
    registerConvertMathToLLVMPass();
    registerConvertNVGPUToNVVMPass();
    registerConvertNVVMToLLVMPass();
    registerFinalizeMemRefToLLVMConversionPass();
    registerReconcileUnrealizedCastsPass();
    registerSCFToControlFlowPass();
    registerLowerAffinePass();
    memref::registerExpandStridedMetadataPass();
    registerGpuKernelOutliningPass();
    registerGpuModuleToBinaryPass();
    registerGpuNVVMAttachTarget();
    registerCanonicalizer();
    registerCSE();
    registerSymbolDCE();
    registerStripDebugInfo();
  });
}

void nvtmaRegisterAllDialects(MlirDialectRegistry registry) {
  mlir::nvtma::registerAllDialects(*unwrap(registry));
}

void nvtmaRegisterAllPasses(void) { mlir::nvtma::registerAllPasses(); }

MlirLogicalResult nvtmaScreenInput(MlirStringRef text, MlirStringCallback error,
                                   void *userData) {
  ::nvtma::ScreenFailure failure;
  if (::nvtma::screenInput(std::string_view(text.data, text.length), failure))
    return mlirLogicalResultSuccess();
  std::string message = std::to_string(failure.line) + ":" +
                        std::to_string(failure.column) +
                        ": error: " + failure.message;
  error(mlirStringRefCreate(message.data(), message.size()), userData);
  return mlirLogicalResultFailure();
}

MlirLogicalResult nvtmaVerifyPipelineOptions(MlirStringRef chip,
                                             MlirStringRef features,
                                             MlirStringRef format, int optLevel,
                                             MlirStringCallback error,
                                             void *userData) {
  mlir::nvtma::PipelineOptions options;
  options.chip = std::string(chip.data, chip.length);
  options.features = std::string(features.data, features.length);
  options.format = std::string(format.data, format.length);
  options.optLevel = optLevel;
  std::string message;
  if (mlir::nvtma::verifyPipelineOptions(options, message))
    return mlirLogicalResultSuccess();
  error(mlirStringRefCreate(message.data(), message.size()), userData);
  return mlirLogicalResultFailure();
}

MlirLogicalResult nvtmaCheckGPUModules(MlirOperation module,
                                       MlirStringRef chip, int optLevel,
                                       MlirStringCallback library,
                                       MlirStringCallback linkedFile,
                                       MlirStringCallback error,
                                       void *userData) {
  llvm::StringRef wantChip = unwrap(chip);
  llvm::StringLiteral linkName = mlir::nvtma::NVTMADialect::getLinkAttrName();
  llvm::SmallVector<llvm::StringRef> names, files;
  auto addOnce = [](llvm::SmallVector<llvm::StringRef> &to, mlir::Attribute a) {
    auto s = llvm::dyn_cast_or_null<mlir::StringAttr>(a);
    if (s && !llvm::is_contained(to, s.getValue()))
      to.push_back(s.getValue());
  };
  std::string message;
  unwrap(module)->walk([&](mlir::gpu::GPUModuleOp m) {
    std::string where = "gpu.module @" + m.getSymName().str();
    // (the dialect's verifier checked nvtma.link's form: names, strings)
    auto link = llvm::dyn_cast_or_null<mlir::ArrayAttr>(m->getAttr(linkName));
    mlir::NVVM::NVVMTargetAttr own;
    for (mlir::Attribute a : m.getTargetsAttr() ? m.getTargetsAttr().getValue()
                                                : llvm::ArrayRef<mlir::Attribute>()) {
      auto t = llvm::dyn_cast<mlir::NVVM::NVVMTargetAttr>(a);
      if (!t)
        continue;
      if (own) {
        message = where + " has more than one #nvvm.target: nvtma compiles "
                          "one binary a module";
        return mlir::WalkResult::interrupt();
      }
      own = t;
    }
    if (own) {
      if (own.getChip() != wantChip) {
        message = where + " targets " + own.getChip().str() +
                  " (its own #nvvm.target), the compile " + wantChip.str() +
                  ": drop the module's target or compile for its chip";
        return mlir::WalkResult::interrupt();
      }
      if (optLevel >= 0 && own.getO() != optLevel) {
        message = where + " asks for O = " + std::to_string(own.getO()) +
                  " (its own #nvvm.target), the compile O = " +
                  std::to_string(optLevel) +
                  ": drop the module's target or compile at its level";
        return mlir::WalkResult::interrupt();
      }
      if (link) {
        message = where + " has its own #nvvm.target and " + linkName.str() +
                  ": list the bitcode in that target's link parameter "
                  "instead";
        return mlir::WalkResult::interrupt();
      }
      if (mlir::ArrayAttr ownFiles = own.getLink())
        for (mlir::Attribute f : ownFiles)
          addOnce(files, f);
    }
    if (link)
      for (mlir::Attribute a : link)
        addOnce(names, a);
    return mlir::WalkResult::skip();
  });
  if (!message.empty()) {
    error(mlirStringRefCreate(message.data(), message.size()), userData);
    return mlirLogicalResultFailure();
  }
  for (llvm::StringRef name : names)
    library(wrap(name), userData);
  for (llvm::StringRef file : files)
    linkedFile(wrap(file), userData);
  return mlirLogicalResultSuccess();
}

MlirAttribute nvtmaGPUWorkgroupAddressSpaceGet(MlirContext context) {
  return wrap(mlir::gpu::AddressSpaceAttr::get(
      unwrap(context), mlir::gpu::AddressSpace::Workgroup));
}

MlirType nvtmaNVGPUMBarrierGroupTypeGet(MlirContext context,
                                       unsigned numBarriers) {
  mlir::MLIRContext *ctx = unwrap(context);
  return wrap(mlir::nvgpu::MBarrierGroupType::get(
      ctx,
      mlir::gpu::AddressSpaceAttr::get(ctx,
                                       mlir::gpu::AddressSpace::Workgroup),
      numBarriers));
}

MlirType nvtmaNVGPUMBarrierTokenTypeGet(MlirContext context) {
  return wrap(mlir::nvgpu::MBarrierTokenType::get(unwrap(context)));
}

MlirAttribute nvtmaNVVMMMAShapeAttrGet(MlirContext context, int m, int n,
                                       int k) {
  return wrap(mlir::NVVM::MMAShapeAttr::get(unwrap(context), m, n, k));
}

MlirAttribute nvtmaNVVMLdStMatrixShapeAttrGet(MlirContext context, int m,
                                              int n) {
  return wrap(mlir::NVVM::LdStMatrixShapeAttr::get(unwrap(context), m, n));
}

MlirAttribute nvtmaLLVMLoopUnrollAnnotationGet(MlirContext context,
                                               int64_t count) {
  mlir::MLIRContext *ctx = unwrap(context);
  mlir::Builder b(ctx);
  mlir::BoolAttr yes = b.getBoolAttr(true);
  auto unroll = mlir::LLVM::LoopUnrollAttr::get(
      ctx, /*disable=*/count == 1 ? yes : nullptr,
      /*count=*/count > 1 ? b.getI32IntegerAttr(int32_t(count)) : nullptr,
      /*runtimeDisable=*/nullptr, /*full=*/count == 0 ? yes : nullptr,
      /*followupUnrolled=*/{}, /*followupRemainder=*/{}, /*followupAll=*/{});
  return wrap(mlir::LLVM::LoopAnnotationAttr::get(
      ctx, /*disableNonforced=*/nullptr, /*vectorize=*/{}, /*interleave=*/{},
      unroll, /*unrollAndJam=*/{}, /*licm=*/{}, /*distribute=*/{},
      /*pipeline=*/{}, /*peeled=*/{}, /*unswitch=*/{},
      /*mustProgress=*/nullptr, /*isVectorized=*/nullptr, /*startLoc=*/{},
      /*endLoc=*/{}, /*parallelAccesses=*/{}));
}

MlirStringRef nvtmaGPUContainerModuleAttrName() {
  return wrap(mlir::gpu::GPUDialect::getContainerModuleAttrName());
}

/// Op's name in `context`, its dialect loaded (an inherent attribute's name
/// is asked of the registered operation).
template <typename Dialect, typename Op>
static mlir::OperationName registeredName(MlirContext context) {
  mlir::MLIRContext *ctx = unwrap(context);
  ctx->getOrLoadDialect<Dialect>();
  return mlir::OperationName(Op::getOperationName(), ctx);
}

MlirStringRef nvtmaGPUKnownClusterSizeAttrName(MlirContext context) {
  return wrap(mlir::gpu::GPUFuncOp::getKnownClusterSizeAttrName(
                  registeredName<mlir::gpu::GPUDialect, mlir::gpu::GPUFuncOp>(
                      context))
                  .getValue());
}

MlirStringRef nvtmaDynamicSmemAttrName() {
  return wrap(mlir::nvtma::NVTMADialect::getDynamicSmemAttrName());
}

MlirStringRef nvtmaPdlAttrName() {
  return wrap(mlir::nvtma::NVTMADialect::getPdlAttrName());
}

MlirStringRef nvtmaMaxGridAttrName() {
  return wrap(mlir::nvtma::NVTMADialect::getMaxGridAttrName());
}

MlirStringRef nvtmaUnsignedArgAttrName() {
  return wrap(mlir::nvtma::NVTMADialect::getUnsignedArgAttrName());
}

MlirStringRef nvtmaLinkAttrName() {
  return wrap(mlir::nvtma::NVTMADialect::getLinkAttrName());
}

MlirStringRef nvtmaLLVMLoopAnnotationAttrName(MlirContext context) {
  return wrap(mlir::LLVM::BrOp::getLoopAnnotationAttrName(
                  registeredName<mlir::LLVM::LLVMDialect, mlir::LLVM::BrOp>(
                      context))
                  .getValue());
}

void nvtmaAddNVTMAToPTXPipeline(MlirOpPassManager pm, MlirStringRef chip,
                                MlirStringRef features, MlirStringRef format,
                                int optLevel, intptr_t numLink,
                                const MlirStringRef *link) {
  mlir::nvtma::PipelineOptions options;
  options.chip = std::string(chip.data, chip.length);
  options.features = std::string(features.data, features.length);
  options.format = std::string(format.data, format.length);
  options.optLevel = optLevel;
  for (intptr_t i = 0; i < numLink; ++i)
    options.link.emplace_back(link[i].data, link[i].length);
  mlir::nvtma::buildNVTMAToPTXPipeline(*unwrap(pm), options);
}

namespace {

/// The enum value spelled `spelling`, or an error diagnostic naming the field
/// and every spelling it takes.
template <typename EnumT>
std::optional<EnumT> symbolize(MLIRContext *ctx, StringRef field,
                               MlirStringRef spelling,
                               std::optional<EnumT> (*symbolizeFn)(StringRef),
                               StringRef (*stringifyFn)(EnumT), unsigned max) {
  StringRef s(spelling.data, spelling.length);
  if (std::optional<EnumT> v = symbolizeFn(s))
    return v;
  InFlightDiagnostic diag = emitError(UnknownLoc::get(ctx));
  diag << field << " '" << s << "' is not one of ";
  for (unsigned i = 0; i <= max; ++i)
    diag << (i ? ", " : "") << stringifyFn(static_cast<EnumT>(i));
  return std::nullopt;
}

ArrayRef<int64_t> ints(intptr_t n, const int64_t *v) {
  return n > 0 ? ArrayRef<int64_t>(v, n) : ArrayRef<int64_t>();
}

} // namespace

MlirType nvtmaTmaAtomTypeGet(
    MlirContext context, MlirStringRef kind, MlirType elementType,
    MlirStringRef tmaFormat, intptr_t numBox, const int64_t *box,
    intptr_t numTile, const int64_t *tile, MlirStringRef swizzle,
    MlirStringRef l2Promotion, MlirStringRef interleave, MlirStringRef oobFill,
    intptr_t numElementStrides, const int64_t *elementStrides,
    unsigned multicast, unsigned ctaGroup, MlirStringRef reduction,
    intptr_t numLowerCorner, const int64_t *lowerCorner,
    intptr_t numUpperCorner, const int64_t *upperCorner) {
  using namespace mlir::nvtma;
  MLIRContext *ctx = unwrap(context);
  ctx->getOrLoadDialect<NVTMADialect>();
  auto k = symbolize<CopyKind>(ctx, "kind", kind, symbolizeCopyKind,
                               stringifyCopyKind, getMaxEnumValForCopyKind());
  std::optional<TmaFormat> format;
  if (tmaFormat.length) {
    format = symbolize<TmaFormat>(ctx, "tma_format", tmaFormat,
                                  symbolizeTmaFormat, stringifyTmaFormat,
                                  getMaxEnumValForTmaFormat());
    if (!format)
      return MlirType{nullptr};
  }
  auto sw = symbolize<Swizzle>(ctx, "swizzle", swizzle, symbolizeSwizzle,
                               stringifySwizzle, getMaxEnumValForSwizzle());
  auto l2 = symbolize<L2Promotion>(ctx, "l2_promotion", l2Promotion,
                                   symbolizeL2Promotion, stringifyL2Promotion,
                                   getMaxEnumValForL2Promotion());
  auto il = symbolize<Interleave>(ctx, "interleave", interleave,
                                  symbolizeInterleave, stringifyInterleave,
                                  getMaxEnumValForInterleave());
  auto oob = symbolize<OOBFill>(ctx, "oob_fill", oobFill, symbolizeOOBFill,
                                stringifyOOBFill, getMaxEnumValForOOBFill());
  auto red = symbolize<ReductionKind>(ctx, "reduction", reduction,
                                      symbolizeReductionKind,
                                      stringifyReductionKind,
                                      getMaxEnumValForReductionKind());
  if (!k || !sw || !l2 || !il || !oob || !red)
    return MlirType{nullptr};
  auto emit = [ctx] { return emitError(UnknownLoc::get(ctx)); };
  return wrap(TmaAtomType::getChecked(
      emit, ctx, *k, unwrap(elementType), format, ints(numBox, box),
      ints(numTile, tile), *sw, *l2, *il, *oob,
      ints(numElementStrides, elementStrides), multicast, ctaGroup, *red,
      ints(numLowerCorner, lowerCorner), ints(numUpperCorner, upperCorner)));
}

bool nvtmaTypeIsATmaAtom(MlirType type) {
  return isa<mlir::nvtma::TmaAtomType>(unwrap(type));
}

int64_t nvtmaTmaAtomTypeGetBoxBytes(MlirType type) {
  return cast<mlir::nvtma::TmaAtomType>(unwrap(type)).getBoxBytes();
}

int64_t nvtmaTmaAtomTypeGetTileBytes(MlirType type) {
  return cast<mlir::nvtma::TmaAtomType>(unwrap(type)).getTileBytes();
}
