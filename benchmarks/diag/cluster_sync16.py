#!/usr/bin/env python3
"""Experiment: are compute-sanitizer synccheck's "Barrier error detected. Missing wait" reports on
test_multicast_cluster[16] (a 16-CTA cluster, sm_90's non-portable size; at multicast_copy's
mbarrier.arrive.expect_tx, thread 0 of ranks 8, 9, 14, 15 only; clusters of 2-8 clean, the copy right) the
kernel's or the tool's? The same cluster sizes (8: the control, 16) run kernels that keep less and less of the
copy:
  sync_only    the barrier's init and two cluster barriers; no arrival, no wait
  arrive_wait  + thread 0 arrives (no tx) and every thread waits, between the cluster barriers
  local_tx     + thread 0 arms the barrier for a tile before the cluster barrier (as multicast_copy does) and
               warp 0 loads it by a TMA copy of its own CTA's (no multicast), then stores it
  multicast    kernels.multicast_copy itself
Each (kernel, cluster) is its own process under synccheck: `run DIR NAME CLUSTER` checks the output too.
H100, 2026-12-05 (results/h100-2026-12-05-s45-synccheck-cluster16.log, -cluster16-plain-and-pool.log):
every kernel clean at 8; at 16, local_tx and multicast get the same 75 "Missing wait" reports (at the
arrive.expect_tx, thread 0 of ranks 8, 9, 14, 15), and sync_only and arrive_wait end in "an illegal
memory access" under synccheck with 0 reports; without the tool all four run right at 16. The reports
are the tool's at sm_90's non-portable cluster size, not multicast_copy's.
    python3 benchmarks/diag/cluster_sync16.py build DIR                 # here
    compute-sanitizer --tool synccheck python3 benchmarks/diag/cluster_sync16.py run DIR local_tx 16
"""
import sys
from pathlib import Path

ROWS, COLS, TILE = 512, 256, (64, 64)
NAMES = ("sync_only", "arrive_wait", "local_tx", "multicast")
CLUSTERS = (8, 16)


def _spec(name, cluster):
    from nvtma import cpasync, dsl, lang
    from nvtma import kernels as K
    if name == "multicast":
        return K.multicast_copy(ROWS, COLS, "f16", TILE, cluster)
    ty, tx = TILE
    tiles_x = COLS // tx
    ntiles = (ROWS // ty) * tiles_x

    @dsl.kernel(block=(128,), cluster=(cluster, 1, 1), name="probe")
    def probe(src: dsl.Tensor, out: dsl.Tensor):
        pool = lang.SMEMPool()
        s3 = pool.alloc((1, ty, tx), src.dtype)
        ld = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), src, TILE)
        st = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), out, TILE)
        bar = lang.TMABar(1)
        dsl.barrier()
        bid = dsl.block_idx()
        t = bid // cluster
        if name == "local_tx":
            with dsl.if_(dsl.thread_idx() == 0):
                bar.arrive_expect_tx(0, ld.tile_bytes)
        dsl.cluster_sync()
        if name == "arrive_wait":
            with dsl.if_(dsl.thread_idx() == 0):
                bar.arrive(0)
            bar.wait(0, 0)
        if name == "local_tx":
            co = cpasync.tma_partition(ld, [t // tiles_x, t % tiles_x])
            with lang.WarpRole(0):
                cpasync.copy(ld, co, s3.stage(0), tma_bar_ptr=bar.at(0))
            bar.wait(0, 0)
            with lang.WarpRole(0):
                cpasync.copy(st, [bid * ty, 0], s3.stage(0))
                cpasync.bulk_commit_group()
                cpasync.bulk_wait_group(0)
        dsl.cluster_sync()

    sp = probe.specialize([dsl.Tensor("f16", (ROWS, COLS)), dsl.Tensor("f16", (ntiles * cluster * ty, tx))])
    sp.grid = (ntiles * cluster, 1, 1)
    return sp


def build(d):
    for name in NAMES:
        for c in CLUSTERS:
            _spec(name, c).compile().save(Path(d) / f"{name}-{c}")


def run(d, name, cluster):
    import torch
    from nvtma import runtime
    cluster = int(cluster)
    mod = runtime.load(Path(d) / f"{name}-{cluster}")
    kname = "multicast_copy" if name == "multicast" else "probe"
    rec = mod.kernels[kname].get("launch") or {}
    ntiles = (ROWS // TILE[0]) * (COLS // TILE[1])
    x = torch.randn(ROWS, COLS, device="cuda").half()
    out = torch.full((ntiles * cluster, *TILE), float("nan"), device="cuda", dtype=torch.half)
    dst = out if name == "multicast" else out.view(-1, TILE[1])
    getattr(mod, kname)(x, dst, grid=(ntiles * cluster, 1, 1), block=tuple(rec["block"]), smem=rec.get("smem", 0),
                        cluster=tuple(rec["cluster"]))
    torch.cuda.synchronize()
    tiles = x.view(8, 64, 4, 64).permute(0, 2, 1, 3).reshape(32, 64, 64).repeat_interleave(cluster, dim=0)
    right = torch.equal(out.view(torch.int16), tiles.view(torch.int16))
    print(f"{name} cluster {cluster}: output {'right' if right else 'WRONG'}"
          + ("" if name in ("local_tx", "multicast") else " (not written: no copy)"), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](*sys.argv[2:])
