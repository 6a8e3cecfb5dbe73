#!/usr/bin/env python3
"""Experiment: what in-kernel measurement costs the profiling GEMM
(test/python/profile_cases.py's: M = 16, N = 4096, K = 8192, 64 CTAs of two
consumer warpgroups, split K 2): the kernel as built against its trace
(gemm_spec(profile=256): nvtma.profile's records) and its clock sums
(profile="clocks": SM-clock sums carried in registers, added into a buffer
once per warpgroup), each timed in CUDA graphs of 50 launches, 21
interleaved rounds (the median ratio; test_gpu_profile.py's _overhead).

Twenty-sixth session (s31-profile-overhead, H200, four calls): with a
per-warp totals mode of the Profiler (built at d184d8f: each event's count
and cycles summed in shared memory, added into the buffer at the kernel's
end; removed after) and its parts patched in and out at build time, ratios
to the kernel as built:
- trace 1.59-1.71 (with test_gpu_profile.py's runs); totals 1.53-1.64;
- totals' events reading the clock only 1.11-1.17; no event at all (the
  end-of-kernel flush alone) 1.10-1.17; neither 1.02;
- its sums only: a load-add-store of shared memory a word 1.44, a lane-0
  `red.shared` a word instead 1.41-1.51; one `st.shared` an event 1.26-1.32,
  one `red.shared` 1.27-1.32 (1.22-1.28 without the flush).
So in these loops any memory write per event costs 20-40% (likely: the
mbarrier arrival after it, a release, waits for it), and code that reads a
special register at the kernel's end (%clock64, %smid) made ptxas keep the
K loop's ring state and wgmma descriptors in per-thread registers rather
than uniform ones (the SASS's R2UR count 10 -> 31-33): 10-17%. The clock
sums avoid the first and pay about the second: 1.20.
    python3 benchmarks/diag/profile_overhead.py build DIR    # here
    python3 benchmarks/diag/profile_overhead.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "python"))
VARIANTS = ("plain", "traced", "clocks")


def build(d):
    import profile_cases
    for name, spec in profile_cases.gemm_specs().items():
        spec.compile().save(Path(d) / name)


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
        mod, extra = mods[name], ()
        if name == "clocks":
            extra = (torch.zeros(grid[0] * (wgs + 1) * gemm.CLOCK_WORDS, dtype=torch.int64, device="cuda"),)
        elif name == "traced":
            extra = (profile.alloc_buffer(grid, (128 * (wgs + 1),), profile.event_table(mod, "gemm").events_per_warp),)
        return lambda: mod.gemm(wq, xq, y, ws, counters, parts, sw, sx, *extra, grid=grid)
    plain = launcher("plain")
    for name in VARIANTS[1:]:
        a, b, ratio = t._overhead(plain, launcher(name))
        print(json.dumps(dict(bench="profile-overhead", variant=name, plain_us=round(a * 1e3, 2),
                              us=round(b * 1e3, 2), ratio=round(ratio, 4))), flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
