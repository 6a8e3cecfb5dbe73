// RUN: nvtma-opt %s -nvtma-check-target -split-input-file -verify-diagnostics

// Chips and PTX versions LLVM's NVPTX backend cannot serve end the process
// there ("LLVM ERROR", "Cannot select"); here they are diagnostics.
// expected-error @+1 {{gpu.module @m: chip 'sm_91a' is not one LLVM's NVPTX backend can select; supported: sm_20,}}
gpu.module @m [#nvvm.target<chip = "sm_91a", features = "+ptx86">] {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// expected-error @+1 {{gpu.module @m: chip 'sm_95' is not one LLVM's NVPTX backend can select}}
gpu.module @m [#nvvm.target<chip = "sm_95">] {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// expected-error @+1 {{gpu.module @m: +ptx86 is too old for sm_100f, it needs +ptx88 or newer; supported: +ptx88, +ptx90}}
gpu.module @m [#nvvm.target<chip = "sm_100f", features = "+ptx86">] {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// expected-error @+1 {{gpu.module @m: +ptx78 is too old for sm_90a, it needs +ptx80 or newer}}
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx78">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

// expected-error @+1 {{gpu.module @m: features '+ptx91' are not one PTX ISA version LLVM knows; supported for sm_90a: +ptx80,}}
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx91">] {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// expected-error @+1 {{gpu.module @m: features '+ptx86,+sm_90a' are not one PTX ISA version LLVM knows}}
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86,+sm_90a">] {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// expected-error @+1 {{gpu.module @m: triple 'x86_64-unknown-linux' is not one nvtma compiles; supported: nvptx64-nvidia-cuda}}
gpu.module @m [#nvvm.target<triple = "x86_64-unknown-linux", chip = "sm_90a">] {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// The 32-bit ABI: ptxas refuses it on sm_90 and newer, and the launch passes
// 8-byte pointers (on an older chip too).
// expected-error @+1 {{gpu.module @m: triple 'nvptx-nvidia-cuda' is not one nvtma compiles; supported: nvptx64-nvidia-cuda (64-bit}}
gpu.module @m [#nvvm.target<triple = "nvptx-nvidia-cuda", chip = "sm_80">] {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// Chips LLVM 22 does select, with the PTX version they need, pass.
gpu.module @a [#nvvm.target<chip = "sm_100f", features = "+ptx88">] {
}
gpu.module @b [#nvvm.target<chip = "sm_110a", features = "+ptx90">] {
}
gpu.module @c [#nvvm.target<chip = "sm_120a">] {
}
gpu.module @d [#nvvm.target<chip = "sm_80", features = "+ptx70">] {
}

// -----

// Targets that cannot run TMA: the atom's verifier refuses it first.
gpu.module @m [#nvvm.target<chip = "sm_80", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    // expected-error @+1 {{needs sm_90 or newer ('!nvtma.tma_atom<load, f16, box = [64, 64]>'), the gpu.module targets sm_80}}
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

// expected-error @+1 {{nvtma needs sm_90 or newer (TMA), the target is sm_80}}
gpu.module @m [#nvvm.target<chip = "sm_80", features = "+ptx80">] {
  gpu.func @k() kernel {
    nvtma.bulk_commit_group
    gpu.return
  }
}

// -----

// expected-error @+1 {{nvtma-check-target: gpu.module @m has no #nvvm.target chip and no sm= option was given}}
gpu.module @m {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%g: !llvm.ptr<1>) kernel {
    // expected-error @+1 {{needs PTX ISA 8.3 (+ptx83), the target has +ptx80}}
    nvtma.fence_tma_desc_acquire %g : !llvm.ptr<1>
    gpu.return
  }
}

// -----

// wgmma is sm_90a's alone; the f32 vector reductions need PTX ISA 8.1.
gpu.module @m [#nvvm.target<chip = "sm_100a", features = "+ptx86">] {
  gpu.func @k(%acc: !llvm.struct<(f32, f32, f32, f32)>, %a: vector<4xi32>, %b: i64, %d: i1) kernel {
    // expected-error @+1 {{wgmma needs sm_90a, the target is sm_100a}}
    %r = nvtma.wgmma_mma_async_rs %acc, %a, %b, %d {n = 8 : i32, type_a = #nvtma.wgmma_type<bf16>, type_b = #nvtma.wgmma_type<bf16>} : !llvm.struct<(f32, f32, f32, f32)>, vector<4xi32>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
  gpu.func @k(%acc: !llvm.struct<(f32, f32, f32, f32)>, %a: vector<4xi32>, %b: i64, %d: i1, %g: !llvm.ptr<1>,
              %f: vector<2xf32>, %h: vector<2xf16>) kernel {
    // expected-error @+1 {{wgmma needs sm_90a, the target is sm_90}}
    %r = nvtma.wgmma_mma_async_rs %acc, %a, %b, %d {n = 8 : i32, type_a = #nvtma.wgmma_type<bf16>, type_b = #nvtma.wgmma_type<bf16>} : !llvm.struct<(f32, f32, f32, f32)>, vector<4xi32>
    // expected-error @+1 {{of 'vector<2xf32>' needs PTX ISA 8.1 (+ptx81), the target has +ptx80}}
    nvtma.vector_atomic_add %g, %f : !llvm.ptr<1>, vector<2xf32>
    nvtma.vector_atomic_add %g, %h : !llvm.ptr<1>, vector<2xf16>
    gpu.return
  }
}

// -----

// An IR target without +ptx gets the chip's oldest PTX ISA from LLVM (8.0
// for sm_90a): too old for the tensormap proxy fences.
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @k() kernel {
    // expected-error @+1 {{needs PTX ISA 8.3 (+ptx83), the target has +ptx80}}
    nvtma.fence_tma_desc_release
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90", features = "+ptx86">] {
  gpu.func @k(%A: memref<?x?xf16>, %g: !llvm.ptr<1>) kernel {
    %a = nvtma.atom_from_descriptor %g : !llvm.ptr<1> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    // expected-error @+1 {{tensormap.replace needs sm_90a (an architecture-specific target), the gpu.module targets sm_90}}
    nvtma.update_tma_descriptor %a, %A, %g : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<?x?xf16>, !llvm.ptr<1>
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
  gpu.func @k(%A: memref<256x256xf16>) kernel {
    %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>} : memref<256x256xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    // expected-error @+1 {{cannot allocate shared memory in a kernel body; use a gpu.func workgroup attribution or gpu.dynamic_shared_memory}}
    %s = memref.alloca() : memref<64x64xf16, #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

// GPUFuncOpLowering asserts on a non-signless llvm.align.
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  // expected-error @+1 {{llvm.align must be a positive power of two of a signless integer type, got 1024 : ui32}}
  gpu.func @k() workgroup(%s: memref<64xf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : ui32}) kernel {
    gpu.return
  }
}

// -----

// The GPU lowering asserted on an integer memory space past 64 bits; LLVM's
// address spaces are 24-bit.
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  // expected-error @+1 {{uses 'memref<64xf16, 1180591620717411303424 : i128>', whose memory space 1180591620717411303424 : i128 is not an address space LLVM has (0 to 2^24 - 1)}}
  gpu.func @k(%s: memref<64xf16, 1180591620717411303424 : i128>) kernel {
    nvtma.bulk_commit_group
    gpu.return
  }
}

// -----

// Types and ops the lowering asserted on (fuzz_nvtma_opt, the thirty-third
// session): an LLVM address space past 2^24 (!llvm.ptr<-1> is DenseMap's
// empty key), a non-signless mbarrier memory space, a bitcast of index
// lanes, a dim expanded into two dynamic ones, a bad nvtma.align.
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  // expected-error @+1 {{uses '!llvm.ptr<4294967295>': address space 4294967295 is past LLVM's 2^24 - 1}}
  gpu.func @k(%g: !llvm.ptr<-1>) kernel {
    nvtma.bulk_commit_group
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k() kernel {
    // expected-error @+1 {{uses '!nvgpu.mbarrier.group<memorySpace = 3 : ui32>', whose memory space 3 : ui32 is not a signless integer}}
    %b = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = 3 : ui32>
    nvtma.bulk_commit_group
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  gpu.func @k(%x: memref<8xi32>, %a: memref<?xf16>) kernel {
    %c = arith.constant dense<1> : vector<4xindex>
    // expected-error @+1 {{bitcasts index lanes, which have no fixed bit width}}
    %b = vector.bitcast %c : vector<4xindex> to vector<8xi32>
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{expands a dim into several dynamic ones, which expand-strided-metadata cannot lower}}
    %e = memref.expand_shape %a [[0, 1]] output_shape [%c1, %c1] : memref<?xf16> into memref<?x?xf16>
    // expected-error @+1 {{nvtma.align must be a power of two of a signless integer type below 2^32, got 16 : ui32}}
    llvm.inline_asm has_side_effects {nvtma.align = 16 : ui32} "nop;", "" : () -> ()
    nvtma.bulk_commit_group
    gpu.return
  }
}

// -----

// Names NVPTX cannot print end the process there ("Symbol name with
// unsupported characters"); a kernel's dots reach ptxas, which refuses them.
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  // expected-error @+1 {{symbol "my kernel" is not a name PTX takes: ASCII letters, digits, '_' and '$', not starting with a digit}}
  gpu.func @"my kernel"() kernel {
    gpu.return
  }
  // expected-error @+1 {{symbol "gr\C3\B6\C3\9Fe" is not a name PTX takes}}
  gpu.func @"größe"() kernel {
    gpu.return
  }
  // expected-error @+1 {{symbol "k.k" is not a name PTX takes: ASCII letters, digits, '_' and '$', not starting with a digit}}
  gpu.func @"k.k"() kernel {
    gpu.return
  }
  // expected-error @+1 {{symbol "1abc" is not a name PTX takes: ASCII letters, digits, '_' and '$' (and '.'), not starting with a digit}}
  llvm.func @"1abc"() {
    llvm.return
  }
  // expected-error @+1 {{defines "llvm.foo" in the llvm. namespace, which LLVM keeps for its intrinsics}}
  llvm.func @llvm.foo() {
    llvm.return
  }
  // Declarations there are the intrinsics; dots elsewhere LLVM renames.
  llvm.func @llvm.nvvm.barrier0()
  llvm.func @helper.part() {
    llvm.return
  }
}

// -----

// What LLVM's NVPTX backend aborts on instead of reporting, refused first.
// More than 16384 scalars in a vector, LLVM array or struct (selection
// asserts on a vector of 40000 lanes stored, an array of 65536 as a value):
// as a value, a kernel parameter, inside another type, in a declaration's
// signature.
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @k(%x: f32, %o: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'vector.broadcast' op uses 'vector<65536xf32>', 65536 scalars; nvtma compiles vectors, LLVM arrays and LLVM structs of at most 16384}}
    %v = vector.broadcast %x : f32 to vector<65536xf32>
    %ok = vector.broadcast %x : f32 to vector<16384xf32>
    vector.store %ok, %o[%c0] : memref<?xf32>, vector<16384xf32>
    gpu.return
  }
  // expected-error @+1 {{'gpu.func' op uses 'vector<2x8193xi8>', 16386 scalars}}
  gpu.func @p(%x: vector<2x8193xi8>) kernel {
    gpu.return
  }
  // expected-error @+1 {{'gpu.func' op uses 'vector<65536x65536x65536xf32>', 281474976710656 scalars}}
  gpu.func @q(%x: memref<2xvector<65536x65536x65536xf32>>) kernel {
    gpu.return
  }
  // (a count past 2^64 saturates)
  // expected-error @+1 {{'gpu.func' op uses '!llvm.struct<(i32, array<4294967296 x array<4294967296 x i8>>)>', 18446744073709551615 scalars}}
  gpu.func @r(%x: !llvm.struct<(i32, array<4294967296 x array<4294967296 x i8>>)>) kernel {
    gpu.return
  }
  // expected-error @+1 {{'func.func' op uses 'vector<20000xf16>', 20000 scalars}}
  func.func private @ext(vector<20000xf16>)
  gpu.func @a(%p: !llvm.ptr<1>) kernel {
    // expected-error @+1 {{'llvm.load' op uses '!llvm.array<65536 x f32>', 65536 scalars}}
    %v = llvm.load %p : !llvm.ptr<1> -> !llvm.array<65536 x f32>
    // 16384 scalars over the fields and their arrays: taken
    %w = llvm.load %p : !llvm.ptr<1> -> !llvm.struct<(array<8192 x f32>, array<8191 x i8>, f64)>
    // expected-error @+1 {{'llvm.load' op uses '!llvm.struct<(array<8192 x f32>, array<8192 x i8>, f64)>', 16385 scalars}}
    %x = llvm.load %p : !llvm.ptr<1> -> !llvm.struct<(array<8192 x f32>, array<8192 x i8>, f64)>
    // in memory it is no value: taken
    %n = llvm.mlir.constant(1 : i32) : i32
    %m = llvm.alloca %n x !llvm.array<1048576 x f32> : (i32) -> !llvm.ptr
    gpu.return
  }
}

// -----

// Integers past PTX's widest register (128 bits), f80 and f128, and
// conversions between floats and integers past 64 bits (LLVM asserts or
// reports "unsupported library call operation").
gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @k(%p: !llvm.ptr<1>) kernel {
    %a = llvm.load %p : !llvm.ptr<1> -> i128
    // expected-error @+1 {{'llvm.load' op uses 'i129': nvtma compiles integers of at most 128 bits}}
    %b = llvm.load %p : !llvm.ptr<1> -> i129
    // expected-error @+1 {{'llvm.load' op uses 'f128', which PTX has no type for}}
    %c = llvm.load %p : !llvm.ptr<1> -> f128
    // expected-error @+1 {{'arith.sitofp' op converts between a float and 'i128': nvtma converts integers of at most 64 bits}}
    %f = arith.sitofp %a : i128 to f32
    %i = llvm.load %p : !llvm.ptr<1> -> vector<2xf16>
    // expected-error @+1 {{'arith.fptoui' op converts between a float and 'vector<2xi65>'}}
    %j = arith.fptoui %i : vector<2xf16> to vector<2xi65>
    %h = llvm.load %p : !llvm.ptr<1> -> f32
    // expected-error @+1 {{'llvm.call_intrinsic' op converts between a float and 'i100'}}
    %k = llvm.call_intrinsic "llvm.fptosi.sat.i100.f32"(%h) : (f32) -> i100
    %ok = arith.fptosi %h : f32 to i64
    gpu.return
  }
  // expected-error @+1 {{'gpu.func' op uses 'f80', which PTX has no type for}}
  gpu.func @q(%x: memref<?xf80>) kernel {
    gpu.return
  }
}

// -----

// Static shared memory past what ptxas gives a kernel of the chip: 48 KiB
// (sm_90), 227 KiB (sm_90a), 99 KiB (sm_120a); ptxas refuses more with no
// line, or takes it where the size wraps at 2^32 bytes (2^32 f32 here), and
// the kernel gets that much less. 48 KiB over two attributions is taken.
gpu.module @m [#nvvm.target<chip = "sm_90">] {
  gpu.func @ok() workgroup(%a: memref<8192xf32, #gpu.address_space<workgroup>>, %b: memref<2x1024xvector<2xf32>, #gpu.address_space<workgroup>>) kernel {
    gpu.return
  }
  // expected-error @+1 {{'gpu.func' op has 49154 bytes of workgroup attributions; ptxas gives a kernel of sm_90 at most 49152 bytes of static shared memory (more is dynamic shared memory}}
  gpu.func @over() workgroup(%a: memref<24577xf16, #gpu.address_space<workgroup>>) kernel {
    gpu.return
  }
}

// -----

gpu.module @m [#nvvm.target<chip = "sm_90a">] {
  gpu.func @ok() workgroup(%a: memref<232448xi8, #gpu.address_space<workgroup>>) kernel {
    gpu.return
  }
  // expected-error @+1 {{'gpu.func' op has 232449 bytes of workgroup attributions; ptxas gives a kernel of sm_90a at most 232448 bytes}}
  gpu.func @over() workgroup(%a: memref<232448xi8, #gpu.address_space<workgroup>>, %b: memref<1xi8, #gpu.address_space<workgroup>>) kernel {
    gpu.return
  }
  // expected-error @+1 {{'gpu.func' op has 17179869184 bytes of workgroup attributions}}
  gpu.func @wraps() workgroup(%a: memref<4294967296xf32, #gpu.address_space<workgroup>>) kernel {
    gpu.return
  }
}

// -----

// With several chips the least limit holds; sm_120a's is 99 KiB.
gpu.module @m [#nvvm.target<chip = "sm_90a">, #nvvm.target<chip = "sm_120a">] {
  // expected-error @+1 {{'gpu.func' op has 101377 bytes of workgroup attributions; ptxas gives a kernel of sm_120a at most 101376 bytes}}
  gpu.func @over() workgroup(%a: memref<101377xi8, #gpu.address_space<workgroup>>) kernel {
    gpu.return
  }
}

// -----

// Shared globals count with the attributions: those the kernel names and
// those of the functions it calls (a call cycle too), once each; a global
// no kernel reaches counts for none. 2^30 floats wrap to no shared memory
// at all in ptxas.
gpu.module @m [#nvvm.target<chip = "sm_90">] {
  memref.global "private" @a : memref<8192xf32, #gpu.address_space<workgroup>>
  memref.global "private" @b : memref<4096xf32, 3>
  memref.global "private" @unused : memref<1073741824xf32, #gpu.address_space<workgroup>>
  memref.global "private" @global : memref<1073741824xf32>
  llvm.mlir.global internal @c() {addr_space = 3 : i32} : !llvm.array<2 x i8>
  llvm.mlir.global internal @huge() {addr_space = 3 : i32} : !llvm.array<1073741824 x f32>
  llvm.func @f() {
    %p = llvm.mlir.addressof @c : !llvm.ptr<3>
    llvm.call @g() : () -> ()
    llvm.return
  }
  llvm.func @g() {
    llvm.call @f() : () -> ()
    llvm.return
  }
  // 48 KiB exactly, the same global named twice.
  gpu.func @ok() kernel {
    %a = memref.get_global @a : memref<8192xf32, #gpu.address_space<workgroup>>
    %a2 = memref.get_global @a : memref<8192xf32, #gpu.address_space<workgroup>>
    %b = memref.get_global @b : memref<4096xf32, 3>
    %g = memref.get_global @global : memref<1073741824xf32>
    gpu.return
  }
  // expected-error @+1 {{'gpu.func' op has 49154 bytes of static shared memory (32768 of workgroup attributions, 16386 of the shared globals it uses: @b @c); ptxas gives a kernel of sm_90 at most 49152 bytes}}
  gpu.func @through_calls() workgroup(%w: memref<8192xf32, #gpu.address_space<workgroup>>) kernel {
    %b = memref.get_global @b : memref<4096xf32, 3>
    llvm.call @g() : () -> ()
    gpu.return
  }
  // expected-error @+1 {{'gpu.func' op has 4294967296 bytes of static shared memory (4294967296 of the shared globals it uses: @huge)}}
  gpu.func @wraps() kernel {
    %p = llvm.mlir.addressof @huge : !llvm.ptr<3>
    gpu.return
  }
}

// -----

// With no chip, what the most of any chip takes.
gpu.module @m {
  gpu.func @ok() workgroup(%a: memref<232448xi8, #gpu.address_space<workgroup>>) kernel {
    gpu.return
  }
  // expected-error @+1 {{'gpu.func' op has 232449 bytes of workgroup attributions; ptxas gives a kernel of any chip at most 232448 bytes}}
  gpu.func @over() workgroup(%a: memref<232449xi8, #gpu.address_space<workgroup>>) kernel {
    gpu.return
  }
}

// -----

// Each nvgpu.mbarrier.create becomes a shared global of 8 bytes a barrier
// (2^29 of them wrapped to no shared memory): the kernel's and those of the
// functions it calls count, once an op however often called; a group in
// global memory does not.
!bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 1024>
!global_bars = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<global>, num_barriers = 65536>
gpu.module @m [#nvvm.target<chip = "sm_90">] {
  func.func @more() {
    %b = nvgpu.mbarrier.create -> !bars
    return
  }
  gpu.func @ok() kernel {
    %b = nvgpu.mbarrier.create -> !bars
    %c = nvgpu.mbarrier.create -> !bars
    %g = nvgpu.mbarrier.create -> !global_bars
    func.call @more() : () -> ()
    gpu.return
  }
  // expected-error @+1 {{'gpu.func' op has 49160 bytes of static shared memory (32768 of workgroup attributions, 16392 of its mbarrier groups); ptxas gives a kernel of sm_90 at most 49152 bytes}}
  gpu.func @over() workgroup(%w: memref<8192xf32, #gpu.address_space<workgroup>>) kernel {
    %b = nvgpu.mbarrier.create -> !bars
    %c = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 1>
    func.call @more() : () -> ()
    func.call @more() : () -> ()
    gpu.return
  }
  // expected-error @+1 {{'gpu.func' op has 4294967296 bytes of static shared memory (4294967296 of its mbarrier groups)}}
  gpu.func @wraps() kernel {
    %b = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 536870912>
    gpu.return
  }
}

// -----

// Signatures of types convert-gpu-to-nvvm has no LLVM form for: it said only
// "failed to legalize operation 'gpu.func'". Those it has pass.
gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  // expected-error @+1 {{'gpu.func' op parameter 1 has type '!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>', which has no LLVM form: a function in a gpu.module takes and returns integers, floats, index, vectors, memrefs and LLVM types (TMA atoms and mbarrier groups are made inside the function that uses them)}}
  gpu.func @k(%p: memref<16xf32>, %bars: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    gpu.return
  }
  // expected-error @+1 {{'func.func' op parameter 0 has type '!nvtma.tma_atom<load, f16, box = [64, 64]>', which has no LLVM form}}
  func.func @helper(%a: !nvtma.tma_atom<load, f16, box = [64, 64]>) {
    return
  }
  // expected-error @+1 {{'func.func' op result 0 has type 'tensor<4xf32>', which has no LLVM form}}
  func.func private @made() -> tensor<4xf32>
  func.func @fine(%i: index, %v: vector<4xbf16>, %m: memref<?x8xf16, #gpu.address_space<workgroup>>,
                  %s: memref<4xi32, strided<[?], offset: ?>>, %p: !llvm.ptr<1>, %c: complex<f32>) -> (i64, f32) {
    %a = arith.constant 0 : i64
    %b = arith.constant 0.0 : f32
    return %a, %b : i64, f32
  }
}
