"""The MLIR types and attributes the language builds come from builders
(MLIR's bindings or nvtma's extension), never from MLIR text in Python."""

import ast
from pathlib import Path

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from nvtma import ir  # noqa: E402
from nvtma.dsl import types  # noqa: E402

PKG = Path(__file__).resolve().parents[2] / "python" / "nvtma"


def test_builders_make_what_the_spelling_names():
    with ir.Context():
        i32 = ir.IntegerType.get_signless(32)
        made = {
            types.workgroup(): "#gpu.address_space<workgroup>",
            types.mbarrier_group(4): "!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, "
                                     "num_barriers = 4>",
            types.mbarrier_token(): "!nvgpu.mbarrier.token",
            types.mma_shape(64, 128, 16): "#nvvm.shape<m = 64, n = 128, k = 16>",
            types.ld_st_matrix_shape(8, 8): "#nvvm.ld_st_matrix_shape<m = 8, n = 8>",
            types.loop_unroll(0): "#llvm.loop_annotation<unroll = <full = true>>",
            types.loop_unroll(1): "#llvm.loop_annotation<unroll = <disable = true>>",
            types.loop_unroll(6): "#llvm.loop_annotation<unroll = <count = 6 : i32>>",
            types.llvm_function(i32, [types.ptr(), i32]): "!llvm.func<i32 (ptr, i32)>",
            types.llvm_function(None, []): "!llvm.func<void ()>",
        }
        for got, spelling in made.items():
            want = (ir.Type if spelling.startswith("!") else ir.Attribute).parse(spelling)
            assert got == want, (str(got), spelling)


def _mlir_text_parses():
    """Calls of Type.parse / Attribute.parse / Module.parse in python/nvtma."""
    out = []
    for f in sorted(PKG.rglob("*.py")):
        if "_mlir_libs" in f.parts or f.name.startswith("_") and f.parent.name == "dialects":
            continue
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parse" \
                    and isinstance(node.func.value, (ast.Attribute, ast.Name)) \
                    and getattr(node.func.value, "attr", getattr(node.func.value, "id", "")) in (
                        "Type", "Attribute", "Module", "ir"):
                out.append(f"{f.relative_to(PKG)}:{node.lineno}")
    return out


def test_python_nvtma_parses_no_mlir_text():
    # (a user's spelling of an element type, tma_atom_type(element_type="f16"), is built by element_type_of)
    assert _mlir_text_parses() == []


def test_attribute_names_come_from_the_dialects_that_define_them():
    """The attributes the language sets are named by their dialects (the C
    API), not spelled in nvtma's Python."""
    from nvtma import ir
    from nvtma.dsl import types
    with ir.Context():
        names = {k: types.attribute_name(k) for k in
                 ("container_module", "known_cluster_size", "dynamic_smem", "pdl", "loop_annotation")}
    assert names == {"container_module": "gpu.container_module", "known_cluster_size": "known_cluster_size",
                     "dynamic_smem": "nvtma.dynamic_smem", "pdl": "nvtma.pdl", "loop_annotation": "loop_annotation"}


def test_address_space_reads_the_pointer_type_not_its_spelling():
    from nvtma import ir
    from nvtma.dsl import types
    with ir.Context():
        assert [types.address_space(types.ptr(s)) for s in (0, 1, 3, 6, 7)] == [0, 1, 3, 6, 7]
        assert types.address_space(ir.IntegerType.get_signless(32)) is None
        assert types.address_space(ir.F32Type.get()) is None
