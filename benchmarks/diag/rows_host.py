#!/usr/bin/env python3
"""Experiment: the host time of an eager Gemm call of more rows than a launch takes (M > 512: blocks of rows,
gemm.row_blocks), kept as one prepared call since the forty-seventh session (gemm._RowBlocks), against the call
as it was before (`as_before`: the inputs checked whole, launch_rows, then a Gemm call per block, each finding
its own prepared call), and against the call with one launcher per kernel (`shared_launcher`: as in the
forty-seventh session's first measurement, before each prepared call had a launcher of its own,
gemm._own_launcher: the row blocks of two shapes on one kernel repacked every argument each launch), in the same
process; and the wall time until the GPU is done. The problems are small (W
of 512 x 1024) so that the host sets the pace. Then cProfile's top entries over the first problem's calls.
    python3 benchmarks/diag/rows_host.py build DIR    # here
    python3 benchmarks/diag/rows_host.py run DIR      # on the GPU
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks/: common
sys.path.insert(0, str(Path(__file__).resolve().parent))   # gemm_host: _host_us

# (N, K, M, mode): e4m3 x given, or bf16 x quantized by the call ("tensor-bf16x")
PROBES = [(512, 1024, 600, "tensor"), (512, 1024, 600, "tensor-bf16x"), (512, 1024, 600, "block"),
          (512, 1024, 1100, "tensor")]


def _specs():
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    for N, K, M, mode in PROBES:
        for a, b in gemm.row_blocks(M):
            sp, _, q = g.plan(b - a, N, K, gemm.F8, mode.split("-")[0], quantize=mode.endswith("bf16x"), sms=132)
            yield from [sp] + ([q] if q is not None else [])


def build(d):
    import common
    common.save_new(d, list(_specs()))


def run(d):
    import cProfile
    import io
    import pstats
    import torch
    import common
    from gemm_host import _host_us
    from nvtma.kernels import gemm
    dev, stream, gen = common.gpu(torch)
    g = gemm.Gemm(artifacts=d)
    g_shared = gemm.Gemm(artifacts=d)  # its calls prepared with the module's own launcher of each kernel
    own_launcher = gemm._own_launcher
    with torch.cuda.stream(stream):
        for N, K, M, mode in PROBES:
            scale = mode.split("-")[0]
            w, x, sw, sx, want = common.gemm_problem(torch, gen, N, K, M, True, scale)
            if mode.endswith("bf16x"):
                x, sx = (x.float() * (sx[:, None] if sx.dim() == 1 else sx[:, :1])).to(torch.bfloat16), None
            kw = dict(w_scale=sw, scale=scale, x_scale=sx)
            y = g(x, w, **kw)
            err = ((y.float() - want).abs().max() / want.abs().max()).item()

            def as_before():
                rows = gemm.launch_rows(None, dict(g.options), g._device_sms(x))
                gemm._check_inputs(torch, x, w, sw, scale, sx)
                out = torch.empty(M, N, device=x.device, dtype=torch.bfloat16)
                for blk in (slice(*b) for b in gemm.row_blocks(M, rows)):
                    g_shared(x[blk], w, w_scale=sw, scale=scale, x_scale=None if sx is None else sx[blk],
                             out=out[blk])
                return out
            gemm._own_launcher = lambda module, name: module.kernel(name)  # (the shared Gemm's first calls)
            try:
                g_shared(x, w, **kw)
                ok = torch.equal(as_before(), y)
            finally:
                gemm._own_launcher = own_launcher
            steps = dict(call=lambda: g(x, w, **kw), shared_launcher=lambda: g_shared(x, w, **kw), as_before=as_before)
            host = {name: _host_us(torch, fn) for name, fn in steps.items()}
            wall = {name: _host_us(torch, fn, wall=True) for name, fn in steps.items()}
            print(json.dumps(dict(bench="gemm-rows-host", N=N, K=K, M=M, mode=mode, blocks=gemm.row_blocks(M),
                                  max_rel_err=round(err, 5), same_as_before=ok, host_us=host, wall_us=wall)),
                  flush=True)
            if (N, K, M, mode) == PROBES[0]:
                prof = cProfile.Profile()
                prof.enable()
                for _ in range(1000):
                    g(x, w, **kw)
                prof.disable()
                torch.cuda.synchronize()
                buf = io.StringIO()
                pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(18)
                print(buf.getvalue())


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
