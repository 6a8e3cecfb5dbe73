"""Kernel-authoring objects with TVM TIRx's names (tvm.backend.cuda.lang):
shared-memory pools, mbarriers, pipelines, warp roles, tile schedulers.
Use them inside an ``@nvtma.dsl.kernel`` function.

    pool = lang.SMEMPool()
    ring = pool.alloc_for(tma_info, stages=4)        # swizzle and alignment from the atom
    pipe = lang.Pipeline(4, full="tma", empty="mbar", init_empty=4)
    with lang.WarpRole(0):                           # producer warp
        loop = dsl.range(n, carry=(lang.PipelineState(4),))
        for i, (st,) in loop:
            pipe.producer_acquire(st)
            ...
            dsl.yield_(st.advance())
"""

from __future__ import annotations

import contextlib

from . import dsl
from ._lazy import lazy
from .dsl import types
from .dsl.errors import KernelBuildError, fail, show, user_op, user_site
from .dsl.kernel import active_threads, narrowed
from .dsl.numeric import run_time_integer
from .dsl.tensor import SWIZZLE_BYTES, SmemInfo, TensorValue, _static_shape
from .profile import Profiler  # noqa: F401 (in-kernel profiling, nvtma.profile; here beside the roles it times)

ir = lazy("nvtma.ir")
arith = lazy("nvtma.dialects.arith")
memref = lazy("nvtma.dialects.memref")
nvgpu = lazy("nvtma.dialects.nvgpu")
nvvm = lazy("nvtma.dialects.nvvm")
_d = lazy("nvtma.dialects.nvtma")

__all__ = ["SMEMPool", "TMEMPool", "MBarrier", "TMABar", "TCGen05Bar", "PipelineState", "Pipeline", "WarpRole",
           "WarpgroupRole", "elect_sync", "PersistentTileScheduler", "ClusterPersistentScheduler2D", "GroupMajor3D",
           "FlashAttentionLinearScheduler", "Tile", "SmemDescriptor", "swizzle_align", "Profiler"]


def swizzle_align(swizzle) -> int:
    """The alignment a TMA swizzle needs of a shared buffer: its repeat
    (8 rows of the swizzle span), 128 bytes unswizzled."""
    if swizzle is not None:  # (a name, a Swizzle or its value, as SMEMPool.alloc takes; a list was a TypeError)
        from .cpasync import _tensormap_errors
        from .tensormap import Swizzle
        with _tensormap_errors():
            swizzle = Swizzle.coerce(swizzle, "swizzle").dialect
    span = SWIZZLE_BYTES.get(swizzle if swizzle is not None else "none")
    return span * 8 if span else 128


# --------------------------------------------------------------------------- shared memory

class SMEMPool:
    """Bump allocator over the kernel's dynamic shared memory (its size goes
    into the kernel record; launches need no smem=). Buffers are aligned to
    the swizzle repeat of the atom that fills them (1024 bytes for 128B
    swizzles), so the TMA's address-based swizzle lines up."""

    def __init__(self):
        self.k = dsl.current_kernel()

    @user_op
    def alloc(self, shape, dtype, *, swizzle=None, align=None):
        """A [shape] buffer of `dtype`. `swizzle` (the TMA swizzle of the data
        it will hold) may be left out: the first atom that copies into it sets
        it, and checks the alignment."""
        cls = dsl.dtype(dtype)
        shape = _static_shape(shape, "SMEMPool.alloc")
        if swizzle is not None:
            from .cpasync import _tensormap_errors
            from .tensormap import Swizzle
            with _tensormap_errors():  # (the encoder's TensorMapError named no line of the user's)
                swizzle = Swizzle.coerce(swizzle, "swizzle").dialect
        if align is not None and (not isinstance(align, int) or isinstance(align, bool) or align < 1
                                  or align & (align - 1)):
            # (a tuple or str was a TypeError from max(), a float an MLIR error, 1000 misaligned the buffer)
            fail(f"SMEMPool.alloc align={show(align)}: a Python int, a power of two (bytes) such as 128 or 1024",
                 rule="smem")
        need = swizzle_align(swizzle)
        align = max(align or 0, need)
        k = self.k
        off = (k.smem_bytes + align - 1) // align * align
        eb = max(cls.width // 8, 1)
        n = 1
        for d in shape:
            n *= d
        static = k.static_bytes
        if off + n * eb > _SMEM_LIMIT or static and (off + n * eb + 127) // 128 * 128 + static > _SMEM_LIMIT:
            # refused here, at the allocation's line (past 2**63 bytes the size
            # would not even fit the kernel's record)
            fail(f"SMEMPool.alloc of {list(shape)} {cls.__name__} ({n * eb} bytes at offset {off}) takes the kernel's "
                 f"shared memory to {off + n * eb} bytes" + (f" (and {static} of alloc_static)" if static else "")
                 + f"; a Hopper CTA gets at most {_SMEM_LIMIT}", rule="smem")
        k.smem_bytes = off + n * eb
        stage_bytes = n * eb // shape[0] if len(shape) > 1 else 0
        return _view(k, off, shape, cls, SmemInfo(off, n * eb, align, swizzle, stage_bytes))

    @user_op
    def alloc_static(self, shape, dtype):
        """A [shape] buffer of `dtype` in static shared memory, beside the
        pool rather than in it (the pool's layout, and so the ring depths
        computed for it, stay as they are): a few values every thread reads
        often, such as scales."""
        cls = dsl.dtype(dtype)
        shape = _static_shape(shape, "SMEMPool.alloc_static")
        n = self.k.scratch.get(("static_smem",), 0)
        self.k.scratch[("static_smem",)] = n + 1
        return self.k.static_smem(f"__nvtma_static_{n}", list(shape), cls.mlir_type(), dtype=cls,
                                  what=f"SMEMPool.alloc_static of {list(shape)} {cls.__name__}")

    @user_op
    def alias(self, buf, shape, dtype, *, atom=None):
        """Another view ([shape] of `dtype`) of `buf`'s bytes, e.g. the bf16
        output tile in the f32 tile's space; it must fit. With `atom` (what
        cpasync.make_tiled_tma_atom returned) the view holds that atom's tile
        as it lies in shared memory, swizzled and box after box: `shape` and
        `dtype` must be the atom's, and `buf` aligned for its swizzle."""
        cls = dsl.dtype(dtype)
        shape = _static_shape(shape, "SMEMPool.alias")
        n = max(cls.width // 8, 1)
        for d in shape:
            n *= d
        if not isinstance(buf, dsl.TensorValue) or buf.info is None:
            fail(f"an alias of {n} bytes over {show(buf)}: a buffer of lang.SMEMPool (or a stage of one)",
                 rule="smem")
        # a stage (or rows) of a buffer: its own bytes, not the allocation's start (an alias of stage 1 was
        # stage 0's)
        first = buf.flat_offset if buf.flat is not None else 0
        if not isinstance(first, int):
            fail("an alias of a stage taken at a run-time index: alias the whole buffer, or a stage(<int>)",
                 rule="smem")
        off, have = buf.info.offset + first * max(buf.dtype.width // 8, 1), buf.nbytes
        if n > have:
            fail(f"an alias of {n} bytes over a {have}-byte shared buffer", rule="smem")
        align = buf.info.align
        while off % align:
            align //= 2
        info = SmemInfo(off, n, align, None, 0)
        if atom is not None:
            if tuple(shape) != tuple(atom.smem_layout) or cls is not atom.dtype:
                fail(f"an alias {list(shape)} of {cls.__name__} for an atom of {list(atom.smem_layout)} "
                     f"{atom.dtype.__name__} tiles", rule="smem")
            if align < swizzle_align(atom.swizzle):
                fail(f"an alias for a {atom.swizzle} atom needs {swizzle_align(atom.swizzle)}-byte alignment; "
                     f"the buffer has {align}: allocate it with align=", rule="swizzle")
            info.set_swizzle(atom.swizzle, f"the {atom.kind} atom")
            info.set_box(atom.box, f"the {atom.kind} atom", tuple(shape))
        return _view(self.k, off, shape, cls, info)

    def alloc_for(self, atom, stages=None):
        """A buffer for `atom`'s tile (times `stages`), with its swizzle and alignment."""
        from .cpasync import TmaInfo
        info = atom if isinstance(atom, TmaInfo) else None
        if info is None:
            fail("alloc_for takes what cpasync.make_tiled_tma_atom returned", rule="type")
        shape = ((stages,) if stages else ()) + tuple(info.smem_layout)
        return self.alloc(shape, info.dtype, swizzle=info.swizzle)

    def alloc_tcgen05_mma_AB(self, shape, dtype="float16", swizzle_mode="auto", align=1024):
        """A K-major tcgen05.mma operand buffer ([stages,] rows, K): the
        swizzle is the widest whose span divides a row (swizzle_mode="auto")
        or the one given; the TMA atom that fills it must use the same."""
        from . import tcgen05
        shape = tuple(int(d) for d in shape)
        if swizzle_mode == "auto":
            swizzle_mode = tcgen05.infer_swizzle(shape[-1], dtype)
        return self.alloc(shape, dtype, swizzle=swizzle_mode, align=align)

    def stage(self, buf, s, dtype=None):
        """Slice `s` of a [stages, ...] buffer (buf.stage(s))."""
        return buf.stage(s)

    def commit(self):
        """TIRx's pool commit: nothing to do (the size is recorded when the kernel is built)."""


def _view(k, off, shape, cls, info):
    """[shape] of `cls` at byte `off` of the kernel's shared memory, with a
    flat 1-D view for swizzle/box-aware element access."""
    base = k.smem()
    n = 1
    for d in shape:
        n *= d
    # built at the kernel's entry, next to the base: a buffer allocated inside
    # a branch or loop (cta_reduce's scratch) is used after it too
    with ir.InsertionPoint.after(base.owner):
        shift = arith.ConstantOp(ir.IndexType.get(), off).result
        view = memref.ViewOp(types.shared_memref(shape, cls.mlir_type()), base, shift, [])
        flat = memref.ViewOp(types.shared_memref([n], cls.mlir_type()), base, shift, [])
    return TensorValue(view.result, info=info, flat=TensorValue(flat.result, dtype=cls), flat_offset=0, dtype=cls)


# --------------------------------------------------------------------------- tensor memory (sm_100a)

class TMEMPool:
    """Bump allocator over Tensor Memory columns (TIRx's TMEMPool; sm_100a,
    compiled, not run). ``TMEMPool(cols=256)`` allocates now: warp `warp`
    runs tcgen05.alloc (then relinquish_alloc_permit), the address is
    published through shared memory behind a CTA barrier. ``TMEMPool()``
    waits for ``commit()``, which allocates the power of two the allocs
    need. Create and commit it where every thread runs (not in a role);
    ``dealloc()`` at the end, likewise. With cta_group=2 one warp of each
    CTA of the pair allocates and the pair syncs before dealloc."""

    def __init__(self, cols=None, *, cta_group=1, warp=0, relinquish=True, pool=None):
        from . import tcgen05
        tcgen05.require_arch("TMEMPool")
        if cta_group not in (1, 2):
            fail(f"TMEMPool cta_group {cta_group!r}: 1 or 2", rule="cta-group")
        self.cta_group, self.warp, self.relinquish = cta_group, warp, relinquish
        self.slot = (pool or SMEMPool()).alloc((1,), "u32")
        self.used = 0
        self.cols = None
        self.base = None
        if cols is not None:
            self._allocate(cols)

    def _top_level(self, what):
        k = dsl.current_kernel()
        if k.scope or ir.InsertionPoint.current.block != k.entry:
            fail(f"TMEMPool.{what} synchronizes the CTA: call it where every thread runs, not inside a warp role "
                 "or branch", rule="tmem")

    def _allocate(self, cols):
        from . import tcgen05
        if not isinstance(cols, int) or cols < 32 or cols > 512 or cols & (cols - 1):
            fail(f"TMEMPool of {cols!r} columns: a power of two in [32, 512]", rule="tmem")
        if self.used > cols:
            fail(f"TMEMPool of {cols} columns, but its buffers take {self.used}", rule="tmem")
        self._top_level("allocation")
        with WarpRole(self.warp):
            tcgen05.alloc(self.slot, cols, cta_group=self.cta_group)
            if self.relinquish:
                tcgen05.relinquish_alloc_permit(cta_group=self.cta_group)
        with _loc():
            tcgen05.fence_before_thread_sync()
            dsl.barrier()
            tcgen05.fence_after_thread_sync()
            self.base = dsl.Uint32(self.slot[0])
        self.cols = cols

    def commit(self):
        """Allocates (a pool made without cols=): the smallest power of two >= 32 the buffers fit."""
        if self.base is not None:
            return
        n = 32
        while n < self.used:
            n *= 2
        self._allocate(n)

    def _take(self, layout, dtype, role, cols=None):
        from . import tcgen05
        n = cols if cols is not None else layout.total_cols
        if cols is not None and cols < layout.total_cols:
            fail(f"cols={cols} for a TMEM {role} that takes {layout.total_cols} columns", rule="tmem")
        off = self.used
        limit = self.cols or 512
        if off + n > limit:
            fail(f"TMEM {role} of {n} columns at column {off}: the pool has {limit}", rule="tmem")
        self.used = off + n
        return tcgen05.TmemBuffer(self, off, layout, dtype, role)

    def alloc(self, shape, dtype="float32", *, layout=None, cols=None):
        """A ([stages,] rows, cols) buffer of 32-bit-packed rows, one lane per row (or `layout`, a TmemLayout)."""
        from . import tcgen05
        lay = layout or tcgen05.tmem_layout("plain", shape, dtype)
        return self._take(lay, dtype, "buffer", cols)

    def alloc_tcgen05_mma_D(self, shape, dtype="float32", *, M, cta_group, ws=False, sparse=False, group=None,
                            cols=None):
        """The accumulator of an MMA with instruction M and cta_group: this
        CTA's ([stages,] M / cta_group, N) f32 tile, N columns a stage."""
        from . import tcgen05
        if ws or group is not None:
            fail("TMEM operands for .ws MMAs and grouped column layouts are not supported here", rule="tmem")
        return self._take(tcgen05.tmem_layout("D", shape, dtype, M=M, cta_group=cta_group), dtype, "D", cols)

    alloc_tcgen05_mma_C = alloc_tcgen05_mma_D

    def alloc_tcgen05_mma_A(self, shape, dtype="bfloat16", *, M, cta_group, ws=False, sparse=False, cols=None):
        """An A operand in TMEM: this CTA's ([stages,] M / cta_group, K) tile,
        K·bits/32 columns a stage."""
        from . import tcgen05
        if ws:
            fail("TMEM operands for .ws MMAs are not supported here", rule="tmem")
        return self._take(tcgen05.tmem_layout("A", shape, dtype, M=M, cta_group=cta_group), dtype, "A", cols)

    def alloc_sf(self, shape, dtype, *, sf_per_mma, sf_reuse=1):
        """Block scale factors ([stages,] rows, SF_K·sf_reuse): 4 one-byte
        factors per 32-bit column (an MMA picks its byte with the descriptor's
        scale-factor data ID), in 128-bit (4-column) units."""
        from . import tcgen05
        return self._take(tcgen05.tmem_layout("SF", shape, dtype, sf_per_mma=sf_per_mma, sf_reuse=sf_reuse),
                          dtype, "SF")

    def dealloc(self):
        """Frees the columns: tcgen05 work fenced, the CTA (or the pair) synced, then tcgen05.dealloc."""
        from . import tcgen05
        if self.base is None:
            fail("TMEMPool.dealloc before anything was allocated", rule="tmem")
        self._top_level("dealloc")
        with _loc():
            tcgen05.fence_before_thread_sync()
            if self.cta_group == 2:
                dsl.cluster_sync()
            else:
                dsl.barrier()
            tcgen05.fence_after_thread_sync()
        with WarpRole(self.warp):
            tcgen05.dealloc(self.base, self.cols, cta_group=self.cta_group)

    free = dealloc


# --------------------------------------------------------------------------- barriers

# the shared memory of a Hopper CTA (227 KB), and so at most that / 8 mbarriers
_SMEM_LIMIT = 227 * 1024
_MAX_MBARRIERS = _SMEM_LIMIT // 8


class MBarrier:
    """`depth` mbarriers (an upstream !nvgpu.mbarrier.group), initialized by
    `leader` (default thread 0) with `count` arrivals each. Initialize them
    before any warp role starts; the init is fenced, and Pipeline/TMABar users
    publish it with dsl.barrier() (or dsl.cluster_sync() for multicast)."""

    def __init__(self, depth=1, count=1, *, phase_offset=0, leader=None, pool=None):
        name = type(self).__name__
        if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= _MAX_MBARRIERS:
            fail(f"{name} depth {depth!r}: an int in [1, {_MAX_MBARRIERS}] (8 bytes of shared memory each)",
                 rule="mbarrier")
        if isinstance(count, bool) or (isinstance(count, int) and not 1 <= count < 1 << 20):
            fail(f"{name} count {count!r}: mbarrier.init takes an arrival count in [1, 2**20 - 1]", rule="mbarrier")
        if not isinstance(count, int) and not run_time_integer(count):
            # (a run-time Int32 count, or an f16 one, reached nvgpu's verifier, which takes an index)
            fail(f"{name} count {show(count)}: an arrival count is a Python int or a run-time integer",
                 rule="mbarrier")
        k = dsl.current_kernel()
        if leader is None and (k.scope or ir.InsertionPoint.current.block != k.entry):
            # thread 0 inits: inside warp 1's role, a branch or a loop it may not run there, and LLVM then
            # drops the init while the arrivals and waits stay (a hang)
            fail(f"{name} created inside a warp role, branch or loop: thread 0, which initializes it, may not "
                 "run there. Create barriers at the kernel's top level, before the roles (or pass leader=, the "
                 "condition of the one thread that initializes them here)", rule="mbarrier")
        self.depth = depth
        self.count = count
        self.phase_offset = phase_offset
        with _loc():
            self.group = nvgpu.MBarrierCreateOp(types.mbarrier_group(depth)).result
            with dsl.if_(leader if leader is not None else dsl.thread_idx() == 0):
                for s in range(depth):
                    nvgpu.MBarrierInitOp(self.group, dsl.as_value(count, dsl.Index), dsl.as_value(s))
                nvvm.FenceMbarrierInitOp()

    # the !nvgpu.mbarrier.group value, checked to belong to the kernel being built
    @property
    def group(self):
        from .dsl.numeric import check_build
        check_build(self._owner, f"this {type(self).__name__}")
        return self._group

    @group.setter
    def group(self, v):
        from .dsl.numeric import build_owner
        self._group, self._owner = v, build_owner()

    def _stage(self, stage):
        """`stage` as the barrier index: a build-time one is checked against
        the depth (past it the index addresses whatever follows the group in
        shared memory), a run-time one is trusted."""
        if isinstance(stage, bool) or isinstance(stage, float) or (
                isinstance(stage, int) and not 0 <= stage < self.depth):
            fail(f"stage {stage!r} of a {self.depth}-deep {type(self).__name__}: 0-{self.depth - 1}",
                 rule="mbarrier")
        if not isinstance(stage, int) and not run_time_integer(stage):
            # (a run-time Float32 stage was converted to an index, a vector reached the op's verifier)
            fail(f"stage {show(stage)} of a {type(self).__name__}: a Python int or a run-time integer",
                 rule="mbarrier")
        return stage

    def _phase(self, phase):
        if self.phase_offset:
            return phase ^ self.phase_offset if isinstance(phase, int) else phase ^ dsl.Boolean(True)
        return phase

    @user_op
    def arrive(self, stage, count=None):
        """Every calling thread arrives once (or `count` times) on barrier `stage`."""
        self._stage(stage)
        _arrival_count(count)
        if count is not None:
            nvvm.MBarrierArriveOp(ir.IntegerType.get_signless(64), self.ptr(stage).value,
                                  count=dsl.as_value(count, dsl.Int32))
            return
        nvgpu.MBarrierArriveOp(self.group, dsl.as_value(stage, dsl.Index),
                               results=[types.mbarrier_token()])

    @user_op
    def wait(self, stage, phase):
        """Spin until phase parity `phase` (0/1 or a Boolean) of barrier `stage` completes."""
        self._stage(stage)
        if not (isinstance(phase, (int, dsl.Boolean)) or run_time_integer(phase)) or (
                isinstance(phase, int) and phase not in (0, 1)):  # (a vector reached the op's verifier)
            fail(f"phase {show(phase)}: a parity, 0 or 1, or a run-time Boolean or integer", rule="mbarrier")
        if run_time_integer(phase):
            phase = (phase & 1) != 0  # its parity: as a Boolean, round 2 (phase 2) was parity 1
        p = self._phase(phase)
        p = dsl.as_value(bool(p) if isinstance(p, int) else p, dsl.Boolean)
        nvgpu.MBarrierTryWaitParityOp(self.group, p, dsl.as_value(10_000_000), dsl.as_value(stage, dsl.Index))

    def at(self, stage):
        """(barrier, stage): what cpasync.copy's tma_bar_ptr takes."""
        return (self, self._stage(stage))

    @user_op
    def ptr(self, stage):
        """The shared-memory address (!llvm.ptr<3>) of barrier `stage`."""
        self._stage(stage)
        return dsl.Val(_d.MBarrierAddressOp(self.group, dsl.as_value(stage, dsl.Index)).result)

    def remote_view(self, rank):
        """This barrier in cluster CTA `rank`'s shared memory: `arrive` signals it there."""
        from .cpasync import _cluster_ctas
        n = _cluster_ctas("a remote mbarrier (mapa)")
        if isinstance(rank, bool) or (isinstance(rank, int) and not 0 <= rank < n):
            fail(f"remote_view({rank!r}): a CTA rank 0-{n - 1} of the kernel's clusters", rule="mbarrier")
        return _RemoteMBarrier(self, rank)


class _RemoteMBarrier:
    def __init__(self, local, rank):
        self.local, self.rank = local, rank

    @user_op
    def ptr(self, stage):
        local = self.local.ptr(stage).value
        return dsl.Val(nvvm.MapaOp(types.ptr(7), local, dsl.as_value(self.rank, dsl.Int32)).result)

    @user_op
    def arrive(self, stage, count=None, scope="cta"):
        """mbarrier.arrive.release.<scope>.shared::cluster on the remote
        barrier. The default, release at CTA scope (PTX's default, and
        CUTLASS's ClusterBarrier::arrive), is what freeing a slot needs: the
        slot's readers were this CTA's wgmma/TMA, complete before the arrive.
        scope="cluster" also orders this thread's generic writes for the
        remote CTA's threads, and costs: measured on the H200 as ~0.8 us per
        arrive in a 2-CTA GEMM pipeline (a K step each: 54 us against 12.8)."""
        if scope not in ("cta", "cluster"):
            fail(f"scope={scope!r}: 'cta' or 'cluster'", rule="mbarrier")
        _arrival_count(count)
        kw = {"count": dsl.as_value(count, dsl.Int32)} if count is not None else {}
        nvvm.MBarrierArriveOp(None, self.ptr(stage).value, scope=getattr(nvvm.MemScopeKind, scope.upper()), **kw)

    def wait(self, *a, **k):
        fail("wait() on a remote mbarrier view: waits are local", rule="mbarrier")


def _arrival_count(count):
    """A build-time arrival count is 1 to 2**20 - 1 (mbarrier.arrive's count: 0 built and did nothing)."""
    if isinstance(count, bool) or (isinstance(count, int) and not 1 <= count < 1 << 20):
        fail(f"arrive count {count!r}: 1 to 2**20 - 1", rule="mbarrier")


def _single_issuer(what):
    """How one thread of the code being built issues `what`: 'elect' (a
    whole single warp is active: elect.sync picks a lane) or 'direct' (one
    thread is). More than one warp is a build error: each would issue."""
    warps, lanes = active_threads()
    if warps > 1:
        fail(f"{what} is issued by one thread, but up to {warps} warps run this code and each would issue it: "
             "call it inside lang.WarpRole(w) or dsl.if_(dsl.warp_idx() == w)", rule="single-issuer")
    return "direct" if lanes == 1 else "elect"


class TMABar(MBarrier):
    """An mbarrier a TMA completes: arm it with the bytes it will receive."""

    @user_op
    def arrive_expect_tx(self, stage, nbytes):
        """One thread of the calling warp (elected here; or the one running
        thread) arrives and expects `nbytes` of TMA traffic on barrier `stage`."""
        self._stage(stage)
        if isinstance(nbytes, bool) or (isinstance(nbytes, int) and not 0 <= nbytes < 1 << 20):
            # the tx-count is 20 bits: 1 << 40 was 0, and (1 << 40) + 4096 was 4096
            fail(f"arrive_expect_tx of {nbytes!r} bytes: an mbarrier's transaction count is 0 to 2**20 - 1 "
                 "(split the loads over more stages or barriers)", rule="mbarrier")
        def issue():
            nvgpu.MBarrierArriveExpectTxOp(self.group, dsl.as_value(nbytes, dsl.Index),
                                           dsl.as_value(stage, dsl.Index))
        if _single_issuer("TMABar.arrive_expect_tx") == "direct":
            issue()
        else:
            with dsl.if_(dsl.elect_sync()):
                issue()

    def arrive(self, stage, count=None, tx_count=None):
        if tx_count is not None:
            return self.arrive_expect_tx(stage, tx_count)
        return super().arrive(stage, count)


class TCGen05Bar(MBarrier):
    """An mbarrier that tcgen05.commit signals (sm_100a): ``arrive(stage)``
    makes it track every tcgen05 op the issuing thread started before. One
    thread commits: elected from the calling warp, or the thread where
    `pred` holds (``pred=dsl.elect_sync()``: one leader predicate for
    several commits). `cta_group`/`multicast_mask` (or per arrive) for 2-CTA
    MMAs: the mask signals the barrier in each masked CTA of the cluster."""

    def __init__(self, depth=1, count=1, *, cta_group=1, multicast_mask=None, **kwargs):
        from . import tcgen05
        tcgen05.require_arch("TCGen05Bar")
        super().__init__(depth, count, **kwargs)
        self.cta_group, self.multicast_mask = cta_group, multicast_mask

    @user_op
    def arrive(self, stage, count=None, *, pred=None, cta_group=None, multicast_mask=None):
        from . import tcgen05
        if count is not None:
            fail("TCGen05Bar.arrive is one tcgen05.commit arrival; plain arrivals with a count are MBarrier's",
                 rule="mbarrier")
        tcgen05.commit(self, stage, cta_group=cta_group or self.cta_group,
                       multicast_mask=multicast_mask if multicast_mask is not None else self.multicast_mask,
                       pred=pred)

    commit = arrive


# --------------------------------------------------------------------------- pipelines

def _integer(v) -> bool:
    """A Python int or an integer run-time value (not a float, NaN, complex, nor a bool: advance(True) moved
    the ring one slot)."""
    if isinstance(v, (bool, dsl.Boolean)):
        return False
    return isinstance(v, int) or (isinstance(v, dsl.Numeric) and not v.is_float)


class PipelineState:
    """Stage index and phase of a `depth`-stage ring (CuTe's PipelineState).

    ``PipelineState(depth)`` starts at index 0, phase 0; ``st.advance()``
    returns the next state, to carry through a loop
    (``dsl.range(n, carry=(st,))``). ``PipelineState(depth, i)`` computes
    the state of iteration `i` directly (index = i % depth, phase =
    (i // depth) & 1)."""

    def __init__(self, depth, i=None, *, index=None, phase=None):
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            fail(f"PipelineState depth {depth!r}: a positive Python int (the ring's stages)", rule="pipeline")
        if i is not None and not _integer(i):
            fail(f"PipelineState(depth, i={i!r}): i is an iteration number, an int or an integer run-time value",
                 rule="pipeline")
        self.depth = depth
        if i is not None:
            self.i = i
            self.index = i % depth
            r = (i // depth) % 2
            self.phase = (r != 0) if isinstance(r, dsl.Val) else int(r)
        else:
            self.i = None
            self.index = dsl.Int32(index if index is not None else 0) if not isinstance(index, dsl.Val) else index
            ph = phase if phase is not None else 0
            self.phase = ph if isinstance(ph, dsl.Val) else dsl.Boolean(bool(ph))

    @property
    def stage(self):
        return self.index

    @user_op
    def advance(self, n=1):
        """The state `n` slots later (an int, or a run-time value >= 0; the
        phase flips each time the index wraps)."""
        if not _integer(n):
            fail(f"advance({n!r}): an int or an integer run-time value", rule="pipeline")
        ph = self.phase if isinstance(self.phase, dsl.Val) else dsl.Boolean(bool(self.phase))
        if isinstance(n, int) and n == 1:
            nxt = self.index + 1
            wrap = nxt == self.depth
            return PipelineState(self.depth, index=dsl.select(wrap, 0, nxt), phase=dsl.select(wrap, ~ph, ph))
        if isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= self.depth:
            nxt = self.index + n
            wrap = nxt >= self.depth
            return PipelineState(self.depth, index=dsl.select(wrap, nxt - self.depth, nxt),
                                 phase=dsl.select(wrap, ~ph, ph))
        if isinstance(n, int) and n < 0:
            fail(f"advance({n}): a ring state only moves forward", rule="pipeline")
        t = self.index + n
        wraps = t // self.depth
        return PipelineState(self.depth, index=t - wraps * self.depth, phase=dsl.select(wraps % 2 != 0, ~ph, ph))

    def _flatten(self):
        ph = self.phase if isinstance(self.phase, dsl.Val) else dsl.Boolean(bool(self.phase))
        idx = self.index if isinstance(self.index, dsl.Val) else dsl.Int32(self.index)
        return [idx, ph], lambda v: PipelineState(self.depth, index=v[0], phase=v[1])


def _flip(phase):
    return (~phase) if isinstance(phase, dsl.Val) else 1 - int(phase)


class Pipeline:
    """A full/empty mbarrier pair per stage (TIRx's Pipeline).

    ``full``/``empty`` tags: "tma" (TMABar, armed with expect_tx), "mbar"
    (plain arrivals) or "tcgen05" (TCGen05Bar, tcgen05.commit; sm_100a);
    ``init_full``/``init_empty`` their arrival counts.
    Producers ``producer_acquire`` (wait for a free slot) and
    ``producer_commit`` (arm full with the bytes their TMA loads bring);
    consumers ``consumer_wait`` and ``consumer_release``. The empty side
    starts free: the first pass over the ring does not wait."""

    _KINDS = {"tma": TMABar, "mbar": MBarrier, "tcgen05": TCGen05Bar}

    def __init__(self, stages, *, full="tma", empty="mbar", init_full=1, init_empty=1, consumers=None,
                 empty_phase_offset=0, leader=None, pool=None):
        if consumers is not None:  # the first DSL's spelling
            init_empty = consumers
        for tag in (full, empty):
            if tag not in self._KINDS:
                fail(f"Pipeline barrier tag {tag!r}: 'tma', 'mbar' or 'tcgen05' (sm_100a)", rule="pipeline")
        self.stages = stages
        self.full = self._KINDS[full](stages, init_full, leader=leader)
        self.empty = self._KINDS[empty](stages, init_empty, phase_offset=empty_phase_offset, leader=leader)
        self.init_empty = init_empty

    def _state(self, st):
        """A PipelineState of this ring's depth: another depth's index ran past the barrier group."""
        if not isinstance(st, PipelineState) or st.depth != self.stages:
            fail(f"a {self.stages}-stage Pipeline driven by "
                 f"{f'a {st.depth}-deep PipelineState' if isinstance(st, PipelineState) else repr(st)}: "
                 f"use PipelineState({self.stages})", rule="pipeline")
        return st

    @user_op
    def producer_acquire(self, st: PipelineState):
        # a fresh barrier reports the phase before its first as complete
        self.empty.wait(self._state(st).index, _flip(st.phase))

    @user_op
    def producer_commit(self, st: PipelineState, nbytes=None):
        self._state(st)
        if isinstance(self.full, TMABar):
            if nbytes is None:
                fail("producer_commit on a 'tma' full barrier needs the bytes the loads bring", rule="pipeline")
            self.full.arrive_expect_tx(st.index, nbytes)
        else:
            self.full.arrive(st.index)

    @user_op
    def consumer_wait(self, st: PipelineState):
        self.full.wait(self._state(st).index, st.phase)

    @user_op
    def consumer_release(self, st: PipelineState, *, elect=True, ranks=None):
        """Frees the slot: one elected lane of each calling warp arrives
        (init_empty = consumer warps), or every thread with elect=False.
        With `ranks` (cluster CTA ranks) it arrives on the slot's empty
        barrier in each of those CTAs instead: the CTAs whose multicast
        loads write into this slot (their init_empty then counts the
        consumer warps of every CTA they write to)."""
        self._state(st)
        def arrive():
            if ranks is None:
                self.empty.arrive(st.index)
            else:
                for r in ranks:
                    self.empty.remote_view(r).arrive(st.index)
        if elect:
            with dsl.if_(dsl.elect_sync()):
                arrive()
        else:
            arrive()


# --------------------------------------------------------------------------- roles

SM_REGISTERS = 65536  # a Hopper (and Blackwell) SM's 32-bit registers, which the CTAs on it share


def register_budget(threads: int) -> int:
    """The registers per thread a CTA of `threads` threads starts with as ptxas reckons it for setmaxnreg
    (one CTA an SM): the SM's 65536 over the CTA's threads in whole warpgroups, in 8s, at most 256 (168 for
    384 threads, 128 for 512, 96 for 640; measured with nvJitLink 13.5 and ptxas 13.0)."""
    if not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= 1024:
        fail(f"register_budget({show(threads)}): a CTA's thread count, an int in [1, 1024]", rule="launch-config")
    return min(256, SM_REGISTERS // (-(-threads // 128) * 128) // 8 * 8)


def _setmaxnreg(regs, increase, warpgroups=None):
    if regs is None:
        return
    if not isinstance(regs, int) or isinstance(regs, bool) or not 24 <= regs <= 256 or regs % 8:
        fail(f"setmaxnreg {regs!r}: a multiple of 8 in [24, 256]", rule="setmaxnreg")
    k = dsl.current_kernel()
    arch = k.kernel.arch
    if not k.kernel.arch_specific:
        # LLVM cannot select setmaxnreg for a plain sm_90/sm_100: "LLVM ERROR:
        # Cannot select", which ends the process
        fail(f"setmaxnreg (regs={regs}) is an arch-specific instruction: it needs an 'a' or 'f' target such as "
             f"sm_90a, not {arch!r}", rule="arch")
    part = k.part_of_a_warpgroup()
    if part is not None:
        warps, lanes, threads = part
        # PTX: "the same setmaxnreg instruction must be executed by all warps in a warpgroup", else undefined
        fail(f"setmaxnreg (regs={regs}) must be executed by all 4 warps of a warpgroup alike, but at most "
             f"{max(warps, 0)} warp(s) of {lanes} lane(s) run this code (a block of {threads} threads): give regs= "
             "to a lang.WarpgroupRole, outside narrower branches, in a block of whole warpgroups", rule="setmaxnreg")
    _check_held_count(k, regs, increase, warpgroups)
    nvvm.SetMaxRegisterOp(regs, nvvm.SetMaxRegisterAction.increase if increase else nvvm.SetMaxRegisterAction.decrease)
    calls = k.scratch.get(("setmaxnreg",))
    if calls is None:
        calls = k.scratch[("setmaxnreg",)] = []
        k.at_exit.append(lambda: _check_register_budgets(k, calls))
    calls.append((regs, increase, user_site()))


def _check_held_count(k, regs, increase, warpgroups):
    """PTX: .inc raises a warp's count from the one it holds, .dec lowers it; the other way is undefined (a
    256-thread CTA starts at 256, so an .inc to 232 there was). What each warpgroup holds is followed in build
    order: the launch budget, then its last role's regs=. After a role of a run-time warpgroup it is unknown."""
    held = k.scratch.setdefault(("setmaxnreg-held",), {})
    if warpgroups is None or held.get("unknown"):
        held["unknown"] = True
        return
    threads = k.threads
    for g in warpgroups:
        now, since = held.get(g, (register_budget(threads), None))
        if regs == now or (regs > now) == increase:
            continue
        if since is None:
            holds = (f"the {now} registers its threads hold at launch (the SM's {SM_REGISTERS} over the "
                     f"{threads}-thread CTA, in whole warpgroups and 8s)")
        else:
            holds = f"the {now} registers warpgroup {g} holds since the setmaxnreg at {since}"
        if increase:
            why = (f"below {holds}: PTX leaves an .inc below a warp's count undefined; use regs={now} or more, or "
                   "leave regs= out (the warps already hold more)")
        else:
            why = (f"above {holds}: it would release registers the warps do not hold, undefined in PTX"
                   + (" and refused by ptxas (C7406)" if since is None else "")
                   + f"; use regs={now} or less" + (", or fewer threads" if since is None else ""))
        fail(f"setmaxnreg.{'inc' if increase else 'dec'} to {regs} registers (regs={regs}) for warpgroup {g} is "
             f"{why}", rule="setmaxnreg")
    site = user_site()
    for g in warpgroups:
        held[g] = (regs, site)


def _check_register_budgets(k, calls):
    """At the kernel's end, ptxas's rule for setmaxnreg.dec (C7406, with no line of the user's): a dec may go
    down from at most the largest count any inc of the kernel raises to, or without an inc from the launch
    budget (register_budget), wherever the inc is; so it is checked once every one is built."""
    threads = k.threads
    budget = register_budget(threads)
    incs = [regs for regs, increase, _ in calls if increase]
    top = max(incs) if incs else budget
    for regs, increase, where in calls:
        if increase or regs <= top:
            continue
        if incs:
            why = (f"above {top}, the most any setmaxnreg.inc of this kernel raises a warp to: with an inc in the "
                   f"kernel, ptxas takes that as the most a warp can hold (not the launch budget, {budget} for "
                   f"its {threads}-thread CTA) and refuses a larger dec (C7406); lower regs= to {top} or less, or "
                   "raise an inc")
        else:
            why = (f"above the {budget} registers a thread of this kernel starts with (the SM's {SM_REGISTERS} over "
                   f"its {threads}-thread CTA, in whole warpgroups and 8s), so it would release registers the warp "
                   f"does not hold: ptxas refuses it (C7406); use regs={budget} or less, or fewer threads")
        raise KernelBuildError(f"setmaxnreg.dec to {regs} registers (regs={regs}) is {why}", where=where,
                               rule="setmaxnreg")


def _role_index(what, v, unit, bound=False, runtime=True):
    """A role's warp or warpgroup `v` (`what` names it in the message): a Python int within the block (`bound`:
    a range's end, up to their count), or with `runtime` a run-time integer; else a KernelBuildError. A role
    out of the block never ran, a float one compared as a float, and a bool as 0 or 1."""
    from .dsl.numeric import known_int
    k = dsl.current_kernel()
    threads = k.threads
    count = -(-threads // unit)
    name = "warp" if unit == 32 else "warpgroup"
    value = v
    if isinstance(v, dsl.Integer) and not isinstance(v, dsl.Boolean) and runtime:
        value = known_int(v)
        if value is None:
            return
    if not isinstance(value, int) or isinstance(value, bool):
        fail(f"{what} {v!r}: a {name} index, a Python int" + (" or a run-time integer value" if runtime else ""),
             rule="role")
    if not bound <= value < count + bound:
        fail(f"{what} {v!r}: the block's {threads} threads are {count} {name}(s), "
             + (f"so a range ends at 1-{count}" if bound else f"{'0-' + str(count - 1) if count > 1 else '0'}")
             + ": a role past them would never run", rule="role")


@contextlib.contextmanager
def WarpRole(warp_id, regs=None, increase=False):  # noqa: N802 (TIRx's class name)
    """Code for warp `warp_id` alone (a Python int within the block, or a
    run-time integer). (`regs=` is refused: setmaxnreg must be executed by a
    whole warpgroup; give it to a WarpgroupRole.)"""
    _role_index("WarpRole", warp_id, 32)
    first = warp_id if isinstance(warp_id, int) and not isinstance(warp_id, bool) else None
    with _loc(), dsl.if_(dsl.warp_idx() == warp_id, scope="warp"), narrowed(1, None, first):
        _setmaxnreg(regs, increase)
        yield


@contextlib.contextmanager
def WarpgroupRole(wg, regs=None, increase=False):  # noqa: N802
    """Code for warpgroup `wg` (4 consecutive warps; a Python int within
    the block, or a run-time integer) or a range (lo, hi) of Python ints, lo
    < hi; with `regs`, its warps first setmaxnreg their register count to it
    (.dec, or .inc with increase=True): docs/dsl.md says what is refused."""
    if isinstance(wg, tuple):
        if len(wg) != 2:
            fail(f"WarpgroupRole {wg!r}: a warpgroup, or a range (lo, hi) of two", rule="role")
        if all(isinstance(b, int) and not isinstance(b, bool) for b in wg) and wg[0] >= wg[1]:
            fail(f"WarpgroupRole {wg!r}: an empty range (lo < hi), a role that would never run", rule="role")
        _role_index("WarpgroupRole range start", wg[0], 128, runtime=False)
        _role_index("WarpgroupRole range end", wg[1], 128, bound=True, runtime=False)
    else:
        _role_index("WarpgroupRole", wg, 128)
    with _loc():
        g = dsl.warpgroup_idx()
        if isinstance(wg, tuple):
            cond, n, first = (g >= wg[0]) & (g < wg[1]), 4 * (wg[1] - wg[0]), wg[0]
        else:
            cond, n, first = g == wg, 4, wg
    static = isinstance(first, int) and not isinstance(first, bool)
    warpgroups = range(first, first + n // 4) if static else None
    first = 4 * first if static else None
    with _loc(), dsl.if_(cond), narrowed(n, None, first):
        _setmaxnreg(regs, increase, warpgroups)
        yield


def elect_sync(membermask=None):
    """dsl.elect_sync: one lane of the warp, or of `membermask`'s lanes."""
    return dsl.elect_sync(membermask)


def _loc():
    from .dsl.errors import user_location
    return user_location()


# --------------------------------------------------------------------------- schedulers

class Tile:
    """One scheduled tile: coordinates and the CTA's iteration number."""

    def __init__(self, i, **coords):
        self.i = i
        self.__dict__.update(coords)

    def __iter__(self):  # `for i, t in sched` (the first DSL's PersistentTileScheduler)
        return iter((self.i, self.linear))


def _ceil_div(a, b):
    return (a + b - 1) // b


def _i32(v):
    return v.to(dsl.Int32) if isinstance(v, dsl.Index) else v


def _tile_count(v, what):
    """A scheduler's count: a non-negative Python int or an integer run-time
    value (None or a float was a TypeError deep in the tile arithmetic)."""
    if isinstance(v, dsl.Numeric) and not v.is_float:
        return v
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        fail(f"{what}={v!r}: a non-negative int or an integer run-time value", rule="scheduler")
    return v


class _Persistent:
    """Tiles linear, linear + step, ... of `total` for this CTA (or cluster)."""

    def __init__(self, total, start, step):
        self.total = total
        # 32-bit: grid coordinates fit, and a 64-bit division by the run-time step is a call in
        # the SASS, which makes ptxas serialize every wgmma of the kernel
        self.start = _i32(start)
        self.step = _i32(step)

    @property
    def count(self):
        """How many tiles this CTA gets: ceil((total - start) / step), 0 past the end."""
        total = self.total if isinstance(self.total, dsl.Val) else dsl.Int32(self.total)
        rem = dsl.select(self.start < total, total - self.start, 0)
        return _ceil_div(rem, self.step)

    def _tiles(self, decode):
        for i in dsl.range(self.count):
            t = dsl.Int32(i) if not isinstance(i, dsl.Int32) else i
            lin = self.start + t * self.step
            yield decode(t, lin)


class PersistentTileScheduler(_Persistent):
    """Tiles blockIdx.x, +gridDim.x, ... of `num_tiles` (a Python int or a
    run-time value): ``for tile in sched`` gives tile.i (this CTA's
    iteration) and tile.linear; ``for i, t in sched`` unpacks them. With
    `cluster_size` n (1-D clusters of n CTAs along x), tiles go to clusters:
    cluster blockIdx.x / n takes tiles of it, + gridDim.x / n, ..., the
    same ones in each of its CTAs (which split each tile's work between them)."""

    def __init__(self, num_tiles, cluster_size=1):
        if not isinstance(cluster_size, int) or isinstance(cluster_size, bool) or not 1 <= cluster_size <= 16:
            fail(f"cluster_size={cluster_size!r}: an int in [1, 16]", rule="scheduler")
        num_tiles = _tile_count(num_tiles, "num_tiles")
        cl = dsl.current_kernel().kernel._dims[1] or (1, 1, 1)
        if cluster_size > 1 and (cl[0] % cluster_size or cl[1] * cl[2] != 1):
            # groups of cluster_size CTAs along x take the same tiles: a group across two clusters (2 in
            # clusters of 3) or past the grid's end (no clusters) took tiles no cluster could share
            fail(f"cluster_size={cluster_size}: CTAs blockIdx.x // {cluster_size} take the same tiles, but the "
                 f"kernel's clusters are {list(cl)} CTAs: cluster=({cluster_size},) (or a multiple of it along x)",
                 rule="scheduler")
        with _loc():
            if cluster_size == 1:
                super().__init__(num_tiles, dsl.block_idx(), dsl.grid_dim())
            else:
                super().__init__(num_tiles, dsl.block_idx() // cluster_size, dsl.grid_dim() // cluster_size)
        self.num_tiles, self.cluster_size = num_tiles, cluster_size

    def __iter__(self):
        return self._tiles(lambda i, lin: Tile(i, linear=lin))


class ClusterPersistentScheduler2D(_Persistent):
    """TIRx's persistent 2-D scheduler: clusters walk the (m, n) tiles in
    group-major order (`l2_group_size` rows of M tiles per group, so the
    tiles in flight share operands in L2), optionally serpentine (N reversed
    on odd groups). Each cluster owns cluster_m x cluster_n tiles; a CTA's
    tile adds its cluster coordinate. Counts may be run-time values.
    ``for tile in sched``: tile.m_idx, tile.n_idx, tile.i."""

    def __init__(self, num_m_tiles, num_n_tiles, num_clusters=None, l2_group_size=8, cluster_m=1, cluster_n=1,
                 serpentine=False, prefix=None):
        num_m_tiles, num_n_tiles = _tile_count(num_m_tiles, "num_m_tiles"), _tile_count(num_n_tiles, "num_n_tiles")
        for name, v in (("cluster_m", cluster_m), ("cluster_n", cluster_n), ("l2_group_size", l2_group_size)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                fail(f"{name}={v!r}: a positive int", rule="scheduler")
        with _loc():
            self.cm, self.cn = cluster_m, cluster_n
            self.mc = _ceil_div(num_m_tiles, cluster_m)
            self.nc = _ceil_div(num_n_tiles, cluster_n)
            self.num_m, self.num_n = num_m_tiles, num_n_tiles
            self.group = l2_group_size
            self.serpentine = serpentine
            csize = cluster_m * cluster_n
            cl = dsl.current_kernel().kernel._dims[1] or (1, 1, 1)
            if csize > 1 and cl[0] * cl[1] * cl[2] != csize:
                # a cluster's tiles are its CTAs': blockIdx.x // csize with 2-D clusters counted every tile
                # twice, and 4-CTA clusters of (4, 1, 1) with cluster_m = cluster_n = 2 missed half of them
                fail(f"cluster_m x cluster_n = {cluster_m} x {cluster_n} tiles a cluster, but the kernel's clusters "
                     f"are {list(cl)} CTAs", rule="scheduler")
            # the cluster's place in the (up to 3-D) grid of clusters, and the CTA's in its cluster; with one
            # tile a cluster each CTA is its own (the CTAs of a clustered kernel's cluster took the same tiles)
            idx, cl = (dsl.cluster_idx, cl) if csize > 1 else (dsl.block_idx, (1, 1, 1))
            ncx, ncy, ncz = (dsl.grid_dim(d) // c if c > 1 else dsl.grid_dim(d) for d, c in zip("xyz", cl))
            start = idx("x") + ncx * (idx("y") + ncy * idx("z"))
            step = num_clusters if num_clusters is not None else ncx * ncy * ncz
            self.rank = dsl.cluster_ctarank() if csize > 1 else None
            super().__init__(self.mc * self.nc, start, step)

    def decode(self, lin):
        """(m, n) cluster-tile coordinates of linear cluster tile `lin`."""
        per_group = self.group * self.nc
        g = lin // per_group
        first_m = g * self.group
        rows = dsl.min(self.mc - first_m, self.group)
        r = lin % per_group
        m = first_m + r % rows
        n = r // rows
        if self.serpentine:
            n = dsl.select(g % 2 == 1, self.nc - 1 - n, n)
        return m, n

    def __iter__(self):
        def tile(i, lin):
            m, n = self.decode(lin)
            if self.cm * self.cn > 1:  # the CTA's tile of its cluster's cluster_m x cluster_n, by its rank
                m = m * self.cm + self.rank % self.cm
                n = n * self.cn + self.rank // self.cm
            return Tile(i, m_idx=m, n_idx=n, linear=lin, valid=(m < self.num_m) & (n < self.num_n))
        return self._tiles(tile)


class GroupMajor3D(_Persistent):
    """(m, n, k) tiles, M in groups of `group_rows` (with a tail group), N
    within a group, K outermost — for split-K work over a grid: ``for tile
    in sched``: tile.m_idx, tile.n_idx, tile.k_idx."""

    def __init__(self, m_tiles, n_tiles, k_tiles, group_rows, step=None, prefix=None):
        m_tiles, n_tiles, k_tiles = (_tile_count(v, n) for v, n in ((m_tiles, "m_tiles"), (n_tiles, "n_tiles"),
                                                                     (k_tiles, "k_tiles")))
        if not isinstance(group_rows, dsl.Numeric) and (not isinstance(group_rows, int) or isinstance(group_rows, bool)
                                                        or group_rows < 1):
            fail(f"group_rows={group_rows!r}: a positive int or a run-time value", rule="scheduler")
        with _loc():
            self.m, self.n, self.k = m_tiles, n_tiles, k_tiles
            self.group = group_rows
            super().__init__(m_tiles * n_tiles * k_tiles, dsl.block_idx(), step or dsl.grid_dim())

    def __iter__(self):
        def tile(i, lin):
            mn = self.m * self.n
            k = lin // mn
            r = lin % mn
            per_group = self.group * self.n
            g = r // per_group
            first = g * self.group
            rows = dsl.min(self.m - first, self.group)
            rr = r % per_group
            return Tile(i, m_idx=first + rr % rows, n_idx=rr // rows, k_idx=k, linear=lin)
        return self._tiles(tile)


class FlashAttentionLinearScheduler(_Persistent):
    """Persistent linear walk over (batch, head, m_block) tasks."""

    def __init__(self, num_batches, num_heads, num_m_blocks, num_ctas=None, prefix=None):
        num_batches, num_heads, num_m_blocks = (_tile_count(v, n) for v, n in (
            (num_batches, "num_batches"), (num_heads, "num_heads"), (num_m_blocks, "num_m_blocks")))
        with _loc():
            self.h, self.mb = num_heads, num_m_blocks
            super().__init__(num_batches * num_heads * num_m_blocks, dsl.block_idx(), num_ctas or dsl.grid_dim())

    def __iter__(self):
        def tile(i, lin):
            return Tile(i, b_idx=lin // (self.h * self.mb), h_idx=(lin // self.mb) % self.h, m_idx=lin % self.mb,
                        linear=lin)
        return self._tiles(tile)


def SmemDescriptor(*args, **kwargs):  # noqa: N802 (TIRx's name; lives with wgmma)
    from .wgmma import SmemDescriptor as _S
    return _S(*args, **kwargs)
