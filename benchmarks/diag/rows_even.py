#!/usr/bin/env python3
"""Past 512 rows: Gemm's blocks of 512 and the rest (`gemm.row_blocks`) against blocks as even as 64-row units
allow (`even`: ceil(M / 512) launches, each CTA pair's rows near half a block), side by side.

    python3 benchmarks/diag/rows_even.py build DIR   # here (needs MLIR)
    python3 benchmarks/diag/rows_even.py run DIR     # on the GPU: one JSON line per problem

The rest of 512 + r rows streams all of W for its r rows (4096 x 7168, M = 520: 35.9 us, M = 512 alone 25.4,
session 44); even blocks stream W as often, in bigger tiles. Same protocol as rows_bench.py (CUDA-graph
replays of 20 calls, W rotated over >= 256 MiB, best of 10), y checked against float32 first. Not yet run on a
GPU (session 44's device time ran out).
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


def problems():
    for N, K in gemm_bench.SHAPES:
        for M in MS:
            for mode in MODES:
                yield N, K, M, mode


def build(d: Path):
    from nvtma.kernels import gemm
    rows_bench.build(d, problems(), (gemm.row_blocks, even), "rows_even")


def run(d: Path):
    import torch
    import common
    from nvtma.kernels import gemm
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    print(json.dumps(dict(bench="gemm-rows-even", machine=props.name, sms=props.multi_processor_count)), flush=True)
    g, ge = gemm.Gemm(artifacts=d, quantize="kernel"), gemm.Gemm(artifacts=d, quantize="kernel")
    stream = torch.cuda.Stream()
    gen = torch.Generator(device=dev).manual_seed(44)
    for N, K, M, mode in problems():
        x, w, kw, ref, _, wbytes = rows_bench.problem_inputs(torch, gen, N, K, M, mode)
        nbufs = max(2, -(-(256 << 20) // wbytes) + 1)
        wbufs = [w] + [w.clone() for _ in range(nbufs - 1)]
        line = dict(bench="gemm-rows-even", N=N, K=K, M=M, mode=mode,
                    blocks=[b - a for a, b in gemm.row_blocks(M)], even=[b - a for a, b in even(M)])
        for name, gg, blocks in (("us", g, None), ("even_us", ge, even)):
            greedy = gemm.row_blocks
            if blocks is not None:
                gemm.row_blocks = lambda M, rows=512: even(M, rows)
            try:
                y = gg(x, w, **kw)
                torch.cuda.synchronize()
                line[name.replace("us", "ok")] = ((y.float() - ref).abs().max() / ref.abs().max()).item() < 2e-2
                line[name] = round(common.graph_ms(torch, stream, lambda i: gg(x, wbufs[i], **kw), nbufs) * 1e3, 2)
            except Exception as e:  # noqa: BLE001 (report and go on)
                line[name] = f"{type(e).__name__}: {e}"[:300]
            finally:
                gemm.row_blocks = greedy
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    rows_bench.main(build, run)
