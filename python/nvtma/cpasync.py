"""CuTe DSL's `cpasync` surface over the nvtma dialect.

Same names as ``cutlass.cute.nvgpu.cpasync``, plus what CuTe cannot do: every
descriptor field, ``l2_promotion`` first among them, is an argument of
``make_tiled_tma_atom`` and part of the atom's type. docs/dsl.md says what a
CuTe port changes. Use inside an
``@nvtma.dsl.kernel`` function.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from . import dsl
from ._lazy import lazy
from .dsl import types
from .dsl.errors import fail, show, user_op
from .dsl.numeric import known_int, run_time_integer
from .dsl.tensor import TensorValue

ir = lazy("nvtma.ir")
_d = lazy("nvtma.dialects.nvtma")
llvm = lazy("nvtma.dialects.llvm")
nvvm = lazy("nvtma.dialects.nvvm")

__all__ = [
    "LoadCacheMode", "CopyG2SOp", "CopyBulkTensorTileG2SOp", "CopyBulkTensorTileG2SMulticastOp",
    "CopyBulkTensorTileS2GOp", "CopyReduceBulkTensorTileS2GOp", "CopyBulkTensorIm2ColG2SOp",
    "CopyBulkTensorIm2ColS2GOp", "CopyBulkTensor2DGather4G2SOp", "CopyDsmemStoreOp", "CopyBulkG2SOp",
    "CopyBulkG2SMulticastOp", "CopyBulkS2GOp", "CopyBulkS2GByteMaskOp", "CopyBulkS2SOp", "TmaCopyOp", "TmaInfo",
    "make_tiled_tma_atom", "tma_partition", "copy", "create_tma_multicast_mask", "prefetch", "prefetch_descriptor",
    "copy_tensormap", "update_tma_descriptor", "fence_tma_desc_acquire", "fence_tma_desc_release",
    "cp_fence_tma_desc_release", "group_bulk_copy_modes", "bulk_copy", "ReductionKind", "address_of",
    "bulk_commit_group", "bulk_wait_group", "make_tma_atom_from_descriptor", "cp_async", "cp_async_arrive",
    "cp_async_commit_group", "cp_async_wait_group", "cache_hint", "CACHE_HINTS", "cluster_address", "dsmem_store",
]


class LoadCacheMode(enum.Enum):
    """Cache mode of a non-bulk cp.async."""
    ALWAYS = "always"
    GLOBAL = "cache_global"


class ReductionKind(enum.Enum):
    ADD = "add"
    MIN = "min"
    MAX = "max"
    INC = "inc"
    DEC = "dec"
    AND = "and"
    OR = "or"
    XOR = "xor"


class TmaCopyOp:
    """Base of the TMA copy operations."""
    kind = "load"


@dataclass
class CopyBulkTensorTileG2SOp(TmaCopyOp):
    cta_group: int = 1
    kind = "load"


@dataclass
class CopyBulkTensorTileG2SMulticastOp(TmaCopyOp):
    cta_group: int = 1
    kind = "load_multicast"


@dataclass
class CopyBulkTensorTileS2GOp(TmaCopyOp):
    kind = "store"


@dataclass
class CopyReduceBulkTensorTileS2GOp(TmaCopyOp):
    reduction_kind: ReductionKind = ReductionKind.ADD
    kind = "reduce"


@dataclass
class CopyBulkTensorIm2ColG2SOp(TmaCopyOp):
    lower_corner: tuple = (0,)
    upper_corner: tuple = (0,)
    kind = "im2col_load"


@dataclass
class CopyBulkTensorIm2ColS2GOp(TmaCopyOp):
    lower_corner: tuple = (0,)
    upper_corner: tuple = (0,)
    kind = "im2col_store"


@dataclass
class CopyBulkTensor2DGather4G2SOp(TmaCopyOp):
    kind = "gather4_load"


@dataclass
class CopyG2SOp:
    """Non-bulk cp.async, 4/8/16 bytes per thread."""
    cache_mode: LoadCacheMode = LoadCacheMode.ALWAYS


@dataclass
class CopyDsmemStoreOp:
    pass


@dataclass
class CopyBulkG2SOp:
    kind = "g2s"


@dataclass
class CopyBulkG2SMulticastOp:
    kind = "g2s_multicast"


@dataclass
class CopyBulkS2GOp:
    kind = "s2g"


@dataclass
class CopyBulkS2GByteMaskOp:
    kind = "s2g_bytemask"


@dataclass
class CopyBulkS2SOp:
    kind = "s2s_cluster"


@dataclass
class TmaInfo:
    """The atom, the TMA tensor and the smem layout; unpacks like CuTe's
    ``atom, tma_tensor = make_tiled_tma_atom(...)``."""
    atom: dsl.Val
    tma_tensor: dsl.TensorValue
    smem_layout: tuple = field(default=())
    dtype: type = None
    swizzle: str = "none"
    kind: str = "load"
    multicast: int = 1
    box: tuple = ()

    def __iter__(self):
        return iter((self.atom, self.tma_tensor))

    @property
    def atom_type(self):
        return self.atom.value.type

    @property
    def tile_bytes(self) -> int:
        """Bytes one copy of the atom's tile moves (what a load's mbarrier expects)."""
        n = max(self.dtype.width // 8, 1)
        for d in self.smem_layout:
            n *= d
        return n


def _cute_box(tile, multicast, swizzle, elem_bits, interleave="none"):
    from . import tensormap
    fn = getattr(tensormap, "cute_box", None)
    if fn is not None:
        return list(fn(tile, multicast, swizzle, elem_bits, interleave))
    # CuTe's rule: split the tile's outermost dim over the multicast CTAs,
    # then the largest box <= 256 (innermost: <= the swizzle span)
    box = list(tile)
    if box[0] % multicast:
        fail(f"tile dim 0 ({box[0]}) does not split over {multicast} multicast CTAs", rule="multicast")
    box[0] //= multicast
    span = {"none": None, "swizzle_32b": 32, "swizzle_64b": 64}.get(swizzle, 128)
    if interleave != "none":
        span = None
    for i, e in enumerate(box):
        cap = 256
        if i == len(box) - 1 and span:
            cap = min(cap, span * 8 // elem_bits)
        b = min(e, cap)
        while e % b:
            b -= 1
        box[i] = b
    return box


_MULTICAST_OPS = ("load_multicast",)


@user_op
def make_tiled_tma_atom(op, gmem_tensor, smem_layout, cta_tiler=None, num_multicast: int = 1, *,
                        internal_type=None, l2_promotion="l2_128b", swizzle="none", interleave="none",
                        oob_fill="none", element_strides=None, cta_group=None) -> TmaInfo:
    """A TMA atom for `gmem_tensor` (a kernel parameter) copying tiles of
    `smem_layout` (a shape; a leading stage mode is dropped) per CTA.

    `l2_promotion`: "none" | "l2_64b" | "l2_128b" (default, like CuTe) |
    "l2_256b"; the other descriptor fields likewise, spelled as in the dialect
    (or CUDA's CU_TENSOR_MAP_* names via nvtma.tensormap's enums).
    """
    from .tensormap import Interleave, L2Promotion, OOBFill, Swizzle
    if not isinstance(op, TmaCopyOp):
        fail(f"make_tiled_tma_atom takes a TMA copy operation (cpasync.CopyBulkTensor*Op()), got "
             f"{type(op).__name__}", rule="atom")
    if not isinstance(gmem_tensor, dsl.TensorValue) or gmem_tensor.space != "global":
        fail("make_tiled_tma_atom needs a global tensor parameter of the kernel", rule="atom")
    if not isinstance(num_multicast, int) or num_multicast < 1:
        fail(f"num_multicast={num_multicast!r}: a positive int", rule="multicast")
    if num_multicast > 1 and op.kind not in _MULTICAST_OPS + ("im2col_load",):
        fail(f"num_multicast={num_multicast} with {type(op).__name__}: a multicast load needs "
             "CopyBulkTensorTileG2SMulticastOp", rule="multicast")
    if op.kind == "load_multicast" and num_multicast == 1:
        fail("CopyBulkTensorTileG2SMulticastOp with num_multicast=1: pass the number of CTAs it feeds",
             rule="multicast")
    with _tensormap_errors():
        l2 = L2Promotion.coerce(l2_promotion, "l2_promotion").dialect
        sw = Swizzle.coerce(swizzle, "swizzle").dialect
        il = Interleave.coerce(interleave, "interleave").dialect
        oob = OOBFill.coerce(oob_fill, "oob_fill").dialect
    rank = gmem_tensor.rank
    try:
        shape = tuple(smem_layout)
    except TypeError:  # an int: Python's "'int' object is not iterable" from here
        fail(f"smem_layout {smem_layout!r}: the tile's shape, a tuple of ints (outermost first)", rule="atom")
    if len(shape) == rank + 1:
        shape = shape[1:]
    if len(shape) != rank and not op.kind.startswith("im2col"):
        fail(f"smem_layout {tuple(smem_layout)} for a rank-{rank} tensor", rule="atom")
    if cta_tiler is not None and not isinstance(cta_tiler, (tuple, list)):
        fail(f"cta_tiler {show(cta_tiler)}: the CTA's tile, a tuple of ints (outermost first)", rule="atom")
    tile = tuple(cta_tiler) if cta_tiler is not None else shape
    elem = gmem_tensor.dtype
    kind = op.kind
    fields = dict(swizzle=sw, l2_promotion=l2, interleave=il, oob_fill=oob)
    if internal_type is not None:
        fields["tma_format"] = internal_type
    if element_strides is not None:
        if any(not isinstance(e, int) or isinstance(e, bool) or e != 1 for e in element_strides):
            # the TMA then delivers ceil(box / stride) elements a dim: the barrier was armed, and the tile laid
            # out, for the whole box (a hang, then reads of the wrong elements)
            fail(f"element_strides={list(element_strides)}: a tiled copy's tile here is its box, element by "
                 "element; strides other than 1 (the TMA delivering ceil(box / stride) elements a dim) are not "
                 "modeled by the DSL's tiles and barriers (nvtma.tensormap encodes such descriptors on the host)",
                 rule="atom")
        fields["element_strides"] = list(element_strides)
    if kind.startswith("im2col"):
        box = list(tile)
        fields.update(lower_corner=list(op.lower_corner), upper_corner=list(op.upper_corner))
        if num_multicast > 1:
            box[0] //= num_multicast
    else:
        with _tensormap_errors():
            box = _cute_box(tile, num_multicast, sw, elem.width, il)
    if num_multicast > 1:
        fields["multicast"] = num_multicast
    group = cta_group or getattr(op, "cta_group", 1)
    if group != 1:
        fields["cta_group"] = group
    _check_atom_arch(kind, group, sw)
    if kind == "reduce":
        rk = op.reduction_kind
        if not isinstance(rk, ReductionKind):
            try:
                rk = ReductionKind(rk)  # its spelling, "add" ...
            except ValueError:
                fail(f"reduction_kind {rk!r}: a cpasync.ReductionKind ({', '.join(k.value for k in ReductionKind)})",
                     rule="atom")
        fields["reduction"] = rk.value
    try:
        atom_t = _d.tma_atom_type(kind, elem.name, box, tile=list(tile), **fields)
    except ir.MLIRError as e:
        from .dsl.kernel import _diagnostics
        fail(_diagnostics(e), rule="atom")
    atom = _d.MakeTiledTmaAtomOp(atom_t, gmem_tensor.value, list(tile)).result
    return TmaInfo(dsl.Val(atom), gmem_tensor, tuple(tile), elem, sw, kind, num_multicast, tuple(box))


class _tensormap_errors:
    """The encoder's TensorMapError (a tile dim, a descriptor field's name) as a KernelBuildError at the
    user's line, with the encoder's rule."""

    def __enter__(self):
        return self

    def __exit__(self, typ, e, tb):
        from .tensormap import TensorMapError
        if isinstance(e, TensorMapError):
            fail(str(e), rule=e.rule)
        return False


def _check_atom_arch(kind, group, swizzle):
    """sm_100 atoms in a kernel for an older target: the lowering refused them only once the kernel was built
    (the atom type's rules, lib/Dialect/NVTMA: gather4 and cta_group 2 need an sm_100 or sm_110 family a/f
    chip, the 128B-atom swizzles sm_100)."""
    k = dsl.current_kernel().kernel
    what = "gather4" if kind == "gather4_load" else "cta_group 2" if group == 2 else None
    if what is not None and not (k.arch_specific and k.sm // 10 in (10, 11)):
        fail(f"a {what} TMA atom needs an sm_100 or sm_110 family target with the a or f suffix (sm_100a ...), "
             f"the kernel targets {k.arch}", rule="arch")
    if what is not None and k.sm == 101 and (k.ptx_isa or 0) >= 90:
        # LLVM 22 selects them for sm_101a/f up to +ptx88 only ("Cannot select"): PTX ISA 9.0 renamed sm_101
        fail(f"{what} TMA copies for sm_101 need ptx=88 or older (PTX ISA 9.0 renamed sm_101 to sm_110: target "
             f"sm_110a or sm_110f instead), this kernel has ptx={k.ptx}", rule="ptx")
    if swizzle.startswith("swizzle_128b_atom") and k.sm < 100:
        fail(f"swizzle {swizzle!r} is an sm_100 TMA swizzle, the kernel targets {k.arch}", rule="arch")


@user_op
def make_tma_atom_from_descriptor(desc_ptr, like):
    """An atom that copies through the 128 descriptor bytes at `desc_ptr`
    (global memory, e.g. patched by update_tma_descriptor), with the static
    fields of `like` (an atom of the same kind and shape). A descriptor
    patched in shared memory goes to global memory first (PTX's tensor copy
    reads its tensor map from the .param, .const or .global space)."""
    info = like if isinstance(like, TmaInfo) else None
    t = info.atom_type if info else _atom_value(like, "cpasync.make_tma_atom_from_descriptor").value.type
    p = _descriptor_pointer(desc_ptr, "cpasync.make_tma_atom_from_descriptor", "desc_ptr")
    if types.address_space(p.type) == 3:
        fail("a TMA descriptor in shared memory: tensor copies read their tensor map from global, const or param "
             "memory; copy it to global memory (a release fence for the tensormap proxy) and pass that address",
             rule="descriptor")
    atom = _d.AtomFromDescriptorOp(t, p).result
    if info is None:
        return dsl.Val(atom)
    return TmaInfo(dsl.Val(atom), info.tma_tensor, info.smem_layout, info.dtype, info.swizzle, info.kind,
                   info.multicast, info.box)


@user_op
def tma_partition(atom, tile_coords):
    """Element coordinates of tile `tile_coords` (outermost first)."""
    a = _atom_value(atom, "cpasync.tma_partition")
    coords = [dsl.as_value(c, dsl.Index) for c in tile_coords]
    op = _verified(_d.TmaPartitionOp([ir.IndexType.get()] * len(coords), a.value, coords), "cpasync.tma_partition",
                   "coordinates")
    return [dsl.Index(r) for r in op.results]


def _barrier_pair(p, what="tma_bar_ptr"):
    """p, checked to be a (barrier, stage) pair: what a barrier's at(stage) returns."""
    if not (isinstance(p, tuple) and len(p) == 2 and hasattr(p[0], "group")):
        fail(f"{what} takes (barrier, stage), e.g. bar.at(stage)", rule="barrier")
    return p


def _operands(tma_bar_ptr, **optional) -> dict:
    """Builder keywords for an op's optional operands: the (MBarrier, stage)
    pair, and every other one given (not None) as a Value."""
    kw = {k: v for k, v in optional.items() if v is not None}
    if tma_bar_ptr is not None:
        bar, stage = _barrier_pair(tma_bar_ptr)
        if hasattr(bar, "_stage"):
            bar._stage(stage)
        kw.update(barriers=bar.group, barrier_id=dsl.as_value(stage, dsl.Index))
    return kw


def _atom_value(atom, what):
    """The MLIR value of `atom` (a TmaInfo from make_tiled_tma_atom, or the value of one); anything else
    was an AttributeError deep in the op builder."""
    a = atom.atom if isinstance(atom, TmaInfo) else atom
    if isinstance(a, dsl.Val):
        try:
            _d.tma_atom_bytes(a.value.type)  # (a TypeError for any type but !nvtma.tma_atom)
            return a
        except TypeError:
            pass
    fail(f"{what} of {show(atom)}: a TMA atom (from cpasync.make_tiled_tma_atom)", rule="atom")


def _hint_value(hint):
    """An Int64 policy operand for a cache_hint= (a priority name or a policy), or None."""
    if hint is None:
        return None
    if isinstance(hint, float) or (isinstance(hint, dsl.Numeric) and hint.is_float):
        fail(f"cache_hint {hint!r}: an eviction priority name or a 64-bit integer policy", rule="cache-hint")
    return dsl.as_value(cache_hint(hint) if isinstance(hint, str) else hint, dsl.Int64)


_HINTS = {"evict_normal": 0x1000000000000000, "evict_first": 0x12F0000000000000, "evict_last": 0x14F0000000000000}
CACHE_HINTS = _HINTS


def cache_hint(name):
    """The 64-bit L2 cache policy of an eviction priority ("evict_first",
    "evict_normal", "evict_last"): createpolicy.fractional.L2::<p>.b64 with
    fraction 1.0, the values CUTLASS's CacheHintSm90 spells out."""
    if not isinstance(name, str) or name not in _HINTS:
        fail(f"cache hint {show(name)}: one of {sorted(_HINTS)}", rule="cache-hint")
    return dsl.Int64(_HINTS[name] - (1 << 64) if _HINTS[name] >= 1 << 63 else _HINTS[name])


@user_op
def copy(atom, coords, smem, *, tma_bar_ptr=None, mcast_mask=None, cta_rank=None, cache_hint=None,
         offsets=None, tma_desc_ptr=None):
    """Issues the TMA copies of one tile. One elected lane of the calling
    warp issues them (do not wrap this in elect; call it from one warp:
    lang.WarpRole or dsl.if_(dsl.warp_idx() == w)). Loads take `tma_bar_ptr`
    = (MBarrier, stage); multicast loads `mcast_mask` (int or value) and
    `cta_rank`; `cache_hint` an L2 eviction priority name or an Int64 policy;
    `tma_desc_ptr` copies through a descriptor in memory instead of the atom's.
    A tiled load or store starts each row on 16 bytes: its innermost
    coordinate times the element's bytes is a multiple of 16 (a Python int
    that is not is refused here, a constant by the verifier; on the H200 a
    run-time one that is not faults with an illegal instruction)."""
    from .lang import _single_issuer
    info = atom if isinstance(atom, TmaInfo) else None
    if _single_issuer("cpasync.copy") == "direct":
        fail("cpasync.copy elects its issuing lane itself: call it from a whole warp (lang.WarpRole), not from "
             "a branch that one thread runs", rule="single-issuer")
    coords = _coord_list(coords, "cpasync.copy")
    if not isinstance(smem, dsl.TensorValue) or smem.space != "shared":
        fail("cpasync.copy's smem must be a shared-memory buffer (lang.SMEMPool)", rule="smem")
    if smem.info is None:
        # a static buffer (alloc_static) records no swizzle or box, so its accesses ignored the atom's layout,
        # and it is 16-byte aligned, below what TMA's swizzles need
        fail("cpasync.copy into a buffer of static shared memory (SMEMPool.alloc_static): a TMA tile goes into "
             "the pool (SMEMPool.alloc_for(atom) or alloc)", rule="smem")
    if info is not None:
        if smem.info is not None:
            smem.info.set_swizzle(info.swizzle, f"the {info.kind} atom", info.tile_bytes)
            # a multicast tile lies box after box too, each box all the CTAs' slices of dim 0
            box = (info.box[0] * info.multicast, *info.box[1:])
            if info.kind not in ("im2col_load", "im2col_store", "gather4_load") and (
                    info.multicast == 1 or box != tuple(smem.static_shape)):
                smem.info.set_box(box, f"the {info.kind} atom", smem.static_shape)
        if smem.dtype is not info.dtype:
            fail(f"the atom copies {info.dtype.__name__}, the buffer holds {smem.dtype.__name__}", rule="smem")
        if info.kind in ("load", "load_multicast", "im2col_load", "gather4_load") and tma_bar_ptr is None:
            fail("a TMA load needs tma_bar_ptr=(barrier, stage) to complete on", rule="barrier")
        if info.kind == "load_multicast" and (mcast_mask is None or cta_rank is None):
            fail("a multicast load needs mcast_mask= and cta_rank=", rule="multicast")
        if info.kind == "load_multicast":
            _check_multicast(info.multicast, mcast_mask, cta_rank)
        inner = coords[-1] if len(coords) else None
        if not isinstance(inner, int):  # a DSL constant (Int32(3), or + - * of constants) too
            inner = known_int(inner)
        if info.kind in ("load", "load_multicast", "store") and isinstance(inner, int) and \
                not isinstance(inner, bool) and inner * info.dtype.width % 128:
            # (the verifier's rule too; measured on the H200, benchmarks/diag/tma_align.py: such a load faults
            # with an illegal instruction)
            fail(f"innermost coordinate {inner} is {inner * info.dtype.width // 8} bytes into a row: a tiled TMA "
                 f"copy starts each row on 16 bytes (a multiple of {128 // info.dtype.width} "
                 f"{info.dtype.__name__} elements)", rule="alignment")
    a = _atom_value(atom, "cpasync.copy")
    if tma_desc_ptr is not None:
        a = make_tma_atom_from_descriptor(tma_desc_ptr, a if info is None else info)
        a = a.atom if isinstance(a, TmaInfo) else a
    hint = _hint_value(cache_hint)
    kw = _operands(tma_bar_ptr, mask=None if mcast_mask is None else dsl.as_value(
        mcast_mask if not isinstance(mcast_mask, dsl.Numeric) else mcast_mask.to(dsl.Int16), dsl.Int16),
        cta_rank=None if cta_rank is None else dsl.as_value(cta_rank, dsl.Index), cache_hint=hint)
    offs = [dsl.as_value(o, dsl.Int16) for o in (offsets or [])]
    dst = smem
    if info is not None and smem.flat is not None and smem.static_shape == tuple(info.smem_layout) and \
            tuple(info.box[1:]) != tuple(info.smem_layout[1:]):
        # a tile split into boxes along inner dims lands box after box: the
        # op takes that [boxes, *box] view (element accesses see it already)
        dst = smem.blocked((info.box[0] * info.multicast, *info.box[1:]))  # multicast: all slices a box
    _verified(_d.CopyOp(a.value, _coord_values(coords, "cpasync.copy"), dst.value, offs, **kw), "cpasync.copy",
              "coordinates")


def _coord_list(coords, what):
    """A TMA copy's coordinates, checked to be a list or tuple (an int or None was a TypeError at len() or in
    the loop over them)."""
    if not isinstance(coords, (tuple, list)):
        fail(f"{what} coordinates {show(coords)}: a list or tuple of ints or run-time integers, one a dim of the "
             "tensor (outermost first)", rule="coordinates")
    return coords


def _coord_values(coords, what):
    """A TMA copy's coordinates as index values: a Python int or a DSL constant outside signed 32 bits is
    refused (the lowering keeps each coordinate's low 32 bits: another box, loaded without a word)."""
    from .dsl.numeric import known_int
    for c in _coord_list(coords, what):
        k = c if isinstance(c, int) and not isinstance(c, bool) else known_int(c)
        if k is not None and not -(1 << 31) <= k < 1 << 31:
            fail(f"{what} coordinate {k}: TMA coordinates are signed 32-bit ({-(1 << 31)}..{(1 << 31) - 1})",
                 rule="coordinates")
    return [dsl.as_value(c, dsl.Index) for c in coords]


@user_op
def prefetch(atom, coords, *, cta_rank=None, cache_hint=None):
    """Starts fetching the atom's tile at `coords` from global memory into L2
    (no shared memory, no barrier): a later `copy` of it hits L2. A
    tile-mode load atom; a multicast atom's CTA prefetches its own slice
    (`cta_rank`, what its multicast load reads). `cache_hint`: an L2 eviction
    priority name or an Int64 policy. One elected lane of the calling warp
    issues it, as for `copy`."""
    from .lang import _single_issuer
    info = atom if isinstance(atom, TmaInfo) else None
    _coord_list(coords, "cpasync.prefetch")
    if _single_issuer("cpasync.prefetch") == "direct":
        fail("cpasync.prefetch elects its issuing lane itself: call it from a whole warp (lang.WarpRole), not "
             "from a branch that one thread runs", rule="single-issuer")
    if info is not None:
        if info.kind not in ("load", "load_multicast"):
            fail(f"cpasync.prefetch takes a tile-mode load atom, not a {info.kind} atom", rule="prefetch")
        if info.kind == "load_multicast" and cta_rank is None:
            fail("a multicast atom's CTA prefetches its slice of the tile: give cta_rank=", rule="multicast")
        if info.kind == "load" and cta_rank is not None:
            fail("cta_rank is only for multicast atoms", rule="multicast")
    a = _atom_value(atom, "cpasync.prefetch")
    hint = _hint_value(cache_hint)
    _d.PrefetchOp(a.value, _coord_values(coords, "cpasync.prefetch"),
                  cta_rank=None if cta_rank is None else dsl.as_value(cta_rank, dsl.Index), cache_hint=hint)


def _cluster_ctas(what):
    """The CTAs of the kernel's clusters (what multicast masks and ranks address)."""
    cl = dsl.current_kernel().kernel._dims[1]
    n = cl[0] * cl[1] * cl[2] if cl else 1
    if n == 1:
        fail(f"{what} in a kernel without clusters (@dsl.kernel(cluster=...)): there is no other CTA to reach",
             rule="multicast")
    return n


def _check_multicast(slices, mask, rank):
    """A multicast load's slices, mask and rank against the kernel's cluster: bits and ranks past it are
    undefined in PTX, and each CTA was armed for bytes from issuers that do not exist (a hang)."""
    n = _cluster_ctas("a multicast TMA load")
    if slices > n:
        fail(f"a multicast atom of {slices} slices in clusters of {n} CTAs", rule="multicast")
    if isinstance(mask, int) and not isinstance(mask, bool) and (mask <= 0 or mask >> n):
        fail(f"multicast mask {mask:#x}: bits for CTAs 0-{n - 1} of the cluster, at least one", rule="multicast")
    if isinstance(rank, int) and not isinstance(rank, bool) and not 0 <= rank < n:
        fail(f"cta_rank {rank}: 0-{n - 1} in clusters of {n} CTAs", rule="multicast")


@user_op
def create_tma_multicast_mask(cluster_shape, cta_coord, mcast_mode: int):
    """The i16 CTA mask of a multicast along `mcast_mode` (CUDA x, y, z order)."""
    # build-time ints, as the op's attributes take them (else a TypeError from MLIR's attribute builder)
    given = cluster_shape
    try:
        cluster_shape = [int(d) if isinstance(d, int) and not isinstance(d, bool) else None for d in cluster_shape]
    except TypeError:
        cluster_shape = [None]
    if not cluster_shape or any(d is None or not 1 <= d <= 16 for d in cluster_shape):
        fail(f"create_tma_multicast_mask cluster shape {given!r}: 1-3 ints in [1, 16], CTAs per cluster dim",
             rule="multicast")
    if not isinstance(mcast_mode, int) or isinstance(mcast_mode, bool) or not 0 <= mcast_mode < 1 << 31:
        fail(f"create_tma_multicast_mask mcast_mode {mcast_mode!r}: the cluster dim to multicast along (0 = x)",
             rule="multicast")
    cl = dsl.current_kernel().kernel._dims[1] or (1, 1, 1)
    if tuple(cluster_shape) + (1,) * (3 - len(cluster_shape)) != tuple(cl):
        fail(f"create_tma_multicast_mask cluster shape {list(cluster_shape)}, but the kernel's clusters are "
             f"{list(cl)}", rule="multicast")
    if mcast_mode >= len(cluster_shape):  # (the op's verifier refused it, at the kernel's def line)
        fail(f"create_tma_multicast_mask mcast_mode {mcast_mode}: a dim of the cluster shape "
             f"{list(cluster_shape)} (0-{len(cluster_shape) - 1})", rule="multicast")
    if not isinstance(cta_coord, (tuple, list)) or len(cta_coord) != len(cluster_shape):
        fail(f"create_tma_multicast_mask cta_coord {show(cta_coord)}: this CTA's coordinates in the cluster, one "
             f"a dim of the cluster shape {list(cluster_shape)}", rule="multicast")
    for i, (c, d) in enumerate(zip(cta_coord, cluster_shape)):
        k = _constant_int(c)
        if k is not None and not 0 <= k < d:  # (run-time coordinates are the caller's)
            fail(f"create_tma_multicast_mask cta_coord {show(cta_coord)}: coordinate {i} is {k}, the cluster has "
                 f"{d} CTAs along that dim (0-{d - 1})", rule="multicast")
    op = _d.CreateTmaMulticastMaskOp([dsl.as_value(c, dsl.Index) for c in cta_coord], list(cluster_shape),
                                     mcast_mode)
    return dsl.Int16(op.result)


def _constant_int(x):
    """The value of a Python int or DSL integer constant (a bool is refused by the caller's type check, here
    it is its int); None for a run-time value."""
    from .dsl.numeric import known_int
    return x if isinstance(x, int) else known_int(x)


@user_op
def prefetch_descriptor(atom):
    a = _atom_value(atom, "cpasync.prefetch_descriptor")
    _d.PrefetchDescriptorOp(a.value)


@user_op
def copy_tensormap(atom, tensormap_ptr):
    a = _atom_value(atom, "cpasync.copy_tensormap")
    _d.CopyTensormapOp(a.value, _descriptor_pointer(tensormap_ptr, "cpasync.copy_tensormap", "tensormap_ptr"))


@user_op
def update_tma_descriptor(atom, gmem_tensor, tma_desc_ptr):
    a = _atom_value(atom, "cpasync.update_tma_descriptor")
    k = dsl.current_kernel().kernel
    if not k.arch_specific:
        fail(f"cpasync.update_tma_descriptor is tensormap.replace: an architecture-specific target (sm_90a, "
             f"sm_100a ...), the kernel targets {k.arch}", rule="arch")
    k.require_ptx(83, "cpasync.update_tma_descriptor (tensormap.replace)")
    if not isinstance(gmem_tensor, TensorValue) or gmem_tensor.space != "global":
        # a shared buffer's address went into the descriptor: tensormap.replace took it
        fail(f"cpasync.update_tma_descriptor points the descriptor at {show(gmem_tensor)}: a global tensor",
             rule="tensor")
    _verified(_d.UpdateTmaDescriptorOp(a.value, gmem_tensor.value, _descriptor_pointer(
        tma_desc_ptr, "cpasync.update_tma_descriptor", "tma_desc_ptr")), "cpasync.update_tma_descriptor", "tensor")


def _tensormap_fence_ptx(what):
    dsl.current_kernel().kernel.require_ptx(83, f"{what} (a tensormap proxy fence)")


_SPACE_NAMES = {0: "generic", 1: "global", 3: "shared"}


def _descriptor_pointer(ptr, op, what, spaces=(0, 1, 3)):
    """`ptr` as the value of a pointer to a 128-byte descriptor in one of the address `spaces`; anything else
    fails at the user's line (rule "pointer"; the op's verifier refused it with the whole kernel's IR)."""
    v = dsl.as_value(ptr)
    if types.address_space(v.type) not in spaces:
        names = [f"{_SPACE_NAMES[s]} ({s})" for s in spaces]
        names = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        fail(f"{op}: {what} has type {v.type}; it must point to the descriptor, in address space {names} "
             f"(cpasync.address_of a global tensor or shared buffer)", rule="pointer")
    return v


def _verified(op, what, rule):
    """`op`, run through its verifier as it is made: what the verifier refuses (the driver's rules for the
    tensor, an operand the op cannot take) fails at the user's line, naming the rule, rather than in the
    whole kernel's verify after the trace."""
    try:
        op.operation.verify()
    except ir.MLIRError as e:
        said = [re.sub(r"^'[\w.]+' op ", "", d.message) for d in getattr(e, "error_diagnostics", None) or ()]
        said = said or [str(e)]
        named = re.match(r"([a-z0-9]+(?:-[a-z0-9]+)+): ", said[0])  # a driver rule's name
        fail(f"{what}: {'; '.join(said)}", rule=named.group(1) if named else rule)
    return op


@user_op
def fence_tma_desc_acquire(tma_desc_ptr):
    _tensormap_fence_ptx("cpasync.fence_tma_desc_acquire")
    _d.FenceTmaDescAcquireOp(_descriptor_pointer(tma_desc_ptr, "cpasync.fence_tma_desc_acquire", "tma_desc_ptr"))


@user_op
def fence_tma_desc_release():
    _tensormap_fence_ptx("cpasync.fence_tma_desc_release")
    _d.FenceTmaDescReleaseOp()


@user_op
def cp_fence_tma_desc_release(tma_desc_global_ptr, tma_desc_shared_ptr):
    _tensormap_fence_ptx("cpasync.cp_fence_tma_desc_release")
    op = "cpasync.cp_fence_tma_desc_release"
    _d.CpFenceTmaDescReleaseOp(_descriptor_pointer(tma_desc_global_ptr, op, "tma_desc_global_ptr", (1,)),
                               _descriptor_pointer(tma_desc_shared_ptr, op, "tma_desc_shared_ptr", (3,)))


def group_bulk_copy_modes(src, dst):
    """Bulk copies move whole buffers: nothing to regroup for memrefs."""
    return src, dst


@user_op
def address_of(buf, indices=None):
    """An LLVM pointer to buf[indices]: !llvm.ptr<3> in shared memory,
    !llvm.ptr<1> for a global tensor (what the descriptor and bulk ops take).
    In a shared tile a TMA atom swizzled or laid out box by box, the element's
    place there, as `buf[indices]` reads it (atomics, ldmatrix and mapa go
    through here); without indices, the buffer's physical start (what TMA,
    wgmma and tcgen05 descriptors take: the swizzle is theirs)."""
    if not isinstance(buf, dsl.TensorValue):
        fail(f"cpasync.address_of of {show(buf)}: a tensor (a kernel parameter or a shared buffer)", rule="tensor")
    if indices is not None and not isinstance(indices, (tuple, list)):
        fail(f"cpasync.address_of indices {show(indices)}: a list or tuple of indices, one a dim of the "
             f"rank-{buf.rank} tensor", rule="index")
    if indices is not None:
        # (a wrong count, slices, floats or None: a TypeError in the swizzle math, or the op's verifier late)
        indices = buf._indices(tuple(indices))
        off = _static_byte_offset(buf, indices)
        if buf.space == "shared" and buf._via_flat():
            flat, e = buf._swizzled(indices)
            return _Address(address_of(flat, [e]).value, off, buf.dtype)
        return _Address(_address(buf, indices), off, buf.dtype)
    return dsl.Val(_address(buf, indices))


class _Address(dsl.Val):
    """An address_of pointer with its byte offset from a base aligned to 16 or more where Python-int indices
    fix it (else None: what bulk copies and cp.async check their alignment by) and its element type."""

    __slots__ = ("byte_offset", "elem")

    def __init__(self, value, byte_offset, elem=None):
        super().__init__(value)
        self.byte_offset = byte_offset
        self.elem = elem  # the tensor's element type (what an atomic through the pointer adds)


def _static_byte_offset(buf, idx):
    """The byte offset of buf[idx] where it is known at build, modulo what matters here (16): a shared tile's
    whole offset in its buffer (128-aligned or more; a swizzle moves whole 16-byte chunks); a global tensor's
    innermost index (the launch checks its base and strides)."""
    eb = max(buf.dtype.width // 8, 1)
    e = buf._static_element(idx)
    if e is not None:
        return e * eb
    inner = idx[-1] if idx else None
    if buf.space == "global" and isinstance(inner, int) and not isinstance(inner, bool):
        return inner * eb
    return None


def _check_address_alignment(what, p, nbytes):
    off = getattr(p, "byte_offset", None)
    if off is not None and off % nbytes:
        fail(f"{what} at an address {off % nbytes} bytes off the {nbytes}-byte alignment it needs (byte "
             f"{off} of its buffer, from address_of's indices)", rule="alignment")


def _address(buf, indices):
    space = {"shared": 3, "cluster": 7}.get(buf.space, 1)
    generic_global = buf.space == "global"
    ptr_t = types.ptr(0 if generic_global else space)
    idx = [dsl.as_value(i, dsl.Index) for i in (indices or [0] * buf.rank)]
    p = _d.AddressOfOp(ptr_t, buf.value, idx).result
    if generic_global:
        p = llvm.AddrSpaceCastOp(types.ptr(1), p).result
    return p


@user_op
def cluster_address(buf, indices, rank):
    """The shared::cluster address (!llvm.ptr<7>, mapa) of shared buf[indices]
    in cluster CTA `rank`: where `dsmem_store` (or a CopyBulkS2SOp
    bulk_copy) writes."""
    if getattr(buf, "space", None) != "shared":
        fail(f"cluster_address of {getattr(buf, 'space', type(buf).__name__)!r} memory: a shared-memory tensor",
             rule="cluster")
    cl = dsl.current_kernel().kernel._dims[1]
    n = cl[0] * cl[1] * cl[2] if cl else 1
    r = _constant_int(rank)
    if not (isinstance(rank, (int, dsl.Boolean)) or run_time_integer(rank)):
        fail(f"cluster_address rank {show(rank)}: a Python int or a run-time integer (a CTA rank)", rule="cluster")
    if isinstance(rank, bool) or (r is not None and not 0 <= r < n):  # mapa to a CTA that does not exist
        fail(f"cluster_address rank {show(rank)}: " + (f"a CTA rank 0-{n - 1} of the kernel's clusters of {n} CTAs"
             if n > 1 else "0, this CTA: the kernel has no clusters (@dsl.kernel(cluster=...))"), rule="cluster")
    local = address_of(buf, indices)
    # (the peer's copy of the buffer is at the same offset: what dsmem_store and bulk copies check alignment by)
    return _Address(nvvm.MapaOp(types.ptr(7), local.value, dsl.as_value(rank, dsl.Int32)).result,
                    getattr(local, "byte_offset", None), buf.dtype)


def _cluster_ptr(p, what):
    v = dsl.as_value(p)
    if v.type != types.ptr(7):
        fail(f"dsmem_store's {what} is {v.type}: a shared::cluster address (cluster_address, or an mbarrier's "
             "remote_view(rank).ptr(stage))", rule="dsmem")
    return v


@user_op
def dsmem_store(value, dst, remote_barrier):
    """CuTe's CopyDsmemStoreOp: an asynchronous store of `value` (a 32- or
    64-bit scalar, or a Vector of 2 or 4 f32/i32) to `dst` in a peer CTA's
    shared memory (`cluster_address`), completing its byte count on that
    CTA's mbarrier `remote_barrier` (``TMABar.remote_view(rank).ptr(stage)``,
    armed there with ``arrive_expect_tx``): st.async.shared::cluster.
    The peer waits on its barrier; no fence or release on this side."""
    v = dsl.as_value(value)
    t = v.type
    lanes = t.shape[0] if isinstance(t, ir.VectorType) else 1
    elem = t.element_type if isinstance(t, ir.VectorType) else t
    width = elem.width if isinstance(elem, ir.IntegerType) else {"f32": 32, "f64": 64}.get(str(elem))
    if (lanes, width) not in ((1, 32), (1, 64), (2, 32), (4, 32), (2, 64)):  # what st.async stores
        fail(f"dsmem_store of {t}: a 32- or 64-bit scalar, or 2 or 4 x 32-bit (2 x 64-bit) values", rule="dsmem")
    _check_address_alignment(f"dsmem_store of {t}", dst, lanes * width // 8)  # (st.async's: the value's size)
    _d.DsmemStoreOp(v, _cluster_ptr(dst, "dst"), _cluster_ptr(remote_barrier, "remote_barrier"))


@user_op
def bulk_copy(op, dst, src, size, *, tma_bar_ptr=None, mask=None, remote_barrier=None):
    """Non-tensor bulk copy (`op` one of the CopyBulk*Op)."""
    ops = (CopyBulkG2SOp, CopyBulkG2SMulticastOp, CopyBulkS2GOp, CopyBulkS2GByteMaskOp, CopyBulkS2SOp)
    if not isinstance(op, ops):  # (an int or a TMA op: an AttributeError on .kind or a KeyError)
        fail(f"cpasync.bulk_copy op {show(op)}: one of {', '.join(f'{o.__name__}()' for o in ops)}", rule="bulk-copy")
    kw = _operands(tma_bar_ptr, mask=None if mask is None else dsl.as_value(mask, dsl.Int16),
                   remote_barrier=None if remote_barrier is None else dsl.as_value(remote_barrier))

    def as_space(p, space):
        t = types.ptr(space)
        v = dsl.as_value(p)
        return v if v.type == t else llvm.AddrSpaceCastOp(t, v).result

    want = {"g2s": (3, 1), "g2s_multicast": (3, 1), "s2g": (1, 3), "s2g_bytemask": (1, 3), "s2s_cluster": (7, 3)}
    dsp, ssp = want[op.kind]
    for what, p in (("its destination", dst), ("its source", src)):  # both 16-byte aligned (PTX ISA)
        _check_address_alignment(f"cpasync.bulk_copy {what}", p, 16)
    if op.kind == "s2g_bytemask" and dsl.current_kernel().kernel.sm < 100:
        fail(f"cpasync.bulk_copy s2g_bytemask (.cp_mask) needs sm_100 or newer, the kernel targets "
             f"{dsl.current_kernel().kernel.arch}", rule="arch")
    attr = {"g2s": _d.BulkCopyKind.G2S, "g2s_multicast": _d.BulkCopyKind.G2SMulticast, "s2g": _d.BulkCopyKind.S2G,
            "s2g_bytemask": _d.BulkCopyKind.S2GByteMask, "s2s_cluster": _d.BulkCopyKind.S2SCluster}[op.kind]
    if _single_issuer_mode("cpasync.bulk_copy") == "direct":
        fail("cpasync.bulk_copy elects its issuing lane itself: call it from a whole warp", rule="single-issuer")
    _verified(_d.BulkCopyOp(attr, as_space(dst, dsp), as_space(src, ssp), dsl.as_value(size, dsl.Int32), **kw),
              "cpasync.bulk_copy", "bulk-copy")


def _single_issuer_mode(what):
    from .lang import _single_issuer
    return _single_issuer(what)


def _group_count(what, n):
    """The groups a wait may leave in flight: a build-time non-negative int
    (the instructions take an immediate; a negative one wraps around)."""
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < 1 << 31:
        fail(f"{what}({n!r}): a non-negative Python int (the groups left in flight)", rule="wait-group")


@user_op
def bulk_commit_group():
    """cp.async.bulk.commit_group: the pending TMA stores form a group."""
    _d.BulkCommitGroupOp()


@user_op
def bulk_wait_group(pending: int = 0, read: bool = False):
    """Wait until at most `pending` bulk groups are in flight (`read`: only
    until their shared-memory sources were read)."""
    _group_count("bulk_wait_group", pending)
    if not isinstance(read, bool):
        fail(f"bulk_wait_group read={show(read)}: True or False (wait only until the sources were read)",
             rule="wait-group")
    _d.BulkWaitGroupOp(pending, read=read)


@user_op
def cp_async(dst, src, size=16, *, op=None, src_size=None):
    """Non-bulk cp.async of `size` (4, 8, 16) bytes from global `src` to
    shared `dst` (pointers, e.g. address_of(...)), per thread; `op` a
    CopyG2SOp for the cache mode. `src_size` (an Int32, 0 to `size`): the
    bytes read from `src`, the rest of `dst`'s zero filled (0: nothing read;
    `src` must still be a valid address). Complete with
    cp_async_commit_group / cp_async_wait_group, or on an mbarrier with
    cp_async_arrive."""
    mode = (op or CopyG2SOp()).cache_mode.value
    if size not in (4, 8, 16):
        fail(f"cp.async of {size} bytes: 4, 8 or 16", rule="cp-async")
    if mode == "cache_global" and size != 16:
        fail("cp.async.cg copies 16 bytes", rule="cp-async")
    if isinstance(src_size, int) and not isinstance(src_size, bool) and not 0 <= src_size <= size:
        fail(f"cp.async src_size={src_size}: 0 to the {size} bytes copied", rule="cp-async")
    for what, p in (("destination", dst), ("source", src)):  # aligned to the bytes copied (PTX ISA)
        _check_address_alignment(f"cp.async's {what}", p, size)
    d, s = dsl.as_value(dst), dsl.as_value(src)
    n = None if src_size is None else dsl.as_value(src_size, dsl.Int32)
    _verified(_d.CpAsyncOp(d, s, size, src_size=n, cache_mode=_d.LoadCacheMode.GLOBAL if mode == "cache_global"
                           else _d.LoadCacheMode.ALWAYS), "cpasync.cp_async", "cp-async")


@user_op
def cp_async_arrive(bar, *, noinc=True):
    """cp.async.mbarrier.arrive[.noinc] on `bar` (what tma_bar_ptr takes: a
    barrier's at(stage)): an arrival of this thread once all its earlier
    cp.asyncs have landed. With noinc (the
    default) that arrival counts toward the barrier's arrival count, so its
    init count must include one for each thread that arrives this way;
    without, the barrier also needs this thread's own arrive."""
    if not isinstance(noinc, bool):
        fail(f"cp_async_arrive noinc={noinc!r}: True or False", rule="cp-async")
    barrier, stage = _barrier_pair(bar, "cp_async_arrive")
    from .dialects import nvvm
    nvvm.CpAsyncMBarrierArriveOp(dsl.as_value(barrier.ptr(stage)), noinc=noinc)


@user_op
def cp_async_commit_group():
    """cp.async.commit_group."""
    from .dialects import nvvm
    nvvm.CpAsyncCommitGroupOp()


@user_op
def cp_async_wait_group(n=0):
    """cp.async.wait_group n."""
    _group_count("cp_async_wait_group", n)
    from .dialects import nvvm
    nvvm.CpAsyncWaitGroupOp(n)
