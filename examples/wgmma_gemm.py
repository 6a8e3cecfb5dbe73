#!/usr/bin/env python3
"""A one-CTA-tile Hopper tensor-core GEMM: C[64, N] = A[64, K] · B[N, K]ᵀ.

One warpgroup (128 threads) computes the whole 64 x N f32 tile. For each
K-tile, one warp loads A and B with TMA into 128B-swizzled shared memory
(K-major: a row of the tile is 128 bytes, 64 f16 or 128 e4m3), the
warpgroup issues wgmma.mma_async on shared-memory descriptors that
wgmma.SmemDescriptor derives from the swizzle the TMA atom recorded on the
buffer, and the accumulator (N/2 f32 registers a thread) is carried through
the K loop. The threads then store C from the accumulator's fragment
layout. Operands are f16 (m64nNk16) or e4m3 (m64nNk32, --dtype e4m3).

    python examples/wgmma_gemm.py                      # f16: compiles, prints what it made
    python examples/wgmma_gemm.py --dtype e4m3 --run   # and checks against torch (GPU)
    python examples/wgmma_gemm.py --aot DIR            # also writes module.cubin + kernels.json
    python examples/wgmma_gemm.py --run --from DIR     # GPU box, no MLIR needed
"""

import sys

from nvtma import cpasync, dsl, lang, wgmma
from _example import main

M = 64                     # one wgmma tile of rows
DTYPES = {"f16": "f16", "e4m3": "f8E4M3FN"}


@dsl.kernel(block=(128,), name="wgmma_gemm")
def gemm_kernel(a: dsl.Tensor, b: dsl.Tensor, c: dsl.Tensor, *, n, k, bk):
    pool = lang.SMEMPool()
    G2S = cpasync.CopyBulkTensorTileG2SOp
    la = cpasync.make_tiled_tma_atom(G2S(), a, (M, bk), swizzle="swizzle_128b")
    lb = cpasync.make_tiled_tma_atom(G2S(), b, (n, bk), swizzle="swizzle_128b")
    sa, sb = pool.alloc_for(la), pool.alloc_for(lb)      # 1024-byte aligned, swizzle recorded
    bar = lang.TMABar(1)
    dsl.barrier()                                       # the barrier's init is visible to all

    loop = dsl.range(k // bk, carry=(wgmma.Accumulator(n),))
    for kt, (acc,) in loop:
        with lang.WarpRole(0):                          # one elected thread arms and loads
            bar.arrive_expect_tx(0, la.tile_bytes + lb.tile_bytes)
            cpasync.copy(la, [0, kt * bk], sa, tma_bar_ptr=bar.at(0))
            cpasync.copy(lb, [0, kt * bk], sb, tma_bar_ptr=bar.at(0))
        bar.wait(0, kt % 2 == 1)                        # K-tile kt completes phase kt
        da, db = wgmma.SmemDescriptor(sa), wgmma.SmemDescriptor(sb)
        wgmma.fence()
        for kb in range(bk // da.k_per_block):          # 16 (f16) or 32 (e4m3) of K per wgmma
            acc = wgmma.mma_async(acc, da.k_block(kb), db.k_block(kb))
        wgmma.commit_group()
        wgmma.wait_group(0)
        dsl.barrier()                                   # every warp has read sa/sb: reload them
        dsl.yield_(acc)
    (acc,) = loop.results

    for i in range(acc.count):
        r, col = acc.coords(i)
        c[r, col] = acc[i]


def gemm(n, k, dtype):
    if dtype not in DTYPES:
        raise SystemExit(f"--dtype {dtype}: one of {', '.join(DTYPES)}")
    bk = 64 if dtype == "f16" else 128                  # 128 bytes of K per row: the swizzle span
    if n % 8 or not 8 <= n <= 256 or k % bk:
        raise SystemExit(f"n={n}, k={k}: n a multiple of 8 in [8, 256], k a multiple of {bk}")
    el = DTYPES[dtype]
    sp = gemm_kernel.specialize([dsl.Tensor(el, (M, k)), dsl.Tensor(el, (n, k)), dsl.Tensor("f32", (M, n))],
                                n=n, k=k, bk=bk)
    sp.grid = (1,)
    return sp


def add_args(ap):
    ap.add_argument("--dtype", default="f16", choices=list(DTYPES))
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--k", type=int, default=512)


def make_spec(a):
    return gemm(a.n, a.k, a.dtype)


def check(compiled, spec, a, torch):
    torch.manual_seed(0)
    dt = torch.float16 if a.dtype == "f16" else torch.float8_e4m3fn
    A = torch.randn(M, a.k, device="cuda").to(dt)
    B = torch.randn(a.n, a.k, device="cuda").to(dt)
    C = torch.full((M, a.n), float("nan"), device="cuda")
    compiled.wgmma_gemm(A, B, C, grid=spec.grid)
    torch.cuda.synchronize()
    ref = A.float() @ B.float().T                       # exact products, f32 sums
    rel = ((C - ref).norm() / ref.norm()).item()
    # f16 products are exact in f32; Hopper's fp8 wgmma accumulates with fewer bits
    tol = 1e-4 if a.dtype == "f16" else 5e-3
    print(f"{a.dtype}: |C - A·Bᵀ| / |A·Bᵀ| = {rel:.2e} (tolerance {tol:.0e}), C[0, :4] = {C[0, :4].tolist()}")
    return bool(torch.isfinite(C).all()) and rel <= tol


PTX_OPS = [r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k\d+\.f32\.\w+\.\w+", r"wgmma\.fence\.sync\.aligned",
           r"wgmma\.commit_group\.sync\.aligned", r"wgmma\.wait_group\.sync\.aligned"]

if __name__ == "__main__":
    sys.exit(main(__doc__, make_spec, check, add_args, ptx_ops=PTX_OPS))
