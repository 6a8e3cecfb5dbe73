#!/usr/bin/env python3
"""One nvtma GEMM call and one cuBLASLt call (torch._scaled_mm / torch.matmul)
of the same problem, between cudaProfilerStart/Stop, for ncu:

    ncu --profile-from-start off --section SpeedOfLight --section WarpStateStats ... \\
        python3 benchmarks/diag/ncu_gemm.py GEMM_ART N K M MODE

ncu flushes the caches before each profiled kernel (its default cache
control), so W comes from DRAM as in the benchmark. MODE: tensor or bf16.
The nvtma config is the one Gemm picks (gemm.choose_config; the AOT
artifacts of gemm_bench.py build hold it), or CONFIG (BM,BN,wgs,splits)
given after MODE. NVTMA_L2_W: W's L2 promotion (the default's otherwise).
"""

import os
import sys

import torch

from nvtma.kernels import gemm


def main():
    art, N, K, M, mode = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5]
    given = tuple(int(v) for v in sys.argv[6].split(",")) if len(sys.argv) > 6 else None
    dev = torch.device("cuda")
    g = gemm.Gemm(artifacts=art, **({"l2_w": os.environ["NVTMA_L2_W"]} if os.environ.get("NVTMA_L2_W") else {}))
    fp8 = mode != "bf16"
    w = (torch.randn(N, K, device=dev) / 4)
    x = torch.randn(M, K, device=dev)
    if fp8:
        sw = torch.tensor([0.02], device=dev)
        w = (w / sw).to(torch.float8_e4m3fn)
        sx = torch.full((M,), 0.02, device=dev)
        xq = (x / 0.02).to(torch.float8_e4m3fn)
        cfg = given or gemm.choose_config(M, N, K, scale="tensor")

        def ours():
            return g(xq, w, w_scale=sw, scale="tensor", x_scale=sx, config=cfg)
        mp = -(-M // 16) * 16
        xp = torch.zeros(mp, K, device=dev, dtype=torch.float8_e4m3fn)
        xp[:M] = xq
        one = torch.tensor(0.02, device=dev)

        def theirs():
            return torch._scaled_mm(xp, w.t(), scale_a=one, scale_b=sw[0], out_dtype=torch.bfloat16)
    else:
        w = w.to(torch.bfloat16)
        xb = x.to(torch.bfloat16)
        cfg = given or gemm.choose_config(M, N, K, "bf16")

        def ours():
            return g(xb, w, config=cfg)

        def theirs():
            return torch.matmul(xb, w.t())
    for _ in range(3):
        ours()
        theirs()
    torch.cuda.synchronize()
    print(f"config (BM, BN, wgs, splits) = {cfg}", flush=True)
    torch.cuda.cudart().cudaProfilerStart()
    ours()
    theirs()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    main()
