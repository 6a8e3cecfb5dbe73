#!/usr/bin/env python3
"""The weight-streaming GEMM against cuBLASLt, side by side (issue #13).

    python3 benchmarks/gemm_bench.py build DIR [--quick]   # here (needs MLIR): AOT artifacts
    python3 benchmarks/gemm_bench.py run DIR [--quick] [--sweep]   # on the GPU: one JSON line per measurement
    python3 benchmarks/gemm_bench.py table RESULTS.jsonl [--also MORE.jsonl ...]   # gemm.MEASURED: a config per tile
    python3 benchmarks/gemm_bench.py markdown RESULTS.jsonl   # README tables, issue #13's targets marked

For every (N, K) of the issue and M in {1, 8, 16, 32, 64, 128, 256}: W as
e4m3 with per-tensor, per-row and 128x128 block scales, and as bf16; x as
e4m3 with its scales (what torch._scaled_mm takes too) — the quantization of
bf16 x is timed apart, and with the GEMM (bf16 x through the API), and up to
M = FUSED_UP_TO bf16 x quantized inside the GEMM (`fused_us`; not with
NVTMA_GEMM_BENCH_FUSED=0). GPU time
per call from CUDA events around CUDA-graph replays of 20 calls (best of 10)
that rotate over >= 256 MiB of W copies, so W always comes from DRAM; the
baselines run the same way in the same process. Reports W TB/s, TFLOP/s and the ratio to the baseline; --sweep adds
the L2-promotion sweep (none/64B/128B/256B on W and on x separately).
Each (problem, mode) also times the cost model's top candidate configs and
reports the fastest (the `config` field), checked against a float32 reference.
Each shape runs in a worker process of its own (a fault ends only that shape's
points).
"""

import argparse
import json
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent

SHAPES = [(4096, 7168), (7168, 2048), (2112, 7168), (24576, 1536), (16384, 16384)]
MS = [1, 8, 16, 32, 64, 128, 256]
MODES = ["tensor", "row", "block", "bf16"]
PROMOS = ["none", "l2_64b", "l2_128b", "l2_256b"]
SWEEP_MS = (1, 16, 64, 128)  # the L2-promotion sweep's M (W's promotion mattered most at small M: s15-config-probe-l2w)
FUSED_UP_TO = 16  # M up to which bf16 x quantized inside the GEMM is timed too (fused_us)
F8 = "f8E4M3FN"


def plan(quick, only=None):
    """(N, K, M, mode, candidates) to measure (of the shape `only`, if given):
    the config Gemm picks now (gemm.MEASURED's, so a run shows where a
    candidate beats it), then the cost model's."""
    from nvtma.kernels import gemm
    shapes = SHAPES[:2] + SHAPES[-1:] if quick else SHAPES
    ms = [1, 64, 128] if quick else MS
    for N, K in shapes:
        if only is not None and (N, K) != only:
            continue
        for M in ms:
            for mode in MODES:
                wd = "bf16" if mode == "bf16" else F8
                now = gemm.choose_config(M, N, K, wd, scale=None if mode == "bf16" else mode)
                cands = gemm.candidates(M, N, K, wd, top=2 if quick else 4, scale=None if mode == "bf16" else mode)
                yield N, K, M, mode, [now] + [c for c in cands if c != now]


def specs(quick, sweep):
    from nvtma.kernels import gemm
    g, gf = gemm.Gemm(quantize="kernel"), gemm.Gemm(quantize="fused")
    out = {}
    for N, K, M, mode, cands in plan(quick):
        wd = "bf16" if mode == "bf16" else F8
        for cfg in cands:
            sp, _, q = g.plan(M, N, K, wd, None if mode == "bf16" else mode, quantize=True, config=cfg)
            out[sp.key] = sp
            if q is not None:
                out[q.key] = q
        if mode != "bf16" and M <= FUSED_UP_TO:  # bf16 x quantized in the GEMM, at the config Gemm picks
            sp, _, _ = gf.plan(M, N, K, wd, mode, quantize=True)
            out[sp.key] = sp
    if sweep:
        for N, K in SHAPES:
            for M in SWEEP_MS:
                cfg = gemm.choose_config(M, N, K)
                for which in ("l2_w", "l2_x"):
                    for p in PROMOS:
                        sp, _, _ = g.plan(M, N, K, F8, "tensor", config=cfg, **{which: p})
                        out[sp.key] = sp
    return out


def build(d: Path, quick, sweep):
    sp = specs(quick, sweep)
    for key, s in sp.items():
        s.compile().save(d / key)
    print(f"gemm_bench: {len(sp)} kernels -> {d}")


def emit(**kw):
    print(json.dumps(kw), flush=True)


def run(d: Path, quick, sweep, shape=None):
    """Every shape in a worker process of its own (`--shape N,K`): a kernel
    that faults takes its CUDA context, and with it only that shape's later
    points (reported as an error line), not the rest of the run."""
    import subprocess
    import sys
    if shape is None:
        import torch
        props = torch.cuda.get_device_properties(torch.device("cuda"))
        emit(bench="gemm", machine=props.name, sms=props.multi_processor_count, torch=torch.__version__)
        for N, K in SHAPES:
            cmd = [sys.executable, __file__, "run", str(d), "--shape", f"{N},{K}"]
            cmd += ["--quick"] * quick + ["--sweep"] * sweep
            with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as p:
                for line in p.stdout:
                    print(line, end="", flush=True)
            if p.returncode:
                emit(bench="gemm", N=N, K=K, error=f"the worker process of this shape exited with status "
                                                   f"{p.returncode}: its later points are not measured")
        return
    _run_shape(d, quick, sweep, tuple(shape))


def _run_shape(d: Path, quick, sweep, shape):
    import torch
    import common
    from nvtma.kernels import gemm
    dev = torch.device("cuda")
    g = gemm.Gemm(artifacts=d, quantize="kernel")
    gf = gemm.Gemm(artifacts=d, quantize="fused")
    stream = torch.cuda.Stream()

    def graph_ms(call, nbufs):
        return common.graph_ms(torch, stream, call, nbufs)

    gen = torch.Generator(device=dev).manual_seed(shape[0] * 100003 + shape[1])
    for N, K, M, mode, cands in plan(quick, shape):
        fp8 = mode != "bf16"
        eb = 1 if fp8 else 2
        wbytes = N * K * eb
        nbufs = max(2, -(-(256 << 20) // wbytes) + 1)
        ws_ = [torch.randn(N, K, generator=gen, device=dev) for _ in range(1)]
        w32 = ws_[0] / 4
        if fp8:
            if mode == "tensor":
                sw = torch.tensor([0.02], device=dev)
                w8 = (w32 / sw).to(torch.float8_e4m3fn)
                wdq = w8.float() * sw
            elif mode == "row":
                sw = w32.abs().amax(1).clamp(min=1e-6) / 448
                w8 = (w32 / sw[:, None]).to(torch.float8_e4m3fn)
                wdq = w8.float() * sw[:, None]
            else:
                nb, kb = -(-N // 128), -(-K // 128)
                wp = torch.zeros(nb * 128, kb * 128, device=dev)
                wp[:N, :K] = w32
                blocks = wp.view(nb, 128, kb, 128)
                sw = blocks.abs().amax((1, 3)).clamp(min=1e-6) / 448
                w8 = (blocks / sw[:, None, :, None]).reshape(nb * 128, kb * 128)[:N, :K].to(torch.float8_e4m3fn)
                wdq = (torch.nn.functional.pad(w8.float(), (0, kb * 128 - K, 0, nb * 128 - N)).view(nb, 128, kb, 128)
                       * sw[:, None, :, None]).reshape(nb * 128, kb * 128)[:N, :K]
            wbufs = [w8] + [w8.clone() for _ in range(nbufs - 1)]
        else:
            w16 = w32.to(torch.bfloat16)
            wdq = w16.float()
            sw = None
            wbufs = [w16] + [w16.clone() for _ in range(nbufs - 1)]
        x = torch.randn(M, K, generator=gen, device=dev).to(torch.bfloat16)
        if fp8:
            xq, sx = g.quantize(x, "block" if mode == "block" else "token")
            torch.cuda.synchronize()
            xdq = gemm.dequantize_x(xq, sx)
            xin = xq
        else:
            xin, sx, xdq = x, None, x.float()
        ref = xdq @ wdq.t()
        best = now = None
        timed = []   # (config, us) of every candidate that ran
        for cfg in cands:
            def call(i, cfg=cfg):
                return g(xin, wbufs[i], w_scale=sw, scale=None if not fp8 else mode, x_scale=sx, config=cfg)
            try:
                y = call(0)
                torch.cuda.synchronize()
                err = ((y.float() - ref).abs().max() / ref.abs().max().clamp(min=1e-6)).item()
                ms = graph_ms(call, nbufs)
            except Exception as e:  # noqa: BLE001 (report and go on)
                emit(bench="gemm", N=N, K=K, M=M, mode=mode, config=list(cfg), error=f"{type(e).__name__}: {e}"[:400])
                continue
            if best is None or ms < best[0]:
                best = (ms, cfg, err)
            if cfg == cands[0]:
                now = ms
            timed.append([list(gemm.Config(*cfg).short), round(ms * 1e3, 2)])
        base_ms, base_name = None, None
        try:
            if fp8:
                if mode in ("tensor", "row"):
                    base_name = {"tensor": "torch._scaled_mm per-tensor", "row": "torch._scaled_mm row-wise"}[mode]
                    base = common.scaled_mm(torch, xin, wbufs, sw, mode)
                    base(0)
                    base_ms = graph_ms(base, nbufs)
            else:
                base_name = "torch.matmul (cuBLAS)"

                def base(i):
                    return torch.matmul(xin, wbufs[i].t())
                base(0)
                base_ms = graph_ms(base, nbufs)
        except Exception as e:  # noqa: BLE001
            base_name = f"{base_name}: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
        if best is None:
            continue
        ms, cfg, err = best
        tol = 2e-2 if fp8 else 1e-2
        line = dict(bench="gemm", N=N, K=K, M=M, mode=mode, config=list(cfg), us=round(ms * 1e3, 2),
                    W_TBps=round(wbytes / ms / 1e9, 3), TFLOPs=round(2 * M * N * K / ms / 1e9, 1),
                    max_rel_err=float(f"{err:.2e}"), correct=err < tol, w_copies=nbufs)
        if now is not None:  # the config Gemm() picks (gemm.MEASURED's, else the cost model's), timed in this run
            line.update(now_config=list(cands[0]), now_us=round(now * 1e3, 2))
        line["candidates_us"] = timed
        if base_ms:
            line.update(baseline=base_name, base_us=round(base_ms * 1e3, 2),
                        base_W_TBps=round(wbytes / base_ms / 1e9, 3), speedup=round(base_ms / ms, 3))
        elif base_name:
            line.update(baseline=base_name)
        if fp8:
            q = g.plan(M, N, K, F8, mode, quantize=True)[2]
            line["quantize_us"] = round(graph_ms(lambda i: g.quantize(x, q.consts["granularity"]), 1) * 1e3, 2)
            # bf16 x through the API: the quantizing kernel, then the GEMM (launched as it starts, PDL)
            line["with_quantize_us"] = round(graph_ms(
                lambda i: g(x, wbufs[i], w_scale=sw, scale=mode, config=cfg), nbufs) * 1e3, 2)
            if M <= FUSED_UP_TO and os.environ.get("NVTMA_GEMM_BENCH_FUSED", "1") == "1":
                # bf16 x quantized inside the GEMM (1x128 scales), at the config Gemm picks for it
                try:
                    ref_b = gemm.dequantize_x(*g.quantize(x, "block")) @ wdq.t()
                    y = gf(x, wbufs[0], w_scale=sw, scale=mode)
                    torch.cuda.synchronize()
                    line["fused_err"] = float(f"{((y.float() - ref_b).abs().max() / ref_b.abs().max()).item():.2e}")
                    line["fused_us"] = round(graph_ms(
                        lambda i: gf(x, wbufs[i], w_scale=sw, scale=mode), nbufs) * 1e3, 2)
                    fsp, fsplits, _ = gf.plan(M, N, K, F8, mode, quantize=True)
                    line["fused_config"] = [fsp.info["BM"], fsp.info["BN"], fsp.info["wgs"], fsplits]
                    # what Gemm() (quantize="auto") runs for bf16 x here
                    line["auto"] = "kernel" if gemm.Gemm().plan(M, N, K, F8, mode, quantize=True)[2] else "fused"
                except Exception as e:  # noqa: BLE001 (report and go on)
                    line["fused_error"] = f"{type(e).__name__}: {e}"[:300]
        emit(**line)
    if sweep:
        N, K = shape
        w8 = (torch.randn(N, K, generator=gen, device=dev) / 4).to(torch.float8_e4m3fn)
        nbufs = max(2, -(-(256 << 20) // (N * K)) + 1)
        wbufs = [w8] + [w8.clone() for _ in range(nbufs - 1)]
        sw = torch.tensor([1.0], device=dev)
        for M in SWEEP_MS:
            cfg = gemm.choose_config(M, N, K)
            xq = torch.randn(M, K, generator=gen, device=dev).to(torch.float8_e4m3fn)
            sx = torch.ones(M, device=dev)
            for which in ("l2_w", "l2_x"):
                for p in PROMOS:
                    def call(i, which=which, p=p, xq=xq, sx=sx, cfg=cfg):
                        return g(xq, wbufs[i], w_scale=sw, scale="tensor", x_scale=sx, config=cfg, **{which: p})
                    call(0)
                    ms = graph_ms(call, nbufs)
                    emit(bench="gemm-l2-sweep", N=N, K=K, M=M, operand=which[-1], l2_promotion=p,
                         config=list(cfg), us=round(ms * 1e3, 2), W_TBps=round(N * K / ms / 1e9, 3))


def table(results: Path, *more):
    """gemm.MEASURED from the lines of one run or more (RESULTS, then
    --also FILE ...): (N, K, BM, mode) -> (BN, wgs, splits[, mc[, stages[,
    ms[, kwg[, kc[, swap]]]]]]). The Ms of one BM (1 and 8 share a tile) share the entry,
    so from lines with every candidate's time (`candidates_us`) it is the
    config timed at all of them whose worst time against each M's fastest
    (times averaged over the runs) is least; from older lines, the fastest
    at the M that is BM itself, else at any M."""
    from nvtma.kernels import gemm
    times = {}   # (N, K, BM, mode) -> {M: {short config: [us per run]}}
    for path in [results, *more]:
        for line in Path(path).read_text().splitlines():
            r = json.loads(line)
            if r.get("bench") != "gemm" or "us" not in r or not r.get("correct"):
                continue
            cfg = gemm.Config(*r["config"])
            key = (r["N"], r["K"], cfg.BM * cfg.ms, r["mode"])   # BM of the problem: the cluster's rows with ms
            per_m = times.setdefault(key, {}).setdefault(r["M"], {})
            for short, us in r.get("candidates_us") or [[cfg.short, r["us"]]]:
                per_m.setdefault(tuple(short), []).append(us)
    best = {}
    for key, by_m in times.items():
        mean = {M: {c: sum(t) / len(t) for c, t in cs.items()} for M, cs in by_m.items()}
        fastest = {M: min(ts.values()) for M, ts in mean.items()}
        shared = set.intersection(*(set(ts) for ts in mean.values()))
        if shared:
            pick = min(shared, key=lambda c: (max(mean[M][c] / fastest[M] for M in mean),
                                              sum(mean[M][c] for M in mean)))
        else:
            ts = mean.get(key[2]) or {c: t for M in mean for c, t in mean[M].items()}
            pick = min(ts, key=ts.get)
        best[key] = pick[1:]
    print("MEASURED = {")
    for key in sorted(best):
        print(f"    {key!r}: {best[key]!r},")
    print("}")


TARGETS = {"tensor": (1.5, 4.2), "row": (2.0, 4.2), "bf16": (1.3, 4.3)}  # issue #13: x baseline, capped at TB/s


def config_text(cfg):
    """A config as the README's tables write it: BM/BN/wgs/splits[/mc/stages/ms] (sK: stream K, -: the default
    ring), then "kwg", "kc N" and "x-A" (x the wgmmas' A: swap=False) where they are set."""
    from nvtma.kernels import gemm
    c = gemm.Config(*cfg)
    head = c._replace(kwg=False, kc=1, swap=True).short
    text = "/".join("sK" if i == 3 and v == 0 else "-" if v is None else str(v) for i, v in enumerate(head))
    return text + (" kwg" if c.kwg else "") + (f" kc {c.kc}" if c.kc > 1 else "") + ("" if c.swap else " x-A")


def markdown(results: Path, *_):
    """benchmarks/README.md's tables from a run's lines: per shape and M, W
    TB/s of nvtma / the baseline for each mode, the config of the per-tensor
    point, and how many of issue #13's targets are met: by the fastest
    config a run timed (what autotuning finds) and by the one Gemm() picks
    (`now_us`); only for a run on an H200 (or one that names no machine),
    whose DRAM stream the targets' caps are."""
    rows, machine = {}, None
    for line in results.read_text().splitlines():
        r = json.loads(line)
        if r.get("bench") == "gemm" and "us" in r:
            rows[r["N"], r["K"], r["M"], r["mode"]] = r
        elif r.get("bench") == "gemm" and "machine" in r:
            machine = r["machine"]
    # the targets are the H200's (their TB/s caps are its DRAM stream's): marked only for a run on one
    judged = machine is None or "H200" in machine
    met = total = met_now = 0
    for N, K in SHAPES:
        print(f"**{N} × {K}**\n")
        print("| M | fp8 per-tensor: nvtma / cuBLASLt | fp8 row: nvtma / cuBLASLt | fp8 128×128 block: nvtma "
              "| bf16: nvtma / cuBLAS | config (tensor) |")
        print("| --- | --- | --- | --- | --- | --- |")
        for M in MS:
            cells = []
            for mode in MODES:
                r = rows.get((N, K, M, mode))
                if r is None:
                    cells.append("—")
                    continue
                cell = f"{r['W_TBps']:.2f}" + ("" if r.get("correct") else " (WRONG)")
                if r.get("base_W_TBps"):
                    cell += f" / {r['base_W_TBps']:.2f} ({r['speedup']:.2f}×)"
                    k, cap = TARGETS[mode]
                    if judged and M <= (64 if mode == "bf16" else 128):
                        total += 1
                        goal = min(k * r["base_W_TBps"], cap)
                        ok = r["W_TBps"] >= goal
                        met += ok
                        met_now += N * K * (2 if mode == "bf16" else 1) / r.get("now_us", r["us"]) / 1e6 >= goal
                        cell += " ✓" if ok else ""
                cells.append(cell)
            cfg = rows.get((N, K, M, "tensor"), {}).get("config")
            short = config_text(cfg) if cfg else "—"
            print(f"| {M} | " + " | ".join(cells) + f" | {short} |")
        print()
    if judged:
        print(f"targets met (✓): {met} of {total}; by the configs Gemm() picks: {met_now} of {total}")
    else:
        print(f"targets not marked: issue #13's are the H200's, this run is on {machine}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["build", "run", "table", "markdown"],
                    help="table RESULTS: gemm.MEASURED from runs' lines; markdown RESULTS: the README's tables")
    ap.add_argument("dir", type=Path)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--also", nargs="*", default=[], type=Path, help="table: more runs' lines, times averaged")
    ap.add_argument("--shape", type=lambda v: tuple(int(t) for t in v.split(",")),
                    help="run: this N,K only, in this process (what each worker of a run does)")
    a = ap.parse_args()
    if a.cmd == "run":
        run(a.dir, a.quick, a.sweep, a.shape)
    elif a.cmd == "table":
        table(a.dir, *a.also)
    else:
        {"build": build, "markdown": markdown}[a.cmd](a.dir, a.quick, a.sweep)
