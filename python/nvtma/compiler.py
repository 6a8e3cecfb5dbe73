"""nvtma.compile: nvtma IR -> PTX -> cubin, with a content-addressed cache.

    compiled = nvtma.compile(module_or_kernel, arch="sm_90a")
    compiled.ptx, compiled.cubin, compiled.kernels, compiled.sass()
    compiled.save("out/")                 # AOT: nvtma.runtime.load("out/")
    compiled.tma_copy(a, b, grid=...)

The compile cache (nvtma.runtime.cache) is keyed by nvtma's build, the
MLIR/LLVM and PTX assembler versions, the target, the options and the IR;
its entries are private to the user and verified before use, and a bad one
is rebuilt. ``NVTMA_CACHE_DIR`` relocates it (default ``~/.cache/nvtma``),
``NVTMA_CACHE=0`` turns it off, ``nvtma-cache list|clear|info`` inspects it.
CUDA tools (cuobjdump, nvdisasm, ptxas) are found through ``$CUOBJDUMP`` /
``$NVDISASM`` / ``$PTXAS``, then cuda-pathfinder (NVIDIA's wheels and the
CUDA toolkit), then ``PATH``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

from .runtime import cache as _cache
from .runtime.artifacts import CompiledArtifacts
from .runtime.errors import LaunchError

__all__ = ["compile", "CompiledModule", "CompileError", "cache_dir", "ptx_to_cubin", "link_stamp"]

_ARCH_RE = re.compile(r"^sm_(\d+)([af]?)$")


class CompileError(RuntimeError):
    """nvtma could not compile the module; the message carries MLIR's or the
    PTX compiler's diagnostics."""


def cache_dir() -> Path | None:
    """The compile cache's directory, or None when it is off or refused."""
    return _cache.directory()


def find_tool(name: str) -> str | None:
    """A CUDA command-line tool: $NAME (upper case), then cuda-pathfinder
    (NVIDIA's wheels, CUDA_HOME, the toolkit), then PATH."""
    env = os.environ.get(name.upper().replace("-", "_"))
    if env:
        return env
    try:
        from cuda.pathfinder import find_nvidia_binary_utility
        found = find_nvidia_binary_utility(name)
        if found:
            return str(found)
    except Exception:  # an old cuda-pathfinder or none
        pass
    return shutil.which(name)


def _ptx_features(arch: str, ptx_version: int | None) -> str:
    if not isinstance(arch, str):
        raise CompileError(f"arch {arch!r} is not an sm_XX[a] name (e.g. 'sm_90a')")
    if ptx_version is not None and (isinstance(ptx_version, bool) or not isinstance(ptx_version, int)
                                    or not 60 <= ptx_version <= 999):
        raise CompileError(f"ptx_version {ptx_version!r}: pass an int such as 86 (PTX ISA 8.6)")
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
    if isinstance(getattr(module, "ir", None), str):  # a dsl Specialization or BuiltKernel
        return module.ir
    if callable(getattr(module, "build", None)):  # an @nvtma.dsl.kernel without constants
        return module.build().ir
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
            _performance_advice(nvjitlink, handle)
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
    ptxas = find_tool("ptxas")
    refused = ptxas and "wgmma.mma_async" in ptx and _ptxas_refuses(ptx, _ptxas_release(ptxas))
    if refused:
        errors.append(f"ptxas ({ptxas}): {refused}")
    elif ptxas:
        with tempfile.TemporaryDirectory() as d:
            src, out = Path(d, "k.ptx"), Path(d, "k.cubin")
            src.write_text(ptx)
            r = subprocess.run([ptxas, f"-arch=sm_{sm}", "-O3", str(src), "-o", str(out)],
                               capture_output=True, text=True)
            if r.returncode == 0:
                return out.read_bytes()
            errors.append(f"ptxas: {r.stderr.strip()}")
    raise CompileError("cannot assemble PTX to a cubin:\n  " + "\n  ".join(errors))


def _ptxas_release(exe):
    """(major, minor) of a ptxas ("release 13.0, V13.0.88"), or None."""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"release (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _ptxas_refuses(ptx, release):
    """Why this ptxas must not assemble this PTX, or None. CUDA 13.0's ptxas
    miscompiles the wgmma descriptors of nvtma's two-warpgroup GEMM (a 64-bit
    add of the descriptor's constant loses its high word: wrong results,
    benchmarks/diag/ptxas_variants.py); 13.5's and nvJitLink 13.5 are right."""
    if release == (13, 0) and "wgmma.mma_async" in ptx:
        return ("CUDA 13.0's ptxas miscompiles wgmma descriptor arithmetic (wrong results), so it does not "
                "assemble kernels with wgmma: install nvidia-nvjitlink (an nvtma dependency) or a newer ptxas")
    return None


class PerformanceWarning(UserWarning):
    """ptxas reports that it compiled a kernel slower than it was written."""


class RegisterBudgetWarning(PerformanceWarning):
    """ptxas ignored the kernel's setmaxnreg (lang.WarpgroupRole / WarpRole
    `regs=`): every warp keeps the kernel's one register allocation. As
    nvJitLink runs ptxas it always does (C7504, "to maintain compatibility
    across compilation units"); CUTLASS #3406 has the C7508 kind."""


def _performance_advice(nvjitlink, handle):
    """Warns of ptxas's serialized wgmma: every wgmma of the kernel then waits
    for the one before, whatever the kernel's commit/wait groups say (the
    usual cause, a call in the kernel, is most often a 64-bit division or
    remainder by a run-time value: divide in 32 bits)."""
    try:
        n = nvjitlink.get_info_log_size(handle)
        b = bytearray(n)
        nvjitlink.get_info_log(handle, b)
    except Exception:
        return
    for line in b.decode(errors="replace").splitlines():
        if "'setmaxnreg' ignored" in line:
            warnings.warn(f"ptxas: {line.split(':', 1)[-1].strip().rstrip('.')}: the register budgets of `regs=` "
                          "are not applied, every warp keeps the kernel's one allocation", RegisterBudgetWarning,
                          stacklevel=4)
        if "wgmma.mma_async instructions are serialized" in line:
            hint = (" (a call: most often a 64-bit division or remainder by a run-time value; divide in 32 bits)"
                    if "Extern calls" in line else "")
            warnings.warn(f"ptxas: {line.split(':', 1)[-1].strip()}{hint}", PerformanceWarning, stacklevel=4)


# ----------------------------------------------------------------------------- device libraries

def _device_library(name: str, arch: str) -> Path:
    if name == "nvshmem":
        from .nvshmem import bitcode_library
        try:
            return bitcode_library(arch)
        except FileNotFoundError as e:
            raise CompileError(f"NVSHMEM kernels need NVSHMEM's device library: {e}") from None
    raise CompileError(f"the IR asks to link device library {name!r}; nvtma links 'nvshmem'")


def link_stamp(kind: str, what: str, arch: str) -> tuple[str, Path]:
    """(line, path): what a cached module records of one bitcode file it
    linked, and that file. `kind` "library": `what` is a device library's
    name (nvtma.link), found for `arch`; "file": a path a gpu.module's own
    #nvvm.target links. The line names the file as resolved now, its device,
    inode, size, mtime and ctime (which a copy keeping times does not keep):
    a cache entry whose lines differ from what they find now is not used.
    CompileError where nothing is found."""
    try:
        p = Path(_device_library(what, arch) if kind == "library" else what).resolve()
        st = p.stat()
    except (OSError, ValueError, RuntimeError) as e:  # (a NUL in the path; a symlink loop before Python 3.13)
        raise CompileError(f"the bitcode a GPU module links ({what}): {e}") from None
    return "\t".join((kind, what, f"{p}:{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:"
                                   f"{st.st_ctime_ns}")), p


def _links_current(lines: bytes, arch: str) -> bool:
    """Whether a cache entry's recorded links (link_stamp lines) are the
    files they find now."""
    for line in lines.decode("utf-8", "surrogateescape").split("\n"):
        kind, _, rest = line.partition("\t")
        what, _, _ = rest.partition("\t")
        try:
            if kind not in ("library", "file") or link_stamp(kind, what, arch)[0] != line:
                return False
        except CompileError:
            return False
    return True


# ----------------------------------------------------------------------------- MLIR pipeline

def _lower(text: str, arch: str, features: str, opt_level: int | None):
    # Screen, target check, parse, pipeline and PTX extraction in one C-API
    # call: walking the result with Python IR objects would import every
    # dialect's generated op classes (and numpy), ~150 ms of a cold compile.
    # The C++ side screens the text and checks the target before MLIR and
    # LLVM see them (either could end the process).
    from ._mlir_libs import _mlir  # noqa: F401  (site initialization: dialects, passes, NVVM target)
    from ._mlir_libs._mlir.ir import Context
    from ._mlir_libs._nvtmaDialects import lower_to_ptx

    stamps = []  # each linked file's link_stamp, taken before LLVM reads it

    def stamp(kind, what):
        line, path = link_stamp(kind, what, arch)
        stamps.append(line)
        return str(path)

    with Context() as ctx:
        try:
            records, objects = lower_to_ptx(ctx, text, arch, features, opt_level,
                                            resolve_link=lambda name: stamp("library", name),
                                            linked_file=lambda path: stamp("file", path))
        except ValueError as e:
            stage, _, diags = str(e).partition("\n")
            what = {"parse:": "the IR does not parse or verify",
                    "target:": "unsupported target",
                    "module:": f"the IR's GPU module cannot be compiled as asked (arch={arch!r}, "
                               f"opt_level={opt_level})"}.get(stage, "lowering failed")
            if stage not in ("parse:", "target:", "module:"):
                diags = str(e)
            raise CompileError(f"{what}:\n{diags}") from None
    records = json.loads(records) if records else {"kernels": {}}
    if not objects:
        raise CompileError("the module has no GPU module to compile")
    if len(objects) > 1:
        raise CompileError(f"{len(objects)} GPU modules: compile one per nvtma.compile call")
    return objects[0].decode(), records, "\n".join(stamps)


class CompiledModule(CompiledArtifacts):
    """A compiled nvtma module: IR, PTX, cubin, kernel records; launchable."""

    libraries = ""  # the link_stamp lines of the bitcode files linked into it

    def sass(self) -> str:
        """The cubin's SASS (needs cuobjdump on PATH or in CUOBJDUMP)."""
        tool = find_tool("cuobjdump")
        if not tool:
            raise FileNotFoundError("cuobjdump not found: install nvidia-cuda-cuobjdump or put it on PATH")
        with tempfile.TemporaryDirectory() as d:
            p = Path(d, "k.cubin")
            p.write_bytes(self.cubin)
            env = dict(os.environ)
            nvdisasm = find_tool("nvdisasm")
            if nvdisasm:  # cuobjdump -sass runs nvdisasm
                env["NVDISASM_PATH"] = str(Path(nvdisasm).parent)
                env["PATH"] = str(Path(nvdisasm).parent) + os.pathsep + env.get("PATH", "")
            r = subprocess.run([tool, "-sass", str(p)], capture_output=True, text=True, env=env)
            if r.returncode:
                raise CompileError(f"cuobjdump failed: {r.stderr.strip()}")
            return r.stdout


def compile(module, arch: str | None = None, *, ptx_version: int | None = None, opt_level: int | None = None,
            cubin: bool = True, cache: bool | None = None) -> CompiledModule:
    """Compile nvtma IR (a Module, its text, or a kernel) for `arch`: by
    default a kernel's own (``@dsl.kernel(arch=..., ptx=...)``), else sm_90a.

    Runs the `nvtma-to-ptx` pipeline in-process (linking the device
    libraries a gpu.module's ``nvtma.link`` names), then assembles the PTX
    to a cubin (nvJitLink, else ptxas) unless ``cubin=False``. `opt_level`
    None is 3, or the level a gpu.module's own #nvvm.target asks for; a
    module whose own target names another chip or (given) level than asked
    is refused. Raises CompileError with MLIR's diagnostics on invalid IR.
    """
    t0 = time.perf_counter()
    kern = getattr(module, "kernel", module)  # a Specialization's kernel, or the kernel itself
    if arch is None:
        arch = getattr(kern, "arch", None) if callable(getattr(kern, "build", None)) else None
        if arch is not None and ptx_version is None:
            ptx_version = getattr(kern, "ptx", None)
        arch = arch or "sm_90a"
    text = _module_text(module)
    features = _ptx_features(arch, ptx_version)
    if opt_level is not None and (isinstance(opt_level, bool) or not isinstance(opt_level, int)
                                  or not 0 <= opt_level <= 3):
        raise CompileError(f"opt level {opt_level!r} is not one LLVM takes; supported: 0, 1, 2, 3")
    d = cache_dir() if cache is None or cache else None
    key = None
    if d is not None:
        key = _cache.compile_key(text, arch, features, opt_level, "cubin" if cubin else "ptx", d)
        hit = load_cached(d, key, want_cubin=cubin)
        if hit is not None:
            hit.compile_seconds = time.perf_counter() - t0
            hit.from_cache = True
            return of_spec(hit, module)
    ptx, records, libraries = _lower(text, arch, features, opt_level)
    blob = ptx_to_cubin(ptx, arch) if cubin else None
    try:
        out = CompiledModule(ir=text, ptx=ptx, cubin=blob, records=records, arch=arch)
    except LaunchError as e:  # the compiler wrote records the runtime cannot launch
        raise CompileError(f"the compiled module's records are invalid: {e}") from None
    out.libraries = libraries
    if d is not None:
        _cache.store(d, key, cache_files(out))
    out.compile_seconds = time.perf_counter() - t0
    out.from_cache = False
    return of_spec(out, module)


def of_spec(out, module):
    """`out`, with the key of the dsl Specialization it was compiled from in its records (``"spec"``): what
    loaders of AOT artifacts by key (``Gemm(artifacts=DIR)``: DIR/<spec.key>) check the module under a key
    is."""
    from .dsl.kernel import Specialization
    if isinstance(module, Specialization):
        out.records = {**out.records, "spec": module.key}
    return out


def cache_files(module: CompiledModule) -> dict:
    """What the compile cache keeps of `module`: its files, and the
    link_stamp of each bitcode file linked into it (load_cached checks
    them)."""
    files = module.file_bytes()
    if module.libraries:
        files["libraries"] = module.libraries.encode("utf-8", "surrogateescape")
    return files


def load_cached(d: Path, key: str, want_cubin: bool = True) -> CompiledModule | None:
    """The cached module of `key`, or None (missing, foreign or corrupt, or
    linked against bitcode other than what its names and paths find now:
    the caller rebuilds it and the new entry replaces the bad one)."""
    files = _cache.load(d, key)
    if files is None or "kernels.json" not in files:
        return None
    try:
        out = CompiledModule.from_files(files, "cache entry", want_cubin=want_cubin)
    except LaunchError:
        return None
    out.libraries = files.get("libraries", b"").decode("utf-8", "surrogateescape")
    if out.libraries and not _links_current(files["libraries"], out.arch):
        return None
    return out
