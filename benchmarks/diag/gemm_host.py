#!/usr/bin/env python3
"""Experiment: the host time of an eager `Gemm` call (no CUDA graph). Each
problem: every step of Gemm.__call__ timed alone (a loop of calls with
nothing synchronized inside it: host time), the whole call prepared (since
the fourteenth session: checked and planned once per kind of call) and as
before (`unprepared`: checked, planned from the memo and looked up
every call), W as an nn.Parameter, and torch's own eager calls
(torch._scaled_mm, torch.matmul); for the whole calls also the wall time
until the GPU is done, and the GPU time per call of a CUDA graph of 20
(W from L2: one copy), so where the wall time is above the GPU time the host
sets the pace. Then cProfile's top entries over one problem.
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


def _host_us(torch, fn, calls=200, reps=7, wall=False):
    """Host time per call of `fn`: a loop of `calls` with nothing synchronized
    inside it (the GPU queue absorbs the launches), best of `reps`; `wall`:
    until the GPU has done them too."""
    best = float("inf")
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        if wall:
            torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t) / calls * 1e6)
    torch.cuda.synchronize()
    return round(best, 2)


def run(d):
    """Each step of Gemm.__call__ timed alone, beside the whole call and
    torch's own eager calls; then cProfile's top entries over one problem."""
    import cProfile
    import io
    import pstats
    import torch
    import common
    from nvtma.kernels import gemm
    dev, stream, gen = common.gpu(torch)
    gstream = torch.cuda.Stream()  # CUDA graphs captured apart from the eager calls
    g = gemm.Gemm(artifacts=d)
    with torch.cuda.stream(stream):
        for N, K, M, mode in PROBES:
            scale = mode.split("-")[0]
            fp8 = mode != "bf16"
            w, x, sw, sx, _ = common.gemm_problem(torch, gen, N, K, M, fp8, scale if fp8 else "tensor")
            kw = dict(w_scale=sw, scale=scale) if fp8 else {}
            if mode.endswith("bf16x"):
                x = torch.randn(M, K, generator=gen, device=dev).to(torch.bfloat16)
            elif fp8:
                kw["x_scale"] = sx
            g(x, w, **kw)
            spec, splits, q = g.plan(M, N, K, gemm.F8 if fp8 else "bf16", scale if fp8 else None,
                                     quantize=mode.endswith("bf16x"), sms=132)
            BN, ms, BM = spec.consts["BN"], spec.info["ms"], spec.info["BM"]
            y = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
            ws, counters = g._workspace(torch, x.device, spec, N, gemm._stream_key(x.device.index))
            sxk = gemm.block_scales_for_kernel(sx) if scale == "block" else sx
            extra = [sw] + ([sxk] if spec.info["x_scale"] not in ("fused",) and not mode.endswith("bf16x") else []) \
                if fp8 else []
            kc = spec.info["kc"]
            parts, grid = gemm.parts_for(splits, N, K, BN, gemm.F8 if fp8 else "bf16", 132, spec.info["mc"], ms, kc)
            k = g.module(spec).gemm
            wv, xv = (gemm.gemm_operand_view(w), gemm.gemm_operand_view(x)) if kc > 1 else (w, x)
            wp = torch.nn.Parameter(w, requires_grad=False)
            steps = dict(
                call=lambda: g(x, w, **kw),
                # as before the prepared calls: checked, planned (memoized) and looked up every call
                unprepared=lambda: g._prepare(x, w, kw.get("w_scale"), kw.get("scale"), kw.get("x_scale"), None,
                                              None, None, {})(x, w, kw.get("w_scale"), kw.get("x_scale"), None),
                call_parameter_w=lambda: g(x, wp, **kw),
                check=lambda: gemm._check_inputs(torch, x, w, kw.get("w_scale"), kw.get("scale"), kw.get("x_scale")),
                plan=lambda: g.plan(M, N, K, gemm.F8 if fp8 else "bf16", scale if fp8 else None,
                                    quantize=mode.endswith("bf16x"), sms=132),
                empty=lambda: torch.empty(M, N, device=x.device, dtype=torch.bfloat16),
                new_empty=lambda: x.new_empty((M, N), dtype=torch.bfloat16),
                workspace=lambda: g._workspace(torch, x.device, spec, N, gemm._stream_key(x.device.index)),
                # a kernel of several K steps a stage: its operands' [K / bk, rows, bk] views, made every call
                operand_views=lambda: (gemm.gemm_operand_view(x), gemm.gemm_operand_view(w)),
                parts_for=lambda: gemm.parts_for(splits, N, K, BN, gemm.F8 if fp8 else "bf16", 132,
                                                 spec.info["mc"], ms, kc),
                module=lambda: g.module(spec),
                # what Gemm.__call__ reads of its arguments to find a prepared call
                signature=lambda: gemm._signature(x, w, sw, scale, sx, None, None, None, {}),
                key=lambda: spec.key,
                device_index=lambda: x.device.index)
            if not mode.endswith("bf16x"):
                steps.update(launch_same_grid=lambda: k(wv, xv, y, ws, counters, parts, *extra, grid=grid),
                             launch_new_grid=lambda: k(wv, xv, y, ws, counters, parts, *extra, grid=(grid[0],)))
            if fp8 and scale == "tensor" and not mode.endswith("bf16x"):
                one = torch.ones(1, device=dev)
                steps["torch_scaled_mm"] = lambda: torch._scaled_mm(x, w.t(), scale_a=one, scale_b=sw,
                                                                    out_dtype=torch.bfloat16)
            if fp8 and scale == "row":
                sa, sb = sx[:, None].contiguous(), sw[None, :].contiguous()
                steps["torch_scaled_mm"] = lambda: torch._scaled_mm(x, w.t(), scale_a=sa, scale_b=sb,
                                                                    out_dtype=torch.bfloat16)
            if not fp8:
                steps["torch_matmul"] = lambda: torch.matmul(x, w.t())
            out = {name: _host_us(torch, fn) for name, fn in steps.items()}
            walls = {name: _host_us(torch, steps[name], wall=True) for name in
                     ("call", "unprepared", "call_parameter_w", "torch_scaled_mm", "torch_matmul") if name in steps}
            walls["gpu_graph"] = round(common.graph_ms(torch, gstream, lambda i: g(x, w, **kw), 1) * 1e3, 2)
            print(json.dumps(dict(bench="gemm-host-breakdown", N=N, K=K, M=M, mode=mode,
                                  BM_BN_splits_ms=[BM, BN, splits, ms], host_us=out, wall_us=walls)), flush=True)
        N, K, M, mode = PROBES[0]
        w, x, sw, sx, _ = common.gemm_problem(torch, gen, N, K, M, True, "tensor")
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(2000):
            g(x, w, w_scale=sw, scale="tensor", x_scale=sx)
        prof.disable()
        torch.cuda.synchronize()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(30)
    print(buf.getvalue(), file=sys.stderr)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
