#!/usr/bin/env python3
"""Gemm past 256 rows of x against cuBLASLt, and against its blocks of 256 rows, side by side.

    python3 benchmarks/rows_bench.py build DIR   # here (needs MLIR): the kernels of every launch
    python3 benchmarks/rows_bench.py run DIR     # on the GPU: one JSON line per problem

Gemm() takes 257-512 rows in one launch over CTA pairs sharing each W tile (`gemm.pair_candidates`), and more
in blocks of 512 (`gemm.row_blocks`), each launch streaming W; issue #13 times M <= 256 only (gemm_bench.py).
Here: #13's five (N, K) at M in MS, W as e4m3 with per-tensor and per-row scales (x as e4m3 with per-row
scales, quantized in torch) and as bf16, with the same protocol as gemm_bench.py (GPU time per call from
CUDA-graph replays of 20 calls rotating over >= 256 MiB of W copies, best of 10; torch._scaled_mm or
torch.matmul in the same process), every y checked against a float32 reference first. `blocks_us`: the call in
blocks of 256 rows, a launch each (Gemm() before session 44). Earlier comparisons, with the code that timed
them in git: session 42's even blocks (results/h100-2026-12-06-s47-rows-bench.jsonl), W loaded evict_last and
one launch over clusters of 2 or 4 CTAs (h100-2026-12-06-s48-rows.jsonl).
"""

import argparse
import json
from pathlib import Path

import gemm_bench

MS = [300, 384, 512, 520, 1024]
MODES = ["tensor", "row", "bf16"]
F8 = gemm_bench.F8


def dtype_scale(mode):
    """(W's dtype, its scaling) for a mode: "bf16", or e4m3 scaled `mode` ("tensor", "row", "block")."""
    return ("bf16", None) if mode == "bf16" else (F8, mode)


def save_specs(d: Path, specs, name):
    """Compile each of `specs` ({key: spec}) not yet under DIR / key, and save it there."""
    for key, sp in specs.items():
        if not (d / key).exists():
            sp.compile().save(d / key)
    print(f"{name}: {len(specs)} kernels -> {d}")


def problems():
    for N, K in gemm_bench.SHAPES:
        for M in MS:
            for mode in MODES:
                yield N, K, M, mode


def build(d: Path, cases=None, partitions=None, name="rows_bench"):
    """The kernels of every launch of `cases` ((N, K, M, mode); problems()) under each of `partitions` (M -> its
    [start, stop) blocks; Gemm's row_blocks and the 256-row blocks), saved under DIR / spec.key."""
    from nvtma.kernels import gemm
    g = gemm.Gemm(quantize="kernel")
    partitions = partitions or (gemm.row_blocks, lambda M: gemm.row_blocks(M, gemm.MAX_ROWS))
    specs = {}
    for N, K, M, mode in cases or problems():
        for a, b in (block for part in partitions for block in part(M)):
            sp = g.plan(b - a, N, K, *dtype_scale(mode))[0]
            specs[sp.key] = sp
    save_specs(d, specs, name)


def problem_inputs(torch, gen, N, K, M, mode):
    """(x, W, the call's keywords, float32 y, W's scale, W's bytes): W random, e4m3 with per-tensor or per-row
    scales and x e4m3 with per-row scales (`mode` "tensor" or "row"), or both bf16."""
    dev = torch.device("cuda")
    w32 = torch.randn(N, K, generator=gen, device=dev) / 4
    x32 = torch.randn(M, K, generator=gen, device=dev)
    if mode == "bf16":
        w, x = w32.to(torch.bfloat16), x32.to(torch.bfloat16)
        return x, w, {}, x.float() @ w.float().t(), None, N * K * 2
    sw = (w32.abs().amax() / 448).reshape(1) if mode == "tensor" else w32.abs().amax(1) / 448
    w = (w32 / (sw if mode == "tensor" else sw[:, None])).to(torch.float8_e4m3fn)
    wdq = w.float() * (sw if mode == "tensor" else sw[:, None])
    sx = x32.abs().amax(1) / 448
    x = (x32 / sx[:, None]).to(torch.float8_e4m3fn)
    return x, w, dict(w_scale=sw, scale=mode, x_scale=sx), (x.float() * sx[:, None]) @ wdq.t(), sw, N * K


def rotated(w, wbytes):
    """W and its copies, >= 256 MiB in all (at least 2), so that no call finds W in L2."""
    return [w] + [w.clone() for _ in range(max(2, -(-(256 << 20) // wbytes) + 1) - 1)]


def timed(torch, stream, call, wbufs, ref):
    """(y's largest error relative to ref's largest value, ms per call): `call(w)` once, checked, then timed over
    the W copies (common.graph_ms: CUDA-graph replays of 20 calls, best of 10)."""
    import common
    y = call(wbufs[0])
    torch.cuda.synchronize()
    err = ((y.float() - ref).abs().max() / ref.abs().max()).item()
    return err, common.graph_ms(torch, stream, lambda i: call(wbufs[i]), len(wbufs))


def run(d: Path):
    import torch
    import common
    from nvtma.kernels import gemm
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    print(json.dumps(dict(bench="gemm-rows", machine=props.name, sms=props.multi_processor_count,
                          torch=torch.__version__)), flush=True)
    g, gb = gemm.Gemm(artifacts=d, quantize="kernel"), gemm.Gemm(artifacts=d, quantize="kernel")
    stream = torch.cuda.Stream()
    gen = torch.Generator(device=dev).manual_seed(13)
    for N, K, M, mode in problems():
        fp8 = mode != "bf16"
        tol = 2e-2 if fp8 else 1e-2
        x, w, kw, ref, sw, wbytes = problem_inputs(torch, gen, N, K, M, mode)
        base_name = ("torch.matmul (cuBLAS)" if not fp8 else "torch._scaled_mm per-tensor" if mode == "tensor"
                     else "torch._scaled_mm row-wise")
        wbufs = rotated(w, wbytes)
        nbufs = len(wbufs)
        line = dict(bench="gemm-rows", N=N, K=K, M=M, mode=mode, blocks=[b - a for a, b in gemm.row_blocks(M)],
                    config=[gemm_bench.config_text(list(gemm.choose_config(b - a, N, K, F8 if fp8 else "bf16",
                                                                          scale=kw.get("scale")).short))
                            for a, b in gemm.row_blocks(M)], w_copies=nbufs)
        try:
            err, ms = timed(torch, stream, lambda w: g(x, w, **kw), wbufs, ref)
            line.update(us=round(ms * 1e3, 2), TFLOPs=round(2 * M * N * K / ms / 1e9, 1),
                        W_TBps=round(wbytes / ms / 1e9, 3), max_rel_err=float(f"{err:.2e}"),
                        correct=err < tol)
            launch_rows = gemm.launch_rows
            gemm.launch_rows = lambda config, options, sms=132: gemm.MAX_ROWS  # Gemm() before session 44
            try:  # (a Gemm of its own: g's calls of M rows are looked up before the blocks are chosen)
                err, ms = timed(torch, stream, lambda w: gb(x, w, **kw), wbufs, ref)
                line.update(blocks_correct=err < tol, blocks_us=round(ms * 1e3, 2))
            finally:
                gemm.launch_rows = launch_rows
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


def main(build, run):
    """`build DIR` or `run DIR` from the command line."""
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["build", "run"])
    ap.add_argument("dir", type=Path)
    a = ap.parse_args()
    {"build": build, "run": run}[a.cmd](a.dir)


if __name__ == "__main__":
    main(build, run)
