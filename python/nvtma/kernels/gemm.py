"""Weight-streaming GEMM for small M: y[M, N] = x[M, K] · W[N, K]ᵀ (CUTLASS #3672).

Decode and small-batch inference multiply a few rows of activations by a
weight matrix far larger than L2: the time is the time to stream W from
DRAM. The kernel swaps A and B so N fills the wgmma's M = 64 and the
activations' M (1-256 a CTA, padded to the tile; 257-512 over a pair of CTAs
sharing W, and more in blocks of up to 512: ``row_blocks``) is the wgmma's N:

* warp 0 (producer) streams W tiles [BN, 128 bytes of K] and x tiles
  [BM, 128 bytes of K] through TMA into a `stages`-deep ring (W with its own
  L2 promotion and evict-first hint, x with evict-last: every CTA rereads it);
* `wgs` consumer warpgroups each own 64·R rows of the BN-row W tile and
  issue R m64nBMkK wgmmas per K step (A = W, B = x, both K-major 128B-swizzled),
  or (`kwg`) two take alternate K steps of the whole tile;
* optionally 2-4 CTAs of a cluster share x (`mc`: neighbouring W tiles) or
  W (`ms`: each its own BM rows of x, the M split) by TMA multicast;
* optionally a stage is kc K steps, each operand's stage one 3-D TMA box of
  its [K / bk, rows, bk] view (`kc`: fewer, bigger loads, waits and releases);
* or (`swap=False`) x is the wgmmas' A, each consumer warpgroup 64 of its
  rows, and W's tile their B, n = BN any multiple of 8: as many W tiles as
  SMs with no K split (4096 rows in 128 tiles of 32), y stored from the
  registers;
* the work, (N tile, K step) pairs, is cut into `parts` shares of equal
  length spread over persistent CTAs: tiles x s shares split each tile's K s
  ways, one share per SM streams K (every CTA the same share of W, whatever
  the tile count); a share covering part of a tile's K adds its f32 partial,
  straight from the accumulator registers, into a workspace (in their
  fragment order, ``workspace``), and the share completing the tile (an
  atomic count of K steps, reset by it) reads the sum back into its
  registers, zeroes the workspace and writes y as an unsplit tile does.

W: bf16, or fp8 e4m3 with a per-tensor ([1]), per-row ([N]) or 128x128
block ([ceil(N/128), ceil(K/128)]) scale. x: bf16 with bf16 W; fp8 e4m3 with
a per-token scale ([M]) with fp8 W, or with 1x128 block scales ([M,
ceil(K/128)]) for block-scaled W (DeepSeek-V3 / DeepGEMM layout); bf16 x is
quantized to fp8 by ``quantize_x`` first (per token, or per 1x128 block), or
in the GEMM itself (``x_scale="fused"``; ``Gemm()`` where that is faster,
``Gemm(quantize="fused")`` always): x's TMA
loads bf16 tiles, warps 1-3 of the producer's warpgroup convert each stage to
e4m3 with a scale per row and 128 K values, and the consumers promote each
stage's partial with them (as block scaling does). y: bf16 or f32. M, N, K are run
time; K tails and M padding come from the TMA's zero fill, except that a
partial box's out-of-bounds rows are slow to fill: with the M split the CTA
whose rows would reach past M takes M's last rows instead; otherwise from a
tile of 128 rows on ``quantize_x`` writes zero rows up to the tile
(``Gemm.kernel_rows``), and e4m3 x from the caller is loaded as one or two
boxes of BM / 2 rows, the second ending 0-7 rows past M (``xhalf``).
"""

from __future__ import annotations

import contextlib
import functools
import operator
import weakref
from typing import NamedTuple

from .. import cpasync, cuda, dsl, lang, wgmma
from ..dsl import Float32, Index, Int32, Int64
from ..profile import Profiler

G2S = cpasync.CopyBulkTensorTileG2SOp
KBYTES = 128  # bytes of K per stage and row: one 128B swizzle span
MAX_ROWS = 256  # rows of x a CTA takes (wgmma's N at most)
# rows of x one launch of Gemm's takes: up to MAX_ROWS in a CTA (or a pair, the table's), more over CTA pairs sharing
# each W tile by multicast (ms = 2, each up to MAX_ROWS rows: pair_candidates), and more than this in blocks of it
ROWS_A_LAUNCH = 2 * MAX_ROWS


def _gemm_block(wgs, **_):
    return (128 * (wgs + 1),)


def _gemm_pdl(pdl=False, **_):
    return bool(pdl)


def _gemm_cluster(mc=1, ms=1, ksplit=1, **_):
    return (max(mc, ms, ksplit), 1, 1) if max(mc, ms, ksplit) > 1 else None


@dsl.kernel(block=_gemm_block, cluster=_gemm_cluster, name="gemm", pdl=_gemm_pdl)
def gemm_kernel(w: dsl.Tensor, x: dsl.Tensor, y: dsl.Tensor, ws: dsl.Tensor("f32", (None, None)),
                counters: dsl.Tensor("i32", (None,)), parts: dsl.Int32, *scales, BM, BN, wgs, stages, w_scale,
                x_scale, l2_w, l2_x, w_hint, x_hint, mc=1, ms=1, kwg=False, pdl=False, profile=None, chains=1,
                diag=None, store="tma", xhalf=False, kc=1, swap=True, ksplit=1):
    # swap: W is the wgmmas' A (its tile's rows fill their M = 64) and x their B (n = BM); swap=False: x is A,
    # each consumer warpgroup 64 of its rows (rows of a stage past BM unloaded: their y rows are not written),
    # and W's tile of BN rows B (n = BN, any multiple of 8): whole-K tiles (or their K steps split over the CTAs
    # of a cluster, ksplit), y stored from the registers
    # mc: CTAs per cluster sharing x (each loads 1/mc of every x tile and multicasts it to all)
    # ms: CTAs per cluster sharing W (each takes BM rows of x, loads 1/ms of every W tile, multicasts it)
    # ksplit: CTAs per cluster splitting each tile's K steps, the last summing the others' partials (stored into
    # its shared memory with st.async) and storing y
    cl = max(mc, ms, ksplit)  # CTAs per cluster (at most one of mc, ms, ksplit past 1)
    mcl = max(mc, ms)  # the CTAs whose multicast loads land in a slot (each frees it in all of them)
    # kwg: the two consumer warpgroups take alternate K steps of the whole tile (each waits for, and
    # promotes, its own stages while the other's wgmmas run), summed through shared memory at the end
    rwgs = 1 if kwg else wgs          # warpgroups the tile's rows are split over
    # profile: None, events per warp (the last parameter is then the int64 profile buffer), or "clocks"
    # (diagnostics): each warpgroup's SM-clock sums of where its time went, carried in registers through its
    # loops and added into the (int64, last) buffer once at its end (CLOCKS): no memory access or branch per
    # event, which in these loops cost a trace 1.6x (benchmarks/diag/profile_overhead.py)
    clocks = profile == "clocks"
    prof = Profiler(scales[-1] if profile and not clocks else None,
                    events_per_warp=profile if isinstance(profile, int) else 1, scope="warpgroup")
    clock_buf = scales[-1] if clocks else None
    scales = scales[:-1] if profile else scales
    # 32-bit problem arithmetic: a 64-bit division by a run-time value (the K split, the grid) is a
    # call in the SASS, and a call makes ptxas serialize every wgmma of the kernel
    bk = KBYTES // max(w.dtype.width // 8, 1)   # K elements of a K step (128 bytes)
    # kc > 1: a stage is kc K steps, one TMA box of each operand: W and x come as [K / bk, rows, bk] views of
    # their rows (K steps outermost: gemm_operand_view), so a box [kc, rows, bk] lands as kc [rows, bk] tiles
    if kc > 1:
        N, K = w.shape[1].to(Int32), w.shape[0].to(Int32) * bk
    else:
        N, K = (d.to(Int32) for d in w.shape)
    M = y.shape[0].to(Int32)  # x may have more rows (zero padding up to the tile: no rows of its box past it)
    R = BN // (64 * rwgs) if swap else 1  # m64 tiles per consumer warpgroup
    AN = BM if swap else BN           # the accumulators' n
    fp8 = w.dtype is dsl.Float8E4M3FN
    # fused: x comes in bf16 and is quantized here, per row and K step (128 values), by warps 1-3 of the
    # producer's warpgroup; each stage's partial is promoted with its x scales like block scaling's
    fused = x_scale == "fused"
    promote = w_scale == "block" or fused  # a scale per K step: each stage's wgmmas summed, then scaled
    kblocks = (K + bk * kc - 1) // (bk * kc)  # stages of K (the last partial: zeros past K)
    tiles = (N + BN - 1) // BN

    pool = lang.SMEMPool()
    sw_ = "swizzle_128b"
    # the epilogue tile, EM of the BM rows at a time: f32 partials (split K) or y itself, m-major
    # for TMA stores (a whole BM x BN f32 tile would take the ring's room: 64 KB at 128 x 128). First in
    # the pool: aligned for y's swizzled stores, and a whole number of KB, so the rings need no padding
    EM = epi_rows(BM, BN)
    epi = pool.alloc((EM, BN), "f32", align=1024) if swap and diag != "epi_last" else None
    # y's tile in the same bytes: bf16 y takes twice the rows a chunk (fewer chunks, each a TMA store and
    # two barriers), laid out as y's TMA store reads it: 128-byte boxes of its columns, 128B-swizzled, so
    # the consumers' writes (four x rows two apart in a warp's store) hit distinct banks
    EY = y_rows(BM, EM, y.dtype.width)
    # (not with kwg: its two warpgroups at 168 registers spilled in the K loop, 9-16% slower at M = 128;
    # there, and for f32 y, scalar stores into the unswizzled tile)
    stm = y.dtype.width == 16 and not kwg and swap
    y_atom = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), y, (EY, BN),
                                         swizzle=sw_ if stm else "none") if swap else None
    kdims = (kc,) if kc > 1 else ()
    w_ring = pool.alloc((stages, *kdims, BN, bk), w.dtype, swizzle=sw_)
    # swap=False: each stage's x rows padded (x_pad_rows) so its last K step's 64-row A tiles, reading past BM
    # rows, stay in the stage (rows no TMA writes: the next stage's may be landing)
    xpad = 0 if swap else x_pad_rows(BM, kc)
    xdims = ((kc + xpad // BM, BM) if kc > 1 else (BM + xpad,)) if xpad else (*kdims, BM)
    x_ring = pool.alloc((stages, *xdims, bk), w.dtype if fused else x.dtype, swizzle=sw_)  # what the wgmmas read

    def x_stage(i):
        """Stage i of x's ring as its TMA box lands in it."""
        t = x_ring.stage(i)
        return t.rows(0, kc if kc > 1 else BM) if xpad else t
    if fused:  # x as loaded: bf16 [BM, 128] of a stage, two boxes of [BM, 64]
        xb_ring = pool.alloc((stages, BM, bk), x.dtype, swizzle=sw_)
    if diag == "epi_last":  # diagnostics: the tile after the rings (its place before the tenth session)
        epi = pool.alloc((EM, BN), "f32", align=1024)
    epi_y = pool.alias(epi, (EY, BN), y.dtype, atom=y_atom) if swap else None
    # bf16 y's 16-byte rows as stmatrix writes them (_y_matrices works out the swizzle)
    epi_y16 = pool.alias(epi, (EY * BN // 8, 8), y.dtype) if stm else None
    w_atom = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp() if ms > 1 else G2S(), w,
                                         (*kdims, BN, bk), num_multicast=ms, swizzle=sw_, l2_promotion=l2_w,
                                         internal_type="uint8" if fp8 else None)
    x_atom = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp() if mc > 1 else G2S(), x,
                                         (*kdims, BM, bk), num_multicast=mc, swizzle=sw_, l2_promotion=l2_x,
                                         internal_type="uint8" if fp8 and not fused else None)
    # xhalf: a tile reaching past M loads x as boxes of BM / 2 rows instead, one at its first row and,
    # where M ends in the second half, one ending 0-7 rows past M (the two overlap: rows written twice,
    # the same bytes), so at most 7 rows past M for the TMA to fill, not up to BM - 1: a box's
    # out-of-bounds rows are slow to fill, and each more box of a stage costs too (Gemm.kernel_rows)
    H = BM // 2
    x_half = cpasync.make_tiled_tma_atom(G2S(), x, (H, bk), swizzle=sw_, l2_promotion=l2_x,
                                         internal_type="uint8" if fp8 else None) if xhalf else None
    if promote:
        # the x scales of each K block: loaded with the stage ([ceil(K/128), columns >= M], transposed
        # so a stage's BM scales are one TMA row), or written by the quantizing warps (fused)
        bms = max(BM, 32)  # TMA writes shared memory in 128-byte aligned pieces
        sx_ring = pool.alloc((stages, kc, bms), "f32")  # a row per K step of the stage
    if x_scale == "block":
        sx_atom = cpasync.make_tiled_tma_atom(G2S(), scales[1], (kc, bms), l2_promotion=l2_x)
    # a slot is free once the consumer warps of every CTA its x slice lands in released it (fused: every
    # consumer thread, each after its own reads of the scales the quantizing warps wrote there)
    pipe = lang.Pipeline(stages, full="tma", empty="mbar", init_empty=(32 if fused else 1) * 4 * rwgs * mcl)
    if ksplit > 1:
        # the K split's partials in the last CTA of the cluster: [sender, warpgroup, 16-byte piece, thread] (a warp's
        # 32 pieces 512 contiguous bytes), landed on red_full (armed there with their bytes); red_free, in each
        # sender: the last CTA has read them (one lane of each of its consumer warps arrives)
        red = pool.alloc((ksplit - 1, wgs, R * AN // 8, 512), "f32")
        red_full, red_free = lang.TMABar(1), lang.MBarrier(1, 4 * wgs)
    # fused: a stage's e4m3 x and scales written (every thread of the quantizing warps arrives)
    xready = lang.MBarrier(stages, QUANTIZER_WARPS * 32) if fused else None
    # a cluster's CTAs: every CTA's barriers initialized before a peer's multicast, store or arrival reaches them.
    # Each thread arrives at the cluster barrier here and waits (peers_ready) just before its first such operation,
    # and no CTA waits for its peers at the end: a CTA leaves once nothing of a peer can reach it any more (the
    # producer's tail with mc or ms; the K split's last partial is never freed). On the H200 (s36-pairs-*) the
    # barrier's wait at the start cost 0.1-0.3 us and one at the end 0.3-0.45 us, the cluster launch nothing:
    # 8192 x 3584 (128 CTAs) took 7.2-7.4 us unclustered or as pairs without the barriers, 7.85-8.0 as pairs
    # between them (diagnostics "barriers": both as before)
    late = cl > 1 and diag != "barriers"

    def peers_ready():
        if late:
            dsl.cluster_wait()
    if cl > 1:
        rank = dsl.cluster_ctarank()
        if late:
            dsl.cluster_arrive(relaxed=True)  # (the barriers' inits fenced for the cluster)
            dsl.barrier()
        else:
            dsl.cluster_sync()
    else:
        rank = 0
        dsl.barrier()

    # the work, tiles x kblocks K steps, cut into `parts` shares of (nearly) equal length: with
    # parts = tiles x s each tile is split s ways (split K), with parts = the grid every CTA streams
    # the same share of W (stream K); a share is one or more segments [kb0, kb1) of tiles. In
    # clusters of mc CTAs the shares are of groups of mc tiles: CTA `rank` takes tile mc·group + rank
    # (a group past N loads zeros and writes nothing), all of them the same K steps, so x is shared;
    # in clusters of ms CTAs every CTA takes the cluster's tile, for its own BM rows of x (from
    # rank·BM: rows past M load zeros and write nothing), so W is shared
    steps = (tiles + mc - 1) // mc * kblocks
    per, extra = steps // parts, steps % parts
    sched = lang.PersistentTileScheduler(parts, cluster_size=cl)
    # this CTA's first row of x and y. With the M split, a CTA whose BM rows would reach past M (with M >= BM)
    # takes the last BM rows of M instead: rows a lower rank computes too (the same values, written twice),
    # but every row of its x box in bounds: a box's out-of-bounds rows are slow to fill (Gemm.kernel_rows)
    # (diag "own_rows": its own rows, the box partly past M, as before 2026-12-02). With 1x128 block-scaled x, the
    # TMA box of a stage's x scales starts at column m0, which must lie on 16 bytes (4 f32 scales; at 13, for M =
    # 77 and BM = 64, the H200 faulted with an illegal instruction): that CTA starts at the first multiple of 4
    # from M - BM, its last 0-3 rows past M
    last = (M - BM + 3) // 4 * 4 if x_scale == "block" else M - BM
    m0 = 0 if ms == 1 else rank * BM if diag == "own_rows" else dsl.select(M >= BM, dsl.min(rank * BM, last),
                                                                             rank * BM)
    x_bytes = x_atom.tile_bytes
    if xhalf:
        V = M - m0  # this CTA's rows of M (x may have more: zero rows)
        r1 = (V - H + 7) // 8 * 8  # the second half box's first row, where V > H: 8-row aligned, in [8, H]
        # a whole box or two halves past the first half of the tile, one half within it, none past M
        x_bytes = dsl.select(V > H, Int32(x_bytes), dsl.select(V > 0, Int32(x_half.tile_bytes), Int32(0)))
    # diagnostics "stream_only" / "stream_no_wait": the kernel streams W through the ring and nothing else (no
    # x, no wgmma, no epilogue), with and without the waits for the earlier kernels: the floor of a GEMM call
    stream = diag in ("stream_only", "stream_no_wait")
    no_wait = diag in ("no_wait", "stream_no_wait")
    if stream:
        x_bytes = 0
    stage_bytes = w_atom.tile_bytes + x_bytes + (sx_atom.tile_bytes if x_scale == "block" else 0)

    def tile_of(group):
        return group * mc + rank if mc > 1 else group
    cid, nclusters = sched.start, sched.step  # this CTA's cluster (or the CTA) and their count

    def share(p):
        it0 = p * per + dsl.min(p, extra)
        it1 = it0 + per + dsl.select(p < extra, Int32(1), Int32(0))
        if ksplit == 1:
            return it0, it1
        # the K split: a share is a whole tile (parts = tiles), this CTA its rank's part of the K steps; with
        # fewer K steps than CTAs the last takes them all (the others none: they send nothing)
        n = it1 - it0
        whole = n < ksplit
        return (dsl.select(whole, dsl.select(rank == ksplit - 1, it0, it1), it0 + n * rank // ksplit),
                dsl.select(whole, it1, it0 + n * (rank + 1) // ksplit))

    def segments(i, state, body):
        """state = body(tile, kb0, kb1, state) over the segments of this CTA's
        i-th share; the final state."""
        it0, it1 = share(cid + i * nclusters)
        loop = dsl.while_(lambda it, st: it < it1, carry=(it0, state))
        for it, st in loop:
            group = it // kblocks
            kb0 = it - group * kblocks
            kb1 = dsl.min(kblocks, kb0 + (it1 - it))
            dsl.yield_(it + (kb1 - kb0), body(tile_of(group), kb0, kb1, st))
        return loop.results[1]

    with lang.WarpgroupRole(0, regs=40):
        with lang.WarpRole(0), prof.role("producer"):
            cpasync.prefetch_descriptor(w_atom)
            cpasync.prefetch_descriptor(x_atom)
            if ms > 1 or mc > 1 and not pdl:
                peers_ready()  # W's first load a multicast (ms), or x's with W's (mc)

            def load_w(s, tile, kb):
                pipe.producer_commit(s, stage_bytes)
                mcast = dict(mcast_mask=(1 << ms) - 1, cta_rank=rank) if ms > 1 else {}
                at = [kb * kc, tile * BN, 0] if kc > 1 else [tile * BN, kb * bk]
                cpasync.copy(w_atom, at, w_ring.stage(s.index), tma_bar_ptr=pipe.full.at(s.index),
                             cache_hint=w_hint, **mcast)

            def load_x(s, kb):
                mcast = dict(mcast_mask=(1 << mc) - 1, cta_rank=rank) if mc > 1 else {}
                bar = dict(tma_bar_ptr=pipe.full.at(s.index), cache_hint=x_hint)
                if kc > 1:
                    cpasync.copy(x_atom, [kb * kc, m0, 0], x_stage(s.index), **bar)
                elif not xhalf:
                    cpasync.copy(x_atom, [m0, kb * bk], xb_ring.stage(s.index) if fused else x_stage(s.index), **bar,
                                 **mcast)
                else:
                    tile = x_ring.stage(s.index)
                    with dsl.if_(V >= BM):
                        cpasync.copy(x_atom, [m0, kb * bk], tile, **bar)
                    with dsl.else_():
                        with dsl.if_(V > 0):
                            cpasync.copy(x_half, [m0, kb * bk], tile.rows(0, H), **bar)
                        with dsl.if_(V > H):
                            cpasync.copy(x_half, [m0 + r1, kb * bk], tile.rows(r1, H), **bar)
                if x_scale == "block":
                    cpasync.copy(sx_atom, [kb * kc, m0], sx_ring.stage(s.index), tma_bar_ptr=pipe.full.at(s.index),
                                 cache_hint=x_hint)

            def acquire_and_load(s, tile, kb, x=True):
                prof.push("acquire")
                pipe.producer_acquire(s)
                prof.pop()
                prof.push("load")
                load_w(s, tile, kb)
                if x:
                    load_x(s, kb)
                prof.pop()

            pre = 0
            c_start = cuda.clock64() if clocks else None
            ck0 = (Int64(0), Int64(0), Int64(0), c_start) if clocks else None  # blocked, x_load, grid_wait, last
            if pdl:
                # programmatic dependent launch: W is no earlier kernel's output, so the first stages of
                # this CTA's first segment take their W before the wait for those kernels, x after it
                p = cid
                it0, it1 = share(p)
                group0 = it0 // kblocks
                kbs = it0 - group0 * kblocks
                tile0 = tile_of(group0)
                pre = dsl.select(p < parts, dsl.min(dsl.min(kblocks - kbs, it1 - it0), Int32(stages)), Int32(0))
                prof.push("prefetch")
                for j in dsl.range(pre):  # the fresh ring's first slots: free, no acquire
                    load_w(lang.PipelineState(stages, index=j), tile0, kbs + j)
                    if diag == "x_early":  # diagnostics: their x too (wrong if an earlier kernel writes x)
                        load_x(lang.PipelineState(stages, index=j), kbs + j)
                prof.pop()
                if pdl == "early":  # the next kernel may start now: its CTAs prefetch beside this one's
                    cuda.griddepcontrol_launch_dependents()
                prof.push("grid_wait")
                tg = cuda.clock64() if clocks else None
                if not no_wait:  # diagnostics: no wait at all (wrong with split K, or x written before)
                    cuda.griddepcontrol_wait()
                if mc > 1:
                    peers_ready()  # x's first load (a multicast) next
                prof.pop()
                if clocks:
                    t = cuda.clock64()
                    ck0 = _tally(ck0, (None, None, t - tg), t)

            def load(tile, kb0, kb1, state):
                inner = dsl.range(kb0, kb1, carry=state)
                for kb, (s, n, *ck) in inner:
                    t0 = cuda.clock64() if clocks else None
                    if pdl:
                        with dsl.if_(n >= pre):  # its W not loaded before the wait
                            acquire_and_load(s, tile, kb, x=False)
                    else:  # (x's load with W's: x_load stays near 0)
                        acquire_and_load(s, tile, kb, x=not stream)
                    t1 = cuda.clock64() if clocks else None
                    if pdl and not stream:
                        with dsl.if_(n >= pre) if diag == "x_early" else contextlib.nullcontext():
                            load_x(s, kb)
                    if clocks:  # the wait for a free slot and W's load; x's load
                        t2 = cuda.clock64()
                        ck = [_tally(ck[0], (t1 - t0, t2 - t1, None), t2)]
                    dsl.yield_(s.advance(), n + 1, *ck)
                return inner.results

            outer = dsl.range(sched.count, carry=((lang.PipelineState(stages), Int32(0), *((ck0,) if clocks else ())),))
            for i, (state,) in outer:
                dsl.yield_(segments(i, state, load))
            if clocks:
                _write_clocks(clock_buf, 0, wgs, outer.results[0][2], c_start, dsl.lane_idx() == 0)
            if pdl is True:
                cuda.griddepcontrol_launch_dependents()  # every load issued: the next kernel may start
            if ksplit > 1:
                peers_ready()
            elif late:
                # the producer's tail: every slot freed once more, so the peers' consumers, which free this CTA's
                # slots too, are past their last arrival on its barriers before it leaves
                tail = dsl.range(stages, carry=(outer.results[0][0],))
                for _, (s,) in tail:
                    pipe.producer_acquire(s)
                    dsl.yield_(s.advance())

        if fused or late:
            with dsl.if_(dsl.warp_idx() != 0, scope="warp"):
                if fused:
                    _quantize_stages(segments, sched.count, pipe, xready, xb_ring, x_ring, sx_ring, BM, stages)
                peers_ready()

    # the producer's warpgroup gives up registers to the consumers: at most 232 each, within the SM's 64 K
    with lang.WarpgroupRole((1, wgs + 1), regs=consumer_regs(wgs), increase=True), prof.role("consumer"):
        g = dsl.warpgroup_idx() - 1
        rg = 0 if kwg else g  # the warpgroup's share of the tile's rows
        nblocks = scales[0].shape[0].to(Int32) if w_scale == "block" else None  # 128-row blocks of W's scales
        kbw = scales[0].shape[1].to(Int32) if w_scale == "block" else None  # and 128-column ones
        # the block scales' shared addresses in 64-bit index arithmetic: a base plus a constant each
        lane, warp = dsl.lane_idx().to(Index), (dsl.warp_idx() % 4).to(Index)
        peers = tuple(range(mcl)) if mcl > 1 else None  # the CTAs whose x (or W) slices a slot holds
        c_start = cuda.clock64() if clocks else None
        if pdl and not no_wait:
            cuda.griddepcontrol_wait()  # the workspace, counters and y are the earlier kernels' too
        if mcl > 1:
            peers_ready()  # the first stage's release reaches the peers' barriers
        # the epilogue's scales that stay the same over the tiles, loaded once here (after the wait: x's scales
        # may be an earlier kernel's output) and not waited for until an epilogue uses them, so no tile's
        # epilogue waits for a load: W's per-tensor scale; x's (clamped to M), a thread's share of the tile's
        # rows that each epilogue publishes in shared memory before the barrier its writes wait at, or (y
        # stored directly) the thread's own rows, BM / 4 of them. (A split tile's last segment writes y with
        # these too; only the staged split's sum, _epilogue's staged_split, loads its own beside its partials.)
        pre = dict(w=scales[0][0] if w_scale == "tensor" else None, xs=None, xs_share=(), xs_own=None)
        if x_scale == "token":
            if not swap:  # this thread's two accumulator rows (x rows) of its warpgroup's 64
                pre["xs_own"] = {h: scales[1][dsl.min(m0 + g * 64 + warp * 16 + lane // 4 + 8 * h, M - 1)]
                                 for h in range(2)}
            elif store == "direct":
                q = (dsl.lane_idx() % 4).to(Int32)
                pre["xs_own"] = {(jb, t): scales[1][dsl.min(m0 + 8 * jb + 2 * q + t, M - 1)]
                                 for jb in range(BM // 8) for t in range(2)}
            else:
                pre["xs"] = pool.alloc_static((BM,), "f32")
                ctid = dsl.thread_idx() - 128
                pre["xs_share"] = tuple((i, scales[1][dsl.min(m0 + ctid + i, M - 1)])
                                        for i in range(0, BM, 128 * rwgs))

        def row_scales(tile):
            """W rows' scales: this thread's 2 rows of each m64 block."""
            if w_scale != "row":
                return None
            if not swap:  # W rows are the accumulators' columns: this thread's 2 of each 8
                return {(c, t): scales[0][dsl.min(tile * BN + 8 * c + 2 * (lane % 4) + t, N - 1)]
                        for c in range(BN // 8) for t in range(2)}
            return {(r, h): scales[0][dsl.min(tile * BN + (rg * R + r) * 64 + warp * 16 + lane // 4 + 8 * h, N - 1)]
                    for r in range(R) for h in range(2)}

        def compute(tile, kb0, kb1, st, share=None):
            ck = ()
            if clocks:  # (wait, mma, after_mma, epilogue, last) sums carried with the ring state
                st, ck = st[0], (st[1],)
            if stream or diag == "no_mma":  # diagnostics: each stage waited for and released, nothing read
                waits = dsl.range(kb0, kb1, carry=(st,))
                for _, (s,) in waits:
                    pipe.consumer_wait(s)
                    pipe.consumer_release(s, ranks=peers)
                    dsl.yield_(s.advance())
                if stream:
                    return waits.results[0]
                # "no_mma": the epilogue as built, of zero accumulators
                return epilogue(tile, kb0, kb1, tuple(wgmma.Accumulator(AN) for _ in range(R)),
                                waits.results[0], row_scales(tile), share)
            # acc[r]: `chains` accumulators of m64 block r, each taking every chains-th of a K step's
            # wgmmas (fewer products added into each f32 accumulator: default_chains), summed once
            # before the epilogue (promoting: one, and each stage's partial in `chains`)
            accs = tuple(tuple(wgmma.Accumulator(AN) for _ in range(1 if promote else chains))
                         for _ in range(R))
            # keep one stage of wgmmas in flight only with a deep ring: the slot is then freed a
            # stage later, which costs a quarter of a 4-stage ring (measured: M = 128 lost 9%)
            # block scaling waits at once: promoting a stage's partial while the next stage's wgmmas
            # run (two partials live) was measured slower (M = 64: 7%, 128: 3.5%; s9-gemm-full-last)
            overlap = not promote and stages >= 6
            # the slot whose MMAs may still run (released one stage later, so one
            # stage's wgmmas overlap the next stage's wait; block scaling waits at once)
            # with kwg this warpgroup takes the segment's K steps g, g + 2, ... (the ring state too); with
            # an even ring those keep to this warpgroup's slots within the segment, and the barrier of
            # _sum_warpgroups at its end has both warpgroups past every wait of it before the next
            # segment, whose parity may start with either: both together keep a parity wait from seeing
            # a slot's previous lap (test_gemm_ring_model.py)
            first = st.advance(g) if kwg else st
            w_rows = row_scales(tile)  # loaded before the K loop hides their latency
            if promote and not swap:  # this thread's two x rows (the accumulator's), within the slot's scales
                xrows = [dsl.min(g * 64 + warp * 16 + lane // 4 + 8 * h, bms - 1) for h in range(2)]

            def xa_factors(sxs, swv, j):
                """x as A: K step j's promotion factors, by (x row h of the thread's two, W block b)."""
                return {(h, b): sxs[j, xrows[h]] * swv[b][j] for h in range(2) for b in range(len(swv))}

            def w_block_scales(kb):
                """The W blocks' scales of stage kb's K steps: swap, per m64 block of the tile's rows; swap=False,
                per 128 of its columns (W rows). (An m64 block past N, in the last tile, reads the last row of
                scales: its y is not written; with several K steps a stage, a step past K, its partial zero, reads
                the last column.)"""
                wb = [(rg * R + r) * 64 for r in range(R)] if swap else [128 * b for b in range(max(1, BN // 128))]
                return tuple(tuple(scales[0][dsl.min((tile * BN + o) // 128, nblocks - 1),
                                             kb if kc == 1 else dsl.min(kb * kc + j, kbw - 1)] for j in range(kc))
                             for o in wb)

            inner = dsl.range(kb0 + g if kwg else kb0, kb1, 2 if kwg else 1, carry=(first, accs, Int32(-1), *ck))
            for kb, (s, acc, prev, *ck) in inner:
                if w_scale == "block":  # loaded before the wait hides their latency
                    swv = w_block_scales(kb)
                t0 = cuda.clock64() if clocks else None
                prof.push("wait")
                pipe.consumer_wait(s)
                if fused:
                    xready.wait(s.index, s.phase)
                prof.pop()
                t1 = cuda.clock64() if clocks else None
                prof.push("mma")
                # each K step of the stage: its W and x tiles, and its wgmmas' K blocks of 32 bytes
                wt, xt = w_ring.stage(s.index), x_ring.stage(s.index)
                ab = [(wgmma.SmemDescriptor(wt.stage(j) if kc > 1 else wt),
                       wgmma.SmemDescriptor(xt.stage(j) if kc > 1 else xt), ks)
                      for j in range(kc) for ks in range(KBYTES // 32)]
                if not swap:  # A = x (this warpgroup's 64 rows: row_block below), B = W
                    ab = [(b, a, ks) for a, b, ks in ab]
                # x as A, block-scaled, over two or more warpgroups: the stage's factors (two x rows' scales a
                # thread times W's block scale, a K step) read from the slot before its wgmmas, and the slot
                # released as soon as they retire, before the promotion. Measured on the H200 (s32-xa-block-5/-6,
                # against diag "factors_after"): M = 128, 5-12% faster at the best configs (4096 x 7168, 128/32/2
                # kc 2: 15.1 -> 13.4 us); with one warpgroup (M <= 64) 2-7% slower, so there the factors follow the
                # wgmmas and the slot is released after the promotion
                early = None
                if promote and not swap and wgs > 1 and diag != "factors_after":
                    early = [xa_factors(sx_ring.stage(s.index), swv, j) for j in range(kc)]
                wgmma.fence()
                new = []
                for r in range(R):
                    rows = (rg * R + r) * 64
                    if promote:  # each K step's partial apart, in `chains` accumulators (one with kc > 1)
                        ch = chains if kc == 1 else 1
                        per = []
                        for j in range(kc):
                            t = [wgmma.Accumulator(AN) for _ in range(ch)]
                            for a, b, ks in ab[j * (KBYTES // 32):(j + 1) * (KBYTES // 32)]:
                                t[ks % ch] = wgmma.mma_async(t[ks % ch], a.row_block(rows).k_block(ks), b.k_block(ks),
                                                             scale_d=ks >= ch)
                            per.append(tuple(t))
                        new.append(tuple(per))
                    else:
                        c = list(acc[r])
                        for i, (a, b, ks) in enumerate(ab):
                            c[i % chains] = wgmma.mma_async(c[i % chains], a.row_block(rows).k_block(ks),
                                                            b.k_block(ks))
                        new.append(tuple(c))
                wgmma.commit_group()
                if not overlap:
                    wgmma.wait_group(0)
                    prof.pop()
                    t2 = cuda.clock64() if clocks else None
                    if not promote or early:
                        pipe.consumer_release(s, ranks=peers)
                else:
                    wgmma.wait_group(1)
                    prof.pop()
                    t2 = cuda.clock64() if clocks else None
                    with dsl.if_(prev >= 0):
                        pipe.consumer_release(lang.PipelineState(stages, index=prev), ranks=peers)
                if promote:
                    prof.push("promote")
                    # promote each 128-wide K block j: acc += partial · sw[n-block, kb] · sx[kb, m]
                    sxs = sx_ring.stage(s.index)
                    merged = []
                    for r in range(R):
                        vals = acc[r][0].values()
                        for j in range(kc):
                            part = _chain_sum(new[r][j]).values()
                            out = []
                            if not swap:  # a factor per x row (2 a thread) and 128 W rows (BN // 128 or 1)
                                fs = early[j] if early else xa_factors(sxs, swv, j)  # (one warpgroup, or diag
                                # "factors_after": after the wgmmas)
                                vals = [dsl.fma(part[i], fs[i // 2 % 2, i // 64], vals[i]) for i in range(len(part))]
                                continue
                            for i in range(len(part)):
                                m = wgmma.Accumulator.coords(i, lane, warp)[1]
                                if diag == "promote_w_only":  # diagnostics: W's block scale alone (no x scale)
                                    f = swv[r][j]
                                elif diag == "promote_sx_only":  # diagnostics: x's scale alone (no multiply)
                                    f = sxs[j, m]
                                else:
                                    f = sxs[j, m] * swv[r][j] if w_scale == "block" else sxs[j, m]
                                out.append(dsl.fma(part[i], f, vals[i]))
                            vals = out
                        merged.append((wgmma.Accumulator.from_values(AN, vals),))
                    new = merged
                    # after the scales were read from the slot: fused, each thread its own reads of what
                    # the quantizing warps wrote (an elected lane's arrival orders only its own)
                    if not early:
                        pipe.consumer_release(s, ranks=peers, elect=not fused)
                    prof.pop()
                if clocks:
                    t3 = cuda.clock64()
                    ck = [_tally(ck[0], (t1 - t0, t2 - t1, t3 - t2, None), t3)]
                dsl.yield_(s.advance(2 if kwg else 1), tuple(new), s.index if overlap else Int32(-1), *ck)
            st_next, acc, prev, *ck = inner.results
            if kwg:
                st_next = st.advance(kb1 - kb0)  # the state past the whole segment, the same in both
            if overlap:
                wgmma.wait_group(0)
                with dsl.if_(prev >= 0):
                    pipe.consumer_release(lang.PipelineState(stages, index=prev), ranks=peers)
            if not clocks:
                return epilogue(tile, kb0, kb1, tuple(_chain_sum(a) for a in acc), st_next, w_rows, share)
            t0 = cuda.clock64()
            st_next = epilogue(tile, kb0, kb1, tuple(_chain_sum(a) for a in acc), st_next, w_rows, share)
            t1 = cuda.clock64()
            return st_next, _tally(ck[0], (None, None, None, t1 - t0), t1)

        def epilogue(tile, kb0, kb1, acc, st_next, w_rows, share):
            # share: the index of the CTA's share the tile is of (the K split's barriers: their phase)
            prof.push("epilogue")

            def store_y(acc):
                if not swap:
                    with dsl.if_(parts < 0) if diag == "no_epilogue" else contextlib.nullcontext():
                        # y's rows of this CTA's tile only: past BM a warpgroup's 64 rows are the next K step's x or
                        # pad rows, and with the M split another CTA's rows of M
                        _epilogue_xa(acc[0], y, w_scale, x_scale, tile * BN, dsl.min(M, m0 + BM), N, m0 + g * 64,
                                     lane, warp, dict(pre, rows=w_rows))
                    return
                if kwg:
                    acc = _sum_warpgroups(acc, g, epi, BM, EM, lane, warp, store == "tma")
                with dsl.if_(tile < tiles) if mc > 1 else contextlib.nullcontext():  # a group's tiles past N
                    with dsl.if_(g == 0) if kwg else contextlib.nullcontext():
                        # diagnostics "no_epilogue": under a condition no call meets (the accumulators stay live)
                        with dsl.if_(parts < 0) if diag == "no_epilogue" else contextlib.nullcontext():
                            # y, or with the grid's K split (not a cluster's: that sum is y) the partial of [kb0, kb1)
                            _epilogue(acc, y, ws, counters, scales, w_scale, x_scale, tile,
                                      *((kb0, kb1) if ksplit == 1 else (Int32(0), kblocks)), kblocks, M, N, BN, BM,
                                      EM, R, rwgs, epi, epi_y, y_atom, diag, m0, tile * ms + rank if ms > 1 else tile,
                                      store=store, pre=dict(pre, rows=w_rows), epi_y16=epi_y16,
                                      staged=kwg or wgs > 1)
            if ksplit == 1 or diag == "no_sum":  # (diagnostics "no_sum": each CTA stores y from its own partial, y
                # wrong: no partial stored, waited for or added)
                store_y(acc)
            else:
                with dsl.if_(share == 0):
                    peers_ready()  # the first partial's store or read next
                _ksplit_sum(acc, store_y, red, red_full, red_free, rank, ksplit, g, lane, warp, wgs, AN, kblocks,
                            share, sched.count, BM, swap)
            prof.pop()
            return st_next

        zero = Int64(0)
        outer = dsl.range(sched.count, carry=((lang.PipelineState(stages), (zero, zero, zero, zero, c_start))
                                              if clocks else lang.PipelineState(stages),))
        for i, (st,) in outer:
            dsl.yield_(segments(i, st, functools.partial(compute, share=i)))
        if clocks:
            _write_clocks(clock_buf, g + 1, wgs, outer.results[0][1], c_start, dsl.thread_idx() % 128 == 0)
        if store == "tma":
            _tile_read()  # the last TMA store has read the tile before the CTA's shared memory goes
        if pdl and no_wait:
            cuda.griddepcontrol_wait()  # diagnostics: at the end, off the loads' and wgmmas' path
        if ksplit > 1:  # (no tile, or only tiles whose one K step the last CTA takes: no epilogue here)
            with dsl.if_((sched.count == 0) | ((kblocks < ksplit) & (rank < ksplit - 1))):
                peers_ready()

    if cl > 1 and not late:
        dsl.cluster_sync()  # (diagnostics "barriers") no CTA leaves while a peer may still reach it


QUANTIZER_WARPS = 3  # warps 1-3 of the producer's warpgroup (warp 0 issues the TMA loads)
# gemm_spec(profile="clocks"): per CTA and warpgroup (the producer's first), CLOCK_WORDS int64 words of SM-clock
# sums, each the role's names in order, the span (start to its last event) last. Producer: blocked (waiting for a
# free slot and issuing W's load), x_load, grid_wait (PDL); consumers: wait (for a full slot), mma (the stage's
# wgmmas issued and waited for), after_mma (the slot's release and, with block scales, the promotion), epilogue
CLOCKS = {"producer": ("blocked", "x_load", "grid_wait"), "consumer": ("wait", "mma", "after_mma", "epilogue")}
CLOCK_WORDS = 8


def _tally(sums, deltas, last):
    """Clock sums (each role's CLOCKS, then the last event's clock) with `deltas` added (None: unchanged) and
    `last` the new last clock."""
    return tuple(v if d is None else v + d for v, d in zip(sums, deltas)) + (last,)


def _write_clocks(buf, role, wgs, sums, start, who):
    """A warpgroup's clock sums (and its span: start to its last event) added into its CLOCK_WORDS of the
    buffer by one thread (`who`); launches add up."""
    base = (dsl.block_idx().to(Int32) * (wgs + 1) + role).to(Index) * CLOCK_WORDS
    with dsl.if_(who):
        for i, v in enumerate(sums[:-1]):
            cuda.red_add(buf, (base + i,), v)
        cuda.red_add(buf, (base + CLOCK_WORDS - 1,), sums[-1] - start)


def _quantize_stages(segments, count, pipe, xready, xb_ring, xq_ring, sx_ring, BM, stages):
    """fused: each stage's bf16 x [BM, 128] (as loaded) to e4m3 in the
    wgmmas' slot, a scale per row (amax / 448) beside it. Quantizing warp q
    takes every third stage (q, q + 3, ...), so three stages are converted
    at once: one warp's latency per stage (measured on the H200: one stage
    at a time by all three warps was slower than W's stream) is hidden; a
    stage is ready once all three warps arrive on its `xready` barrier. A
    row is 16 lanes' 16-byte pieces, its amax a 16-lane shuffle reduction;
    a warp takes two rows a pass, every pass's loads before the arithmetic
    of 8 passes."""
    q = dsl.warp_idx() - 1
    lane = dsl.lane_idx()
    half, piece = lane // 16, lane % 16

    def convert(s):
        xb, xq, sx = xb_ring.stage(s.index), xq_ring.stage(s.index), sx_ring.stage(s.index)
        for p0 in range(0, BM // 2, 8):
            rows = [2 * p + half for p in range(p0, min(p0 + 8, BM // 2))]
            vals = [xb.load_vec(8, r, piece * 8) for r in rows]
            for r, v in zip(rows, vals):
                amax = cuda.warp_max(dsl.abs(v).reduce("max").to(Float32), width=16)  # bf16x2 max: exact
                v = v.to(Float32)
                # no IEEE division: ptxas makes it a call, and a call serializes every wgmma of the kernel.
                # div.approx gives 0 for divisors past 2^126: both sides scaled by 2^-64 (exactly) keep
                # every bf16 amax in its range (1e-12 * 2^-64 is still a normal f32)
                a = dsl.max(amax, 1e-12)
                inv = dsl.fdividef(448.0 * 2.0 ** -64, a * 2.0 ** -64)
                xq.store_vec((v * inv).to(dsl.Float8E4M3FN), r, piece * 8)
                sx[0, r] = a * (1.0 / 448.0)  # the row's 16 lanes store the same value
        cuda.fence_proxy_async()  # the e4m3 tile's generic writes before the wgmmas (async proxy) read it

    def stages_of(tile, kb0, kb1, state):
        inner = dsl.range(kb0, kb1, carry=state)
        for _, (s, n) in inner:
            # Every warp waits for every stage and arrives on its xready, in order: the consumers then
            # wait for all three, so no warp falls a lap behind a slot. A parity wait a lap off passes
            # early (on the lap before: loads complete out of order, and a warp waiting only for its
            # own stages saw it) or never (on the lap after). Every thread arrives, each after its own
            # writes: one elected lane's arrival (after a warp sync ptxas drops) releases only its own
            # writes, and compute-sanitizer racecheck reported the other lanes' scales as racing with
            # the consumers' reads (H200, eighth session).
            pipe.consumer_wait(s)
            with dsl.if_(n == q, scope="warp"):
                convert(s)
            xready.arrive(s.index)
            dsl.yield_(s.advance(), dsl.select(n == QUANTIZER_WARPS - 1, Int32(0), n + 1))
        return inner.results

    outer = dsl.range(count, carry=((lang.PipelineState(stages), Int32(0)),))
    for i, (state,) in outer:
        dsl.yield_(segments(i, state, stages_of))


def _chunk_registers(acc, c, EM, lane, warp):
    """(m64 block r, register j, W row in the block, x row, value) of the
    accumulators' registers whose x row is in chunk c of EM rows (a
    register's x row is 8·(j // 4) + a lane offset below 8: chunks of whole
    8-row groups are known at build time)."""
    for r, a in enumerate(acc):
        for j, v in enumerate(a.values()):
            if c * EM <= 8 * (j // 4) < (c + 1) * EM:
                row, col = wgmma.Accumulator.coords(j, lane, warp)
                yield r, j, row, col, v


def _tile_read():
    """The epilogue's last TMA store has read its tile (warp 4, the first
    consumer warp, issues them): the tile may be written again, or freed.
    Each store is waited for here, before the tile's next writes, not at
    once: it reads shared memory while the consumers run the next tile."""
    with lang.WarpRole(4):
        cpasync.bulk_wait_group(0, read=True)


def _y_matrices(acc, c, tile, g, R, lane, warp, scaled, w_rows):
    """The stmatrix.trans stores of chunk c (x rows c·EY..) of the
    accumulators to bf16 y's tile: (16-byte row of the tile, registers) of
    each. A register pair (j, j + 1) of an m64 block holds one W row's
    values for x rows m, m + 1 of an 8 x 8 block (8 W rows by 8 x rows);
    transposed, each of the block's x rows is 8 W rows of y, 16 bytes.
    Four blocks a store (two where two remain), each lane addressing row
    lane % 8 of block lane // 8: x rows 8·(j // 4).., W rows 8·(j // 2 % 2)..
    of the warp's 16. `scaled(v, W row, x row, W row's preloaded scale)`.

    `tile`: y's tile (EY x rows, BN W rows), swizzled and box after box as
    its TMA store reads it. Every store's address is one per-thread base
    (the first group's, through the tile's layout) plus a constant: the
    other groups are whole 8-row swizzle repeats (1024 bytes) or whole boxes
    (an m64 block's 64 W rows, EY x rows of 128 bytes) further on, which
    keep the swizzle's phase. Returned rows are 16-byte rows of the tile."""
    out = []
    EY = tile.static_shape[0]
    blk = lane // 8
    _, first = tile._swizzled((blk // 2 * 8 + lane % 8, g * R * 64 + warp * 16 + blk % 2 * 8))
    base = first // 8
    for r, a in enumerate(acc):
        vals = a.values()
        js = [j for j in range(0, len(vals), 2) if c * EY <= 8 * (j // 4) < (c + 1) * EY]
        packed = []
        for j in js:
            row, col = wgmma.Accumulator.coords(j, lane, warp)
            nn = (g * R + r) * 64 + row
            w = w_rows[r, j // 2 % 2] if w_rows else None
            pair = dsl.vector_of([scaled(vals[j], nn, col, w), scaled(vals[j + 1], nn, col + 1, w)])
            packed.append(pair.to(tile.dtype).bitcast(Int32))
        for t in range(0, len(packed), 4):
            j0 = js[t]  # a multiple of 4: block t is x rows 8·(j0 // 4).., W rows 0-7 of the warp's 16
            out.append((base + r * EY * 8 + (8 * (j0 // 4) - c * EY) * 8, packed[t:t + 4]))
    return out


def _sum_warpgroups(acc, g, buf, BM, EM, lane, warp, stores):
    """Warpgroup 1's accumulators added into warpgroup 0's (kwg: each summed
    alternate K steps of the same tile) through `buf` (f32 [EM, BN]), EM x
    rows at a time; every thread reads and writes only its own registers'
    places (`stores`: the tile may still be an earlier TMA store's source).
    Returns the sums (meaningful in warpgroup 0)."""
    vals = [list(a.values()) for a in acc]
    if stores:
        _tile_read()  # before the first barrier below: no thread writes buf until the store has read it
    for c in range(BM // EM):
        places = [(r, j, (r * 64 + row, col - c * EM))
                  for r, j, row, col, _ in _chunk_registers(acc, c, EM, lane, warp)]
        cuda.barrier_sync(2, 256)  # buf free: warpgroup 0 is past its last use (the previous chunk or epilogue)
        with dsl.if_(g == 1):
            for r, j, (nn, m) in places:
                buf[m, nn] = vals[r][j]
        cuda.barrier_sync(2, 256)
        for r, j, (nn, m) in places:
            vals[r][j] = vals[r][j] + buf[m, nn]
    with dsl.if_(g == 0):
        cuda.barrier_sync(1, 128)  # every read of warpgroup 0 before its epilogue writes buf
    return tuple(wgmma.Accumulator.from_values(a.n, v) for a, v in zip(acc, vals))


def _epilogue_xa(acc, y, w_scale, x_scale, n0, M, N, m0, lane, warp, pre):
    """swap=False: y's rows m0.. (this warpgroup's x rows) below M (the CTA's rows' end) and columns n0.. from
    the accumulator (64 x rows by the tile's W rows), scaled, straight from the registers: a register pair is
    two adjacent W rows of one x row, one 4-byte (bf16) or 8-byte (f32) store. Every scale was loaded before (`pre`: W's
    per-tensor "w", the thread's W rows' "rows" by (8-column group, parity), its two x rows' "xs_own")."""
    vals = acc.values()
    got = []
    for i in range(0, len(vals), 2):
        row, col = wgmma.Accumulator.coords(i, lane, warp)
        pair = []
        for t in range(2):
            v = vals[i + t]
            if w_scale == "tensor":
                v = v * pre["w"]
            elif w_scale == "row":
                v = v * pre["rows"][i // 4, t]
            if x_scale == "token":
                v = v * pre["xs_own"][i // 2 % 2]
            pair.append(v)
        got.append((m0 + row, n0 + col, dsl.vector_of(pair).to(y.dtype)))
    for m, n, v in got:
        with dsl.if_((m < M) & (n < N)):
            y.store_vec(v, m, n)


def _ksplit_sum(accs, store_y, red, red_full, red_free, rank, ksplit, g, lane, warp, wgs, AN, kblocks, i, count, BM,
                swap):
    """The K split over a cluster, a tile's epilogue: each CTA but the last stores its partial (`accs`, a
    warpgroup's accumulators) into the last's shared memory (st.async, 16 bytes a store, completing on the last's
    red_full) once the last has read the partial of its tile before (red_free); the last, where the others took K
    steps (kblocks >= ksplit: else it took them all), arms red_full with their bytes, waits, adds them, frees the
    slots and stores y (store_y of the summed accumulators). With W as A (swap) every value is sent, 4 of a
    thread's 8-column group a store; with x as A only warps with rows of x's tile (BM) store (a warp 16 rows of
    its warpgroup's 64), and at BM = 8 only a thread's first row (its values h = 0 of each 8-column group,
    wgmma.Accumulator.coords): those of two groups a store. The count of stores is what costs, not their bytes:
    on the H200 (s34-ksplit-rows-*), each thread's rows within M in 8-byte stores took 2112 x 7168, M = 32 from
    6.6 to 6.8 us and 4096 x 7168, M = 128 from 12.6 to 14.9 (at M = 1, 4096 x 7168, 8.85 -> 8.6). `i`: the tile's
    index among this CTA's `count` (the barriers' phase); the last tile's slots are not freed, so a sender leaves
    once its last partial is stored, with no peer's arrival still to come."""
    last = ksplit - 1
    me = warp * 32 + lane
    vals = [v for a in accs for v in a.values()]
    # a store's values: 4 of a thread's 8-column group (rows h = 0, 1), or at BM = 8 rows h = 0 of two groups
    groups = len(vals) // 4
    sends = ([[4 * j + t for t in range(4)] for j in range(groups)] if swap or BM > 8 else
             [[8 * k + t for t in (0, 1, 4, 5)][:4 if 2 * k + 1 < groups else 2] for k in range(-(-groups // 2))])
    # the warps that store: those with rows of the tile
    warps = 4 * wgs if swap else sum(min(4, max(0, -(-(BM - 64 * w) // 16))) for w in range(wgs))
    with dsl.if_(rank < last):
        with dsl.if_(i > 0):
            red_free.wait(0, (i - 1) % 2 == 1)
        bar = red_full.remote_view(last).ptr(0)
        with dsl.if_(g * 64 + warp * 16 < BM) if warps < 4 * wgs else contextlib.nullcontext():
            for j, idx in enumerate(sends):
                cpasync.dsmem_store(dsl.vector_of([vals[k] for k in idx]),
                                    cpasync.cluster_address(red, [rank, g, j, me * 4], last), bar)
    with dsl.else_():
        has = kblocks >= ksplit
        with dsl.if_(has):
            with dsl.if_(dsl.warp_idx() == 4):  # one thread (elected in the first consumer warp) arms it
                red_full.arrive_expect_tx(0, last * warps * 32 * 4 * sum(len(idx) for idx in sends))
            red_full.wait(0, i % 2 == 1)
        for s in range(last):
            for j, idx in enumerate(sends):
                got = red.load_vec(len(idx), s, g, j, me * 4)
                for t, k in enumerate(idx):
                    vals[k] = dsl.select(has, vals[k] + got[t], vals[k])
        with dsl.if_(has & (i + 1 < count)):
            cuda.warp_sync()  # the warp's reads of the slots done before one lane frees them
            with dsl.if_(dsl.elect_sync()):
                for s in range(last):
                    red_free.remote_view(s).arrive(0)
        n = len(vals) // len(accs)
        store_y(tuple(wgmma.Accumulator.from_values(AN, vals[r * n:(r + 1) * n]) for r in range(len(accs))))


def _chain_sum(accs):
    """One accumulator holding the sum of `accs` (a tuple of chains)."""
    if len(accs) == 1:
        return accs[0]
    vals = [a.values() for a in accs]
    out = vals[0]
    for v in vals[1:]:
        out = [a + b for a, b in zip(out, v)]
    return wgmma.Accumulator.from_values(accs[0].n, out)


def _epilogue(acc, y, ws, counters, scales, w_scale, x_scale, tile, kb0, kb1, kblocks, M, N, BN, BM, EM, R, wgs, epi,
              epi_y, y_atom, diag=None, m0=0, counter=None, store="tma", pre=None, epi_y16=None, staged=False):
    """Writes this segment's tile (rows m0.. of x and y; its split-K count in
    counters[counter] and its partials in that row of ws, tile's by default).
    A segment of all K writes y from its registers: through shared memory,
    EY rows of x at a time, and TMA stores ("tma"), or each register
    straight to y ("direct"). Any other segment adds its f32 partial,
    straight from the registers, into the workspace row (in the registers'
    fragment order) with vector reductions (red.global.add.v4.f32, no
    waiting), and the segment that completes the tile's K steps reads the
    sum back into its registers, zeroes the row for the next call and writes
    y as a whole-K segment does. `staged` (two consumer warpgroups, or kwg,
    where the fragment-order path measured up to 14% slower): the partial
    goes through the tile into the row in y's order, and the last segment
    stores y from the sum (`staged_split`).
    `pre`: the scales loaded when the consumers start or before the tile's K
    loop: W's per-tensor "w"; x's in shared memory "xs" (published by
    tile_free from each thread's "xs_share") or, storing directly, the
    thread's own "xs_own"; this thread's W rows' "rows" by (m64 block,
    half). `epi_y16`: bf16 y's tile as 16-byte rows (stmatrix's view of
    epi_y's bytes), or None (scalar stores into epi_y)."""
    consumers = 128 * wgs
    # from BM = 128 on, the thread index is read here, so each register's address below is formed at
    # its store (a base plus a constant) rather than hoisted out of the persistent loop: hoisted, the
    # 64-256 addresses spilled (BM = 128: 224 bytes of stack, 256: 1,600). Up to BM = 64 they fit in
    # registers, and hoisted they are faster (measured: 2-10% at M = 64, split K)
    tid = dsl.thread_idx(hoist=BM <= 64)
    lane, warp, g = (tid % 32).to(Index), (tid // 32 % 4).to(Index), (tid // 128 - 1).to(Index)
    ctid = tid - 128

    def scaled(v, n, m, w_row=None, x=None):
        """v scaled for W row n (its scale `w_row` if preloaded) and this CTA's x row m (its scale `x` if
        preloaded)."""
        if w_scale == "tensor":
            v = v * pre["w"]
        elif w_scale == "row":
            v = v * (w_row if w_row is not None else scales[0][dsl.min(n, N - 1)])
        if x_scale == "token":
            v = v * (x if x is not None else scales[1][dsl.min(m0 + m, M - 1)])
        return v

    def each(acc, c, rows=EM):
        """(W row, x row, value, the W row's preloaded scale, the x row's (8-row group, parity)) of the
        accumulators `acc` whose x row is in chunk c (of `rows` rows)."""
        for r, j, row, col, v in _chunk_registers(acc, c, rows, lane, warp):
            w = pre["rows"][r, j // 2 % 2] if pre["rows"] else None
            yield (g * R + r) * 64 + row, col, v, w, (j // 4, j % 2)

    def tile_free():
        """No thread writes the tile until the last TMA store from it has read it; x's scales published."""
        if store == "tma":
            _tile_read()
            for i, v in pre["xs_share"]:
                with dsl.if_(ctid + i < BM):
                    pre["xs"][ctid + i] = v
            cuda.barrier_sync(1, consumers)

    n0 = tile * BN

    def write_y(acc):
        """y's tile from the accumulators (all of the tile's K), scaled."""
        if store == "direct":  # each register straight to y (no shared memory, barrier or TMA store)
            # every scale load first (clamped in-bounds), then the stores: a load after a store to y
            # waits for it (y might alias the scales), one memory latency per register (measured: row
            # scales at 24576 x 1536, M = 8, 12% slower)
            got = [(m0 + m, n0 + nn, scaled(v, n0 + nn, m, w, pre["xs_own"][m8] if pre["xs_own"] else None)
                    .to(y.dtype)) for c in range(BM // EM) for nn, m, v, w, m8 in each(acc, c)]
            for m, n, v in got:
                with dsl.if_((m < M) & (n < N)):
                    y[m, n] = v
            return
        # y's tile EY rows at a time: each chunk's writes and TMA store, which the next writes wait for
        # (the next chunk's, or the next tile's epilogue's)
        EY = epi_y.static_shape[0]  # y_rows(BM, EM, ...), as the kernel laid the tile out

        def out(v, nn, m, w):  # v scaled as y holds it: x's scale from shared memory
            return scaled(v, n0 + nn, m, w, None if pre["xs"] is None else pre["xs"][m])
        for c in range(BM // EY):
            with dsl.if_(M > m0 + c * EY):  # the same in every thread: chunks wholly past M are skipped
                tile_free()
                # the chunk's values scaled once the tile is free (every scale preloaded: nothing to wait for)
                if epi_y16 is not None:
                    for row, regs in _y_matrices(acc, c, epi_y, g, R, lane, warp, out, pre["rows"]):
                        cuda.stmatrix(epi_y16, row, 0, regs, trans=True)  # transposed 8 x 8 blocks
                else:
                    for nn, m, v, w, _ in each(acc, c, EY):
                        epi_y[m - c * EY, nn] = out(v, nn, m, w).to(y.dtype)
                cuda.fence_proxy_async()  # generic writes to the tile before the TMA reads it
                cuda.barrier_sync(1, consumers)
                with lang.WarpRole(4):
                    cpasync.copy(y_atom, [m0 + c * EY, n0], epi_y)  # rows past M are clipped by the TMA
                    cpasync.bulk_commit_group()

    cidx = tile if counter is None else counter  # the tile's count and workspace row (of this CTA's x rows)

    def partial_places(acc):
        """(m64 block, register quad q, its column in the workspace's row, whether its x rows are in M) of
        this thread's registers: fragment order, registers 4q..4q + 3 of every thread together, so a warp's
        quad is 512 contiguous bytes (whole lines: y's layout would scatter a warp's stores over 8-32
        lines). A quad holds x rows 8q + 2·(lane % 4) and the next; those past M hold zeros."""
        t = warp * 32 + lane  # the thread in its warpgroup
        for r, a in enumerate(acc):
            for q in range(a.count // 4):
                m = wgmma.Accumulator.coords(4 * q, lane, warp)[1]
                yield r, q, (((g * R + r) * (a.count // 4) + q) * 128 + t) * 4, m0 + m < M

    def rows_in_m(body):
        """body(check): the workspace's reductions or clearing, each checking that its x rows are in M
        only in a tile that reaches past M (x rows past M hold zeros: nothing to add; the checks, where
        every row is in M, cost 1-7% at 2112 x 7168, M = 64-256)."""
        with dsl.if_(M >= m0 + BM):
            body(False)
        with dsl.else_():
            body(True)

    def split(acc):
        """(the tile's sum, whether this segment writes y): this segment's partial added into the workspace
        (row cidx, f32 [tiles·ms, BN·BM]: every register of the tile has a place, rows past N and M too,
        so no bounds) straight from the registers by 16-byte reductions that do not wait; the segment that
        completes the tile's K steps reads the sum back into its registers and zeroes the row for the next
        call."""
        vals = [a.values() for a in acc]
        places = list(partial_places(acc))
        if diag == "no_split_epilogue":  # diagnostics only (y is not written)
            return acc, dsl.Boolean(False)
        if diag != "no_red":
            def add(check):
                for r, q, i, ok in places:
                    with dsl.if_(ok) if check else contextlib.nullcontext():
                        cuda.red_add(ws, (cidx, i), dsl.vector_of(vals[r][4 * q:4 * q + 4]))
            rows_in_m(add)
        cuda.thread_fence()  # every reduction of this thread before the unit counts as arrived
        # every thread's reductions fenced before the count (and every thread past its read of the flag
        # the count is published in, at the last segment, before the count writes it again)
        cuda.barrier_sync(1, consumers)
        last = _last_arrival(counters, cidx, kb1 - kb0, kblocks, consumers)
        if diag == "split_no_gather":  # diagnostics only (y is not written)
            return acc, dsl.Boolean(False)

        def gather():
            cuda.thread_fence()
            sums = [list(v) for v in vals]
            got = [ws.load_vec(4, cidx, i) for _, _, i, _ in places]  # every load first: one memory latency
            zero = dsl.zeros(4)
            for (r, q, i, ok), v in zip(places, got):
                sums[r][4 * q:4 * q + 4] = [v[e] for e in range(4)]

            def clear(check):
                for r, q, i, ok in places:
                    with dsl.if_(ok) if check else contextlib.nullcontext():
                        ws.store_vec(zero, cidx, i)
            rows_in_m(clear)
            return tuple(wgmma.Accumulator.from_values(a.n, v) for a, v in zip(acc, sums))
        return dsl.cond(last, gather, lambda: acc), last

    def staged_split():
        """This segment's partial staged through the tile, EM x rows at a time, and added into the
        workspace row in y's order (x row by x row, BN values each: every thread 4 consecutive values,
        coalesced 16-byte reductions); the segment that completes the tile's K steps reads the sum back
        in that order, zeroes the row, scales the sum and stores y 4 columns at a time."""
        quads = BN // 4

        def pieces(rows, r0=0):
            """(x row, quad, W row, in bounds) of the 4-value pieces a thread handles: rows r0.. of this
            CTA's (m0..)."""
            for i in range(-(-rows * quads // consumers)):
                e = ctid + i * consumers
                m, q = e // quads, e % quads
                yield m, q, n0 + q * 4, (m < rows) & (m0 + r0 + m < M) & (n0 + q * 4 < N)

        for c in range(BM // EM):
            if c == 0:
                tile_free()
            for nn, m, v, _, _ in each(acc, c):
                epi[m - c * EM, nn] = v
            cuda.fence_proxy_async()  # generic writes to the tile before the TMA (or the others) read it
            cuda.barrier_sync(1, consumers)

            def add(check, c=c):
                for m, q, n, ok in pieces(EM, c * EM) if diag != "no_red" else ():
                    # x rows past M add nothing (zeros)
                    with dsl.if_((m < EM) & (m0 + c * EM + m < M) if check else m < EM):
                        cuda.red_add(ws, (cidx, (c * EM + m) * BN + q * 4), epi.load_vec(4, m, q * 4))
            rows_in_m(add)
            if c == BM // EM - 1:
                cuda.thread_fence()  # every reduction of this thread before the unit counts as arrived
            cuda.barrier_sync(1, consumers)  # the tile is free again (and, last, every reduction fenced)
        last = _last_arrival(counters, cidx, kb1 - kb0, kblocks, consumers)
        with dsl.if_(last):
            cuda.thread_fence()
            # every load first, the partial sums and their scales (clamped in-bounds addresses, no
            # branch between them), then the stores: one memory latency, not one per piece
            got = []
            for m, q, n, ok in pieces(BM):
                i = dsl.min(m, BM - 1) * BN + q * 4
                v = ws.load_vec(4, cidx, i)
                mc, nc = dsl.min(m0 + m, M - 1), dsl.min(n, N - 4)
                got.append((m0 + m, n, i, ok, dsl.vector_of([scaled(v[t], nc + t, mc - m0) for t in range(4)])))
            zero = dsl.zeros(4)
            for m, n, i, ok, v in got:
                with dsl.if_((m < m0 + BM) & (m < M)):  # where the reductions added (clamped pieces: none)
                    ws.store_vec(zero, cidx, i)
                with dsl.if_(ok):
                    y.store_vec(v.to(y.dtype), m, n)  # 4 columns of a row: 8 (bf16) or 16 (f32) bytes

    whole = (kb0 == 0) & (kb1 == kblocks)
    if diag == "whole_k_only":  # diagnostics: no split path in the kernel (right where every segment is whole)
        write_y(acc)
        return
    if staged:
        with dsl.if_(whole):
            write_y(acc)
        with dsl.else_():
            if diag != "no_split_epilogue":  # diagnostics only (y is not written)
                staged_split()
        return
    # one copy of y's writes, for a whole-K segment's registers or a split tile's sum
    final, go = dsl.cond(whole, lambda: (acc, whole), lambda: split(acc))
    with dsl.if_(go):
        write_y(final)


def _last_arrival(counters, tile, steps, kblocks, consumers):
    """True in every consumer thread of the segment whose `steps` K steps
    complete `tile`'s `kblocks`; that segment resets the counter for the next
    call. One thread counts, the others learn the answer through shared memory.
    Called past a barrier of the consumers, each of their writes fenced."""
    k = dsl.current_kernel()
    key = ("gemm_last",)
    if key not in k.scratch:
        k.scratch[key] = lang.SMEMPool().alloc((1,), "i32")
    flag = k.scratch[key]
    with dsl.if_(dsl.thread_idx() == 128):
        old = cuda.atomic_add(counters, (tile,), steps)
        is_last = old + steps == kblocks
        flag[0] = dsl.select(is_last, Int32(1), Int32(0))
        with dsl.if_(is_last):
            counters[tile] = Int32(0)
    cuda.barrier_sync(1, consumers)
    return flag[0] != 0


# --------------------------------------------------------------------------- x quantization

# Where Gemm(quantize="auto") quantizes bf16 x in the GEMM: x tiles of up to FUSED_MAX_ROWS rows, and only
# where the grid streams at least FUSED_MIN_W_ROWS rows of W a stage for each x row a CTA's three quantizing
# warps convert (`fused_w_rows`: CTAs x BN / BM); with fewer, the conversion falls behind W's stream. Measured
# on the H200 (2026-12-01, s14-fused-probe-2, the final protocol, against quantize_x then the GEMM at the
# same config): 1,024-4,096 W rows an x row, fused 0.1-3.6 us a call faster at BM = 8 and 16 on every shape
# but one point (16384 x 16384, M = 1: 0.2 slower); 896, 0.3-0.7 faster at BM = 8, even at BM = 16; 448-512,
# 0.7-3.2 us slower. From BM = 32 on fused was slower at every shape (s13-fused-probe-2: up to 2.4x at
# BM = 32): every CTA quantizes all of x's tile again for each W tile it streams. With block scales the
# W-rows bar does not apply: their 1x128 quantize_x takes 2.4-2.9 us, and fused was faster even at 448-528
# W rows (s15 full runs, M = 16: 7168 x 2048 at 16/64/2/1 kwg 7.8-7.9 us against 8.3-8.5, 2112 x 7168 at
# 16/64/2/4 kwg 8.5-8.6 against 9.9-10.0).
FUSED_MAX_ROWS = 16
FUSED_MIN_W_ROWS = 896
FUSED_WIDE_MIN_W_ROWS = 1024  # what `fused_config`'s wider tiles must stream instead (see there)
QUANTIZE_THREADS = 512  # a token's row per CTA: 16 B of it per thread and pass


@dsl.kernel(block=lambda granularity: (QUANTIZE_THREADS if granularity == "token" else 128,), name="quantize_x",
            pdl=True)
def quantize_x_kernel(x: dsl.Tensor, xq: dsl.Tensor, sx: dsl.Tensor, *, granularity):
    """x (bf16 [M, K]) -> e4m3 [R, K] and scales: per token (sx [R]; a CTA
    per row, its amax reduced over the CTA) or per 1x128 block (sx [R,
    ceil(K/128)] transposed; a warp per block). Rows M..R-1 (padding up to
    the GEMM's tile) are zeros. Launched with programmatic dependent launch,
    it lets the GEMM after it launch at once (which streams W until it waits
    for xq)."""
    cuda.griddepcontrol_launch_dependents()
    cuda.griddepcontrol_wait()  # x, xq and sx may be the earlier kernels' (the previous GEMM reads xq)
    M, K = x.shape
    if granularity == "token":
        row, t = dsl.block_idx(), dsl.thread_idx()
        valid, src = row < M, dsl.min(row, M - 1)  # a padding row reads a real one and keeps nothing
        step = QUANTIZE_THREADS * 8
        loop = dsl.range(t * 8, K, step, carry=(dsl.Float32(0.0),))
        for c, (a,) in loop:
            dsl.yield_(dsl.max(a, dsl.abs(x.load_vec(8, src, c).to(Float32)).reduce("max")))
        amax = cuda.cta_reduce(loop.results[0], "max")
        scale = dsl.max(amax, 1e-12) / 448.0
        inv = dsl.select(valid, 1.0 / scale, dsl.Float32(0.0))
        for c in dsl.range(t * 8, K, step):  # the row again, from L1/L2
            xq.store_vec((x.load_vec(8, src, c).to(Float32) * inv).to(dsl.Float8E4M3FN), row, c)
        with dsl.if_(t == 0):
            sx[row] = scale
    else:
        warp = dsl.block_idx() * 4 + dsl.warp_idx()
        lane = dsl.lane_idx()
        kb = (K + 127) // 128
        with dsl.if_(warp < xq.shape[0] * kb):
            row, blk = warp // kb, warp % kb
            c = blk * 128 + lane * 4
            ok = (c < K) & (row < M)
            v = dsl.cond(ok, lambda: x.load_vec(4, row, dsl.min(c, K - 4)).to(Float32), lambda: dsl.zeros(4))
            amax = cuda.warp_max(dsl.abs(v).reduce("max"))
            scale = dsl.max(amax, 1e-12) / 448.0
            with dsl.if_(c < K):  # a padding row's zeros too
                xq.store_vec((v * (1.0 / scale)).to(dsl.Float8E4M3FN), row, c)
            with dsl.if_(lane == 0):
                sx[blk, row] = scale  # transposed: [ceil(K/128), block_scale_columns(R)]



# --------------------------------------------------------------------------- specializations

SMEM_BYTES = 227 * 1024 - 2048  # dynamic shared memory; the rest for static (mbarriers, counters)


EPI_BYTES = 16 * 1024  # the epilogue tile's budget (f32 EM x BN)


def consumer_regs(wgs, producer=40):
    """Registers a consumer thread raises to (setmaxnreg): up to 232, as many
    as the SM's 64 K leave beside the producer's warpgroup at `producer`; None
    where that is not above what a thread holds at launch (one consumer
    warpgroup: 256, and an .inc below a warp's count is undefined in PTX).
    (ptxas, as nvJitLink runs it, ignores setmaxnreg today: "C7504 ...
    ignored to maintain compatibility across compilation units"; every warp
    keeps the kernel's flat allocation, e.g. 54 registers at BM = 8.)"""
    regs = min(232, (65536 - 128 * producer) // (128 * wgs) // 8 * 8)
    return regs if regs > lang.register_budget(128 * (wgs + 1)) else None


def _whole_rows(BM, most):
    """The most whole 8-row groups, up to `most` rows, that divide BM (the epilogue's chunks)."""
    return next(e for e in range(max(8, min(BM, most)) // 8 * 8, 7, -8) if BM % e == 0)


def epi_rows(BM, BN):
    """EM, the x rows of the epilogue tile (f32): whole 8-row groups within EPI_BYTES, dividing BM."""
    return _whole_rows(BM, EPI_BYTES // (4 * BN))


def y_rows(BM, EM, y_bits):
    """EY, the x rows of y's tile in the epilogue tile's bytes (EM rows of f32): up to twice EM for bf16 y."""
    return _whole_rows(BM, EM * 32 // y_bits)


def stage_bytes(BM, BN, block_scaled=False, fused=False, kc=1, swap=True):
    """Shared memory of a ring stage: W and x tiles (of kc K steps), x's bf16
    tile as loaded (fused quantization), x's scales (block scaling or fused),
    and (swap=False) x's pad rows (x_pad_rows)."""
    return kc * ((BM + BN) * KBYTES + (max(BM, 32) * 4 if block_scaled or fused else 0)) + (
        2 * BM * KBYTES if fused else 0) + (0 if swap else x_pad_rows(BM, kc) * KBYTES)


def x_pad_rows(BM, kc=1):
    """swap=False: x's rows a ring stage holds past its kc·BM, so the 64-row A tiles of the wgmmas (each
    consumer warpgroup's 64 rows, from a tile of BM) of its last K step read no row of the next stage: 64·wgs
    - BM, or with kc > 1 whole K steps of BM rows (the stage is [kc, BM, 128 bytes] boxes)."""
    pad = -BM % 64
    return pad if kc == 1 else -(-pad // BM) * BM


def deepest_stages(BM, BN, w_dtype="f8E4M3FN", block_scaled=False, fused=False, kc=1, swap=True, ksplit=1):
    """The deepest ring that fits beside the epilogue tile (f32 EM x BN; swap=False: none) and, with the K split
    over ksplit CTAs, the others' f32 partials."""
    per_stage = stage_bytes(BM, BN, block_scaled, fused, kc, swap)
    return (SMEM_BYTES - 1024 - (epi_rows(BM, BN) * BN * 4 if swap else 0) - ksplit_bytes(BM, BN, ksplit, swap)
            ) // per_stage


def ksplit_bytes(BM, BN, ksplit, swap=False):
    """Shared memory of the K split's partials: the ksplit - 1 others' f32 accumulators, in the last CTA's (all
    CTAs have the same layout): x as A 64 x BN of each consumer warpgroup, W as A BN x BM."""
    return (ksplit - 1) * (BN * BM if swap else -(-BM // 64) * 64 * BN) * 4


def live_registers(BM, BN, wgs, kwg=False, kc=1, block_scaled=False, swap=True, row_scaled=True):
    """A consumer thread's registers the accumulators take, and ~32 more: R m64 blocks of BM / 2 each, and
    with block scales and kc > 1 as many again for each K step's partial of a stage (ptxas serialized the
    wgmmas of 128/64/1 block-scaled at kc = 4, and spilled at 256 rows with kc = 2); swap=False: one 64 x BN
    accumulator, BN / 2, and with W scaled per row (row_scaled) its BN / 4 row scales, loaded before the K
    loop (`row_scales`), or with block scales a partial of BN / 2 for each K step of a stage."""
    if not swap:  # (block scales: and each K step's partial of a stage, kc · BN / 2)
        return BN // 2 * (1 + kc if block_scaled else 1) + (BN // 4 if row_scaled else 0) + 32
    R = BN // (64 * (1 if kwg else wgs))
    return R * BM // 2 * (1 + kc if block_scaled and kc > 1 else 1) + 32


def w_splits(BN, kc, ms):
    """Whether ms CTAs sharing W (the M split) can each load a part of its tile: kc / ms of a stage's K steps,
    or at a K step a stage BN / ms of its rows, a whole number of 8-row swizzle atoms."""
    return kc % ms == 0 if kc > 1 else BN % (8 * ms) == 0


def thread_registers(wgs):
    """The registers a thread has at launch in a CTA of wgs consumer warpgroups and the producer's (ptxas fits
    the whole kernel in them; setmaxnreg is ignored, consumer_regs): lang.register_budget, in 8s (168 at two
    consumer warpgroups, not 65536 / 384 = 170), at most 255."""
    return min(255, lang.register_budget(128 * (wgs + 1)))


def default_chains(BM, R):
    """Accumulator chains per m64 block: as many of 1, 2, 4 as keep the
    extra chains of the R blocks within 32 registers a thread (each BM/2),
    so the small-M kernels stay within 128 (two CTAs per SM). Split chains add
    fewer wgmma products into each f32 accumulator: on the H200 the max
    error against float32 fell by up to 3.3x (1.0-3.3x at 13 fp8 problems;
    16384 x 16384, M = 8: 9.9e-3 -> 3.0e-3 of max |y|) at the same speed
    (within 2%; `benchmarks/diag/config_probe.py`, s10-config-probe-1/-2)."""
    return next(c for c in (4, 2, 1) if c == 1 or R * (c - 1) * BM // 2 <= 32)


SM_SMEM, CTA_RESERVED, STATIC_SMEM = 228 * 1024, 1024, 2048  # an SM's shared memory; per CTA: the driver's, ours


def two_per_sm_stages(BM, BN, w_dtype="f8E4M3FN", block_scaled=False, fused=False):
    """The deepest ring with which two CTAs share an SM (shared memory only:
    registers allow it up to BM = 32), so the next call's CTAs, launched
    early (programmatic dependent launch), prefetch their W beside this
    call's; measured on the H200: bf16 7168 x 2048, M = 1, 12 stages against
    8: 11.1 -> 8.9 us (benchmarks/diag/overlap_experiment.py)."""
    per_stage = stage_bytes(BM, BN, block_scaled, fused)
    dynamic = SM_SMEM // 2 - CTA_RESERVED - STATIC_SMEM
    return (dynamic - epi_rows(BM, BN) * BN * 4 - 128) // per_stage


def max_stages(BM, BN, w_dtype="f8E4M3FN", block_scaled=False):
    """The default ring: the deepest that fits, up to 8 (deeper rings, a
    config's choice, help where fewer CTAs than SMs stream: measured)."""
    return min(8, deepest_stages(BM, BN, w_dtype, block_scaled))


DIAGS = (None, "no_red", "no_split_epilogue", "x_early", "no_wait", "epi_last", "whole_k_only", "own_rows",
         "stream_only", "stream_no_wait", "split_no_gather", "no_mma", "no_epilogue", "promote_w_only",
         "promote_sx_only", "factors_after", "no_sum", "barriers")


def half_boxes_fit(BM, mc, fused):
    """Whether a kernel can load x in half boxes (gemm_spec's xhalf): halves of
    whole 8-row swizzle atoms, x not split over a cluster (mc) and not loaded
    in bf16 for the kernel to quantize (two boxes a row)."""
    return BM >= 32 and BM % 16 == 0 and mc == 1 and not fused


def _whole(name, v):
    """`v` as a Python int (a numpy integer too), or a ValueError naming the argument (a bool, float or string
    is none)."""
    if isinstance(v, bool) or not hasattr(type(v), "__index__"):
        raise ValueError(f"{name}={v!r}: an integer")
    return operator.index(v)


def gemm_spec(BM, BN=128, wgs=2, stages=None, w_dtype="f8E4M3FN", y_dtype="bf16", w_scale="tensor", x_scale=None,
              l2_w="l2_128b", l2_x="l2_128b", w_hint="evict_first", x_hint="evict_last", mc=1, ms=1, kwg=False,
              pdl=True, profile=None, chains=None, diag=None, store=None, xhalf=False, kc=1, swap=True, ksplit=1):
    """One GEMM kernel: BM (the activations' tile, a multiple of 8 up to 256),
    BN (W rows per CTA tile: 64 · wgs · R), the ring depth, dtypes, scale modes,
    and the L2 promotion / cache hint of each operand (W's promotion 128B:
    measured on the H200 at the table's configs, 256B, DeepGEMM's, streamed W
    3-6% slower at M <= 8 and 2-4% at 16384 x 16384, none as fast as 128B;
    results/h200-2026-12-01-s15-config-probe-l2w.jsonl). `mc` CTAs of a cluster
    share x: each loads 1/mc of every x tile and multicasts it to all, for
    their mc neighbouring W tiles (x's traffic from L2 / mc). `ms` CTAs of a
    cluster share W instead (M split): each takes its own BM rows of x
    (ms·BM in all) and loads 1/ms of every W tile, multicast to all (twice
    the CTAs streaming a W tile's bytes once from DRAM, each a BM-row
    wgmma). `kwg`: the two consumer warpgroups (wgs = 2) take alternate K
    steps of the whole tile instead of half its rows each (one waits for
    and promotes its stage while the other's wgmmas run), summed through
    shared memory before the epilogue. `profile` (events per
    warp) builds the traced variant: an int64 profile buffer follows the scales
    (nvtma.profile); "clocks" (diagnostics) builds one whose warpgroups carry
    their SM-clock sums in registers and add them into an int64 buffer of
    CLOCK_WORDS words per CTA and warpgroup once, at their end (CLOCKS).
    `pdl` (the default) builds it for programmatic dependent launch: its first
    W stages load before it waits for the stream's earlier kernels, and it lets
    the next kernel launch once its own loads are issued (measured on the H200
    in CUDA graphs of back-to-back calls: up to 22% less time per call on the
    small shapes, 1% at 16384 x 16384); pdl="early" lets it launch as soon as
    those first stages are issued. `x_scale` (fp8 W): "token" (e4m3 x with
    a scale per row, the default), "block" (e4m3 x with 1x128 block
    scales, the default with block-scaled W), or "fused" (bf16 x,
    quantized in the kernel: a scale per row and K step of 128, each
    stage's partial promoted with them; with any W scaling). `store`: a
    tile whose K is one segment writes y through shared memory and TMA
    stores ("tma"), or each
    accumulator register straight to y ("direct", the default at BM = 8;
    measured on the H200: 1-3% faster there, 7168 x 2048, M = 1 5.48 ->
    5.31 us, and 5-40% slower from BM = 16 on). `diag` (diagnostics only,
    y may then be wrong): "no_red" leaves out the split-K partials'
    workspace reductions,
    "no_split_epilogue" all of a split's epilogue, "x_early" loads the
    prefetched stages' x before the wait for the earlier kernels too,
    "no_wait" waits for them only at the end, "epi_last" places the
    epilogue tile after the rings (its place before 2026-12-02),
    "whole_k_only" builds no K-split path at all (y right only with splits
    = 1) (what these cost: benchmarks/diag/config_probe.py), "own_rows" has
    the M split's CTA past M keep its own rows, its x box partly past M
    (benchmarks/diag/m_sweep.py), "stream_only" streams W through the
    ring and nothing else (no x, wgmmas or epilogue; y not written),
    "stream_no_wait" the same with no wait for the earlier kernels,
    "split_no_gather" has a split's last segment neither read the sum back
    nor write y (benchmarks/diag/stream_floor.py), "no_mma" loads W and x
    and runs each tile's epilogue as built, of zero accumulators, with no
    wgmmas, "no_epilogue" runs the wgmmas and no epilogue, "promote_w_only" / "promote_sx_only"
    promote block-scaled partials with W's block scale alone / x's 1x128 scale alone (what the factors cost),
    "factors_after" has x-as-A block scaling over two warpgroups read a stage's factors after its wgmmas and
    release the slot after the promotion (as with one), "no_sum" has a cluster's K split store y from
    each CTA's own partial (no sum), "barriers" has a cluster's CTAs meet at a cluster barrier at the start
    and the end (as before 2026-12-04's thirty-first session). `xhalf`: a CTA whose x tile reaches past M
    loads it as one or two boxes of BM / 2 rows (the second ending 0-7 rows
    past M), not one box of BM rows partly past M (BM a multiple of 16 from
    32 on, mc = 1, e4m3 or bf16 W's x); measured on the H200: 10-24% faster
    where M < BM = 128, 2-5% slower at BM = 64, and 20-33% slower at whole
    tiles of some configs (s19-m-sweep), so Gemm builds it only for the
    first (`Gemm.plan`). `kc`: K steps a stage, each operand's stage one
    TMA box of kc K steps (W and x passed as `gemm_operand_view`s, and with
    block scaling x's scales a box of kc rows; not with fused quantization,
    mc, kwg or xhalf, and with ms > 1 a multiple of ms: each CTA of the
    cluster loads kc / ms of W's K steps); `stages` then counts these stages. `swap` (the
    default): W is the wgmmas' A, its tile's rows their M (BN a multiple of
    64 a warpgroup); swap=False: x is A, each of the wgs = ceil(BM / 64)
    consumer warpgroups 64 of its rows, and W's tile B (BN any multiple of 8
    up to 256: as many tiles as SMs without a K split, e.g. 2112 rows in
    132 tiles of 16), y stored straight from the registers two columns a
    store (so N even and y's rows 4- or 8-byte aligned: Gemm's checks ask
    N a multiple of 8 and 16-byte rows); whole-K tiles, W
    scaled per tensor or per row (or bf16) with x in e4m3 with a scale per
    token (or bf16), or W's 128x128 block scales with x's 1x128 ones (BN
    dividing 128, or 256: each thread's partials promoted with two x rows'
    scales and one W block's, not a scale per accumulator column as with W
    as A), and not with mc, kwg or xhalf (with the M split, ms, each CTA of a
    cluster takes its own BM rows of x, and W's tile is multicast). `ksplit`
    2 or 4 (either swap): each tile's K steps split over the CTAs of a
    cluster (each a part, every one but the last storing its f32 partial
    into the last's shared memory with st.async, which sums them and stores
    y: no workspace; not with ms, mc or kwg)."""
    BM, BN, wgs, mc, ms, kc, ksplit = (_whole(*a) for a in (("BM", BM), ("BN", BN), ("wgs", wgs), ("mc", mc),
                                                            ("ms", ms), ("kc", kc), ("ksplit", ksplit)))
    stages = None if stages is None else _whole("stages", stages)
    given_chains = chains is not None  # checked against the registers below (default_chains keeps within them)
    chains = None if chains is None else _whole("chains", chains)
    if w_dtype not in (F8, "bf16"):
        raise ValueError(f"w_dtype={w_dtype!r}: {F8!r} (e4m3) or 'bf16'")
    if y_dtype not in ("bf16", "f32"):
        raise ValueError(f"y_dtype={y_dtype!r}: 'bf16' or 'f32'")
    if not 1 <= wgs <= 4:
        raise ValueError(f"wgs={wgs}: 1 to 4 consumer warpgroups")
    fp8 = w_dtype == F8
    if diag not in DIAGS:
        raise ValueError(f"diag={diag!r}: one of {', '.join(map(repr, DIAGS))}")
    if pdl not in (False, True, "early"):
        raise ValueError(f"pdl={pdl!r}: False, True or 'early'")
    if profile is not None and profile != "clocks" and \
            (isinstance(profile, bool) or not isinstance(profile, int) or profile < 1):
        raise ValueError(f"profile={profile!r}: events per warp (an int >= 1) or 'clocks'")
    if profile == "clocks" and diag in ("stream_only", "stream_no_wait", "no_mma"):
        raise ValueError(f"profile='clocks' with diag={diag!r}: the clocks are the wgmma loop's")
    if diag in ("stream_only", "stream_no_wait", "no_mma") and (kwg or x_scale == "fused"):
        raise ValueError(f"diag={diag!r}: not with kwg or x_scale='fused' (their consumers and quantizers read x)")
    store = store or ("direct" if BM == 8 or swap is False else "tma")
    if store not in ("tma", "direct"):
        raise ValueError(f"store={store!r}: 'tma' (y through shared memory and TMA stores) or 'direct'")
    if BM % 8 or not 8 <= BM <= MAX_ROWS:
        raise ValueError(f"BM={BM}: a multiple of 8 in [8, {MAX_ROWS}]")
    if kwg and wgs != 2:
        raise ValueError(f"kwg with wgs={wgs}: two consumer warpgroups take alternate K steps")
    rwgs = 1 if kwg else wgs  # warpgroups the tile's rows are split over
    if not isinstance(swap, bool):
        raise ValueError(f"swap={swap!r}: True (W the wgmmas' A) or False (x their A)")
    if not swap:
        if wgs != x_as_a_tile(BM)[1]:
            raise ValueError(f"swap=False with BM={BM}: wgs={wgs}, but each consumer warpgroup takes 64 rows of x "
                             f"(wgs = {x_as_a_tile(BM)[1]})")
        if BN % 8 or not 8 <= BN <= 256:
            raise ValueError(f"swap=False with BN={BN}: the wgmmas' n, a multiple of 8 in [8, 256]")
        if x_scale == "fused" or (x_scale == "block") > (w_scale == "block") or mc != 1 or kwg or xhalf:
            raise ValueError("swap=False: W scaled per tensor or row (or bf16) with e4m3 x scaled per token (or bf16 "
                             "x), or W's 128x128 block scales with x's 1x128 ones, and not with mc, kwg or xhalf")
        if w_scale == "block" and 128 % BN and BN % 128:
            raise ValueError(f"swap=False with BN={BN} and block-scaled W: BN divides 128 or is 256, so each "
                             "8-column group of the tile's W rows is within one block of 128 rows")
        if diag not in (None, "x_early", "no_wait", "stream_only", "stream_no_wait", "no_mma", "no_epilogue",
                        "factors_after", "no_sum", "barriers"):
            raise ValueError(f"diag={diag!r}: not with swap=False (no split-K path, no epilogue tile)")
        if store != "direct":
            raise ValueError(f"store={store!r}: swap=False stores y straight from the registers ('direct')")
    elif BN % (64 * rwgs) or not 64 * rwgs <= BN <= 256:
        raise ValueError(f"BN={BN} with {wgs} consumer warpgroups: a multiple of {64 * rwgs} up to 256")
    if ksplit not in (1, 2, 4) or ksplit > 1 and (ms > 1 or mc > 1 or kwg or diag not in (
            None, "x_early", "no_wait", "factors_after", "no_sum", "barriers")) or (diag == "no_sum" and ksplit == 1):
        raise ValueError(f"ksplit={ksplit} with ms={ms}, mc={mc}, kwg={kwg}, diag={diag!r}: 1, 2 or 4 CTAs of a "
                         "cluster splitting each tile's K steps, not with the M split (ms), x multicast (mc), kwg or a "
                         "diagnostics build but x_early, no_wait, factors_after, no_sum (that one with ksplit only) "
                         "and barriers")
    if fp8 and w_scale not in ("tensor", "row", "block"):
        raise ValueError(f"w_scale={w_scale!r} for fp8 W: tensor, row or block")
    if not fp8 and (w_scale or x_scale):
        raise ValueError("bf16 W takes no scales")
    if fp8:
        x_scale = x_scale or ("block" if w_scale == "block" else "token")
        if x_scale not in ("token", "block", "fused"):
            raise ValueError(f"x_scale={x_scale!r}: 'token' or 'block' (e4m3 x and its scales), or 'fused' (bf16 "
                             "x, quantized in the kernel)")
        if x_scale != "fused" and (w_scale == "block") != (x_scale == "block"):
            raise ValueError("block-scaled W pairs with 1x128 block-scaled x (x_scale='block') or bf16 x "
                             "(x_scale='fused')")
    fused = fp8 and x_scale == "fused"
    x_dtype = "bf16" if fused else w_dtype
    if fp8 and x_scale == "block" and BM > 32 and BM % 32:
        raise ValueError(f"BM={BM} with 1x128 block-scaled x: a stage's x scales, a TMA box of max(BM, 32) f32 "
                         "values a K step, are whole 128-byte rows, so BM is at most 32 or a multiple of 32")
    if not 1 <= kc <= 8 or kc > 1 and (
            fused or mc != 1 or ms >= 1 and not w_splits(BN, kc, ms) or kwg or xhalf):
        raise ValueError(f"kc={kc!r}: 1 to 8 K steps a stage, more than one not with x quantized in the kernel, mc, "
                         f"kwg or xhalf, and with ms = {ms} a multiple of it (each CTA of the cluster loads kc / ms of "
                         "a stage's K steps of W, multicast)")
    room = deepest_stages(BM, BN, w_dtype, w_scale == "block", fused, kc, swap, ksplit)
    if kwg and stages and stages % 2:
        raise ValueError(f"kwg with stages={stages}: an even ring (each consumer warpgroup's K steps then keep to "
                         "their own slots, so its parity waits never see a slot's previous lap)")
    if stages is None:
        stages = min(8, room) // (2 if kwg else 1) * (2 if kwg else 1)
    if room < 2 or stages < 2 or stages > room:
        where = ("beside the epilogue tile" if swap else "with x's pad rows") + (
            " and the K split's partials" if ksplit > 1 else "")
        if room < 2:  # (no ring at all: stages None took min(8, room), and "2 to 1 fit" named no rule)
            raise ValueError(f"BM={BM}, BN={BN}, kc={kc}: the ring takes at least 2 stages, and {room} of "
                             f"{stage_bytes(BM, BN, w_scale == 'block', fused, kc, swap)} bytes fit in shared memory "
                             f"{where}")
        raise ValueError(f"BM={BM}, BN={BN}: a ring of {stages} stages {where}; 2 to {room} fit")
    R = BN // (64 * rwgs) if swap else 1
    live = live_registers(BM, BN, wgs, kwg, kc, w_scale == "block", swap, w_scale == "row")
    if live > thread_registers(wgs):
        more = f" (and, block-scaled, a partial for each of the {kc} K steps)" if kc > 1 and w_scale == "block" else ""
        what = f"{R} m64 accumulators of BM/2 registers a thread{more}" if swap else (
            "x as A: a 64 x BN accumulator of BN/2 registers a thread" + (
                ", BN/4 W row scales" if w_scale == "row" else
                f", and a partial as large for each of the {kc} K steps a stage" if w_scale == "block" else ""))
        raise ValueError(f"BM={BM}, BN={BN} with {wgs} consumer warpgroups: {what}, and ~32 more, exceed the "
                         f"{thread_registers(wgs)} a thread has in a CTA of {128 * (wgs + 1)} threads")
    AN = BM if swap else BN  # the accumulators' n
    if chains is None:  # the default, fewer where the extra chains would not fit the registers (spilled: x as A at
        # four warpgroups, 102 registers a thread, with two chains of 64 columns and row scales)
        chains = next(c for c in (4, 2, 1) if c <= default_chains(AN, R) and (
            c == 1 or live + R * (c - 1) * AN // 2 <= thread_registers(wgs)))
    if chains not in (1, 2, 4):
        raise ValueError(f"chains={chains}: 1, 2 or 4 accumulator chains per m64 block")
    extra = R * (chains - 1) * AN // 2  # the chains past the first
    if given_chains and live + extra > thread_registers(wgs):
        raise ValueError(f"chains={chains} with BM={BM}, BN={BN}: {R} m64 blocks of {chains} accumulators of BM/2 "
                         f"registers a thread, and ~32 more, exceed the {thread_registers(wgs)} a thread has in a CTA "
                         f"of {128 * (wgs + 1)} threads")
    if mc not in (1, 2, 4) or BM % (8 * mc):
        raise ValueError(f"mc={mc} with BM={BM}: 1, 2 or 4 CTAs sharing x, each loading a whole number of "
                         "8-row swizzle atoms of it (BM a multiple of 8·mc)")
    if ms not in (1, 2, 4) or (ms > 1 and mc > 1) or not w_splits(BN, kc, ms):
        raise ValueError(f"ms={ms} with mc={mc}, BN={BN}: 1, 2 or 4 CTAs sharing W (each loading BN / ms of its rows, "
                         "a whole number of 8-row swizzle atoms, or with kc > 1 kc / ms of its K steps), and not with "
                         "mc")
    if xhalf not in (True, False) or (xhalf and not half_boxes_fit(BM, mc, fused)):
        raise ValueError(f"xhalf={xhalf!r} with BM={BM}, mc={mc}{', x quantized in the kernel' if fused else ''}: "
                         "x in half boxes takes BM a multiple of 16 from 32 on, mc = 1 and e4m3 (or bf16 W's) x")
    dyn2 = (None, None)
    if kc > 1:  # W and x as [K / bk, rows, bk] views (gemm_operand_view)
        bk = step_values(w_dtype)
        wt, xt = (dsl.Tensor(d, (None, None, bk), strides=(bk, None, 1)) for d in (w_dtype, x_dtype))
    else:
        wt, xt = dsl.Tensor(w_dtype, dyn2), dsl.Tensor(x_dtype, dyn2)
    types = [wt, xt, dsl.Tensor(y_dtype, dyn2),
             dsl.Tensor("f32", (None, BN * BM)), dsl.Tensor("i32", (None,)), dsl.Int32]
    if fp8:
        types.append(dsl.Tensor("f32", {"tensor": (1,), "row": (None,), "block": dyn2}[w_scale]))
        if not fused:
            types.append(dsl.Tensor("f32", (None,) if x_scale == "token" else dyn2))
    if profile:
        types.append(dsl.Tensor("i64", (None,)))
    sp = gemm_kernel.specialize(types, BM=BM, BN=BN, wgs=wgs, stages=stages, w_scale=w_scale if fp8 else None,
                                x_scale=x_scale if fp8 else None, l2_w=l2_w, l2_x=l2_x, w_hint=w_hint,
                                x_hint=x_hint, **({"profile": profile} if profile else {}),
                                **({"mc": mc} if mc > 1 else {}), **({"ms": ms} if ms > 1 else {}),
                                **({"kwg": True} if kwg else {}),
                                **({"pdl": pdl} if pdl else {}),
                                **({"chains": chains} if chains > 1 else {}), **({"diag": diag} if diag else {}),
                                **({"store": store} if store != "tma" else {}),
                                **({"xhalf": True} if xhalf else {}), **({"kc": kc} if kc > 1 else {}),
                                **({} if swap else {"swap": False}), **({"ksplit": ksplit} if ksplit > 1 else {}))
    sp.info = dict(BM=BM, BN=BN, wgs=wgs, stages=stages, w_dtype=w_dtype, w_scale=w_scale, x_scale=x_scale, mc=mc,
                   ms=ms, kwg=bool(kwg), chains=chains, xhalf=xhalf, kc=kc, swap=swap, ksplit=ksplit)
    return sp


@functools.lru_cache(maxsize=None)
def quantize_x_spec(granularity="token"):
    """bf16 x [M, K] -> e4m3 x and its scales (per token, or per 1x128 block).
    One spec per granularity (its key then hashed once: an eager call with
    bf16 x spent ~40 us of host time building and hashing it again)."""
    dyn2 = (None, None)
    types = [dsl.Tensor("bf16", dyn2), dsl.Tensor("f8E4M3FN", dyn2),
             dsl.Tensor("f32", (None,) if granularity == "token" else dyn2)]
    return quantize_x_kernel.specialize(types, granularity=granularity)


# --------------------------------------------------------------------------- host API

F8 = "f8E4M3FN"


class Config(NamedTuple):
    """How a problem runs: the x tile BM (of each CTA), W rows per tile BN,
    consumer warpgroups, K splits (0: stream K), CTAs sharing x by multicast
    (mc), the ring depth (None: the deepest of up to 8 stages that fits), and
    CTAs sharing W by multicast (ms: M split, each CTA BM rows of x), and
    whether the wgs = 2 consumer warpgroups take alternate K steps (kwg)
    rather than half the rows each, the K steps a stage (kc: each
    operand's stage one TMA box of kc K steps; `stages` then counts these),
    and whether W is the wgmmas' A (swap, the default) or x is (gemm_spec's
    swap=False: BN any multiple of 8, wgs = ceil(BM / 64), splits 1, or 2 or 4:
    each tile's K steps split over a cluster of as many CTAs, gemm_spec's ksplit),
    and with W as A whether splits 2 or 4 are such a cluster's (dsmem: the
    partials summed in the last CTA's shared memory) rather than shares of
    the grid summed through a workspace in global memory (x as A's always are).
    A tuple: the first four values alone are one too."""
    BM: int
    BN: int
    wgs: int
    splits: int
    mc: int = 1
    stages: int | None = None
    ms: int = 1
    kwg: bool = False
    kc: int = 1
    swap: bool = True
    dsmem: bool = False

    @property
    def ksplit(self):
        """CTAs of a cluster splitting each tile's K steps (gemm_spec's ksplit), or 1."""
        return self.splits if self.splits > 1 and (self.dsmem or not self.swap) else 1

    @property
    def grid_splits(self):
        """The K splits of the grid's shares (parts_for's splits): 1 where a cluster splits each tile."""
        return 1 if self.ksplit > 1 else self.splits

    @property
    def short(self):
        """The values without the trailing defaults (what MEASURED and results files hold)."""
        t = tuple(self)
        while len(t) > 4 and t[-1] == Config._field_defaults[Config._fields[len(t) - 1]]:
            t = t[:-1]
        return t


# (N, K, BM, W scaling or "bf16") -> (BN, consumer warpgroups, K splits or 0 for stream K[, mc[, stages[, ms[, kwg
# [, kc[, swap]]]]]]): BM is the smallest tile holding M (with ms > 1 each CTA takes BM / ms of it; with swap False
# x's tile is M rounded up to 8 rows); of the cost model's candidates timed on the H200 (benchmarks/gemm_bench.py,
# 132 SMs, 2026-12-03, three runs in one process each), the one whose worst time against the fastest is least over
# the Ms of a BM (`gemm_bench.py table results/h200-2026-12-03-s28-gemm-1.jsonl --also
# results/h200-2026-12-03-s28-gemm-2.jsonl results/h200-2026-12-03-s28-gemm-3.jsonl`); other problems, and
# other GPUs, use the cost model. Five block-scaled entries at M = 64-128 (x as the wgmmas' A, swap False) are
# from 2026-12-04's probes of every x-as-A candidate against the entry before (benchmarks/diag/config_probe.py,
# results/h200-2026-12-04-s32-xa-block-*.jsonl: faster in every run that timed them as built, two to six); four at
# M = 128 (block-scaled 4096 x 7168 and 2112 x 7168, per tensor and row-scaled 2112 x 7168) x as A over CTA pairs
# sharing W (ms = 2), from 2026-12-04's probe of those candidates (results/h200-2026-12-04-s33-xa-ms-1/-2.jsonl:
# faster in both runs, 2-15%); three block-scaled at M = 256 (4096 x 7168, 2112 x 7168, 16384 x 16384) the same
# over two warpgroups a CTA (s33-xa-ms-256-1/-2: 12-16% faster in both runs); and sixteen at M = 1-64, W as A with
# each 64-row tile's K steps split over a 2-CTA cluster (splits 2, dsmem: 2112 x 7168 at M = 1-32 every scaling and
# bf16, at M = 64 per tensor and row-scaled; 4096 x 7168 at M = 1-8 row- and block-scaled), the candidate whose worst
# time against the entry before was least over two full runs and two probes of those candidates on 2026-12-04
# (results/h200-2026-12-04-s35-gemm-1/-2.jsonl, s35-dsmem-1/-2.jsonl): faster at every M of its tile in every
# run, 2112 x 7168 by 4-13%, 4096 x 7168 by 1.6-2%. Twenty-one more, once a cluster's CTAs no longer met at a
# cluster barrier at the start and the end (2026-12-04, thirty-first session), from three full runs in one call
# (results/h200-2026-12-04-s36-gemm-1..3.jsonl): the candidate faster than the entry before at every M of its
# tile in all three runs whose worst time against it was least (at most 0.99 of it; 0.89-0.99): W as A's K split
# over CTA pairs at 4096 x 7168, M = 1-64 (per tensor at M = 1-32, row- and block-scaled at 16-32, bf16 at 1-64),
# x as A's at 2112 x 7168, M = 64 (per tensor, block-scaled, bf16), CTA pairs sharing W at M = 128 (4096 x 7168
# per tensor, row-scaled and bf16 at 2 K steps a stage; 7168 x 2048 row-scaled; 24576 x 1536 block-scaled; 2112 x
# 7168 bf16), and x as A at 16384 x 16384, M = 64, block-scaled
MEASURED = {
    (2112, 7168, 8, 'bf16'): (64, 1, 2, 1, 12, 1, False, 2, True, True),
    (2112, 7168, 8, 'block'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (2112, 7168, 8, 'row'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (2112, 7168, 8, 'tensor'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (2112, 7168, 16, 'bf16'): (64, 1, 2, 1, 5, 1, False, 4, True, True),
    (2112, 7168, 16, 'block'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (2112, 7168, 16, 'row'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (2112, 7168, 16, 'tensor'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (2112, 7168, 32, 'bf16'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (2112, 7168, 32, 'block'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (2112, 7168, 32, 'row'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (2112, 7168, 32, 'tensor'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (2112, 7168, 64, 'bf16'): (32, 1, 2, 1, 4, 1, False, 4, False),
    (2112, 7168, 64, 'block'): (32, 1, 2, 1, 4, 1, False, 4, False),
    (2112, 7168, 64, 'row'): (64, 1, 2, 1, 6, 1, False, 2, True, True),
    (2112, 7168, 64, 'tensor'): (32, 1, 2, 1, 9, 1, False, 2, False),
    (2112, 7168, 128, 'bf16'): (64, 1, 2, 1, 12, 2),
    (2112, 7168, 128, 'block'): (32, 1, 1, 1, 4, 2, False, 4, False),
    (2112, 7168, 128, 'row'): (32, 1, 1, 1, 9, 2, False, 2, False),
    (2112, 7168, 128, 'tensor'): (32, 1, 1, 1, 8, 2, False, 2, False),
    (2112, 7168, 256, 'bf16'): (64, 1, 2, 1, None, 2),
    (2112, 7168, 256, 'block'): (32, 2, 1, 1, 5, 2, False, 2, False),
    (2112, 7168, 256, 'row'): (64, 1, 2, 1, None, 2),
    (2112, 7168, 256, 'tensor'): (64, 1, 2, 1, None, 2),
    (4096, 7168, 8, 'bf16'): (64, 1, 2, 1, 12, 1, False, 2, True, True),
    (4096, 7168, 8, 'block'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (4096, 7168, 8, 'row'): (64, 1, 2, 1, 8, 1, False, 2, True, True),
    (4096, 7168, 8, 'tensor'): (64, 1, 2, 1, 8, 1, False, 2, True, True),
    (4096, 7168, 16, 'bf16'): (64, 1, 2, 1, 5, 1, False, 4, True, True),
    (4096, 7168, 16, 'block'): (64, 1, 2, 1, 5, 1, False, 4, True, True),
    (4096, 7168, 16, 'row'): (64, 1, 2, 1, 5, 1, False, 4, True, True),
    (4096, 7168, 16, 'tensor'): (64, 1, 2, 1, 5, 1, False, 4, True, True),
    (4096, 7168, 32, 'bf16'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (4096, 7168, 32, 'block'): (64, 1, 2, 1, 4, 1, False, 4, True, True),
    (4096, 7168, 32, 'row'): (64, 1, 2, 1, 8, 1, False, 2, True, True),
    (4096, 7168, 32, 'tensor'): (64, 1, 2, 1, 8, 1, False, 2, True, True),
    (4096, 7168, 64, 'bf16'): (64, 1, 2, 1, 6, 1, False, 2, True, True),
    (4096, 7168, 64, 'block'): (32, 1, 1, 1, 4, 1, False, 4, False),
    (4096, 7168, 64, 'row'): (32, 1, 1, 1, 8, 1, False, 2, False),
    (4096, 7168, 64, 'tensor'): (32, 1, 1, 1, 9, 1, False, 2, False),
    (4096, 7168, 128, 'bf16'): (64, 1, 1, 1, 7, 2, False, 2, False),
    (4096, 7168, 128, 'block'): (64, 1, 1, 1, 3, 2, False, 4, False),
    (4096, 7168, 128, 'row'): (64, 1, 1, 1, 7, 2, False, 2, False),
    (4096, 7168, 128, 'tensor'): (64, 1, 1, 1, 7, 2, False, 2, False),
    (4096, 7168, 256, 'bf16'): (64, 1, 1, 1, None, 2),
    (4096, 7168, 256, 'block'): (64, 2, 1, 1, 4, 2, False, 2, False),
    (4096, 7168, 256, 'row'): (64, 1, 1, 1, None, 2),
    (4096, 7168, 256, 'tensor'): (64, 1, 1, 1, None, 2),
    (7168, 2048, 8, 'bf16'): (56, 1, 1, 1, 9, 1, False, 2, False),
    (7168, 2048, 8, 'block'): (64, 1, 1, 1, 4, 1, False, 4),
    (7168, 2048, 8, 'row'): (64, 1, 1, 1, 6, 1, False, 4),
    (7168, 2048, 8, 'tensor'): (64, 1, 1, 1, 6, 1, False, 4),
    (7168, 2048, 16, 'bf16'): (56, 1, 1, 1, 9, 1, False, 2, False),
    (7168, 2048, 16, 'block'): (64, 1, 1, 1, 4, 1, False, 2),
    (7168, 2048, 16, 'row'): (64, 1, 1, 1, 2, 1, False, 4),
    (7168, 2048, 16, 'tensor'): (64, 1, 1, 1, 2, 1, False, 4),
    (7168, 2048, 32, 'bf16'): (64, 1, 1, 1, 9, 1, False, 2),
    (7168, 2048, 32, 'block'): (64, 1, 1, 1, 4, 1, False, 2),
    (7168, 2048, 32, 'row'): (64, 1, 1, 1, 4, 1, False, 2),
    (7168, 2048, 32, 'tensor'): (64, 1, 1, 1, 4, 1, False, 2),
    (7168, 2048, 64, 'bf16'): (64, 1, 1, 1, 12),
    (7168, 2048, 64, 'block'): (64, 1, 1, 1, 4, 1, False, 2),
    (7168, 2048, 64, 'row'): (64, 1, 1, 1, 4, 1, False, 2),
    (7168, 2048, 64, 'tensor'): (64, 1, 1, 1, 4, 1, False, 2),
    (7168, 2048, 128, 'bf16'): (64, 1, 1),
    (7168, 2048, 128, 'block'): (64, 2, 1, 1, 4, 1, False, 2, False),
    (7168, 2048, 128, 'row'): (128, 1, 1, 1, None, 2),
    (7168, 2048, 128, 'tensor'): (64, 1, 1),
    (7168, 2048, 256, 'bf16'): (128, 1, 1, 1, None, 2),
    (7168, 2048, 256, 'block'): (128, 2, 1, 1, None, 2),
    (7168, 2048, 256, 'row'): (128, 1, 1, 1, None, 2),
    (7168, 2048, 256, 'tensor'): (128, 2, 1, 1, None, 2),
    (16384, 16384, 8, 'bf16'): (64, 1, 1, 1, 8, 1, False, 2, False),
    (16384, 16384, 8, 'block'): (128, 2, 1, 1, 3, 1, False, 4),
    (16384, 16384, 8, 'row'): (128, 1, 1, 1, 6, 1, False, 2),
    (16384, 16384, 8, 'tensor'): (128, 1, 1, 1, 6, 1, False, 2),
    (16384, 16384, 16, 'bf16'): (64, 1, 1, 1, 8, 1, False, 2, False),
    (16384, 16384, 16, 'block'): (128, 1, 1, 1, 4, 1, False, 2),
    (16384, 16384, 16, 'row'): (128, 1, 1, 1, 3, 1, False, 4),
    (16384, 16384, 16, 'tensor'): (128, 1, 1, 1, 6, 1, False, 2),
    (16384, 16384, 32, 'bf16'): (128, 2, 1, 1, 5, 1, False, 2),
    (16384, 16384, 32, 'block'): (128, 2, 1, 1, 4, 1, False, 2),
    (16384, 16384, 32, 'row'): (128, 2, 1, 1, 5, 1, False, 2),
    (16384, 16384, 32, 'tensor'): (128, 2, 1, 1, 5, 1, False, 2),
    (16384, 16384, 64, 'bf16'): (128, 1, 1, 1, 4, 1, False, 2),
    (16384, 16384, 64, 'block'): (128, 1, 1, 1, 4, 1, False, 2, False),
    (16384, 16384, 64, 'row'): (128, 1, 1, 1, 4, 1, False, 2),
    (16384, 16384, 64, 'tensor'): (128, 1, 1, 1, 4, 1, False, 2),
    (16384, 16384, 128, 'bf16'): (256, 2, 1, 1, None, 2),
    (16384, 16384, 128, 'block'): (128, 2, 1, 1, 6, 1, False, 1, False),
    (16384, 16384, 128, 'row'): (128, 1, 1, 1, 3, 1, False, 2),
    (16384, 16384, 128, 'tensor'): (128, 1, 1, 2),
    (16384, 16384, 256, 'bf16'): (256, 2, 1, 1, None, 2),
    (16384, 16384, 256, 'block'): (128, 2, 1, 1, 6, 2, False, 1, False),
    (16384, 16384, 256, 'row'): (256, 2, 1, 1, None, 2),
    (16384, 16384, 256, 'tensor'): (128, 2, 1),
    (24576, 1536, 8, 'bf16'): (64, 1, 1, 1, 6, 1, False, 4),
    (24576, 1536, 8, 'block'): (192, 1, 1, 1, 4, 1, False, 2),
    (24576, 1536, 8, 'row'): (192, 1, 1, 1, 4, 1, False, 2),
    (24576, 1536, 8, 'tensor'): (192, 1, 1),
    (24576, 1536, 16, 'bf16'): (64, 1, 1, 1, 5, 1, False, 4),
    (24576, 1536, 16, 'block'): (192, 1, 1, 1, 4, 1, False, 2),
    (24576, 1536, 16, 'row'): (192, 1, 1),
    (24576, 1536, 16, 'tensor'): (192, 1, 1, 1, 4, 1, False, 2),
    (24576, 1536, 32, 'bf16'): (64, 1, 1, 1, 9, 1, False, 2),
    (24576, 1536, 32, 'block'): (64, 1, 1, 1, 4, 1, False, 4),
    (24576, 1536, 32, 'row'): (64, 1, 1, 1, 8, 1, False, 2),
    (24576, 1536, 32, 'tensor'): (192, 1, 1),
    (24576, 1536, 64, 'bf16'): (64, 1, 1, 1, 3, 1, False, 4),
    (24576, 1536, 64, 'block'): (192, 1, 1),
    (24576, 1536, 64, 'row'): (192, 1, 1),
    (24576, 1536, 64, 'tensor'): (192, 1, 1),
    (24576, 1536, 128, 'bf16'): (64, 1, 1),
    (24576, 1536, 128, 'block'): (128, 1, 1, 1, 4, 2, False, 2, False),
    (24576, 1536, 128, 'row'): (64, 1, 1),
    (24576, 1536, 128, 'tensor'): (64, 1, 1),
    (24576, 1536, 256, 'bf16'): (128, 2, 1, 1, None, 2),
    (24576, 1536, 256, 'block'): (128, 2, 1, 1, None, 2),
    (24576, 1536, 256, 'row'): (128, 1, 1, 1, None, 2),
    (24576, 1536, 256, 'tensor'): (128, 1, 1, 1, None, 2),
}


def choose_config(M, N, K, w_dtype=F8, sms=132, scale=None):
    """A Config: measured on the H200 for the benchmark's problems, else the
    best-ranked of ``candidates``."""
    cands = candidates(M, N, K, w_dtype, sms, scale=scale)
    hit = _measured(M, N, K, cands[0].BM, w_dtype, sms, scale)
    if not hit:
        return cands[0]
    cfg = Config(cands[0].BM, *hit)
    if not cfg.swap:  # x as A: x's tile M rounded up to 8 rows (no box rows past M's last 8-row group; with the M
        # split each CTA's share of M), the ring as deep as that tile lets it be (its pad rows, x_pad_rows, may take
        # more than the table's tile's)
        BM, wgs = x_as_a_tile(-(-M // cfg.ms), scale == "block")
        room = deepest_stages(BM, cfg.BN, w_dtype, scale == "block", kc=cfg.kc, swap=False, ksplit=cfg.ksplit)
        return cfg._replace(BM=BM, wgs=wgs, stages=cfg.stages and min(cfg.stages, room))
    return cfg._replace(BM=cfg.BM // cfg.ms)


def _measured(M, N, K, BM, w_dtype, sms, scale):
    """MEASURED's entry for a problem of M rows (its tile of BM x rows), or None: the table holds the H200's (132
    SMs) benchmark problems up to MAX_ROWS rows (its M = 256 entries are a 256-row tile's, not a CTA's of a pair
    past it)."""
    if M > MAX_ROWS or sms != 132:
        return None
    return MEASURED.get((N, K, BM, "bf16" if w_dtype != F8 else scale or "tensor"))


def split_epilogue(BM):
    """What `_ranked` charges a K split's epilogue (partials through the workspace, the last unit's pass), in K
    steps of the tile: 2 + BM/16 was measured at the table's problems (2.5 at BM = 8, ~11 at 128;
    s10-config-probe-3); twice 8 + BM/16 fits the picks off the table (s49-split-cost, `_ranked`)."""
    return 2 * (8 + BM / 16)


def _ranked(BM, N, kblocks, w_dtype, sms):
    """(BN, wgs, splits) per W tile shape, best first: the (N tile, K split)
    units fill the SMs in as few, as full waves as possible (each wave
    streams its W share), with a cost for splitting at all (the split
    epilogue, growing with BM) and a small one for every extra split; K
    split only as far as one wave holds. Splits past a wave, which this
    cost had put first at 656 of 2,156 problems off the table (it counted
    the epilogue once where each share pays it), took 1.15-7.4x as long
    as the same tile split within one wave or unsplit, at all 57 problems
    measured (H100, benchmarks/diag/split_waves.py, s49-split-waves:
    14336 x 8192, M = 128, per tensor, 32 ways 236 us against 42). The
    epilogue's charge, 2 + BM/16 K steps before, is 2·(8 + BM/16): with the
    earlier one the picks within one wave were 1.23x the time of the fitted
    one's in geometric mean at 56 problems off the table where they differ
    (faster at 52, slower at 2 by 1-7%; 3072 x 1024, M = 8, per tensor: 2
    ways 4.43 us, unsplit 2.72; H100, benchmarks/diag/split_cost.py,
    s49-split-cost). The table's problems (MEASURED) keep their configs."""
    best = {}
    for BN, wgs in ((256, 2), (192, 1), (128, 2), (128, 1), (64, 1)):  # ties go to fewer x rereads
        R = BN // (64 * wgs)
        if R * BM // 2 > 128 or max_stages(BM, BN, w_dtype) < 3:
            continue  # accumulator registers, or no room for a ring
        tiles = -(-N // BN)
        for splits in range(1, min(32, kblocks) + 1):
            units = tiles * splits
            if splits > 1 and units > sms:
                break
            waves = -(-units // sms)
            cost = (waves * -(-kblocks // splits) * BN * (1.0 + 0.02 * (splits > 1)) +
                    split_epilogue(BM) * BN * (splits > 1))
            if (BN, wgs) not in best or cost < best[BN, wgs][0] - 1e-9:
                best[BN, wgs] = (cost, BM, BN, wgs, splits)
    return [Config(*c[1:]) for c in sorted(best.values(), key=lambda c: c[0])]


def candidates(M, N, K, w_dtype=F8, sms=132, top=None, scale=None):
    """Configs for a problem: BM the smallest wgmma N holding M; BN and the K
    split from ``_ranked``. The best two also come with twice and half the
    splits, stream K, a deeper ring (16 stages where they fit: more bytes in
    flight where fewer CTAs than SMs stream; unsplit too; deeper than 16 was
    slower, benchmarks/diag/stream_floor.py's deep probes), up to BM = 16 the deepest ring
    that lets two CTAs share an SM (the next call's prefetch beside this
    call) and, from BM = 64 on (x, BM rows a K step reread for every W tile,
    outweighs W's tile), x shared by 2-CTA clusters, and M split over 2-CTA
    clusters sharing W (each CTA BM / 2 rows of x; the splits ranked for
    half the SMs, and twice those). With block scaling (`scale`), the
    one-warpgroup configs among these also come with two warpgroups on
    alternate K steps (kwg: a stage's wait and promotion overlap the other
    warpgroup's wgmmas; measured on the H200: 4096 x 7168 block-scaled, M =
    128 17.05 -> 14.26 us, M = 32 12.04 -> 10.81)."""
    M, N, K, sms = _problem(M, N, K, w_dtype, sms)
    if M > MAX_ROWS:
        return pair_candidates(M, N, K, w_dtype, sms, scale)
    BM = next(b for b in (8, 16, 32, 64, 128, 256) if b >= M)
    kblocks = k_steps(K, w_dtype)
    ranked = _ranked(BM, N, kblocks, w_dtype, sms)
    ranked = ranked[:top] if top else ranked
    # the same kernels with twice and half the K splits, and streaming K (splits 0: every CTA
    # the same share of the tiles' K steps), all run-time arguments; then other kernels
    more = []
    for c in ranked[:2]:
        deep = min(16, deepest_stages(c.BM, c.BN, w_dtype, block_scaled=True))  # fits every W scaling
        # and, deep, unsplit: bf16 7168 x 2048, M = 1, 8/64/1/1 with 16 stages 7.5-7.7 us against 9.3-9.5
        # with 11 and the split 8/64/1/8's (s23-deep)
        splits = (c.splits, c.splits * 2, c.splits // 2, 0)
        for sp in (s for s in splits + (1,) if s == 0 or 1 <= s <= kblocks):
            v = c._replace(splits=sp)
            if sp in splits and v not in ranked + more:
                more.append(v)
            if deep > max_stages(c.BM, c.BN, w_dtype) and v._replace(stages=deep) not in ranked + more:
                more.append(v._replace(stages=deep))
        two = two_per_sm_stages(c.BM, c.BN, w_dtype, block_scaled=True)
        if c.BM <= 16 and two > max_stages(c.BM, c.BN, w_dtype):
            # with this config's splits, and unsplit (each CTA streams a whole tile's K)
            more += [v for v in dict.fromkeys((c._replace(stages=two), c._replace(splits=1, stages=two)))
                     if v not in more]
        if BM >= 64 and -(-N // c.BN) >= 2 and sms >= 2:  # (a cluster's CTAs run on SMs of their own)
            more.append(c._replace(mc=2))
    if BM >= 64 and sms >= 2:
        for c in _ranked(BM // 2, N, kblocks, w_dtype, sms // 2)[:2]:
            deep = min(16, deepest_stages(c.BM, c.BN, w_dtype, block_scaled=True))
            more += [c._replace(ms=2)] + ([c._replace(ms=2, splits=c.splits * 2)] if c.splits * 2 <= kblocks else [])
            if deep > max_stages(c.BM, c.BN, w_dtype):  # measured: 4096 x 7168, M = 128, 12 stages 6% faster
                more.append(c._replace(ms=2, stages=deep))
    if scale == "block":
        one = [c for c in ranked[:2] + [m for m in more if m.ms > 1][:2] if c.wgs == 1 and c.stages is None]
        more += [v for v in (c._replace(wgs=2, kwg=True) for c in one) if v not in more]
    if K % step_values(w_dtype) == 0:
        # stages of 2 and 4 K steps (kc: each operand's stage one TMA box), with the ring's bytes kept and
        # with the deepest ring: the best two configs as ranked and unsplit with the deep ring (measured,
        # s24-kc: 7168 x 2048, M = 16, 16/64/1/1 with 16 stages 5.54 us, kc = 2 with 8 4.99; 4096 x 7168,
        # M = 16, kc = 4 9.22 -> 8.43)
        for c in ranked[:2]:
            deep = min(16, deepest_stages(c.BM, c.BN, w_dtype, block_scaled=True))
            for b in dict.fromkeys((c, c._replace(splits=1, stages=deep))):
                for kc in (2, 4):
                    if live_registers(b.BM, b.BN, b.wgs, False, kc, scale == "block") > thread_registers(b.wgs):
                        continue  # gemm_spec refuses it
                    for v in kc_variants(b, kc, w_dtype, scale == "block"):
                        if v not in more and v.splits <= k_stages(K, w_dtype, kc):  # no empty share
                            more.append(v)
        more += [v for v in x_as_a_candidates(M, N, w_dtype, sms, scale)
                 if v not in more and v.splits <= k_stages(K, w_dtype, v.kc)]  # (the K split: each CTA K steps)
        more += [v for v in dsmem_candidates(M, N, w_dtype, sms, scale)
                 if v not in more and v.splits <= k_stages(K, w_dtype, v.kc)]
    return ranked + more


def pair_candidates(M, N, K, w_dtype=F8, sms=132, scale=None):
    """Configs for M = 257-512 (ROWS_A_LAUNCH) in one launch: CTA pairs sharing each W tile by multicast (ms =
    2), each CTA M / 2 rows rounded up to 32, then to 8 (the epilogue's chunks of rows divide a CTA's: 8 rows at
    152, 32 at 160, epi_rows; not with block scales, whose x scale boxes take a multiple of 32), with the W tiles
    and K splits `_ranked` puts first for half the SMs; a ValueError on a GPU of one SM (Gemm's calls take
    blocks of 256 rows there, launch_rows). Measured on an H100 (benchmarks/rows_bench.py, #13's five shapes at
    M = 300 and 384, per tensor, row-scaled and bf16, results/h100-2026-12-06-s48-rows.jsonl): 1.25-1.63x as
    fast as blocks of 256 rows (two launches, each streaming W; 4096 x 7168, M = 300, per tensor: 15.9 us
    against 25.9, cuBLASLt 19.6), 0.82-2.10x cuBLAS's time (geometric mean 1.19x); rows rounded up to 32
    faster than to 8 at 13 of the 15 problems where they differ; clusters of four CTAs (each M / 4 rows)
    slower at 28 of 30, by up to 30x with a K split."""
    M, N, K, sms = _problem(M, N, K, w_dtype, sms)
    if not MAX_ROWS < M <= ROWS_A_LAUNCH:
        raise ValueError(f"M = {M}: CTA pairs take {MAX_ROWS + 1} to {ROWS_A_LAUNCH} rows of x")
    if sms < 2:
        raise ValueError(f"M = {M} on a GPU of {sms} SM: the CTA pairs that take {MAX_ROWS + 1} to {ROWS_A_LAUNCH} "
                         f"rows of x run on two SMs (a Gemm call takes blocks of {MAX_ROWS} rows there)")
    kblocks, pairs = k_steps(K, w_dtype), max(sms // 2, 1)
    out = []
    for r in (32,) if scale == "block" else (32, 8):
        BM = -(-M // (2 * r)) * r
        for c in _ranked(BM, N, kblocks, w_dtype, pairs)[:2]:  # (K split within one wave of pairs)
            if c._replace(ms=2) not in out:
                out.append(c._replace(ms=2))
    return out


def dsmem_candidates(M, N, w_dtype=F8, sms=132, scale=None):
    """W as A with each tile's K steps split over a CTA pair (dsmem), up to M = 128: W tiles of 64 rows whose pairs fill
    the SMs in one wave, stages of 2 K steps (rings of 8 and 12 where they fit) and of 4 (4 and 6), at M = 65-128
    also of one (a ring of 8: since the pairs no longer meet at cluster barriers, s36-*, they may pay there too). Its
    bound measured first on the H200 (s35-wbound-*: the same W bytes as a problem of twice the rows and half the K,
    unsplit, each CTA the intake and the CTA count the split would give it): 2112 x 7168 per tensor 5.0-5.6 us at M =
    1-32 against the table's 5.8-6.6, 4096 x 7168 7.4-7.8 against 8.0-8.9, bf16 2112 x 7168 8.4-8.7 at M = 1-16
    against 8.9-9.5. Not over 4 CTAs: a GPC's SMs do not divide into fours, so the H200 runs at most 30 clusters of 4
    at once (cuOccupancyMaxActiveClusters, s35-occupancy), and 2112 rows in 33 took 7.6-7.9 us at M = 1-8 against
    5.2-5.4 in pairs (s35-pdl-*)."""
    BM = next((b for b in (8, 16, 32, 64, 128) if b >= M), None)
    if BM is None or -(-N // 64) * 2 > sms:
        return []
    out = []
    for kc, rings in ((1, (8,)), (2, (8, 12)), (4, (4, 6))):
        if kc == 1 and BM < 128 or live_registers(BM, 64, 1, False, kc, scale == "block") > thread_registers(1):
            continue
        room = deepest_stages(BM, 64, w_dtype, scale == "block", kc=kc, ksplit=2)
        out += [Config(BM, 64, 1, 2, stages=min(st, room), kc=kc, dsmem=True) for st in rings if min(st, room) >= 2]
    return list(dict.fromkeys(out))


def x_as_a_tile(M, block_scaled=False):
    """(BM, wgs) of x as the wgmmas' A: x's tile M rounded up to 8 rows (with 1x128 block-scaled x, to 32 past
    32: a stage's scales are whole 128-byte rows), a consumer warpgroup per 64 of them."""
    BM = -(-M // 8) * 8
    if block_scaled and BM > 32:
        BM = -(-M // 32) * 32
    return BM, -(-BM // 64)


def x_as_a_candidates(M, N, w_dtype=F8, sms=132, scale=None):
    """Configs with x as the wgmmas' A (swap=False): x's tile M rounded up to 8 rows (x_as_a_tile), W tiles of
    the fewest multiple of 8 rows that fill the SMs in one wave and in two (4096 rows: 128 tiles of 32; 2112: 132
    of 16; with block scales the next of 8, 16, 32, 64, 128 or 256 rows, so no 8 columns of a tile straddle two
    of W's blocks), unsplit, each with stages of 2, 4 and 8 K steps (block-scaled: 1 too), the deepest ring up to
    16 and a ring of 16 K steps (K a whole number of K steps; M up to 128, and block-scaled up to 256 over CTA
    pairs, below; W tiles whose accumulator, row scales or block-scaled partials fit a thread's registers). The
    shallower ring: x, the wgmmas' A, comes only after the wait for the earlier kernels, and the compute of the W
    already landed then follows the loads; measured on
    the H200 at 2112 x 7168 (16-row tiles, benchmarks/diag/stream_floor.py xring, s28-xring-*): 8 stages of 2 K
    steps 6.2-6.3 us at M = 1-16 against 7.2-7.5 with 16, 4-6 stages of 4 K steps 6.5-6.6 at M = 32 against
    6.9-7.1 with 8.
    Block-scaled (M > 32 only), x as A promotes each stage's partial with one factor per x row a thread holds
    (two) where W as A needs one per accumulator column (BM / 4); measured on the H200 (s32-xa-block-1..4, every
    candidate against the table's W-as-A config): faster at M = 64-128 (4096 x 7168, M = 64: 11.1 -> 9.9 us;
    16384 x 16384, M = 128: 81 -> 73), 0-1% at M = 32, and 2-18% slower at M = 1-16 (its wgmmas of n = 8-32
    waited for at every stage: no stage in flight while one is promoted).
    Up to M = 128 also with each tile's K steps split over a 2-CTA cluster (splits 2, the first CTA's partial
    summed into the second's shared memory), W tiles filling the 66 clusters in one wave: on the H200
    (s34-ksplit-*, s34-late-*) 1-5% faster than the table's config at bf16 2112 x 7168, M = 1-32 (W tiles of 32
    rows split against 16-64 unsplit); fp8, 1-6% slower at M = 1-16 and within 2% at 2112 x 7168, M = 32-64
    (0.1-0.6 us over the bound measured without the sum and the clusters, s34-ingress-*; the sum itself costs
    0.02-0.33 us, s34-nosum-*).
    Past M = 64 also over CTA pairs (ms = 2): each CTA its half of M in one warpgroup, W's tile multicast to
    both (W tiles filling the pairs in one, two or three waves; kc a multiple of 2, each CTA loading half a
    stage's K steps, or 1 with W tiles of whole pairs of 8-row swizzle atoms). Each K step's shared-memory
    traffic is then x's 64 rows and W's tile once each (written by TMA and read by the wgmmas), where one CTA of
    two warpgroups reads W's tile twice; measured on the H200 at M = 128 (s33-xa-ms-1/-2): block-scaled 4096 x
    7168 13.1 -> 11.6 us and 2112 x 7168 10.8 -> 9.2, row-scaled 2112 x 7168 8.8 -> 8.4. Past M = 128 each CTA
    of a pair takes its half of M over two warpgroups, block-scaled only (s33-xa-ms-256-1/-2, M = 256: 4096 x
    7168 20.4 -> 17.7 us, 2112 x 7168 16.0 -> 14.2, 16384 x 16384 156-159 -> 130-135; per tensor 3-40% slower
    than the table's W as A at all five shapes)."""
    block = scale == "block"
    if M > (256 if block else 128) or block and M <= 32:
        return []
    rows = w_dtype == F8 and scale not in ("tensor", "block")  # W's row scales in registers (also an unnamed one)
    out = []
    # (the M split: each CTA of a pair its half of M, one warpgroup up to M = 128, two past it)
    # (the K split: 2-CTA clusters each taking half of every W tile's K steps, in one wave)
    for ms, ks in ((1, 1), (1, 2), (2, 1)) if 64 < M <= 128 else ((2, 1),) if M > 128 else ((1, 1), (1, 2)):
        BM, wgs = x_as_a_tile(-(-M // ms), block)
        clusters = sms // (ms * ks)
        if not clusters:  # (fewer SMs than a cluster's CTAs: a GPU or MIG slice of one SM runs no pairs)
            continue
        for waves in (1, 2, 3) if ms > 1 else (1, 2) if ks == 1 else (1,):  # (pairs: three waves too, 24576 rows
            # in tiles of 128)
            BN = 8 * -(-N // (8 * clusters * waves))
            if block:
                BN = next((b for b in (8, 16, 32, 64, 128, 256) if b >= BN), BN)
            if BN > 256:
                continue
            for kc in (1, 2, 4, 8) if block else (2, 4, 8):  # (block: kc = 1 where a stage's partials fit no more)
                if live_registers(BM, BN, wgs, kc=kc, block_scaled=block, swap=False,
                                  row_scaled=rows) > thread_registers(wgs) or not w_splits(BN, kc, ms):
                    continue
                room = min(16, deepest_stages(BM, BN, w_dtype, block, kc=kc, swap=False, ksplit=ks))
                out += [Config(BM, BN, wgs, ks, stages=st, ms=ms, kc=kc, swap=False)
                        for st in (room, min(room, 16 // kc)) if st >= 2]
    return list(dict.fromkeys(out))


def _problem(M, N, K, w_dtype, sms):
    """(M, N, K, sms) as Python ints, or a ValueError naming the one that is not a positive integer (or the
    W dtype that is neither e4m3 nor bf16)."""
    if w_dtype not in (F8, "bf16"):
        raise ValueError(f"w_dtype={w_dtype!r}: {F8!r} (e4m3) or 'bf16'")
    got = tuple(_whole(n, v) for n, v in (("M", M), ("N", N), ("K", K), ("sms", sms)))
    for n, v in zip(("M", "N", "K", "sms"), got):
        if v < 1:
            raise ValueError(f"{n} = {v}: at least 1")
    return got


def step_values(w_dtype=F8):
    """The K values of a K step: KBYTES bytes, 128 fp8 or 64 bf16 values."""
    return KBYTES // (1 if w_dtype == F8 else 2)


def k_steps(K, w_dtype=F8):
    """K steps of a row of W, the last one partial."""
    return -(-K // step_values(w_dtype))


def k_stages(K, w_dtype=F8, kc=1):
    """Ring stages a row of W fills at kc K steps a stage, the last one partial: the most K splits
    that leave no share empty."""
    return -(-k_steps(K, w_dtype) // kc)


def parts_for(splits, N, K, BN, w_dtype=F8, sms=132, mc=1, ms=1, kc=1, ksplit=1):
    """The kernel's `parts` argument and grid for a config's splits: tiles x
    splits shares (split K), or with splits 0 one share per SM (stream K);
    with mc CTAs sharing x, shares of groups of mc tiles, one per cluster;
    with ms CTAs sharing W, or ksplit CTAs splitting a tile's K steps (x as A,
    splits then 1), shares of tiles, one per cluster (kc: K steps a stage)."""
    cl = max(mc, ms, ksplit)
    groups = -(-(-(-N // BN)) // mc)
    steps = groups * k_stages(K, w_dtype, kc)
    parts = groups * splits if splits else min(sms // cl, steps)
    return parts, (min(parts, sms // cl) * cl,)


def fused_w_rows(cfg, N, K, w_dtype=F8, sms=132):
    """W rows the grid streams a stage for each x row a CTA's quantizing
    warps convert in it (fused quantization): CTAs x BN / BM."""
    _, (ctas,) = parts_for(cfg.grid_splits, N, K, cfg.BN, w_dtype, sms, cfg.mc, cfg.ms, ksplit=cfg.ksplit)
    return ctas * cfg.BN // cfg.BM


def with_kc(cfg, kc, w_dtype=F8, block_scaled=False):
    """`cfg` with kc K steps a stage and its ring's K steps kept (as many as fit, at least two stages)."""
    if kc == cfg.kc:
        return cfg
    stages = cfg.stages and max(2, min(deepest_stages(cfg.BM, cfg.BN, w_dtype, block_scaled, kc=kc, swap=cfg.swap),
                                       cfg.stages * cfg.kc // kc))
    return cfg._replace(kc=kc, stages=stages)


def kc_variants(cfg, kc, w_dtype=F8, block_scaled=False):
    """`cfg` at kc K steps a stage with its ring's K steps kept, and with the deepest ring (one config where
    they are the same; none where not two stages fit)."""
    room = deepest_stages(cfg.BM, cfg.BN, w_dtype, block_scaled, kc=kc, swap=cfg.swap)
    if room < 2:
        return []
    kept = with_kc(cfg._replace(stages=cfg.stages or max_stages(cfg.BM, cfg.BN, w_dtype)), kc, w_dtype, block_scaled)
    return list(dict.fromkeys((kept, cfg._replace(kc=kc, stages=room))))


def fused_config(cfg, N, K, w_dtype=F8, sms=132):
    """The config for bf16 x quantized in the GEMM: `cfg`, or where its grid
    streams fewer than FUSED_MIN_W_ROWS rows of W an x row, tiles of 128 W
    rows split over the SMs where those stream FUSED_WIDE_MIN_W_ROWS (their GEMM
    alone can be slower than cfg's, which the quantizing warps then have to
    make up for). Measured on the H200: 4096 x 7168, M = 1, row scales,
    8/64/1/1 fused took 14.4 us, 8/128/1/4 10.1-10.2, quantize_x then the
    GEMM 11.1-11.3; 7168 x 2048, M = 16, 16/128/1/2 (896) fused 8.4, e4m3 x
    alone 6.5 there against 5.7 at 16/64/1/1, quantize_x then the GEMM 7.3.
    A cfg with W as A's K split over a cluster (dsmem) is taken without it,
    and where that streams too few rows, the wider tiles whatever they
    stream: fused at the split, 4096 x 7168, M = 1-8, row- and block-scaled
    took 11.5-12.4 us against 10.0-10.4 at 8/128/1/4, and 2112 x 7168, M =
    16, block-scaled 12.0 against 8.45 at 16/128/1/7 (s35-gemm-*)."""
    cfg = with_kc(cfg, 1, w_dtype)  # x loaded in bf16: a K step a stage
    split = cfg.swap and cfg.ksplit > 1
    if split:
        cfg = cfg._replace(splits=1, dsmem=False)
    if fused_w_rows(cfg, N, K, w_dtype, sms) >= FUSED_MIN_W_ROWS:
        return cfg
    kblocks = k_steps(K, w_dtype)
    wide = Config(cfg.BM, 128, 1, max(1, min(sms // -(-N // 128), kblocks)))
    return wide if split or fused_w_rows(wide, N, K, w_dtype, sms) >= FUSED_WIDE_MIN_W_ROWS else cfg


# gemm_spec's options a Gemm takes (Gemm(**options), and plan's and a call's): the rest are the config's (BM, BN,
# wgs), the problem's (its dtypes and W's scaling) or refused (NOT_GEMM_OPTIONS)
GEMM_OPTIONS = ("stages", "mc", "ms", "kwg", "kc", "swap", "xhalf", "chains", "store", "pdl", "l2_w", "l2_x",
                "w_hint", "x_hint")
NOT_GEMM_OPTIONS = {
    "BM": "it is the config's (config=(BM, BN, wgs, splits, ...))",
    "BN": "it is the config's (config=(BM, BN, wgs, splits, ...))",
    "wgs": "it is the config's (config=(BM, BN, wgs, splits, ...))",
    "w_dtype": "it follows from W (plan's w_dtype)",
    "y_dtype": "it follows from out or out_dtype (plan's y_dtype)",
    "w_scale": "it is the call's scale= (plan's scale)",
    "ksplit": "it follows from the config (its splits, with dsmem or x as the wgmmas' A)",
    "diag": "it builds diagnostics whose y is not the product (gemm_spec(diag=...))",
    "profile": "it takes a profile buffer the Gemm call does not pass (gemm_spec(profile=))",
}


def _check_options(options):
    """A ValueError naming the first spec option a Gemm does not take (with the names it does) or whose value
    is of the wrong type or out of range, before a config is chosen: a str mc or ms was a TypeError in _plan's
    comparisons, an unknown name or BM gemm_spec's TypeError at the first plan. (Ranges that depend on the
    config, as BM a multiple of 8·mc or the ring's room, gemm_spec checks.)"""
    for name, v in options.items():
        if name == "x_scale":
            raise ValueError(f"x_scale={v!r}: x's scaling follows from x's dtype and W's scale; for bf16 x "
                             "quantized in the GEMM, Gemm(quantize='fused')")
        if name in NOT_GEMM_OPTIONS:  # (a ksplit beside a grid split stored y from part of K; a diag left the
            # workspace dirty for the next calls)
            raise ValueError(f"{name}={v!r}: not a Gemm option, {NOT_GEMM_OPTIONS[name]}")
        if name not in GEMM_OPTIONS:
            import difflib
            near = difflib.get_close_matches(name, GEMM_OPTIONS, n=1)
            raise ValueError(f"{name}={v!r}: not a Gemm option" + (f" (did you mean {near[0]}?)" if near else "") +
                             f"; the options are {', '.join(GEMM_OPTIONS)}")
        if name in ("l2_w", "l2_x"):
            from ..tensormap import L2Promotion
            L2Promotion.coerce(v, name)  # (a TensorMapError, a ValueError, naming it)
            continue
        ok, why = _option_rule(name, v)
        if not ok:
            raise ValueError(f"{name}={v!r}: {why}")


def _option_rule(name, v):
    """(whether `v` is a value spec option `name` takes, what it takes): the rules _check_options and
    given_config (for the config fields that are options too: mc, stages, ms, kwg, kc, swap) share."""
    try:
        n = None if isinstance(v, bool) or not hasattr(type(v), "__index__") else operator.index(v)
    except TypeError:  # (an array of several values)
        n = None
    hints = ", ".join(map(repr, cpasync.CACHE_HINTS))
    return {
        "stages": (v is None or n is not None and n >= 2, "None (the deepest ring up to 8 that fits) or an "
                   "integer >= 2"),
        "mc": (n in (1, 2, 4), "1, 2 or 4 CTAs of a cluster sharing x"),
        "ms": (n in (1, 2, 4), "1, 2 or 4 CTAs of a cluster sharing W"),
        "kc": (n is not None and 1 <= n <= 8, "K steps a stage, 1 to 8"),
        "chains": (v is None or n in (1, 2, 4), "None or 1, 2 or 4 accumulator chains per m64 block"),
        "kwg": (_one_of(v, (False, True)), "False or True (two consumer warpgroups on alternate K steps)"),
        "swap": (isinstance(v, bool), "True (W the wgmmas' A) or False (x their A)"),
        "xhalf": (_one_of(v, (None, False, True)), "None (where measured faster), True or False"),
        "store": (_one_of(v, (None, "tma", "direct")), "None, 'tma' or 'direct'"),
        "pdl": (_one_of(v, (False, True, "early")), "False, True or 'early'"),
        "w_hint": (v is None or isinstance(v, str) and v in cpasync.CACHE_HINTS or n is not None,
                   f"None, an L2 eviction priority ({hints}) or a 64-bit policy"),
    }[name if name != "x_hint" else "w_hint"]


def given_config(config):
    """A user's `config=` as a Config of Python values, or a ValueError naming the field and its value: a
    tuple or list of Config's first 4 to 11 fields (a Config too), the sizes and counts integers (numpy's
    too), `stages` None or one, kwg, swap and dsmem False or True. A str mc, a float split count or a kwg of
    2 were taken as they came, and failed later in comparisons or went into the grid's arithmetic."""
    if not isinstance(config, (tuple, list)):
        raise ValueError(f"config={config!r}: a Config, or a tuple of its fields ({', '.join(Config._fields)}), "
                         "the first four at least")
    if not 4 <= len(config) <= len(Config._fields):
        raise ValueError(f"config={tuple(config)!r}: {len(config)} values, Config takes 4 to "
                         f"{len(Config._fields)} ({', '.join(Config._fields)})")
    values = []
    for name, v in zip(Config._fields, config):
        if name in ("kwg", "swap", "dsmem"):
            if type(v).__name__ not in ("bool", "bool_"):  # Python's bool or numpy's
                raise ValueError(f"config {name}={v!r}: False or True")
            v = bool(v)
        elif not (name == "stages" and v is None):
            v = _whole(f"config {name}", v)
            low = {"BM": 1, "BN": 1, "wgs": 1, "splits": 0}.get(name)  # (the others: _option_rule's)
            if low is not None and v < low:
                raise ValueError(f"config {name}={v}: at least {low}")
        if name in ("mc", "stages", "ms", "kwg", "kc", "swap"):
            ok, why = _option_rule(name, v)
            if not ok:
                raise ValueError(f"config {name}={v!r}: {why}")
        values.append(v)
    return Config(*values)


def _one_of(v, values):
    """Whether `v` equals one of `values` (False where comparing it fails or is no bool, as an array's)."""
    try:
        return any(bool(v == a) for a in values)
    except (TypeError, ValueError):
        return False


class Gemm:
    """y = x · Wᵀ with W streamed from DRAM (see the module docstring).

        g = Gemm()                                   # compiles on first use per config (or loads AOT)
        y = g(x, w, w_scale=s, scale="tensor")       # fp8 W: x bf16 (quantized here) or e4m3 + x_scale
        y = g(x16, w16)                              # bf16 W and x

    bf16 x with fp8 W is quantized in the GEMM where that was measured
    faster (`quantize`="auto", the default: up to FUSED_MAX_ROWS rows of x a
    tile, with FUSED_MIN_W_ROWS unless W is block-scaled), else by
    ``quantize_x`` first; always in
    the GEMM ("fused": a scale per row and 128 K values, where a ring of two
    stages with x's bf16 tiles fits, else as "kernel"), or always by
    ``quantize_x``, per token or per 1x128 block as W's scaling asks, then
    the GEMM ("kernel"). `xhalf` (spec option): e4m3 x (or bf16 x with bf16
    W) loaded in half boxes where M ends inside one x tile of 128 or more rows
    (None, the default), wherever the kernel can (True), or never (False).
    Modules come from nvtma.compile when the MLIR extension is
    importable, else from AOT artifacts in `artifacts` (a directory of
    ``spec.key`` subdirectories: ``spec.compile().save(DIR / spec.key)``,
    as benchmarks/gemm_bench.py's `build` does; a module whose records name
    another spec, or none, is refused: LaunchError(rule="artifact")).

    `autotune`: True: a problem the table (MEASURED, the H200's) does not
    hold, called without a `config`, runs the fastest of ``candidates``
    rather than the cost model's first: its first eager call times each as
    the benchmark does (a CUDA graph of 20 calls, W rotating over copies
    from DRAM; nvtma.autotune keeps the winner in memory and in the compile
    cache's ``autotune/`` directory for later processes). "all": every
    problem, the table's too: its configs were each the fastest on one
    H200, and H200s differ (7168 x 2048, M = 1: the table's 11-stage ring
    took 5.7-5.9 us where 16 stages took 4.9-5.1 on a later one,
    benchmarks/README.md, fifteenth session). A call captured in a CUDA
    graph takes a winner timed before (in this process or stored), else the
    table's or the cost model's choice: nothing is timed under capture.
    The timing runs on a thread and stream of its own (so that torch.compile's
    CUDA graph trees, which put their warm-up calls' allocations in the
    graph's pool, do not keep W's copies there).

    A call: y = g(x, w, w_scale=, scale=, x_scale=, out=, out_dtype=,
    config=, **spec options); `out` a [M, N] bf16 or f32 tensor to write y
    into. x of 257-512 rows is taken in one launch over CTA pairs sharing
    W (``pair_candidates``), more in as few blocks of up to 512 rows as
    hold them, as even as 64-row units allow, a launch each (W streamed
    once a block: ``row_blocks``); with an option
    that shapes the kernel (``SHAPE_OPTIONS``) or on a GPU of one SM in
    blocks of 256, and with a given `config` (a tuple or list) in blocks of
    its BM·ms rows (``launch_rows``). A given config runs as given: its K
    splits too, where the cost model would not split K past one wave of
    the GPU's SMs (such splits took 1.15-7.4x as long: benchmarks/README.md,
    forty-fifth session).
    Each kind of call (shapes, strides, dtypes, devices, options) is
    checked and planned once; later ones check only the addresses (on the
    H200, an eager call's host time fell from 38-39 to 19-20 us, against
    torch._scaled_mm's 25-27: benchmarks/diag/gemm_host.py)."""

    def __init__(self, artifacts=None, *, pad_x=True, quantize="auto", autotune=False, **spec_options):
        if quantize not in ("auto", "fused", "kernel"):
            raise ValueError(f"quantize={quantize!r}: 'auto', 'fused' (bf16 x quantized in the GEMM) or 'kernel' "
                             "(by quantize_x, then the GEMM)")
        if autotune not in (False, True, "all"):
            raise ValueError(f"autotune={autotune!r}: False, True (problems the table does not hold) or 'all'")
        _check_options(spec_options)
        self.artifacts = artifacts
        self.pad_x = pad_x
        self.quantize_mode = quantize
        self.autotune = autotune
        self._tuners = {}
        self.options = spec_options
        self._mods = {}
        self._ws = {}
        self._side = {}  # device -> the stream workspaces are allocated on (_workspace)
        self._tuning = {}  # device -> the stream autotune times candidates on (_tuned)
        self._plans = {}  # plan's memo
        self._sms = {}  # SMs by device index
        self._calls = {}  # a call's signature -> _Prepared (__call__)
        self._quantizers = {}  # (granularity, rows, K, device) -> _quantizer's function

    def module(self, spec):
        key = spec.key
        mod = self._mods.get(key)
        if mod is None:
            from pathlib import Path
            d = Path(self.artifacts) / key if self.artifacts else None
            if d is not None and (d / "kernels.json").exists():
                from .. import runtime
                mod = runtime.load(d)
                if mod.records.get("spec") != key:  # a module saved under another spec's key would run with this
                    # spec's grid and operands: its tiles, scales and workspace read out of bounds
                    got = mod.records.get("spec")
                    raise runtime.LaunchError(
                        f"{d} holds a module compiled from {'spec ' + got if got else 'no dsl specialization'}, not "
                        f"{key}: save each as spec.compile().save(DIR / spec.key)", rule="artifact")
            else:
                mod = spec.compile()
            self._mods[key] = mod
        return mod

    def _workspace(self, torch, device, spec, N, stream):
        """The split-K workspace and per-tile counters (`workspace`), one
        pair per device, shape and CUDA stream (`_stream_key`: a capture on a
        stream is one apart from the stream's eager calls): the last unit of
        each tile zeroes its part and resets its counter. Calls on two
        streams shared one pair, and their kernels' partials of a tile mixed.

        They are allocated and zeroed on a stream of the Gemm's own, by a
        thread of their own, never in a capture's memory pool: torch.compile's
        CUDA graph trees run their warm-up calls with every allocation of the
        calling thread (on any stream) going into the graph's pool, and refuse
        a tensor there that outlives the call without being an output, as
        these do (found on the H100: "2 tensor(s) in the cudagraph pool not
        tracked as outputs", with the allocation on the Gemm's stream but the
        call's thread too). Outside a capture the call's stream waits for the
        zeroing; a capture cannot wait for work outside it, so under one the
        allocating thread waits (once per capture stream), its capture mode
        relaxed (`driver.relaxed_capture`: a global-mode capture on any thread
        refuses cudaMalloc and stream waits on every thread). A captured
        call's workspace was an eager stream's before: a replay on another
        stream beside eager calls on that one mixed their partials. Graphs
        captured on one stream share its pair, as torch's captured cuBLAS
        calls share a workspace: replay them one at a time. The pairs live as
        long as the Gemm: keep it while graphs of its calls can replay."""
        key = (device, workspace_shape(spec, N), stream)
        ws = self._ws.get(key)
        if ws is None:
            capturing = torch.cuda.is_current_stream_capturing()

            def make():
                with _relaxed_capture() if capturing else contextlib.nullcontext():
                    side = self._side.get(device)
                    if side is None:
                        side = self._side[device] = torch.cuda.Stream(device)
                    with torch.cuda.stream(side):
                        ws = workspace(torch, device, spec, N)
                    if capturing:
                        side.synchronize()  # zeroed before the graph can first replay
                return side, ws
            side, ws = _on_a_thread_of_its_own(make)
            if not capturing:
                call = torch.cuda.current_stream(device)
                call.wait_stream(side)  # zeroed before the call's kernel reads them
                for t in ws:
                    t.record_stream(call)  # (freed: not reused before the call's stream is past them)
            self._ws[key] = ws
        return ws

    def quantize(self, x, granularity="token"):
        """bf16 x -> (e4m3 x, scales): per token [M], or per 1x128 block [M,
        ceil(K/128)] (a view of the transposed storage the kernel loads).
        x: bf16 [M, K] on a GPU, its rows contiguous at a 16-byte pitch and
        address, K a multiple of 8 (LaunchError otherwise; the fp8 GEMM's x
        takes K a multiple of 16)."""
        import torch
        _check_quantize_input(torch, x, granularity)
        M, K = x.shape
        if not x.numel():  # nothing to quantize (a grid of no CTAs is no launch): a row of no values has the
            # kernel's scale of an all-zero row
            return (torch.empty((M, K), device=x.device, dtype=torch.float8_e4m3fn),
                    torch.full((M,), 1e-12 / 448, device=x.device, dtype=torch.float32) if granularity == "token" else
                    torch.empty((M, -(-K // 128)), device=x.device, dtype=torch.float32))
        xq, sx = self._quantizer(granularity, M, x.shape[1], x.device)(x)
        return xq, (sx if granularity == "token" else sx[:, :M].t())

    def _quantizer(self, granularity, rows, K, device):
        """quantize_x for one granularity, rows, K and device, its kernel,
        grid and allocations set up once (and kept, up to 4,096): a function
        of bf16 x [<= rows, K] giving (e4m3 x [rows, K], its scales as the
        kernel takes them), rows past x's zeros. Block scales are stored
        transposed, [ceil(K/128), block_scale_columns(rows)] (what the GEMM's
        TMA loads)."""
        key = (granularity, rows, K, device)
        q = self._quantizers.get(key)
        if q is not None:
            return q
        if len(self._quantizers) >= 4096:
            self._quantizers.clear()
        import torch
        kernel = _own_launcher(self.module(quantize_x_spec(granularity)), "quantize_x")
        new_xq = functools.partial(torch.empty, (rows, K), device=device, dtype=torch.float8_e4m3fn)
        if granularity == "token":
            grid, new_sx = (rows,), functools.partial(torch.empty, (rows,), device=device, dtype=torch.float32)
        else:
            grid = (-(-(rows * -(-K // 128)) // 4),)
            new_sx = functools.partial(torch.zeros, (-(-K // 128), block_scale_columns(rows)), device=device,
                                       dtype=torch.float32)

        def quantize(x):
            xq, sx = new_xq(), new_sx()
            kernel(x, xq, sx, grid=grid)
            return xq, sx
        self._quantizers[key] = quantize
        return quantize

    def kernel_rows(self, M, BM, ms=1):
        """The rows of bf16 x quantized by ``quantize_x`` for the kernel: M, or
        M rounded up to the tile of BM·ms rows (zero rows, no more kernels)
        from a tile of 128 on when that adds 8 or more: the TMA's
        out-of-bounds rows of a partial x box are slow to fill (measured on
        the H200, 4096 x 7168, M = 65: 21.4 us, on x padded to 128 rows 12.6;
        benchmarks/diag/m_sweep.py). With the M split (ms > 1) and M >= BM no
        box reaches past M (the kernel's CTAs past M take its last BM rows):
        M. e4m3 x from the caller is not padded: a copy of it cost more than
        the fill it saved (2112 x 7168, M = 70: 12.0 us against 9.9;
        16384 x 16384, M = 100: 73.7 against 69.8; s19-m-sweep); the kernels
        for M < BM = 128 load it in half boxes instead (`plan`)."""
        pad = -M % (BM * ms)
        if not (self.pad_x and BM * ms >= 128 and pad >= 8) or (ms > 1 and M >= BM):
            return M
        return M + pad

    def plan(self, M, N, K, w_dtype=F8, scale=None, y_dtype="bf16", quantize=False, sms=132, config=None,
             **spec_options):
        """(gemm spec, splits, quantize spec or None) for a problem: what a
        call runs, planned once per problem and options (the config's choice
        alone took ~0.3 ms of host time, the kernel 5-100 us of GPU time).
        `quantize` (fp8 W): x comes in bf16; the GEMM quantizes it
        ("fused", where a ring of two stages with x's bf16 tiles fits) or
        ``quantize_x`` does first ("kernel": the quantize spec); True: as the
        Gemm's `quantize` says ("auto": fused up to FUSED_MAX_ROWS rows of x
        a tile where the grid streams FUSED_MIN_W_ROWS rows of W an x row, or
        any with block scales). Fused without a `config`, the config is `fused_config`'s."""
        config = None if config is None else given_config(config)
        memo = (M, N, K, w_dtype, scale, y_dtype, quantize, sms, config, tuple(sorted(spec_options.items())))
        try:
            got = self._plans.get(memo)
        except TypeError:  # an unhashable option: planned every call
            return self._plan(M, N, K, w_dtype, scale, y_dtype, quantize, sms, config, spec_options)
        if got is None:
            got = self._plan(M, N, K, w_dtype, scale, y_dtype, quantize, sms, config, spec_options)
            if len(self._plans) >= 4096:
                self._plans.clear()
            self._plans[memo] = got
        return got

    def _plan(self, M, N, K, w_dtype, scale, y_dtype, quantize, sms, config, spec_options):
        M, N, K, sms = _problem(M, N, K, w_dtype, sms)
        if quantize not in (False, True, "auto", "fused", "kernel"):
            raise ValueError(f"quantize={quantize!r}: False (x in e4m3, or bf16 with bf16 W), True (as the Gemm's "
                             "quantize says), 'auto', 'fused' or 'kernel'")
        opts = dict(self.options, **spec_options)
        _check_options(opts)
        fp8 = w_dtype == F8
        if fp8 and scale not in ("tensor", "row", "block"):  # (gemm_spec's message named its w_scale)
            raise ValueError(f"scale={scale!r} for fp8 W: 'tensor', 'row' or 'block'")
        if opts.get("swap") is False and (opts.get("mc", 1) != 1 or opts.get("kwg")):  # (the error had named a
            # cluster K split of the x-as-A config taken for it, not these)
            raise ValueError(f"swap=False with mc={opts.get('mc', 1)}, kwg={opts.get('kwg', False)}: x as the "
                             "wgmmas' A takes no x multicast (mc) and no kwg")
        cfg = config if config is not None else Config(*choose_config(M, N, K, w_dtype, sms, scale))
        how = (quantize if isinstance(quantize, str) else self.quantize_mode) if fp8 and quantize else None
        kc = opts.pop("kc", None)  # K steps a stage asked for (else the config's, where the kernel takes them)
        # what x as the wgmmas' A (x or W multicast: an x-as-A config's own ms is taken, kwg, TMA stores of y, W as
        # A, x quantized in the kernel) or a cluster's K split (mc, ms, kwg) does not take as options: a table's such
        # entry gives way to the problem's best-ranked config with W as A and no cluster split, a given x-as-A
        # config is refused here (a given split below); and swap=False takes the first x-as-A candidate where the
        # table has W as A
        clash = opts.get("mc", 1) != 1 or opts.get("ms", 1) != 1 or opts.get("kwg")
        if not cfg.swap:
            clash = clash or opts.get("store") == "tma" or opts.get("swap") is True or how == "fused"
        if clash and (not cfg.swap or cfg.ksplit > 1):
            if config is not None and not cfg.swap:
                raise ValueError(f"config {cfg.short}: x as the wgmmas' A (swap=False) takes no mc, ms, kwg, "
                                 "store='tma' or swap=True, nor x quantized in the kernel (quantize='fused')")
            if config is None:
                cfg = next(c for c in candidates(M, N, K, w_dtype, sms, scale=scale)
                           if c.swap and c.ms == c.ksplit == 1)
        elif cfg.swap and opts.get("swap") is False and config is None:
            cfg = next((c for c in candidates(M, N, K, w_dtype, sms, scale=scale) if not c.swap), None)
            if cfg is None:  # (gemm_spec's error had named the W-as-A config's BM and wgs)
                raise ValueError(f"swap=False: no config with x as the wgmmas' A for M = {M}, N = {N}, K = {K} "
                                 f"({scale or 'bf16'}): x as A takes M up to 128 (block-scaled: 33 to 256) and K a "
                                 f"multiple of {step_values(w_dtype)} values")
        if config is None and cfg.BM * opts.get("ms", cfg.ms) < M:  # an ms option below the chosen config's (ms=1
            # where the table splits M over a pair): the best-ranked config of one CTA's tile holding M, if any (the
            # fused quantization's config then follows from it)
            cfg = next((c for c in candidates(M, N, K, w_dtype, sms, scale=scale)
                        if c.swap and c.ms == c.ksplit == 1 and c.BM * opts.get("ms", 1) >= M), cfg)
        if how in ("auto", "fused"):
            # a config of its own unless one was given: the problem's, or where that leaves the quantizing
            # warps behind W's stream, W tiles of 128 rows split over the SMs (a K step a stage: x in bf16)
            fcfg = cfg if config is not None else fused_config(cfg, N, K, w_dtype, sms)
            # per tensor or row, only tiles of 128 rows or more, unsplit or (16-row x tiles) split at most 4 ways:
            # on the H200 (s35-gemm-*, bf16 x at M = 1-16, the five problems) quantize_x then the GEMM was 3-37%
            # faster with 64-row tiles (7168 x 2048, M = 1: 5.2 against 7.1 us; 4096 x 7168, M = 1: 8.8-9.2 against
            # 11.3-11.5), with 7 splits (2112 x 7168, M = 1-16: 6.7-8.1 against 7.1-8.3) and with 4 at M = 1-8
            # (4096 x 7168, row-scaled: 9.2-9.6 against 9.8-9.9); inside was faster or as fast unsplit (24576 x
            # 1536: 9.4-10.7 against 9.6-11.6, 16384 x 16384) and at 4 splits at M = 16 (4096 x 7168: 11.0-11.3
            # against 11.1-13.0); and not where the problem's own config splits K over CTA pairs (dsmem), whose
            # GEMM inside drops the split (s36-gemm-final-*: 4096 x 7168, M = 16, per tensor and row-scaled,
            # quantize_x then the GEMM at the split 10.0-10.2 us against 11.0-11.1 inside at 16/128/1/4)
            if how == "auto" and ((kc or fcfg.kc) > 1 or not fcfg.swap or fcfg.BM * fcfg.ms > FUSED_MAX_ROWS or (
                    scale != "block" and (fused_w_rows(fcfg, N, K, w_dtype, sms) < FUSED_MIN_W_ROWS or fcfg.BN < 128
                                          or fcfg.grid_splits > (4 if fcfg.BM >= 16 else 1) or cfg.dsmem))):
                how = "kernel"
            elif deepest_stages(fcfg.BM, fcfg.BN, w_dtype, scale == "block", True) < 2:
                how = "kernel"  # no room for a ring with x's bf16 tiles too (BM = 256 with BN = 64; "fused" has W
                # as A: an x-as-A config gave way to one above, or was refused)
            else:
                how, cfg = "fused", fcfg
        opts.setdefault("mc", cfg.mc)
        opts.setdefault("ms", cfg.ms)
        opts.setdefault("kwg", cfg.kwg)
        opts.setdefault("swap", cfg.swap)
        if cfg.BM * opts["ms"] < M:  # the kernel computes one tile of x rows: the rest of y would not be written
            # (the ms it is built with: an ms option overrode the config's after this was checked)
            raise ValueError(("config " if config is not None else "the chosen config ") + str(cfg.short) +
                             (f" with ms={opts['ms']}" if opts["ms"] != cfg.ms else "") +
                             f": a tile of BM·ms = {cfg.BM * opts['ms']} x rows, fewer than M = {M}")
        cfg = cfg._replace(swap=opts["swap"])
        if cfg.ksplit > 1 or not cfg.swap and cfg.splits != 1:  # x as A, or W as A with dsmem: K split over a
            # cluster of 2 or 4 CTAs, not with ms or mc
            if cfg.splits not in (2, 4) or opts["ms"] != 1 or opts["mc"] != 1 or opts["kwg"]:
                raise ValueError(f"config {cfg.short}: splits={cfg.splits}, but " + (
                    "x as the wgmmas' A (swap=False)" if not cfg.swap else "dsmem") + " splits K only over a cluster "
                    "of 2 or 4 CTAs (splits 1, 2 or 4), and not with ms, mc or kwg")
            opts["ksplit"] = cfg.splits
        cl = max(opts["mc"], opts["ms"], opts.get("ksplit", 1))
        if cl > sms:  # (parts_for's grid: no cluster at all)
            raise ValueError(f"config {cfg.short}: clusters of {cl} CTAs, each on an SM of its own, on a GPU of "
                             f"{sms} SMs")
        if kc is None:  # the config's, but one with x quantized inside, x multicast or kwg, or W multicast over
            # more CTAs than divide its K steps a stage
            kc = 1 if how == "fused" or opts["mc"] > 1 or cfg.kc % opts["ms"] or opts["kwg"] else cfg.kc
        cfg = with_kc(cfg, kc, w_dtype, scale == "block")
        opts["kc"] = kc
        if kc > 1 and K % step_values(w_dtype):  # the operands' [K / bk, rows, bk] views
            raise ValueError(f"kc={kc}: stages of several K steps take K a multiple of {KBYTES} bytes "
                             f"({step_values(w_dtype)} values), not K = {K}")
        if cfg.ksplit == 1 and not 0 <= cfg.splits <= k_stages(K, w_dtype, kc):  # (a cluster's K split: the last
            # CTA takes every K step where there are fewer than its CTAs)
            raise ValueError(f"config {cfg.short}: splits={cfg.splits}, 0 (stream K) or 1 to the "
                             f"{k_stages(K, w_dtype, kc)} stages of K = {K} (no empty share)")
        if how == "fused":
            opts.setdefault("x_scale", "fused")
        if cfg.stages is not None:
            stages = cfg.stages
            if how == "fused":  # as deep a ring as the config's shared memory holds (two CTAs an SM stay two)
                plain = stage_bytes(cfg.BM, cfg.BN, scale == "block")
                stages = min(max(2, stages * plain // stage_bytes(cfg.BM, cfg.BN, fused=True)),
                             deepest_stages(cfg.BM, cfg.BN, w_dtype, fused=True))
                stages -= stages % 2 if opts["kwg"] else 0
            opts.setdefault("stages", stages)
        # x in half boxes where a tile reaches past M (gemm_spec's xhalf): measured faster only where M ends
        # inside one tile of 128 or more rows (s19-m-sweep); Gemm(xhalf=True) wherever the kernel can, False never
        xhalf = opts.pop("xhalf", None)
        if xhalf is None:  # not where quantize_x pads x to the tile (how "kernel")
            xhalf = how != "kernel" and opts["ms"] == 1 and cfg.BM >= 128 and M < cfg.BM
        opts["xhalf"] = bool(xhalf) and kc == 1 and opts["swap"] and half_boxes_fit(cfg.BM, opts["mc"],
                                                                                    how == "fused")
        spec = gemm_spec(cfg.BM, cfg.BN, cfg.wgs, w_dtype=w_dtype, y_dtype=y_dtype, w_scale=scale if fp8 else None,
                         **opts)
        q = quantize_x_spec("block" if scale == "block" else "token") if how == "kernel" else None
        return spec, cfg.grid_splits, q

    def __call__(self, x, w, *, w_scale=None, scale=None, x_scale=None, out=None, out_dtype=None, config=None,
                 **spec_options):
        # the common call, planned, checked and looked up before: its signature (all the checks and the plan
        # depend on but the addresses) finds it, and only the addresses' alignment is checked again. An eager
        # call's host time was 22-38 us with the plan memoized, against 4-10 us of GPU time (benchmarks/README.md)
        if isinstance(config, list):  # (given_config takes a list: hashed as a tuple, its calls are kept too)
            config = tuple(config)
        try:
            sig = _signature(x, w, w_scale, scale, x_scale, out, out_dtype, config, spec_options)
            call = self._calls.get(sig)
        except (AttributeError, TypeError):  # not tensors, or an unhashable option: the checks say what
            sig = call = None
        if out is not None and out.numel():
            _check_apart(out, x, w, w_scale, x_scale)
        if call is not None and not (x.data_ptr() | w.data_ptr() | (0 if out is None else out.data_ptr())) & 15:
            return call(x, w, w_scale, x_scale, out)
        call = None
        if sig is not None and len(x.shape) == 2 and (x.shape[0] > MAX_ROWS or config is not None):
            # (a given config's tile may hold fewer rows than M <= MAX_ROWS: blocks of it, as past MAX_ROWS)
            rows = launch_rows(config, dict(self.options, **spec_options), self._device_sms(x))
            if x.shape[0] > rows:
                call = self._in_row_blocks(x, w, w_scale, scale, x_scale, out, out_dtype, config, spec_options, rows)
        if call is None:
            call = self._prepare(x, w, w_scale, scale, x_scale, out, out_dtype, config, spec_options)
        if sig is not None:
            self._keep(sig, call)
        return call(x, w, w_scale, x_scale, out)

    def _keep(self, sig, call):
        """`call` kept as the prepared call of signature `sig` (up to 4,096 of them, then the Gemm starts over)."""
        if len(self._calls) >= 4096:
            self._calls.clear()
        self._calls[sig] = call

    def _block_call(self, x, w, w_scale, scale, x_scale, out, out_dtype, config, spec_options):
        """The prepared call of one block of a call's rows: the one kept for its signature (blocks of one length
        share it, in this call and others, as calls of a block's rows themselves do), else a new one, kept."""
        sig = _signature(x, w, w_scale, scale, x_scale, out, out_dtype, config, spec_options)
        call = self._calls.get(sig)
        if call is None:
            call = self._prepare(x, w, w_scale, scale, x_scale, out, out_dtype, config, spec_options)
            self._keep(sig, call)
        return call

    def _device_sms(self, x):
        """The SMs of x's GPU, asked once (torch's lookup was ~15% of an eager call's host time); 132 for x not on
        a GPU, which the checks refuse."""
        sms = self._sms.get(x.device.index)
        if sms is None:
            if not x.is_cuda:
                return 132
            import torch
            sms = self._sms[x.device.index] = torch.cuda.get_device_properties(x.device).multi_processor_count
        return sms

    def _in_row_blocks(self, x, w, w_scale, scale, x_scale, out, out_dtype, config, spec_options, rows):
        """The call of x of more rows than a launch takes (`rows`, launch_rows; a prefill's M, say), a _RowBlocks:
        the inputs checked whole (errors name the caller's tensors), then each of `row_blocks`' blocks of rows
        a prepared call into y's rows (`_block_call`: its checks and plan, shared by blocks of one length; kept
        with the whole call, so a call of the same signature again plans and checks nothing: blocks of a
        16-byte-aligned x, y and x_scale's rows are 16-byte aligned too, their pitch checked here)."""
        import torch
        _check_inputs(torch, x, w, w_scale, scale, x_scale, out, out_dtype)
        M, N = x.shape[0], w.shape[0]
        new_y = functools.partial(torch.empty, (M, N), device=x.device, dtype=out_dtype or torch.bfloat16)
        blocks = tuple((rows, self._block_call(x[rows], w, w_scale, scale,
                                               None if x_scale is None else x_scale[rows],
                                               None if out is None else out[rows], out_dtype, config, spec_options))
                       for rows in (slice(*b) for b in row_blocks(M, rows)))  # (y's blocks: _RowBlocks' y's)
        return _RowBlocks(blocks, new_y)

    def torch_op(self, name="nvtma::gemm"):
        """This Gemm as the torch custom op `name` ("namespace::op",
        torch.library.custom_op, with a fake implementation), so that
        torch.compile takes it into its graph (fullgraph, CUDA graphs):
        ``op(x, w, w_scale=None, x_scale=None, scale=None, f32=False) -> y``,
        as ``self(x, w, w_scale=, x_scale=, scale=, out_dtype=torch.float32
        if f32)``. Returns the op (``torch.ops.namespace.op``); a name is
        registered once a process (torch refuses it a second time)."""
        import inspect
        from typing import Optional

        import torch

        def impl(x, w, w_scale=None, x_scale=None, scale=None, f32=False):
            return self(x, w, w_scale=w_scale, x_scale=x_scale, scale=scale,
                        out_dtype=torch.float32 if f32 else None)

        def fake(x, w, w_scale=None, x_scale=None, scale=None, f32=False):
            return x.new_empty((x.shape[0], w.shape[0]), dtype=torch.float32 if f32 else torch.bfloat16)
        P, T, OT = inspect.Parameter, torch.Tensor, Optional[torch.Tensor]
        impl.__signature__ = inspect.Signature(
            [P("x", P.POSITIONAL_OR_KEYWORD, annotation=T), P("w", P.POSITIONAL_OR_KEYWORD, annotation=T),
             P("w_scale", P.POSITIONAL_OR_KEYWORD, default=None, annotation=OT),
             P("x_scale", P.POSITIONAL_OR_KEYWORD, default=None, annotation=OT),
             P("scale", P.POSITIONAL_OR_KEYWORD, default=None, annotation=Optional[str]),
             P("f32", P.POSITIONAL_OR_KEYWORD, default=False, annotation=bool)], return_annotation=T)
        op = torch.library.custom_op(name, mutates_args=(), device_types="cuda")(impl)
        op.register_fake(fake)
        return op

    def _prepare(self, x, w, w_scale, scale, x_scale, out, out_dtype, config, spec_options):
        """The inputs checked (typed errors), the problem planned: a _Prepared
        that runs such calls."""
        import torch
        _check_inputs(torch, x, w, w_scale, scale, x_scale, out, out_dtype)
        M, K = x.shape
        N = w.shape[0]
        fp8 = w.dtype == torch.float8_e4m3fn
        sms = self._device_sms(x)
        x16 = fp8 and x.dtype == torch.bfloat16  # to be quantized: in the GEMM, or by quantize_x first
        y_dtype = out.dtype if out is not None else out_dtype or torch.bfloat16
        if not (M and N and K):  # nothing to stream: y is [M, N] zeros (torch.matmul's), no launch
            return _Zeros(functools.partial(torch.zeros, (M, N), device=x.device, dtype=y_dtype))
        if self.autotune and config is None:
            config = self._tuned(x, w, w_scale, scale, x_scale, y_dtype, sms, spec_options)
        spec, splits, q = self.plan(M, N, K, F8 if fp8 else "bf16", scale,
                                    "f32" if y_dtype == torch.float32 else "bf16", quantize=x16, sms=sms,
                                    config=config, **spec_options)
        BN, ms, BM, kc = spec.consts["BN"], spec.info["ms"], spec.info["BM"], spec.info["kc"]
        quantize = None
        if q is not None:  # quantized into the padded rows: no extra kernel
            quantize = self._quantizer(q.consts["granularity"], self.kernel_rows(M, BM, ms), K, x.device)
        parts, grid = parts_for(splits, N, K, BN, F8 if fp8 else "bf16", sms, spec.info["mc"], ms, kc,
                                spec.info["ksplit"])
        scales = (2 if spec.info["x_scale"] != "fused" else 1) if fp8 else 0
        workspaces = functools.partial(self._workspace, torch, x.device, spec, N)
        return _Prepared(_own_launcher(self.module(spec), "gemm"), (workspaces, x.device.index, parts), grid,
                         functools.partial(torch.empty, (M, N), device=x.device, dtype=y_dtype), scales, quantize,
                         quantize is None and x.dtype == torch.float8_e4m3fn and scale == "block", kc > 1)

    def _tuned(self, x, w, w_scale, scale, x_scale, y_dtype, sms, spec_options):
        """The config `autotune` runs for this call's problem: None (the
        table's unless autotune is "all"), or the fastest of ``candidates``
        on this GPU, timed as benchmarks/gemm_bench.py times: a CUDA graph
        of TUNE_CALLS calls with the call's x and scales, W rotating over
        copies of it of at least twice the L2 (so from DRAM, as weights
        stream), best of 5 replays. Under graph capture nothing is timed: a
        winner timed before (in this process or stored) runs, else (None)
        the table's or the cost model's config. The timing runs on a thread
        and stream of its own, after the call's stream's work: torch's CUDA
        graph trees put every allocation of the calling thread during their
        warm-up calls into the graph's memory pool, W's copies too."""
        import torch
        from ..autotune import Autotuner
        from ..runtime.errors import LaunchError
        M, K = x.shape
        N = w.shape[0]
        w_dtype = F8 if w.dtype == torch.float8_e4m3fn else "bf16"
        cands = candidates(M, N, K, w_dtype, sms, scale=scale)
        in_table = self.autotune != "all" and _measured(M, N, K, cands[0].BM, w_dtype, sms, scale)
        if in_table:
            return None
        key = (M, N, K, str(w.dtype), str(x.dtype), scale, str(y_dtype), sms, tuple(sorted(spec_options.items())))
        tuner = self._tuners.get(key)
        if tuner is None:
            pool = []  # W and its copies, made when a config is first timed (not for a stored winner)

            def weights():
                if not pool:
                    l2 = torch.cuda.get_device_properties(w.device).L2_cache_size or 50 << 20
                    nbytes = max(1, w.numel() * w.element_size())
                    pool.append(w)
                    pool.extend(w.clone() for _ in range(0 if nbytes >= 2 * l2 else -(-2 * l2 // nbytes)))
                return pool

            def launcher(cfg):
                config = Config(*cfg["config"])
                turn = [0]

                def run(x, w, w_scale, x_scale):
                    ws = weights()
                    turn[0] += 1
                    try:
                        return self(x, ws[turn[0] % len(ws)], w_scale=w_scale, scale=scale, x_scale=x_scale,
                                    out_dtype=y_dtype, config=config, **spec_options)
                    except (ImportError, OSError, ValueError) as e:  # no kernel for it here (no MLIR, no artifact)
                        raise LaunchError(f"config {config.short}: {e}", rule="autotune") from e
                return run

            def timer(run):
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    for _ in range(TUNE_CALLS):
                        run()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                best = float("inf")
                for _ in range(5):
                    start.record()
                    graph.replay()
                    end.record()
                    end.synchronize()
                    best = min(best, start.elapsed_time(end) / TUNE_CALLS / 1e3)
                return best
            # the kernel's source is part of the name: a winner stored for other kernels is not reused
            name = "nvtma.kernels.gemm:" + _gemm_source()
            tuner = self._tuners[key] = Autotuner(launcher, [dict(config=list(c)) for c in cands],
                                                  key=lambda *a: list(key[:-1]) + [repr(key[-1])], name=name,
                                                  timer=timer)
            tuner.weights = pool
        if torch.cuda.is_current_stream_capturing():
            known = tuner.known_config(x, w, w_scale, x_scale)
            return None if known is None else Config(*known["config"])
        caller = torch.cuda.current_stream(x.device)

        def tune():
            with torch.cuda.device(x.device):
                side = self._tuning.get(x.device.index)
                if side is None:  # (one a device: the trials' split-K workspaces are the stream's)
                    side = self._tuning[x.device.index] = torch.cuda.Stream(x.device)
                side.wait_stream(caller)  # x, W and the scales as the call's stream leaves them
                try:
                    with torch.cuda.stream(side):
                        return tuner.best_config(x, w, w_scale, x_scale)
                finally:
                    side.synchronize()
                    tuner.weights.clear()  # the copies of W go once timed
        return Config(*_on_a_thread_of_its_own(tune)["config"])


TUNE_CALLS = 20  # calls in a CUDA graph `autotune` times (as benchmarks/gemm_bench.py does)


@functools.lru_cache(maxsize=None)
def _gemm_source():
    """The GEMM kernel's source fingerprint (what names its artifacts)."""
    from ..dsl.kernel import source_fingerprint
    return source_fingerprint(gemm_kernel.fn)


class _Zeros:
    """The prepared call of an empty problem (M, N or K zero): zeros."""
    __slots__ = ("new_y",)

    def __init__(self, new_y):
        self.new_y = new_y

    def __call__(self, x, w, w_scale, x_scale, out):
        return out.zero_() if out is not None else self.new_y()


class _RowBlocks:
    """The prepared call of more rows of x than a launch takes (Gemm._in_row_blocks): each block of rows by its
    own _Prepared, into y's rows."""
    __slots__ = ("blocks", "new_y")

    def __init__(self, blocks, new_y):
        self.blocks, self.new_y = blocks, new_y  # ((slice of rows, _Prepared), ...)

    def __call__(self, x, w, w_scale, x_scale, out):
        y = out if out is not None else self.new_y()
        for rows, call in self.blocks:
            call(x[rows], w, w_scale, None if x_scale is None else x_scale[rows], y[rows])
        return y


class _Prepared:
    """One planned and checked kind of Gemm call (Gemm.__call__): y = x·Wᵀ for
    tensors of its signature, the kernel and its launch's arguments (grid,
    workspace, parts: the same objects every call, so the launch takes the
    C fast path) looked up once."""
    __slots__ = ("kernel", "tail", "grid", "new_y", "scales", "quantize", "block_x", "views", "w_views", "ws")

    def __init__(self, kernel, tail, grid, new_y, scales, quantize, block_x, views=False):
        self.kernel, self.tail, self.grid, self.new_y = kernel, tail, grid, new_y
        self.scales, self.quantize, self.block_x, self.views = scales, quantize, block_x, views
        self.w_views = {}  # id(W) -> (weakref to W, its address, its view, its finalizer): see operand_w
        self.ws = {}  # CUDA stream -> its (workspace, counters): the same objects each call (the C fast path)

    def operand_w(self, w):
        """W's [K / bk, rows, bk] view, made once per W tensor (measured on the H200: 3.6-4.3 us of an
        eager call's 17.5-18 went to both operands' views; a model calls each of its weights again and
        again). Each view is of a detached alias of W, so it keeps W's bytes alive only while W itself
        is: once W is freed, a finalizer drops its view."""
        c = self.w_views.get(id(w))
        if c is not None and c[0]() is w:
            if c[1] == w.data_ptr():
                return c[2]
            c[3].detach()  # the same W on other bytes (w.data = ...): its old view goes now
        view = gemm_operand_view(w.detach())
        key = id(w)

        def drop(views=self.w_views, key=key, view=view):
            if key in views and views[key][2] is view:
                del views[key]
        self.w_views[key] = (weakref.ref(w), w.data_ptr(), view, weakref.finalize(w, drop))
        return view

    def __call__(self, x, w, w_scale, x_scale, out, *profile):
        """One call (`profile`: the int64 buffer of a kernel built with gemm_spec's profile, last)."""
        if self.quantize is not None:  # bf16 x quantized by quantize_x first
            x, x_scale = self.quantize(x)
        elif self.block_x:  # e4m3 x as given; its block scales as the kernel takes them
            x_scale = block_scales_for_kernel(x_scale)
        if self.views:  # a stage of several K steps: W and x K step outermost
            x, w = gemm_operand_view(x), self.operand_w(w)
        y = out if out is not None else self.new_y()
        workspaces, dev, parts = self.tail
        stream = _stream_key(dev) if dev is not None else None  # the launch's: each its own workspace
        wc = self.ws.get(stream)
        if wc is None:
            wc = self.ws[stream] = workspaces(stream)
        ws, counters = wc
        if profile:
            self.kernel(w, x, y, ws, counters, parts, *(w_scale, x_scale)[:self.scales], *profile, grid=self.grid)
        elif self.scales == 2:
            self.kernel(w, x, y, ws, counters, parts, w_scale, x_scale, grid=self.grid)
        elif self.scales == 1:
            self.kernel(w, x, y, ws, counters, parts, w_scale, grid=self.grid)
        else:
            self.kernel(w, x, y, ws, counters, parts, grid=self.grid)
        return y


def row_blocks(M, rows=ROWS_A_LAUNCH):
    """The [start, stop) blocks of x's M rows that Gemm calls its kernels on: all M up to `rows` (what a launch
    takes: ROWS_A_LAUNCH, or a given config's BM·ms, or MAX_ROWS), else ceil(M / rows) blocks, each launch
    streaming W once. Launches of CTA pairs (rows past MAX_ROWS), whose tile is sized to their rows, take
    blocks as even as 64-row units allow (a CTA's 32), the last the rest (520 rows: 320 + 200; 1100: 384 + 384
    + 332): against 512 + 8 and 512 + 512 + 76 faster at 46 of 50 problems, 1.076x in geometric mean, up to
    1.21x, slower by at most 1% at 4 (H100, #13's five shapes at M = 520-1100, per tensor and bf16,
    benchmarks/diag/rows_even.py, s49-rows-even). Smaller launches take full blocks and the rest last, in as
    small a tile as it fits: with blocks of 256 rows, 300 rows as 152 + 148 (session 42's even blocks) took two
    256-row tiles where 256 + 44 takes one and a 48-row tile, 3-29% faster at every problem (H100,
    benchmarks/rows_bench.py, M = 300-520, #13's shapes)."""
    if M <= rows:
        return [(0, M)]
    size = -(-M // (64 * -(-M // rows))) * 64 if rows > MAX_ROWS else rows
    return [(a, min(a + size, M)) for a in range(0, M, size)]


# options that shape the kernel's cluster, ring or wgmmas: with any of them a call takes blocks of MAX_ROWS rows of
# x, as configs for M <= MAX_ROWS plan them (the CTA pairs past it, BM 136-256 a CTA, have less room for a ring and
# fewer registers: kc=4, stages=6 or chains=2 planned at every M <= 256 where a pair refused them)
SHAPE_OPTIONS = ("mc", "ms", "kwg", "swap", "kc", "stages", "chains")


def launch_rows(config, spec_options, sms=132):
    """The rows of x a launch takes for a call's `config`, options and GPU: a given config's BM·ms (the ms
    option's where one is given; at most ROWS_A_LAUNCH), MAX_ROWS where an option shapes the kernel
    (SHAPE_OPTIONS) or the GPU has one SM (no CTA pair), else ROWS_A_LAUNCH. The options are checked first
    (`_check_options`: a str ms was a product of strings here)."""
    _check_options(spec_options)
    if config is not None:
        cfg = given_config(config)
        return max(1, min(cfg.BM * spec_options.get("ms", cfg.ms), ROWS_A_LAUNCH))
    return MAX_ROWS if sms < 2 or set(SHAPE_OPTIONS) & spec_options.keys() else ROWS_A_LAUNCH


def _own_launcher(module, name):
    """A launcher of kernel `name` of `module` for one prepared call (or quantizer) alone, the module's cubin
    loaded once for all. A launcher keeps the last launch's packed arguments, and repacks, checking each tensor
    again, wherever a shape changes: calls of several shapes on one launcher (a call past 512 rows, its row
    blocks of 320 and 280 on one kernel) packed every argument each launch (cProfile on an H100, s52b: the full
    packing 0.135 s of 1,000 such calls' 0.211)."""
    from ..runtime.launch import new_kernel
    module.kernel(name)  # (AttributeError for a name the module lacks)
    return new_kernel(module, name)


def _stream_key(device_index):
    """Whose split-K workspace a call on the device takes (Gemm._workspace):
    torch's current CUDA stream (its raw handle, what the launch uses), or
    (that handle, "capture") while a graph is being captured on it."""
    import torch
    s = torch._C._cuda_getCurrentRawStream(device_index)
    return (s, "capture") if torch.cuda.is_current_stream_capturing() else s


def _on_a_thread_of_its_own(fn):
    """fn() run by a new thread, its value returned (or its exception raised) here."""
    import threading
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # (raised in the caller's thread)
            out["error"] = e
    t = threading.Thread(target=run, name="nvtma-gemm")
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def _relaxed_capture():
    from ..runtime.driver import relaxed_capture
    return relaxed_capture()


def gemm_operand_view(t):
    """A [rows, K] operand as the [K / bk, rows, bk] view (bk: the K values of
    128 bytes; K a multiple of bk) a kernel of several K steps a stage (gemm_spec's
    kc) loads its boxes from: one box, [kc, rows, bk], lands as kc K-step tiles."""
    rows, K = t.shape
    bk = KBYTES // t.element_size()
    return t.as_strided((K // bk, rows, bk), (bk, t.stride(0), 1), t.storage_offset())


def workspace_shape(spec, N):
    """((rows, columns) of the split-K workspace, counters) a gemm spec
    takes for N rows of W: a row per tile and CTA of x rows (ms), f32
    [tiles·ms, BN·BM], each row a tile's partial sums in the accumulators'
    fragment order (with two consumer warpgroups or kwg, in y's order: x row
    by x row), every value of a tile a place, so the kernel needs no bounds;
    and a count per row. x as the wgmmas' A takes whole-K tiles: one row."""
    BN, BM, ms = spec.consts["BN"], spec.info["BM"], spec.info["ms"]
    rows = -(-N // BN) * ms if spec.info["swap"] else 1  # x as A (whole-K tiles) never touches it
    return (rows, BN * BM), rows


def workspace(torch, device, spec, N):
    """The zeroed split-K workspace and counters of `workspace_shape`, on
    `device`: each call's last unit of a tile leaves its part zero again."""
    shape, count = workspace_shape(spec, N)
    return (torch.zeros(*shape, device=device, dtype=torch.float32),
            torch.zeros(count, device=device, dtype=torch.int32))


def dequantize_x(xq, x_scale):
    """e4m3 x [M, K] and its scales (per token [M], or 1x128 blocks [M,
    ceil(K/128)]: what ``Gemm.quantize`` returns) back to float32: the x a
    GEMM sees, for references."""
    import torch
    M, K = xq.shape
    if x_scale.dim() == 1:
        return xq.float() * x_scale[:, None]
    kb = x_scale.shape[1]
    return (torch.nn.functional.pad(xq.float(), (0, kb * 128 - K)).view(M, kb, 128)
            * x_scale[:, :, None]).reshape(M, kb * 128)[:, :K]


def block_scale_columns(M):
    """Columns of x's transposed 1x128 block-scale storage ([ceil(K/128),
    columns], zeros past M): M rounded up to a power of two from 32 (to a
    multiple of 4 past 256), so a GEMM stage's TMA box of them (max(BM, 32)
    columns, BM the x tile) lies within it and no column is filled out of
    bounds. Measured on the H200 against M rounded up to 4, as before
    (benchmarks/diag/scale_pad.py, s32-scale-pad; table configs, M = 1-128):
    M = 1 4-5% faster (4096 x 7168: 8.89 -> 8.41 us; 7168 x 2048: 5.02 ->
    4.83), M = 8 up to 1.2%, the rest within 0.7%."""
    return max(32, 1 << (M - 1).bit_length()) if M <= 256 else -(-M // 4) * 4


def block_scales_for_kernel(x_scale):
    """1x128 x scales [M, ceil(K/128)] (DeepGEMM's layout) as the kernel's
    transposed [ceil(K/128), C] (C >= M, 16-byte rows): the storage itself
    when they are a view of such storage (what ``Gemm.quantize`` returns),
    from the view's first column (a block of its rows, as a call past a
    launch's rows takes them: an address 16-byte aligned), else a copy of
    block_scale_columns(M). (The columns past M a view reaches are read for
    x rows past M: zeros, whose products are never stored.)"""
    import torch
    M, kb = x_scale.shape
    rows, cols = x_scale.stride()
    start = x_scale.storage_offset()
    if (x_scale.dtype == torch.float32 and rows == 1 and cols % 4 == 0 and x_scale.data_ptr() % 16 == 0
            and start + M <= cols and x_scale.untyped_storage().nbytes() >= kb * cols * 4):
        return x_scale.as_strided((kb, cols - start), (cols, 1), start)
    t = torch.zeros(kb, block_scale_columns(M), device=x_scale.device, dtype=torch.float32)
    t[:, :M] = x_scale.t()
    return t


def _signature(x, w, w_scale, scale, x_scale, out, out_dtype, config, spec_options):
    """What Gemm's checks and plan read of a call, all but the addresses:
    classes, shapes, strides, dtypes and devices of the tensors, and the
    options (AttributeError for non-tensors; unhashable options make it
    unhashable)."""
    return (x.__class__, x.shape, x.stride(), x.dtype, x.get_device(),
            w.__class__, w.shape, w.stride(), w.dtype, w.get_device(), scale, _needs_grad(x, w),
            None if w_scale is None else (w_scale.__class__, w_scale.shape, w_scale.dtype),
            None if x_scale is None else (x_scale.__class__, x_scale.shape, x_scale.dtype),
            None if out is None else (out.__class__, out.shape, out.stride(), out.dtype, out.get_device()),
            out_dtype, config, tuple(spec_options.items()) if spec_options else None)


def _needs_grad(x, w):
    """Whether autograd would track this call (what _check_inputs refuses): a signature of its own, so a call
    planned under no_grad is not reused outside it unchecked."""
    if not (x.requires_grad or w.requires_grad):
        return False
    import torch
    return torch.is_grad_enabled()


def _check_apart(out, *inputs):
    """A typed error where `out`'s bytes overlap an input's (y written while
    the kernel still reads them)."""
    def span(t):
        p = t.data_ptr()
        return p, p + (sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride())) + 1) * t.element_size()
    try:
        lo, hi = span(out)
        for name, t in zip(("x", "w", "w_scale", "x_scale"), inputs):
            if t is not None and t.numel():
                a, b = span(t)
                if a < hi and lo < b:
                    from ..runtime.errors import LaunchError
                    raise LaunchError(f"out overlaps {name} in memory: y would be written over what the kernel "
                                      "reads", arg="out", rule="overlap")
    except AttributeError:  # not tensors: the checks say what
        pass


def _bad(msg, arg, rule):
    from ..runtime.errors import LaunchError
    raise LaunchError(msg, arg=arg, rule=rule)


def _check_matrix(torch, name, t):
    """A 2-D torch tensor on a GPU whose rows are contiguous at a 16-byte pitch and address (empty: any)."""
    if not isinstance(t, torch.Tensor) or t.dim() != 2:
        _bad(f"{name}: a 2-D torch tensor, got {getattr(t, 'shape', type(t).__name__)}", name, "shape")
    if not t.is_cuda:
        _bad(f"{name}: on device {t.device}, not a GPU", name, "device")
    if not t.numel():  # nothing the kernel reads or writes (no launch: Gemm._prepare)
        return
    if t.stride(1) != 1 or (t.stride(0) * t.element_size()) % 16:
        _bad(f"{name}: rows must be contiguous with a 16-byte multiple pitch (strides {t.stride()})", name, "stride")
    if t.data_ptr() % 16:
        _bad(f"{name}: address not 16-byte aligned", name, "alignment")


def _check_quantize_input(torch, x, granularity):
    """Typed errors for what quantize_x cannot take: it reads x 16 bytes a thread (8 bf16 values from a multiple of
    8, so K a multiple of 8, or a row's last vector reads past it) at 16-byte aligned rows; a misaligned or ragged x
    faulted the context (misaligned address) before this check."""
    if granularity not in ("token", "block"):
        _bad(f"granularity={granularity!r}: 'token' (a scale per row) or 'block' (per 1x128 block)", "granularity",
             "scale")
    if isinstance(x, torch.Tensor) and x.dim() == 2:
        if x.dtype != torch.bfloat16:
            _bad(f"x: bf16 to quantize, got {x.dtype}", "x", "dtype")
        if x.shape[1] % 8:
            _bad(f"x has K = {x.shape[1]} columns: a multiple of 8 (its kernel reads 8 values a thread)", "x",
                 "shape")
    _check_matrix(torch, "x", x)


def _check_inputs(torch, x, w, w_scale, scale, x_scale, out=None, out_dtype=None):
    """Typed errors for what the kernel cannot take (dtype, shape, stride, alignment, scales, device, out)."""
    bad = _bad
    for name, t in (("x", x), ("w", w)) + ((("out", out),) if out is not None else ()):
        _check_matrix(torch, name, t)
    for name, t in (("w_scale", w_scale), ("x_scale", x_scale)):
        if t is not None and not isinstance(t, torch.Tensor):  # (an AttributeError on .shape below)
            bad(f"{name} is a {type(t).__name__}: a torch tensor", name, "scale")
    if torch.is_grad_enabled() and (x.requires_grad or w.requires_grad):
        # y would carry no grad_fn: gradients stopped here without a word
        bad("x or w requires grad: Gemm is for inference (no backward); call it under torch.no_grad() or "
            "torch.inference_mode(), or detach", "x" if x.requires_grad else "w", "autograd")
    if x.device != w.device:
        bad(f"x on {x.device}, w on {w.device}", "w", "device")
    M, K = x.shape
    N, Kw = w.shape
    if K != Kw:
        bad(f"x is [{M}, {K}], w is [{N}, {Kw}]: K differs", "w", "shape")
    if out_dtype not in (None, torch.bfloat16, torch.float32):
        bad(f"out_dtype: torch.bfloat16 or torch.float32, got {out_dtype}", "out_dtype", "dtype")
    if out is not None:
        if out.device != x.device:
            bad(f"out on {out.device}, x on {x.device}", "out", "device")
        if tuple(out.shape) != (M, N):
            bad(f"out is {list(out.shape)}: y is [{M}, {N}]", "out", "shape")
        if M > 1 and out.stride(0) < N:  # (an expanded or as_strided view: every row's y into the same bytes)
            bad(f"out: its rows overlap in memory (row stride {out.stride(0)} < N = {N})", "out", "stride")
        if out.dtype not in (torch.bfloat16, torch.float32):
            bad(f"out is {out.dtype}: y is torch.bfloat16 or torch.float32", "out", "dtype")
        if out_dtype not in (None, out.dtype):
            bad(f"out is {out.dtype}, out_dtype {out_dtype}: they must agree", "out_dtype", "dtype")
    if (K * w.element_size()) % 16 or (N * 2) % 16:
        bad(f"K = {K} and N = {N} must be multiples of 16 bytes", "w", "shape")
    if w.dtype == torch.float8_e4m3fn:
        if scale not in ("tensor", "row", "block"):
            bad(f"fp8 W needs scale='tensor', 'row' or 'block', got {scale!r}", "scale", "scale")
        want = {"tensor": (1,), "row": (N,), "block": (-(-N // 128), -(-K // 128))}[scale]
        if w_scale is None or tuple(w_scale.shape) != want or w_scale.dtype != torch.float32:
            bad(f"w_scale for scale={scale!r}: f32 of shape {want}, got "
                f"{None if w_scale is None else (tuple(w_scale.shape), w_scale.dtype)}", "w_scale", "scale")
        if x.dtype == torch.float8_e4m3fn:
            kb = -(-K // 128)
            xw = [(M,)] if scale != "block" else [(M, kb)]
            if x_scale is None or tuple(x_scale.shape) not in xw or x_scale.dtype != torch.float32:
                bad(f"fp8 x needs x_scale f32 of shape {' or '.join(map(str, xw))}", "x_scale", "scale")
        elif x.dtype != torch.bfloat16:
            bad(f"x: bf16 or e4m3 with fp8 W, got {x.dtype}", "x", "dtype")
        elif x_scale is not None:  # it would go unread
            bad("x_scale is for e4m3 x; bf16 x is quantized by the call, with scales of its own", "x_scale",
                "scale")
    elif w.dtype == torch.bfloat16:
        if x.dtype != torch.bfloat16 or w_scale is not None or scale is not None or x_scale is not None:
            bad("bf16 W takes bf16 x and no scales", "x", "dtype")
    else:
        bad(f"w: bf16 or float8_e4m3fn, got {w.dtype}", "w", "dtype")
