#!/usr/bin/env python3
"""Experiment: how fast one SM issues m64nNk32 e4m3 wgmmas at the small n of
issue #13's GEMM (twenty-third session). x as the wgmmas' A at 2112 x 7168
(W tiles of 16 rows, 132 CTAs) took ~7.1 us whatever M or kc, with W and x
loaded but no wgmmas 5.1 (s28-xkwg): about 60 clocks a wgmma. Is that the
tensor pipe's rate at small n, one warpgroup's latency (two warpgroups on
alternate stages gained 0.5-0.9 us), or A's read from shared memory (wgmmas
with A in registers skip it)?

Each CTA (one an SM) loads a 64 x 128 A tile and an n x 128 B tile of e4m3
once, then each of its `wgs` consumer warpgroups issues `iters` K steps of
four m64nNk32 wgmmas (a step's 128 bytes of K) into `chains` accumulators,
a commit group a step and at most `lag` groups in flight, A from shared
memory ("ss"), from registers loaded once ("rs": the tensor pipe alone) or
from registers loaded by ldmatrix every step ("rs_ld": what a GEMM with A in
registers would do). It records the consumer warpgroups' clock64 span (the
SM's clocks) and stores the accumulators (so none is dead).
    python3 benchmarks/diag/wgmma_rate.py build DIR    # here
    python3 benchmarks/diag/wgmma_rate.py run DIR      # on the GPU: a JSON line per variant
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

ITERS = 2048
NS = (8, 16, 32, 64, 128, 256)
VARIANTS = [(mode, n, wgs, chains, lag) for n in NS for mode in ("ss", "rs", "rs_ld") for wgs in (1, 2)
            for chains, lag in ((1, 1), (4, 1), (4, 0))
            if not (mode != "ss" and chains == 1) and n * chains // 2 <= 128]


def _kernel():
    from nvtma import cpasync, cuda, dsl, lang, wgmma
    from nvtma.dsl import Int32

    @dsl.kernel(block=lambda n, wgs, chains, iters, mode, lag: (128 * wgs,), name="wgmma_rate")
    def rate(a: dsl.Tensor, b: dsl.Tensor, out: dsl.Tensor, cycles: dsl.Tensor, *, n, wgs, chains, iters, mode,
             lag):
        pool = lang.SMEMPool()
        G2S = cpasync.CopyBulkTensorTileG2SOp
        la = cpasync.make_tiled_tma_atom(G2S(), a, (64, 128), swizzle="swizzle_128b", internal_type="uint8")
        lb = cpasync.make_tiled_tma_atom(G2S(), b, (n, 128), swizzle="swizzle_128b", internal_type="uint8")
        sa, sb = pool.alloc_for(la), pool.alloc_for(lb)
        bar = lang.TMABar(1)
        dsl.barrier()
        with lang.WarpRole(0):
            bar.arrive_expect_tx(0, la.tile_bytes + lb.tile_bytes)
            cpasync.copy(la, [0, 0], sa, tma_bar_ptr=bar.at(0))
            cpasync.copy(lb, [0, 0], sb, tma_bar_ptr=bar.at(0))
        bar.wait(0, False)
        da, db = wgmma.SmemDescriptor(sa), wgmma.SmemDescriptor(sb)
        tid = dsl.thread_idx() % 128
        g = dsl.warpgroup_idx()

        def a_regs(kb):
            # this thread's A fragment of K block kb (64 x 32 bytes) as ldmatrix gives it: the four 8x8 b16
            # matrices of its warp's 16 rows and the block's two 16-byte halves
            lane = tid % 32
            return cuda.ldmatrix(sa, tid // 32 * 16 + lane // 8 % 2 * 8 + lane % 8, kb * 32 + lane // 16 * 16)

        held = [a_regs(kb) for kb in range(4)] if mode == "rs" else None
        dsl.barrier()
        t0 = cuda.clock64()
        loop = dsl.range(iters, carry=(tuple(wgmma.Accumulator(n) for _ in range(chains)),))
        for _, (acc,) in loop:
            acc = list(acc)
            wgmma.fence()
            for kb in range(4):
                a = da.k_block(kb) if mode == "ss" else held[kb] if mode == "rs" else a_regs(kb)
                acc[kb % chains] = wgmma.mma_async(acc[kb % chains], a, db.k_block(kb), a_type="e4m3",
                                                  b_type="e4m3")
            wgmma.commit_group()
            wgmma.wait_group(lag)
            dsl.yield_(tuple(acc))
        (acc,) = loop.results
        wgmma.wait_group(0)
        t1 = cuda.clock64()
        with dsl.if_(tid == 0):
            cycles[dsl.block_idx() * 2 + g] = (t1 - t0).to(Int32)
        total = [v for c in acc for v in c.values()]
        s = total[0]
        for v in total[1:]:
            s = s + v
        out[dsl.block_idx() * 256 + g * 128 + tid] = s

    return rate


def _specs():
    from nvtma import dsl
    rate = _kernel()
    for mode, n, wgs, chains, lag in VARIANTS:
        sp = rate.specialize([dsl.Tensor("f8E4M3FN", (64, 128)), dsl.Tensor("f8E4M3FN", (n, 128)),
                              dsl.Tensor("f32", (None,)), dsl.Tensor("i32", (None,))],
                             n=n, wgs=wgs, chains=chains, iters=ITERS, mode=mode, lag=lag)
        yield (mode, n, wgs, chains, lag), sp


def build(d):
    import common
    specs = [sp for _, sp in _specs()]
    common.save_new(d, specs)
    (Path(d) / "index.json").write_text(json.dumps([[list(v), sp.key] for v, sp in _specs()]))


def run(d):
    import torch
    import nvtma.runtime
    import common
    dev, stream, gen = common.gpu(torch)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    a = torch.randint(0, 64, (64, 128), dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)
    out = torch.empty(sms * 256, device="cuda")
    cycles = torch.zeros(sms * 2, dtype=torch.int32, device="cuda")
    for (mode, n, wgs, chains, lag), key in json.loads((Path(d) / "index.json").read_text()):
        b = torch.randint(0, 64, (n, 128), dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)
        k = nvtma.runtime.load(Path(d) / key).kernel("wgmma_rate")
        launch = common.launch(k, (sms,))
        k(a, b, out, cycles, **launch)
        torch.cuda.synchronize()
        cycles.zero_()
        ms = common.graph_ms(torch, stream, lambda i: k(a, b, out, cycles, **launch), 1, calls=5, reps=5)
        c = cycles.view(sms, 2)[:, :wgs].float()
        per = c.max().item() / (ITERS * 4)
        print(json.dumps(dict(bench="wgmma-rate", mode=mode, n=n, wgs=wgs, chains=chains, lag=lag,
                              clocks_per_wgmma=round(per, 1), sm_clocks_per_wgmma=round(per / wgs, 1),
                              us=round(ms * 1e3, 2), tflops=round(2 * 64 * n * 32 * 4 * ITERS * wgs * sms / (ms * 1e-3)
                                                                   / 1e12, 1),
                              finite=bool(torch.isfinite(out[:sms * 256]).all().item()))), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
