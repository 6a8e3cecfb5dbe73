// RUN: nvtma-opt %s --nvtma-to-ptx | FileCheck %s

// gather4 is an sm_100 feature: four rows (coordinates 1, 5, 9, 2) of one
// 64-column box, through the full pipeline to sm_100a PTX.
// CHECK-LABEL: gpu.binary @m
// CHECK: .target sm_100a
// CHECK: .param .align 64 .b8 gather_param_{{[0-9]+}}[128]
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes
module attributes {gpu.container_module} {
gpu.module @m [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
  gpu.func @gather(%A: memref<256x128xbf16>) workgroup(%s: memref<4x64xbf16, #gpu.address_space<workgroup>> {llvm.align = 128 : i64}) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c5 = arith.constant 5 : index
    %c9 = arith.constant 9 : index
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 4, 64>} : memref<256x128xbf16> -> !nvtma.tma_atom<gather4_load, bf16, box = [4, 64]>
    %b = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    nvtma.copy %a[%c0, %c1, %c5, %c9, %c2], %s, barrier %b[%c0] : !nvtma.tma_atom<gather4_load, bf16, box = [4, 64]>, memref<4x64xbf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}
}
