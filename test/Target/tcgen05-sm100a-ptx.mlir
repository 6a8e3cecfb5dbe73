// RUN: nvtma-opt %s --nvtma-to-ptx="chip=sm_100a" | FileCheck %s
// RUN: not nvtma-opt %s --nvtma-to-ptx="chip=sm_90a" 2>&1 | FileCheck %s --check-prefix=SM90

// Blackwell, compiled, not run: upstream nvvm.tcgen05 ops next to a
// cta_group::2 TMA load go through the whole pipeline to sm_100a PTX
// (TMEM alloc for the CTA pair, the 2-CTA MMA with the descriptors
// nvtma.tcgen05 encodes, a commit multicast to both CTAs, a TMEM load);
// for sm_90a the NVVM verifier refuses the first tcgen05 op.
// CHECK-LABEL: gpu.binary @m
// CHECK: .target sm_100a
// CHECK: tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32
// CHECK: tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
// CHECK: tcgen05.fence::before_thread_sync;
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2
// The instruction descriptor 0x10400490 (bf16 x bf16 -> f32, M = 256, N = 256)
// and the shared-memory descriptor 0x4000404000010000 (128B swizzle, SBO 1024,
// LBO 16, the fixed 0b001 at bit 46) of nvtma.tcgen05's encoders
// CHECK: mov.b32 {{.*}}, 272630928;
// CHECK: mov.b64 {{.*}}, 4611756662049538048;
// CHECK: tcgen05.mma.cta_group::2.kind::f16.collector::a::discard
// CHECK: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64
// CHECK: tcgen05.ld.sync.aligned.32x32b.x4.b32
// CHECK: tcgen05.wait::ld.sync.aligned;
// CHECK: tcgen05.dealloc.cta_group::2.sync.aligned.b32
// SM90: error: 'nvvm.tcgen05.alloc' op is not supported on sm_90a
module attributes {gpu.container_module} {
gpu.module @m {
  gpu.func @mma(%A: memref<256x64xbf16>, %out: memref<128xi32>) workgroup(%s: memref<128x64xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %slot: memref<1xi32, #gpu.address_space<workgroup>>) kernel attributes {known_cluster_size = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : index
    %ncols = arith.constant 128 : i32
    %sp = memref.extract_aligned_pointer_as_index %slot : memref<1xi32, #gpu.address_space<workgroup>> -> index
    %spi = arith.index_cast %sp : index to i64
    %slotp = llvm.inttoptr %spi : i64 to !llvm.ptr<3>
    nvvm.tcgen05.alloc %slotp, %ncols {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i32
    nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
    nvvm.tcgen05.fence #nvvm.tcgen05_fence<before>
    %t = memref.load %slot[%c0] : memref<1xi32, #gpu.address_space<workgroup>>
    %tp = llvm.inttoptr %t : i32 to !llvm.ptr<6>
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 128, 64>} : memref<256x64xbf16> -> !nvtma.tma_atom<load, bf16, box = [128, 64], swizzle = swizzle_128b, cta_group = 2>
    %b = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    nvtma.copy %a[%c0, %c0], %s, barrier %b[%c0] : !nvtma.tma_atom<load, bf16, box = [128, 64], swizzle = swizzle_128b, cta_group = 2>, memref<128x64xbf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    %desc = arith.constant 4611756662049538048 : i64
    %idesc = arith.constant 272630928 : i32
    %true = arith.constant true
    nvvm.tcgen05.mma %tp, %desc, %desc, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
    %bp = nvtma.mbarrier_address %b[%c0] : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    %mask = arith.constant 3 : i16
    nvvm.tcgen05.commit %bp, multicast_mask = %mask {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
    %v = nvvm.tcgen05.ld %tp {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
    nvvm.tcgen05.wait #nvvm.tcgen05_wait<load>
    %e = vector.extract %v[3] : i32 from vector<4xi32>
    memref.store %e, %out[%c0] : memref<128xi32>
    nvvm.tcgen05.dealloc %tp, %ncols {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>, i32
    gpu.return
  }
}
}
