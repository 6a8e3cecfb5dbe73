"""Kernel-authoring helpers in the spirit of TVM TIRx's CUDA language:
shared-memory pools, mbarriers, pipelines, warp roles, a persistent tile
scheduler. Use them inside an ``@nvtma.dsl.kernel`` function."""

from __future__ import annotations

import contextlib

from . import dsl
from ._lazy import lazy

ir = lazy("nvtma.ir")
arith, memref, nvgpu, nvvm = (lazy(f"nvtma.dialects.{d}") for d in ("arith", "memref", "nvgpu", "nvvm"))

__all__ = ["SMEMPool", "MBarrier", "TMABar", "PipelineState", "Pipeline", "WarpRole", "WarpgroupRole",
           "elect_sync", "PersistentTileScheduler"]

_SWIZZLE_ALIGN = {"none": 128, "swizzle_32b": 256, "swizzle_64b": 512, "swizzle_128b": 1024}


class SMEMPool:
    """Bump allocator over the kernel's shared memory. Allocations of
    swizzled TMA tiles are aligned to the swizzle's repeat (1024 bytes for
    128B swizzles) so the TMA's address-based swizzle lines up."""

    def __init__(self):
        self.k = dsl.current_kernel()

    def alloc(self, shape, dtype, *, swizzle="none", align=None):
        from .kernels import ELEM_BYTES
        align = align or _SWIZZLE_ALIGN.get(swizzle, 128)
        k = self.k
        off = (k.smem_bytes + align - 1) // align * align
        nbytes = ELEM_BYTES[dtype]
        for d in shape:
            nbytes *= d
        k.smem_bytes = off + nbytes
        t = ir.MemRefType.get(list(shape), ir.Type.parse(dtype),
                              memory_space=ir.Attribute.parse("#gpu.address_space<workgroup>"))
        view = memref.ViewOp(t, k.smem_arg, arith.ConstantOp(ir.IndexType.get(), off).result, [])
        return dsl.TensorValue(view.result)

    def stage(self, buf, s, dtype=None):
        """Slice `s` (runtime index) of a [stages, ...] buffer."""
        shape = buf.shape
        inner = list(shape[1:])
        strides, acc = [], 1
        for d in reversed(inner):
            strides.insert(0, acc)
            acc *= d
        layout = ir.Attribute.parse("strided<[" + ", ".join(map(str, strides)) + "], offset: ?>")
        t = ir.MemRefType.get(inner, ir.MemRefType(buf.type).element_type, layout=layout,
                              memory_space=ir.Attribute.parse("#gpu.address_space<workgroup>"))
        dyn = ir.ShapedType.get_dynamic_stride_or_offset()
        sub = memref.SubViewOp(t, buf.value, [dsl._v(s)], [], [], [dyn] + [0] * len(inner),
                               [1] + inner, [1] * len(shape))
        return dsl.TensorValue(sub.result)


class MBarrier:
    """`depth` mbarriers (an upstream !nvgpu.mbarrier.group), initialized by
    thread 0 with `count` arrivals each."""

    def __init__(self, depth=1, count=1):
        self.depth = depth
        t = ir.Type.parse("!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, "
                          f"num_barriers = {depth}>")
        self.group = nvgpu.MBarrierCreateOp(t).result
        with dsl.if_(dsl.thread_idx() == 0):
            for s in range(depth):
                nvgpu.MBarrierInitOp(self.group, dsl._v(count), dsl._v(s))
            nvvm.FenceMbarrierInitOp()

    def arrive(self, stage):
        nvgpu.MBarrierArriveOp(self.group, dsl._v(stage), results=[ir.Type.parse("!nvgpu.mbarrier.token")])

    def wait(self, stage, phase):
        """Spin until phase `phase` (0/1, or a Bool) of barrier `stage` completes."""
        if isinstance(phase, int):
            phase = dsl.Bool(arith.ConstantOp(ir.IntegerType.get_signless(1), phase).result)
        nvgpu.MBarrierTryWaitParityOp(self.group, dsl._v(phase), dsl._v(10_000_000), dsl._v(stage))

    def at(self, stage):
        """(group, index): what cpasync.copy's tma_bar_ptr takes."""
        return (self, stage)


class TMABar(MBarrier):
    """An mbarrier a TMA completes: arm it with the bytes it will receive."""

    def arrive_expect_tx(self, stage, nbytes):
        with dsl.if_(dsl.elect_sync()):
            nvgpu.MBarrierArriveExpectTxOp(self.group, dsl._v(nbytes), dsl._v(stage))


class PipelineState:
    """Stage and phase of iteration `i` of a `depth`-stage ring."""

    def __init__(self, depth, i):
        self.depth = depth
        self.i = i
        self.stage = i % depth
        r = (i // depth) % 2
        self.phase = r != 0 if isinstance(r, dsl.Val) else bool(r)


class Pipeline:
    """A full/empty mbarrier pair per stage: producers wait `empty`, arm
    `full` with the bytes they load; consumers wait `full`, arrive `empty`."""

    def __init__(self, stages, *, consumers=1):
        self.stages = stages
        self.full = TMABar(stages, 1)
        self.empty = MBarrier(stages, consumers)

    def producer_acquire(self, st: PipelineState):
        # The first pass over the ring finds every slot free.
        with dsl.if_(st.i >= self.stages):
            self.empty.wait(st.stage, ~st.phase if isinstance(st.phase, dsl.Bool) else int(not st.phase))

    def producer_commit(self, st: PipelineState, nbytes):
        self.full.arrive_expect_tx(st.stage, nbytes)

    def consumer_wait(self, st: PipelineState):
        self.full.wait(st.stage, st.phase)

    def consumer_release(self, st: PipelineState):
        with dsl.if_(dsl.elect_sync()):
            self.empty.arrive(st.stage)


@contextlib.contextmanager
def WarpRole(warp_id, regs=None, increase=False):  # noqa: N802 (mirrors TIRx's class name)
    """Code for one warp; optionally `setmaxnreg` its register budget."""
    with dsl.if_(dsl.warp_idx() == warp_id):
        if regs is not None:
            nvvm.SetMaxRegisterOp(regs, nvvm.SetMaxRegisterAction.increase if increase
                                  else nvvm.SetMaxRegisterAction.decrease)
        yield


@contextlib.contextmanager
def WarpgroupRole(wg, regs=None, increase=False):  # noqa: N802
    """Code for warpgroup `wg` (4 consecutive warps) or a range (lo, hi)."""
    g = dsl.thread_idx() // 128
    cond = (g >= wg[0]) & (g < wg[1]) if isinstance(wg, tuple) else g == wg
    with dsl.if_(cond):
        if regs is not None:
            nvvm.SetMaxRegisterOp(regs, nvvm.SetMaxRegisterAction.increase if increase
                                  else nvvm.SetMaxRegisterAction.decrease)
        yield


def elect_sync():
    return dsl.elect_sync()


class PersistentTileScheduler:
    """Tiles blockIdx.x, +gridDim.x, ... of `num_tiles`: ``for i, t in
    sched`` gives the CTA's iteration count i and tile index t."""

    def __init__(self, num_tiles):
        self.num_tiles = num_tiles
        self.bid = dsl.block_idx()
        self.grid = dsl.grid_dim()
        # ceil((num_tiles - bid) / grid)
        self.count = (dsl.const(num_tiles) - self.bid + self.grid - 1) // self.grid

    def __iter__(self):
        for i in dsl.range(self.count):
            yield i, self.bid + i * self.grid
