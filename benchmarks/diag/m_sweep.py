#!/usr/bin/env python3
"""Experiment: the GEMM at M between the benchmark's powers of two. For
each M, the config Gemm picks, timed as benchmarks/gemm_bench.py times (CUDA
graphs of 20 calls rotating over >= 256 MiB of W, best of 10): e4m3 x as
given, padded with zero rows to the tile's BM by the API (Gemm.kernel_rows)
or by the caller, and bf16 x quantized by the API into padded rows or not.
A gap between unpadded and padded is the cost of the TMA's out-of-bounds rows
of a partial x box. Twelfth session: with the M split, the CTA whose rows would
reach past M takes M's last rows instead (s18-m-sweep).
    python3 benchmarks/diag/m_sweep.py build DIR    # here
    python3 benchmarks/diag/m_sweep.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

PROBLEMS = [(4096, 7168, M) for M in (1, 5, 33, 64, 65, 70, 100, 127, 128, 200)] + \
    [(7168, 2048, M) for M in (64, 70, 128, 200)]


def _plans(d=None):
    from nvtma.kernels import gemm
    g = gemm.Gemm(artifacts=d)
    for N, K, M in PROBLEMS:
        spec, _, q = g.plan(M, N, K, gemm.F8, "tensor", quantize=True)
        yield g, N, K, M, spec, q


def build(d):
    import common
    from nvtma.kernels import gemm
    g, own = gemm.Gemm(), gemm.Gemm(diag="own_rows")  # own: the M split's CTA past M on its own rows
    # bf16 x's (quantized in the GEMM at small M, or by quantize_x first), e4m3 x's, and e4m3 x's with own_rows
    common.save_new(d, [s for *_, sp, q in _plans() for s in (sp, q) if s is not None] +
                    [gg.plan(M, N, K, gemm.F8, "tensor")[0] for N, K, M in PROBLEMS for gg in (g, own)])


def run(d):
    import torch
    import common
    from nvtma.kernels import gemm
    dev, stream, gen = common.gpu(torch)
    for g, N, K, M, spec, _ in _plans(d):
        BM, ms = spec.info["BM"], spec.info["ms"]
        rows = BM * ms  # the tile's (its cluster's) rows of x
        wbufs = common.copies((torch.randn(N, K, generator=gen, device=dev) / 4).to(torch.float8_e4m3fn))
        nbufs = len(wbufs)
        sw = torch.tensor([0.02], device=dev)
        x16 = torch.randn(M, K, generator=gen, device=dev).to(torch.bfloat16)
        xq, sx = g.quantize(x16)
        xp = torch.zeros(rows, K, device=dev, dtype=torch.float8_e4m3fn)
        xp[:M] = xq
        sxp = torch.ones(rows, device=dev)
        sxp[:M] = sx

        def pad_in_call(x, rows=rows):  # what the API did before the M split took M's last rows: a copy a call
            return torch.nn.functional.pad(x.view(torch.uint8), (0, 0, 0, rows - M)).view(torch.float8_e4m3fn)
        cfg = gemm.choose_config(M, N, K, scale="tensor")
        raw = gemm.Gemm(artifacts=d, pad_x=False)
        own = gemm.Gemm(artifacts=d, pad_x=False, diag="own_rows")
        out, ys = {}, {}
        # e4m3 x as given (the TMA fills the box's rows past M), with the M split's CTA past M on its own
        # rows (its box partly past M, as before the twelfth session), as the API gives it (padded where
        # kernel_rows says: one more kernel), padded in the call (a copy each call, whatever kernel_rows
        # says), padded by the caller; bf16 x through the API, quantized into padded rows or not
        for label, gg, x, sxx in (("as_is", raw, xq, sx), ("as_is_own_rows", own, xq, sx), ("api_pad", g, xq, sx),
                                  ("pad_in_call", raw, xq, sxp),
                                  ("caller_pad", g, xp, sxp), ("bf16_x", g, x16, None),
                                  ("bf16_x_no_pad", raw, x16, None)):
            def call(i, gg=gg, x=x, sxx=sxx, copy=label == "pad_in_call"):
                return gg(pad_in_call(x) if copy else x, wbufs[i], w_scale=sw, scale="tensor", x_scale=sxx,
                          config=cfg)
            ys[label] = call(0)[:M]
            t = common.graph_ms(torch, stream, call, nbufs)
            out[label] = dict(us=round(t * 1e3, 2), W_TBps=round(N * K / t / 1e9, 3))
        out["same_y"] = all(torch.equal(ys["as_is"], y) for y in ys.values())
        print(json.dumps(dict(bench="gemm-m-sweep", N=N, K=K, M=M, config=list(cfg.short),
                              kernel_rows=g.kernel_rows(M, BM, ms=ms), **out)), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
