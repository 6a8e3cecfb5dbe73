#!/usr/bin/env python3
"""Past 512 rows: blocks of 512 and the rest (`full_then_rest`, Gemm's row_blocks before session 45) against blocks
as even as 64-row units allow (`even`: ceil(M / 512) launches, each CTA pair's rows near half a block; Gemm's
`row_blocks` since, from this run: results/h100-2026-12-06-s49-rows-even.jsonl), side by side.

    python3 benchmarks/diag/rows_even.py build DIR   # here (needs MLIR)
    python3 benchmarks/diag/rows_even.py run DIR     # on the GPU: one JSON line per problem

The rest of 512 + r rows streams all of W for its r rows (4096 x 7168, M = 520: 35.9 us, M = 512 alone 25.4,
session 44); even blocks stream W as often, in bigger tiles. Same protocol as rows_bench.py (CUDA-graph
replays of 20 calls, W rotated over >= 256 MiB, best of 10), y checked against float32 first. Not yet run on a
GPU (session 44's device time ran out). Session 45 (H100): even blocks faster at 46 of 50 problems, 1.076x in
geometric mean (up to 1.21x; slower by at most 1% at 4). The line's `blocks` and `us` are `full_then_rest`'s.
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import gemm_bench  # noqa: E402
import rows_bench  # noqa: E402

MS = [520, 600, 700, 800, 1100]
MODES = ["tensor", "bf16"]


def even(M, rows=512):
    """ceil(M / rows) blocks, each a whole number of 64-row units (32 rows a CTA of a pair) but the last."""
    n = -(-M // rows)
    size = -(-M // (64 * n)) * 64
    return [(a, min(a + size, M)) for a in range(0, M, size)]


def full_then_rest(M, rows=512):
    """Blocks of `rows` and the rest last (1100: 512 + 512 + 76)."""
    return [(a, min(a + rows, M)) for a in range(0, M, rows)]


def problems():
    for N, K in gemm_bench.SHAPES:
        for M in MS:
            for mode in MODES:
                yield N, K, M, mode


def build(d: Path):
    rows_bench.build(d, problems(), (full_then_rest, even), "rows_even")


def run(d: Path):
    import torch
    from nvtma.kernels import gemm
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    print(json.dumps(dict(bench="gemm-rows-even", machine=props.name, sms=props.multi_processor_count)), flush=True)
    g, ge = gemm.Gemm(artifacts=d, quantize="kernel"), gemm.Gemm(artifacts=d, quantize="kernel")
    stream = torch.cuda.Stream()
    gen = torch.Generator(device=dev).manual_seed(44)
    for N, K, M, mode in problems():
        x, w, kw, ref, _, wbytes = rows_bench.problem_inputs(torch, gen, N, K, M, mode)
        wbufs = rows_bench.rotated(w, wbytes)
        line = dict(bench="gemm-rows-even", N=N, K=K, M=M, mode=mode,
                    blocks=[b - a for a, b in full_then_rest(M)], even=[b - a for a, b in even(M)])
        for name, gg, blocks in (("us", g, full_then_rest), ("even_us", ge, even)):
            kept = gemm.row_blocks
            gemm.row_blocks = lambda M, rows=512, blocks=blocks: blocks(M, rows)
            try:
                err, ms = rows_bench.timed(torch, stream, lambda w: gg(x, w, **kw), wbufs, ref)
                line[name.replace("us", "ok")], line[name] = err < 2e-2, round(ms * 1e3, 2)
            except Exception as e:  # noqa: BLE001 (report and go on)
                line[name] = f"{type(e).__name__}: {e}"[:300]
            finally:
                gemm.row_blocks = kept
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    rows_bench.main(build, run)
