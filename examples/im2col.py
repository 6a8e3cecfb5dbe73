#!/usr/bin/env python3
"""TMA im2col: one im2col-mode load gathers `pixels` consecutive output
pixels × `channels` channels of an NHWC activation into shared memory (the
operand a convolution's implicit GEMM would consume), with the filter
window's corners in the descriptor; the kernel stores the rows out.

    python examples/im2col.py --channels 64 --pixels 64
"""

import sys

from nvtma import kernels
from _example import main


def add_args(ap):
    ap.add_argument("--n", type=int, default=2)
    ap.add_argument("--hw", type=int, default=8, help="height = width")
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--pixels", type=int, default=64)


def make_spec(a):
    return kernels.im2col_dump(a.n, a.hw, a.hw, a.channels, a.pixels, a.channels)


def check(compiled, spec, a, torch):
    x = torch.randn(a.n, a.hw, a.hw, a.channels, device="cuda", dtype=torch.float16)
    out = torch.full((a.pixels, a.channels), float("nan"), device="cuda", dtype=torch.float16)
    compiled.im2col_dump(x, out, grid=spec.grid)
    torch.cuda.synchronize()
    # corners (0, 0): the pixels in raster order, all channels
    return torch.equal(out, x.reshape(-1, a.channels)[:a.pixels])


if __name__ == "__main__":
    sys.exit(main(__doc__, make_spec, check, add_args))
