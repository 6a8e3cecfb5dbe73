"""nvtma.cuda (TIRx's Tx.cuda helpers): each one's PTX instruction appears
in the compiled kernel."""

import re

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import build_error, instructions, ptx, tma_load_and_wait  # noqa: E402
from nvtma import cuda, dsl, lang  # noqa: E402

t = dsl.thread_idx


def _kernel(body, block=(128,)):
    @dsl.kernel(block=block, name="k")
    def k(x: dsl.Tensor("f32", (1024,)), y: dsl.Tensor("f32", (1024,)), h: dsl.Tensor("f16", (1024,)),
          i: dsl.Tensor("i32", (1024,))):
        body(x, y, h, i)

    return k


def _set(tensor, value, at=None):
    tensor[t() if at is None else at] = value


CASES = {
    # shuffles and votes
    "shfl_xor_sync": (lambda x, y, h, i: _set(y, cuda.shfl_xor_sync(x[t()], 1)), [r"shfl\.sync\.bfly\.b32"]),
    "shfl_sync": (lambda x, y, h, i: _set(y, cuda.shfl_sync(x[t()], 3)), [r"shfl\.sync\.idx\.b32"]),
    "shfl_up_sync": (lambda x, y, h, i: _set(y, cuda.shfl_up_sync(x[t()], 1)), [r"shfl\.sync\.up\.b32"]),
    "shfl_down_sync": (lambda x, y, h, i: _set(y, cuda.shfl_down_sync(x[t()], 2)), [r"shfl\.sync\.down\.b32"]),
    "shfl f16 and 2 x f16": (lambda x, y, h, i: (_set(h, cuda.shfl_xor_sync(h[t()], 1)),
                                                 h.store_vec(cuda.shfl_xor_sync(h.load_vec(2, t() * 2), 4), t() * 2)),
                             [r"shfl\.sync\.bfly\.b32"]),
    "shfl f64 (two words)": (lambda x, y, h, i: _set(y, cuda.shfl_xor_sync(x[t()].to(dsl.Float64), 1)
                                                     .to(dsl.Float32)), [r"shfl\.sync\.bfly\.b32.*\n(.*\n)*.*shfl"]),
    "ballot_sync": (lambda x, y, h, i: _set(i, cuda.ballot_sync(x[t()] > 0.0).bitcast(dsl.Int32)),
                    [r"vote\.sync\.ballot\.b32"]),
    "any_sync": (lambda x, y, h, i: _set(y, dsl.select(cuda.any_sync(x[t()] > 0.0), 1.0, 0.0)),
                 [r"vote\.sync\.any\.pred"]),
    "all_sync": (lambda x, y, h, i: _set(y, dsl.select(cuda.all_sync(x[t()] > 0.0), 1.0, 0.0)),
                 [r"vote\.sync\.all\.pred"]),
    "activemask": (lambda x, y, h, i: _set(i, cuda.activemask().bitcast(dsl.Int32)), [r"activemask\.b32"]),
    "elect_sync": (lambda x, y, h, i: _set(y, dsl.select(cuda.elect_sync(), 1.0, 0.0)), [r"elect\.sync"]),
    # reductions
    "redux add": (lambda x, y, h, i: _set(i, cuda.reduce_add_sync_u32(i[t()]).bitcast(dsl.Int32)),
                  [r"redux\.sync\.add\.[su]32"]),
    "redux min": (lambda x, y, h, i: _set(i, cuda.reduce_min_sync_u32(i[t()]).bitcast(dsl.Int32)),
                  [r"redux\.sync\.min\.u32"]),
    "warp_sum": (lambda x, y, h, i: _set(y, cuda.warp_sum(x[t()])),
                 [r"(shfl\.sync\.bfly\.b32[^\n]*\n\s*add\.rn\.f32[^\n]*\n\s*){5}"]),
    "warp_max width 8": (lambda x, y, h, i: _set(y, cuda.warp_max(x[t()], 8)),
                         [r"(shfl\.sync\.bfly\.b32[^\n]*\n\s*max\.f32[^\n]*\n\s*){3}"]),
    "warp_min ints": (lambda x, y, h, i: _set(i, cuda.warp_min(i[t()])), [r"min\.s32"]),
    "cta_sum": (lambda x, y, h, i: _set(y, cuda.cta_sum(x[t()])), [r"bar\.sync\s+0", r"shfl\.sync\.bfly",
                                                                     r"st\.shared\.b32", r"ld\.shared\.b32"]),
    "cta_max": (lambda x, y, h, i: _set(y, cuda.cta_max(x[t()])), [r"max\.f32", r"bar\.sync\s+0"]),
    "syncthreads_and": (lambda x, y, h, i: _set(y, dsl.select(cuda.syncthreads_and(x[t()] > 0.0), 1.0, 0.0)),
                        [r"bar(rier)?\.red\.and\.pred"]),
    # atomics
    "atomic_add f32": (lambda x, y, h, i: cuda.atomic_add(y, (t(),), x[t()]), [r"(atom|red)\.global\.add\.f32"]),
    "atomic_add f32 old value": (lambda x, y, h, i: _set(y, cuda.atomic_add(y, (t() + 1,), x[t()]), 0),
                                 [r"atom\.global\.add\.f32"]),
    "atomic_add 2 x f16": (lambda x, y, h, i: cuda.atomic_add(h, (t() * 2,), h.load_vec(2, t() * 2 + 256)),
                           [r"atom\.global\.gpu\.add\.noftz\.f16x2"]),
    "atomic_add shared": (lambda x, y, h, i: _shared_atomic(x), [r"atom\.shared\.add\.f32|red\.shared\.add\.f32"]),
    "atomic_max i32": (lambda x, y, h, i: cuda.atomic_max(i, (t() % 4,), i[t()]), [r"(atom|red)\.global\.max\.s32"]),
    "atomic_cas": (lambda x, y, h, i: _set(i, cuda.atomic_cas(i, (0,), i[t()], i[t() + 1])),
                   [r"atom\.(acq_rel\.gpu\.)?global\.cas\.b32"]),
    # fences and barriers
    "fence_proxy_async": (lambda x, y, h, i: cuda.fence_proxy_async(), [r"fence\.proxy\.async\.shared::cta"]),
    "fence_proxy_async global": (lambda x, y, h, i: cuda.fence_proxy_async("global"),
                                 [r"fence\.proxy\.async\.global"]),
    "thread_fence": (lambda x, y, h, i: cuda.thread_fence(), [r"fence\.acq_rel\.gpu"]),
    "thread_fence cta": (lambda x, y, h, i: cuda.thread_fence("cta"), [r"fence\.acq_rel\.cta"]),
    "barrier_sync": (lambda x, y, h, i: cuda.barrier_sync(1, 64), [r"bar\.sync\s+1, 64;"]),
    "barrier_sync all": (lambda x, y, h, i: cuda.barrier_sync(3), [r"bar\.sync\s+3;"]),
    "barrier_arrive": (lambda x, y, h, i: cuda.barrier_arrive(2, 64), [r"bar\.arrive\s+2, 64;"]),
    # one warpgroup (128 threads): barrier 1 + warpgroup 0, folded; two: computed
    "warpgroup_sync": (lambda x, y, h, i: cuda.warpgroup_sync(), [r"bar\.sync\s+1, 128;"]),
    "warpgroup_sync 2 groups": (lambda x, y, h, i: cuda.warpgroup_sync(), [r"bar\.sync\s+%r\d+, 128;"]),
    "warp_sync": (lambda x, y, h, i: cuda.warp_sync(), [r"bar\.warp\.sync\s+-1"]),
    "cta_sync": (lambda x, y, h, i: cuda.cta_sync(), [r"bar\.sync\s+0;"]),
    # diagnostics and time
    "printf": (lambda x, y, h, i: cuda.printf("thread %d: %f\n", t(), x[t()]), [r"call.uni[^;]*vprintf"]),
    "trap_when_assert_failed": (lambda x, y, h, i: cuda.trap_when_assert_failed(x[t()] > 0.0), [r"\btrap;"]),
    "clock64": (lambda x, y, h, i: _set(y, cuda.clock64().to(dsl.Float32)), [r"%clock64"]),
    "globaltimer": (lambda x, y, h, i: _set(y, cuda.globaltimer().to(dsl.Float32)), [r"%globaltimer"]),
    "nano_sleep": (lambda x, y, h, i: cuda.nano_sleep(100), [r"nanosleep\.u32\s+100;"]),
    "nano_sleep run-time": (lambda x, y, h, i: cuda.nano_sleep(i[t()]), [r"nanosleep\.u32\s+%r\d+;"]),
    "ffs_u32": (lambda x, y, h, i: _set(i, cuda.ffs_u32(i[t()])), [r"brev\.b32|bfind|clz\.b32|popc\.b32"]),
    # conversions
    "float22half2": (lambda x, y, h, i: h.store_vec(cuda.float22half2(x[t()], x[t() + 1]), t() * 2),
                     [r"cvt\.rn\.f16x2\.f32"]),
    "fp8x4_e4m3_from_float4": (lambda x, y, h, i: _set(i, cuda.fp8x4_e4m3_from_float4(x.load_vec(4, t() * 4))
                                                        .bitcast(dsl.Int32)),
                               [r"cvt\.rn\.satfinite\.e4m3x2\.f32"]),
    "hmax2": (lambda x, y, h, i: h.store_vec(cuda.hmax2(h.load_vec(2, t() * 2), h.load_vec(2, t() * 2 + 64)),
                                             t() * 2), [r"max\.f16x2"]),
}


def _shared_atomic(x):
    s = lang.SMEMPool().alloc((32,), "f32")
    cuda.atomic_add(s, (t() % 32,), x[t()], scope="cta")
    dsl.barrier()
    x[t()] = s[t() % 32]


@pytest.mark.parametrize("name", list(CASES))
def test_helper_becomes_its_instruction(name):
    body, patterns = CASES[name]
    text = ptx(_kernel(body, block=(256,) if "2 groups" in name else (128,)))
    for p in patterns:
        assert re.search(p, text), (name, p, "\n".join(ln for ln in text.splitlines() if "\t" in ln)[-3000:])


def _ldst_kernel(*, trans=False, num=4):
    @dsl.kernel(block=(128,))
    def k(y: dsl.Tensor("f16", (64, 64)), *, trans=trans, num=num):
        pool = lang.SMEMPool()
        s = pool.alloc((64, 64), "f16")
        d = pool.alloc((64, 64), "f16")
        lane, w = dsl.lane_idx(), dsl.warp_idx()
        for r in range(2):
            s.store_vec(y.load_vec(8, t() // 8 + 16 * r, (t() % 8) * 8), t() // 8 + 16 * r, (t() % 8) * 8)
        dsl.barrier()
        row = 16 * w + lane % 16
        col = (lane // 16) * 8
        regs = cuda.ldmatrix(s, row, col, num=num, trans=trans)
        cuda.stmatrix(d, row, col, regs, trans=trans)
        dsl.barrier()
        y.store_vec(d.load_vec(8, t() // 8, (t() % 8) * 8), t() // 8, (t() % 8) * 8)

    return k


@pytest.mark.parametrize("trans,num", [(False, 4), (True, 4), (False, 2)])
def test_ldmatrix_and_stmatrix(trans, num):
    ins = instructions(ptx(_ldst_kernel(trans=trans, num=num)))
    t_ = ".trans" if trans else ""
    assert f"ldmatrix.sync.aligned.m8n8.x{num}{t_}.shared.b16" in ins, sorted(ins)
    assert f"stmatrix.sync.aligned.m8n8.x{num}{t_}.shared.b16" in ins, sorted(ins)


def test_ldmatrix_of_a_swizzled_tile_addresses_the_swizzled_row():
    """Row r of a 128B-swizzled tile holds its 16-byte chunk c at chunk
    c ^ (r % 8): ldmatrix's row address goes through the swizzle."""
    from nvtma import cpasync

    @dsl.kernel(block=(32,))
    def k(a: dsl.Tensor("f16", (64, 64)), y: dsl.Tensor("i32", (128,))):
        pool = lang.SMEMPool()
        ld = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, (64, 64), swizzle="swizzle_128b")
        s = pool.alloc_for(ld)
        tma_load_and_wait(ld, s)
        regs = cuda.ldmatrix(s, dsl.lane_idx(), 8, num=1)
        y[dsl.lane_idx()] = regs[0].bitcast(dsl.Int32)

    ir = k.build().ir
    assert "arith.xori" in ir
    assert "ldmatrix.sync.aligned.m8n8.x1.shared.b16" in ptx(k)


@pytest.mark.parametrize("call,message,rule", [
    (lambda x: cuda.warp_reduce(x[0], "sum", width=12), "a power of two up to 32", "reduce"),
    (lambda x: cuda.warp_reduce(x[0], "median"), "reduction 'median'", "reduce"),
    (lambda x: cuda.atomic_add(x, (0,), 1.0, scope="planet"), "atomic scope 'planet'", "atomic"),
    (lambda x: cuda.thread_fence("warp"), "fence scope 'warp'", "fence"),
    (lambda x: cuda.fence_proxy_async("texture"), "fence_proxy_async space 'texture'", "fence"),
    (lambda x: cuda.ldmatrix(x, 0, 0), "2-D shared-memory tile", "ldmatrix"),
    (lambda x: cuda.atomic_cas(x, (0,), 1.0, 2.0), "atomic_cas on floats", "atomic"),
], ids=["reduce-width", "reduce-op", "atomic-scope", "fence-scope", "proxy-space", "ldmatrix-global", "cas-float"])
def test_helper_misuse_is_a_build_error(call, message, rule):
    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (64,))):
        call(x)

    assert message in str(build_error(k, rule))


@pytest.mark.parametrize("hoist", [True, False])
def test_thread_and_lane_index_read_where_called_with_hoist_false(hoist):
    """hoist=False reads %tid.x / %laneid inside the loop that calls it (so
    what is computed from them stays there too); by default LLVM hoists the
    read out of the loop."""
    @dsl.kernel(block=(128,), name="k")
    def k(y: dsl.Tensor("i32", (None,)), n: dsl.Int32):
        for i in dsl.range(n):
            y[dsl.thread_idx(hoist=hoist) + dsl.lane_idx(hoist=hoist) + i * 128] = i

    text = ptx(k)
    # the loops: a label and the backward branch to it
    loops = []
    for m in re.finditer(r"^(\$L__BB\w+):", text, re.M):
        back = text.find(f"bra \t{m.group(1)};", m.end())
        if back > 0:
            loops.append(text[m.end():back])
    inside = sum(len(re.findall(r"%tid\.x|%laneid", body)) for body in loops)
    assert loops and ((inside == 0) if hoist else (inside >= 2)), text
