#!/usr/bin/env python3
"""Experiment: the GEMM's two-consumer-warpgroup configs assembled by
nvJitLink (which ignores setmaxnreg: consumers keep 168 registers) and by a
whole-program ptxas (which honours it), timed in CUDA graphs of 20 calls
rotating over >= 256 MiB of W, checked against torch.
    python3 benchmarks/diag/assembler_experiment.py build DIR PTXAS    # here
    python3 benchmarks/diag/assembler_experiment.py run DIR            # on the GPU
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

CFGS = [(128, 128, 2), (256, 128, 2), (128, 256, 2), (64, 128, 2)]
PROBLEMS = [(16384, 16384, 128), (16384, 16384, 256), (4096, 7168, 128), (4096, 7168, 256), (24576, 1536, 128),
            (16384, 16384, 64)]


def build(d, ptxas):
    from nvtma import compiler
    from nvtma.kernels import gemm
    keep = compiler.ptx_to_cubin

    def by_ptxas(ptx, arch):
        with tempfile.TemporaryDirectory() as t:
            (Path(t) / "k.ptx").write_text(ptx)
            subprocess.run([ptxas, f"-arch={arch}", "-O3", f"{t}/k.ptx", "-o", f"{t}/k.cubin"], check=True)
            return (Path(t) / "k.cubin").read_bytes()
    for name, fn in (("nvjitlink", keep), ("ptxas", by_ptxas)):
        compiler.ptx_to_cubin = fn
        for BM, BN, wgs in CFGS:
            gemm.gemm_spec(BM, BN, wgs, w_scale="tensor").compile().save(Path(d) / f"{name}-{BM}-{BN}-{wgs}")
    compiler.ptx_to_cubin = keep


def run(d):
    import torch
    import common
    from nvtma import runtime
    from nvtma.kernels import gemm
    dev = torch.device("cuda")
    stream = torch.cuda.Stream()
    gen = torch.Generator(device=dev).manual_seed(0)
    for N, K, M in PROBLEMS:
        nbufs = max(2, -(-(256 << 20) // (N * K)) + 1)
        w32 = torch.randn(N, K, generator=gen, device=dev) / 4
        sw = torch.tensor([0.02], device=dev)
        w = (w32 / sw).to(torch.float8_e4m3fn)
        x32 = torch.randn(M, K, generator=gen, device=dev)
        sx = x32.abs().amax(1).clamp(min=1e-6) / 448
        x = (x32 / sx[:, None]).to(torch.float8_e4m3fn)
        want = (x.float() * sx[:, None]) @ (w.float() * sw).t()
        wbufs = [w] + [w.clone() for _ in range(nbufs - 1)]
        y = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
        for BM, BN, wgs in CFGS:
            wsp = torch.zeros(-(-N // BN), BN * BM, device=dev)  # the split-K workspace: a row per tile
            if BM < M or BM > 2 * max(M, 64):
                continue
            tiles = -(-N // BN)
            cnt = torch.zeros(tiles, device=dev, dtype=torch.int32)
            parts, grid = gemm.parts_for(1, N, K, BN)
            res = {}
            for name in ("nvjitlink", "ptxas"):
                k = runtime.load(Path(d) / f"{name}-{BM}-{BN}-{wgs}").gemm

                def call(i):
                    k(wbufs[i % nbufs], x, y, wsp, cnt, parts, sw, sx, grid=grid)
                best = common.graph_ms(torch, stream, call, nbufs, before=y.zero_)
                err = ((y.float() - want).abs().max() / want.abs().max()).item()
                res[name] = dict(us=round(best * 1e3, 2), W_TBps=round(N * K / best / 1e9, 3), err=round(err, 5))
            print(json.dumps(dict(bench="gemm-assembler", N=N, K=K, M=M, config=[BM, BN, wgs, 1], **res)), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "build":
        build(sys.argv[2], sys.argv[3])
    else:
        run(sys.argv[2])
