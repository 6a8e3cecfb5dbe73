// With -split-input-file each chunk is screened on its own: a refused chunk
// is a diagnostic (at its line in this file) and the others still run.
// RUN: not nvtma-opt %s -split-input-file 2>&1 | FileCheck %s
// CHECK: nvtma-opt-screen-split.mlir:15:23: error: a numeric literal of 300 digits is over the limit of 128
// CHECK: func.func @before
// CHECK: func.func @after

func.func @before() {
  return
}

// -----

func.func @huge() -> i64 {
  %c = arith.constant 999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999 : i64
  return %c : i64
}

// -----

func.func @after() {
  return
}
