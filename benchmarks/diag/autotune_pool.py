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
With `own-thread-segments`, as own-thread, then each graph-pool segment: its pool, size, and the
allocations made in it (`print_pool_segments`). H100, 2026-12-07, under memcheck: the 43 timing graphs'
own pools, empty, were still there (results/h100-2026-12-07-s58-autotune-pool-*; that run printed the
blocks' own frames, which a freed block lacks, so no allocation was named). H100, 2026-12-07, plain, four runs on
one machine (results/h100-2026-12-07-s59-autotune-pool-*): the first, with no inductor cache yet, 52 MiB, 50 of them
one buffer of inductor's own (benchmarking.py's benchmark_gpu, timing the configs of its kernel of `+ 1`, an
L2-sized buffer to flush the cache), the next three 22 MiB; again on a fresh TORCHINDUCTOR_CACHE_DIR, 52 MiB
(`-plain-cold`). `own-thread-one-config-segments`: inductor's kernel given one config (triton.autotune_pointwise
off, as the test does), so nothing of inductor's is timed: 22 MiB on a fresh inductor cache (`-one-config-cold`).
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
    if "-one-config" in how:  # inductor's kernel of `+ 1` untimed, as the test runs it
        import torch._inductor.config as inductor_config
        inductor_config.triton.autotune_pointwise = False
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
        print_pool_segments(torch.cuda.memory._snapshot())


def print_pool_segments(snapshot):
    """Each graph-pool segment of a torch memory snapshot (history recorded): its pool, size and stream, then
    the allocations made in it since the segment was made, from the history (a freed block keeps no frames
    of its own), each with its innermost frames of nvtma, torch or this script."""
    traces = [t for device in snapshot["device_traces"] for t in device]
    for seg in snapshot["segments"]:
        if tuple(seg["segment_pool_id"]) == (0, 0):
            continue
        lo, hi = seg["address"], seg["address"] + seg["total_size"]
        print("segment pool", tuple(seg["segment_pool_id"]), seg["total_size"] >> 10, "KiB, stream", seg["stream"])
        made = max((i for i, t in enumerate(traces) if t["action"] == "segment_alloc" and t["addr"] == lo),
                   default=-1)
        for t in traces[made + 1:]:
            if t["action"] == "alloc" and lo <= t["addr"] < hi:
                frames = [f"{Path(f['filename']).name}:{f['line']} {f['name']}" for f in t.get("frames", [])
                          if any(k in f["filename"] for k in ("nvtma", "torch/cuda", "_inductor", "autotune_pool"))]
                print("    alloc", t["size"] >> 10, "KiB |", " < ".join(frames[:6]))


if __name__ == "__main__":
    main(sys.argv[1])
