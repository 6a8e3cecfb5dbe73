// Inputs the fuzzer found tripping UBSan in nvtma itself (a
// -DNVTMA_ENABLE_SANITIZERS=ON build); each must be a clean diagnostic.
// RUN: nvtma-opt %s -split-input-file -verify-diagnostics

// The cluster size was a product of the dims in int64: signed overflow.
func.func @f() -> i16 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{cluster_shape [9223372036854775807, 2] holds more than 16 CTAs}}
  %m = nvtma.create_tma_multicast_mask [%c1, %c0] {cluster_shape = array<i64: 9223372036854775807, 2>, mode = 0 : i64} : i16
  return %m : i16
}

// -----

func.func @f() -> i16 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{holds more than 16 CTAs}}
  %m = nvtma.create_tma_multicast_mask [%c0, %c0, %c0] {cluster_shape = array<i64: 4294967296, 4294967296, 4294967296>, mode = 0 : i64} : i16
  return %m : i16
}
