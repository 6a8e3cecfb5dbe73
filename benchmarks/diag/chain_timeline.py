#!/usr/bin/env python3
"""Experiment: where a small GEMM's time goes in a chain of back-to-back
calls. The traced GEMM (gemm_spec(profile=...), %globaltimer per event) runs
as a CUDA graph of CALLS calls, each with its own profile buffer, W rotating
over >= 256 MiB; per call it prints, relative to the first call's first
event: the first event of any CTA, the consumers' first wait (after
griddepcontrol.wait in a PDL build) and when its stage was full, the last
producer load issued, and the last epilogue's end; in PDL builds also the
producers' prefetch (its first start, median end) and their
griddepcontrol.wait's median return; and the call's share of the graph's
time. Variants: with PDL or not, the ring's depth, the shared memory
carveout (None: the driver's choice; 100: the most shared memory). Sixth
session: a 256 x 256 problem, the per-call floor (s12-chain-floor). Each
call's line also has `shares`: per role (producer, consumer) the median over
its CTAs of the share of the role's span (first event to last) each event
kind took (producer: acquire = waiting for a free slot, load; consumer:
wait = for a full slot, mma, epilogue).
    python3 benchmarks/diag/chain_timeline.py build DIR [steady]   # here
    python3 benchmarks/diag/chain_timeline.py run DIR [steady]     # on the GPU
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (N, K, M, (BM, BN, wgs, splits), pdl, stages or None (the default), carveout or None (the driver's))
# (the sixth session's: (256, 256, 1, (8, 64, 1, 1), True / False, None, None), (7168, 2048, 1, (8, 64, 1, 1), True,
# None, None), 96 events a warp.) Fifteenth session (s21-chain): the table's configs of 4096 x 7168 (64 CTAs, the
# next call's CTAs can start on the other SMs) and 2112 x 7168 (K split 7 ways, 119 CTAs) at M = 1
PROBLEMS = [(4096, 7168, 1, (8, 64, 1, 1), True, 16, None), (2112, 7168, 1, (8, 128, 1, 7), True, None, None)]
# `steady` (twenty-fifth session): the table's one-CTA-cluster, one-K-step-a-stage configs at M = 8-128, where a
# CTA streams several tiles: is a call's time its consumers waiting for data, or its producer for free slots?
STEADY_PROBLEMS = [(24576, 1536, 128, (128, 64, 1, 1), True, None, None),
                   (7168, 2048, 128, (128, 64, 1, 1), True, None, None),
                   (24576, 1536, 64, (64, 192, 1, 1), True, None, None),
                   (24576, 1536, 8, (8, 192, 1, 1), True, None, None),
                   (4096, 7168, 64, (64, 64, 1, 1), True, 12, None)]
CALLS, EVENTS = 8, 192


def _name(N, K, cfg, pdl, stages):
    return f"{N}-{K}-{'-'.join(map(str, cfg))}-pdl{int(pdl)}-s{stages or 0}"


def _shares(events):
    """{role: {event name: median over CTAs of its share of the role's span}} (depth-0 spans)."""
    per = {}
    for e in events:
        if e.depth == 0 and e.role in ("producer", "consumer"):
            per.setdefault((e.role, e.cta), []).append(e)
    out = {}
    for (role, _), evs in per.items():
        span = max(e.end_ns for e in evs) - min(e.start_ns for e in evs)
        sums = {}
        for e in evs:
            sums[e.name] = sums.get(e.name, 0) + e.dur_ns
        for name, t in sums.items():
            out.setdefault(role, {}).setdefault(name, []).append(t / span if span else 0.0)
    return {role: {n: round(statistics.median(v), 3) for n, v in names.items()} for role, names in out.items()}


def _problems(which):
    return STEADY_PROBLEMS if which == "steady" else PROBLEMS


def build(d, which=None):
    from nvtma.kernels import gemm
    for N, K, M, cfg, pdl, stages, _ in _problems(which):
        sub = Path(d) / _name(N, K, cfg, pdl, stages)
        if not sub.exists():
            gemm.gemm_spec(*cfg[:3], stages=stages, w_scale="tensor", pdl=pdl, profile=EVENTS).compile().save(sub)


def run(d, which=None):
    import torch
    from nvtma import profile, runtime
    from nvtma.kernels import gemm
    from cuda.bindings import driver as drv
    import common
    dev, stream, gen = common.gpu(torch)
    for N, K, M, cfg, pdl, stages, carve in _problems(which):
        BM, BN, wgs, splits = cfg
        wbufs = common.copies((torch.randn(N, K, generator=gen, device=dev) / 4).to(torch.float8_e4m3fn), CALLS)
        nbufs = len(wbufs)
        x = torch.randn(M, K, generator=gen, device=dev).to(torch.float8_e4m3fn)
        sw, sx = torch.tensor([0.02], device=dev), torch.ones(M, device=dev)
        y = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
        tiles = -(-N // BN)
        ws, cnt = torch.zeros(tiles, BN * BM, device=dev), torch.zeros(tiles, device=dev, dtype=torch.int32)
        parts, grid = gemm.parts_for(splits, N, K, BN)
        mod = runtime.load(Path(d) / _name(N, K, cfg, pdl, stages))
        func = mod.gemm._function()
        drv.cuKernelSetAttribute(drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                 -1 if carve is None else carve, drv.CUkernel(func), drv.CUdevice(0))
        names = profile.event_table(mod, "gemm")
        bufs = [profile.alloc_buffer(grid, (128 * (wgs + 1),), names.events_per_warp) for _ in range(CALLS)]
        rounds = []
        for r in range(4):  # each round: a new rotation offset, so W comes from DRAM
            off = r * CALLS

            def calls():
                for c in range(CALLS):
                    mod.gemm(wbufs[(off + c) % nbufs], x, y, ws, cnt, parts, sw, sx, bufs[c], grid=grid)
            with torch.cuda.stream(stream):
                calls()
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                calls()
            graph.replay()  # warm
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            with torch.cuda.stream(stream):
                e0.record()
                graph.replay()
                e1.record()
            e1.synchronize()
            rounds.append((e0.elapsed_time(e1) * 1e3 / CALLS, [profile.collect(b, names) for b in bufs]))
        us, profs = min(rounds, key=lambda t: t[0])
        origin = min(e.start_ns for e in profs[0].events)
        rows = []
        for c, p in enumerate(profs):
            ev = p.events
            cons = [e for e in ev if e.role == "consumer"]
            first_wait, first_full = {}, {}
            for e in cons:
                if e.name == "wait" and e.start_ns < first_wait.get(e.cta, 1 << 62):
                    first_wait[e.cta], first_full[e.cta] = e.start_ns, e.end_ns
            loads = [e.end_ns for e in ev if e.role == "producer" and e.name == "load"]
            pre = [e for e in ev if e.role == "producer" and e.name == "prefetch"]
            gw = [e.end_ns for e in ev if e.role == "producer" and e.name == "grid_wait"]
            epi = [e.end_ns for e in cons if e.name == "epilogue"]
            rows.append(dict(call=c, start=(min(e.start_ns for e in ev) - origin) / 1e3,
                             first_wait_median=(statistics.median(first_wait.values()) - origin) / 1e3,
                             first_wait_max=(max(first_wait.values()) - origin) / 1e3,
                             first_full_median=(statistics.median(first_full.values()) - origin) / 1e3,
                             last_load=((max(loads) - origin) / 1e3) if loads else None,
                             end=(max(epi) - origin) / 1e3, ctas=len({e.cta for e in ev}),
                             prefetch_first=((min(e.start_ns for e in pre) - origin) / 1e3) if pre else None,
                             prefetch_done_median=((statistics.median(e.end_ns for e in pre) - origin) / 1e3)
                             if pre else None,
                             grid_wait_median=((statistics.median(gw) - origin) / 1e3) if gw else None,
                             dropped=p.dropped, shares=_shares(ev)))
        print(json.dumps(dict(bench="gemm-chain", N=N, K=K, M=M, config=list(cfg), pdl=pdl, stages=stages,
                              carveout=carve,
                              us_per_call=round(us, 2),
                              calls=[{k: (round(v, 2) if isinstance(v, float) else v) for k, v in row.items()}
                                     for row in rows])), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](*sys.argv[2:4])
