// The lowering patterns, on kernels whose atoms nvtma-materialize-descriptors
// made parameters.
// RUN: nvtma-opt %s -nvtma-materialize-descriptors -convert-nvtma-to-nvvm -split-input-file | FileCheck %s

!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
!smem = memref<64x64xf16, #gpu.address_space<workgroup>>

// Copies use the descriptor parameters in place.
// CHECK-LABEL: gpu.func @load_store
// CHECK-SAME: %[[D0:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, nvtma.descriptor = #nvtma.descriptor<binds = 0,
// CHECK-SAME: %[[D1:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, nvtma.descriptor = #nvtma.descriptor<binds = 1,
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @load_store(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %bars: !bars, %i: index)
      workgroup(%s: !smem) kernel {
    %c0 = arith.constant 0 : index
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b, l2_promotion = l2_256b>
    %b = nvtma.make_tiled_tma_atom %B {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<store, f16, box = [64, 64]>
    // CHECK: %[[E:.*]] = nvvm.elect.sync -> i1
    // CHECK: scf.if %[[E]]
    // CHECK: llvm.addrspacecast %{{.*}} : !llvm.ptr<3> to !llvm.ptr<7>
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[D0]], %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
    nvtma.copy %a[%i, %c0], %s, barrier %bars[%c0] : !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b, l2_promotion = l2_256b>, !smem, !bars
    // CHECK: nvvm.prefetch tensormap, %[[D0]] : !llvm.ptr
    nvtma.prefetch_descriptor %a : !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b, l2_promotion = l2_256b>
    // CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[D1]], %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr, <3>
    nvtma.copy %b[%i, %c0], %s : !nvtma.tma_atom<store, f16, box = [64, 64]>, !smem
    // CHECK: nvvm.cp.async.bulk.commit.group
    nvtma.bulk_commit_group
    // CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
    nvtma.bulk_wait_group 0 {read}
    gpu.return
  }
}

// -----

// A tile of two boxes along the outer dim issues two copies, the second at
// row +32 and 4096 bytes into shared memory.
// CHECK-LABEL: gpu.func @two_boxes
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @two_boxes(%A: memref<256x256xf16>, %bars: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>)
      workgroup(%s: memref<64x64xf16, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 64], multicast = 2>
    %m = arith.constant 3 : i16
    %r = gpu.cluster_block_id x
    // CHECK: nvvm.elect.sync
    // CHECK: %[[ROWS:.*]] = llvm.mul %[[R:.*]], %{{.*}} : i32
    // CHECK: %[[BYTES:.*]] = llvm.mul %[[R]], %{{.*}} : i32
    // CHECK: llvm.getelementptr %{{.*}}[%[[BYTES]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %{{.*}} : !llvm.ptr<7>, !llvm.ptr
    nvtma.copy %a[%c0, %c0], %s, barrier %bars[%c0] mask %m cta %r : !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 64], multicast = 2>, memref<64x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

// A multicast tile of two boxes along K (64 columns each, 128B swizzle): box
// after box, each the tile's 64 rows, so the second box lands 8192 bytes in
// (not 4096, where the other CTA's slice of the first box lies), each CTA's
// slice rank * 4096 bytes into a box.
// CHECK-LABEL: gpu.func @multicast_k_boxes
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @multicast_k_boxes(%A: memref<256x256xf16>, %bars: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>)
      workgroup(%s: memref<2x64x64xf16, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 128>} : memref<256x256xf16> -> !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 128], multicast = 2, swizzle = swizzle_128b>
    %m = arith.constant 3 : i16
    %r = gpu.cluster_block_id x
    // CHECK: %[[C4K:.*]] = llvm.mlir.constant(4096 : i32) : i32
    // CHECK: %[[SLICE:.*]] = llvm.mul %[[R:.*]], %[[C4K]] : i32
    // CHECK: llvm.getelementptr %[[T:.*]][%[[SLICE]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
    // CHECK: %[[B1:.*]] = llvm.getelementptr %[[T]][8192] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
    // CHECK: llvm.getelementptr %[[B1]][%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
    nvtma.copy %a[%c0, %c0], %s, barrier %bars[%c0] mask %m cta %r : !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 128], multicast = 2, swizzle = swizzle_128b>, memref<2x64x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

// An L2 prefetch of a tile: one TMA prefetch per box, in an elected lane; a
// multicast atom's CTA prefetches its slice (rows + rank * 32), with the
// eviction policy it is given.
// CHECK-LABEL: gpu.func @prefetch
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @prefetch(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %i: index, %h: i64) kernel {
    %c0 = arith.constant 0 : index
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    %b = nvtma.make_tiled_tma_atom %B {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 64], multicast = 2>
    %r = gpu.cluster_block_id x
    // CHECK: %[[E:.*]] = nvvm.elect.sync -> i1
    // CHECK: scf.if %[[E]]
    // CHECK: nvvm.cp.async.bulk.tensor.prefetch %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr
    nvtma.prefetch %a[%i, %c0] : !nvtma.tma_atom<load, f16, box = [64, 64]>
    // CHECK: nvvm.elect.sync
    // CHECK: %[[ROWS:.*]] = llvm.mul %{{.*}}, %{{.*}} : i32
    // CHECK: %[[ROW:.*]] = llvm.add %{{.*}}, %[[ROWS]] : i32
    // CHECK: nvvm.cp.async.bulk.tensor.prefetch %{{.*}}, box[%{{.*}}, %[[ROW]]] l2_cache_hint = %{{.*}} : !llvm.ptr
    nvtma.prefetch %b[%i, %c0] cta %r cache_hint %h : !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 64], multicast = 2>
    gpu.return
  }
}

// -----

// CHECK-LABEL: gpu.func @tile_of_four
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @tile_of_four(%A: memref<512x512xf16>, %bars: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>)
      workgroup(%s: memref<4x128x64xf16, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // 128x256 f16 tile under a 128B swizzle: four 128x64 boxes, one after
    // another in a blocked buffer.
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 128, 256>} : memref<512x512xf16> -> !nvtma.tma_atom<load, f16, box = [128, 64], tile = [128, 256], swizzle = swizzle_128b>
    // CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global
    nvtma.copy %a[%c0, %c0], %s, barrier %bars[%c0] : !nvtma.tma_atom<load, f16, box = [128, 64], tile = [128, 256], swizzle = swizzle_128b>, memref<4x128x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

// Reductions, im2col, and the descriptor-management ops.
// CHECK-LABEL: gpu.func @others
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @others(%Y: memref<256x256xi32>, %X: memref<8x32x32x64xf16>, %g: !llvm.ptr<1>, %sp: !llvm.ptr<3>,
                   %bars: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>, %v: i32, %c: !llvm.ptr<7>)
      workgroup(%s: memref<32x32xi32, #gpu.address_space<workgroup>>, %t: memref<128x64xf16, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %o = arith.constant 1 : i16
    %y = nvtma.make_tiled_tma_atom %Y {cta_tiler = array<i64: 32, 32>} : memref<256x256xi32> -> !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = max>
    // CHECK: nvvm.cp.async.bulk.tensor.reduce %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] {redKind = #nvvm.tma_redux_kind<max>} : !llvm.ptr, <3>
    nvtma.copy %y[%c0, %c0], %s : !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = max>, memref<32x32xi32, #gpu.address_space<workgroup>>
    %x = nvtma.make_tiled_tma_atom %X {cta_tiler = array<i64: 128, 64>} : memref<8x32x32x64xf16> -> !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [-1, -1], upper_corner = [-1, -1]>
    // CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] im2col[%{{.*}}, %{{.*}}] {{.*}}mode = #nvvm.tma_load_mode<im2col>
    nvtma.copy %x[%c0, %c0, %c0, %c0], %t, barrier %bars[%c0] offsets [%o, %o] : !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [-1, -1], upper_corner = [-1, -1]>, memref<128x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    // 16 loads of 8 bytes, 16 stores.
    // CHECK-COUNT-16: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr<1>
    nvtma.copy_tensormap %y, %g : !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = max>, !llvm.ptr<1>
    // CHECK: tensormap.replace.tile.global_address.global.b1024.b64 [$0], $1;
    // CHECK: tensormap.replace.tile.global_dim.global.b1024.b32 [$0], 1, $1;
    // CHECK: tensormap.replace.tile.global_stride.global.b1024.b64 [$0], 0, $1;
    // CHECK: tensormap.replace.tile.global_dim.global.b1024.b32 [$0], 0, $1;
    nvtma.update_tma_descriptor %y, %Y, %g : !nvtma.tma_atom<reduce, i32, box = [32, 32], reduction = max>, memref<256x256xi32>, !llvm.ptr<1>
    // CHECK: fence.proxy.tensormap::generic.release.gpu;
    nvtma.fence_tma_desc_release
    // CHECK: tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [$0], [$1], 128;
    nvtma.cp_fence_tma_desc_release %g, %sp : !llvm.ptr<1>, !llvm.ptr<3>
    // CHECK: fence.proxy.tensormap::generic.acquire.gpu [$0], 128;
    nvtma.fence_tma_desc_acquire %g : !llvm.ptr<1>
    %n = arith.constant 256 : i32
    %mask = arith.constant 3 : i16
    // CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr<7>, <1>
    nvtma.bulk_copy g2s %sp, %g, %n, barrier %bars[%c0] : !llvm.ptr<3>, !llvm.ptr<1>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    // CHECK: nvvm.cp.async.bulk.shared.cluster.global {{.*}} multicast_mask = %{{.*}}
    nvtma.bulk_copy g2s_multicast %sp, %g, %n, barrier %bars[%c0] mask %mask : !llvm.ptr<3>, !llvm.ptr<1>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    // CHECK: nvvm.cp.async.bulk.global.shared.cta %{{.*}}, %{{.*}}, %{{.*}} : <1>, <3>
    nvtma.bulk_copy s2g %g, %sp, %n : !llvm.ptr<1>, !llvm.ptr<3>
    // CHECK: cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];
    nvtma.bulk_copy s2s_cluster %c, %sp, %n remote_barrier %c : !llvm.ptr<7>, !llvm.ptr<3>
    // CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = {{ *}}cg
    nvtma.cp_async %sp, %g {size = 16 : i32, cache_mode = #nvtma.load_cache_mode<cache_global>} : !llvm.ptr<3>, !llvm.ptr<1>
    // CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = {{ *}}cg, %{{.*}} :
    nvtma.cp_async %sp, %g, %n {size = 16 : i32, cache_mode = #nvtma.load_cache_mode<cache_global>} : !llvm.ptr<3>, !llvm.ptr<1>
    // CHECK: st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [$0], $1, [$2];
    nvtma.dsmem_store %v, %c, %c : i32, !llvm.ptr<7>, !llvm.ptr<7>
    gpu.return
  }
}

// -----

// Index-only ops become integer arithmetic: tile coordinates times the
// tile, and the multicast pattern (3: two CTAs along x) shifted to the
// group's first CTA (rank y * 2).
// CHECK-LABEL: gpu.func @index_ops
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @index_ops(%a: !nvtma.tma_atom<load, f16, box = [64, 32]>, %i: index, %j: index, %x: index) kernel {
    // CHECK: %[[C64:.*]] = llvm.mlir.constant(64 : i64) : i64
    // CHECK: llvm.mul %{{.*}}, %[[C64]] : i64
    // CHECK: %[[C32:.*]] = llvm.mlir.constant(32 : i64) : i64
    // CHECK: llvm.mul %{{.*}}, %[[C32]] : i64
    %c:2 = nvtma.tma_partition %a[%i, %j] : !nvtma.tma_atom<load, f16, box = [64, 32]> -> index, index
    %c0 = arith.constant 0 : index
    // CHECK: %[[TWO:.*]] = llvm.mlir.constant(2 : i32) : i32
    // CHECK: %[[Y:.*]] = llvm.trunc %{{.*}} : i64 to i32
    // CHECK: %[[YS:.*]] = llvm.mul %[[Y]], %[[TWO]] : i32
    // CHECK: %[[BASE:.*]] = llvm.add %{{.*}}, %[[YS]] : i32
    // CHECK: %[[PAT:.*]] = llvm.mlir.constant(3 : i32) : i32
    // CHECK: %[[M:.*]] = llvm.shl %[[PAT]], %[[BASE]] : i32
    // CHECK: llvm.trunc %[[M]] : i32 to i16
    %m = nvtma.create_tma_multicast_mask [%x, %c0] {cluster_shape = array<i64: 2, 2>, mode = 0 : i64} : i16
    gpu.return
  }
}

// -----

// tensormap.replace of a sub-byte tensor: its byte strides are stride x
// bits / 8, as the host encoder counts them (bits / 8 alone wrote 0). The
// packed 4-bit formats are sm_100's.
// CHECK-LABEL: gpu.func @subbyte_strides
// CHECK: tensormap.replace.tile.global_address
// CHECK: %[[BITS:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK: %[[PRODUCT:.*]] = llvm.mul %{{.*}}, %[[BITS]] : i64
// CHECK: %[[EIGHT:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK: %[[STRIDE:.*]] = llvm.udiv %[[PRODUCT]], %[[EIGHT]] : i64
// CHECK: tensormap.replace.tile.global_stride.global.b1024.b64 [$0], 0, $1;{{.*}}%[[STRIDE]]
gpu.module @m [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
  gpu.func @subbyte_strides(%Y: memref<?x?xi4>, %g: !llvm.ptr<1>) kernel {
    %a = nvtma.atom_from_descriptor %g : !llvm.ptr<1> -> !nvtma.tma_atom<load, i4, tma_format = u4x16_align8b, box = [16, 128]>
    nvtma.update_tma_descriptor %a, %Y, %g : !nvtma.tma_atom<load, i4, tma_format = u4x16_align8b, box = [16, 128]>, memref<?x?xi4>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// The warp and memory instructions NVVM lacks, or that must stay per site,
// become volatile inline PTX. Each elect_active's is numbered: LLVM merges
// none of them; it and the wgmma are convergent (nvtma.convergent).
// CHECK-LABEL: gpu.func @warp_and_vector_ops
// CHECK: llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %tid.y;", "=r"  : () -> i32
// CHECK: llvm.inline_asm has_side_effects {{.*}}"mov.u32 $0, %laneid;", "=r"  : () -> i32
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att {nvtma.convergent} "{ .reg .pred p; .reg .b32 m; activemask.b32 m; elect.sync _|p, m; selp.u32 $0, 1, 0, p; } // elect_active 0", "=r"
// CHECK: llvm.icmp "ne"
// CHECK: "{{.*}}// elect_active 1", "=r"
// CHECK: {nvtma.convergent} "{ .reg .pred p; setp.ne.b32 p, $13, 0; wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, {$4, $5, $6, $7}, $8, p, 1, -1, 0; }", "=f,=f,=f,=f,r,r,r,r,l,0,1,2,3,r"
// CHECK: "{ .reg .pred p; setp.ne.b32 p, $13, 0; wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e5m2 {$0, $1, $2, $3}, {$4, $5, $6, $7}, $8, p, 1, 1; }"
// CHECK: "atom.cta.shared.add.noftz.bf16x2 $0, [$1], $2;", "=r,l,r"
// CHECK: "red.sys.add.noftz.f16x2 [$0], $1;", "l,r"
// CHECK: "red.gpu.global.add.v4.f32 [$0], {$1, $2, $3, $4};", "l,f,f,f,f"
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @warp_and_vector_ops(%acc: !llvm.struct<(f32, f32, f32, f32)>, %a: vector<4xi32>, %b: i64, %d: i1,
                                %s: !llvm.ptr<3>, %p: !llvm.ptr, %g: !llvm.ptr<1>, %h: vector<2xbf16>,
                                %x: vector<2xf16>, %f: vector<4xf32>) kernel {
    %t = nvtma.read_special_register <tid_y> : i32
    %l = nvtma.read_special_register <laneid> : i32
    %e0 = nvtma.elect_active : i1
    %e1 = nvtma.elect_active : i1
    %r = nvtma.wgmma_mma_async_rs %acc, %a, %b, %d {n = 8 : i32, type_a = #nvtma.wgmma_type<bf16>, type_b = #nvtma.wgmma_type<bf16>, scale_b = -1 : i32} : !llvm.struct<(f32, f32, f32, f32)>, vector<4xi32>
    %r2 = nvtma.wgmma_mma_async_rs %r, %a, %b, %d {n = 8 : i32, type_a = #nvtma.wgmma_type<e4m3>, type_b = #nvtma.wgmma_type<e5m2>} : !llvm.struct<(f32, f32, f32, f32)>, vector<4xi32>
    %o = nvtma.vector_atomic_add %s, %h {scope = #nvtma.atomic_scope<cta>} : !llvm.ptr<3>, vector<2xbf16> -> vector<2xbf16>
    nvtma.vector_atomic_add %p, %x {scope = #nvtma.atomic_scope<sys>} : !llvm.ptr, vector<2xf16>
    nvtma.vector_atomic_add %g, %f : !llvm.ptr<1>, vector<4xf32>
    gpu.return
  }
}

// -----

// The numerics NVVM lacks become the intrinsics of their one instruction; a
// scalar to 32 or 64 bits is one cvt.rzi, with NaN selected to 0 where
// cvt.rzi gives the top bit (from f64, or to 64 bits).
// CHECK-LABEL: gpu.func @numerics
// CHECK: llvm.call_intrinsic "llvm.nvvm.activemask"() : () -> i32
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.barrier id = %{{.*}}{{$}}
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"(%{{.*}}) : (f32) -> f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// CHECK: llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.f"
// CHECK: llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.d"(%{{.*}}) : (f64) -> f64
// CHECK: llvm.call_intrinsic "llvm.nvvm.sin.approx.f"
// CHECK: llvm.call_intrinsic "llvm.nvvm.cos.approx.f"
// CHECK: llvm.call_intrinsic "llvm.nvvm.div.approx.f"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.call_intrinsic "llvm.sqrt.f32"
// CHECK: llvm.call_intrinsic "llvm.sqrt.f64"
// CHECK: llvm.call_intrinsic "llvm.nvvm.d2f.rz"(%{{.*}}) : (f64) -> f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.f2i.rz"(%{{.*}}) : (f32) -> i32
// CHECK-NOT: llvm.select
// CHECK: %[[U:.*]] = llvm.call_intrinsic "llvm.nvvm.d2ui.rz"(%[[D:.*]]) : (f64) -> i32
// CHECK: %[[NAN:.*]] = llvm.fcmp "uno" %[[D]], %[[D]]
// CHECK: llvm.select %[[NAN]], %{{.*}}, %[[U]]
// CHECK: llvm.call_intrinsic "llvm.nvvm.f2ll.rz"
// CHECK: llvm.select
// CHECK: llvm.call_intrinsic "llvm.fptosi.sat.i8.f32"
// CHECK: llvm.call_intrinsic "llvm.fptoui.sat.v4i16.v4f64"(%{{.*}}) : (vector<4xf64>) -> vector<4xi16>
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @numerics(%x: f32, %d: f64, %v: vector<4xf64>, %id: i32, %n: i32) kernel {
    %m = nvtma.activemask : i32
    nvtma.barrier_sync %id, %n
    nvtma.barrier_sync %id
    %0 = nvtma.float_fn <ex2_approx> %x : f32
    %1 = nvtma.float_fn <lg2_approx> %x : f32
    %2 = nvtma.float_fn <rsqrt_approx> %x : f32
    %3 = nvtma.float_fn <rsqrt_approx> %d : f64
    %4 = nvtma.float_fn <sin_approx> %x : f32
    %5 = nvtma.float_fn <cos_approx> %x : f32
    %6 = nvtma.float_fn <div_approx> %x, %0 : f32
    %7 = nvtma.float_fn <sqrt_rn> %x : f32
    %8 = nvtma.float_fn <sqrt_rn> %d : f64
    %f = nvtma.truncf_rz %d : f64 to f32
    %i = nvtma.fptoint_sat %x : f32 to i32
    %u = nvtma.fptoint_sat %d unsigned : f64 to i32
    %l = nvtma.fptoint_sat %x : f32 to i64
    %b = nvtma.fptoint_sat %x : f32 to i8
    %w = nvtma.fptoint_sat %v unsigned : vector<4xf64> to vector<4xi16>
    gpu.return
  }
}
