"""nvtma.compile: nvtma IR -> PTX -> cubin, with a content-addressed cache.

    compiled = nvtma.compile(module_or_kernel, arch="sm_90a")
    compiled.ptx, compiled.cubin, compiled.kernels, compiled.sass()
    compiled.save("out/")                 # AOT: nvtma.runtime.load("out/")
    compiled.tma_copy(a, b, grid=..., block=...)

The cache key is the SHA-256 of the nvtma version, the input IR, the target and
the options. Entries are written atomically (temp file + rename), so several
processes compiling the same kernel converge on one valid entry; a truncated or
corrupt entry fails its checksum and is rebuilt. ``NVTMA_CACHE_DIR`` relocates
the cache (default ``~/.cache/nvtma``), ``NVTMA_CACHE=0`` disables it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from . import __version__
from .runtime.module import CompiledArtifacts

__all__ = ["compile", "CompiledModule", "CompileError", "cache_dir", "ptx_to_cubin"]

_ARCH_RE = re.compile(r"^sm_(\d+)([af]?)$")


class CompileError(RuntimeError):
    """nvtma could not compile the module; the message carries MLIR's or the
    PTX compiler's diagnostics."""


def cache_dir() -> Path | None:
    if os.environ.get("NVTMA_CACHE", "1") in ("0", "false", "off", "no"):
        return None
    return Path(os.environ.get("NVTMA_CACHE_DIR", Path.home() / ".cache" / "nvtma"))


def _ptx_features(arch: str, ptx_version: int | None) -> str:
    m = _ARCH_RE.match(arch)
    if not m:
        raise CompileError(f"arch {arch!r} is not an sm_XX[a] name (e.g. 'sm_90a')")
    sm = int(m.group(1))
    if sm < 90:
        raise CompileError(f"arch {arch}: nvtma needs sm_90 or newer (TMA)")
    if ptx_version is None:
        return ""  # the C++ target table picks the chip's default
    return f"+ptx{ptx_version}"


def _module_text(module) -> str:
    if isinstance(module, str):
        return module
    if hasattr(module, "operation"):
        return str(module.operation)
    if hasattr(module, "build_module"):  # an nvtma.dsl kernel specialization
        return str(module.build_module().operation)
    raise TypeError(f"cannot compile {type(module).__name__}: pass an nvtma.ir.Module, IR text or a kernel")


# ----------------------------------------------------------------------------- PTX -> cubin

def ptx_to_cubin(ptx: str, arch: str) -> bytes:
    """Assembles PTX with nvJitLink (cuda-python, no GPU needed) or, failing
    that, the ptxas on PATH."""
    sm = arch.replace("sm_", "")
    errors = []
    try:
        from cuda.bindings import nvjitlink
        handle = nvjitlink.create(2, [f"-arch=sm_{sm}", "-O3"])
        try:
            data = ptx.encode()
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "nvtma.ptx")
            nvjitlink.complete(handle)
            size = nvjitlink.get_linked_cubin_size(handle)
            buf = bytearray(size)
            nvjitlink.get_linked_cubin(handle, buf)
            return bytes(buf)
        except Exception as e:  # nvJitLinkError carries the log
            log = ""
            try:
                n = nvjitlink.get_error_log_size(handle)
                b = bytearray(n)
                nvjitlink.get_error_log(handle, b)
                log = b.decode(errors="replace").strip("\0\n ")
            except Exception:
                pass
            errors.append(f"nvJitLink: {e} {log}".strip())
        finally:
            nvjitlink.destroy(handle)
    except Exception as e:  # no cuda-bindings or no libnvJitLink
        errors.append(f"nvJitLink unavailable: {e}")
    ptxas = shutil.which("ptxas")
    if ptxas:
        with tempfile.TemporaryDirectory() as d:
            src, out = Path(d, "k.ptx"), Path(d, "k.cubin")
            src.write_text(ptx)
            r = subprocess.run([ptxas, f"-arch=sm_{sm}", "-O3", str(src), "-o", str(out)],
                               capture_output=True, text=True)
            if r.returncode == 0:
                return out.read_bytes()
            errors.append(f"ptxas: {r.stderr.strip()}")
    raise CompileError("cannot assemble PTX to a cubin:\n  " + "\n  ".join(errors))


# ----------------------------------------------------------------------------- MLIR pipeline

def _lower(text: str, arch: str, features: str, opt_level: int):
    # Screen, target check, parse, pipeline and PTX extraction in one C-API
    # call: walking the result with Python IR objects would import every
    # dialect's generated op classes (and numpy), ~150 ms of a cold compile.
    # The C++ side screens the text and checks the target before MLIR and
    # LLVM see them (either could end the process).
    from ._mlir_libs import _mlir  # noqa: F401  (site initialization: dialects, passes, NVVM target)
    from ._mlir_libs._mlir.ir import Context
    from ._mlir_libs._nvtmaDialects import lower_to_ptx

    with Context() as ctx:
        try:
            records, objects = lower_to_ptx(ctx, text, arch, features, opt_level)
        except ValueError as e:
            stage, _, diags = str(e).partition("\n")
            what = {"parse:": "the IR does not parse or verify", "pipeline:": "bad pass pipeline",
                    "target:": "unsupported target"}.get(stage, "lowering failed")
            raise CompileError(f"{what}:\n{diags}") from None
    records = json.loads(records) if records else {"kernels": {}}
    if not objects:
        raise CompileError("the module has no gpu.module to compile")
    if len(objects) > 1:
        raise CompileError(f"{len(objects)} gpu.modules: compile one gpu.module per nvtma.compile call")
    return objects[0].decode(), records


def _wheel_tool(name: str) -> str | None:
    """A CUDA tool from NVIDIA's PyPI wheels (nvidia-cuda-cuobjdump puts it
    in site-packages/nvidia/cu13/bin)."""
    import sysconfig
    for base in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        for sub in ("cu13", "cu12", "cuda_cuobjdump"):
            cand = Path(base, "nvidia", sub, "bin", name)
            if cand.exists():
                return str(cand)
    return None


class CompiledModule(CompiledArtifacts):
    """A compiled nvtma module: IR, PTX, cubin, kernel records; launchable."""

    def sass(self) -> str:
        """The cubin's SASS (needs cuobjdump on PATH or in CUOBJDUMP)."""
        tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump") or _wheel_tool("cuobjdump")
        if not tool:
            raise FileNotFoundError("cuobjdump not found: install nvidia-cuda-cuobjdump or put it on PATH")
        with tempfile.TemporaryDirectory() as d:
            p = Path(d, "k.cubin")
            p.write_bytes(self.cubin)
            env = dict(os.environ)
            nvdisasm = shutil.which("nvdisasm") or _wheel_tool("nvdisasm")
            if nvdisasm:  # cuobjdump -sass runs nvdisasm
                env["NVDISASM_PATH"] = str(Path(nvdisasm).parent)
                env["PATH"] = str(Path(nvdisasm).parent) + os.pathsep + env.get("PATH", "")
            r = subprocess.run([tool, "-sass", str(p)], capture_output=True, text=True, env=env)
            if r.returncode:
                raise CompileError(f"cuobjdump failed: {r.stderr.strip()}")
            return r.stdout


def _cache_key(text: str, arch: str, features: str, opt_level: int) -> str:
    h = hashlib.sha256()
    for part in (f"nvtma {__version__}", arch, features, str(opt_level), text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def compile(module, arch: str = "sm_90a", *, ptx_version: int | None = None, opt_level: int = 3,
            cubin: bool = True, cache: bool | None = None) -> CompiledModule:
    """Compile nvtma IR (a Module, its text, or a kernel) for `arch`.

    Runs the `nvtma-to-ptx` pipeline in-process, then assembles the PTX to a
    cubin (nvJitLink, else ptxas) unless ``cubin=False``. Raises CompileError
    with MLIR's diagnostics on invalid IR.
    """
    t0 = time.perf_counter()
    text = _module_text(module)
    features = _ptx_features(arch, ptx_version)
    use_cache = (cache if cache is not None else True) and cache_dir() is not None
    key = _cache_key(text, arch, features, opt_level)
    if use_cache:
        hit = CompiledModule.load_cache_entry(cache_dir() / key[:2] / key, want_cubin=cubin)
        if hit is not None:
            hit.compile_seconds = time.perf_counter() - t0
            hit.from_cache = True
            return hit
    ptx, records = _lower(text, arch, features, opt_level)
    blob = ptx_to_cubin(ptx, arch) if cubin else None
    out = CompiledModule(ir=text, ptx=ptx, cubin=blob, records=records, arch=arch)
    if use_cache:
        out.write_cache_entry(cache_dir() / key[:2] / key)
    out.compile_seconds = time.perf_counter() - t0
    out.from_cache = False
    return out
