"""Console scripts: nvtma-opt, nvtma-tensormap, nvtma-compile.

Bad input ends them with a non-zero status and a message (``<tool>: error:
...``), never a traceback; NVTMA_TRACEBACK=1 shows the traceback of an
unexpected error.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from pathlib import Path


def _fail(prog: str, message, status: int = 1) -> int:
    text = str(message).strip() or type(message).__name__
    print(f"{prog}: error: {text}", file=sys.stderr)
    return status


def _guarded(prog: str, main, argv) -> int:
    """Runs a tool's main: expected failures are one message; anything else
    is reported as an internal error (the traceback with NVTMA_TRACEBACK=1)."""
    try:
        return main(argv)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        return _fail(prog, "interrupted", 130)
    except (OSError, UnicodeError) as e:  # unreadable input, unwritable output
        name = f" {e.filename!r}" if getattr(e, "filename", None) else ""
        return _fail(prog, f"{getattr(e, 'strerror', None) or e}{name}")
    except RecursionError:
        return _fail(prog, "the input nests too deeply")
    except Exception as e:  # noqa: BLE001 - a CLI must not end in a traceback
        if os.environ.get("NVTMA_TRACEBACK", "0") not in ("", "0"):
            raise
        return _fail(prog, f"internal error ({type(e).__name__}: {e}); set NVTMA_TRACEBACK=1 for the traceback")


def _bin(name: str) -> str:
    path = Path(os.path.abspath(__file__)).parent / "_bin" / name
    if not path.exists():
        sys.exit(f"{name}: {path} is missing; reinstall nvtma")
    return str(path)


def nvtma_opt() -> None:
    """mlir-opt with nvtma, its passes and the nvtma-to-ptx pipeline."""
    exe = _bin("nvtma-opt")
    try:
        os.execv(exe, [exe] + sys.argv[1:])
    except OSError as e:
        sys.exit(f"nvtma-opt: error: cannot run {exe}: {e.strerror or e}")


def _is_file(src: str) -> bool:
    try:
        return len(src) < 4096 and Path(src).is_file()
    except OSError:  # hex or JSON text too long to be a file name
        return False


_MAX_JSON = 1 << 20  # encode's arguments, decode's hex (a few hundred characters)
_MAX_IR = 512 << 20  # an artifact's module.mlir has at most as many bytes


def _read_text(src: str, limit: int) -> str:
    """File `src` (stdin for "-") as text, refused past `limit` characters:
    /dev/zero or an endless pipe was read until memory ran out."""
    if src == "-":
        if sys.stdin is None:  # started with stdin closed
            raise OSError(errno.EBADF, "no standard input to read", "-")
        text = sys.stdin.read(limit + 1)
    else:
        with open(src) as f:
            text = f.read(limit + 1)
    if len(text) > limit:
        raise OSError(errno.EFBIG, f"more than {limit} characters in", "stdin" if src == "-" else src)
    return text


def _read_hex(src: str) -> bytes:
    from .tensormap import TensorMapError
    p = Path(src)
    if _is_file(src):
        with open(p, "rb") as f:
            data = f.read(_MAX_JSON + 1)  # a descriptor's hex is a few hundred bytes; not all of a huge file
        if len(data) == 128:
            return data
        src = data.decode(errors="replace")
    text = "".join(src.split()).replace("0x", "").replace(",", "")
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise TensorMapError("descriptor-layout: expected 128 bytes as hex or a 128-byte file",
                             rule="descriptor-layout") from None


def tensormap_main(argv=None) -> int:
    """nvtma-tensormap decode <hex|file> | encode <json|file|->"""
    return _guarded("nvtma-tensormap", _tensormap_main, argv)


def _tensormap_main(argv) -> int:
    from . import tensormap as tm
    ap = argparse.ArgumentParser(prog="nvtma-tensormap", description="Encode and decode CUDA TMA descriptors "
                                 "(CUtensorMap) byte-exactly like the driver, without a GPU.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("decode", help="bytes (hex string or 128-byte file) -> JSON fields")
    d.add_argument("descriptor")
    e = sub.add_parser("encode", help="JSON arguments (encode_tiled/encode_im2col names, plus \"mode\") -> hex")
    e.add_argument("json", help="JSON text, a file, or - for stdin")
    e.add_argument("--sm", type=int, default=90)
    e.add_argument("--out", help="write the 128 bytes to this file")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "decode":
            fields = tm.decode(_read_hex(a.descriptor))
            print(json.dumps(fields.to_json(), indent=1))
            return 0
        src = _read_text(a.json, _MAX_JSON) if a.json == "-" or _is_file(a.json) else a.json
        try:
            args = json.loads(src)
        except json.JSONDecodeError as ex:
            print(f"nvtma-tensormap: invalid JSON: {ex}", file=sys.stderr)
            return 2
        except ValueError:  # an integer Python will not read (an internal error before)
            print(f"nvtma-tensormap: invalid JSON: a number of more than {sys.get_int_max_str_digits()} digits",
                  file=sys.stderr)
            return 2
        if not isinstance(args, dict):
            print("nvtma-tensormap: the JSON must be an object of encode arguments", file=sys.stderr)
            return 2
        mode = args.pop("mode", "tiled")
        fn = {"tiled": tm.encode_tiled, "im2col": tm.encode_im2col}.get(mode) if isinstance(mode, str) else None
        if fn is None:
            print(f"nvtma-tensormap: mode {mode!r} is not tiled or im2col", file=sys.stderr)
            return 2
        if "sm" in args:
            print("nvtma-tensormap: give the target with --sm, not in the JSON", file=sys.stderr)
            return 2
        try:
            raw = fn(**args, sm=a.sm)
        except TypeError as ex:  # a missing or unknown argument name
            print(f"nvtma-tensormap: {ex}", file=sys.stderr)
            return 2
        if a.out:
            Path(a.out).write_bytes(raw)
        print(json.dumps({"hex": raw.hex(), "fields": tm.decode(raw).to_json()}, indent=1))
        return 0
    except tm.TensorMapError as ex:
        print(f"nvtma-tensormap: error: {ex}", file=sys.stderr)
        return 1


def compile_main(argv=None) -> int:
    """nvtma-compile kernel.mlir -o outdir [--arch sm_90a]: AOT artifacts."""
    return _guarded("nvtma-compile", _compile_main, argv)


def _compile_main(argv) -> int:
    ap = argparse.ArgumentParser(prog="nvtma-compile", description="Compile nvtma IR ahead of time to "
                                 "module.ptx, module.cubin and kernels.json (load with nvtma.runtime.load).")
    ap.add_argument("input", help=".mlir file, or - for stdin")
    ap.add_argument("-o", "--output", required=True, help="output directory")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--ptx-version", type=int, default=None)
    ap.add_argument("-O", "--opt-level", type=int, default=None,
                    help="LLVM opt level, 0..3 (default: 3, or the level the module's own NVVM target asks for)")
    ap.add_argument("--no-cubin", action="store_true", help="PTX only")
    a = ap.parse_args(argv)
    from .compiler import CompileError, compile
    text = _read_text(a.input, _MAX_IR)
    try:
        out = compile(text, arch=a.arch, ptx_version=a.ptx_version, opt_level=a.opt_level, cubin=not a.no_cubin)
    except CompileError as ex:
        print(f"nvtma-compile: error: {ex}", file=sys.stderr)
        return 1
    d = out.save(a.output)
    for name, rec in out.kernels.items():
        descs = [p for p in rec["params"] if p["kind"] == "descriptor"]
        print(f"{name}: {len(rec['params'])} params, {len(descs)} TMA descriptors "
              f"({', '.join(p['l2_promotion_name'] for p in descs)})")
    print(f"wrote {d}/module.ptx ({len(out.ptx)} bytes)"
          + (f", module.cubin ({len(out.cubin)} bytes)" if out.cubin else "") + ", kernels.json")
    return 0
