//===- nvtma-opt.cpp - nvtma optimizer driver -----------------------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mlir-opt with nvtma. The input is screened first (nvtma/Support/
// InputScreen.h) for constructs on which MLIR's own parser asserts, overflows
// its stack or takes minutes, so that they are reported instead of crashing
// or hanging the tool.
//
//===----------------------------------------------------------------------===//

#include "nvtma/InitAll.h"
#include "nvtma/Support/InputScreen.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Runs nvtma's input screen (nesting depth, literal length, dense index
/// arrays) and reports what it refuses like a parser diagnostic. Returns true
/// when the input is safe to parse.
static bool screenInput(llvm::StringRef text, llvm::StringRef name) {
  ::nvtma::ScreenFailure failure;
  if (::nvtma::screenInput(std::string_view(text.data(), text.size()), failure))
    return true;
  llvm::errs() << name << ":" << failure.line << ":" << failure.column
               << ": error: " << failure.message << "\n";
  return false;
}

int main(int argc, char **argv) {
  DialectRegistry registry;
  mlir::nvtma::registerAllDialects(registry);
  mlir::nvtma::registerAllPasses();
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "nvtma optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (!screenInput(file->getBuffer(), file->getBufferIdentifier()))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}
