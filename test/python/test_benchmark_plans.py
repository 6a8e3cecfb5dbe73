"""The GEMM experiments of benchmarks/diag plan what they build: their diagnostics and profiling builds
(gemm_spec's diag and profile, which a Gemm refuses as options) through benchmarks/common.py's gemm_plan. Since
the host fuzz campaign's option checks, config_probe, stream_floor and wait_clocks had stopped at their first
such variant with the Gemm's ValueError; planning builds no IR, so every plan is checked here."""

import re
import sys

import pytest

import dsl_testing  # noqa: F401 (puts the build on the path)
from helpers import REPO
from nvtma.kernels import gemm

sys.path[:0] = [str(REPO / "benchmarks"), str(REPO / "benchmarks" / "diag")]
common = pytest.importorskip("common")


OPTIONS = [{}, dict(pdl=False), dict(store="tma"), dict(store="direct"), dict(chains=1), dict(l2_w="l2_256b"),
           dict(w_hint="evict_last"), dict(xhalf=True)]


def test_a_planned_spec_is_built_again_from_its_arguments():
    """common.spec_args(spec) gives gemm_spec what builds `spec` again (its key), for every candidate config of a
    few problems, every W scaling and y dtype, and options whose default gemm_spec and the kernel's constants
    state differently (pdl off, TMA stores, f32 y): what with_spec adds a diag or profile to."""
    g = gemm.Gemm()
    n = 0
    for M, N, K in ((1, 7168, 2048), (16, 4096, 7168), (100, 2112, 7168), (256, 24576, 1536)):
        for wd, scale in ((gemm.F8, "tensor"), (gemm.F8, "row"), (gemm.F8, "block"), ("bf16", None)):
            for cfg in gemm.candidates(M, N, K, wd, scale=scale)[:12]:
                for y in ("bf16", "f32"):
                    for opts in OPTIONS:
                        try:
                            sp = g.plan(M, N, K, wd, scale, y_dtype=y, config=cfg, **opts)[0]
                        except ValueError:  # (an option this config does not take)
                            continue
                        assert gemm.gemm_spec(**common.spec_args(sp)).key == sp.key, (M, N, K, scale, cfg, y, opts)
                        n += 1
    assert n > 500


def test_with_spec_adds_the_options_a_gemm_refuses():
    g = gemm.Gemm()
    sp = g.plan(16, 7168, 2048, gemm.F8, "tensor", pdl=False, y_dtype="f32")[0]
    assert common.with_spec(sp) is sp and common.with_spec(sp, diag=None) is sp
    for extra in (dict(diag="stream_only"), dict(diag="x_early"), dict(profile="clocks"), dict(profile=64)):
        got = common.gemm_plan(g, 16, 7168, 2048, gemm.F8, "tensor", pdl=False, y_dtype="f32", **extra)[0]
        # the planned kernel's constants, and the option
        assert got.consts == dict(sp.consts, **extra) and got.param_types[2].dtype == sp.param_types[2].dtype
    with pytest.raises(ValueError, match="not a Gemm option"):  # what the experiments had hit
        g.plan(16, 7168, 2048, gemm.F8, "tensor", diag="stream_only")


def test_the_experiments_plan_every_variant():
    import config_probe
    import stream_floor
    import wait_clocks
    plans = list(config_probe._plans())
    assert len(plans) > 100 and any(p[4].get("diag") for p in plans)
    assert any(sp.consts.get("diag") == "barriers" for p in plans for sp in p[-1])
    skipped = []
    specs = list(stream_floor._specs(skipped=skipped))
    assert not skipped and {sp.consts.get("diag") for sp in specs} >= {None, "stream_only", "stream_no_wait"}
    for probes in stream_floor.PROBE_SETS:
        skipped = []
        assert list(stream_floor._specs(probes, skipped)), probes
        # what the historical probe sets ask that the kernel no longer builds: rings that no longer fit beside
        # the epilogue tile, diagnostics beside a cluster's K split
        assert all(re.search(r"a ring of \d+ stages|^ksplit=\d+ with", e) for e in skipped), (probes, skipped)
    clocks = [p[-1] for p in wait_clocks._plans()]
    assert {sp.consts.get("profile") for sp in clocks} == {None, "clocks"}


def test_the_fused_racecheck_probe_plans_its_cluster_cases():
    pytest.importorskip("torch")  # (race_fused runs the cases with torch)
    import race_fused
    cluster = list(race_fused._cluster_cases())
    assert cluster and all(common.with_diag(sp, "barriers").consts["diag"] == "barriers" for _, sp in cluster)
