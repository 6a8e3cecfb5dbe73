#!/usr/bin/env python3
"""TMA multicast in a thread-block cluster: the CTAs of a cluster each load
one slice of a tile and multicast it, so every CTA of the cluster receives
the whole tile while global memory is read once per cluster.

Each CTA then stores the tile it received to out[blockIdx.x]; the check
compares every CTA's copy with the input.

    python examples/multicast.py --cluster 4
"""

import sys

from nvtma import kernels
from _example import main


def add_args(ap):
    ap.add_argument("--rows", type=int, default=512)
    ap.add_argument("--cols", type=int, default=256)
    ap.add_argument("--tile", type=int, default=64, help="square tile edge")
    ap.add_argument("--cluster", type=int, default=2, choices=[2, 4, 8])


def make_spec(a):
    return kernels.multicast_copy(a.rows, a.cols, "f16", (a.tile, a.tile), a.cluster)


def check(compiled, spec, a, torch):
    t = a.tile
    x = torch.randn(a.rows, a.cols, device="cuda", dtype=torch.float16)
    out = torch.full((spec.grid[0], t, t), float("nan"), device="cuda", dtype=torch.float16)
    compiled.multicast_copy(x, out, grid=spec.grid)
    torch.cuda.synchronize()
    tiles = x.view(a.rows // t, t, a.cols // t, t).permute(0, 2, 1, 3).reshape(-1, t, t)
    return torch.equal(out, tiles.repeat_interleave(a.cluster, dim=0))


if __name__ == "__main__":
    sys.exit(main(__doc__, make_spec, check, add_args))
