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
// or hanging the tool. A bytecode input is first read in a forked child,
// because MLIR's bytecode reader can abort or loop on corrupted bytecode.
//
//===----------------------------------------------------------------------===//

#include "nvtma/InitAll.h"
#include "nvtma/Support/InputScreen.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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

static llvm::cl::opt<unsigned> bytecodeReadSeconds(
    "nvtma-bytecode-read-limit",
    llvm::cl::desc("Seconds a bytecode input may take to read, plus one a "
                   "MiB, before nvtma-opt calls it corrupted (0: no limit)"),
    llvm::cl::init(60));

/// Reads the bytecode in `file` in a forked child first. MLIR's bytecode
/// reader does not check every field before it builds from it: in MLIR 22
/// single flipped bytes make it fail an assertion (a memref shape it has
/// itself called "invalid memref size" still reaches MemRefType::get), ask
/// SmallVector for 2^57 elements, or loop forever. If the child dies, or has
/// not finished by the time limit, the input is reported as corrupted, with
/// the reader's own diagnostics, and false is returned. When the child lives,
/// parsed or not, the caller reads the input for real and reports as usual.
static bool bytecodeReadsSafely(const llvm::MemoryBuffer &file,
                                const DialectRegistry &registry,
                                const MlirOptMainConfig &config) {
  // Without a pipe or a child (no descriptors or processes left), the input
  // is read as MLIR would read it.
  int fds[2];
  if (pipe(fds) != 0)
    return true;
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return true;
  }
  if (pid == 0) {
    // A reader that loops must not outlive nvtma-opt when that is killed.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(0);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    MLIRContext context(registry, MLIRContext::Threading::DISABLED);
    context.allowUnregisteredDialects(
        config.shouldAllowUnregisteredDialects());
    auto sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(file.getMemBufferRef(),
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    SourceMgrDiagnosticHandler handler(*sourceMgr, &context);
    ParserConfig parserConfig(&context, config.shouldVerifyOnParsing());
    (void)parseSourceFile<ModuleOp>(sourceMgr, parserConfig);
    _exit(0);
  }
  close(fds[1]);
  // The child's stderr is read until it closes (the child ended) or the time
  // limit passes.
  using Clock = std::chrono::steady_clock;
  unsigned limit = bytecodeReadSeconds;
  if (limit)
    limit += file.getBufferSize() >> 20;
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(limit);
  std::string childErrors;
  bool timedOut = false;
  for (;;) {
    int waitMs = -1;
    if (limit) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - Clock::now());
      waitMs = std::max<int64_t>(0, left.count());
    }
    struct pollfd pfd = {fds[0], POLLIN, 0};
    int ready = poll(&pfd, 1, waitMs);
    if (ready == 0) {
      timedOut = true;
      kill(pid, SIGKILL);
      break;
    }
    char chunk[4096];
    ssize_t n = ready < 0 ? -1 : read(fds[0], chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    childErrors.append(chunk, n);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!timedOut && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return true;
  // Pass on the reader's diagnostics (they name the bad field), not the
  // assertion text or fatal error that followed them.
  llvm::StringRef rest = childErrors;
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    if (line.contains(": error: ") || line.contains(": note: ") ||
        line.contains(": warning: "))
      llvm::errs() << line << "\n";
  }
  llvm::errs() << file.getBufferIdentifier()
               << ": error: corrupted MLIR bytecode: MLIR's bytecode reader ";
  if (timedOut)
    llvm::errs() << "had not finished after " << limit
                 << " s (--nvtma-bytecode-read-limit)";
  else if (WIFSIGNALED(status))
    llvm::errs() << "died of signal " << WTERMSIG(status) << " ("
                 << strsignal(WTERMSIG(status)) << ")";
  else
    llvm::errs() << "exited with status " << WEXITSTATUS(status);
  llvm::errs() << " while reading it\n";
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
  // The text screen guards MLIR's text parser; bytecode has a reader of its
  // own (and its bytes would read as nesting or literals that are not there).
  bool refused = false;
  if (isBytecode(file->getMemBufferRef())) {
    if (!bytecodeReadsSafely(*file, registry, config))
      return 1;
  } else {
    std::string screened;
    std::tie(screened, refused) =
        screenInput(file->getBuffer(), file->getBufferIdentifier(),
                    config.inputSplitMarker());
    if (refused && config.inputSplitMarker().empty())
      return 1;
    file = llvm::MemoryBuffer::getMemBufferCopy(screened,
                                                file->getBufferIdentifier());
  }
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
