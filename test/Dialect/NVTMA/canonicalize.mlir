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
