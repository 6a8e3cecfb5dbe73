#!/usr/bin/env python3
"""Experiment: ring depth against co-residency for the small-M GEMM. With
programmatic dependent launch the next call's CTAs load their first W stages
while this call finishes, but only where they fit on an SM beside this
call's CTA; the deepest ring (up to 8 stages) leaves no room for a second CTA
at BN >= 128; a config with fewer CTAs than SMs may want more bytes in flight
per SM instead. Each problem runs with the default ring, the deepest ring
that lets two CTAs share an SM, 12 and 16 stages, and the deepest ring that
fits, through gemm.Gemm in CUDA graphs
of 20 calls rotating over >= 256 MiB of W (benchmarks/common.graph_ms).
    python3 benchmarks/diag/stages_experiment.py build DIR    # here
    python3 benchmarks/diag/stages_experiment.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (N, K, M, mode, (BM, BN, wgs, splits)): configs that leave SMs idle (64 or 112 CTAs) and ones that fill them
PROBLEMS = [(4096, 7168, 1, "tensor", (8, 64, 1, 1)), (4096, 7168, 8, "tensor", (8, 64, 1, 1)),
            (4096, 7168, 32, "tensor", (32, 64, 1, 1)), (4096, 7168, 64, "tensor", (64, 64, 1, 1)),
            (4096, 7168, 1, "tensor", (8, 128, 1, 4)), (7168, 2048, 1, "tensor", (8, 64, 1, 1)),
            (7168, 2048, 32, "tensor", (32, 64, 1, 1)), (2112, 7168, 1, "tensor", (8, 128, 2, 7)),
            (2112, 7168, 16, "tensor", (16, 64, 1, 4)), (24576, 1536, 1, "tensor", (8, 192, 1, 1)),
            (4096, 7168, 8, "bf16", (8, 128, 1, 4)), (4096, 7168, 64, "bf16", (64, 64, 1, 2)),
            (16384, 16384, 8, "tensor", (8, 128, 2, 1))]


def depths(BM, BN, fp8):
    """{label: stages}: the default (up to 8), the deepest two CTAs per SM
    fit, 12 and 16 (where they fit), and the deepest ring one CTA fits (up to 32)."""
    from nvtma.kernels import gemm
    wd = gemm.F8 if fp8 else "bf16"
    deepest = min(gemm.deepest_stages(BM, BN, wd), 32)
    out = {"default": gemm.max_stages(BM, BN, wd), "two_per_sm": min(gemm.two_per_sm_stages(BM, BN, wd), 16),
           "deepest": deepest}
    out.update({f"s{n}": n for n in (12, 16) if n < deepest})
    return out


def _plans(d=None):
    from nvtma.kernels import gemm
    g = gemm.Gemm(artifacts=d)
    for N, K, M, mode, cfg in PROBLEMS:
        fp8 = mode != "bf16"
        variants = [(label, dict(stages=st)) for label, st in depths(cfg[0], cfg[1], fp8).items()]
        variants.append(("early_trigger", dict(pdl="early")))  # the next call launched once the prefetch is issued
        for label, opts in variants:
            sp, _, _ = g.plan(M, N, K, gemm.F8 if fp8 else "bf16", mode if fp8 else None, config=cfg, **opts)
            yield g, (N, K, M, mode, cfg), label, opts, sp


def build(d):
    import common
    common.save_new(d, [sp for *_, sp in _plans()])


def run(d):
    import torch
    import common
    dev, stream, gen = common.gpu(torch)
    cur, res = None, {}
    for g, prob, label, opts, sp in list(_plans(d)) + [(None, None, None, None, None)]:
        if prob != cur and cur is not None:
            N, K, M, mode, cfg = cur
            print(json.dumps(dict(bench="gemm-stages", N=N, K=K, M=M, mode=mode, config=list(cfg), **res)), flush=True)
            res = {}
        cur = prob
        if prob is None:
            break
        N, K, M, mode, cfg = prob
        fp8 = mode != "bf16"
        wbytes = N * K * (1 if fp8 else 2)
        w, x, sw, sx, want = common.gemm_problem(torch, gen, N, K, M, fp8)
        kw = dict(w_scale=sw, scale=mode, x_scale=sx) if fp8 else {}
        wbufs = common.copies(w)
        nbufs = len(wbufs)

        def call(i):
            return g(x, wbufs[i], config=cfg, **opts, **kw)

        y = call(0)
        torch.cuda.synchronize()
        err = ((y.float() - want).abs().max() / want.abs().max()).item()
        ms = common.graph_ms(torch, stream, call, nbufs)
        res[label] = dict(stages=sp.info["stages"], us=round(ms * 1e3, 2),
                          W_TBps=round(wbytes / ms / 1e9, 3), err=float(f"{err:.2e}"))


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
