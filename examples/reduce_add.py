#!/usr/bin/env python3
"""TMA reduce-add: b += a, tile by tile, with the add done by the copy engine
(cp.reduce.async.bulk.tensor.add) on its way from shared to global memory.
`--reduction min|max` reduce instead (16-bit floats only: the copy engine's
min/max take no float32, and nvtma rejects that atom at compile time).

    python examples/reduce_add.py --dtype bf16 --reduction max
"""

import sys

from nvtma import kernels
from _example import main

OPS = {"add": lambda a, b: a + b, "min": lambda a, b: a.minimum(b), "max": lambda a, b: a.maximum(b)}


def add_args(ap):
    ap.add_argument("--rows", type=int, default=1024)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--reduction", default="add", choices=sorted(OPS))
    ap.add_argument("--dtype", default="f32", choices=["f32", "f16", "bf16"])


def make_spec(a):
    return kernels.reduce_add(a.rows, a.cols, a.dtype, (32, 32), reduction=a.reduction)


def check(compiled, spec, a, torch):
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[a.dtype]
    x = torch.randn(a.rows, a.cols, device="cuda").to(dt)
    y = torch.randn(a.rows, a.cols, device="cuda").to(dt)
    want = OPS[a.reduction](x, y)  # rounded once to dt, as the copy engine does
    compiled.reduce_tile(x, y, grid=spec.grid)
    torch.cuda.synchronize()
    return bool(torch.equal(y, want))


if __name__ == "__main__":
    sys.exit(main(__doc__, make_spec, check, add_args))
