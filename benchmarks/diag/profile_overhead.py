#!/usr/bin/env python3
"""Experiment: what an in-kernel Profiler costs the profiling GEMM
(test/python/profile_cases.py's: M = 16, N = 4096, K = 8192, two consumer
warpgroups), by part: the kernel as built, with the totals Profiler, with
its events reading only the clock (no sums), with its events updating the
sums but reading no clock, with the trace Profiler. Each variant's PTX is
built here (the variants patch nvtma.profile.Profiler for the build only)
and saved under DIR/<name>; `run` times each against the plain kernel in
CUDA graphs of 50 launches, 21 interleaved rounds (the median ratio).
    python3 benchmarks/diag/profile_overhead.py build DIR    # here
    python3 benchmarks/diag/profile_overhead.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "python"))
VARIANTS = ("plain", "totals", "clock_only", "sums_only", "nothing", "no_flush", "traced", "store_only", "red_only",
            "red_only_no_flush", "clocks")


def build(d):
    import os
    os.environ["NVTMA_CACHE"] = "0"
    import profile_cases
    from nvtma import profile
    from nvtma.dsl.numeric import Int64
    from nvtma.kernels import gemm
    P = profile.Profiler
    now, add, flush = P._now, P._add, P._flush

    def key_only(self, eid, rid, scope, cycles, end):
        if (eid, rid) not in self._keys:
            self._keys[(eid, rid)] = len(self._keys)
            self._publish()
    from nvtma import cuda
    from nvtma.dsl.numeric import Uint32

    def store_only(self, eid, rid, scope, cycles, end):
        key_only(self, eid, rid, scope, cycles, end)
        self._put64(self._sums() + 2, end)

    def red_only(self, eid, rid, scope, cycles, end):
        key_only(self, eid, rid, scope, cycles, end)
        cuda.red_add(self.counters, (self._sums() + 6 + 2 * self._keys[(eid, rid)],), Uint32(1), scope="cta", lane=0)
    patches = {"store_only": dict(_add=store_only), "red_only": dict(_add=red_only, _now=lambda self: (None, Int64(0))),
               "red_only_no_flush": dict(_add=red_only, _now=lambda self: (None, Int64(0)), _flush=lambda self: None),
               "clock_only": dict(_add=key_only), "sums_only": dict(_now=lambda self: (None, Int64(0))),
               "nothing": dict(_add=key_only, _now=lambda self: (None, Int64(0))),
               "no_flush": dict(_add=key_only, _now=lambda self: (None, Int64(0)), _flush=lambda self: None)}
    for name in VARIANTS:
        for attr, fn in patches.get(name, {}).items():
            setattr(P, attr, fn)
        gemm.gemm_kernel._built.clear()
        if name == "clocks":
            g = profile_cases.GEMM
            spec = gemm.gemm_spec(g["BM"], g["BN"], g["wgs"], profile="clocks", pdl=False)
        else:
            spec = profile_cases.gemm_specs()["plain" if name == "plain" else "traced" if name == "traced" else "totals"]
        spec.compile().save(Path(d) / name)
        P._now, P._add, P._flush = now, add, flush


def run(d):
    import torch
    import test_gpu_profile as t
    from nvtma import profile, runtime
    from nvtma.kernels import gemm
    import profile_cases
    M, N, K, splits, wgs, wq, xq, sw, sx, want, parts, grid, sms = t._gemm_case()
    y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    mods = {n: runtime.load(Path(d) / n) for n in VARIANTS}
    ws, counters = gemm.workspace(torch, "cuda", profile_cases.gemm_specs()["plain"], N)

    def launcher(name):
        mod = mods[name]
        if name == "plain":
            return lambda: mod.gemm(wq, xq, y, ws, counters, parts, sw, sx, grid=grid)
        if name == "clocks":
            buf = torch.zeros(grid[0] * (wgs + 1) * gemm.CLOCK_WORDS, dtype=torch.int64, device="cuda")
            return lambda: mod.gemm(wq, xq, y, ws, counters, parts, sw, sx, buf, grid=grid)
        names = profile.event_table(mod, "gemm")
        buf = profile.alloc_buffer(grid, (128 * (wgs + 1),), names.events_per_warp)
        return lambda: mod.gemm(wq, xq, y, ws, counters, parts, sw, sx, buf, grid=grid)
    plain = launcher("plain")
    for name in VARIANTS[1:]:
        a, b, ratio = t._overhead(plain, launcher(name))
        print(json.dumps(dict(bench="profile-overhead", variant=name, plain_us=round(a * 1e3, 2),
                              us=round(b * 1e3, 2), ratio=round(ratio, 4))), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
