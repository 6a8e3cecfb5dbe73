#!/usr/bin/env python3
"""Experiment (twenty-first session): does the CUDA-core GEMV (nvtma.kernels.gemv, whole row blocks a CTA,
y stored) stream W faster than the GEMM at M = 1, at issue #13's five shapes, with programmatic dependent
launch (its W streamed before the earlier kernels end, as the GEMM's first stages are) and without? Per
shape and W (e4m3 with a per-tensor scale: f32 and f16x2 math; bf16): the GEMM at the config Gemm() picks
for M = 1, each GEMV config, and the baseline (torch._scaled_mm / torch.matmul), in CUDA graphs of 20 calls,
W rotating over >= 256 MiB of copies, all in one process.
    python3 benchmarks/diag/gemv_probe.py build DIR    # here
    python3 benchmarks/diag/gemv_probe.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

SHAPES = [(4096, 7168), (7168, 2048), (2112, 7168), (24576, 1536), (16384, 16384)]
SMS = 132
# (W, scale, fp8 math, vec)
WTYPES = (("f8E4M3FN", "tensor", "f32", 8), ("f8E4M3FN", "tensor", "f16x2", 16), ("bf16", None, "f32", 8))


def _configs(N, K, w, scale, math_, vec):
    """(spec keywords, grid) per GEMV config of a problem: row blocks of 16-64 rows, 256-element tiles,
    rings of about 128 KB, a CTA for each of the SMs (or the row blocks, if fewer) or two a SM."""
    from nvtma import kernels
    eb = 1 if w != "bf16" else 2
    out = []
    for bm, consumers in ((16, 4), (32, 4), (64, 8)):
        bk = 256 if eb == 1 else 128 * (vec // 8)
        if vec == 16:
            bk = 256
        stages = max(2, min(16, (128 << 10) // (bm * bk * eb)))
        rb = N // bm
        for grid in sorted({min(rb, SMS), min(rb, 2 * SMS)}):
            if grid == 2 * SMS and stages * bm * bk * eb > 100 << 10:
                stages = (100 << 10) // (bm * bk * eb)
            for pdl in ((True, False) if bm == 32 and grid <= SMS else (True,)):
                kw = dict(w_dtype=w, tile=(bm, bk), stages=stages, consumers=consumers, scale=scale, fp8_math=math_,
                          split="rows", vec=vec, x_dtype="bf16", l2_promotion="l2_128b", w_hint="evict_first",
                          pdl=pdl)
                try:
                    kernels.gemv(N, K, **kw)
                except ValueError:
                    continue
                out.append((kw, grid))
    return out


def _specs():
    from nvtma import kernels
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    for N, K in SHAPES:
        for wd in (gemm.F8, "bf16"):
            yield g.plan(1, N, K, wd, "tensor" if wd == gemm.F8 else None)[0]
        for w, scale, math_, vec in WTYPES:
            for kw, _ in _configs(N, K, w, scale, math_, vec):
                yield kernels.gemv(N, K, **kw)


def build(d):
    import common
    common.save_new(d, list(_specs()))


def run(d):
    import torch
    import common
    import nvtma.runtime
    from nvtma import kernels
    from nvtma.kernels import gemm
    _, stream, gen = common.gpu(torch)
    g = gemm.Gemm(artifacts=d)

    def us(call, nbufs):
        return round(common.graph_ms(torch, stream, call, nbufs) * 1e3, 2)

    for N, K in SHAPES:
        for w, scale, math_, vec in WTYPES:
            fp8 = w != "bf16"
            wt, xq, sw, sx, _ = common.gemm_problem(torch, gen, N, K, 1, fp8)
            wbufs = common.copies(wt)
            line = dict(bench="gemv-probe", N=N, K=K, w="e4m3" if fp8 else "bf16", math=math_, w_copies=len(wbufs))
            # the GEMM at Gemm()'s config, on x as the benchmark gives it (e4m3 with its scale, or bf16)
            kw = dict(w_scale=sw, scale="tensor", x_scale=sx) if fp8 else {}
            line["gemm_config"] = list(gemm.choose_config(1, N, K, w, scale=scale).short)
            line["gemm"] = us(lambda i: g(xq, wbufs[i], **kw), len(wbufs))
            if fp8:
                line["base"] = us(common.scaled_mm(torch, xq, wbufs, sw), len(wbufs))
            else:
                line["base"] = us(lambda i: torch.matmul(xq, wbufs[i].t()), len(wbufs))
            # the GEMV on x in bf16 (e4m3 x dequantized: the same products)
            x = (xq.float() * (sx[:, None] if fp8 else 1)).bfloat16().reshape(K)
            want = (wt.float() * (sw if fp8 else 1)) @ x.float()
            y = torch.empty(N, device="cuda", dtype=torch.float32)
            extra = [sw] if fp8 else []
            runs = []
            for cfg, grid in _configs(N, K, w, scale, math_, vec):
                spec = kernels.gemv(N, K, **cfg)
                k = nvtma.runtime.load(Path(d) / spec.key).kernel("gemv")
                launch = common.launch(k, (grid,))
                res = dict(tile=list(cfg["tile"]), stages=cfg["stages"], consumers=cfg["consumers"], grid=grid,
                           pdl=cfg["pdl"])
                try:
                    y.fill_(float("nan"))
                    k(wbufs[0], x, y, *extra, **launch)
                    torch.cuda.synchronize()
                    res["err"] = float(f"{((y - want).abs().max() / want.abs().max()).item():.2e}")
                    res["us"] = us(lambda i: k(wbufs[i], x, y, *extra, **launch), len(wbufs))
                except Exception as e:  # noqa: BLE001 (a config that does not launch is a result too)
                    res["error"] = f"{type(e).__name__}: {e}"[:200]
                runs.append(res)
            line["gemv"] = runs
            print(json.dumps(line), flush=True)
            wbufs.clear()
            torch.cuda.empty_cache()


if __name__ == "__main__":
    cmd, d = sys.argv[1:3]
    {"build": build, "run": run}[cmd](d)
