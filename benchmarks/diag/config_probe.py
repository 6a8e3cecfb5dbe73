#!/usr/bin/env python3
"""Experiment: listed configs of a few problems, each in every one of
VARIANTS (spec options; W from DRAM, rotating over >= 256 MiB of copies, or
resident in L2: one copy, no evict_first hint), in CUDA graphs of 20 calls
(common.graph_ms); `occupancy` prints the driver's active-cluster count
of each cluster config. Runs (PROBES/VARIANTS as each ran are in git
history), fourth session: BN = 128 against 64 at M >= 64 and the L2 floor
(s10-*-bn), one accumulator chain against gemm.default_chains (-1, -2),
what the split-K epilogue costs (gemm_spec diag, -3), and three kernel
variants built, measured and removed: K split over a cluster (-kc, commit
00b6238), W tiles narrower than 64 rows (-narrow, b098d18), wgmma groups
in flight (-lag, 7a3a320). Fifth: the M split (s11-*-ms), K-interleaved
warpgroups (-kwg), the M split at small M (-small-ms). Sixth (s12-*): three
and four consumer warpgroups, BN = 192 / 256 (-wgs); the share's next W
tiles prefetched into L2 before the wait (-l2prefetch, -start-l2prefetch,
-l2prefetch-x-early; cpasync.prefetch, built, measured, removed); x
multicast over 4 CTAs, the M split over 4, and the per-call floor
(-mc4-ms4-floor); the wait for the earlier kernels (gemm_spec diag x_early,
no_wait: -wait), without PDL and with W in L2 (-floor), launch_dependents
by every thread at the start (-pdl-start). Seventh (s13-*): bf16 x
quantized in the GEMM (Gemm quantize="fused") against quantize_x then the
GEMM and against e4m3 x (-fused-probe-1: all three quantizing warps on each
stage; -2: each warp every third stage). Eighth (s14-*): the final fused
protocol, and fused at wider tiles and more splits (-fused-probe-2; -1: the
elected-lane arrivals racecheck flagged). Ninth (s15-*): W's L2 promotion at
the table's configs, and W tiles of 128-256 rows at M = 128 (-l2w); W's
cache hint (-whint); cuBLASLt's M = 128 layout (-wide-ms). Tenth (s16-*): 2112 x 7168's split
configs against the epilogue tile's old place and a split's wait for an
earlier store left out (-split). Eleventh (s17-*): what the split epilogue
still costs, its partials added from the registers (-split-cost-v2: at an
intermediate version, y transposed and v2 reductions); the versions
themselves are compared by diag/ab_probe.py. Twelfth (s18-*): configs with
no K split with and without the split path in the kernel (-whole-k).
Thirteenth (s19-*): two producer warps taking alternate stages (-producers,
the diag variant removed after). Twenty-sixth (s31-*): block-scaled and fused
promotion with the scale factors read during the wgmmas (-promote; the kernel
change not kept).
Twenty-seventh (s32-*): what block scales' promotion factors cost (-promote-bound), and block-scaled W
with x as the wgmmas' A (-xa-block-1..6). Twenty-eighth (s33-*): x as A over CTA pairs sharing W (-xa-ms-*).
Twenty-ninth (s34-*): a CTA's intake halved at the same CTA count (-ingress, -ingress-small), x as A with K split
over a cluster (-ksplit-all, -ksplit-rows: the kernel's sum in earlier forms; -ksplit) and without its sum (-nosum).
Thirtieth (s35-*): W as A with the K split over a cluster, its bound first (-wbound: WBOUND) and as built beside the
table's config, with and without its sum (-dsmem: PROBES). Thirty-first (s36-*): what in a grid of CTA pairs costs
(-pairs-a/-b), and the clusters' late waits against the barriers before (-late: PROBES). Thirty-second (s37-*): x in a
ring of its own beside W's (gemm_spec xstages, built at 8af4d42 and removed; -xring-1/-2: x's ring of 3 or 6 slots,
W's the deepest beside it; -3/-4: x's 1, 2 or 4 slots deeper than the one ring's), and W tiles of 192-256 rows over
3-4 consumer warpgroups, at the misses of M = 32-128.
    python3 benchmarks/diag/config_probe.py build DIR    # here
    python3 benchmarks/diag/config_probe.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (N, K, M, mode, [(BM, BN, wgs, splits[, mc, stages[, ms]]) or None: the config Gemm picks]): configs with
# no K split (each CTA whole tiles), as built (with the split path they never take) and with no split path at
# all (gemm_spec diag "whole_k_only"), each twice, interleaved. Twelfth session (s18-config-probe-whole-k):
# whole_k_only / as built, geometric mean 1.005 over 101 problems (7 >2% faster, 18 >2% slower, 4096 x 7168
# 5% slower at the median): carrying the split path costs nothing on the whole; single configs move by up to
# +-8% with how ptxas compiles the consumers' K loop (e.g. their ring state in uniform registers or not).
S = None  # the default ring
SHAPES = [(4096, 7168), (7168, 2048), (2112, 7168), (24576, 1536), (16384, 16384)]
MODES = ("tensor", "row", "block", "bf16")


# Thirteenth session (s19-config-probe-producers): every benchmark problem at M <= 128, per-tensor fp8 and bf16,
# at the table's config, with one producer warp (as built) and two taking alternate stages (gemm_spec diag
# "two_producers", ccfbda8, removed), each twice, interleaved: whether the producer's per-stage instructions
# limit the 64-CTA configs (a few more of them, with x's half boxes, cost 4096 x 7168 20%, the consumers'
# SASS the same). two / one: geometric mean 0.996, 0.953-1.027; not what limits them. Then (s19-config-probe-
# half-param): the kernels half boxes slowed, as built, with x's half-box descriptor as one more parameter and
# nothing else of them (diag "half_unused", 03faed9, removed), and with the half boxes (xhalf=True): the
# parameter costs nothing (within 1%), the half boxes' code 5-31% at K = 7168 (1% at the two others).
# Twenty-sixth session (s31-promote): block-scaled W and bf16 x quantized in the GEMM ("fused": their K loops
# promote each stage's partial) at the table's config, per-tensor beside them. Built in the working tree and
# removed, not committed: each stage's scale factors (sx · sw, per x row a thread holds) read from the slot and
# multiplied while its wgmmas ran and the slot released as soon as they retired ("now"), against the kernels as
# they are (then gemm_spec diag "promote_after": factors after the wgmmas, release after the promotion), each
# twice, interleaved. Block: slower at 32 of 35 points, by more than 1% at 27, up to 15% (ptxas put the loads and
# multiplies between the stage's wgmmas, and the K loop held 32 more registers); fused: within 1.3%. The run's
# VARIANTS were now / after / now-again / after-again; "after" is the kernel now (both lists in git history).
# Twenty-seventh session (s32-promote-bound, its lists in git history): block-scaled W at the table's config, as
# built and with the promotion's factor W's block scale alone (gemm_spec diag "promote_w_only": no x-scale load or
# multiply, y wrong) or x's scale alone ("promote_sx_only": no multiply), per-tensor beside them: what a stage's
# factors precomputed off the consumers' path could save at most (M = 128: 12-16%). Then (s32-xa-block-*): at
# each problem per-tensor and block-scaled W at the table's config and block-scaled at every x-as-A candidate
# (swap=False: its promotion two factors a thread a K step), two runs in one call each: -1/-2 the factors read
# after the wgmmas; -3/-4 with W's block scales loaded a stage ahead (built and removed: no change) and the
# factors also read before the wgmmas (a diag, its slot still released after the promotion: "early" lines);
# -5/-6 the kernels as built (two warpgroups: the factors before the wgmmas, the slot released when they retire)
# and with diag "factors_after" ("after" lines: the factors after the wgmmas, the slot released after the
# promotion). The candidates then included M <= 32, since left out (never faster than the table's config):
SHAPE_MS = [(N, K, M) for N, K in SHAPES for M in (1, 8, 16, 32, 64, 128)]


def _block(M, N, K, xa_only):
    """The table's config (None), then block scaling's candidates (x-as-A ones only, or all)."""
    from nvtma.kernels import gemm
    return [None] + [c for c in gemm.candidates(M, N, K, scale="block") if not (xa_only and c.swap)]


# Then (s32-block-near-1/-2): the block-scaled points within 3% of the bound in the final runs, every candidate
# (the table's first) with the scale storage padded, per-tensor's table config beside them: the table's config was
# the fastest or within 1% of it at all four (7168 x 2048, M = 1: 4.87-5.04 us against a bound of 4.88), no change
NEAR = [(7168, 2048, 1), (7168, 2048, 8), (2112, 7168, 16), (2112, 7168, 32)]


# Twenty-eighth session (s33-xa-ms-*): x as the wgmmas' A over CTA pairs sharing W by multicast (the M split, ms = 2,
# each CTA its half of M in one warpgroup) at M = 128 (and 96), every such candidate beside the table's config, per
# tensor, row- and block-scaled (per tensor's table config the block-scaled bound's)


# the candidates a probe set takes beside the table's config: x as A over CTA pairs (ms = 2), any x as A, x as A
# with K split over a cluster
XA_SETS = {"pairs": lambda c: not c.swap and c.ms == 2, "xa-any": lambda c: not c.swap,
           "ksplit": lambda c: not c.swap and c.splits > 1, "dsmem": lambda c: c.dsmem,
           "clusters": lambda c: max(c.mc, c.ms, c.ksplit) > 1}


def _table_and(M, N, K, mode, keep):
    """The table's config (None), then the problem's candidates that `keep` keeps."""
    from nvtma.kernels import gemm
    fp8 = mode != "bf16"
    return [None] + [c for c in gemm.candidates(M, N, K, gemm.F8 if fp8 else "bf16", scale=mode if fp8 else None)
                     if keep(c)]


PAIRS = [(N, K, M, mode, "pairs") for M in (128, 96) for N, K in SHAPES for mode in ("tensor", "row", "block")
         if M == 128 or N == 4096]
# Then (s33-xa-ms-kc1-*): per tensor and row-scaled pairs at a K step a stage (deeper rings; candidates() offers x as
# A per token at 2-8 K steps a stage only), beside the table's config
KC1 = [(N, K, 128, mode, [None] + [(64, BN, 1, 1, 1, st, 2, False, 1, False) for BN, st in cfgs])
       for N, K, cfgs in ((16384, 16384, ((256, 5), (128, 9), (128, 6))), (4096, 7168, ((64, 14), (64, 8))),
                          (24576, 1536, ((128, 9), (192, 7))), (7168, 2048, ((112, 10), (64, 14))))
       for mode in ("tensor", "row")]
# Then (s33-xa-ms-256-*): the pairs past M = 128 (each CTA its half of M over two warpgroups) at M = 256 and 200,
# block-scaled and per tensor, beside the table's config
PAIRS256 = [(N, K, M, mode, "pairs") for M in (256, 200) for N, K in SHAPES for mode in ("tensor", "block")
            if M == 256 or N == 4096]


# Twenty-ninth session (s34-ingress-*): does a CTA's intake from L2 (its W tile plus its x rows, every K step) bound
# x as A at M = 32-128? Each problem's table config and x-as-A candidates, beside the same W bytes as a problem of
# twice the rows and half the K (each CTA's intake halved at the same CTA count, as a K split over a 2-CTA cluster
# would give, less its partials' sum): per tensor


INGRESS = [(N, K, M) for (N, K), Ms in (((2112, 7168), (32, 64, 128)), ((4096, 7168), (32, 64, 128)),
                                       ((7168, 2048), (64, 128)), ((24576, 1536), (128,))) for M in Ms]
INGRESS_SMALL = [(N, K, M) for N, K in SHAPES[:4] for M in (1, 8, 16)]
INGRESS_PROBES = [(n, k, M, "tensor", "xa-any") for N, K, M in INGRESS + INGRESS_SMALL
                  for n, k in ((N, K), (2 * N, K // 2))]
# Then (s34-ksplit-*): x as A with each W tile's K steps split over a 2-CTA cluster (Config splits 2, swap False: the
# first CTA's partial stored into the second's shared memory), every such candidate beside the table's config


KSPLIT = [(N, K, M, mode, "ksplit") for N, K in SHAPES[:3] for M in (1, 8, 16, 32, 64, 128)
          for mode in ("tensor", "row", "bf16", "block") if mode != "bf16" or M <= 64]
# Then (s34-nosum-*): the K split's configs at M = 1-16 as built and without the partials' sum (gemm_spec diag
# "no_sum": each CTA stores y from its own, y wrong): what the sum costs, apart from the clusters' K split
NOSUM = [(N, K, M, "tensor", "ksplit") for N, K in SHAPES[:3] for M in (1, 8, 16)]
# Then (s34-late-*): the K split with its CTAs' start no longer waiting for each other (a cluster barrier's arrival
# at the start, its wait before the consumers' loop), at M = 1-32 (per tensor, row-scaled, bf16)
LATE = [(N, K, M, mode, "ksplit") for N, K in ((2112, 7168), (4096, 7168)) for M in (1, 8, 16, 32)
        for mode in ("tensor", "row", "bf16")]
# Thirtieth session (s35-wbound-*): would W as A with each tile's K split over a 2- or 4-CTA cluster help at M = 1-32?
# The same W bytes as a problem of twice (four times) the rows and half (a quarter) the K, W as A at 64-row tiles:
# each CTA the intake a K split would give it, at the CTA count it would have, with no partials to sum
WBOUND_CFGS = ((2, 12), (2, 8), (4, 6), (4, 4))


def _wbound(M, mode):
    """The table's config, then W as A at 64-row tiles: each kc with its listed ring, or the deepest that fits."""
    from nvtma.kernels import gemm
    BM = max(8, -(-M // 8) * 8)
    wd = "bf16" if mode == "bf16" else gemm.F8
    return [None] + sorted({(BM, 64, 1, 1, 1, min(st, gemm.deepest_stages(BM, 64, wd, kc=kc)), 1, False, kc)
                            for kc, st in WBOUND_CFGS})


WBOUND = [(n, k, M, mode, _wbound(M, mode)) for N, K, splits in ((2112, 7168, (1, 2, 4)), (4096, 7168, (1, 2)))
          for s in splits for n, k in ((N * s, K // s),) for M in (1, 8, 16, 32) for mode in ("tensor", "bf16")
          if mode == "tensor" or M in (1, 16)]
# Then (s35-dsmem-*): W as A with the K split over a cluster as built (gemm.dsmem_candidates) beside the table's config,
# and at M = 1-16 per tensor without the sum (diag "no_sum", y wrong)
DSMEM = [(N, K, M, mode, "dsmem") for N, K in ((2112, 7168), (4096, 7168)) for M in (1, 8, 16, 32, 64)
          for mode in ("tensor", "row", "bf16", "block")]
# Then (s35-pdl-*): is it programmatic dependent launch that makes the pairs cost at 4096 x 7168 (128 CTAs in pairs:
# each waits for both SMs of a TPC to leave the call before) and not at 2112 x 7168 (66)? The split and its bound
# (the same W bytes as twice the rows, half the K, unsplit), with and without PDL
PDL_PROBES = [(n, k, M, "tensor", [None, cfg]) for N, K in ((2112, 7168), (4096, 7168)) for M in (1, 8)
              for n, k, cfg in ((N, K, (8, 64, 1, 2, 1, 8, 1, False, 2, True, True)),
                                (2 * N, K // 2, (8, 64, 1, 1, 1, 8, 1, False, 2)))] + [
    # and 2112 x 7168's 4-CTA clusters, 132 CTAs like 4096 x 7168's pairs' 128, beside their bound
    (n, k, M, "tensor", [cfg]) for M in (1, 8) for n, k, cfg in (
        (2112, 7168, (8, 64, 1, 4, 1, 8, 1, False, 2, True, True)), (8448, 1792, (8, 64, 1, 1, 1, 8, 1, False, 2)))]
# Thirty-first session (s36-pairs-a/-b): what in a grid of CTA pairs costs? The split pair and its bound as above (per
# tensor, M = 1 and 8), and the table's configs at M = 64-128 where x multicast over pairs (mc = 2) lost: the split
# without its sum, also without the cluster barriers at the start and end, with its senders waiting for their last
# partial's read instead of the end's barrier, and with the start's wait late too; the unclustered configs launched
# as CTA pairs with nothing shared, with both barriers, with none, with the start's or the end's (the diagnostics
# built for it: git history, de69ad4). Then (s36-late-*): the kernels as changed (each thread's wait late, no
# barrier at the end) against them as before (diag "barriers"), every cluster candidate, per tensor, M <= 128
PAIR_AB = [(N, K, M, "tensor", "clusters") for N, K in SHAPES for M in (1, 8, 16, 32, 64, 128)]
PROBES = PAIR_AB
NO_SUM = ("no_sum", {"diag": "no_sum"}, False)
# (label, spec options (a "quantize" entry: bf16 x, quantized as Gemm's quantize says), W resident in L2)
VARIANTS = [("now", {}, False)]
if PROBES is PDL_PROBES:
    VARIANTS.append(("no_pdl", {"pdl": False}, False))
BARRIERS = ("barriers", {"diag": "barriers"}, False)


def _variants(c, M, mode):
    """The variants a config (a gemm.Config) runs in."""
    if PROBES is PAIR_AB:
        return VARIANTS + ([BARRIERS] if max(c.mc, c.ms, c.ksplit) > 1 else [])
    xa_block = not c.swap and c.wgs > 1 and mode == "block"
    no_sum = c.ksplit > 1 and (PROBES is NOSUM or PROBES is DSMEM and mode == "tensor" and M <= 16)
    return VARIANTS + ([AFTER] if xa_block else []) + ([NO_SUM] if no_sum else [])


AFTER = ("after", {"diag": "factors_after"}, False)  # x as A, block-scaled: its factors after the wgmmas


def _plans(d=None):
    import common
    from nvtma.kernels import gemm
    gs = {}
    for N, K, M, mode, cfgs in PROBES:
        cfgs = (_block(M, N, K, cfgs == "xa") if cfgs in ("xa", "all") else
                _table_and(M, N, K, mode, XA_SETS[cfgs]) if isinstance(cfgs, str) else cfgs)
        fp8 = mode != "bf16"
        fused = mode == "fused"  # per-tensor W, bf16 x quantized in the GEMM
        mode = "tensor" if fused else mode
        for cfg in cfgs:
            cfg = cfg or (gemm.fused_config(gemm.choose_config(M, N, K), N, K) if fused else
                          gemm.choose_config(M, N, K, gemm.F8 if fp8 else "bf16", scale=mode if fp8 else None))
            for label, opts, l2 in _variants(gemm.Config(*cfg), M, mode):
                if str(opts.get("diag")).startswith("promote_") and mode != "block":
                    continue  # the promotion's diagnostics change nothing without block scales
                opts = dict(opts, **({"quantize": "fused"} if fused else {}))
                how = opts.pop("quantize", None)
                g = gs.setdefault(how, gemm.Gemm(artifacts=d, quantize=how or "auto"))
                sp, _, q = common.gemm_plan(g, M, N, K, gemm.F8 if fp8 else "bf16", mode if fp8 else None,
                                            config=cfg, quantize=bool(how), **opts)
                yield (g, (N, K, M, mode), tuple(cfg), "fused-" + label if fused else label, dict(opts, quantize=how),
                       l2, [sp] + ([q] if q else []))


def build(d):
    import common
    common.save_new(d, [sp for p in _plans() for sp in p[-1]])


def run(d):
    import torch
    import common
    dev, stream, gen = common.gpu(torch)
    prob_data = {}
    for g, prob, cfg, label, opts, l2, sp in _plans(d):
        N, K, M, mode = prob
        fp8 = mode != "bf16"
        if prob not in prob_data:
            prob_data.clear()
            w, x, sw, sx, want = common.gemm_problem(torch, gen, N, K, M, fp8, mode)
            prob_data[prob] = (w, x, sw, sx, want, common.copies(w))
        w, x, sw, sx, want, wbufs = prob_data[prob]
        how = opts.pop("quantize", None)
        kw = dict(w_scale=sw, scale=mode, x_scale=sx) if fp8 else {}
        if how:  # bf16 x: x's e4m3 values, scaled (what y's reference multiplies)
            x = (x.float() * (sx[:, None] if mode != "block" else sx[:, :1])).bfloat16()
            kw.pop("x_scale")
        try:
            y = common.gemm_call(g, x, w, config=cfg, **opts, **kw)
            torch.cuda.synchronize()
            err = ((y.float() - want).abs().max() / want.abs().max()).item()

            def call(i):
                return common.gemm_call(g, x, wbufs[i], config=cfg, **opts, **kw)
            ms = common.graph_ms(torch, stream, call, 1 if l2 else len(wbufs))
            out = dict(us=round(ms * 1e3, 2), W_TBps=round(N * K * (1 if fp8 else 2) / ms / 1e9, 3),
                       err=float(f"{err:.2e}"), stages=sp[0].info["stages"], chains=sp[0].info["chains"])
        except Exception as e:  # noqa: BLE001 (a config that does not launch is a result too)
            out = dict(error=f"{type(e).__name__}: {e}"[:200])
        print(json.dumps(dict(bench="gemm-config-probe", N=N, K=K, M=M, mode=mode, config=list(cfg), w=label,
                              **out)), flush=True)


def occupancy(d):
    """For each cluster config: the driver's cuOccupancyMaxActiveClusters at
    its launch (grid, block, shared memory, cluster), after one call."""
    import torch
    import common
    from cuda.bindings import driver as cu
    from nvtma.kernels import gemm
    dev, stream, gen = common.gpu(torch)
    for g, prob, cfg, label, opts, l2, sp in _plans(d):
        c = gemm.Config(*cfg)
        cl = max(c.mc, c.ms, c.ksplit)
        if label not in ("full", "now") or cl == 1:
            continue
        N, K, M, mode = prob
        fp8 = mode != "bf16"
        w, x, sw, sx, want = common.gemm_problem(torch, gen, N, K, M, fp8)
        g(x, w, config=cfg, **(dict(w_scale=sw, scale=mode, x_scale=sx) if fp8 else {}))
        torch.cuda.synchronize()
        k = g.module(sp[0]).gemm
        rec = k.artifacts.records["kernels"]["gemm"]["launch"] if hasattr(k.artifacts, "records") else {}
        lc = cu.CUlaunchConfig()
        parts, grid = gemm.parts_for(c.grid_splits, N, K, c.BN, gemm.F8 if fp8 else "bf16", 132, c.mc, c.ms, c.kc,
                                     c.ksplit)
        lc.gridDimX, lc.gridDimY, lc.gridDimZ = grid[0], 1, 1
        lc.blockDimX, lc.blockDimY, lc.blockDimZ = 128 * (c.wgs + 1), 1, 1
        lc.sharedMemBytes = k.rec_smem
        a = cu.CUlaunchAttribute()
        a.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = cl, 1, 1
        lc.attrs, lc.numAttrs = [a], 1
        err, n = cu.cuOccupancyMaxActiveClusters(cu.CUfunction(k._function()), lc)
        err2, blocks = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(cu.CUfunction(k._function()),
                                                                      lc.blockDimX, k.rec_smem)
        print(json.dumps(dict(bench="gemm-cluster-occupancy", N=N, K=K, M=M, mode=mode, config=list(cfg),
                              grid=grid[0], smem=k.rec_smem, max_active_clusters=int(n), err=int(err),
                              blocks_per_sm=int(blocks), rec=rec)), flush=True)


def floor(d):
    """GPU time per call of one-element torch kernels (a fill) in the same CUDA graphs: the floor
    of any kernel here, with no programmatic dependent launch."""
    import torch
    import common
    dev, stream, gen = common.gpu(torch)
    t = torch.zeros(1, device=dev)
    ms = common.graph_ms(torch, stream, lambda i: t.fill_(i), 1)
    print(json.dumps(dict(bench="kernel-floor", kernel="torch fill_ of one element", us=round(ms * 1e3, 2))))


if __name__ == "__main__":
    {"build": build, "run": run, "occupancy": occupancy, "floor": floor}[sys.argv[1]](sys.argv[2])
