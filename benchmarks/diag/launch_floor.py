#!/usr/bin/env python3
"""Experiment: what a kernel costs per call in a CUDA graph of 20 back-to-back
calls when it does next to nothing (one CTA writes one element), by what it
is launched with: programmatic dependent launch, its dynamic shared memory,
TMA descriptors among its parameters (prefetched), 256 threads with
setmaxnreg (the GEMM's warpgroup roles), a cluster; beside them a
one-element torch fill (no PDL). Then kernels that spin for 3 us, with
launch_dependents issued by every thread or by warp 0 only at their start,
or at their end: whether the next call starts beside this one.
    python3 benchmarks/diag/launch_floor.py build DIR    # here
    python3 benchmarks/diag/launch_floor.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (label, pdl, dynamic shared memory bytes, TMA descriptors, warpgroup roles with setmaxnreg, cluster)
KERNELS = [
    ("plain", False, 0, 0, False, 1),
    ("pdl", True, 0, 0, False, 1),
    ("pdl, 200 KB smem", True, 200 << 10, 0, False, 1),
    ("pdl, 4 descriptors", True, 0, 4, False, 1),
    ("pdl, 256 threads, setmaxnreg", True, 0, 0, True, 1),
    ("pdl, cluster of 2", True, 0, 0, False, 2),
    ("pdl, all of these", True, 200 << 10, 4, True, 2),
    ("plain, all of these", False, 200 << 10, 4, True, 2),
]


def _kernel(label, pdl, smem, descs, roles, cluster):
    from nvtma import cpasync, cuda, dsl, lang

    @dsl.kernel(block=(256 if roles else 128,), pdl=pdl, cluster=(cluster, 1, 1) if cluster > 1 else None,
                name="floor")
    def floor(y: dsl.Tensor("f32", (None,)), t0: dsl.Tensor("bf16", (None, None)),
              t1: dsl.Tensor("bf16", (None, None)), t2: dsl.Tensor("bf16", (None, None)),
              t3: dsl.Tensor("bf16", (None, None))):
        if smem:
            buf = lang.SMEMPool().alloc((smem // 4,), "f32")
        atoms = [cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), t, (64, 64))
                 for t in (t0, t1, t2, t3)[:descs]]
        if pdl:
            cuda.griddepcontrol_wait()
        with lang.WarpgroupRole(0, regs=40) if roles else dsl.if_(dsl.thread_idx() < 128):
            for a in atoms:
                with lang.WarpRole(0):
                    cpasync.prefetch_descriptor(a)
        if roles:
            with lang.WarpgroupRole(1):
                pass
        with dsl.if_((dsl.thread_idx() == 0) & (dsl.block_idx() == 0)):
            if smem:
                buf[0] = 1.0
                y[0] = buf[0]
            else:
                y[0] = 1.0
        if pdl:
            cuda.griddepcontrol_launch_dependents()
    return floor


# kernels that run SPIN_NS: who issues launch_dependents (at the start) and where they wait for the earlier
# kernels: the next call overlaps this one only once all its CTAs triggered
SPIN_NS = 3000
SPINNERS = [("trigger by every thread, then spin", "all"), ("trigger by warp 0, then spin", "warp0"),
            ("spin, then trigger by every thread", "end")]


def _spinner(label, trigger):
    from nvtma import cuda, dsl

    @dsl.kernel(block=(256,), pdl=True, name="spin")
    def spin(y: dsl.Tensor("f32", (None,))):
        if trigger == "all":
            cuda.griddepcontrol_launch_dependents()
        elif trigger == "warp0":
            with dsl.if_(dsl.warp_idx() == 0):
                cuda.griddepcontrol_launch_dependents()
        t0 = cuda.globaltimer()
        loop = dsl.while_(lambda t: t - t0 < SPIN_NS, carry=(t0,))
        for (t,) in loop:
            dsl.yield_(cuda.globaltimer())
        if trigger == "end":
            cuda.griddepcontrol_launch_dependents()
        cuda.griddepcontrol_wait()
        with dsl.if_((dsl.thread_idx() == 0) & (dsl.block_idx() == 0)):
            y[0] = 1.0
    return spin


def build(d):
    for i, k in enumerate(KERNELS):
        _kernel(*k).compile().save(Path(d) / f"k{i}")
    for i, k in enumerate(SPINNERS):
        _spinner(*k).compile().save(Path(d) / f"s{i}")


def run(d):
    import torch
    import common
    from nvtma import runtime
    dev, stream, gen = common.gpu(torch)
    y = torch.zeros(4, device=dev)
    ts = [torch.zeros(256, 256, device=dev, dtype=torch.bfloat16) for _ in range(4)]
    for i, (label, pdl, smem, descs, roles, cluster) in enumerate(KERNELS):
        k = runtime.load(Path(d) / f"k{i}").floor
        grid = (cluster,)
        ms = common.graph_ms(torch, stream, lambda j: k(y, *ts, grid=grid), 1)
        print(json.dumps(dict(bench="launch-floor", kernel=label, pdl=pdl, smem=smem, descriptors=descs,
                              setmaxnreg=roles, cluster=cluster, us=round(ms * 1e3, 2))), flush=True)
    for i, (label, trigger) in enumerate(SPINNERS):
        k = runtime.load(Path(d) / f"s{i}").spin
        for grid in (4, 132):
            ms = common.graph_ms(torch, stream, lambda j: k(y, grid=(grid,)), 1)
            print(json.dumps(dict(bench="launch-overlap", kernel=label, spin_ns=SPIN_NS, grid=grid,
                                  us=round(ms * 1e3, 2))), flush=True)
    t = torch.zeros(1, device=dev)
    ms = common.graph_ms(torch, stream, lambda j: t.fill_(j), 1)
    print(json.dumps(dict(bench="launch-floor", kernel="torch fill_ of one element", us=round(ms * 1e3, 2))))


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
