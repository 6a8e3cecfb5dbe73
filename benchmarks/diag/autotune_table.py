#!/usr/bin/env python3
"""Experiment: Gemm(autotune="all") on problems the table holds: the config
it picks on this GPU against the table's, each timed as the benchmark times
(CUDA graphs of 20 calls, W rotated over >= 256 MiB, best of 10), with
torch._scaled_mm in the same process. The candidates' kernels come from the
GPU tests' artifacts (test/python/gpu_cases.py, AUTOTUNE_TABLE_CASE's BM).
    NVTMA_GPU_ARTIFACTS=DIR python3 benchmarks/diag/autotune_table.py   # on the GPU
"""
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

PROBLEMS = [(1, 7168, 2048), (8, 7168, 2048)]  # M, N, K: BM = 8, the candidates gpu_cases builds


def main():
    import torch
    import common
    from nvtma.kernels import gemm
    dev, stream, gen = common.gpu(torch)
    art = os.environ.get("NVTMA_GPU_ARTIFACTS")
    for M, N, K in PROBLEMS:
        w, x, sw, sx, want = common.gemm_problem(torch, gen, N, K, M, True)
        wbufs = common.copies(w)
        kw = dict(w_scale=sw, scale="tensor", x_scale=sx)
        tuned = gemm.Gemm(artifacts=art, autotune="all")
        picked = tuned._tuned(x, w, sw, "tensor", sx, torch.bfloat16, 132, {})
        g = gemm.Gemm(artifacts=art)
        table = gemm.choose_config(M, N, K)
        line = dict(bench="gemm-autotune-table", N=N, K=K, M=M, table=list(table.short), picked=list(picked.short))
        for label, cfg in (("table", table), ("picked", picked)):
            y = g(x, w, config=cfg, **kw)
            err = ((y.float() - want).abs().max() / want.abs().max()).item()
            line[label + "_err"] = float(f"{err:.2e}")
            line[label + "_us"] = round(common.graph_ms(torch, stream, lambda i: g(x, wbufs[i], config=cfg, **kw),
                                                        len(wbufs)) * 1e3, 2)
        line["scaled_mm_us"] = round(common.graph_ms(torch, stream, common.scaled_mm(torch, x, wbufs, sw),
                                                    len(wbufs)) * 1e3, 2)
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
