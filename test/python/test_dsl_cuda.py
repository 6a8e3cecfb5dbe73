"""nvtma.cuda (TIRx's Tx.cuda helpers): each one's PTX instruction appears
in the compiled kernel."""

import re

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import build_error, instructions, ptx, tma_load_and_wait  # noqa: E402
from nvtma import cpasync, cuda, dsl, lang  # noqa: E402

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
                           [r"atom\.gpu\.global\.add\.noftz\.f16x2"]),
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


# --------------------------------------------------------------------------- the collectives' audit (session 35)

@pytest.mark.parametrize("body,rule,message", [
    (lambda x, y, h, i: _in(dsl.lane_idx() == 0, lambda: cuda.shfl_xor_sync(x[0], 1)), "warp-collective",
     "shfl_sync waits for all 32 lanes of the warp, but at most 1 lane(s) run this code"),
    (lambda x, y, h, i: _in(t() == 0, lambda: cuda.ballot_sync(x[0] > 0)), "warp-collective", "ballot_sync"),
    (lambda x, y, h, i: _in(dsl.lane_idx() == 0, lambda: dsl.elect_sync()), "warp-collective", "elect_sync where"),
    (lambda x, y, h, i: cuda.warp_sync(0), "warp-collective", "warp_sync with member mask 0"),
    (lambda x, y, h, i: _in_role(lambda: cuda.cta_sum(x[0])), "barrier", "cta_reduce waits for all 128 threads"),
    (lambda x, y, h, i: _in_role(lambda: cuda.syncthreads_or(x[0] > 0)), "barrier", "syncthreads_or waits for all"),
    (lambda x, y, h, i: cuda.atomic_add(y, (0,), 1.0, scope="sys"), "atomic", "scalar atomics here are GPU scope"),
    (lambda x, y, h, i: cuda.atomic_cas(i, (0,), 1, 2, scope="warp"), "atomic", "atomic scope 'warp'"),
    (lambda x, y, h, i: cuda.cvta_generic_to_shared(cpasync.address_of(x, [0])), "pointer",
     "cvta_generic_to_shared of a !llvm.ptr<1> pointer"),
], ids=["shfl-one-lane", "ballot-one-thread", "elect-one-lane", "mask-0", "cta-reduce-in-role", "bar-red-in-role",
        "sys-scope", "cas-scope", "cvta-global"])
def test_collectives_that_hang_or_mislead_are_refused(body, rule, message):
    """Each built: full-mask collectives and CTA barriers where only part of a warp or block runs hang; a
    scalar atomic at scope 'sys' was PTX's default .gpu; atomic_cas took any scope string as 'sys'; a global
    pointer's low 32 bits passed as a shared address."""
    err = build_error(_kernel(body), rule)
    assert message in str(err), str(err)


def _in(cond, fn):
    with dsl.if_(cond):
        fn()


def _in_role(fn):
    with lang.WarpRole(0):
        fn()


def test_warp_reductions_need_whole_warps():
    """A 48-thread block's second warp has 16 lanes: the butterfly read undefined values from the others."""
    err = build_error(_kernel(lambda x, y, h, i: cuda.warp_sum(x[t()]), block=(48,)), "warp-collective")
    assert "a block of 48 threads has a partial warp" in str(err)


@pytest.mark.parametrize("warp,refused", [(0, False), (1, True)])
def test_a_partial_warp_is_refused_only_where_it_runs_the_collective(warp, refused):
    """In a 48-thread block warp 0's role has whole warps: its shuffle was refused for the partial warp 1."""
    k = _kernel(lambda x, y, h, i: _in_warp(warp, lambda: y.__setitem__(t(), cuda.warp_sum(x[t()]))), block=(48,))
    if refused:
        assert "a block of 48 threads has a partial warp" in str(build_error(k, "warp-collective"))
    else:
        assert "shfl.sync.bfly.b32" in ptx(k)


@pytest.mark.parametrize("wg,refused", [(0, False), (1, True)])
def test_warpgroup_sync_in_a_partial_block_is_refused_only_in_the_partial_warpgroup(wg, refused):
    """A 192-thread block: warpgroup 0's warpgroup_sync(barrier_id=1) was refused for the partial warpgroup 1."""
    def body(x, y, h, i):
        with lang.WarpgroupRole(wg):
            cuda.warpgroup_sync(barrier_id=1)
    k = _kernel(body, block=(192,))
    if refused:
        assert "warpgroup_sync in a block of 192 threads" in str(build_error(k, "barrier"))
    else:
        assert re.search(r"bar\.sync\s+1, 128;|barrier\.sync(\.aligned)?\s+1, 128;", ptx(k))


@pytest.mark.parametrize("warp,refused", [(0, False), (1, True), ("run-time", True)])
def test_a_plain_branch_on_the_warp_index_says_which_warp(warp, refused):
    """`dsl.if_(warp_idx() == 1)` in a 48-thread block runs in the partial warp: the review of the role-only
    fix found it built (and a run-time warp index too); `== 0` keeps off it."""
    def body(x, y, h, i):
        w = dsl.Int32(i[0]) if warp == "run-time" else warp
        with dsl.if_(dsl.warp_idx() == w):
            y[t()] = cuda.shfl_xor_sync(x[t()], 1)
    k = _kernel(body, block=(48,))
    if refused:
        assert "a block of 48 threads has a partial warp" in str(build_error(k, "warp-collective"))
    else:
        assert "shfl.sync.bfly.b32" in ptx(k)


def test_warpgroup_sync_under_a_branch_on_the_partial_warpgroup_is_refused():
    def body(x, y, h, i):
        with dsl.if_(dsl.warpgroup_idx() == 1):
            cuda.warpgroup_sync()
    assert "warpgroup_sync in a block of 192 threads" in str(build_error(_kernel(body, block=(192,)), "barrier"))


def _in_warp(w, fn):
    with lang.WarpRole(w):
        fn()


def test_syncthreads_and_or_return_the_reduction():
    """syncthreads_and/or compared the MLIR value object with 0 in Python: always True, the reduction lost."""
    @dsl.kernel(block=(128,))
    def k(y: dsl.Tensor("i32", (2,))):
        y[0] = cuda.syncthreads_or(t() > 100000).to(dsl.Int32)
        y[1] = cuda.syncthreads_and(t() > 100000).to(dsl.Int32)

    from dsl_testing import folded_stores
    assert folded_stores(k) == {}  # neither folds to a constant
    assert "bar.red.or.pred" in ptx(k)


def test_cta_reduce_with_a_function_combines_each_partial_once():
    """With op=<function>, warp 0's lanes past the last warp repeated its partial: a sum counted it 29 times."""
    @dsl.kernel(block=(128,))
    def k(x: dsl.Tensor("f32", (128,)), y: dsl.Tensor("f32", (1,))):
        y[0] = cuda.cta_reduce(x[t()], op=lambda a, b: a + b)

    text = ptx(k)  # the warps' butterflies, then the 4 partials read (as one v4 load) and summed in order
    assert len(re.findall(r"shfl\.sync", text)) == 5 and "ld.shared.v4.b32" in text


def test_stmatrix_and_printf_pass_bits_and_promoted_ints():
    """stmatrix converted float registers by value (1.5 stored 1); printf passed i8/i16/i1 unpromoted (%d reads
    4-byte slots)."""
    def body(x, y, h, i):
        s = lang.SMEMPool().alloc((16, 8), "f16")
        cuda.stmatrix(s, t() % 16, 0, dsl.vector_of([h[0], h[1], h[2], h[3]], dsl.Float16))
        cuda.printf("%d %d %d\n", dsl.Int8(-3), dsl.Uint16(7), x[0] > 0)

    text = ptx(_kernel(body))
    assert "stmatrix.sync.aligned" in text and "cvt.rzi" not in text
    ir = str(_kernel(body).build().ir)
    assert re.search(r"gpu.printf .*: i32, i32, i32", ir), ir


def test_an_atomic_through_address_of_adds_the_tensors_type():
    """atomic_add(address_of(f32 tensor, [i]), 1) added the integer 1 into the float's bits (atom.add.u32)."""
    text = ptx(_kernel(lambda x, y, h, i: cuda.atomic_add(cpasync.address_of(y, [t()]), 1)))
    assert "atom.global.add.f32" in text and "add.u32" not in text


def test_thread_fence_is_acq_rel_unless_asked_for_cuda_s_sc():
    """thread_fence("gpu") is fence.acq_rel.gpu; CUDA's __threadfence is fence.sc.gpu (sem="sc")."""
    assert "fence.acq_rel.gpu" in ptx(_kernel(lambda x, y, h, i: cuda.thread_fence("gpu")))
    assert "fence.sc.gpu" in ptx(_kernel(lambda x, y, h, i: cuda.thread_fence("gpu", sem="sc")))
    err = build_error(_kernel(lambda x, y, h, i: cuda.thread_fence("gpu", sem="relaxed")), "fence")
    assert "fence sem='relaxed'" in str(err)
