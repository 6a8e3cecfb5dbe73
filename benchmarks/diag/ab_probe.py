#!/usr/bin/env python3
"""Experiment: this tree's GEMM kernels against an earlier commit's, at the
same configs, in one process and interleaved (new, old, new, old, ...), so
clock and thermal drift over a run fall on both alike (gemm_bench.py's A/B
runs one version after the other). The earlier gemm.py is imported as
nvtma.kernels.gemm_old: put it there (the device call copies
.dev/old_gemm.py into the installed package). GPU time of CUDA graphs of 20
calls, W rotating over >= 256 MiB of copies, e4m3 x given (no quantize).
Eleventh session (s17-ab-probe): the split-K partials added from the
registers against the staged reductions of 88e1cfa.
    python3 benchmarks/diag/ab_probe.py build DIR    # here, with gemm_old importable
    python3 benchmarks/diag/ab_probe.py run DIR      # on the GPU
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (N, K, M, mode): every point of 2112 x 7168 (its configs split K), and split and unsplit points of the others
PROBES = [(2112, 7168, M, mode) for M in (1, 8, 16, 32, 64, 128, 256) for mode in ("tensor", "row", "block", "bf16")]
PROBES += [(4096, 7168, M, mode) for M in (1, 16, 64, 128) for mode in ("tensor", "block")]
PROBES += [(7168, 2048, M, "tensor") for M in (16, 128)] + [(24576, 1536, M, "tensor") for M in (16, 128)]
ROUNDS = 3


def _versions():
    """(label, module) of both versions, in the order each round runs them (AB_ORDER=old-first: the old
    first, to see whether the place in a round matters)."""
    import os
    from nvtma.kernels import gemm, gemm_old
    v = (("new", gemm), ("old", gemm_old))
    return v[::-1] if os.environ.get("AB_ORDER") == "old-first" else v


def _plans(d=None):
    """(version, Gemm, problem, config, its specs) for each probe and version, the config the version picks."""
    for label, mod in _versions():
        g = mod.Gemm(artifacts=Path(d) / label if d else None)
        for N, K, M, mode in PROBES:
            fp8 = mode != "bf16"
            cfg = mod.choose_config(M, N, K, mod.F8 if fp8 else "bf16", scale=mode if fp8 else None)
            sp, _, q = g.plan(M, N, K, mod.F8 if fp8 else "bf16", mode if fp8 else None, config=cfg)
            yield label, g, (N, K, M, mode), tuple(cfg), [sp] + ([q] if q else [])


def build(d):
    import common
    for label, g, prob, cfg, sps in _plans():
        common.save_new(Path(d) / label, sps)


def run(d):
    import torch
    import common
    dev, stream, gen = common.gpu(torch)
    by_prob = {}
    for label, g, prob, cfg, sps in _plans(d):
        by_prob.setdefault(prob, []).append((label, g, cfg))
    for prob, versions in by_prob.items():
        N, K, M, mode = prob
        fp8 = mode != "bf16"
        w, x, sw, sx, want = common.gemm_problem(torch, gen, N, K, M, fp8, mode)
        wbufs = common.copies(w)
        kw = dict(w_scale=sw, scale=mode, x_scale=sx) if fp8 else {}
        times, out = {label: [] for label, _, _ in versions}, {}
        try:
            for label, g, cfg in versions:
                y = g(x, w, config=cfg, **kw)
                torch.cuda.synchronize()
                out[label] = dict(config=list(cfg), err=float(f"{((y.float() - want).abs().max() / want.abs().max()).item():.2e}"))
            for _ in range(ROUNDS):
                for label, g, cfg in versions:
                    ms = common.graph_ms(torch, stream, lambda i, g=g, cfg=cfg: g(x, wbufs[i], config=cfg, **kw),
                                         len(wbufs))
                    times[label].append(ms * 1e3)
            res = {label: dict(out[label], us=round(min(t), 2), us_median=round(statistics.median(t), 2))
                   for label, t in times.items()}
            res["new/old"] = round(res["new"]["us"] / res["old"]["us"], 3)
        except Exception as e:  # noqa: BLE001 (a config that does not launch is a result too)
            res = dict(error=f"{type(e).__name__}: {e}"[:200])
        print(json.dumps(dict(bench="gemm-ab-probe", N=N, K=K, M=M, mode=mode, first=versions[0][0], **res)),
              flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
