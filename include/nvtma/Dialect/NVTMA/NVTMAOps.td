//===- NVTMAOps.td - nvtma operations ----------------------*- tablegen -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_OPS
#define NVTMA_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Dialect/LLVMIR/LLVMTypes.td"
include "nvtma/Dialect/NVTMA/NVTMADialect.td"
include "nvtma/Dialect/NVTMA/NVTMAEnums.td"
include "nvtma/Dialect/NVTMA/NVTMATypes.td"

// Upstream's mbarrier group, without pulling nvgpu's enums into ours.
def NVGPU_MBarrierGroup : DialectType<NVTMA_Dialect,
    CPred<"::llvm::isa<::mlir::nvgpu::MBarrierGroupType>($_self)">,
    "!nvgpu.mbarrier.group", "::mlir::nvgpu::MBarrierGroupType">;

// A fixed-size 1-D vector of one of `lengths` lanes of one of `types`: the
// lowerings take its lanes or its bits as registers, which a scalable or a
// multi-dimensional vector has no fixed image for.
class NVTMA_Vector1D<list<int> lengths, list<Type> types> : AllOfType<
  [FixedVectorOfRankAndType<[1], types>, FixedVectorOfLength<lengths>],
  FixedVectorOfRankAndType<[1], types>.summary #
  FixedVectorOfLength<lengths>.summary, "::mlir::VectorType">;

def NVTMA_GlobalPtr : LLVM_PointerInAddressSpace<1>;
def NVTMA_SharedPtr : LLVM_PointerInAddressSpace<3>;
def NVTMA_ClusterPtr : LLVM_PointerInAddressSpace<7>;
def NVTMA_DescriptorPtr : AnyTypeOf<[LLVM_PointerInAddressSpace<0>,
    LLVM_PointerInAddressSpace<1>, LLVM_PointerInAddressSpace<3>],
    "pointer to a 128-byte descriptor (generic, global or shared)">;

//===----------------------------------------------------------------------===//
// Atoms and tiling
//===----------------------------------------------------------------------===//

def NVTMA_MakeTiledTmaAtomOp : NVTMA_Op<"make_tiled_tma_atom", [Pure]> {
  let summary = "make a TMA copy atom for a global tensor";
  let description = [{
    Binds a global tensor (a kernel argument of `gpu.func`) to a TMA atom.
    `cta_tiler` is the tile one CTA copies (outermost first); the atom's
    `tile` must equal it, and its `box` must be the largest TMA box that
    covers the tile under CuTe's rule: the tile, split over `multicast` CTAs
    along its outermost dimension, with the innermost box dimension limited
    to the swizzle span and every dimension to 256 elements.

    `convert-nvtma-to-nvvm` turns each atom into a 128-byte, 64-byte-aligned
    `__grid_constant__` kernel parameter and records how to encode it (the
    tensor argument it binds and every static descriptor field) in the
    module's `nvtma.kernels` attribute. Becomes no PTX instruction.

    ```mlir
    %atom = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 64, 64>}
        : memref<4096x4096xf16> -> !nvtma.tma_atom<load, f16, box = [64, 64], l2_promotion = l2_256b>
    ```
  }];
  let arguments = (ins AnyMemRef:$tensor, DenseI64ArrayAttr:$cta_tiler);
  let results = (outs NVTMA_TmaAtomType:$atom);
  let assemblyFormat = "$tensor attr-dict `:` qualified(type($tensor)) `->` qualified(type($atom))";
  let hasVerifier = 1;
}

def NVTMA_AtomFromDescriptorOp : NVTMA_Op<"atom_from_descriptor", [Pure]> {
  let summary = "use a descriptor in memory as a TMA atom";
  let description = [{
    Views 128 bytes at `desc` (global or shared memory, 64-byte aligned) as a
    descriptor with the atom type's static fields, e.g. one written by
    `nvtma.copy_tensormap` and patched by `nvtma.update_tma_descriptor`
    (CuTe's `tma_desc_ptr=`). Becomes no instruction: copies use the
    pointer.

    ```mlir
    %a = nvtma.atom_from_descriptor %p : !llvm.ptr<1> -> !nvtma.tma_atom<load, f16, box = [64, 64]>
    ```
  }];
  let arguments = (ins NVTMA_DescriptorPtr:$desc);
  let results = (outs NVTMA_TmaAtomType:$atom);
  let assemblyFormat = "$desc attr-dict `:` qualified(type($desc)) `->` qualified(type($atom))";
}

def NVTMA_TmaPartitionOp : NVTMA_Op<"tma_partition", [Pure]> {
  let summary = "global coordinates of a CTA's tile";
  let description = [{
    Coordinates (elements, outermost first) of tile `tile_coords` of the
    atom's `tile` shape, for use in `nvtma.copy`: `tile_coords[i] *
    tile[i]`. Becomes integer arithmetic.

    ```mlir
    %c:2 = nvtma.tma_partition %atom[%ti, %tj] : !nvtma.tma_atom<load, f16, box = [64, 64]> -> index, index
    ```
  }];
  let arguments = (ins NVTMA_TmaAtomType:$atom, Variadic<Index>:$tile_coords);
  let results = (outs Variadic<Index>:$coordinates);
  let assemblyFormat = [{
    $atom `[` $tile_coords `]` attr-dict `:` qualified(type($atom)) `->` qualified(type($coordinates))
  }];
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "Value":$atom, "ValueRange":$tileCoords)>];
}

def NVTMA_CreateTmaMulticastMaskOp
    : NVTMA_Op<"create_tma_multicast_mask", [Pure]> {
  let summary = "mask of the CTAs a multicast load reaches";
  let description = [{
    The 16-bit `ctaMask` of `cp.async.bulk.tensor...multicast::cluster`: one
    bit for every CTA of the cluster whose coordinates equal `cta_coords`
    except along `mode`. `cluster_shape` and `cta_coords` are in CUDA's order
    (x, y, z; x varies fastest in the CTA rank). Becomes integer arithmetic.

    ```mlir
    %m = nvtma.create_tma_multicast_mask [%x, %y] {cluster_shape = array<i64: 2, 2>, mode = 0 : i64} : i16
    ```
  }];
  let arguments = (ins Variadic<Index>:$cta_coords,
                       DenseI64ArrayAttr:$cluster_shape, I64Attr:$mode);
  let results = (outs I16:$mask);
  let assemblyFormat = "`[` $cta_coords `]` attr-dict `:` qualified(type($mask))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Tensor copies
//===----------------------------------------------------------------------===//

def NVTMA_CopyOp : NVTMA_Op<"copy", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "issue the TMA copies of one tile";
  let description = [{
    Copies the atom's `tile` between global coordinates `coordinates`
    (elements, outermost first) and shared memory `smem` (a memref of the
    tile's shape and element type, in workgroup memory), as one TMA
    instruction per `box` of the tile.

    Loads complete on mbarrier `barriers[barrier_id]` (`complete_tx`; the
    caller arms it with the atom's tile bytes) and may take an L2
    `cache_hint`; im2col loads take the per-copy `offsets`. Multicast loads
    take the CTA `mask` the data goes to and `cta`, this CTA's rank in the
    multicast group: it loads slice `cta` of the tile's outermost dim (one
    box) into that slice of every masked CTA's `smem`. Stores and reductions read `smem` and join the bulk
    group (`nvtma.bulk_commit_group` / `bulk_wait_group`).

    One thread issues them: the lowering elects one lane of the calling warp
    (`elect.sync`), so call it from one warp and do not wrap it in an
    elect yourself.

    Memory effects: it reads the descriptor; a load reads global memory and
    writes `smem` and the mbarrier, a store reads `smem` and writes global
    memory, a reduction reads `smem` and reads and writes global memory.

    Becomes `cp.async.bulk.tensor.Nd.shared::cluster.global.tile`
    (`.multicast::cluster`, `.im2col`, `.tile::gather4`),
    `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group` or
    `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.<op>`.

    ```mlir
    nvtma.copy %atom[%i, %j], %smem, barrier %bars[%c0]
        : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<64x64xf16, 3>,
          !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    nvtma.copy %out[%i, %j], %smem : !nvtma.tma_atom<store, f16, box = [64, 64]>, memref<64x64xf16, 3>
    ```
  }];
  let arguments = (ins NVTMA_TmaAtomType:$atom, Variadic<Index>:$coordinates,
      AnyMemRef:$smem, Optional<NVGPU_MBarrierGroup>:$barriers,
      Optional<Index>:$barrier_id, Variadic<I16>:$offsets,
      Optional<I16>:$mask, Optional<Index>:$cta_rank,
      Optional<I64>:$cache_hint);
  let assemblyFormat = [{
    $atom `[` $coordinates `]` `,` $smem
    (`,` `barrier` $barriers^ `[` $barrier_id `]`)?
    (`offsets` `[` $offsets^ `]`)? (`mask` $mask^)? (`cta` $cta_rank^)?
    (`cache_hint` $cache_hint^)? attr-dict
    `:` qualified(type($atom)) `,` qualified(type($smem)) (`,` qualified(type($barriers))^)?
  }];
  let hasVerifier = 1;
}

def NVTMA_PrefetchOp : NVTMA_Op<"prefetch", [AttrSizedOperandSegments]> {
  let summary = "prefetch one tile of an atom's tensor into L2";
  let description = [{
    Starts fetching the atom's `tile` at global coordinates `coordinates`
    (elements, outermost first) from global memory into L2, as one TMA
    prefetch per `box` of the tile; nothing is written to shared memory and
    nothing completes on a barrier. A later load of the tile hits L2. It
    takes a tile-mode load atom (plain or multicast); with a multicast atom
    and `cta`, this CTA's slice of the tile's outermost dim (what its
    multicast load of the tile reads). `cache_hint` is an L2 eviction
    policy for the prefetched lines.

    One thread issues them: the lowering elects one lane of the calling warp.

    Becomes `cp.async.bulk.prefetch.tensor.Nd.L2.global.tile`.

    ```mlir
    nvtma.prefetch %atom[%i, %j] : !nvtma.tma_atom<load, f16, box = [64, 64]>
    ```
  }];
  let arguments = (ins NVTMA_TmaAtomType:$atom, Variadic<Index>:$coordinates,
      Optional<Index>:$cta_rank, Optional<I64>:$cache_hint);
  let assemblyFormat = [{
    $atom `[` $coordinates `]` (`cta` $cta_rank^)? (`cache_hint` $cache_hint^)?
    attr-dict `:` qualified(type($atom))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Descriptor management
//===----------------------------------------------------------------------===//

def NVTMA_PrefetchDescriptorOp : NVTMA_Op<"prefetch_descriptor"> {
  let summary = "prefetch an atom's descriptor into the cache";
  let description = [{
    Becomes `prefetch.tensormap [desc]`.

    ```mlir
    nvtma.prefetch_descriptor %atom : !nvtma.tma_atom<load, f16, box = [64, 64]>
    ```
  }];
  let arguments = (ins NVTMA_TmaAtomType:$atom);
  let assemblyFormat = "$atom attr-dict `:` qualified(type($atom))";
}

def NVTMA_CopyTensormapOp : NVTMA_Op<"copy_tensormap"> {
  let summary = "copy an atom's descriptor to memory";
  let description = [{
    Writes the atom's 128 descriptor bytes to `dst` (64-byte aligned global
    or shared memory), e.g. to patch it with `nvtma.update_tma_descriptor`
    or to inspect it from the host. Becomes sixteen 8-byte loads of the
    descriptor and stores to `dst`. The kernel records ask 64-byte
    alignment of a memref parameter `dst` points into, so the launch
    refuses a destination a TMA copy through the descriptor would fault on.

    ```mlir
    nvtma.copy_tensormap %atom, %dst : !nvtma.tma_atom<load, f16, box = [64, 64]>, !llvm.ptr<1>
    ```
  }];
  let arguments = (ins NVTMA_TmaAtomType:$atom, NVTMA_DescriptorPtr:$dst);
  let assemblyFormat = "$atom `,` $dst attr-dict `:` qualified(type($atom)) `,` qualified(type($dst))";
}

def NVTMA_UpdateTmaDescriptorOp : NVTMA_Op<"update_tma_descriptor"> {
  let summary = "point a descriptor in memory at another tensor";
  let description = [{
    Replaces the global address, dims and strides of the descriptor at
    `desc` (global or shared memory) with those of `tensor`; every other
    field keeps the atom's value. Follow with `nvtma.fence_tma_desc_release`
    (global) or `nvtma.cp_fence_tma_desc_release` (shared) before use, and
    `nvtma.fence_tma_desc_acquire` in the consumer. Needs sm_90a.

    Becomes `tensormap.replace.tile.{global_address,global_dim,
    global_stride}.{global,shared::cta}.b1024`.

    ```mlir
    nvtma.update_tma_descriptor %atom, %B, %desc : !nvtma.tma_atom<load, f16, box = [64, 64]>, memref<?x?xf16>, !llvm.ptr<1>
    ```
  }];
  let arguments = (ins NVTMA_TmaAtomType:$atom, AnyMemRef:$tensor,
                       NVTMA_DescriptorPtr:$desc);
  let assemblyFormat = [{
    $atom `,` $tensor `,` $desc attr-dict `:` qualified(type($atom)) `,` qualified(type($tensor)) `,` qualified(type($desc))
  }];
  let hasVerifier = 1;
}

def NVTMA_FenceTmaDescAcquireOp : NVTMA_Op<"fence_tma_desc_acquire"> {
  let summary = "acquire fence on a descriptor in global memory";
  let description = [{
    Becomes `fence.proxy.tensormap::generic.acquire.gpu [desc], 128`.

    ```mlir
    nvtma.fence_tma_desc_acquire %desc : !llvm.ptr<1>
    ```
  }];
  let arguments = (ins NVTMA_DescriptorPtr:$desc);
  let assemblyFormat = "$desc attr-dict `:` qualified(type($desc))";
}

def NVTMA_FenceTmaDescReleaseOp : NVTMA_Op<"fence_tma_desc_release"> {
  let summary = "release fence after writing a descriptor";
  let description = [{
    Becomes `fence.proxy.tensormap::generic.release.gpu`.

    ```mlir
    nvtma.fence_tma_desc_release
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def NVTMA_CpFenceTmaDescReleaseOp : NVTMA_Op<"cp_fence_tma_desc_release"> {
  let summary = "copy a descriptor from shared to global memory and release it";
  let description = [{
    Warp-wide (`.sync.aligned`): every lane of the warp must execute it.
    Becomes `tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic
    .release.gpu.sync.aligned [global], [shared], 128`.

    ```mlir
    nvtma.cp_fence_tma_desc_release %g, %s : !llvm.ptr<1>, !llvm.ptr<3>
    ```
  }];
  let arguments = (ins NVTMA_GlobalPtr:$global_desc, NVTMA_SharedPtr:$shared_desc);
  let assemblyFormat = [{
    $global_desc `,` $shared_desc attr-dict `:` qualified(type($global_desc)) `,` qualified(type($shared_desc))
  }];
}

//===----------------------------------------------------------------------===//
// Non-tensor copies
//===----------------------------------------------------------------------===//

def NVTMA_BulkCopyOp : NVTMA_Op<"bulk_copy", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "non-tensor bulk async copy";
  let description = [{
    Copies `size` bytes (a multiple of 16; addresses 16-byte aligned):
    - `g2s`: global to shared, completing on `barriers[barrier_id]`;
      `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`
    - `g2s_multicast`: the same to every CTA in `mask`
      (`.multicast::cluster`)
    - `s2g`: shared to global in the bulk group;
      `cp.async.bulk.global.shared::cta.bulk_group`
    - `s2g_bytemask`: the same, copying byte i of each 16 only if bit i of
      `mask` is set (`.cp_mask`, sm_100)
    - `s2s_cluster`: shared to the shared memory of another CTA of the
      cluster, completing on a barrier there (`dst` and the barrier are
      `shared::cluster` pointers); `cp.async.bulk.shared::cluster.shared::cta`
    Like `nvtma.copy`, one elected lane of the calling warp issues it.

    ```mlir
    nvtma.bulk_copy g2s %dst, %src, %n, barrier %bars[%c0] : !llvm.ptr<3>, !llvm.ptr<1>,
        !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
    nvtma.bulk_copy s2g %gdst, %ssrc, %n : !llvm.ptr<1>, !llvm.ptr<3>
    ```
  }];
  let arguments = (ins NVTMA_BulkCopyKindAttr:$kind, LLVM_AnyPointer:$dst,
      LLVM_AnyPointer:$src, I32:$size, Optional<NVGPU_MBarrierGroup>:$barriers,
      Optional<Index>:$barrier_id, Optional<NVTMA_ClusterPtr>:$remote_barrier,
      Optional<I16>:$mask);
  let assemblyFormat = [{
    custom<BulkCopyKind>($kind) $dst `,` $src `,` $size
    (`,` `barrier` $barriers^ `[` $barrier_id `]`)?
    (`remote_barrier` $remote_barrier^)? (`mask` $mask^)? attr-dict
    `:` qualified(type($dst)) `,` qualified(type($src)) (`,` qualified(type($barriers))^)?
  }];
  let hasVerifier = 1;
}

def NVTMA_CpAsyncOp : NVTMA_Op<"cp_async", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "non-bulk async copy of 4, 8 or 16 bytes to shared memory";
  let description = [{
    CuTe's `CopyG2SOp`. `cache_mode` `always` caches at all levels (`.ca`,
    4/8/16 bytes), `cache_global` only in L2 (`.cg`, 16 bytes). Every thread
    issues its own copy. Becomes `cp.async.{ca,cg}.shared.global [dst],
    [src], size{, src_size}`; complete it with `nvvm.cp.async.commit.group` /
    `nvvm.cp.async.wait.group`, or on an mbarrier with
    `nvvm.cp.async.mbarrier.arrive`. The optional `src_size` (an i32 from 0
    to `size`) is the bytes read from `src`; the rest of `dst`'s `size`
    bytes are zero filled (0: no read at all, all zeros).

    ```mlir
    nvtma.cp_async %dst, %src {size = 16 : i32, cache_mode = #nvtma.load_cache_mode<cache_global>} : !llvm.ptr<3>, !llvm.ptr<1>
    nvtma.cp_async %dst, %src, %n {size = 16 : i32} : !llvm.ptr<3>, !llvm.ptr<1>
    ```
  }];
  let arguments = (ins NVTMA_SharedPtr:$dst, NVTMA_GlobalPtr:$src, Optional<I32>:$src_size,
      ConfinedAttr<I32Attr, [IntIsOneOf<[4, 8, 16]>]>:$size,
      DefaultValuedAttr<NVTMA_LoadCacheModeAttr, "LoadCacheMode::ALWAYS">:$cache_mode);
  let assemblyFormat = "$dst `,` $src (`,` $src_size^)? attr-dict `:` qualified(type($dst)) `,` qualified(type($src))";
  let hasVerifier = 1;
}

def NVTMA_DsmemStoreOp : NVTMA_Op<"dsmem_store", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "store to another CTA's shared memory, completing on its mbarrier";
  let description = [{
    CuTe's `CopyDsmemStoreOp`: an asynchronous store of a 32- or 64-bit
    value (or a vector of two / four 32-bit values) to `dst` in a peer CTA,
    signalling that CTA's mbarrier `remote_barrier` with its byte count.
    Both are `shared::cluster` pointers (see `nvvm.mapa`). Becomes
    `st.async.shared::cluster.mbarrier::complete_tx::bytes`.

    ```mlir
    nvtma.dsmem_store %v, %dst, %bar : i32, !llvm.ptr<7>, !llvm.ptr<7>
    ```
  }];
  let arguments = (ins AnyTypeOf<[I32, I64, F32, F64, NVTMA_Vector1D<[2, 4], [I32, F32]>,
                                  NVTMA_Vector1D<[2], [I64, F64]>]>:$value,
                       NVTMA_ClusterPtr:$dst, NVTMA_ClusterPtr:$remote_barrier);
  let assemblyFormat = [{
    $value `,` $dst `,` $remote_barrier attr-dict `:` qualified(type($value)) `,` qualified(type($dst)) `,` qualified(type($remote_barrier))
  }];
}

def NVTMA_BulkCommitGroupOp : NVTMA_Op<"bulk_commit_group"> {
  let summary = "commit the pending bulk stores into a group";
  let description = [{
    Becomes `cp.async.bulk.commit_group`.

    ```mlir
    nvtma.bulk_commit_group
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def NVTMA_BulkWaitGroupOp : NVTMA_Op<"bulk_wait_group"> {
  let summary = "wait until at most `pending` bulk groups are outstanding";
  let description = [{
    With `read`, waits only until the groups' shared-memory sources have
    been read (the buffers may be reused); without, until the writes are
    done. Becomes `cp.async.bulk.wait_group{.read} pending`.

    ```mlir
    nvtma.bulk_wait_group 0 {read}
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>]>:$pending, UnitAttr:$read);
  let assemblyFormat = "$pending attr-dict";
}

//===----------------------------------------------------------------------===//
// Addresses
//===----------------------------------------------------------------------===//

def NVTMA_AddressOfOp : NVTMA_Op<"address_of", [Pure]> {
  let summary = "pointer to an element of a memref";
  let description = [{
    The address of `memref[indices]` as an LLVM pointer in the memref's
    address space, for the pointer-based copies above. Becomes address
    arithmetic on the memref descriptor.

    ```mlir
    %p = nvtma.address_of %buf[%i] : memref<1024xf16, 3> -> !llvm.ptr<3>
    ```
  }];
  let arguments = (ins AnyMemRef:$memref, Variadic<Index>:$indices);
  let results = (outs LLVM_AnyPointer:$ptr);
  let assemblyFormat = [{
    $memref `[` $indices `]` attr-dict `:` qualified(type($memref)) `->` qualified(type($ptr))
  }];
  let hasVerifier = 1;
}

def NVTMA_MBarrierAddressOp : NVTMA_Op<"mbarrier_address", [Pure]> {
  let summary = "pointer to one mbarrier of an nvgpu mbarrier group";
  let description = [{
    Bridges upstream `!nvgpu.mbarrier.group` and pointer-based PTX. Becomes
    address arithmetic.

    ```mlir
    %p = nvtma.mbarrier_address %bars[%i] : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>> -> !llvm.ptr<3>
    ```
  }];
  let arguments = (ins NVGPU_MBarrierGroup:$barriers, Index:$barrier_id);
  let results = (outs NVTMA_SharedPtr:$ptr);
  let assemblyFormat = [{
    $barriers `[` $barrier_id `]` attr-dict `:` qualified(type($barriers)) `->` qualified(type($ptr))
  }];
}

//===----------------------------------------------------------------------===//
// Warp and memory instructions that NVVM lacks or that must stay per site
//===----------------------------------------------------------------------===//

def NVTMA_ReadSpecialRegisterOp : NVTMA_Op<"read_special_register"> {
  let summary = "read %tid.x/y/z or %laneid where the op stands";
  let description = [{
    NVVM's reads of these registers are pure, so LLVM hoists them, and what
    is computed from them, out of the loops they sit in (an epilogue's
    per-register addresses then live in registers across a persistent loop,
    and spill). This read is volatile: it stays where it is written, and so
    does what uses it. Becomes `mov.u32 $0, %tid.x;` (or `%laneid`).

    ```mlir
    %t = nvtma.read_special_register <tid_x> : i32
    ```
  }];
  let arguments = (ins NVTMA_SpecialRegisterAttr:$reg);
  let results = (outs I32:$result);
  let assemblyFormat = "$reg attr-dict `:` type($result)";
}

def NVTMA_ElectActiveOp : NVTMA_Op<"elect_active"> {
  let summary = "true in one lane of those that run this op, elected here";
  let description = [{
    `activemask` and `elect.sync` over its lanes, as one statement of this
    op's own: in a branch that splits a warp, one lane of the part that runs
    it. Built from NVVM's `activemask` and `elect.sync`, two elections that
    end both arms of such a branch alike were merged by LLVM past the
    branch's end, where the warp runs reconverged, and one lane of the
    whole warp was elected once instead of once a part. The lowering gives
    each op's inline PTX a comment numbering it, which keeps them apart.

    ```mlir
    %one = nvtma.elect_active : i1
    ```
  }];
  let results = (outs I1:$pred);
  let assemblyFormat = "attr-dict `:` type($pred)";
}

def NVTMA_WgmmaMmaAsyncRsOp : NVTMA_Op<"wgmma_mma_async_rs", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "wgmma with A from registers: acc (+)= A·Bᵀ for one 64 x k block";
  let description = [{
    `wgmma.mma_async` with A held in registers (four 32-bit registers a
    thread, ldmatrix's layout of the 64 x k block) and B from a shared-memory
    descriptor, into f32 accumulators: `acc` is the warpgroup's 64 x `n`
    tile, n/2 f32 registers a thread, and the result its new value.
    `nvvm.wgmma.mma_async` takes A only from shared memory. k follows the
    types: 16 for f16/bf16, 8 for tf32, 32 for fp8. `scale_d` is a run-time
    value (false: acc = A·B); `scale_a`/`scale_b` are 1 or -1 (negate the
    operand). B is K-major. Needs sm_90a.

    ```mlir
    %d = nvtma.wgmma_mma_async_rs %acc, %a, %b, %scale_d
        {n = 16 : i32, type_a = #nvtma.wgmma_type<bf16>, type_b = #nvtma.wgmma_type<bf16>}
        : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>, vector<4xi32>
    ```
  }];
  let arguments = (ins LLVM_AnyStruct:$acc, NVTMA_Vector1D<[4], [I32]>:$a, I64:$b_desc, I1:$scale_d,
      ConfinedAttr<I32Attr, [IntMinValue<8>, IntMaxValue<256>]>:$n,
      NVTMA_WgmmaTypeAttr:$type_a, NVTMA_WgmmaTypeAttr:$type_b,
      DefaultValuedAttr<ConfinedAttr<I32Attr, [IntIsOneOf<[1, -1]>]>, "1">:$scale_a,
      DefaultValuedAttr<ConfinedAttr<I32Attr, [IntIsOneOf<[1, -1]>]>, "1">:$scale_b);
  let results = (outs LLVM_AnyStruct:$result);
  let assemblyFormat = [{
    $acc `,` $a `,` $b_desc `,` $scale_d attr-dict `:` type($acc) `,` type($a)
  }];
  let hasVerifier = 1;
}

def NVTMA_VectorAtomicAddOp : NVTMA_Op<"vector_atomic_add", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "atomic add of 2 x f16/bf16, or 2 or 4 x f32, at one address";
  let description = [{
    `*ptr += value` lane by lane as one atomic access. With a result (2 x
    f16 or bf16 only) it returns the old value: `atom.add.noftz.f16x2` /
    `.bf16x2`; without, `red` (2 x f16/bf16 at a generic, global or shared
    address, 2 or 4 x f32 at a global one: `red.global.add.v2.f32`, PTX ISA
    8.1). The address must be aligned to the value's size; the kernel
    records follow `ptr` back to a tensor parameter, whose launch checks it.

    ```mlir
    %old = nvtma.vector_atomic_add %p, %v {scope = #nvtma.atomic_scope<gpu>} : !llvm.ptr<1>, vector<2xbf16> -> vector<2xbf16>
    nvtma.vector_atomic_add %q, %w : !llvm.ptr<1>, vector<4xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[LLVM_PointerInAddressSpace<0>, LLVM_PointerInAddressSpace<1>,
                                  LLVM_PointerInAddressSpace<3>]>:$ptr,
      AnyTypeOf<[NVTMA_Vector1D<[2], [F16, BF16]>, NVTMA_Vector1D<[2, 4], [F32]>]>:$value,
      DefaultValuedAttr<NVTMA_AtomicScopeAttr, "AtomicScope::GPU">:$scope);
  let results = (outs Optional<AnyVectorOfNonZeroRank>:$result);
  let assemblyFormat = [{
    $ptr `,` $value attr-dict `:` qualified(type($ptr)) `,` type($value) (`->` type($result)^)?
  }];
  let hasVerifier = 1;
}

def NVTMA_ActivemaskOp : NVTMA_Op<"activemask"> {
  let summary = "the lanes of the warp that run this op (activemask.b32)";
  let description = [{
    A mask of the warp's lanes executing this op, read where it stands (it
    is not pure: what it returns depends on the branch it is in). Given to
    `nvvm.elect.sync` it elects one of those lanes; `nvtma.elect_active`
    does both as one statement LLVM merges with no other.

    ```mlir
    %m = nvtma.activemask : i32
    ```
  }];
  let results = (outs I32:$mask);
  let assemblyFormat = "attr-dict `:` type($mask)";
}

def NVTMA_BarrierSyncOp : NVTMA_Op<"barrier_sync"> {
  let summary = "wait at named barrier `id` for `count` threads (bar.sync)";
  let description = [{
    `barrier.sync.aligned id, count`: the calling threads wait at named
    barrier `id` (0-15; 0 is the CTA-wide `__syncthreads` barrier) until
    `count` threads (a multiple of 32) have arrived, or every thread of the
    CTA without `count`. Lowers to `nvvm.barrier`, whose custom syntax reads
    a location that follows it as a reduction: IR printed with locations
    did not parse back. Constant operands are checked here; a count past
    the block's threads hangs, which only the DSL (knowing the block) can
    refuse.

    ```mlir
    nvtma.barrier_sync %id, %count
    ```
  }];
  let arguments = (ins I32:$id, Optional<I32>:$count);
  let assemblyFormat = "$id (`,` $count^)? attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Numerics NVVM lacks
//===----------------------------------------------------------------------===//

def NVTMA_FloatFnOp : NVTMA_Op<"float_fn", [Pure, SameOperandsAndResultType]> {
  let summary = "a float function as its one PTX instruction";
  let description = [{
    One PTX instruction on f32 (or f64) values, where MLIR's math ops
    become libdevice calls or several instructions:
    - `ex2_approx`, `lg2_approx`, `sin_approx`, `cos_approx` (f32): the
      `.approx.f32` instructions;
    - `rsqrt_approx` (f32 or f64): `rsqrt.approx.f32` / `.f64`;
    - `div_approx` (f32, two operands: a / b): `div.approx.f32`, CUDA's
      `__fdividef`;
    - `sqrt_rn` (f32 or f64): IEEE `sqrt.rn` (`llvm.sqrt`, which the GPU
      lowering otherwise turns into a libdevice call).

    ```mlir
    %e = nvtma.float_fn <ex2_approx> %x : f32
    %q = nvtma.float_fn <div_approx> %a, %b : f32
    ```
  }];
  let arguments = (ins NVTMA_FloatFnAttr:$fn, Variadic<AnyTypeOf<[F32, F64]>>:$operands);
  let results = (outs AnyTypeOf<[F32, F64]>:$result);
  let assemblyFormat = "$fn $operands attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def NVTMA_TruncFRzOp : NVTMA_Op<"truncf_rz", [Pure]> {
  let summary = "f64 -> f32 rounded toward zero (cvt.rz.f32.f64)";
  let description = [{
    `arith.truncf` rounds to nearest; this rounds toward zero, the first
    step of a round-to-odd narrowing (f64 to fp8, which has no direct cvt).

    ```mlir
    %f = nvtma.truncf_rz %d : f64 to f32
    ```
  }];
  let arguments = (ins F64:$value);
  let results = (outs F32:$result);
  let assemblyFormat = "$value attr-dict `:` type($value) `to` type($result)";
}

def NVTMA_FPToIntSatOp : NVTMA_Op<"fptoint_sat", [Pure]> {
  let summary = "float -> integer toward zero, saturating, NaN to 0";
  let description = [{
    f32 or f64 (or a 1-D vector of them) to a signed integer (or unsigned
    with `unsigned`) of 8, 16, 32 or 64 bits, lane by lane, rounding toward
    zero: values past the range clamp to it and NaN is 0 (LLVM's
    `fptosi.sat`/`fptoui.sat`). `arith.fptosi` makes them poison, so a
    constant NaN or 3e9 lost the store of its result. A scalar to 32 or 64
    bits is one `cvt.rzi` (with a select of 0 for NaN where cvt.rzi gives
    the top bit: from f64, or to 64 bits).

    ```mlir
    %i = nvtma.fptoint_sat %x : f32 to i32
    %u = nvtma.fptoint_sat %v unsigned : vector<4xf32> to vector<4xi8>
    ```
  }];
  let arguments = (ins AnyTypeOf<[F32, F64, FixedVectorOfRankAndType<[1], [F32, F64]>]>:$value,
                       UnitAttr:$is_unsigned);
  let results = (outs AnyTypeOf<[I8, I16, I32, I64,
                                   FixedVectorOfRankAndType<[1], [I8, I16, I32, I64]>]>:$result);
  let assemblyFormat = [{
    $value (`unsigned` $is_unsigned^)? attr-dict `:` type($value) `to` type($result)
  }];
  let hasVerifier = 1;
}

#endif // NVTMA_OPS
