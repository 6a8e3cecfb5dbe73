//===- Pipeline.cpp - nvtma to PTX / cubin pipeline -----------------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "nvtma/Conversion/NVTMAToNVVM.h"
#include "nvtma/Dialect/NVTMA/NVTMADialect.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace {

/// Gives every gpu.module without an NVVM target one: unlike
/// nvvm-attach-target it leaves modules that already have one alone, so a
/// target written in the IR wins over the pipeline's default.
struct AttachMissingTarget
    : PassWrapper<AttachMissingTarget, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AttachMissingTarget)
  AttachMissingTarget(mlir::nvtma::PipelineOptions o) : options(std::move(o)) {}
  StringRef getArgument() const final { return "nvtma-attach-missing-target"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<NVVM::NVVMDialect>();
  }
  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUModuleOp module) {
      if (module.getTargets())
        for (Attribute a : *module.getTargets())
          if (isa<NVVM::NVVMTargetAttr>(a))
            return;
      auto target = NVVM::NVVMTargetAttr::get(
          &getContext(), options.optLevel, "nvptx64-nvidia-cuda",
          options.chip, options.features);
      SmallVector<Attribute> targets;
      if (module.getTargets())
        targets.append(module.getTargets()->begin(), module.getTargets()->end());
      targets.push_back(target);
      module.setTargetsAttr(ArrayAttr::get(&getContext(), targets));
    });
  }
  mlir::nvtma::PipelineOptions options;
};

/// Restores the descriptor parameters' ABI on lowered kernels:
/// convert-gpu-to-nvvm keeps only some argument attributes, so the trailing
/// parameters that the module's `nvtma.kernels` record lists as descriptors
/// get `llvm.byval = !llvm.array<128 x i8>`, `llvm.align = 64` and
/// `nvvm.grid_constant` here. grid_constant makes PTX use them in place
/// (`cvta.param`) instead of copying them to local memory, where TMA cannot
/// read them.
struct FinalizeDescriptorParams
    : PassWrapper<FinalizeDescriptorParams, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FinalizeDescriptorParams)
  StringRef getArgument() const final {
    return "nvtma-finalize-descriptor-params";
  }
  StringRef getDescription() const final {
    return "give the nvtma descriptor parameters of llvm.func kernels the "
           "byval / align 64 / grid_constant ABI";
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // gpu.dynamic_shared_memory becomes an internal, 16-byte aligned
    // zero-size global, which NVPTX demotes to a one-byte static variable
    // that the next static variable (an mbarrier) follows, inside the
    // "dynamic" region. External linkage makes it `.extern .shared ... []`,
    // the real dynamic window; 1024-byte alignment because TMA swizzles
    // are address based (the 128B swizzle repeats every 1024 bytes).
    module.walk([](LLVM::GlobalOp g) {
      if (g.getAddrSpace() != 3 || !g.getSymName().starts_with("__dynamic_shmem__"))
        return;
      g.setLinkage(LLVM::Linkage::External);
      if (g.getAlignment().value_or(0) < 1024)
        g.setAlignment(1024);
    });
    auto records = module->getAttrOfType<StringAttr>(
        mlir::nvtma::NVTMADialect::getKernelRecordsAttrName());
    if (!records)
      return;
    auto parsed = llvm::json::parse(records.getValue());
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      module.emitError() << "nvtma.kernels is not valid JSON";
      return signalPassFailure();
    }
    const llvm::json::Object *kernels =
        parsed->getAsObject() ? parsed->getAsObject()->getObject("kernels")
                              : nullptr;
    if (!kernels)
      return;
    Builder b(&getContext());
    WalkResult result = module.walk([&](LLVM::LLVMFuncOp func) {
      const llvm::json::Object *kernel = kernels->getObject(func.getName());
      if (!kernel || !func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
        return WalkResult::advance();
      unsigned numDescs = 0;
      if (const llvm::json::Array *params = kernel->getArray("params"))
        for (const llvm::json::Value &p : *params)
          if (const llvm::json::Object *o = p.getAsObject())
            if (o->getString("kind") == "descriptor")
              ++numDescs;
      unsigned n = func.getNumArguments();
      if (numDescs > n) {
        func.emitError() << "has " << n << " parameters, its nvtma record "
                         << "lists " << numDescs << " descriptors";
        return WalkResult::interrupt();
      }
      for (unsigned i = n - numDescs; i < n; ++i) {
        if (!isa<LLVM::LLVMPointerType>(func.getArgumentTypes()[i])) {
          func.emitError() << "parameter " << i << " should be a descriptor "
                           << "pointer, it is " << func.getArgumentTypes()[i];
          return WalkResult::interrupt();
        }
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), 128)));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(64));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                        b.getUnitAttr());
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

struct PipelineCLOptions : PassPipelineOptions<PipelineCLOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("NVVM target chip for gpu.modules "
                                          "without a target"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("NVVM target features"),
                               llvm::cl::init("+ptx86")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: isa (PTX), bin (cubin "
                     "through ptxas), fatbin, llvm, offloading"),
      llvm::cl::init("isa")};
  Option<unsigned> optLevel{*this, "O", llvm::cl::desc("NVVM opt level"),
                            llvm::cl::init(3)};
};

void buildPipeline(OpPassManager &pm, const mlir::nvtma::PipelineOptions &o) {
  pm.addPass(std::make_unique<AttachMissingTarget>(o));
  // Subviews (stage slices of shared buffers) become reinterpret casts with
  // computed offsets, which the LLVM lowering understands.
  OpPassManager &pre = pm.nest<gpu::GPUModuleOp>();
  pre.addPass(memref::createExpandStridedMetadataPass());
  pre.addPass(createLowerAffinePass());
  pm.addPass(mlir::nvtma::createConvertNVTMAToNVVM());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVGPUToNVVMPass());
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  gpu.addPass(createConvertGpuOpsToNVVMOps());
  gpu.addPass(createCanonicalizerPass());
  gpu.addPass(createCSEPass());
  pm.addPass(std::make_unique<FinalizeDescriptorParams>());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = o.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

} // namespace

void mlir::nvtma::registerNVTMAPipelines() {
  PassRegistration<FinalizeDescriptorParams>();
  PassPipelineRegistration<PipelineCLOptions>(
      "nvtma-to-ptx",
      "Lower nvtma kernels to a gpu.binary: convert-nvtma-to-nvvm, gpu / "
      "scf / nvgpu / nvvm to LLVM, gpu-module-to-binary (PTX by default)",
      [](OpPassManager &pm, const PipelineCLOptions &cl) {
        PipelineOptions o;
        o.chip = cl.chip;
        o.features = cl.features;
        o.format = cl.format;
        o.optLevel = cl.optLevel;
        buildPipeline(pm, o);
      });
}
