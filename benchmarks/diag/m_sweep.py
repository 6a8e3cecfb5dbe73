#!/usr/bin/env python3
"""Experiment: the GEMM at M between the benchmark's powers of two. For
each M, the config Gemm picks, timed as benchmarks/gemm_bench.py times (CUDA
graphs of 20 calls rotating over >= 256 MiB of W, best of 10), and again
with x padded with zero rows to the tile's BM (the same kernel, no rows of
the x box past the tensor): a gap between the two is the cost of the TMA's
out-of-bounds rows.
    python3 benchmarks/diag/m_sweep.py build DIR    # here
    python3 benchmarks/diag/m_sweep.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

PROBLEMS = [(4096, 7168, M) for M in (1, 5, 33, 64, 65, 70, 100, 127, 128)] + \
    [(7168, 2048, M) for M in (64, 70, 128)]


def _plans(d=None):
    from nvtma.kernels import gemm
    g = gemm.Gemm(artifacts=d)
    for N, K, M in PROBLEMS:
        spec, _, _ = g.plan(M, N, K, gemm.F8, "tensor")
        yield g, N, K, M, spec


def build(d):
    for _, _, _, _, sp in _plans():
        if not (Path(d) / sp.key).exists():
            sp.compile().save(Path(d) / sp.key)


def run(d):
    import torch
    import common
    from nvtma.kernels import gemm
    dev = torch.device("cuda")
    stream = torch.cuda.Stream()
    gen = torch.Generator(device=dev).manual_seed(0)
    for g, N, K, M, spec in _plans(d):
        BM = spec.info["BM"]
        nbufs = -(-(256 << 20) // (N * K)) + 1
        w = (torch.randn(N, K, generator=gen, device=dev) / 4).to(torch.float8_e4m3fn)
        wbufs = [w] + [w.clone() for _ in range(nbufs - 1)]
        sw = torch.tensor([0.02], device=dev)
        xp = torch.zeros(BM, K, device=dev, dtype=torch.float8_e4m3fn)
        xp[:M] = (torch.randn(M, K, generator=gen, device=dev)).to(torch.float8_e4m3fn)
        sxp = torch.ones(BM, device=dev)
        cfg = gemm.choose_config(M, N, K, scale="tensor")
        out = {}
        for label, x, sx in (("as_is", xp[:M], sxp[:M]), ("padded", xp, sxp)):
            def call(i, x=x, sx=sx):
                return g(x, wbufs[i], w_scale=sw, scale="tensor", x_scale=sx, config=cfg)
            y = call(0)
            ms = common.graph_ms(torch, stream, call, nbufs)
            out[label] = dict(us=round(ms * 1e3, 2), W_TBps=round(N * K / ms / 1e9, 3))
            if label == "padded":
                out["same_y"] = bool(torch.equal(y[:M], y0))
            y0 = y
        print(json.dumps(dict(bench="gemm-m-sweep", N=N, K=K, M=M, config=list(cfg.short), **out)), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
