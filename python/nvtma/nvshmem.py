"""One-sided communication between GPUs inside DSL kernels, with TVM TIRx's
``Tx.nvshmem`` names: calls into NVSHMEM's device library.

    from nvtma import cpasync, dsl, nvshmem

    @dsl.kernel(block=(128,))
    def ring(x: dsl.Tensor("bf16", (4096,)), y: dsl.Tensor("bf16", (4096,)), sig: dsl.Tensor("u64", (1,))):
        me, n = nvshmem.my_pe(), nvshmem.n_pes()
        nvshmem.putmem_signal_nbi.block(y, x, 8192, sig, 1, "set", (me + 1) % n)
        with dsl.if_(dsl.thread_idx() == 0):
            nvshmem.signal_wait_until(sig, "eq", 1)

Each helper emits an ``llvm.call`` to the NVSHMEM function of the same name
(declared once per kernel, with the signature of NVSHMEM's device headers)
and marks the kernel's gpu.module ``nvtma.link = ["nvshmem"]``: nvtma.compile
then links NVSHMEM's device bitcode (``libnvshmem_device*.bc`` of the
``nvidia-nvshmem-cu13`` wheel) into the module before LLVM makes PTX, so the
cubin needs no device linker. Kernels that call none of these are built
exactly as before.

Pointers are a ``dsl.TensorValue`` (its first element) or a pointer value
such as ``cpasync.address_of(t, [i])``; the remote side of a put or get must
be a symmetric address (a tensor of ``nvtma.runtime.nvshmem``'s heap). The
``.warp`` / ``.block`` variants are called by every thread of the warp /
CTA with the same arguments. The host side (init, symmetric tensors, module
init, collective launch) is ``nvtma.runtime.nvshmem``.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from ._lazy import lazy
from .dsl import types
from .dsl.errors import fail, user_op
from .dsl.numeric import Boolean, Int32, Int64, Numeric, Uint64, Val, as_value

ir = lazy("nvtma.ir")
llvm = lazy("nvtma.dialects.llvm")

__all__ = ["my_pe", "n_pes", "quiet", "fence", "barrier_all", "signal_op", "signal_wait_until", "wait_until",
           "getmem_nbi", "putmem_nbi", "putmem_signal_nbi", "SIGNAL_SET", "SIGNAL_ADD", "CMP", "LIBRARY",
           "bitcode_library"]

LIBRARY = "nvshmem"             # the name in a gpu.module's nvtma.link list
SIGNAL_SET, SIGNAL_ADD = 9, 10  # nvshmemx_signal_op_t (device_host_transport/nvshmem_common_transport.h)
CMP = {"eq": 0, "ne": 1, "gt": 2, "le": 3, "lt": 4, "ge": 5,  # nvshmemx_cmp_type_t (nvshmem_constants.h)
       "==": 0, "!=": 1, ">": 2, "<=": 3, "<": 4, ">=": 5}

# NVSHMEM's device functions, as its headers declare them (C types in LLVM
# spelling: ptr is a generic void*, size_t i64, int i32, uint64_t i64)
_SIGNATURES = {
    "nvshmem_my_pe": ("i32", ()),
    "nvshmem_n_pes": ("i32", ()),
    "nvshmem_quiet": (None, ()),
    "nvshmem_fence": (None, ()),
    "nvshmem_barrier_all": (None, ()),
    "nvshmemx_barrier_all_warp": (None, ()),
    "nvshmemx_barrier_all_block": (None, ()),
    # (uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
    "nvshmemx_signal_op": (None, ("ptr", "i64", "i32", "i32")),
    # (uint64_t *sig_addr, int cmp, uint64_t cmp_value) -> uint64_t
    "nvshmem_signal_wait_until": ("i64", ("ptr", "i32", "i64")),
    # (T *ivar, int cmp, T cmp_value)
    "nvshmem_int32_wait_until": (None, ("ptr", "i32", "i32")),
    "nvshmem_uint32_wait_until": (None, ("ptr", "i32", "i32")),
    "nvshmem_int64_wait_until": (None, ("ptr", "i32", "i64")),
    "nvshmem_uint64_wait_until": (None, ("ptr", "i32", "i64")),
}
for _g in ("", "_warp", "_block"):
    _x = "nvshmemx" if _g else "nvshmem"
    # (void *dest, const void *source, size_t nelems, int pe)
    _SIGNATURES[f"{_x}_getmem_nbi{_g}"] = (None, ("ptr", "ptr", "i64", "i32"))
    _SIGNATURES[f"{_x}_putmem_nbi{_g}"] = (None, ("ptr", "ptr", "i64", "i32"))
    # (void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
    _SIGNATURES[f"{_x}_putmem_signal_nbi{_g}"] = (None, ("ptr", "ptr", "i64", "ptr", "i64", "i32", "i32"))


def _op(fn):
    """user_op that first checks it is inside a kernel (a KernelBuildError,
    not MLIR's missing-context error, outside one)."""
    inner = user_op(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from .dsl.kernel import current_kernel
        current_kernel()
        return inner(*args, **kwargs)

    return wrapper


def _mlir_type(spelling):
    if spelling == "ptr":
        return llvm.PointerType.get()
    return ir.IntegerType.get_signless(int(spelling[1:]))


def _declare(name: str):
    """The callee `name`, declared once in the kernel's gpu.module, which is
    marked to link NVSHMEM's device library."""
    from . import dsl
    k = dsl.current_kernel()
    key = ("nvshmem", name)
    if key in k.scratch:
        return
    module = k.func.operation.parent
    result, params = _SIGNATURES[name]
    ftype = types.llvm_function(_mlir_type(result) if result else None, [_mlir_type(p) for p in params])
    with ir.InsertionPoint(k.func.operation), ir.Location.unknown():  # before the kernel, in call order
        llvm.LLVMFuncOp(name, ir.TypeAttr.get(ftype))
    link = types.attribute_name("link")
    links = module.attributes[link] if link in module.attributes else None
    names = [ir.StringAttr(a).value for a in ir.ArrayAttr(links)] if links is not None else []
    if LIBRARY not in names:
        module.attributes[link] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in names + [LIBRARY]])
    k.scratch[key] = True


def _call(name: str, *args):
    _declare(name)
    result, _ = _SIGNATURES[name]
    op = llvm.CallOp(_mlir_type(result) if result else None, list(args), [], [],
                     callee=ir.FlatSymbolRefAttr.get(name))
    return op.result if result else None


def _pointer(p, what):
    """A generic !llvm.ptr to a tensor's first element or from a pointer value."""
    from . import dsl
    if isinstance(p, dsl.TensorValue):
        from .cpasync import address_of
        p = address_of(p)  # its bytes from their physical start
    v = p.value if isinstance(p, Val) else p
    if not isinstance(v, ir.Value) or not isinstance(v.type, llvm.PointerType):
        fail(f"nvshmem: {what} must be a tensor or a pointer (cpasync.address_of), got {p!r}", rule="nvshmem")
    if llvm.PointerType(v.type).address_space != 0:
        v = llvm.AddrSpaceCastOp(llvm.PointerType.get(), v).result
    return v


def _int(x, cls, what):
    """An integer operand of `cls`'s width: a Python int (signed or unsigned
    range) or an integer DSL value (converted)."""
    if isinstance(x, bool) or not isinstance(x, (int, Numeric)) or \
            (isinstance(x, Numeric) and (x.is_float or type(x) is Boolean)):
        fail(f"nvshmem: {what} must be an integer, got {x!r}", rule="nvshmem")
    if isinstance(x, int):
        w = cls.width
        if not -(1 << (w - 1)) <= x < 1 << w:
            fail(f"nvshmem: {what} {x} does not fit in {w} bits", rule="nvshmem")
        return as_value(x - (1 << w) if x >= 1 << (w - 1) else x, Int64 if w == 64 else Int32)
    return as_value(x if x.width == cls.width else x.to(cls))


def _sig_op(op):
    ops = {"set": SIGNAL_SET, "add": SIGNAL_ADD}
    if isinstance(op, str):
        if op not in ops:
            fail(f"nvshmem: signal op {op!r}: 'set' or 'add'", rule="nvshmem")
        op = ops[op]
    if op not in (SIGNAL_SET, SIGNAL_ADD):
        fail(f"nvshmem: signal op {op!r}: 'set' ({SIGNAL_SET}) or 'add' ({SIGNAL_ADD})", rule="nvshmem")
    return as_value(op, Int32)


def _cmp(cmp):
    if isinstance(cmp, str):
        if cmp not in CMP:
            fail(f"nvshmem: comparison {cmp!r}: one of {', '.join(CMP)}", rule="nvshmem")
        cmp = CMP[cmp]
    if isinstance(cmp, bool) or not isinstance(cmp, int) or not 0 <= cmp <= 5:
        fail(f"nvshmem: comparison {cmp!r}: one of {', '.join(CMP)}", rule="nvshmem")
    return as_value(cmp, Int32)


# --------------------------------------------------------------------------- who am I

@_op
def my_pe():
    """This PE's number, 0 .. n_pes() - 1 (nvshmem_my_pe)."""
    return Int32(_call("nvshmem_my_pe"))


@_op
def n_pes():
    """How many PEs run the program (nvshmem_n_pes)."""
    return Int32(_call("nvshmem_n_pes"))


# --------------------------------------------------------------------------- ordering and synchronization

@_op
def quiet():
    """Wait until every put, get and signal this thread issued is complete
    (nvshmem_quiet)."""
    _call("nvshmem_quiet")


@_op
def fence():
    """Order this thread's puts and signals to each PE (nvshmem_fence)."""
    _call("nvshmem_fence")


class _Grouped:
    """A thread-level NVSHMEM call with `.warp` and `.block` variants, as in
    TIRx (``Tx.nvshmem.putmem_nbi.warp(...)``)."""

    def __init__(self, thread, warp, block, doc):
        self._fns = {"thread": thread, "warp": warp, "block": block}
        self.__doc__ = doc
        self.__name__ = thread.__name__

    def __call__(self, *args, **kwargs):
        return self._fns["thread"](*args, **kwargs)

    @property
    def warp(self):
        return self._fns["warp"]

    @property
    def block(self):
        return self._fns["block"]

    def __repr__(self):
        return f"<nvtma.nvshmem.{self.__name__}>"


def _barrier(name):
    @_op
    def op():
        _call(name)
    op.__name__ = name
    return op


barrier_all = _Grouped(_barrier("nvshmem_barrier_all"), _barrier("nvshmemx_barrier_all_warp"),
                       _barrier("nvshmemx_barrier_all_block"),
                       """Every PE meets here, after its puts and gets are complete
    (nvshmem_barrier_all; `.warp` / `.block`: the whole warp / CTA calls it).
    One call per PE: from one thread, warp or CTA of the grid. Needs a
    collective launch (nvtma.runtime.nvshmem.launch) when the grid has more
    than one CTA.""")


# --------------------------------------------------------------------------- signals and waits

@_op
def signal_op(sig_addr, signal, sig_op, pe):
    """Update the 64-bit signal word `sig_addr` on PE `pe`: 'set' it to
    `signal` or 'add' `signal` (nvshmemx_signal_op)."""
    _call("nvshmemx_signal_op", _pointer(sig_addr, "sig_addr"), _int(signal, Uint64, "signal"), _sig_op(sig_op),
          _int(pe, Int32, "pe"))


@_op
def signal_wait_until(sig_addr, cmp, value):
    """Wait until the local signal word `sig_addr` compares `cmp` ('eq',
    'ne', 'gt', 'le', 'lt', 'ge') to `value`; returns the word
    (nvshmem_signal_wait_until)."""
    return Uint64(_call("nvshmem_signal_wait_until", _pointer(sig_addr, "sig_addr"), _cmp(cmp),
                        _int(value, Uint64, "value")))


_WAIT = {("i", 32): "nvshmem_int32_wait_until", ("u", 32): "nvshmem_uint32_wait_until",
         ("i", 64): "nvshmem_int64_wait_until", ("u", 64): "nvshmem_uint64_wait_until"}


@_op
def wait_until(ivar, cmp, value):
    """Wait until the local symmetric variable `ivar` (a 32/64-bit integer
    tensor: its first element; or a pointer, typed by `value`, a DSL
    integer) compares `cmp` to `value` (nvshmem_{int,uint}{32,64}_wait_until)."""
    from . import dsl
    if isinstance(ivar, dsl.TensorValue):
        cls = ivar.dtype
    elif isinstance(value, Numeric):
        cls = type(value)
    else:
        cls = None
    if cls is None or cls.is_float or cls.width not in (32, 64) or cls is Boolean:
        fail(f"nvshmem.wait_until: the variable must be a 32- or 64-bit integer tensor, got "
             f"{getattr(cls, '__name__', ivar)!r}", rule="nvshmem")
    name = _WAIT[("i" if cls.signed else "u", cls.width)]
    _call(name, _pointer(ivar, "ivar"), _cmp(cmp), _int(value, Int64 if cls.width == 64 else Int32, "value"))


# --------------------------------------------------------------------------- one-sided data movement

def _rma(kind):
    def make(group):
        x = "nvshmemx" if group != "thread" else "nvshmem"
        g = "" if group == "thread" else f"_{group}"
        name = f"{x}_{kind}{g}"

        if kind == "putmem_signal_nbi":
            @_op
            def op(dest, source, nbytes, sig_addr, signal, sig_op, pe):
                _call(name, _pointer(dest, "dest"), _pointer(source, "source"), _int(nbytes, Int64, "nbytes"),
                      _pointer(sig_addr, "sig_addr"), _int(signal, Uint64, "signal"), _sig_op(sig_op),
                      _int(pe, Int32, "pe"))
        else:
            @_op
            def op(dest, source, nbytes, pe):
                _call(name, _pointer(dest, "dest"), _pointer(source, "source"), _int(nbytes, Int64, "nbytes"),
                      _int(pe, Int32, "pe"))
        op.__name__ = op.__qualname__ = name
        return op

    return make


getmem_nbi = _Grouped(*(_rma("getmem_nbi")(g) for g in ("thread", "warp", "block")),
                      """Start copying `nbytes` from symmetric `source` on PE `pe` to local
    `dest`; complete after quiet() (nvshmem_getmem_nbi, .warp, .block).""")
putmem_nbi = _Grouped(*(_rma("putmem_nbi")(g) for g in ("thread", "warp", "block")),
                      """Start copying `nbytes` from local `source` to symmetric `dest` on PE
    `pe`; complete after quiet() (nvshmem_putmem_nbi, .warp, .block).""")
putmem_signal_nbi = _Grouped(*(_rma("putmem_signal_nbi")(g) for g in ("thread", "warp", "block")),
                             """putmem_nbi, then update the signal word `sig_addr` on PE `pe`
    ('set' / 'add' `signal`) once the data has landed there: the receiver
    waits with signal_wait_until (nvshmem_putmem_signal_nbi, .warp, .block).""")


# --------------------------------------------------------------------------- the device library

_BC_RE = re.compile(r"^libnvshmem_device_sm_(\d+)\.bc$")


def _candidate_dirs():
    """Folders that may hold NVSHMEM's device bitcode: the nvidia-nvshmem
    wheel's lib/ (through cuda-pathfinder, then the package), beside its headers."""
    dirs = []
    try:
        from cuda.pathfinder import find_bitcode_lib
        dirs.append(Path(find_bitcode_lib("nvshmem_device")).parent)
    except Exception:  # an old cuda-pathfinder, or only per-arch files (NVSHMEM 3.5+)
        pass
    try:
        from cuda.pathfinder import find_nvidia_header_directory
        h = find_nvidia_header_directory("nvshmem")
        if h:
            dirs.append(Path(h).parent / "lib")
    except Exception:
        pass
    try:
        import importlib.util
        spec = importlib.util.find_spec("nvidia.nvshmem")
        for p in (spec.submodule_search_locations or []) if spec else []:
            dirs.append(Path(p) / "lib")
    except Exception:
        pass
    return dirs


def _in_dir(d: Path, sm: int):
    """The bitcode in `d` for sm_<sm>: the newest per-arch file not newer
    than the chip, else the generic libnvshmem_device.bc."""
    if not d.is_dir():
        return None
    per_arch = sorted((int(m.group(1)), d / n) for n in os.listdir(d) if (m := _BC_RE.match(n)))
    fits = [p for a, p in per_arch if a <= sm]
    if fits:
        return fits[-1]
    generic = d / "libnvshmem_device.bc"
    return generic if generic.is_file() else None


def bitcode_library(arch: str) -> Path:
    """NVSHMEM's device bitcode for `arch` ('sm_90a'): $NVTMA_NVSHMEM_BITCODE
    (a .bc file, or a folder of them), else the nvidia-nvshmem wheel's.
    FileNotFoundError names what was looked for."""
    m = re.match(r"^sm_(\d+)", arch or "")
    sm = int(m.group(1)) if m else 0
    env = os.environ.get("NVTMA_NVSHMEM_BITCODE")
    if env:
        p = Path(env)
        if p.is_file():
            return p
        found = _in_dir(p, sm) or _in_dir(p / "lib", sm)
        if found:
            return found
        raise FileNotFoundError(f"NVTMA_NVSHMEM_BITCODE={env} is neither a .bc file nor a folder with "
                                f"libnvshmem_device_sm_<NN>.bc or libnvshmem_device.bc")
    looked = []
    for d in _candidate_dirs():
        found = _in_dir(d, sm)
        if found:
            return found
        looked.append(str(d))
    raise FileNotFoundError("no NVSHMEM device bitcode (libnvshmem_device_sm_<NN>.bc or libnvshmem_device.bc)"
                            + (f" in {', '.join(looked)}" if looked else "")
                            + ": pip install nvidia-nvshmem-cu13, or set NVTMA_NVSHMEM_BITCODE to the file")
