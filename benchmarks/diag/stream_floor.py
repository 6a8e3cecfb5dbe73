#!/usr/bin/env python3
"""Experiment: the floor a GEMM call has in issue #13's benchmark: the time
the GEMM kernel takes to stream W and do nothing else (gemm_spec diag
"stream_only": W through the ring, each stage waited for and released by
the consumers; no x, no wgmmas, no epilogue), with the waits for the
earlier kernels a GEMM needs (x and y may be theirs) and without any
("stream_no_wait"), in the same CUDA graphs of 20 calls, W rotating over
>= 256 MiB of copies, as the GEMM itself and the baseline (torch._scaled_mm
per-tensor for e4m3 W, torch.matmul for bf16), all in one process.

Per problem (shape, M, W dtype) at the table's config: the GEMM, its
stream-only kernel with and without the waits, the baseline and the
target's time (issue #13: W bytes / min(1.5x the baseline's TB/s, 4.2) for
e4m3, min(1.3x, 4.3) for bf16 at M <= 64). Per shape and W dtype: the
stream-only kernel at every config ``gemm.candidates`` lists for M = 1
(tiles of 64-256 W rows, K splits, stream K, rings deep enough for two
CTAs an SM): the fastest any of these kernels streams W.
    python3 benchmarks/diag/stream_floor.py build DIR    # here
    python3 benchmarks/diag/stream_floor.py run DIR      # on the GPU
    python3 benchmarks/diag/stream_floor.py build-split DIR / run-split DIR   # SPLIT_PROBES, RELEASE_PROBES
    python3 benchmarks/diag/stream_floor.py build-two DIR / run-two DIR       # TWO_PROBES
    python3 benchmarks/diag/stream_floor.py build-deep DIR / run-deep DIR     # DEEP_PROBES
    python3 benchmarks/diag/stream_floor.py build-kc DIR / run-kc DIR         # stages of several K steps
    python3 benchmarks/diag/stream_floor.py build-kc8 DIR / run-kc8 DIR       # kc 1-8 at the near misses
    python3 benchmarks/diag/stream_floor.py build-parts DIR / run-parts DIR   # no epilogue, no wgmmas
    python3 benchmarks/diag/stream_floor.py build-xring DIR / run-xring DIR   # x as A at rings of 3-16 stages
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

SHAPES = [(4096, 7168), (7168, 2048), (2112, 7168), (24576, 1536), (16384, 16384)]
MS = (1, 8, 16, 32, 64, 128)
WTYPES = ("e4m3", "bf16")
STREAM = ("stream_only", "stream_no_wait")
# `split`: split-K configs, each as built and in the diagnostics that take the split epilogue apart
# (gemm_spec diag): no gather of the sum (y not written), no workspace reductions, no split epilogue at all,
# the stream alone. Fifteenth session (s21-split-probe-1..4), at 94b5f2b also "split_one_fence" (the counting
# thread alone fencing, before its count and after it: the same time within 0.1 us) and, for RELEASE_PROBES,
# "release_at_once" (each stage's slot released once its wgmmas are done, not after the next stage's wait:
# slower at 13 of 15 configs, up to 30%), both removed
SPLIT_VARIANTS = (None, "split_no_gather", "no_red", "no_split_epilogue", "stream_only")
# and configs of the table with a deep ring, as built and streaming only
GEMM_AND_STREAM = (None, "stream_only")
SPLIT_PROBES = [(N, K, M, cfg, SPLIT_VARIANTS) for N, K, M, cfg in (
    (2112, 7168, 1, (8, 128, 1, 7)), (4096, 7168, 1, (8, 128, 1, 4)), (4096, 7168, 1, (8, 64, 1, 2)),
    (4096, 7168, 1, (8, 256, 2, 8)), (7168, 2048, 1, (8, 128, 1, 2)), (7168, 2048, 1, (8, 256, 2, 4)),
    (4096, 7168, 64, (64, 64, 1, 2)), (2112, 7168, 64, (64, 64, 1, 0)), (24576, 1536, 16, (16, 192, 1, 2)))]
RELEASE_PROBES = [(N, K, M, cfg, GEMM_AND_STREAM) for N, K, M, cfg in (
    (4096, 7168, 1, (8, 64, 1, 1, 1, 16)), (4096, 7168, 16, (16, 64, 1, 1, 1, 16)),
    (4096, 7168, 32, (32, 64, 1, 1, 1, 16)), (4096, 7168, 64, (64, 64, 1, 1, 1, 12)),
    (7168, 2048, 1, (8, 64, 1, 1, 1, 11)), (7168, 2048, 1, (8, 64, 1, 1, 1, 16)), (7168, 2048, 16, (16, 64, 1, 1)),
    (7168, 2048, 64, (64, 64, 1, 1)), (2112, 7168, 1, (8, 128, 1, 7)), (2112, 7168, 32, (32, 64, 1, 0, 1, 16)),
    (24576, 1536, 1, (8, 192, 1, 1)), (24576, 1536, 16, (16, 192, 1, 1)), (24576, 1536, 64, (64, 192, 1, 1)),
    (24576, 1536, 128, (128, 64, 1, 1)), (16384, 16384, 1, (8, 128, 1, 1, 1, 12)))]


def _problems():
    """(N, K, W's name, W's dtype, W's scaling, [(M, config, [(label, spec options)])], [(config, [(label, spec
    options)])]) per shape and W dtype: the problems at the table's configs, then the stream-only floor's configs."""
    from nvtma.kernels import gemm
    for N, K in SHAPES:
        for wt in WTYPES:
            wd = gemm.F8 if wt == "e4m3" else "bf16"
            scale = "tensor" if wt == "e4m3" else None
            # (gemm_spec builds the streaming diagnostics only where no cluster splits a tile's K steps)
            probs = [(M, c, [("gemm", {})] + [(v, {"diag": v}) for v in STREAM if c.ksplit == 1])
                     for M, c in ((M, gemm.choose_config(M, N, K, wd, scale=scale)) for M in MS)]
            floor = [(c, [(v, {"diag": v}) for v in STREAM]) for c in gemm.candidates(1, N, K, wd)
                     if not c.kwg and c.ksplit == 1]
            yield N, K, wt, wd, scale, probs, floor


# `two`: split configs of the table (one CTA an SM: the next call's CTAs start only as this call's leave)
# beside the same tiles and splits with the deepest ring that lets two CTAs share an SM
# (gemm.two_per_sm_stages: the next call's W prefetch overlaps this call's split epilogue). Fifteenth session
# (s21-two-per-sm-1..3): every such config slower than the table's, by 0.4-1.6 us
TWO_PROBES = [(N, K, M, cfg, GEMM_AND_STREAM) for N, K, M, cfg in (
    (2112, 7168, 1, (8, 128, 1, 7)), (2112, 7168, 1, (8, 128, 1, 7, 1, 6)), (2112, 7168, 1, (8, 192, 1, 12, 1, 4)),
    (2112, 7168, 16, (16, 128, 1, 7)), (2112, 7168, 16, (16, 128, 1, 7, 1, 5)),
    (4096, 7168, 1, (8, 64, 1, 1, 1, 16)), (4096, 7168, 1, (8, 128, 1, 4, 1, 6)),
    (7168, 2048, 1, (8, 64, 1, 1, 1, 11)), (7168, 2048, 1, (8, 128, 1, 2, 1, 6)))]
# Sixteenth session (s22-flags-1..3), at 36e570a also `flags`: split-K and stream-K configs with the count's
# epilogue beside the partials passed with their flags (gemm_spec flags=: NCCL's LL protocol, the tile's
# last or first segment polling the others' rows): slower at every probed config but one, by 0.5-13 us where a
# tile's shares lie within it (one variant hung); and at de69e71 `rs` (s22-rs-1): the shares summing each tile
# among themselves (a reduce-scatter of the flagged partials), faster at two of three 2-split configs, slower at 4-8 by
# 0.6-4.6 us, with PDL off too (79ff4fb, s22-rs-pdl); both removed
# `deep`: unsplit configs whose CTAs (fewer than the SMs, or a few tiles each) stream through rings deeper than
# the 16 stages `gemm.candidates` stops at (up to `gemm.deepest_stages`: 24 at 8 x 64), as the GEMM and streaming
# only; seventeenth session. The stream-only kernel at 4096 x 7168 ran 8.82 us with 12 stages and 7.54 with 16
# (s21-stream-floor), on 64 of the 132 SMs: more bytes in flight per SM is what these CTAs lack
DEEP_PROBES = [(N, K, M, cfg, GEMM_AND_STREAM, wt) for N, K, M, wt, cfgs in (
    (4096, 7168, 1, "e4m3", [(8, 64, 1, 1, 1, s) for s in (16, 20, 24)]),
    (4096, 7168, 16, "e4m3", [(16, 64, 1, 1, 1, s) for s in (16, 22)]),
    (4096, 7168, 32, "e4m3", [(32, 64, 1, 1, 1, s) for s in (16, 18)]),
    (4096, 7168, 64, "e4m3", [(64, 64, 1, 1, 1, s) for s in (12, 13)]),
    (4096, 7168, 1, "bf16", [(8, 128, 1, 4)] + [(8, 64, 1, 1, 1, s) for s in (16, 20, 24)]),
    (4096, 7168, 32, "bf16", [(32, 64, 1, 2, 1, 16)] + [(32, 64, 1, 1, 1, s) for s in (16, 18)]),
    (7168, 2048, 1, "e4m3", [(8, 64, 1, 1, 1, s) for s in (11, 16)]),
    (7168, 2048, 1, "bf16", [(8, 64, 1, 1, 1, s) for s in (11, 16, 20, 24)]),
    (7168, 2048, 16, "bf16", [(16, 64, 1, 1, 1, s) for s in (10, 16, 22)]),
    (24576, 1536, 1, "e4m3", [(8, 192, 1, 1)] + [(8, 64, 1, 1, 1, s) for s in (16, 24)]),
    (24576, 1536, 1, "bf16", [(8, 64, 1, 1, 1, s) for s in (16, 24)]),
    (16384, 16384, 1, "e4m3", [(8, 128, 1, 1, 1, 12)] + [(8, 64, 1, 1, 1, s) for s in (16, 24)]),
    (2112, 7168, 1, "e4m3", [(8, 128, 1, 7)] + [(8, 64, 1, 4, 1, s) for s in (16, 24)]),
) for cfg in cfgs]
# `kc`: stages of kc K steps (gemm_spec's kc: each operand's stage one TMA box of kc K steps), at the same ring
# bytes as the config a K step a stage. Stream-only kernels of one K step a stage streamed faster with bigger
# boxes at the same CTAs and ring bytes (s21-stream-floor, 4096 x 7168, 128 CTAs, 192 KB rings: 8 KB boxes 8.42
# us, 16 KB 7.37, 24 KB 6.79, 32 KB 6.70), but a bigger box was a wider tile: fewer tiles, so split K
def _kc_probes():
    from nvtma.kernels import gemm
    out = []
    for N, K, M, wt, cfg, kcs in (
            (4096, 7168, 1, "e4m3", (8, 64, 1, 1, 1, 16), (1, 2, 4)),
            (4096, 7168, 16, "e4m3", (16, 64, 1, 1, 1, 16), (1, 2, 4)),
            (4096, 7168, 64, "e4m3", (64, 64, 1, 1, 1, 12), (1, 2, 4)),
            (4096, 7168, 1, "e4m3", (8, 128, 1, 4, 1, 12), (1, 2)),
            (4096, 7168, 1, "bf16", (8, 64, 1, 1, 1, 16), (1, 2, 4)),
            (4096, 7168, 1, "bf16", (8, 128, 1, 4), (1, 2)),
            (7168, 2048, 1, "e4m3", (8, 64, 1, 1, 1, 16), (1, 2, 4)),
            (7168, 2048, 16, "e4m3", (16, 64, 1, 1, 1, 16), (1, 2, 4)),
            (7168, 2048, 64, "e4m3", (64, 64, 1, 1, 1, 12), (1, 2, 4)),
            (7168, 2048, 1, "bf16", (8, 64, 1, 1, 1, 16), (1, 2, 4)),
            (7168, 2048, 32, "bf16", (32, 64, 1, 1, 1, 16), (1, 2, 4)),
            (2112, 7168, 1, "e4m3", (8, 128, 1, 7), (1, 2, 4)),
            (2112, 7168, 1, "bf16", (8, 64, 1, 0, 1, 16), (1, 2, 4)),
            (24576, 1536, 1, "e4m3", (8, 192, 1, 1), (1, 2)),
            (24576, 1536, 32, "e4m3", (32, 192, 1, 1), (1, 2)),
            (24576, 1536, 1, "bf16", (8, 64, 1, 1, 1, 16), (1, 2, 4)),
            (24576, 1536, 128, "e4m3", (128, 64, 1, 1), (1, 2)),
            (16384, 16384, 64, "e4m3", (64, 128, 1, 1), (1, 2))):
        c = gemm.Config(*cfg)
        c = c._replace(stages=c.stages or gemm.max_stages(c.BM, c.BN))
        out += [(N, K, M, gemm.with_kc(c, kc), GEMM_AND_STREAM, wt) for kc in kcs]  # the ring's K steps kept
    return out


# `kc8`: the near misses of the nineteenth session's final runs (s24-gemm-final-*) at the table's tile, with
# kc from 1 to 8, each with the ring's bytes of the table's config and with the deepest ring
def _kc8_probes():
    from nvtma.kernels import gemm
    out = []
    for N, K, M, wt, scale in ((4096, 7168, 1, "e4m3", "tensor"), (4096, 7168, 16, "e4m3", "tensor"),
                               (7168, 2048, 8, "e4m3", "tensor"), (7168, 2048, 16, "e4m3", "tensor"),
                               (2112, 7168, 16, "e4m3", "tensor"), (24576, 1536, 16, "e4m3", "tensor"),
                               (24576, 1536, 32, "e4m3", "tensor"), (4096, 7168, 1, "bf16", None),
                               (7168, 2048, 32, "bf16", None)):
        wd = gemm.F8 if wt == "e4m3" else "bf16"
        c = gemm.choose_config(M, N, K, wd, scale=scale)
        out += [(N, K, M, v, (None,), wt) for kc in (1, 2, 3, 4, 6, 8) for v in gemm.kc_variants(c, kc, wd)]
    return out


# `parts`: where the time beside W's stream goes at the misses of M = 16-128 (twentieth session): the table's
# config as built, with no epilogue (gemm_spec diag "no_epilogue": the wgmmas, y not written), with no wgmmas
# ("no_mma": W and x loaded, each tile's epilogue of zeros) and streaming W only
PARTS_VARIANTS = (None, "no_epilogue", "no_mma", "stream_only")


def _parts_probes():
    from nvtma.kernels import gemm
    out = []
    for N, K, wt, Ms in ((4096, 7168, "e4m3", (16, 32, 64, 128)), (7168, 2048, "e4m3", (16, 32, 64, 128)),
                         (2112, 7168, "e4m3", (32, 64, 128)), (24576, 1536, "e4m3", (32, 64, 128)),
                         (16384, 16384, "e4m3", (128,)), (4096, 7168, "bf16", (32, 64)),
                         (7168, 2048, "bf16", (64,))):
        wd = gemm.F8 if wt == "e4m3" else "bf16"
        out += [(N, K, M, gemm.choose_config(M, N, K, wd, scale="tensor" if wt == "e4m3" else None),
                 PARTS_VARIANTS, wt) for M in Ms]
    return out


# `xring`: x as the wgmmas' A at rings of 3-16 stages (kc 2 and 4) beside the table's config. Its wgmmas do not
# overlap its loads where a CTA's ring holds much of its W (16-row tiles, kc 2, 16 stages: 57% of K): x, their A,
# comes after the wait for the earlier kernels, and the compute of the stages already landed follows (twenty-third
# session). Does a shallower ring, less W before that wait, overlap more?
def _xring_probes():
    from nvtma.kernels import gemm
    out = []
    for N, K, wt, Ms in ((2112, 7168, "e4m3", (1, 16, 32)), (4096, 7168, "e4m3", (1, 16, 32)),
                         (7168, 2048, "e4m3", (16,)), (4096, 7168, "bf16", (1, 32))):
        wd = gemm.F8 if wt == "e4m3" else "bf16"
        scale = "tensor" if wt == "e4m3" else None
        for M in Ms:
            out.append((N, K, M, gemm.choose_config(M, N, K, wd, scale=scale), (None,), wt))
            one = [c for c in gemm.x_as_a_candidates(M, N, wd, scale=scale) if c.kc in (2, 4)]
            for c in (c for c in one if c.BN == max(v.BN for v in one)):  # one wave of tiles
                room = min(16, gemm.deepest_stages(c.BM, c.BN, wd, kc=c.kc, swap=False))
                out += [(N, K, M, c._replace(stages=st), (None, "no_mma"), wt)
                        for st in (3, 4, 6, 8, 12, 16) if st < room] + [(N, K, M, c._replace(stages=room),
                                                                      (None, "no_mma"), wt)]
    return out


# Twenty-third session (s28-xkwg-1/-2), at 37a3e68 also `xkwg`: x as the wgmmas' A with two consumer warpgroups on
# alternate stages (gemm_spec swap=False, kwg=True, warpgroup 1's accumulator added through shared memory) beside
# the one-warpgroup kernel (as built and "no_mma") and the table's config: 0.5-0.9 us faster than one warpgroup
# with 16-row W tiles (2112 x 7168, M <= 16), slower with 32-56, never faster than the table's config; removed

# Twenty-fourth session, each built on 129a832, measured and removed. gemm_spec diag "krot" (s29-krot-1/-2): each CTA
# took its segments' K steps rotated by its cluster's index (the CTAs at different K steps at once, not reading x's
# same lines together), beside the table's config at 19 problems of M = 16-128: faster only at 24576 x 1536, M = 64
# (0.2 us) and 16384 x 16384, M = 128 (0.5 us, 0.7%), within the runs' spread; 0.4-3 us slower where x is large (4096
# x 7168, M = 128: 13.96 against 11.03 us) and with x as A: the CTAs reading x's lines together is cheaper; removed

# gemm_spec diag "x_once" (s29-xonce-1/-2): configs of several tiles a CTA with x loaded for the first tile only (y
# wrong), beside the same config as built, at 13 problems of M = 16-128: x loaded again for each tile costs 0-0.5 us
# (24576 x 1536, M = 128, 128/64/1/1: 12.41-12.45 against 12.00-12.07), so a kernel holding x in shared memory would
# save little; not built, the diagnostic removed

# gemm_spec lag=True (s29-lag): block-scaled W with each K step's partial promoted while the next step's wgmmas run (a
# loop iteration a K step, three accumulator sets: the partial promoted, the one being written, the sum), beside the
# table's kernel (each partial promoted after its own wait_group 0) and the per-tensor kernel: correct
# (test_gpu_gemm.py 114 passed with it the default) but slower at 29 of 30 problems, up to 81%. ptxas (CUDA 13.0,
# nvJitLink) does not keep the overlap: the loop-carried partial is copied out of the wgmmas' fixed accumulator
# registers behind a wait_group 0 (SASS: WARPGROUP.DEPBAR.LE gsb0, 0x0 in every iteration), and a partial read in the
# iteration whose wgmmas wrote it (two K steps an iteration) has ptxas serialize every wgmma (C7514); removed

# Block-scaled W's scales loaded two stages ahead and carried through the K loop (s29-ahead-1/-2, beside diag
# "scales_at_stage", loaded at each stage as before, and the per-tensor kernel, all at the table's configs): correct
# (test_gpu_gemm.py 114 passed, memcheck/racecheck/synccheck clean over 33 block and stream/graph tests) but no
# faster: block within 10% of per-tensor at 17 of 30 points either way, 0.4-0.5 us slower at 24576 x 1536, M = 32-64;
# the scales' latency is not what block scaling costs at M = 1-8 (7168 x 2048: 5.0 against 4.4 us per tensor either
# way); removed

# gemm_spec xstages (s29-xown-1/-2): x (and its block scales) in a ring of its own of 3 or 4 slots, loaded by warp 1
# after the wait for the earlier kernels, and W's ring the rest of shared memory (up to 32 stages, loaded by warp 0
# with no wait), beside the table's config and the same config with one ring, at 33 problems of M = 16-128: correct
# (its GPU cases' y right; 3 of 7 failed only for a kernel the call had not staged) but slower at 30 of them, faster
# by 0.1-0.3 us only at 24576 x 1536, M = 64 (4 slots), and 4 slots faster than 3 (24576 x 1536, M = 128, 128/64/1/1:
# 12.6-12.7 us with one ring, 14.0-14.2 with 4 slots of x, 15.2 with 3): x's loads take long enough to need a ring as
# deep as W's; removed


# Twenty-fifth session (s30-xcp-1/-2), at 94e6ba4 also `xcp`: x's tiles by the producer warp's cp.asyncs (gemm_spec
# xload="cp_async": 16-byte chunks swizzled as TMA's 128B swizzle puts them, rows past x and K steps past K zero
# filled, each lane's cp.async.mbarrier.arrive.noinc on the stage's full barrier, the consumers' proxy fence before
# their wgmmas) beside TMA's, at the table's config of 59 problems (per-tensor e4m3 and bf16, M = 1-128). The idea:
# TMA loads issue in order from one queue an SM, so x's, issued after the wait for the earlier kernels, might wait
# behind W's prefetched loads. Correct (test_gpu_gemm.py 127 passed; memcheck, racecheck, synccheck clean over 16
# cp.async and stream/graph tests) but no faster at M <= 8 (0.17 us faster at best, within the runs' spread, up to
# 1.23 slower) and 1.0-2.5x slower from M = 16 on, where one warp issuing 8-32 cp.asyncs a stage cannot keep up:
# x's latency after the wait is not the TMA queue's; removed (the DSL keeps cp.async's zero fill and mbarrier arrival)

PROBE_SETS = {"split": lambda: SPLIT_PROBES + RELEASE_PROBES, "two": lambda: TWO_PROBES, "deep": lambda: DEEP_PROBES,
              "kc": _kc_probes, "kc8": _kc8_probes, "parts": _parts_probes, "xring": _xring_probes}


def _probed(probes):
    """_problems' tuples for a probe set's (N, K, M, config, variants[, W: "e4m3" (per-tensor scale, the
    default) or "bf16"]) ("split_no_gather" on the one-warpgroup path only)."""
    from nvtma.kernels import gemm
    for N, K, M, cfg, variants, *wt in probes:
        cfg, wt = gemm.Config(*cfg), (wt or ["e4m3"])[0]
        runs = [(v or "gemm", {"diag": v} if v else {}) for v in variants
                if cfg.wgs == 1 or not v or not v.startswith("split_")]
        fp8 = wt == "e4m3"
        yield N, K, wt, gemm.F8 if fp8 else "bf16", "tensor" if fp8 else None, [(M, cfg, runs)], []


def _specs(probes=None, skipped=None):
    """The specs a probe set runs (`skipped`: a list given gets the errors of the probes left out)."""
    import common
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    for N, K, wt, wd, scale, probs, floor in (_probed(PROBE_SETS[probes]()) if probes else _problems()):
        for M, cfg, variants in probs + [(1, c, v) for c, v in floor]:
            for _, opts in variants:
                try:
                    yield common.gemm_plan(g, M, N, K, wd, scale, config=cfg, **opts)[0]
                except ValueError as e:  # a probe the kernel no longer builds (its run records the same error)
                    print(f"not built: {N} x {K}, M = {M}, {tuple(cfg)} {opts}: {e}", file=sys.stderr)
                    if skipped is not None:
                        skipped.append(str(e))


def build(d, probes=None):
    import common
    common.save_new(d, list(_specs(probes)))


def target_us(wbytes, base_us, wt, M):
    """Issue #13's target as a time per call, or None (bf16 past M = 64)."""
    if wt == "bf16" and M > 64:
        return None
    factor, cap = (1.5, 4.2) if wt == "e4m3" else (1.3, 4.3)
    return wbytes / (min(factor * wbytes / base_us, cap * 1e6)) if base_us else None


def run(d, probes=None):
    import torch
    import common
    from nvtma.kernels import gemm
    dev, stream, gen = common.gpu(torch)
    g = gemm.Gemm(artifacts=d)

    def us(call, nbufs):
        return round(common.graph_ms(torch, stream, call, nbufs) * 1e3, 2)

    for N, K, wt, wd, scale, probs, floor in (_probed(PROBE_SETS[probes]()) if probes else _problems()):
        fp8 = wt == "e4m3"
        wbytes = N * K * (1 if fp8 else 2)
        w, _, sw, _, _ = common.gemm_problem(torch, gen, N, K, 1, fp8)
        wbufs = common.copies(w)
        wf = w.float() * (sw if fp8 else 1)
        for kind, M, cfg, variants in [("problem", *p) for p in probs] + [("floor", 1, *f) for f in floor]:
            _, x, _, sx, _ = common.gemm_problem(torch, gen, N, K, M, fp8)
            want = (x.float() * (sx[:, None] if fp8 else 1)) @ wf.t()
            kw = dict(w_scale=sw, scale=scale, x_scale=sx) if fp8 else {}
            line = dict(bench="stream-floor", kind=probes or kind, N=N, K=K, M=M,
                        w=wt, config=list(gemm.Config(*cfg).short), w_copies=len(wbufs))
            for label, opts in variants:
                def call(i, opts=opts):
                    return common.gemm_call(g, x, wbufs[i], config=cfg, **kw, **opts)
                try:
                    y = call(0)
                    torch.cuda.synchronize()
                    if label == "gemm":
                        line["err"] = float(f"{((y.float() - want).abs().max() / want.abs().max()).item():.2e}")
                    line[label] = us(call, len(wbufs))
                except Exception as e:  # noqa: BLE001 (a config that does not launch is a result too)
                    line[label + "_error"] = f"{type(e).__name__}: {e}"[:200]
            if "gemm" in line:
                try:
                    if fp8:
                        base = common.scaled_mm(torch, x, wbufs, sw)
                    else:
                        def base(i):
                            return torch.matmul(x, wbufs[i].t())
                    base(0)
                    line["base"] = us(base, len(wbufs))
                    t = target_us(wbytes, line["base"], wt, M)
                    if t:
                        line["target"] = round(t, 2)
                except Exception as e:  # noqa: BLE001
                    line["base_error"] = f"{type(e).__name__}: {e}"[:200]
            print(json.dumps(line), flush=True)
        wbufs.clear()
        torch.cuda.empty_cache()


if __name__ == "__main__":
    cmd, d = sys.argv[1:3]
    cmd, _, probes = cmd.partition("-")
    {"build": build, "run": run}[cmd](d, probes or None)
