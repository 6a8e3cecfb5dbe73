"""Compiled artifacts (cubin + records), AOT save/load, and kernel launches."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from . import args as _args
from . import driver
from .errors import LaunchError

FORMAT_VERSION = 1


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class CompiledArtifacts:
    """IR, PTX, cubin and the kernel records of one gpu.module."""

    def __init__(self, *, ir: str | None, ptx: str, cubin: bytes | None, records: dict, arch: str):
        self.ir = ir
        self.ptx = ptx
        self.cubin = cubin
        self.records = records
        self.arch = arch
        self._loaded = None
        self._kernels = {}

    # ------------------------------------------------------------------ records
    @property
    def kernels(self) -> dict:
        """Kernel name -> record: parameters and, per descriptor, its fields."""
        return self.records.get("kernels", {})

    def descriptor_records(self, kernel: str) -> list:
        return [p for p in self.kernels[kernel]["params"] if p["kind"] == "descriptor"]

    # ------------------------------------------------------------------ files
    def _manifest(self) -> dict:
        return {
            "format": FORMAT_VERSION,
            "arch": self.arch,
            "records": self.records,
            "cubin_sha256": hashlib.sha256(self.cubin).hexdigest() if self.cubin else None,
            "ptx_sha256": hashlib.sha256(self.ptx.encode()).hexdigest(),
        }

    def save(self, directory) -> Path:
        """Writes module.ptx, module.cubin, module.mlir and kernels.json."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        _atomic_write(d / "module.ptx", self.ptx.encode())
        if self.cubin:
            _atomic_write(d / "module.cubin", self.cubin)
        if self.ir:
            _atomic_write(d / "module.mlir", self.ir.encode())
        _atomic_write(d / "kernels.json", json.dumps(self._manifest(), indent=1).encode())
        return d

    @classmethod
    def _read(cls, d: Path, want_cubin: bool = True, strict: bool = True):
        try:
            manifest = json.loads((d / "kernels.json").read_text())
            if manifest.get("format") != FORMAT_VERSION:
                raise ValueError(f"format {manifest.get('format')}")
            ptx = (d / "module.ptx").read_text()
            if hashlib.sha256(ptx.encode()).hexdigest() != manifest["ptx_sha256"]:
                raise ValueError("module.ptx does not match its checksum")
            cubin = None
            if manifest.get("cubin_sha256"):
                cubin = (d / "module.cubin").read_bytes()
                if hashlib.sha256(cubin).hexdigest() != manifest["cubin_sha256"]:
                    raise ValueError("module.cubin does not match its checksum")
            elif want_cubin:
                raise ValueError("no cubin")
            ir = (d / "module.mlir").read_text() if (d / "module.mlir").exists() else None
        except (OSError, ValueError, KeyError) as e:
            if strict:
                raise LaunchError(f"{d}: not a valid nvtma module directory ({e})", rule="artifact") from None
            return None
        return cls(ir=ir, ptx=ptx, cubin=cubin, records=manifest["records"], arch=manifest["arch"])

    @classmethod
    def load_cache_entry(cls, d: Path, want_cubin: bool = True):
        """A cache entry, or None when missing, truncated or corrupt."""
        if not (d / "kernels.json").exists():
            return None
        return cls._read(d, want_cubin=want_cubin, strict=False)

    def write_cache_entry(self, d: Path) -> None:
        # module.* first, manifest last: a reader sees a complete entry or none.
        try:
            self.save(d)
        except OSError:
            pass  # a read-only or full cache only costs a recompile

    # ------------------------------------------------------------------ launch
    def _module(self):
        if self.cubin is None:
            raise LaunchError("this module was compiled with cubin=False", rule="artifact")
        ctx = driver.current_context()
        if self._loaded is None or int(self._loaded[0]) != int(ctx):
            if self._loaded is not None:
                # The context the cubin was loaded in is no longer current.
                self._kernels.clear()
            self._loaded = driver.load_module(self.cubin)
        return self._loaded[1]

    def kernel(self, name: str) -> "Kernel":
        if name not in self.kernels:
            raise AttributeError(f"no kernel {name!r}; kernels: {', '.join(self.kernels) or 'none'}")
        k = self._kernels.get(name)
        if k is None:
            k = self._kernels[name] = Kernel(self, name)
        return k

    def __getattr__(self, name):
        if name.startswith("_") or name not in self.__dict__.get("records", {}).get("kernels", {}):
            raise AttributeError(name)
        return self.kernel(name)

    def __call__(self, *args, **kwargs):
        if len(self.kernels) != 1:
            raise LaunchError(f"{len(self.kernels)} kernels: call one by name", rule="launch")
        return self.kernel(next(iter(self.kernels)))(*args, **kwargs)


class Kernel:
    """One kernel of a compiled module, callable like CuTe's compiled kernels:
    ``k(*tensors_and_scalars, grid=, block=, cluster=, smem=, stream=)``."""

    def __init__(self, artifacts: CompiledArtifacts, name: str):
        self.artifacts = artifacts
        self.name = name
        rec = artifacts.kernels[name]
        self.params = rec["params"]
        self.user_params = [p for p in self.params if p["kind"] != "descriptor"]
        self.descriptors = [p for p in self.params if p["kind"] == "descriptor"]
        layout = []
        for p in self.params:
            if p["kind"] == "memref":
                layout += [(8, 8)] * (3 + 2 * len(p["shape"]))
            elif p["kind"] == "descriptor":
                layout.append((128, 64))
            elif p["kind"] == "scalar":
                b = max(p["bits"] // 8, 1)
                layout.append((b, b))
            elif p["kind"] == "pointer":
                layout.append((8, 8))
            else:
                raise LaunchError(f"kernel {name}: parameter type {p['type']} is not launchable", rule="type")
        self._layout = layout
        self._buffer = _args.ParamBuffer(layout)
        self._last_key = None
        self._last = None  # (launch key, context, prepared cuLaunchKernel arguments)
        self._configs = {}
        self._func = None
        self._func_ptr = 0
        self._func_ctx = None
        self._smem_set = 0

    def _function(self):
        ctx = driver.context_if_current()
        loaded = self.artifacts._loaded
        if self._func is not None and loaded is not None and ctx is not None and ctx == self._func_ctx:
            return self._func
        mod = self.artifacts._module()
        self._func = driver.get_function(mod, self.name)
        self._func_ptr = int(self._func)
        self._func_ctx = int(self.artifacts._loaded[0])
        self._smem_set = 0
        return self._func

    def _pack(self, args, encoder: str):
        """Writes every parameter; returns the key of this argument set."""
        names = [p.get("name") or f"argument {i}" for i, p in enumerate(self.user_params)]
        infos = []
        key = []
        slot = 0
        for i, (p, a) in enumerate(zip(self.user_params, args)):
            arg = names[i]
            if p["kind"] == "memref":
                t = _args.tensor_info(a, arg)
                _args.check_memref(t, p, arg)
                infos.append(t)
                key.append((t.ptr, t.shape, t.strides))
                r = len(p["shape"])
                vals = [t.ptr, t.ptr, 0] + list(t.shape) + list(t.strides)
                for v in vals:
                    self._buffer.write(slot, int(v).to_bytes(8, "little", signed=True))
                    slot += 1
                assert r == len(t.shape)
            elif p["kind"] == "scalar":
                infos.append(None)
                key.append(a)
                self._buffer.write(slot, _args.pack_scalar(a, p, arg))
                slot += 1
            else:  # pointer
                infos.append(None)
                ptr = a if isinstance(a, int) else _args.tensor_info(a, arg).ptr
                key.append(ptr)
                self._buffer.write(slot, int(ptr).to_bytes(8, "little"))
                slot += 1
        for d in self.descriptors:
            b = d["binds"]
            t = infos[b]
            tmpl = d.get("template")
            if tmpl and encoder == "nvtma":
                # Static tensor: the compiler pre-encoded everything but the
                # address, which is stored as is in bytes 0..7.
                if t.ptr % 16:
                    raise LaunchError(f"{names[b]}: address 0x{t.ptr:x} is not 16-byte aligned (TMA rule "
                                      "address-align)", arg=names[b], rule="alignment")
                desc = t.ptr.to_bytes(8, "little") + bytes.fromhex(tmpl)[8:]
            else:
                desc = _args.encode_descriptor(t, d, names[b], encoder)
            self._buffer.write(slot, desc)
            slot += 1
        return tuple(key)

    def _arg_key(self, args):
        """Cheap identity of an argument set: pointer, shape and strides of
        each tensor, value of each scalar."""
        key = []
        for a in args:
            if hasattr(a, "data_ptr"):
                key.append((a.data_ptr(), a.shape, a.stride(), a.dtype))
            elif hasattr(a, "__cuda_array_interface__"):
                c = a.__cuda_array_interface__
                key.append((c["data"][0], tuple(c["shape"]), c.get("strides"), c["typestr"]))
            else:
                key.append((type(a), a))
        return tuple(key)

    def _config(self, grid, block, cluster, smem, stream):
        k = (grid, block, cluster, smem, stream)
        cfg = self._configs.get(k)
        if cfg is not None:
            return cfg
        grid3 = _dim3(grid, "grid")
        block3 = _dim3(block, "block")
        cluster3 = _dim3(cluster, "cluster") if cluster is not None else None
        if block3[0] * block3[1] * block3[2] > 1024:
            raise LaunchError(f"block {block3} has more than 1024 threads", arg="block", rule="launch-config")
        if cluster3 is not None:
            if cluster3[0] * cluster3[1] * cluster3[2] > 16:
                raise LaunchError(f"cluster {cluster3} has more than 16 CTAs", arg="cluster", rule="launch-config")
            for g, c in zip(grid3, cluster3):
                if g % c:
                    raise LaunchError(f"grid {grid3} is not a multiple of cluster {cluster3}", arg="cluster",
                                      rule="launch-config")
            if cluster3 == (1, 1, 1):
                cluster3 = None
        if not isinstance(smem, int) or not 0 <= smem <= 227 * 1024:
            raise LaunchError(f"smem is {smem!r} bytes, an H100/H200 block gets at most 232448", arg="smem",
                              rule="launch-config")
        cfg = (grid3, block3, cluster3, smem, driver.stream_handle(stream))
        if len(self._configs) < 64:
            self._configs[k] = cfg
        return cfg

    def __call__(self, *args, grid, block, cluster=None, smem: int = 0, stream=None, encoder: str = "nvtma"):
        """Launches the kernel. Arguments are checked and packed before the
        driver is touched, so misuse raises LaunchError even without a GPU.
        A launch with the same arguments and configuration as the previous
        one (same tensors: pointer, shape, strides, dtype) in the same
        context reuses everything and makes one driver call."""
        key = (self._arg_key(args), grid, block, cluster, smem, stream, encoder)
        last = self._last
        if last is not None and key == last[0] and driver.context_if_current() == last[1]:
            driver.launch_prepared(last[2])
            return
        self._last = None
        if len(args) != len(self.user_params):
            raise LaunchError(f"kernel {self.name} takes {len(self.user_params)} arguments "
                              f"({', '.join(p['type'] for p in self.user_params)}), got {len(args)}",
                              rule="arg-count")
        cfg = self._config(grid, block, cluster, smem, stream)
        pack_key = (key[0], encoder)
        if pack_key != self._last_key:
            self._last_key = None
            self._pack(args, encoder)
            self._last_key = pack_key
        func = self._function()
        grid3, block3, cluster3, smem, stream_h = cfg
        if smem > 48 * 1024 and self._smem_set < smem:
            driver.set_max_dynamic_smem(func, smem)
            self._smem_set = smem
        prepared = None if cluster3 is not None else driver.prepared_launch(
            self._func_ptr, grid3, block3, smem, stream_h, self._buffer.address)
        if prepared is None:
            driver.launch(func, grid3, block3, cluster3, smem, stream_h, self._buffer.address)
            return
        driver.launch_prepared(prepared)
        self._last = (key, self._func_ctx, prepared)

    def descriptor_bytes(self, *args, encoder: str = "nvtma") -> list:
        """The descriptors a launch with these arguments passes (for checks)."""
        self._pack(args, encoder)
        n = len(self._layout)
        first = n - len(self.descriptors)
        import ctypes
        return [ctypes.string_at(self._buffer.base + self._buffer.offsets[i], 128) for i in range(first, n)]


def _dim3(v, what):
    if isinstance(v, int):
        v = (v,)
    v = tuple(int(x) for x in v)
    if not 1 <= len(v) <= 3 or any(x < 1 for x in v):
        raise LaunchError(f"{what} must be 1 to 3 positive ints, got {v}", arg=what, rule="launch-config")
    return v + (1,) * (3 - len(v))


def load(directory) -> CompiledArtifacts:
    """Loads an AOT module written by CompiledModule.save (no MLIR needed)."""
    return CompiledArtifacts._read(Path(directory))
