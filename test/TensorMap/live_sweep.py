#!/usr/bin/env python3
"""Fresh random sweep: nvtma.tensormap against the live CUDA driver.

    python3 test/TensorMap/live_sweep.py --seed 777 --tiled 20000 --im2col 6000

Draws new parameter sets (driver_cases.py), asks the driver (ctypes) and
nvtma for a verdict and bytes, and prints one JSON summary; exits non-zero
on any disagreement (the first few are listed).
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_cases  # noqa: E402
from gen_driver_vectors import Driver  # noqa: E402

from nvtma import tensormap as tm  # noqa: E402


def nvtma_encode(c):
    try:
        if c["api"] == "tiled":
            return True, tm.encode_tiled(c["dtype"], c["rank"], c["addr"], c["dims"], c["strides"], c["box"],
                                         c["es"], c["interleave"], c["swizzle"], c["l2"], c["oob"])
        return True, tm.encode_im2col(c["dtype"], c["rank"], c["addr"], c["dims"], c["strides"], c["lower"],
                                      c["upper"], c["cpp"], c["ppc"], c["es"], c["interleave"], c["swizzle"],
                                      c["l2"], c["oob"])
    except tm.TensorMapError as e:
        return False, e.rule


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=777)
    ap.add_argument("--tiled", type=int, default=20000)
    ap.add_argument("--im2col", type=int, default=6000)
    a = ap.parse_args()
    drv = Driver()
    cases = driver_cases.cases(a.seed, a.tiled, a.im2col, with_probes=False)
    M64 = (1 << 64) - 1
    agree = accepted = 0
    bad = []
    t0 = time.perf_counter()
    for c in cases:
        c["addr"] &= M64
        c["dims"] = [v & M64 for v in c["dims"]]
        c["strides"] = [v & M64 for v in c["strides"]]
        c["es"] = [v & 0xFFFFFFFF for v in c["es"]]
        if "box" in c:
            c["box"] = [v & 0xFFFFFFFF for v in c["box"]]
        ok, err, raw = drv.encode(c)
        mine_ok, mine = nvtma_encode(c)
        if ok == mine_ok and (not ok or raw == mine):
            agree += 1
            accepted += ok
        elif len(bad) < 10:
            bad.append(dict(case=c, driver_ok=ok, nvtma=mine if not mine_ok else mine.hex(),
                            driver=raw.hex() if raw else err))
    out = dict(drv.meta, seed=a.seed, cases=len(cases), accepted_by_driver=accepted, agree=agree,
               disagree=len(cases) - agree, seconds=round(time.perf_counter() - t0, 1), examples=bad)
    print(json.dumps(out))
    return 0 if agree == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
