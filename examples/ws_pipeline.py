#!/usr/bin/env python3
"""A warp-specialized, multi-stage TMA pipeline in a page of Python.

Warp 0 produces (TMA loads into a ring of shared-memory stages, L2
promotion 256B on the weights-style streaming read), warp 1 consumes (TMA
stores out of the ring); a full/empty mbarrier pair per stage hands the
slots back and forth, and a persistent scheduler walks the tiles.

    python examples/ws_pipeline.py              # compiles, prints IR stats
    python examples/ws_pipeline.py --run        # and runs + checks (GPU)
    python examples/ws_pipeline.py --aot DIR    # also writes cubin + records
    python examples/ws_pipeline.py --run --from DIR   # GPU box, no MLIR needed
    python examples/ws_pipeline.py --profile t.json [--run]   # traced: a slice per tile and phase, per warp
"""

import argparse
import contextlib
import sys

from nvtma import cpasync, dsl, lang, profile

R, C = 4096, 4096
# the parameter types of the traced kernel: the tensors and the profile buffer
PROFILED = [dsl.Tensor("f16", (R, C)), dsl.Tensor("f16", (R, C)), dsl.Tensor("i64", (None,))]


@dsl.kernel(block=(64,))
def ws_copy(src: dsl.Tensor("f16", (R, C)), dst: dsl.Tensor("f16", (R, C)), *prof, BM=64, BN=128, STAGES=4,
            promo="l2_256b", EVENTS=64, phases=True):
    # prof: () or (the profile buffer,); without it the calls below build nothing
    p = profile.Profiler(prof[0] if prof else None, events_per_warp=EVENTS)

    def phase(name):  # inside the tile's slice; left out for the one-slice-per-tile profile
        return p.range(name) if phases else contextlib.nullcontext()

    pool = lang.SMEMPool()
    ring = pool.alloc((STAGES, BM, BN), "f16")
    ld = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), src, (STAGES, BM, BN), (BM, BN),
                                     l2_promotion=promo)
    st = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), dst, (BM, BN), (BM, BN))
    pipe = lang.Pipeline(STAGES)
    dsl.barrier()                                   # barriers initialized before use
    tiles_x = C // BN
    sched = lang.PersistentTileScheduler((R // BM) * tiles_x)

    with lang.WarpRole(0), p.role("producer"):      # producer warp
        cpasync.prefetch_descriptor(ld)
        for i, t in sched:
            s = lang.PipelineState(STAGES, i)
            with p.range("tile"):
                with phase("acquire"):              # waits for an empty slot
                    pipe.producer_acquire(s)
                with phase("issue"):
                    pipe.producer_commit(s, BM * BN * 2)
                    coords = cpasync.tma_partition(ld, [t // tiles_x, t % tiles_x])
                    cpasync.copy(ld, coords, pool.stage(ring, s.stage), tma_bar_ptr=pipe.full.at(s.stage))

    with lang.WarpRole(1), p.role("consumer"):      # consumer warp
        for i, t in sched:
            s = lang.PipelineState(STAGES, i)
            with p.range("tile"):
                with phase("wait"):                 # waits for the TMA load
                    pipe.consumer_wait(s)
                with phase("store"):
                    coords = cpasync.tma_partition(st, [t // tiles_x, t % tiles_x])
                    cpasync.copy(st, coords, pool.stage(ring, s.stage))
                    cpasync.bulk_commit_group()
                    # every store but this one has read its slot: hand the previous
                    # slot back, keeping two stores in flight
                    cpasync.bulk_wait_group(1, read=True)
                    with dsl.if_(i > 0):
                        pipe.consumer_release(lang.PipelineState(STAGES, i - 1))
        cpasync.bulk_wait_group(0)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", action="store_true")
    ap.add_argument("--l2-promotion", default="l2_256b")
    ap.add_argument("--aot", metavar="DIR", help="write module.cubin + kernels.json here")
    ap.add_argument("--from", dest="load", metavar="DIR", help="load the AOT artifacts instead of compiling")
    ap.add_argument("--profile", metavar="OUT.json", help="build the traced kernel; with --run write its trace here")
    ap.add_argument("--per-tile", action="store_true", help="profile one slice per tile, not per phase")
    a = ap.parse_args(argv)
    if a.load:
        import nvtma.runtime
        compiled = nvtma.runtime.load(a.load)
        print(f"ws_copy: loaded from {a.load}")
    else:
        try:  # (the kernel's refusal of these flags: a KernelBuildError naming the rule and the value)
            compiled = (ws_copy.compile(PROFILED, promo=a.l2_promotion, phases=not a.per_tile) if a.profile else
                        ws_copy.compile(promo=a.l2_promotion))
        except ValueError as e:
            ap.error(str(e))
    if not a.load:
        (load_desc, _) = compiled.descriptor_records("ws_copy")
        print(f"ws_copy: {len(compiled.ptx.splitlines())} PTX lines, cubin {len(compiled.cubin)} bytes, "
              f"{compiled.built.smem_bytes} bytes of shared memory, load descriptor l2_promotion "
              f"{load_desc['l2_promotion_name']} (byte 10 = 0x{bytes.fromhex(load_desc['template'])[10]:02x})")
        if a.aot:
            print(f"wrote {compiled.save(a.aot)}")
    if a.profile:
        names = profile.event_table(compiled, "ws_copy")
        print(f"profile: events {', '.join(names.events)} for roles {', '.join(r for r in names.roles if r)}, "
              f"{names.events_per_warp} per warp")
    if not a.run:
        return 0
    import torch
    x = torch.randn(R, C, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    grid = torch.cuda.get_device_properties(0).multi_processor_count * 3  # 3 CTAs (3 x 64 KiB rings) per SM
    extra = (profile.alloc_buffer(grid, ws_copy.block, names.events_per_warp),) if a.profile else ()
    compiled.ws_copy(x, y, *extra, grid=(grid,))
    torch.cuda.synchronize()
    ok = torch.equal(x, y)
    if a.profile:
        prof = profile.collect(extra[0], names)
        print(prof.table())
        print(f"wrote {prof.write_trace(a.profile)} (load it in ui.perfetto.dev or chrome://tracing)")
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(20):
        compiled.ws_copy(x, y, *extra, grid=(grid,))
    e.record()
    e.synchronize()
    ms = s.elapsed_time(e) / 20
    print(f"{'correct' if ok else 'WRONG'}; {2 * x.numel() * 2 / ms / 1e9:.3f} TB/s (read + write) on "
          f"{torch.cuda.get_device_name()}, grid {grid}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
