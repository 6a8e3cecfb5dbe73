#!/usr/bin/env python3
"""Experiment: what a GEMM call costs beside streaming W. At K = 2048 and
7168, M = 1 and 64, e4m3 W per-tensor, N from 1024 to 32768: the time of a
call as benchmarks/gemm_bench.py times it (CUDA graphs of 20 calls rotating
over >= 256 MiB of W, best of 10), for nvtma's Gemm (the config it picks),
the same with W in L2 (one copy), Gemm(autotune=True) (the fastest of the
candidates, the table's problems aside), and torch._scaled_mm; then per (K, M, who)
the least-squares line t = a + bytes / R over N: R the stream rate, a the
per-call cost no W size removes (what a target near the DRAM rate must fit
under at a small W).
    python3 benchmarks/diag/intercept.py build DIR    # here
    python3 benchmarks/diag/intercept.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

NS = (1024, 2048, 4096, 8192, 16384, 32768)
PROBLEMS = [(N, K, M) for K in (2048, 7168) for M in (1, 64) for N in NS]


def build(d):
    import common
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    common.save_new(d, [g.plan(M, N, K, gemm.F8, "tensor", config=c)[0] for N, K, M in PROBLEMS
                        for c in gemm.candidates(M, N, K, scale="tensor")])


def _fit(points):
    """(a us, R TB/s) of the least-squares line t = a + bytes / R."""
    n = len(points)
    mx = sum(b for b, _ in points) / n
    my = sum(t for _, t in points) / n
    slope = sum((b - mx) * (t - my) for b, t in points) / sum((b - mx) ** 2 for b, _ in points)
    return round(my - slope * mx, 3), round(1e-6 / slope, 3) if slope > 0 else None


def run(d):
    import torch
    import common
    from nvtma.kernels import gemm
    dev, stream, gen = common.gpu(torch)
    g = gemm.Gemm(artifacts=d)
    gt = gemm.Gemm(artifacts=d, autotune=True)  # the table's problems aside, the fastest candidate
    fits = {}
    for N, K, M in PROBLEMS:
        w0 = (torch.randn(N, K, generator=gen, device=dev) / 4).to(torch.float8_e4m3fn)
        wbufs = common.copies(w0)
        sw, one = torch.tensor([0.02], device=dev), torch.ones(1, device=dev)
        x = torch.randn(M, K, generator=gen, device=dev).to(torch.float8_e4m3fn)
        sx = torch.ones(M, device=dev)
        ours = common.graph_ms(torch, stream, lambda i: g(x, wbufs[i], w_scale=sw, scale="tensor", x_scale=sx),
                               len(wbufs)) * 1e3
        l2 = common.graph_ms(torch, stream, lambda i: g(x, wbufs[0], w_scale=sw, scale="tensor", x_scale=sx),
                             1) * 1e3
        tuned = common.graph_ms(torch, stream, lambda i: gt(x, wbufs[i], w_scale=sw, scale="tensor", x_scale=sx),
                                len(wbufs)) * 1e3
        base = common.graph_ms(torch, stream, lambda i: torch._scaled_mm(x, wbufs[i].t(), scale_a=one, scale_b=sw,
                                                                         out_dtype=torch.bfloat16),
                               len(wbufs)) * 1e3
        y = g(x, w0, w_scale=sw, scale="tensor", x_scale=sx).float()
        ref = (x.float() @ w0.float().t()) * 0.02
        err = ((y - ref).abs().max() / ref.abs().max()).item()
        out = dict(nvtma=round(ours, 2), nvtma_w_in_l2=round(l2, 2), autotuned=round(tuned, 2),
                   scaled_mm=round(base, 2))
        yt = gt(x, w0, w_scale=sw, scale="tensor", x_scale=sx).float()
        err = max(err, ((yt - ref).abs().max() / ref.abs().max()).item())
        for who, t in out.items():
            fits.setdefault((K, M, who), []).append((N * K, t))
        spec, splits, _ = g.plan(M, N, K, gemm.F8, "tensor")
        won = [t.best_config(x, w0, sw, sx)["config"] for t in gt._tuners.values()
               if t.key_of((x, w0, sw, sx))[:3] == [M, N, K]]
        print(json.dumps(dict(bench="gemm-intercept", N=N, K=K, M=M, w_bytes=N * K, err=round(err, 5),
                              BM_BN_splits_ms=[spec.info["BM"], spec.consts["BN"], splits, spec.info["ms"]],
                              autotuned_config=won[0] if won else "table", us=out)), flush=True)
    for (K, M, who), pts in fits.items():
        a, R = _fit(pts)
        print(json.dumps(dict(bench="gemm-intercept-fit", K=K, M=M, who=who, a_us=a, R_TBps=R)), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
