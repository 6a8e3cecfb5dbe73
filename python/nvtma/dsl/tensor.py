"""Tensors: global kernel parameters and shared-memory buffers.

``t[i, j]`` loads an element, ``t[i, j] = v`` stores one, ``t.load_vec(8,
i, j)`` / ``t.store_vec(v, i, j)`` move up to 16 contiguous bytes at once.
``t.shape`` holds Python ints for static dims and run-time Index values for
dynamic ones. A shared buffer filled by a swizzled TMA atom knows its
swizzle: element and vector accesses apply it, so ``s[r, c]`` is the
logical element (r, c) whatever the TMA did to the layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._lazy import lazy
from . import numeric as _n
from .errors import fail, show, user_op
from .numeric import Boolean, Index, Numeric, Val, as_value, dtype

ir = lazy("nvtma.ir")
arith = lazy("nvtma.dialects.arith")
memref = lazy("nvtma.dialects.memref")
vector = lazy("nvtma.dialects.vector")

__all__ = ["Tensor", "TensorValue", "SmemInfo", "SWIZZLE_BYTES", "SWIZZLE_PATTERN"]

# swizzle mode -> (span in bytes of one swizzled row, repeat in bytes = span * 8); the encoder's spans
# (nvtma.tensormap.swizzle_span_bytes): the sm_100 128B-atom modes span 128 bytes too
SWIZZLE_BYTES = {"none": None, "swizzle_32b": 32, "swizzle_64b": 64, "swizzle_128b": 128,
                 "swizzle_128b_atom_32b": 128, "swizzle_128b_atom_32b_flip_8b": 128, "swizzle_128b_atom_64b": 128}

# swizzle mode -> where the TMA puts a byte, CuTe's Swizzle<B, M, S> on its offset in a buffer aligned to the
# repeat: bits [M, M + B) ^= bits [M + S, M + S + B). The 16-byte-chunk modes are Swizzle<log2(span / 16), 4, 3>
# (CUDA programming guide, "TMA Swizzle"); 128B_ATOM_32B moves 32-byte chunks by the row within 4,
# Swizzle<2, 5, 2> (CUTLASS's SW128_32B layouts, which it encodes as that mode). The other 128B-atom modes'
# patterns are not modeled: element accesses of their tiles are refused.
SWIZZLE_PATTERN = {"swizzle_32b": (1, 4, 3), "swizzle_64b": (2, 4, 3), "swizzle_128b": (3, 4, 3),
                   "swizzle_128b_atom_32b": (2, 5, 2)}


@dataclass(frozen=True)
class Tensor:
    """A global tensor parameter: element type and shape, outermost first.
    ``None`` in the shape is a dynamic dim (read it in the kernel as
    ``t.shape[i]``); ``dtype=None`` or ``shape=None`` leave the element type
    or the whole shape to the argument of a JIT call. ``strides`` (elements,
    outermost first, ``None`` for a run-time one; the default row-major)
    takes a strided view instead, e.g. ``(128, None, 1)`` for a [K / 128,
    N, 128] view of a row-major [N, K] tensor (torch's ``as_strided``)."""
    dtype: object = None
    shape: tuple | None = None
    strides: tuple | None = None

    def __post_init__(self):
        if self.dtype is not None:
            dtype(self.dtype)  # refuse unknown names early
        if self.shape is not None:
            if not isinstance(self.shape, (tuple, list)):  # an int: Python's "'int' object is not iterable"
                fail(f"dsl.Tensor shape {show(self.shape)}: a tuple of dims (non-negative ints or None), e.g. "
                     "(4,)", rule="shape")
            object.__setattr__(self, "shape", tuple(self.shape))
            for d in self.shape:
                if d is not None and (not isinstance(d, int) or isinstance(d, bool) or d < 0):
                    fail(f"dsl.Tensor shape {self.shape}: dims are non-negative ints or None", rule="shape")
            _check_size(self.shape, self.dtype, "dsl.Tensor")
        if self.strides is not None:
            if not isinstance(self.strides, (tuple, list)):
                fail(f"dsl.Tensor strides {show(self.strides)}: a tuple of one stride (an int or None) per dim",
                     rule="shape")
            object.__setattr__(self, "strides", tuple(self.strides))
            if self.shape is None or len(self.strides) != len(self.shape) or any(
                    d is not None and (not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < 1 << 62)
                    for d in self.strides):
                fail(f"dsl.Tensor strides {self.strides}: one int in [0, 2**62) or None per dim of the shape "
                     f"{self.shape}", rule="shape")

    @property
    def element(self):
        return dtype(self.dtype)

    def mlir_type(self):
        if self.dtype is None or self.shape is None:
            fail("a dsl.Tensor without dtype or shape is specialized from the call's arguments; build it with "
                 "param_types= or call the kernel on tensors", rule="specialize")
        dyn = ir.ShapedType.get_dynamic_size()
        shape = [dyn if d is None else d for d in self.shape]
        if self.strides is None:
            return ir.MemRefType.get(shape, self.element.mlir_type())
        ds = ir.ShapedType.get_dynamic_stride_or_offset()
        layout = ir.StridedLayoutAttr.get(0, [ds if d is None else d for d in self.strides])
        return ir.MemRefType.get(shape, self.element.mlir_type(), layout=layout)


# MLIR sizes are int64, and LLVM's memref lowering describes a memref by
# element offsets and strides in int64 too: a tensor must have fewer elements
# (and bytes) than that, or MLIR's builders refuse it untyped
_MAX_ELEMENTS = (1 << 63) - 1


def _check_size(shape, dt, what):
    """Refuses a static shape whose element count or byte size does not fit int64."""
    n = 1
    for d in shape:
        if d is not None:
            n *= d
    eb = max(dtype(dt).width // 8, 1) if dt is not None else 1
    if n * eb > _MAX_ELEMENTS:
        fail(f"{what} shape {show(tuple(shape))}: {show(n)} elements ({show(n * eb)} bytes) do not fit a 64-bit "
             f"size (at most {_MAX_ELEMENTS})", rule="shape")


def _static_shape(shape, what):
    """`shape` as a tuple of positive Python ints (build-time sizes; ints
    like numpy's are taken), or a KernelBuildError naming the bad dim."""
    import operator
    dims = (shape,) if isinstance(shape, int) and not isinstance(shape, bool) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        fail(f"{what} shape {shape!r}: a tuple of positive ints", rule="shape")
    out = []
    for d in dims:
        if isinstance(d, Val):
            d.__index__()  # the python-int error: a run-time value where a build-time size is needed
        try:
            if isinstance(d, bool):
                raise TypeError
            d = operator.index(d)
        except TypeError:
            fail(f"{what} shape {shape!r}: dim {d!r} is not an int", rule="shape")
        if d < 1:
            fail(f"{what} shape {shape!r}: dim {d} is not positive", rule="shape")
        out.append(d)
    if not out:
        fail(f"{what} shape {shape!r}: at least one dim", rule="shape")
    _check_size(out, None, what)
    return tuple(out)


def _swizzle_pattern(sw):
    """(B, M, S) of swizzle `sw`'s address pattern, or a KernelBuildError for a mode whose pattern is not
    modeled (its tile's elements would be read from the wrong bytes)."""
    p = SWIZZLE_PATTERN.get(sw)
    if p is None:
        fail(f"an element or vector access of a tile holding {sw}-swizzled data: the DSL does not model that "
             f"swizzle's address pattern ({', '.join(SWIZZLE_PATTERN)} are); copy it with one of those, or use "
             "the tile only through TMA and MMA descriptors", rule="swizzle")
    return p


def _check_accessible(t, what):
    """Boolean (i1) buffers have no byte layout LLVM's memref lowering can
    load or store (it asserts on sub-byte elements and aborts the process)."""
    if t.dtype is _n.Boolean:
        fail(f"{what} of a Boolean (i1) tensor {t.value.type}: i1 has no byte layout in memory; store Uint8/Int8 "
             "(x.to(dsl.Uint8)) and compare after loading", rule="dtype")


class SmemInfo:
    """One shared-memory allocation, shared by the buffer and its stage views."""

    __slots__ = ("offset", "nbytes", "align", "swizzle", "stage_bytes", "box", "box_rows", "accessed")

    def __init__(self, offset, nbytes, align, swizzle, stage_bytes):
        self.accessed = False           # element/vector accesses were built with the layout known so far
        self.box = None                 # the TMA box its data was copied in (box-major layout)
        self.box_rows = False           # that box is whole rows of the tile copied (row-major, like the tile)
        self.offset = offset            # static byte offset in the kernel's shared memory
        self.nbytes = nbytes
        self.align = align              # the offset's alignment
        self.swizzle = swizzle          # TMA swizzle of its bytes: None until an atom fills it
        self.stage_bytes = stage_bytes  # bytes of one stage of a [stages, ...] ring

    def set_swizzle(self, sw, what, tile_bytes=None):
        """Records (or checks) the swizzle `what` (an atom copying tiles of
        `tile_bytes`) writes or reads here."""
        if not isinstance(sw, str) or sw not in SWIZZLE_BYTES:
            fail(f"{what} uses swizzle {show(sw)}: one of {', '.join(SWIZZLE_BYTES)}", rule="swizzle")
        if self.swizzle is None:
            rep = (SWIZZLE_BYTES[sw] or 16) * 8 if sw != "none" else 128
            # a buffer holding several tiles (a ring) has one every tile_bytes;
            # a [rows, cols] tile's leading dim is not a stage dim
            step = tile_bytes if tile_bytes is not None else self.stage_bytes
            step = step if step and step < self.nbytes else 0
            if self.accessed and sw != "none":
                fail(f"{what} uses {sw}, but threads already read or wrote this buffer as unswizzled data (the "
                     "first atom to copy sets the layout): allocate it with swizzle= or "
                     "lang.SMEMPool.alloc_for(atom) so every access sees the swizzle", rule="swizzle")
            if self.offset % rep or step % rep:
                fail(f"{what} uses {sw}, which needs the buffer (and each stage of it) {rep}-byte aligned; this "
                     f"buffer is at shared offset {self.offset} with {step or self.nbytes}-byte "
                     f"stages: allocate it with swizzle={sw!r} or lang.SMEMPool.alloc_for(atom)", rule="swizzle")
            self.swizzle = sw
        elif self.swizzle != sw:
            fail(f"{what} uses {sw}, but this buffer holds {self.swizzle}-swizzled data (its allocation or an "
                 "earlier atom says so)", rule="swizzle")

    def set_box(self, box, what, tile=None):
        """Records (or checks) the TMA box layout: a tile of several boxes
        lies in shared memory box after box."""
        box = tuple(box)
        rows = tile is not None and len(box) == len(tile) and box[1:] == tuple(tile[1:])
        if self.box is None:
            if self.accessed and tile is not None and box != tuple(tile):
                fail(f"{what} copies the tile {list(tile)} as boxes of {list(box)} (box after box), but threads "
                     "already accessed this buffer as one row-major tile: copy into it before the accesses",
                     rule="box")
            self.box, self.box_rows = box, rows
        elif self.box != box and not (rows and self.box_rows and self.box[1:] == box[1:]):
            # (boxes of whole rows of one width lie row after row, whatever their row counts)
            fail(f"{what} copies boxes of {list(box)}, this buffer holds boxes of {list(self.box)}", rule="box")


def _product(ds):
    n = 1
    for d in ds:
        n *= d
    return n


def _row_major_strides(shape):
    """The element strides of a row-major (contiguous) `shape`."""
    strides, acc = [], 1
    for d in reversed(shape):
        strides.insert(0, acc)
        acc *= d
    return strides


def _alignment(align, nb):
    """The byte alignment a vector access assumes: `align` (None or 0: the
    access's own size, up to 16), a power of two LLVM can carry."""
    if align is None or (isinstance(align, int) and not isinstance(align, bool) and align == 0):
        return nb
    if not isinstance(align, int) or isinstance(align, bool) or align < 1 or align & (align - 1) or align > 1 << 32:
        fail(f"align={align!r}: a power of two in bytes, at most 2**32", rule="align")
    return align


class TensorValue(Val):
    """A memref value: a global tensor or a shared-memory buffer."""

    __slots__ = ("info", "flat", "flat_offset", "_shape", "_dtype")

    def __init__(self, value, *, info=None, flat=None, flat_offset=0, dtype=None):
        self.value = value
        self.info = info                  # SmemInfo of a shared buffer
        self.flat = flat                  # 1-D element view the swizzled accesses go through
        self.flat_offset = flat_offset    # element offset of this buffer in `flat` (int or Index)
        self._shape = None
        # the element class where the signless MLIR type cannot say it (u32 is an i32 memref)
        self._dtype = _n.declared(dtype, ir.MemRefType(value.type).element_type)

    @property
    def swizzle(self):
        return self.info.swizzle if self.info is not None else None

    @property
    def memref_type(self):
        return ir.MemRefType(self.value.type)

    @property
    def dtype(self):
        return self._dtype or _n.from_mlir(self.memref_type.element_type)

    @property
    def rank(self):
        return self.memref_type.rank

    @property
    def static_shape(self):
        """The shape with None for dynamic dims."""
        dyn = ir.ShapedType.get_dynamic_size()
        return tuple(None if d == dyn else d for d in self.memref_type.shape)

    @property
    def shape(self):
        """Python ints for static dims, run-time Index values (memref.dim,
        built where they are read) for dynamic ones."""
        # not cached: a dim read first inside a branch or loop would not
        # dominate a later read outside it (CSE merges the repeats)
        return self._dims()

    @user_op
    def _dims(self):
        dims = []
        for i, d in enumerate(self.static_shape):
            if d is None:
                c = arith.ConstantOp(ir.IndexType.get(), i).result
                dims.append(Index(memref.DimOp(self.value, c).result))
            else:
                dims.append(d)
        return tuple(dims)

    @property
    def space(self):
        s = self.memref_type.memory_space
        if s is None:
            return "global"
        t = str(s)
        return "shared" if "workgroup" in t or t == "3" else "cluster" if t == "7" else "global"

    @property
    def nbytes(self):
        n = max(self.dtype.width // 8, 1)
        for d in self.static_shape:
            if d is None:
                fail("nbytes of a tensor with dynamic dims", rule="shape")
            n *= d
        return n

    def __len__(self):
        d = self.static_shape[0]
        if d is None:
            fail("len() of a dynamic dim: use t.shape[0]", rule="shape")
        return d

    def __repr__(self):
        if not self._live():
            return "TensorValue(<of another build>)"
        return f"TensorValue({self._value.type})"

    # ------------------------------------------------------------------ indexing
    def _indices(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        if len(idx) != self.rank:
            fail(f"{len(idx)} indices for a rank-{self.rank} tensor {self.value.type}", rule="index")
        for i in idx:
            if isinstance(i, type):  # dsl.Int32 for Int32(i): its unbound __index__ was a TypeError
                fail(f"index {i.__name__} of tensor {self.value.type}: a type, not a value (an int or a run-time "
                     "integer, e.g. dsl.Int32(i))", rule="index")
        # numpy and other integer-like indices as Python ints (as_value took them for a type error)
        idx = tuple(i if isinstance(i, (int, Val, slice, float)) or not hasattr(i, "__index__") else i.__index__()
                    for i in idx)
        for d, i in zip(self.static_shape, idx):
            if isinstance(i, slice):
                fail("slicing a tensor: index elements, or take a stage with lang.SMEMPool.stage", rule="index")
            if isinstance(i, (float, bool)) or (not isinstance(i, (int, Val)) and not hasattr(i, "__index__")) or \
                    (isinstance(i, Numeric) and type(i).is_float) or (
                    isinstance(i, Val) and not isinstance(i, Numeric)):
                # None and floats reached the swizzle arithmetic of a swizzled buffer (a TypeError there, and a
                # run-time float became the whole offset computed in float: s[0.5, 0] read s[0, 16]; a Vector
                # reached the verifier)
                fail(f"index {show(i)} of tensor {self.value.type}: an int or a run-time integer", rule="index")
            if isinstance(i, Boolean):
                # (t[cond] = v wrote element 0 or 1, where numpy would mask)
                fail(f"index {show(i)} of tensor {self.value.type}: an integer, not a Boolean (for a masked load or "
                     "store, `with dsl.if_(cond):`)", rule="index")
            if isinstance(i, int) and d is not None and not 0 <= i < d:
                fail(f"index {show(i)} of a dim of {d} in tensor {self.value.type}", rule="index")
            if isinstance(i, int) and i < 0:
                # a dynamic dim's -1 was neither Python's last element nor C's base - 1: the lowering's
                # inbounds|nuw address arithmetic went 16 GiB past the tensor (or 4 bytes before it)
                fail(f"index {show(i)} of a dim of run-time size in tensor {self.value.type}: indices count from 0 "
                     "(for the last element, t.shape[k] - 1)", rule="index")
        return idx

    def _box_major(self):
        """The TMA box of a tile its atom filled box after box with boxes that split its rows (else None):
        this view, a [rows, cols] tile or a [stages, rows, cols] ring of them, is laid out that way."""
        info = self.info
        if info is None or info.box is None or info.box_rows:
            return None
        box, shape = tuple(info.box), self.static_shape
        return box if len(shape) in (len(box), len(box) + 1) and shape[-len(box):] != box else None

    def _linear(self, idx):
        """The element offset of idx: row-major, or box-major where a TMA
        atom with several boxes per tile filled the buffer (a ring's stage
        index first)."""
        shape = self.static_shape
        box = self._box_major()
        if box is not None:
            lead, tile = (idx[0], shape[1:]) if len(shape) > len(box) else (None, shape)
            grid = [s // b for s, b in zip(tile, box)]
            outer = inner = None
            for g, b, i in zip(grid, box, idx[-len(box):]):
                q, r = (i // b, i % b) if b != 1 or not isinstance(i, int) else (i, 0)
                outer = q if outer is None else outer * g + q
                inner = r if inner is None else inner * b + r
            off = outer * _product(box) + inner
            return off if lead is None else lead * _product(tile) + off
        off = None
        for d, i in zip(shape, idx):
            off = i if off is None else off * d + i
        return off

    def _permuted(self):
        """Whether element (i, j, ...) is elsewhere than row-major: a swizzled or box-major tile (its
        accesses go through the flat view)."""
        info = self.info
        return self.flat is not None and info is not None and (
            info.swizzle not in (None, "none") or (info.box is not None and tuple(info.box) != self.static_shape))

    def _via_flat(self):
        """Whether accesses go through the swizzled/box-major flat view (every
        element and vector access asks: it marks the buffer accessed)."""
        if self.info is not None:
            self.info.accessed = True
        return self._permuted()

    def _swizzled(self, idx, nelem=1):
        """(flat view, element index) of idx in a shared buffer filled by a
        TMA atom: box-major, with the atom's swizzle applied to the address bits."""
        eb = max(self.dtype.width // 8, 1)
        lin = self._linear(idx)
        sw = self.swizzle or "none"
        if sw == "none":
            return self.flat, lin + self.flat_offset
        bits, base, shift = _swizzle_pattern(sw)
        mask = (1 << bits) - 1
        byte = (lin + self.flat_offset) * eb if isinstance(lin, Val) or isinstance(self.flat_offset, Val) \
            else None
        if byte is None:  # all static: swizzle in Python
            b = (lin + self.flat_offset) * eb
            b ^= ((b >> (base + shift)) & mask) << base
            return self.flat, b // eb
        b = Index(byte) if not isinstance(byte, Index) else byte
        if isinstance(b, Numeric) and type(b) is not Index:
            b = b.to(Index)
        b = b ^ (((b >> (base + shift)) & mask) << base)
        return self.flat, b // eb

    @user_op
    def __getitem__(self, idx):
        _check_accessible(self, "a load")
        idx = self._indices(idx)
        if self._via_flat():
            flat, e = self._swizzled(idx)
            return self.dtype(memref.LoadOp(flat.value, [as_value(e, Index)]).result)
        return self.dtype(memref.LoadOp(self.value, [as_value(i, Index) for i in idx]).result)

    @user_op
    def __setitem__(self, idx, v):
        _check_accessible(self, "a store")
        idx = self._indices(idx)
        from .vector import Vector
        if isinstance(v, Vector):  # a memref.store of the vector did not verify
            fail(f"t[idx] = {v!r}: one element; store a vector with t.store_vec(v, *idx)", rule="vector")
        val = as_value(v, self.dtype)
        if self._via_flat():
            flat, e = self._swizzled(idx)
            memref.StoreOp(val, flat.value, [as_value(e, Index)])
            return
        memref.StoreOp(val, self.value, [as_value(i, Index) for i in idx])

    def _vec_check(self, n):
        """Bytes of an n-lane access (a power of two up to 64; past 16 bytes
        it is several 16-byte accesses) and the alignment it assumes."""
        _check_accessible(self, "a vector access")
        eb = max(self.dtype.width // 8, 1)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            fail(f"a vector access of {show(n)} lanes: a positive Python int", rule="vector-width")
        if n * eb > 64 or n * eb & (n * eb - 1):
            fail(f"a vector access of {show(n)} x {self.dtype.__name__} is {show(n * eb)} bytes; a power of two "
                 "up to 64", rule="vector-width")
        return min(n * eb, 16)

    def _static_element(self, idx):
        """The element offset of shared-tile indices from the tile's buffer, whose base is aligned to 128
        bytes or more, where they and the tile's place in it are Python ints (else None): row-major or
        box-major, before the swizzle, which moves whole 16-byte chunks and so keeps any alignment up to 16."""
        if self.space != "shared" or self.flat is None or not isinstance(self.flat_offset, int) or \
                not all(isinstance(i, int) and not isinstance(i, bool) for i in idx):
            return None
        return self._linear(idx) + self.flat_offset

    def _constant_alignment(self, idx, nbytes, what, hint=""):
        """Python-int indices off the `nbytes` an access assumes compiled, and faulted the context at run
        time (misaligned address). A shared tile's whole offset is known here (a tile of 6-byte rows puts
        row 1 off 4 bytes); of a global tensor, the innermost index (the launch checks base and strides)."""
        eb = max(self.dtype.width // 8, 1)
        off = self._static_element(idx)
        if off is not None and off * eb % nbytes:
            fail(f"{what} at {list(idx)} of a shared {list(self.static_shape)} tile is at byte {off * eb} of its "
                 f"buffer, {off * eb % nbytes} bytes off the {nbytes} bytes it assumes{hint}", rule="alignment")
        inner = idx[-1]
        if off is None and isinstance(inner, int) and not isinstance(inner, bool) and inner * eb % nbytes:
            fail(f"{what} at element {inner} of the innermost dim is {inner * eb % nbytes} bytes off the {nbytes} "
                 f"bytes it assumes: use a multiple of {max(nbytes // eb, 1)}{hint}", rule="alignment")

    def _vector_access(self, n, idx, align):
        """(memref, indices, alignment attribute) of an n-lane access at idx: through the flat view of a
        swizzled or box-major tile. A Python-int index off the alignment the access asserts is refused
        here: it compiled, and faulted the context at run time (misaligned address)."""
        nb = self._vec_check(n)
        if not self.static_shape:
            fail(f"a {n}-lane access of a rank-0 tensor: vectors run along a tensor's innermost dim", rule="index")
        idx = self._indices(tuple(idx))
        d, last = self.static_shape[-1], idx[-1] if idx else None
        if d is not None and isinstance(last, int) and last + n > d:
            # (only the first lane was checked: store_vec(v, 8) of 4 lanes wrote past a 10-element tensor)
            fail(f"a {n}-lane access at {show(last)} takes lanes {last}-{last + n - 1} of a dim of {d}",
                 rule="index")
        al = _alignment(align, nb)
        self._constant_alignment(idx, al, f"a {n}-lane access of {self.dtype.__name__}", ", or give align=")
        target = self
        if not self._via_flat():
            layout = ir.MemRefType(self.value.type).layout
            step = layout.strides[-1] if isinstance(layout, ir.StridedLayoutAttr) else 1
            if step != 1:  # (vector.load's verifier refused it, at no line of the user's)
                what = "not known at build" if step == ir.ShapedType.get_dynamic_stride_or_offset() else step
                fail(f"a {n}-lane access of a tensor whose innermost stride is {what}: a vector is contiguous "
                     "elements (strides=(..., 1)); access it element by element", rule="vector")
        if self._via_flat():
            if self.swizzle not in (None, "none") and n * max(self.dtype.width // 8, 1) > 16:
                # one access of the flat view from the first lane's place: the swizzle moves each 16-byte chunk
                # on its own, so the lanes past the first chunk were read from another chunk's bytes
                fail(f"a {n}-lane access of {self.dtype.__name__} in a {self.swizzle}-swizzled tile: at most 16 "
                     "bytes (the swizzle moves each 16-byte chunk on its own); access it 16 bytes at a time",
                     rule="vector-width")
            target, e = self._swizzled(idx)
            idx = (e,)
        return (target.value, [as_value(i, Index) for i in idx],
                ir.IntegerAttr.get(ir.IntegerType.get_signless(64), al))

    @user_op
    def load_vec(self, n, *idx, align=None):
        """`n` contiguous elements from idx along the innermost dim, as a Vector
        (one load of n·elem bytes; idx must be aligned to that unless `align`)."""
        from .vector import Vector
        target, idx, al = self._vector_access(n, idx, align)
        vt = ir.VectorType.get([n], self.dtype.mlir_type())
        return Vector(vector.LoadOp(vt, target, idx, alignment=al).result, self.dtype)

    @user_op
    def store_vec(self, v, *idx, align=None):
        from .vector import Vector
        if not isinstance(v, Vector):  # a 1-lane bitcast gives a scalar: len() of it was a TypeError
            fail(f"store_vec of {show(v)}: a dsl Vector (store one element with t[idx] = x)", rule="vector")
        target, idx, al = self._vector_access(len(v), idx, align)
        if v.dtype is not self.dtype:
            v = v.to(self.dtype)
        vector.StoreOp(v.value, target, idx, alignment=al)

    # ------------------------------------------------------------------ views
    @user_op
    def blocked(self, box):
        """This tile's bytes as [boxes, *box], one box after another: how a TMA
        copy of a tile split into several boxes lays it out, and the shape
        nvtma.copy takes (element accesses of the tile already see it)."""
        shape, box = self.static_shape, _static_shape(box, "blocked: the box")
        if self.flat is None or len(box) != len(shape) or any(s % b for s, b in zip(shape, box)):
            fail(f"the tile {list(shape)} as boxes of {list(box)}: a shared tile the boxes divide", rule="box")
        if self.info is not None and self.info.box is not None and not self.info.box_rows and \
                tuple(self.info.box) != box:
            fail(f"the tile {list(shape)} as boxes of {list(box)}: its TMA atom laid it out in boxes of "
                 f"{list(self.info.box)}", rule="box")
        nb = _product(s // b for s, b in zip(shape, box))
        strides = _row_major_strides((nb,) + box)
        off = self.flat_offset
        static_off = off if isinstance(off, int) else ir.ShapedType.get_dynamic_stride_or_offset()
        mt = self.memref_type
        t = ir.MemRefType.get([nb, *box], mt.element_type, layout=ir.StridedLayoutAttr.get(static_off, strides),
                              memory_space=mt.memory_space)
        dyn = [] if isinstance(off, int) else [as_value(off, Index)]
        # element [k, ...] is box k's, through the swizzle as the tile's (the flat view's)
        return TensorValue(memref.ReinterpretCastOp(t, self.flat.value, dyn, [], [], [static_off], [nb, *box],
                                                    strides).result, info=self.info, flat=self.flat,
                           flat_offset=off, dtype=self._dtype)

    @user_op
    def reshape(self, shape):
        """The same shared bytes as another static shape (row-major, same element count)."""
        from .kernel import current_kernel
        shape = _static_shape(shape, "reshape")
        n = _product(shape)
        if self.info is None or self.flat is None or n * max(self.dtype.width // 8, 1) != self.info.nbytes:
            fail(f"reshape to {tuple(shape)}: a whole shared buffer with as many elements", rule="shape")
        self._not_box_major(f"reshape to {tuple(shape)}")
        from ..lang import _view
        return _view(current_kernel(), self.info.offset, tuple(shape), self.dtype, self.info)

    @user_op
    def rows(self, start, n):
        """Rows start..start + n of a shared tile (`start` a run-time or Python
        index, `n` a Python int): the view a TMA copy of part of the tile's
        rows lands in."""
        shape = self.static_shape
        if self.space != "shared" or self.flat is None or len(shape) < 2:
            fail("rows() takes a shared tile of 2 or more dims (a buffer of lang.SMEMPool, or a stage of one)",
                 rule="shape")
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= shape[0] or (
                isinstance(start, int) and not 0 <= start <= shape[0] - n):
            fail(f"rows({show(start)}, {show(n)}) of a tile of {shape[0]} rows", rule="index")
        self._not_box_major(f"rows({show(start)}, {show(n)})")
        strides = _row_major_strides(shape)
        row = strides[0]
        dyn = ir.ShapedType.get_dynamic_stride_or_offset()
        off0 = self._layout_offset()
        mt = self.memref_type
        t = ir.MemRefType.get([n, *shape[1:]], mt.element_type, layout=ir.StridedLayoutAttr.get(
            off0 + start * row if isinstance(start, int) and off0 != dyn else dyn, strides),
            memory_space=mt.memory_space)
        sub = memref.SubViewOp(t, self.value, [as_value(start, Index)] if not isinstance(start, int) else [], [],
                               [], [start if isinstance(start, int) else dyn] + [0] * (len(shape) - 1),
                               [n, *shape[1:]], [1] * len(shape))
        return TensorValue(sub.result, info=self.info, flat=self.flat, flat_offset=self.flat_offset + start * row,
                           dtype=self._dtype)

    def _layout_offset(self):
        """The static element offset of this view's layout, or MLIR's dynamic marker."""
        base = self.memref_type.layout
        try:
            return ir.StridedLayoutAttr(base).offset
        except (ValueError, TypeError):
            m = ir.AffineMapAttr(base).value
            return 0 if m == ir.AffineMap.get_identity(m.n_dims) else ir.ShapedType.get_dynamic_stride_or_offset()

    def _not_box_major(self, what):
        """A view of rows or another shape has no place in a tile laid out box after box (its rows are
        pieces of several boxes): it addressed elements of other rows."""
        box = self._box_major()
        if box is not None:
            fail(f"{what} of a {list(self.static_shape)} tile its TMA atom laid out in boxes of {list(box)}, box "
                 "after box: index the tile (or a stage of it) instead; a wgmma descriptor of some of its rows is "
                 "wgmma.SmemDescriptor(tile).row_block(r)", rule="box")

    @user_op
    def stage(self, s):
        """Slice `s` (a run-time or Python index) of a [stages, ...] buffer."""
        shape = self.static_shape
        if len(shape) < 2:
            fail("stage() takes a buffer with a leading stage dim", rule="shape")
        if isinstance(s, int) and not 0 <= s < shape[0]:  # before the layout: 2**64 was a TypeError from MLIR
            fail(f"stage {s} of a {shape[0]}-stage buffer", rule="index")
        inner = list(shape[1:])
        strides = _row_major_strides(inner)
        acc = strides[0] * inner[0]  # a stage's elements
        dyn = ir.ShapedType.get_dynamic_stride_or_offset()
        off0 = self._layout_offset()
        if isinstance(s, int) and off0 != dyn:
            layout = ir.StridedLayoutAttr.get(off0 + s * acc, strides)
        else:
            layout = ir.StridedLayoutAttr.get(dyn, strides)
        mt = self.memref_type
        t = ir.MemRefType.get(inner, mt.element_type, layout=layout, memory_space=mt.memory_space)
        sub = memref.SubViewOp(t, self.value, [as_value(s, Index)] if not isinstance(s, int) else [], [], [],
                               [s if isinstance(s, int) else dyn] + [0] * len(inner), [1] + inner,
                               [1] * len(shape))
        off = self.flat_offset + s * acc if self.flat is not None else 0
        return TensorValue(sub.result, info=self.info, flat=self.flat, flat_offset=off, dtype=self._dtype)
