#!/usr/bin/env python3
"""Diagnosis: where a GEMM call's time goes, untraced. Each problem's
table config is built twice, as shipped and with gemm_spec(profile=
"totals") (nvtma.profile's totals mode: per warp, each event's count and
SM cycles summed by reductions that do not wait, no timeline), and timed
in CUDA graphs of 20 calls rotating W over >= 256 MiB (common.graph_ms),
both in one process. Per problem it prints both times (what the counting
costs) and, per role, the median over warps of each event's share of the
warp's span (kernel start to end, summed over the 20 calls of the last
replay): producer acquire (waiting for a free slot), load (issuing TMA),
prefetch and grid_wait (PDL); consumer wait (for a full slot), mma (wgmmas
issued and waited for), promote (block scales), epilogue; and each event's
cycles per occurrence.
    python3 benchmarks/diag/wait_totals.py build DIR    # here
    python3 benchmarks/diag/wait_totals.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (N, K, M, mode): the misses of #13 at M = 32-128 (s29's full runs), and M = 8 beside them
PROBLEMS = [(N, K, M, mode) for N, K in ((4096, 7168), (7168, 2048), (2112, 7168), (24576, 1536))
            for M in (8, 32, 64, 128) for mode in ("tensor", "block")] + \
    [(16384, 16384, 128, "tensor"), (16384, 16384, 128, "block"), (4096, 7168, 64, "bf16"),
     (24576, 1536, 64, "bf16"), (24576, 1536, 128, "row"), (7168, 2048, 128, "row")]
VARIANTS = (("plain", {}), ("totals", {"profile": "totals"}))


def _plans(d=None):
    from nvtma.kernels import gemm
    g = gemm.Gemm(artifacts=d)
    for N, K, M, mode in PROBLEMS:
        fp8 = mode != "bf16"
        cfg = gemm.choose_config(M, N, K, gemm.F8 if fp8 else "bf16", scale=mode if fp8 else None)
        for label, opts in VARIANTS:
            sp = g.plan(M, N, K, gemm.F8 if fp8 else "bf16", mode if fp8 else None, config=cfg, **opts)[0]
            yield g, (N, K, M, mode), cfg, label, opts, sp


def build(d):
    import common
    common.save_new(d, [p[-1] for p in _plans()])


def run(d):
    import torch
    import common
    from nvtma import profile
    from nvtma.kernels import gemm
    dev, stream, gen = common.gpu(torch)
    plans = list(_plans(d))
    for i in range(0, len(plans), len(VARIANTS)):
        g, (N, K, M, mode), cfg, _, _, _ = plans[i]
        fp8 = mode != "bf16"
        w, x, sw, sx, want = common.gemm_problem(torch, gen, N, K, M, fp8, mode)
        wbufs = common.copies(w)
        kw = dict(w_scale=sw, scale=mode, x_scale=sx) if fp8 else {}
        line = dict(bench="gemm-wait-totals", N=N, K=K, M=M, mode=mode, config=list(gemm.Config(*cfg).short))
        for _, _, _, label, opts, sp in plans[i:i + len(VARIANTS)]:
            try:
                prep = g._prepare(x, w, kw.get("w_scale"), kw.get("scale"), kw.get("x_scale"), None, None, cfg, opts)
                extra = ()
                if opts.get("profile"):
                    names = profile.event_table(g.module(sp), "gemm")
                    buf = profile.alloc_buffer(prep.grid, (128 * (sp.consts["wgs"] + 1),), names.events_per_warp)
                    extra = (buf,)

                def call(j, prep=prep, extra=extra):
                    return prep(x, wbufs[j], kw.get("w_scale"), kw.get("x_scale"), None, *extra)

                def zero(extra=extra):  # each replay's sums alone (on the graph's stream: in order)
                    if extra:
                        with torch.cuda.stream(stream):
                            extra[0].zero_()
                y = call(0)
                torch.cuda.synchronize()
                err = ((y.float() - want).abs().max() / want.abs().max()).item()
                line[label] = round(common.graph_ms(torch, stream, call, len(wbufs), before=zero) * 1e3, 2)
                line[label + "_err"] = float(f"{err:.2e}")
                if extra:
                    t = profile.collect(extra[0], names)
                    line["shares"] = {r: {e: round(v, 3) for e, v in ev.items()} for r, ev in t.shares().items()}
                    line["cycles_per_event"] = {f"{r['role']}/{r['name']}": round(r["cycles_per_event"])
                                                for r in t.summary()}
                    line["span_cycles_per_call"] = round(sorted(v["span"] for v in t.warps.values())[
                        len(t.warps) // 2] / 20)
            except Exception as e:  # noqa: BLE001 (a config that does not launch is a result too)
                line[label + "_error"] = f"{type(e).__name__}: {e}"[:300]
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
