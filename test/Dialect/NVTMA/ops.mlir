// RUN: nvtma-opt %s | nvtma-opt | FileCheck %s
// RUN: nvtma-opt %s --mlir-print-op-generic | nvtma-opt | FileCheck %s

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
!ld = !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b, l2_promotion = l2_256b>
!st = !nvtma.tma_atom<store, f16, box = [64, 64]>
!smem = memref<64x64xf16, #gpu.address_space<workgroup>>

// Every enum value and every field of the atom type round-trips.
// CHECK-LABEL: func.func @atom_types
func.func @atom_types(
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 64]>
    %a0: !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = l2_128b, swizzle = none>,
    // Every field spelled at its default is the same type as none spelled:
    // the one builder stores the minimal form (issue 15).
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 64]>
    %d0: !nvtma.tma_atom<load, f16, element_strides = [1, 1], tile = [64, 64], tma_format = float16, box = [64, 64], interleave = none, oob_fill = none, multicast = 1, cta_group = 1, reduction = add>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = none>
    %a1: !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = none>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = l2_64b>
    %a2: !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = l2_64b>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = l2_256b>
    %a3: !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = l2_256b>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 16], swizzle = swizzle_32b>
    %s1: !nvtma.tma_atom<load, f16, box = [64, 16], swizzle = swizzle_32b>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 32], swizzle = swizzle_64b>
    %s2: !nvtma.tma_atom<load, f16, box = [64, 32], swizzle = swizzle_64b>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b>
    %s3: !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b_atom_32b>
    %s4: !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b_atom_32b>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b_atom_32b_flip_8b>
    %s5: !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b_atom_32b_flip_8b>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b_atom_64b>
    %s6: !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b_atom_64b>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [4, 8, 16], interleave = interleave_16b>
    %i1: !nvtma.tma_atom<load, f16, box = [4, 8, 16], interleave = interleave_16b>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [4, 8, 16], swizzle = swizzle_32b, interleave = interleave_32b>
    %i2: !nvtma.tma_atom<load, f16, box = [4, 8, 16], interleave = interleave_32b, swizzle = swizzle_32b>,
    // CHECK-SAME: !nvtma.tma_atom<load, f32, box = [8, 32], oob_fill = nan_request_zero_fma>
    %o1: !nvtma.tma_atom<load, f32, box = [8, 32], oob_fill = nan_request_zero_fma>,
    // CHECK-SAME: !nvtma.tma_atom<load, f32, tma_format = tfloat32, box = [8, 32]>
    %f1: !nvtma.tma_atom<load, f32, tma_format = tfloat32, box = [8, 32]>,
    // CHECK-SAME: !nvtma.tma_atom<load, f32, tma_format = tfloat32_ftz, box = [8, 32]>
    %f2: !nvtma.tma_atom<load, f32, tma_format = tfloat32_ftz, box = [8, 32]>,
    // CHECK-SAME: !nvtma.tma_atom<load, f32, tma_format = float32_ftz, box = [8, 32]>
    %f3: !nvtma.tma_atom<load, f32, tma_format = float32_ftz, box = [8, 32]>,
    // CHECK-SAME: !nvtma.tma_atom<load, f8E4M3FN, box = [64, 128]>
    %f4: !nvtma.tma_atom<load, f8E4M3FN, tma_format = uint8, box = [64, 128]>,
    // CHECK-SAME: !nvtma.tma_atom<load, i8, box = [64, 128]>
    %f5: !nvtma.tma_atom<load, i8, box = [64, 128]>,
    // CHECK-SAME: !nvtma.tma_atom<load, i16, box = [64, 64]>
    %f6: !nvtma.tma_atom<load, i16, box = [64, 64]>,
    // CHECK-SAME: !nvtma.tma_atom<load, i32, box = [64, 32]>
    %f7: !nvtma.tma_atom<load, i32, box = [64, 32]>,
    // CHECK-SAME: !nvtma.tma_atom<load, ui32, box = [64, 32]>
    %f8: !nvtma.tma_atom<load, ui32, box = [64, 32]>,
    // CHECK-SAME: !nvtma.tma_atom<load, i64, box = [16, 16]>
    %f9: !nvtma.tma_atom<load, i64, box = [16, 16]>,
    // CHECK-SAME: !nvtma.tma_atom<load, ui64, box = [16, 16]>
    %f10: !nvtma.tma_atom<load, ui64, box = [16, 16]>,
    // CHECK-SAME: !nvtma.tma_atom<load, f64, box = [16, 16]>
    %f11: !nvtma.tma_atom<load, f64, box = [16, 16]>,
    // CHECK-SAME: !nvtma.tma_atom<load, bf16, box = [64, 64]>
    %f12: !nvtma.tma_atom<load, bf16, box = [64, 64]>,
    // CHECK-SAME: !nvtma.tma_atom<load, ui16, box = [64, 64]>
    %f13: !nvtma.tma_atom<load, ui16, tma_format = uint16, box = [64, 64]>,
    // CHECK-SAME: !nvtma.tma_atom<load, i4, tma_format = u4x16_align8b, box = [16, 128]>
    %p1: !nvtma.tma_atom<load, i4, tma_format = u4x16_align8b, box = [16, 128]>,
    // CHECK-SAME: !nvtma.tma_atom<load, i4, tma_format = u4x16_align16b, box = [16, 128]>
    %p2: !nvtma.tma_atom<load, i4, tma_format = u4x16_align16b, box = [16, 128]>,
    // CHECK-SAME: !nvtma.tma_atom<load, i6, tma_format = u6x16_align16b, box = [16, 128]>
    %p3: !nvtma.tma_atom<load, i6, tma_format = u6x16_align16b, box = [16, 128]>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 64], element_strides = [2, 1]>
    %e1: !nvtma.tma_atom<load, f16, box = [64, 64], element_strides = [2, 1]>,
    // CHECK-SAME: !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 64], multicast = 2>
    %m1: !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 64], multicast = 2>,
    // CHECK-SAME: !nvtma.tma_atom<load, f16, box = [64, 64], cta_group = 2>
    %g2: !nvtma.tma_atom<load, f16, box = [64, 64], cta_group = 2>,
    // CHECK-SAME: !nvtma.tma_atom<store, f16, box = [64, 64]>
    %st: !nvtma.tma_atom<store, f16, box = [64, 64]>,
    // CHECK-SAME: !nvtma.tma_atom<reduce, f32, box = [32, 32]>
    %r0: !nvtma.tma_atom<reduce, f32, box = [32, 32], reduction = add>,
    // CHECK-SAME: !nvtma.tma_atom<reduce, f16, box = [32, 32], reduction = min>
    %r1: !nvtma.tma_atom<reduce, f16, box = [32, 32], reduction = min>,
    // CHECK-SAME: !nvtma.tma_atom<reduce, bf16, box = [32, 32], reduction = max>
    %r2: !nvtma.tma_atom<reduce, bf16, box = [32, 32], reduction = max>,
    // CHECK-SAME: !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = inc>
    %r3: !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = inc>,
    // CHECK-SAME: !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = dec>
    %r4: !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = dec>,
    // CHECK-SAME: !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = and>
    %r5: !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = and>,
    // CHECK-SAME: !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = or>
    %r6: !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = or>,
    // CHECK-SAME: !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = xor>
    %r7: !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = xor>,
    // CHECK-SAME: !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [-1, -1], upper_corner = [-1, -1]>
    %c1: !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [-1, -1], upper_corner = [-1, -1]>,
    // CHECK-SAME: !nvtma.tma_atom<im2col_load_multicast, f16, box = [64, 64], tile = [128, 64], multicast = 2, lower_corner = [-1], upper_corner = [-1]>
    %c2: !nvtma.tma_atom<im2col_load_multicast, f16, box = [64, 64], tile = [128, 64], multicast = 2, lower_corner = [-1], upper_corner = [-1]>,
    // CHECK-SAME: !nvtma.tma_atom<im2col_store, f16, box = [128, 64], lower_corner = [0, 0, 0], upper_corner = [0, 0, 0]>
    %c3: !nvtma.tma_atom<im2col_store, f16, box = [128, 64], lower_corner = [0, 0, 0], upper_corner = [0, 0, 0]>,
    // CHECK-SAME: !nvtma.tma_atom<gather4_load, bf16, box = [4, 64]>
    %g4: !nvtma.tma_atom<gather4_load, bf16, box = [4, 64]>) {
  return
}

gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  // CHECK-LABEL: gpu.func @tile_ops
  gpu.func @tile_ops(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %smem: !smem,
                     %bars: !bars, %i: index, %j: index) kernel {
    %c0 = arith.constant 0 : index
    // CHECK: %[[A:.*]] = nvtma.make_tiled_tma_atom %{{.*}} {cta_tiler = array<i64: 64, 64>} : memref<4096x4096xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b, l2_promotion = l2_256b>
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<4096x4096xf16> -> !ld
    %b = nvtma.make_tiled_tma_atom %B {cta_tiler = array<i64: 64, 64>} : memref<4096x4096xf16> -> !st
    // CHECK: nvtma.tma_partition %[[A]][%{{.*}}, %{{.*}}] : {{.*}} -> index, index
    %co:2 = nvtma.tma_partition %a[%i, %j] : !ld -> index, index
    // CHECK: nvtma.prefetch_descriptor %[[A]]
    nvtma.prefetch_descriptor %a : !ld
    // CHECK: nvtma.prefetch %[[A]][%{{.*}}, %{{.*}}] : !nvtma.tma_atom<load
    nvtma.prefetch %a[%co#0, %co#1] : !ld
    // CHECK: nvtma.copy %[[A]][%{{.*}}, %{{.*}}], %{{.*}}, barrier %{{.*}}[%{{.*}}] : !nvtma.tma_atom<load
    nvtma.copy %a[%co#0, %co#1], %smem, barrier %bars[%c0] : !ld, !smem, !bars
    %h = arith.constant 0 : i64
    // CHECK: nvtma.copy {{.*}} cache_hint %{{.*}} :
    nvtma.copy %a[%co#0, %co#1], %smem, barrier %bars[%c0] cache_hint %h : !ld, !smem, !bars
    // CHECK: nvtma.copy %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} : !nvtma.tma_atom<store
    nvtma.copy %b[%co#0, %co#1], %smem : !st, !smem
    // CHECK: nvtma.bulk_commit_group
    nvtma.bulk_commit_group
    // CHECK: nvtma.bulk_wait_group 1 {read}
    nvtma.bulk_wait_group 1 {read}
    // CHECK: nvtma.bulk_wait_group 0
    nvtma.bulk_wait_group 0
    gpu.return
  }

  // The largest dim a signed 32-bit TMA coordinate reaches the end of (2^31 - 1; one more is invalid.mlir's
  // coordinate-range).
  // CHECK-LABEL: gpu.func @coordinate_limit
  gpu.func @coordinate_limit(%A: memref<2147483647x64xf16>) kernel {
    // CHECK: nvtma.make_tiled_tma_atom {{.*}} : memref<2147483647x64xf16>
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<2147483647x64xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }

  // CHECK-LABEL: gpu.func @multicast
  gpu.func @multicast(%A: memref<1024x1024xbf16>, %smem: memref<64x64xbf16, #gpu.address_space<workgroup>>,
                      %bars: !bars, %x: index, %y: index) kernel {
    %c0 = arith.constant 0 : index
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<1024x1024xbf16> -> !nvtma.tma_atom<load_multicast, bf16, box = [32, 64], tile = [64, 64], multicast = 2>
    // CHECK: nvtma.create_tma_multicast_mask[%{{.*}}, %{{.*}}] {cluster_shape = array<i64: 2, 2>, mode = 0 : i64} : i16
    %m = nvtma.create_tma_multicast_mask [%x, %y] {cluster_shape = array<i64: 2, 2>, mode = 0 : i64} : i16
    // CHECK: nvtma.copy {{.*}} mask %{{.*}} cta %{{.*}} :
    nvtma.copy %a[%c0, %c0], %smem, barrier %bars[%c0] mask %m cta %x : !nvtma.tma_atom<load_multicast, bf16, box = [32, 64], tile = [64, 64], multicast = 2>, memref<64x64xbf16, #gpu.address_space<workgroup>>, !bars
    gpu.return
  }

  // CHECK-LABEL: gpu.func @im2col_and_reduce
  gpu.func @im2col_and_reduce(%X: memref<8x32x32x64xf16>, %Y: memref<256x256xbf16>,
                              %s1: memref<128x64xf16, #gpu.address_space<workgroup>>,
                              %s2: memref<32x32xbf16, #gpu.address_space<workgroup>>, %bars: !bars) kernel {
    %c0 = arith.constant 0 : index
    %o = arith.constant 0 : i16
    %x = nvtma.make_tiled_tma_atom %X {cta_tiler = array<i64: 128, 64>} : memref<8x32x32x64xf16> -> !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [-1, -1], upper_corner = [-1, -1]>
    // CHECK: nvtma.copy {{.*}} offsets[%{{.*}}, %{{.*}}] :
    nvtma.copy %x[%c0, %c0, %c0, %c0], %s1, barrier %bars[%c0] offsets [%o, %o] : !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [-1, -1], upper_corner = [-1, -1]>, memref<128x64xf16, #gpu.address_space<workgroup>>, !bars
    %y = nvtma.make_tiled_tma_atom %Y {cta_tiler = array<i64: 32, 32>} : memref<256x256xbf16> -> !nvtma.tma_atom<reduce, bf16, box = [32, 32], reduction = max>
    // CHECK: nvtma.copy {{.*}} : !nvtma.tma_atom<reduce, bf16, box = [32, 32], reduction = max>
    nvtma.copy %y[%c0, %c0], %s2 : !nvtma.tma_atom<reduce, bf16, box = [32, 32], reduction = max>, memref<32x32xbf16, #gpu.address_space<workgroup>>
    gpu.return
  }

  // CHECK-LABEL: gpu.func @descriptors
  gpu.func @descriptors(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %g: !llvm.ptr<1>, %s: !llvm.ptr<3>) kernel {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<?x?xf16> -> !st
    // CHECK: nvtma.copy_tensormap %{{.*}}, %{{.*}} : !nvtma.tma_atom<store, f16, box = [64, 64]>, !llvm.ptr<1>
    nvtma.copy_tensormap %a, %g : !st, !llvm.ptr<1>
    // CHECK: nvtma.update_tma_descriptor %{{.*}}, %{{.*}}, %{{.*}} : {{.*}}, memref<?x?xf16>, !llvm.ptr<1>
    nvtma.update_tma_descriptor %a, %B, %g : !st, memref<?x?xf16>, !llvm.ptr<1>
    // CHECK: nvtma.fence_tma_desc_release
    nvtma.fence_tma_desc_release
    // CHECK: nvtma.cp_fence_tma_desc_release %{{.*}}, %{{.*}} : !llvm.ptr<1>, !llvm.ptr<3>
    nvtma.cp_fence_tma_desc_release %g, %s : !llvm.ptr<1>, !llvm.ptr<3>
    // CHECK: nvtma.fence_tma_desc_acquire %{{.*}} : !llvm.ptr<1>
    nvtma.fence_tma_desc_acquire %g : !llvm.ptr<1>
    // CHECK: nvtma.atom_from_descriptor %{{.*}} : !llvm.ptr<1> -> !nvtma.tma_atom<store, f16, box = [64, 64]>
    %b = nvtma.atom_from_descriptor %g : !llvm.ptr<1> -> !st
    gpu.return
  }

  // CHECK-LABEL: gpu.func @bulk
  gpu.func @bulk(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %c: !llvm.ptr<7>, %bars: !bars, %buf: memref<256xf16, #gpu.address_space<workgroup>>, %v: i32) kernel {
    %c0 = arith.constant 0 : index
    %n = arith.constant 512 : i32
    %m = arith.constant 3 : i16
    // CHECK: nvtma.bulk_copy g2s %{{.*}}, %{{.*}}, %{{.*}}, barrier %{{.*}}[%{{.*}}] : !llvm.ptr<3>, !llvm.ptr<1>
    nvtma.bulk_copy g2s %s, %g, %n, barrier %bars[%c0] : !llvm.ptr<3>, !llvm.ptr<1>, !bars
    // CHECK: nvtma.bulk_copy g2s_multicast {{.*}} mask %{{.*}} :
    nvtma.bulk_copy g2s_multicast %s, %g, %n, barrier %bars[%c0] mask %m : !llvm.ptr<3>, !llvm.ptr<1>, !bars
    // CHECK: nvtma.bulk_copy s2g %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr<1>, !llvm.ptr<3>
    nvtma.bulk_copy s2g %g, %s, %n : !llvm.ptr<1>, !llvm.ptr<3>
    // CHECK: nvtma.bulk_copy s2s_cluster %{{.*}}, %{{.*}}, %{{.*}} remote_barrier %{{.*}} : !llvm.ptr<7>, !llvm.ptr<3>
    nvtma.bulk_copy s2s_cluster %c, %s, %n remote_barrier %c : !llvm.ptr<7>, !llvm.ptr<3>
    // CHECK: nvtma.cp_async %{{.*}}, %{{.*}} {cache_mode = #nvtma.load_cache_mode<cache_global>, size = 16 : i32}
    nvtma.cp_async %s, %g {size = 16 : i32, cache_mode = #nvtma.load_cache_mode<cache_global>} : !llvm.ptr<3>, !llvm.ptr<1>
    // CHECK: nvtma.cp_async %{{.*}}, %{{.*}} {size = 4 : i32}
    nvtma.cp_async %s, %g {size = 4 : i32} : !llvm.ptr<3>, !llvm.ptr<1>
    // CHECK: nvtma.cp_async %{{.*}}, %{{.*}}, %{{.*}} {size = 16 : i32}
    nvtma.cp_async %s, %g, %n {size = 16 : i32} : !llvm.ptr<3>, !llvm.ptr<1>
    // CHECK: nvtma.dsmem_store %{{.*}}, %{{.*}}, %{{.*}} : i32, !llvm.ptr<7>, !llvm.ptr<7>
    nvtma.dsmem_store %v, %c, %c : i32, !llvm.ptr<7>, !llvm.ptr<7>
    // CHECK: nvtma.address_of %{{.*}}[%{{.*}}] : memref<256xf16, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    %p = nvtma.address_of %buf[%c0] : memref<256xf16, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    // CHECK: nvtma.mbarrier_address %{{.*}}[%{{.*}}] : {{.*}} -> !llvm.ptr<3>
    %q = nvtma.mbarrier_address %bars[%c0] : !bars -> !llvm.ptr<3>
    gpu.return
  }
}

// Im2col atoms with every packed format (fillParams' im2col path with the
// packed extents, issue 15).
// CHECK-LABEL: gpu.func @packed_im2col
gpu.module @packed [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
  gpu.func @packed_im2col(%A: memref<8x64x64x128xi4>, %B: memref<8x64x64x128xi6>, %C: memref<8x64x64x64xi4>) kernel {
    // CHECK: !nvtma.tma_atom<im2col_load, i4, tma_format = u4x16_align16b, box = [64, 128], lower_corner = [0, 0], upper_corner = [0, 0]>
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 128>} : memref<8x64x64x128xi4> -> !nvtma.tma_atom<im2col_load, i4, tma_format = u4x16_align16b, box = [64, 128], lower_corner = [0, 0], upper_corner = [0, 0]>
    // CHECK: !nvtma.tma_atom<im2col_load, i6, tma_format = u6x16_align16b, box = [64, 128], lower_corner = [0, 0], upper_corner = [0, 0]>
    %b = nvtma.make_tiled_tma_atom %B {cta_tiler = array<i64: 64, 128>} : memref<8x64x64x128xi6> -> !nvtma.tma_atom<im2col_load, i6, tma_format = u6x16_align16b, box = [64, 128], lower_corner = [0, 0], upper_corner = [0, 0]>
    // CHECK: !nvtma.tma_atom<im2col_load, i4, tma_format = u4x16_align8b, box = [64, 64], lower_corner = [0, 0], upper_corner = [0, 0]>
    %c = nvtma.make_tiled_tma_atom %C {cta_tiler = array<i64: 64, 64>} : memref<8x64x64x64xi4> -> !nvtma.tma_atom<im2col_load, i4, tma_format = u4x16_align8b, box = [64, 64], lower_corner = [0, 0], upper_corner = [0, 0]>
    gpu.return
  }
}

// Two spellings of one atom are one type (the return's verifier compares
// them).
// CHECK-LABEL: func.func @one_type
// CHECK-SAME: (%{{.*}}: !nvtma.tma_atom<load, f16, box = [64, 64]>) -> !nvtma.tma_atom<load, f16, box = [64, 64]>
func.func @one_type(%a: !nvtma.tma_atom<load, f16, tma_format = float16, tile = [64, 64], box = [64, 64]>) -> !nvtma.tma_atom<load, f16, box = [64, 64], element_strides = [1, 1]> {
  return %a : !nvtma.tma_atom<load, f16, box = [64, 64], tile = [64, 64]>
}

// The warp and memory instructions NVVM lacks or must keep per site.
// CHECK-LABEL: func.func @warp_and_vector_ops
// CHECK: nvtma.read_special_register <tid_x> : i32
// CHECK: nvtma.read_special_register <laneid> : i32
// CHECK: nvtma.elect_active : i1
// CHECK: nvtma.wgmma_mma_async_rs %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {n = 8 : i32, scale_b = -1 : i32, type_a = #nvtma.wgmma_type<e4m3>, type_b = #nvtma.wgmma_type<e5m2>} : !llvm.struct<(f32, f32, f32, f32)>, vector<4xi32>
// CHECK: nvtma.vector_atomic_add %{{.*}}, %{{.*}} {scope = #nvtma.atomic_scope<cta>} : !llvm.ptr<3>, vector<2xbf16> -> vector<2xbf16>
// CHECK: nvtma.vector_atomic_add %{{.*}}, %{{.*}} : !llvm.ptr<1>, vector<4xf32>
func.func @warp_and_vector_ops(%acc: !llvm.struct<(f32, f32, f32, f32)>, %a: vector<4xi32>, %b: i64, %d: i1,
                               %s: !llvm.ptr<3>, %g: !llvm.ptr<1>, %h: vector<2xbf16>, %f: vector<4xf32>) {
  %t = nvtma.read_special_register <tid_x> : i32
  %l = nvtma.read_special_register <laneid> : i32
  %e = nvtma.elect_active : i1
  %r = nvtma.wgmma_mma_async_rs %acc, %a, %b, %d {n = 8 : i32, type_a = #nvtma.wgmma_type<e4m3>, type_b = #nvtma.wgmma_type<e5m2>, scale_b = -1 : i32} : !llvm.struct<(f32, f32, f32, f32)>, vector<4xi32>
  %o = nvtma.vector_atomic_add %s, %h {scope = #nvtma.atomic_scope<cta>} : !llvm.ptr<3>, vector<2xbf16> -> vector<2xbf16>
  nvtma.vector_atomic_add %g, %f : !llvm.ptr<1>, vector<4xf32>
  return
}

// The numerics and warp instructions NVVM lacks.
// CHECK-LABEL: func.func @numerics
// CHECK: nvtma.activemask : i32
// CHECK: nvtma.barrier_sync %{{.*}}, %{{.*}}
// CHECK: nvtma.barrier_sync %{{.*}}{{$}}
// CHECK: nvtma.float_fn <ex2_approx> %{{.*}} : f32
// CHECK: nvtma.float_fn <div_approx> %{{.*}}, %{{.*}} : f32
// CHECK: nvtma.float_fn <sqrt_rn> %{{.*}} : f64
// CHECK: nvtma.truncf_rz %{{.*}} : f64 to f32
// CHECK: nvtma.fptoint_sat %{{.*}} : f32 to i32
// CHECK: nvtma.fptoint_sat %{{.*}} unsigned : vector<4xf64> to vector<4xi8>
func.func @numerics(%x: f32, %d: f64, %v: vector<4xf64>, %id: i32, %n: i32) {
  %m = nvtma.activemask : i32
  nvtma.barrier_sync %id, %n
  nvtma.barrier_sync %id
  %e = nvtma.float_fn <ex2_approx> %x : f32
  %q = nvtma.float_fn <div_approx> %x, %e : f32
  %s = nvtma.float_fn <sqrt_rn> %d : f64
  %f = nvtma.truncf_rz %d : f64 to f32
  %i = nvtma.fptoint_sat %x : f32 to i32
  %u = nvtma.fptoint_sat %v unsigned : vector<4xf64> to vector<4xi8>
  return
}
