#!/usr/bin/env python3
"""Experiment: block-scaled W at the table's configs (M = 1-128), x's
transposed 1x128 block-scale storage ([ceil(K/128), C]) padded to C = M
rounded up to 4 (as before 2026-12-04, as built here) or to gemm.block_scale_columns(M)
(a power of two from 32: a stage's TMA box of max(BM, 32) scale columns
within it, none filled out of bounds), both zero-copy views, in CUDA graphs
of 20 calls rotating W over >= 256 MiB (common.graph_ms), interleaved, twice.
    python3 benchmarks/diag/scale_pad.py build DIR    # here
    python3 benchmarks/diag/scale_pad.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

SHAPES = [(4096, 7168), (7168, 2048), (2112, 7168), (24576, 1536), (16384, 16384)]
MS = (1, 8, 16, 32, 64, 128)


def _plans(d=None):
    from nvtma.kernels import gemm
    g = gemm.Gemm(artifacts=d)
    for N, K in SHAPES:
        for M in MS:
            cfg = gemm.choose_config(M, N, K, gemm.F8, scale="block")
            yield g, (N, K, M), cfg, g.plan(M, N, K, gemm.F8, "block", config=cfg)[0]


def build(d):
    import common
    common.save_new(d, [p[-1] for p in _plans()])


def run(d):
    import torch
    import common
    from nvtma.kernels import gemm
    dev, stream, gen = common.gpu(torch)
    for g, (N, K, M), cfg, _ in _plans(d):
        w, x, sw, sx, want = common.gemm_problem(torch, gen, N, K, M, True, "block")
        wbufs = common.copies(w)
        kb = sx.shape[1]
        views = {}
        for label, cols in (("m4", -(-M // 4) * 4), ("pow2", gemm.block_scale_columns(M))):
            st = torch.zeros(kb, cols, device=dev)
            st[:, :M] = sx.t()
            views[label] = st[:, :M].t()
        line = dict(bench="gemm-scale-pad", N=N, K=K, M=M, config=list(cfg.short))
        for rep in range(2):
            for label, v in views.items():
                def call(i, v=v):
                    return g(x, wbufs[i], w_scale=sw, scale="block", x_scale=v, config=cfg)
                y = call(0)
                torch.cuda.synchronize()
                err = ((y.float() - want).abs().max() / want.abs().max()).item()
                assert err < 2e-2, (N, K, M, label, err)
                us = round(common.graph_ms(torch, stream, call, len(wbufs)) * 1e3, 2)
                line[label] = min(line.get(label, us), us)
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
