"""Build-time errors and the user's source locations.

Every op the DSL builds carries the file:line of the user's code that asked
for it (the first frame outside the nvtma package), so MLIR's verifier
diagnostics and KernelBuildError point at the kernel's source, not at ours.
"""

from __future__ import annotations

import functools
import os
import sys

from .._lazy import lazy

ir = lazy("nvtma.ir")

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# kernels written in the language (the kernel library) are user code too
_USER_DIRS = (os.path.join(_PKG, "kernels") + os.sep,)


class KernelBuildError(ValueError):
    """The kernel function could not be turned into IR. `where` is the
    user's file:line, `rule` names the broken rule, `message` is the text
    without the file:line (for an error that re-raises it elsewhere)."""

    def __init__(self, message: str, *, where: str | None = None, rule: str = "build"):
        self.where = where if where is not None else user_site()
        self.rule = rule
        self.message = message
        super().__init__(f"{self.where}: {message}" if self.where else message)


def user_frame():
    """The innermost frame whose code is not part of nvtma (the kernel author's line)."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if (not fn.startswith(_PKG) or fn.startswith(_USER_DIRS)) and "importlib" not in fn \
                and not fn.endswith("contextlib.py") and not _generated_for_nvtma(f):  # WarpRole & co: contextmanagers
            return f
        f = f.f_back
    return None


def _generated_for_nvtma(f) -> bool:
    """A method Python generated for one of nvtma's classes (a dataclass's
    __init__ / __post_init__ caller, file "<string>"): not the user's line."""
    if not f.f_code.co_filename.startswith("<"):
        return False
    s = f.f_locals.get("self")
    return s is not None and (type(s).__module__ or "").startswith("nvtma")


def user_site() -> str | None:
    f = user_frame()
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else None


def python_int(v) -> bool:
    """Whether `v` is a Python int (not a bool): what a value fixed at build time must be."""
    return isinstance(v, int) and not isinstance(v, bool)


def show(x) -> str:
    """`x` for an error message: a Python int past 30 digits by its size (str() of one past 4,300 digits
    raises ValueError, and the digits say nothing), tuples and lists element by element."""
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 10 ** 30:
        return f"<an int of {x.bit_length()} bits>"
    if isinstance(x, (tuple, list)):
        inner = ", ".join(show(v) for v in x)
        return f"({inner},)" if isinstance(x, tuple) and len(x) == 1 else f"({inner})" if isinstance(x, tuple) \
            else f"[{inner}]"
    return repr(x)


def fail(message: str, rule: str = "build"):
    raise KernelBuildError(message, rule=rule)


def user_location():
    """An MLIR file:line location of the user's frame (unknown outside one;
    the pinned one inside ``pinned_location``)."""
    if _Pinned.where is not None:
        return ir.Location.file(*_Pinned.where, 1)
    from .kernel import _KernelState
    if _KernelState.current is None:  # not MLIR's "requires a Context" (or ops built into a stale context)
        raise KernelBuildError("this DSL operation builds IR: call it inside an @nvtma.dsl.kernel function",
                               rule="outside-kernel")
    f = user_frame()
    if f is None:
        return ir.Location.unknown()
    return ir.Location.file(f.f_code.co_filename, f.f_lineno, 1)


def user_op(fn):
    """Ops built inside `fn` get the caller's source location; nested DSL
    calls keep the outermost (the user's) one."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _Depth.n:
            return fn(*args, **kwargs)
        _Depth.n += 1
        try:
            with user_location():
                return fn(*args, **kwargs)
        finally:
            _Depth.n -= 1

    return wrapper


class _Depth:
    n = 0


class _Pinned:
    where = None


class pinned_location:
    """Ops built inside carry (file, line) `where`, not the caller's line: for
    code the DSL builds on its own once the kernel function has returned (the
    kernel's exit hooks), whose caller is not the kernel's author."""

    def __init__(self, where):
        self.where = where

    def __enter__(self):
        self.saved, _Pinned.where = _Pinned.where, self.where

    def __exit__(self, *exc):
        _Pinned.where = self.saved


class user_code:
    """Calls back into the kernel author's code from inside a DSL helper:
    the ops it builds get their own locations again."""

    def __enter__(self):
        self.saved, _Depth.n = _Depth.n, 0

    def __exit__(self, *exc):
        _Depth.n = self.saved
