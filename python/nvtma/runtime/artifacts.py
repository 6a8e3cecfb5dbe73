"""Compiled artifacts: cubin + PTX + kernel records, saved and loaded AOT.

An artifact directory (``CompiledModule.save(dir)``) holds module.ptx,
module.cubin, module.mlir and kernels.json. A loaded directory is untrusted
input: every file must be a regular file inside the directory (no FIFOs or
devices, no symlink out of it), kernels.json must pass a schema check
(types, ranges, lengths; each descriptor template is 128 bytes and decodes
to its record's fields; ``binds`` names a tensor argument; a memref's
``tensormaps`` hold descriptor fields of its rank; the parameters
match the cubin's own parameter table), and the checksums cover the records
as well as the files. Every failure is LaunchError(rule="artifact").

``save`` writes a sibling temporary directory and renames it into place, so
an existing artifact is replaced whole or not at all; files get the modes
the umask gives.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import stat
from pathlib import Path

from . import cubin as _cubin
from .cache import read_upto
from .errors import LaunchError

FORMAT_VERSION = 2
FILES = ("module.ptx", "module.cubin", "module.mlir")
MAX_BYTES = {"kernels.json": 64 << 20, "module.ptx": 512 << 20, "module.cubin": 512 << 20,
             "module.mlir": 512 << 20}
MAX_KERNELS = 4096
MAX_PARAMS = 4096
MAX_RANK = 16
MAX_NAME = 4096
MAX_TENSORMAPS = 64  # descriptors one memref's record lists
PARAM_SPACE = 32764  # bytes of kernel parameters a launch can pass (CUDA 12.1+, sm_70+)


def _bad(msg: str):
    raise LaunchError(f"artifact: {msg}", rule="artifact")


# --------------------------------------------------------------------------- schema

def _int(v, what, lo, hi):
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        _bad(f"{what} is {v!r}, expected an int in {lo}..{hi}")
    return v


def _str(v, what, limit=MAX_NAME):
    if not isinstance(v, str) or not v or len(v) > limit or "\0" in v:
        _bad(f"{what} is {_short(v)}, expected a non-empty string")
    return v


def _ints(v, what, n, lo, hi, nullable=False):
    if not isinstance(v, list) or (n is not None and len(v) != n):
        _bad(f"{what} is {_short(v)}, expected a list of {n if n is not None else 'some'} ints")
    for i, x in enumerate(v):
        if x is None and nullable:
            continue
        _int(x, f"{what}[{i}]", lo, hi)
    return v


def _short(v) -> str:
    s = repr(v)
    return s if len(s) <= 80 else s[:77] + "..."


_U64 = (1 << 64) - 1
_S64 = (-(1 << 63), (1 << 63) - 1)


def _check_memref(p, where):
    _str(p.get("type"), f"{where}.type")
    _str(p.get("element"), f"{where}.element", 64)
    shape = p.get("shape")
    if not isinstance(shape, list) or len(shape) > MAX_RANK:
        _bad(f"{where}.shape is {_short(shape)}, expected a list of at most {MAX_RANK} dims")
    _ints(shape, f"{where}.shape", None, 0, _S64[1], nullable=True)
    _ints(p.get("strides"), f"{where}.strides", len(shape), *_S64, nullable=True)
    if p.get("offset") is not None:
        _int(p["offset"], f"{where}.offset", *_S64)
    if "element_bits" in p:
        _int(p["element_bits"], f"{where}.element_bits", 1, 64)
    if "align" in p:  # bytes; LLVM's alignments are powers of two up to 2^32
        align = _int(p["align"], f"{where}.align", 1, 1 << 32)
        if align & (align - 1):
            _bad(f"{where}.align is {align}, expected a power of two")
    if "writes" in p and not isinstance(p["writes"], bool):  # the kernel may write it (views must not overlap)
        _bad(f"{where}.writes is {_short(p['writes'])}, expected true or false")
    if "tensormaps" in p:  # the descriptors tensormap.replace points this tensor at
        maps = p["tensormaps"]
        if not isinstance(maps, list) or not 1 <= len(maps) <= MAX_TENSORMAPS:
            _bad(f"{where}.tensormaps is {_short(maps)}, expected a list of 1..{MAX_TENSORMAPS} objects")
        for i, d in enumerate(maps):
            if not isinstance(d, dict):
                _bad(f"{where}.tensormaps[{i}] is {type(d).__name__}, expected an object")
            _check_fields(d, f"{where}.tensormaps[{i}]", len(shape))


def _check_descriptor(p, where, user_params):
    b = p.get("binds")
    _int(b, f"{where}.binds", 0, max(len(user_params) - 1, 0))
    if not user_params or user_params[b].get("kind") != "memref":
        _bad(f"{where}.binds is {b}, which is not a tensor argument")
    _check_fields(p, where, len(user_params[b]["shape"]))
    tmpl = p.get("template")
    if tmpl is not None:
        _check_template(tmpl, p, where, user_params[b])


def _check_fields(p, where, tensor_rank):
    """A descriptor's static fields (a descriptor parameter's, or one a
    memref's "tensormaps" lists) for a tensor of rank `tensor_rank`."""
    mode = p.get("mode")
    if mode not in ("tiled", "im2col"):
        _bad(f"{where}.mode is {_short(mode)}, expected 'tiled' or 'im2col'")
    rank = _int(p.get("rank"), f"{where}.rank", 3 if mode == "im2col" else 1, 5)
    if tensor_rank != rank:
        _bad(f"{where}.rank is {rank}, its tensor has rank {tensor_rank}")
    _int(p.get("tma_format"), f"{where}.tma_format", 0, 15)
    _int(p.get("element_bits"), f"{where}.element_bits", 1, 64)
    _int(p.get("interleave"), f"{where}.interleave", 0, 2)
    _int(p.get("swizzle"), f"{where}.swizzle", 0, 6)
    _int(p.get("l2_promotion"), f"{where}.l2_promotion", 0, 3)
    _int(p.get("oob_fill"), f"{where}.oob_fill", 0, 1)
    _ints(p.get("element_strides"), f"{where}.element_strides", rank, 1, 8)
    if mode == "tiled":
        _ints(p.get("box_dim"), f"{where}.box_dim", rank, 1, 256)
    else:
        _ints(p.get("pixel_box_lower_corner"), f"{where}.pixel_box_lower_corner", rank - 2, -32768, 32767)
        _ints(p.get("pixel_box_upper_corner"), f"{where}.pixel_box_upper_corner", rank - 2, -32768, 32767)
        _int(p.get("channels_per_pixel"), f"{where}.channels_per_pixel", 1, 256)
        _int(p.get("pixels_per_column"), f"{where}.pixels_per_column", 1, 1024)


def _check_template(tmpl, p, where, tensor):
    """Exactly 128 bytes that decode to the record's fields and the bound
    tensor's static shape and strides."""
    if not isinstance(tmpl, str) or len(tmpl) != 256:
        _bad(f"{where}.template has {len(tmpl) if isinstance(tmpl, str) else type(tmpl).__name__} "
             "characters, a descriptor is 128 bytes (256 hex digits)")
    try:
        raw = bytes.fromhex(tmpl)
    except ValueError:
        _bad(f"{where}.template is not hex")
    from .. import tensormap as tm
    try:
        f = tm.decode(raw)
    except tm.TensorMapError as e:
        _bad(f"{where}.template does not decode ({e})")
    rank = p["rank"]
    want = {"mode": p["mode"], "dtype": p["tma_format"], "rank": rank, "interleave": p["interleave"],
            "swizzle": p["swizzle"], "l2_promotion": p["l2_promotion"], "oob_fill": p["oob_fill"],
            "element_strides": tuple(p["element_strides"])}
    if p["mode"] == "tiled":
        want["box_dim"] = tuple(p["box_dim"])
    else:
        want.update(pixel_box_lower_corner=tuple(p["pixel_box_lower_corner"]),
                    pixel_box_upper_corner=tuple(p["pixel_box_upper_corner"]),
                    channels_per_pixel=p["channels_per_pixel"], pixels_per_column=p["pixels_per_column"])
    for k, v in want.items():
        got = getattr(f, k)
        if (int(got) if hasattr(got, "__int__") and not isinstance(got, tuple) else got) != v:
            _bad(f"{where}.template has {k} = {got!r}, the record says {v!r}")
    shape, strides = tensor["shape"], tensor["strides"]
    if None in shape or None in strides:
        _bad(f"{where}.template for a tensor with dynamic shape or strides")
    if tuple(f.global_dim) != tuple(reversed(shape)):
        _bad(f"{where}.template has global dims {f.global_dim}, the tensor is {tuple(reversed(shape))}")
    bits = p["element_bits"]
    want_strides = tuple(s * bits // 8 for s in reversed(strides))[1:]
    if tuple(f.global_strides) != want_strides:
        _bad(f"{where}.template has global strides {f.global_strides}, the tensor's are {want_strides}")


def _check_launch(launch, where):
    if not isinstance(launch, dict):
        _bad(f"{where}.launch is {_short(launch)}, expected an object")
    for key, hi, total in (("block", 1024, 1024), ("cluster", 16, 16)):
        v = launch.get(key)
        if v is None:
            continue
        _ints(v, f"{where}.launch.{key}", 3, 1, hi)
        if v[0] * v[1] * v[2] > total:
            _bad(f"{where}.launch.{key} {v} has more than {total} in all")
    if launch.get("smem") is not None:
        _int(launch["smem"], f"{where}.launch.smem", 0, 227 * 1024)
    if "pdl" in launch and not isinstance(launch["pdl"], bool):
        _bad(f"{where}.launch.pdl is {_short(launch['pdl'])}, expected true or false")
    if launch.get("max_grid") is not None:
        _int(launch["max_grid"], f"{where}.launch.max_grid", 1, (1 << 63) - 1)


def validate_records(records, cubin: bytes | None = None) -> dict:
    """Checks the records' schema (and, with a cubin, each kernel's parameter
    table); returns them. LaunchError(rule="artifact") on any mismatch."""
    if not isinstance(records, dict):
        _bad(f"records is {type(records).__name__}, expected an object")
    kernels = records.get("kernels")
    if not isinstance(kernels, dict):
        _bad(f"records.kernels is {type(kernels).__name__}, expected an object")
    if len(kernels) > MAX_KERNELS:
        _bad(f"{len(kernels)} kernels, at most {MAX_KERNELS}")
    if records.get("spec") is not None:  # the key of the dsl specialization compiled (compiler.of_spec)
        _str(records["spec"], "records.spec", MAX_NAME)
    secs = None  # the cubin's section headers
    for name, rec in kernels.items():
        where = f"kernel {_short(name)}"
        _str(name, "a kernel name", 1024)
        if not isinstance(rec, dict):
            _bad(f"{where} is {type(rec).__name__}, expected an object")
        params = rec.get("params")
        if not isinstance(params, list) or len(params) > MAX_PARAMS:
            _bad(f"{where}.params is {_short(params)}, expected a list")
        user = []
        descs = []
        for i, p in enumerate(params):
            w = f"{where}.params[{i}]"
            if not isinstance(p, dict):
                _bad(f"{w} is {type(p).__name__}, expected an object")
            kind = p.get("kind")
            if kind == "descriptor":
                descs.append((w, p))
                continue
            if descs:
                _bad(f"{w} is a {kind} after a descriptor; descriptors are the trailing parameters")
            if kind == "memref":
                _check_memref(p, w)
            elif kind == "scalar":
                _str(p.get("type"), f"{w}.type", 64)
                bits = p.get("bits")  # an int: 32.0 == 32 passed and made the parameter sizes floats
                if isinstance(bits, bool) or not isinstance(bits, int) or bits not in (1, 8, 16, 32, 64):
                    _bad(f"{w}.bits is {_short(p.get('bits'))}, expected 1, 8, 16, 32 or 64")
                if "signed" in p and not isinstance(p["signed"], bool):  # else read as a record without it
                    _bad(f"{w}.signed is {_short(p['signed'])}, expected true or false")
            elif kind in ("pointer", "unsupported"):
                _str(p.get("type"), f"{w}.type", 1024)
            else:
                _bad(f"{w}.kind is {_short(kind)}")
            if p.get("name") is not None:
                _str(p["name"], f"{w}.name", 256)
            user.append(p)
        for w, p in descs:
            _check_descriptor(p, w, user)
        if rec.get("launch") is not None:
            _check_launch(rec["launch"], where)
        if any(p.get("kind") == "unsupported" for p in params):
            continue
        from .launch import param_layout
        total = 0
        for entry in param_layout(params):
            size, align = entry[0], entry[1]
            total = (total + align - 1) // align * align + size
        if total > PARAM_SPACE:
            _bad(f"{where} takes {total} bytes of parameters, a launch passes at most {PARAM_SPACE}")
        if cubin is not None:
            want = _cubin.expected_sizes(params)
            try:
                if secs is None:  # once, not per kernel
                    secs = _cubin.sections(cubin)
                table = _cubin.kernel_params(cubin, name, secs, max_params=len(want))
            except (ValueError, struct_error) as e:
                _bad(f"module.cubin: {e}")
            sizes = [size for _, _, size in table]
            if sizes != want:
                _bad(f"{where}: the cubin's parameters are {len(sizes)} of sizes {sizes[:16]}, the records "
                     f"describe {len(want)} of sizes {want[:16]}")
    return records


try:
    from struct import error as struct_error
except ImportError:  # pragma: no cover
    struct_error = ValueError


def records_digest(records) -> str:
    return hashlib.sha256(json.dumps(records, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


# --------------------------------------------------------------------------- reading files safely

def read_regular(directory: Path, name: str, limit: int) -> bytes:
    """A file of `directory`, read only if it is a regular file inside it
    (a symlink is followed only to a target inside the directory) and not
    larger than `limit` bytes. Opened non-blocking so a FIFO cannot hang."""
    path = directory / name
    try:
        if path.is_symlink():
            real, root = os.path.realpath(path), os.path.realpath(directory)
            if os.path.commonpath([real, root]) != root:
                _bad(f"{name} is a symlink out of {directory}")
            path = Path(real)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as e:
        _bad(f"{name}: cannot open ({e.strerror})")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            _bad(f"{name} is not a regular file")
        if st.st_size > limit:
            _bad(f"{name} has {st.st_size} bytes, the limit is {limit}")
        data = read_upto(fd, limit + 1)
        if len(data) > limit:
            _bad(f"{name} grew past {limit} bytes while read")
        return data
    finally:
        os.close(fd)


def parse_manifest(data: bytes) -> dict:
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        _bad(f"kernels.json is not JSON ({type(e).__name__})")
    if not isinstance(manifest, dict):
        _bad(f"kernels.json holds {type(manifest).__name__}, expected an object")
    fmt = manifest.get("format")
    if fmt != FORMAT_VERSION:
        _bad(f"kernels.json format {_short(fmt)}; this nvtma reads format {FORMAT_VERSION} (rebuild the artifact)")
    if not isinstance(manifest.get("arch"), str) or not manifest["arch"].startswith("sm_"):
        _bad(f"kernels.json arch {_short(manifest.get('arch'))}")
    if not isinstance(manifest.get("files"), dict):
        _bad("kernels.json has no file checksums")
    if not isinstance(manifest.get("records_sha256"), str):
        _bad("kernels.json has no records checksum")
    return manifest


# --------------------------------------------------------------------------- the artifacts

class CompiledArtifacts:
    """IR, PTX, cubin and the kernel records of one GPU module."""

    def __init__(self, *, ir: str | None, ptx: str, cubin: bytes | None, records: dict, arch: str,
                 validate: bool = True):
        if validate:
            validate_records(records, cubin)
        self.ir = ir
        self.ptx = ptx
        self.cubin = cubin
        self.records = records
        self.arch = arch
        self._library = None
        self._handles = {}
        self._kernels = {}

    # ------------------------------------------------------------------ records
    @property
    def kernels(self) -> dict:
        """Kernel name -> record: parameters and, per descriptor, its fields."""
        return self.records.get("kernels", {})

    def descriptor_records(self, kernel: str) -> list:
        return [p for p in self.kernels[kernel]["params"] if p["kind"] == "descriptor"]

    # ------------------------------------------------------------------ files
    def manifest(self) -> dict:
        files = {"module.ptx": hashlib.sha256(self.ptx.encode()).hexdigest()}
        if self.cubin:
            files["module.cubin"] = hashlib.sha256(self.cubin).hexdigest()
        if self.ir:
            files["module.mlir"] = hashlib.sha256(self.ir.encode()).hexdigest()
        return {"format": FORMAT_VERSION, "arch": self.arch, "records": self.records,
                "records_sha256": records_digest(self.records), "files": files}

    def file_bytes(self) -> dict:
        out = {"module.ptx": self.ptx.encode()}
        if self.cubin:
            out["module.cubin"] = self.cubin
        if self.ir:
            out["module.mlir"] = self.ir.encode()
        out["kernels.json"] = json.dumps(self.manifest(), indent=1).encode()
        return out

    def save(self, directory) -> Path:
        """Writes module.ptx, module.cubin, module.mlir and kernels.json into
        `directory`, replacing an existing artifact whole: the files go to a
        sibling temporary directory that is then renamed into place. A
        directory holding anything else is refused (FileExistsError): it was
        replaced whole too, the user's files in it deleted."""
        if not str(directory):
            raise FileNotFoundError("an artifact directory named '': give its path")
        d = Path(directory)
        if d.is_dir() and not d.is_symlink():
            others = sorted(p.name for p in d.iterdir() if p.name not in FILES + ("kernels.json",)
                            or not p.is_file() or p.is_symlink())
            if others:
                raise FileExistsError(f"{d} holds {', '.join(others[:3])}{' ...' if len(others) > 3 else ''}: not "
                                      "an nvtma artifact (kernels.json and module.*), which an artifact replaces "
                                      "whole; save into a new or empty directory")
        parent = d.parent
        parent.mkdir(parents=True, exist_ok=True)
        tmp = parent / f".{d.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        os.mkdir(tmp, 0o777)  # the umask decides the mode
        try:
            for name, data in self.file_bytes().items():
                fd = os.open(tmp / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
            old = None
            if d.is_symlink() or d.exists():
                if not d.is_dir() or d.is_symlink():
                    raise FileExistsError(f"{d} exists and is not an artifact directory")
                old = parent / f".{d.name}.old-{os.getpid()}-{secrets.token_hex(4)}"
                os.rename(d, old)
            try:
                os.rename(tmp, d)
            except BaseException:
                if old is not None:
                    os.rename(old, d)
                raise
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return d

    @classmethod
    def from_files(cls, files: dict, where: str = "artifact", want_cubin: bool = True):
        """Artifacts from file contents (name -> bytes), every check applied."""
        manifest = parse_manifest(files["kernels.json"])
        sums = manifest["files"]
        for name in FILES:
            want = sums.get(name)
            data = files.get(name)
            if want is None:
                if name == "module.ptx" or (name == "module.cubin" and want_cubin):
                    _bad(f"{where}: kernels.json lists no {name}")
                continue
            if data is None:
                _bad(f"{where}: {name} is missing")
            if not isinstance(want, str) or hashlib.sha256(data).hexdigest() != want:
                _bad(f"{where}: {name} does not match its checksum")
        records = manifest.get("records")
        try:
            digest = records_digest(records)
        except (TypeError, ValueError, RecursionError):
            _bad(f"{where}: the records are not canonical JSON")
        if digest != manifest["records_sha256"]:
            _bad(f"{where}: the records do not match their checksum")
        try:
            ptx = files["module.ptx"].decode("utf-8")
            ir = files["module.mlir"].decode("utf-8") if "module.mlir" in sums else None
        except UnicodeDecodeError:
            _bad(f"{where}: module.ptx or module.mlir is not UTF-8")
        cubin = files.get("module.cubin") if "module.cubin" in sums else None
        return cls(ir=ir, ptx=ptx, cubin=cubin, records=records, arch=manifest["arch"])

    @classmethod
    def load(cls, directory, want_cubin: bool = True):
        d = Path(directory)
        if not d.is_dir():
            _bad(f"{d} is not a directory")
        files = {}
        try:
            files["kernels.json"] = read_regular(d, "kernels.json", MAX_BYTES["kernels.json"])
            manifest = parse_manifest(files["kernels.json"])
            for name in FILES:
                if name in manifest["files"]:
                    files[name] = read_regular(d, name, MAX_BYTES[name])
        except FileNotFoundError as e:
            _bad(f"{d}: {Path(e.filename).name if e.filename else 'a file'} is missing")
        except MemoryError:
            _bad(f"{d}: too large to read")
        return cls.from_files(files, str(d), want_cubin)

    # ------------------------------------------------------------------ launch
    def _kernel_handle(self, name: str) -> int:
        """The CUkernel of `name`: the cubin is loaded once, context-independently."""
        h = self._handles.get(name)
        if h is None:
            from . import driver
            if self.cubin is None:
                raise LaunchError("this module was compiled with cubin=False", rule="artifact")
            if self._library is None:
                self._library = driver.load_library(self.cubin)
            h = self._handles[name] = driver.get_kernel(self._library, name)
        return h

    def kernel(self, name: str):
        if name not in self.kernels:
            raise AttributeError(f"no kernel {name!r}; kernels: {', '.join(self.kernels) or 'none'}")
        k = self._kernels.get(name)
        if k is None:
            from .launch import new_kernel
            k = self._kernels[name] = new_kernel(self, name)
        return k

    def __getattr__(self, name):
        if name.startswith("_") or name not in self.__dict__.get("records", {}).get("kernels", {}):
            raise AttributeError(name)
        k = self.kernel(name)
        if not hasattr(type(self), name):  # never shadow a method
            self.__dict__[name] = k  # `compiled.k` is a plain attribute read from now on
        return k

    def __call__(self, *args, **kwargs):
        if len(self.kernels) != 1:
            raise LaunchError(f"{len(self.kernels)} kernels: call one by name", rule="launch")
        return self.kernel(next(iter(self.kernels)))(*args, **kwargs)


def load(directory) -> CompiledArtifacts:
    """Loads an AOT module written by CompiledModule.save (no MLIR needed)."""
    return CompiledArtifacts.load(directory)
