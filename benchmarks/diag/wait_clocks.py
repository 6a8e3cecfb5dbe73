#!/usr/bin/env python3
"""Diagnosis: where a GEMM call's time goes, measured without a trace.
Each problem's table config is built twice, as shipped and with
gemm_spec(profile="clocks") (each warpgroup's SM-clock sums carried in
registers, added into a buffer once at its end: 1.2x the kernel's time on
the profiling GEMM, a trace 1.6x; diag/profile_overhead.py), and timed in
CUDA graphs of 20 calls rotating W over >= 256 MiB (common.graph_ms), both
in one process. Per problem it prints both times and, per role, the share
of the role's span (its start to its last event, summed over the CTAs and
the 20 calls of the last replay) each part took: producer blocked (waiting
for a free slot and issuing W's load), x_load, grid_wait (PDL); consumer
wait (for a full slot), mma (wgmmas issued and waited for), after_mma (the
slot's release, and with block scales the promotion; "promote" in
s31-wait-clocks-1/-2), epilogue; and each part's cycles per warpgroup, CTA and call
(at the H200's 1.98 GHz, 1,980 a us).
    python3 benchmarks/diag/wait_clocks.py build DIR [kwg]    # here
    python3 benchmarks/diag/wait_clocks.py run DIR [kwg]      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (N, K, M, mode[, config: the table's if not given]): the misses of #13 at M = 32-128 (s29's full runs), and
# M = 8 beside them (s31-wait-clocks-1/-2); block scales at M = 128 over two consumer warpgroups, taking
# alternate K steps of a 64-row tile (kwg: one's promotion may run beside the other's wgmmas) or half the rows of
# a 128-row tile each (both promote at once) (s31-wait-clocks-kwg)
PROBLEMS = [(N, K, M, mode) for N, K in ((4096, 7168), (7168, 2048), (2112, 7168), (24576, 1536))
            for M in (8, 32, 64, 128) for mode in ("tensor", "block")] + \
    [(16384, 16384, 128, "tensor"), (16384, 16384, 128, "block"), (4096, 7168, 64, "bf16"),
     (24576, 1536, 64, "bf16"), (24576, 1536, 128, "row"), (7168, 2048, 128, "row")]
KWG = [(N, K, 128, "block", cfg) for N, K in ((24576, 1536), (7168, 2048), (4096, 7168))
       for cfg in ((128, 64, 2, 1, 1, None, 1, True), (128, 128, 2, 1))]
VARIANTS = (("plain", {}), ("clocks", {"profile": "clocks"}))


def _plans(d=None, which=None):
    import common
    from nvtma.kernels import gemm
    g = gemm.Gemm(artifacts=d)
    for N, K, M, mode, *cfg in (KWG if which == "kwg" else PROBLEMS):
        fp8 = mode != "bf16"
        cfg = gemm.Config(*cfg[0]) if cfg else gemm.choose_config(M, N, K, gemm.F8 if fp8 else "bf16",
                                                                   scale=mode if fp8 else None)
        for label, opts in VARIANTS:
            sp = common.gemm_plan(g, M, N, K, gemm.F8 if fp8 else "bf16", mode if fp8 else None, config=cfg,
                                  **opts)[0]
            yield g, (N, K, M, mode), cfg, label, opts, sp


def build(d, which=None):
    import common
    common.save_new(d, [p[-1] for p in _plans(None, which)])


def run(d, which=None):
    import torch
    import common
    from nvtma.kernels import gemm
    dev, stream, gen = common.gpu(torch)
    plans = list(_plans(d, which))
    for i in range(0, len(plans), len(VARIANTS)):
        g, (N, K, M, mode), cfg, _, _, _ = plans[i]
        fp8 = mode != "bf16"
        w, x, sw, sx, want = common.gemm_problem(torch, gen, N, K, M, fp8, mode)
        wbufs = common.copies(w)
        kw = dict(w_scale=sw, scale=mode, x_scale=sx) if fp8 else {}
        line = dict(bench="gemm-wait-clocks", N=N, K=K, M=M, mode=mode, config=list(gemm.Config(*cfg).short))
        for _, _, _, label, opts, sp in plans[i:i + len(VARIANTS)]:
            try:
                prep = common.prepared(g, x, w, config=cfg, **kw, **opts)[0]
                extra = ()
                if opts.get("profile"):
                    W, roles = gemm.CLOCK_WORDS, sp.consts["wgs"] + 1
                    extra = (torch.zeros(prep.grid[0] * roles * W, dtype=torch.int64, device=dev),)

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
                    v = extra[0].view(prep.grid[0], roles, W).sum(0).tolist()  # the last replay's 20 calls
                    per = {"producer": (gemm.CLOCKS["producer"], [v[0]]),
                           "consumer": (gemm.CLOCKS["consumer"], v[1:])}
                    line["shares"], line["cycles"] = {}, {}
                    for role, (names, rows) in per.items():
                        span = sum(r[W - 1] for r in rows)
                        line["shares"][role] = {n: round(sum(r[i] for r in rows) / span, 3)
                                                for i, n in enumerate(names)}
                        # per warpgroup of the role, CTA and call
                        k = len(rows) * prep.grid[0] * 20
                        line["cycles"][role] = {n: round(sum(r[i] for r in rows) / k) for i, n in enumerate(names)}
                        line["cycles"][role]["span"] = round(span / k)
            except Exception as e:  # noqa: BLE001 (a config that does not launch is a result too)
                line[label + "_error"] = f"{type(e).__name__}: {e}"[:300]
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](*sys.argv[2:4])
