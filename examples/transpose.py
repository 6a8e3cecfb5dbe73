#!/usr/bin/env python3
"""Transpose a matrix through 128B-swizzled shared memory.

Each CTA moves one 64 x 64 tile: a TMA load brings X's tile (ti, tj) into
shared memory with the 128-byte swizzle; the threads read it column by
column (s_in[c, r]: the swizzle-aware shared tensor turns the logical
index into the swizzled address, so the reads spread over the banks) and
write the transposed tile to a second buffer allocated for the store
atom's swizzle; fence.proxy.async makes those writes visible to the TMA,
which stores the tile at (tj, ti) of Y. Y = Xᵀ, checked against torch.

    python examples/transpose.py                  # compiles, prints what it made
    python examples/transpose.py --run            # and checks against x.t() (GPU)
    python examples/transpose.py --aot DIR        # also writes module.cubin + kernels.json
    python examples/transpose.py --run --from DIR # GPU box, no MLIR needed
"""

import sys

from nvtma import cpasync, cuda, dsl, lang
from _example import main

T = 64           # tile edge: 64 x 2 bytes = one 128-byte swizzle span per row
THREADS = 256


@dsl.kernel(block=(THREADS,), name="transpose")
def transpose_kernel(x: dsl.Tensor, y: dsl.Tensor, *, tiles_x):
    pool = lang.SMEMPool()
    ld = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), x, (T, T), swizzle="swizzle_128b")
    st = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), y, (T, T), swizzle="swizzle_128b")
    s_in = pool.alloc((T, T), x.dtype)      # the load atom records its swizzle on the buffer
    s_out = pool.alloc_for(st)              # written by threads first: allocate with the store's swizzle
    bar = lang.TMABar(1)
    dsl.barrier()

    ti = dsl.block_idx() // tiles_x         # this CTA's tile of X
    tj = dsl.block_idx() % tiles_x
    with dsl.if_(dsl.thread_idx() == 0):
        bar.arrive_expect_tx(0, ld.tile_bytes)
    with lang.WarpRole(0):
        cpasync.copy(ld, cpasync.tma_partition(ld, [ti, tj]), s_in, tma_bar_ptr=bar.at(0))
    bar.wait(0, 0)

    t = dsl.thread_idx()
    for e in range(T * T // THREADS):       # unrolled at build time: 16 elements a thread
        i = t + e * THREADS
        r, c = i // T, i % T                # consecutive threads: consecutive columns c
        s_out[r, c] = s_in[c, r]            # logical indices; the swizzle is applied for us
    cuda.fence_proxy_async()                # these generic-proxy writes, before the TMA reads them
    dsl.barrier()
    with lang.WarpRole(0):
        cpasync.copy(st, cpasync.tma_partition(st, [tj, ti]), s_out)
        cpasync.bulk_commit_group()
        cpasync.bulk_wait_group(0)


def transpose(rows, cols, dtype="f16"):
    if rows % T or cols % T:
        raise SystemExit(f"{rows} x {cols}: both multiples of {T}")
    sp = transpose_kernel.specialize([dsl.Tensor(dtype, (rows, cols)), dsl.Tensor(dtype, (cols, rows))],
                                     tiles_x=cols // T)
    sp.grid = ((rows // T) * (cols // T),)
    return sp


def add_args(ap):
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=2048)
    ap.add_argument("--dtype", default="f16", choices=["f16", "bf16"])


def make_spec(a):
    return transpose(a.rows, a.cols, a.dtype)


def check(compiled, spec, a, torch):
    dt = torch.float16 if a.dtype == "f16" else torch.bfloat16
    x = torch.randn(a.rows, a.cols, device="cuda").to(dt)
    y = torch.full((a.cols, a.rows), float("nan"), device="cuda", dtype=dt)
    compiled.transpose(x, y, grid=spec.grid)
    torch.cuda.synchronize()
    ok = torch.equal(y, x.t())
    bad = (y != x.t()).sum().item()
    print(f"{a.rows} x {a.cols} {a.dtype}: {'Y == Xᵀ' if ok else f'{bad} elements differ'}")
    return ok


PTX_OPS = [r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta[\w.:]*", r"fence\.proxy\.async[\w.:]*",
           r"ld\.shared\.b16", r"st\.shared\.b16"]

if __name__ == "__main__":
    sys.exit(main(__doc__, make_spec, check, add_args, ptx_ops=PTX_OPS))
