"""The MLIR types and attributes the language builds, in one place: built
through the bindings where they have a builder; the few dialect types
without one (nvgpu's mbarrier group, GPU address spaces) are spelled here
and nowhere else."""

from __future__ import annotations

from .._lazy import lazy

ir = lazy("nvtma.ir")
llvm = lazy("nvtma.dialects.llvm")

__all__ = ["ptr", "workgroup", "mbarrier_group", "mbarrier_token", "shared_memref"]


def ptr(space: int = 0):
    """!llvm.ptr in address space `space` (1 global, 3 shared, 6 tensor, 7 cluster)."""
    return llvm.PointerType.get(space) if space else llvm.PointerType.get()


def workgroup():
    """#gpu.address_space<workgroup>: shared memory."""
    return ir.Attribute.parse("#gpu.address_space<workgroup>")


def shared_memref(shape, element_type):
    return ir.MemRefType.get(list(shape), element_type, memory_space=workgroup())


def mbarrier_group(n: int):
    """!nvgpu.mbarrier.group of `n` barriers in shared memory."""
    return ir.Type.parse(f"!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = {n}>")


def mbarrier_token():
    return ir.Type.parse("!nvgpu.mbarrier.token")
