"""Launching one kernel: streams, devices, launch configuration, packing.

``Kernel(*args, grid=, block=, cluster=, smem=, stream=)``:

* **stream**: by default PyTorch's current stream on the tensors' device
  (torch's raw getter, no Stream object), else the legacy default stream;
  ``stream=`` takes torch streams, anything with ``__cuda_stream__``
  (cuda.core), cuda.bindings CUstream handles and ints. Launching on the
  current stream is what makes ``torch.cuda.stream(s)`` and
  ``torch.cuda.graph(g)`` capture work.
* **device**: the tensors' device; tensors on two devices are an error.
* **config**: block, cluster and dynamic shared memory come from the
  kernel's record ("launch"); ``grid`` may be a callable of the arguments;
  a block or cluster that contradicts the record is refused.
* **packing**: one 64-byte-aligned parameter buffer per kernel, written in
  place. Per argument the last metadata (shape, strides, dtype, device) is
  kept: when it repeats, only a changed pointer is written (after the
  alignment its record's "align" asks for, and the TMA address checks where
  its "tensormaps" say tensormap.replace writes it into descriptors), and a
  bound descriptor only gets its address field replaced (after the TMA
  address checks); descriptors are re-encoded, and "tensormaps" validated,
  only when the metadata changes. A tensor bound to a descriptor (or that
  tensormap.replace writes into one) with a dim of 2^31 elements or more
  is refused there (rule "coordinate-range"): TMA copies take signed 32-bit
  coordinates, though the driver encodes dims up to 2^32. The fast paths
  take only a repeated shape, so they need no check of their own.
* **entry**: with the abi3 extension a kernel is a FastKernel, whose call
  enters C and repeats the last launch's configuration there when the
  keywords are the same objects and only addresses changed; anything else
  is ``Kernel.__call__``. Configuration keywords are recognized by identity
  only when they cannot change (ints, tuples, None); so are scalar
  arguments (ints, floats, bools, numpy scalars): a 0-d array or tensor is
  packed again on every launch.
"""

from __future__ import annotations

import ctypes
import functools
import numbers
import struct
import sys
from marshal import dumps as _dumps

from . import args as _args
from . import driver
from .errors import LaunchError

MAX_SMEM = 227 * 1024   # an sm_90 block's dynamic shared memory limit (232448 bytes)
DEFAULT_SMEM = 48 * 1024  # what a kernel may use without opting in (static and dynamic: allow_smem)
DESCRIPTOR_BYTES = 128
# encoder=: nvtma's TMA descriptor encoder (cached per shape), or the driver's cuTensorMapEncode* (each launch)
ENCODERS = ("nvtma", "driver")

_MEMREF, _SCALAR, _POINTER = 0, 1, 2
_ADDR = struct.Struct("<Q")
_TWO_ADDR = struct.Struct("<QQ")

_raw_stream = None


def _torch_raw_stream():
    """torch's current-stream getter once torch is imported, else None."""
    global _raw_stream
    if _raw_stream is None:
        torch = sys.modules.get("torch")
        getter = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None) if torch else None
        if getter is None:
            return None
        _raw_stream = getter
    return _raw_stream


def default_stream(device: int) -> int:
    """PyTorch's current stream on `device` when torch is loaded, else 0
    (the legacy default stream)."""
    return (_raw_stream or _default_stream_getter())(device)


def _legacy_stream(device: int) -> int:
    return 0


def _default_stream_getter():
    return _torch_raw_stream() or _legacy_stream


def stream_handle(stream, device: int | None = None) -> int:
    """The CUstream handle (an int) of any stream object the runtime takes."""
    if isinstance(stream, bool):
        raise LaunchError(f"stream={stream!r} is not a stream", arg="stream", rule="stream")
    if isinstance(stream, int):
        h = stream
    elif hasattr(stream, "__cuda_stream__"):
        try:
            proto = stream.__cuda_stream__
            version, h = proto() if callable(proto) else proto
        except Exception as e:
            raise LaunchError(f"stream: __cuda_stream__ failed ({type(e).__name__}: {e})", arg="stream",
                              rule="stream") from None
    elif hasattr(stream, "cuda_stream"):  # torch.cuda.Stream / ExternalStream
        h = stream.cuda_stream
        dev = getattr(stream, "device_index", None)
        if dev is not None:
            if isinstance(dev, bool) or not isinstance(dev, numbers.Integral):
                raise LaunchError(f"stream.device_index is {dev!r}, not a CUDA device ordinal (an int)",
                                  arg="stream", rule="stream")
            if device is not None and int(dev) != device:
                raise LaunchError(f"stream is on cuda:{int(dev)}, the tensors on cuda:{device}", arg="stream",
                                  rule="device")
    elif type(stream).__name__ == "CUstream" or hasattr(stream, "getPtr"):
        try:
            h = int(stream)  # a CUstream's handle (getPtr is the address of where it is kept)
        except Exception as e:
            raise LaunchError(f"stream={stream!r}: a CUstream-like object (getPtr) whose int() failed "
                              f"({type(e).__name__}: {e}); pass a CUstream, a torch or cuda.core stream or an int",
                              arg="stream", rule="stream") from None
    else:
        raise LaunchError(f"stream={stream!r}: pass a torch stream, a cuda.core stream, a CUstream or an int",
                          arg="stream", rule="stream")
    if isinstance(h, bool) or not isinstance(h, int) or not 0 <= h < 1 << 64:
        raise LaunchError(f"stream handle {h!r} is not a 64-bit handle", arg="stream", rule="stream")
    return h


# --------------------------------------------------------------------------- launch configuration

_DIM_LIMITS = {"grid": (2**31 - 1, 65535, 65535), "block": (1024, 1024, 64), "cluster": (16, 16, 16)}


def dim3(v, what: str) -> tuple:
    """1 to 3 positive ints (an int, tuple or list) padded with ones; an
    integer of another type (numpy's, numbers.Integral but bool) is taken
    as its int, a float never."""
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        v = (v,)
    if not isinstance(v, (tuple, list)) or not 1 <= len(v) <= 3:
        raise LaunchError(f"{what}={v!r}: pass 1 to 3 positive ints", arg=what, rule="launch-config")
    out = []
    for x in v:
        if x.__class__ is not int:
            if isinstance(x, bool) or not isinstance(x, numbers.Integral):
                raise LaunchError(f"{what}={v!r}: {x!r} is not an int", arg=what, rule="launch-config")
            x = int(x)
        out.append(x)
    out += [1] * (3 - len(out))
    limits = _DIM_LIMITS[what]
    for i, (x, hi) in enumerate(zip(out, limits)):
        if not 1 <= x <= hi:
            raise LaunchError(f"{what}={v!r}: dim {i} is {x}, the range is 1..{hi}", arg=what, rule="launch-config")
    return tuple(out)


_IMMUTABLE = (tuple, int, type(None))  # dim3 takes integers only: a tuple of them cannot change
_PLAIN_SCALARS = (int, float, bool)


def _immutable_scalar(a) -> bool:
    """Whether scalar argument `a` cannot change, so that the same object
    packs to the same bytes: a 0-d numpy array or torch tensor (which
    pack_scalar takes through __index__/__float__) can be changed in place."""
    if a.__class__ in _PLAIN_SCALARS:
        return True
    np = sys.modules.get("numpy")  # a numpy scalar implies numpy is loaded
    return np is not None and isinstance(a, np.generic)


# --------------------------------------------------------------------------- the kernel

class _Slot:
    """Packing state of one user argument."""

    __slots__ = ("kind", "name", "param", "offset", "values", "meta", "ptr", "value", "descs", "align",
                 "tmap_align")

    def __init__(self, kind, name, param, offset):
        self.kind, self.name, self.param, self.offset = kind, name, param, offset
        self.align = param.get("align") or 0  # a memref's: what its kernel's accesses assume of its address
        # a memref tensormap.replace writes into descriptors: their address rules (0: none)
        self.tmap_align = _args.tensormap_align(param) if kind == _MEMREF else 0
        self.values = None   # struct.Struct of a memref's expanded descriptor
        self.meta = None     # the last metadata seen (None: not packed yet)
        self.ptr = None
        self.value = None
        self.descs = []      # descriptor slots bound to this argument


class _DescSlot:
    __slots__ = ("record", "offset", "align", "template", "cache")

    def __init__(self, record, offset):
        self.record, self.offset = record, offset
        self.align = _args.descriptor_align(record)
        tmpl = record.get("template")
        self.template = bytes.fromhex(tmpl) if tmpl else None
        if self.template is not None and len(self.template) != DESCRIPTOR_BYTES:
            raise LaunchError(f"descriptor template of {len(self.template)} bytes, a descriptor has 128",
                              rule="artifact")
        self.cache = {}  # (shape, strides, elem) -> encoded bytes, address aside


def param_layout(params: list) -> list:
    """(size, align) of each kernel parameter, in order."""
    layout = []
    for p in params:
        kind = p["kind"]
        if kind == "memref":
            # one slot written at once, but 3 + 2·rank kernel parameters (allocated and
            # aligned pointer, offset, sizes, strides): one kernelParams entry each
            n = 3 + 2 * len(p["shape"])
            layout.append((8 * n, 8, n))
        elif kind == "descriptor":
            layout.append((DESCRIPTOR_BYTES, 64))
        elif kind == "scalar":
            b = max(p["bits"] // 8, 1)
            layout.append((b, b))
        elif kind == "pointer":
            layout.append((8, 8))
        else:
            raise LaunchError(f"parameter type {p.get('type')} is not launchable", rule="type")
    return layout


class ParamBuffer:
    """One contiguous, 64-byte-aligned block holding every parameter, and the
    void*[] array cuLaunchKernel takes. Writes are bounded by each slot's size."""

    def __init__(self, layout):
        """`layout`: (size, align[, parts]) per slot; a slot of `parts` kernel
        parameters (an expanded memref: 8-byte words) gets one kernelParams
        entry per word."""
        offs, cur, parts = [], 0, []
        for entry in layout:
            size, align = entry[0], entry[1]
            cur = (cur + align - 1) // align * align
            offs.append(cur)
            parts.append(entry[2] if len(entry) > 2 else 1)
            cur += size
        self.sizes = [e[0] for e in layout]
        self.raw = bytearray(cur + 64)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(self.raw))
        self.shift = (-addr) % 64
        self.base = addr + self.shift
        self.offsets = [self.shift + o for o in offs]  # offsets into self.raw
        ptrs = [addr + o + 8 * j for o, n in zip(self.offsets, parts) for j in range(n)]
        # the size of what each kernelParams entry points at
        self.entry_sizes = [8 if n > 1 else sz for sz, n in zip(self.sizes, parts) for _ in range(n)]
        self.ptrs = (ctypes.c_void_p * max(len(ptrs), 1))(*ptrs)
        self.address = ctypes.addressof(self.ptrs)

    def write(self, i: int, data: bytes) -> None:
        if len(data) != self.sizes[i]:
            raise LaunchError(f"parameter {i} takes {self.sizes[i]} bytes, got {len(data)}", rule="artifact")
        o = self.offsets[i]
        self.raw[o:o + len(data)] = data

    def read(self, i: int) -> bytes:
        o = self.offsets[i]
        return bytes(self.raw[o:o + self.sizes[i]])


class Kernel:
    """One kernel of a loaded module, callable like CuTe's compiled kernels:
    ``k(*tensors_and_scalars, grid=, block=, cluster=, smem=, stream=)``."""

    # benchmarks/run.py's launch section reads the old prepared-launch tuple;
    # None makes it skip its driver floor (benchmarks/launch_bench.py measures it now)
    _last = None

    def __init__(self, artifacts, name: str):
        self.artifacts = artifacts
        self.name = name
        rec = artifacts.kernels[name]
        self.params = rec["params"]
        self.user_params = [p for p in self.params if p["kind"] != "descriptor"]
        self.descriptors = [p for p in self.params if p["kind"] == "descriptor"]
        launch = rec.get("launch") or {}
        self.rec_block = tuple(launch["block"]) if launch.get("block") else None
        self.rec_cluster = tuple(launch["cluster"]) if launch.get("cluster") else None
        self.rec_smem = int(launch.get("smem") or 0)
        self.rec_max_grid = launch.get("max_grid")  # the most CTAs the kernel's work split holds (dsl.max_grid)
        # programmatic dependent launch: the kernel waits for the stream's earlier work itself
        self.flags = 1 if launch.get("pdl") else 0
        self._layout = param_layout(self.params)
        self._buffer = ParamBuffer(self._layout)
        from .cubin import expected_sizes
        if self._buffer.entry_sizes != expected_sizes(self.params):  # kernelParams must match the cubin's table
            raise LaunchError(f"kernel {name}: {len(self._buffer.entry_sizes)} kernelParams entries of sizes "
                              f"{self._buffer.entry_sizes[:16]}, the kernel takes {expected_sizes(self.params)[:16]}",
                              rule="artifact")
        self._slots = []
        index = 0
        for i, p in enumerate(self.params):
            if p["kind"] == "descriptor":
                continue
            kind = {"memref": _MEMREF, "scalar": _SCALAR, "pointer": _POINTER}[p["kind"]]
            s = _Slot(kind, p.get("name") or f"argument {len(self._slots)}", p, self._buffer.offsets[i])
            if kind == _MEMREF:
                s.values = struct.Struct("<QQq" + "q" * (2 * len(p["shape"])))
            self._slots.append(s)
            index += 1
        for i, p in enumerate(self.params):
            if p["kind"] == "descriptor":
                b = p["binds"]
                if not (isinstance(b, int) and 0 <= b < len(self._slots)) or self._slots[b].kind != _MEMREF:
                    raise LaunchError(f"kernel {name}: a descriptor binds argument {b!r}", rule="artifact")
                self._slots[b].descs.append(_DescSlot(p, self._buffer.offsets[i]))
        self._nargs = len(self._slots)
        self._func = 0
        self._smem_set = {}   # device -> dynamic smem bytes the attribute allows
        self._wide = False    # a cluster of more than 8 CTAs was configured: allow_clusters opts the kernel in
        self._wide_set = False  # ... which it did (on every device)
        self._configs = {}
        self._last_cfg = None  # (grid, block, cluster, smem, cfg): identity fast path
        self._stream_obj = None
        self._stream_h = 0
        self._launch_cfg = None
        self._params = self._buffer.address
        # the C fast path (LaunchFast.cpp's Packer) where the extension is built
        self._cpack = self._cfast = self._cconf = None
        ext = _packing_extension()
        if ext is not None:
            spec = []
            for s in self._slots:
                if s.kind == _MEMREF:
                    spec.append((0, s.offset, tuple((d.offset, d.align) for d in s.descs), s.align,
                                 s.tmap_align))
                else:
                    spec.append((1,) if s.kind == _SCALAR else (2,))
            self._cpack = ext.Packer(self._buffer.raw, tuple(spec))
            self._cfast = self._cpack.fast

    # ------------------------------------------------------------------ packing
    def _pack(self, args, stream_arg, encoder: str = "nvtma"):
        """Writes every parameter that changed; returns (device, stream handle, keep-alive list)."""
        try:
            return self._pack_all(args, stream_arg, encoder)
        except BaseException:
            for s in self._slots:  # a half-packed buffer must not pass for a packed one
                s.meta = None
                s.value = None
            if self._cpack is not None:
                self._cpack.reset()
            raise

    def _pack_all(self, args, stream_arg, encoder):
        if len(args) != self._nargs:
            raise LaunchError(f"kernel {self.name} takes {self._nargs} arguments "
                              f"({', '.join(p['type'] for p in self.user_params)}), got {len(args)}",
                              rule="arg-count")
        if encoder != "nvtma" and not (isinstance(encoder, str) and encoder in ENCODERS):
            raise LaunchError(f"encoder={encoder!r}: pass one of {', '.join(map(repr, ENCODERS))}", arg="encoder",
                              rule="launch-config")
        raw = self._buffer.raw
        tt = _args._torch_tensor or _args.torch_tensor_type()
        device = None
        stream = None
        keep = None
        waits = None
        reencode = encoder != "nvtma"
        cp = self._cpack
        if cp is not None:
            cp.reset()
        for i, (s, a) in enumerate(zip(self._slots, args)):
            kind = s.kind
            if kind == _MEMREF:
                if tt is not None and isinstance(a, tt):
                    meta = (a.shape, a.stride(), a.dtype, a.get_device())
                    ptr = a.data_ptr()
                    dev = meta[3]
                    if meta != s.meta or reencode:
                        info = _args.from_torch(a, s.name)
                        self._write_memref(s, info, meta, encoder)
                    else:  # the C fast path may have written another address since
                        self._write_pointer(s, ptr)
                    if cp is not None and not reencode and a.__class__ in (_args._torch_exact or (tt,)):
                        cp.commit(i, meta[0], meta[1], meta[2], dev, ptr)
                else:
                    if hasattr(a, "__dlpack__") and not hasattr(a, "__cuda_array_interface__"):
                        dev = _args.dlpack_device(a, s.name)
                        if device is not None and dev != device:  # before the producer is asked for memory
                            _mismatch(s.name, dev, device)
                        if stream is None:
                            stream = self._stream(stream_arg, dev)
                        info = _args.from_dlpack(a, s.name, stream)
                    else:
                        info = _args.intake(a, s.name, device_of=_pointer_device)
                    dev = info.device
                    if info.stream is not None:
                        waits = (waits or []) + [info.stream]
                    keep = (keep or []) + [info.owner]
                    self._write_memref(s, info, (info.shape, info.strides, info.elem, dev, "generic"), encoder)
                if dev is not None:
                    if device is None:
                        device = dev
                    elif dev != device:
                        _mismatch(s.name, dev, device)
            elif kind == _SCALAR:
                if a.__class__ in _PLAIN_SCALARS or _immutable_scalar(a):
                    if a is not s.value or s.meta is None:
                        b = _args.pack_scalar(a, s.param, s.name)
                        raw[s.offset:s.offset + len(b)] = b
                        s.value = a
                        s.meta = True
                    if cp is not None:
                        cp.commit(i, a)
                else:
                    # may have changed in place since the last launch: packed every time, and
                    # never recorded for the identity checks (_pack_fast, the C Packer)
                    s.value = s.meta = None
                    b = _args.pack_scalar(a, s.param, s.name)
                    raw[s.offset:s.offset + len(b)] = b
            else:
                if isinstance(a, int) and not isinstance(a, bool):
                    ptr = a
                    if not 0 <= ptr < 1 << 64:
                        raise LaunchError(f"{s.name}: pointer {ptr} is not a 64-bit address", arg=s.name,
                                          rule="range")
                else:
                    info = _args.intake(a, s.name, device_of=_pointer_device)
                    ptr = info.ptr
                    keep = (keep or []) + [info.owner]
                _ADDR.pack_into(raw, s.offset, ptr)
        if device is None:
            device = _current_device()
        if stream is None:
            stream = self._stream(stream_arg, device)
        if waits:
            for w in waits:
                if w != stream and not (w == 1 and stream == 0):
                    driver.wait_stream(stream, w)
        return device, stream, keep

    def _write_memref(self, s: _Slot, info, meta, encoder):
        _args.check_memref(info, s.param, s.name)
        ptr = info.ptr
        s.meta = None  # until every write below succeeded
        try:
            s.values.pack_into(self._buffer.raw, s.offset, ptr, ptr, 0, *info.shape, *info.strides)
        except struct.error:  # a size or stride past 64 bits (an interface's Python ints, computed strides)
            _args.check_memref_words(info, s.name)
            raise
        for d in s.descs:
            key = (info.shape, info.strides, info.elem)
            body = d.cache.get(key) if encoder == "nvtma" else None
            if body is None:
                if d.template is not None and encoder == "nvtma":
                    # Static tensor: the compiler pre-encoded everything but the
                    # address (bytes 0..7); check_memref has matched shape and strides.
                    _args.check_address(ptr, d.align, s.name)
                    _args.check_coordinates(info, d.record, s.name)
                    body = d.template
                else:
                    body = _args.encode_descriptor(info, d.record, s.name, encoder)
                if len(body) != DESCRIPTOR_BYTES:
                    raise LaunchError(f"{s.name}: a {len(body)}-byte descriptor, the slot has 128", arg=s.name,
                                      rule="artifact")
                if encoder == "nvtma":
                    if len(d.cache) >= 16:
                        d.cache.clear()
                    d.cache[key] = body
            _args.check_address(ptr, d.align, s.name)
            o = d.offset
            self._buffer.raw[o:o + DESCRIPTOR_BYTES] = body
            _ADDR.pack_into(self._buffer.raw, o, ptr)
        s.ptr = ptr
        s.meta = meta if encoder == "nvtma" else None

    def _write_pointer(self, s: _Slot, ptr: int):
        """Same metadata as the last launch, another address: the memref's two
        pointers and each bound descriptor's address field."""
        if s.align and ptr % s.align and all(s.meta[0]):  # (an empty tensor: nothing of it is accessed)
            _args.check_align(ptr, s.align, s.name)
        for d in s.descs:
            _args.check_address(ptr, d.align, s.name)
        if s.tmap_align:  # the rest of tensormap.replace's rules hold: the dims and strides repeat
            _args.check_address(ptr, s.tmap_align, s.name)
        raw = self._buffer.raw
        _TWO_ADDR.pack_into(raw, s.offset, ptr, ptr)
        for d in s.descs:
            _ADDR.pack_into(raw, d.offset, ptr)
        s.ptr = ptr

    def _stream(self, stream_arg, device):
        if stream_arg is None:
            return default_stream(device)
        if stream_arg is self._stream_obj:
            return self._stream_h
        h = stream_handle(stream_arg, device)
        self._stream_obj, self._stream_h = stream_arg, h
        return h

    # ------------------------------------------------------------------ configuration
    def _config(self, grid, block, cluster, smem):
        # The cache key: marshal's bytes (format 2: no back-references), which tell 4 from 4.0 and True
        # where a tuple would not (equal numbers hash alike: a config refused on a fresh kernel was taken
        # from the cache after an equal one). What marshal cannot write (a numpy int): validated each time.
        try:
            key = _dumps((grid, block, cluster, smem), 2)
        except ValueError:
            key = None
        else:
            cfg = self._configs.get(key)
            if cfg is not None:
                return cfg
        grid3 = dim3(grid, "grid")
        if self.rec_max_grid is not None and grid3[0] * grid3[1] * grid3[2] > self.rec_max_grid:
            raise LaunchError(f"grid {grid3} has {grid3[0] * grid3[1] * grid3[2]} CTAs, kernel {self.name} is right "
                              f"for at most {self.rec_max_grid} (its record's launch.max_grid)", arg="grid",
                              rule="launch-config")
        if block is None:
            if self.rec_block is None:
                raise LaunchError(f"kernel {self.name} records no block size: pass block=", arg="block",
                                  rule="launch-config")
            block3 = self.rec_block
        else:
            block3 = dim3(block, "block")
            if self.rec_block is not None and block3 != self.rec_block:
                raise LaunchError(f"block {block3} contradicts the kernel's block {self.rec_block}", arg="block",
                                  rule="launch-config")
        if block3[0] * block3[1] * block3[2] > 1024:
            raise LaunchError(f"block {block3} has more than 1024 threads", arg="block", rule="launch-config")
        if cluster is None:
            cluster3 = self.rec_cluster
        else:
            cluster3 = dim3(cluster, "cluster")
            if self.rec_cluster is not None and cluster3 != self.rec_cluster:
                raise LaunchError(f"cluster {cluster3} contradicts the kernel's cluster {self.rec_cluster}",
                                  arg="cluster", rule="launch-config")
        if cluster3 is not None:
            if cluster3[0] * cluster3[1] * cluster3[2] > 16:
                raise LaunchError(f"cluster {cluster3} has more than 16 CTAs", arg="cluster", rule="launch-config")
            if cluster3[0] * cluster3[1] * cluster3[2] > 8:
                self._wide = True
            for g, c in zip(grid3, cluster3):
                if g % c:
                    raise LaunchError(f"grid {grid3} is not a multiple of cluster {cluster3}", arg="cluster",
                                      rule="launch-config")
        if smem is None:
            smem = self.rec_smem
        elif smem.__class__ is not int and isinstance(smem, numbers.Integral) and not isinstance(smem, bool):
            smem = int(smem)
        if isinstance(smem, bool) or not isinstance(smem, int) or not 0 <= smem <= MAX_SMEM:
            raise LaunchError(f"smem is {smem!r} bytes, an sm_90 block gets 0..{MAX_SMEM}", arg="smem",
                              rule="launch-config")
        if smem < self.rec_smem:
            raise LaunchError(f"smem is {smem} bytes, the kernel needs {self.rec_smem}", arg="smem",
                              rule="launch-config")
        c3 = cluster3 if cluster3 is not None and cluster3 != (1, 1, 1) else (0, 0, 0)
        cfg = (*grid3, *block3, smem, *c3, self.flags)
        if key is not None and len(self._configs) < 256:
            self._configs[key] = cfg
        return cfg

    # ------------------------------------------------------------------ launch
    def _function(self) -> int:
        if not self._func:
            self._launch_cfg = driver.launcher_cfg()
            self._func = self.artifacts._kernel_handle(self.name)
        return self._func

    def __call__(self, *args, grid=None, block=None, cluster=None, smem=None, stream=None, encoder: str = "nvtma"):
        """Launches the kernel. Arguments and configuration are checked and
        packed before the driver is touched, so misuse raises LaunchError even
        without a GPU."""
        last = self._last_cfg
        if last is not None and grid is last[0] and block is last[1] and cluster is last[2] and smem is last[3]:
            cfg = last[4]
        else:
            cfg = self._config_for(args, grid, block, cluster, smem)
        keep = None
        if encoder != "nvtma":
            device = -1
        elif self._cfast is not None:
            device = self._cfast(args, _args._torch_exact)
        else:
            device = self._pack_fast(args)
        if device >= 0:
            if stream is None:
                s = (_raw_stream or _default_stream_getter())(device)
            elif stream is self._stream_obj:
                s = self._stream_h
            else:
                s = self._stream(stream, device)
        else:
            device, s, keep = self._pack(args, stream, encoder)
        func = self._func or self._function()
        self.allow_smem(func, cfg[6], device)
        if self._wide:
            self.allow_clusters(func, cfg)
        ctx = _contexts.get(device) or driver.primary_context(device)
        rc = self._launch_cfg(func, cfg, s, self._params, ctx)
        if rc:
            self._launch_failed(rc)
        del keep
        cp = self._cpack
        if cp is not None and device >= 0:
            # what the C launch needs to repeat this launch by itself
            conf = (_args._torch_exact, _raw_stream)
            if conf != self._cconf:
                cp.configure(func, self._params, conf[0], conf[1])
                self._cconf = conf
            cp.set_device(device, ctx, max(self._smem_set.get(device, 0), DEFAULT_SMEM))
            if stream is not None and stream is self._stream_obj:
                cp.set_stream(stream, s)
            last = self._last_cfg
            if last is not None and last[4] is cfg and encoder == "nvtma":
                self._arm(*last)

    def allow_smem(self, func, smem: int, device: int):
        """Opts the kernel in to `smem` bytes of dynamic shared memory on
        `device`, once per size: any dynamic shared memory, as the 48 KB a
        kernel may use without opting in count its static shared memory too
        (a GEMM of 48 KB dynamic and a few hundred static bytes failed to
        launch with CUDA_ERROR_INVALID_VALUE when only dynamic shared memory
        past 48 KB opted in)."""
        if smem and self._smem_set.get(device, 0) < smem:
            driver.set_max_dynamic_smem(func, smem, device)
            self._smem_set[device] = smem

    def allow_clusters(self, func, cfg):
        """Opts the kernel in to clusters of 9-16 CTAs (sm_90's non-portable
        sizes) on every device, once, when this launch's cluster is one."""
        if not self._wide_set and cfg[7] * cfg[8] * cfg[9] > 8:
            driver.allow_wide_clusters(func)
            self._wide_set = True

    def _launch_failed(self, rc: int):
        raise LaunchError(f"kernel {self.name}: the launch failed ({driver.error_name(rc)})", rule="driver")

    # A FastKernel's C entry (new_kernel): armed with the configuration of a
    # launch the fast path can repeat, disarmed when it changes.
    def _arm(self, grid, block, cluster, smem, cfg):
        pass

    def _disarm(self):
        pass

    def _config_for(self, args, grid, block, cluster, smem):
        if grid is None:
            raise LaunchError(f"kernel {self.name}: pass grid=", arg="grid", rule="launch-config")
        if callable(grid):
            return self._config(grid(*args), block, cluster, smem)
        cfg = self._config(grid, block, cluster, smem)
        self._disarm()
        # recognized by identity from now on: only objects that cannot change
        if all(type(v) in _IMMUTABLE for v in (grid, block, cluster, smem)):
            self._last_cfg = (grid, block, cluster, smem, cfg)
        else:
            self._last_cfg = None
        return cfg

    def _pack_fast(self, args) -> int:
        """The common case in a few attribute reads: every tensor argument an
        exact torch.Tensor (or nn.Parameter) whose shape, strides, dtype and
        device repeat the last packed ones, every scalar the same immutable object.
        Writes changed addresses; returns the device, or -1 to take the full
        path."""
        exact = _args._torch_exact
        if exact is None or len(args) != self._nargs:
            return -1
        device = -1
        for s, a in zip(self._slots, args):
            if s.kind == _MEMREF:
                if a.__class__ not in exact:
                    return -1
                meta = (a.shape, a.stride(), a.dtype, a.get_device())
                if meta != s.meta:
                    return -1
                ptr = a.data_ptr()
                if ptr != s.ptr:
                    self._write_pointer(s, ptr)
                device = meta[3]
            elif s.kind != _SCALAR or a is not s.value:
                return -1
        return device

    def pack(self, *args, stream=None, encoder: str = "nvtma"):
        """Checks and packs the arguments as a launch would, without launching
        (for checks and for timing the host side); returns (device, stream)."""
        device, s, _ = self._pack(args, stream if stream is not None else 0, encoder)
        return device, s

    def descriptor_bytes(self, *args, encoder: str = "nvtma") -> list:
        """The descriptors a launch with these arguments passes (for checks)."""
        self._pack(args, 0, encoder)
        return [self._buffer.read(i) for i, p in enumerate(self.params) if p["kind"] == "descriptor"]

    def param_bytes(self) -> list:
        """Every packed parameter's bytes (for checks)."""
        return [self._buffer.read(i) for i in range(len(self.params))]


_contexts = driver._contexts
_kernel_class = None


def new_kernel(artifacts, name: str) -> Kernel:
    """A Kernel; where the abi3 extension is built, a FastKernel."""
    global _kernel_class
    if _kernel_class is None:
        _kernel_class = _fast_kernel_class()
    return _kernel_class(artifacts, name)


_SLOT_PROBE = ((0, 0, (), 0, 0), (1,), (2,))  # one slot of each kind, as Kernel.__init__ writes them


@functools.lru_cache(maxsize=None)
def _packing_extension():
    """The abi3 extension where its Packer takes this module's slot table;
    None without one, or for one built before the table changed (a source
    tree pulled without a rebuild): its Packer refused every kernel with a
    tensor argument, and the Python path checks everything itself."""
    ext = driver._extension()
    if ext is None or not hasattr(ext, "Packer"):
        return None
    try:
        ext.Packer(bytearray(64), _SLOT_PROBE)
    except ValueError:
        return None
    return ext


def _fast_kernel_class():
    ext = _packing_extension()
    launcher = getattr(ext, "Launcher", None)
    if launcher is None:
        return Kernel

    class FastKernel(launcher, Kernel):
        """A Kernel whose calls enter C first (LaunchFast.cpp's Launcher): when
        grid, block, cluster and smem are the very objects of the last launch,
        the stream is the default or the last stream= object and the Packer's
        fast path takes the arguments, the launch is made without a Python
        frame; any other call is Kernel.__call__."""

        __slots__ = ()
        _arm = launcher._fast_arm
        _disarm = launcher._fast_disarm

        def __init__(self, artifacts, name):
            Kernel.__init__(self, artifacts, name)
            if self._cpack is not None:
                self._fast_bind(self._cpack, Kernel.__call__, Kernel._launch_failed)

    FastKernel.__qualname__ = "FastKernel"
    return FastKernel


def _mismatch(name, dev, device):
    raise LaunchError(f"{name} is on cuda:{dev}, an earlier tensor on cuda:{device}; a launch runs on one device",
                      arg=name, rule="device")


def _current_device() -> int:
    """The device when no argument names one: torch's current device, else
    the current context's."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            return torch._C._cuda_getDevice()
        except Exception:
            pass
    try:
        return driver.current_device()
    except LaunchError:
        return 0


def _pointer_device(ptr: int):
    try:
        return driver.pointer_device(ptr)
    except LaunchError as e:
        if e.rule == "driver":
            return None  # no driver: packing goes on, the launch itself will say so
        raise
