"""Autotuning over build-time constants, descriptor fields included.

    @nvtma.autotune(configs=[dict(BOX=(64, 128), STAGES=4, L2="l2_256b"),
                             dict(BOX=(128, 64), STAGES=6, L2="l2_128b")], key=["x"])
    @dsl.kernel
    def copy(x: dsl.Tensor(None, None), y: dsl.Tensor(None, None), *, BOX, STAGES, L2): ...

    copy(x, y, grid=lambda x, y, **cfg: (x.shape[0] // cfg["BOX"][0],))

On the first call for a key (the named arguments: a tensor contributes its
element type, shape, strides and 16-byte alignment, a scalar its value)
every config is compiled, run once, then timed on the GPU: CUDA events
around one launch, the L2 flushed before each trial by writing a scratch
buffer twice the L2's size, best of ``rounds``. The winner is kept in
memory and on disk (per device name, key and kernel identity) in the
compile cache's directory (``autotune/``), so a later process reuses it
without timing. ``trials`` counts timed launches.

Under CUDA graph capture on torch's current stream nothing can be timed: a
call whose key has a winner (timed in this process, or stored) launches it,
and one without is a ``LaunchError`` (rule ``autotune``) that asks for a
call outside the capture first, as torch's warm-up runs make.
``known_config(*args)`` is the winner without timing, or None.

A stored winner is only a choice among the configs given, so a file another
process wrote (or a corrupt one) can at worst pick another valid config; a
file naming no listed config is ignored and the key is tuned again.

Tuning runs the kernel on the call's own arguments, several times per
config: a kernel that updates an argument in place (``y += ...``, atomics)
names it in ``restore=`` (names or positions): such arguments are copied
before tuning and put back before every trial and before the call's own
launch (Triton's ``restore_value``).

A winner is stored on disk only for a kernel whose identity holds across
processes: ``name=`` where given (the caller's word for it), else a DSL
kernel's source fingerprint (its file, closure and nvtma's sources), or a
launcher factory's module, code and closure; others (defined at a prompt,
closing over opaque objects) are tuned once a process.

``Autotuner(fn, configs, key)`` also takes, instead of a DSL kernel, a
function ``fn(config) -> launcher(*args, **launch_kwargs)``; ``timer=``
replaces the GPU timing (``timer(run) -> seconds``) for tests.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import secrets
import sys
import types
from pathlib import Path

from .runtime import args as _args
from .runtime import cache as _cache
from .runtime.errors import LaunchError

__all__ = ["autotune", "Autotuner"]


def _jsonable(config: dict) -> dict:
    try:
        return json.loads(json.dumps(config, sort_keys=True))
    except (TypeError, ValueError):
        raise LaunchError(f"autotune config {config!r} must be JSON-serializable (ints, strings, lists)",
                          rule="autotune") from None


def _same(a, b) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


class Autotuner:
    def __init__(self, fn, configs, key, *, name: str | None = None, rounds: int = 5, timer=None,
                 directory=None, restore=()):
        if not configs:
            raise LaunchError("autotune needs at least one config", rule="autotune")
        self.fn = fn
        self.configs = [dict(c) for c in configs]
        self._json = [_jsonable(c) for c in self.configs]
        self.key = key
        self.rounds = max(1, int(rounds))
        self.timer = timer
        self.trials = 0
        self._best = {}
        self._launchers = {}
        self._dir = Path(directory) if directory is not None else None
        self.is_dsl = hasattr(fn, "signature") and hasattr(fn, "build")
        self.name = name or getattr(fn, "name", None) or getattr(fn, "__qualname__", "kernel")
        self._named = name is not None  # a name given is the caller's word for the kernel's identity
        if self.is_dsl:
            self.argnames = [n for n, _ in fn.signature()]
        else:
            self.argnames = None
        self._identity = None
        self.restore = tuple(restore)

    # ------------------------------------------------------------------ key
    def key_of(self, args) -> list:
        """The tuning key of these arguments (JSON-able)."""
        if callable(self.key):
            raw = list(self.key(*args))
        else:
            raw = []
            for k in self.key:
                if isinstance(k, int) and not isinstance(k, bool):
                    i = k
                elif isinstance(k, str) and self.argnames is not None and k in self.argnames:
                    i = self.argnames.index(k)
                else:
                    raise LaunchError(f"autotune key {k!r} names no argument ({self.argnames or 'use positions'})",
                                      rule="autotune")
                if not 0 <= i < len(args):
                    raise LaunchError(f"autotune key {k!r}: only {len(args)} arguments", rule="autotune")
                raw.append(_key_part(args[i]))
        return json.loads(json.dumps(raw, default=str))

    def identity(self) -> str | None:
        """The kernel's identity across processes (None: it has none, and winners stay in memory). Two
        launcher factories of one qualified name in two modules shared their stored winners."""
        if self._identity is None:
            from .dsl.kernel import closure_digest, source_fingerprint
            if self._named:
                ident = ""
            elif self.is_dsl:
                from .jit import _source_id
                ident = _source_id(self.fn)
            else:
                fn = self.fn
                stable = inspect.isfunction(fn) and closure_digest(fn)[1]
                ident = f"{fn.__module__}.{fn.__qualname__}:{source_fingerprint(fn)}" if stable else None
            if ident is None:
                self._identity = ""
            else:
                h = hashlib.sha256()
                h.update(f"{self.name}\0{ident}\0".encode())
                h.update(json.dumps(self._json, sort_keys=True).encode())
                self._identity = h.hexdigest()
        return self._identity or None

    # ------------------------------------------------------------------ disk
    def directory(self) -> Path | None:
        env = os.environ.get("NVTMA_AUTOTUNE_DIR", "").strip()
        if self._dir is not None or env:
            d = self._dir if self._dir is not None else Path(env)
            try:
                d.mkdir(parents=True, exist_ok=True, mode=0o700)
            except OSError:
                return None
            return None if _cache.trust_problem(d) else d
        base = _cache.directory()
        if base is None:
            return None
        d = base / "autotune"
        try:
            d.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            return None
        return None if _cache.trust_problem(d) else d

    def _file(self, device_name: str, key) -> Path | None:
        d = self.directory()
        if d is None or self.identity() is None:
            return None
        h = hashlib.sha256(json.dumps([self.identity(), device_name, key]).encode()).hexdigest()
        return d / f"{h}.json"

    def _load(self, path: Path | None):
        if path is None:
            return None
        raw = _cache._read_private(path, 1 << 20)
        if raw is None:
            return None
        try:
            data = json.loads(raw)
            cfg = data["config"]
        except (ValueError, KeyError, TypeError, RecursionError):
            return None
        for i, c in enumerate(self._json):
            if _same(c, cfg):
                return i
        return None

    def _store(self, path: Path | None, index: int, timings, device_name, key):
        if path is None:
            return
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump({"kernel": self.name, "device": device_name, "key": key, "config": self._json[index],
                           "seconds": timings}, f)
            os.replace(tmp, path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass

    # ------------------------------------------------------------------ running
    def _launcher(self, index: int):
        run = self._launchers.get(index)
        if run is None:
            cfg = self.configs[index]
            if self.is_dsl:
                from . import jit
                kernel = self.fn

                def run(*args, **kw):
                    return jit.launch(kernel, args, cfg, _resolve_grid(kw, args, cfg))
            else:
                inner = self.fn(cfg)

                def run(*args, **kw):
                    return inner(*args, **_resolve_grid(kw, args, cfg))
            self._launchers[index] = run
        return run

    def best_index(self, args, launch_kwargs=None, *, tune=True) -> int | None:
        """The winner's index for these arguments: this process's, else the one stored, else (tune=False:
        None) every config timed now and the fastest stored."""
        key = self.key_of(args)
        memo_key = json.dumps([_device_index(args), key])  # (two GPU models in a process: each its winner)
        hit = self._best.get(memo_key)
        if hit is not None:
            return hit
        device_name = _device_name(args)
        path = self._file(device_name, key)
        index = self._load(path)
        if index is None:
            if not tune:
                return None
            if _capturing():
                # (events, synchronization and the L2 flush inside a capture would end it with CUDA's error)
                raise LaunchError(f"autotune {self.name}: no winner yet for key {key}, and a CUDA graph is being "
                                  "captured on the current stream, where configs cannot be timed: make one call "
                                  "outside the capture first (as torch's warm-up runs do)", rule="autotune")
            index, timings = self._tune(args, launch_kwargs or {})
            self._store(path, index, timings, device_name, key)
        self._best[memo_key] = index
        return index

    def best_config(self, *args) -> dict:
        return self._json[self.best_index(args)]

    def known_config(self, *args) -> dict | None:
        """The winner for these arguments if one was timed (in this process or stored), without timing: None
        otherwise (for a caller that cannot time now, such as one under CUDA graph capture)."""
        index = self.best_index(args, tune=False)
        return None if index is None else self._json[index]

    def _saved(self, args):
        """(position, copy) of each argument named in restore= (what trials would change in place)."""
        out = []
        for r in self.restore:
            i = self.argnames.index(r) if isinstance(r, str) and self.argnames and r in self.argnames else r
            if not isinstance(i, int) or not 0 <= i < len(args):
                raise LaunchError(f"autotune restore={r!r} names no argument", rule="autotune")
            out.append((i, args[i].clone() if hasattr(args[i], "clone") else args[i].copy()))
        return out

    def _tune(self, args, launch_kwargs):
        saved = self._saved(args)

        def put_back():
            for i, copy in saved:
                if hasattr(args[i], "copy_"):
                    args[i].copy_(copy)
                else:
                    args[i][...] = copy
        if self.timer is not None:  # (a test's timer(run): the copies inside each run)
            timer = self.timer
            wrap = saved
        else:  # the GPU timer puts them back before each timed launch, outside its events
            gpu = _gpu_timer(args, self.rounds)
            timer = (lambda run: gpu(run, setup=put_back)) if saved else gpu
            wrap = False
        timings = []
        for i in range(len(self.configs)):
            run = self._launcher(i)

            def trial(run=run):
                if wrap:
                    put_back()
                return run(*args, **launch_kwargs)
            try:
                put_back()
                trial()   # compile and warm up outside the timing
                t = timer(trial)
                self.trials += 1
            except LaunchError as e:
                if e.rule in ("driver",):
                    raise
                t = float("inf")   # a config that cannot launch these arguments loses
            timings.append(t)
        put_back()  # the call's own launch sees the arguments as given
        best = min(range(len(timings)), key=lambda i: timings[i])
        if timings[best] == float("inf"):
            raise LaunchError(f"autotune {self.name}: no config launches these arguments", rule="autotune")
        return best, timings

    def __call__(self, *args, **launch_kwargs):
        index = self.best_index(args, launch_kwargs)
        return self._launcher(index)(*args, **launch_kwargs)


def _resolve_grid(kw, args, cfg):
    grid = kw.get("grid")
    if callable(grid):
        kw = dict(kw)
        try:
            params = inspect.signature(grid).parameters.values()
            takes_kw = any(p.kind == p.VAR_KEYWORD for p in params)
        except (TypeError, ValueError):
            takes_kw = False
        kw["grid"] = grid(*args, **cfg) if takes_kw else grid(*args)
    return kw


def _key_part(a):
    """A tensor's element type, shape, strides and 16-byte alignment (a config tuned on a contiguous tensor
    may not launch a transposed or misaligned view), or a scalar's value."""
    tt = _args.torch_tensor_type()
    if tt is not None and isinstance(a, tt):
        return [_args.torch_elem(a.dtype, "key"), list(a.shape), list(a.stride()), a.data_ptr() % 16]
    if hasattr(a, "__cuda_array_interface__") or hasattr(a, "__dlpack__"):
        info = _args.intake(a, "key")
        return [info.elem, list(info.shape), list(getattr(info, "strides", None) or []),
                getattr(info, "ptr", 0) % 16]
    return a


def _device_index(args) -> int:
    tt = _args.torch_tensor_type()
    for a in args:
        if tt is not None and isinstance(a, tt) and a.get_device() >= 0:
            return a.get_device()
    return 0


def _device_name(args) -> str:
    dev = 0
    tt = _args.torch_tensor_type()
    for a in args:
        if tt is not None and isinstance(a, tt) and a.get_device() >= 0:
            dev = a.get_device()
            break
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            return torch.cuda.get_device_name(dev)
        except Exception:
            pass
    try:
        from .runtime import driver
        return driver.device_name(dev)
    except LaunchError:
        return "unknown"


_scratch = {}


def _capturing() -> bool:
    """Whether torch's current stream is capturing a CUDA graph (False without torch loaded)."""
    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.cuda.is_available() and torch.cuda.is_current_stream_capturing())


def _gpu_timer(args, rounds: int):
    """timer(run) -> best of `rounds` GPU times (s) of run(), the L2 flushed
    (a 2x-L2 scratch buffer written) before each."""
    torch = sys.modules.get("torch")
    if torch is None:
        import torch  # noqa: F811  (timing uses torch's events and allocator)
    dev = torch.cuda.current_device()
    for a in args:
        if isinstance(a, torch.Tensor) and a.is_cuda:
            dev = a.device.index
            break
    scratch = _scratch.get(dev)
    if scratch is None:
        l2 = torch.cuda.get_device_properties(dev).L2_cache_size or (50 << 20)
        scratch = _scratch[dev] = torch.empty(max(2 * l2, 100 << 20), dtype=torch.uint8, device=f"cuda:{dev}")

    def timer(run, setup=None):
        best = float("inf")
        with torch.cuda.device(dev):
            for _ in range(rounds):
                if setup is not None:  # (restore=: outside the timing, before the L2 flush)
                    setup()
                scratch.zero_()
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                run()
                end.record()
                end.synchronize()
                best = min(best, start.elapsed_time(end) / 1e3)
        return best
    return timer


def autotune(configs, key, **options):
    """Decorator: an Autotuner over `configs` (dicts of build-time
    constants) keyed by `key` (argument names or positions, or a function of
    the arguments)."""
    def wrap(fn):
        return Autotuner(fn, configs, key, **options)
    return wrap


class _CallableModule(types.ModuleType):
    """`nvtma.autotune(configs=..., key=...)` works whether `nvtma.autotune`
    resolves to this module or to the function."""

    def __call__(self, *args, **kwargs):
        return autotune(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
