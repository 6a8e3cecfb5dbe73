#!/usr/bin/env python3
"""Experiment: where Gemm(autotune=True)'s timing allocates under torch.compile(mode="reduce-overhead").

torch's CUDA graph trees put every allocation of the calling thread during their warm-up calls into the
graph's memory pool, and the warm-up call is where autotune times the candidates, W rotating over copies
of twice the L2. Prints the bytes in CUDA graph pools after three compiled calls (the pools of graphs gone
released first), with the timing on a thread of its own (`own-thread`, as built) or on the calling thread
(`same-thread`, as before the forty-fifth session: only the timing moved back, the split-K workspaces
still on their own thread). H100, 2026-12-05: 22 MiB against 124 MiB
(results/h100-2026-12-05-s45-cluster16-plain-and-pool.log).
    python3 benchmarks/diag/autotune_pool.py own-thread|same-thread   # on the GPU, NVTMA_GPU_ARTIFACTS set
With `own-thread-segments`, as own-thread, then each graph-pool segment: its pool, size, and where its
blocks were allocated (torch's memory history: the innermost frames of nvtma, torch or this script).
"""
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "test" / "python"))


def pools_mib(torch):
    torch.cuda.empty_cache()
    return sum(s["total_size"] for s in torch.cuda.memory_snapshot()
               if tuple(s["segment_pool_id"]) != (0, 0)) >> 20


def main(how):
    import torch
    import gpu_cases
    from nvtma.kernels import gemm
    M, N, K = gpu_cases.AUTOTUNE_CASE
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(M, K, device="cuda", generator=gen).to(torch.float8_e4m3fn)
    w = torch.randn(N, K, device="cuda", generator=gen).to(torch.float8_e4m3fn)
    sw, sx = torch.ones(1, device="cuda"), torch.ones(M, device="cuda")
    if how.startswith("same-thread"):
        own = gemm._on_a_thread_of_its_own
        gemm._on_a_thread_of_its_own = lambda fn: fn() if fn.__name__ == "tune" else own(fn)
    os.environ["NVTMA_AUTOTUNE_DIR"] = tempfile.mkdtemp()  # (no stored winner: the warm-up call times)
    g = gemm.Gemm(artifacts=os.environ["NVTMA_GPU_ARTIFACTS"], autotune=True)
    op = g.torch_op("nvtma_diag::gemm")
    f = torch.compile(lambda x, w, sw, sx: op(x, w, sw, sx, "tensor") + 1, mode="reduce-overhead")
    if how.endswith("-segments"):
        torch.cuda.memory._record_memory_history(max_entries=200000)
    for _ in range(3):
        f(x, w, sw, sx)
        torch.cuda.synchronize()
    print(how, "pools after 3 compiled calls:", pools_mib(torch), "MiB; trials",
          next(iter(g._tuners.values())).trials)
    if how.endswith("-segments"):
        for seg in torch.cuda.memory._snapshot()["segments"]:
            if tuple(seg["segment_pool_id"]) == (0, 0):
                continue
            print("segment pool", tuple(seg["segment_pool_id"]), seg["total_size"] >> 10, "KiB, stream",
                  seg["stream"])
            for b in seg["blocks"]:
                frames = [f"{Path(f['filename']).name}:{f['line']} {f['name']}" for f in b.get("frames", [])
                          if any(k in f["filename"] for k in ("nvtma", "torch/cuda", "_inductor", "autotune_pool"))]
                print("   ", b["state"], b["size"] >> 10, "KiB |", " < ".join(frames[:6]))


if __name__ == "__main__":
    main(sys.argv[1])
