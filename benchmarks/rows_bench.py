#!/usr/bin/env python3
"""Gemm past 256 rows of x (blocks of rows, `gemm.row_blocks`) against cuBLASLt, side by side.

    python3 benchmarks/rows_bench.py build DIR   # here (needs MLIR): the kernels of every block size
    python3 benchmarks/rows_bench.py run DIR     # on the GPU: one JSON line per problem

Gemm() calls a kernel per block of at most 256 rows (`gemm.row_blocks`: blocks of 256 and the rest), each
streaming W again; issue #13 times M <= 256 only (gemm_bench.py). Here: #13's five (N, K) at M in MS, W as
e4m3 with per-tensor and per-row scales (x as e4m3 with per-row scales, quantized in torch) and as bf16, at
the configs Gemm() picks for each block; the same protocol as gemm_bench.py (GPU time per call from
CUDA-graph replays of 20 calls rotating over >= 256 MiB of W copies, best of 10; torch._scaled_mm or
torch.matmul in the same process), and every y checked against a float32 reference first. `even_us`: the
same call in session 42's blocks (as even as multiples of 8 allow, `even_blocks`), where they differ;
`hint_us`: the call with W loaded evict_last (`w_hint`; the default is evict_first), so that the next block
may find in L2 the W that fits there (not yet run on a GPU); `one_us`: all M rows in one launch, over clusters of
`ms` CTAs sharing each W tile by multicast (each CTA ceil(M / ms) rows, `one_launch`), so W is streamed once (not
yet run on a GPU).
"""

import argparse
import json
from pathlib import Path

import gemm_bench

MS = [300, 384, 520, 1024]
MODES = ["tensor", "row", "bf16"]
F8 = gemm_bench.F8
W_HINT = "evict_last"


def even_blocks(M):
    """Session 42's gemm.row_blocks: as few blocks as hold M at 256 rows, as even as multiples of 8 allow."""
    n = -(-M // 256)
    units, extra = divmod(-(-M // 8), n)
    stops = [8 * (i * units + min(i, extra)) for i in range(1, n + 1)]
    return [(a, min(b, M)) for a, b in zip([0] + stops, stops)]


def one_launch(M, N, K, w_dtype):
    """Configs that take all M rows in one launch: clusters of ms = 2 or 4 CTAs sharing each W tile by multicast
    (the kernel's M split), each CTA M / ms rows rounded up to 8, and to 32 (at most 256: the epilogue's chunks
    of rows divide a CTA's, 8 rows at 136 or 152, gemm.epi_rows), its W tile and K split the best ranked for the
    clusters (gemm._ranked)."""
    from nvtma.kernels import gemm
    out = []
    for ms in (2, 4):
        for BM in sorted({-(-M // (r * ms)) * r for r in (8, 32)}):
            if BM <= gemm.MAX_ROWS:
                out += [c._replace(ms=ms) for c in gemm._ranked(BM, N, gemm.k_steps(K, w_dtype), w_dtype,
                                                                132 // ms)[:1]]
    return out


def problems():
    for N, K in gemm_bench.SHAPES:
        for M in MS:
            for mode in MODES:
                yield N, K, M, mode


def build(d: Path):
    from nvtma.kernels import gemm
    g = gemm.Gemm(quantize="kernel")
    specs = {}
    for N, K, M, mode in problems():
        wd, scale = ("bf16", None) if mode == "bf16" else (F8, mode)
        for a, b in gemm.row_blocks(M) + even_blocks(M):
            sp = g.plan(b - a, N, K, wd, scale)[0]
            specs[sp.key] = sp
        for a, b in gemm.row_blocks(M):
            sp = g.plan(b - a, N, K, wd, scale, w_hint=W_HINT)[0]
            specs[sp.key] = sp
        for cfg in one_launch(M, N, K, wd):
            sp = g.plan(M, N, K, wd, scale, config=cfg)[0]
            specs[sp.key] = sp
    for key, sp in specs.items():
        if not (d / key).exists():
            sp.compile().save(d / key)
    print(f"rows_bench: {len(specs)} kernels -> {d}")


def run(d: Path):
    import torch
    import common
    from nvtma.kernels import gemm
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    print(json.dumps(dict(bench="gemm-rows", machine=props.name, sms=props.multi_processor_count,
                          torch=torch.__version__)), flush=True)
    g = gemm.Gemm(artifacts=d, quantize="kernel")
    stream = torch.cuda.Stream()
    gen = torch.Generator(device=dev).manual_seed(13)
    for N, K, M, mode in problems():
        fp8 = mode != "bf16"
        tol = 2e-2 if fp8 else 1e-2
        wbytes = N * K * (1 if fp8 else 2)
        nbufs = max(2, -(-(256 << 20) // wbytes) + 1)
        w32 = torch.randn(N, K, generator=gen, device=dev) / 4
        x32 = torch.randn(M, K, generator=gen, device=dev)
        if fp8:
            sw = (w32.abs().amax() / 448).reshape(1) if mode == "tensor" else w32.abs().amax(1) / 448
            w = (w32 / (sw if mode == "tensor" else sw[:, None])).to(torch.float8_e4m3fn)
            wdq = w.float() * (sw if mode == "tensor" else sw[:, None])
            sx = x32.abs().amax(1) / 448
            x = (x32 / sx[:, None]).to(torch.float8_e4m3fn)
            ref = (x.float() * sx[:, None]) @ wdq.t()
            kw = dict(w_scale=sw, scale=mode, x_scale=sx)
            base_name = "torch._scaled_mm per-tensor" if mode == "tensor" else "torch._scaled_mm row-wise"
        else:
            w, x, kw = w32.to(torch.bfloat16), x32.to(torch.bfloat16), {}
            ref = x.float() @ w.float().t()
            base_name = "torch.matmul (cuBLAS)"
        wbufs = [w] + [w.clone() for _ in range(nbufs - 1)]
        line = dict(bench="gemm-rows", N=N, K=K, M=M, mode=mode, blocks=[b - a for a, b in gemm.row_blocks(M)],
                    w_copies=nbufs)
        try:
            y = g(x, w, **kw)
            torch.cuda.synchronize()
            err = ((y.float() - ref).abs().max() / ref.abs().max()).item()
            ms = common.graph_ms(torch, stream, lambda i: g(x, wbufs[i], **kw), nbufs)
            line.update(us=round(ms * 1e3, 2), TFLOPs=round(2 * M * N * K / ms / 1e9, 1),
                        W_TBps=round(wbytes / ms / 1e9, 3), max_rel_err=float(f"{err:.2e}"),
                        correct=err < tol)
            if even_blocks(M) != gemm.row_blocks(M):
                greedy, gemm.row_blocks = gemm.row_blocks, even_blocks
                try:
                    ye = g(x, w, **kw)
                    torch.cuda.synchronize()
                    line["even_correct"] = ((ye.float() - ref).abs().max() / ref.abs().max()).item() < tol
                    line["even_us"] = round(common.graph_ms(torch, stream, lambda i: g(x, wbufs[i], **kw),
                                                            nbufs) * 1e3, 2)
                finally:
                    gemm.row_blocks = greedy
            hinted = dict(kw, w_hint=W_HINT)
            yh = g(x, w, **hinted)
            torch.cuda.synchronize()
            line["hint_correct"] = ((yh.float() - ref).abs().max() / ref.abs().max()).item() < tol
            line["hint_us"] = round(common.graph_ms(torch, stream, lambda i: g(x, wbufs[i], **hinted), nbufs) * 1e3, 2)
            ones = {}
            for cfg in one_launch(M, N, K, F8 if fp8 else "bf16"):
                p = g._prepare(x, w, kw.get("w_scale"), kw.get("scale"), kw.get("x_scale"), None, None, cfg, {})
                y1 = p(x, w, kw.get("w_scale"), kw.get("x_scale"), None)
                torch.cuda.synchronize()
                ok = ((y1.float() - ref).abs().max() / ref.abs().max()).item() < tol
                us = round(common.graph_ms(torch, stream, lambda i: p(x, wbufs[i], kw.get("w_scale"),
                                                                     kw.get("x_scale"), None), nbufs) * 1e3, 2)
                ones[gemm_bench.config_text(list(cfg.short))] = us if ok else f"WRONG {us}"
            line["one_us"] = ones
        except Exception as e:  # noqa: BLE001 (report and go on)
            line["error"] = f"{type(e).__name__}: {e}"[:400]
        try:
            if fp8:
                base = common.scaled_mm(torch, x, wbufs, sw, mode)
            else:
                def base(i):
                    return torch.matmul(x, wbufs[i].t())
            base(0)
            bms = common.graph_ms(torch, stream, base, nbufs)
            line.update(baseline=base_name, base_us=round(bms * 1e3, 2),
                        base_TFLOPs=round(2 * M * N * K / bms / 1e9, 1))
            if "us" in line:
                line["speedup"] = round(bms * 1e3 / line["us"], 3)
        except Exception as e:  # noqa: BLE001
            line["baseline"] = f"{base_name}: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["build", "run"])
    ap.add_argument("dir", type=Path)
    a = ap.parse_args()
    {"build": build, "run": run}[a.cmd](a.dir)
