"""Thread, block, warp and cluster indices (Int32, like CuTe DSL's)."""

from __future__ import annotations

from .._lazy import lazy
from .errors import fail, show, user_op
from .numeric import Boolean, Int32, Numeric, Uint32, as_value, known_int

ir = lazy("nvtma.ir")
nvvm = lazy("nvtma.dialects.nvvm")
gpu = lazy("nvtma.dialects.gpu")
llvm = lazy("nvtma.dialects.llvm")
_d = lazy("nvtma.dialects.nvtma")

__all__ = ["thread_idx", "block_idx", "block_dim", "grid_dim", "cluster_ctaid", "cluster_ctarank",
           "cluster_dim", "cluster_size", "cluster_idx", "warp_idx", "lane_idx", "warpgroup_idx", "thread_rank",
           "smid", "barrier", "cta_sync", "cluster_arrive", "cluster_wait", "cluster_sync", "elect_sync",
           "elect_active", "max_grid"]

_AXES = ("x", "y", "z")


def _sreg(prefix, d):
    if d not in _AXES:
        fail(f"dimension {d!r}: 'x', 'y' or 'z'", rule="dim")
    op = getattr(nvvm, f"{prefix}{d.upper()}Op")
    return Int32(op(ir.IntegerType.get_signless(32)).result)


def _tagged(v, tag):
    v.tag = tag
    return v


def _read_here(reg):
    """A special register (a dialect SpecialRegister) read where it is called (nvtma.read_special_register):
    LLVM moves neither the read nor what is computed from it out of the loop it sits in."""
    return Int32(_d.ReadSpecialRegisterOp(reg).result)


@user_op
def thread_idx(d="x", *, hoist=True):
    """%tid.d. With hoist=False it is read where it is called, and LLVM keeps
    what is computed from it there too: an epilogue's per-register addresses
    (a base plus a constant each) are then formed at their use, not hoisted
    out of the persistent loop into registers held (and spilled) across it."""
    if hoist:
        v = _sreg("ThreadId", d)
    else:
        if d not in _AXES:
            fail(f"dimension {d!r}: 'x', 'y' or 'z'", rule="dim")
        r = _d.SpecialRegister
        v = _read_here({"x": r.TID_X, "y": r.TID_Y, "z": r.TID_Z}[d])
    return _tagged(v, "thread" if d == "x" else None)


@user_op
def block_idx(d="x"):
    return _tagged(_sreg("BlockId", d), "uniform")


@user_op
def max_grid(ctas):
    """Declares that the kernel is right only for grids of at most `ctas` CTAs
    in all (a Python int >= 1): for a work split whose arithmetic holds only
    that far, such as shares computed in 32 bits. The kernel record's
    launch.max_grid; the launch refuses a larger grid (LaunchError, rule
    launch-config) instead of running a mis-split one. Called again, the
    least limit holds."""
    from .kernel import current_kernel
    if isinstance(ctas, bool) or not isinstance(ctas, int) or not 1 <= ctas < 1 << 63:
        fail(f"max_grid({ctas!r}): a Python int of at least 1 CTA, known when the kernel is built",
             rule="launch-config")
    k = current_kernel()
    k.max_grid = ctas if k.max_grid is None else min(k.max_grid, ctas)


@user_op
def block_dim(d="x"):
    return _tagged(_sreg("BlockDim", d), "uniform")


@user_op
def grid_dim(d="x"):
    return _tagged(_sreg("GridDim", d), "uniform")


@user_op
def cluster_ctaid(d="x"):
    """This CTA's coordinate in its cluster along d (%cluster_ctaid.d)."""
    return _tagged(_sreg("BlockInClusterId", d), "uniform")


@user_op
def cluster_dim(d="x"):
    """CTAs per cluster along d (%cluster_nctaid.d)."""
    return _tagged(_sreg("ClusterDimBlocks", d), "uniform")


@user_op
def cluster_idx(d="x"):
    """The cluster's coordinate in the grid (%clusterid.d)."""
    return _tagged(_sreg("ClusterId", d), "uniform")


@user_op
def cluster_ctarank():
    """This CTA's linear rank in its cluster (%cluster_ctarank), what
    multicast masks and mapa take."""
    return _tagged(Int32(nvvm.ClusterId(ir.IntegerType.get_signless(32)).result), "uniform")


@user_op
def cluster_size():
    """CTAs in the cluster (%cluster_nctarank)."""
    return _tagged(Int32(nvvm.ClusterDim(ir.IntegerType.get_signless(32)).result), "uniform")


@user_op
def thread_rank():
    """The thread's linear index in its block."""
    return thread_idx("x") + block_dim("x") * (thread_idx("y") + block_dim("y") * thread_idx("z"))


def _linear_tid():
    """%tid.x, or the thread's rank where the block has y or z dims: from %tid.x alone, block=(32, 4) had
    four warps 0 (warp 0's role ran four times, warp 1's never)."""
    from .kernel import current_kernel
    b = current_kernel().block
    x = Int32(thread_idx().value)
    if b[1] * b[2] == 1:
        return x
    return x + b[0] * (Int32(thread_idx("y").value) + b[1] * Int32(thread_idx("z").value))  # the block is known


@user_op
def warp_idx():
    """The thread's warp: its rank in the block // 32."""
    return _tagged(_linear_tid() // 32, "warp")


@user_op
def lane_idx(*, hoist=True):
    """%laneid; hoist=False as for thread_idx."""
    if hoist:
        v = Int32(nvvm.LaneIdOp(ir.IntegerType.get_signless(32)).result)
    else:
        v = _read_here(_d.SpecialRegister.LANEID)
    return _tagged(v, "lane")


@user_op
def warpgroup_idx():
    """The thread's warpgroup (4 warps): its rank in the block // 128."""
    return _tagged(_linear_tid() // 128, "warpgroup")


@user_op
def smid():
    return Int32(nvvm.SmIdOp(ir.IntegerType.get_signless(32)).result)


@user_op
def barrier():
    """bar.sync 0: every thread of the CTA (CUDA's __syncthreads)."""
    gpu.BarrierOp()


cta_sync = barrier


@user_op
def cluster_arrive(relaxed=False):
    (nvvm.ClusterArriveRelaxedOp if relaxed else nvvm.ClusterArriveOp)(aligned=True)


@user_op
def cluster_wait():
    nvvm.ClusterWaitOp(aligned=True)


@user_op
def cluster_sync():
    """barrier.cluster.arrive + wait: every thread of every CTA of the cluster."""
    cluster_arrive()
    cluster_wait()


@user_op
def elect_active():
    """True in one lane of those that run this call, elected at this call (nvtma.elect_active): in a branch
    that splits a warp, one lane of each part that runs it. Two such calls ending both arms of a branch stay
    two elections, where elect_sync over an activemask, alike in both arms, could be merged past the
    branch's end into one election of the reconverged warp."""
    return _tagged(Boolean(_d.ElectActiveOp().result), ("one", "lane"))


@user_op
def elect_sync(membermask=None):
    """True in one lane of the calling warp: elect.sync over all 32 lanes (where at most part of a warp runs,
    a one-lane branch, it would wait for the others forever), or over the lanes of `membermask` (a Uint32
    each of whose lanes runs this call). ``dsl.elect_sync(cuda.activemask())`` is elect_active(): one lane
    of those that run together, in a branch that splits the warp too."""
    from .kernel import current_kernel
    if getattr(membermask, "tag", None) == "activemask":
        return elect_active()
    i1 = ir.IntegerType.get_signless(1)
    k = current_kernel()
    if membermask is not None:
        if isinstance(membermask, bool) or not isinstance(membermask, (int, Numeric)) or \
                isinstance(membermask, Numeric) and (membermask.is_float or membermask.width != 32):
            fail(f"elect_sync membermask {show(membermask)}: a 32-bit lane mask (a Uint32 or Int32, or a "
                 "Python int)", rule="warp-collective")
        known = membermask if isinstance(membermask, int) else known_int(membermask)
        if known is not None:
            known &= 0xFFFFFFFF
            lanes = k.active(k.block)[1]
            if not known:  # (no lane to elect: undefined)
                fail(f"elect_sync membermask {show(membermask)}: no lane; 1..0xFFFFFFFF", rule="warp-collective")
            if isinstance(membermask, int) and membermask >= 1 << 32:
                fail(f"elect_sync membermask {show(membermask)}: 1..0xFFFFFFFF", rule="warp-collective")
            if bin(known).count("1") > lanes:  # (the lanes past those that run would be waited for forever)
                fail(f"elect_sync membermask {show(membermask)} names {bin(known).count('1')} lanes where at most "
                     f"{lanes} of the warp run", rule="warp-collective")
        return _tagged(Boolean(nvvm.ElectSyncOp(i1, membermask=as_value(membermask, Uint32)).result),
                       ("one", "lane"))
    if k.active(k.block)[1] < 32:
        fail(f"elect_sync where at most {k.active(k.block)[1]} lane(s) of the warp run: it takes all 32",
             rule="warp-collective")
    return _tagged(Boolean(nvvm.ElectSyncOp(i1).result), ("one", "lane"))
