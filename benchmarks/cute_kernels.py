"""The CuTe DSL (4.8) side of benchmarks/compile_time.py: the same kernels as
nvtma's, written the way CuTe DSL users write them.

    3672       make_tiled_tma_atom + copy_tensormap (CUTLASS issue #3672)
    tile_copy  one TMA load + TMA store of a 64x64 fp16 tile per CTA
               (nvtma.kernels.tile_copy)
    gemv       y = W.x, bf16 W streamed through a 4-stage TMA ring by one
               producer warp, 4 consumer warps, whole row blocks per CTA
               (nvtma.kernels.gemv(..., split="rows"))

Only importable where nvidia-cutlass-dsl is installed.
"""

import cutlass
import cutlass.cute as cute
import cutlass.cute.runtime as rt
from cutlass.cute.nvgpu import cpasync

try:
    from cutlass.memory import SmemAllocator
except ImportError:  # 4.7
    from cutlass.utils import SmemAllocator
try:
    from cutlass.tensor_utils import TensorMapManager, TensorMapUpdateMode
except ImportError:  # 4.7
    from cutlass.utils import TensorMapManager, TensorMapUpdateMode

ARCH = "--gpu-arch sm_90a"


# ----------------------------------------------------------------------------- #3672

@cute.kernel
def _dump_desc(tma_atom: cute.CopyAtom, out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx == 0:
        ptr = TensorMapManager(TensorMapUpdateMode.GMEM, 128).get_tensormap_ptr(out.iterator)
        cpasync.copy_tensormap(tma_atom, ptr)


@cute.jit
def atom_desc(x: cute.Tensor, out: cute.Tensor):
    smem_layout = cute.make_layout((64, 64), stride=(64, 1))
    tma_atom, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), x, smem_layout, (64, 64))
    _dump_desc(tma_atom, out).launch(grid=[1, 1, 1], block=[32, 1, 1])


# ----------------------------------------------------------------------------- tile copy

TILE = (64, 64)


@cute.kernel
def _tile_copy_kernel(tma_ld: cute.CopyAtom, mA: cute.Tensor, tma_st: cute.CopyAtom, mB: cute.Tensor,
                      s_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    alloc = SmemAllocator()
    sA = alloc.allocate_tensor(cutlass.Float16, s_layout, 128)
    bar = alloc.allocate_array(cutlass.Int64, 1)
    gA = cute.local_tile(mA, TILE, (by, bx))
    gB = cute.local_tile(mB, TILE, (by, bx))
    tAs, tAg = cpasync.tma_partition(tma_ld, 0, cute.make_layout(1), cute.group_modes(sA, 0, 2),
                                     cute.group_modes(gA, 0, 2))
    tBs, tBg = cpasync.tma_partition(tma_st, 0, cute.make_layout(1), cute.group_modes(sA, 0, 2),
                                     cute.group_modes(gB, 0, 2))
    if tidx == 0:
        cute.arch.mbarrier_init(bar, 1)
        cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    # cute.copy elects the issuing thread itself: the whole (single) warp calls it
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bar, TILE[0] * TILE[1] * 2)
    cute.copy(tma_ld, tAg, tAs, tma_bar_ptr=bar)
    cute.arch.mbarrier_wait(bar, 0)
    cute.copy(tma_st, tBs, tBg)
    cute.arch.cp_async_bulk_commit_group()
    cute.arch.cp_async_bulk_wait_group(0)


@cute.jit
def tile_copy(a: cute.Tensor, b: cute.Tensor):
    s_layout = cute.make_layout(TILE, stride=(TILE[1], 1))
    ld, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, s_layout, TILE)
    st, tB = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), b, s_layout, TILE)
    _tile_copy_kernel(ld, tA, st, tB, s_layout).launch(grid=[a.shape[1] // TILE[1], a.shape[0] // TILE[0], 1],
                                                        block=[32, 1, 1], smem=TILE[0] * TILE[1] * 2 + 1024)


# ----------------------------------------------------------------------------- GEMV

BM, BK, STAGES, CONS, VEC = 32, 256, 4, 4, 8
RPW = BM // CONS


@cute.kernel
def _gemv_kernel(tma: cute.CopyAtom, mW: cute.Tensor, x: cute.Tensor, y: cute.Tensor, s_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bid, _, _ = cute.arch.block_idx()
    grid, _, _ = cute.arch.grid_dim()
    warp = cute.arch.warp_idx()
    lane = cute.arch.lane_idx()
    alloc = SmemAllocator()
    sW = alloc.allocate_tensor(cutlass.BFloat16, s_layout, 1024)
    full = alloc.allocate_array(cutlass.Int64, STAGES)
    empty = alloc.allocate_array(cutlass.Int64, STAGES)
    if tidx == 0:
        for s in cutlass.range_constexpr(STAGES):
            cute.arch.mbarrier_init(full + s, 1)
            cute.arch.mbarrier_init(empty + s, CONS * 32)
        cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    RB = mW.shape[0] // BM
    KT = mW.shape[1] // BK
    rb0 = bid * RB // grid
    rb1 = (bid + 1) * RB // grid
    n = (rb1 - rb0) * KT
    gW = cute.local_tile(mW, (BM, BK), (None, None))
    tWs, tWg = cpasync.tma_partition(tma, 0, cute.make_layout(1), cute.group_modes(sW, 0, 2),
                                     cute.group_modes(gW, 0, 2))
    if warp == 0:  # producer: W tiles into the ring
        for i in cutlass.range(n):
            s = i % STAGES
            if i >= STAGES:
                cute.arch.mbarrier_wait(empty + s, (i // STAGES - 1) % 2)
            t = rb0 * KT + i
            if lane == 0:
                cute.arch.mbarrier_arrive_and_expect_tx(full + s, BM * BK * 2)
            cute.copy(tma, tWg[(None, t // KT, t % KT)], tWs[(None, s)], tma_bar_ptr=full + s)
    else:  # consumers: RPW rows each, VEC elements per lane
        cw = warp - 1
        acc = cute.make_rmem_tensor((RPW,), cutlass.Float32)
        for r in cutlass.range_constexpr(RPW):
            acc[r] = cutlass.Float32(0.0)
        for i in cutlass.range(n):
            s = i % STAGES
            t = rb0 * KT + i
            kt = t % KT
            xv = cute.local_tile(x, (VEC,), (kt * (BK // VEC) + lane,)).load().to(cutlass.Float32)
            cute.arch.mbarrier_wait(full + s, (i // STAGES) % 2)
            for r in cutlass.range_constexpr(RPW):
                row = sW[(cw * RPW + r, None, s)]
                wv = cute.local_tile(row, (VEC,), (lane,)).load().to(cutlass.Float32)
                acc[r] = acc[r] + (wv * xv).reduce(cute.ReductionOp.ADD, cutlass.Float32(0.0), 0)
            cute.arch.mbarrier_arrive(empty + s)
            if kt == KT - 1:
                for r in cutlass.range_constexpr(RPW):
                    v = cute.arch.warp_reduction_sum(acc[r])
                    if lane == 0:
                        y[(t // KT) * BM + cw * RPW + r] = v
                    acc[r] = cutlass.Float32(0.0)


@cute.jit
def gemv(w: cute.Tensor, x: cute.Tensor, y: cute.Tensor, grid: cutlass.Int32):
    s_layout = cute.make_layout((BM, BK, STAGES), stride=(BK, 1, BM * BK))
    tma, tW = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), w,
                                          cute.slice_(s_layout, (None, None, 0)), (BM, BK))
    _gemv_kernel(tma, tW, x, y, s_layout).launch(grid=[grid, 1, 1], block=[(CONS + 1) * 32, 1, 1],
                                                 smem=STAGES * BM * BK * 2 + 1024 + 64)


# ----------------------------------------------------------------------------- entry points

def fake_args(name):
    """Compile-time stand-ins for the kernel's tensors (no GPU needed)."""
    fake = rt.make_fake_compact_tensor
    if name == "3672":
        return atom_desc, (fake(cutlass.Float16, (256, 256), stride_order=(1, 0), assumed_align=16),
                           fake(cutlass.Int64, (16,), assumed_align=128))
    if name == "tile_copy":
        return tile_copy, tuple(fake(cutlass.Float16, (16384, 16384), stride_order=(1, 0), assumed_align=16)
                                for _ in range(2))
    if name == "gemv":
        return gemv, (fake(cutlass.BFloat16, (16384, 16384), stride_order=(1, 0), assumed_align=16),
                      fake(cutlass.BFloat16, (16384,), assumed_align=16),
                      fake(cutlass.Float32, (16384,), assumed_align=16), 264)
    raise KeyError(name)


def compile_kernel(name):
    fn, args = fake_args(name)
    return cute.compile(fn, *args, options=ARCH)


def run_check(name):
    """Runs CuTe's `name` ("tile_copy" or "gemv") once on the GPU against
    torch, so the compile-time comparison is between working kernels.
    Returns (correct, detail)."""
    import torch
    from cutlass.cute.runtime import from_dlpack
    if name == "tile_copy":
        a = torch.randn(1024, 2048, device="cuda", dtype=torch.float16)
        b = torch.zeros_like(a)
        tile_copy(from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16))
        torch.cuda.synchronize()
        return bool(torch.equal(a, b)), "1024x2048 fp16"
    m, k = 2048, 4096
    w = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    x = torch.randn(k, device="cuda").to(torch.bfloat16)
    y = torch.full((m,), float("nan"), device="cuda")
    gemv(from_dlpack(w, assumed_align=16), from_dlpack(x, assumed_align=16), from_dlpack(y, assumed_align=16), 132)
    torch.cuda.synchronize()
    want = w.float() @ x.float()
    err = ((y - want).abs().max() / want.abs().max()).item()
    return err < 1e-4, f"{m}x{k} bf16, max error {err:.1e} of max |y|"
