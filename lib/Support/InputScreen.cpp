//===- InputScreen.cpp - refuse IR text MLIR's parser cannot survive ------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The scan follows MLIR's lexer only as far as it must: string literals end
// at an unescaped quote or at a newline (MLIR refuses multi-line strings),
// `//` comments at a newline, and `->` is an arrow, not a closing `>`. A
// bracket closing nothing is ignored, so stray closers never hide depth.
//
//===----------------------------------------------------------------------===//

#include "nvtma/Support/InputScreen.h"

using namespace nvtma;

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}
bool isIdentChar(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         c == '_' || c == '$' || c == '.';
}

/// `array<index` (spaces allowed around `<`) with `index` a whole word,
/// even where the text ends right after it. MLIR's DenseArrayAttr parser
/// asserts on it.
bool isDenseIndexArray(std::string_view text, size_t at) {
  constexpr std::string_view array = "array", index = "index";
  if (text.compare(at, array.size(), array) != 0)
    return false;
  size_t i = at + array.size();
  while (i < text.size() && isSpace(text[i]))
    ++i;
  if (i >= text.size() || text[i] != '<')
    return false;
  ++i;
  while (i < text.size() && isSpace(text[i]))
    ++i;
  if (text.compare(i, index.size(), index) != 0)
    return false;
  i += index.size();
  return i >= text.size() || !(isIdentChar(text[i]) && text[i] != '.');
}

} // namespace

bool nvtma::screenInput(std::string_view text, ScreenFailure &failure) {
  size_t line = 1, lineStart = 0, depth = 0;
  auto fail = [&](size_t at, std::string message) {
    failure.line = line;
    failure.column = at - lineStart + 1;
    failure.message = std::move(message);
    return false;
  };
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
      continue;
    }
    if (c == '"') {
      for (++i; i < n && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\' && i + 1 < n && text[i + 1] != '\n')
          ++i;
      if (i < n && text[i] == '\n')
        --i; // let the loop count the line
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i + 1 < n && text[i + 1] != '\n')
        ++i;
      continue;
    }
    if (isDigit(c)) {
      // 0x... counts its hex digits; anything else its decimal run.
      size_t start = i, digits = 0;
      if (c == '0' && i + 2 < n && (text[i + 1] == 'x' || text[i + 1] == 'X') &&
          isHexDigit(text[i + 2])) {
        for (i += 2; i < n && isHexDigit(text[i]); ++i)
          ++digits;
      } else {
        for (; i < n && isDigit(text[i]); ++i)
          ++digits;
      }
      if (digits > kMaxLiteralDigits)
        return fail(start, "a numeric literal of " + std::to_string(digits) +
                               " digits is over the limit of " +
                               std::to_string(kMaxLiteralDigits));
      --i;
      continue;
    }
    if (c == 'a' && isDenseIndexArray(text, i))
      return fail(i, "dense arrays of 'index' are not supported (use "
                     "array<i64: ...>)");
    switch (c) {
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > kMaxNestingDepth)
        return fail(i, "nesting depth " + std::to_string(depth) +
                           " is over the limit of " +
                           std::to_string(kMaxNestingDepth) +
                           " (brackets, braces, parentheses and angle "
                           "brackets)");
      break;
    case '-':
      if (i + 1 < n && text[i + 1] == '>')
        ++i; // an arrow, not a closing bracket
      break;
    case ')':
    case ']':
    case '}':
    case '>':
      if (depth)
        --depth;
      break;
    default:
      break;
    }
  }
  return true;
}
