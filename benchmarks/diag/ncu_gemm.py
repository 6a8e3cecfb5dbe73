#!/usr/bin/env python3
"""One nvtma GEMM call and one cuBLASLt call (torch._scaled_mm / torch.matmul)
of the same problem, between cudaProfilerStart/Stop, for ncu:

    ncu --profile-from-start off --section SpeedOfLight --section WarpStateStats ... \\
        python3 benchmarks/diag/ncu_gemm.py GEMM_ART N K M MODE
    python3 benchmarks/diag/ncu_gemm.py build GEMM_ART N_K_M_MODE ...   # its kernels, here

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


def build(d, problems):
    """The kernels main() calls for N_K_M_MODE problems (at the configs Gemm picks), saved in d (here, no GPU)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))   # benchmarks/: common
    import common
    g = gemm.Gemm()
    specs = []
    for p in problems:
        N, K, M, mode = p.split("_")
        N, K, M = int(N), int(K), int(M)
        wd, scale = ("bf16", None) if mode == "bf16" else (gemm.F8, "tensor")
        specs.append(g.plan(M, N, K, wd, scale)[0])
    common.save_new(d, specs)


if __name__ == "__main__":
    if sys.argv[1] == "build":  # python3 benchmarks/diag/ncu_gemm.py build DIR N_K_M_MODE ...
        build(sys.argv[2], sys.argv[3:])
    else:
        main()
