// RUN: nvtma-opt %s -canonicalize | FileCheck %s

// A multicast mask with constant CTA coordinates folds to a constant.
// CHECK-LABEL: func.func @fold_mask
func.func @fold_mask() -> (i16, i16, i16) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // Cluster 2x2 (x, y): CTA (1, 0) multicasting along x reaches ranks 0, 1.
  // CHECK-DAG: arith.constant 3 : i16
  %m0 = nvtma.create_tma_multicast_mask [%c1, %c0] {cluster_shape = array<i64: 2, 2>, mode = 0 : i64} : i16
  // Along y from (1, 0): ranks 1 and 3.
  // CHECK-DAG: arith.constant 10 : i16
  %m1 = nvtma.create_tma_multicast_mask [%c1, %c0] {cluster_shape = array<i64: 2, 2>, mode = 1 : i64} : i16
  // Cluster 4 along x: all four.
  // CHECK-DAG: arith.constant 15 : i16
  %m2 = nvtma.create_tma_multicast_mask [%c1] {cluster_shape = array<i64: 4>, mode = 0 : i64} : i16
  // CHECK-NOT: nvtma.create_tma_multicast_mask
  return %m0, %m1, %m2 : i16, i16, i16
}

// CHECK-LABEL: func.func @no_fold
func.func @no_fold(%x: index) -> i16 {
  %c0 = arith.constant 0 : index
  // CHECK: nvtma.create_tma_multicast_mask
  %m = nvtma.create_tma_multicast_mask [%x, %c0] {cluster_shape = array<i64: 2, 2>, mode = 0 : i64} : i16
  return %m : i16
}

// The copies declare what they write (smem, global memory, the mbarrier):
// without results they would otherwise be trivially dead and erased; the
// pure ops around them fold away.
// CHECK-LABEL: func.func @copies_are_not_dead
// CHECK-NOT: nvtma.tma_partition
// CHECK: nvtma.copy %{{.*}}, barrier
// CHECK: nvtma.copy
// CHECK: nvtma.bulk_copy s2g
// CHECK: nvtma.cp_async
// CHECK: nvtma.dsmem_store
func.func @copies_are_not_dead(%ld: !nvtma.tma_atom<load, f16, box = [64, 64]>, %st: !nvtma.tma_atom<store, f16, box = [64, 64]>,
    %s: memref<64x64xf16, #gpu.address_space<workgroup>>, %bars: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>,
    %g: !llvm.ptr<1>, %sp: !llvm.ptr<3>, %c: !llvm.ptr<7>, %n: i32, %v: i32) {
  %c0 = arith.constant 0 : index
  %unused:2 = nvtma.tma_partition %ld[%c0, %c0] : !nvtma.tma_atom<load, f16, box = [64, 64]> -> index, index
  nvtma.copy %ld[%c0, %c0], %s, barrier %bars[%c0] : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
  nvtma.copy %st[%c0, %c0], %s : !nvtma.tma_atom<store, f16, box = [64, 64]>, memref<64x64xf16, #gpu.address_space<workgroup>>
  nvtma.bulk_copy s2g %g, %sp, %n : !llvm.ptr<1>, !llvm.ptr<3>
  nvtma.cp_async %sp, %g {size = 16 : i32} : !llvm.ptr<3>, !llvm.ptr<1>
  nvtma.dsmem_store %v, %c, %c : i32, !llvm.ptr<7>, !llvm.ptr<7>
  return
}
