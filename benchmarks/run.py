#!/usr/bin/env python3
"""nvtma benchmarks on the GPU: one JSON line per measurement.

    python3 benchmarks/run.py --artifacts DIR [--ref-bin tma_copy_bw] [--encode-bin encode_bench]

Every line says what it measured and what it is compared with, all in this
one process / device call: the nvtma TMA copy against cudaMemcpy, torch's copy
and (when --ref-bin is given) the hand-written CUDA C++ TMA copy, over the
same box shapes and L2 promotions; descriptor encoding against
cuTensorMapEncodeTiled; launch overhead against a torch op.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

import torch  # noqa: E402

import nvtma.runtime  # noqa: E402
from nvtma import tensormap as tm  # noqa: E402


def emit(**kw):
    print(json.dumps(kw), flush=True)


def machine():
    p = torch.cuda.get_device_properties(0)
    from cuda.bindings import driver as d
    d.cuInit(0)
    return dict(gpu=p.name, sms=p.multi_processor_count, driver=d.cuDriverGetVersion()[1], torch=torch.__version__)


def time_ms(fn, reps=5, iters=10):
    """Best of `reps` (CUDA events around `iters` calls), ms per call."""
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = float("inf")
    for _ in range(reps):
        s.record()
        for _ in range(iters):
            fn()
        e.record()
        e.synchronize()
        best = min(best, s.elapsed_time(e) / iters)
    return best


def bench_copy(art, ref_bin):
    R, C = common.ROWS, common.COLS
    nbytes = R * C * 2
    a = torch.randn(R, C, device="cuda", dtype=torch.float16)
    b = torch.empty_like(a)
    from cuda.bindings import driver as d
    # cudaMemcpy and torch first, as the references
    for _ in range(3):
        d.cuMemcpyDtoDAsync(b.data_ptr(), a.data_ptr(), nbytes, 0)
    ms = time_ms(lambda: d.cuMemcpyDtoDAsync(b.data_ptr(), a.data_ptr(), nbytes, 0))
    memcpy = 2 * nbytes / ms / 1e9
    emit(bench="copy", impl="cuMemcpyDtoD", bytes=nbytes, TBps_rw=round(memcpy, 3))
    ms = time_ms(lambda: b.copy_(a))
    emit(bench="copy", impl="torch copy_", bytes=nbytes, TBps_rw=round(2 * nbytes / ms / 1e9, 3))
    ref = {}
    if ref_bin:
        out = subprocess.run([ref_bin, str(R), str(C)], capture_output=True, text=True, timeout=300)
        for line in out.stdout.splitlines():
            try:
                j = json.loads(line)
            except json.JSONDecodeError:
                continue
            if j.get("kernel") == "tma_copy":
                ref[(j["box"][1], j["box"][0], j["l2promo_load"])] = j["TBps_rw"]
                emit(bench="copy", impl="hand-written CUDA tma_copy_bw.cu", box_rows_cols=[j["box"][1], j["box"][0]],
                     l2_promotion_load=j["l2promo_load"], grid=j["grid"], correct=j["correct"], TBps_rw=j["TBps_rw"])
            elif j.get("kernel") == "cudaMemcpyD2D":
                emit(bench="copy", impl="hand-written binary's cudaMemcpy", TBps_rw=j["TBps_rw"])
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for box in common.BOXES:
        for promo in common.PROMOTIONS:
            spec = common.copy_spec(box, promo)
            mod = nvtma.runtime.load(Path(art) / common.key(spec))
            k = mod.kernel("pipelined_copy")
            tile_bytes = box[0] * box[1] * 2
            per_sm = max(1, min(8, (227 * 1024) // (4 * tile_bytes + 1024)))
            grid = sms * per_sm
            b.zero_()
            k(a, b, grid=(grid,), block=spec.block)
            torch.cuda.synchronize()
            ok = torch.equal(a, b)
            for _ in range(3):
                k(a, b, grid=(grid,), block=spec.block)
            ms = time_ms(lambda: k(a, b, grid=(grid,), block=spec.block))
            tbps = 2 * nbytes / ms / 1e9
            name = {"none": "NONE", "l2_64b": "64B", "l2_128b": "128B", "l2_256b": "256B"}[promo]
            r = ref.get((box[0], box[1], name))
            emit(bench="copy", impl="nvtma pipelined_copy (4 stages, 1 warp)", box_rows_cols=list(box),
                 l2_promotion_load=promo, grid=grid, correct=ok, TBps_rw=round(tbps, 3),
                 vs_cudaMemcpy=round(tbps / memcpy, 3), vs_hand_written=round(tbps / r, 3) if r else None)


def bench_host(art, encode_bin):
    from cuda.bindings import driver as d
    x = torch.empty(16384, 16384, device="cuda", dtype=torch.float16)
    args = ("float16", 2, x.data_ptr(), [16384, 16384], [32768], [64, 128], [1, 1], "none", "swizzle_128b",
            "l2_256b", "none")
    n = 20000
    for _ in range(1000):
        tm.encode_tiled(*args)
    t = time.perf_counter()
    for _ in range(n):
        tm.encode_tiled(*args)
    py_us = (time.perf_counter() - t) / n * 1e6
    U32, U64 = d.cuuint32_t, d.cuuint64_t
    dims, strides, box, es = [U64(16384), U64(16384)], [U64(32768)], [U32(64), U32(128)], [U32(1), U32(1)]
    enc = lambda: d.cuTensorMapEncodeTiled(  # noqa: E731
        d.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, x.data_ptr(), dims, strides, box, es,
        d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        d.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    for _ in range(1000):
        enc()
    t = time.perf_counter()
    for _ in range(n):
        enc()
    drv_us = (time.perf_counter() - t) / n * 1e6
    emit(bench="encode", impl="nvtma.tensormap.encode_tiled (Python + ctypes)", us=round(py_us, 3),
         vs="cuda.bindings cuTensorMapEncodeTiled (Python)", vs_us=round(drv_us, 3))
    if encode_bin:
        out = subprocess.run([encode_bin], capture_output=True, text=True, timeout=120)
        for line in out.stdout.splitlines():
            print(line, flush=True)
    # launch overhead: a kernel with two descriptors vs a torch op
    spec = common.launch_spec()
    mod = nvtma.runtime.load(Path(art) / common.key(spec))
    k = mod.kernel("tile_copy")
    a = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    b = torch.empty_like(a)
    for _ in range(200):
        k(a, b, grid=spec.grid, block=spec.block)
    torch.cuda.synchronize()
    n = 2000
    t = time.perf_counter()
    for _ in range(n):
        k(a, b, grid=spec.grid, block=spec.block)
    ours = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        b.add_(1)
    theirs = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    emit(bench="launch", impl="nvtma kernel, 2 TMA descriptors + 2 memrefs (host time per launch)",
         us=round(ours, 2), vs="torch b.add_(1) (host time per launch)", vs_us=round(theirs, 2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--artifacts", required=True)
    ap.add_argument("--ref-bin")
    ap.add_argument("--encode-bin")
    ap.add_argument("--only", choices=["copy", "host"], default=None)
    a = ap.parse_args()
    emit(bench="machine", **machine())
    if a.only in (None, "host"):
        bench_host(a.artifacts, a.encode_bin)
    if a.only in (None, "copy"):
        bench_copy(a.artifacts, a.ref_bin)


if __name__ == "__main__":
    main()
