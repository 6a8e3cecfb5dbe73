#!/usr/bin/env python3
"""Row softmax of a bf16 matrix with warp reductions: one warp per row.

Each lane loads its share of the row as 16-byte vectors (8 x bf16),
widens them to f32, and the warp agrees on the row maximum
(cuda.warp_max: a butterfly of shfl.sync.bfly) and on the sum of
exp2((x - max)·log2 e) (cuda.warp_sum); the lanes scale their
exponentials by 1/sum and store bf16 vectors (packed cvt.rn.bf16x2.f32).
The rows are a run-time dim; the columns a build-time constant (a multiple
of 256: 32 lanes x 8, at most 4096 so a row fits in registers).

    python examples/softmax.py                   # compiles, prints what it made
    python examples/softmax.py --run             # and checks against torch.softmax (GPU)
    python examples/softmax.py --aot DIR         # also writes module.cubin + kernels.json
    python examples/softmax.py --run --from DIR  # GPU box, no MLIR needed
"""

import math
import sys

from nvtma import cuda, dsl
from _example import main

WARPS = 4            # rows per CTA
VEC = 8              # bf16 per 16-byte access
LOG2E = 1.0 / math.log(2.0)


@dsl.kernel(block=(32 * WARPS,), name="softmax")
def softmax_kernel(x: dsl.Tensor, y: dsl.Tensor, *, cols):
    row = dsl.block_idx() * WARPS + dsl.warp_idx()
    lane = dsl.lane_idx()
    per_lane = cols // (32 * VEC)                    # vectors a lane holds
    with dsl.if_(row < x.shape[0]):
        # consecutive lanes read consecutive 16-byte chunks: 512 B per warp access
        vals = [x.load_vec(VEC, row, (j * 32 + lane) * VEC).to(dsl.Float32) for j in range(per_lane)]
        m = dsl.max(*[v.reduce("max") for v in vals]) if per_lane > 1 else vals[0].reduce("max")
        m = cuda.warp_max(m)
        shift = m * -LOG2E
        exps = [dsl.exp2(dsl.fma(v, LOG2E, shift)) for v in vals]   # e^(x - max), ex2.approx
        s = exps[0].reduce("add")
        for e in exps[1:]:
            s = s + e.reduce("add")
        inv = dsl.fdividef(1.0, cuda.warp_sum(s))
        for j, e in enumerate(exps):
            y.store_vec((e * inv).to(dsl.BFloat16), row, (j * 32 + lane) * VEC)


def softmax(rows, cols):
    """The kernel for a [rows, cols] bf16 matrix (rows only sets the grid)."""
    if cols % (32 * VEC) or not 0 < cols <= 4096:
        raise SystemExit(f"cols={cols}: a multiple of {32 * VEC} up to 4096 (one warp holds a row)")
    t = dsl.Tensor("bf16", (None, cols))
    sp = softmax_kernel.specialize([t, t], cols=cols)
    sp.grid = ((rows + WARPS - 1) // WARPS,)
    return sp


def add_args(ap):
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=1024)


def make_spec(a):
    return softmax(a.rows, a.cols)


def check(compiled, spec, a, torch):
    torch.manual_seed(0)
    x = (torch.randn(a.rows, a.cols, device="cuda") * 4).to(torch.bfloat16)
    y = torch.full_like(x, float("nan"))
    compiled.softmax(x, y, grid=spec.grid)
    torch.cuda.synchronize()
    ref = torch.softmax(x.float(), dim=-1)
    err = (y.float() - ref).abs().max().item()
    sums = y.float().sum(-1)
    # bf16 keeps 8 bits: a value in [0, 1] is off by at most 2^-9 after rounding
    ok = bool(torch.isfinite(y.float()).all()) and err <= 2.0 ** -8 and bool(((sums - 1).abs() < 0.02).all())
    print(f"max |y - torch.softmax| = {err:.2e}; row sums in [{sums.min().item():.4f}, {sums.max().item():.4f}]")
    return ok


PTX_OPS = [r"shfl\.sync\.bfly\.b32", r"ex2\.approx[\w.]*", r"cvt\.rn\.bf16x2\.f32", r"ld\.global\.v4\.b32",
           r"st\.global\.v4\.b32", r"max\.f32", r"div\.approx[\w.]*"]

if __name__ == "__main__":
    sys.exit(main(__doc__, make_spec, check, add_args, ptx_ops=PTX_OPS))
