//===- Pipelines.h - the nvtma-to-ptx pipeline ------------------*- C++ -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_PIPELINES_PIPELINES_H
#define NVTMA_PIPELINES_PIPELINES_H

#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
namespace nvtma {

/// Options of the `nvtma-to-ptx` pipeline.
struct PipelineOptions {
  std::string chip = "sm_90a";
  /// One +ptxNN; empty: +ptx86, or the chip's oldest PTX ISA if newer.
  std::string features;
  /// gpu-module-to-binary format: isa (PTX), bin, fatbin, llvm, offloading.
  std::string format = "isa";
  int optLevel = 3;
  /// LLVM bitcode linked into gpu.modules marked nvtma.link.
  std::vector<std::string> link;
};

/// Checks `options` against the target table (nvtma/Target/TargetInfo.h) and
/// the binary formats; on failure sets `error` and returns false.
bool verifyPipelineOptions(const PipelineOptions &options, std::string &error);

/// Adds the passes of `nvtma-to-ptx` to `pm` (a builtin.module pass
/// manager). The options must have been verified.
void buildNVTMAToPTXPipeline(OpPassManager &pm,
                             const PipelineOptions &options);

/// Registers `nvtma-to-ptx` with the pass registry; options are verified
/// when the pipeline is parsed.
void registerNVTMAPipelines();

} // namespace nvtma
} // namespace mlir

#endif // NVTMA_PIPELINES_PIPELINES_H
