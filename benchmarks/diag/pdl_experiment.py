#!/usr/bin/env python3
"""Experiment: what programmatic dependent launch (PDL) gives the GEMM in a
CUDA graph of back-to-back calls (W rotating over >= 256 MiB). Each problem
runs three ways, all launched through cuda.bindings' cuLaunchKernelEx with
the same packed parameters: the plain kernel; the PDL kernel (W of its first
stages loaded before griddepcontrol.wait) launched without the attribute;
the PDL kernel with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION.
    python3 benchmarks/diag/pdl_experiment.py build DIR    # here
    python3 benchmarks/diag/pdl_experiment.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common

# (N, K, M, mode, (BM, BN, wgs, splits))
PROBLEMS = [(4096, 7168, 1, "tensor", (8, 64, 1, 2)), (4096, 7168, 1, "tensor", (8, 64, 1, 0)),
            (7168, 2048, 1, "tensor", (8, 64, 1, 1)), (7168, 2048, 1, "tensor", (8, 64, 1, 0)),
            (2112, 7168, 1, "tensor", (8, 64, 1, 4)), (24576, 1536, 1, "tensor", (8, 192, 1, 1)),
            (4096, 7168, 64, "tensor", (64, 64, 1, 1)), (7168, 2048, 64, "bf16", (64, 64, 1, 4)),
            (16384, 16384, 1, "tensor", (8, 128, 2, 1))]


def _name(BM, BN, wgs, mode, pdl):
    return f"{BM}-{BN}-{wgs}-{mode}-pdl{pdl}"


def build(d):
    from nvtma.kernels import gemm
    for N, K, M, mode, (BM, BN, wgs, _) in PROBLEMS:
        for pdl in (0, 1):
            sub = Path(d) / _name(BM, BN, wgs, mode, pdl)
            if not sub.exists():
                gemm.gemm_spec(BM, BN, wgs, w_dtype="bf16" if mode == "bf16" else "f8E4M3FN",
                               w_scale=None if mode == "bf16" else mode, pdl=bool(pdl)).compile().save(sub)


def run(d):
    import torch
    import common
    from cuda.bindings import driver as drv
    from nvtma import runtime
    from nvtma.kernels import gemm
    dev, stream, gen = common.gpu(torch)
    for N, K, M, mode, (BM, BN, wgs, splits) in PROBLEMS:
        fp8 = mode != "bf16"
        wbytes = N * K * (1 if fp8 else 2)
        w, x, sw, sx, want = common.gemm_problem(torch, gen, N, K, M, fp8)
        extra = [sw, sx] if fp8 else []
        ws_ = common.copies(w)
        nbufs = len(ws_)
        y = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
        tiles = -(-N // BN)
        wsp = torch.zeros(tiles, BN * BM, device=dev)  # the split-K workspace: a row per tile
        cnt = torch.zeros(tiles, device=dev, dtype=torch.int32)
        parts, grid = gemm.parts_for(splits, N, K, BN, gemm.F8 if fp8 else "bf16",
                                     torch.cuda.get_device_properties(dev).multi_processor_count)
        res = {}
        for label, pdl, attr in (("plain", 0, False), ("pdl_kernel_no_attr", 1, False), ("pdl", 1, True)):
            k = runtime.load(Path(d) / _name(BM, BN, wgs, mode, pdl)).gemm
            with torch.cuda.stream(stream):
                k(w, x, y, wsp, cnt, parts, *extra, grid=grid)
            torch.cuda.synchronize()
            cfg = k._config(grid, None, None, None)
            f = drv.CUfunction(k._func)
            lc = drv.CUlaunchConfig()
            lc.gridDimX, lc.gridDimY, lc.gridDimZ = cfg[0:3]
            lc.blockDimX, lc.blockDimY, lc.blockDimZ = cfg[3:6]
            lc.sharedMemBytes = cfg[6]
            lc.hStream = drv.CUstream(stream.cuda_stream)
            if attr:
                a = drv.CUlaunchAttribute()
                a.id = drv.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
                a.value.programmaticStreamSerializationAllowed = 1
                lc.attrs = [a]
                lc.numAttrs = 1
            else:
                lc.numAttrs = 0

            def call(i):
                k.pack(ws_[i % nbufs], x, y, wsp, cnt, parts, *extra)
                err, = drv.cuLaunchKernelEx(lc, f, k._buffer.address, 0)
                assert err == drv.CUresult.CUDA_SUCCESS, err

            best = common.graph_ms(torch, stream, call, nbufs, before=y.zero_)
            err = ((y.float() - want).abs().max() / want.abs().max()).item()
            res[label] = dict(us=round(best * 1e3, 2), W_TBps=round(wbytes / best / 1e9, 3), err=round(err, 5))
        print(json.dumps(dict(bench="gemm-pdl", N=N, K=K, M=M, mode=mode, config=[BM, BN, wgs, splits], **res)),
              flush=True)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
