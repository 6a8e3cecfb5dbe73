// RUN: nvtma-opt %s -split-input-file -verify-diagnostics

// The declarative parser names the field and the spellings it takes.
// expected-error @+2 {{expected one of [uint8, uint16, uint32, int32, uint64, int64, float16, float32, float64, bfloat16, float32_ftz, tfloat32, tfloat32_ftz, u4x16_align8b, u4x16_align16b, u6x16_align16b] for CUtensorMapDataType: the descriptor's element format, got: float7}}
// expected-error @+1 {{failed to parse NVTMA_TmaAtomType parameter 'tma_format'}}
func.func @f(%a: !nvtma.tma_atom<load, f16, tma_format = float7, box = [64, 64]>) { return }

// -----

// expected-error @+2 {{expected one of [none, swizzle_32b, swizzle_64b, swizzle_128b, swizzle_128b_atom_32b, swizzle_128b_atom_32b_flip_8b, swizzle_128b_atom_64b] for CUtensorMapSwizzle: shared-memory bank swizzle, got: swizzle_16b}}
// expected-error @+1 {{failed to parse NVTMA_TmaAtomType parameter 'swizzle'}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_16b>) { return }

// -----

// expected-error @+2 {{expected one of [none, l2_64b, l2_128b, l2_256b] for CUtensorMapL2promotion: granularity of L2 fills from DRAM, got: l2_512b}}
// expected-error @+1 {{failed to parse NVTMA_TmaAtomType parameter 'l2_promotion'}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = l2_512b>) { return }

// -----

// expected-error @+2 {{expected one of [none, interleave_16b, interleave_32b] for CUtensorMapInterleave: interleaved global layout, got: interleave_64b}}
// expected-error @+1 {{failed to parse NVTMA_TmaAtomType parameter 'interleave'}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [4, 8, 16], interleave = interleave_64b>) { return }

// -----

// expected-error @+2 {{expected one of [none, nan_request_zero_fma] for CUtensorMapFloatOOBfill: value read out of bounds, got: zero}}
// expected-error @+1 {{failed to parse NVTMA_TmaAtomType parameter 'oob_fill'}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 64], oob_fill = zero>) { return }

// -----

// expected-error @+2 {{expected one of [load, load_multicast, store, reduce, im2col_load, im2col_load_multicast, im2col_store, gather4_load] for what a TMA atom copies, got: copy}}
// expected-error @+1 {{failed to parse NVTMA_TmaAtomType parameter 'kind'}}
func.func @f(%a: !nvtma.tma_atom<copy, f16, box = [64, 64]>) { return }

// -----

// expected-error @+2 {{expected one of [add, min, max, inc, dec, and, or, xor] for reduction of cp.reduce.async.bulk.tensor, got: mul}}
// expected-error @+1 {{failed to parse NVTMA_TmaAtomType parameter 'reduction'}}
func.func @f(%a: !nvtma.tma_atom<reduce, f32, box = [32, 32], reduction = mul>) { return }

// -----

// expected-error @+1 {{duplicate or unknown struct parameter name: boxes}}
func.func @f(%a: !nvtma.tma_atom<load, f16, boxes = [64, 64]>) { return }

// -----

// expected-error @+1 {{duplicate or unknown struct parameter name: box}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 64], box = [32, 32]>) { return }

// -----

// expected-error @+1 {{element type 'index' has no default tma_format}}
func.func @f(%a: !nvtma.tma_atom<load, index, box = [16, 16]>) { return }

// -----

// expected-error @+1 {{box has 0 dims, the range is 1..5}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = []>) { return }

// -----

// expected-error @+1 {{box has 6 dims, the range is 1..5}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [1, 1, 1, 1, 8, 8]>) { return }

// -----

// expected-error @+1 {{tma_format float32 has 32-bit elements, element type 'f16' has 16}}
func.func @f(%a: !nvtma.tma_atom<load, f16, tma_format = float32, box = [64, 64]>) { return }

// -----

// expected-error @+1 {{tma_format u4x16_align8b has 4-bit elements, element type 'i8' has 8}}
func.func @f(%a: !nvtma.tma_atom<load, i8, tma_format = u4x16_align8b, box = [16, 128]>) { return }

// -----

// expected-error @+1 {{tile dim 1 is 96, it must be a positive multiple of box dim 1 (64)}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 64], tile = [64, 96]>) { return }

// -----

// expected-error @+1 {{tile has 1 dims, box has 2}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 64], tile = [64]>) { return }

// -----

// expected-error @+1 {{element_strides has 3 entries, the tensor rank is 2}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 64], element_strides = [1, 1, 1]>) { return }

// -----

// expected-error @+1 {{multicast is 32, a cluster holds 1..16 CTAs}}
func.func @f(%a: !nvtma.tma_atom<load_multicast, f16, box = [2, 64], tile = [64, 64], multicast = 32>) { return }

// -----

// expected-error @+1 {{multicast 2 needs a load_multicast or im2col_load_multicast atom}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [32, 64], multicast = 2>) { return }

// -----

// expected-error @+1 {{cta_group is 3, expected 1 or 2}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 64], cta_group = 3>) { return }

// -----

// expected-error @+1 {{reduction is for reduce atoms}}
func.func @f(%a: !nvtma.tma_atom<store, f16, box = [64, 64], reduction = max>) { return }

// -----

// expected-error @+1 {{reduce-format: reduction and does not take tma_format float32; cp.reduce.async.bulk.tensor.and takes uint32, int32, uint64, int64}}
func.func @f(%a: !nvtma.tma_atom<reduce, f32, box = [32, 32], reduction = and>) { return }

// -----

// Seen on the H200: a float32 min/max reduction faults at run time.
// expected-error @+1 {{reduce-format: reduction min does not take tma_format float32; cp.reduce.async.bulk.tensor.min takes uint32, int32, uint64, int64, float16, bfloat16}}
func.func @f(%a: !nvtma.tma_atom<reduce, f32, box = [32, 32], reduction = min>) { return }

// -----

// expected-error @+1 {{reduce-format: reduction max does not take tma_format float64}}
func.func @f(%a: !nvtma.tma_atom<reduce, f64, box = [16, 16], reduction = max>) { return }

// -----

// expected-error @+1 {{reduce-format: reduction add does not take tma_format float64; cp.reduce.async.bulk.tensor.add takes uint32, int32, uint64, float32, float32_ftz, float16, bfloat16}}
func.func @f(%a: !nvtma.tma_atom<reduce, f64, box = [16, 16]>) { return }

// -----

// expected-error @+1 {{reduce-format: reduction add does not take tma_format uint8}}
func.func @f(%a: !nvtma.tma_atom<reduce, i8, box = [16, 16]>) { return }

// -----

// expected-error @+1 {{reduce-format: reduction add does not take tma_format int64}}
func.func @f(%a: !nvtma.tma_atom<reduce, i64, tma_format = int64, box = [16, 16]>) { return }

// -----

// expected-error @+1 {{reduce-format: reduction inc does not take tma_format uint16; cp.reduce.async.bulk.tensor.inc takes uint32, int32}}
func.func @f(%a: !nvtma.tma_atom<reduce, i16, box = [32, 32], reduction = inc>) { return }

// -----

// expected-error @+1 {{an im2col box is [pixels, channels], got 3 dims}}
func.func @f(%a: !nvtma.tma_atom<im2col_load, f16, box = [2, 128, 64], lower_corner = [0], upper_corner = [0]>) { return }

// -----

// expected-error @+1 {{an im2col atom needs 1..3 lower_corner and as many upper_corner offsets, got 0 and 0}}
func.func @f(%a: !nvtma.tma_atom<im2col_load, f16, box = [128, 64]>) { return }

// -----

// expected-error @+1 {{an im2col atom needs 1..3 lower_corner and as many upper_corner offsets, got 2 and 1}}
func.func @f(%a: !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [0, 0], upper_corner = [0]>) { return }

// -----

// expected-error @+1 {{lower_corner / upper_corner are for im2col atoms}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 64], lower_corner = [0], upper_corner = [0]>) { return }

// -----

// expected-error @+1 {{a gather4 box is [4, columns] (2-D, four rows)}}
func.func @f(%a: !nvtma.tma_atom<gather4_load, bf16, box = [8, 64]>) { return }

// -----

// expected-error @+1 {{box-dim-range: box dim 0 is 512 elements, the range is 1..256 (descriptor dims count from the innermost: tensor dim 1)}}
func.func @f(%a: !nvtma.tma_atom<load, i8, box = [64, 512]>) { return }

// -----

// expected-error @+1 {{box-dim-range: box dim 1 is 300 elements, the range is 1..256 (descriptor dims count from the innermost: tensor dim 0)}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [300, 64]>) { return }

// -----

// expected-error @+1 {{box-inner-bytes: the inner box is 8 bytes, not a multiple of 16}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 4]>) { return }

// -----

// expected-error @+1 {{box-inner-bytes: the inner box is 24 bytes, not a multiple of 16}}
func.func @f(%a: !nvtma.tma_atom<load, f32, box = [2, 16, 6], interleave = interleave_16b>) { return }

// -----

// expected-error @+1 {{element-stride-range: element stride 0 is 9, the range is 1..8 (descriptor dims count from the innermost: tensor dim 1)}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 64], element_strides = [1, 9]>) { return }

// -----

// expected-error @+1 {{element-stride-range: element stride 1 is 0, the range is 1..8 (descriptor dims count from the innermost: tensor dim 0)}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 64], element_strides = [0, 1]>) { return }

// -----

// expected-error @+1 {{swizzle-span: the inner box is 128 bytes, swizzle 32B spans only 32}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_32b>) { return }

// -----

// expected-error @+1 {{swizzle-span: the inner box is 256 bytes, swizzle 128B spans only 128}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [64, 128], swizzle = swizzle_128b>) { return }

// -----

// expected-error @+1 {{swizzle-span: the inner box is 128 bytes, swizzle 64B spans only 64}}
func.func @f(%a: !nvtma.tma_atom<load, f32, box = [8, 32], swizzle = swizzle_64b>) { return }

// -----

// expected-error @+1 {{oob-fill-data-type: NaN out-of-bounds fill needs a floating-point type, data type is INT32}}
func.func @f(%a: !nvtma.tma_atom<load, i32, box = [8, 32], oob_fill = nan_request_zero_fma>) { return }

// -----

// expected-error @+1 {{oob-fill-data-type: NaN out-of-bounds fill needs a floating-point type, data type is UINT8}}
func.func @f(%a: !nvtma.tma_atom<load, f8E4M3FN, box = [8, 32], oob_fill = nan_request_zero_fma>) { return }

// -----

// expected-error @+1 {{interleave-rank: rank is 2, an interleaved layout needs rank >= 3}}
func.func @f(%a: !nvtma.tma_atom<load, f16, box = [8, 16], interleave = interleave_16b>) { return }

// -----

// expected-error @+1 {{box-shared-memory: one box fills 262144 bytes of shared memory, the limit is 233472}}
func.func @f(%a: !nvtma.tma_atom<load, f32, box = [256, 256]>) { return }

// -----

// expected-error @+1 {{box-shared-memory: one box fills 262144 bytes of shared memory, the limit is 233472}}
func.func @f(%a: !nvtma.tma_atom<im2col_load, f16, box = [1024, 128], lower_corner = [0], upper_corner = [0]>) { return }

// -----

// expected-error @+1 {{channels-per-pixel-range: channels per pixel is 512, the range is 1..256}}
func.func @f(%a: !nvtma.tma_atom<im2col_load, i8, box = [64, 512], lower_corner = [0], upper_corner = [0]>) { return }

// -----

// expected-error @+1 {{pixels-per-column-range: pixels per column is 2048, the range is 1..1024}}
func.func @f(%a: !nvtma.tma_atom<im2col_load, f16, box = [2048, 8], lower_corner = [0], upper_corner = [0]>) { return }

// -----

// expected-error @+1 {{corner-range: lower corner 0 is 200, rank 4 allows -128..127}}
func.func @f(%a: !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [200, 0], upper_corner = [0, 0]>) { return }

// -----

// expected-error @+1 {{corner-range: upper corner 2 is 16, rank 5 allows -16..15}}
func.func @f(%a: !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [0, 0, 0], upper_corner = [0, 0, 16]>) { return }

// -----

// expected-error @+1 {{corner-range: lower corner 0 is -32769, rank 3 allows -32768..32767}}
func.func @f(%a: !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [-32769], upper_corner = [0]>) { return }

// -----

// expected-error @+1 {{box-inner-bytes: the inner box is 8 bytes, not a multiple of 16}}
func.func @f(%a: !nvtma.tma_atom<im2col_load, f16, box = [128, 4], lower_corner = [0], upper_corner = [0]>) { return }

// -----

// expected-error @+1 {{box-dim-packed: box dim 0 is 64, a 16-byte-aligned packed type needs 128}}
func.func @f(%a: !nvtma.tma_atom<load, i4, tma_format = u4x16_align16b, box = [16, 64]>) { return }

// -----

// expected-error @+1 {{swizzle-packed: swizzle 5 is not one 16U6_ALIGN16B supports (none, 128B, 128B_ATOM_32B, 128B_ATOM_64B)}}
func.func @f(%a: !nvtma.tma_atom<load, i6, tma_format = u6x16_align16b, box = [16, 128], swizzle = swizzle_128b_atom_32b_flip_8b>) { return }

// -----

// expected-error @+1 {{swizzle-packed: swizzle 6 is not one 16U4_ALIGN16B supports (none, 128B, 128B_ATOM_32B)}}
func.func @f(%a: !nvtma.tma_atom<load, i4, tma_format = u4x16_align16b, box = [16, 128], swizzle = swizzle_128b_atom_64b>) { return }

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<128x100xf16>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{global-stride-align: global stride 0 is 200 bytes, not a multiple of 16 (the stride of tensor dim 0)}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<128x100xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<64x64xi8, strided<[1099511627776, 1]>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{global-stride-range: global stride 0 is 1099511627776 bytes, the limit is below 2^40 (the stride of tensor dim 0)}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<64x64xi8, strided<[1099511627776, 1]>> -> !nvtma.tma_atom<load, i8, box = [64, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<8589934592x64xf16>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{global-dim-range: global dim 1 is 8589934592, the range is 1..2^32 (descriptor dims count from the innermost: tensor dim 0)}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<8589934592x64xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

// A dim the driver encodes (up to 2^32) but no TMA coordinate (signed 32-bit)
// reaches the end of: refused, as the launch refuses a dynamic one.
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<2147483648x64xf16>) kernel {
    // expected-error @+1 {{coordinate-range: tensor dim 0 is 2147483648 elements, the limit is 2^31 - 1; TMA copies take signed 32-bit coordinates, none reaches element 2^31 of a dim}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<2147483648x64xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %B: memref<64x2147483648xf16>, %p: !llvm.ptr<1>) kernel {
    // expected-error @+1 {{coordinate-range: tensor dim 1 is 2147483648 elements}}
    nvtma.update_tma_descriptor %a, %B, %p : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x2147483648xf16>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
  gpu.func @k(%A: memref<64x192xi4>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{global-dim-packed: global dim 0 is 192, a 16-byte-aligned packed type needs a multiple of 128}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 16, 128>} : memref<64x192xi4> -> !nvtma.tma_atom<load, i4, tma_format = u4x16_align16b, box = [16, 128]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%X: memref<2x4x64xf16>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{im2col-box-area: the pixel box along dim 1 is empty (-16 = int32(dim 4 + upper -10) - lower 10)}}
    %a = nvtma.make_tiled_tma_atom %X {cta_tiler = array<i64: 128, 64>} : memref<2x4x64xf16> -> !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [10], upper_corner = [-10]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<64x256xi4>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{data-type-arch: packed data type 16U4_ALIGN16B needs sm_100, the target is sm_90}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 16, 128>} : memref<64x256xi4> -> !nvtma.tma_atom<load, i4, tma_format = u4x16_align16b, box = [16, 128]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{needs sm_100 or newer}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64], cta_group = 2>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{swizzle-arch: 128B-atom swizzle 4 needs sm_100, the target is sm_90}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b_atom_32b>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf32>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{tensor element type 'f32' differs from the atom's 'f16'}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf32> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf16, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{tensor must be in global memory}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16, #gpu.address_space<workgroup>> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<4x256x256xf16>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{tensor has rank 3, the atom describes rank 2}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<4x256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf16, strided<[1024, 2]>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{the innermost tensor dim must be contiguous (stride 1), its stride is 2}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16, strided<[1024, 2]>> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{cta_tiler [128, 64] differs from the atom's tile [64, 64]}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 128, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{box [32, 128] is not the TMA box of tile [64, 128] (multicast 1, swizzle none): expected [64, 128]}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 128>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [32, 128], tile = [64, 128]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{box [64, 64] is not the TMA box of tile [64, 128] (multicast 1, swizzle none): expected [64, 128]}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 128>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64], tile = [64, 128]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{multicast-slice: tile dim 0 is 60, a multicast atom's is box dim 0 (60) times multicast (8)}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 60, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load_multicast, f16, box = [60, 64], tile = [60, 64], multicast = 8>
    gpu.return
  }
}

// -----

// A multicast tile whose dim 0 is more than the CTAs' slices: rows no CTA would load.
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  // expected-error @+1 {{multicast-slice: tile dim 0 is 512, a multicast atom's is box dim 0 (128) times multicast (2)}}
  gpu.func @k(%a: !nvtma.tma_atom<load_multicast, f16, box = [128, 64], tile = [512, 64], multicast = 2>) kernel {
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %s: memref<64x64xf16, #gpu.address_space<workgroup>>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{has 1 coordinates, load of a rank-2 tensor needs 2}}
    nvtma.copy %a[%c0], %s, barrier %b[%c0] : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %s: memref<64x64xf16>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{smem must be in workgroup (shared) memory}}
    nvtma.copy %a[%c0, %c0], %s, barrier %b[%c0] : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x64xf16>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %s: memref<64x64xbf16, #gpu.address_space<workgroup>>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{smem element type 'bf16' differs from the atom's 'f16'}}
    nvtma.copy %a[%c0, %c0], %s, barrier %b[%c0] : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x64xbf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %s: memref<32x64xf16, #gpu.address_space<workgroup>>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{smem shape [32, 64] differs from the atom's tile [64, 64]}}
    nvtma.copy %a[%c0, %c0], %s, barrier %b[%c0] : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<32x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %s: memref<64x64xf16, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{a load completes on an mbarrier: give `barrier`}}
    nvtma.copy %a[%c0, %c0], %s : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x64xf16, #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<store, f16, box = [64, 64]>, %s: memref<64x64xf16, #gpu.address_space<workgroup>>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{a store joins a bulk group and takes no mbarrier}}
    nvtma.copy %a[%c0, %c0], %s, barrier %b[%c0] : !nvtma.tma_atom<store, f16, box = [64, 64]>, memref<64x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

// A tiled copy starts each row on 16 bytes: a constant innermost coordinate off it is refused (f16 column 4: 8 bytes).
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %s: memref<64x64xf16, #gpu.address_space<workgroup>>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    // expected-error @+1 {{innermost coordinate 4 is 8 bytes into a row: a tiled TMA copy starts each row on 16 bytes (a multiple of 8 'f16' elements)}}
    nvtma.copy %a[%c0, %c4], %s, barrier %b[%c0] : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<store, f32, box = [8, 32]>, %s: memref<8x32xf32, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %c13 = arith.constant 13 : index
    // expected-error @+1 {{innermost coordinate 13 is 52 bytes into a row}}
    nvtma.copy %a[%c0, %c13], %s : !nvtma.tma_atom<store, f32, box = [8, 32]>, memref<8x32xf32, #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %s: memref<64x64xf16, #gpu.address_space<workgroup>>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+2 {{mask is for multicast atoms}}
    %m = arith.constant 3 : i16
    nvtma.copy %a[%c0, %c0], %s, barrier %b[%c0] mask %m : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 64], multicast = 2>, %s: memref<64x64xf16, #gpu.address_space<workgroup>>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{a multicast load needs its CTA `mask` and its rank in the multicast group (`cta`)}}
    nvtma.copy %a[%c0, %c0], %s, barrier %b[%c0] : !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 64], multicast = 2>, memref<64x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %s: memref<64x64xf16, #gpu.address_space<workgroup>>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{cta rank is only for multicast atoms}}
    nvtma.copy %a[%c0, %c0], %s, barrier %b[%c0] cta %c0 : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [-1, -1], upper_corner = [-1, -1]>, %s: memref<128x64xf16, #gpu.address_space<workgroup>>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{has 0 im2col offsets, expected 2}}
    nvtma.copy %a[%c0, %c0, %c0, %c0], %s, barrier %b[%c0] : !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [-1, -1], upper_corner = [-1, -1]>, memref<128x64xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<gather4_load, bf16, box = [4, 64]>, %s: memref<4x64xbf16, #gpu.address_space<workgroup>>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{needs sm_100 or newer}}
    nvtma.copy %a[%c0, %c0, %c0, %c0, %c0], %s, barrier %b[%c0] : !nvtma.tma_atom<gather4_load, bf16, box = [4, 64]>, memref<4x64xbf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{has 1 tile coordinates, the atom's tile has 2 dims}}
    %c:1 = nvtma.tma_partition %a[%c0] : !nvtma.tma_atom<load, f16, box = [64, 64]> -> index
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k() kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{cluster_shape [4, 8] holds more than 16 CTAs, a multicast mask covers at most 16}}
    %m = nvtma.create_tma_multicast_mask [%c0, %c0] {cluster_shape = array<i64: 4, 8>, mode = 0 : i64} : i16
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k() kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{has 1 CTA coordinates, cluster_shape has 2 dims}}
    %m = nvtma.create_tma_multicast_mask [%c0] {cluster_shape = array<i64: 2, 2>, mode = 0 : i64} : i16
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k() kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{mode 2 is not a dim of cluster_shape [2, 2]}}
    %m = nvtma.create_tma_multicast_mask [%c0, %c0] {cluster_shape = array<i64: 2, 2>, mode = 2 : i64} : i16
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k() kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{cluster_shape [2, 0] has a non-positive dim}}
    %m = nvtma.create_tma_multicast_mask [%c0, %c0] {cluster_shape = array<i64: 2, 0>, mode = 0 : i64} : i16
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %B: memref<?xf16>, %p: !llvm.ptr<1>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{tensor has rank 1, the atom describes rank 2}}
    nvtma.update_tma_descriptor %a, %B, %p : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<?xf16>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %B: memref<?x?xf16>, %p: !llvm.ptr<1>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{tensormap.replace needs sm_90a (an architecture-specific target), the gpu.module targets sm_90}}
    nvtma.update_tma_descriptor %a, %B, %p : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<?x?xf16>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %B: memref<?x?xf32>, %p: !llvm.ptr<1>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{tensor element type 'f32' differs from the atom's 'f16'}}
    nvtma.update_tma_descriptor %a, %B, %p : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<?x?xf32>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %p: !llvm.ptr<5>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{operand #1 must be pointer to a 128-byte descriptor}}
    nvtma.copy_tensormap %a, %p : !nvtma.tma_atom<load, f16, box = [64, 64]>, !llvm.ptr<5>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+2 {{g2s copies !llvm.ptr<1> to !llvm.ptr<3>, got '!llvm.ptr<3>' to '!llvm.ptr<1>'}}
    %n = arith.constant 64 : i32
    nvtma.bulk_copy g2s %g, %s, %n, barrier %b[%c0] : !llvm.ptr<1>, !llvm.ptr<3>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+2 {{g2s completes on a local mbarrier: give `barrier`}}
    %n = arith.constant 64 : i32
    nvtma.bulk_copy g2s %s, %g, %n : !llvm.ptr<3>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+2 {{s2g takes no local mbarrier}}
    %n = arith.constant 64 : i32
    nvtma.bulk_copy s2g %g, %s, %n, barrier %b[%c0] : !llvm.ptr<1>, !llvm.ptr<3>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+2 {{g2s_multicast needs `mask`}}
    %n = arith.constant 64 : i32
    nvtma.bulk_copy g2s_multicast %s, %g, %n, barrier %b[%c0] : !llvm.ptr<3>, !llvm.ptr<1>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+3 {{s2g_bytemask (.cp_mask) needs sm_100, the gpu.module targets sm_90}}
    %n = arith.constant 64 : i32
    %m = arith.constant 255 : i16
    nvtma.bulk_copy s2g_bytemask %g, %s, %n mask %m : !llvm.ptr<1>, !llvm.ptr<3>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%c: !llvm.ptr<7>, %s: !llvm.ptr<3>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+2 {{s2s_cluster completes on the peer CTA's mbarrier: give `remote_barrier`}}
    %n = arith.constant 64 : i32
    nvtma.bulk_copy s2s_cluster %c, %s, %n : !llvm.ptr<7>, !llvm.ptr<3>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+2 {{size is 40 bytes, it must be a positive multiple of 16}}
    %n = arith.constant 40 : i32
    nvtma.bulk_copy s2g %g, %s, %n : !llvm.ptr<1>, !llvm.ptr<3>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{cache mode global (cp.async.cg) copies 16 bytes, size is 8}}
    nvtma.cp_async %s, %g {size = 8 : i32, cache_mode = #nvtma.load_cache_mode<cache_global>} : !llvm.ptr<3>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{attribute 'size' failed to satisfy constraint}}
    nvtma.cp_async %s, %g {size = 3 : i32} : !llvm.ptr<3>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%m: memref<4x4xf16, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{has 1 indices for a rank-2 memref}}
    %p = nvtma.address_of %m[%c0] : memref<4x4xf16, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%m: memref<4xf16, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{result pointer is in address space 1, the memref's memory space is #gpu.address_space<workgroup>}}
    %p = nvtma.address_of %m[%c0] : memref<4xf16, #gpu.address_space<workgroup>> -> !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %s: memref<64x64xf16, strided<[128, 1]>, #gpu.address_space<workgroup>>,
              %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{smem must be dense row-major (the TMA writes it densely), its layout is strided<[128, 1]>}}
    nvtma.copy %a[%c0, %c0], %s, barrier %b[%c0] : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x64xf16, strided<[128, 1]>, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64], tile = [64, 128]>, %s: memref<64x128xf16, #gpu.address_space<workgroup>>,
              %b: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{tile [64, 128] is split into boxes [64, 64] along inner dims, which the TMA writes one after another: give smem the blocked shape [2, 64, 64]}}
    nvtma.copy %a[%c0, %c0], %s, barrier %b[%c0] : !nvtma.tma_atom<load, f16, box = [64, 64], tile = [64, 128]>, memref<64x128xf16, #gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

// fillParams read an uninitialized extent for im2col atoms with packed
// formats: this input reported "global dim 0 is <a different huge number>"
// on every run (issue 15). The atom is valid; the tensor's element type is
// what is wrong.
gpu.module @m [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
  gpu.func @k(%A: memref<64x64x64x64xi8>) kernel {
    // expected-error @+1 {{tensor element type 'i8' differs from the atom's 'i4'}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<64x64x64x64xi8> -> !nvtma.tma_atom<im2col_load, i4, tma_format = u4x16_align8b, box = [64, 64], lower_corner = [0, 0], upper_corner = [0, 0]>
    gpu.return
  }
}

// -----

// The same read, 16-byte-aligned packed formats (issue 16).
// expected-error @+1 {{box-dim-packed: channels per pixel is 64, a 16-byte-aligned packed type needs 128}}
func.func @f(%a: !nvtma.tma_atom<im2col_load, i4, tma_format = u4x16_align16b, box = [64, 64], lower_corner = [0, 0], upper_corner = [0, 0]>) { return }

// -----

// expected-error @+1 {{box-dim-packed: channels per pixel is 64, a 16-byte-aligned packed type needs 128}}
func.func @f(%a: !nvtma.tma_atom<im2col_load, i6, tma_format = u6x16_align16b, box = [64, 64], lower_corner = [0, 0], upper_corner = [0, 0]>) { return }

// -----

gpu.module @m [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
  gpu.func @k(%A: memref<8x64x64x100xi4>) kernel {
    // expected-error @+1 {{global-dim-packed: global dim 0 is 100, a 16-byte-aligned packed type needs a multiple of 128}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 128>} : memref<8x64x64x100xi4> -> !nvtma.tma_atom<im2col_load, i4, tma_format = u4x16_align16b, box = [64, 128], lower_corner = [0, 0], upper_corner = [0, 0]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<store, f16, box = [64, 64]>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{prefetches the tiles of tile-mode load atoms, not of a store atom}}
    nvtma.prefetch %a[%c0, %c0] : !nvtma.tma_atom<store, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{has 1 coordinates, a rank-2 tensor needs 2}}
    nvtma.prefetch %a[%c0] : !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 64], multicast = 2>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{a multicast atom's CTA prefetches its slice of the tile: give its rank (`cta`)}}
    nvtma.prefetch %a[%c0, %c0] : !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 64], multicast = 2>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{cta rank is only for multicast atoms}}
    nvtma.prefetch %a[%c0, %c0] cta %c0 : !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

// What the tensor's type fixes is checked against the driver's rules when
// the op is built: here a row pitch of 200 bytes.
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %B: memref<64x100xf16>, %p: !llvm.ptr<1>) kernel {
    // expected-error @+1 {{global stride 0 is 200 bytes, not a multiple of 16 (the stride of tensor dim 0)}}
    nvtma.update_tma_descriptor %a, %B, %p : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x100xf16>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>, %B: memref<?x?xf16>, %p: !llvm.ptr<1>) kernel {
    %v = memref.subview %B[0, 0] [64, 0] [1, 1] : memref<?x?xf16> to memref<64x0xf16, strided<[?, 1]>>
    // expected-error @+1 {{global dim 0 is 0, the range is 1..2^32 (descriptor dims count from the innermost: tensor dim 1)}}
    nvtma.update_tma_descriptor %a, %v, %p : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x0xf16, strided<[?, 1]>>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// gather4 and cta_group::2 copies: LLVM selects them only for the sm_100 and
// sm_110 families' a/f chips; plain sm_100 (and sm_12x) ended the process in
// instruction selection.
gpu.module @m [#nvvm.target<chip = "sm_100", features = "+ptx86">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    // expected-error @+1 {{gather4 TMA copies need an sm_100 or sm_110 family target with the a or f suffix (sm_100a, sm_100f, sm_103a, sm_110f ...), the target is sm_100}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 4, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<gather4_load, f16, box = [4, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_120a", features = "+ptx87">] {
  gpu.func @k(%A: memref<256x64xbf16>) kernel {
    // expected-error @+1 {{cta_group::2 TMA copies need an sm_100 or sm_110 family target with the a or f suffix (sm_100a, sm_100f, sm_103a, sm_110f ...), the target is sm_120 (a/f)}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 128, 64>} : memref<256x64xbf16> -> !nvtma.tma_atom<load, bf16, box = [128, 64], swizzle = swizzle_128b, cta_group = 2>
    gpu.return
  }
}

// -----

// tensormap.replace writes the tensor's address as a global one: a shared
// buffer was taken (a shared-window address in the descriptor).
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%a: !nvtma.tma_atom<load, f32, box = [32, 32]>, %p: !llvm.ptr<1>) workgroup(%s: memref<64x64xf32, #gpu.address_space<workgroup>>) kernel {
    // expected-error @+1 {{tensor must be in global memory, its memory space is #gpu.address_space<workgroup>}}
    nvtma.update_tma_descriptor %a, %s, %p : !nvtma.tma_atom<load, f32, box = [32, 32]>, memref<64x64xf32, #gpu.address_space<workgroup>>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// An integer memory space past 64 bits: reading it asserted (APInt::getSExtValue).
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%s: memref<64xf16, 1180591620717411303424 : i128>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{result pointer is in address space 3, the memref's memory space is 1180591620717411303424 : i128}}
    %p = nvtma.address_of %s[%c0] : memref<64xf16, 1180591620717411303424 : i128> -> !llvm.ptr<3>
    gpu.return
  }
}

// -----

// nvtma.link lists device library names.
module attributes {gpu.container_module} {
  // expected-error @+1 {{nvtma.link must list device library names (non-empty strings, like "nvshmem"), got ["nvshmem", 3 : i32]}}
  gpu.module @kernels attributes {nvtma.link = ["nvshmem", 3 : i32]} {
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{nvtma.link must list device library names (non-empty strings, like "nvshmem"), got [""]}}
  gpu.module @kernels attributes {nvtma.link = [""]} {
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{nvtma.link must list device library names (non-empty strings, like "nvshmem"), got []}}
  gpu.module @kernels attributes {nvtma.link = []} {
  }
}

// -----

// expected-error @+1 {{nvtma.link belongs on a gpu.module (the device libraries linked into it), not on 'func.func'}}
func.func @f() attributes {nvtma.link = ["nvshmem"]} {
  return
}

// -----

func.func @wgmma_acc(%acc: !llvm.struct<(f32, f32)>, %a: vector<4xi32>, %b: i64, %d: i1) {
  // expected-error @+1 {{acc '!llvm.struct<(f32, f32)>': a 64 x 8 tile of f32 accumulators is a struct of 4 f32}}
  %r = nvtma.wgmma_mma_async_rs %acc, %a, %b, %d {n = 8 : i32, type_a = #nvtma.wgmma_type<bf16>, type_b = #nvtma.wgmma_type<bf16>} : !llvm.struct<(f32, f32)>, vector<4xi32>
  return
}

// -----

func.func @wgmma_n(%acc: !llvm.struct<(f32, f32, f32, f32, f32, f32)>, %a: vector<4xi32>, %b: i64, %d: i1) {
  // expected-error @+1 {{n = 12: a multiple of 8 in [8, 256]}}
  %r = nvtma.wgmma_mma_async_rs %acc, %a, %b, %d {n = 12 : i32, type_a = #nvtma.wgmma_type<bf16>, type_b = #nvtma.wgmma_type<bf16>} : !llvm.struct<(f32, f32, f32, f32, f32, f32)>, vector<4xi32>
  return
}

// -----

func.func @wgmma_pair(%acc: !llvm.struct<(f32, f32, f32, f32)>, %a: vector<4xi32>, %b: i64, %d: i1) {
  // expected-error @+1 {{operand types bf16 and e4m3 do not pair (f16, bf16 and tf32 with themselves, fp8 with fp8)}}
  %r = nvtma.wgmma_mma_async_rs %acc, %a, %b, %d {n = 8 : i32, type_a = #nvtma.wgmma_type<bf16>, type_b = #nvtma.wgmma_type<e4m3>} : !llvm.struct<(f32, f32, f32, f32)>, vector<4xi32>
  return
}

// -----

func.func @wgmma_scale(%acc: !llvm.struct<(f32, f32, f32, f32)>, %a: vector<4xi32>, %b: i64, %d: i1) {
  // expected-error @+1 {{attribute 'scale_a' failed to satisfy constraint}}
  %r = nvtma.wgmma_mma_async_rs %acc, %a, %b, %d {n = 8 : i32, type_a = #nvtma.wgmma_type<f16>, type_b = #nvtma.wgmma_type<f16>, scale_a = 2 : i32} : !llvm.struct<(f32, f32, f32, f32)>, vector<4xi32>
  return
}

// -----

func.func @red_f32_result(%g: !llvm.ptr<1>, %f: vector<2xf32>) {
  // expected-error @+1 {{of 'vector<2xf32>' has no result: the f32 vector forms are reductions (red), which return nothing}}
  %o = nvtma.vector_atomic_add %g, %f : !llvm.ptr<1>, vector<2xf32> -> vector<2xf32>
  return
}

// -----

func.func @red_f32_shared(%s: !llvm.ptr<3>, %f: vector<4xf32>) {
  // expected-error @+1 {{of 'vector<4xf32>' needs a global pointer (!llvm.ptr<1>): the vector red forms are .global only, got '!llvm.ptr<3>'}}
  nvtma.vector_atomic_add %s, %f : !llvm.ptr<3>, vector<4xf32>
  return
}

// -----

func.func @atomic_result_type(%g: !llvm.ptr<1>, %h: vector<2xf16>) {
  // expected-error @+1 {{result 'vector<2xbf16>' is not the value's type 'vector<2xf16>'}}
  %o = nvtma.vector_atomic_add %g, %h : !llvm.ptr<1>, vector<2xf16> -> vector<2xbf16>
  return
}

// -----

func.func @atomic_type(%g: !llvm.ptr<1>, %h: vector<4xf16>) {
  // expected-error @+1 {{operand #1 must be}}
  nvtma.vector_atomic_add %g, %h : !llvm.ptr<1>, vector<4xf16>
  return
}

// -----

// Scalable and multi-dimensional vectors have no register image the
// lowerings could bitcast or take lanes from.
func.func @atomic_scalable(%g: !llvm.ptr<1>, %h: vector<[2]xf16>) {
  // expected-error @+1 {{operand #1 must be}}
  nvtma.vector_atomic_add %g, %h : !llvm.ptr<1>, vector<[2]xf16>
  return
}

// -----

func.func @atomic_2d(%g: !llvm.ptr<1>, %h: vector<1x2xf16>) {
  // expected-error @+1 {{operand #1 must be}}
  nvtma.vector_atomic_add %g, %h : !llvm.ptr<1>, vector<1x2xf16>
  return
}

// -----

func.func @wgmma_scalable(%acc: !llvm.struct<(f32, f32, f32, f32)>, %a: vector<[4]xi32>, %b: i64, %d: i1) {
  // expected-error @+1 {{operand #1 must be}}
  %r = nvtma.wgmma_mma_async_rs %acc, %a, %b, %d {n = 8 : i32, type_a = #nvtma.wgmma_type<bf16>, type_b = #nvtma.wgmma_type<bf16>} : !llvm.struct<(f32, f32, f32, f32)>, vector<[4]xi32>
  return
}

// -----

func.func @dsmem_store_scalable(%v: vector<[2]xi32>, %p: !llvm.ptr<7>) {
  // expected-error @+1 {{operand #0 must be}}
  nvtma.dsmem_store %v, %p, %p : vector<[2]xi32>, !llvm.ptr<7>, !llvm.ptr<7>
  return
}

// -----

func.func @barrier_id() {
  %id = arith.constant 16 : i32
  // expected-error @+1 {{'nvtma.barrier_sync' op barrier id 16 is not 0-15 (a CTA has 16 named barriers)}}
  nvtma.barrier_sync %id
  return
}

// -----

func.func @barrier_count(%id: i32) {
  %n = arith.constant 100 : i32
  // expected-error @+1 {{'nvtma.barrier_sync' op thread count 100 is not a multiple of 32 (whole warps) in [32, 1024]}}
  nvtma.barrier_sync %id, %n
  return
}

// -----

func.func @float_fn_arity(%x: f32) {
  // expected-error @+1 {{'nvtma.float_fn' op div_approx takes 2 operand(s), got 1}}
  %q = nvtma.float_fn <div_approx> %x : f32
  return
}

// -----

func.func @float_fn_f64(%d: f64) {
  // expected-error @+1 {{'nvtma.float_fn' op ex2_approx is f32 only in PTX (f64: sqrt_rn and rsqrt_approx), got 'f64'}}
  %e = nvtma.float_fn <ex2_approx> %d : f64
  return
}

// -----

func.func @float_fn_f16(%h: f16) {
  // expected-error @+1 {{must be variadic of 32-bit float or 64-bit float}}
  %e = nvtma.float_fn <ex2_approx> %h : f16
  return
}

// -----

func.func @fptoint_lanes(%v: vector<4xf32>) {
  // expected-error @+1 {{'nvtma.fptoint_sat' op of 'vector<4xf32>' to 'vector<2xi8>': the lane counts differ}}
  %i = nvtma.fptoint_sat %v : vector<4xf32> to vector<2xi8>
  return
}

// -----

func.func @fptoint_scalar_to_vector(%x: f32) {
  // expected-error @+1 {{the lane counts differ}}
  %i = nvtma.fptoint_sat %x : f32 to vector<1xi32>
  return
}

// -----

func.func @fptoint_f16(%h: f16) {
  // expected-error @+1 {{operand #0 must be}}
  %i = nvtma.fptoint_sat %h : f16 to i32
  return
}
