"""Warp, CTA and memory helpers with TVM TIRx's ``Tx.cuda`` names.

    from nvtma import cuda, dsl
    s = cuda.warp_sum(x)                       # shfl.sync.bfly tree, every lane gets the sum
    m = cuda.cta_max(x)                        # across the CTA (shared scratch + barrier)
    old = cuda.atomic_add(y, (i,), v)          # atom.global.add (f32, ints, packed f16x2/bf16x2)
    cuda.fence_proxy_async()                   # generic-proxy writes visible to TMA
    cuda.printf("row %d: %f\\n", r, v)

Every helper builds upstream ``nvvm``/``llvm``/``gpu`` ops, or the nvtma
dialect's where NVVM has no op (vector and packed f16x2 atomics,
elect_active); the docstrings name the PTX each becomes.
"""

from __future__ import annotations

from . import dsl
from ._lazy import lazy
from .dsl import types
from .dsl.errors import fail, show, user_op
from .dsl.numeric import Boolean, Float16, Float32, Int32, Int64, Numeric, Uint32, Uint64, Val, as_value

ir = lazy("nvtma.ir")
arith = lazy("nvtma.dialects.arith")
gpu = lazy("nvtma.dialects.gpu")
llvm = lazy("nvtma.dialects.llvm")
nvvm = lazy("nvtma.dialects.nvvm")
scf = lazy("nvtma.dialects.scf")
vector = lazy("nvtma.dialects.vector")
_d = lazy("nvtma.dialects.nvtma")

FULL_MASK = 0xFFFFFFFF

__all__ = ["FULL_MASK", "any_sync", "all_sync", "ballot_sync", "elect_sync", "elect_active", "warp_sync",
           "warpgroup_sync", "cta_sync", "cluster_sync", "syncthreads_and", "syncthreads_or", "thread_rank",
           "activemask", "barrier_sync", "barrier_arrive", "shfl_sync", "shfl_up_sync", "shfl_down_sync",
           "shfl_xor_sync",
           "warp_reduce", "warp_sum", "warp_max", "warp_min", "cta_reduce", "cta_sum", "cta_max", "cta_min",
           "reduce_add_sync_u32", "reduce_min_sync_u32", "atomic_add", "red_add", "atomic_min", "atomic_max",
           "atomic_cas", "atomic_exch", "thread_fence", "fence_proxy_async", "printf", "trap_when_assert_failed",
           "clock64", "globaltimer", "nano_sleep", "ffs_u32", "ldmatrix", "stmatrix", "half2float", "bfloat162float",
           "float22half2", "float22bfloat162_rn", "bfloat1622float2", "fp8x4_e4m3_from_float4", "uint_as_float",
           "float_as_uint", "make_float2", "fmul2_rn", "fadd2_rn", "hmin2", "hmax2", "fdividef", "ldg",
           "mbarrier_wait", "cvta_generic_to_shared", "griddepcontrol_wait", "griddepcontrol_launch_dependents"]

_i32 = lambda: ir.IntegerType.get_signless(32)  # noqa: E731


def _mask(mask, what=None):
    """The member mask; with `what` (a .sync collective), checked: a full mask where at most part of a warp
    runs the code (a one-lane branch) never completes, and a constant 0 leaves the caller out (both undefined
    in PTX, a hang in practice)."""
    if what is not None:
        if isinstance(mask, int) and not isinstance(mask, bool) and mask % (1 << 32) == 0:
            fail(f"{what} with member mask 0: the calling lanes must be in it", rule="warp-collective")
        if isinstance(mask, int) and mask % (1 << 32) == FULL_MASK:
            _whole_warp(what)
    return as_value(mask if not isinstance(mask, int) else (mask - (1 << 32) if mask >= 1 << 31 else mask), Int32)


def _whole_warp(what):
    """`what` waits for all 32 lanes: refused where at most part of a warp runs (a lane's or a thread's branch,
    a block whose last warp is partial)."""
    k = dsl.current_kernel()
    lanes = k.active(k.block)[1]
    threads = k.threads
    if lanes < 32 or k.may_run_partial(32):  # (the partial warp only where it may run)
        fail(f"{what} waits for all 32 lanes of the warp, but at most {lanes} lane(s) run this code"
             + (f" (a block of {threads} threads has a partial warp)" if threads % 32 else "")
             + ": call it where whole warps run, or pass the mask of the lanes that do", rule="warp-collective")


# --------------------------------------------------------------------------- participation

@user_op
def any_sync(pred, mask=FULL_MASK):
    """True in every lane if `pred` holds in any lane of `mask` (vote.sync.any)."""
    return Boolean(nvvm.VoteSyncOp(ir.IntegerType.get_signless(1), _mask(mask, "any_sync"), as_value(pred, Boolean),
                                   nvvm.VoteSyncKind.any).result)


@user_op
def all_sync(pred, mask=FULL_MASK):
    """vote.sync.all."""
    return Boolean(nvvm.VoteSyncOp(ir.IntegerType.get_signless(1), _mask(mask, "all_sync"), as_value(pred, Boolean),
                                   nvvm.VoteSyncKind.all).result)


@user_op
def ballot_sync(pred, mask=FULL_MASK):
    """The lanes of `mask` where `pred` holds, as bits (vote.sync.ballot.b32)."""
    return Uint32(nvvm.VoteSyncOp(_i32(), _mask(mask, "ballot_sync"), as_value(pred, Boolean),
                                  nvvm.VoteSyncKind.ballot).result)


def elect_sync(membermask=None):
    """True in one lane of the calling warp (elect.sync): over all 32 lanes, or over the lanes of `membermask`
    (dsl.elect_sync's; activemask() given as it is elects as elect_active())."""
    return dsl.elect_sync(membermask)


@user_op
def elect_active():
    """True in one lane of those that run this call (dsl.elect_active: in a branch that splits the warp, one
    lane of each part)."""
    return dsl.elect_active()


@user_op
def activemask():
    """The lanes executing this instruction (activemask.b32). Given as it is to elect_sync, it elects as
    elect_active()."""
    v = Uint32(_d.ActivemaskOp().result)
    v.tag = "activemask"  # (what elect_sync reads; a value computed from it is a new one, without it)
    return v


__activemask = activemask


@user_op
def warp_sync(mask=FULL_MASK):
    """bar.warp.sync."""
    nvvm.SyncWarpOp(_mask(mask, "warp_sync"))


def _check_named_barrier(what, barrier_id, num_threads):
    """Build-time ids and thread counts of a named barrier, as PTX's bar
    takes them (ptxas refuses the rest after the whole build: 'requires a
    non-zero thread count argument')."""
    if isinstance(barrier_id, bool) or isinstance(barrier_id, float) or (
            isinstance(barrier_id, int) and not 0 <= barrier_id < 16):
        fail(f"{what} barrier id {barrier_id!r}: 0-15 (a CTA has 16 named barriers)", rule="barrier")
    if isinstance(num_threads, bool) or isinstance(num_threads, float) or (
            isinstance(num_threads, int) and (num_threads < 32 or num_threads % 32 or num_threads > 1024)):
        fail(f"{what} thread count {num_threads!r}: a multiple of 32 (whole warps) in [32, 1024]", rule="barrier")
    if isinstance(num_threads, int):
        from .dsl.kernel import current_kernel
        b = current_kernel().block
        if num_threads > b[0] * b[1] * b[2]:  # never met: a hang
            fail(f"{what} waits for {num_threads} threads, but the block has {b[0] * b[1] * b[2]}", rule="barrier")


@user_op
def barrier_sync(barrier_id, num_threads=None):
    """Named barrier: bar.sync id, num_threads (a multiple of 32; every thread if None)."""
    _check_named_barrier("barrier_sync", barrier_id, num_threads)
    # nvtma.barrier_sync, not nvvm.barrier: its custom syntax reads the trailing loc(...) that the DSL prints as
    # a reduction attribute
    _d.BarrierSyncOp(as_value(barrier_id, Int32),
                     count=as_value(num_threads, Int32) if num_threads is not None else None)


@user_op
def barrier_arrive(barrier_id, num_threads):
    """Named barrier arrive without waiting (bar.arrive id, num_threads)."""
    if num_threads is None:
        fail("barrier_arrive needs the barrier's thread count (bar.arrive has no all-threads form)", rule="barrier")
    _check_named_barrier("barrier_arrive", barrier_id, num_threads)
    nvvm.BarrierArriveOp(as_value(num_threads, Int32), barrierId=as_value(barrier_id, Int32))


@user_op
def warpgroup_sync(barrier_id=None):
    """The 128 threads of the calling warpgroup meet at named barrier
    1 + warpgroup index (0 is the CTA barrier), or `barrier_id`."""
    k = dsl.current_kernel()
    b = k.block
    if k.may_run_partial(128):
        # the last, partial warpgroup would wait for 128 threads forever (where it may run this code)
        fail(f"warpgroup_sync in a block of {b[0] * b[1] * b[2]} threads: whole warpgroups (a multiple of 128)",
             rule="barrier")
    bid = barrier_id if barrier_id is not None else dsl.warpgroup_idx() + 1
    barrier_sync(bid, 128)


def cta_sync():
    """bar.sync 0 (__syncthreads)."""
    dsl.barrier()


def cluster_sync():
    """barrier.cluster.arrive.aligned + wait."""
    dsl.cluster_sync()


def _whole_block(what):
    """`what` waits for every thread of the CTA: refused where at most some warps or lanes run."""
    k = dsl.current_kernel()
    warps, lanes = k.active(k.block)
    threads = k.threads
    if lanes < min(threads, 32) or warps < (threads + 31) // 32:
        fail(f"{what} waits for all {threads} threads of the CTA, but at most {warps} warp(s) of {lanes} lane(s) "
             "run this code: call it where every thread runs", rule="barrier")


def _bar_red(pred, op, what):
    _whole_block(what)
    r = nvvm.BarrierOp(ir.IntegerType.get_signless(32), reductionOp=op,
                       reductionPredicate=as_value(pred, Int32) if not isinstance(pred, Boolean)
                       else as_value(pred.to(Int32))).result
    return Int32(r) != 0  # (a Python != of the MLIR value was True: the reduction was lost)


@user_op
def syncthreads_and(pred):
    """__syncthreads_and: true if `pred` holds in every thread (bar.red.and.pred)."""
    return _bar_red(pred, nvvm.BarrierReduction.AND, "syncthreads_and")


@user_op
def syncthreads_or(pred):
    return _bar_red(pred, nvvm.BarrierReduction.OR, "syncthreads_or")


def thread_rank():
    return dsl.thread_rank()


# --------------------------------------------------------------------------- shuffles

def _shfl(val, arg, kind, mask, width):
    """shfl.sync of a 32-bit value; wider and narrower types are moved as 32-bit words."""
    from .dsl.vector import Vector
    if isinstance(val, Vector):
        bits = len(val) * val.dtype.width
        if bits not in (32, 64):
            fail(f"shuffle of a {bits}-bit vector: 32 or 64 bits", rule="shuffle")
        w = _shfl(val.bitcast(Int32 if bits == 32 else Int64), arg, kind, mask, width)
        return Vector(_bitcast_vec(w.value, val.value.type), val.dtype)
    if not isinstance(val, Numeric):
        val = Float32(val) if isinstance(val, float) else Int32(val)
    cls = type(val)
    if cls is dsl.Index:  # index has no bit pattern of its own to move: as the Int64 it lowers to
        return _shfl(val.to(Int64), arg, kind, mask, width).to(dsl.Index)
    if cls.width == 64:
        lo = _shfl(val.bitcast(Uint64).to(Uint32), arg, kind, mask, width)
        hi = _shfl((val.bitcast(Uint64) >> 32).to(Uint32), arg, kind, mask, width)
        return ((hi.to(Uint64) << 32) | lo.to(Uint64)).bitcast(cls)
    if cls.width < 32:
        if cls.is_float:
            w = val.bitcast(dsl.dtype(f"ui{cls.width}")).to(Uint32)
            return _shfl(w, arg, kind, mask, width).to(dsl.dtype(f"ui{cls.width}")).bitcast(cls)
        return _shfl(val.to(Int32), arg, kind, mask, width).to(cls)
    if not isinstance(width, int) or isinstance(width, bool) or width & (width - 1) or not 1 <= width <= 32:
        fail(f"shuffle width {width!r}: a power of two up to 32 (the lanes of each segment)", rule="shuffle")
    # mask_and_clamp: c = ((32 - width) << 8) | clamp (31 for idx/bfly/down, 0 for up)
    seg = (32 - width) << 8
    clamp = seg | (0 if kind == "up" else 31)
    r = nvvm.ShflOp(cls.mlir_type(), _mask(mask, "shfl_sync"), val.value, as_value(arg, Int32), as_value(clamp, Int32),
                    getattr(nvvm.ShflKind, kind)).result
    return cls(r)


def _bitcast_vec(v, t):
    """A scalar's bits as vector type `t`."""
    b = vector.BroadcastOp(ir.VectorType.get([1], v.type), v).result
    return vector.BitCastOp(t, b).result


@user_op
def shfl_sync(val, src_lane, mask=FULL_MASK, width=32):
    """Lane `src_lane`'s `val` (shfl.sync.idx)."""
    return _shfl(val, src_lane, "idx", mask, width)


@user_op
def shfl_up_sync(val, delta, mask=FULL_MASK, width=32):
    return _shfl(val, delta, "up", mask, width)


@user_op
def shfl_down_sync(val, delta, mask=FULL_MASK, width=32):
    return _shfl(val, delta, "down", mask, width)


@user_op
def shfl_xor_sync(val, lane_mask, mask=FULL_MASK, width=32):
    """Lane (lane ^ lane_mask)'s `val` (shfl.sync.bfly)."""
    return _shfl(val, lane_mask, "bfly", mask, width)


__shfl_sync, __shfl_up_sync, __shfl_down_sync, __shfl_xor_sync = (shfl_sync, shfl_up_sync, shfl_down_sync,
                                                                    shfl_xor_sync)


# --------------------------------------------------------------------------- reductions

_REDUCTIONS = ("sum", "add", "max", "min", "and", "or", "xor")


def _reduction(op):
    """A reduction's `op`: one of the names, or a function of two values (a type, Float32, was called as
    Float32(a, b), and a one-argument function with two: bare TypeErrors from inside the helper)."""
    if isinstance(op, str) and op in _REDUCTIONS:
        return op
    if isinstance(op, type) or not callable(op):
        what = f"{op.__name__} (a type)" if isinstance(op, type) else show(op)
        fail(f"reduction {what}: 'sum', 'max', 'min', 'and', 'or', 'xor' or a function of two values",
             rule="reduce")
    import inspect
    try:
        inspect.signature(op).bind(None, None)
    except TypeError:
        fail(f"reduction {show(op)}: a function of two values (the partials it combines)", rule="reduce")
    except ValueError:  # (no signature to read: a builtin)
        pass
    return op


def _combine(a, b, op):
    if op == "sum" or op == "add":
        return a + b
    if op == "max":
        return dsl.max(a, b)
    if op == "min":
        return dsl.min(a, b)
    if op == "and":
        return a & b
    if op == "or":
        return a | b
    if op == "xor":
        return a ^ b
    if callable(op):
        with dsl.errors.user_code():
            return op(a, b)
    fail(f"reduction {op!r}: 'sum', 'max', 'min', 'and', 'or', 'xor' or a function", rule="reduce")


@user_op
def warp_reduce(val, op="sum", width=32, mask=FULL_MASK):
    """`op` over the `width` lanes of each group (butterfly shuffles: every lane gets the result)."""
    if not isinstance(width, int) or isinstance(width, bool) or width & (width - 1) or not 1 <= width <= 32:
        fail(f"warp_reduce width {width!r}: a power of two up to 32", rule="reduce")
    _reduction(op)
    if isinstance(mask, int) and mask % (1 << 32) == FULL_MASK:
        _whole_warp("warp_reduce")
    off = width // 2
    while off >= 1:
        val = _combine(val, shfl_xor_sync(val, off, mask, 32), op)
        off //= 2
    return val


def warp_sum(val, width=32):
    return warp_reduce(val, "sum", width)


def warp_max(val, width=32):
    return warp_reduce(val, "max", width)


def warp_min(val, width=32):
    return warp_reduce(val, "min", width)


@user_op
def cta_reduce(val, op="sum"):
    """`op` over every thread of the CTA; every thread gets the result. Each
    warp reduces with shuffles, warp 0 reduces the warps' partials from
    shared memory (a 32-slot scratch buffer per value type)."""
    _reduction(op)
    k = dsl.current_kernel()
    threads = k.threads
    warps = (threads + 31) // 32
    cls = type(val) if isinstance(val, Numeric) else Float32
    val = cls(val) if not isinstance(val, Numeric) else val
    if cls is Boolean:
        # its partials would go through an i1 shared buffer, which LLVM's
        # memref lowering cannot store (it asserts and aborts the process)
        fail("cta_reduce of a Boolean: reduce x.to(dsl.Int32) (sum counts, 'and'/'or' combine) and compare",
             rule="reduce")
    _whole_block("cta_reduce")
    _whole_warp("cta_reduce")
    key = ("cta_reduce", cls.__name__)
    if key not in k.scratch:
        from .lang import SMEMPool
        k.scratch[key] = SMEMPool().alloc((33,), cls)
    buf = k.scratch[key]
    w = warp_reduce(val, op)
    if warps == 1:
        return w
    lane = dsl.lane_idx()
    wid = dsl.warp_idx()
    dsl.barrier()  # the scratch may still be read by an earlier reduction
    with dsl.if_(lane == 0):
        buf[wid] = w
    dsl.barrier()
    if not isinstance(op, str):
        # a function has no identity to pad the lanes past the last warp with (repeating a partial counted
        # it 29 times in a sum): every thread combines the partials in order
        r = buf[0]
        for i in range(1, warps):
            r = _combine(r, buf[i], op)
        dsl.barrier()  # the next reduction's writes wait for these reads
        return r
    with dsl.if_(wid == 0):
        part = buf[dsl.min(lane, warps - 1)]
        # lanes past the last warp repeat a real partial: harmless for max/min,
        # so sum/and/or/xor mask them with the identity instead
        if op in ("sum", "add", "or", "xor"):
            part = dsl.select(lane < warps, part, cls(0) if not cls.is_float else cls(0.0))
        elif op == "and":
            part = dsl.select(lane < warps, part, cls(-1))
        r = warp_reduce(part, op)
        with dsl.if_(lane == 0):
            buf[32] = r
    dsl.barrier()
    return buf[32]


def cta_sum(val):
    return cta_reduce(val, "sum")


def cta_max(val):
    return cta_reduce(val, "max")


def cta_min(val):
    return cta_reduce(val, "min")


def _u32_operand(val, what):
    """A 32-bit integer operand of redux.sync (a float was converted, a 64-bit value truncated, silently)."""
    cls = type(val) if isinstance(val, dsl.Numeric) else None
    if (cls is not None and (cls.is_float or cls.width > 32)) or isinstance(val, float) or (
            cls is None and not isinstance(val, int)):  # (a Vector reached redux.sync's verifier)
        fail(f"{what} of {show(val)}: a 32-bit integer (convert it first)", rule="type")
    return as_value(val, Int32)


@user_op
def reduce_add_sync_u32(val, mask=FULL_MASK):
    """redux.sync.add.u32 across the warp."""
    return Uint32(nvvm.ReduxOp(_i32(), _u32_operand(val, "reduce_add_sync_u32"), nvvm.ReduxKind.ADD,
                               _mask(mask, "reduce_add_sync_u32")).result)


@user_op
def reduce_min_sync_u32(val, mask=FULL_MASK):
    return Uint32(nvvm.ReduxOp(_i32(), _u32_operand(val, "reduce_min_sync_u32"), nvvm.ReduxKind.UMIN,
                               _mask(mask, "reduce_min_sync_u32")).result)


# --------------------------------------------------------------------------- atomics

_SCOPES = {"gpu": "device", "device": "device", "cta": "block", "block": "block", "cluster": "cluster",
           "sys": None, "system": None}


def _scope(scope, what, rule):
    """A scope's name, checked (a list was a TypeError from the table's lookup)."""
    if not isinstance(scope, str) or scope not in _SCOPES:
        fail(f"{what} scope {show(scope)}: 'cta', 'cluster', 'gpu' or 'sys'", rule=rule)
    return scope


def _ptr(target, idx):
    """An LLVM pointer to target[idx] (a TensorValue) or target itself (a pointer Val)."""
    if isinstance(target, dsl.TensorValue):
        from .cpasync import address_of
        if idx is None:
            fail("an atomic on a tensor needs the element's indices", rule="atomic")
        return address_of(target, list(idx) if isinstance(idx, (tuple, list)) else [idx]).value, target.dtype
    if idx is not None:
        # the pointer is the element's address: an index here was dropped (atomic_add(address_of(o, [0]), 5, v)
        # added into o[0])
        fail(f"an atomic through a pointer with index {show(idx)}: the pointer is the element's address; pass "
             "None (or no index) and give the indices to cpasync.address_of(tensor, idx)", rule="atomic")
    p = as_value(target)
    if not isinstance(p.type, llvm.PointerType):
        # an i32 as the address: a verifier error for atom, and for red_add's
        # vector forms (then inline PTX) no error at all (ptxas took the integer as an address)
        fail(f"an atomic's target is a tensor (with indices) or a pointer (cpasync.address_of), got a {p.type} value",
             rule="atomic")
    return p, getattr(target, "elem", None)  # address_of's tensor's element type (an int add into f32 bits)


def _same_element(target, val, what):
    """A vector added into a tensor has the tensor's element type (an f16x2
    add into an f32 tensor reinterpreted its bits)."""
    elem = target.dtype if isinstance(target, dsl.TensorValue) else getattr(target, "elem", None)
    if elem is not None and val.dtype is not elem:
        fail(f"{what} of {val!r} into {elem.__name__} memory: the lanes must be {elem.__name__} (convert with "
             ".to(...))", rule="atomic")


def _static_alignment(target, idx, nbytes, what):
    """Python-int indices off the `nbytes` a vector atomic's address needs compiled, and faulted the context
    at run time (misaligned address)."""
    if isinstance(target, dsl.TensorValue):
        target._constant_alignment(target._indices(tuple(idx) if isinstance(idx, (tuple, list)) else idx),
                                   nbytes, what)
    else:  # a pointer from address_of: the byte offset its Python-int indices fix
        from .cpasync import _check_address_alignment
        _check_address_alignment(what, target, nbytes)


def _atomic(kind, target, idx, val, scope):
    from .dsl.vector import Vector
    _scope(scope, "atomic", "atomic")
    ptr, elem = _ptr(target, idx)
    if isinstance(val, Vector):
        _same_element(target, val, f"atomic {kind}")
        _static_alignment(target, idx, 4, f"a packed atomic {kind}")
        return _packed_atomic(kind, ptr, val, scope)
    cls = elem or (type(val) if isinstance(val, Numeric) else Float32 if isinstance(val, float) else Int32)
    _no_index(cls, kind)
    v = as_value(val, cls)
    if cls.is_float:
        if cls not in (Float32, dsl.Float64, Float16, dsl.BFloat16):
            fail(f"atomic {kind} on {cls.__name__}", rule="atomic")
        op = {"add": "fadd", "max": "fmax", "min": "fmin", "exch": "xchg"}.get(kind)
    else:
        op = {"add": "add", "exch": "xchg", "and": "_and", "or": "_or", "xor": "_xor",
              "max": "max" if cls.signed else "umax", "min": "min" if cls.signed else "umin"}.get(kind)
    if op is None:
        fail(f"atomic {kind} on {cls.__name__}", rule="atomic")
    if _SCOPES[scope] is None:
        # LLVM's NVPTX backend emits a system-scope atomicrmw as PTX's default, .gpu scope: not atomic with
        # the host's or a peer GPU's accesses
        fail(f"atomic {kind} with scope={scope!r}: scalar atomics here are GPU scope at most (LLVM drops "
             "the system scope); use scope='gpu', or packed (vector) atomics, which keep .sys", rule="atomic")
    kw = {"syncscope": _SCOPES[scope]}
    r = llvm.AtomicRMWOp(getattr(llvm.AtomicBinOp, op), ptr, v, llvm.AtomicOrdering.monotonic, **kw).result
    return cls(r)


def _no_index(cls, kind):
    """MLIR's index has no memory width an atomic could name: llvm.atomicrmw
    on it hit an assertion in LLVM's type checks (the process aborted). A
    Boolean (i1) has none either (the verifier refused it with the whole
    kernel's IR)."""
    if cls is dsl.Index:
        fail(f"atomic {kind} on Index: declare the tensor (or convert the value) as Int64, index's width on NVPTX",
             rule="atomic")
    if cls is Boolean:
        fail(f"atomic {kind} on Boolean (i1): atomics take 8-64-bit integers or floats; keep flags in a Uint8 or "
             "Int32 tensor", rule="atomic")


def _packed_atomic(kind, ptr, val, scope, *, result=True):
    """Add of 2 x f16/bf16 as one access: atom.add.noftz.{f16x2,bf16x2}, or red without a result."""
    from .dsl.vector import Vector
    if kind != "add" or len(val) != 2 or val.dtype not in (Float16, dsl.BFloat16):
        fail(f"packed atomic {kind} on {val!r}: add of 2 x f16 or 2 x bf16", rule="atomic")
    if _addrspace(ptr) not in (0, 1, 3):  # (a shared::cluster one reached the op's verifier)
        fail(f"packed atomic {kind} of {val!r} through a pointer of address space {_addrspace(ptr)}: a generic, "
             "global or shared address (shared::cluster addresses are not taken here)", rule="atomic")
    old = _vector_add(ptr, val, scope, result=result)
    return Vector(old, val.dtype) if result else None


def _vector_add(ptr, val, scope, *, result):
    """nvtma.vector_atomic_add of `val` at `ptr`: the kernel records check the address's alignment (the
    value's size) at launch."""
    sc = {"device": _d.AtomicScope.GPU, "block": _d.AtomicScope.CTA, "cluster": _d.AtomicScope.CLUSTER,
          None: _d.AtomicScope.SYS}[_SCOPES[scope]]
    return _d.vector_atomic_add(val.value.type if result else None, ptr, val.value, scope=sc)


@user_op
def red_add(target, idx=None, val=None, *, scope="gpu"):
    """target[idx] += val with no result (PTX red: the thread does not wait
    for it). A scalar, or a vector of 2 or 4 f32 (red.global.add.v2/v4.f32,
    16-byte aligned for v4) or of 2 f16/bf16."""
    from .dsl.vector import Vector
    if val is None:
        idx, val = None, idx
    if not isinstance(val, Vector):
        _atomic("add", target, idx, val, scope)
        return
    _scope(scope, "atomic", "atomic")  # (before the packed form looks it up)
    ptr, _ = _ptr(target, idx)
    _same_element(target, val, "red_add")
    n, cls = len(val), val.dtype
    _static_alignment(target, idx, 4 if n == 2 and cls in (Float16, dsl.BFloat16) else 4 * n, f"red_add of {val!r}")
    if cls in (Float16, dsl.BFloat16) and n == 2:
        _packed_atomic("add", ptr, val, scope, result=False)
        return
    if cls is not Float32 or n not in (2, 4):
        fail(f"red_add of {val!r}: f32 x2/x4 or f16/bf16 x2", rule="atomic")
    dsl.current_kernel().kernel.require_ptx(81, f"red_add of f32 x{n} (red.global.add.v{n}.f32)")
    if _addrspace(ptr) == 3:  # ptxas: "State space incorrect for feature 'red instruction with vector types'"
        fail(f"red_add of f32 x{n} on shared memory: the vector red forms are .global only; add lane by lane",
             rule="atomic")
    if _addrspace(ptr) not in (0, 1):  # (a shared::cluster one was cast to global: a garbage address)
        fail(f"red_add of f32 x{n} through a pointer of address space {_addrspace(ptr)}: the vector red forms "
             "take a global address (a tensor, or address_of one)", rule="atomic")
    if _addrspace(ptr) == 0:  # a generic address: the global one it is (cvta.to.global)
        ptr = llvm.AddrSpaceCastOp(llvm.PointerType.get(1), ptr).result
    _vector_add(ptr, val, scope, result=False)


def _addrspace(ptr):
    return types.address_space(ptr.type) or 0


def _atomic_op(kind, doc):
    @user_op
    def op(target, idx=None, val=None, *, scope="gpu"):
        if val is None:  # op(pointer, val)
            idx, val = None, idx
        return _atomic(kind, target, idx, val, scope)
    op.__name__ = op.__qualname__ = f"atomic_{kind}"
    op.__doc__ = doc
    return op


atomic_add = _atomic_op("add", """target[idx] += val atomically; returns the old value. `target` a tensor
    (global or shared) or a pointer; f32/f64/f16/bf16/ints, or a 2-lane
    f16/bf16 Vector (atom.add.noftz.f16x2). `scope`: cta, cluster, gpu, sys.""")
atomic_max = _atomic_op("max", "target[idx] = max(target[idx], val) atomically; returns the old value.")
atomic_min = _atomic_op("min", "target[idx] = min(target[idx], val) atomically; returns the old value.")
atomic_exch = _atomic_op("exch", "target[idx] = val atomically; returns the old value.")


@user_op
def atomic_cas(target, idx, compare, val=None, *, scope="gpu"):
    """Compare-and-swap (atom.cas); returns the old value."""
    if val is None:
        idx, compare, val = None, idx, compare
    _scope(scope, "atomic", "atomic")
    ptr, elem = _ptr(target, idx)
    cls = elem or (type(val) if isinstance(val, Numeric) else Int32)
    _no_index(cls, "cas")
    if cls.is_float:
        fail("atomic_cas on floats: bitcast to Uint32", rule="atomic")
    kw = {"syncscope": _SCOPES[scope]} if _SCOPES.get(scope) else {}
    op = llvm.AtomicCmpXchgOp(ptr, as_value(compare, cls), as_value(val, cls), llvm.AtomicOrdering.acq_rel,
                              llvm.AtomicOrdering.monotonic, **kw)
    return cls(llvm.ExtractValueOp(cls.mlir_type(), op.result, [0]).result)


# --------------------------------------------------------------------------- fences and ordering

@user_op
def thread_fence(scope="gpu", sem="acq_rel"):
    """fence.<sem>.<scope>: acquire-release by default; CUDA's __threadfence (membar.gl) is sem="sc" at "gpu",
    sequentially consistent, which store-buffering patterns (each thread stores, then loads the other's
    flag) need."""
    _scope(scope, "fence", "fence")
    if sem not in ("acq_rel", "sc"):
        fail(f"fence sem={sem!r}: 'acq_rel' or 'sc'", rule="fence")
    kw = {"syncscope": _SCOPES[scope]} if _SCOPES[scope] else {}
    llvm.FenceOp(llvm.AtomicOrdering.acq_rel if sem == "acq_rel" else llvm.AtomicOrdering.seq_cst, **kw)


@user_op
def fence_proxy_async(space="shared::cta"):
    """fence.proxy.async.<space>: make this thread's generic-proxy writes
    (st.shared, st.global) visible to the async proxy (TMA, wgmma) — before a
    TMA store reads what threads wrote, or a TMA load overwrites what they read."""
    kinds = {"shared::cta": (nvvm.ProxyKind.async_shared, nvvm.SharedSpace.shared_cta),
             "shared::cluster": (nvvm.ProxyKind.async_shared, nvvm.SharedSpace.shared_cluster),
             "global": (nvvm.ProxyKind.async_global, None), "all": (nvvm.ProxyKind.async_, None)}
    if not isinstance(space, str) or space not in kinds:
        fail(f"fence_proxy_async space {show(space)}: one of {', '.join(kinds)}", rule="fence")
    kind, sp = kinds[space]
    nvvm.FenceProxyOp(kind, **({"space": sp} if sp is not None else {}))


def _griddepcontrol(kind, what):
    k = dsl.current_kernel().kernel
    if k.sm < 90:
        fail(f"{what} is griddepcontrol (programmatic dependent launch): sm_90 and later, not {k.arch}", rule="arch")
    nvvm.griddepcontrol(getattr(nvvm.GridDepActionKind, kind))


@user_op
def griddepcontrol_wait():
    """griddepcontrol.wait: wait until the grids this one depends on (the
    stream's earlier kernels, when this one was launched with programmatic
    dependent launch: ``@dsl.kernel(pdl=True)``) have completed and their
    writes are visible. Before it, read nothing they write."""
    _griddepcontrol("wait", "griddepcontrol_wait")
    dsl.current_kernel().scratch[("griddepcontrol", "wait")] = True


@user_op
def griddepcontrol_launch_dependents():
    """griddepcontrol.launch_dependents: this CTA no longer holds back the
    launch of the stream's next kernel (a programmatic dependent launch), so
    its CTAs may start as this grid's leave the SMs."""
    _griddepcontrol("launch_dependents", "griddepcontrol_launch_dependents")


@user_op
def mbarrier_wait(barrier, stage, phase):
    """Wait for phase parity `phase` of `barrier[stage]` (lang.MBarrier.wait)."""
    from .lang import MBarrier, _RemoteMBarrier
    if not isinstance(barrier, (MBarrier, _RemoteMBarrier)):
        fail(f"mbarrier_wait of {show(barrier)}: a lang.MBarrier (or TMABar, TCGen05Bar, a Pipeline's full/empty)",
             rule="mbarrier")
    barrier.wait(stage, phase)


# --------------------------------------------------------------------------- diagnostics and time

@user_op
def printf(fmt, *args):
    """Device printf (vprintf). Floats print with %f (promoted to f64 like C)."""
    if not isinstance(fmt, str):
        fail(f"printf format {fmt!r}: a Python str", rule="printf")
    vals = []
    for i, a in enumerate(args):
        if isinstance(a, (int, float, bool)):
            a = Float32(a) if isinstance(a, float) else Int32(a)
        if not isinstance(a, Numeric):  # (a Vector or a pointer reached gpu.printf's verifier)
            fail(f"printf argument {i} is {show(a)}: a scalar (a Python or DSL number); print a Vector lane by "
                 "lane", rule="printf")
        if isinstance(a, Numeric) and a.is_float and a.width < 64:
            a = a.to(dsl.Float64)
        elif isinstance(a, Numeric) and a.width < 32:  # C's promotion: %d reads a 4-byte slot
            a = a.to(Int32 if a.signed and type(a) is not Boolean else Uint32)
        vals.append(as_value(a))
    gpu.PrintfOp(fmt, vals)


@user_op
def trap_when_assert_failed(cond):
    """Abort the kernel (trap) where `cond` does not hold."""
    with dsl.if_(~as_boolean(cond)):
        llvm.Trap()


def as_boolean(c):
    return c if isinstance(c, Boolean) else Boolean(as_value(c, Boolean)) if isinstance(c, Val) else Boolean(c)


@user_op
def clock64():
    """The SM's cycle counter (%clock64): fine deltas within one SM."""
    return Int64(nvvm.Clock64Op(ir.IntegerType.get_signless(64)).result)


@user_op
def globaltimer():
    """%globaltimer in ns, comparable across SMs (updates every ~µs)."""
    return Int64(nvvm.GlobalTimerOp(ir.IntegerType.get_signless(64)).result)


@user_op
def nano_sleep(ns):
    """nanosleep.u32 (a hint: the warp sleeps up to about `ns` ns)."""
    nvvm.NanosleepOp(as_value(ns, Int32))


@user_op
def ffs_u32(x):
    """1 + index of the lowest set bit, 0 for 0 (CUDA's __ffs)."""
    x = x if isinstance(x, Numeric) else Uint32(x)
    x = x.bitcast(Uint32) if x.width == 32 else x.to(Uint32)
    tz = Int32(llvm.CountTrailingZerosOp(x.value, False).result)
    return dsl.select(x == 0, Int32(0), tz + 1)


# --------------------------------------------------------------------------- memory

@user_op
def ldg(tensor, idx):
    """tensor[idx] through the read-only path (an ordinary load: LLVM picks
    ld.global.nc where it can prove the data read-only)."""
    if not isinstance(tensor, dsl.TensorValue):
        fail(f"ldg of {show(tensor)}: a tensor (a kernel argument or a shared buffer) and its indices",
             rule="index")
    return tensor[idx]


@user_op
def cvta_generic_to_shared(ptr):
    """The 32-bit shared-window address of a shared pointer."""
    p = as_value(ptr)
    if types.address_space(p.type) not in (0, 3):
        fail(f"cvta_generic_to_shared of a {p.type} pointer: a shared (or generic) one", rule="pointer")
    return Uint32(llvm.PtrToIntOp(_i32(), p).result)


@user_op
def ldmatrix(smem, row, col, num=4, trans=False):
    """ldmatrix.sync.aligned.m8n8.x{num}.b16: thread t gives the address of
    row t % 8 of matrix t // 8 (here: smem[row, col]); returns `num` 32-bit
    registers (a Vector of Uint32), each holding two b16 of one 8x8 matrix."""
    from .dsl.vector import Vector
    if num not in (1, 2, 4):
        fail(f"ldmatrix num={num}: 1, 2 or 4", rule="ldmatrix")
    _whole_warp("ldmatrix")
    ptr = _row_address(smem, row, col)
    if num == 1:
        res_t = _i32()
    else:
        res_t = llvm.StructType.get_literal([_i32()] * num)
    layout = nvvm.MMALayout.col if trans else nvvm.MMALayout.row
    r = nvvm.LdMatrixOp(res_t, ptr, num, layout, types.ld_st_matrix_shape(8, 8),
                        nvvm.LdStMatrixEltType.B16).result
    if num == 1:
        return Vector.from_elements([Uint32(r)], Uint32)
    return Vector.from_elements([Uint32(llvm.ExtractValueOp(_i32(), r, [i]).result) for i in range(num)], Uint32)


@user_op
def stmatrix(smem, row, col, regs, trans=False):
    """stmatrix.sync.aligned.m8n8.x{len(regs)}.b16, the inverse of ldmatrix."""
    from .dsl.vector import Vector
    if not isinstance(regs, (Vector, list, tuple)) and not hasattr(regs, "lanes"):
        fail(f"stmatrix registers {show(regs)}: a Vector, or a list of 1, 2 or 4 32-bit values", rule="stmatrix")
    _whole_warp("stmatrix")
    ptr = _row_address(smem, row, col)
    if isinstance(regs, Vector) and regs.dtype.width != 32:  # packed b16 lanes: 32-bit registers of them
        if len(regs) * regs.dtype.width % 32:
            fail(f"stmatrix of {len(regs)} x {regs.dtype.__name__}: whole 32-bit registers", rule="stmatrix")
        regs = regs.bitcast(Uint32)
        regs = [regs] if isinstance(regs, Numeric) else regs
    vals = [bits32(r, "stmatrix") for r in (regs.lanes() if hasattr(regs, "lanes") else regs)]
    if len(vals) not in (1, 2, 4):
        fail(f"stmatrix of {len(vals)} registers: 1, 2 or 4", rule="stmatrix")
    layout = nvvm.MMALayout.col if trans else nvvm.MMALayout.row
    nvvm.StMatrixOp(ptr, vals, layout, types.ld_st_matrix_shape(8, 8),
                    nvvm.LdStMatrixEltType.B16)


def bits32(r, rule):
    """One 32-bit register's bits (a Float32, packed 16/8-bit lanes, an integer), not its value converted:
    as_value(Float32, Int32) truncated 1.5 to 1 (stmatrix's and wgmma's register operands)."""
    from .dsl.vector import Vector
    if isinstance(r, Vector):
        if len(r) * r.dtype.width != 32:
            fail(f"a register of {len(r)} x {r.dtype.__name__}: 32 bits a register", rule=rule)
        return as_value(r.bitcast(Int32))
    if isinstance(r, Numeric):
        if r.width != 32:
            fail(f"a register of {type(r).__name__}: 32-bit values (packed lanes, Float32 or 32-bit integers)",
                 rule=rule)
        return as_value(r.bitcast(Int32))
    return as_value(r, Int32)


def _row_address(smem, row, col):
    """The address of the 16-byte row smem[row, col:col+8], through the TMA
    swizzle (and box-major layout) of the data the buffer holds: a swizzle
    permutes whole 16-byte chunks, so the row stays contiguous."""
    from .cpasync import address_of
    if not isinstance(smem, dsl.TensorValue) or smem.space != "shared" or smem.rank != 2:
        fail("ldmatrix/stmatrix take a 2-D shared-memory tile", rule="ldmatrix")
    idx = smem._indices((row, col))
    smem._constant_alignment(idx, 16, "an ldmatrix/stmatrix row")  # 8 x 16-bit: 16 bytes
    return address_of(smem, list(idx)).value


# --------------------------------------------------------------------------- conversions and packed math

def _vec(values, cls):
    from .dsl.vector import Vector
    return Vector.from_elements(values, cls)


def _scalar(h, cls, what):
    """A scalar argument of a conversion helper: a run-time value, or a
    Python number taken as a `cls` constant (not an AttributeError on .to)."""
    if isinstance(h, cls):
        return h
    if isinstance(h, (int, float)) and not isinstance(h, bool):
        return cls(h)
    fail(f"{what} takes a {cls.__name__} value, got {show(h)}", rule="type")


def _lanes(v, n, types, what):
    """The vector operand of a helper named for its lanes and type (float22half2: 2 x f32): `n` lanes of one of
    `types` (float22half2 of 3 lanes or of f16 lanes was taken and converted all the same)."""
    from .dsl.vector import Vector
    if not isinstance(v, Vector) or len(v) != n or v.dtype not in types:
        fail(f"{what} of {show(v)}: a {n}-lane {' or '.join(t.__name__ for t in types)} vector "
             "(dsl.vector_of, a load_vec)", rule="type")
    return v


def half2float(h):
    return _scalar(h, Float16, "half2float").to(Float32)


def bfloat162float(h):
    return _scalar(h, dsl.BFloat16, "bfloat162float").to(Float32)


def float22half2(a, b=None):
    """(a, b) f32 -> 2 x f16 (cvt.rn.f16x2.f32)."""
    v = _lanes(a, 2, (Float32,), "float22half2") if b is None else _vec([a, b], Float32)
    return v.to(Float16)


def float22bfloat162_rn(a, b=None):
    v = _lanes(a, 2, (Float32,), "float22bfloat162_rn") if b is None else _vec([a, b], Float32)
    return v.to(dsl.BFloat16)


def bfloat1622float2(v):
    return _lanes(v, 2, (dsl.BFloat16,), "bfloat1622float2").to(Float32)


def fp8x4_e4m3_from_float4(v):
    """4 x f32 -> 4 x e4m3 (two cvt.rn.satfinite.e4m3x2.f32)."""
    return _lanes(v, 4, (Float32,), "fp8x4_e4m3_from_float4").to(dsl.Float8E4M3FN)


def uint_as_float(x):
    return (x if isinstance(x, Numeric) else Uint32(x)).bitcast(Float32)


def float_as_uint(x):
    return (x if isinstance(x, Numeric) else Float32(x)).bitcast(Uint32)


def make_float2(a, b):
    return _vec([a, b], Float32)


def fmul2_rn(a, b):
    """2 x f32 multiply (mul.rn.f32x2 on sm_100; two mul.rn.f32 on sm_90)."""
    return _lanes(a, 2, (Float32,), "fmul2_rn") * _lanes(b, 2, (Float32,), "fmul2_rn")


def fadd2_rn(a, b):
    return _lanes(a, 2, (Float32,), "fadd2_rn") + _lanes(b, 2, (Float32,), "fadd2_rn")


def hmin2(a, b):
    """min.f16x2 / min.bf16x2 on 2-lane vectors."""
    return dsl.min(*(_lanes(v, 2, (Float16, dsl.BFloat16), "hmin2") for v in (a, b)))


def hmax2(a, b):
    return dsl.max(*(_lanes(v, 2, (Float16, dsl.BFloat16), "hmax2") for v in (a, b)))


def fdividef(a, b):
    return dsl.fdividef(a, b)


__all__ += ["__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__activemask"]
