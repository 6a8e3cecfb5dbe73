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
/// arrays) over `text` and reports what it refuses like a parser diagnostic,
/// at `firstLine` + its line. Returns true when the text is safe to parse.
static bool screenChunk(llvm::StringRef text, llvm::StringRef name,
                        size_t firstLine) {
  ::nvtma::ScreenFailure failure;
  if (::nvtma::screenInput(std::string_view(text.data(), text.size()), failure))
    return true;
  llvm::errs() << name << ":" << firstLine + failure.line - 1 << ":"
               << failure.column << ": error: " << failure.message << "\n";
  return false;
}

/// Screens the input. With -split-input-file each chunk is screened on its
/// own and a refused chunk is blanked (newlines kept, so later diagnostics
/// keep their line numbers): the other chunks still run, as they do when a
/// chunk fails to parse. Returns the text to hand to MLIR and whether
/// anything was refused.
static std::pair<std::string, bool> screenInput(llvm::StringRef text,
                                                llvm::StringRef name,
                                                llvm::StringRef marker) {
  if (marker.empty())
    return {text.str(), !screenChunk(text, name, 1)};
  std::string out;
  out.reserve(text.size());
  bool refused = false;
  size_t line = 1;
  llvm::StringRef rest = text;
  while (!rest.empty()) {
    // A chunk ends after the next line that starts with the marker.
    size_t end = 0;
    for (;;) {
      size_t nl = rest.find('\n', end);
      llvm::StringRef lineText = rest.slice(end, nl);
      end = nl == llvm::StringRef::npos ? rest.size() : nl + 1;
      if (lineText.ltrim().starts_with(marker) || end == rest.size())
        break;
    }
    llvm::StringRef chunk = rest.take_front(end);
    if (screenChunk(chunk, name, line)) {
      out += chunk;
    } else {
      refused = true;
      out.append(chunk.count('\n'), '\n');
      // Keep the marker so that the chunks stay where MLIR splits them.
      llvm::StringRef last = chunk.rtrim('\n');
      last = last.substr(last.rfind('\n') + 1);
      if (last.ltrim().starts_with(marker)) {
        out.pop_back();
        out += last;
        out += '\n';
      }
    }
    line += chunk.count('\n');
    rest = rest.drop_front(end);
  }
  return {out, refused};
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
  auto [screened, refused] = screenInput(
      file->getBuffer(), file->getBufferIdentifier(), config.inputSplitMarker());
  if (refused && config.inputSplitMarker().empty())
    return 1;
  file = llvm::MemoryBuffer::getMemBufferCopy(screened,
                                              file->getBufferIdentifier());
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(file), registry, config)) ||
      refused)
    return 1;
  output->keep();
  return 0;
}
