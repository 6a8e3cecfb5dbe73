// RUN: nvtma-opt %s -nvtma-write-kernel-records -split-input-file -verify-diagnostics | FileCheck %s

// The records come from typed IR: each parameter (memrefs with shape,
// strides and offset; scalars; descriptors with every static field of their
// #nvtma.descriptor and, for a static tensor, the bytes with address 0) and
// the launch configuration (contracts.md item 1).
// CHECK: nvtma.kernels = "{\22kernels\22:{\22k\22:{
// CHECK-SAME: \22launch\22:{\22block\22:[128,1,1],\22cluster\22:[2,1,1],\22smem\22:9216}
// CHECK-SAME: \22module\22:\22m\22
// CHECK-SAME: \22params\22:[{\22element\22:\22f16\22,\22element_bits\22:16,\22kind\22:\22memref\22,\22offset\22:0,\22shape\22:[256,512],\22strides\22:[512,1],\22type\22:\22memref<256x512xf16>\22}
// CHECK-SAME: {\22bits\22:32,\22kind\22:\22scalar\22,\22signed\22:true,\22type\22:\22i32\22}
// CHECK-SAME: {\22atom\22:\22!nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 64], l2_promotion = l2_256b, multicast = 2>\22,\22binds\22:0,\22box_bytes\22:4096,\22box_dim\22:[64,32],
// CHECK-SAME: \22kind\22:\22descriptor\22,\22l2_promotion\22:3,\22l2_promotion_name\22:\22l2_256b\22,\22mode\22:\22tiled\22,\22oob_fill\22:0,\22rank\22:2,\22swizzle\22:0,\22template\22:\22000000000000000010{{[0-9a-f]+}}\22,\22tile_bytes\22:8192,\22tma_format\22:6,\22tma_format_name\22:\22float16\22}]}
// CHECK-SAME: \22version\22:1}
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%A: memref<256x512xf16>, %n: i32,
              %d: !llvm.ptr {llvm.align = 64 : i64, nvtma.descriptor = #nvtma.descriptor<binds = 0, atom = !nvtma.tma_atom<load_multicast, f16, box = [32, 64], tile = [64, 64], l2_promotion = l2_256b, multicast = 2>>})
      kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_cluster_size = array<i32: 2, 1, 1>, nvtma.dynamic_smem = 9216 : i64} {
    gpu.return
  }
}

// -----

// Without launch attributes: null block and cluster, no dynamic shared
// memory. A dynamic tensor has no template.
// CHECK: \22launch\22:{\22block\22:null,\22cluster\22:null,\22smem\22:0}
// CHECK-SAME: \22shape\22:[null,64],\22strides\22:[64,1]
// CHECK-SAME: \22template\22:null
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%A: memref<?x64xf32>,
              %d: !llvm.ptr {llvm.align = 64 : i64, nvtma.descriptor = #nvtma.descriptor<binds = 0, atom = !nvtma.tma_atom<load, f32, box = [32, 32]>>}) kernel {
    gpu.return
  }
}

// -----

// A module without kernels gets an empty record.
// CHECK: nvtma.kernels = "{\22kernels\22:{},\22version\22:1}"
module {
}

// -----

// The records are JSON: a name that is not UTF-8 (MLIR takes any bytes) is
// an error, not llvm::json's assertion.
// expected-error @+1 {{'gpu.module' op name "m\FF" is not valid UTF-8, which the kernel records (JSON) take}}
gpu.module @"m\FF" {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{'gpu.func' op name "k\C3" is not valid UTF-8, which the kernel records (JSON) take}}
  gpu.func @"k\C3"() kernel {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{known_block_size [64, 32, 1] holds 2048 threads, the limit is 1024}}
  gpu.func @k() kernel attributes {known_block_size = array<i32: 64, 32, 1>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{known_cluster_size [4, 4, 2] holds 32 CTAs, the limit is 16}}
  gpu.func @k() kernel attributes {known_cluster_size = array<i32: 4, 4, 2>} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{nvtma.dynamic_smem is 300000 bytes, the range is 0..232448 (227 KiB)}}
  gpu.func @k() kernel attributes {nvtma.dynamic_smem = 300000 : i64} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{nvtma.dynamic_smem must be a signless integer (bytes of dynamic shared memory), got "4096"}}
  gpu.func @k() kernel attributes {nvtma.dynamic_smem = "4096"} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{descriptor parameter 1 binds argument 1, which is not a memref parameter}}
  gpu.func @k(%n: i32, %d: !llvm.ptr {nvtma.descriptor = #nvtma.descriptor<binds = 1, atom = !nvtma.tma_atom<load, f32, box = [32, 32]>>}) kernel {
    gpu.return
  }
}

// -----

// A kernel written for programmatic dependent launch says so in its record.
// CHECK: \22launch\22:{\22block\22:[128,1,1],\22cluster\22:null,\22pdl\22:true,\22smem\22:0}
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvtma.pdl} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{nvtma.pdl is a unit attribute (the kernel is launched with programmatic dependent launch), got true}}
  gpu.func @k() kernel attributes {nvtma.pdl = true} {
    gpu.return
  }
}

// -----

// A kernel whose work split holds only up to some number of CTAs says so; the
// launch refuses larger grids.
// CHECK: \22launch\22:{\22block\22:[64,1,1],\22cluster\22:null,\22max_grid\22:4294967295,\22smem\22:0}
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 64, 1, 1>, nvtma.max_grid = 4294967295 : i64} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{nvtma.max_grid is 0, a grid's CTA limit is at least 1}}
  gpu.func @k() kernel attributes {nvtma.max_grid = 0 : i64} {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{nvtma.max_grid must be a signless integer (the most CTAs a grid may have), got 1.000000e+00 : f32}}
  gpu.func @k() kernel attributes {nvtma.max_grid = 1.0 : f32} {
    gpu.return
  }
}

// -----

// An integer scalar records whether it takes signed values, which bounds a
// Python int at launch: signless is signed unless nvtma.unsigned marks it (the
// DSL's Uint types, Boolean); an explicitly signed or unsigned type says it
// itself; an i1 is a bool (0 or 1); a float has no sign to record.
// CHECK: \22params\22:[{\22bits\22:32,\22kind\22:\22scalar\22,\22signed\22:true,\22type\22:\22i32\22}
// CHECK-SAME: {\22bits\22:32,\22kind\22:\22scalar\22,\22signed\22:false,\22type\22:\22i32\22}
// CHECK-SAME: {\22bits\22:64,\22kind\22:\22scalar\22,\22signed\22:true,\22type\22:\22index\22}
// CHECK-SAME: {\22bits\22:8,\22kind\22:\22scalar\22,\22signed\22:false,\22type\22:\22ui8\22}
// CHECK-SAME: {\22bits\22:16,\22kind\22:\22scalar\22,\22signed\22:true,\22type\22:\22si16\22}
// CHECK-SAME: {\22bits\22:1,\22kind\22:\22scalar\22,\22signed\22:false,\22type\22:\22i1\22}
// CHECK-SAME: {\22bits\22:32,\22kind\22:\22scalar\22,\22type\22:\22f32\22}]
gpu.module @m {
  gpu.func @k(%n: i32, %u: i32 {nvtma.unsigned}, %i: index, %b: ui8, %s: si16,
              %flag: i1, %f: f32) kernel {
    gpu.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{nvtma.unsigned on parameter 1 of type 'f32', which cannot hold an unsigned value}}
  gpu.func @k(%n: i32, %f: f32 {nvtma.unsigned}) kernel {
    gpu.return
  }
}

// -----

// A memref parameter records the alignment its kernel's accesses assume of
// its address and dynamic strides ("align", bytes), the launch checks it: the
// largest of its vector accesses' (through views of it, as written and as
// expand-strided-metadata leaves them), cp.async's size, 16 for a bulk copy or
// tensormap.replace of it (through pointers into it) and 64 for a descriptor
// kept in it. Scalar accesses record none.
// CHECK: \22params\22:[{\22align\22:16,\22element\22:\22bf16\22
// CHECK-SAME: {\22element\22:\22f32\22,
// CHECK-SAME: {\22align\22:8,\22element\22:\22i8\22
// CHECK-SAME: {\22align\22:16,\22element\22:\22i8\22
// CHECK-SAME: {\22align\22:16,\22element\22:\22f16\22
// CHECK-SAME: {\22align\22:64,\22element\22:\22i64\22
// CHECK-SAME: {\22align\22:8,\22element\22:\22f32\22
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%x: memref<?x?xbf16>, %y: memref<64xf32>, %s: memref<64xi8>,
              %d: memref<64xi8>, %b: memref<?x?xf16>, %ws: memref<16xi64>,
              %z: memref<?x?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : i32
    %sv = memref.subview %x[0, 8] [4, 8] [1, 1] : memref<?x?xbf16> to memref<4x8xbf16, strided<[?, 1], offset: 8>>
    %v = vector.load %sv[%c0, %c0] {alignment = 16 : i64} : memref<4x8xbf16, strided<[?, 1], offset: 8>>, vector<8xbf16>
    vector.store %v, %x[%c0, %c0] {alignment = 4 : i64} : memref<?x?xbf16>, vector<8xbf16>
    %f = memref.load %y[%c0] : memref<64xf32>
    memref.store %f, %y[%c0] : memref<64xf32>
    %smem = llvm.mlir.zero : !llvm.ptr<3>
    %sp = nvtma.address_of %s[%c0] : memref<64xi8> -> !llvm.ptr
    %sg = llvm.addrspacecast %sp : !llvm.ptr to !llvm.ptr<1>
    nvtma.cp_async %smem, %sg {size = 8 : i32} : !llvm.ptr<3>, !llvm.ptr<1>
    %dp = nvtma.address_of %d[%c0] : memref<64xi8> -> !llvm.ptr
    %dg = llvm.addrspacecast %dp : !llvm.ptr to !llvm.ptr<1>
    %dg16 = llvm.getelementptr %dg[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
    nvtma.bulk_copy s2g %dg16, %smem, %c16 : !llvm.ptr<1>, !llvm.ptr<3>
    %wp = nvtma.address_of %ws[%c0] : memref<16xi64> -> !llvm.ptr
    %wg = llvm.addrspacecast %wp : !llvm.ptr to !llvm.ptr<1>
    %atom = nvtma.atom_from_descriptor %wg : !llvm.ptr<1> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    nvtma.update_tma_descriptor %atom, %b, %wg : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<?x?xf16>, !llvm.ptr<1>
    %base, %off, %sizes:2, %strides:2 = memref.extract_strided_metadata %z : memref<?x?xf32> -> memref<f32>, index, index, index, index, index
    %zv = memref.reinterpret_cast %base to offset: [%off], sizes: [4, 2], strides: [%strides#0, 1] : memref<f32> to memref<4x2xf32, strided<[?, 1], offset: ?>>
    %w = vector.load %zv[%c0, %c0] {alignment = 8 : i64} : memref<4x2xf32, strided<[?, 1], offset: ?>>, vector<2xf32>
    gpu.return
  }
}

// -----

// A memref parameter that nvtma.update_tma_descriptor writes into a
// descriptor (tensormap.replace: its address, dims and byte strides, on the
// device, where no driver checks them) records the static fields of each
// such descriptor ("tensormaps", once per atom), which the launch validates
// with the tensor's: as is or through casts, which keep its shape and
// strides. Through a view that computes other dims (a subview) the launch
// cannot know what is written: no record. Parameters no update writes
// record none.
// CHECK: \22params\22:[{\22align\22:16,\22element\22:\22f16\22,{{[^}]*}}\22tensormaps\22:[
// CHECK-SAME: {\22atom\22:\22!nvtma.tma_atom<load, f16, box = [64, 64]>\22,\22box_dim\22:[64,64],\22element_bits\22:16,\22element_strides\22:[1,1],\22interleave\22:0,\22l2_promotion\22:2,\22l2_promotion_name\22:\22l2_128b\22,\22mode\22:\22tiled\22,\22oob_fill\22:0,\22rank\22:2,\22swizzle\22:0,\22tma_format\22:6,\22tma_format_name\22:\22float16\22}
// CHECK-SAME: {\22atom\22:\22!nvtma.tma_atom<load, f16, box = [64, 32], swizzle = swizzle_64b>\22,\22box_dim\22:[32,64],{{[^}]*}}\22swizzle\22:2,{{[^]]*}}}],\22type\22:\22memref<?x?xf16>\22}
// CHECK-SAME: {\22align\22:16,\22element\22:\22f16\22,{{[^}]*}}\22tensormaps\22:[{\22atom\22:\22!nvtma.tma_atom<load, f16, box = [64, 64]>\22,{{[^}]*}}}],\22type\22:\22memref<128x64xf16>\22}
// CHECK-SAME: {\22align\22:16,\22element\22:\22f16\22,{{[^}]*}},\22type\22:\22memref<?x?xf16>\22}
// CHECK-SAME: {\22element\22:\22f16\22,{{[^}]*}},\22type\22:\22memref<?x?xf16>\22}
// CHECK-SAME: {\22align\22:64,\22element\22:\22i64\22,{{[^}]*}},\22type\22:\22memref<16xi64>\22,\22writes\22:true}]
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%b: memref<?x?xf16>, %c: memref<128x64xf16>, %e: memref<?x?xf16>,
              %n: memref<?x?xf16>, %ws: memref<16xi64>) kernel {
    %c0 = arith.constant 0 : index
    %wp = nvtma.address_of %ws[%c0] : memref<16xi64> -> !llvm.ptr
    %wg = llvm.addrspacecast %wp : !llvm.ptr to !llvm.ptr<1>
    %a = nvtma.atom_from_descriptor %wg : !llvm.ptr<1> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    %s = nvtma.atom_from_descriptor %wg : !llvm.ptr<1> -> !nvtma.tma_atom<load, f16, box = [64, 32], swizzle = swizzle_64b>
    nvtma.update_tma_descriptor %a, %b, %wg : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<?x?xf16>, !llvm.ptr<1>
    nvtma.update_tma_descriptor %s, %b, %wg : !nvtma.tma_atom<load, f16, box = [64, 32], swizzle = swizzle_64b>, memref<?x?xf16>, !llvm.ptr<1>
    nvtma.update_tma_descriptor %a, %b, %wg : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<?x?xf16>, !llvm.ptr<1>
    %cc = memref.cast %c : memref<128x64xf16> to memref<?x?xf16>
    nvtma.update_tma_descriptor %a, %cc, %wg : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<?x?xf16>, !llvm.ptr<1>
    %ev = memref.subview %e[0, 0] [64, 64] [1, 1] : memref<?x?xf16> to memref<64x64xf16, strided<[?, 1]>>
    nvtma.update_tma_descriptor %a, %ev, %wg : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x64xf16, strided<[?, 1]>>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// The traces follow a parameter through region branches (a loop-carried
// memref or pointer, one an scf.if yields) and through an address taken as
// an integer (memref.extract_aligned_pointer_as_index, casts and additions,
// llvm.inttoptr); a tensor that reaches nvtma.update_tma_descriptor through
// a loop records its descriptor.
// CHECK: \22params\22:[{\22align\22:16,\22element\22:\22f32\22
// CHECK-SAME: {\22align\22:8,\22element\22:\22f32\22
// CHECK-SAME: {\22align\22:16,\22element\22:\22i8\22
// CHECK-SAME: {\22align\22:16,\22element\22:\22f16\22,{{[^}]*}}\22tensormaps\22:[{\22atom\22:\22!nvtma.tma_atom<load, f16, box = [64, 64]>\22
// CHECK-SAME: {\22align\22:64,\22element\22:\22i64\22
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%a: memref<?xf32>, %p: memref<?xf32>, %q: memref<64xi8>,
              %b: memref<?x?xf16>, %ws: memref<16xi64>, %flag: i1) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : i32
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%m = %a) -> (memref<?xf32>) {
      %v = vector.load %m[%i] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
      scf.yield %m : memref<?xf32>
    }
    %pp = nvtma.address_of %p[%c0] : memref<?xf32> -> !llvm.ptr
    %null = llvm.mlir.zero : !llvm.ptr
    %sel = scf.if %flag -> (!llvm.ptr) {
      scf.yield %pp : !llvm.ptr
    } else {
      scf.yield %null : !llvm.ptr
    }
    %g = llvm.addrspacecast %sel : !llvm.ptr to !llvm.ptr<1>
    %smem = llvm.mlir.zero : !llvm.ptr<3>
    nvtma.cp_async %smem, %g {size = 8 : i32} : !llvm.ptr<3>, !llvm.ptr<1>
    %qi = memref.extract_aligned_pointer_as_index %q : memref<64xi8> -> index
    %q64 = arith.index_cast %qi : index to i64
    %c32 = arith.constant 32 : i64
    %qo = arith.addi %q64, %c32 : i64
    %qg = llvm.inttoptr %qo : i64 to !llvm.ptr<1>
    nvtma.bulk_copy s2g %qg, %smem, %c16 : !llvm.ptr<1>, !llvm.ptr<3>
    %wp = nvtma.address_of %ws[%c0] : memref<16xi64> -> !llvm.ptr
    %wg = llvm.addrspacecast %wp : !llvm.ptr to !llvm.ptr<1>
    %atom = nvtma.atom_from_descriptor %wg : !llvm.ptr<1> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %b) -> (memref<?x?xf16>) {
      nvtma.update_tma_descriptor %atom, %t, %wg : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<?x?xf16>, !llvm.ptr<1>
      scf.yield %t : memref<?x?xf16>
    }
    gpu.return
  }
}

// -----

// nvtma.copy_tensormap's destination records the 64 bytes a descriptor's
// location needs (the op's contract), not the 8 its stores need: a copy is
// there to be used as a descriptor.
// CHECK: \22params\22:[{\22align\22:64,\22element\22:\22i64\22
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%out: memref<16xi64>, %x: memref<256x256xf16>, %d: !llvm.ptr {llvm.align = 64 : i64, nvtma.descriptor = #nvtma.descriptor<binds = 1, atom = !nvtma.tma_atom<load, f16, box = [64, 64]>>}) kernel {
    %c0 = arith.constant 0 : index
    %a = nvtma.atom_from_descriptor %d : !llvm.ptr -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    %p = nvtma.address_of %out[%c0] : memref<16xi64> -> !llvm.ptr
    %g = llvm.addrspacecast %p : !llvm.ptr to !llvm.ptr<1>
    nvtma.copy_tensormap %a, %g : !nvtma.tma_atom<load, f16, box = [64, 64]>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// The traces follow a parameter into the device functions it is passed to
// (func.call; a recursive one ends), where the 16-byte vector access or the
// tensormap.replace is; an external function's parameter assumes nothing.
// CHECK: \22params\22:[{\22align\22:16,\22element\22:\22f32\22
// CHECK-SAME: },{\22element\22:\22f32\22
// CHECK-SAME: {\22align\22:16,\22element\22:\22f16\22,{{[^}]*}}\22tensormaps\22:[{\22atom\22:\22!nvtma.tma_atom<load, f16, box = [64, 64]>\22
// CHECK-SAME: {\22align\22:64,\22element\22:\22i64\22
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  func.func private @ext(memref<?xf32>)
  func.func @load16(%m: memref<?xf32>, %i: index) {
    %v = vector.load %m[%i] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
    func.call @load16(%m, %i) : (memref<?xf32>, index) -> ()
    return
  }
  func.func @replace(%t: memref<?x?xf16>, %wg: !llvm.ptr<1>) {
    %atom = nvtma.atom_from_descriptor %wg : !llvm.ptr<1> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    nvtma.update_tma_descriptor %atom, %t, %wg : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<?x?xf16>, !llvm.ptr<1>
    return
  }
  gpu.func @k(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?x?xf16>, %ws: memref<16xi64>) kernel {
    %c0 = arith.constant 0 : index
    func.call @load16(%a, %c0) : (memref<?xf32>, index) -> ()
    func.call @ext(%b) : (memref<?xf32>) -> ()
    %wp = nvtma.address_of %ws[%c0] : memref<16xi64> -> !llvm.ptr
    %wg = llvm.addrspacecast %wp : !llvm.ptr to !llvm.ptr<1>
    func.call @replace(%c, %wg) : (memref<?x?xf16>, !llvm.ptr<1>) -> ()
    gpu.return
  }
}

// -----

// A vector atomic assumes its address is aligned to the value's size:
// 4 x f32 16 bytes, 2 x f32 8, 2 x bf16 4.
// CHECK: \22params\22:[{\22align\22:16,\22element\22:\22f32\22
// CHECK-SAME: {\22align\22:8,\22element\22:\22f32\22
// CHECK-SAME: {\22align\22:4,\22element\22:\22bf16\22
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xbf16>, %f4: vector<4xf32>, %f2: vector<2xf32>,
              %h: vector<2xbf16>) kernel {
    %c0 = arith.constant 0 : index
    %pa = nvtma.address_of %a[%c0] : memref<?xf32> -> !llvm.ptr
    %ga = llvm.addrspacecast %pa : !llvm.ptr to !llvm.ptr<1>
    nvtma.vector_atomic_add %ga, %f4 : !llvm.ptr<1>, vector<4xf32>
    %pb = nvtma.address_of %b[%c0] : memref<?xf32> -> !llvm.ptr
    %gb = llvm.addrspacecast %pb : !llvm.ptr to !llvm.ptr<1>
    nvtma.vector_atomic_add %gb, %f2 : !llvm.ptr<1>, vector<2xf32>
    %pc = nvtma.address_of %c[%c0] : memref<?xbf16> -> !llvm.ptr
    %old = nvtma.vector_atomic_add %pc, %h : !llvm.ptr, vector<2xbf16> -> vector<2xbf16>
    gpu.return
  }
}

// -----

// "writes": a memref parameter the kernel may write through (a store, an
// atomic, an access whose effects are not declared, a TMA descriptor that
// stores into it, or one tensormap.replace points at it), also through a
// select or an address masked and made a pointer again, or whose address
// escapes (stored to memory, as a pointer or an integer), which the launch
// refuses to take as a view whose elements share memory. Loads (volatile
// and acquire ones too: %r), dims, TMA loads, descriptor fences, printing
// its address and arithmetic on it leave it out (%c: its store goes through
// the select, %s1 or %c).
// CHECK: \22params\22:[{\22element\22:\22f32\22,{{[^}]*}}\22type\22:\22memref<?xf32>\22}
// CHECK-SAME: {\22element\22:\22f32\22,{{[^}]*}}\22type\22:\22memref<?xf32>\22,\22writes\22:true}
// CHECK-SAME: {\22align\22:16,\22element\22:\22f32\22,{{[^}]*}}\22type\22:\22memref<?xf32>\22,\22writes\22:true}
// CHECK-SAME: {\22element\22:\22f32\22,{{[^}]*}}\22type\22:\22memref<?xf32>\22,\22writes\22:true}
// CHECK-SAME: {\22element\22:\22f32\22,{{[^}]*}}\22type\22:\22memref<?xf32>\22,\22writes\22:true}
// CHECK-SAME: {\22element\22:\22f16\22,{{[^}]*}}\22type\22:\22memref<64x64xf16>\22,\22writes\22:true}
// CHECK-SAME: {\22atom\22
// CHECK-SAME: {\22element\22:\22f16\22,{{[^}]*}}\22type\22:\22memref<64x64xf16>\22}
// CHECK-SAME: {\22atom\22
// CHECK-SAME: {\22element\22:\22f32\22,{{[^}]*}}\22type\22:\22memref<?xf32>\22,\22writes\22:true}
// CHECK-SAME: {\22element\22:\22f32\22,{{[^}]*}}\22type\22:\22memref<?xf32>\22,\22writes\22:true}
// CHECK-SAME: {\22element\22:\22f32\22,{{[^}]*}}\22type\22:\22memref<?xf32>\22,\22writes\22:true},{\22address_space\22:1
// CHECK-SAME: {\22element\22:\22f32\22,{{[^}]*}}\22type\22:\22memref<?xf32>\22,\22writes\22:true}
// CHECK-SAME: {\22element\22:\22f32\22,{{[^}]*}}\22type\22:\22memref<?xf32>\22,\22writes\22:true}
// CHECK-SAME: {\22align\22:64,\22element\22:\22i8\22,{{[^}]*}}\22type\22:\22memref<?xi8>\22}
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  func.func private @opaque(!llvm.ptr)
  gpu.func @k(%r: memref<?xf32>, %w: memref<?xf32>, %v: memref<?xf32>, %p: memref<?xf32>, %x: memref<?xf32>,
              %t: memref<64x64xf16>,
              %ds: !llvm.ptr {llvm.align = 64 : i64, nvtma.descriptor = #nvtma.descriptor<binds = 5, atom = !nvtma.tma_atom<store, f16, box = [64, 64]>>},
              %l: memref<64x64xf16>,
              %dl: !llvm.ptr {llvm.align = 64 : i64, nvtma.descriptor = #nvtma.descriptor<binds = 7, atom = !nvtma.tma_atom<load, f16, box = [64, 64]>>},
              %e: memref<?xf32>, %i: memref<?xf32>, %c: memref<?xf32>, %slot: !llvm.ptr<1>,
              %s1: memref<?xf32>, %m: memref<?xf32>, %dsc: memref<?xi8>, %flag: i1) kernel {
    %c0 = arith.constant 0 : index
    %a = memref.load %r[%c0] : memref<?xf32>
    %n = memref.dim %r, %c0 : memref<?xf32>
    %pr = nvtma.address_of %r[%c0] : memref<?xf32> -> !llvm.ptr
    %rv = llvm.load volatile %pr : !llvm.ptr -> f32
    %ra = llvm.load %pr atomic acquire {alignment = 4 : i64} : !llvm.ptr -> f32
    memref.store %a, %w[%c0] : memref<?xf32>
    %f = arith.constant dense<1.0> : vector<4xf32>
    vector.store %f, %v[%c0] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
    %pp = nvtma.address_of %p[%c0] : memref<?xf32> -> !llvm.ptr
    %g = llvm.addrspacecast %pp : !llvm.ptr to !llvm.ptr<1>
    %old = llvm.atomicrmw fadd %g, %a monotonic : !llvm.ptr<1>, f32
    %px = nvtma.address_of %x[%c0] : memref<?xf32> -> !llvm.ptr
    func.call @opaque(%px) : (!llvm.ptr) -> ()
    %pe = nvtma.address_of %e[%c0] : memref<?xf32> -> !llvm.ptr
    llvm.store %pe, %slot : !llvm.ptr, !llvm.ptr<1>
    %pi = nvtma.address_of %i[%c0] : memref<?xf32> -> !llvm.ptr
    %ii = llvm.ptrtoint %pi : !llvm.ptr to i64
    llvm.store %ii, %slot : i64, !llvm.ptr<1>
    %pc = nvtma.address_of %c[%c0] : memref<?xf32> -> !llvm.ptr
    %ic = llvm.ptrtoint %pc : !llvm.ptr to i64
    %c15 = arith.constant 15 : i64
    %low = arith.andi %ic, %c15 : i64
    gpu.printf "%lx\n", %ic : i64
    %ps = nvtma.address_of %s1[%c0] : memref<?xf32> -> !llvm.ptr
    %sel = llvm.select %flag, %ps, %pc : i1, !llvm.ptr
    llvm.store %a, %sel : f32, !llvm.ptr
    %pm = nvtma.address_of %m[%c0] : memref<?xf32> -> !llvm.ptr
    %im = llvm.ptrtoint %pm : !llvm.ptr to i64
    %mask = arith.constant -16 : i64
    %down = arith.andi %im, %mask : i64
    %back = llvm.inttoptr %down : i64 to !llvm.ptr
    llvm.store %a, %back : f32, !llvm.ptr
    %pf = nvtma.address_of %dsc[%c0] : memref<?xi8> -> !llvm.ptr
    %gf = llvm.addrspacecast %pf : !llvm.ptr to !llvm.ptr<1>
    nvtma.fence_tma_desc_acquire %gf : !llvm.ptr<1>
    gpu.return
  }
}
