#!/usr/bin/env python3
"""A 2-D TMA copy (tiled load -> shared memory -> tiled store) with a chosen
L2 promotion on the load descriptor.

Without a GPU it compiles and prints what it made (PTX / SASS statistics and
the descriptor record, L2 promotion included); with one it also runs the
copy and checks it against the input. ``--aot DIR`` writes module.ptx,
module.cubin and kernels.json into DIR (load them with nvtma.runtime.load, or
``--from DIR`` on the GPU machine).

    python examples/tma_copy.py --l2-promotion l2_256b --rows 4096 --cols 4096
"""

import sys

from nvtma import kernels
from _example import main


def add_args(ap):
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=4096)
    ap.add_argument("--box", default="64x128", help="rows x cols of one TMA box")
    ap.add_argument("--l2-promotion", default="l2_256b", choices=["none", "l2_64b", "l2_128b", "l2_256b"])
    ap.add_argument("--stages", type=int, default=4)


def make_spec(a):
    by, bx = (int(v) for v in a.box.split("x"))
    return kernels.pipelined_copy(a.rows, a.cols, "f16", (by, bx), stages=a.stages, l2_load=a.l2_promotion)


def check(compiled, spec, a, torch):
    x = torch.randn(a.rows, a.cols, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    grid = torch.cuda.get_device_properties(0).multi_processor_count * 3
    compiled.pipelined_copy(x, y, grid=(grid,))
    torch.cuda.synchronize()
    return torch.equal(x, y)


if __name__ == "__main__":
    sys.exit(main(__doc__, make_spec, check, add_args))
