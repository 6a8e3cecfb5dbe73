"""CuTe DSL's `cpasync` surface over the nvtma dialect.

Same names as ``cutlass.cute.nvgpu.cpasync``, plus what CuTe cannot do: every
descriptor field, ``l2_promotion`` first among them, is an argument of
``make_tiled_tma_atom`` and part of the atom's type. Porting a CuTe TMA kernel
is renaming imports and adding ``l2_promotion=``. Use inside an
``@nvtma.dsl.kernel`` function.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from . import dsl
from ._lazy import lazy

ir = lazy("nvtma.ir")
_d = lazy("nvtma.dialects.nvtma")
from .kernels import ELEM_BYTES

__all__ = [
    "LoadCacheMode", "CopyG2SOp", "CopyBulkTensorTileG2SOp", "CopyBulkTensorTileG2SMulticastOp",
    "CopyBulkTensorTileS2GOp", "CopyReduceBulkTensorTileS2GOp", "CopyBulkTensorIm2ColG2SOp",
    "CopyBulkTensorIm2ColS2GOp", "CopyBulkTensor2DGather4G2SOp", "CopyDsmemStoreOp", "CopyBulkG2SOp",
    "CopyBulkG2SMulticastOp", "CopyBulkS2GOp", "CopyBulkS2GByteMaskOp", "CopyBulkS2SOp", "TmaCopyOp", "TmaInfo",
    "make_tiled_tma_atom", "tma_partition", "copy", "create_tma_multicast_mask", "prefetch_descriptor",
    "copy_tensormap", "update_tma_descriptor", "fence_tma_desc_acquire", "fence_tma_desc_release",
    "cp_fence_tma_desc_release", "group_bulk_copy_modes", "bulk_copy", "ReductionKind", "address_of",
    "bulk_commit_group", "bulk_wait_group",
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

    def __iter__(self):
        return iter((self.atom, self.tma_tensor))

    @property
    def atom_type(self):
        return self.atom.value.type

    @property
    def tile_bytes(self) -> int:
        return _tile_bytes(self)


def _tile_bytes(info):
    t = str(info.atom_type)
    elem = t.split(",")[1].strip()
    n = ELEM_BYTES.get(elem, 4)
    for d in info.smem_layout:
        n *= d
    return n


def _cute_box(tile, multicast, swizzle, elem_bits):
    """CuTe's rule: split the tile's outermost dim over the multicast CTAs,
    then the largest box <= 256 (innermost: <= the swizzle span)."""
    box = list(tile)
    if box[0] % multicast:
        raise ValueError(f"tile dim 0 ({box[0]}) does not split over {multicast} multicast CTAs")
    box[0] //= multicast
    span = {"none": None, "swizzle_32b": 32, "swizzle_64b": 64}.get(swizzle, 128)
    for i, e in enumerate(box):
        cap = 256
        if i == len(box) - 1 and span:
            cap = min(cap, span * 8 // elem_bits)
        b = min(e, cap)
        while e % b:
            b -= 1
        box[i] = b
    return box


def make_tiled_tma_atom(op, gmem_tensor, smem_layout, cta_tiler=None, num_multicast: int = 1, *,
                        internal_type=None, l2_promotion="l2_128b", swizzle="none", interleave="none",
                        oob_fill="none", element_strides=None, cta_group=None) -> TmaInfo:
    """A TMA atom for `gmem_tensor` (a kernel parameter) copying tiles of
    `smem_layout` (a shape; a leading stage mode is dropped) per CTA.

    `l2_promotion`: "none" | "l2_64b" | "l2_128b" (default, like CuTe) |
    "l2_256b"; the other descriptor fields likewise, spelled as in the dialect
    (or CUDA's CU_TENSOR_MAP_* names via nvtma.tensormap's enums).
    """
    from .tensormap import L2Promotion, OOBFill, Swizzle, Interleave
    l2 = L2Promotion.coerce(l2_promotion, "l2_promotion").dialect
    sw = Swizzle.coerce(swizzle, "swizzle").dialect
    il = Interleave.coerce(interleave, "interleave").dialect
    oob = OOBFill.coerce(oob_fill, "oob_fill").dialect
    rank = len(gmem_tensor.shape)
    shape = tuple(smem_layout)
    if len(shape) == rank + 1:
        shape = shape[1:]
    tile = tuple(cta_tiler) if cta_tiler is not None else shape
    elem = gmem_tensor.dtype
    bits = ELEM_BYTES.get(elem, 1) * 8
    kind = op.kind
    fields = dict(swizzle=sw, l2_promotion=l2, interleave=il, oob_fill=oob)
    if internal_type is not None:
        fields["tma_format"] = internal_type
    if element_strides is not None:
        fields["element_strides"] = element_strides
    if kind.startswith("im2col"):
        box = list(tile)
        fields.update(lower_corner=list(op.lower_corner), upper_corner=list(op.upper_corner))
        if num_multicast > 1:
            box[0] //= num_multicast
    else:
        box = _cute_box(tile, num_multicast, sw, bits)
    if num_multicast > 1:
        kind = "load_multicast" if kind == "load" else kind
        fields["multicast"] = num_multicast
    if getattr(op, "cta_group", 1) != 1 or cta_group:
        fields["cta_group"] = cta_group or op.cta_group
    if kind == "reduce":
        fields["reduction"] = op.reduction_kind.value
    atom_t = _d.tma_atom_type(kind, elem, box, tile=list(tile), **fields)
    atom = _d.MakeTiledTmaAtomOp(atom_t, gmem_tensor.value, list(tile)).result
    return TmaInfo(dsl.Val(atom), gmem_tensor, tuple(tile))


def tma_partition(atom, tile_coords):
    """Element coordinates of tile `tile_coords` (outermost first)."""
    a = atom.atom if isinstance(atom, TmaInfo) else atom
    coords = [dsl._v(c) for c in tile_coords]
    op = _d.TmaPartitionOp([ir.IndexType.get()] * len(coords), a.value, coords)
    return [dsl.Index(r) for r in op.results]


def _operands(tma_bar_ptr, **optional) -> dict:
    """Builder keywords for an op's optional operands: the (MBarrier, stage)
    pair, and every other one given (not None) as a Value."""
    kw = {k: dsl._v(v) for k, v in optional.items() if v is not None}
    if tma_bar_ptr is not None:
        bar, stage = tma_bar_ptr
        kw.update(barriers=bar.group, barrier_id=dsl._v(stage))
    return kw



def copy(atom, coords, smem, *, tma_bar_ptr=None, mcast_mask=None, cta_rank=None, cache_hint=None,
         offsets=None):
    """Issues the TMA copies of one tile (one elected lane of the calling
    warp issues them: do not wrap this in elect). Loads take `tma_bar_ptr`
    = (MBarrier, stage); multicast loads `mcast_mask` and `cta_rank`."""
    a = atom.atom if isinstance(atom, TmaInfo) else atom
    kw = _operands(tma_bar_ptr, mask=mcast_mask, cta_rank=cta_rank, cache_hint=cache_hint)
    _d.CopyOp(a.value, [dsl._v(c) for c in coords], smem.value, [dsl._v(o) for o in (offsets or [])], **kw)


def create_tma_multicast_mask(cluster_shape, cta_coord, mcast_mode: int):
    """The i16 CTA mask of a multicast along `mcast_mode` (CUDA x, y, z order)."""
    op = _d.CreateTmaMulticastMaskOp([dsl._v(c) for c in cta_coord], list(cluster_shape), mcast_mode)
    return dsl.Int(op.result)


def prefetch_descriptor(atom):
    a = atom.atom if isinstance(atom, TmaInfo) else atom
    _d.PrefetchDescriptorOp(a.value)


def copy_tensormap(atom, tensormap_ptr):
    a = atom.atom if isinstance(atom, TmaInfo) else atom
    _d.CopyTensormapOp(a.value, dsl._v(tensormap_ptr))


def update_tma_descriptor(atom, gmem_tensor, tma_desc_ptr):
    a = atom.atom if isinstance(atom, TmaInfo) else atom
    _d.UpdateTmaDescriptorOp(a.value, gmem_tensor.value, dsl._v(tma_desc_ptr))


def fence_tma_desc_acquire(tma_desc_ptr):
    _d.FenceTmaDescAcquireOp(dsl._v(tma_desc_ptr))


def fence_tma_desc_release():
    _d.FenceTmaDescReleaseOp()


def cp_fence_tma_desc_release(tma_desc_global_ptr, tma_desc_shared_ptr):
    _d.CpFenceTmaDescReleaseOp(dsl._v(tma_desc_global_ptr), dsl._v(tma_desc_shared_ptr))


def group_bulk_copy_modes(src, dst):
    """Bulk copies move whole buffers: nothing to regroup for memrefs."""
    return src, dst


def address_of(buf, indices=None):
    """An LLVM pointer to buf[indices] in buf's address space."""
    t = ir.MemRefType(buf.type)
    space = 0
    if t.memory_space is not None:
        s = str(t.memory_space)
        space = 3 if "workgroup" in s else 1 if "global" in s else int(s) if s.isdigit() else 0
    ptr_t = ir.Type.parse(f"!llvm.ptr<{space}>" if space else "!llvm.ptr")
    idx = [dsl._v(i) for i in (indices or [0] * len(t.shape))]
    return dsl.Val(_d.AddressOfOp(ptr_t, buf.value, idx).result)


def bulk_copy(op, dst, src, size, *, tma_bar_ptr=None, mask=None, remote_barrier=None):
    """Non-tensor bulk copy (`op` one of the CopyBulk*Op)."""
    from .dialects import llvm
    kw = _operands(tma_bar_ptr, mask=mask, remote_barrier=remote_barrier)

    def as_space(p, space):
        t = ir.Type.parse(f"!llvm.ptr<{space}>")
        v = dsl._v(p)
        return v if v.type == t else llvm.AddrSpaceCastOp(t, v).result

    want = {"g2s": (3, 1), "g2s_multicast": (3, 1), "s2g": (1, 3), "s2g_bytemask": (1, 3), "s2s_cluster": (7, 3)}
    dsp, ssp = want[op.kind]
    attr = ir.Attribute.parse(f"#nvtma.bulk_copy_kind<{op.kind}>")
    size_v = size.to_i32().value if isinstance(size, dsl.Index) else dsl._v(size) if isinstance(size, dsl.Val) \
        else dsl.const(size, i32=True).value
    _d.BulkCopyOp(attr, as_space(dst, dsp), as_space(src, ssp), size_v, **kw)


def bulk_commit_group():
    """cp.async.bulk.commit_group: the pending TMA stores form a group."""
    _d.BulkCommitGroupOp()


def bulk_wait_group(pending: int = 0, read: bool = False):
    """Wait until at most `pending` bulk groups are in flight (`read`: only
    until their shared-memory sources were read)."""
    _d.BulkWaitGroupOp(pending, read=read)
