#!/usr/bin/env python3
"""The weight-streaming FP8 GEMM of CUTLASS #3672: y = x · Wᵀ, W streamed from DRAM.

W is e4m3 with a per-tensor, per-row or 128x128 block scale (or bf16), x is
bf16, quantized to e4m3 inside the GEMM (a scale per row and 128 K values)
where the GEMM measured that faster (--quantize auto, the default: small M),
else per token / per 1x128 block by a kernel of its own before the GEMM,
which launches as it starts (PDL); --quantize fused / kernel choose one
always. y is bf16. The kernels are
nvtma.kernels.gemm's DSL programs; the config (tile, consumer warpgroups, K
split, x multicast, M split, which operand is the wgmmas' A) is the GEMM's
choice for the problem unless --config.

    python examples/fp8_gemm.py --m 16 --n 7168 --k 2048              # compile, report (no GPU needed)
    python examples/fp8_gemm.py --m 16 --n 7168 --k 2048 --run        # and run, check against torch (GPU)
    python examples/fp8_gemm.py --m 16 --run --bench                  # and time it beside torch._scaled_mm
    python examples/fp8_gemm.py --m 8 --quantize fused --run          # x quantized inside the GEMM
    python examples/fp8_gemm.py --m 600 --run                         # 600 rows: launches of 512, 88 (gemm.row_blocks)
    python examples/fp8_gemm.py --aot DIR ... / --from DIR --run ...  # AOT: the GPU box needs no MLIR
"""

import argparse
import sys

import _example
from _example import GEMM_CONFIG
from nvtma.kernels import gemm


def _inputs(torch, a):
    """bf16 x, W as the kernel takes it, its scale, and W dequantized (float32)."""
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(a.m, a.k, generator=g, device="cuda").to(torch.bfloat16)
    return (x, *_example.quantized_weight(torch, torch.randn(a.n, a.k, generator=g, device="cuda") / 8, a.scale))


def _bench(torch, g, x, w, sw, a, kw):
    """GPU µs per call (CUDA graph of 20 calls, best of 10) of nvtma and of
    torch on the same e4m3 x: W is re-read from L2 here (one copy), so
    this is the kernel's speed, not the DRAM-streaming figure of
    benchmarks/gemm_bench.py."""
    def graph_us(fn):
        return _example.graph_us(torch, fn, calls=20)

    if a.scale == "bf16":
        ours = graph_us(lambda: g(x, w, config=a.config, **kw))
        theirs, name = graph_us(lambda: torch.matmul(x, w.t())), "torch.matmul"
    else:
        xq, sx = g.quantize(x, "block" if a.scale == "block" else "token")
        ours = graph_us(lambda: g(xq, w, x_scale=sx, config=a.config, **kw))
        theirs, name = None, "torch._scaled_mm"
        if a.scale in ("tensor", "row"):
            mp = max(16, -(-a.m // 16) * 16)
            xp = torch.zeros(mp, a.k, device="cuda", dtype=torch.float8_e4m3fn)
            xp[:a.m] = xq
            sa = torch.ones((), device="cuda") if a.scale == "tensor" else torch.ones(mp, 1, device="cuda")
            sb = sw.reshape(()) if a.scale == "tensor" else sw.reshape(1, -1)
            theirs = graph_us(lambda: torch._scaled_mm(xp, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16))
    line = f"nvtma {ours:.2f} us ({w.numel() * w.element_size() / ours / 1e6:.2f} TB/s of W)"
    if theirs is not None:
        line += f", {name} {theirs:.2f} us: {theirs / ours:.2f}x"
    print(line)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=16, help="rows of x (past 256 in blocks of up to 256)")
    ap.add_argument("--n", type=int, default=7168, help="rows of W")
    ap.add_argument("--k", type=int, default=2048)
    ap.add_argument("--scale", default="tensor", choices=["tensor", "row", "block", "bf16"],
                    help="e4m3 W with this scale, or bf16 W and x")
    ap.add_argument("--l2-w", default="l2_128b", help="L2 promotion of W's loads")
    ap.add_argument("--l2-x", default="l2_128b", help="L2 promotion of x's loads")
    ap.add_argument("--config", type=_example.gemm_config, help=f"{GEMM_CONFIG} (default: the GEMM's choice)")
    ap.add_argument("--sms", type=int, default=132, help="SMs the config is planned for (the GPU's, with --run)")
    ap.add_argument("--aot", metavar="DIR", help="write the kernels' artifacts here (one folder per kernel)")
    ap.add_argument("--from", dest="load", metavar="DIR", help="load what --aot wrote instead of compiling")
    ap.add_argument("--run", action="store_true", help="run and check on the GPU")
    ap.add_argument("--bench", action="store_true", help="with --run, time it beside torch")
    ap.add_argument("--quantize", default="auto", choices=["auto", "kernel", "fused"],
                    help="bf16 x: quantized inside the GEMM where that is faster (small M), else by its own "
                         "kernel first; or always one of the two")
    a = ap.parse_args(argv)
    if a.m < 1 or a.sms < 1:
        ap.error(f"--m {a.m}, --sms {a.sms}: at least 1")
    torch = None
    if a.run:
        import torch
        a.sms = torch.cuda.get_device_properties(0).multi_processor_count
    fp8 = a.scale != "bf16"
    opts = dict(l2_w=a.l2_w, l2_x=a.l2_x)
    try:  # (the GEMM's refusals of these flags: ValueErrors naming the rule and value)
        g = gemm.Gemm(artifacts=a.load, quantize=a.quantize, **opts)
        blocks = gemm.row_blocks(a.m, gemm.launch_rows(a.config, opts, a.sms))
        if len(blocks) > 1:  # a launch takes up to 512 rows of x (CTA pairs): Gemm launches one a block of rows
            print(f"x of {a.m} rows: {len(blocks)} launches, of {' / '.join(str(b - s) for s, b in blocks)} rows")
        for rows in dict.fromkeys(b - s for s, b in blocks):
            _plan(g, a, rows, fp8)
    except ValueError as e:
        ap.error(str(e))
    if not a.run:
        return 0
    x, w, sw, wdq = _inputs(torch, a)
    kw = dict(w_scale=sw, scale=a.scale) if fp8 else {}
    y = g(x, w, config=a.config, **kw)   # bf16 x: quantized, then the GEMM
    want = _example.x_as_the_gemm_sees_it(torch, g, x, a.scale, a.n, a.config, opts) @ wdq.t()
    torch.cuda.synchronize()
    err = ((y.float() - want).abs().max() / want.abs().max()).item()
    ok = err < (2e-2 if fp8 else 1e-2)
    print(f"ran on {torch.cuda.get_device_name()}: {'correct' if ok else 'WRONG'} (max error {err:.2e} of max |y|)")
    if a.bench:
        _bench(torch, g, x, w, sw, a, kw)
    return 0 if ok else 1


def _plan(g, a, rows, fp8):
    """Plans the GEMM for `rows` rows of x (a call's), prints its config, compiles (and with --aot saves) its
    kernels, or with --from loads nothing yet."""
    spec, splits, qspec = g.plan(rows, a.n, a.k, gemm.F8 if fp8 else "bf16", a.scale if fp8 else None,
                                 quantize=fp8, sms=a.sms, config=a.config)
    i = spec.info
    print(f"gemm M={rows} N={a.n} K={a.k} {a.scale}: BM={i['BM']} BN={i['BN']} consumer warpgroups={i['wgs']}"
          f"{' (alternate K steps)' if i['kwg'] else ''} stages={i['stages']}"
          f"{' of ' + str(i['kc']) + ' K steps (a TMA box each)' if i['kc'] > 1 else ''} "
          f"K splits={i['ksplit'] if i['ksplit'] > 1 else splits if splits else 'stream K'}"
          f"{' over a cluster (the partials summed in the shared memory of its last CTA)' if i['ksplit'] > 1 else ''}"
          f", x "
          f"{'multicast to ' + str(i['mc']) + ' CTAs' if i['mc'] > 1 else 'loaded by each CTA'}"
          f"{' (in boxes of BM/2 rows, ending within 8 rows of M)' if i['xhalf'] else ''}"
          f"{', M split over ' + str(i['ms']) + ' CTAs sharing W' if i['ms'] > 1 else ''}"
          f"{', x the wgmmas A (W tiles their B)' if not i['swap'] else ''}"
          f"{'; x quantized inside the GEMM' if i['x_scale'] == 'fused' else ''}; "
          f"l2_promotion of W {a.l2_w}, of x {a.l2_x}")
    # --run's check quantizes x with quantize_x too (in 1x128 blocks where the GEMM quantizes inside), and
    # --bench times the GEMM on e4m3 x from it (beside torch._scaled_mm): where x is quantized inside, those
    # are kernels of their own, built (and saved) beside the call's
    extra = {}
    if fp8 and i["x_scale"] == "fused":
        for sp in (gemm.quantize_x_spec("block"), gemm.quantize_x_spec("block" if a.scale == "block" else "token"),
                   g.plan(rows, a.n, a.k, gemm.F8, a.scale, sms=a.sms, config=a.config)[0]):
            extra[sp.key] = sp
    if not a.load:
        from pathlib import Path
        from _example import report
        for sp in (spec, qspec) if qspec is not None else (spec,):
            compiled = g.module(sp)
            report(compiled, sp, ptx_ops=(r"wgmma\.mma_async\.[\w.]+", r"griddepcontrol\.\w+",
                                          r"red\.global\.[\w.]+"))
            if a.aot:
                print(f"  wrote {compiled.save(Path(a.aot) / sp.key)}")
        for sp in extra.values():
            compiled = g.module(sp)
            if a.aot:
                print(f"  wrote {compiled.save(Path(a.aot) / sp.key)} (for --run's check and --bench)")


if __name__ == "__main__":
    sys.exit(main())
