"""Kernels as Python functions.

    from nvtma import dsl, cpasync, lang

    @dsl.kernel(block=(128,))
    def copy(src: dsl.Tensor("f16", (4096, 4096)), dst: dsl.Tensor("f16", (4096, 4096))):
        ...

    spec = copy.build()             # nvtma IR (text) + launch info, no compile
    compiled = copy.compile()       # nvtma.CompiledModule

Calling the function builds IR: plain Python control flow (loops, ifs over
Python values) runs at build time and unrolls; ``dsl.range`` and ``dsl.if_``
emit ``scf.for`` / ``scf.if`` for run-time control flow. Values are small
wrappers with arithmetic operators over ``arith``; ``.value`` is the
underlying MLIR Value, so builder-style code through ``nvtma.ir`` and
``nvtma.dialects.*`` mixes freely.
"""

from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass

from ._lazy import lazy

ir = lazy("nvtma.ir")
arith, gpu, nvvm, scf = (lazy(f"nvtma.dialects.{d}") for d in ("arith", "gpu", "nvvm", "scf"))

__all__ = ["Tensor", "Int32", "Index", "kernel", "range", "if_", "const", "thread_idx", "block_idx", "block_dim",
           "grid_dim", "warp_idx", "lane_idx", "cluster_ctarank", "barrier", "cluster_sync", "elect_sync",
           "KernelBuildError"]

_range = range


class KernelBuildError(ValueError):
    """The kernel function could not be turned into IR."""


# --------------------------------------------------------------------------- types

@dataclass(frozen=True)
class Tensor:
    """A global tensor parameter: element type and shape (None = dynamic)."""
    dtype: str
    shape: tuple

    def mlir(self) -> str:
        dims = "x".join("?" if d is None else str(int(d)) for d in self.shape)
        return f"memref<{dims}x{self.dtype}>"


class Int32:
    """A 32-bit integer kernel parameter."""

    @staticmethod
    def mlir():
        return "i32"


# --------------------------------------------------------------------------- values

def _v(x):
    """The MLIR Value of x (an index constant for Python ints)."""
    if isinstance(x, Val):
        return x.value
    if isinstance(x, bool):
        return arith.ConstantOp(ir.IntegerType.get_signless(1), int(x)).result
    if isinstance(x, int):
        return arith.ConstantOp(ir.IndexType.get(), x).result
    return x


class Val:
    """A value in the kernel being built."""

    def __init__(self, value):
        self.value = value

    @property
    def type(self):
        return self.value.type

    def __repr__(self):
        return f"Val({self.value.type})"


def _isa(t, cls):
    """isinstance for MLIR types across binding versions."""
    check = getattr(cls, "isinstance", None)
    return check(t) if check is not None else isinstance(t, cls)


def _wrap(v):
    t = v.type
    if _isa(t, ir.IndexType):
        return Index(v)
    if _isa(t, ir.IntegerType) and ir.IntegerType(t).width == 1:
        return Bool(v)
    if _isa(t, ir.IntegerType):
        return Int(v)
    if _isa(t, ir.MemRefType):
        return TensorValue(v)
    return Val(v)


class _Arith(Val):
    def _bin(self, other, op, rev=False):
        a, b = _v(self), _coerce(other, self.type)
        if rev:
            a, b = b, a
        return _wrap(op(a, b).result)

    def __add__(self, o): return self._bin(o, arith.AddIOp)
    def __radd__(self, o): return self._bin(o, arith.AddIOp, True)
    def __sub__(self, o): return self._bin(o, arith.SubIOp)
    def __rsub__(self, o): return self._bin(o, arith.SubIOp, True)
    def __mul__(self, o): return self._bin(o, arith.MulIOp)
    def __rmul__(self, o): return self._bin(o, arith.MulIOp, True)
    def __floordiv__(self, o): return self._bin(o, arith.DivUIOp)
    def __mod__(self, o): return self._bin(o, arith.RemUIOp)
    def __lshift__(self, o): return self._bin(o, arith.ShLIOp)
    def __and__(self, o): return self._bin(o, arith.AndIOp)
    def __or__(self, o): return self._bin(o, arith.OrIOp)

    def _cmp(self, o, pred):
        return Bool(arith.CmpIOp(pred, _v(self), _coerce(o, self.type)).result)

    def __lt__(self, o): return self._cmp(o, arith.CmpIPredicate.ult)
    def __le__(self, o): return self._cmp(o, arith.CmpIPredicate.ule)
    def __gt__(self, o): return self._cmp(o, arith.CmpIPredicate.ugt)
    def __ge__(self, o): return self._cmp(o, arith.CmpIPredicate.uge)
    def __eq__(self, o): return self._cmp(o, arith.CmpIPredicate.eq)  # noqa: E721
    def __ne__(self, o): return self._cmp(o, arith.CmpIPredicate.ne)
    __hash__ = Val.__hash__


def _coerce(x, t):
    if isinstance(x, Val):
        return x.value
    if isinstance(x, int):
        return arith.ConstantOp(t, x).result
    return x


class Index(_Arith):
    """An `index` value."""

    def to_i32(self):
        return Int(arith.IndexCastOp(ir.IntegerType.get_signless(32), self.value).result)

    def to_i16(self):
        return Int(arith.IndexCastOp(ir.IntegerType.get_signless(16), self.value).result)


class Int(_Arith):
    """A signless integer value."""

    def to_index(self):
        return Index(arith.IndexCastOp(ir.IndexType.get(), self.value).result)


class Bool(Val):
    def __and__(self, o): return Bool(arith.AndIOp(self.value, _v(o)).result)
    def __or__(self, o): return Bool(arith.OrIOp(self.value, _v(o)).result)

    def __invert__(self):
        one = arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result
        return Bool(arith.XOrIOp(self.value, one).result)


class TensorValue(Val):
    """A memref: a global tensor parameter or a shared-memory buffer."""

    @property
    def shape(self):
        return tuple(ir.MemRefType(self.type).shape)

    @property
    def dtype(self):
        return str(ir.MemRefType(self.type).element_type)


def const(v: int, i32: bool = False):
    if i32:
        return Int(arith.ConstantOp(ir.IntegerType.get_signless(32), v).result)
    return Index(arith.ConstantOp(ir.IndexType.get(), v).result)


# --------------------------------------------------------------------------- control flow

def range(start, stop=None, step=1):  # noqa: A001
    """A run-time loop (scf.for): ``for i in dsl.range(n): ...``. The body
    is traced once; Python-level state does not carry across iterations."""
    if stop is None:
        start, stop = 0, start
    loop = scf.ForOp(_v(start), _v(stop), _v(step))
    with ir.InsertionPoint(loop.body):
        yield Index(loop.induction_variable)
        scf.YieldOp([])


@contextlib.contextmanager
def if_(cond):
    """``with dsl.if_(x < n): ...`` emits scf.if."""
    op = scf.IfOp(_v(cond))
    with ir.InsertionPoint(op.then_block):
        yield
        scf.YieldOp([])


# --------------------------------------------------------------------------- ids and sync

def _dim(name):
    return getattr(gpu.Dimension, name)


def thread_idx(d="x"):
    return Index(gpu.ThreadIdOp(_dim(d)).result)


def block_idx(d="x"):
    return Index(gpu.BlockIdOp(_dim(d)).result)


def block_dim(d="x"):
    return Index(gpu.BlockDimOp(_dim(d)).result)


def grid_dim(d="x"):
    return Index(gpu.GridDimOp(_dim(d)).result)


def cluster_ctarank(d="x"):
    return Index(gpu.ClusterBlockIdOp(_dim(d)).result)


def warp_idx():
    return thread_idx() // 32


def lane_idx():
    return thread_idx() % 32


def barrier():
    gpu.BarrierOp()


def cluster_sync():
    nvvm.ClusterArriveOp()
    nvvm.ClusterWaitOp()


def elect_sync():
    """True in one lane of the calling warp (elect.sync)."""
    return Bool(nvvm.ElectSyncOp(ir.IntegerType.get_signless(1)).result)


# --------------------------------------------------------------------------- kernels

class _KernelState:
    current = None

    def __init__(self, smem_arg):
        self.smem_arg = smem_arg
        self.smem_bytes = 0
        self.smem_align = 16


def current_kernel() -> _KernelState:
    if _KernelState.current is None:
        raise KernelBuildError("this helper must be called inside an @nvtma.dsl.kernel function")
    return _KernelState.current


@dataclass
class BuiltKernel:
    ir: str
    name: str
    block: tuple
    cluster: tuple | None
    smem_bytes: int


class kernel:  # noqa: N801 (decorator, lower case like other DSLs)
    """Decorator: a Python function whose parameters are annotated with
    dsl.Tensor / dsl.Int32 becomes a gpu.func kernel. Keyword-only
    parameters are build-time constants (``build(BM=64)``)."""

    def __init__(self, fn=None, *, block=(128,), cluster=None, arch="sm_90a", ptx=86, name=None):
        self.block = tuple(block) + (1,) * (3 - len(tuple(block)))
        self.cluster = cluster
        self.arch = arch
        self.ptx = ptx
        self.name = name
        self.fn = None
        if fn is not None:
            self._bind(fn)

    def _bind(self, fn):
        self.fn = fn
        self.name = self.name or fn.__name__
        self.__doc__ = fn.__doc__
        return self

    def __call__(self, fn):
        return self._bind(fn)

    def _params(self):
        sig = inspect.signature(self.fn)
        params = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        types = []
        for p in params:
            ann = p.annotation
            if isinstance(ann, Tensor):
                types.append(ann.mlir())
            elif ann is Int32 or ann == "i32":
                types.append("i32")
            else:
                raise KernelBuildError(f"parameter {p.name!r} of {self.name}: annotate it with dsl.Tensor(dtype, "
                                       f"shape) or dsl.Int32, got {ann!r}")
        return params, types

    def build(self, **consts) -> BuiltKernel:
        """Traces the function and returns its nvtma IR."""
        params, types = self._params()
        args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
        skeleton = (f'module attributes {{gpu.container_module}} {{\n'
                    f'  gpu.module @kernels [#nvvm.target<chip = "{self.arch}", features = "+ptx{self.ptx}">] {{\n'
                    f'    gpu.func @{self.name}({args}) workgroup(%smem: memref<16xi8, #gpu.address_space<workgroup>>'
                    f' {{llvm.align = 1024 : i64}}) kernel {{\n      gpu.return\n    }}\n  }}\n}}\n')
        with ir.Context(), ir.Location.unknown():
            module = ir.Module.parse(skeleton)
            func = module.body.operations[0].regions[0].blocks[0].operations[0]
            block = func.regions[0].blocks[0]
            n = len(types)
            smem = block.arguments[n]
            state = _KernelState(smem)
            prev, _KernelState.current = _KernelState.current, state
            try:
                with ir.InsertionPoint(block.operations[len(block.operations) - 1]):
                    self.fn(*[_wrap(block.arguments[i]) for i in _range(n)], **consts)
            except ir.MLIRError as e:  # a type or attribute the dialect rejected while tracing
                raise KernelBuildError(f"{self.name}: {e}") from None
            finally:
                _KernelState.current = prev
            size = max(16, (state.smem_bytes + 15) // 16 * 16)
            smem.set_type(ir.Type.parse(f"memref<{size}xi8, #gpu.address_space<workgroup>>"))
            try:
                ok = module.operation.verify()
            except Exception as e:  # MLIRError with the diagnostics
                raise KernelBuildError(f"{self.name}: the traced IR does not verify:\n{e}") from None
            assert ok
            return BuiltKernel(str(module), self.name, self.block, self.cluster, state.smem_bytes)

    def compile(self, **consts):
        from .compiler import compile as _compile
        built = self.build(**consts)
        c = _compile(built.ir, arch=self.arch, ptx_version=self.ptx)
        c.built = built
        return c
