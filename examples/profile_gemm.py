#!/usr/bin/env python3
"""The weight-streaming GEMM (nvtma.kernels.gemm) traced from inside.

The traced variant (gemm_spec(..., profile=EVENTS)) records, per k-block,
the producer warp's wait for an empty slot ("acquire") and its TMA issue
("load"), and each consumer warpgroup's wait for the tile ("wait"), its
wgmmas ("mma") and its epilogue per work unit. The run prints a table
(count, mean, p50, p99 per event) and writes a Chrome trace-event JSON
(ui.perfetto.dev): a process per SM, a thread per warp and role.

    python examples/profile_gemm.py --profile gemm.json              # compiles, lists the events
    python examples/profile_gemm.py --profile gemm.json --run        # and runs, profiles, checks (GPU)
    python examples/profile_gemm.py --aot DIR                        # traced + plain kernels, AOT
    python examples/profile_gemm.py --profile gemm.json --run --from DIR   # GPU box, no MLIR needed
"""

import argparse
import sys
from pathlib import Path

from _example import GEMM_CONFIG, gemm_config, gpu_ms
from nvtma import profile
from nvtma.kernels import gemm


def specs(a):
    """(traced spec, plain spec, config) for the problem: --config, or the config the GEMM picks."""
    w_dtype = "bf16" if a.scale == "bf16" else gemm.F8
    cfg = a.config or gemm.choose_config(a.m, a.n, a.k, w_dtype, a.sms, None if a.scale == "bf16" else a.scale)
    kw = dict(w_dtype=w_dtype, w_scale=None if a.scale == "bf16" else a.scale, mc=cfg.mc, ms=cfg.ms,
              kwg=cfg.kwg, stages=cfg.stages, kc=cfg.kc)
    return (gemm.gemm_spec(cfg.BM, cfg.BN, cfg.wgs, profile=a.events, **kw),
            gemm.gemm_spec(cfg.BM, cfg.BN, cfg.wgs, **kw), cfg)


def _module(spec, where):
    if where is not None:
        from nvtma import runtime
        return runtime.load(where)
    return spec.compile()


def _inputs(torch, a):
    """x, w, the scale arguments, and the float32 reference y."""
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(a.m, a.k, generator=g, device="cuda")
    w = torch.randn(a.n, a.k, generator=g, device="cuda") / 8
    if a.scale == "bf16":
        x, w = x.to(torch.bfloat16), w.to(torch.bfloat16)
        return x, w, [], x.float() @ w.float().t()
    f8 = torch.float8_e4m3fn
    if a.scale == "block":
        def blocks(t, rows):  # per (rows x 128) block of t: amax / 448
            R, K = t.shape
            kb, rb = -(-K // 128), -(-R // rows)
            p = torch.nn.functional.pad(t, (0, kb * 128 - K, 0, rb * rows - R)).view(rb, rows, kb, 128)
            s = p.abs().amax((1, 3)).clamp(min=1e-6) / 448
            q = (p / s[:, None, :, None]).reshape(rb * rows, kb * 128)[:R, :K].to(f8)
            deq = (torch.nn.functional.pad(q.float(), (0, kb * 128 - K, 0, rb * rows - R)).view(rb, rows, kb, 128)
                   * s[:, None, :, None]).reshape(rb * rows, kb * 128)[:R, :K]
            return q, s, deq
        wq, sw, wd = blocks(w, 128)
        xq, sx, xd = blocks(x, 1)
        # x's 1x128 scales as the kernel takes them: transposed, [K/128, M rounded up to 4]
        return xq, wq, [sw.contiguous(), gemm.block_scales_for_kernel(sx.reshape(a.m, -1))], xd @ wd.t()
    sw = w.abs().amax().reshape(1) / 448 if a.scale == "tensor" else w.abs().amax(1).clamp(min=1e-6) / 448
    wq = (w / (sw if a.scale == "tensor" else sw[:, None])).to(f8)
    wd = wq.float() * (sw if a.scale == "tensor" else sw[:, None])
    sx = x.abs().amax(1).clamp(min=1e-6) / 448
    xq = (x / sx[:, None]).to(f8)
    return xq, wq, [sw.contiguous(), sx], (xq.float() * sx[:, None]) @ wd.t()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--k", type=int, default=8192)
    ap.add_argument("--scale", default="tensor", choices=["tensor", "row", "block", "bf16"],
                    help="fp8 W with this scale, or bf16 W and x")
    ap.add_argument("--events", type=int, default=256, help="events recorded per warp (more are counted, dropped)")
    ap.add_argument("--config", type=gemm_config, help=f"{GEMM_CONFIG} (default: the GEMM's choice)")
    ap.add_argument("--sms", type=int, default=132, help="SMs the config is planned for (the GPU's, with --run)")
    ap.add_argument("--profile", metavar="OUT.json", help="with --run, write the trace here")
    ap.add_argument("--run", action="store_true")
    ap.add_argument("--aot", metavar="DIR", help="write the traced (DIR/traced) and plain (DIR/plain) kernels")
    ap.add_argument("--from", dest="load", metavar="DIR", help="load what --aot wrote instead of compiling")
    a = ap.parse_args(argv)
    torch = None
    if a.run:
        import torch
        a.sms = torch.cuda.get_device_properties(0).multi_processor_count
    try:
        traced, plain, cfg = specs(a)
    except ValueError as e:  # (the GEMM's refusal of these flags: the rule and the value)
        ap.error(str(e))
    splits = cfg.splits
    where = Path(a.load) if a.load else None
    mod = _module(traced, where / "traced" if where else None)
    names = profile.event_table(mod, "gemm")
    c = traced.consts
    print(f"gemm M={a.m} N={a.n} K={a.k} {a.scale}: BM={c['BM']} BN={c['BN']} wgs={c['wgs']} stages={c['stages']} "
          f"splits={splits} mc={cfg.mc} ms={cfg.ms}; traced events {', '.join(names.events)} (roles "
          f"{', '.join(r for r in names.roles if r)}), {names.events_per_warp} per warp, one lane per warpgroup")
    if a.aot:
        mod.save(Path(a.aot) / "traced")
        _module(plain, None).save(Path(a.aot) / "plain")
        print(f"wrote {a.aot}/traced and {a.aot}/plain")
    if not a.run:
        return 0
    x, w, scales, want = _inputs(torch, a)
    BN = c["BN"]
    parts, grid = gemm.parts_for(splits, a.n, a.k, BN, "bf16" if a.scale == "bf16" else gemm.F8, a.sms, cfg.mc,
                                 cfg.ms, cfg.kc)
    if cfg.kc > 1:  # stages of several K steps load the operands' [K / bk, rows, bk] views
        x, w = gemm.gemm_operand_view(x), gemm.gemm_operand_view(w)
    y = torch.empty(a.m, a.n, device="cuda", dtype=torch.bfloat16)
    ws, counters = gemm.workspace(torch, "cuda", traced, a.n)
    buf = profile.alloc_buffer(grid, traced.block, names.events_per_warp)
    mod.gemm(w, x, y, ws, counters, parts, *scales, buf, grid=grid)
    torch.cuda.synchronize()
    err = ((y.float() - want).abs().max() / want.abs().max()).item()
    ok = err < 2e-2
    prof = profile.collect(buf, names)
    print(prof.table())
    if a.profile:
        print(f"wrote {prof.write_trace(a.profile)} (load it in ui.perfetto.dev or chrome://tracing)")
    pmod = _module(plain, where / "plain" if where else None)
    t_traced = gpu_ms(torch, lambda: mod.gemm(w, x, y, ws, counters, parts, *scales, buf, grid=grid))
    t_plain = gpu_ms(torch, lambda: pmod.gemm(w, x, y, ws, counters, parts, *scales, grid=grid))
    print(f"{'correct' if ok else 'WRONG'} (max error {err:.2e} of max |y|); {t_plain * 1e3:.1f} us plain, "
          f"{t_traced * 1e3:.1f} us traced: overhead {100 * (t_traced / t_plain - 1):+.1f}% on "
          f"{torch.cuda.get_device_name()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
