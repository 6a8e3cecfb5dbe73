"""The runtime-only wheel: builds here in seconds, installs offline with
--no-index --no-deps --target, has no MLIR in it, loads and packs AOT
artifacts."""

import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    if not shutil.which("cmake") or not (shutil.which("c++") or shutil.which("g++")):
        pytest.skip("needs cmake and a C++ compiler")
    out = tmp_path_factory.mktemp("wheel")
    t = time.time()
    r = subprocess.run([sys.executable, str(ROOT / "python" / "runtime-wheel" / "backend.py"), str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    (whl,) = out.glob("nvtma_runtime-*.whl")
    return whl, time.time() - t


def test_contents(wheel):
    whl, seconds = wheel
    assert seconds < 120, f"the runtime wheel took {seconds:.0f} s"
    assert whl.name.endswith("-cp310-abi3-linux_x86_64.whl") or "abi3" in whl.name
    names = zipfile.ZipFile(whl).namelist()
    for want in ("nvtma/runtime/launch.py", "nvtma/runtime/artifacts.py", "nvtma/tensormap.py",
                 "nvtma/_lib/libnvtma_tensormap.so", "nvtma/_lib/_tensormap_fast.abi3.so",
                 "nvtma/_lib/_launch_fast.abi3.so"):
        assert want in names, want
    assert not [n for n in names if "_mlir_libs" in n or "libLLVM" in n or n.startswith("nvtma/dialects")]
    assert sum(i.file_size for i in zipfile.ZipFile(whl).infolist()) < 2 << 20


def test_installs_offline_and_runs_without_mlir(wheel, tmp_path):
    whl, _ = wheel
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target",
                        str(site), str(whl)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    import runtime_fixtures as F
    d = F.artifacts().save(tmp_path / "aot")
    code = f"""
import sys
sys.path[:0] = [{str(site)!r}, {str(HERE)!r}]
import nvtma, nvtma.runtime as rt
assert nvtma.__file__.startswith({str(site)!r}), nvtma.__file__
from helpers import FakeCudaArray
k = rt.load({str(d)!r}).kernel("k")
t = lambda p: FakeCudaArray(p, (256, 256))
k.pack(t(0x7F0000000000), t(0x7F0000100000), 3)
from nvtma.runtime import driver
assert driver._extension() is not None
assert not [m for m in sys.modules if "_mlir" in m]
from nvtma.kernels import gemm
print(gemm.gemm_spec(16, 64, 1).key)  # what Gemm(artifacts=...) looks up: the key the artifacts were saved under
assert not [m for m in sys.modules if "_mlir" in m]
print("OK")
"""
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert r.stdout.strip().endswith("OK"), r.stdout + r.stderr
    from nvtma.kernels import gemm
    assert r.stdout.split()[0] == gemm.gemm_spec(16, 64, 1).key  # the same key from the wheel's sources
