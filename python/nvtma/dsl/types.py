"""The MLIR types and attributes the language builds, in one place: through
MLIR's Python bindings where they have a builder, else through nvtma's
extension (the C++ builders of nvgpu's mbarrier types, GPU address spaces,
NVVM shapes, LLVM loop annotations and function types): never parsed from
text."""

from __future__ import annotations

from .._lazy import lazy

ir = lazy("nvtma.ir")
llvm = lazy("nvtma.dialects.llvm")
_ext = lazy("nvtma._mlir_libs._nvtmaDialects")

__all__ = ["ptr", "workgroup", "mbarrier_group", "mbarrier_token", "shared_memref", "mma_shape",
           "ld_st_matrix_shape", "loop_unroll", "llvm_function", "attribute_name"]

_names = {}


def attribute_name(what: str) -> str:
    """The name, as the defining dialect spells it, of an attribute the
    language sets: "container_module", "known_cluster_size", "dynamic_smem",
    "pdl", "max_grid", "unsigned" (a parameter's), "link" (a gpu.module's) or "loop_annotation"."""
    if not _names:
        _names.update(_ext.attribute_names(ir.Context.current))
    return _names[what]


def ptr(space: int = 0):
    """!llvm.ptr in address space `space` (1 global, 3 shared, 6 tensor, 7 cluster)."""
    return llvm.PointerType.get(space) if space else llvm.PointerType.get()


def address_space(t):
    """The address space of an !llvm.ptr type `t` (0 generic, 1 global, 3 shared, ...), or None for any other
    type: read from the type, not its spelling."""
    return t.maybe_downcast().address_space if t.typeid == llvm.PointerType.static_typeid else None


def workgroup():
    """#gpu.address_space<workgroup>: shared memory."""
    return _ext.workgroup_address_space(ir.Context.current)


def shared_memref(shape, element_type):
    return ir.MemRefType.get(list(shape), element_type, memory_space=workgroup())


def mbarrier_group(n: int):
    """!nvgpu.mbarrier.group of `n` barriers in shared memory."""
    return _ext.mbarrier_group_type(n, ir.Context.current)


def mbarrier_token():
    return _ext.mbarrier_token_type(ir.Context.current)


def mma_shape(m: int, n: int, k: int):
    """#nvvm.shape<m, n, k>"""
    return _ext.mma_shape(m, n, k, ir.Context.current)


def ld_st_matrix_shape(m: int, n: int):
    """#nvvm.ld_st_matrix_shape<m, n>"""
    return _ext.ld_st_matrix_shape(m, n, ir.Context.current)


def loop_unroll(count: int):
    """#llvm.loop_annotation<unroll = ...>: 0 unrolls fully, 1 not at all,
    n > 1 n times."""
    return _ext.loop_unroll_annotation(count, ir.Context.current)


def llvm_function(result, params):
    """!llvm.func<result (params...)>; `result` None is void."""
    ctx = ir.Context.current
    return _ext.llvm_function_type(_ext.llvm_void_type(ctx) if result is None else result, list(params))
