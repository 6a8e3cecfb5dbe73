"""``@dsl.kernel``: a Python function becomes a GPU kernel (an MLIR gpu function).

    @dsl.kernel(block=(128,), cluster=(2, 1, 1))
    def copy(src: dsl.Tensor("f16", (None, 4096)), dst: dsl.Tensor("f16", (None, 4096)), *, BM=64):
        ...

Positional parameters are the kernel's run-time arguments, annotated with
``dsl.Tensor`` or a scalar type (``dsl.Int32``, ``dsl.Float32`` ...);
keyword-only parameters are build-time constants. ``build()`` traces the
function into nvtma IR, ``compile()`` lowers it to a cubin, and calling the
kernel on tensors compiles on first call (nvtma.jit) and launches. The
block, cluster and shared-memory size go into the kernel's record, so
launches need only a grid.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import sys
from dataclasses import dataclass

from .._lazy import lazy
from . import numeric as _n
from .errors import KernelBuildError, _Depth, fail, pinned_location, show
from . import types
from .types import attribute_name as _attribute_name
from .tensor import Tensor, TensorValue

ir = lazy("nvtma.ir")
gpu = lazy("nvtma.dialects.gpu")
memref = lazy("nvtma.dialects.memref")

__all__ = ["kernel", "BuiltKernel", "current_kernel", "narrowed", "active_threads"]


class _KernelState:
    """What the helpers of one kernel under construction share."""
    current = None

    def __init__(self, func, entry, kernel, block):
        self.kernel = kernel
        self.block = block
        self.func = func
        self.entry = entry
        self.smem_bytes = 0
        self.static_bytes = 0      # the static shared memory's buffers (static_smem), each rounded to its alignment
        self.smem_base = None      # the gpu.dynamic_shared_memory value, made on first use
        self.smem_flat = {}        # element type -> 1-D view of all of shared memory
        self.scratch = {}          # named helper allocations (cta_reduce scratch ...)
        self.scope = []            # (warps, lanes, first warp) the enclosing branches leave active
        self.at_exit = []          # built once at the kernel's end, where every thread runs (profile counts)
        self.max_grid = None       # the most CTAs a launch may have (dsl.max_grid), or None

    @property
    def threads(self):
        """The block's threads, all its dims."""
        return self.block[0] * self.block[1] * self.block[2]

    def active(self, block):
        """(warps, lanes per warp) that may be running the code being built."""
        threads = block[0] * block[1] * block[2]
        warps, lanes = (threads + 31) // 32, min(threads, 32)
        for w, ln, _ in self.scope:
            warps = warps if w is None else min(warps, w)
            lanes = lanes if ln is None else min(lanes, ln)
        return warps, lanes

    def part_of_a_warpgroup(self):
        """(warps, lanes, threads of the block) where at most part of a warpgroup may run the code being built
        (a warp's role, one lane's branch, a block's partial last warpgroup where this code may run in it: 160
        threads with warpgroup 0's role are fine, with warpgroup 1's not), else None: what warpgroup-wide
        instructions (wgmma's .sync.aligned ones, setmaxnreg) refuse."""
        warps, lanes = self.active(self.block)
        if warps < 4 or lanes < 32 or self.may_run_partial(128):
            return warps, lanes, self.threads
        return None

    def may_run_partial(self, unit):
        """Whether the block's last, partial group of `unit` threads (32: a warp, 128: a warpgroup) may run the
        code being built: only a role's known warps (or a branch's on a warp index compared with a Python
        int) keep it off."""
        threads = self.threads
        if threads % unit == 0:
            return False
        first_partial = threads // unit * unit // 32   # the partial group's first warp
        for w, _, first in self.scope:
            if first is not None and w is not None and first + w <= first_partial:
                return False
        # (a branch that narrows to some warps without saying which, dsl.if_(warp_idx() == 1) or a role of a
        # run-time warp, may be the partial one)
        return True

    def static_smem(self, name, shape, element_type, align=16, dtype=None, what=None):
        """A [shape] buffer of `element_type` (an MLIR type; `dtype` its element class where the signless
        type cannot say it, a Uint32) in the kernel's static shared memory: a module global `name`, outside
        the dynamic pool's layout (the driver adds it to the launch's shared memory). With `what` (the
        user's call, for the message) refused here where it takes the pool and the static buffers past a
        CTA's limit, else at the build's end: ptxas refused only a static part past it, with no line, and
        the launch the sum."""
        t = ir.MemRefType.get(list(shape), element_type, memory_space=types.workgroup())
        size = max((64 if isinstance(element_type, ir.IndexType) else element_type.width) // 8, 1)  # (an Index
        # buffer lowers to i64s)
        for d in shape:
            size *= d
        size = -(-size // align) * align
        dynamic = (self.smem_bytes + 127) // 128 * 128  # (as the kernel's record rounds it)
        total = dynamic + self.static_bytes + size
        if what is not None and total > 227 * 1024:
            fail(f"{what} ({size} bytes) takes the kernel's shared memory to "
                 f"{total} bytes ({dynamic} of the pool, {self.static_bytes + size} static); a Hopper CTA gets at "
                 "most 232448", rule="smem")
        self.static_bytes += size
        with ir.InsertionPoint(self.func):  # before the kernel function, in its gpu.module
            memref.GlobalOp(name, t, sym_visibility="private", initial_value=ir.UnitAttr.get(), alignment=align)
        return TensorValue(memref.GetGlobalOp(t, name).result, dtype=dtype)

    def smem(self):
        """memref<?xi8, workgroup>: the kernel's dynamic shared memory."""
        if self.smem_base is None:
            first = self.entry.operations[0] if len(self.entry.operations) else None
            ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(self.entry)
            t = types.shared_memref([ir.ShapedType.get_dynamic_size()], ir.IntegerType.get_signless(8))
            with ip, ir.Location.unknown():
                self.smem_base = gpu.DynamicSharedMemoryOp(t).result
        return self.smem_base


class narrowed:
    """Code inside runs on at most `warps` warps and `lanes` lanes of each
    (None: unchanged); what single-issue helpers (TMA copies, expect_tx)
    check before they elect their issuing thread."""

    def __init__(self, warps=None, lanes=None, first=None):
        self.n = (warps, lanes, first)   # (first: the first of the warps, where known)

    def __enter__(self):
        k = _KernelState.current
        if k is not None:
            k.scope.append(self.n)

    def __exit__(self, *exc):
        k = _KernelState.current
        if k is not None:
            k.scope.pop()


def active_threads():
    """(warps, lanes per warp) that may run the code being built now."""
    k = current_kernel()
    return k.active(k.block)


def current_kernel() -> _KernelState:
    if _KernelState.current is None:
        raise KernelBuildError("this helper must be called inside an @nvtma.dsl.kernel function",
                               rule="outside-kernel")
    return _KernelState.current


@dataclass
class BuiltKernel:
    """A traced kernel: its IR (text, with the user's locations) and launch configuration."""
    ir: str
    name: str
    block: tuple
    cluster: tuple | None
    smem_bytes: int
    consts: dict


def _dim3(v, what, name):
    if v is None:
        return None
    if isinstance(v, int):
        v = (v,)
    try:
        v = tuple(v)
    except TypeError:
        raise KernelBuildError(f"{name}: {what}={v!r} is not 1-3 positive ints", rule="launch-config") from None
    if not 1 <= len(v) <= 3 or any(not isinstance(x, int) or isinstance(x, bool) or x < 1 for x in v):
        raise KernelBuildError(f"{name}: {what}={v!r} is not 1-3 positive ints", rule="launch-config")
    return v + (1,) * (3 - len(v))


# a kernel's name as PTX takes it (a plain identifier): NVPTX ended the process on one it cannot print
# ("LLVM ERROR: Symbol name with unsupported characters"), ptxas refused "1abc" or "k.k", LLVM a "llvm.k"
_SYMBOL = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_MAX_NAME = 1024  # what PTX promises for an identifier, and the kernel records hold


def _kernel_name(name, where, derived=False):
    """`name`, a kernel's symbol, or a KernelBuildError naming it (`derived`: the function's own name)."""
    whose = " (the function's name)" if derived else ""
    fix = "name the kernel with @dsl.kernel(name=...)" if derived else "pass another @dsl.kernel(name=...)"
    if not isinstance(name, str):
        raise KernelBuildError(f"kernel name={show(name)} is not a str ({type(name).__name__}); {fix}",
                               where=where, rule="kernel-name")
    if len(name) > _MAX_NAME:
        raise KernelBuildError(f"kernel name {name[:32]!r}...{whose} has {len(name)} characters, at most "
                               f"{_MAX_NAME}; {fix}", where=where, rule="kernel-name")
    if not _SYMBOL.fullmatch(name) or name in ("_", "$"):  # (PTX: a '_' or '$' starts a longer name)
        lone = ", nor a lone '_' or '$'" if name in ("_", "$") else ""
        raise KernelBuildError(f"kernel name {name!r}{whose} is not a name PTX takes: ASCII letters, digits, '_' "
                               f"and '$', not starting with a digit{lone}; {fix}", where=where, rule="kernel-name")
    return name


class kernel:  # noqa: N801 (a decorator, lower case like other DSLs)
    """Decorator: ``@dsl.kernel`` or ``@dsl.kernel(block=(128,), cluster=(2,),
    arch="sm_90a", ptx=86, name=None, pdl=False)``. `pdl`: the kernel is
    launched with programmatic dependent launch (its CTAs may start while the
    stream's earlier kernels finish); it must call
    ``cuda.griddepcontrol_wait()`` before it reads what they write."""

    def __init__(self, fn=None, *, block=(128,), cluster=None, arch="sm_90a", ptx=86, name=None, pdl=False):
        self.name = name if name is None else _kernel_name(name, None)
        self._tracing = False  # its body is being traced (a build inside it would recurse)
        # block, cluster and pdl may be functions of the build-time constants
        self._block, self._cluster, self._pdl = block, cluster, pdl
        if not callable(block) and not callable(cluster):
            self.launch_dims({})
        self.arch = arch
        self.ptx = ptx
        self.fn = None
        self._built = {}
        if fn is not None:
            self._bind(fn)

    @property
    def sm(self) -> int:
        """The target's sm number (sm_90a: 90; 0 for a name without one)."""
        return int("".join(ch for ch in str(self.arch)[3:] if ch.isdigit()) or 0)

    @property
    def arch_specific(self) -> bool:
        """Whether the target is an `a` or `f` chip (what tensormap.replace, setmaxnreg and wgmma need)."""
        return isinstance(self.arch, str) and self.arch.endswith(("a", "f"))

    @property
    def ptx_isa(self) -> int | None:
        """The PTX ISA the kernel targets (86 for 8.6), or None for a ptx that is not an int (compile's error).
        ptx=None is 8.6, nvtma's default (raised to the chip's minimum, which is above 8.6 only on chips where
        no op asks for more)."""
        p = 86 if self.ptx is None else self.ptx
        return p if isinstance(p, int) and not isinstance(p, bool) else None

    def require_ptx(self, version: int, what: str):
        """Fails at the user's line when `what` needs PTX ISA `version` and the kernel targets an older one (the
        lowering's target check refused it only once the whole kernel was built, LLVM aborted on some)."""
        if self.ptx_isa is not None and self.ptx_isa < version:
            fail(f"{what} needs PTX ISA {version // 10}.{version % 10}: @dsl.kernel(..., ptx={version}) or newer, "
                 f"this kernel has ptx={self.ptx}" + (" (PTX ISA 8.6, the default)" if self.ptx is None else ""),
                 rule="ptx")

    def launch_dims(self, consts):
        """(block, cluster) for these constants, checked."""
        name = self.name or "kernel"
        block = self._block(**consts) if callable(self._block) else self._block
        cluster = self._cluster(**consts) if callable(self._cluster) else self._cluster
        if block is None:  # (a cluster may be None: no cluster)
            raise KernelBuildError(f"{name}: block=None; a kernel's block is 1-3 positive ints", rule="launch-config")
        block, cluster = _dim3(block, "block", name), _dim3(cluster, "cluster", name)
        if block[0] * block[1] * block[2] > 1024:
            raise KernelBuildError(f"{name}: block {block} has more than 1024 threads", rule="launch-config")
        if cluster is not None and cluster[0] * cluster[1] * cluster[2] > 16:
            raise KernelBuildError(f"{name}: cluster {cluster} has more than 16 CTAs", rule="launch-config")
        return block, cluster

    def launch_key(self, consts):
        """What the decorator's arguments make of the kernel for these constants (block, cluster, pdl):
        part of the JIT's and the artifacts' keys, since a factory's kernels may differ only there."""
        pdl = self._pdl(**consts) if callable(self._pdl) else self._pdl
        return (*self.launch_dims(consts), bool(pdl), self.arch, self.ptx)

    @property
    def block(self):
        """The block (fixed, or of the last build when it depends on constants)."""
        return self._dims[0] if hasattr(self, "_dims") else self.launch_dims({})[0]

    @property
    def cluster(self):
        return self._dims[1] if hasattr(self, "_dims") else self.launch_dims({})[1]

    def _bind(self, fn):
        self.fn = fn
        if self.name is None:
            self.name = _kernel_name(getattr(fn, "__name__", None), _def_site(fn), derived=True)
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        return self

    def __call__(self, *args, **kwargs):
        if self.fn is None:
            if len(args) == 1 and callable(args[0]) and not kwargs:
                return self._bind(args[0])
            raise TypeError("@dsl.kernel(...) decorates a function")
        launch = {k: kwargs.pop(k) for k in ("grid", "block", "cluster", "smem", "stream") if k in kwargs}
        from .. import jit
        return jit.launch(self, args, kwargs, launch)

    def __repr__(self):
        return f"<nvtma.dsl.kernel {self.name}>"

    # ------------------------------------------------------------------ signature
    def signature(self):
        """(name, annotation) of every run-time parameter."""
        out = []
        for p in inspect.signature(self.fn).parameters.values():
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                ann = p.annotation
                if ann is Tensor:  # a bare dsl.Tensor: any tensor, specialized per call
                    ann = Tensor()
                if isinstance(ann, str):
                    ann = _n.dtype(ann) if ann in _n._BY_NAME else ann
                out.append((p.name, ann))
        return out

    def constants(self):
        """Names of the build-time constants (keyword-only parameters)."""
        return [p.name for p in inspect.signature(self.fn).parameters.values() if p.kind == p.KEYWORD_ONLY]

    def _param_types(self, param_types):
        sig = self.signature()
        var = next((p.name for p in inspect.signature(self.fn).parameters.values() if p.kind == p.VAR_POSITIONAL),
                   None)
        if param_types is not None and var is not None and len(param_types) > len(sig):
            # *args parameters: optional run-time arguments, typed per specialization
            sig = sig + [(f"{var}[{i}]", None) for i in range(len(param_types) - len(sig))]
        if param_types is not None:
            if len(param_types) != len(sig):
                raise KernelBuildError(f"{self.name}: {len(param_types)} param_types for {len(sig)} parameters",
                                       rule="signature")
            sig = [(n, t) for (n, _), t in zip(sig, param_types)]
        out = []
        for name, ann in sig:
            if isinstance(ann, Tensor):
                out.append((name, ann, ann.mlir_type))
            elif isinstance(ann, type) and issubclass(ann, _n.Numeric) and ann not in (_n.Numeric, _n.Integer,
                                                                                       _n.Float):
                out.append((name, ann, ann.mlir_type))
            else:
                raise KernelBuildError(f"parameter {name!r} of {self.name}: annotate it with dsl.Tensor(dtype, "
                                       f"shape) or a scalar type such as dsl.Int32, got {ann!r}",
                                       where=_def_site(self.fn), rule="signature")
        return out

    # ------------------------------------------------------------------ build
    def build(self, param_types=None, **consts) -> BuiltKernel:
        """Traces the function (with these constants) into nvtma IR."""
        if self._tracing:  # (it recursed until Python's RecursionError)
            raise KernelBuildError(f"{self.name} is built inside its own body (k.build(), k.compile() or a launch of "
                                   "it while it is being traced): a kernel cannot contain itself", rule="recursion")
        if param_types is not None and not isinstance(param_types, (list, tuple)):
            raise KernelBuildError(f"{self.name}: param_types={show(param_types)} is not a list or tuple of the "
                                   "run-time parameters' types", rule="signature")
        try:
            # constants by type and value: 0.0 and -0.0, or 1, 1.0 and True, are equal keys and shared a build
            key = (tuple(param_types) if param_types is not None else None,
                   tuple(sorted(((k, typed_key(v)) for k, v in consts.items()), key=str)))
            hit = self._built.get(key)
        except TypeError:  # unhashable constants: no memo
            hit, key = None, None
        if hit is not None:
            return hit
        unknown = set(consts) - set(self.constants())
        if unknown:
            raise KernelBuildError(f"{self.name} has no constant {sorted(unknown)[0]!r}; its constants: "
                                   f"{', '.join(self.constants()) or 'none'}", where=_def_site(self.fn),
                                   rule="signature")
        self._tracing = True
        try:
            built = self._trace(param_types, consts)
        finally:
            self._tracing = False
        if key is not None:
            self._built[key] = built
        return built

    def _trace(self, param_types, consts):
        from .. import ir as _ir  # noqa: F401 (loads the MLIR extension)
        block, cluster = self._dims = self.launch_dims(consts)
        with ir.Context(), _def_location(self.fn):
            params = self._param_types(param_types)
            types = []
            for name, _, mk in params:
                try:
                    types.append(mk())
                except KernelBuildError as e:  # named at the kernel's def, not at the caller of build()
                    raise KernelBuildError(f"parameter {name!r} of {self.name}: {e.message}", where=_def_site(self.fn),
                                           rule=e.rule) from None
            module = ir.Module.create()
            module.operation.attributes[_attribute_name("container_module")] = ir.UnitAttr.get()
            with ir.InsertionPoint(module.body):
                gm = gpu.GPUModuleOp("kernels")
                body = gm.regions[0].blocks.append()
            with ir.InsertionPoint(body):
                ftype = ir.FunctionType.get(types, [])
                func = gpu.GPUFuncOp(ir.TypeAttr.get(ftype), sym_name=self.name, kernel=True,
                                     known_block_size=list(block))
                if cluster is not None:
                    func.operation.attributes[_attribute_name("known_cluster_size")] = \
                        ir.DenseI32ArrayAttr.get(list(cluster))
                pdl = self._pdl(**consts) if callable(self._pdl) else self._pdl
                if pdl:
                    func.operation.attributes[_attribute_name("pdl")] = ir.UnitAttr.get()
                # MLIR integers are signless: the kernel record says which parameters are unsigned, so the
                # launch bounds their Python ints by 0..2^w-1 (and a signed one's by its signed range)
                unsigned = [isinstance(ann, type) and issubclass(ann, _n.Integer) and not ann.signed
                            for _, ann, _ in params]
                if any(unsigned):
                    func.operation.attributes["arg_attrs"] = ir.ArrayAttr.get(
                        [ir.DictAttr.get({_attribute_name("unsigned"): ir.UnitAttr.get()} if u else {})
                         for u in unsigned])
                entry = func.regions[0].blocks.append(*types)
            state = _KernelState(func, entry, self, block)
            args = []
            for (name, ann, _), a in zip(params, entry.arguments):
                args.append(TensorValue(a, dtype=ann.element) if isinstance(ann, Tensor) else ann(a))
            prev, _KernelState.current = _KernelState.current, state
            depth, _Depth.n = _Depth.n, 0
            try:
                with ir.InsertionPoint(entry):
                    got = self.fn(*args, **consts)
                    if inspect.isgenerator(got) or inspect.iscoroutine(got) or inspect.isasyncgen(got):
                        # calling it only made the object: none of the body ran, and the kernel was empty
                        if not inspect.isasyncgen(got):  # (closed: no "coroutine was never awaited" warning)
                            got.close()
                        what = "a generator (it has a `yield`)" if inspect.isgenerator(got) else \
                            "a coroutine (`async def`)" if inspect.iscoroutine(got) else \
                            "an async generator (`async def` with a `yield`)"
                        raise KernelBuildError(f"the kernel function {self.name} is {what}: calling it runs none of "
                                               "its body; a kernel function is a plain def that runs its body",
                                               where=_def_site(self.fn), rule="kernel-function")
                    end = _def_location(self.fn, end=True)
                    with end, pinned_location(_def_line(self.fn, end=True)):
                        for hook in state.at_exit:
                            hook()
                        gpu.ReturnOp([])
            except ir.MLIRError as e:  # an op the dialect rejected while tracing
                raise KernelBuildError(f"{self.name}: {_diagnostics(e)}", rule="verify") from None
            finally:
                _KernelState.current = prev
                _Depth.n = depth
            if pdl and ("griddepcontrol", "wait") not in state.scratch:
                raise KernelBuildError(f"{self.name} is launched with programmatic dependent launch (pdl=True) but "
                                       "never calls cuda.griddepcontrol_wait(): it could read what the stream's "
                                       "earlier kernels have not yet written", where=_def_site(self.fn), rule="pdl")
            if state.max_grid is not None:
                func.operation.attributes[_attribute_name("max_grid")] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(64), state.max_grid)
            smem = (state.smem_bytes + 127) // 128 * 128
            if smem:
                func.operation.attributes[_attribute_name("dynamic_smem")] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(64), smem)
            if smem + state.static_bytes > 227 * 1024:  # (the driver adds the static part to the launch's)
                static = f" ({smem} dynamic, {state.static_bytes} static)" if state.static_bytes else ""
                raise KernelBuildError(f"{self.name} needs {smem + state.static_bytes} bytes of shared memory{static}, "
                                       "a Hopper CTA gets at most 232448", where=_def_site(self.fn), rule="smem")
            try:
                module.operation.verify()
            except ir.MLIRError as e:
                raise _escaped_value(e) or KernelBuildError(
                    f"{self.name}: the traced IR does not verify:\n{_diagnostics(e)}", where=_def_site(self.fn),
                    rule="verify") from None
            text = module.operation.get_asm(enable_debug_info=True)
            return BuiltKernel(text, self.name, block, cluster, smem, dict(consts))

    def compile(self, param_types=None, **consts):
        """build() then nvtma.compile for this kernel's arch; NVTMA_DUMP_IR /
        NVTMA_DUMP_PTX (1 = stderr, else a directory) show what was made."""
        from ..compiler import compile as _compile
        built = self.build(param_types, **consts)
        _dump("NVTMA_DUMP_IR", built.ir, f"{self.name}.mlir")
        c = _compile(built.ir, arch=self.arch, ptx_version=self.ptx)
        _dump("NVTMA_DUMP_PTX", c.ptx, f"{self.name}.ptx")
        c.built = built
        return c

    def specialize(self, param_types=None, **consts):
        """A (kernel, types, constants) bundle that nvtma.compile accepts."""
        return Specialization(self, param_types, consts)


@dataclass
class Specialization:
    """One kernel with fixed parameter types and constants: what the kernel
    library hands out (``.ir``, ``.compile()``, launch defaults)."""
    kernel: kernel
    param_types: list | None
    consts: dict
    grid: tuple | None = None
    info: dict | None = None

    @property
    def built(self) -> BuiltKernel:
        return self.kernel.build(self.param_types, **self.consts)

    @property
    def ir(self) -> str:
        return self.built.ir

    @property
    def name(self) -> str:
        return self.kernel.name

    @property
    def block(self):
        return self.kernel.launch_dims(self.consts)[0]

    @property
    def cluster(self):
        return self.kernel.launch_dims(self.consts)[1]

    @property
    def smem(self):
        return self.built.smem_bytes

    @functools.cached_property
    def key(self) -> str:
        """Kernel name + parameter types + constants + nvtma version + the code
        (`source_fingerprint`): names AOT artifact directories, so artifacts
        compiled from other code are never taken for this kernel's. Computed
        once (~40 us: the parameter types' text)."""
        from .. import __version__
        import hashlib
        parts = repr((self.kernel.name, self.param_types, sorted(self.consts.items(), key=str), __version__,
                      source_fingerprint(self.kernel.fn), self.kernel.launch_key(self.consts)))
        return f"{self.kernel.name}-{hashlib.sha256(parts.encode()).hexdigest()[:16]}"

    def launch(self, grid=None):
        """Launch keywords matching the kernel's record: grid (this
        specialization's default unless given), block, cluster, smem."""
        kw = dict(grid=grid if grid is not None else self.grid, block=self.block, smem=self.smem)
        if self.cluster is not None:
            kw["cluster"] = self.cluster
        return kw

    def compile(self):
        """The compiled module; its records name this specialization (``"spec"``: its key)."""
        from ..compiler import of_spec
        return of_spec(self.kernel.compile(self.param_types, **self.consts), self)


# nvtma's Python sources that shape a kernel's code (what the runtime-only wheel ships too, so a key is the
# same where artifacts are compiled and where they are loaded): these folders and modules of the package
_SOURCE_DIRS = ("dsl", "kernels")
_SOURCE_MODULES = ("compiler.py", "cpasync.py", "cuda.py", "lang.py", "nvshmem.py", "profile.py", "tcgen05.py",
                   "tensormap.py", "wgmma.py")
_digests: dict = {}  # file path -> its SHA-256
_package: list = []  # [the digest of nvtma's kernel-shaping sources], once a process
_fingerprints: dict = {}  # kernel function -> source_fingerprint, once a process


def _source_digest(path):
    """SHA-256 of a file's bytes (memoized for the process), or None where it cannot be read."""
    import hashlib
    if path not in _digests:
        try:
            with open(path, "rb") as f:
                _digests[path] = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            _digests[path] = None
    return _digests[path]


def typed_key(v):
    """`v` as a key that tells apart values Python calls equal: 0.0 and -0.0 (by the float's bits), 1, 1.0
    and True (by type), in tuples and lists too. A TypeError where `v` is not hashable."""
    if isinstance(v, float):
        return ("float", v.hex())
    if isinstance(v, (tuple, list)):  # (a list keys as the tuple of its items, as the constants read it)
        return ("tuple", *(typed_key(x) for x in v))
    hash(v)
    return (type(v).__qualname__, v)


def closure_digest(fn):
    """(digest, stable): the values `fn` closes over and its default arguments, which its file's bytes do not
    show: a factory's kernels (``def make(scale): @dsl.kernel ... x * scale``) differ only in them. Numbers,
    strings, containers of them, types, enums and modules by value or name; functions (and kernels) by name
    and, three deep, their own closures. `stable` is False where a value has no identity across processes
    (an object with the default repr: only its type goes in)."""
    import enum
    import types as _types
    stable = True
    seen = set()

    def val(v, depth):
        nonlocal stable
        if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
            return f"{type(v).__name__}:{v!r}"
        if isinstance(v, (tuple, list, set, frozenset)):
            items = [val(x, depth) for x in v]
            return f"{type(v).__name__}({','.join(sorted(items) if isinstance(v, (set, frozenset)) else items)})"
        if isinstance(v, dict):
            return "dict(" + ",".join(sorted(f"{val(k, depth)}={val(x, depth)}" for k, x in v.items())) + ")"
        if isinstance(v, _types.ModuleType):
            return f"module:{v.__name__}"
        if isinstance(v, type):
            return f"type:{v.__module__}.{v.__qualname__}"
        if isinstance(v, enum.Enum):
            return f"enum:{type(v).__qualname__}.{v.name}"
        inner = getattr(v, "fn", None) if not isinstance(v, _types.FunctionType) else v
        if isinstance(inner, _types.FunctionType):
            name = f"fn:{inner.__module__}.{inner.__qualname__}"
            if depth >= 3 or id(inner) in seen:
                return name
            seen.add(id(inner))
            return f"{name}[{own(inner, depth + 1)}]"
        if type(v).__module__ == "numpy" and hasattr(v, "tobytes"):  # an array's repr elides its middle
            import hashlib
            return f"numpy:{v.dtype}:{getattr(v, 'shape', ())}:{hashlib.sha256(v.tobytes()).hexdigest()}"
        r = repr(v)
        if " at 0x" in r or "..." in r:  # no identity, or not all of it shown (a large tensor's repr)
            stable = False
            return f"object:{type(v).__module__}.{type(v).__qualname__}"
        return f"{type(v).__qualname__}:{r}"

    def own(f, depth):
        cells = []
        for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
            try:
                cells.append(f"{name}={val(cell.cell_contents, depth)}")
            except ValueError:  # an empty cell (a name bound later in the enclosing function)
                cells.append(f"{name}=<empty>")
        return ";".join(cells + [val(f.__defaults__, depth), val(f.__kwdefaults__, depth)])

    import hashlib
    text = own(fn, 0) if isinstance(fn, _types.FunctionType) else ""
    return hashlib.sha256(text.encode()).hexdigest(), stable


def source_fingerprint(fn) -> str:
    """A digest of the code a kernel is built from: nvtma's kernel-shaping
    sources (_SOURCE_DIRS, _SOURCE_MODULES), the file that defines `fn`
    (its bytes, not its path; a function with no readable file, typed at a
    prompt, its code object) and the values it closes over
    (`closure_digest`). Code it imports from elsewhere is not covered.
    Read once a process."""
    got = _fingerprints.get(fn)
    if got is not None:
        return got
    import hashlib
    import marshal
    from pathlib import Path
    pkg = Path(__file__).resolve().parent.parent
    if not _package:
        files = [p for d in _SOURCE_DIRS for p in sorted((pkg / d).glob("*.py"))]
        files += [pkg / m for m in _SOURCE_MODULES]
        _package.append(hashlib.sha256(
            "".join(f"{p.relative_to(pkg).as_posix()}:{_source_digest(p)}\0" for p in files).encode()).hexdigest())
    own = None
    src = inspect.getsourcefile(fn) if fn is not None else None
    if src is not None:
        own = _source_digest(os.path.realpath(src))
    if own is None and fn is not None:
        own = hashlib.sha256(marshal.dumps(fn.__code__)).hexdigest()
    closure = closure_digest(fn)[0] if fn is not None else ""
    _fingerprints[fn] = hashlib.sha256(f"{_package[0]}:{own}:{closure}".encode()).hexdigest()[:16]
    return _fingerprints[fn]


def _dump(var, text, fname):
    where = os.environ.get(var)
    if not where:
        return
    if where in ("1", "stderr", "-"):
        print(f"// ---- {var}: {fname}\n{text}", file=sys.stderr)
        return
    os.makedirs(where, exist_ok=True)
    with open(os.path.join(where, fname), "w") as f:
        f.write(text)


def _def_site(fn):
    try:
        return f"{inspect.getsourcefile(fn)}:{fn.__code__.co_firstlineno}"
    except (TypeError, OSError):
        return None


def _def_line(fn, end=False):
    """(file, line) of the function's first line, or of its last."""
    code = fn.__code__
    line = code.co_firstlineno
    if end:
        line = max((ln for _, _, ln in code.co_lines() if ln is not None), default=line)
    return code.co_filename, line


def _def_location(fn, end=False):
    return ir.Location.file(*_def_line(fn, end), 1)


_LOC = re.compile(r'loc\("(.+?)":(\d+):\d+\)')


def _escaped_value(e):
    """The KernelBuildError for a verifier's "does not dominate this use" where the value was made inside a
    run-time region (a dsl.if_/else_/range/while_ body, or a loop's own value) and used after it, or in
    another branch: Python let the name outlive the `with`/`for`, MLIR's value does not. None otherwise."""
    for d in getattr(e, "error_diagnostics", None) or ():
        if "does not dominate this use" not in d.message:
            continue
        made = next((n for n in d.notes if n.message.startswith("operand defined")), None)
        use, at = _LOC.search(str(d.location)), made and _LOC.search(str(made.location))
        if made is None or use is None or at is None or "parent region" in made.message \
                or "same " in made.message:
            return None
        what = f"the loop variable (or a carried value) of the loop at line {at.group(2)}" \
            if "block argument" in made.message else f"a value made at line {at.group(2)}, inside a run-time region,"
        return KernelBuildError(
            f"{what} is used at line {use.group(2)}, outside that region: a Python name outlives "
            "its dsl.if_/else_/range/while_ body, the run-time value does not. Take values out of a region as "
            "its results: dsl.yield_ them in `with dsl.if_(c) as br:` and its dsl.else_ (br.results, or "
            "dsl.cond), or carry them through dsl.range/dsl.while_(carry=...) and read loop.results",
            where=f"{use.group(1)}:{use.group(2)}", rule="region")
    return None


def _diagnostics(e) -> str:
    """An MLIRError's message with each diagnostic's location."""
    diags = getattr(e, "error_diagnostics", None)
    if not diags:
        return str(e)
    lines = []
    for d in diags:
        lines.append(f"{d.location}: {d.message}")
        for n in d.notes:
            lines.append(f"  {n.location}: note: {n.message}")
    return "\n".join(lines)
