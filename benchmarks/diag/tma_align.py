#!/usr/bin/env python3
"""Experiment: does a tiled TMA load need its innermost start coordinate on 16 bytes? One box of
kernels.copy.box_dump (f32 [20, 40], box [8, 32]; bf16 and e4m3 too) loaded at columns whose byte offset is or is
not a multiple of 16, each in a process of its own (a fault ends only its own CUDA context), checked against the
source. Twenty-eighth session (s33-tma-align): the M split's block-scaled x scales faulted at column 13 of f32; here
every column off 16 bytes faulted with an illegal instruction (f32 4, 8, 12 and 52 bytes in; bf16 2 and 8), those on
it loaded right. Built before nvtma.copy's verifier refused constant coordinates off 16 bytes: now `build` reports
those cases as refused and builds the rest.
    python3 benchmarks/diag/tma_align.py build DIR   # here
    python3 benchmarks/diag/tma_align.py run DIR     # on the GPU
"""
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common

# (dtype, source shape, box, coordinates (row, column)): columns on and off 16 bytes
CASES = [("f32", (20, 40), (8, 32), (4, c)) for c in (0, 4, 8, 1, 2, 3, 13)] + \
        [("bf16", (20, 80), (8, 32), (4, c)) for c in (8, 1, 4)]


def _spec(case):
    from nvtma import kernels as K
    dt, shape, box, coords = case
    return K.box_dump(shape, dt, box, "none", coords)


def build(d):
    import common
    from nvtma.dsl import KernelBuildError
    for c in CASES:
        try:
            common.save_new(d, [_spec(c)])
        except KernelBuildError as e:
            why = next((ln.strip() for ln in str(e).splitlines() if "innermost" in ln), str(e))
            print(json.dumps(dict(bench="tma-align", dtype=c[0], coords=list(c[3]), refused=why[:240])))


def one(d, i):
    import torch
    import nvtma.runtime
    dt, shape, box, (r, c) = CASES[i]
    sp = _spec(CASES[i])
    mod = nvtma.runtime.load(Path(d) / sp.key)
    tdt = {"f32": torch.float32, "bf16": torch.bfloat16}[dt]
    x = torch.arange(shape[0] * shape[1], device="cuda").reshape(shape).to(tdt)
    out = torch.zeros(box, device="cuda", dtype=tdt)
    rec = mod.kernels[sp.name].get("launch") or {}
    try:
        mod.box_dump(x, out, grid=(1, 1, 1), block=tuple(rec.get("block") or sp.block), smem=rec.get("smem", 0))
        torch.cuda.synchronize()
        rows, cols = min(box[0], shape[0] - r), min(box[1], shape[1] - c)
        ok = torch.equal(out[:rows, :cols], x[r:r + rows, c:c + cols])
        res = dict(ok=bool(ok))
    except Exception as e:  # noqa: BLE001 (the fault is the result)
        res = dict(error=f"{type(e).__name__}: {e}"[:160])
    bits = {"f32": 32, "bf16": 16}[dt]
    print(json.dumps(dict(bench="tma-align", dtype=dt, box=list(box), coords=[r, c], column_bytes=c * bits // 8,
                          **res)), flush=True)


def run(d):
    for i in range(len(CASES)):
        if not (Path(d) / _spec(CASES[i]).key).exists():
            continue
        p = subprocess.run([sys.executable, __file__, "one", str(d), str(i)], capture_output=True, text=True,
                           timeout=60)
        print(p.stdout.strip() or json.dumps(dict(bench="tma-align", case=i, rc=p.returncode, err=p.stderr[-300:])),
              flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "one":
        one(sys.argv[2], int(sys.argv[3]))
    else:
        {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
