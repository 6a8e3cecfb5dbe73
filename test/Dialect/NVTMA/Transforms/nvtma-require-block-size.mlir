// RUN: nvtma-opt %s -nvtma-require-block-size | FileCheck %s

// convert-gpu-to-nvvm made the known block size an upper bound (.maxntid);
// the kernel is built for exactly that block (.reqntid).
// CHECK-LABEL: llvm.func @known
// CHECK-NOT: nvvm.maxntid
// CHECK-SAME: nvvm.reqntid = array<i32: 128, 1, 1>
llvm.func @known() attributes {gpu.known_block_size = array<i32: 128, 1, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
  llvm.return
}

// A kernel without a known block size keeps what it has.
// CHECK-LABEL: llvm.func @unknown
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK-NOT: nvvm.reqntid
llvm.func @unknown() attributes {nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>} {
  llvm.return
}
