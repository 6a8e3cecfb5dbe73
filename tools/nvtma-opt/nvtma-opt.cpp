//===- nvtma-opt.cpp - nvtma optimizer driver -----------------------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mlir-opt with nvtma. The input is screened for constructs on which MLIR's
// own parser asserts (found by test/fuzz), so that they are reported instead
// of crashing the tool.
//
//===----------------------------------------------------------------------===//

#include "nvtma/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Reports the first dense array of `index` (MLIR's DenseArrayAttr parser
/// asserts on it). Returns true when the input is safe to parse.
static bool screenInput(llvm::StringRef text, llvm::StringRef name) {
  // `index` as a whole word, even at the end of a truncated input.
  llvm::Regex denseIndex("array[[:space:]]*<[[:space:]]*index([^_[:alnum:]]|$)");
  llvm::SmallVector<llvm::StringRef, 1> match;
  if (!denseIndex.match(text, &match))
    return true;
  size_t at = match[0].data() - text.data();
  llvm::StringRef before = text.take_front(at);
  size_t line = before.count('\n') + 1;
  size_t col = at - (before.rfind('\n') == llvm::StringRef::npos
                         ? 0
                         : before.rfind('\n') + 1) + 1;
  llvm::errs() << name << ":" << line << ":" << col
               << ": error: dense arrays of 'index' are not supported (use "
                  "array<i64: ...>)\n";
  return false;
}

int main(int argc, char **argv) {
  DialectRegistry registry;
  nvtma::registerAllDialects(registry);
  nvtma::registerAllPasses();
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "nvtma optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (!screenInput(file->getBuffer(), inputFilename))
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
