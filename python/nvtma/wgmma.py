"""Hopper warpgroup tensor-core MMA (wgmma), TIRx/CuTe style.

    acc = wgmma.Accumulator(n=64)                     # 64 x 64 f32 tile, N/2 registers a thread
    a = wgmma.SmemDescriptor(sA)                      # K-major operand tiles filled by TMA;
    b = wgmma.SmemDescriptor(sB)                      # the swizzle comes from the atom that filled them
    wgmma.fence()
    for k in range(BK // 16):                         # unrolled at build time
        acc = wgmma.mma_async(acc, a.k_block(k), b.k_block(k))
    wgmma.commit_group()
    wgmma.wait_group(0)

Operands are K-major shared-memory tiles (TMA's natural layout), described
by 64-bit matrix descriptors that ``SmemDescriptor`` derives from the
buffer's recorded TMA swizzle and box layout, so the two always agree; A
may also come from registers (``mma_async(acc, a_regs, b)``). Becomes
``wgmma.mma_async.sync.aligned.m64nNkK.f32.<a>.<b>``.
"""

from __future__ import annotations

from . import dsl
from .cuda import bits32
from ._lazy import lazy
from .dsl import types
from .dsl.errors import fail, python_int as _is_int, show, user_op
from .dsl.numeric import Float32, Int32, Numeric, Uint32, Uint64, Val, as_value, build_owner, check_build
from .dsl.tensor import SWIZZLE_BYTES

ir = lazy("nvtma.ir")
llvm = lazy("nvtma.dialects.llvm")
nvvm = lazy("nvtma.dialects.nvvm")
_d = lazy("nvtma.dialects.nvtma")
arith = lazy("nvtma.dialects.arith")

__all__ = ["fence", "commit_group", "wait_group", "noop_barrier", "encode_matrix_descriptor", "descriptor_bits",
           "SmemDescriptor", "Accumulator", "mma_async", "SWIZZLE_MODE"]

# the descriptor's 2-bit layout field (PTX ISA, "Matrix Descriptor Format")
SWIZZLE_MODE = {"none": 0, "swizzle_128b": 1, "swizzle_64b": 2, "swizzle_32b": 3}

_SWIZZLES = sorted((sw for sw in SWIZZLE_MODE if sw != "none"), key=SWIZZLE_BYTES.get)  # what wgmma operands hold

_K_BITS = 256  # a wgmma consumes 256 bits of K per row: k16 for 16-bit types, k32 for fp8
_TYPES = {"f16": "f16", "bf16": "bf16", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2", "tf32": "tf32", "f32": "f32"}
# what a wgmma with f32 accumulators multiplies
_OPERAND_TYPES = {"f16", "bf16", "e4m3", "e5m2", "tf32"}
_OPERAND_BITS = {"f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "tf32": 32}


def _require_sm90a(what):
    """wgmma exists on sm_90a alone: the lowering refuses it for any other
    target, but only once the whole kernel is built. Its instructions are
    .sync.aligned over a warpgroup: code that at most part of one runs (a
    warp's role, one lane's branch, a block of 64 threads) hangs or is
    undefined there."""
    k = dsl.current_kernel()
    arch = k.kernel.arch
    if arch != "sm_90a":
        fail(f"{what} is a wgmma instruction: sm_90a only (Hopper's arch-specific features), not {arch!r}",
             rule="arch")
    part = k.part_of_a_warpgroup()
    if part is not None:
        warps, lanes, threads = part
        fail(f"{what} is issued by all 128 threads of a warpgroup alike, but at most {warps} warp(s) of {lanes} "
             f"lane(s) run this code (a block of {threads} threads): issue it from whole warpgroups "
             "(lang.WarpgroupRole, a block a multiple of 128 threads)", rule="warpgroup")


@user_op
def fence():
    """wgmma.fence.sync.aligned: orders register/shared writes before the next wgmma."""
    _require_sm90a("wgmma.fence")
    nvvm.WgmmaFenceAlignedOp()


@user_op
def commit_group():
    """wgmma.commit_group.sync.aligned."""
    _require_sm90a("wgmma.commit_group")
    nvvm.WgmmaGroupSyncAlignedOp()


@user_op
def wait_group(n=0):
    """wgmma.wait_group.sync.aligned n: at most `n` groups still in flight."""
    _require_sm90a("wgmma.wait_group")
    if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < 1 << 31:
        fail(f"wgmma.wait_group({n!r}): a non-negative Python int (the groups left in flight)", rule="wgmma")
    nvvm.WgmmaWaitGroupSyncOp(n)


def noop_barrier(*values):
    """TIRx's wgmma.noop_barrier: keeps the compiler from moving accumulator
    reads across wgmma.wait_group (the wait is already a barrier for LLVM here)."""
    return values[0] if len(values) == 1 else values


def descriptor_bits(start_address: int, leading_byte_offset: int, stride_byte_offset: int, swizzle="none",
                    base_offset: int = 0) -> int:
    """The 64-bit shared-memory matrix descriptor, as a Python int (PTX ISA
    9.7.15.5.1: bits 0-13 start address >> 4, 16-29 leading byte offset >> 4,
    32-45 stride byte offset >> 4, 49-51 base offset, 62-63 swizzle mode)."""
    for name, v in (("start address", start_address), ("leading byte offset", leading_byte_offset),
                    ("stride byte offset", stride_byte_offset)):
        if not _is_int(v) or v % 16 or not 0 <= v >> 4 < 1 << 14:
            fail(f"matrix descriptor {name} {show(v)}: a multiple of 16 below {16 << 14}", rule="descriptor")
    if not isinstance(swizzle, str) or swizzle not in SWIZZLE_MODE:
        fail(f"swizzle {show(swizzle)}: one of {', '.join(SWIZZLE_MODE)}", rule="descriptor")
    if not _is_int(base_offset) or not 0 <= base_offset < 8:
        fail(f"base offset {show(base_offset)}: 0-7", rule="descriptor")
    return ((start_address >> 4) | (leading_byte_offset >> 4) << 16 | (stride_byte_offset >> 4) << 32
            | base_offset << 49 | SWIZZLE_MODE[swizzle] << 62)


@user_op
def encode_matrix_descriptor(addr, leading_byte_offset, stride_byte_offset, swizzle="none"):
    """The descriptor of a matrix at shared address `addr` (a !llvm.ptr<3>
    value or a 32-bit shared address), as a run-time Uint64."""
    fixed = descriptor_bits(0, leading_byte_offset, stride_byte_offset, swizzle)
    a = addr
    if isinstance(a, Val) and not isinstance(a, Numeric):
        if types.address_space(a.value.type) != 3:  # (a tensor or a vector reached llvm.ptrtoint's verifier)
            fail(f"encode_matrix_descriptor addr {show(addr)}: a shared-memory pointer (cpasync.address_of a "
                 "shared buffer) or its 32-bit shared address", rule="descriptor")
        a = Uint32(llvm.PtrToIntOp(ir.IntegerType.get_signless(32), a.value).result)
    a64 = (a if isinstance(a, Numeric) else Uint32(a)).to(Uint64)
    return ((a64 >> 4) & 0x3FFF) | Uint64(fixed)


class SmemDescriptor:
    """The wgmma descriptors of a K-major shared tile [rows, K] filled by a
    TMA atom (its swizzle and box layout recorded on the buffer). Encoded
    once; ``k_block(k)`` advances it by K-block k (256 bits of K per row),
    ``add_16B_offset(n)`` by n·16 bytes."""

    def __init__(self, tile, *, swizzle=None, rows_per_box=None):
        if not isinstance(tile, dsl.TensorValue) or tile.space != "shared":
            fail("SmemDescriptor takes a shared-memory tile", rule="descriptor")
        if swizzle is not None and (not isinstance(swizzle, str) or swizzle not in SWIZZLE_MODE):
            fail(f"wgmma.SmemDescriptor swizzle={show(swizzle)}: one of {', '.join(_SWIZZLES)}", rule="descriptor")
        sw = swizzle or tile.swizzle
        if sw is None:
            fail("this tile's swizzle is unknown: fill it with a TMA atom first (cpasync.copy records it) or pass "
                 "swizzle=", rule="descriptor")
        if sw not in SWIZZLE_MODE:
            # the sm_100 128B-atom swizzles: wgmma's 2-bit layout field has no code for them
            fail(f"a wgmma descriptor of a tile holding {sw}-swizzled data: wgmma describes "
                 f"{', '.join(_SWIZZLES)} tiles only", rule="descriptor")
        if tile.info is not None and swizzle is not None and tile.swizzle not in (None, swizzle):
            fail(f"swizzle {swizzle} but the tile holds {tile.swizzle} data", rule="descriptor")
        shape = tile.static_shape
        if len(shape) != 2:
            fail(f"SmemDescriptor takes a [rows, K] tile, got shape {shape}", rule="descriptor")
        if tile.info is not None and swizzle is not None and tile.swizzle is None:
            # recorded as an atom's would be: its alignment checked, and a later atom must agree
            tile.info.set_swizzle(swizzle, "wgmma.SmemDescriptor", tile_bytes=shape[0] * shape[1] * max(
                tile.dtype.width // 8, 1))
        self.tile = tile
        self.swizzle = sw
        self.dtype = tile.dtype
        self.rows, self.k = shape
        eb = max(self.dtype.width // 8, 1)
        span = SWIZZLE_BYTES[sw]
        box = tile.info.box if tile.info is not None and tile.info.box else None
        self.row_bytes = (box[-1] if box else self.k) * eb   # bytes of a row inside one box
        # rows of a box: its next-to-innermost dim (a box of several K blocks, [K blocks, rows, K], lands
        # as K block after K block: a stage of each is one such [rows, K] tile)
        self.box_rows = box[-2] if box else (rows_per_box or self.rows)
        if span is None:
            fail("wgmma operands from a non-swizzled TMA tile are not supported here: use swizzle_32b/64b/128b",
                 rule="descriptor")
        if self.row_bytes != span:
            fail(f"a K-major {sw} tile needs rows of exactly {span} bytes per box, this one has {self.row_bytes} "
                 "(make the atom's innermost box dim span the swizzle)", rule="descriptor")
        self.k_per_block = _K_BITS // self.dtype.width
        self.k_boxes = max(self.k * eb // self.row_bytes, 1)  # boxes along K, side by side for each row box
        self.r0 = 0  # the first row this descriptor reads (None: known at run time)
        # the descriptor's start must be on its swizzle's repeat (8 rows of the span): elsewhere the PTX ISA
        # asks for a base offset, which this encoding leaves 0
        off = tile.flat_offset * eb if isinstance(tile.flat_offset, int) else None
        if off is not None and off % (8 * span):
            fail(f"a {sw} tile starting {off} bytes into its buffer: a wgmma descriptor starts on a "
                 f"{8 * span}-byte repeat of the swizzle (rows a multiple of 8): take the view at such a row, "
                 "or row_block()", rule="descriptor")
        step = tile.info.stage_bytes if tile.info is not None else 0
        if off is None and step == self.rows * self.k * eb and step % (8 * span):
            # a stage of a ring, picked at run time: every stage but the first may start mid-repeat
            fail(f"a stage of a ring of {step}-byte {sw} stages: a wgmma descriptor starts on a {8 * span}-byte "
                 "repeat of the swizzle, so the stages must be whole repeats (rows a multiple of 8)",
                 rule="descriptor")
        # stride byte offset: 8 rows of the swizzle span; leading byte offset unused for swizzled K-major
        self.desc = encode_matrix_descriptor(_addr(tile), 16, 8 * span, sw)

    @user_op
    def k_block(self, kb):
        """The descriptor of K-block `kb` (a Python int): columns
        [kb·K_mma, (kb+1)·K_mma) of every row, as a SmemDescriptor (so
        mma_async still knows the operand type)."""
        if not _is_int(kb):
            # (a float offset the descriptor by part of a K block; a run-time value reached Python's `if`)
            fail(f"SmemDescriptor.k_block({show(kb)}): kb is a Python int, fixed at build time (the descriptor's "
                 "offset; unroll the K loop with Python's range)", rule="descriptor")
        eb = max(self.dtype.width // 8, 1)
        k0 = kb * self.k_per_block
        if not 0 <= k0 < self.k:
            fail(f"K-block {kb} of a tile with K = {self.k}", rule="descriptor")
        in_box = self.row_bytes // eb
        byte = (k0 // in_box) * self.box_rows * self.row_bytes + (k0 % in_box) * eb
        view = object.__new__(SmemDescriptor)
        view.__dict__.update(self.__dict__)
        view.desc = self.add_16B_offset(byte // 16)
        return view

    @user_op
    def add_16B_offset(self, n):  # noqa: N802 (TIRx's name)
        _check_offset(n, "SmemDescriptor.add_16B_offset")
        return self.desc + n if not isinstance(n, int) or n else self.desc

    def row_block(self, r0):
        """The descriptors of rows [r0, ...) (r0 a multiple of 8, whole swizzle
        atoms; a Python int is checked, a run-time value trusted). A tile
        copied as boxes of some of its rows and part of K lies box after box
        (each row box's K boxes side by side): the rows a wgmma reads from
        r0 must then stay in one row box (checked by mma_async)."""
        if self.r0 != 0:
            fail("row_block of a row_block: take the rows from the tile's descriptor", rule="descriptor")
        _check_offset(r0, "SmemDescriptor.row_block")
        if isinstance(r0, int):
            if r0 % 8 or not 0 <= r0 < self.rows:
                fail(f"row block {r0}: a multiple of 8 inside the tile's {self.rows} rows", rule="descriptor")
            units = ((r0 // self.box_rows) * self.k_boxes * self.box_rows + r0 % self.box_rows) * \
                self.row_bytes // 16
        else:
            if self.k_boxes > 1 and self.rows > self.box_rows:
                fail(f"a run-time row block of a tile copied as boxes of {self.box_rows} of its {self.rows} rows "
                     f"and 1/{self.k_boxes} of K (box after box): its row box cannot be placed at build; use a "
                     "Python int, or a box of all rows", rule="descriptor")
            units = (r0 * (self.row_bytes // 16)).to(Uint64)
        view = object.__new__(SmemDescriptor)
        view.__dict__.update(self.__dict__)
        view.desc = self.add_16B_offset(units)
        view.r0 = r0 if isinstance(r0, int) else None
        return view

    def _check_rows(self, n, what):
        """The wgmma reads rows [r0, r0 + n) of this tile: inside one row box when the tile's boxes split K
        too, and past the tile's rows only while its allocation holds them (a ring stage's pad rows, the
        next block of a stage: rows the caller discards), never into another buffer or past shared memory."""
        r0 = self.r0
        if r0 is not None and self.k_boxes > 1 and r0 // self.box_rows != (r0 + n - 1) // self.box_rows:
            fail(f"the wgmma reads rows {r0}-{r0 + n - 1} of {what}, across its boxes of {self.box_rows} rows, "
                 f"which lie box after box with K split in {self.k_boxes}: keep a wgmma's rows inside one box",
                 rule="wgmma")
        if r0 is not None and r0 + n <= self.rows:
            return
        if r0 is None and self.rows <= self.box_rows and n <= self.rows:
            return  # a run-time row block of one row box (row_block places it): the caller keeps it inside
        info, off = self.tile.info, self.tile.flat_offset
        eb = max(self.dtype.width // 8, 1)
        # the view's start in its allocation (a run-time one, a ring's stage(i): at least 0)
        start = (off * eb if isinstance(off, int) else 0) + (r0 or 0) * self.row_bytes
        if self.k_boxes > 1 or info is None or start + n * self.row_bytes > info.nbytes:
            fail(f"the wgmma reads {n} rows of {what} from row {r0 if r0 is not None else '(run time)'} of a "
                 f"{self.rows}-row tile, past its buffer's {info.nbytes if info else '?'} bytes (another "
                 "buffer's, or past shared memory)", rule="wgmma")

    @property
    def operand_type(self):
        t = _TYPES.get(self.dtype.name)
        if t not in _OPERAND_TYPES:
            fail(f"a wgmma operand tile of {self.dtype.__name__}: f16, bf16, e4m3 or e5m2 (f32 tiles: pass "
                 "a_type/b_type='tf32')", rule="wgmma")
        return t


def _check_offset(v, what):
    """A descriptor offset: a Python int (checked by the caller) or a run-time integer (trusted)."""
    if not (_is_int(v) or (isinstance(v, Numeric) and not type(v).is_float and type(v) is not dsl.Boolean)):
        fail(f"{what}({show(v)}): a Python int or a run-time integer (dsl.Int32, ...)", rule="descriptor")


def _addr(tile):
    from .cpasync import address_of
    return address_of(tile)  # the tile's physical start (the swizzle is the descriptor's)


class Accumulator:
    """A wgmma accumulator: the 64 x n f32 tile of a warpgroup, n/2
    registers per thread, kept as one LLVM struct value so loops carry it
    whole (``dsl.range(..., carry=(acc,))``).

    Register i of thread t holds element (row, col) with, for w = t // 32
    and l = t % 32: row = 16·w + l // 4 + 8·(i // 2 % 2), col = 8·(i // 4) +
    2·(l % 4) + i % 2 (``coords(i)``)."""

    def __init__(self, n, dtype=Float32, *, value=None, m=64):
        dsl.current_kernel()  # the outside-kernel error, not MLIR's "requires a Context"
        if m != 64:
            fail("wgmma tiles have m = 64", rule="wgmma")
        if not _is_int(n):
            fail(f"wgmma n = {show(n)}: a multiple of 8 in [8, 256], given as a Python int (not a "
                 f"{type(n).__name__})", rule="wgmma")
        if n % 8 or not 8 <= n <= 256:
            fail(f"wgmma n = {show(n)}: a multiple of 8 in [8, 256]", rule="wgmma")
        self.n, self.dtype = n, dsl.dtype(dtype)
        if self.dtype is not Float32:
            fail("accumulators are f32 here", rule="wgmma")
        self.count = n // 2
        self.struct_t = llvm.StructType.get_literal([ir.F32Type.get()] * self.count)
        if value is None:
            zero = Float32(0.0).value
            v = llvm.UndefOp(self.struct_t).result
            for i in range(self.count):
                v = llvm.InsertValueOp(v, zero, [i]).result
            value = v
        self.value = value

    # the struct value, checked to belong to the kernel being built (see dsl.numeric.check_build)
    @property
    def value(self):
        check_build(self._owner, "this wgmma.Accumulator")
        return self._value

    @value.setter
    def value(self, v):
        self._value, self._owner = v, build_owner()

    def __getitem__(self, i):
        # checked here: llvm.extractvalue past the struct asserts in MLIR (the process aborts)
        if not isinstance(i, int) or isinstance(i, bool):
            fail(f"accumulator register {i!r}: a Python int (the registers are fixed at build time)", rule="wgmma")
        if not 0 <= i < self.count:
            fail(f"accumulator register {i} of a 64 x {self.n} accumulator: it has {self.count} (0-{self.count - 1})",
                 rule="wgmma")
        return Float32(llvm.ExtractValueOp(ir.F32Type.get(), self.value, [i]).result)

    @staticmethod
    @user_op
    def from_values(n, values):
        """An accumulator holding `values` (n/2 Float32 per thread)."""
        acc = Accumulator(n, value=0)
        try:
            values = list(values)
        except TypeError:
            fail(f"Accumulator.from_values({n}, {show(values)}): the values are a list of Float32", rule="wgmma")
        if len(values) > acc.count:  # llvm.insertvalue past the struct asserts in MLIR
            fail(f"Accumulator.from_values({n}, ...) takes at most {acc.count} values (n/2 a thread), got "
                 f"{len(values)}", rule="wgmma")
        v = llvm.UndefOp(acc.struct_t).result
        for i, x in enumerate(values):
            e = as_value(x, Float32) if isinstance(x, (int, float, Numeric)) and not isinstance(x, bool) else None
            if e is None or e.type != ir.F32Type.get():
                # (a Vector, or another type, reached llvm.insertvalue: a verifier error at the kernel's def line)
                fail(f"Accumulator.from_values value {i} is {show(x)}: a Float32 scalar (an accumulator register)",
                     rule="wgmma")
            v = llvm.InsertValueOp(v, e, [i]).result
        acc.value = v
        return acc

    def values(self):
        return [self[i] for i in range(self.count)]

    @staticmethod
    def coords(i, lane=None, warp=None):
        """(row, col) in the 64 x n tile of register i (Python ints when lane and warp are)."""
        lane = dsl.lane_idx() if lane is None else lane
        warp = dsl.warp_idx() % 4 if warp is None else warp
        row = warp * 16 + lane // 4 + 8 * (i // 2 % 2)
        col = 8 * (i // 4) + 2 * (lane % 4) + i % 2
        return row, col

    def _flatten(self):
        return [dsl.Val(self.value)], lambda v: Accumulator(self.n, self.dtype, value=v[0].value)


_SCALE_IN = {1: "one", -1: "neg"}


@user_op
def mma_async(acc, a, b, *, a_type=None, b_type=None, scale_d=True, scale_a=1, scale_b=1):
    """acc += A·Bᵀ over one K-block: A is 64 x K (a descriptor, or registers),
    B is n x K (a descriptor), both K-major. Types come from SmemDescriptors
    (or `a_type`/`b_type`: "f16", "bf16", "e4m3", "e5m2"). `scale_d` (False:
    acc = A·B) is a Python bool, a run-time Boolean only with A from registers.
    Issued by the whole warpgroup; pair with fence/commit_group/wait_group.
    Returns the new accumulator."""
    _require_sm90a("wgmma.mma_async")
    if not isinstance(acc, Accumulator):
        fail("mma_async's first argument is a wgmma.Accumulator", rule="wgmma")
    for what, given in (("a_type", a_type), ("b_type", b_type)):
        if given is not None and not isinstance(given, str):
            fail(f"wgmma {what}={show(given)}: a type name, one of {', '.join(sorted(_OPERAND_TYPES))}",
                 rule="wgmma")
    for what, d, given in (("a_type", a, a_type), ("b_type", b, b_type)):
        # a tile's own type decides: an override read bf16 data as f16 (or fp8 as the other fp8)
        if isinstance(d, SmemDescriptor) and given is not None:
            own = _TYPES.get(d.dtype.name)
            if own is not None and _TYPES.get(given, given) != own and not (
                    own == "f32" and _TYPES.get(given, given) == "tf32"):
                fail(f"wgmma {what}={given!r} for a tile of {d.dtype.__name__}: a descriptor's type is its tile's "
                     "(an f32 tile: 'tf32')", rule="wgmma")
            # a tile of another type: integers holding the operand's bits (fp8 as u8) take its type; f64 data
            # was read as tf32
            want = _OPERAND_BITS.get(_TYPES.get(given, given))
            if own is None and (d.dtype.is_float or (want is not None and d.dtype.width != want)):
                fail(f"wgmma {what}={given!r} for a tile of {d.dtype.__name__}: wgmma reads f16, bf16, fp8 and "
                     "tf32 (f32) tiles, or integer tiles holding such bits (fp8 as u8)", rule="wgmma")
    ta = a_type or (a.operand_type if isinstance(a, SmemDescriptor) else None)
    tb = b_type or (b.operand_type if isinstance(b, SmemDescriptor) else None)
    ta, tb = _TYPES.get(ta, ta), _TYPES.get(tb, tb)
    if isinstance(a, SmemDescriptor):
        a._check_rows(64, "A")
    if isinstance(b, SmemDescriptor):
        b._check_rows(acc.n, "B")
    if ta is None or tb is None:
        fail("mma_async needs the operand types: pass SmemDescriptors or a_type=/b_type=", rule="wgmma")
    for what, t in (("a_type", ta), ("b_type", tb)):
        # checked here: "f32" reached an llvm_unreachable in NVVM's wgmma
        # (the process aborted), other names an AttributeError
        if t not in _OPERAND_TYPES:
            fail(f"wgmma {what} {t!r}: one of {', '.join(sorted(_OPERAND_TYPES))} (f32 data is read as tf32; "
                 "integer wgmmas need s32 accumulators, which these f32 ones are not)", rule="wgmma")
    for what, v in (("scale_a", scale_a), ("scale_b", scale_b)):
        if not isinstance(v, int) or isinstance(v, bool) or v not in _SCALE_IN:
            fail(f"wgmma {what}={v!r}: 1 or -1 (negate the operand)", rule="wgmma")
    fp8 = {"e4m3", "e5m2"}
    if (ta in fp8) != (tb in fp8) or (ta not in fp8 and ta != tb):
        fail(f"wgmma operand types {ta} and {tb} do not pair (f16/bf16 with themselves, fp8 with fp8)", rule="wgmma")
    k = 32 if ta in fp8 else 16 if ta in ("f16", "bf16") else 8
    bd = b.desc if isinstance(b, SmemDescriptor) else b
    if isinstance(a, (list, tuple)) or hasattr(a, "lanes"):
        return _mma_rs(acc, a, bd, ta, tb, scale_d, scale_a, scale_b)
    ad = a.desc if isinstance(a, SmemDescriptor) else a
    if not isinstance(scale_d, int) or scale_d not in (0, 1):
        # (nvvm's op takes it as an attribute: a run-time value reached Python's `if`)
        fail(f"wgmma.mma_async scale_d={show(scale_d)}: with A in shared memory a Python bool, fixed at build "
             "time (False: D = A·B, True: D += A·B); a run-time scale_d needs A from registers", rule="wgmma")
    shape = types.mma_shape(64, acc.n, k)
    kw = {}
    r = nvvm.WgmmaMmaAsyncOp(acc.struct_t, acc.value, as_value(ad, Uint64), as_value(bd, Uint64), shape,
                             getattr(nvvm.WGMMATypes, ta), getattr(nvvm.WGMMATypes, tb), nvvm.WGMMATypes.f32,
                             nvvm.WGMMAScaleOut.one if scale_d else nvvm.WGMMAScaleOut.zero,
                             getattr(nvvm.WGMMAScaleIn, _SCALE_IN[scale_a]),
                             getattr(nvvm.WGMMAScaleIn, _SCALE_IN[scale_b]),
                             nvvm.MMALayout.row, nvvm.MMALayout.col, **kw).result
    return Accumulator(acc.n, acc.dtype, value=r)


def _mma_rs(acc, a_regs, bd, ta, tb, scale_d, scale_a, scale_b):
    """wgmma with A in registers (4 x 32-bit registers a thread for a 64 x k
    block, ldmatrix's layout): nvtma.wgmma_mma_async_rs, since NVVM's op
    takes A only from shared memory."""
    from .dsl.vector import Vector
    regs = a_regs.lanes() if hasattr(a_regs, "lanes") else list(a_regs)
    if len(regs) != 4:
        fail(f"A from registers is 4 x 32-bit registers a thread, got {len(regs)}", rule="wgmma")
    a = Vector.from_elements([Int32(bits32(r, "wgmma")) for r in regs], Int32)
    sd = as_value(Int32(as_value(1 if scale_d is True else 0 if scale_d is False else scale_d, Int32)) != 0)
    r = _d.WgmmaMmaAsyncRsOp(acc.value, a.value, as_value(bd, Uint64), sd, acc.n, getattr(_d.WgmmaType, ta.upper()),
                             getattr(_d.WgmmaType, tb.upper()), scale_a=scale_a, scale_b=scale_b).result
    return Accumulator(acc.n, acc.dtype, value=r)
