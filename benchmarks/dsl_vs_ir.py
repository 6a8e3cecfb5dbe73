#!/usr/bin/env python3
"""The DSL kernel library against the IR-text kernels it replaces, side by side.

    python3 benchmarks/dsl_vs_ir.py build DIR    # here (needs MLIR): AOT artifacts of both
    python3 benchmarks/dsl_vs_ir.py run DIR      # on the GPU: one JSON line per pair

Same kernels, same launch parameters, same process: the pipelined TMA copy
at 16384² fp16 and the weight-streaming GEMV (bf16; fp8 row scale; fp8
tensor scale) at 16384². GPU time per call from CUDA events around CUDA-graph
replays of 20 calls, best of 10; the GEMV's W rotates over two copies
(>= 512 MiB) so L2 never holds it. The target is DSL >= 0.99x IR.
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

N = 16384
COPIES = [dict(box=(64, 128), stages=4, l2_load="l2_256b"), dict(box=(32, 256), stages=4, l2_load="l2_128b"),
          dict(box=(64, 128), stages=4, l2_load="l2_256b", load_hint="evict_first", store_hint="evict_first")]
F8 = "f8E4M3FN"
GEMVS = [dict(w_dtype="bf16", tile=(32, 256), stages=4, fp8_math="f32", consumers=4, split="rows", w_hint="evict_first"),
         dict(w_dtype="bf16", tile=(32, 256), stages=4, fp8_math="f32", consumers=4, split="tiles"),
         dict(w_dtype=F8, scale="row", tile=(64, 256), stages=4, consumers=8, split="rows", vec=16, x_dtype="f16",
              w_hint="evict_first"),
         dict(w_dtype=F8, scale="row", tile=(64, 256), stages=6, consumers=4, split="tiles"),
         dict(w_dtype=F8, scale="tensor", tile=(64, 256), stages=4, consumers=8, split="rows", vec=16, x_dtype="f16",
              w_hint="evict_first")]


def pairs():
    import legacy_ir_kernels as L
    from nvtma import kernels as K
    for i, c in enumerate(COPIES):
        yield f"copy{i}", c, L.pipelined_copy(N, N, "f16", **c), K.pipelined_copy(N, N, "f16", **c)
    for i, c in enumerate(GEMVS):
        yield f"gemv{i}", c, L.gemv(N, N, l2_promotion="l2_256b", **c), K.gemv(N, N, l2_promotion="l2_256b", **c)


def build(out: Path):
    import nvtma
    for name, _, old, new in pairs():
        nvtma.compile(old.ir).save(out / f"{name}-ir")
        new.compile().save(out / f"{name}-dsl")
    print(f"dsl_vs_ir: artifacts in {out}")


def run(art: Path):
    import torch
    import nvtma.runtime
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    stream = torch.cuda.Stream()

    def graph_ms(fn, calls=20, reps=10):
        with torch.cuda.stream(stream):
            fn(stream.cuda_stream)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream):
            for _ in range(calls):
                fn(stream.cuda_stream)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        best = float("inf")
        for _ in range(reps):
            with torch.cuda.stream(stream):
                s.record()
                g.replay()
                e.record()
            e.synchronize()
            best = min(best, s.elapsed_time(e) / calls)
        return best

    a = torch.randn(N, N, device="cuda", dtype=torch.float16)
    b = torch.empty_like(a)
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(N, generator=g, device="cuda").to(torch.bfloat16)
    w16 = [torch.randn(N, N, generator=g, device="cuda").to(torch.bfloat16) for _ in range(2)]
    w8 = [torch.randn(N, N, generator=g, device="cuda").to(torch.float8_e4m3fn) for _ in range(2)]
    rs = torch.rand(N, generator=g, device="cuda") + 0.5
    ts = torch.tensor([0.37], device="cuda")
    y = torch.zeros(N, device="cuda")
    for name, cfg, _, _ in pairs():
        res = {}
        for impl in ("ir", "dsl"):
            mod = nvtma.runtime.load(art / f"{name}-{impl}")
            kname = next(iter(mod.kernels))
            k = mod.kernel(kname)
            rec = mod.kernels[kname].get("launch") or {}
            block = tuple(rec.get("block") or ((cfg.get("consumers", 4) + 1) * 32 if name.startswith("gemv") else 32,))
            smem = rec.get("smem", 0)
            if name.startswith("copy"):
                grid = (sms * 3,)
                args = lambda i: (a, b)  # noqa: E731
                nbytes = 2 * a.numel() * 2
                check = lambda: torch.equal(a, b)  # noqa: E731
            else:
                f8 = cfg["w_dtype"] == F8
                ws = w8 if f8 else w16
                xin = x.half() if cfg.get("x_dtype") == "f16" else x
                extra = [] if not f8 else [rs if cfg["scale"] == "row" else ts]
                grid = (sms * 2,) if cfg["split"] == "tiles" else (128,)
                args = lambda i, ws=ws, xin=xin, extra=extra: (ws[i % 2], xin, y, *extra)  # noqa: E731
                nbytes = ws[0].numel() * ws[0].element_size()
                want = ws[0].float() @ x.float()
                if f8:
                    want = want * (rs if cfg["scale"] == "row" else ts)

                def check(want=want, f8=f8):
                    return ((y - want).abs().max() / want.abs().max()).item() < (4e-3 if f8 else 1e-4)
            calls = [0]

            def fn(st, k=k, args=args, grid=grid, block=block, smem=smem):
                calls[0] += 1
                k(*args(calls[0]), grid=grid, block=block, smem=smem, stream=st)
            if name.startswith("gemv"):
                y.zero_()
                k(*args(0), grid=grid, block=block, smem=smem)
            else:
                b.zero_()
                k(*args(0), grid=grid, block=block, smem=smem)
            torch.cuda.synchronize()
            ok = check()
            ms = graph_ms(fn)
            res[impl] = dict(us=round(ms * 1e3, 2), TBps=round(nbytes / ms / 1e9, 3), correct=ok, smem=smem)
        print(json.dumps(dict(bench="dsl_vs_ir", kernel=name, config={k: v for k, v in cfg.items()}, ir=res["ir"],
                              dsl=res["dsl"], dsl_over_ir=round(res["ir"]["us"] / res["dsl"]["us"], 3))), flush=True)


if __name__ == "__main__":
    cmd, d = sys.argv[1], Path(sys.argv[2])
    build(d) if cmd == "build" else run(d)
