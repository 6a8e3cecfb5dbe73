#!/usr/bin/env python3
"""TMA reduce-add: b += a, tile by tile, with the add done by the copy engine
(cp.reduce.async.bulk.tensor.add) on its way from shared to global memory.

    python examples/reduce_add.py --reduction max
"""

import sys

from nvtma import kernels
from _example import main

OPS = {"add": lambda a, b: a + b, "min": lambda a, b: a.minimum(b), "max": lambda a, b: a.maximum(b)}


def add_args(ap):
    ap.add_argument("--rows", type=int, default=1024)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--reduction", default="add", choices=sorted(OPS))


def make_spec(a):
    return kernels.reduce_add(a.rows, a.cols, "f32", (32, 32), reduction=a.reduction)


def check(compiled, spec, a, torch):
    x = torch.randn(a.rows, a.cols, device="cuda")
    y = torch.randn(a.rows, a.cols, device="cuda")
    want = OPS[a.reduction](x, y)
    compiled.reduce_tile(x, y, grid=spec.grid, block=spec.block)
    torch.cuda.synchronize()
    return bool(torch.allclose(y, want, rtol=0, atol=1e-6))


if __name__ == "__main__":
    sys.exit(main(__doc__, make_spec, check, add_args))
