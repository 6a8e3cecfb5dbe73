// nvtma-opt screens its input before MLIR's parser sees it: nesting deep
// enough to overflow the parser's stack (issue 16: 20 KB of `[` or 5,000
// nested scf.if ended it with SIGSEGV) and literals long enough to take
// minutes (20,000 digits: 12 s; 100 KB: over a minute) are diagnostics.
// RUN: %python -c "print('module attributes {a = ' + '['*20000 + ']'*20000 + '} {}')" | not nvtma-opt - 2>&1 | FileCheck %s --check-prefix=BRACKETS
// BRACKETS: <stdin>:1:279: error: nesting depth 257 is over the limit of 256
// RUN: %python -c "print('func.func @f(%%c: i1) {\n' + 'scf.if %%c {\n'*5000 + '}\n'*5000 + 'return\n}')" | not nvtma-opt - 2>&1 | FileCheck %s --check-prefix=REGIONS
// REGIONS: <stdin>:257:11: error: nesting depth 257 is over the limit of 256
// RUN: %python -c "print('func.func @f() -> i64 {\n  %%c = arith.constant ' + '9'*100000 + ' : i64\n  return %%c : i64\n}')" | not nvtma-opt - 2>&1 | FileCheck %s --check-prefix=DIGITS
// DIGITS: <stdin>:2:23: error: a numeric literal of 100000 digits is over the limit of 128
// RUN: %python -c "print('func.func @f() -> i64 {\n  %%c = arith.constant 0x' + 'f'*200 + ' : i64\n  return %%c : i64\n}')" | not nvtma-opt - 2>&1 | FileCheck %s --check-prefix=HEX
// HEX: <stdin>:2:23: error: a numeric literal of 200 digits is over the limit of 128
// RUN: nvtma-opt %s | FileCheck %s --check-prefix=OK

// Within the bounds, and inside strings and comments, anything goes:
// [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[
// 99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999
// OK-LABEL: func.func @within_bounds
// OK-SAME: note = "{{\[+}}99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999
// OK: arith.constant 123456789012345678901234567890123456789 : i128
func.func @within_bounds() -> (i128, i128) attributes {note = "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999"} {
  %a = arith.constant 123456789012345678901234567890123456789 : i128
  %b = arith.constant 0x7fffffffffffffffffffffffffffffff : i128
  return %a, %b : i128, i128
}
