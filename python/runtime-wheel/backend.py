"""PEP 517 backend of the nvtma-runtime wheel (see pyproject.toml).

Builds the native pieces with CMake (this folder's CMakeLists.txt), then
writes the wheel: the `nvtma` package's pure-Python modules (no MLIR
bindings), nvtma/_lib/*.so, and the console scripts that need no MLIR. The
tag is cp310-abi3-<platform>: the extensions use the limited API, the
encoder library is plain C++.

    python python/runtime-wheel/backend.py DIST_DIR     # the same, without pip
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PKG = ROOT / "python" / "nvtma"
NAME = "nvtma_runtime"
# the package's modules that import MLIR's Python bindings: not shipped
EXCLUDE_DIRS = {"_mlir_libs", "dialects", "__pycache__", "_lib", "_bin", "extras"}
SCRIPTS = {"nvtma-tensormap": "nvtma._tools:tensormap_main", "nvtma-cache": "nvtma.runtime.cache:main"}


def _version() -> str:
    m = re.search(r'^__version__ = "([^"]+)"', (PKG / "__init__.py").read_text(), re.M)
    return m.group(1) if m else "0.0.0"


def _tag() -> str:
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"cp310-abi3-{plat}"


def _native(build: Path) -> list:
    """Configures, builds and installs the native pieces; returns their paths."""
    prefix = build / "install"
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(["cmake", "-S", str(HERE), "-B", str(build), *gen, "-DCMAKE_BUILD_TYPE=Release",
                    f"-DPython3_EXECUTABLE={sys.executable}", f"-DCMAKE_INSTALL_PREFIX={prefix}"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2)], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--install", str(build), "--strip"], check=True, stdout=subprocess.DEVNULL)
    libs = sorted((prefix / "nvtma" / "_lib").glob("*.so"))
    names = {p.name for p in libs}
    for want in ("libnvtma_tensormap.so", "_tensormap_fast.abi3.so", "_launch_fast.abi3.so"):
        if want not in names:
            raise RuntimeError(f"the runtime build made no {want}")
    return libs


def _python_files() -> list:
    out = []
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG)
        if rel.parts[0] in EXCLUDE_DIRS:
            continue
        out.append((f"nvtma/{rel.as_posix()}", p))
    return out


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    tag = _tag()
    dist_info = f"{NAME}-{version}.dist-info"
    out = Path(wheel_directory) / f"{NAME}-{version}-{tag}.whl"
    files = {}
    with tempfile.TemporaryDirectory(prefix="nvtma-runtime-build-") as tmp:
        for lib in _native(Path(tmp)):
            files[f"nvtma/_lib/{lib.name}"] = lib.read_bytes()
    for arc, p in _python_files():
        files[arc] = p.read_bytes()
    files[f"{dist_info}/METADATA"] = (
        "Metadata-Version: 2.1\n"
        f"Name: nvtma-runtime\nVersion: {version}\n"
        "Summary: nvtma's MLIR-free runtime: TMA descriptors, AOT artifacts, kernel launches\n"
        "Requires-Python: >=3.10\nRequires-Dist: cuda-bindings>=12.8\n").encode()
    files[f"{dist_info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: nvtma runtime-wheel backend\n"
                                   f"Root-Is-Purelib: false\nTag: {tag}\n").encode()
    files[f"{dist_info}/entry_points.txt"] = ("[console_scripts]\n" + "".join(
        f"{k} = {v}\n" for k, v in SCRIPTS.items())).encode()
    files[f"{dist_info}/top_level.txt"] = b"nvtma\n"
    record = [_record_line(k, v) for k, v in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    out.write_bytes(buf.getvalue())
    return out.name


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version()
    d = Path(metadata_directory) / f"{NAME}-{version}.dist-info"
    d.mkdir(parents=True, exist_ok=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: nvtma-runtime\nVersion: {version}\n"
                                "Requires-Python: >=3.10\nRequires-Dist: cuda-bindings>=12.8\n")
    return d.name


if __name__ == "__main__":
    dist = sys.argv[1] if len(sys.argv) > 1 else "dist"
    print(Path(dist) / build_wheel(dist))
