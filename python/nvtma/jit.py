"""JIT on first call, and PyTorch custom ops.

Calling a ``@dsl.kernel`` on tensors, ``k(x, y, grid=..., BM=64)``, comes
here as ``launch(k, args, consts, launch_kwargs)``: the specialization (each
tensor's element type and rank, the dims the annotation fixes, the scalar
types, the build-time constants) is derived from the arguments, compiled
once, memoized in memory (per kernel, by specialization) and on disk
(through the compile cache, keyed by the specialization, the source file
the kernel is defined in, nvtma's DSL sources and build, and the toolchain),
then launched. A second process with the same kernel finds the cubin
without tracing the function again.

The kernel object is the one nvtma.dsl defines (contracts.md item 2):
``name``, ``fn``, ``signature()``, ``constants()``,
``build(param_types=None, **consts)`` and ``arch``/``ptx`` attributes.

``custom_op("ns::name", kernel_or_fn, mutates_args=(...))`` registers a
torch.library custom op (with a fake implementation, so torch.compile traces
it without running it) that launches the kernel.
"""

from __future__ import annotations

import hashlib
import inspect
import weakref
from pathlib import Path

from .runtime import args as _args
from .runtime import cache as _cache
from .runtime.errors import LaunchError

__all__ = ["launch", "specialize", "compiled", "custom_op", "stats"]

# kernel -> {specialization: (runtime Kernel, compiled module)}
_memo: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
stats = {"builds": 0, "disk_hits": 0, "memory_hits": 0}

_LAUNCH_KEYS = ("grid", "block", "cluster", "smem", "stream")


def _elem_of(obj, arg: str) -> tuple:
    """(element type, shape) of a tensor argument, without launching."""
    tt = _args.torch_tensor_type()
    if tt is not None and isinstance(obj, tt):
        return _args.torch_elem(obj.dtype, arg), tuple(obj.shape)
    info = _args.intake(obj, arg)
    return info.elem, tuple(info.shape)


def _hashable(v, name):
    """A constant as its memo key, by type and value (dsl.kernel.typed_key: C=-0.0 reused C=0.0's module)."""
    from .dsl.kernel import typed_key
    try:
        return typed_key(v)
    except TypeError:
        raise LaunchError(f"constant {name}={v!r} is not hashable (use ints, strings or tuples)", arg=name,
                          rule="constant") from None


def _dtype_name(d) -> str:
    """An annotation's element type as its MLIR spelling (DSL type classes carry it as .name; an alias, "u32"
    or "bfloat16", as the type it names: "u32" refused every tensor, compared with "ui32")."""
    if isinstance(d, str):
        from .dsl.numeric import dtype
        try:
            return dtype(d).name
        except Exception:  # not a DSL name: the element check says what it takes
            return d
    return getattr(d, "name", None) or str(d)


def _is_tensor_ann(ann) -> bool:
    return hasattr(ann, "shape") and hasattr(ann, "dtype") and not isinstance(ann, type)


def _extra_types(kernel, extra, tensor_cls):
    """Types of the arguments a *args parameter takes: tensors at their
    exact dtype and shape, Python ints/floats as Int32/Float32."""
    types, key = [], []
    for i, a in enumerate(extra):
        name = f"args[{i}]"
        if isinstance(a, bool) or isinstance(a, (int, float)):
            from . import dsl
            t = dsl.Float32 if isinstance(a, float) else dsl.Int32
            types.append(t)
            key.append(("scalar", t.__name__))
            continue
        elem, shape = _elem_of(a, name)
        if tensor_cls is None:
            from .dsl import Tensor as tensor_cls
        types.append(tensor_cls(elem, tuple(shape)))
        key.append(("tensor", elem, tuple(shape)))
    return types, key


def _signature(kernel) -> list:
    """kernel.signature(), with annotations that are still strings (a module
    under `from __future__ import annotations`) evaluated."""
    sig = kernel.signature()
    if not any(isinstance(ann, str) for _, ann in sig):
        return sig
    try:
        resolved = inspect.signature(kernel.fn, eval_str=True).parameters
    except Exception:
        return sig
    out = []
    for name, ann in sig:
        if isinstance(ann, str) and name in resolved:
            ann = resolved[name].annotation
            if isinstance(ann, type) and ann.__name__ == "Tensor":  # a bare dsl.Tensor: any tensor
                ann = ann()
        out.append((name, ann))
    return out


def specialize(kernel, args, consts) -> tuple:
    """(param_types, key): the concrete parameter types for these arguments
    and the memo key (param types + constants)."""
    sig = _signature(kernel)
    try:
        var = any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(kernel.fn).parameters.values())
    except (TypeError, ValueError):
        var = False
    if len(args) < len(sig) or (len(args) > len(sig) and not var):
        raise LaunchError(f"kernel {kernel.name} takes {len(sig)} arguments ({', '.join(n for n, _ in sig)}), "
                          f"got {len(args)}", rule="arg-count")
    names = set(kernel.constants())
    unknown = sorted(set(consts) - names)
    if unknown:
        raise LaunchError(f"kernel {kernel.name} has no build-time constant {unknown[0]!r} "
                          f"(constants: {', '.join(sorted(names)) or 'none'})", arg=unknown[0], rule="constant")
    types, key = [], []
    tensor_cls = None
    for (name, ann), a in zip(sig, args):
        if _is_tensor_ann(ann):  # dsl.Tensor
            tensor_cls = type(ann)
            elem, shape = _elem_of(a, name)
            want = _dtype_name(ann.dtype) if ann.dtype is not None else None
            if want is not None and not _args.element_compatible(elem, want):
                raise LaunchError(f"{name}: element type {elem}, the kernel takes {want}", arg=name, rule="dtype")
            dtype = ann.dtype if ann.dtype is not None else elem
            if ann.shape is None:  # the whole shape from the argument (a specialization per shape)
                spec_shape = tuple(shape)
            else:
                if len(ann.shape) != len(shape):
                    raise LaunchError(f"{name}: rank {len(shape)}, the kernel takes rank {len(ann.shape)}",
                                      arg=name, rule="rank")
                for i, (w, got) in enumerate(zip(ann.shape, shape)):
                    if w is not None and w != got:
                        raise LaunchError(f"{name}: dim {i} is {got}, the kernel takes {w}", arg=name,
                                          rule="shape")
                spec_shape = tuple(ann.shape)
            strides = getattr(ann, "strides", None)  # a strided view's (dropped: the launch then refused it)
            types.append(tensor_cls(dtype, spec_shape, strides) if strides is not None else
                         tensor_cls(dtype, spec_shape))
            key.append(("tensor", _dtype_name(dtype), spec_shape) + ((strides,) if strides is not None else ()))
        else:  # a scalar type class
            types.append(ann)
            key.append(("scalar", getattr(ann, "__name__", repr(ann))))
    if len(args) > len(sig):
        t, k = _extra_types(kernel, args[len(sig):], tensor_cls)
        types += t
        key += k
    const_key = tuple(sorted((k, _hashable(v, k)) for k, v in consts.items()))
    return types, (tuple(key), const_key)


def _source_id(kernel) -> str | None:
    """The kernel's identity across processes: its qualified name and its
    `source_fingerprint` (nvtma's kernel-shaping sources, the file defining
    it, the values it closes over). None when the file cannot be read or a
    value it closes over has no identity across processes (then only the
    in-memory memo is used)."""
    from .dsl.kernel import closure_digest, source_fingerprint
    fn = getattr(kernel, "fn", None)
    try:
        Path(inspect.getsourcefile(fn)).stat()
    except (TypeError, OSError):
        return None
    if not closure_digest(fn)[1]:
        return None
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}:{source_fingerprint(fn)}" \
           f":{_dialect_digest()}"


_dialect_sources = []


def _dialect_digest() -> str:
    """The hand-written dialect bindings' digest (dialects/nvtma.py spells the TMA atom types): where the JIT
    compiles they are there, unlike in the runtime-only wheel whose artifact keys leave them out."""
    if not _dialect_sources:
        p = Path(__file__).resolve().parent / "dialects" / "nvtma.py"
        try:
            _dialect_sources.append(hashlib.sha256(p.read_bytes()).hexdigest()[:16])
        except OSError:
            _dialect_sources.append("none")
    return _dialect_sources[0]


def compiled(kernel, param_types, key, consts):
    """The compiled module of one specialization: from memory, from the disk
    cache, or built now (and stored in both)."""
    from .compiler import CompiledModule, cache_files, compile as _compile, load_cached
    per_kernel = _memo.setdefault(kernel, {})
    hit = per_kernel.get(key)
    if hit is not None:
        stats["memory_hits"] += 1
        return hit
    arch = getattr(kernel, "arch", "sm_90a")
    ptx = getattr(kernel, "ptx", None)
    d = _cache.directory()
    source = _source_id(kernel) if d is not None else None
    disk_key = None
    module = None
    if source is not None:
        h = hashlib.sha256()
        # (the decorator's block, cluster and pdl too: a factory's kernels may differ only there)
        launch = kernel.launch_key(consts) if hasattr(kernel, "launch_key") else None
        for part in ("jit", _cache.build_id(d), _cache.tool_id(), source, kernel.name, repr(key), arch, repr(ptx),
                     repr(launch)):
            h.update(str(part).encode() + b"\0")
        disk_key = h.hexdigest()
        module = load_cached(d, disk_key)
        if module is not None:
            stats["disk_hits"] += 1
    if module is None:
        built = kernel.build(param_types=param_types, **consts)
        stats["builds"] += 1
        module = _compile(built.ir, arch=arch, ptx_version=ptx)
        rec = module.records.get("kernels", {}).get(built.name)
        if rec is not None and rec.get("launch") is None:
            # until the record writer carries the launch configuration
            block = tuple(built.block) + (1,) * (3 - len(tuple(built.block)))
            cluster = None
            if built.cluster:
                cluster = list(tuple(built.cluster) + (1,) * (3 - len(tuple(built.cluster))))
            rec["launch"] = {"block": list(block), "cluster": cluster, "smem": 0}
            libraries = module.libraries
            module = CompiledModule(ir=module.ir, ptx=module.ptx, cubin=module.cubin, records=module.records,
                                    arch=module.arch)
            module.libraries = libraries
        if disk_key is not None:
            _cache.store(d, disk_key, cache_files(module))
    name = kernel.name if kernel.name in module.kernels else next(iter(module.kernels))
    entry = (module.kernel(name), module)
    per_kernel[key] = entry
    return entry


def launch(kernel, args, consts, launch_kwargs):
    """Specializes, compiles once, launches (see the module docstring)."""
    bad = sorted(set(launch_kwargs) - set(_LAUNCH_KEYS) - {"encoder"})
    if bad:
        raise LaunchError(f"unknown launch option {bad[0]!r} (options: {', '.join(_LAUNCH_KEYS)})", arg=bad[0],
                          rule="launch-config")
    param_types, key = specialize(kernel, args, consts)
    k, _ = compiled(kernel, param_types, key, consts)
    k(*args, **launch_kwargs)
    return k


# --------------------------------------------------------------------------- torch custom ops

def _torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("nvtma.jit.custom_op needs torch") from e
    return torch


def custom_op(name: str, kernel, *, mutates_args, fake=None, grid=None, consts=None, device_types="cuda",
              **launch_kwargs):
    """Registers `kernel` as the torch custom op `name` ("namespace::op").

    `kernel` is a DSL kernel (its signature gives the op's schema: tensors
    and ints/floats; it is launched through ``launch`` with `grid`, `consts`
    and `launch_kwargs`) or a Python function with annotated parameters that
    launches it. `mutates_args` names the tensors the kernel writes. The op
    returns None unless `fake` is given: `fake` is the fake (meta)
    implementation for ops that return tensors; the default fake, for ops
    that only write their arguments, does nothing. Returns the op
    (``torch.ops.namespace.op``)."""
    torch = _torch()
    if hasattr(kernel, "signature") and hasattr(kernel, "build"):
        consts = dict(consts or {})
        params = []
        for pname, ann in _signature(kernel):
            if _is_tensor_ann(ann):
                t = torch.Tensor
            else:
                t = float if "float" in getattr(ann, "__name__", "").lower() else int
            params.append(inspect.Parameter(pname, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=t))
        opts = dict(launch_kwargs)
        if grid is not None:
            opts["grid"] = grid

        def impl(*args):
            launch(kernel, args, consts, opts)
        impl.__signature__ = inspect.Signature(params, return_annotation=None)
        impl.__name__ = kernel.name
    else:
        fn = kernel

        def impl(*args):
            fn(*args)
        sig = inspect.signature(fn)
        params = []
        for p in sig.parameters.values():
            ann = p.annotation
            if ann is inspect.Parameter.empty:
                ann = torch.Tensor
            params.append(p.replace(annotation=ann))
        impl.__signature__ = inspect.Signature(params, return_annotation=None)
        impl.__name__ = getattr(fn, "__name__", "nvtma_op")
    if isinstance(mutates_args, str):
        mutates_args = (mutates_args,)
    op = torch.library.custom_op(name, mutates_args=tuple(mutates_args), device_types=device_types)(impl)

    if fake is None:
        def fake(*args):
            return None
    op.register_fake(fake)
    return op
