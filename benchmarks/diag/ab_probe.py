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
AB_FUSED=1: bf16 x quantized inside the GEMM (Gemm(quantize="fused"), the
config it picks) at M = 1-128 instead. AB_OLD_CONCAT=chain (build only; no
gemm_old needed): both versions are this gemm.py, the old one's kernels built
with the DSL's vector concats as a chain (thirty-fourth session: pairwise
joins of the fused fp8 quantization's pieces against the chain).
"""
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (N, K, M, mode): every point of 2112 x 7168 (its configs split K), and split and unsplit points of the others
PROBES = [(2112, 7168, M, mode) for M in (1, 8, 16, 32, 64, 128, 256) for mode in ("tensor", "row", "block", "bf16")]
PROBES += [(4096, 7168, M, mode) for M in (1, 16, 64, 128) for mode in ("tensor", "block")]
PROBES += [(7168, 2048, M, "tensor") for M in (16, 128)] + [(24576, 1536, M, "tensor") for M in (16, 128)]
FUSED = os.environ.get("AB_FUSED") == "1"
if FUSED:
    PROBES = [(N, K, M, mode) for N, K in ((4096, 7168), (7168, 2048), (2112, 7168), (24576, 1536), (16384, 16384))
              for M in (1, 8, 16, 64, 128) for mode in ("tensor", "row", "block")]
ROUNDS = 3


def _chain(parts):
    """The DSL's vector concat before the thirty-fourth session: a chain up to 8 parts."""
    r = parts[0]
    for p in parts[1:]:
        r = r.concat(p)
    return r


def _versions():
    """(label, module) of both versions, in the order each round runs them (AB_ORDER=old-first: the old
    first, to see whether the place in a round matters)."""
    from nvtma.kernels import gemm
    if os.environ.get("AB_OLD_CONCAT"):
        gemm_old = gemm
    else:
        from nvtma.kernels import gemm_old
    v = (("new", gemm), ("old", gemm_old))
    return v[::-1] if os.environ.get("AB_ORDER") == "old-first" else v


def _plans(d=None):
    """(version, Gemm, problem, config, its specs) for each probe and version, the config the version picks."""
    for label, mod in _versions():
        g = mod.Gemm(artifacts=Path(d) / label if d else None, **(dict(quantize="fused") if FUSED else {}))
        for N, K, M, mode in PROBES:
            fp8 = mode != "bf16"
            cfg = None if FUSED else mod.choose_config(M, N, K, mod.F8 if fp8 else "bf16",
                                                       scale=mode if fp8 else None)
            sp, splits, q = g.plan(M, N, K, mod.F8 if fp8 else "bf16", mode if fp8 else None, config=cfg,
                                   quantize=FUSED)
            if FUSED:
                cfg = (sp.info["BM"], sp.info["BN"], sp.info["wgs"], splits)
            yield label, g, (N, K, M, mode), cfg and tuple(cfg), [sp] + ([q] if q else [])


def build(d):
    import common
    from nvtma.dsl import vector
    pairwise = vector._concat
    for label, g, prob, cfg, sps in _plans():
        vector._concat = _chain if label == "old" and os.environ.get("AB_OLD_CONCAT") == "chain" else pairwise
        for sp in sps:  # the kernels' traced IR of the other version (their build cache) is not this one's
            sp.kernel._built.clear()
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
        if FUSED:  # bf16 x, quantized inside (the config is the one Gemm picks for it)
            x = torch.randn(M, K, generator=gen, device=w.device).bfloat16()
            kw = dict(w_scale=sw, scale=mode)
            ws = (sw.repeat_interleave(128, 0).repeat_interleave(128, 1)[:N, :K] if mode == "block"
                  else sw.reshape(-1, 1))
            want = x.float() @ (w.float() * ws).t()
        times, out = {label: [] for label, _, _ in versions}, {}
        try:
            for label, g, cfg in versions:
                y = g(x, w, **kw) if FUSED else g(x, w, config=cfg, **kw)
                torch.cuda.synchronize()
                out[label] = dict(config=list(cfg), err=float(f"{((y.float() - want).abs().max() / want.abs().max()).item():.2e}"))
            for _ in range(ROUNDS):
                for label, g, cfg in versions:
                    ms = common.graph_ms(torch, stream, lambda i, g=g, cfg=cfg: g(x, wbufs[i], **(kw if FUSED else dict(kw, config=cfg))),
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
