"""Programmatic dependent launch in DSL kernels: cuda.griddepcontrol_wait /
griddepcontrol_launch_dependents, @dsl.kernel(pdl=True) and its record."""

import re

import pytest

import dsl_testing  # noqa: F401 (puts the build on the path)
from dsl_testing import build_error, ptx
from nvtma import cuda, dsl


def _copy(pdl, wait=True, trigger=True, arch="sm_90a"):
    @dsl.kernel(block=(128,), pdl=pdl, arch=arch)
    def k(x: dsl.Tensor("f32", (None,)), y: dsl.Tensor("f32", (None,))):
        i = dsl.block_idx() * 128 + dsl.thread_idx()
        if wait:
            cuda.griddepcontrol_wait()
        with dsl.if_(i < x.shape[0]):
            y[i] = x[i] * 2.0
        if trigger:
            cuda.griddepcontrol_launch_dependents()
    return k


def test_a_pdl_kernel_waits_and_triggers_and_its_record_says_pdl():
    import nvtma
    k = _copy(True)
    text = ptx(k)
    assert re.search(r"griddepcontrol\.wait;", text) and re.search(r"griddepcontrol\.launch_dependents;", text)
    mod = nvtma.compile(k.build().ir)
    assert mod.records["kernels"]["k"]["launch"]["pdl"] is True
    plain = nvtma.compile(_copy(False).build().ir)
    assert "pdl" not in plain.records["kernels"]["k"]["launch"]


def test_a_pdl_kernel_that_never_waits_is_a_build_error():
    e = build_error(_copy(True, wait=False), rule="pdl")
    assert "griddepcontrol_wait" in str(e)


def test_griddepcontrol_needs_sm_90():
    e = build_error(_copy(False, arch="sm_80"), rule="arch")
    assert "sm_90" in str(e) and "sm_80" in str(e)


@pytest.mark.parametrize("pdl", [False, True])
def test_the_gemm_built_for_pdl_loads_w_before_its_wait(pdl):
    """The PDL GEMM issues W tensor loads before griddepcontrol.wait and the
    launch_dependents trigger after its last load; the plain one has neither."""
    from nvtma.kernels import gemm
    text = gemm.gemm_spec(8, 64, 1, w_scale="tensor", pdl=pdl).compile().ptx
    waits = [m.start() for m in re.finditer(r"griddepcontrol\.wait;", text)]
    assert bool(waits) == pdl and bool(re.search(r"griddepcontrol\.launch_dependents;", text)) == pdl
    if pdl:
        first_load = re.search(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global", text).start()
        assert first_load < min(waits)


@pytest.mark.parametrize("pdl", [False, True])
def test_the_gemv_built_for_pdl_waits_before_x_and_triggers_after_its_loads(pdl):
    """The PDL GEMV's consumers wait before they read x or the scale or
    write y (no global load or store before the wait), its producer triggers after its last W load and
    never waits; its record says pdl. The plain GEMV has neither."""
    from nvtma import kernels
    mod = kernels.gemv(1024, 4096, "f8E4M3FN", tile=(64, 256), stages=4, scale="tensor", fp8_math="f32",
                       split="rows", pdl=pdl).compile()
    text = mod.ptx
    waits = [m.start() for m in re.finditer(r"griddepcontrol\.wait;", text)]
    triggers = [m.start() for m in re.finditer(r"griddepcontrol\.launch_dependents;", text)]
    assert (len(waits), len(triggers)) == ((1, 1) if pdl else (0, 0))
    assert mod.records["kernels"]["gemv"]["launch"].get("pdl", False) is pdl
    if pdl:
        loads = [m.start() for m in re.finditer(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global", text)]
        assert loads and max(loads) < triggers[0]
        # x and the scale are read, y written, only after the wait
        assert not re.search(r"(ld|st)\.global", text[:waits[0]]) and re.search(r"ld\.global", text[waits[0]:])
