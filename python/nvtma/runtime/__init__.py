"""The nvtma runtime: load cubins, encode descriptors, launch kernels.

Needs only Python, cuda-bindings and nvtma's small C pieces (the descriptor
encoder and the abi3 launcher): no MLIR. Ahead-of-time artifacts written by
``CompiledModule.save(dir)`` load on any machine with a GPU::

    mod = nvtma.runtime.load("out/")
    mod.tma_copy(a, b, grid=(64, 64))     # block/cluster/smem from the kernel's record

Files by job: ``artifacts`` (AOT save/load, schema check), ``cache`` (the
compile cache), ``args`` (tensors in: torch, DLPack, CUDA array interface),
``launch`` (streams, devices, configuration, packing), ``driver`` (the CUDA
driver calls), ``cubin`` (a cubin's parameter table).
"""

from .artifacts import CompiledArtifacts, load
from .errors import LaunchError
from .launch import Kernel

__all__ = ["LaunchError", "CompiledArtifacts", "Kernel", "load"]
