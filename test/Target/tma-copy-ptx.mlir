// RUN: nvtma-opt %s --nvtma-to-ptx | FileCheck %s
// RUN: nvtma-opt %s --nvtma-to-ptx="chip=sm_90a features=+ptx80 format=isa" | FileCheck %s

// The whole pipeline: descriptors are 128-byte, 64-byte-aligned
// __grid_constant__ parameters used in place, loads complete on the
// mbarrier, stores join the bulk group.
// CHECK: gpu.binary @k
// CHECK-SAME: .target sm_90a
// CHECK-SAME: .param .align 64 .b8 tma_copy_param_{{[0-9]+}}[128]
// CHECK-SAME: .param .align 64 .b8 tma_copy_param_{{[0-9]+}}[128]
// CHECK-SAME: cvta.param.u64
// CHECK-SAME: elect.sync
// CHECK-SAME: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-SAME: mbarrier.try_wait.parity
// CHECK-SAME: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// CHECK-SAME: cp.async.bulk.commit_group
// CHECK-SAME: cp.async.bulk.wait_group{{[^;]*}}0;
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
!ld = !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b, l2_promotion = l2_256b>
!st = !nvtma.tma_atom<store, f16, box = [64, 64], swizzle = swizzle_128b>
!smem = memref<64x64xf16, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @tma_copy(%in: memref<4096x4096xf16>, %out: memref<4096x4096xf16>)
        workgroup(%smem : !smem {llvm.align = 1024 : i64}) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %a = nvtma.make_tiled_tma_atom %in {cta_tiler = array<i64: 64, 64>} : memref<4096x4096xf16> -> !ld
      %b = nvtma.make_tiled_tma_atom %out {cta_tiler = array<i64: 64, 64>} : memref<4096x4096xf16> -> !st
      %bar = nvgpu.mbarrier.create -> !bars
      %tid = gpu.thread_id x
      %is0 = arith.cmpi eq, %tid, %c0 : index
      scf.if %is0 {
        nvgpu.mbarrier.init %bar[%c0], %c1 : !bars
        %bytes = arith.constant 8192 : index
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes : !bars
      }
      gpu.barrier
      %co:2 = nvtma.tma_partition %a[%by, %bx] : !ld -> index, index
      nvtma.copy %a[%co#0, %co#1], %smem, barrier %bar[%c0] : !ld, !smem, !bars
      %phase = arith.constant false
      %ticks = arith.constant 10000000 : index
      nvgpu.mbarrier.try_wait.parity %bar[%c0], %phase, %ticks : !bars
      nvtma.copy %b[%co#0, %co#1], %smem : !st, !smem
      nvtma.bulk_commit_group
      nvtma.bulk_wait_group 0
      gpu.return
    }
  }
}
