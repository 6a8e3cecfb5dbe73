//===- NVTMAToPTX.cpp - the nvtma-to-ptx pipeline -------------------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "nvtma/Pipelines/Pipelines.h"
#include "nvtma/Conversion/NVTMAToNVVM.h"
#include "nvtma/Dialect/NVTMA/Transforms/Passes.h"
#include "nvtma/Target/TargetInfo.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::nvtma;

namespace {

struct PipelineCLOptions : PassPipelineOptions<PipelineCLOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("NVVM target chip for gpu.modules "
                                          "without a target"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("NVVM target features: one +ptxNN (empty: +ptx86, or "
                     "the chip's oldest PTX ISA where that is newer)"),
      llvm::cl::init("")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: isa (PTX), bin (cubin "
                     "through ptxas), fatbin, llvm, offloading"),
      llvm::cl::init("isa")};
  Option<int> optLevel{*this, "O", llvm::cl::desc("NVVM opt level (0..3)"),
                       llvm::cl::init(3)};
  ListOption<std::string> link{
      *this, "link",
      llvm::cl::desc("LLVM bitcode linked into gpu.modules marked nvtma.link "
                     "(their device libraries, e.g. NVSHMEM's)")};
};

constexpr const char *kFormats[] = {"isa", "bin", "fatbin", "llvm",
                                    "offloading"};

} // namespace

bool mlir::nvtma::verifyPipelineOptions(const PipelineOptions &o,
                                        std::string &error) {
  ::nvtma::target::Resolved r;
  if (!::nvtma::target::resolve(o.chip, o.features, o.optLevel, r, error))
    return false;
  if (!llvm::is_contained(kFormats, StringRef(o.format))) {
    error = "format '" + o.format +
            "' is not one gpu-module-to-binary writes; supported: isa, bin, "
            "fatbin, llvm, offloading";
    return false;
  }
  return true;
}

void mlir::nvtma::buildNVTMAToPTXPipeline(OpPassManager &pm,
                                          const PipelineOptions &o) {
  NVTMAAttachMissingTargetOptions target;
  target.chip = o.chip;
  target.features = o.features;
  target.optLevel = o.optLevel;
  target.link.assign(o.link.begin(), o.link.end());
  pm.addPass(createNVTMAAttachMissingTarget(target));
  pm.addPass(createNVTMACheckTarget());
  // Subviews (stage slices of shared buffers) become reinterpret casts with
  // computed offsets, which the LLVM lowering understands.
  OpPassManager &pre = pm.nest<gpu::GPUModuleOp>();
  pre.addPass(memref::createExpandStridedMetadataPass());
  pre.addPass(createLowerAffinePass());
  pm.addPass(createNVTMAMaterializeDescriptors());
  pm.addPass(createNVTMAWriteKernelRecords());
  pm.addPass(createConvertNVTMAToNVVM());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVGPUToNVVMPass());
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  gpu.addPass(createConvertGpuOpsToNVVMOps());
  gpu.addPass(createCanonicalizerPass());
  gpu.addPass(createCSEPass());
  pm.addPass(createNVTMAFinalizeDescriptorParams());
  pm.addPass(createNVTMARequireBlockSize());
  pm.addPass(createNVTMAExternDynamicSharedMemory());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = o.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::nvtma::registerNVTMAPipelines() {
  // registerPassPipeline rather than PassPipelineRegistration: the builder
  // must be able to refuse a target LLVM cannot serve.
  registerPassPipeline(
      "nvtma-to-ptx",
      "Lower nvtma kernels to a gpu.binary: nvtma-attach-missing-target, "
      "nvtma-check-target, nvtma-materialize-descriptors, "
      "nvtma-write-kernel-records, convert-nvtma-to-nvvm, gpu / scf / nvgpu "
      "/ nvvm to LLVM, nvtma-finalize-descriptor-params, "
      "nvtma-require-block-size, nvtma-extern-dynamic-shared-memory, "
      "gpu-module-to-binary (PTX by default)",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        PipelineCLOptions cl;
        if (failed(cl.parseFromString(text)))
          return failure();
        PipelineOptions o;
        o.chip = cl.chip;
        o.features = cl.features;
        o.format = cl.format;
        o.optLevel = cl.optLevel;
        o.link.assign(cl.link.begin(), cl.link.end());
        std::string error;
        if (!verifyPipelineOptions(o, error))
          return errorHandler("nvtma-to-ptx: " + error);
        buildNVTMAToPTXPipeline(pm, o);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(PipelineCLOptions());
      });
}
