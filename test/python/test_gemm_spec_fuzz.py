"""Property tests of the GEMM's build API: any arguments give a spec or a
ValueError naming the rule, never another exception (a fuzzing campaign of
1,322 subprocess builds found ZeroDivisionError, TypeError, StopIteration and
DSL-internal build errors before, no crash); what gemm_spec accepts builds."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dsl_testing  # noqa: F401 (puts the build on the path)

# each argument's documented values (the defaults repeated: most draws then combine), and odd ones (out of
# range, wrong types)
VALUES = dict(
    BM=[8, 16, 24, 32, 40, 48, 64, 128, 256], BN=[64, 64, 128, 192, 256], wgs=[1, 1, 1, 2], stages=[None, 2, 4, 8, 16],
    w_dtype=["f8E4M3FN", "f8E4M3FN", "bf16"], y_dtype=["bf16", "f32"], w_scale=["tensor", "row", "block"],
    x_scale=[None, None, None, "token", "block", "fused"], mc=[1, 1, 1, 2, 4], ms=[1, 1, 1, 2, 4],
    kwg=[False, False, False, True], chains=[None, None, 1, 2, 4], kc=[1, 1, 1, 2, 4, 8],
    xhalf=[False, False, False, True], pdl=[True, False, "early"], store=[None, None, "tma", "direct"],
    swap=[True, True, True, False], ksplit=[1, 1, 1, 2, 4])
ODD = [0, -1, -64, 3, 1000, 2.0, "8", None, True, "f8E5M2", "row"]


@st.composite
def arguments(draw, odd=True):
    """Documented values for every argument, then (odd) up to three of them replaced by odd values."""
    kw = {k: draw(st.sampled_from(v)) for k, v in VALUES.items()}
    # most draws combine as documented: bf16 W without scales, two warpgroups with kwg and an N tile of two m64
    # blocks or four, x's scales as W's
    if kw["w_dtype"] == "bf16" and (not odd or draw(st.booleans())):
        kw.update(w_scale=None, x_scale=None)
    if kw["kwg"] and (not odd or draw(st.booleans())):
        kw["wgs"] = 2
    if kw["wgs"] == 2 and (not odd or draw(st.booleans())):
        kw["BN"] = draw(st.sampled_from([128, 256]))
    if kw["x_scale"] in ("token", "block") and (not odd or draw(st.booleans())):
        kw["x_scale"] = None
    # x as the wgmmas' A: a warpgroup per 64 rows of x, W tiles of any multiple of 8 rows, no x multicast
    # (W's, the M split, it takes, or a K split over the cluster instead), kwg or half boxes, y stored from the
    # registers
    if kw["swap"] is False and (not odd or draw(st.booleans())):
        kw.update(wgs=-(-kw["BM"] // 64), BN=draw(st.sampled_from([8, 16, 24, 56, 96, 192, 256])), mc=1,
                  kwg=False, xhalf=False, store=None, x_scale=None if kw["x_scale"] is None else "token",
                  w_scale="tensor" if kw["w_scale"] == "block" else kw["w_scale"],
                  ms=1 if kw["ksplit"] > 1 else kw["ms"])
    # the K split over a cluster: not with x or W multicast, or kwg
    if kw["ksplit"] > 1 and (not odd or draw(st.booleans())):
        kw.update(mc=1, ms=1, kwg=False, wgs=1 if kw["kwg"] else kw["wgs"])
    if odd:
        for k in draw(st.lists(st.sampled_from(sorted(VALUES)), max_size=3, unique=True)):
            kw[k] = draw(st.sampled_from(ODD))
    return kw


def _spec_or_value_error(kw):
    from nvtma.kernels import gemm
    try:
        return gemm.gemm_spec(**kw)
    except ValueError as e:
        assert str(e), kw
        return None


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arguments())
def test_gemm_spec_gives_a_spec_or_a_value_error(kw):
    sp = _spec_or_value_error(kw)
    if sp is not None:  # what it took: integers in range, as the spec records them
        assert all(type(sp.info[k]) is int for k in ("BM", "BN", "wgs", "stages", "mc", "ms", "chains", "kc"))
        assert 2 <= sp.info["stages"] and 1 <= sp.info["wgs"] <= 4


# documented values only: what gemm_spec accepts, the compiler builds (block-scaled x at BM = 40 or 48 was
# accepted and failed inside the build before)
@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arguments(odd=False))
def test_what_gemm_spec_accepts_builds(kw):
    sp = _spec_or_value_error(kw)
    if sp is not None:
        assert sp.compile().cubin
