#!/usr/bin/env python3
"""The split epilogue's charge in `gemm._ranked` (`gemm.split_epilogue`), side by side: the cost model's pick with
the charge before session 45 (`was`: 2 + BM/16 K steps) against its pick with the charge fitted to split_waves.py's
second run (`now`: 2·(8 + BM/16)), for the problems where the two picks differ: the record's 57
(split_waves.RECORD), a sample of problems off the table, and CTA pairs (M = 257-512) at #13's shapes.

    python3 benchmarks/diag/split_cost.py build DIR   # here (needs MLIR)
    python3 benchmarks/diag/split_cost.py run DIR     # on the GPU: one JSON line per problem

Why: with K split only within one wave (session 45), the model's pick at the record's problems was still 1.07x
the time of the best of the same tile split within a wave or unsplit (geometric mean, up to 1.6x: 3072 x 1024,
M = 8, per tensor, 2 ways 4.29 us against 2.68 unsplit); the fitted charge's picks take 1.007x that best's time
in geometric mean at the 49 of them measured. Same protocol as rows_bench.py (CUDA-graph replays of 20 calls, W
rotated over >= 256 MiB, best of 10), y checked against float32 first. First run, session 45 (H100,
results/h100-2026-12-06-s49-split-cost.jsonl, whose `now` and `fit` are `was` and `now` here, without the
pairs): the fitted charge's picks faster at 52 of 56 problems, 1.23x in geometric mean (up to 1.63x), slower at
2 (by 1% and 7%); second run at the commit (s49-split-cost-2.jsonl, 61 problems): the same at 56, CTA pairs
1.01x (0.89-1.23x at 5). The model's charge is the fitted one since (`now` here).
"""
import contextlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import rows_bench  # noqa: E402
import split_waves  # noqa: E402 (beside this file)

SMS = 132
GRID = [(N, K) for N in (512, 2048, 4096, 7168, 24576) for K in (1024, 4096, 16384)]
PAIRS = [(N, K) for N in (4096, 7168, 2112, 24576) for K in (7168, 2048, 1536)]


@contextlib.contextmanager
def charged_as_before():
    """gemm.split_epilogue as it was before session 45: 2 + BM/16 K steps."""
    from nvtma.kernels import gemm
    kept = gemm.split_epilogue
    gemm.split_epilogue = lambda BM: 2 + BM / 16
    try:
        yield
    finally:
        gemm.split_epilogue = kept


def variants(M, N, K, w_dtype, scale):
    from nvtma.kernels import gemm
    now = gemm.choose_config(M, N, K, w_dtype, SMS, scale)
    with charged_as_before():
        was = gemm.choose_config(M, N, K, w_dtype, SMS, scale)
    return {"was": was, "now": now} if was != now else None


def problems():
    seen = [p[:4] for p in split_waves.problems()]
    seen += [(N, K, M, mode) for N, K in GRID for M in (1, 16, 64, 128) for mode in ("tensor", "bf16")]
    seen += [(N, K, M, mode) for N, K in PAIRS for M in (300, 512) for mode in ("tensor", "row", "bf16")]
    return [p for p in dict.fromkeys(seen) if variants(p[2], p[0], p[1], *rows_bench.dtype_scale(p[3]))]


def cases():
    for N, K, M, mode in problems():
        yield N, K, M, mode, variants(M, N, K, *rows_bench.dtype_scale(mode))


def build(d: Path):
    split_waves.build_configs(d, cases(), "split_cost")


def run(d: Path):
    split_waves.time_configs(d, cases(), "gemm-split-cost", 46)  # (each line's was and now)


if __name__ == "__main__":
    rows_bench.main(build, run)
