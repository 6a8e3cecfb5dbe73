#!/usr/bin/env python3
"""Diagnosis: the same GEMM configs built four ways (assembler x wgmma
descriptor hoisting), saved as artifacts; on the GPU, each checked against
torch on a few problems.
    python3 benchmarks/diag/gemm_variants.py build DIR      # here
    python3 benchmarks/diag/gemm_variants.py run DIR        # on the GPU
"""
import os
import sys
from pathlib import Path
CFGS = [(8, 128, 2, "tensor"), (64, 128, 2, None), (8, 64, 1, "tensor"), (128, 128, 2, "row")]


def build(d):
    from nvtma import wgmma
    from nvtma.kernels import gemm
    keep = wgmma._above_fence
    for asm in ("ptxas", "nvjitlink"):
        for hoist in (1, 0):
            os.environ["NVTMA_ASSEMBLER"] = asm
            wgmma._above_fence = keep if hoist else (lambda v: None)
            for BM, BN, wgs, sc in CFGS:
                sp = gemm.gemm_spec(BM, BN, wgs, w_dtype="bf16" if sc is None else "f8E4M3FN", w_scale=sc)
                sp.compile().save(Path(d) / f"{asm}-h{hoist}-{BM}-{BN}-{wgs}-{sc}")


def run(d):
    import torch
    from nvtma import runtime
    gen = torch.Generator(device="cuda").manual_seed(0)
    for sub in sorted(Path(d).iterdir()):
        asm, h, BM, BN, wgs, sc = sub.name.split("-")
        BM, BN = int(BM), int(BN)
        mod = runtime.load(sub)
        for M, N, K in ((min(BM, 13), 4 * BN, 1024), (BM, 2 * BN, 2048)):
            x = torch.randn(M, K, generator=gen, device="cuda")
            w = torch.randn(N, K, generator=gen, device="cuda") / 8
            y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            ws = torch.zeros(N // BN, BN * BM, device="cuda"); cnt = torch.zeros(N // BN, device="cuda", dtype=torch.int32)
            if sc == "None":
                xb, wb = x.bfloat16(), w.bfloat16()
                want = xb.float() @ wb.float().t()
                mod.gemm(wb, xb, y, ws, cnt, N // BN, grid=(N // BN,))
            else:
                sw = (w.abs().amax(1) if sc == "row" else w.abs().amax().reshape(1)).clamp(min=1e-6) / 448
                wq = (w / (sw[:, None] if sc == "row" else sw)).to(torch.float8_e4m3fn)
                sx = x.abs().amax(1).clamp(min=1e-6) / 448
                xq = (x / sx[:, None]).to(torch.float8_e4m3fn)
                want = (xq.float() * sx[:, None]) @ (wq.float() * (sw[:, None] if sc == "row" else sw)).t()
                mod.gemm(wq, xq, y, ws, cnt, N // BN, sw, sx, grid=(N // BN,))
            torch.cuda.synchronize()
            err = ((y.float() - want).abs().max() / want.abs().max()).item()
            print(f"{sub.name:40s} M={M:3d} N={N:4d} K={K}: err {err:.2e} {'ok' if err < 1.5e-2 else 'WRONG'}", flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
