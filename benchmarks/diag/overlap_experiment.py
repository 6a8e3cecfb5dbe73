#!/usr/bin/env python3
"""Experiment: do consecutive small GEMM calls overlap on an SM? With
programmatic dependent launch the next call's CTAs prefetch their W while
this call drains, but only where a second CTA fits on the SM: by shared
memory (the carveout the driver picks, and the ring's depth), registers and
threads. Each problem runs its config with the default ring, then with the
carveout set to the most shared memory (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_
MEMORY_CARVEOUT = 100), with W resident in L2 (one copy: the pipeline's own
floor; W without the evict_first hint, which else keeps it out of L2), the
same kernel with W from DRAM, then with the deepest ring of which two CTAs fit in
228 KB (carveout 100), that with the early trigger, and with stream K; each
line has the occupancy the driver reports (CTAs per SM) beside the time, in
CUDA graphs of 20 calls rotating over >= 256 MiB of W (common.graph_ms).
    python3 benchmarks/diag/overlap_experiment.py build DIR    # here
    python3 benchmarks/diag/overlap_experiment.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (N, K, M, mode, (BM, BN, wgs, splits)): this session's picks at small M
PROBLEMS = [(7168, 2048, 1, "tensor", (8, 64, 1, 1)), (7168, 2048, 32, "tensor", (32, 64, 1, 1)),
            (4096, 7168, 1, "tensor", (8, 128, 1, 4)), (2112, 7168, 1, "tensor", (8, 128, 1, 7)),
            (24576, 1536, 1, "tensor", (8, 192, 1, 1)), (7168, 2048, 1, "bf16", (8, 64, 1, 1)),
            (4096, 7168, 8, "bf16", (8, 128, 1, 4)), (4096, 7168, 64, "tensor", (64, 64, 1, 2)),
            (4096, 7168, 128, "tensor", (128, 64, 1, 1)), (24576, 1536, 128, "tensor", (128, 64, 1, 1))]


def fit2(BM, BN, fp8):
    """The deepest ring of which two CTAs share an SM (None below 2 stages)."""
    from nvtma.kernels import gemm
    two = gemm.two_per_sm_stages(BM, BN, gemm.F8 if fp8 else "bf16")
    return two if two >= 2 else None


def _plans(d=None, fits=None):
    from nvtma.kernels import gemm
    g = gemm.Gemm(artifacts=d)
    for i, (N, K, M, mode, cfg) in enumerate(PROBLEMS):
        fp8 = mode != "bf16"
        two = fits[i] if fits is not None else fit2(cfg[0], cfg[1], fp8)
        variants = [("default", {}, None), ("l2_resident", dict(w_hint=None), None),
                    ("no_hint", dict(w_hint=None), None), ("carve", {}, 100)]
        if two:
            variants += [("fit2", dict(stages=two), 100), ("fit2_early", dict(stages=two, pdl="early"), 100),
                         ("fit2_sK", dict(stages=two), 100, 0)]
        for label, opts, carve, *splits in variants:
            c = cfg if not splits else cfg[:3] + (splits[0],)
            sp, _, _ = g.plan(M, N, K, gemm.F8 if fp8 else "bf16", mode if fp8 else None, config=c, **opts)
            yield g, (N, K, M, mode, cfg), label, opts, carve, c, sp


def build(d):
    import common
    plans = list(_plans())
    common.save_new(d, [p[-1] for p in plans])
    fits = [fit2(cfg[0], cfg[1], mode != "bf16") for _, _, _, mode, cfg in PROBLEMS]
    smem = {p[-1].key: p[-1].smem for p in plans}
    (Path(d) / "plan.json").write_text(json.dumps(dict(fits=fits, smem=smem)))


def _occupancy(drv, func, threads, smem):
    err, f = drv.cuKernelGetFunction(drv.CUkernel(func))
    if int(err):
        return str(err)
    err, n = drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(f, threads, smem)
    return n if int(err) == 0 else str(err)


def run(d):
    import torch
    from cuda.bindings import driver as drv
    import common
    dev, stream, gen = common.gpu(torch)
    plan = json.loads((Path(d) / "plan.json").read_text())
    cur, res = None, {}
    for g, prob, label, opts, carve, cfg, sp in list(_plans(d, plan["fits"])) + [(None,) * 7]:
        if prob != cur and cur is not None:
            N, K, M, mode, c0 = cur
            print(json.dumps(dict(bench="gemm-overlap", N=N, K=K, M=M, mode=mode, config=list(c0), **res)),
                  flush=True)
            res = {}
        cur = prob
        if prob is None:
            break
        N, K, M, mode, _ = prob
        fp8 = mode != "bf16"
        wbytes = N * K * (1 if fp8 else 2)
        w, x, sw, sx, want = common.gemm_problem(torch, gen, N, K, M, fp8)
        kw = dict(w_scale=sw, scale=mode, x_scale=sx) if fp8 else {}
        wbufs = common.copies(w)
        launcher = g.module(sp).gemm
        y = g(x, w, config=cfg, **opts, **kw)   # loads the kernel, sets its shared memory size
        torch.cuda.synchronize()
        func = launcher._function()
        threads = 128 * (sp.info.get("wgs", 1) + 1)
        smem = plan["smem"][sp.key]
        occ = {"before": _occupancy(drv, func, threads, smem)}
        if carve is not None:
            (err,) = drv.cuKernelSetAttribute(
                drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, carve,
                drv.CUkernel(func), drv.CUdevice(0))
            occ["carve_err"] = int(err)
            occ["after"] = _occupancy(drv, func, threads, smem)
        err = ((y.float() - want).abs().max() / want.abs().max()).item()

        def call(i):
            return g(x, wbufs[i], config=cfg, **opts, **kw)
        ms = common.graph_ms(torch, stream, call, 1 if label == "l2_resident" else len(wbufs))
        if carve is not None:   # back to the driver's choice for the next variant of this kernel
            drv.cuKernelSetAttribute(drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                     -1, drv.CUkernel(func), drv.CUdevice(0))
        res[label] = dict(stages=sp.info["stages"], smem=smem, occupancy=occ, us=round(ms * 1e3, 2),
                          W_TBps=round(wbytes / ms / 1e9, 3), err=float(f"{err:.2e}"))


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
