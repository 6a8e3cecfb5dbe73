"""Parameterized nvtma kernels: the examples, the GPU tests and the
benchmarks are built from these.

Each function returns nvtma IR text for one gpu.module (compile it with
nvtma.compile) plus the launch configuration it expects. Shapes, strides and
coordinates are outermost-first, like memrefs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ELEM_BYTES = {"i8": 1, "ui8": 1, "f8E4M3FN": 1, "f8E5M2": 1, "i16": 2, "f16": 2, "bf16": 2,
              "i32": 4, "f32": 4, "i64": 8, "f64": 8}


@dataclass
class KernelSpec:
    """IR of one kernel plus how to launch it."""
    ir: str
    name: str
    grid: tuple
    block: tuple
    cluster: tuple | None = None
    smem: int = 0
    info: dict | None = None


def _shape(shape, elem):
    return "memref<" + "x".join(str(d) for d in shape) + f"x{elem}>"


def _smem(shape, elem):
    return "memref<" + "x".join(str(d) for d in shape) + f"x{elem}, #gpu.address_space<workgroup>>"


def _atom(kind, elem, box, **fields):
    from .dialects.nvtma import tma_atom_type_str  # noqa: F401 (needs MLIR only to parse)
    return tma_atom_type_str(kind, elem, box, **fields)


def atom_str(kind, elem, box, **fields) -> str:
    """tma_atom type spelling, without importing MLIR."""
    parts = [kind, elem]
    if fields.get("tma_format"):
        parts.append(f"tma_format = {fields['tma_format']}")
    parts.append("box = [" + ", ".join(map(str, box)) + "]")
    tile = fields.get("tile")
    if tile and list(tile) != list(box):
        parts.append("tile = [" + ", ".join(map(str, tile)) + "]")
    for key, default in (("swizzle", "none"), ("l2_promotion", "l2_128b"), ("interleave", "none"),
                         ("oob_fill", "none")):
        v = fields.get(key, default)
        if v != default:
            parts.append(f"{key} = {v}")
    if fields.get("multicast", 1) != 1:
        parts.append(f"multicast = {fields['multicast']}")
    if kind == "reduce" and fields.get("reduction", "add") != "add":
        parts.append(f"reduction = {fields['reduction']}")
    if fields.get("lower_corner") is not None:
        parts.append("lower_corner = [" + ", ".join(map(str, fields["lower_corner"])) + "]")
        parts.append("upper_corner = [" + ", ".join(map(str, fields["upper_corner"])) + "]")
    return "!nvtma.tma_atom<" + ", ".join(parts) + ">"


_BARS = "!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>"


def _bars(n):
    return f"!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = {n}>"


def _armed_barrier(nbytes: int, thread_ids: bool = True) -> str:
    """One mbarrier (%bar) that thread 0 initializes and then arms for
    `nbytes` of TMA traffic. Defines %tid, %is0 and %w0 (warp 0, which issues
    the copy) unless the kernel has them (`thread_ids=False`). Needs %c0, %c1
    and %c32. The init is fenced and published by a CTA barrier before the
    arrive (racecheck flags an unpublished init)."""
    ids = """
      %tid = gpu.thread_id x
      %is0 = arith.cmpi eq, %tid, %c0 : index""" if thread_ids else ""
    warp = """
      %w = arith.divui %tid, %c32 : index
      %w0 = arith.cmpi eq, %w, %c0 : index""" if thread_ids else ""
    return f"""      %bar = nvgpu.mbarrier.create -> {_BARS}{ids}
      scf.if %is0 {{
        nvgpu.mbarrier.init %bar[%c0], %c1 : {_BARS}
        nvvm.fence.mbarrier.init
      }}
      gpu.barrier
      scf.if %is0 {{
        %bytes = arith.constant {nbytes} : index
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes : {_BARS}
      }}{warp}"""


# Every thread waits for phase 0 of %bar.
_WAIT_BARRIER = f"""      %phase = arith.constant false
      %ticks = arith.constant 10000000 : index
      nvgpu.mbarrier.try_wait.parity %bar[%c0], %phase, %ticks : {_BARS}"""


def _module(body: str, chip: str = "sm_90a", features: str = "+ptx86") -> str:
    return (f"module attributes {{gpu.container_module}} {{\n"
            f"  gpu.module @kernels [#nvvm.target<chip = \"{chip}\", features = \"{features}\">] {{\n"
            f"{body}\n  }}\n}}\n")


# L2 eviction priorities for a copy's `cache_hint` operand: the 64-bit cache
# policies createpolicy.fractional.L2::<priority>.b64 with fraction 1.0
# makes (the values CUTLASS's CacheHintSm90 spells out).
CACHE_HINTS = {"evict_normal": 0x1000000000000000, "evict_first": 0x12F0000000000000,
               "evict_last": 0x14F0000000000000}


def _hint(name, ssa):
    """(IR defining `ssa` for cache hint `name`, the copy's operand suffix)."""
    if name is None:
        return "", ""
    if name not in CACHE_HINTS:
        raise ValueError(f"cache hint {name!r}: one of {sorted(CACHE_HINTS)} or None")
    return f"      {ssa} = arith.constant {CACHE_HINTS[name]} : i64\n", f" cache_hint {ssa}"


def _consts(*vals):
    return "\n".join(f"      %c{v} = arith.constant {v} : index" for v in sorted(set(vals)))


# --------------------------------------------------------------------------- descriptors

def dump_descriptor(shape, elem="f16", box=(64, 64), l2_promotion="l2_128b", swizzle="none") -> KernelSpec:
    """The #3672 check: a kernel copies its own descriptor out
    (nvtma.copy_tensormap) into a 16 x i64 buffer."""
    atom = atom_str("load", elem, box, l2_promotion=l2_promotion, swizzle=swizzle)
    tiler = ", ".join(map(str, box))
    body = f"""    gpu.func @dump_desc(%x: {_shape(shape, elem)}, %out: memref<16xi64>) kernel {{
      %c0 = arith.constant 0 : index
      %a = nvtma.make_tiled_tma_atom %x {{cta_tiler = array<i64: {tiler}>}} : {_shape(shape, elem)} -> {atom}
      %tid = gpu.thread_id x
      %is0 = arith.cmpi eq, %tid, %c0 : index
      scf.if %is0 {{
        %p = nvtma.address_of %out[%c0] : memref<16xi64> -> !llvm.ptr
        nvtma.copy_tensormap %a, %p : {atom}, !llvm.ptr
      }}
      gpu.return
    }}"""
    return KernelSpec(_module(body), "dump_desc", (1, 1, 1), (32, 1, 1))


# --------------------------------------------------------------------------- tiled copy

def tile_copy(shape, elem="f16", box=(64, 64), swizzle="none", l2_promotion="l2_128b",
              oob_fill="none", prefetch=False) -> KernelSpec:
    """One CTA per box: TMA load -> shared -> TMA store. Out-of-bounds boxes
    at the edges load with `oob_fill` and store clipped."""
    rank = len(shape)
    assert len(box) == rank
    tiles = [math.ceil(s / b) for s, b in zip(shape, box)]
    eb = ELEM_BYTES[elem]
    nbytes = math.prod(box) * eb
    ld = atom_str("load", elem, box, swizzle=swizzle, l2_promotion=l2_promotion, oob_fill=oob_fill)
    st = atom_str("store", elem, box, swizzle=swizzle)
    mem = _shape(shape, elem)
    sm = _smem(box, elem)
    tiler = ", ".join(map(str, box))
    # grid: x = innermost tiles, y = next, z = all the rest (decoded below)
    gx = tiles[-1]
    gy = tiles[-2] if rank >= 2 else 1
    gz = math.prod(tiles[:-2]) if rank > 2 else 1
    lines = []
    lines.append("      %bx = gpu.block_id x")
    lines.append("      %by = gpu.block_id y")
    lines.append("      %bz = gpu.block_id z")
    tc = []  # tile coordinate per dim, outermost first
    rest = "%bz"
    outer = list(range(rank - 2))
    for k, d in enumerate(reversed(outer)):
        n = tiles[d]
        lines.append(f"      %n{d} = arith.constant {n} : index")
        lines.append(f"      %t{d} = arith.remui {rest}, %n{d} : index")
        lines.append(f"      %r{d} = arith.divui {rest}, %n{d} : index")
        rest = f"%r{d}"
    for d in range(rank):
        if d == rank - 1:
            tc.append("%bx")
        elif d == rank - 2:
            tc.append("%by")
        else:
            tc.append(f"%t{d}")
    pre = f"\n      nvtma.prefetch_descriptor %a : {ld}" if prefetch else ""
    body = f"""    gpu.func @tile_copy(%in: {mem}, %out: {mem}) workgroup(%s: {sm} {{llvm.align = 1024 : i64}}) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %a = nvtma.make_tiled_tma_atom %in {{cta_tiler = array<i64: {tiler}>}} : {mem} -> {ld}
      %b = nvtma.make_tiled_tma_atom %out {{cta_tiler = array<i64: {tiler}>}} : {mem} -> {st}{pre}
{chr(10).join(lines)}
      %c32 = arith.constant 32 : index
{_armed_barrier(nbytes)}
      %co:{rank} = nvtma.tma_partition %a[{", ".join(tc)}] : {ld} -> {", ".join(["index"] * rank)}
      scf.if %w0 {{
        nvtma.copy %a[{", ".join(f"%co#{i}" for i in range(rank))}], %s, barrier %bar[%c0] : {ld}, {sm}, {_BARS}
      }}
{_WAIT_BARRIER}
      scf.if %w0 {{
        nvtma.copy %b[{", ".join(f"%co#{i}" for i in range(rank))}], %s : {st}, {sm}
        nvtma.bulk_commit_group
        nvtma.bulk_wait_group 0
      }}
      gpu.return
    }}"""
    return KernelSpec(_module(body), "tile_copy", (gx, gy, gz), (128, 1, 1),
                      info=dict(tiles=tiles, box_bytes=nbytes))


def box_dump(shape, elem="f32", box=(8, 32), oob_fill="none", coords=(0, 0)) -> KernelSpec:
    """Loads one (possibly out-of-bounds) box at `coords` and writes shared
    memory verbatim to `out` (box-shaped): shows the OOB fill."""
    rank = len(shape)
    ld = atom_str("load", elem, box, oob_fill=oob_fill)
    mem, sm = _shape(shape, elem), _smem(box, elem)
    out = _shape(box, elem)
    nbytes = math.prod(box) * ELEM_BYTES[elem]
    n = math.prod(box)
    idx = []
    rest = "%e"
    for d in range(rank - 1, -1, -1):
        idx.insert(0, f"%i{d}")
    decode = []
    for d in range(rank - 1, -1, -1):
        decode.append(f"        %n{d} = arith.constant {box[d]} : index")
        decode.append(f"        %i{d} = arith.remui {rest}, %n{d} : index")
        decode.append(f"        %q{d} = arith.divui {rest}, %n{d} : index")
        rest = f"%q{d}"
    cdecl = "\n".join(f"      %k{i} = arith.constant {c} : i64\n      %x{i} = arith.index_cast %k{i} : i64 to index"
                      for i, c in enumerate(coords))
    body = f"""    gpu.func @box_dump(%in: {mem}, %out: {out}) workgroup(%s: {sm} {{llvm.align = 1024 : i64}}) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %a = nvtma.make_tiled_tma_atom %in {{cta_tiler = array<i64: {", ".join(map(str, box))}>}} : {mem} -> {ld}
{cdecl}
      %c32 = arith.constant 32 : index
{_armed_barrier(nbytes)}
      scf.if %w0 {{
        nvtma.copy %a[{", ".join(f"%x{i}" for i in range(rank))}], %s, barrier %bar[%c0] : {ld}, {sm}, {_BARS}
      }}
{_WAIT_BARRIER}
      %bd = gpu.block_dim x
      %total = arith.constant {n} : index
      scf.for %e = %tid to %total step %bd {{
{chr(10).join(decode)}
        %v = memref.load %s[{", ".join(idx)}] : {sm}
        memref.store %v, %out[{", ".join(idx)}] : {out}
      }}
      gpu.return
    }}"""
    return KernelSpec(_module(body), "box_dump", (1, 1, 1), (128, 1, 1))


# --------------------------------------------------------------------------- pipelined copy

def pipelined_copy(rows, cols, elem="f16", box=(64, 128), stages=4, l2_load="l2_128b",
                   l2_store="none", threads=32, load_hint=None, store_hint=None) -> KernelSpec:
    """Persistent TMA copy like ../shared/bench/tma_copy_bw.cu: each CTA walks
    tiles blockIdx.x, +gridDim.x, ...; `stages` loads in flight; one warp
    issues, and each stage is refilled once its store has read shared memory
    (bulk_wait_group.read). On the H200, giving each CTA pairs or runs of
    row-adjacent tiles instead was 1-11% slower. `load_hint` / `store_hint`:
    an L2 eviction priority for the copies (CACHE_HINTS), or None."""
    ld_hint_ir, ld_hint = _hint(load_hint, "%hint_ld")
    st_hint_ir, st_hint = _hint(store_hint, "%hint_st")
    by, bx = box
    tiles_x, tiles_y = cols // bx, rows // by
    assert rows % by == 0 and cols % bx == 0
    ntiles = tiles_x * tiles_y
    eb = ELEM_BYTES[elem]
    tile_bytes = by * bx * eb
    mem = _shape((rows, cols), elem)
    ld = atom_str("load", elem, box, l2_promotion=l2_load)
    st = atom_str("store", elem, box, l2_promotion=l2_store)
    stage_sm = _smem((stages, by, bx), elem)
    slice_t = f"memref<{by}x{bx}x{elem}, strided<[{bx}, 1], offset: ?>, #gpu.address_space<workgroup>>"
    bars = _bars(stages)

    def load_block(i, indent):
        p = " " * indent
        return f"""{p}%li_s = arith.remui {i}, %cS : index
{p}%li_t0 = arith.muli {i}, %grid : index
{p}%li_t = arith.addi %li_t0, %bid : index
{p}%li_ty = arith.divui %li_t, %cTX : index
{p}%li_tx = arith.remui %li_t, %cTX : index
{p}%li_r = arith.muli %li_ty, %cBY : index
{p}%li_c = arith.muli %li_tx, %cBX : index
{p}%li_slice = memref.subview %smem[%li_s, 0, 0] [1, {by}, {bx}] [1, 1, 1] : {stage_sm} to {slice_t}
{p}scf.if %elected {{
{p}  nvgpu.mbarrier.arrive.expect_tx %bars[%li_s], %cTB : {bars}
{p}}}
{p}nvtma.copy %a[%li_r, %li_c], %li_slice, barrier %bars[%li_s]{ld_hint} : {ld}, {slice_t}, {bars}"""

    body = f"""    gpu.func @pipelined_copy(%in: {mem}, %out: {mem}) workgroup(%smem: {stage_sm} {{llvm.align = 1024 : i64}}) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cS = arith.constant {stages} : index
      %cTX = arith.constant {tiles_x} : index
      %cBY = arith.constant {by} : index
      %cBX = arith.constant {bx} : index
      %cTB = arith.constant {tile_bytes} : index
      %cN = arith.constant {ntiles} : index
{ld_hint_ir}{st_hint_ir}      %a = nvtma.make_tiled_tma_atom %in {{cta_tiler = array<i64: {by}, {bx}>}} : {mem} -> {ld}
      %b = nvtma.make_tiled_tma_atom %out {{cta_tiler = array<i64: {by}, {bx}>}} : {mem} -> {st}
      %bid = gpu.block_id x
      %grid = gpu.grid_dim x
      %bars = nvgpu.mbarrier.create -> {bars}
      %tid = gpu.thread_id x
      %elected = arith.cmpi eq, %tid, %c0 : index
      scf.if %elected {{
        scf.for %s = %c0 to %cS step %c1 {{
          nvgpu.mbarrier.init %bars[%s], %c1 : {bars}
        }}
        nvvm.fence.mbarrier.init
      }}
      gpu.barrier
      // tiles this CTA owns: ceil((ntiles - bid) / grid), none past the last tile
      %has = arith.cmpi ult, %bid, %cN : index
      %rem0 = arith.subi %cN, %bid : index
      %rem = arith.select %has, %rem0, %c0 : index
      %gm1 = arith.subi %grid, %c1 : index
      %num = arith.addi %rem, %gm1 : index
      %n = arith.divui %num, %grid : index
      %pro = arith.minui %n, %cS : index
      scf.for %i = %c0 to %pro step %c1 {{
{load_block("%i", 8)}
      }}
      %ticks = arith.constant 10000000 : index
      scf.for %i = %c0 to %n step %c1 {{
        %s = arith.remui %i, %cS : index
        %round = arith.divui %i, %cS : index
        %r1 = arith.remui %round, %c2 : index
        %phase = arith.cmpi ne, %r1, %c0 : index
        nvgpu.mbarrier.try_wait.parity %bars[%s], %phase, %ticks : {bars}
        %t0 = arith.muli %i, %grid : index
        %t = arith.addi %t0, %bid : index
        %ty = arith.divui %t, %cTX : index
        %tx = arith.remui %t, %cTX : index
        %row = arith.muli %ty, %cBY : index
        %col = arith.muli %tx, %cBX : index
        %slice = memref.subview %smem[%s, 0, 0] [1, {by}, {bx}] [1, 1, 1] : {stage_sm} to {slice_t}
        nvtma.copy %b[%row, %col], %slice{st_hint} : {st}, {slice_t}
        nvtma.bulk_commit_group
        // refill the stage the previous store read from
        %has_prev = arith.cmpi uge, %i, %c1 : index
        %im1 = arith.subi %i, %c1 : index
        %next = arith.addi %im1, %cS : index
        %in_range = arith.cmpi ult, %next, %n : index
        %refill = arith.andi %has_prev, %in_range : i1
        scf.if %refill {{
          nvtma.bulk_wait_group 1 {{read}}
{load_block("%next", 10)}
        }}
      }}
      nvtma.bulk_wait_group 0
      gpu.return
    }}"""
    body = body.replace("      %c1 = arith.constant 1 : index\n", "      %c1 = arith.constant 1 : index\n      %c2 = arith.constant 2 : index\n", 1)
    return KernelSpec(_module(body), "pipelined_copy", None, (threads, 1, 1), smem=0,
                      info=dict(tiles=ntiles, tile_bytes=tile_bytes, stages=stages))


# --------------------------------------------------------------------------- multicast

def multicast_copy(rows, cols, elem="f16", tile=(64, 64), cluster=2) -> KernelSpec:
    """Clusters of `cluster` CTAs share one tile: each CTA loads slice `rank`
    and multicasts it to all; then every CTA stores its full copy to
    out[blockIdx.x] (out: [grid, tile...])."""
    ty, tx = tile
    by = ty // cluster
    eb = ELEM_BYTES[elem]
    tiles_x = cols // tx
    ntiles = (rows // ty) * tiles_x
    grid = ntiles * cluster
    ld = atom_str("load_multicast", elem, (by, tx), tile=tile, multicast=cluster)
    st = atom_str("store", elem, (1, ty, tx))
    mem = _shape((rows, cols), elem)
    out = _shape((grid, ty, tx), elem)
    sm3 = _smem((1, ty, tx), elem)
    sm2 = f"memref<{ty}x{tx}x{elem}, strided<[{tx}, 1]>, #gpu.address_space<workgroup>>"
    body = f"""    gpu.func @multicast_copy(%in: {mem}, %out: {out}) workgroup(%s: {sm3} {{llvm.align = 1024 : i64}}) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %cC = arith.constant {cluster} : index
      %cTX = arith.constant {tiles_x} : index
      %a = nvtma.make_tiled_tma_atom %in {{cta_tiler = array<i64: {ty}, {tx}>}} : {mem} -> {ld}
      %b = nvtma.make_tiled_tma_atom %out {{cta_tiler = array<i64: 1, {ty}, {tx}>}} : {out} -> {st}
      %bid = gpu.block_id x
      %rank = gpu.cluster_block_id x
      %tile = arith.divui %bid, %cC : index
      %tyi = arith.divui %tile, %cTX : index
      %txi = arith.remui %tile, %cTX : index
      %co:2 = nvtma.tma_partition %a[%tyi, %txi] : {ld} -> index, index
      %bar = nvgpu.mbarrier.create -> {_BARS}
      %tid = gpu.thread_id x
      %is0 = arith.cmpi eq, %tid, %c0 : index
      scf.if %is0 {{
        nvgpu.mbarrier.init %bar[%c0], %c1 : {_BARS}
        nvvm.fence.mbarrier.init
      }}
      gpu.barrier
      scf.if %is0 {{
        %bytes = arith.constant {ty * tx * eb} : index
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes : {_BARS}
      }}
      // every CTA's barrier is armed before any multicast lands
      nvvm.cluster.arrive
      nvvm.cluster.wait
      %mask = nvtma.create_tma_multicast_mask [%rank] {{cluster_shape = array<i64: {cluster}>, mode = 0 : i64}} : i16
      %w = arith.divui %tid, %c32 : index
      %w0 = arith.cmpi eq, %w, %c0 : index
      %s2 = memref.subview %s[0, 0, 0] [1, {ty}, {tx}] [1, 1, 1] : {sm3} to {sm2}
      scf.if %w0 {{
        nvtma.copy %a[%co#0, %co#1], %s2, barrier %bar[%c0] mask %mask cta %rank : {ld}, {sm2}, {_BARS}
      }}
{_WAIT_BARRIER}
      scf.if %w0 {{
        nvtma.copy %b[%bid, %c0, %c0], %s : {st}, {sm3}
        nvtma.bulk_commit_group
        nvtma.bulk_wait_group 0
      }}
      // no CTA leaves while a peer may still write to its shared memory
      nvvm.cluster.arrive
      nvvm.cluster.wait
      gpu.return
    }}"""
    return KernelSpec(_module(body), "multicast_copy", (grid, 1, 1), (128, 1, 1), cluster=(cluster, 1, 1),
                      info=dict(ntiles=ntiles))


# --------------------------------------------------------------------------- reduce

def reduce_add(rows, cols, elem="f32", box=(32, 32), reduction="add") -> KernelSpec:
    """out[tile] <op>= in[tile] through cp.reduce.async.bulk.tensor."""
    by, bx = box
    eb = ELEM_BYTES[elem]
    ld = atom_str("load", elem, box)
    rd = atom_str("reduce", elem, box, reduction=reduction)
    mem = _shape((rows, cols), elem)
    sm = _smem(box, elem)
    body = f"""    gpu.func @reduce_tile(%in: {mem}, %out: {mem}) workgroup(%s: {sm} {{llvm.align = 1024 : i64}}) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %a = nvtma.make_tiled_tma_atom %in {{cta_tiler = array<i64: {by}, {bx}>}} : {mem} -> {ld}
      %r = nvtma.make_tiled_tma_atom %out {{cta_tiler = array<i64: {by}, {bx}>}} : {mem} -> {rd}
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %co:2 = nvtma.tma_partition %a[%by, %bx] : {ld} -> index, index
{_armed_barrier(by * bx * eb)}
      scf.if %w0 {{
        nvtma.copy %a[%co#0, %co#1], %s, barrier %bar[%c0] : {ld}, {sm}, {_BARS}
      }}
{_WAIT_BARRIER}
      scf.if %w0 {{
        nvtma.copy %r[%co#0, %co#1], %s : {rd}, {sm}
        nvtma.bulk_commit_group
        nvtma.bulk_wait_group 0
      }}
      gpu.return
    }}"""
    return KernelSpec(_module(body), "reduce_tile", (cols // bx, rows // by, 1), (128, 1, 1))


# --------------------------------------------------------------------------- im2col

def im2col_dump(n, h, w, c, pixels=64, channels=64, lower=(0, 0), upper=(0, 0),
                start=(0, 0, 0, 0), offsets=(0, 0), elem="f16") -> KernelSpec:
    """One im2col load of `pixels` x `channels` from an NHWC tensor starting
    at `start` = (n, h, w, c) with `offsets` (w, h), dumped to out."""
    ld = atom_str("im2col_load", elem, (pixels, channels), lower_corner=list(lower), upper_corner=list(upper))
    mem = _shape((n, h, w, c), elem)
    sm = _smem((pixels, channels), elem)
    out = _shape((pixels, channels), elem)
    eb = ELEM_BYTES[elem]
    st = "\n".join(f"      %x{i} = arith.constant {v} : index" for i, v in enumerate(start))
    of = "\n".join(f"      %o{i} = arith.constant {v} : i16" for i, v in enumerate(offsets))
    body = f"""    gpu.func @im2col_dump(%in: {mem}, %out: {out}) workgroup(%s: {sm} {{llvm.align = 1024 : i64}}) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %a = nvtma.make_tiled_tma_atom %in {{cta_tiler = array<i64: {pixels}, {channels}>}} : {mem} -> {ld}
{st}
{of}
{_armed_barrier(pixels * channels * eb)}
      scf.if %w0 {{
        nvtma.copy %a[%x0, %x1, %x2, %x3], %s, barrier %bar[%c0] offsets [%o0, %o1] : {ld}, {sm}, {_BARS}
      }}
{_WAIT_BARRIER}
      %bd = gpu.block_dim x
      %total = arith.constant {pixels * channels} : index
      %cC = arith.constant {channels} : index
      scf.for %e = %tid to %total step %bd {{
        %p = arith.divui %e, %cC : index
        %q = arith.remui %e, %cC : index
        %v = memref.load %s[%p, %q] : {sm}
        memref.store %v, %out[%p, %q] : {out}
      }}
      gpu.return
    }}"""
    return KernelSpec(_module(body), "im2col_dump", (1, 1, 1), (128, 1, 1))


# --------------------------------------------------------------------------- bulk, cp.async

def bulk_roundtrip(nbytes=16384) -> KernelSpec:
    """cp.async.bulk global -> shared (mbarrier) -> global (bulk group)."""
    n = nbytes
    body = f"""    gpu.func @bulk_roundtrip(%in: memref<{n}xi8>, %out: memref<{n}xi8>) workgroup(%s: memref<{n}xi8, #gpu.address_space<workgroup>> {{llvm.align = 128 : i64}}) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %size = arith.constant {n} : i32
{_armed_barrier(n)}
      %gp = nvtma.address_of %in[%c0] : memref<{n}xi8> -> !llvm.ptr
      %g = llvm.addrspacecast %gp : !llvm.ptr to !llvm.ptr<1>
      %op = nvtma.address_of %out[%c0] : memref<{n}xi8> -> !llvm.ptr
      %o = llvm.addrspacecast %op : !llvm.ptr to !llvm.ptr<1>
      %sp = nvtma.address_of %s[%c0] : memref<{n}xi8, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
      scf.if %w0 {{
        nvtma.bulk_copy g2s %sp, %g, %size, barrier %bar[%c0] : !llvm.ptr<3>, !llvm.ptr<1>, {_BARS}
      }}
{_WAIT_BARRIER}
      scf.if %w0 {{
        nvtma.bulk_copy s2g %o, %sp, %size : !llvm.ptr<1>, !llvm.ptr<3>
        nvtma.bulk_commit_group
        nvtma.bulk_wait_group 0
      }}
      gpu.return
    }}"""
    return KernelSpec(_module(body), "bulk_roundtrip", (1, 1, 1), (128, 1, 1))


def cp_async_roundtrip(nbytes=8192, cache_mode="cache_global") -> KernelSpec:
    """Every thread cp.async's 16-byte chunks to shared memory, then copies
    shared memory back out with plain loads and stores."""
    n = nbytes
    chunks = n // 16
    body = f"""    gpu.func @cp_async_roundtrip(%in: memref<{n}xi8>, %out: memref<{n}xi8>) workgroup(%s: memref<{n}xi8, #gpu.address_space<workgroup>> {{llvm.align = 128 : i64}}) kernel {{
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %tid = gpu.thread_id x
      %bd = gpu.block_dim x
      %nch = arith.constant {chunks} : index
      scf.for %k = %tid to %nch step %bd {{
        %off = arith.muli %k, %c16 : index
        %gp = nvtma.address_of %in[%off] : memref<{n}xi8> -> !llvm.ptr
        %g = llvm.addrspacecast %gp : !llvm.ptr to !llvm.ptr<1>
        %sp = nvtma.address_of %s[%off] : memref<{n}xi8, #gpu.address_space<workgroup>> -> !llvm.ptr<3>
        nvtma.cp_async %sp, %g {{size = 16 : i32, cache_mode = #nvtma.load_cache_mode<{cache_mode}>}} : !llvm.ptr<3>, !llvm.ptr<1>
      }}
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      gpu.barrier
      %total = arith.constant {n} : index
      scf.for %e = %tid to %total step %bd {{
        %v = memref.load %s[%e] : memref<{n}xi8, #gpu.address_space<workgroup>>
        memref.store %v, %out[%e] : memref<{n}xi8>
      }}
      gpu.return
    }}"""
    return KernelSpec(_module(body), "cp_async_roundtrip", (1, 1, 1), (128, 1, 1))


# --------------------------------------------------------------------------- descriptor update

def update_descriptor(rows, cols, elem="f16", box=(64, 64)) -> KernelSpec:
    """Copies A's descriptor to `ws`, re-points it at B on the device
    (tensormap.replace), fences, loads B's first tile through it and stores
    that to `out`; `ws` keeps the patched descriptor for inspection."""
    by, bx = box
    eb = ELEM_BYTES[elem]
    ld = atom_str("load", elem, box)
    st = atom_str("store", elem, box)
    mem = _shape((rows, cols), elem)
    dyn = f"memref<?x?x{elem}>"
    sm = _smem(box, elem)
    body = f"""    gpu.func @update_descriptor(%A: {mem}, %B: {dyn}, %out: {mem}, %ws: memref<16xi64>) workgroup(%s: {sm} {{llvm.align = 1024 : i64}}) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %a = nvtma.make_tiled_tma_atom %A {{cta_tiler = array<i64: {by}, {bx}>}} : {mem} -> {ld}
      %o = nvtma.make_tiled_tma_atom %out {{cta_tiler = array<i64: {by}, {bx}>}} : {mem} -> {st}
      %wp = nvtma.address_of %ws[%c0] : memref<16xi64> -> !llvm.ptr
      %wg = llvm.addrspacecast %wp : !llvm.ptr to !llvm.ptr<1>
      %tid = gpu.thread_id x
      %is0 = arith.cmpi eq, %tid, %c0 : index
      %w = arith.divui %tid, %c32 : index
      %w0 = arith.cmpi eq, %w, %c0 : index
      scf.if %is0 {{
        nvtma.copy_tensormap %a, %wg : {ld}, !llvm.ptr<1>
      }}
      gpu.barrier
      scf.if %w0 {{
        nvtma.update_tma_descriptor %a, %B, %wg : {ld}, {dyn}, !llvm.ptr<1>
      }}
      nvtma.fence_tma_desc_release
      gpu.barrier
      nvtma.fence_tma_desc_acquire %wg : !llvm.ptr<1>
      %b = nvtma.atom_from_descriptor %wg : !llvm.ptr<1> -> {ld}
{_armed_barrier(by * bx * eb, thread_ids=False)}
      scf.if %w0 {{
        nvtma.copy %b[%c0, %c0], %s, barrier %bar[%c0] : {ld}, {sm}, {_BARS}
      }}
{_WAIT_BARRIER}
      scf.if %w0 {{
        nvtma.copy %o[%c0, %c0], %s : {st}, {sm}
        nvtma.bulk_commit_group
        nvtma.bulk_wait_group 0
      }}
      gpu.return
    }}"""
    return KernelSpec(_module(body), "update_descriptor", (1, 1, 1), (128, 1, 1))


# --------------------------------------------------------------------------- GEMV

def _even_share(total: str, lo: str, hi: str) -> str:
    """IR for this CTA's share [lo, hi) of `total` items split evenly over
    the grid: [bid·total/grid, (bid+1)·total/grid)."""
    return (f"      {lo}0 = arith.muli %bid, {total} : index\n      {lo} = arith.divui {lo}0, %grid : index\n"
            f"      {hi}_b = arith.addi %bid, %c1 : index\n      {hi}0 = arith.muli {hi}_b, {total} : index\n"
            f"      {hi} = arith.divui {hi}0, %grid : index")


def gemv(m, k, w_dtype="bf16", tile=(32, 256), stages=6, l2_promotion="l2_256b", consumers=4,
         scale=None, fp8_math="f16x2", split="tiles", vec=8, x_dtype="bf16", w_hint=None) -> KernelSpec:
    """y = scale · (W · x), the weight-streaming GEMV of CUTLASS #3672.

    W [m, k] (bf16 or f8E4M3FN, read once through TMA with `l2_promotion`),
    x [k] bf16 (16-byte aligned: lanes load 8 elements at a time), y [m] f32 (zero it first: CTAs add partial sums into it),
    scale: None, "row" ([m] f32) or "tensor" ([1] f32). Warp 0 streams W tiles
    into a ring of `stages` shared-memory slots; `consumers` warps each own
    tile[0] / consumers rows of a slot, one 8-element vector per lane. The
    m/tile[0] × k/tile[1] tiles are split evenly over the grid in row-block
    order, so every CTA gets the same number of tiles within one; a row's
    partial sum is reduced across the warp and added to y when the CTA leaves
    the row block.

    bf16 W is widened to f32 and accumulated in f32. For fp8 W, `fp8_math`
    "f32" does the same (exact products, but two conversions per element
    bound it by the conversion rate); "f16x2" converts e4m3 pairs to f16x2
    (x too, so |x| must fit f16), sums each lane's 8 products of a tile
    with packed f16 FMAs and accumulates those partial sums in f32. (Widening
    e4m3 to f16 with integer shifts and masks instead of cvt was 3-6% slower
    on the H200: the conversion unit is not what limits this kernel.)

    `split` "tiles" (y must be zeroed first) splits the tile stream evenly and
    adds partial sums into y with atomics; "rows" gives each CTA whole row
    blocks (M/tile[0] of them, as evenly as the grid allows) and stores y, so
    y needs no zeroing and no atomics are used.

    `vec` elements of a row per lane and tile: 8 (a warp per row), or 16
    with fp8 f16x2 math (half a warp per row, 16-byte shared loads, and the
    per-row work of each tile spread over twice the elements).

    `x_dtype` "bf16", or "f16" with fp8 f16x2 math: x then enters the packed
    products as it is, with no per-tile conversion. `w_hint`: an L2 eviction
    priority for the W loads (CACHE_HINTS), or None."""
    w_hint_ir, w_hint_op = _hint(w_hint, "%hint_w")
    bm, bk = tile
    assert w_dtype in ("bf16", "f8E4M3FN"), w_dtype
    assert vec in (8, 16) and bk % vec == 0 and bk // vec in (16, 32), (vec, bk)
    assert m % bm == 0 and k % bk == 0 and bm % consumers == 0
    assert scale in (None, "row", "tensor") and (scale is not None or w_dtype == "bf16")
    assert fp8_math in ("f32", "f16x2") and split in ("tiles", "rows")
    packed = w_dtype == "f8E4M3FN" and fp8_math != "f32"
    assert vec == 8 or packed, "vec=16 needs fp8 W with f16x2 math"
    assert x_dtype == "bf16" or (x_dtype == "f16" and packed), "x_dtype='f16' needs fp8 W with f16x2 math"
    acc_n = 2 if packed else vec
    rpw = bm // consumers
    lpr = bk // vec          # lanes per row
    rps = 32 // lpr          # rows a warp covers at once
    assert rpw % rps == 0, (rpw, rps)
    nacc = rpw // rps        # rows (accumulators) per lane
    kt = k // bk
    ntiles = (m // bm) * kt
    eb = ELEM_BYTES[w_dtype]
    tile_bytes = bm * bk * eb
    fmt = "uint8" if w_dtype == "f8E4M3FN" else None
    ld = atom_str("load", w_dtype, tile, l2_promotion=l2_promotion, tma_format=fmt)
    wmem, xmem, ymem = _shape((m, k), w_dtype), _shape((k,), x_dtype), _shape((m,), "f32")
    smem_t = _smem((stages, bm, bk), w_dtype)
    slice_t = f"memref<{bm}x{bk}x{w_dtype}, strided<[{bk}, 1], offset: ?>, #gpu.address_space<workgroup>>"
    bars = _bars(2 * stages)
    vf = f"vector<{vec}xf32>"
    va = f"vector<{acc_n}xf32>"  # one row's accumulator
    params = f"%w: {wmem}, %x: {xmem}, %y: {ymem}"
    if scale:
        params += f", %scale: {_shape((m if scale == 'row' else 1,), 'f32')}"

    def widen(v, r):
        """W vector -> f32 vector."""
        if w_dtype == "bf16":
            return f"          %wf{r} = arith.extf {v} : vector<{vec}xbf16> to {vf}"
        lines = [f"          %wi{r} = vector.bitcast {v} : vector<{vec}x{w_dtype}> to vector<{vec}xi8>"]
        for j in range(vec // 2):
            lines += [f"          %wp{r}_{j} = vector.shuffle %wi{r}, %wi{r} [{2 * j}, {2 * j + 1}] : "
                      f"vector<{vec}xi8>, vector<{vec}xi8>",
                      f"          %wh{r}_{j} = nvvm.convert.f8x2.to.f16x2 %wp{r}_{j} : vector<2xi8> (f8E4M3FN) -> "
                      f"vector<2xf16>",
                      f"          %ws{r}_{j} = arith.extf %wh{r}_{j} : vector<2xf16> to vector<2xf32>"]
        lines += [f"          %wq{r}_0 = vector.shuffle %ws{r}_0, %ws{r}_1 [0, 1, 2, 3] : vector<2xf32>, vector<2xf32>",
                  f"          %wq{r}_1 = vector.shuffle %ws{r}_2, %ws{r}_3 [0, 1, 2, 3] : vector<2xf32>, vector<2xf32>",
                  f"          %wf{r} = vector.shuffle %wq{r}_0, %wq{r}_1 [0, 1, 2, 3, 4, 5, 6, 7] : "
                  f"vector<4xf32>, vector<4xf32>"]
        return "\n".join(lines)

    accs = ", ".join(f"%acc{r} = %zacc" for r in range(nacc))
    acc_types = ", ".join([va] * nacc)

    def packed_row(r):
        lines = [f"          %wi{r} = vector.bitcast %wv{r} : vector<{vec}x{w_dtype}> to vector<{vec}xi8>"]
        for j in range(vec // 2):
            lines += [f"          %wp{r}_{j} = vector.shuffle %wi{r}, %wi{r} [{2 * j}, {2 * j + 1}] : "
                      f"vector<{vec}xi8>, vector<{vec}xi8>",
                      f"          %wh{r}_{j} = nvvm.convert.f8x2.to.f16x2 %wp{r}_{j} : vector<2xi8> (f8E4M3FN) -> "
                      f"vector<2xf16>"]
        # two interleaved FMA chains (pairs j = c, c+2, ...), then their sum
        chains = 2 if vec // 2 >= 4 else 1
        for j in range(vec // 2):
            prev = j - chains
            lines.append(f"          %pp{r}_{j} = arith.mulf %wh{r}_{j}, %xh_{j} : vector<2xf16>" if prev < 0 else
                         f"          %pp{r}_{j} = vector.fma %wh{r}_{j}, %xh_{j}, %pp{r}_{prev} : vector<2xf16>")
        last = f"%pp{r}_{vec // 2 - 1}"
        if chains == 2:
            lines.append(f"          %ps{r} = arith.addf %pp{r}_{vec // 2 - 2}, {last} : vector<2xf16>")
            last = f"%ps{r}"
        lines += [f"          %pe{r} = arith.extf {last} : vector<2xf16> to {va}",
                  f"          %nacc{r} = arith.addf %acc{r}, %pe{r} : {va}"]
        return "\n".join(lines)

    compute = "\n".join(
        f"          %wv{r} = vector.load %smem[%s, %row{r}, %lc] {{alignment = {vec * eb} : i64}} : {smem_t}, vector<{vec}x{w_dtype}>\n"
        + (packed_row(r) if packed else
           f"{widen(f'%wv{r}', r)}\n          %nacc{r} = vector.fma %wf{r}, %xf, %acc{r} : {vf}")
        for r in range(nacc))
    x_pairs = ""
    x_half = "" if x_dtype == "f16" else f"          %xh = arith.truncf %xf : {vf} to vector<{vec}xf16>\n"
    if packed:
        x_pairs = x_half + "".join(
            f"          %xh_{j} = vector.shuffle %xh, %xh [{2 * j}, {2 * j + 1}] : vector<{vec}xf16>, vector<{vec}xf16>\n"
            for j in range(vec // 2))
    rows = "\n".join(f"        %row{r}_0 = arith.addi %r0, %c{r * rps} : index\n"
                     f"        %row{r} = arith.addi %row{r}_0, %lrow : index" for r in range(nacc))

    def flush(r):
        red = [f"            %sum{r}_0 = vector.reduction <add>, %nacc{r} : {va} into f32"]
        offs = [o for o in (16, 8, 4, 2, 1) if o < lpr]
        for j, off in enumerate(offs):
            red += [f"            %sh{r}_{j}, %ok{r}_{j} = gpu.shuffle xor %sum{r}_{j}, %i{off}, %i32w : f32",
                    f"            %sum{r}_{j + 1} = arith.addf %sum{r}_{j}, %sh{r}_{j} : f32"]
        red.append(f"            %yrow{r} = arith.addi %ybase, %row{r} : index")
        out = f"%sum{r}_{len(offs)}"
        if scale == "row":
            red += [f"            %sc{r} = memref.load %scale[%yrow{r}] : {_shape((m,), 'f32')}",
                    f"            %scaled{r} = arith.mulf {out}, %sc{r} : f32"]
            out = f"%scaled{r}"
        elif scale == "tensor":
            red.append(f"            %scaled{r} = arith.mulf {out}, %sct : f32")
            out = f"%scaled{r}"
        put = (f"              memref.store {out}, %y[%yrow{r}] : {ymem}" if split == "rows" else
               f"              %old{r} = memref.atomic_rmw addf {out}, %y[%yrow{r}] : (f32, {ymem}) -> f32")
        red += ["            scf.if %lane0 {", put, "            }"]
        return "\n".join(red)

    selects = "\n".join(f"        %sel{r} = arith.select %flush, %zacc, %nacc{r} : {va}" for r in range(nacc))
    yields = ", ".join(f"%sel{r}" for r in range(nacc))
    if x_dtype == "f16":
        x_load = (f"          %xh = vector.load %x[%kc] {{alignment = 16 : i64}} : {xmem}, vector<{vec}xf16>")
    else:
        x_load = (f"          %xv = vector.load %x[%kc] {{alignment = 16 : i64}} : {xmem}, vector<{vec}xbf16>\n"
                  f"          %xf = arith.extf %xv : vector<{vec}xbf16> to {vf}")
    if split == "tiles":
        split_ir = "      // this CTA's tiles: [bid·T/grid, (bid+1)·T/grid)\n" + _even_share("%cT", "%tb", "%te")
    else:
        split_ir = (f"      // this CTA's row blocks: [bid·RB/grid, (bid+1)·RB/grid), all of their tiles\n"
                    f"      %cRB = arith.constant {m // bm} : index\n" + _even_share("%cRB", "%rbb", "%rbe")
                    + "\n      %tb = arith.muli %rbb, %cKT : index\n      %te = arith.muli %rbe, %cKT : index")
    tensor_scale = (f"      %sct = memref.load %scale[%c0] : {_shape((1,), 'f32')}\n" if scale == "tensor" else "")
    body = f"""    gpu.func @gemv({params}) workgroup(%smem: {smem_t} {{llvm.align = 1024 : i64}}) kernel {{
{_consts(0, 1, 2, 32, *(r * rps for r in range(nacc)))}
      %cS = arith.constant {stages} : index
      %cKT = arith.constant {kt} : index
      %cKT1 = arith.constant {kt - 1} : index
      %cBM = arith.constant {bm} : index
      %cBK = arith.constant {bk} : index
      %cRPW = arith.constant {rpw} : index
      %cVEC = arith.constant {vec} : index
      %cTB = arith.constant {tile_bytes} : index
      %cT = arith.constant {ntiles} : index
      %cArrive = arith.constant {consumers * 32} : index
      %i1 = arith.constant 1 : i32
      %i2 = arith.constant 2 : i32
      %i4 = arith.constant 4 : i32
      %i8 = arith.constant 8 : i32
      %i16 = arith.constant 16 : i32
      %i32w = arith.constant 32 : i32
      %ticks = arith.constant 10000000 : index
      %zacc = arith.constant dense<0.0> : {va}
{w_hint_ir}      %a = nvtma.make_tiled_tma_atom %w {{cta_tiler = array<i64: {bm}, {bk}>}} : {wmem} -> {ld}
      %bid = gpu.block_id x
      %grid = gpu.grid_dim x
      %tid = gpu.thread_id x
      %bars = nvgpu.mbarrier.create -> {bars}
      %t00 = arith.cmpi eq, %tid, %c0 : index
      scf.if %t00 {{
        scf.for %s = %c0 to %cS step %c1 {{
          %es = arith.addi %s, %cS : index
          nvgpu.mbarrier.init %bars[%s], %c1 : {bars}
          nvgpu.mbarrier.init %bars[%es], %cArrive : {bars}
        }}
        nvvm.fence.mbarrier.init
      }}
      gpu.barrier
{split_ir}
      %n = arith.subi %te, %tb : index
      %n1 = arith.subi %n, %c1 : index
      %producer = arith.cmpi ult, %tid, %c32 : index
      scf.if %producer {{
        scf.for %i = %c0 to %n step %c1 {{
          %s = arith.remui %i, %cS : index
          %again = arith.cmpi uge, %i, %cS : index
          scf.if %again {{
            // wait until the consumers released this slot's previous tile
            %round = arith.divui %i, %cS : index
            %prev = arith.subi %round, %c1 : index
            %pr = arith.remui %prev, %c2 : index
            %ph = arith.cmpi ne, %pr, %c0 : index
            %es = arith.addi %s, %cS : index
            nvgpu.mbarrier.try_wait.parity %bars[%es], %ph, %ticks : {bars}
          }}
          %t = arith.addi %tb, %i : index
          %rb = arith.divui %t, %cKT : index
          %kt = arith.remui %t, %cKT : index
          %row = arith.muli %rb, %cBM : index
          %col = arith.muli %kt, %cBK : index
          %slice = memref.subview %smem[%s, 0, 0] [1, {bm}, {bk}] [1, 1, 1] : {smem_t} to {slice_t}
          scf.if %t00 {{
            nvgpu.mbarrier.arrive.expect_tx %bars[%s], %cTB : {bars}
          }}
          nvtma.copy %a[%row, %col], %slice, barrier %bars[%s]{w_hint_op} : {ld}, {slice_t}, {bars}
        }}
      }} else {{
        %ct = arith.subi %tid, %c32 : index
        %cw = arith.divui %ct, %c32 : index
        %lane = arith.remui %tid, %c32 : index
        %cLPR = arith.constant {lpr} : index
        %llane = arith.remui %lane, %cLPR : index
        %lrow = arith.divui %lane, %cLPR : index
        %lane0 = arith.cmpi eq, %llane, %c0 : index
        %r0 = arith.muli %cw, %cRPW : index
        %lc = arith.muli %llane, %cVEC : index
{tensor_scale}{rows}
        %res:{nacc} = scf.for %i = %c0 to %n step %c1 iter_args({accs}) -> ({acc_types}) {{
          %s = arith.remui %i, %cS : index
          %t = arith.addi %tb, %i : index
          %rb = arith.divui %t, %cKT : index
          %kt = arith.remui %t, %cKT : index
          %kc0 = arith.muli %kt, %cBK : index
          %kc = arith.addi %kc0, %lc : index
          // x first: its load overlaps the wait for W
{x_load}
{x_pairs}          %round = arith.divui %i, %cS : index
          %r1 = arith.remui %round, %c2 : index
          %ph = arith.cmpi ne, %r1, %c0 : index
          nvgpu.mbarrier.try_wait.parity %bars[%s], %ph, %ticks : {bars}
{compute}
          %es = arith.addi %s, %cS : index
          %tok = nvgpu.mbarrier.arrive %bars[%es] : {bars} -> !nvgpu.mbarrier.token
          %lastk = arith.cmpi eq, %kt, %cKT1 : index
          %lasti = arith.cmpi eq, %i, %n1 : index
          %flush = arith.ori %lastk, %lasti : i1
          scf.if %flush {{
            %ybase = arith.muli %rb, %cBM : index
{chr(10).join(flush(r) for r in range(nacc))}
          }}
{selects}
          scf.yield {yields} : {acc_types}
        }}
      }}
      gpu.return
    }}"""
    return KernelSpec(_module(body), "gemv", None, ((consumers + 1) * 32, 1, 1), smem=0,
                      info=dict(tiles=ntiles, tile_bytes=tile_bytes, stages=stages, w_bytes=m * k * eb))
