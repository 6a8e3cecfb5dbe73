"""The nvtma runtime: load cubins, encode descriptors, launch kernels.

Needs only Python, cuda-python (cuda.bindings) and libnvtma_tensormap: no
MLIR. Ahead-of-time artifacts written by ``CompiledModule.save(dir)`` load on
any machine with a GPU::

    mod = nvtma.runtime.load("out/")
    mod.tma_copy(a, b, grid=(64, 64), block=(128,))
"""

from .errors import LaunchError
from .module import CompiledArtifacts, Kernel, load

__all__ = ["LaunchError", "CompiledArtifacts", "Kernel", "load"]
