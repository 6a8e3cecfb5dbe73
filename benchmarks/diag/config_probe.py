#!/usr/bin/env python3
"""Experiment: listed configs of a few problems, each in every one of
VARIANTS (spec options; W from DRAM, rotating over >= 256 MiB of copies, or
resident in L2: one copy, no evict_first hint), in CUDA graphs of 20 calls
(common.graph_ms). This session's runs (PROBES/VARIANTS as each ran are in
git history): BN = 128 against 64 at M >= 64 and the L2 floor (-bn), one
accumulator chain against gemm.default_chains (-1, -2), what the split-K
epilogue costs (gemm_spec diag, -3, as it stands now), and three kernel
variants built, measured and removed: K split over a cluster (-kc, commit
00b6238), W tiles narrower than 64 rows (-narrow, b098d18), wgmma groups
in flight (-lag, 7a3a320).
    python3 benchmarks/diag/config_probe.py build DIR    # here
    python3 benchmarks/diag/config_probe.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (N, K, M, mode, [(BM, BN, wgs, splits[, mc, stages])])
PROBES = [
    (4096, 7168, 128, "tensor", [(128, 64, 1, 1), (128, 64, 1, 2), (128, 64, 1, 4)]),
    (4096, 7168, 64, "tensor", [(64, 64, 1, 1), (64, 64, 1, 2), (64, 64, 1, 4)]),
    (2112, 7168, 128, "tensor", [(128, 64, 1, 1), (128, 64, 1, 2)]),
    (7168, 2048, 128, "tensor", [(128, 64, 1, 1), (128, 64, 1, 2)]),
    (2112, 7168, 1, "tensor", [(8, 128, 1, 1), (8, 128, 1, 7)]),
]
# (label, spec options, W resident in L2): the split-K epilogue in full, without its reductions into
# the workspace (the last unit still reads it), and without any of it (diagnostics: y is wrong)
VARIANTS = [("full", {}, False), ("no_red", dict(diag="no_red"), False),
            ("no_split_epilogue", dict(diag="no_split_epilogue"), False)]


def _plans(d=None):
    from nvtma.kernels import gemm
    g = gemm.Gemm(artifacts=d)
    for N, K, M, mode, cfgs in PROBES:
        fp8 = mode != "bf16"
        for cfg in cfgs:
            for label, opts, l2 in VARIANTS:
                sp, _, _ = g.plan(M, N, K, gemm.F8 if fp8 else "bf16", mode if fp8 else None, config=cfg, **opts)
                yield g, (N, K, M, mode), cfg, label, opts, l2, sp


def build(d):
    import common
    common.save_new(d, [p[-1] for p in _plans()])


def run(d):
    import torch
    import common
    dev, stream, gen = common.gpu(torch)
    prob_data = {}
    for g, prob, cfg, label, opts, l2, sp in _plans(d):
        N, K, M, mode = prob
        fp8 = mode != "bf16"
        if prob not in prob_data:
            prob_data.clear()
            w, x, sw, sx, want = common.gemm_problem(torch, gen, N, K, M, fp8)
            prob_data[prob] = (w, x, sw, sx, want, common.copies(w))
        w, x, sw, sx, want, wbufs = prob_data[prob]
        kw = dict(w_scale=sw, scale=mode, x_scale=sx) if fp8 else {}
        try:
            y = g(x, w, config=cfg, **opts, **kw)
            torch.cuda.synchronize()
            err = ((y.float() - want).abs().max() / want.abs().max()).item()

            def call(i):
                return g(x, wbufs[i], config=cfg, **opts, **kw)
            ms = common.graph_ms(torch, stream, call, 1 if l2 else len(wbufs))
            out = dict(us=round(ms * 1e3, 2), W_TBps=round(N * K * (1 if fp8 else 2) / ms / 1e9, 3),
                       err=float(f"{err:.2e}"), stages=sp.info["stages"], chains=sp.info["chains"])
        except Exception as e:  # noqa: BLE001 (a config that does not launch is a result too)
            out = dict(error=f"{type(e).__name__}: {e}"[:200])
        print(json.dumps(dict(bench="gemm-config-probe", N=N, K=K, M=M, mode=mode, config=list(cfg), w=label,
                              **out)), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
