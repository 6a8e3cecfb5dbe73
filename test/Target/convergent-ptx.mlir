// RUN: nvtma-opt %s --nvtma-to-ptx | FileCheck %s

// nvtma.convergent (which elect_active's and wgmma_mma_async_rs's lowerings
// put on their inline PTX) reaches the LLVM IR translation: the call becomes
// convergent. The PTX is the inline PTX's own.
// CHECK: gpu.binary @k
// CHECK-SAME: activemask.b32
// CHECK-SAME: // elect_active 0
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @elect(%o: memref<4xi32>) kernel {
      %e = nvtma.elect_active : i1
      %i = arith.extui %e : i1 to i32
      %c0 = arith.constant 0 : index
      memref.store %i, %o[%c0] : memref<4xi32>
      gpu.return
    }
  }
}
