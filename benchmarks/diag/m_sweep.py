#!/usr/bin/env python3
"""Experiment: the GEMM at M between the benchmark's powers of two. For
each problem, the config Gemm picks, timed as benchmarks/gemm_bench.py times
(CUDA graphs of 20 calls rotating over >= 256 MiB of W, best of 10), x as
given to:
  api         the Gemm as built (Gemm.plan: x in half boxes where M ends inside
              one tile of 128 or more rows)
  half        x in half boxes wherever the kernel can (Gemm(xhalf=True))
  no_half     never (Gemm(xhalf=False)): the TMA fills the box past M
  caller_pad  x padded with zero rows to the tile by the caller (no rows past M)
and bf16 x through the API (quantized into padded rows, or by the GEMM).
Twelfth session: with the M split the CTA whose rows would reach past M takes
M's last rows instead (s18-m-sweep). Thirteenth: x in boxes of 8-32 rows, none
wholly past M (s19-m-sweep-xbox: each more box of a stage cost 30-50 ns),
then the half boxes everywhere (s19-m-sweep-half, with the M split made or
undone: "alt"), then only where they were faster (s19-m-sweep).
    python3 benchmarks/diag/m_sweep.py build DIR    # here
    python3 benchmarks/diag/m_sweep.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (N, K, M, W: "tensor" fp8 or "bf16")
PROBLEMS = [(4096, 7168, M, "tensor") for M in (1, 5, 33, 64, 65, 70, 100, 127, 128, 200, 256)] + \
    [(7168, 2048, M, "tensor") for M in (16, 64, 70, 100, 128, 200, 256)] + \
    [(N, K, M, "tensor") for N, K in ((2112, 7168), (24576, 1536)) for M in (70, 128, 200)] + \
    [(16384, 16384, 100, "tensor")] + [(4096, 7168, M, "bf16") for M in (70, 128)]


def _gemms(d=None):
    from nvtma.kernels import gemm
    return dict(api=gemm.Gemm(artifacts=d), half=gemm.Gemm(artifacts=d, xhalf=True),
                no_half=gemm.Gemm(artifacts=d, xhalf=False))


def _plan(g, N, K, M, mode, bf16_x, config=None):
    from nvtma.kernels import gemm
    if mode == "bf16":
        return g.plan(M, N, K, "bf16", None, config=config)
    return g.plan(M, N, K, gemm.F8, "tensor", quantize=bf16_x, config=config)


def build(d):
    import common
    from nvtma.kernels import gemm
    specs = []
    for N, K, M, mode in PROBLEMS:
        for name, g in _gemms().items():
            for bf16_x in (False, True):
                spec, _, q = _plan(g, N, K, M, mode, bf16_x)
                specs += [s for s in (spec, q) if s is not None]
            spec = _plan(g, N, K, M, mode, False)[0]
            if name == "api":  # caller_pad's: x of the tile's rows, at M's config
                specs.append(_plan(g, N, K, spec.info["BM"] * spec.info["ms"], mode, False,
                                   config=gemm.choose_config(M, N, K, w_dtype=gemm.F8 if mode != "bf16" else "bf16",
                                                             scale="tensor" if mode != "bf16" else None))[0])
    common.save_new(d, specs)


def run(d):
    import torch
    import common
    from nvtma.kernels import gemm
    dev, stream, gen = common.gpu(torch)
    gs = _gemms(d)
    for N, K, M, mode in PROBLEMS:
        fp8 = mode != "bf16"
        spec = _plan(gs["api"], N, K, M, mode, False)[0]
        rows = spec.info["BM"] * spec.info["ms"]  # the tile's (its cluster's) rows of x
        w0 = torch.randn(N, K, generator=gen, device=dev) / 4
        wbufs = common.copies(w0.to(torch.float8_e4m3fn if fp8 else torch.bfloat16))
        nbufs = len(wbufs)
        sw = torch.tensor([0.02], device=dev) if fp8 else None
        x16 = torch.randn(M, K, generator=gen, device=dev).to(torch.bfloat16)
        if fp8:
            xq, sx = gs["api"].quantize(x16)
            xp = torch.zeros(rows, K, device=dev, dtype=torch.float8_e4m3fn)
            sxp = torch.ones(rows, device=dev)
            sxp[:M] = sx
        else:
            xq, sx, sxp = x16, None, None
            xp = torch.zeros(rows, K, device=dev, dtype=torch.bfloat16)
        xp[:M] = xq
        cfg = gemm.choose_config(M, N, K, w_dtype=gemm.F8 if fp8 else "bf16", scale="tensor" if fp8 else None)
        kw = dict(w_scale=sw, scale="tensor") if fp8 else {}
        out, ys = {}, {}
        runs = [(name, g, xq, sx) for name, g in gs.items()] + [("caller_pad", gs["api"], xp, sxp)]
        if fp8:
            runs += [("bf16_x", gs["api"], x16, None)]
        for label, g, x, sxx in runs:
            def call(i, g=g, x=x, sxx=sxx):
                return g(x, wbufs[i], x_scale=sxx, config=cfg, **kw)
            ys[label] = call(0)[:M]
            t = common.graph_ms(torch, stream, call, nbufs)
            out[label] = dict(us=round(t * 1e3, 2), W_TBps=round(N * K * (1 if fp8 else 2) / t / 1e9, 3))
        ref = ys["caller_pad"]
        out["same_y"] = {k: bool(torch.equal(ref, y)) for k, y in ys.items() if k != "bf16_x"}
        print(json.dumps(dict(bench="gemm-m-sweep", N=N, K=K, M=M, mode=mode, config=list(cfg.short),
                              xhalf=_plan(gs["api"], N, K, M, mode, False)[0].info["xhalf"],
                              kernel_rows=gs["api"].kernel_rows(M, spec.info["BM"], ms=spec.info["ms"]), **out)),
              flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
