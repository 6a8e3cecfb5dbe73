"""What the language tests share: compile a kernel to PTX, fold its
constants, find the user's line an error must name."""

import re
from pathlib import Path

import pytest


def ptx(kernel, **consts) -> str:
    """The PTX of `kernel` built with these constants (assembled too, so
    ptxas has accepted it)."""
    import nvtma
    return nvtma.compile(kernel.build(**consts).ir).ptx


def instructions(text: str) -> set:
    """The PTX instruction names (opcode with its modifiers) in `text`."""
    return set(re.findall(r"^\s*(?:@!?%p\d+\s+)?([a-z][\w.:]*)", text, re.M))


_CONST = re.compile(r"^\s*(%[\w-]+) = arith\.constant (\S+) : (\S+)", re.M)
_STORE = re.compile(r"memref\.store (%[\w-]+), %arg0\[(%[\w-]+)\]")


def folded_stores(kernel, **consts) -> dict:
    """{i: value} for every constant the kernel stores to its first
    parameter at constant index i, after MLIR's canonicalizer folded the
    arithmetic: what the kernel computes at build time, as MLIR sees it."""
    from nvtma import ir
    from nvtma.passmanager import PassManager
    with ir.Context():
        m = ir.Module.parse(kernel.build(**consts).ir)
        PassManager.parse("builtin.module(canonicalize)").run(m.operation)
        text = str(m)
    values = {name: (v, t) for name, v, t in _CONST.findall(text)}
    out = {}
    for val, idx in _STORE.findall(text):
        if val in values and idx in values:
            v, t = values[val]
            out[int(values[idx][0])] = float(v) if t.startswith(("f", "bf")) else int(v)
    return out


def ptx_constant_stores(kernel, **consts) -> dict:
    """{i: value} of the constants the kernel's PTX stores at element i of its first (32-bit) parameter: what
    LLVM folded, where MLIR's canonicalizer leaves an intrinsic call (folded_stores does not see those)."""
    text = ptx(kernel, **consts)
    return {int(o or 0) // 4: int(v) for o, v in
            re.findall(r"st\.global\.b32\s+\[%rd\d+(?:\+(\d+))?\], (-?\d+);", text)}


def line_of(path, marker: str) -> int:
    """The line of `path` that carries the comment `# <marker>`."""
    lines = Path(path).read_text().splitlines()
    hits = [i + 1 for i, ln in enumerate(lines) if ln.rstrip().endswith(f"# {marker}")]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times in {path}"
    return hits[0]


def build_error(kernel, rule=None, **consts):
    """The KernelBuildError building `kernel` raises (checking its rule)."""
    from nvtma import dsl
    with pytest.raises(dsl.KernelBuildError) as e:
        kernel.build(**consts)
    if rule is not None:
        assert e.value.rule == rule, (e.value.rule, str(e.value))
    return e.value


def assert_names_line(err, path, marker):
    """The error names the user's file and the line marked `marker`."""
    want = f"{path}:{line_of(path, marker)}"
    assert err.where == want, (err.where, want, str(err))
    assert str(err).startswith(want)


def tma_load_and_wait(ld, s):
    """One TMA load of atom `ld`'s tile at [0, 0] into shared tile `s`,
    issued by warp 0 and waited for by every thread."""
    from nvtma import cpasync, dsl, lang
    bar = lang.TMABar(1)
    dsl.barrier()
    with lang.WarpRole(0):
        bar.arrive_expect_tx(0, ld.tile_bytes)
        cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0))
    bar.wait(0, 0)


def wgmma_tile_gemm(dtype="bf16", K=64, *, swizzle="swizzle_128b", rega=False, n=64, divide=None, redo_first=False):
    """c = a·bᵀ over one 64 x n x K tile (a warpgroup's wgmmas), A from shared memory or, `rega`, registers;
    `divide` adds a quotient to c, divided in 64 ("i64") or 32 bits ("i32"). `redo_first` (A from registers):
    the first K-block again, with a run-time scale_d that is false on a one-CTA grid, dropping what the
    accumulator held (true, it is counted twice)."""
    from nvtma import cpasync, cuda, dsl, lang, wgmma

    @dsl.kernel(block=(128,))
    def gemm(a: dsl.Tensor(dtype, (64, 256)), b: dsl.Tensor(dtype, (n, 256)), c: dsl.Tensor("f32", (64, n)),
             *, K=K, rega=rega, divide=divide, redo_first=redo_first):
        pool = lang.SMEMPool()
        la = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, (64, K), swizzle=swizzle)
        lb = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), b, (n, K), swizzle=swizzle)
        sa, sb = pool.alloc_for(la), pool.alloc_for(lb)
        bar = lang.TMABar(1)
        dsl.barrier()
        with lang.WarpRole(0):
            bar.arrive_expect_tx(0, la.tile_bytes + lb.tile_bytes)
            cpasync.copy(la, [0, 0], sa, tma_bar_ptr=bar.at(0))
            cpasync.copy(lb, [0, 0], sb, tma_bar_ptr=bar.at(0))
        bar.wait(0, 0)
        da, db = wgmma.SmemDescriptor(sa), wgmma.SmemDescriptor(sb)
        acc = wgmma.Accumulator(n)
        wgmma.fence()
        for kb in range(K // da.k_per_block):
            if rega:
                # A from registers: ldmatrix gives each warp its 16 rows x 16 k of the block
                lane, w = dsl.lane_idx(), dsl.warp_idx()
                regs = cuda.ldmatrix(sa, 16 * w + lane % 16, kb * 16 + (lane // 16) * 8)
                acc = wgmma.mma_async(acc, regs, db.k_block(kb), a_type=dtype)
                if redo_first and kb == 0:
                    acc = wgmma.mma_async(acc, regs, db.k_block(kb), a_type=dtype, scale_d=dsl.block_idx() != 0)
            else:
                acc = wgmma.mma_async(acc, da.k_block(kb), db.k_block(kb))
        wgmma.commit_group()
        wgmma.wait_group(0)
        q = None
        if divide:  # by a value read from memory: nothing bounds it (grid values LLVM narrows to 32 bits)
            t = dsl.Int64 if divide == "i64" else dsl.Int32
            q = ((dsl.block_idx().to(t) + 7) // (c[0, 0].to(t) + 1)).to(dsl.Int32)
        for i in range(acc.count):
            r, col = acc.coords(i)
            c[r, col] = acc[i] if q is None else acc[i] + q.to(dsl.Float32)

    return gemm
