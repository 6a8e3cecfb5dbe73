#!/usr/bin/env python3
"""nvtma benchmarks on the GPU: one JSON line per measurement.

    python3 benchmarks/run.py --artifacts DIR [--ref-bin tma_copy_bw] [--encode-bin encode_bench]

Every line says what it measured and what it is compared with, all in this
one process / device call: the nvtma TMA copy against cudaMemcpy, torch's copy
and (when --ref-bin is given) the hand-written CUDA C++ TMA copy, over the
same box shapes and L2 promotions; descriptor encoding against
cuTensorMapEncodeTiled; launch overhead against a torch op; the
weight-streaming GEMV (bf16 and fp8 W, every L2 promotion) against torch.
"""

import argparse
import json
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
    if ref_bin == "skip":
        return memcpy
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
            for stages, load_hint, store_hint in common.COPY_VARIANTS:
                spec = common.copy_spec(box, promo, stages, load_hint, store_hint)
                mod = nvtma.runtime.load(Path(art) / common.key(spec))
                k = mod.kernel("pipelined_copy")
                tile_bytes = box[0] * box[1] * 2
                per_sm = max(1, min(8, (227 * 1024) // (stages * tile_bytes + 1024)))
                grid = sms * per_sm
                b.zero_()
                k(a, b, **common.launch(k, (grid,)))
                torch.cuda.synchronize()
                ok = torch.equal(a, b)
                for _ in range(3):
                    k(a, b, **common.launch(k, (grid,)))
                ms = time_ms(lambda: k(a, b, **common.launch(k, (grid,))))
                tbps = 2 * nbytes / ms / 1e9
                name = {"none": "NONE", "l2_64b": "64B", "l2_128b": "128B", "l2_256b": "256B"}[promo]
                r = ref.get((box[0], box[1], name))
                emit(bench="copy", impl=f"nvtma pipelined_copy ({stages} stages, 1 warp)", box_rows_cols=list(box),
                     stages=stages, load_hint=load_hint, store_hint=store_hint, l2_promotion_load=promo,
                     grid=grid, correct=ok, TBps_rw=round(tbps, 3), vs_cudaMemcpy=round(tbps / memcpy, 3),
                     vs_hand_written=round(tbps / r, 3) if r else None)
    return memcpy


def bench_gemv(art, copy_tbps):
    """y = W·x streaming W from DRAM, every L2 promotion, vs torch (cuBLAS)."""
    M, K = common.GEMV_M, common.GEMV_K
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(K, generator=g, device="cuda").to(torch.bfloat16)
    w16 = torch.randn(M, K, generator=g, device="cuda").to(torch.bfloat16)
    w8 = torch.randn(M, K, generator=g, device="cuda").to(torch.float8_e4m3fn)
    row_scale = torch.rand(M, generator=g, device="cuda") + 0.5
    t_scale = torch.tensor([0.37], device="cuda")
    y = torch.zeros(M, device="cuda")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    ref = {"bf16": (w16.float() @ x.float())}
    ref["row"] = (w8.float() @ x.float()) * row_scale
    ref["tensor"] = (w8.float() @ x.float()) * t_scale
    # torch baselines: cuBLAS GEMV in bf16; fp8 through torch._scaled_mm (x quantized, N padded to 16)
    base = {}
    ms = time_ms(lambda: torch.mv(w16, x), reps=10, iters=20)
    base["bf16"] = M * K * 2 / ms / 1e9
    emit(bench="gemv", impl="torch.mv (cuBLAS), bf16 W", M=M, K=K, W_TBps=round(base["bf16"], 3), us=round(ms * 1e3, 1))
    x8 = torch.zeros(16, K, device="cuda").to(torch.float8_e4m3fn)
    x8[0] = x.float().to(torch.float8_e4m3fn)
    for scale in ("row", "tensor"):
        sa = row_scale[:, None].contiguous() if scale == "row" else t_scale.reshape(())
        sb = torch.ones(1, 16, device="cuda") if scale == "row" else torch.ones((), device="cuda")
        try:
            fn = lambda: torch._scaled_mm(w8, x8.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)  # noqa
            fn()
            ms = time_ms(fn, reps=10, iters=20)
            base[scale] = M * K / ms / 1e9
            emit(bench="gemv", impl=f"torch._scaled_mm (cuBLASLt), fp8 W, {scale} scale, x in fp8, N=16", M=M, K=K,
                 W_TBps=round(base[scale], 3), us=round(ms * 1e3, 1))
        except RuntimeError as e:
            emit(bench="gemv", impl=f"torch._scaled_mm, {scale} scale", error=str(e).splitlines()[0])
    for cfg in common.GEMV_CONFIGS:
        w_dtype, scale, tile, stages = cfg["w_dtype"], cfg["scale"], cfg["tile"], cfg["stages"]
        math_, split = cfg["fp8_math"], cfg["split"]
        w = w16 if w_dtype == "bf16" else w8
        xin = x if cfg["x_dtype"] == "bf16" else x.half()  # (converted once, like torch's fp8 x below)
        eb = w.element_size()
        key = scale or "bf16"
        extra = [] if scale is None else [row_scale if scale == "row" else t_scale]
        per_sm_max = (227 * 1024) // (stages * tile[0] * tile[1] * eb + 1024)
        grids = [sms * p for p in range(1, min(per_sm_max, 3) + 1)]
        if split == "rows":
            # whole row blocks per CTA: also grids that divide the row blocks evenly
            grids += [g for g in (128, 256) if (M // tile[0]) % g == 0 and g // sms < per_sm_max + 1]
        for promo in common.PROMOTIONS:
            spec = common.gemv_spec(cfg, promo)
            k = nvtma.runtime.load(Path(art) / common.key(spec)).kernel("gemv")
            for g in grids:
                grid = (g,)
                y.fill_(float("nan") if split == "rows" else 0.0)
                k(w, xin, y, *extra, **common.launch(k, grid))
                torch.cuda.synchronize()
                err = ((y - ref[key]).abs().max() / ref[key].abs().max()).item()

                if split == "tiles":
                    def run():
                        y.zero_()  # (64 KiB memset, counted: the kernel accumulates into y)
                        k(w, xin, y, *extra, **common.launch(k, grid))
                else:
                    def run():  # stores y: nothing to zero
                        k(w, xin, y, *extra, **common.launch(k, grid))
                ms = time_ms(run, reps=10, iters=20)
                # the kernel alone (a "tiles" y keeps accumulating: same work, checked above)
                ms_k = time_ms(lambda: k(w, xin, y, *extra, **common.launch(k, grid)), reps=10, iters=20)
                tbps, tbps_k = M * K * eb / ms / 1e9, M * K * eb / ms_k / 1e9
                b = base.get(key)
                tol = 1e-4 if (w_dtype == "bf16" or math_ == "f32") else 4e-3
                emit(bench="gemv", impl=f"nvtma gemv, {w_dtype} W" + (f", {scale} scale, {math_} math" if scale else "")
                     + f", {cfg['x_dtype']} x",
                     M=M, K=K, tile=list(tile), stages=stages, consumers=cfg["consumers"], split=split,
                     vec=cfg["vec"], w_hint=cfg["w_hint"], grid=g,
                     l2_promotion=promo, correct=err < tol, max_rel_err=float(f"{err:.2e}"),
                     us=round(ms * 1e3, 1), memset_counted=split == "tiles",
                     W_TBps=round(tbps, 3), vs_torch=round(tbps / b, 3) if b else None,
                     vs_copy_rw=round(tbps / copy_tbps, 3), us_kernel_only=round(ms_k * 1e3, 1),
                     W_TBps_kernel_only=round(tbps_k, 3),
                     vs_torch_kernel_only=round(tbps_k / b, 3) if b else None)


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
    emit(bench="encode", impl="nvtma.tensormap.encode_tiled (Python, abi3 extension)", us=round(py_us, 3),
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
        k(a, b, **common.launch(k, spec.grid))
    torch.cuda.synchronize()
    n = 2000
    t = time.perf_counter()
    for _ in range(n):
        k(a, b, **common.launch(k, spec.grid))
    ours = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        b.add_(1)
    theirs = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    # the driver's own cost: the same launch as one bare cuLaunchKernel (ctypes)
    from nvtma.runtime import driver as nd
    prepared = k._last[2] if k._last is not None else None
    floor = None
    if prepared is not None:
        launch = nd._fast_api()[1]
        t = time.perf_counter()
        for _ in range(n):
            launch(*prepared)
        floor = (time.perf_counter() - t) / n * 1e6
        torch.cuda.synchronize()
    emit(bench="launch", impl="nvtma kernel, 2 TMA descriptors + 2 memrefs (host time per launch)",
         us=round(ours, 2), vs="torch b.add_(1) (host time per launch)", vs_us=round(theirs, 2),
         driver_floor_us=round(floor, 2) if floor else None,
         driver_floor="the same launch as one bare ctypes cuLaunchKernel call")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--artifacts", required=True)
    ap.add_argument("--ref-bin")
    ap.add_argument("--encode-bin")
    ap.add_argument("--only", default="copy,host,gemv", help="comma-separated subset of copy,host,gemv")
    a = ap.parse_args()
    only = set(a.only.split(","))
    if not only <= {"copy", "host", "gemv"}:
        ap.error(f"--only: unknown {sorted(only - {'copy', 'host', 'gemv'})}")
    emit(bench="machine", **machine())
    if "host" in only:
        bench_host(a.artifacts, a.encode_bin)
    memcpy = None
    if "copy" in only:
        memcpy = bench_copy(a.artifacts, a.ref_bin)
    if "gemv" in only:
        memcpy = memcpy or bench_copy(a.artifacts, "skip")
        bench_gemv(a.artifacts, memcpy)


if __name__ == "__main__":
    main()
