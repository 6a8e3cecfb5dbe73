#!/usr/bin/env python3
"""Does the cost model's K split past one wave cost what it saves? Side by side, for problems outside the H200
table (gemm.MEASURED) where `gemm.choose_config` takes a K split whose shares fill more than one wave of the
SMs: that config, the same W tile split only as far as one wave holds (sms // tiles ways, at least 1), and
unsplit.

    python3 benchmarks/diag/split_waves.py build DIR   # here (needs MLIR)
    python3 benchmarks/diag/split_waves.py run DIR     # on the GPU: one JSON line per problem

Why: `gemm._ranked` charges a split's epilogue (an f32 partial of BM x BN through the workspace) once, where
each share of every wave pays it; in the 6,860 problems of the benchmark's recorded runs a K split past one
wave was the fastest candidate 7 times (all 16384 x 16384, M = 256, block-scaled, 64 K steps a share), and
clusters of four split 16-32 ways took 10-30x as long as unsplit (session 44, s48-rows). The cost model's
first pick is such a split at 466 of 1,694 problems off the table (N 512-32768, K 512-16384, M 1-256).
Same protocol as rows_bench.py (CUDA-graph replays of 20 calls, W rotated over >= 256 MiB, best of 10), y
checked against float32 first. Run in session 45 (H100, results/h100-2026-12-06-s49-split-waves.jsonl): the
split past a wave took 1.15-7.4x as long as the best of the other two at all 57 problems (geometric mean 2.29x;
14336 x 8192, M = 128, per tensor: 236 us at 32 ways, 42 unsplit); `_ranked` has split K only within one wave
since, so `problems()` now finds none of its own and takes the first run's, with its picks then, beside the
model's pick now (`model`).
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import rows_bench  # noqa: E402

SMS = 132


# the first run's lines: its problems and the cost model's picks then (K split past one wave)
RECORD = Path(__file__).resolve().parents[1] / "results" / "h100-2026-12-06-s49-split-waves.jsonl"


def splits_past_a_wave(cfg, N, sms=132):
    """Whether a config's K split (the grid's: not a cluster's, `ksplit`) makes more shares than one wave of
    its clusters holds, so that later waves' shares each pay the split's epilogue again (`_ranked` had counted it
    once)."""
    cl = max(cfg.mc, cfg.ms)
    return cfg.ksplit == 1 and cfg.splits > 1 and -(-(-(-N // cfg.BN)) // cfg.mc) * cfg.splits > max(sms // cl, 1)


def variants(M, N, K, w_dtype, scale, first=None):
    """{name: Config}: the cost model's pick (`first`, given: the record's, else now), split as far as one wave
    holds, unsplit, and (where `first` is given) the model's pick now; None where the pick is no K split past one
    wave."""
    from nvtma.kernels import gemm
    now = gemm.choose_config(M, N, K, w_dtype, SMS, scale)
    first = first or now
    if first.dsmem or not first.swap or not splits_past_a_wave(first, N, SMS):
        return None
    tiles = -(-(-(-N // first.BN)) // first.mc)
    wave = max(1, min(SMS // max(first.mc, first.ms) // tiles, gemm.k_stages(K, w_dtype, first.kc)))
    out = {"first": first, "one_wave": first._replace(splits=wave), "unsplit": first._replace(splits=1)}
    return dict(out, model=now) if now != first else out


def problems():
    """(N, K, M, mode, the model's pick or None) off the table whose pick splits K past one wave: now (none since
    `_ranked` splits within one wave), else the record's (with its picks)."""
    from nvtma.kernels import gemm
    now = [(N, K, M, mode, None) for N in (3072, 5120, 11008, 14336) for K in (1024, 4096, 8192) for M in (8, 64, 128)
           for mode in ("tensor", "bf16") if variants(M, N, K, *rows_bench.dtype_scale(mode))]
    if now or not RECORD.exists():
        return now
    return [(r["N"], r["K"], r["M"], r["mode"], gemm.Config(*r["first"]))
            for r in map(json.loads, RECORD.read_text().splitlines()[1:])]


def cases():
    for N, K, M, mode, first in problems():
        yield N, K, M, mode, variants(M, N, K, *rows_bench.dtype_scale(mode), first)


def build_configs(d: Path, cases, name):
    """Each case's (N, K, M, mode, {name: Config}) configs compiled, saved under d / spec.key."""
    from nvtma.kernels import gemm
    g = gemm.Gemm(quantize="kernel")
    specs = {}
    for N, K, M, mode, configs in cases:
        wd, scale = rows_bench.dtype_scale(mode)
        for cfg in configs.values():
            sp = g.plan(M, N, K, wd, scale, config=cfg)[0]
            specs[sp.key] = sp
    rows_bench.save_specs(d, specs, name)


def time_configs(d: Path, cases, bench, seed):
    """On the GPU, one JSON line a case: each config's y checked against float32, then timed (rows_bench's
    protocol), its name's `_us` the microseconds (or WRONG, or the error)."""
    import torch
    from nvtma.kernels import gemm
    props = torch.cuda.get_device_properties(torch.device("cuda"))
    print(json.dumps(dict(bench=bench, machine=props.name, sms=props.multi_processor_count)), flush=True)
    g = gemm.Gemm(artifacts=d, quantize="kernel")
    stream = torch.cuda.Stream()
    gen = torch.Generator(device="cuda").manual_seed(seed)
    for N, K, M, mode, configs in cases:
        x, w, kw, ref, _, wbytes = rows_bench.problem_inputs(torch, gen, N, K, M, mode)
        wbufs = rows_bench.rotated(w, wbytes)
        line = dict(bench=bench, N=N, K=K, M=M, mode=mode)
        for name, cfg in configs.items():
            line[name] = list(cfg.short)
            try:
                err, ms = rows_bench.timed(torch, stream, lambda w, cfg=cfg: g(x, w, config=cfg, **kw), wbufs, ref)
                line[name + "_us"] = round(ms * 1e3, 2) if err < 2e-2 else f"WRONG {round(ms * 1e3, 2)}"
            except Exception as e:  # noqa: BLE001 (report and go on)
                line[name + "_us"] = f"{type(e).__name__}: {e}"[:300]
        print(json.dumps(line), flush=True)


def build(d: Path):
    build_configs(d, cases(), "split_waves")


def run(d: Path):
    time_configs(d, cases(), "gemm-split-waves", 45)


if __name__ == "__main__":
    rows_bench.main(build, run)
