// RUN: nvtma-opt %s -nvtma-check-target -split-input-file -verify-diagnostics

// PTX ISA 9.0 renamed sm_101 to sm_110: LLVM 22 selects gather4 and
// cta_group::2 TMA copies for sm_101a/sm_101f only up to +ptx88; with +ptx90
// it ended the process ("LLVM ERROR: Cannot select: intrinsic
// %llvm.nvvm.cp.async.bulk.tensor.g2s.tile.gather4.2d"; fuzz_nvtma_opt.py
// mutation seed 7331). Here it is a diagnostic.
gpu.module @m [#nvvm.target<chip = "sm_101a", features = "+ptx90">] {
  gpu.func @gather(%A: memref<256x128xbf16>) workgroup(%s: memref<4x64xbf16, #gpu.address_space<workgroup>> {llvm.align = 128 : i64}) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{gather4 TMA copies for sm_101 need +ptx88 or older (PTX ISA 9.0 renamed sm_101 to sm_110; target sm_110a or sm_110f instead), the target is sm_101 (a/f) with +ptx90}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 4, 64>} : memref<256x128xbf16> -> !nvtma.tma_atom<gather4_load, bf16, box = [4, 64]>
    %b = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    // expected-error @+1 {{gather4 TMA copies for sm_101 need +ptx88 or older}}
    nvtma.copy %a[%c0, %c0, %c0, %c0, %c0], %s, barrier %b[%c0] : !nvtma.tma_atom<gather4_load, bf16, box = [4, 64]>, memref<4x64xbf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_101f", features = "+ptx90">] {
  gpu.func @k(%A: memref<256x64xbf16>) kernel {
    // expected-error @+1 {{cta_group::2 TMA copies for sm_101 need +ptx88 or older (PTX ISA 9.0 renamed sm_101 to sm_110; target sm_110a or sm_110f instead), the target is sm_101 (a/f) with +ptx90}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 128, 64>} : memref<256x64xbf16> -> !nvtma.tma_atom<load, bf16, box = [128, 64], swizzle = swizzle_128b, cta_group = 2>
    gpu.return
  }
}

// -----

// What LLVM selects passes: sm_101a up to +ptx88 (its default is +ptx86),
// sm_110a with +ptx90, sm_103a with +ptx90.
gpu.module @a [#nvvm.target<chip = "sm_101a", features = "+ptx88">] {
  gpu.func @k(%A: memref<256x128xbf16>) kernel {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 4, 64>} : memref<256x128xbf16> -> !nvtma.tma_atom<gather4_load, bf16, box = [4, 64]>
    gpu.return
  }
}
gpu.module @b [#nvvm.target<chip = "sm_101a">] {
  gpu.func @k(%A: memref<256x128xbf16>) kernel {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 4, 64>} : memref<256x128xbf16> -> !nvtma.tma_atom<gather4_load, bf16, box = [4, 64]>
    gpu.return
  }
}
gpu.module @c [#nvvm.target<chip = "sm_110a", features = "+ptx90">] {
  gpu.func @k(%A: memref<256x128xbf16>) kernel {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 4, 64>} : memref<256x128xbf16> -> !nvtma.tma_atom<gather4_load, bf16, box = [4, 64]>
    gpu.return
  }
}
gpu.module @d [#nvvm.target<chip = "sm_103a", features = "+ptx90">] {
  gpu.func @k(%A: memref<256x64xbf16>) kernel {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 128, 64>} : memref<256x64xbf16> -> !nvtma.tma_atom<load, bf16, box = [128, 64], swizzle = swizzle_128b, cta_group = 2>
    gpu.return
  }
}
