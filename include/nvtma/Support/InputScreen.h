//===- InputScreen.h - refuse IR text MLIR's parser cannot survive -*- C++ -*-//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MLIR's parser recurses once per nesting level (thousands of `[` or nested
// regions overflow the stack), parses integer literals in time quadratic in
// their length (20,000 digits: 12 s) and asserts on dense arrays of `index`
// (an assertion aborts the process in an assertions-enabled LLVM). nvtma-opt
// and nvtma.compile's lower_to_ptx run this linear scan over the text first
// and report the first such construct as a diagnostic instead.
//
// Plain C++: no MLIR, no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_SUPPORT_INPUTSCREEN_H
#define NVTMA_SUPPORT_INPUTSCREEN_H

#include <cstddef>
#include <string>
#include <string_view>

namespace nvtma {

/// How deep `(`, `[`, `{` and `<` may nest: far above what any kernel
/// needs, far below what overflows an 8 MiB stack (about 8,000 `[`).
constexpr size_t kMaxNestingDepth = 256;
/// The longest decimal or hexadecimal digit run of a literal: an i256 takes
/// 78 decimal digits.
constexpr size_t kMaxLiteralDigits = 128;

/// Where and why the screen refused the text (1-based line and column).
struct ScreenFailure {
  size_t line = 0, column = 0;
  std::string message;
};

/// Scans MLIR text (skipping strings and `//` comments) for nesting deeper
/// than kMaxNestingDepth, numeric literals longer than kMaxLiteralDigits and
/// `array<index`. Returns true when the text is safe to hand to MLIR's
/// parser; otherwise fills `failure` with the first offending construct.
bool screenInput(std::string_view text, ScreenFailure &failure);

} // namespace nvtma

#endif // NVTMA_SUPPORT_INPUTSCREEN_H
