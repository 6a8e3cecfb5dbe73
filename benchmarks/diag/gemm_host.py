#!/usr/bin/env python3
"""Experiment: the host time of an eager `Gemm` call (no CUDA graph), with
its plan memoized (Gemm.plan, from the twelfth session) and planned every
call as before (`_plan`: the config's choice, the spec, its key). Each
problem: a loop of eager calls on a side stream, synchronized at the end,
wall time per call, best of 5 loops; beside it the GPU time per call from a
CUDA graph of 20 calls (W from L2 in both: one copy), so where the wall
time is above the GPU time the host sets the pace.
    python3 benchmarks/diag/gemm_host.py build DIR    # here
    python3 benchmarks/diag/gemm_host.py run DIR      # on the GPU
"""
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (N, K, M, mode): e4m3 x given, or bf16 x quantized by the call (mode "tensor-bf16x")
PROBES = [(7168, 2048, 1, "tensor"), (7168, 2048, 16, "tensor"), (7168, 2048, 16, "tensor-bf16x"),
          (7168, 2048, 70, "tensor"), (4096, 7168, 64, "row"), (2112, 7168, 16, "block"), (7168, 2048, 8, "bf16")]
CALLS = 200


def _gemms(d=None):
    from nvtma.kernels import gemm

    class Unplanned(gemm.Gemm):
        """Planned every call, as before the memo."""
        def plan(self, M, N, K, w_dtype=gemm.F8, scale=None, y_dtype="bf16", quantize=False, sms=132,
                 config=None, **spec_options):
            return self._plan(M, N, K, w_dtype, scale, y_dtype, quantize, sms, config, spec_options)
    return (("memoized", gemm.Gemm(artifacts=d)), ("every_call", Unplanned(artifacts=d)))


def _specs():
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    for N, K, M, mode in PROBES:
        fp8 = mode != "bf16"
        sp, _, q = g.plan(M, N, K, gemm.F8 if fp8 else "bf16", mode.split("-")[0] if fp8 else None,
                          quantize=mode.endswith("bf16x"), sms=132)
        yield from [sp] + ([q] if q is not None else [])
    yield gemm.quantize_x_spec("token")
    yield gemm.quantize_x_spec("block")


def build(d):
    import common
    common.save_new(d, list(_specs()))


def run(d):
    import torch
    import common
    dev, stream, gen = common.gpu(torch)
    for N, K, M, mode in PROBES:
        scale = mode.split("-")[0]
        fp8 = mode != "bf16"
        w, x, sw, sx, _ = common.gemm_problem(torch, gen, N, K, M, fp8, scale if fp8 else "tensor")
        kw = dict(w_scale=sw, scale=scale) if fp8 else {}
        if mode.endswith("bf16x"):
            x = torch.randn(M, K, generator=gen, device=dev).to(torch.bfloat16)
        elif fp8:
            kw["x_scale"] = sx
        out = {}
        for label, g in _gemms(d):
            def call(i, g=g):
                return g(x, w, **kw)
            gpu_us = common.graph_ms(torch, stream, call, 1) * 1e3
            best = float("inf")
            with torch.cuda.stream(stream):
                for _ in range(5):
                    torch.cuda.synchronize()
                    t = time.perf_counter()
                    for _ in range(CALLS):
                        call(0)
                    torch.cuda.synchronize()
                    best = min(best, (time.perf_counter() - t) / CALLS * 1e6)
            out[label] = dict(eager_us=round(best, 2), gpu_us=round(gpu_us, 2))
        print(json.dumps(dict(bench="gemm-host", N=N, K=K, M=M, mode=mode, **out)), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
