"""nvtma.wgmma: the shared-memory matrix descriptor, checked field by field
against the PTX ISA, and the wgmma.mma_async the DSL emits for bf16 and
e4m3 operands from shared memory or (A) registers."""

import re

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import build_error, ptx, wgmma_tile_gemm as _gemm  # noqa: E402
from nvtma import cpasync, dsl, lang, wgmma  # noqa: E402

# --------------------------------------------------------------------------- the descriptor, bit by bit
#
# PTX ISA (8.x), "Asynchronous Warpgroup Level Matrix Shared Memory Layout:
# Matrix Descriptor" (section 9.7.15.5.1, anchor
# #asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor):
#   bits  0-13  matrix start address,      encoded as (addr & 0x3FFFF) >> 4
#   bits 16-29  leading dimension byte offset, >> 4
#   bits 32-45  stride dimension byte offset,  >> 4
#   bits 49-51  matrix base offset (swizzled layouts whose start is not at
#               the swizzle pattern's repeat boundary)
#   bits 62-63  swizzle mode: 0 none, 1 128-byte, 2 64-byte, 3 32-byte
# every other bit is reserved (0).


def _field(d, lo, hi):
    return (d >> lo) & ((1 << (hi - lo + 1)) - 1)


RESERVED = [(14, 15), (30, 31), (46, 48), (52, 61)]


@pytest.mark.parametrize("addr,lbo,sbo,swizzle,base", [
    (0x1230, 16, 1024, "swizzle_128b", 0),
    (0x3FFF0, 0x3FFF0, 0x3FFF0, "swizzle_32b", 7),
    (0, 0, 0, "none", 0),
    (0x400, 256, 512, "swizzle_64b", 3),
])
def test_descriptor_fields(addr, lbo, sbo, swizzle, base):
    d = wgmma.descriptor_bits(addr, lbo, sbo, swizzle, base)
    assert 0 <= d < 1 << 64
    assert _field(d, 0, 13) == addr >> 4
    assert _field(d, 16, 29) == lbo >> 4
    assert _field(d, 32, 45) == sbo >> 4
    assert _field(d, 49, 51) == base
    assert _field(d, 62, 63) == {"none": 0, "swizzle_128b": 1, "swizzle_64b": 2, "swizzle_32b": 3}[swizzle]
    for lo, hi in RESERVED:
        assert _field(d, lo, hi) == 0, (lo, hi)


def test_each_field_moves_only_its_bits():
    zero = wgmma.descriptor_bits(0, 0, 0, "none")
    assert zero == 0
    assert wgmma.descriptor_bits(16, 0, 0) == 1 << 0
    assert wgmma.descriptor_bits(0, 16, 0) == 1 << 16
    assert wgmma.descriptor_bits(0, 0, 16) == 1 << 32
    assert wgmma.descriptor_bits(0, 0, 0, base_offset=1) == 1 << 49
    assert wgmma.descriptor_bits(0, 0, 0, "swizzle_128b") == 1 << 62
    assert wgmma.descriptor_bits(0, 0, 0, "swizzle_64b") == 2 << 62
    assert wgmma.descriptor_bits(0, 0, 0, "swizzle_32b") == 3 << 62


@pytest.mark.parametrize("args,message", [
    ((8, 16, 16), "start address 8: a multiple of 16"),
    ((1 << 18, 16, 16), f"start address {1 << 18}: a multiple of 16 below {1 << 18}"),
    ((0, 24, 16), "leading byte offset 24"),
    ((0, 16, -16), "stride byte offset -16"),
    ((0, 16, 16, "swizzle_256b"), "swizzle 'swizzle_256b'"),
    ((0, 16, 16, "none", 8), "base offset 8: 0-7"),
])
def test_descriptor_refuses_bad_fields(args, message):
    with pytest.raises(dsl.KernelBuildError, match=re.escape(message)) as e:
        wgmma.descriptor_bits(*args)
    assert e.value.rule == "descriptor"


# --------------------------------------------------------------------------- mma_async



def test_bf16_m64n64k16_from_shared_memory():
    g = _gemm("bf16", 64)
    ir = g.build().ir
    # the descriptor's constant part: SBO 1024 bytes (8 rows of 128 B), LBO 16, 128B swizzle
    fixed = wgmma.descriptor_bits(0, 16, 1024, "swizzle_128b")
    assert fixed == 0x4000004000010000
    assert f"arith.constant {fixed} : i64" in ir
    # K-blocks of 16 bf16 = 32 bytes = 2 units of 16 bytes along a 128-byte swizzled row
    steps = {int(v) for v in re.findall(r"arith\.constant (\d+) : i64", ir)}
    assert {2, 4, 6} <= steps
    text = ptx(g)
    mma = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16\s+\{([^}]*)\},\s*(%rd\d+),\s*"
                     r"(%rd\d+)", text)
    assert len(mma) == 4, text
    assert all(len(d.split(",")) == 32 for d, _, _ in mma)   # 64 x 64 f32 over 128 threads
    for fence in (r"wgmma\.fence\.sync\.aligned;", r"wgmma\.commit_group\.sync\.aligned;",
                  r"wgmma\.wait_group\.sync\.aligned\s+0;"):
        assert re.search(fence, text), fence


def test_e4m3_m64n64k32_from_shared_memory():
    g = _gemm("f8E4M3FN", 128)
    text = ptx(g)
    assert len(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n64k32\.f32\.e4m3\.e4m3\s+\{[^}]*\},\s*%rd\d+,"
                          r"\s*%rd\d+", text)) == 4


def test_multi_box_k_tile_advances_box_by_box():
    """K = 128 bf16 with a 128B swizzle is two [64, 64] boxes, box after box:
    K-block 4 starts the second box, 64 rows x 128 B = 8192 bytes on."""
    ir = _gemm("bf16", 128).build().ir
    steps = {int(v) for v in re.findall(r"arith\.constant (\d+) : i64", ir)}
    assert {2, 4, 6, 512, 514, 516, 518} <= steps


def test_a_from_registers():
    text = ptx(_gemm("bf16", 64, rega=True))
    regs_a = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16\s+\{[^}]*\},\s*"
                        r"\{(%r\d+), (%r\d+), (%r\d+), (%r\d+)\},\s*%rd\d+", text)
    assert len(regs_a) == 4, text
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in text


def test_accumulator_layout():
    """The m64nNk16 f32 D fragment (PTX ISA, "Register Fragments" of wgmma):
    thread t of warp w holds rows 16w + t/4 and +8, columns 8·j + 2·(t%4) + {0, 1}."""
    coords = wgmma.Accumulator.coords
    assert coords(0, lane=0, warp=0) == (0, 0)
    assert coords(1, lane=0, warp=0) == (0, 1)
    assert coords(2, lane=0, warp=0) == (8, 0)
    assert coords(3, lane=0, warp=0) == (8, 1)
    assert coords(4, lane=0, warp=0) == (0, 8)
    assert coords(0, lane=5, warp=2) == (32 + 1, 2)
    assert coords(31, lane=31, warp=3) == (48 + 7 + 8, 8 * 7 + 6 + 1)
    cells = {coords(i, lane=ln, warp=w) for w in range(4) for ln in range(32) for i in range(32)}
    assert cells == {(r, c) for r in range(64) for c in range(64)}  # a bijection onto the tile


# --------------------------------------------------------------------------- refusals

def _descriptor_of(make_tile, **kw):
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("bf16", (64, 256))):
        wgmma.SmemDescriptor(make_tile(a), **kw)

    return k


def _loaded_tile(a, tile=(64, 64), swizzle="swizzle_128b"):
    ld = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, tile, swizzle=swizzle)
    s = lang.SMEMPool().alloc_for(ld)
    bar = lang.TMABar(1)
    with lang.WarpRole(0):
        cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0))
    return s


@pytest.mark.parametrize("make_tile,message", [
    (lambda a: lang.SMEMPool().alloc((64, 64), "bf16"), "this tile's swizzle is unknown"),
    (lambda a: _loaded_tile(a, (64, 32)), "needs rows of exactly 128 bytes per box, this one has 64"),
    (lambda a: _loaded_tile(a, (64, 64), "none"), "non-swizzled TMA tile"),
    (lambda a: a, "takes a shared-memory tile"),
    (lambda a: lang.SMEMPool().alloc((2, 64, 64), "bf16", swizzle="swizzle_128b"), "takes a [rows, K] tile"),
], ids=["unknown-swizzle", "row-bytes", "unswizzled", "global", "rank-3"])
def test_smem_descriptor_refusals(make_tile, message):
    assert message in str(build_error(_descriptor_of(make_tile), "descriptor"))


def test_smem_descriptor_refuses_a_contradicting_swizzle():
    k = _descriptor_of(lambda a: _loaded_tile(a), swizzle="swizzle_64b")
    assert "swizzle swizzle_64b but the tile holds swizzle_128b data" in str(build_error(k, "descriptor"))


@pytest.mark.parametrize("case,message", [
    ("pair", "wgmma operand types bf16 and e4m3 do not pair"),
    ("override", "wgmma b_type='f16' for a tile of BFloat16: a descriptor's type is its tile's"),
    ("n", "wgmma n = 12: a multiple of 8 in [8, 256]"),
    ("acc", "mma_async's first argument is a wgmma.Accumulator"),
    ("types", "mma_async needs the operand types"),
    ("regs", "A from registers is 4 x 32-bit registers a thread, got 2"),
    ("kblock", "K-block 4 of a tile with K = 64"),
])
def test_mma_misuse(case, message):
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("bf16", (64, 256)), *, case):
        s = _loaded_tile(a)
        d = wgmma.SmemDescriptor(s)
        if case == "pair":
            wgmma.mma_async(wgmma.Accumulator(64), d, d.desc, b_type="e4m3")
        elif case == "override":  # read bf16 data as f16
            wgmma.mma_async(wgmma.Accumulator(64), d, d, b_type="f16")
        elif case == "n":
            wgmma.Accumulator(12)
        elif case == "acc":
            wgmma.mma_async(None, d, d)
        elif case == "types":
            wgmma.mma_async(wgmma.Accumulator(64), d.desc, d.desc)
        elif case == "regs":
            wgmma.mma_async(wgmma.Accumulator(64), [dsl.Int32(0)] * 2, d, a_type="bf16")
        elif case == "kblock":
            d.k_block(4)

    assert message in str(build_error(k, rule=None, case=case))


# --------------------------------------------------------------------------- serialized wgmma

def test_a_kernel_whose_wgmmas_ptxas_serializes_gets_a_performance_warning():
    """A 64-bit division by a run-time value is a call in the SASS, and a call
    makes ptxas wait after every wgmma of the kernel: nvtma.compile says so
    (nvJitLink's advisory, with the usual cause); in 32 bits, no warning."""
    import warnings

    import nvtma
    from nvtma.compiler import PerformanceWarning, RegisterBudgetWarning
    with pytest.warns(PerformanceWarning, match="serialized.*64-bit division"):
        nvtma.compile(_gemm(divide="i64").build().ir, cache=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        warnings.simplefilter("ignore", RegisterBudgetWarning)  # nvJitLink's ptxas ignores setmaxnreg (C7504)
        nvtma.compile(_gemm(divide="i32").build().ir, cache=False)


def test_a_kernel_whose_setmaxnreg_ptxas_ignores_gets_a_register_budget_warning():
    """setmaxnreg (WarpgroupRole(regs=)) that ptxas drops is said, not silent
    (CUTLASS #3406): as nvJitLink runs ptxas it drops every one (C7504), and
    the SASS then has no USETMAXREG. A kernel without it gets no warning."""
    import warnings

    import nvtma
    from nvtma.compiler import RegisterBudgetWarning
    from nvtma.kernels import gemm
    sp = gemm.gemm_spec(8, 64, 1, w_scale="tensor", pdl=False)
    with pytest.warns(RegisterBudgetWarning, match="'setmaxnreg' ignored"):
        c = nvtma.compile(sp.kernel.build(sp.param_types, **sp.consts).ir, cache=False)
    assert "setmaxnreg.dec.sync.aligned.u32" in c.ptx
    try:
        assert "USETMAXREG" not in c.sass()
    except FileNotFoundError:
        pass

    @dsl.kernel(block=(128,))
    def plain(a: dsl.Tensor("f32", (128,))):
        a[dsl.thread_idx()] = a[dsl.thread_idx()] + 1.0

    with warnings.catch_warnings():
        warnings.simplefilter("error", RegisterBudgetWarning)
        nvtma.compile(plain.build().ir, cache=False)


def test_the_gemm_epilogue_chunks_cover_every_x_row():
    """The epilogue writes a tile's BM x rows in chunks of whole 8-row groups
    that divide BM (at BM = 24 with BN = 192 the widest fit, 16 rows, left
    rows 16-23 of y unwritten), f32 partials EM rows at a time and bf16 y
    up to twice as many in the same bytes: BM = 128, BN = 64 stores y with
    one TMA store (it took two), 128 x 128 in two chunks of two 64-column
    boxes. bf16 y goes into the tile by stmatrix (transposed 8 x 8 blocks),
    128B-swizzled as y's descriptor says; f32 y, and bf16 y with kwg, by
    scalar stores, unswizzled."""
    import warnings

    from nvtma.compiler import RegisterBudgetWarning
    from nvtma.kernels import gemm
    for BM in range(8, 257, 8):
        for BN in (64, 128, 192, 256):
            EM = gemm.epi_rows(BM, BN)
            assert BM % EM == 0 and EM % 8 == 0 and EM * BN * 4 <= gemm.EPI_BYTES, (BM, BN, EM)
            for bits in (16, 32):
                EY = gemm.y_rows(BM, EM, bits)
                assert BM % EY == 0 and EY % 8 == 0 and EY * bits <= EM * 32, (BM, BN, bits, EY)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegisterBudgetWarning)
        # y's box, innermost first (columns, rows): 128 bytes of columns when swizzled
        # (kwg keeps scalar stores into the unswizzled tile: stmatrix spilled its K loop)
        for BM, BN, wgs, kwg, y, stores, matrices, swizzle, box in (
                (128, 64, 1, False, "bf16", 1, 8, 3, [64, 128]), (128, 128, 2, False, "bf16", 4, 8, 3, [64, 64]),
                (32, 64, 1, False, "f32", 1, 0, 0, [64, 32]), (64, 64, 2, True, "bf16", 1, 0, 0, [64, 64])):
            c = gemm.gemm_spec(BM, BN, wgs, w_scale="tensor", y_dtype=y, kwg=kwg).compile()
            assert c.ptx.count("cp.async.bulk.tensor.2d.global.shared::cta") == stores
            # a warp's stmatrix.x4 stores of one m64 block: BM / 16 (two chunks of 64 rows at 128 x 128)
            assert c.ptx.count("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == matrices
            y_desc = {r["binds"]: r for r in c.descriptor_records("gemm")}[2]  # CU_TENSOR_MAP_SWIZZLE_128B = 3
            assert (y_desc["swizzle"], y_desc["box_dim"]) == (swizzle, box), y_desc


def test_the_gemm_adds_split_k_partials_from_its_registers_in_fragment_order():
    """With one consumer warpgroup a K split's partial goes from the
    accumulator registers straight into the workspace, a row per tile (and
    CTA of x rows) in the registers' fragment order: one
    red.global.add.v4.f32 per four registers (a warp's: 512 contiguous
    bytes), none through shared memory, in two copies (unchecked where every
    x row of the tile is in M, each checked where not); the tile's last
    segment reads the sum back into its registers (v4 loads), zeroes the row
    (two copies again) and writes y as a whole-K segment does, through the
    one copy of y's writes (a TMA store per chunk and 64-column box). Two
    warpgroups, and kwg, stage the partial through the tile (y's order) and
    store y from the sum, as before."""
    import warnings

    from nvtma.compiler import RegisterBudgetWarning
    from nvtma.kernels import gemm
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegisterBudgetWarning)
        for BM, BN, ms, quads in ((64, 64, 1, 8), (32, 128, 2, 8), (8, 128, 1, 2)):
            sp = gemm.gemm_spec(BM, BN, 1, w_scale="tensor", ms=ms)
            assert sp.param_types[3].shape == (None, BN * BM)
            ptx = sp.compile().ptx
            # a thread's quads: BM / 2 registers of each of its BN / 64 m64 blocks, four at a time
            assert quads == BM // 8 * BN // 64
            assert ptx.count("red.gpu.global.add.v4.f32") == 2 * quads
            # (LLVM may merge the two copies' last, identical, store)
            assert ptx.count("ld.global.v4.b32") == quads and quads <= ptx.count("st.global.v4.b32") <= 2 * quads
            assert "ld.shared.v4" not in ptx
            if BM > 8:  # a TMA store a chunk of y's rows and 64-column box (BM = 8 stores each register)
                chunks = BM // gemm.y_rows(BM, gemm.epi_rows(BM, BN), 16)
                assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta") == chunks * BN // 64
        for kw in (dict(wgs=2), dict(wgs=2, kwg=True)):
            ptx = gemm.gemm_spec(64, 128, w_scale="tensor", **kw).compile().ptx
            assert "ld.shared.v4.b32" in ptx and ptx.count("red.gpu.global.add.v4.f32") > 0
    spec = gemm.gemm_spec(32, 128, 2, w_scale="tensor", ms=2)
    assert gemm.workspace_shape(spec, 300) == ((6, 4096), 6)


def test_the_gemm_diagnostics_are_named_and_whole_k_only_has_no_split_path():
    """gemm_spec(diag=) takes only the diagnostics it has (a misspelt one
    would otherwise build the normal kernel unnoticed); "whole_k_only"
    builds no K-split path: no workspace reductions, counts or sums (what
    carrying that path costs a kernel run with splits = 1)."""
    import warnings

    from nvtma.compiler import RegisterBudgetWarning
    from nvtma.kernels import gemm
    with pytest.raises(ValueError, match="diag='no_splits': one of None, 'no_red'"):
        gemm.gemm_spec(64, 64, 1, diag="no_splits")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegisterBudgetWarning)
        ptx = gemm.gemm_spec(64, 64, 1, w_scale="tensor", diag="whole_k_only").compile().ptx
    assert "red.global" not in ptx and "atom.global" not in ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx  # y's writes stay


def test_the_gemm_stream_only_diagnostics_stream_w_and_nothing_else():
    """diag "stream_only" (the floor of a GEMM call: benchmarks/diag/
    stream_floor.py) keeps W's TMA loads and the ring, and drops x's loads,
    the wgmmas and every write; "stream_no_wait" also waits for the earlier
    kernels only at its end. Neither builds with consumers or quantizers
    that read x."""
    import warnings

    from nvtma.compiler import RegisterBudgetWarning
    from nvtma.kernels import gemm
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegisterBudgetWarning)
        full = gemm.gemm_spec(64, 64, 1, w_scale="tensor").compile().ptx
        for diag in ("stream_only", "stream_no_wait"):
            ptx = gemm.gemm_spec(64, 64, 1, w_scale="tensor", diag=diag).compile().ptx
            loads = ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global")
            assert 0 < loads < full.count("cp.async.bulk.tensor.2d.shared::cluster.global")  # W's, not x's
            assert "wgmma.mma_async" not in ptx and "red.global" not in ptx and "st.global" not in ptx
            assert "cp.async.bulk.tensor.2d.global.shared::cta" not in ptx  # no y
            assert "griddepcontrol.wait" in ptx and "mbarrier.try_wait" in ptx
    for bad in (dict(wgs=2, kwg=True), dict(x_scale="fused")):
        with pytest.raises(ValueError, match="diag='stream_only': not with kwg or x_scale='fused'"):
            gemm.gemm_spec(64, 64, w_scale="tensor", diag="stream_only", **{"wgs": 1, **bad})


def test_the_gemm_parts_diagnostics_drop_the_wgmmas_or_the_epilogue():
    """diag "no_mma" keeps both operands' loads and the epilogue (of zero
    accumulators) and drops the wgmmas; "no_epilogue" keeps the wgmmas, and
    y's TMA stores only under a condition no call meets (the accumulators
    stay live: ptxas keeps every wgmma)."""
    import warnings

    from nvtma.compiler import RegisterBudgetWarning
    from nvtma.kernels import gemm
    load = "cp.async.bulk.tensor.2d.shared::cluster.global"
    store = "cp.async.bulk.tensor.2d.global.shared::cta"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegisterBudgetWarning)
        full = gemm.gemm_spec(64, 64, 1, w_scale="row").compile()
        no_mma = gemm.gemm_spec(64, 64, 1, w_scale="row", diag="no_mma").compile()
        no_epi = gemm.gemm_spec(64, 64, 1, w_scale="row", diag="no_epilogue").compile()
    assert no_mma.ptx.count(load) == full.ptx.count(load) > 0
    assert "wgmma.mma_async" not in no_mma.ptx and store in no_mma.ptx
    sass = {k: c.sass() for k, c in (("full", full), ("no_mma", no_mma), ("no_epi", no_epi))}
    if sass["full"] is not None:  # nvdisasm there
        mmas = sass["full"].count("GMMA")  # QGMMA: e4m3
        assert mmas > 0 and sass["no_epi"].count("GMMA") == mmas and "GMMA" not in sass["no_mma"]
    assert store in no_epi.ptx  # behind parts < 0
    with pytest.raises(ValueError, match="diag='no_mma': not with kwg or x_scale='fused'"):
        gemm.gemm_spec(64, 64, 2, w_scale="tensor", kwg=True, diag="no_mma")


def test_the_gemm_promotes_w_by_128_bytes_in_l2_unless_asked_otherwise():
    """W's descriptor (bound to argument 0) asks L2 for 128-byte promotion by
    default: 256B, DeepGEMM's, streamed W 3.5-9.4% slower at M = 1 on the H200
    (benchmarks/README.md, ninth session). Each operand's promotion can be
    chosen."""
    import warnings

    from nvtma.compiler import RegisterBudgetWarning
    from nvtma.kernels import gemm
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegisterBudgetWarning)
        for opts, want in (({}, ("l2_128b", "l2_128b")), ({"l2_w": "l2_256b", "l2_x": "none"}, ("l2_256b", "none"))):
            recs = gemm.gemm_spec(8, 64, 1, w_scale="tensor", **opts).compile().descriptor_records("gemm")
            got = {r["binds"]: (r["l2_promotion_name"], r["l2_promotion"]) for r in recs}
            assert (got[0][0], got[1][0]) == want, got
            assert got[0][1] == {"none": 0, "l2_64b": 1, "l2_128b": 2, "l2_256b": 3}[want[0]]


@pytest.mark.parametrize("BM,BN,wgs,scale", [(8, 64, 1, "tensor"), (64, 128, 2, "row"), (128, 128, 2, "block")])
def test_the_gemm_divides_in_32_bits_and_keeps_its_wgmmas_pipelined(BM, BN, wgs, scale):
    """The shipped GEMM has no 64-bit division or remainder (each is a call
    that serializes its wgmmas; they were there, and every wgmma waited for
    the one before), and ptxas does not warn."""
    import warnings

    from nvtma.compiler import PerformanceWarning, RegisterBudgetWarning
    from nvtma.kernels import gemm
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        warnings.simplefilter("ignore", RegisterBudgetWarning)  # nvJitLink's ptxas ignores setmaxnreg (C7504)
        text = gemm.gemm_spec(BM, BN, wgs, w_scale=scale).compile().ptx
    assert not re.search(r"\b(div|rem)\.[su]64\b", text)
    assert re.search(r"wgmma\.wait_group\.sync\.aligned\s+[01];", text)


@pytest.mark.parametrize("BM,BN,wgs,scale", [(64, 64, 1, "tensor"), (128, 64, 1, "tensor"), (128, 128, 2, "row"),
                                             (256, 64, 1, "tensor"), (128, 64, 1, "block")])
def test_the_gemm_epilogue_keeps_its_addresses_out_of_local_memory(BM, BN, wgs, scale):
    """From BM = 128 on, each accumulator register's epilogue address is a
    base plus a constant formed where it is stored: hoisted out of the
    persistent loop instead, the addresses were held in registers across it
    and spilled (BM = 128: 224 bytes of stack; 128 x 128 over two warpgroups,
    which nvJitLink keeps at 168 registers: 688; BM = 256: 1,600). Up to BM =
    64 they are hoisted, and fit."""
    from nvtma.kernels import gemm
    try:
        sass = gemm.gemm_spec(BM, BN, wgs, w_scale=scale).compile().sass()
    except FileNotFoundError:
        pytest.skip("cuobjdump not available")
    assert not re.search(r"\b(STL|LDL)(\.\w+)*\s", sass)


def test_the_gemm_shares_x_over_a_cluster_with_multicast():
    """mc=2: a 2-CTA cluster launch, x's TMA loads multicast to both CTAs
    (each loading half of the tile's rows), slots released in both CTAs
    (mapa + a cluster-scope arrive), a cluster barrier before and after."""
    from nvtma.kernels import gemm
    sp = gemm.gemm_spec(128, 64, 1, w_scale="tensor", mc=2)
    compiled = sp.compile()
    text = compiled.ptx
    assert compiled.records["kernels"]["gemm"]["launch"]["cluster"] == [2, 1, 1]
    assert re.search(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes"
                     r"\.multicast::cluster", text)
    # the slot's remote release at CTA scope (PTX's default): release.cluster cost ~0.8 us a K step
    assert "mapa" in text and re.search(r"mbarrier\.arrive\.shared::cluster\.b64", text)
    assert "mbarrier.arrive.release.cluster" not in text
    assert text.count("barrier.cluster.wait") >= 2
    assert gemm.parts_for(3, 320, 2048, 64, mc=2) == (9, (18,))   # 5 tiles: 3 groups x 3 splits, 2 CTAs each
    for bad in (dict(mc=3), dict(BM=8, mc=2)):
        with pytest.raises(ValueError, match="mc="):
            gemm.gemm_spec(bad.get("BM", 64), 64, 1, w_scale="tensor", mc=bad["mc"])


def test_the_gemm_splits_m_over_a_cluster_sharing_w():
    """ms=2: a 2-CTA cluster, W's TMA loads multicast to both CTAs (each
    loading half of the tile's rows), x loaded per CTA from its own rows;
    one share per cluster; Gemm pads x to the cluster's rows; mc and ms
    do not combine."""
    from nvtma.kernels import gemm
    sp = gemm.gemm_spec(64, 64, 1, w_scale="tensor", ms=2)
    compiled = sp.compile()
    text = compiled.ptx
    assert compiled.records["kernels"]["gemm"]["launch"]["cluster"] == [2, 1, 1]
    assert len(re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes"
                          r"\.multicast::cluster", text)) >= 1
    assert "mapa" in text and text.count("barrier.cluster.wait") >= 2
    assert sp.info["ms"] == 2 and sp.info["mc"] == 1
    assert gemm.parts_for(1, 4096, 7168, 64, ms=2) == (64, (128,))   # 64 tiles, a cluster of 2 CTAs each
    assert gemm.parts_for(0, 4096, 7168, 64, ms=2) == (66, (132,))   # stream K: a share per cluster
    for bad in (dict(ms=3), dict(ms=2, mc=2)):
        with pytest.raises(ValueError, match="ms="):
            gemm.gemm_spec(64, 64, 1, w_scale="tensor", **bad)
    # from BM = 64 on, candidates include the M split (BM halved, twice the CTAs)
    cands = gemm.candidates(128, 4096, 7168)
    assert gemm.Config(64, 64, 1, 1, ms=2) in cands
    assert all(c.ms == 1 for c in gemm.candidates(32, 4096, 7168))
    g = gemm.Gemm()
    spec, splits, _ = g.plan(100, 4096, 7168, scale="tensor", config=(64, 64, 1, 1, 1, None, 2))
    assert spec.info["BM"] == 64 and spec.info["ms"] == 2 and splits == 1
    # no padding with the M split from M >= BM on: the kernel's second CTA takes M's last 64 rows (its box
    # in bounds); below BM the first CTA's box would reach past M, and x is padded to the cluster's rows
    assert g.kernel_rows(100, 64, ms=2) == 100 and g.kernel_rows(64, 64, ms=2) == 64
    assert g.kernel_rows(40, 64, ms=2) == 128


def test_the_gemm_interleaves_k_over_its_warpgroups():
    """kwg: two consumer warpgroups take alternate K steps of one W tile
    (each its own stages: a slot's empty barrier counts one warpgroup's 4
    warps), summed through shared memory (named barrier 2 over both) before
    warpgroup 0's epilogue; block scaling gets these candidates, others not."""
    from nvtma.kernels import gemm
    sp = gemm.gemm_spec(64, 64, 2, w_scale="block", ms=2, kwg=True)
    assert sp.info["kwg"] and sp.info["wgs"] == 2
    compiled = sp.compile()
    assert compiled.records["kernels"]["gemm"]["launch"]["block"] == [384, 1, 1]
    text = compiled.ptx
    assert re.search(r"bar\.sync\s+2, 256;", text)
    # one warpgroup's 4 warps x 2 CTAs free a slot (not both warpgroups': 16)
    eight = re.search(r"mov\.b32\s+(%r\d+), 8;", text).group(1)
    assert re.search(r"mbarrier\.init\.shared\.b64\s+\[\w+\], " + eight + ";", text)
    with pytest.raises(ValueError, match="kwg"):
        gemm.gemm_spec(64, 64, 1, w_scale="block", kwg=True)
    assert any(c.kwg for c in gemm.candidates(128, 4096, 7168, scale="block"))
    assert not any(c.kwg for c in gemm.candidates(128, 4096, 7168, scale="tensor"))
    spec, _, _ = gemm.Gemm().plan(100, 4096, 7168, scale="block", config=(64, 64, 2, 1, 1, None, 2, True))
    assert spec.info["kwg"] and spec.info["ms"] == 2


def test_the_gemm_pads_quantized_x_to_its_tile_from_bm_128():
    """x's rows past M in a partial box are the TMA's out-of-bounds fill,
    which costs (measured: 4096 x 7168, M = 65, 21.4 us against 12.6 us
    padded): from BM = 128 on, bf16 x quantized by quantize_x first is
    quantized into zero rows up to the tile when that adds 8 or more (M
    comes from y, not x); Gemm(pad_x=False) does not."""
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    assert [g.kernel_rows(M, BM) for M, BM in ((70, 128), (65, 128), (120, 128), (121, 128), (128, 128),
                                               (129, 256), (250, 256), (33, 64), (5, 8))] == \
        [128, 128, 128, 121, 128, 256, 250, 33, 5]
    assert gemm.Gemm(pad_x=False).kernel_rows(70, 128) == 70


def test_the_gemm_loads_a_partial_x_tile_in_half_boxes():
    """xhalf: a second descriptor of x with boxes of BM / 2 rows (a tile
    reaching past M loads one or two of them, their bytes in the stage's
    expect-tx), where the kernel can take it (BM a multiple of 16 from 32
    on, mc = 1, x not quantized in the kernel); checked. Gemm builds it where
    it was measured faster: M ends inside one x tile (ms = 1) of 128 or more
    rows, x not padded by quantize_x; Gemm(xhalf=True) wherever it can."""
    from nvtma.kernels import gemm

    def x_boxes(BM, **kw):  # x's descriptors (bound to parameter 1): their boxes, innermost first
        params = gemm.gemm_spec(BM, 64, 1, **kw).compile().records["kernels"]["gemm"]["params"]
        return [p["box_dim"] for p in params if p.get("kind") == "descriptor" and p["binds"] == 1]
    assert x_boxes(128, xhalf=True) == [[128, 128], [128, 64]] and x_boxes(128) == [[128, 128]]
    assert x_boxes(64, w_dtype="bf16", w_scale=None, xhalf=True) == [[64, 64], [64, 32]]
    for bad in (dict(BM=16, xhalf=True), dict(BM=40, xhalf=True), dict(BM=128, mc=2, xhalf=True),
                dict(BM=64, x_scale="fused", xhalf=True), dict(BM=64, xhalf="yes")):
        with pytest.raises(ValueError, match="xhalf="):
            gemm.gemm_spec(bad.pop("BM"), 64, 1, **bad)

    def half(M, cfg, g=gemm.Gemm(), **kw):
        return g.plan(M, 4096, 7168, scale="tensor", config=cfg, **kw)[0].info["xhalf"]
    assert half(70, (128, 64, 1, 1)) and half(100, (128, 64, 1, 0))
    assert not half(128, (128, 64, 1, 1)) and not half(33, (64, 64, 1, 1))  # a whole tile; BM = 64
    assert not half(70, (64, 64, 1, 1, 1, None, 2)) and not half(70, (128, 64, 1, 1, 2))  # ms = 2; mc = 2
    assert not half(70, (128, 64, 1, 1), quantize="kernel")  # quantize_x pads x to the tile
    assert half(33, (64, 64, 1, 1), g=gemm.Gemm(xhalf=True)) and not half(70, (128, 64, 1, 1), xhalf=False)
    assert not half(70, (128, 64, 1, 1, 2), g=gemm.Gemm(xhalf=True))  # where it can


def test_the_gemm_splits_its_accumulator_chains_at_small_m():
    """Up to BM = 64 each m64 block's K-step wgmmas go round-robin into 2 or
    4 accumulators (summed before the epilogue), so fewer products are added
    into each f32 accumulator: the SASS has that many independent wgmma
    destinations. `chains` is checked."""
    from nvtma.kernels import gemm
    assert [gemm.default_chains(BM, 1) for BM in (8, 16, 32, 64, 128, 256)] == [4, 4, 2, 2, 1, 1]
    assert [gemm.default_chains(8, R) for R in (1, 2, 3, 4)] == [4, 4, 2, 2]
    with pytest.raises(ValueError, match="chains=3"):
        gemm.gemm_spec(8, 64, 1, w_scale="tensor", chains=3)
    for chains in (1, 4):
        sp = gemm.gemm_spec(8, 64, 1, w_scale="tensor", chains=chains)
        assert sp.info["chains"] == chains
        try:
            sass = sp.compile().sass()
        except FileNotFoundError:
            pytest.skip("cuobjdump not available")
        dests = set(re.findall(r"QGMMA\.64x8x32\S*\s+(R\d+),", sass))
        assert len(dests) == chains, sorted(dests)


def test_the_gemm_two_per_sm_ring_fits_two_ctas():
    """two_per_sm_stages: the deepest ring whose CTA fits twice in an SM's
    228 KB (with the driver's 1 KB and the kernel's static shared memory),
    checked against what the built kernels ask for; a candidate up to BM = 16."""
    from nvtma.kernels import gemm
    for BM, BN, wd in ((8, 64, "f8E4M3FN"), (16, 64, "f8E4M3FN"), (8, 64, "bf16")):
        two = gemm.two_per_sm_stages(BM, BN, wd)
        fits = [gemm.gemm_spec(BM, BN, 1, stages=st, w_dtype=wd, w_scale="tensor" if wd != "bf16" else None).smem
                for st in (two, two + 1)]
        per_cta = [f + gemm.STATIC_SMEM + gemm.CTA_RESERVED for f in fits]
        assert 2 * per_cta[0] <= gemm.SM_SMEM < 2 * per_cta[1], (BM, BN, two, fits)
    cands = gemm.candidates(1, 7168, 2048)
    assert any(c.stages == gemm.two_per_sm_stages(8, 64, block_scaled=True) for c in cands)


@pytest.mark.parametrize("M,N,K,wd", [(1, 4096, 7168, "f8E4M3FN"), (1, 7168, 2048, "bf16"), (16, 4096, 7168, "bf16"),
                                      (64, 2112, 7168, "f8E4M3FN")])
def test_the_gemm_candidates_vary_the_top_two_splits_and_rings(M, N, K, wd):
    """gemm.candidates: each of the two best-ranked configs with twice and
    half its K splits and stream K, at its default ring and with the deep
    one (16 stages where it fits), and unsplit with the deep ring (bf16
    7168 x 2048, M = 1: 8/64/1/1 at 16 stages 7.5-7.7 us against 9.3-9.5);
    no config twice."""
    from nvtma.kernels import gemm
    cands = gemm.candidates(M, N, K, wd, scale=None if wd == "bf16" else "tensor")
    assert len(cands) == len(set(cands))
    kblocks = gemm.k_steps(K, wd)
    for c in gemm._ranked(cands[0].BM, N, kblocks, wd, 132)[:2]:
        deep = min(16, gemm.deepest_stages(c.BM, c.BN, wd, block_scaled=True))
        for sp in {s for s in (c.splits, c.splits * 2, c.splits // 2, 0) if s <= kblocks}:
            assert c._replace(splits=sp) in cands, (c, sp)
            if deep > gemm.max_stages(c.BM, c.BN, wd):
                assert c._replace(splits=sp, stages=deep) in cands, (c, sp)
        if deep > gemm.max_stages(c.BM, c.BN, wd):
            assert c._replace(splits=1, stages=deep) in cands, c


@pytest.mark.parametrize("BM,BN,wgs,regs", [(128, 64, 1, None), (128, 256, 2, 232), (128, 192, 3, 152),
                                            (128, 256, 4, 112)])
def test_the_gemm_consumers_raise_their_registers_within_the_sm(BM, BN, wgs, regs):
    """Each consumer warpgroup raises its registers (setmaxnreg) to what the
    SM's 64 K leave beside the producer's warpgroup at 40, at most 232: with
    three or four consumer warpgroups (one m64 block of W each) 232 would ask
    for more than there is. One consumer warpgroup raises nothing: its
    threads hold 256 at launch (a 256-thread CTA), and an .inc to 232 was
    undefined in PTX. The accumulators must fit a thread's registers at
    launch, which ptxas allocates the whole kernel in."""
    from nvtma.kernels import gemm
    assert gemm.consumer_regs(wgs) == regs
    if regs is not None:
        assert 128 * wgs * regs + 128 * 40 <= 65536 and regs > lang.register_budget(128 * (wgs + 1))
    text = gemm.gemm_spec(BM, BN, wgs, w_scale="tensor").compile().ptx
    got = sorted(re.findall(r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+);", text))
    assert got == [("dec", "40")] + ([("inc", str(regs))] if regs else []), got


@pytest.mark.parametrize("BM,BN,wgs,scale", [(8, 128, 2, "tensor"), (32, 64, 1, "block"), (64, 64, 1, "row")])
def test_the_gemm_quantizes_bf16_x_in_the_kernel(BM, BN, wgs, scale):
    """x_scale='fused': x's TMA loads bf16 tiles, warps 1-3 of the producer's
    warpgroup convert each stage to e4m3 (satfinite, a scale per row and 128
    K values from a 16-lane max shuffle) for the wgmmas, which then promote
    each stage's partial with those scales. No IEEE division (ptxas makes it
    a call, and a call serializes every wgmma; the approximate one takes
    448·2^-64 / (amax·2^-64), in its range for every bf16 amax), and at
    these configs no spills; the warpgroups' registers as without it."""
    import warnings

    from nvtma.compiler import PerformanceWarning, RegisterBudgetWarning
    from nvtma.kernels import gemm
    sp = gemm.gemm_spec(BM, BN, wgs, w_scale=scale, x_scale="fused")
    assert [str(t.dtype) for t in sp.param_types[:2]] == ["f8E4M3FN", "bf16"]
    assert len(sp.param_types) == 7  # W's scales only: x's are the kernel's own
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        warnings.simplefilter("ignore", RegisterBudgetWarning)  # nvJitLink's ptxas ignores setmaxnreg (C7504)
        c = sp.compile()
    text = c.ptx
    assert "cvt.rn.satfinite.e4m3x2.f32" in text
    assert re.search(r"shfl\.sync\.bfly\.b32\s+\S+, \S+, 8, 31", text)  # the row's 16 lanes: offsets 8, 4, 2, 1
    assert not re.search(r"\bdiv\.(rn|full)\.f32|\bcall", text)
    assert "div.approx.f32" in text and "0f23E00000" in text  # 448 * 2^-64, the scaled numerator
    # every quantizing thread arrives on a stage's xready barrier (3 warps: 96), and every consumer thread
    # releases the slot (128 a warpgroup), each after its own writes or reads of the scales: an elected
    # lane's arrival orders only its own lane's (compute-sanitizer racecheck on the H200)
    inits = re.findall(r"mov\.b32\s+(%r\d+), (\d+);\s*\n\s*mbarrier\.init\.shared\.b64\s+\[(\w+)\], \1;", text)
    assert sorted(int(n) for _, n, _ in inits) == sorted([1, 96, 128 * wgs]), inits
    got = sorted(re.findall(r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+);", text))
    regs = gemm.consumer_regs(wgs)
    assert got == [("dec", "40")] + ([("inc", str(regs))] if regs else []), got
    try:
        assert not re.search(r"\b(STL|LDL)(\.\w+)*\s", c.sass())
    except FileNotFoundError:
        pass


def test_the_gemm_refuses_a_config_whose_tile_holds_fewer_rows_than_m():
    """The kernel computes one tile of x rows (BM, or BM·ms over an M-split
    cluster): a given config with fewer rows than M would leave the rest of
    y unwritten, so it is refused, naming the rule and the values."""
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    with pytest.raises(ValueError, match=r"config \(64, 64, 1, 1\): a tile of BM·ms = 64 x rows, fewer than M = 100"):
        g.plan(100, 4096, 7168, scale="tensor", config=(64, 64, 1, 1))
    with pytest.raises(ValueError, match="BM·ms = 8 x rows, fewer than M = 9"):
        g.plan(9, 4096, 7168, w_dtype="bf16", config=(8, 64, 1, 2))
    spec, _, _ = g.plan(100, 4096, 7168, scale="tensor", config=(64, 64, 1, 1, 1, None, 2))  # 2 x 64 rows
    assert spec.info["BM"] * spec.info["ms"] == 128


def test_the_gemm_plans_a_problem_once():
    """A call's plan (config choice, spec) is memoized per problem and
    options: the config's choice took ~0.3 ms of host time a call. The memo
    is keyed by everything the plan depends on, and a refused config is
    refused every time."""
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    a = g.plan(16, 7168, 2048, scale="tensor")
    assert g.plan(16, 7168, 2048, scale="tensor") is a
    assert g.plan(16, 7168, 2048, scale="tensor")[0].key is a[0].key  # the key too: computed once
    assert g.plan(32, 7168, 2048, scale="tensor")[0] is not a[0]
    assert g.plan(16, 7168, 2048, scale="row")[0].consts["w_scale"] == "row"
    assert g.plan(16, 7168, 2048, scale="tensor", l2_w="l2_256b")[0].consts["l2_w"] == "l2_256b"
    cfg = g.plan(16, 7168, 2048, scale="tensor", config=[16, 64, 1, 2])
    assert cfg[1] == 2 and g.plan(16, 7168, 2048, scale="tensor", config=(16, 64, 1, 2)) is cfg
    for _ in range(2):
        with pytest.raises(ValueError, match="fewer than M"):
            g.plan(100, 4096, 7168, scale="tensor", config=(64, 64, 1, 1))


def test_the_gemm_plans_where_bf16_x_is_quantized():
    """Gemm quantizes bf16 x in the GEMM where that was measured faster
    (quantize="auto", the default: up to FUSED_MAX_ROWS rows of x a tile,
    where the grid streams FUSED_MIN_W_ROWS rows of W for each x row a CTA
    converts, at a config of its own if the problem's streams too few);
    "kernel" always by quantize_x first; "fused" wherever a ring of two
    stages fits. A fused config's ring keeps the shared memory the config
    asked for (so a two-CTAs-an-SM ring still fits twice, and alternate-K
    warpgroups keep an even ring)."""
    from nvtma.kernels import gemm
    sp, _, q = gemm.Gemm(quantize="kernel").plan(8, 7168, 2048, scale="block", quantize=True)
    assert sp.info["x_scale"] == "block" and q.consts["granularity"] == "block"
    g = gemm.Gemm()
    assert g.quantize_mode == "auto"
    sp, _, q = g.plan(gemm.FUSED_MAX_ROWS, 24576, 1536, scale="tensor", quantize=True)
    assert sp.info["x_scale"] == "fused" and q is None
    # 4096 x 7168 at BM = 16: the measured config (BN = 64 split over CTA pairs, row scales) converts x for too
    # little W; fused ("fused", or "auto" with block scales) it runs W tiles of 128 rows split 4 ways (128 CTAs),
    # which stream enough; per tensor or row "auto" quantizes first there (the pairs' split: measured faster), as
    # at 2112 x 7168's split 7 ways
    cfg = gemm.choose_config(16, 4096, 7168, scale="row")
    assert gemm.fused_w_rows(cfg, 4096, 7168) < gemm.FUSED_MIN_W_ROWS and cfg.dsmem
    sp, splits, q = gemm.Gemm(quantize="fused").plan(16, 4096, 7168, scale="row", quantize=True)
    assert q is None and (sp.info["BN"], splits) == (128, 4)
    sp, splits, q = g.plan(16, 4096, 7168, scale="block", quantize=True)
    assert q is None and (sp.info["BN"], splits) == (128, 4)
    sp, splits, q = g.plan(16, 4096, 7168, scale="row", quantize=True)
    assert q is not None and sp.info["ksplit"] == 2
    assert gemm.fused_w_rows(gemm.Config(16, 128, 1, 4), 4096, 7168) >= gemm.FUSED_WIDE_MIN_W_ROWS
    sp, splits, q = gemm.Gemm(quantize="fused").plan(16, 2112, 7168, scale="row", quantize=True)
    assert q is None and (sp.info["BN"], splits) == (128, 7)
    assert g.plan(16, 2112, 7168, scale="row", quantize=True)[2] is not None
    sp, splits, q = g.plan(16, 2112, 7168, scale="block", quantize=True)
    assert q is None and (sp.info["BN"], splits) == (128, 7)
    assert gemm.fused_w_rows(gemm.Config(16, 128, 1, 4), 4096, 7168) >= gemm.FUSED_WIDE_MIN_W_ROWS
    # given a config that streams too little W an x row, "auto" quantizes first, "fused" does not
    sp, _, q = g.plan(1, 4096, 7168, scale="row", quantize=True, config=(8, 64, 1, 1))
    assert sp.info["x_scale"] == "token" and q is not None
    sp, _, q = g.plan(1, 4096, 7168, scale="row", quantize="fused", config=(8, 64, 1, 1))
    assert sp.info["x_scale"] == "fused" and q is None
    sp, _, q = g.plan(32, 24576, 1536, scale="tensor", quantize=True)
    assert sp.info["x_scale"] == "token" and q is not None  # past FUSED_MAX_ROWS
    # 7168 x 2048 at BM = 16: 16/64/1/1 streams 448 W rows an x row, 16/128/1/2 896, short of the 1,024 a
    # wider config must reach (its GEMM alone is slower): quantize_x first, at the problem's config
    sp, splits, q = g.plan(16, 7168, 2048, scale="tensor", quantize=True)
    assert q is not None and (sp.info["BN"], splits) == (64, 1)
    # with block scales (a slower 1x128 quantize_x) the W-rows bar does not apply: fused at the same config
    sp, splits, q = g.plan(16, 7168, 2048, scale="block", quantize=True)
    assert q is None and sp.info["x_scale"] == "fused" and (sp.info["BN"], splits) == (64, 1)
    assert gemm.fused_w_rows(gemm.choose_config(16, 7168, 2048, scale="block"), 7168, 2048) < gemm.FUSED_MIN_W_ROWS
    sp, _, q = g.plan(256, 7168, 2048, scale="tensor", quantize=True)
    assert sp.info["x_scale"] == "token" and q.consts["granularity"] == "token"
    sp, _, q = g.plan(256, 7168, 2048, scale="tensor", quantize="fused", config=(256, 64, 1, 1))
    assert sp.info["x_scale"] == "token" and q is not None  # no room for two stages: quantize_x
    sp, _, q = g.plan(100, 4096, 7168, scale="block", quantize="fused", config=(64, 64, 2, 1, 1, 7, 2, True))
    assert sp.info["x_scale"] == "fused" and sp.info["stages"] % 2 == 0
    sp, _, q = g.plan(8, 7168, 2048, scale="block", quantize="fused")
    assert sp.info["x_scale"] == "fused" and q is None
    sp, _, q = g.plan(8, 7168, 2048, scale="tensor")
    assert sp.info["x_scale"] == "token" and q is None  # e4m3 x
    two = gemm.two_per_sm_stages(8, 64, block_scaled=True)
    sp, _, _ = g.plan(1, 7168, 2048, scale="tensor", quantize="fused", config=(8, 64, 1, 1, 1, two))
    assert 2 * (sp.smem + gemm.STATIC_SMEM + gemm.CTA_RESERVED) <= gemm.SM_SMEM
    assert sp.info["stages"] == two * gemm.stage_bytes(8, 64) // gemm.stage_bytes(8, 64, fused=True)
    with pytest.raises(ValueError, match="quantize='x'"):
        gemm.Gemm(quantize="x")
    with pytest.raises(ValueError, match="autotune='always': False, True .* or 'all'"):
        gemm.Gemm(autotune="always")
    with pytest.raises(ValueError, match="x_scale='fused': x's scaling follows"):
        gemm.Gemm(x_scale="fused").plan(8, 7168, 2048, scale="tensor", quantize=True)


@pytest.mark.parametrize("kw,message", [
    (dict(BM=64, BN=64, wgs=1, x_scale="row"), "x_scale='row': 'token' or 'block'"),
    (dict(BM=64, BN=64, wgs=1, x_scale="block"), "block-scaled W pairs with 1x128 block-scaled x"),
    (dict(BM=256, BN=192, wgs=3), "1 m64 accumulators of BM/2 registers a thread, and ~32 more, exceed the 128"),
    (dict(BM=128, BN=256, wgs=1), "4 m64 accumulators of BM/2 registers a thread, and ~32 more, exceed the 255"),
    (dict(BM=64, BN=64, wgs=1, pdl="start"), "pdl='start': False, True or 'early'"),
    (dict(BM=64, BN=64, wgs=2, kwg=True, stages=5), "kwg with stages=5: an even ring"),
    # each argument's type and range, named (a fuzzing campaign's ZeroDivisionError, TypeError and
    # DSL-internal errors before)
    (dict(BM=8, BN=0, wgs=1), "BN=0 with 1 consumer warpgroups: a multiple of 64 up to 256"),
    (dict(BM=8, BN=-64, wgs=1), "BN=-64 with 1 consumer warpgroups"),
    (dict(BM=8, BN=64, wgs=0), "wgs=0: 1 to 4 consumer warpgroups"),
    (dict(BM=8, BN=64, wgs=None), "wgs=None: an integer"),
    (dict(BM="8", BN=64, wgs=1), "BM='8': an integer"),
    (dict(BM=8.0, BN=64, wgs=1), "BM=8.0: an integer"),
    (dict(BM=8, BN=64, wgs=1, stages="4"), "stages='4': an integer"),
    (dict(BM=8, BN=64, wgs=1, stages=0), "a ring of 0 stages beside the epilogue tile"),
    (dict(BM=8, BN=64, wgs=1, chains=4.0), "chains=4.0: an integer"),
    (dict(BM=8, BN=64, wgs=1, chains=True), "chains=True: an integer"),
    (dict(BM=8, BN=64, wgs=1, ms=2.0), "ms=2.0: an integer"),
    (dict(BM=128, BN=128, wgs=1, chains=4), "chains=4 with BM=128, BN=128: 2 m64 blocks of 4 accumulators"),
    (dict(BM=8, BN=64, wgs=1, y_dtype="i32"), "y_dtype='i32': 'bf16' or 'f32'"),
    (dict(BM=8, BN=64, wgs=1, w_dtype="f8E5M2"), "w_dtype='f8E5M2': 'f8E4M3FN' (e4m3) or 'bf16'"),
    (dict(BM=48, BN=64, wgs=1, w_scale="block"), "BM=48 with 1x128 block-scaled x"),
    # x as the wgmmas' A (swap=False): a warpgroup per 64 rows of x, BN a wgmma n, no split-K path
    (dict(BM=8, BN=64, wgs=1, swap=0), "swap=0: True (W the wgmmas' A) or False"),
    (dict(BM=128, BN=32, wgs=1, swap=False), "swap=False with BM=128: wgs=1, but each consumer warpgroup takes "
                                              "64 rows of x (wgs = 2)"),
    (dict(BM=16, BN=20, wgs=1, swap=False), "swap=False with BN=20: the wgmmas' n, a multiple of 8 in [8, 256]"),
    (dict(BM=16, BN=264, wgs=1, swap=False), "swap=False with BN=264"),
    (dict(BM=16, BN=32, wgs=1, swap=False, x_scale="fused"), "swap=False: W scaled per tensor or row"),
    (dict(BM=16, BN=32, wgs=1, swap=False, w_scale="block", x_scale="fused"), "swap=False: W scaled per tensor"),
    (dict(BM=16, BN=48, wgs=1, swap=False, w_scale="block"), "swap=False with BN=48 and block-scaled W: BN divides "
                                                             "128 or is 256"),
    (dict(BM=128, BN=128, wgs=2, swap=False, w_scale="block", kc=2),
     "x as A: a 64 x BN accumulator of BN/2 registers a thread, and a partial as large for each of the 2 K steps a "
     "stage, and ~32 more, exceed the 168"),
    (dict(BM=64, BN=32, wgs=1, swap=False, mc=2), "not with mc, kwg or xhalf"),
    (dict(BM=64, BN=64, wgs=1, ksplit=2, mc=2), "ksplit=2 with ms=1, mc=2, kwg=False, diag=None: 1, 2 or 4 CTAs of "
                                                "a cluster splitting each tile's K steps, not with the M split"),
    (dict(BM=64, BN=128, wgs=2, ksplit=2, kwg=True), "ksplit=2 with ms=1, mc=1, kwg=True"),
    (dict(BM=64, BN=32, wgs=1, swap=False, ksplit=3), "ksplit=3 with ms=1"),
    (dict(BM=64, BN=32, wgs=1, swap=False, ksplit=2, ms=2), "ksplit=2 with ms=2"),
    (dict(BM=64, BN=32, wgs=1, swap=False, ksplit=2, diag="no_mma"), "diag='no_mma': 1, 2 or 4 CTAs"),
    (dict(BM=64, BN=32, wgs=1, swap=False, ksplit=2.0), "ksplit=2.0: an integer"),
    (dict(BM=64, BN=32, wgs=1, swap=False, xhalf=True), "not with mc, kwg or xhalf"),
    (dict(BM=64, BN=24, wgs=1, swap=False, ms=2), "ms=2 with mc=1, BN=24: 1, 2 or 4 CTAs sharing W (each loading "
                                                  "BN / ms of its rows, a whole number of 8-row swizzle atoms"),
    (dict(BM=64, BN=32, wgs=1, swap=False, ms=2, kc=3), "kc=3: 1 to 8 K steps a stage, more than one not with x "
                                                        "quantized in the kernel, mc, kwg or xhalf, and with ms = 2 a "
                                                        "multiple of it"),
    (dict(BM=64, BN=32, wgs=1, swap=False, diag="no_red"), "diag='no_red': not with swap=False"),
    (dict(BM=64, BN=32, wgs=1, swap=False, store="tma"), "store='tma': swap=False stores y straight"),
    (dict(BM=256, BN=256, wgs=4, swap=False), "BM=256, BN=256 with 4 consumer warpgroups: x as A: a 64 x BN "
                                               "accumulator of BN/2 registers a thread, and ~32 more, exceed the 96"),
    (dict(BM=200, BN=160, wgs=4, swap=False, w_scale="row"), "BM=200, BN=160 with 4 consumer warpgroups: x as A: a "
                                                             "64 x BN accumulator of BN/2 registers a thread, BN/4 W "
                                                             "row scales, and ~32 more, exceed the 96"),
])
def test_the_gemm_spec_refuses(kw, message):
    from nvtma.kernels import gemm
    with pytest.raises(ValueError, match=re.escape(message)):
        gemm.gemm_spec(**dict(dict(w_scale="tensor"), **kw))


def test_the_gemm_spec_takes_numpy_integers_as_ints():
    """A numpy integer is an integer (a config read from a table): the same spec as Python's."""
    np = pytest.importorskip("numpy")
    from nvtma.kernels import gemm
    a = gemm.gemm_spec(np.int64(8), np.int32(64), np.int64(1), stages=np.int64(4), w_scale="tensor")
    assert a.key == gemm.gemm_spec(8, 64, 1, stages=4, w_scale="tensor").key


@pytest.mark.parametrize("args,kw,message", [
    ((1, 4096, 0), {}, "K = 0: at least 1"),
    ((0, 4096, 7168), dict(config=(8, 64, 1, 1)), "M = 0: at least 1"),
    ((1, 4096, 7168), dict(sms=0), "sms = 0: at least 1"),
    ((1, 4096, 7168.0), {}, "K=7168.0: an integer"),
    ((1, 4096, 7168), dict(quantize="bogus"), "quantize='bogus': False"),
    ((1, 4096, 100), dict(config=(8, 64, 1, 1, 1, None, 1, False, 4)),
     "kc=4: stages of several K steps take K a multiple of 128 bytes (128 values), not K = 100"),
    ((1, 4096, 7168), dict(config=(8, 64, 1, -1)), "config splits=-1: at least 0"),
    ((1, 4096, 1024), dict(config=(8, 64, 1, 9)), "splits=9, 0 (stream K) or 1 to the 8 stages of K = 1024"),
    ((16, 4096, 1024), dict(config=(16, 32, 1, 3, 1, None, 1, False, 1, False)),
     "splits=3, but x as the wgmmas' A (swap=False) splits K only over a cluster of 2 or 4 CTAs"),
    ((16, 4096, 1024), dict(config=(16, 32, 1, 0, 1, None, 1, False, 1, False)), "splits=0, but x as the wgmmas' A"),
    ((100, 4096, 1024), dict(config=(64, 32, 1, 2, 1, None, 2, False, 2, False)),
     "splits=2, but x as the wgmmas' A (swap=False) splits K only over a cluster of 2 or 4 CTAs (splits 1, 2 or 4), "
     "and not with ms"),
])
def test_the_gemm_plan_refuses(args, kw, message):
    from nvtma.kernels import gemm
    with pytest.raises(ValueError, match=re.escape(message)):
        gemm.Gemm().plan(*args, scale="tensor", **kw)


def test_the_gemm_candidates_leave_no_share_empty():
    """No candidate splits K into more shares than K steps (the M-split variants with twice the splits
    included), at problems whose K is a few steps."""
    from nvtma.kernels import gemm
    for M, N, K, wd in ((100, 1536, 64, "bf16"), (127, 96, 1000, gemm.F8), (128, 256, 1000, "bf16"),
                        (129, 128, 4000, "bf16"), (1, 4096, 128, gemm.F8)):
        for c in gemm.candidates(M, N, K, wd):
            assert 0 <= c.splits <= -(-gemm.k_steps(K, wd) // c.kc), (M, N, K, c)


def test_the_gemm_gives_alternate_k_warpgroups_an_even_ring():
    """kwg: warpgroup g takes K steps g, g + 2, ...; with an even ring those
    keep to the same slots, so a warpgroup has waited for a slot's previous
    lap itself before it waits for the next (a parity wait on a slot whose
    previous lap is still loading would pass). The default ring rounds down."""
    from nvtma.kernels import gemm
    assert gemm.max_stages(32, 192, block_scaled=True) == 7
    assert gemm.gemm_spec(32, 192, 2, w_scale="block", kwg=True).info["stages"] == 6
    assert gemm.gemm_spec(32, 192, 1, w_scale="block").info["stages"] == 7


def test_the_gemm_stores_y_from_registers_at_bm_8():
    """At BM = 8 a whole-K tile's y goes from each accumulator register
    straight to global memory (measured 1-3% faster there); from BM = 16 on
    through shared memory and a TMA store (the direct stores were 5-40%
    slower); either on request."""
    from nvtma.kernels import gemm
    tma_store = "cp.async.bulk.tensor.2d.global.shared::cta"
    assert tma_store not in gemm.gemm_spec(8, 64, 1, w_scale="tensor").compile().ptx
    assert tma_store in gemm.gemm_spec(16, 64, 1, w_scale="tensor").compile().ptx
    assert tma_store in gemm.gemm_spec(8, 64, 1, w_scale="tensor", store="tma").compile().ptx
    with pytest.raises(ValueError, match="store='smem'"):
        gemm.gemm_spec(8, 64, 1, w_scale="tensor", store="smem")


@pytest.mark.parametrize("wd,kc", [("f8E4M3FN", 2), ("f8E4M3FN", 4), ("bf16", 4), ("block", 2)])
def test_the_gemm_loads_stages_of_several_k_steps_in_one_box(wd, kc):
    """gemm_spec(kc=): W and x are [K / bk, rows, bk] views (strides bk, run
    time, 1), each operand's stage one 3-D TMA box of kc K steps, and the
    consumers issue the wgmmas of all kc K steps (four K blocks each) before
    one commit; the ring counts these stages in the shared memory of kc
    stages of one K step. Block-scaled, x's scales are a box of kc rows a
    stage (a 2-D load beside the two 3-D ones)."""
    from nvtma.kernels import gemm
    wd, scale = ("bf16", None) if wd == "bf16" else (gemm.F8, "block" if wd == "block" else "tensor")
    one = gemm.gemm_spec(8, 64, 1, stages=8, w_dtype=wd, w_scale=scale, pdl=False)
    sp = gemm.gemm_spec(8, 64, 1, stages=8 // kc, w_dtype=wd, w_scale=scale, pdl=False, kc=kc)
    assert sp.smem == one.smem
    bk = 128 if wd != "bf16" else 64
    assert [(t.shape, t.strides) for t in sp.param_types[:2]] == [((None, None, bk), (bk, None, 1))] * 2
    assert str(sp.kernel.build(sp.param_types, **sp.consts).ir).count(f"x{bk}x{wd}, strided<[{bk}, ?, 1]>>") >= 2
    ptx = sp.compile().ptx
    assert len(re.findall(r"cp\.async\.bulk\.tensor\.3d\.shared::cluster\.global", ptx)) >= 2
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global") == (scale == "block")
    assert ptx.count("wgmma.mma_async") == 4 * kc
    assert ptx.count("wgmma.commit_group") == 1


@pytest.mark.parametrize("BM,BN,kc,wd", [(8, 16, 1, "tensor"), (16, 56, 2, "row"), (40, 32, 4, "bf16"),
                                         (80, 24, 2, "tensor"), (128, 16, 4, "row")])
def test_the_gemm_takes_x_as_the_wgmmas_a(BM, BN, kc, wd):
    """swap=False: x is the wgmmas' A, each consumer warpgroup (ceil(BM / 64)
    of them) 64 of its rows, and W's tile of BN rows (any multiple of 8)
    their B: m64nBNk wgmmas of x's and W's descriptors in that order, a K
    step's K blocks for each of kc K steps. x's ring holds each stage's BM
    rows (kc boxes of them) and the pad rows past them that its last K
    step's 64-row A tiles read (x_pad_rows), counted in the stage's bytes.
    y is stored from the registers, two columns (W rows) of an x row a
    store, under a bounds check; no epilogue tile, TMA store or split-K
    workspace reduction is built, and W's row scales are loaded for the
    accumulator's columns."""
    from nvtma.kernels import gemm
    w_dtype, scale = ("bf16", None) if wd == "bf16" else (gemm.F8, wd)
    sp = gemm.gemm_spec(BM, BN, -(-BM // 64), w_dtype=w_dtype, w_scale=scale, kc=kc, swap=False)
    assert sp.info["swap"] is False and sp.consts["swap"] is False
    pad = gemm.x_pad_rows(BM, kc)
    # the last K step's A tiles (64 rows a warpgroup, from its first row) end within the stage's rows
    assert (kc - 1) * BM + 64 * -(-BM // 64) <= kc * BM + pad and (kc == 1 or pad % BM == 0)
    assert gemm.stage_bytes(BM, BN, kc=kc, swap=False) == (kc * (BM + BN) + pad) * gemm.KBYTES
    assert sp.info["stages"] == min(8, gemm.deepest_stages(BM, BN, w_dtype, kc=kc, swap=False))
    k = 16 if wd == "bf16" else 32
    ptx = sp.compile().ptx
    assert set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+)", ptx)) == {f"m64n{BN}k{k}"}
    assert ptx.count("wgmma.mma_async") == 4 * kc
    assert "cp.async.bulk.tensor.2d.global.shared::cta" not in ptx  # no TMA store of y
    assert "red.global" not in ptx and "atom.global" not in ptx  # no split-K workspace, no counters
    stores = re.findall(r"st\.global(?:\.\w+)*\.(v2\.b16|b32|v2\.f32|v2\.u16)", ptx)
    # the BN / 2 registers of the 64 x BN accumulator, two a store; at BM = 8 a thread's second 8 rows lie past
    # the CTA's rows, so their stores go
    assert len(stores) == BN // (8 if BM == 8 else 4), stores


@pytest.mark.parametrize("BM,BN,kc", [(8, 64, 2), (32, 16, 4), (64, 128, 2), (96, 32, 2), (128, 128, 1)])
def test_the_gemm_takes_x_as_the_wgmmas_a_with_block_scales(BM, BN, kc):
    """Block-scaled W with x as the wgmmas' A: each stage's partial of each K
    step is promoted into the accumulator with one factor per x row a
    thread holds and W block (x's 1x128 scale of the row times W's 128x128
    block's: two rows, BN // 128 or one block), not one per accumulator
    column as with W as A; the scales ride the ring (a TMA box of each
    stage's), and y is stored from the registers unscaled."""
    from nvtma.kernels import gemm
    sp = gemm.gemm_spec(BM, BN, -(-BM // 64), w_scale="block", kc=kc, swap=False)
    assert sp.info["swap"] is False and sp.info["x_scale"] == "block"
    assert gemm.stage_bytes(BM, BN, True, kc=kc, swap=False) == gemm.stage_bytes(BM, BN, kc=kc, swap=False) + \
        kc * max(BM, 32) * 4
    ptx = sp.compile().ptx
    assert set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+)", ptx)) == {f"m64n{BN}k32"}
    assert ptx.count("wgmma.mma_async") == 4 * kc
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global") + \
        ptx.count("cp.async.bulk.tensor.3d.shared::cluster.global") == 4  # W (before PDL's wait too), x, x's scales
    # a stage's promotion: BN / 2 FMAs a K step, its factors from 2 x-row scales a K step (shared loads) times
    # W's block scale
    assert len(re.findall(r"\bfma\.rn\.f32", ptx)) == kc * BN // 2
    assert len(re.findall(r"ld\.shared\.b32", ptx)) == 2 * kc
    assert len(re.findall(r"\bmul\.rn\.f32", ptx)) == 2 * kc * max(1, BN // 128)
    stores = re.findall(r"st\.global(?:\.\w+)*\.(v2\.b16|b32|v2\.f32|v2\.u16)", ptx)
    assert len(stores) == BN // (8 if BM == 8 else 4)


@pytest.mark.parametrize("BN,kc,scale", [(32, 1, "block"), (64, 2, "tensor"), (24, 4, "row")])
def test_the_gemm_takes_x_as_the_wgmmas_a_over_cta_pairs(BN, kc, scale):
    """swap=False with the M split (ms = 2): a cluster of two CTAs, each its
    own rows of x, W's tile multicast to both. Each CTA loads its half of
    the tile (a K step a stage: BN / 2 rows; kc of them: kc / 2 K steps) by
    one multicast load before the wait for the earlier kernels and one in
    the loop, x (and block-scaled x's scales) by loads of its own; a stage's
    slot is released in both CTAs (the peer's barrier through mapa), and
    the CTAs meet at a cluster barrier before they leave."""
    from nvtma.kernels import gemm
    sp = gemm.gemm_spec(64, BN, 1, w_scale=scale, kc=kc, swap=False, ms=2)
    assert (sp.info["swap"], sp.info["ms"]) == (False, 2)
    compiled = sp.compile()
    assert compiled.records["kernels"]["gemm"]["launch"]["cluster"] == [2, 1, 1]
    ptx = compiled.ptx
    dims = "3d" if kc > 1 else "2d"
    w = re.findall(rf"cp\.async\.bulk\.tensor\.{dims}\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes"
                   rf"\.multicast::cluster", ptx)
    assert len(w) == 2
    own = re.findall(r"cp\.async\.bulk\.tensor\.\dd\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes"
                     r"\.L2::cache_hint", ptx)
    assert len(own) == (2 if scale == "block" else 1)  # x, and block-scaled x's scales
    assert "mapa.shared" in ptx and "mbarrier.arrive.shared::cluster.b64" in ptx
    assert "barrier.cluster.arrive" in ptx and "barrier.cluster.wait" in ptx
    with pytest.raises(ValueError, match="ms=2 with mc=1, BN=24"):
        gemm.gemm_spec(64, 24, 1, w_scale="tensor", kc=1, swap=False, ms=2)


@pytest.mark.parametrize("opts", [dict(BM=128, BN=64, wgs=1, mc=2), dict(BM=64, BN=64, wgs=1, ms=2),
                                  dict(BM=64, BN=32, wgs=1, kc=2, swap=False, ms=2),
                                  dict(BM=8, BN=64, wgs=1, kc=2, ksplit=2), dict(BM=32, BN=32, wgs=1, kc=2, swap=False,
                                                                                ksplit=4)])
def test_a_clusters_ctas_arrive_at_the_start_and_leave_without_a_cluster_barrier(opts):
    """A cluster's CTAs arrive at the cluster barrier once, after their barriers' inits, and each thread waits
    once, before its first operation on a peer (several places in the code, one a thread); there is no barrier at
    the end: with mc or ms the producer's tail waits for every slot's last release (the peers' consumers free this
    CTA's slots too), and the K split's last partial is not freed. diag "barriers": a barrier at the start and the
    end, as before (on the H200 0.1-0.3 us and 0.3-0.45 us a call, s36-pairs-*)."""
    from nvtma.kernels import gemm
    ptx = gemm.gemm_spec(w_scale="tensor", **opts).compile().ptx
    old = gemm.gemm_spec(w_scale="tensor", diag="barriers", **opts).compile().ptx
    cl = re.findall(r"barrier\.cluster\.\w+(?:\.\w+)*", ptx)
    assert cl[0] == "barrier.cluster.arrive.relaxed.aligned" and cl.count(cl[0]) == 1
    assert set(cl[1:]) == {"barrier.cluster.wait.aligned"} and len(cl) >= 3
    assert re.findall(r"barrier\.cluster\.\w+(?:\.\w+)*", old) == ["barrier.cluster.arrive.aligned",
                                                                     "barrier.cluster.wait.aligned"] * 2
    waits = len(re.findall(r"mbarrier\.try_wait", ptx)) - len(re.findall(r"mbarrier\.try_wait", old))
    assert waits == (0 if opts.get("ksplit") else gemm.gemm_spec(w_scale="tensor", **opts).info["stages"])
    assert ptx.count("st.async") == old.count("st.async") and ptx.count("multicast") == old.count("multicast")


@pytest.mark.parametrize("BM,BN,wgs,ksplit,scale", [(8, 32, 1, 2, "tensor"), (64, 64, 1, 2, "block"),
                                                     (128, 24, 2, 2, "row"), (8, 64, 1, 4, "tensor")])
def test_the_gemm_splits_k_over_a_cluster_with_x_as_the_wgmmas_a(BM, BN, wgs, ksplit, scale):
    """swap=False with the K split (ksplit, Config splits): a cluster of ksplit CTAs, each its part of every
    tile's K steps, loads of its own (no multicast, each slot freed in its own CTA only); every CTA but the last
    stores its f32 partial of each warp with rows of x's tile into the last's shared memory, 16 bytes a thread a
    store (st.async, completing on the last's barrier, which one thread there arms with the bytes), and the last frees
    the partials' slot in each of the others (mapa'd arrivals) once its warps read them. The ring leaves room
    for the partials."""
    from nvtma.kernels import gemm
    sp = gemm.gemm_spec(BM, BN, wgs, w_scale=scale, kc=2, swap=False, ksplit=ksplit)
    assert (sp.info["swap"], sp.info["ksplit"]) == (False, ksplit)
    room = gemm.deepest_stages(BM, BN, block_scaled=scale == "block", kc=2, swap=False, ksplit=ksplit)
    assert room * gemm.stage_bytes(BM, BN, scale == "block", kc=2, swap=False) + gemm.ksplit_bytes(BM, BN, ksplit) \
        <= gemm.SMEM_BYTES - 1024 and gemm.ksplit_bytes(BM, BN, ksplit) == (ksplit - 1) * wgs * 64 * BN * 4
    assert sp.info["stages"] == min(8, room)
    compiled = sp.compile()
    assert compiled.records["kernels"]["gemm"]["launch"]["cluster"] == [ksplit, 1, 1]
    ptx = compiled.ptx
    # a thread's rows h = 0 and 1 of an 8-column group a store (at BM = 8 its first row of two groups)
    assert ptx.count("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32") == BN // (16 if BM == 8 else 8)
    assert "multicast" not in ptx
    assert len(re.findall(r"mbarrier\.arrive\.shared::cluster\.b64", ptx)) == ksplit - 1  # the partials' slots
    assert len(re.findall(r"mbarrier\.arrive\.expect_tx\.shared\.b64", ptx)) == 3  # W's early, the ring, the sum
    assert "barrier.cluster.arrive" in ptx and "barrier.cluster.wait" in ptx
    g = gemm.Gemm()
    cfg = (BM, BN, wgs, ksplit, 1, None, 1, False, 2, False)
    plan, splits, _ = g.plan(BM, 4096, 7168, scale=scale, config=cfg)
    assert plan.info["ksplit"] == ksplit and splits == 1
    tiles = -(-4096 // BN)
    assert gemm.parts_for(splits, 4096, 7168, BN, gemm.F8, 132, 1, 1, 2, ksplit) == (
        tiles, (min(tiles, 132 // ksplit) * ksplit,))
    with pytest.raises(ValueError, match="splits K only over a cluster of 2 or 4 CTAs"):
        g.plan(BM, 4096, 7168, scale=scale, config=(BM, BN, wgs, 3, 1, None, 1, False, 2, False))
    if ksplit == 2 and BM == 8:  # diagnostics "no_sum": the same kernel but for the partials' sum (y wrong)
        ns = gemm.gemm_spec(BM, BN, wgs, w_scale=scale, kc=2, swap=False, ksplit=ksplit, diag="no_sum").compile().ptx
        assert "st.async" not in ns and ns.count("wgmma.mma_async") == ptx.count("wgmma.mma_async")
        with pytest.raises(ValueError, match="no_sum \\(that one with ksplit only\\)"):
            gemm.gemm_spec(BM, BN, wgs, w_scale=scale, kc=2, swap=False, diag="no_sum")


@pytest.mark.parametrize("BM,BN,wgs,ksplit,scale", [(8, 64, 1, 2, "tensor"), (32, 64, 1, 4, "row"),
                                                     (64, 128, 2, 2, "block"), (16, 128, 1, 2, None)])
def test_the_gemm_splits_k_over_a_cluster_with_w_as_the_wgmmas_a(BM, BN, wgs, ksplit, scale):
    """W as A with the K split over a cluster (Config splits with dsmem): each CTA its part of every tile's K steps,
    every CTA but the last storing all of its f32 partial (BN x BM, 4 values of a thread's 8-column group a store)
    into the last's shared memory, which sums it and stores y through the epilogue tile as a whole tile's K would:
    no workspace (the plan's grid splits 1), room for the partials beside the tile and the ring."""
    from nvtma.kernels import gemm
    wd = gemm.F8 if scale else "bf16"
    sp = gemm.gemm_spec(BM, BN, wgs, w_dtype=wd, w_scale=scale, kc=2, ksplit=ksplit)
    assert (sp.info["swap"], sp.info["ksplit"]) == (True, ksplit)
    part = gemm.ksplit_bytes(BM, BN, ksplit, swap=True)
    assert part == (ksplit - 1) * BN * BM * 4
    room = gemm.deepest_stages(BM, BN, wd, scale == "block", kc=2, ksplit=ksplit)
    # the deepest ring beside the epilogue tile and the partials
    fixed = gemm.epi_rows(BM, BN) * BN * 4 + part
    per = gemm.stage_bytes(BM, BN, scale == "block", kc=2)
    assert room * per + fixed <= gemm.SMEM_BYTES - 1024 < (room + 1) * per + fixed
    compiled = sp.compile()
    assert compiled.records["kernels"]["gemm"]["launch"]["cluster"] == [ksplit, 1, 1]
    ptx = compiled.ptx
    R = BN // 64 // wgs  # m64 blocks a warpgroup: BM / 2 values of each a thread, 4 a store
    assert ptx.count("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32") == R * BM // 8
    assert "multicast" not in ptx and "red.global" not in ptx.split("st.async")[0]
    assert len(re.findall(r"mbarrier\.arrive\.shared::cluster\.b64", ptx)) == ksplit - 1  # the partials' slots
    g = gemm.Gemm()
    cfg = gemm.Config(BM, BN, wgs, ksplit, kc=2, dsmem=True)
    assert cfg.ksplit == ksplit and cfg.grid_splits == 1 and cfg._replace(dsmem=False).ksplit == 1
    plan, splits, _ = g.plan(BM, 4096, 7168, wd, scale, config=cfg)
    assert plan.info["ksplit"] == ksplit and splits == 1 and plan.info["swap"]
    tiles = 4096 // BN
    assert gemm.parts_for(splits, 4096, 7168, BN, wd, 132, 1, 1, 2, ksplit) == (
        tiles, (min(tiles, 132 // ksplit) * ksplit,))
    with pytest.raises(ValueError, match="dsmem splits K only over a cluster of 2 or 4 CTAs"):
        g.plan(BM, 4096, 7168, wd, scale, config=cfg._replace(splits=3))
    with pytest.raises(ValueError, match="not with ms, mc or kwg"):
        g.plan(BM, 4096, 7168, wd, scale, config=cfg, mc=2)
    if BM == 8:  # diagnostics "no_sum": no partial stored, every CTA stores y from its own
        ns = gemm.gemm_spec(BM, BN, wgs, w_scale=scale, kc=2, ksplit=ksplit, diag="no_sum").compile().ptx
        assert "st.async" not in ns and ns.count("wgmma.mma_async") == ptx.count("wgmma.mma_async")


def test_dsmem_candidates_fill_the_sms_in_one_wave():
    """W as A's cluster K split is a candidate up to M = 128 where pairs of CTAs on 64-row W tiles fit the SMs once
    (2112 and 4096 rows; 7168: none), rings of 2 and 4 K steps as deep as fit (at M = 65-128 of one too); not over 4
    CTAs (too few clusters of 4 fit the H200 at once)."""
    from nvtma.kernels import gemm
    for M, N, ks in ((1, 2112, {2}), (16, 4096, {2}), (64, 2112, {2}), (8, 7168, set()), (128, 2112, {2}),
                     (129, 2112, set())):
        cs = gemm.dsmem_candidates(M, N)
        assert {c.splits for c in cs} == ks
        assert {c.kc for c in cs} <= ({1, 2} if M > 64 else {2, 4})
        assert all(c.swap and c.dsmem and c.BN == 64 and c.BM >= M and c.stages >= 2 and
                   c.stages <= gemm.deepest_stages(c.BM, 64, kc=c.kc, ksplit=c.splits) for c in cs)
        assert set(cs) <= set(gemm.candidates(M, N, 7168, scale="tensor"))


def test_dsmem_store_takes_a_peer_address_and_its_barrier():
    """cpasync.dsmem_store (CuTe's CopyDsmemStoreOp): st.async of a 32-bit
    value or 2/4 of them into a peer CTA's shared memory, completing on the
    peer's mbarrier; a shared-memory address where a shared::cluster one
    belongs, a 16-bit value, or cluster_address of global memory is a build
    error naming the rule."""
    def make(value="v4", dst="cluster", buf="smem"):
        @dsl.kernel(block=(128,), cluster=(2, 1, 1))
        def k(g: dsl.Tensor("f32", (None,))):
            pool = lang.SMEMPool()
            t = pool.alloc((128, 4), "f32")
            bar = lang.TMABar(1)
            dsl.cluster_sync()
            v = {"v4": dsl.vector_of([dsl.Float32(1.0)] * 4), "f32": dsl.Float32(2.0),
                 "f16": dsl.Float16(1.0)}[value]
            me = dsl.thread_idx()
            peer = 1 - dsl.cluster_ctarank()
            where = (cpasync.cluster_address(t if buf == "smem" else g, [me, 0] if buf == "smem" else [me], peer)
                     if dst == "cluster" else cpasync.address_of(t, [me, 0]))
            cpasync.dsmem_store(v, where, bar.remote_view(peer).ptr(0))
            dsl.cluster_sync()
        return k
    assert "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32" in ptx(make())
    assert "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32" in ptx(make("f32"))
    build_error(make("f16"), rule="dsmem")
    build_error(make(dst="shared"), rule="dsmem")
    build_error(make(buf="global"), rule="cluster")


def test_gemm_takes_rows_past_a_launch_in_as_few_blocks_as_hold_them():
    """gemm.row_blocks: x of M rows in as few launches as hold M at `rows` a launch, covering M in order. Launches
    of CTA pairs (512, ROWS_A_LAUNCH) take blocks as even as 64-row units allow, the rest last (520 as 320 + 200:
    1.076x as fast as 512 + 8 in geometric mean, s49-rows-even); smaller ones (256, a given config's BM·ms) every
    block but the last of `rows` (300 rows as 152 + 148 took two 256-row tiles where 256 + 44 takes one)."""
    from nvtma.kernels import gemm
    assert gemm.ROWS_A_LAUNCH == 512
    assert gemm.row_blocks(0) == [(0, 0)] and gemm.row_blocks(256) == [(0, 256)] == gemm.row_blocks(256, 256)
    assert gemm.row_blocks(300) == [(0, 300)] and gemm.row_blocks(512) == [(0, 512)]
    assert gemm.row_blocks(520) == [(0, 320), (320, 520)]
    assert gemm.row_blocks(1100) == [(0, 384), (384, 768), (768, 1100)]
    assert gemm.row_blocks(520, 256) == [(0, 256), (256, 512), (512, 520)]
    for rows in (512, 256, 96):
        for M in list(range(1, 3000)) + [10241, 65537]:
            blocks = gemm.row_blocks(M, rows)
            sizes = [b - a for a, b in blocks]
            assert len(blocks) == -(-M // rows) and blocks[0][0] == 0 and blocks[-1][1] == M, M
            assert all(b[1] == c[0] for b, c in zip(blocks, blocks[1:])) and 1 <= sizes[-1] <= rows, M
            if rows > gemm.MAX_ROWS and len(sizes) > 1:  # even: 64-row units, no block more than 64 rows apart
                assert all(s == sizes[0] and s % 64 == 0 and s <= rows for s in sizes[:-1]), (M, sizes)
                assert sizes[0] - sizes[-1] < 64 * len(sizes), (M, sizes)
            else:
                assert all(s == rows for s in sizes[:-1]), (M, sizes)


def test_gemm_takes_257_to_512_rows_over_cta_pairs():
    """x of 257-512 rows is one launch: CTA pairs sharing each W tile (ms = 2), each CTA M / 2 rows rounded up
    to 32 (then to 8 among the candidates), the tile and split `_ranked`'s first for half the SMs, planned for
    every scaling and for bf16 x quantized first; the M <= 256 table is not read for it (its M = 256 entries
    are per 256-row tile); every candidate plans (block-scaled: BM a multiple of 32, as x's scale boxes take).
    More rows than a pair takes are refused by the pair configs, as is a GPU of one SM; a launch takes a given
    config's BM·ms rows (the ms option's where given; at most 512), or 256 where an option shapes the kernel
    (SHAPE_OPTIONS: kc=4, stages=6 or chains=2 planned at every M <= 256 where a pair refused them) or the GPU
    has one SM (the fuzzing campaign of session 45)."""
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    for M in (257, 300, 384, 449, 512):
        for N, K in ((4096, 7168), (24576, 1536), (2112, 7168), (520, 1040)):
            for wd, scale in ((gemm.F8, "tensor"), (gemm.F8, "row"), (gemm.F8, "block"), ("bf16", None)):
                cands = gemm.candidates(M, N, K, wd, scale=scale)
                assert cands == gemm.pair_candidates(M, N, K, wd, scale=scale)
                assert all(c.ms == 2 and c.swap and c.BM * 2 >= M and c.BM % (32 if scale == "block" else 8) == 0
                           for c in cands)
                for c in cands:  # (BM = 152 with block scales had been a candidate gemm_spec refuses)
                    g.plan(M, N, K, wd, scale, config=c)
                cfg = gemm.choose_config(M, N, K, wd, scale=scale)
                assert cfg == cands[0] and cfg.BM == -(-M // 64) * 32 and cfg.mc == 1 and not cfg.kwg
                sp, _, q = g.plan(M, N, K, wd, scale, quantize=wd != "bf16")
                assert sp.info["ms"] == 2 and sp.info["BM"] == cfg.BM and sp.info["x_scale"] != "fused"
                assert (q is not None) == (wd != "bf16") and not sp.info["xhalf"]
    assert [c.BM for c in gemm.pair_candidates(300, 4096, 7168)][::2] == [160, 152]  # rounded to 32, then 8
    # the table is not the pairs' (its M = 256 entries are a 256-row tile's): autotune times them, as off the table
    assert gemm._measured(256, 4096, 7168, 256, gemm.F8, 132, "tensor") is not None
    assert gemm._measured(480, 4096, 7168, 256, gemm.F8, 132, "tensor") is None
    for N in (512, 3072, 7168, 65536):  # a K split only within one wave of pairs (3072 x 8192 bf16: 26 ways)
        for K in (512, 8192):
            for wd in (gemm.F8, "bf16"):
                for sms in (132, 78, 2):
                    assert all(c.splits == 1 or -(-N // c.BN) * c.splits <= sms // 2
                               for c in gemm.pair_candidates(300, N, K, wd, sms)), (N, K, wd, sms)
    with pytest.raises(ValueError, match="257 to 512 rows"):
        gemm.pair_candidates(513, 4096, 7168)
    with pytest.raises(ValueError, match="257 to 512 rows"):
        gemm.candidates(1024, 4096, 7168)
    with pytest.raises(ValueError, match="M = 300 on a GPU of 1 SM: the CTA pairs .* run on two SMs"):
        gemm.Gemm().plan(300, 4096, 7168, gemm.F8, "tensor", sms=1)
    assert gemm.launch_rows(None, {}) == 512 and gemm.launch_rows(None, {"l2_w": "l2_256b", "pdl": True}) == 512
    assert gemm.launch_rows(None, {}, sms=1) == 256 and gemm.launch_rows(None, {}, sms=2) == 512
    assert all(gemm.launch_rows(None, {k: v}) == 256 for k, v in (("ms", 1), ("mc", 2), ("kwg", True),
                                                                    ("swap", False), ("kc", 4), ("stages", 6),
                                                                    ("chains", 2)))
    assert gemm.launch_rows((128, 128, 2, 1, 1, None, 2), {}) == 256
    assert gemm.launch_rows((256, 128, 2, 1, 1, None, 4), {}) == 512
    assert gemm.launch_rows((64, 64, 1, 1), {}) == 64
    assert gemm.launch_rows([160, 64, 1, 1, 1, None, 2], {"ms": 1}) == 160  # the option's ms, as the plan takes
    with pytest.raises(ValueError, match="ms='2': 1, 2 or 4"):  # (a product of strings before)
        gemm.launch_rows((160, 64, 1, 1), {"ms": "2"})
    for opts, N, K, wd, scale in (({"kc": 4}, 4096, 7168, gemm.F8, "tensor"), ({"stages": 6}, 7168, 2048, "bf16", None),
                                  ({"chains": 2}, 4096, 7168, gemm.F8, "tensor")):  # each plans at every M <= 256
        for M in (1, 16, 64, 128, 200, 256):
            gemm.Gemm(**opts).plan(M, N, K, wd, scale)


def test_the_cost_model_splits_k_only_within_one_wave():
    """`_ranked` splits K only as far as one wave of the SMs holds: its cost counted a split's epilogue once,
    where every share of every wave pays it, and put splits past a wave first at 656 of 2,156 problems off the
    table; all 57 of them measured took 1.15-7.4x as long as the same tile split within one wave or unsplit
    (H100, benchmarks/diag/split_waves.py, s49-split-waves); and the epilogue is charged 2·(8 + BM/16) K steps,
    whose picks were 1.23x as fast in geometric mean at 56 problems off the table (s49-split-cost). (The table's
    problems keep their configs: test_gemm_fuzz_options.)"""
    from nvtma.kernels import gemm
    for N in (512, 3072, 5120, 11008, 14336, 24576, 65536):
        for K in (1024, 8192, 16384):
            for wd in (gemm.F8, "bf16"):
                kblocks = gemm.k_steps(K, wd)
                for BM in (8, 64, 128, 256):
                    for sms in (132, 78, 2):
                        for c in gemm._ranked(BM, N, kblocks, wd, sms):
                            assert c.splits == 1 or -(-N // c.BN) * c.splits <= sms, (N, K, wd, BM, sms, c)
                for M in (8, 64, 128):
                    cfg = gemm.choose_config(M, N, K, wd, scale="tensor" if wd == gemm.F8 else None)
                    assert cfg.splits == 1 or -(-N // cfg.BN) * cfg.splits <= 132, (N, K, M, wd, cfg)  # (mc = ms 1)
    # (the slowest measured: 14336 x 8192, M = 128, per tensor, 32 ways 236 us against 42 unsplit)
    assert gemm.choose_config(128, 14336, 8192, gemm.F8, scale="tensor").splits == 1
    # the split epilogue's charge, 2·(8 + BM/16) K steps (s49-split-cost: 3072 x 1024, M = 8, per tensor, 2 ways
    # 4.43 us against 2.72 unsplit), and a long K still split (512 x 16384: 8 W tiles of 64 rows)
    assert gemm.choose_config(8, 3072, 1024, gemm.F8, scale="tensor").splits == 1
    assert gemm.choose_config(8, 512, 16384, gemm.F8, scale="tensor").splits > 4


def test_gemm_prepared_calls_launch_through_launchers_of_their_own(monkeypatch):
    """Each prepared call (and quantizer) packs its launches in a launcher of its own, the module's cubin shared:
    calls of two shapes on one kernel (a call past 512 rows: row blocks of 320 and 280 on one CTA-pair kernel)
    each keep their packed arguments instead of repacking them every launch."""
    torch = pytest.importorskip("torch")
    from nvtma.kernels import gemm
    monkeypatch.setattr(gemm, "_check_inputs", lambda *a, **k: None)  # (CPU tensors)
    g = gemm.Gemm()
    w, sw = torch.zeros(512, 1024, dtype=torch.float8_e4m3fn), torch.ones(1)
    calls = [g._prepare(torch.zeros(m, 1024, dtype=torch.bfloat16), w, sw, "tensor", None, None, None, None, {})
             for m in (320, 280)]
    spec = g.plan(320, 512, 1024, gemm.F8, "tensor", quantize=True)[0]
    assert spec.key == g.plan(280, 512, 1024, gemm.F8, "tensor", quantize=True)[0].key  # one kernel
    shared = g.module(spec).gemm
    assert calls[0].kernel is not calls[1].kernel and shared not in (calls[0].kernel, calls[1].kernel)
    assert calls[0].kernel.artifacts is calls[1].kernel.artifacts is g.module(spec)
    assert calls[0].quantize is not calls[1].quantize  # (quantizers of 320 and 280 rows, each its own)
    with pytest.raises(AttributeError, match="no kernel 'gemv'"):
        gemm._own_launcher(g.module(spec), "gemv")


def test_gemm_calls_its_kernels_on_each_block_of_rows(monkeypatch):
    """Gemm's x of more than a launch's rows, without a GPU: each of row_blocks' blocks goes to one prepared call with
    its rows of x and x_scale and its rows of y (out= too, at a row pitch of its own), y is returned whole
    (out itself where given), and a second call of the kind takes the prepared calls again, kept as one with the
    whole call: no planning or checks (launch_rows, _check_inputs) the second time; blocks of one length share a
    prepared call. The kernels here
    are a float32 stand-in; the GPU test runs the real ones."""
    torch = pytest.importorskip("torch")
    from nvtma.kernels import gemm
    seen, prepared, planned_into = [], [], []

    def prepare(self, x, w, w_scale, scale, x_scale, out, out_dtype, config, spec_options):
        prepared.append(x.shape[0])
        planned_into.append(out)

        def call(x, w, w_scale, x_scale, out):
            out = torch.empty(x.shape[0], w.shape[0], dtype=out_dtype or torch.bfloat16) if out is None else out
            seen.append((x.shape[0], x.data_ptr(), None if x_scale is None else x_scale.data_ptr(), out.data_ptr()))
            out.copy_((x.float() * x_scale[:, None]) @ w.float().t())
            return out
        return call
    monkeypatch.setattr(gemm.Gemm, "_prepare", prepare)
    checked, planned = [], []
    monkeypatch.setattr(gemm, "_check_inputs", lambda *a, **k: checked.append(a[1].shape[0]))  # (CPU tensors)
    monkeypatch.setattr(gemm, "launch_rows", lambda *a, launch_rows=gemm.launch_rows: planned.append(1) or
                        launch_rows(*a))
    g = gemm.Gemm()
    x, w, sx = torch.randn(520, 64), torch.randn(48, 64), torch.rand(520) + 0.5
    want = (x * sx[:, None]) @ w.t()
    wide = torch.full((520, 56), float("nan"))
    for rep in range(2):
        seen.clear()
        y = g(x, w, x_scale=sx, scale="tensor", out=wide[:, :48])
        assert y.data_ptr() == wide.data_ptr() and torch.allclose(y, want, atol=1e-4)
        assert wide[:, 48:].isnan().all()
        assert [s[0] for s in seen] == [320, 200]
        assert [s[1] for s in seen] == [x[a:].data_ptr() for a, _ in gemm.row_blocks(520)]
        assert [s[2] for s in seen] == [sx[a:].data_ptr() for a, _ in gemm.row_blocks(520)]
        assert [s[3] for s in seen] == [wide[a:].data_ptr() for a, _ in gemm.row_blocks(520)]
    assert prepared == [320, 200]  # planned once per kind of block, then taken again
    assert checked == [520] and planned == [1]  # the whole call checked and its launches' rows found once
    y = g(x, w, x_scale=sx, scale="tensor", out=torch.empty(520, 48))  # out of another pitch: another kind
    assert prepared == [320, 200] * 2 and torch.allclose(y, want, atol=1e-4)
    xl, sxl = torch.randn(1100, 64), torch.rand(1100) + 0.5  # y made here: [1100, 48]
    seen.clear()
    planned_into.clear()
    y = g(xl, w, x_scale=sxl, scale="tensor", out_dtype=torch.float32)
    assert planned_into == [None, None]  # (no y made only to plan the blocks)
    assert prepared[-2:] == [384, 332]  # the two blocks of 384 rows share one prepared call
    assert y.shape == (1100, 48) and torch.allclose(y, (xl * sxl[:, None]) @ w.t(), atol=1e-4)
    assert [s[0] for s in seen] == [384, 384, 332]
    seen.clear()
    y = g(x[:300], w, x_scale=sx[:300], scale="tensor", out_dtype=torch.float32)  # one launch (a pair's)
    assert torch.allclose(y, want[:300], atol=1e-4) and [s[0] for s in seen] == [300]
    seen.clear()
    y = g(x[:300], w, x_scale=sx[:300], scale="tensor", out_dtype=torch.float32, ms=1)  # an option setting the
    # cluster: blocks of 256
    assert torch.allclose(y, want[:300], atol=1e-4) and [s[0] for s in seen] == [256, 44]
    seen.clear()
    del prepared[:]
    y = g(x, w, x_scale=sx, scale="tensor", out_dtype=torch.float32, config=(128, 128, 2, 1))  # blocks of a
    # given config's BM·ms, those of 128 rows one prepared call
    assert torch.allclose(y, want, atol=1e-4) and [s[0] for s in seen] == [128] * 4 + [8] and prepared == [128, 8]
    # (the fuzzing campaign of session 45) a config given as a list, and one of fewer rows than M <= 256, are blocks
    # of it too (a list made the call's signature unhashable: no blocks, and the plan refused M = 520; M = 200 was
    # refused); an option shaping the kernel (kc) takes blocks of 256; the pair's ms=1 beside a config of a pair
    # blocks of its BM; a GPU of one SM blocks of 256 (its plan refused the pairs)
    for M, kw, sizes in ((520, dict(config=[128, 128, 2, 1]), [128] * 4 + [8]),
                         (200, dict(config=(128, 128, 2, 1)), [128, 72]),
                         (520, dict(kc=2), [256, 256, 8]),
                         (300, dict(config=(160, 64, 1, 1, 1, None, 2), ms=1), [160, 140]),
                         (300, dict(config=(160, 64, 1, 1, 1, None, 2)), [300])):
        seen.clear()
        y = g(x[:M], w, x_scale=sx[:M], scale="tensor", out_dtype=torch.float32, **kw)
        assert torch.allclose(y, want[:M], atol=1e-4) and [s[0] for s in seen] == sizes, (M, kw)
    g = gemm.Gemm()
    g._sms[None] = 1  # (the CPU tensors' device)
    for M, sizes in ((300, [256, 44]), (520, [256, 256, 8])):
        seen.clear()
        y = g(x[:M], w, x_scale=sx[:M], scale="tensor", out_dtype=torch.float32)
        assert torch.allclose(y, want[:M], atol=1e-4) and [s[0] for s in seen] == sizes, M


def test_block_scales_are_stored_for_whole_tma_boxes():
    """x's transposed 1x128 block-scale storage has M rounded up to a power
    of two from 32 columns (a stage's TMA box of max(BM, 32) of them then
    lies within it), a multiple of 4 past 256; a view of such storage (or of
    any whose rows are 16-byte multiples past M, or a 16-byte aligned block
    of its rows) goes to the kernel as it is, and DeepGEMM's [M, K/128]
    layout as a zero-padded copy."""
    torch = pytest.importorskip("torch")
    from nvtma.kernels import gemm
    assert [gemm.block_scale_columns(M) for M in (1, 8, 32, 33, 64, 100, 128, 129, 256, 257, 300)] == \
        [32, 32, 32, 64, 64, 128, 128, 256, 256, 260, 300]
    sx = torch.arange(1.0, 16.0).reshape(5, 3)  # [M, K/128]
    t = gemm.block_scales_for_kernel(sx)  # a copy: [3, 32], zeros past M
    assert t.shape == (3, 32) and torch.equal(t[:, :5], sx.t()) and not t[:, 5:].any()
    st = torch.zeros(3, 8)
    st[:, :5] = sx.t()
    v = gemm.block_scales_for_kernel(st[:, :5].t())  # a view of 16-byte rows: the storage itself
    assert v.shape == (3, 8) and v.data_ptr() == st.data_ptr()
    assert gemm.block_scales_for_kernel(torch.zeros(3, 6)[:, :5].t()).shape == (3, 32)  # 24-byte rows: a copy
    # a block of the view's rows (a call past a launch's rows): from its first column, where that is 16-byte
    # aligned; else a copy
    big = torch.arange(3.0 * 700).reshape(3, 700)  # storage of M = 700
    for a, b in gemm.row_blocks(700):  # (0, 384), (384, 700)
        v = gemm.block_scales_for_kernel(big[:, :700].t()[a:b])
        assert v.data_ptr() == big[:, a:].data_ptr() and v.shape == (3, 700 - a) and torch.equal(v[:, :b - a],
                                                                                                big[:, a:b])
    v = gemm.block_scales_for_kernel(big.t()[2:9])  # an address 8-byte aligned: a copy of its rows
    assert v.data_ptr() != big.data_ptr() and v.shape == (3, 32) and torch.equal(v[:, :7], big[:, 2:9])
    assert not v[:, 7:].any()


def test_gemm_plans_table_entries_of_x_as_a_with_every_option():
    """Where the table gives x as the wgmmas' A (bf16 7168 x 2048 at M = 1,
    e4m3 4096 x 7168 at M = 64): a kc option keeps the ring within what fits
    with x's pad rows (it sized the ring as if W were A, and gemm_spec refused
    it); options x as A does not take (x or W multicast, kwg, TMA stores of y,
    swap=True) and bf16 x quantized inside the GEMM (quantize="fused") plan
    the problem's best config with W as A instead, not a ValueError or a
    silent quantize_x first; a given x-as-A config with them is refused."""
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    assert not gemm.choose_config(1, 7168, 2048, "bf16").swap
    for kc in (1, 2, 4, 8):
        sp = g.plan(1, 7168, 2048, "bf16", None, kc=kc)[0]
        assert sp.info["swap"] is False and sp.info["kc"] == kc
        assert 2 <= sp.info["stages"] <= gemm.deepest_stages(8, sp.info["BN"], "bf16", kc=kc, swap=False)
    assert not gemm.choose_config(64, 4096, 7168, gemm.F8, scale="row").swap
    for opts in (dict(mc=2), dict(ms=2), dict(store="tma"), dict(swap=True)):
        sp = g.plan(64, 4096, 7168, gemm.F8, "row", **opts)[0]
        assert sp.info["swap"] is True and all(sp.info.get(k, v) == v for k, v in opts.items() if k != "store")
    sp, _, q = gemm.Gemm(quantize="fused").plan(64, 4096, 7168, gemm.F8, "row", quantize=True)
    assert sp.info["swap"] is True and sp.info["x_scale"] == "fused" and q is None
    xa = gemm.Config(64, 16, 1, 1, 1, 5, 1, False, 4, False)
    with pytest.raises(ValueError, match="x as the wgmmas' A"):
        gemm.Gemm(quantize="fused").plan(64, 4096, 7168, gemm.F8, "row", quantize=True, config=xa)
    with pytest.raises(ValueError, match="x as the wgmmas' A .swap=False. takes no mc"):
        g.plan(64, 4096, 7168, gemm.F8, "row", config=xa, mc=2)
    # and swap=False where the table has W as A: the first x-as-A candidate
    assert gemm.choose_config(8, 7168, 2048, gemm.F8, scale="tensor").swap
    sp = g.plan(8, 7168, 2048, gemm.F8, "tensor", swap=False)[0]
    assert sp.info["swap"] is False and sp.info["BM"] == 8
    # a table entry with the K split over a cluster (dsmem, 2112 x 7168 at M = 16) gives way to the best-ranked
    # config without it where an option asks for x or W multicast or kwg; bf16 x quantized inside takes 128-row
    # tiles split over the grid (fused_config), unless the config is given
    assert gemm.choose_config(16, 2112, 7168, gemm.F8, scale="row").dsmem
    for opts in (dict(mc=2), dict(ms=2)):
        sp = g.plan(16, 2112, 7168, gemm.F8, "row", **opts)[0]
        assert sp.info["ksplit"] == 1 and all(sp.info[k] == v for k, v in opts.items())
    gf = gemm.Gemm(quantize="fused")
    sp, splits, q = gf.plan(16, 2112, 7168, gemm.F8, "row", quantize=True)
    assert (sp.info["ksplit"], sp.info["BN"], splits, sp.info["x_scale"], q) == (1, 128, 7, "fused", None)
    sp, splits, q = gf.plan(16, 2112, 7168, gemm.F8, "row", quantize=True,
                            config=gemm.choose_config(16, 2112, 7168, gemm.F8, scale="row"))
    assert (sp.info["ksplit"], sp.info["kc"], splits, sp.info["x_scale"], q) == (2, 1, 1, "fused", None)
    # Gemm()'s "auto": bf16 x quantized first there (per tensor or row, with split or 64-row tiles), inside at
    # unsplit 128-row tiles (16384 x 16384) and with block scales
    assert g.plan(16, 2112, 7168, gemm.F8, "row", quantize=True)[2] is not None
    assert g.plan(1, 7168, 2048, gemm.F8, "tensor", quantize=True)[2] is not None
    assert g.plan(1, 16384, 16384, gemm.F8, "tensor", quantize=True)[2] is None
    assert g.plan(1, 7168, 2048, gemm.F8, "block", quantize=True)[2] is None


def test_x_as_a_default_chains_fit_the_registers():
    """swap=False at 4 consumer warpgroups (102 registers a thread): the
    default accumulator chains stay within the registers (two chains of a
    64-column accumulator with row scales spilled), so the kernel builds
    without local memory."""
    import warnings

    from nvtma.compiler import RegisterBudgetWarning
    from nvtma.kernels import gemm
    sp = gemm.gemm_spec(200, 64, 4, swap=False, w_scale="row")
    assert sp.info["chains"] == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegisterBudgetWarning)
        c = sp.compile()
    try:
        assert not re.search(r"\b(STL|LDL)(\.\w+)*\s", c.sass())
    except FileNotFoundError:
        pass


@pytest.mark.parametrize("opts", [dict(kc=0), dict(kc=9), dict(kc=2, mc=2, BM=16), dict(kc=3, ms=2, BM=16),
                                  dict(kc=2, x_scale="fused"), dict(kc=2, xhalf=True, BM=64),
                                  dict(kc=2, kwg=True, wgs=2)])
def test_the_gemm_takes_stages_of_several_k_steps_where_it_can(opts):
    """kc is 1-8, and above 1 not with x quantized in the kernel, x
    multicast, kwg or half boxes of x, and with W multicast (the M split)
    a multiple of its CTAs: a ValueError naming kc."""
    from nvtma.kernels import gemm
    opts = dict(opts)
    BM, wgs = opts.pop("BM", 8), opts.pop("wgs", 1)
    opts.setdefault("w_scale", "tensor")
    with pytest.raises(ValueError, match="kc="):
        gemm.gemm_spec(BM, 64, wgs, **opts)


def test_gemm_plans_keep_a_configs_ring_in_k_steps_across_kc():
    """Gemm's plan: a kc option converts the config's stages so its ring
    keeps its K steps (as many as fit); x quantized inside the GEMM, x or W
    multicast and kwg take the config at one K step a stage; xhalf=True
    ("wherever the kernel can") leaves kernels of several K steps whole
    boxes; block-scaled kc > 1 whose partials would not fit the registers
    is refused, and not a candidate."""
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    cfg = gemm.Config(8, 64, 1, 1, 1, 16)
    for kc, stages in ((2, 8), (4, 4), (1, 16)):
        sp = g.plan(1, 7168, 2048, gemm.F8, "tensor", config=cfg, kc=kc)[0]
        assert (sp.info["kc"], sp.info["stages"]) == (kc, stages)
    k4 = cfg._replace(kc=4, stages=4)
    assert g.plan(1, 7168, 2048, gemm.F8, "tensor", config=k4, kc=1)[0].info["stages"] == 16
    assert gemm.with_kc(k4, 1) == cfg and gemm.with_kc(cfg, 4) == k4
    fused = gemm.Gemm(quantize="fused").plan(1, 7168, 2048, gemm.F8, "tensor", quantize=True, config=k4)[0]
    assert fused.info["kc"] == 1 and fused.info["x_scale"] == "fused"
    assert gemm.Gemm(mc=2).plan(64, 7168, 2048, gemm.F8, "tensor", config=(64, 64, 1, 1, 1, 4, 1, False, 2)
                                )[0].info["kc"] == 1
    half = gemm.Gemm(xhalf=True)
    c128 = gemm.Config(128, 64, 1, 1, 1, 4, 1, False, 2)
    assert not half.plan(100, 7168, 2048, gemm.F8, "tensor", config=c128)[0].info["xhalf"]
    assert half.plan(100, 7168, 2048, gemm.F8, "tensor", config=c128, kc=1)[0].info["xhalf"]
    with pytest.raises(ValueError, match="partial for each of the 4 K steps"):
        gemm.gemm_spec(128, 64, 1, w_scale="block", kc=4, stages=2)
    assert not [c for c in gemm.candidates(100, 24576, 1536, scale="block")
                if gemm.live_registers(c.BM, c.BN, c.wgs, c.kwg, c.kc, True) > 255]


def test_the_gemm_candidates_take_stages_of_several_k_steps():
    """gemm.candidates adds 2 and 4 K steps a stage to the two best-ranked
    configs, as ranked and unsplit with the deep ring, each at the ring's K
    steps (at least two stages, where two fit) and with the deepest ring, no
    share empty, block scales too; not where K is not a whole number of
    128-byte K steps (the [K / bk, rows, bk] view needs it); parts_for counts
    their stages."""
    from nvtma.kernels import gemm
    for M, N, K, wd, scale in ((1, 4096, 7168, gemm.F8, "tensor"), (16, 7168, 2048, gemm.F8, "tensor"),
                               (128, 24576, 1536, gemm.F8, "tensor"), (8, 7168, 2048, "bf16", None),
                               (1, 4096, 7168, gemm.F8, "block")):
        cands = gemm.candidates(M, N, K, wd, scale=scale)
        kcs = [c for c in cands if c.kc > 1]
        assert kcs and len(cands) == len(set(cands))
        kblocks = gemm.k_steps(K, wd)
        for c in kcs:
            room = gemm.deepest_stages(c.BM, c.BN, wd, scale == "block", kc=c.kc, swap=c.swap)
            assert c.mc == 1 and not c.kwg and c.splits <= -(-kblocks // c.kc) and 2 <= c.stages <= room
            assert c.ms == 1 or not c.swap and c.kc % c.ms == 0  # (x as A over CTA pairs: half the K steps each)
        top = gemm._ranked(cands[0].BM, N, kblocks, wd, 132)[0]
        room = gemm.deepest_stages(top.BM, top.BN, wd, scale == "block", kc=2)
        if room >= 2:
            assert top._replace(kc=2, stages=max(2, min(room, gemm.max_stages(top.BM, top.BN, wd) // 2))) in kcs
            assert top._replace(kc=2, stages=room) in kcs
    assert not [c for c in gemm.candidates(1, 4096, 7000, scale="tensor") if c.kc > 1]
    assert gemm.parts_for(0, 4096, 2048, 64, kc=4) == (132, (132,))  # 64 tiles x 4 stages: 256 > 132
    assert gemm.parts_for(0, 64, 2048, 64, kc=4) == (4, (4,))  # one tile of 4 stages: 4 shares


def test_the_gemm_candidates_take_x_as_the_wgmmas_a():
    """gemm.candidates adds x as the wgmmas' A (swap=False) with x's tile M
    rounded up to 8 rows, W tiles of the fewest multiple of 8 rows that fill
    the SMs in one wave and in two, unsplit, at 2, 4 and 8 K steps a stage
    with the deepest ring up to 16 and a ring of 16 K steps: each one
    gemm_spec builds (with block scales, M > 32 only, W tiles that keep
    within W's blocks, and a K step a stage too); past M = 64 also split
    over CTA pairs sharing W (ms = 2); past M = 128 block-scaled only,
    over pairs of two warpgroups a CTA; up to M = 128 also with each W
    tile's K steps split over a 2-CTA cluster (splits 2), its tiles filling
    the clusters in one wave; none past M = 256 or where
    K is not whole K steps, nor whose accumulator (and W's row scales, row-scaled, or
    block-scaled partials) overflow a thread. A table
    entry of x as A takes x's tile M rounded up to 8 rows, its ring as deep
    as that tile's shared memory lets it be."""
    from nvtma.kernels import gemm
    for M, N, K, wd, BNs, kBN in ((1, 4096, 7168, gemm.F8, (32, 16), 64), (77, 2112, 7168, gemm.F8, (16, 8), 32),
                                  (40, 24576, 1536, gemm.F8, (192, 96), None), (32, 7168, 2048, "bf16", (56, 32), 112)):
        every = [c for c in gemm.candidates(M, N, K, wd, scale=None if wd == "bf16" else "tensor")
                 if not c.swap and c.ms == 1]
        xa = [c for c in every if c.splits == 1]
        BM = -(-M // 8) * 8
        ks = [c for c in every if c.splits != 1]  # the K split: 66 clusters of two, one wave of W tiles (24576
        # rows: none of 256 or fewer)
        assert {(c.BN, c.splits) for c in ks} == ({(kBN, 2)} if kBN else set())
        for c in ks:
            room = min(16, gemm.deepest_stages(BM, c.BN, wd, kc=c.kc, swap=False, ksplit=2))
            assert c.stages in (room, min(room, 16 // c.kc))
            assert gemm.Gemm().plan(M, N, K, wd, None if wd == "bf16" else "tensor", config=c)[0].info["ksplit"] == 2
        assert {c.BN for c in xa} == set(BNs) and {c.kc for c in xa} <= {2, 4, 8}
        # each W tile and kc with its deepest ring and a ring of 16 K steps (where shallower)
        assert {(c.BN, c.kc, c.stages) for c in xa} == {
            (BN, kc, st) for BN in BNs for kc in (2, 4, 8)
            for room in [min(16, gemm.deepest_stages(BM, BN, wd, kc=kc, swap=False))]
            for st in (room, min(room, 16 // kc)) if st >= 2}
        for c in xa:
            assert (c.BM, c.wgs, c.splits) == (BM, -(-BM // 64), 1)
            room = min(16, gemm.deepest_stages(BM, c.BN, wd, kc=c.kc, swap=False))
            assert c.stages in (room, min(room, 16 // c.kc))
            assert gemm.Gemm().plan(M, N, K, wd, None if wd == "bf16" else "tensor", config=c)[0].info["swap"] is False
    # block scales (M > 32): W tiles of 8-256 rows a power of two (none straddles W's blocks), kc = 1 too, x's
    # tile a multiple of 32 rows (a stage's scales whole 128-byte rows), each partial within the registers
    for M, N, BM, BNs in ((33, 4096, 64, (32, 16)), (40, 24576, 64, (256, 128)), (100, 7168, 128, (64, 32))):
        xa = [c for c in gemm.candidates(M, N, 7168, scale="block") if not c.swap and c.ms == 1 and c.splits == 1]
        assert xa and {c.BN for c in xa} <= set(BNs) and {c.kc for c in xa} <= {1, 2, 4, 8}
        for c in xa:
            assert (c.BM, c.wgs) == (BM, -(-BM // 64))
            assert gemm.live_registers(BM, c.BN, c.wgs, kc=c.kc, block_scaled=True, swap=False, row_scaled=False) <= \
                gemm.thread_registers(c.wgs)
            assert gemm.Gemm().plan(M, N, 7168, gemm.F8, "block", config=c)[0].info["swap"] is False
    assert {c.kc for c in gemm.candidates(128, 24576, 1536, scale="block") if not c.swap and c.ms == 1} == {1}
    assert not [c for c in gemm.candidates(32, 4096, 7168, scale="block") if not c.swap]
    assert not [c for c in gemm.candidates(129, 4096, 7168, scale="tensor") if not c.swap]
    assert not [c for c in gemm.candidates(1, 4096, 7000, scale="tensor") if not c.swap]
    # two warpgroups' threads have 168 registers: W tiles of 192 rows (a 96-register accumulator) fit them, and
    # with row scales (48 more, loaded before the K loop) do not: offered per tensor and bf16, not per row
    for scale, wd, BNs in (("tensor", gemm.F8, {192, 96}), (None, "bf16", {192, 96}), ("row", gemm.F8, {96})):
        assert {c.BN for c in gemm.candidates(100, 24576, 1536, wd, scale=scale) if not c.swap and c.ms == 1} == BNs
    # the M split (M > 64): CTA pairs, each its half of M in one warpgroup, W's tile multicast to both; W tiles that
    # fill the pairs in one, two and three waves, kc a multiple of 2 (each CTA loads half a stage's K steps of W)
    # or 1 with W tiles of whole pairs of 8-row swizzle atoms; none at M <= 64
    for M, N, scale, BM, BNs in ((128, 4096, "tensor", 64, {64, 32, 24}), (100, 24576, "block", 64, {128}),
                                 (77, 2112, "row", 40, {32, 16})):
        ms2 = [c for c in gemm.candidates(M, N, 1536, scale=scale) if not c.swap and c.ms == 2]
        assert {c.BN for c in ms2} == BNs
        for c in ms2:
            assert (c.BM, c.wgs, c.splits) == (BM, 1, 1) and (c.kc % 2 == 0 if c.kc > 1 else c.BN % 16 == 0)
            sp = gemm.Gemm().plan(M, N, 1536, gemm.F8, scale, config=c)[0]
            assert (sp.info["swap"], sp.info["ms"], sp.info["kc"], sp.info["BM"]) == (False, 2, c.kc, BM)
    assert not [c for c in gemm.candidates(64, 4096, 7168, scale="tensor") if c.ms == 2 and not c.swap]
    # past M = 128, block-scaled: pairs of 2 warpgroups a CTA (x's half of M a multiple of 32 rows)
    for M, BM in ((129, 96), (200, 128), (256, 128)):
        xa = [c for c in gemm.candidates(M, 4096, 7168, scale="block") if not c.swap]
        assert xa and {(c.BM, c.wgs, c.ms) for c in xa} == {(BM, 2, 2)}
    gemm.gemm_spec(104, 192, 2, kc=2, swap=False, w_scale="tensor", x_scale="token")
    with pytest.raises(ValueError, match="BN/4 W row scales, and ~32 more, exceed the 168"):
        gemm.gemm_spec(104, 192, 2, kc=2, swap=False, w_scale="row", x_scale="token")
    key = (4096, 7168, 64, "tensor")
    old = gemm.MEASURED.get(key)
    try:
        gemm.MEASURED[key] = (32, 1, 1, 1, 9, 1, False, 2, False)
        assert gemm.choose_config(64, 4096, 7168, scale="tensor") == gemm.Config(64, 32, 1, 1, 1, 9, 1, False, 2, False)
        assert gemm.choose_config(40, 4096, 7168, scale="tensor") == gemm.Config(40, 32, 1, 1, 1, 9, 1, False, 2, False)
        # M = 48: x's tile of 48 rows and 48 pad rows a stage (one K step's): 8 stages fit, not the table's 9
        assert gemm.deepest_stages(48, 32, kc=2, swap=False) == 8 < gemm.deepest_stages(64, 32, kc=2, swap=False)
        assert gemm.choose_config(48, 4096, 7168, scale="tensor").stages == 8
        # with the M split, each CTA's tile is its half of M rounded up to 8 rows
        gemm.MEASURED[key] = (32, 1, 1, 1, 9, 2, False, 2, False)
        assert gemm.choose_config(60, 4096, 7168, scale="tensor") == gemm.Config(32, 32, 1, 1, 1, 9, 2, False, 2,
                                                                                  False)
    finally:
        if old is None:
            del gemm.MEASURED[key]
        else:
            gemm.MEASURED[key] = old


def test_the_gemm_operand_views_pass_the_runtime_checks():
    """A kernel of several K steps a stage records W's and x's strides as
    [bk, ?, 1] (so the launch takes the [K / bk, rows, bk] view of a row-major
    [rows, K] tensor, and refuses a contiguous [K / bk, rows, bk] one), and
    the view's descriptor encodes (dims bk, rows, K / bk; byte strides K, 128)."""
    from nvtma.kernels import gemm
    from nvtma.runtime import args
    from nvtma.runtime.errors import LaunchError
    N, K = 4096, 7168
    c = gemm.gemm_spec(8, 64, 1, stages=4, w_scale="tensor", kc=4).compile()
    params = c.kernels["gemm"]["params"]
    w = next(p for p in params if p["kind"] == "memref")
    assert w["strides"] == [128, None, 1], w
    view = args.TensorInfo(1 << 20, (K // 128, N, 128), (128, K, 1), "f8E4M3FN", 8)
    args.check_memref(view, w, "w")
    with pytest.raises(LaunchError, match="stride"):
        args.check_memref(args.TensorInfo(1 << 20, (K // 128, N, 128), (N * 128, 128, 1), "f8E4M3FN", 8), w, "w")
    d = c.descriptor_records("gemm")[0]
    got = args.descriptor_params(view, d, "w")
    assert (got["global_dim"], got["global_strides"], list(d["box_dim"])) == ([128, N, K // 128], [K, 128],
                                                                              [128, 64, 4])
    assert len(args.encode_descriptor(view, d, "w")) == 128


def test_gemm_quantize_refuses_what_its_kernel_cannot_read():
    """Gemm.quantize (public: bf16 x -> e4m3 x and scales) refuses, with a
    LaunchError naming the rule, x its kernel would read or write past or
    misaligned (it reads 16 bytes a thread: K = 1100 faulted the H200's
    context with a misaligned address), and a granularity it has not."""
    torch = pytest.importorskip("torch")
    from nvtma.kernels import gemm
    from nvtma.runtime.errors import LaunchError
    g = gemm.Gemm()
    for x, granularity, rule, match in (
            (torch.zeros(4, 1100, dtype=torch.bfloat16), "token", "shape", "K = 1100"),
            (torch.zeros(4, 1024, dtype=torch.float16), "token", "dtype", "bf16"),
            (torch.zeros(4, 1024, dtype=torch.bfloat16), "row", "scale", "granularity='row'"),
            (torch.zeros(4, 4, 1024, dtype=torch.bfloat16), "block", "shape", "2-D"),
            (torch.zeros(4, 1024, dtype=torch.bfloat16), "block", "device", "not a GPU")):
        with pytest.raises(LaunchError, match=match) as e:
            g.quantize(x, granularity)
        assert e.value.rule == rule, (x.shape, granularity, e.value.rule)


def test_a_kc_call_makes_w_s_view_once_per_w_and_keeps_no_w_alive():
    """A prepared call of a kernel of several K steps a stage makes W's
    [K / bk, rows, bk] view once per W tensor (x's every call: a model's
    layers call one prepared call with their own weights in turn), and holds
    W's bytes no longer than the caller holds W."""
    import gc
    import weakref
    torch = pytest.importorskip("torch")
    from nvtma.kernels import gemm
    got = []
    call = gemm._Prepared(lambda *a, **k: got.append(a), (lambda stream: (None, None), None, 1), (1,),
                          lambda: torch.empty(2, 3), 0, None, False, views=True)
    w = torch.arange(3 * 256, dtype=torch.float32).reshape(3, 256).to(torch.bfloat16)
    other = w.flip(0).contiguous()
    x = torch.ones(2, 256, dtype=torch.bfloat16)
    for t in (w, other, w, other):
        call(x, t, None, None, None)
    (w1, x1), (o1, _), (w2, x2), (o2, _) = (a[:2] for a in got)
    assert w1 is w2 and o1 is o2 and x1 is not x2
    assert w1.shape == (4, 3, 64) and w1.stride() == (64, 256, 1) and torch.equal(w1, gemm.gemm_operand_view(w))
    assert torch.equal(o1, gemm.gemm_operand_view(other))
    old = weakref.ref(w1)
    w.data = torch.zeros_like(w)  # the same tensor, other bytes: a new view, the old one dropped
    call(x, w, None, None, None)
    assert got[-1][0] is not w1 and not got[-1][0].any()
    del got[:4], w1, w2
    gc.collect()
    assert old() is None
    # a W's view goes with it
    view = weakref.ref(got[-1][0])
    got.clear()
    del x1, x2, o1, o2, w
    gc.collect()
    assert view() is None and len(call.w_views) == 1
    del other, t
    gc.collect()
    assert call.w_views == {}


# --------------------------------------------------------------------------- what a wgmma reads (audit)

def _loaded_pair(a, tile_a, b, tile_b, wait=False):
    """Descriptors of A's and B's tiles, each one 128B-swizzled TMA load (waited for with `wait`)."""
    pool = lang.SMEMPool()
    la = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, tile_a, swizzle="swizzle_128b")
    lb = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), b, tile_b, swizzle="swizzle_128b")
    sa, sb = pool.alloc_for(la), pool.alloc_for(lb)
    bar = lang.TMABar(1)
    with lang.WarpRole(0):
        cpasync.copy(la, [0, 0], sa, tma_bar_ptr=bar.at(0))
        cpasync.copy(lb, [0, 0], sb, tma_bar_ptr=bar.at(0))
    if wait:
        bar.wait(0, 0)
    return wgmma.SmemDescriptor(sa), wgmma.SmemDescriptor(sb)


@pytest.mark.parametrize("case,message", [
    ("b-rows", "the wgmma reads 128 rows of B from row 0 of a 64-row tile, past its buffer's"),
    ("a-rows", "the wgmma reads 64 rows of A from row 64 of a 96-row tile, past its buffer's"),
    ("box-split", "the wgmma reads rows 128-191 of A, across its boxes of 160 rows"),
])
def test_a_wgmma_reads_inside_its_tile(case, message):
    """B with fewer rows than the accumulator's n, A's 64 rows from row_block(64) of a 96-row tile, and A's rows
    across boxes that also split K (box after box: row 160 is not 160 rows on) built, and read the next buffer,
    past shared memory or another box's K."""
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("bf16", (320, 128)), b: dsl.Tensor("bf16", (64, 64)), *, case):
        da, db = _loaded_pair(a, (96, 64) if case != "box-split" else (320, 128), b, (64, 64))
        if case == "b-rows":
            wgmma.mma_async(wgmma.Accumulator(128), da.k_block(0), db.k_block(0))
        else:
            wgmma.mma_async(wgmma.Accumulator(64), da.row_block(64 if case == "a-rows" else 128).k_block(0),
                            db.k_block(0))

    assert message in str(build_error(k, "wgmma", case=case))


def test_a_row_block_past_a_row_box_starts_at_its_box():
    """A [320, 128] bf16 tile copied as boxes of [160, 64]: row 160 is box (1, 0), 2 boxes of 160 x 128 bytes on
    (40960 bytes, 2560 descriptor units), not 160 rows of 128 bytes on (box (0, 1))."""
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("bf16", (320, 128)), y: dsl.Tensor("i64", (1,))):
        la = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, (320, 128), swizzle="swizzle_128b")
        s = lang.SMEMPool().alloc_for(la)  # boxes of [160, 64]
        bar = lang.TMABar(1)
        with lang.WarpRole(0):
            cpasync.copy(la, [0, 0], s, tma_bar_ptr=bar.at(0))
        d = wgmma.SmemDescriptor(s)
        y[0] = (d.row_block(160).desc - d.desc).bitcast(dsl.Int64)

    assert "arith.constant 2560 : i64" in str(k.build().ir)


@pytest.mark.parametrize("case", ["warp-role", "one-thread", "half-warpgroup"])
def test_wgmma_is_issued_by_whole_warpgroups(case):
    """wgmma's .sync.aligned instructions in one warp's role, one thread's branch or a block of 64 threads
    built (a hang or undefined behaviour on the GPU)."""
    @dsl.kernel(block=lambda case, **_: (64,) if case == "half-warpgroup" else (128,))
    def k(a: dsl.Tensor("bf16", (64, 64)), *, case):
        if case == "warp-role":
            with lang.WarpRole(0):
                wgmma.fence()
        elif case == "one-thread":
            with dsl.if_(dsl.thread_idx() == 0):
                wgmma.commit_group()
        else:
            wgmma.wait_group(0)

    assert "issued by all 128 threads of a warpgroup" in str(build_error(k, "warpgroup", case=case))


def test_a_registers_bits_not_their_values():
    """tf32 A from registers given as Float32 values was converted to integers (cvt.rzi) before the wgmma."""
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("f32", (64, 8)), b: dsl.Tensor("f32", (64, 32)), c: dsl.Tensor("f32", (64, 64))):
        sb = _loaded_tile(b, (64, 32))
        r0, l4 = dsl.warp_idx() * 16 + dsl.lane_idx() // 4, dsl.lane_idx() % 4
        regs = [a[r0, l4], a[r0 + 8, l4], a[r0, l4 + 4], a[r0 + 8, l4 + 4]]
        acc = wgmma.mma_async(wgmma.Accumulator(64), regs, wgmma.SmemDescriptor(sb).k_block(0), a_type="tf32",
                              b_type="tf32")
        wgmma.commit_group()
        wgmma.wait_group(0)
        c[0, dsl.thread_idx() % 64] = acc[0]

    text = ptx(k)
    assert "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32" in text and "cvt.rzi" not in text


def test_a_descriptors_swizzle_is_recorded_and_its_start_on_the_swizzle_repeat():
    """SmemDescriptor(tile, swizzle=) on a buffer no atom had filled did not record the swizzle, so an atom of
    another swizzle then filled it; a descriptor of rows(4, ...) of a 128B-swizzled tile started mid-repeat
    with base offset 0."""
    @dsl.kernel(block=(128,))
    def other(a: dsl.Tensor("bf16", (64, 32))):
        s = lang.SMEMPool().alloc((64, 32), "bf16")
        wgmma.SmemDescriptor(s, swizzle="swizzle_64b")
        ld = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, (64, 32), swizzle="swizzle_128b")
        bar = lang.TMABar(1)
        with lang.WarpRole(0):
            cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0))

    assert "this buffer holds swizzle_64b-swizzled data" in str(build_error(other, "swizzle"))

    @dsl.kernel(block=(128,))
    def mid(a: dsl.Tensor("bf16", (64, 64))):
        wgmma.SmemDescriptor(_loaded_tile(a).rows(4, 32))

    assert "starts on a 1024-byte repeat of the swizzle" in str(build_error(mid, "descriptor"))


def test_a_ring_stage_picked_at_run_time_starts_on_the_swizzle_repeat():
    """Stages of 512 bytes in a 128B-swizzled ring: stage 1 starts half-way into a 1024-byte repeat, where a
    descriptor (base offset 0) reads other rows."""
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("bf16", (64, 64))):
        ring = lang.SMEMPool().alloc((2, 4, 64), "bf16", swizzle="swizzle_128b")
        wgmma.SmemDescriptor(ring.stage(dsl.block_idx() % 2))

    assert "a stage of a ring of 512-byte swizzle_128b stages" in str(build_error(k, "descriptor"))


@pytest.mark.parametrize("opts,message", [
    (dict(ksplit=2), "ksplit=2: not a Gemm option"),
    (dict(diag="no_mma"), "diag='no_mma': not a Gemm option"),
    (dict(profile=1), "profile=1: not a Gemm option"),
    (dict(kc=0), "kc=0: K steps a stage, 1 to 8"),
])
def test_gemm_options_that_built_a_wrong_kernel_are_refused(opts, message):
    """(thirty-fifth session's audit of the host API) ksplit beside a grid split stored y from a quarter of K;
    diag options reached the call (and one left the shared workspace dirty); kc=0 divided by 0."""
    from nvtma.kernels import gemm
    with pytest.raises(ValueError) as e:
        gemm.Gemm().plan(128, 4096, 7168, gemm.F8, "tensor", **opts)
    assert message in str(e.value), str(e.value)


def test_an_ms_option_below_the_tables_takes_a_tile_holding_m():
    """ms=1 over a table entry of ms=2 (4096 x 7168, M = 128: 64 rows a CTA) built a kernel of 64 of M's 128 rows
    (the thirty-fifth session's audit), then was refused ("a tile of BM·ms = 64 x rows"); now the best-ranked
    config of one CTA's tile holding M is taken. Where no candidate has such a tile (the CTA pairs past 256 rows,
    which a call takes in blocks of 256 with an ms option) the refusal names the chosen config as such."""
    from nvtma.kernels import gemm
    for M, scale in ((128, "tensor"), (128, "block"), (256, "row"), (256, "block")):
        assert gemm.choose_config(M, 4096, 7168, gemm.F8, scale=scale).ms == 2  # (the table's)
        for quantize in (False, True):  # (bf16 x quantized: its config follows from the one taken)
            sp, _, _ = gemm.Gemm(ms=1).plan(M, 4096, 7168, gemm.F8, scale, quantize=quantize)
            assert sp.info["ms"] == 1 and sp.info["BM"] >= M, (M, scale, sp.info)
    with pytest.raises(ValueError, match=r"the chosen config \(224, 64, .*\) with ms=1: a tile of BM·ms = 224 x rows, "
                                         "fewer than M = 443"):
        gemm.Gemm(ms=1).plan(443, 4096, 7168, gemm.F8, "tensor")


@pytest.mark.parametrize("opts,problem,message", [
    (dict(kc=4), (257, 4096, 7168, "tensor"), "BM=160, BN=64, kc=4: the ring takes at least 2 stages, and 1 of "
     "114688 bytes fit in shared memory beside the epilogue tile"),  # ("a ring of 1 stages ...; 2 to 1 fit")
    (dict(swap=False), (200, 4096, 7168, "tensor"), "swap=False: no config with x as the wgmmas' A for M = 200, "
     "N = 4096, K = 7168 (tensor): x as A takes M up to 128 (block-scaled: 33 to 256)"),  # (named BM=128, wgs=1)
    (dict(swap=False), (16, 4096, 7104, "block"), "K a multiple of 128 values"),
    ({}, (16, 4096, 7168, None), "scale=None for fp8 W: 'tensor', 'row' or 'block'"),  # (named w_scale=None)
    (dict(swap=False, mc=2), (16, 4096, 7168, "tensor"),
     "swap=False with mc=2, kwg=False: x as the wgmmas' A takes no x multicast (mc) and no kwg"),  # ("splits=2")
])
def test_gemm_errors_name_the_users_values(opts, problem, message):
    """(the fuzzing campaign of session 45) errors that named a default, a BM or a K split the user never gave."""
    from nvtma.kernels import gemm
    M, N, K, scale = problem
    with pytest.raises(ValueError) as e:
        gemm.Gemm(**opts).plan(M, N, K, gemm.F8, scale)
    assert message in str(e.value), str(e.value)


# --------------------------------------------------------------------------- what a wgmma may (review of the audit)

@pytest.mark.parametrize("role,refused", [(0, False), (1, True)])
def test_a_partial_warpgroup_is_refused_only_where_it_issues_the_wgmma(role, refused):
    """A block of 160 threads (a consumer warpgroup and a producer warp): wgmma in warpgroup 0's role was refused
    for the block's partial warpgroup, which only warpgroup 1's role reaches."""
    @dsl.kernel(block=(160,))
    def k(a: dsl.Tensor("bf16", (64, 64)), *, role):
        with lang.WarpgroupRole(role):
            wgmma.fence()

    if refused:
        assert "issued by all 128 threads of a warpgroup" in str(build_error(k, "warpgroup", role=role))
    else:
        assert "wgmma.fence.sync.aligned" in ptx(k, role=role)


def test_an_integer_tile_holding_fp8_takes_the_wgmmas_type():
    """fp8 bytes loaded as u8 are read as e4m3 with a_type/b_type: the override was refused as a type clash."""
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("u8", (64, 128)), c: dsl.Tensor("f32", (64, 64))):
        d = wgmma.SmemDescriptor(_loaded_tile(a, (64, 128)))
        acc = wgmma.mma_async(wgmma.Accumulator(64), d.k_block(0), d.k_block(0), a_type="e4m3", b_type="e4m3")
        wgmma.commit_group()
        wgmma.wait_group(0)
        c[0, dsl.thread_idx() % 64] = acc[0]

    assert "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3" in ptx(k)


def test_two_warpgroups_take_their_rows_of_a_k_split_tile_at_run_time():
    """Two consumer warpgroups' row_block(warpgroup_idx() * 64) of a [128, 128] bf16 tile (boxes of all 128
    rows and half of K) was refused as reading past the buffer."""
    @dsl.kernel(block=(256,))
    def k(a: dsl.Tensor("bf16", (128, 128)), b: dsl.Tensor("bf16", (64, 128)), c: dsl.Tensor("f32", (128, 64))):
        da, db = _loaded_pair(a, (128, 128), b, (64, 128), wait=True)
        acc = wgmma.mma_async(wgmma.Accumulator(64), da.row_block(dsl.warpgroup_idx() * 64).k_block(4),
                              db.k_block(4))
        wgmma.commit_group()
        wgmma.wait_group(0)
        c[dsl.warpgroup_idx() * 64, dsl.thread_idx() % 64] = acc[0]

    assert len(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16", ptx(k))) == 1
