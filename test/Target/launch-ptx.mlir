// RUN: nvtma-opt %s --nvtma-to-ptx | FileCheck %s

// The launch configuration reaches the records and the PTX (contracts.md
// item 1): known_block_size as .reqntid (not .maxntid: ptxas refuses both),
// known_cluster_size as .reqnctapercluster; a TMA load into
// gpu.dynamic_shared_memory addresses PTX's extern shared array, 1024-byte
// aligned, not a static variable that overlaps the mbarrier.
// CHECK: nvtma.kernels = "{{.*}}\22launch\22:{\22block\22:[128,1,1],\22cluster\22:[2,1,1],\22smem\22:9216}
// CHECK: gpu.binary @k
// CHECK-NOT: has been demoted
// CHECK-SAME: .extern .shared .align 1024 .b8 __dynamic_shmem__0[];
// CHECK-SAME: .param .align 64 .b8 dyn_copy_param_{{[0-9]+}}[128]
// CHECK-NOT: .maxntid
// CHECK-SAME: .reqntid 128, 1, 1
// CHECK-SAME: .explicitcluster
// CHECK-SAME: .reqnctapercluster 2, 1, 1
// CHECK-SAME: .shared .align 8 .b8 __mbarrier[8];
// CHECK-SAME: mov.b64 {{[^;]*}}__dynamic_shmem__0;
// CHECK-SAME: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
!ld = !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b>
!smem = memref<64x64xf16, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @dyn_copy(%in: memref<4096x4096xf16>) kernel attributes {
        known_block_size = array<i32: 128, 1, 1>, known_cluster_size = array<i32: 2, 1, 1>,
        nvtma.dynamic_smem = 9216 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c1024 = arith.constant 1024 : index
      %dyn = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %tile = memref.view %dyn[%c1024][] : memref<?xi8, #gpu.address_space<workgroup>> to !smem
      %a = nvtma.make_tiled_tma_atom %in {cta_tiler = array<i64: 64, 64>} : memref<4096x4096xf16> -> !ld
      %bar = nvgpu.mbarrier.create -> !bars
      nvgpu.mbarrier.init %bar[%c0], %c1 : !bars
      nvtma.copy %a[%c0, %c0], %tile, barrier %bar[%c0] : !ld, !smem, !bars
      gpu.return
    }
  }
}
