"""The GEMM's host API under a fuzzing campaign's findings (2026-12, /tmp/fuzz2 findings 7 and 8): the cost model
on GPUs of few SMs (sms=1 divided by zero ranking CTA pairs), and Gemm's spec options checked by name and value
when it is made (a str mc or ms was a TypeError in the plan's comparisons, BM= or a misspelt name gemm_spec's
TypeError at the first call); and the H200's table still what a plan at 132 SMs runs."""

import itertools

import numpy as np
import pytest

from nvtma.kernels import gemm

SCALES = ("bf16", "tensor", "row", "block")
# the table's problems, and odd ones: one W tile, K of one partial K step, N of 3 8-row groups, a K tail
SHAPES = sorted({(N, K) for N, K, _, _ in gemm.MEASURED}) + [(16, 16), (128, 8), (24, 136), (4104, 520)]


def _problem(scale):
    return ("bf16", None) if scale == "bf16" else (gemm.F8, scale)


@pytest.mark.parametrize("sms", [1, 2, 3, 7])
def test_the_gemm_plans_for_a_gpu_of_few_sms(sms):
    """Every problem plans on a GPU (or MIG slice) of 1-7 SMs, to clusters no larger than its SMs (the M split
    and x multicast need two: none at one SM) and a grid of at least one CTA; every candidate too."""
    for (N, K), M, scale in itertools.product(SHAPES, (1, 9, 33, 65, 128, 256), SCALES):
        w_dtype, sc = _problem(scale)
        for quantize in (False,) if scale == "bf16" else (False, True):
            sp, splits, _ = gemm.Gemm().plan(M, N, K, w_dtype, sc, quantize=quantize, sms=sms)
            i = sp.info
            assert max(i["mc"], i["ms"], i["ksplit"]) <= sms, (N, K, M, scale, i)
            parts, (grid,) = gemm.parts_for(splits, N, K, sp.consts["BN"], w_dtype, sms, i["mc"], i["ms"], i["kc"],
                                            i["ksplit"])
            assert parts >= 1 and grid >= 1, (N, K, M, scale, parts, grid)
        for c in gemm.candidates(M, N, K, w_dtype, sms, scale=sc):
            assert max(c.mc, c.ms, c.ksplit) <= sms, (N, K, M, scale, c)


def test_a_cluster_larger_than_the_gpu_is_refused():
    """A given config (or option) of CTA pairs on one SM: parts_for's grid had no CTA."""
    with pytest.raises(ValueError, match="clusters of 2 CTAs, each on an SM of its own, on a GPU of 1 SMs"):
        gemm.Gemm().plan(128, 4096, 7168, gemm.F8, "tensor", sms=1, config=(64, 64, 1, 1, 1, None, 2))
    with pytest.raises(ValueError, match="clusters of 2 CTAs"):
        gemm.Gemm(mc=2).plan(64, 7168, 2048, gemm.F8, "tensor", sms=1)
    gemm.Gemm(mc=2).plan(64, 7168, 2048, gemm.F8, "tensor", sms=2)


@pytest.mark.parametrize("opts,message", [
    (dict(BM=64), "BM=64: not a Gemm option, it is the config's"),
    (dict(wgs=2), "wgs=2: not a Gemm option, it is the config's"),
    (dict(w_scale="row"), "w_scale='row': not a Gemm option, it is the call's scale="),
    (dict(stagse=4), "stagse=4: not a Gemm option (did you mean stages?); the options are stages, mc, ms"),
    (dict(bogus=1), "bogus=1: not a Gemm option; the options are stages, mc, ms, kwg, kc, swap, xhalf"),
    (dict(mc="2"), "mc='2': 1, 2 or 4 CTAs of a cluster sharing x"),
    (dict(mc=True), "mc=True: 1, 2 or 4"),
    (dict(mc=3), "mc=3: 1, 2 or 4"),
    (dict(ms="tma"), "ms='tma': 1, 2 or 4 CTAs of a cluster sharing W"),
    (dict(kc=9), "kc=9: K steps a stage, 1 to 8"),
    (dict(kc=2.0), "kc=2.0: K steps a stage, 1 to 8"),
    (dict(stages="8"), "stages='8': None (the deepest ring up to 8 that fits) or an integer >= 2"),
    (dict(stages=1), "stages=1: None"),
    (dict(chains=3), "chains=3: None or 1, 2 or 4"),
    (dict(kwg="yes"), "kwg='yes': False or True"),
    (dict(kwg=np.array([1, 0])), "kwg=array([1, 0]): False or True"),
    (dict(swap=1), "swap=1: True (W the wgmmas' A) or False"),
    (dict(xhalf="no"), "xhalf='no': None"),
    (dict(store="dma"), "store='dma': None, 'tma' or 'direct'"),
    (dict(pdl="start"), "pdl='start': False, True or 'early'"),
    (dict(l2_w="l2_512b"), "l2_w: 'l2_512b' is not a L2Promotion"),
    (dict(x_hint=0.5), "x_hint=0.5: None, an L2 eviction priority"),
    (dict(ksplit=2), "ksplit=2: not a Gemm option"),
    (dict(x_scale="fused"), "x_scale='fused': x's scaling follows"),
])
def test_gemm_options_are_checked_when_it_is_made(opts, message):
    """A ValueError naming the option and its value from Gemm(**opts) itself, and from a plan's options."""
    with pytest.raises(ValueError) as e:
        gemm.Gemm(**opts)
    assert message in str(e.value), str(e.value)
    with pytest.raises(ValueError) as e:
        gemm.Gemm().plan(16, 2048, 7168, gemm.F8, "tensor", **opts)
    assert message in str(e.value), str(e.value)


@pytest.mark.parametrize("opts", [
    dict(), dict(stages=4), dict(stages=np.int64(3)), dict(mc=1), dict(ms=np.int64(1)), dict(kc=2), dict(kwg=False),
    dict(chains=None), dict(chains=2), dict(xhalf=None), dict(xhalf=True), dict(store="tma"), dict(pdl="early"),
    dict(pdl=False), dict(l2_w="l2_256b"), dict(l2_x="none"), dict(w_hint="evict_normal"), dict(x_hint=None),
    dict(swap=True),
])
def test_valid_gemm_options_plan(opts):
    """What the options took before they were checked, they take (each built for the table's config)."""
    sp, _, _ = gemm.Gemm(**opts).plan(16, 4096, 7168, gemm.F8, "tensor")
    for name in ("stages", "kc", "chains"):
        if opts.get(name) is not None:
            assert sp.info[name] == opts[name]


def _table_plan(M, key):
    """(what gemm_spec's info holds of the table's config, its grid's K splits) for M rows at the entry `key`:
    the entry as choose_config maps it (W as A: BM / ms rows a CTA; x as A: M rounded up to 8 rows, the ring
    no deeper than that tile leaves room for), unchanged by the plan."""
    N, K, BM, scale = key
    w_dtype, sc = _problem(scale)
    block = scale == "block"
    cfg = gemm.Config(BM, *gemm.MEASURED[key])
    if cfg.swap:
        bm, wgs = BM // cfg.ms, cfg.wgs
        stages = cfg.stages or gemm.max_stages(bm, cfg.BN, w_dtype, block)
    else:
        bm, wgs = gemm.x_as_a_tile(-(-M // cfg.ms), block)
        stages = min(cfg.stages, gemm.deepest_stages(bm, cfg.BN, w_dtype, block, kc=cfg.kc, swap=False,
                                                     ksplit=cfg.ksplit))
    return dict(BM=bm, BN=cfg.BN, wgs=wgs, stages=stages, mc=cfg.mc, ms=cfg.ms, kwg=cfg.kwg, kc=cfg.kc,
                swap=cfg.swap, ksplit=cfg.ksplit), cfg.grid_splits


def test_the_table_configs_are_what_a_plan_at_132_sms_runs():
    """Every MEASURED entry (the H200's and H100's 132 SMs), at the first and last M of its tile, plans to the
    table's config (e4m3 or bf16 x as given): the cost model's and the options' checks left them alone."""
    for key in gemm.MEASURED:
        N, K, BM, scale = key
        w_dtype, sc = _problem(scale)
        for M in (BM // 2 + 1 if BM > 8 else 1, BM):
            sp, splits, q = gemm.Gemm().plan(M, N, K, w_dtype, sc, sms=132)
            want, want_splits = _table_plan(M, key)
            assert {k: sp.info[k] for k in want} == want and splits == want_splits and q is None, (key, M, sp.info)


@pytest.mark.parametrize("config,message", [
    ("64/64/1/1", r"config='64/64/1/1': a Config, or a tuple of its fields \(BM, BN, wgs, splits"),
    ({"BM": 64}, "a Config, or a tuple of its fields"),
    (64, "config=64: a Config"),
    ((64, 64, 1), r"config=\(64, 64, 1\): 3 values, Config takes 4 to 11"),
    ((64, 64, 1, 1) + (1,) * 8, "12 values, Config takes 4 to 11"),
    ((64, 64, 1, 1, "2"), "config mc='2': an integer"),
    ((64, 64, 1, 2.0), "config splits=2.0: an integer"),
    ((64.0, 64, 1, 1), "config BM=64.0: an integer"),
    ((64, 64, True, 1), "config wgs=True: an integer"),
    ((64, 64, 1, -1), "config splits=-1: at least 0"),
    ((64, 64, 1, 1, 0), "config mc=0: 1, 2 or 4 CTAs of a cluster sharing x"),
    ((64, 64, 1, 1, 3), "config mc=3: 1, 2 or 4 CTAs"),
    ((64, 64, 1, 1, 1, None, 8), "config ms=8: 1, 2 or 4 CTAs of a cluster sharing W"),
    ((0, 64, 1, 1), "config BM=0: at least 1"),
    ((64, 64, 1, 1, 1, 1), r"config stages=1: None \(the deepest ring up to 8 that fits\) or an integer >= 2"),
    ((64, 64, 1, 1, 1, "4"), "config stages='4': an integer"),
    ((64, 64, 2, 1, 1, None, 1, 2), "config kwg=2: False or True"),
    ((64, 64, 1, 1, 1, None, 1, False, 2, 1), "config swap=1: False or True"),
    ((64, 64, 1, 1, 1, None, 1, False, 9), "config kc=9: K steps a stage, 1 to 8"),
    ((64, 64, 1, 1, 1, None, 1, False, 0), "config kc=0: K steps a stage, 1 to 8"),
])
def test_a_given_config_is_checked_field_by_field(config, message):
    """A config= of the wrong shape or with a value of the wrong type: a str mc was a TypeError in the plan's
    comparisons, a float split count went into the grid's arithmetic, a kwg of 2 was taken as True."""
    with pytest.raises(ValueError, match=message):
        gemm.Gemm().plan(64, 7168, 2048, gemm.F8, "tensor", config=config)


def test_a_given_config_takes_lists_numpy_values_and_configs():
    """What the check lets through plans as the same Config of Python values."""
    want = gemm.Gemm().plan(64, 7168, 2048, gemm.F8, "tensor", config=(64, 64, 1, 1))
    for config in ([64, 64, 1, 1], (np.int64(64), np.int32(64), 1, 1), gemm.Config(64, 64, 1, 1),
                   (64, 64, 1, 1, 1, None, 1, np.bool_(False))):
        got = gemm.Gemm().plan(64, 7168, 2048, gemm.F8, "tensor", config=config)
        assert got[0].key == want[0].key and got[1:] == want[1:], config
    assert gemm.given_config((np.int64(64), 64, 1, 1)) == gemm.Config(64, 64, 1, 1)
    assert type(gemm.given_config((np.int64(64), 64, 1, 1)).BM) is int
