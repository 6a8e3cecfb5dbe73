"""The GEMM experiments of benchmarks/diag plan what they build: their diagnostics and profiling builds
(gemm_spec's diag and profile, which a Gemm refuses as options) through benchmarks/common.py's gemm_plan. Since
the host fuzz campaign's option checks, config_probe, stream_floor and wait_clocks had stopped at their first
such variant with the Gemm's ValueError; planning builds no IR, so every plan is checked here."""

import sys

import pytest

import dsl_testing  # noqa: F401 (puts the build on the path)
from helpers import REPO
from nvtma.kernels import gemm

sys.path[:0] = [str(REPO / "benchmarks"), str(REPO / "benchmarks" / "diag")]
common = pytest.importorskip("common")


def test_a_spec_rebuilt_with_spec_only_options_is_the_planned_one_with_them():
    g = gemm.Gemm()
    sp = g.plan(16, 7168, 2048, gemm.F8, "tensor")[0]
    assert common.with_spec(sp) is sp and common.with_spec(sp, diag=None) is sp
    for extra in (dict(diag="stream_only"), dict(diag="x_early"), dict(profile="clocks"), dict(profile=64)):
        got = common.gemm_plan(g, 16, 7168, 2048, gemm.F8, "tensor", **extra)[0]
        want = gemm.gemm_spec(**{k: v for k, v in {**sp.info, **sp.consts}.items()
                                 if k in gemm.gemm_spec.__code__.co_varnames}, **extra)
        assert got.key == want.key != sp.key, extra
        assert all(got.consts[k] == v for k, v in extra.items())
    with pytest.raises(ValueError, match="not a Gemm option"):  # what the experiments had hit
        g.plan(16, 7168, 2048, gemm.F8, "tensor", diag="stream_only")


def test_the_experiments_plan_every_variant():
    import config_probe
    import stream_floor
    import wait_clocks
    plans = list(config_probe._plans())
    assert len(plans) > 100 and any(p[4].get("diag") for p in plans)
    assert any(sp.consts.get("diag") == "barriers" for p in plans for sp in p[-1])
    specs = list(stream_floor._specs())
    assert {sp.consts.get("diag") for sp in specs} >= {None, "stream_only", "stream_no_wait"}
    for probes in stream_floor.PROBE_SETS:
        assert list(stream_floor._specs(probes)), probes
    clocks = [p[-1] for p in wait_clocks._plans()]
    assert {sp.consts.get("profile") for sp in clocks} == {None, "clocks"}


def test_the_fused_racecheck_probe_plans_its_cluster_cases():
    pytest.importorskip("torch")  # (race_fused runs the cases with torch)
    import race_fused
    cluster = list(race_fused._cluster_cases())
    assert cluster and all(common.with_diag(sp, "barriers").consts["diag"] == "barriers" for _, sp in cluster)
