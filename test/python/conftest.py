"""Shared fixtures: GPU detection, compiling or loading kernels.

GPU tests (marker `gpu`) skip cleanly without a GPU. They compile their
kernels with nvtma.compile when the MLIR extension is importable; on a
machine without it (e.g. the GPU box under another Python) they load the
same kernels from AOT artifacts in $NVTMA_GPU_ARTIFACTS, built with
`python test/python/build_gpu_artifacts.py DIR`.
"""

import os
from pathlib import Path

import pytest


def _gpu_available() -> bool:
    try:
        from cuda.bindings import driver as d
        if d.cuInit(0)[0] != d.CUresult.CUDA_SUCCESS:
            return False
        err, n = d.cuDeviceGetCount()
        if err != d.CUresult.CUDA_SUCCESS or n < 1:
            return False
        err, dev = d.cuDeviceGet(0)
        err, major = d.cuDeviceGetAttribute(
            d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
        return major >= 9
    except Exception:
        return False


HAVE_GPU = _gpu_available()


def pytest_collection_modifyitems(config, items):
    if HAVE_GPU:
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU with compute capability >= 9.0")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def spec_key(spec) -> str:
    """Artifact directory of a kernel-library specialization: its name,
    constants and the nvtma version (no MLIR needed to compute it); for a
    kernel given as IR text, a hash of the text."""
    key = getattr(spec, "key", None)
    if key is None:
        import hashlib
        key = f"{spec.name}-{hashlib.sha256(spec.ir.encode()).hexdigest()[:16]}"
    return key


def have_compiler() -> bool:
    try:
        import nvtma._mlir_libs._nvtmaDialects  # noqa: F401
        return True
    except Exception:
        return False


def build(spec):
    """The compiled module of a KernelSpec: compiled now, or loaded AOT."""
    art = os.environ.get("NVTMA_GPU_ARTIFACTS")
    if art and (Path(art) / spec_key(spec) / "kernels.json").exists():
        import nvtma.runtime
        return nvtma.runtime.load(Path(art) / spec_key(spec))
    if not have_compiler():
        pytest.skip(f"no MLIR extension and no AOT artifact for {spec.name} in $NVTMA_GPU_ARTIFACTS")
    if hasattr(spec, "compile"):
        return spec.compile()
    import nvtma
    return nvtma.compile(spec.ir)


def launch(spec, mod, grid=None):
    """Launch keywords from the kernel's record (block, cluster, dynamic
    shared memory) and the spec's grid."""
    rec = mod.kernels[spec.name].get("launch") or {}
    kw = dict(grid=grid if grid is not None else spec.grid, block=tuple(rec.get("block") or spec.block),
              smem=rec.get("smem", 0))
    if rec.get("cluster"):
        kw["cluster"] = tuple(rec["cluster"])
    return kw


@pytest.fixture(scope="session")
def stub(tmp_path_factory):
    """The folder of the stand-in libcuda.so.1 (cuda_stub), built once a run."""
    import cuda_stub
    d = cuda_stub.build(tmp_path_factory.mktemp("stubcuda"))
    if d is None:
        pytest.skip("no C compiler for the stub libcuda")
    pytest.importorskip("cuda.bindings")
    return d
