// RUN: nvtma-opt %s --nvtma-to-ptx -verify-diagnostics

// On an op that translates to no call it is an error, not ignored.
module attributes {gpu.container_module} {
  // expected-error @+2 {{Failed creating the llvm::Module}}
  // expected-error @+1 {{An error happened while serializing the module}}
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @add(%o: memref<4xi32>, %x: i32) kernel {
      // expected-error @+1 {{'llvm.add' op nvtma.convergent on an op that translates to no call}}
      %y = llvm.add %x, %x {nvtma.convergent} : i32
      %c0 = arith.constant 0 : index
      memref.store %y, %o[%c0] : memref<4xi32>
      gpu.return
    }
  }
}
