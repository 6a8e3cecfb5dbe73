"""Audit of nvtma.tcgen05 against the PTX ISA (sm_100a): shapes the
hardware does not have, layouts and lane accesses that were silently wrong.

Compiled, not run (no sm_100 GPU here): each test checks what the build
accepts or refuses, or the bits it encodes, against the cited spec text.
"""

import re

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import build_error  # noqa: E402

from nvtma import dsl, lang, tcgen05  # noqa: E402
from nvtma.dsl import KernelBuildError  # noqa: E402


# ============================================================================ MMA shapes (PTX ISA 9.7.16.2.1, Table 39)

@pytest.mark.parametrize("cta_group,M,N,ok", [
    (1, 128, 8, True), (1, 128, 24, True), (1, 128, 32, True), (1, 128, 48, True), (1, 64, 256, True),
    (1, 128, 40, False), (1, 128, 56, False), (1, 64, 248, False),
    (2, 256, 32, True), (2, 128, 256, True), (2, 256, 96, True),
    (2, 256, 16, False), (2, 256, 48, False), (2, 128, 240, False),
])
def test_i8_n_steps(cta_group, M, N, ok):
    """Table 39, .kind::i8: cta_group::1 "N = {8, 16, 24, 32, 48, ... 256}
    steps of 16 after N > 32"; cta_group::2 "N = {32, 64, ... 256} steps of
    32". Multiples of 8 (16) were taken, and N >> 3 encoded a shape the
    hardware does not have."""
    args = ("s32", "s8", "s8", M, N)
    if ok:
        d = tcgen05.instr_descriptor_bits(*args, n_cta_groups=cta_group)
        assert (d >> 17) & 0x3F == N >> 3
    else:
        with pytest.raises(KernelBuildError) as e:
            tcgen05.instr_descriptor_bits(*args, n_cta_groups=cta_group)
        assert e.value.rule == "shape" and f"N = {N}" in str(e.value)


def test_i8_n_rule_is_i8_only():
    """The other dense kinds keep steps of 8 (16 with cta_group 2)."""
    for a, d in (("f16", "f32"), ("tf32", "f32"), ("e4m3", "f32")):
        tcgen05.instr_descriptor_bits(d, a, a, 128, 40)
        tcgen05.instr_descriptor_bits(d, a, a, 256, 48, n_cta_groups=2)


@pytest.mark.parametrize("sf,kind", [("ue8m0", None), ("ue4m3", None), ("ue8m0", "mxf4nvf4")])
def test_k96_is_a_pair_m256_shape(sf, kind):
    """Table 39, .kind::mxf4 / .kind::mxf4nvf4: K1 = 96 appears only in the
    cta_group::2 row, as "256xNxK1"; cta_group::1 is "128xNxK, K = 64". The
    K = 96 bit (31, Table 44) was set for cta_group 1 and for M = 128."""
    args = ("f32", "e2m1", "e2m1", sf, sf)
    d = tcgen05.instr_descriptor_block_scaled_bits(*args, 256, 128, K=96, n_cta_groups=2, kind=kind)
    assert d >> 31 == 1 and (d >> 27) & 3 == 2
    for M, cg in ((128, 1), (128, 2)):
        with pytest.raises(KernelBuildError) as e:
            tcgen05.instr_descriptor_block_scaled_bits(*args, M, 128, K=96, n_cta_groups=cg, kind=kind)
        assert e.value.rule == "shape" and "K = 96" in str(e.value)


@pytest.mark.parametrize("a,K", [("e4m3", 64), ("e2m1", 128)])
def test_sparse_block_scaled_pair_is_m256(a, K):
    """Table 39: sparse .kind::mxf8f6f4 / mxf4 / mxf4nvf4 with cta_group::2
    is "256xNxK" only (dense takes 128xNxK and 256xNxK)."""
    kind = None if a == "e4m3" else "mxf4"
    args = ("f32", a, a, "ue8m0", "ue8m0")
    tcgen05.instr_descriptor_block_scaled_bits(*args, 256, 128, K=K, n_cta_groups=2, is_sparse=True, kind=kind)
    tcgen05.instr_descriptor_block_scaled_bits(*args, 128, 128, K=K, n_cta_groups=1, is_sparse=True, kind=kind)
    with pytest.raises(KernelBuildError) as e:
        tcgen05.instr_descriptor_block_scaled_bits(*args, 128, 128, K=K, n_cta_groups=2, is_sparse=True, kind=kind)
    assert e.value.rule == "shape"


# ============================================================================ block scaling (9.7.16.10.7.1, Table 57)

def _scaled_kernel(sf, block_size):
    @dsl.kernel(block=(128,), arch="sm_100a", ptx=88, name="tcgen05_audit_scaled")
    def k(descs: dsl.Tensor("u64", (2,))):
        tmem = lang.TMEMPool(cols=256)
        acc = tmem.alloc_tcgen05_mma_D((128, 128), "f32", M=128, cta_group=1)
        sfa = tmem.alloc_sf((128, 4), sf, sf_per_mma=4)
        sfb = tmem.alloc_sf((128, 4), sf, sf_per_mma=4)
        with lang.WarpRole(0):
            idesc = tcgen05.encode_instr_descriptor_block_scaled(
                d_dtype="f32", a_dtype="e2m1", b_dtype="e2m1", sfa_dtype=sf, sfb_dtype=sf, M=128, N=128, K=64,
                kind="mxf4nvf4")
            tcgen05.mma(acc, descs[0], descs[1], idesc, scale_a=sfa, scale_b=sfb, block_size=block_size)
        tmem.dealloc()
    return k


def test_ue4m3_scales_need_block16():
    """Table 57: .kind::mxf4nvf4 with UE4M3 scales is ".scale_vec::4X /
    .block16" only (UE8M0 also takes .block32). A ue4m3 descriptor issued
    with .block32 was built, and assembled: ptxas cannot see bit 23."""
    e = build_error(_scaled_kernel("ue4m3", 32), "tcgen05")
    assert "block_size=16" in str(e)
    assert "block16" in _scaled_kernel("ue4m3", 16).compile().ptx
    assert "block32" in _scaled_kernel("ue8m0", 32).compile().ptx


# ============================================================================ TMEM data-path layouts (9.7.16.10.5)

def test_m128_pair_accumulator_is_layout_b():
    """9.7.16.10.5: "128 | ::2 | Dense | 2x2 | Layout B" uses the whole
    datapath; only Layout F (M = 64, ::1) and Layout C (sparse) are "4x1
    (1/2 datapath utilized)". CuTe's 2-SM M_MMA = 64 atom (tmem_frg,
    Interleaved) puts row r of columns [0, N/2) in lane r and of [N/2, N) in
    lane 64 + r. The layout said "half" (rows 16q.. in lanes 32q..32q+15)
    over N columns."""
    d = tcgen05.tmem_layout("D", (64, 128), "f32", M=128, cta_group=2)
    assert (d.lanes, d.rows, d.cols) == ("2x2", 64, 64)
    d = tcgen05.tmem_layout("D", (2, 64, 256), "f32", M=128, cta_group=2)
    assert (d.lanes, d.cols, d.total_cols) == ("2x2", 128, 256)
    f = tcgen05.tmem_layout("D", (64, 128), "f32", M=64, cta_group=1)     # Layout F stays half
    assert (f.lanes, f.cols) == ("half", 128)


@dsl.kernel(block=(128,), cluster=(2, 1, 1), arch="sm_100a", name="tcgen05_audit_layout_b")
def _layout_b_load(out: dsl.Tensor("f32", (128, 16))):
    tmem = lang.TMEMPool(cta_group=2)
    acc = tmem.alloc_tcgen05_mma_D((64, 128), "f32", M=128, cta_group=2)
    tmem.commit()
    acc.load(0, 16)


def test_layout_b_load_is_refused():
    """load() reads one row a lane (Layouts A/D); Layout B's lanes 64-127
    hold the upper half of N, so it is refused, not read as rows 64-127."""
    e = build_error(_layout_b_load, "tmem")
    assert "2x2" in str(e)


# ============================================================================ MMA into a buffer too small for it

def _mma_into(acc_shape, acc_M, M, N):
    @dsl.kernel(block=(128,), arch="sm_100a", name="tcgen05_audit_fit")
    def k(descs: dsl.Tensor("u64", (2,))):
        tmem = lang.TMEMPool(cols=512)
        acc = tmem.alloc_tcgen05_mma_D(acc_shape, "f32", M=acc_M, cta_group=1)
        with lang.WarpRole(0):
            idesc = tcgen05.encode_instr_descriptor(d_dtype="f32", a_dtype="bf16", b_dtype="bf16", M=M, N=N)
            tcgen05.mma(acc, descs[0], descs[1], idesc)
        tmem.dealloc()
    return k


@pytest.mark.parametrize("acc_shape,acc_M,M,N,what", [
    ((128, 128), 128, 128, 256, "N = 256"),     # 256 columns written into 128
    ((64, 128), 64, 128, 128, "M = 128"),       # 128 lanes written, 64 rows allocated
])
def test_mma_checks_the_accumulator_against_the_descriptor(acc_shape, acc_M, M, N, what):
    """Table 42: the MMA writes M x N (N >> 3 at bits 17-22, M >> 4 at
    24-28) whatever buffer its d address starts; a D smaller than the
    descriptor's M or N was overwritten past its end, silently."""
    e = build_error(_mma_into(acc_shape, acc_M, M, N), "tmem")
    assert what in str(e)
    _mma_into((128, 256), 128, 128, 256).build()
    _mma_into((128, 256), 128, 128, 128).build()        # a narrower MMA into a wider buffer is fine


# ============================================================================ lane access (9.7.16.8.1)

def _ld_kernel(warp, lane, shape="32x32b", op="ld"):
    @dsl.kernel(block=(256,), arch="sm_100a", name="tcgen05_audit_lanes")
    def k(out: dsl.Tensor("u32", (128,))):
        tmem = lang.TMEMPool(cols=128)
        acc = tmem.alloc_tcgen05_mma_D((128, 128), "f32", M=128, cta_group=1)
        with lang.WarpRole(warp):
            if op == "ld":
                v = tcgen05.ld(acc.at(lane, 0), shape=shape, num=1)
                tcgen05.wait_ld()
            else:
                tcgen05.st(acc.at(lane, 0), dsl.Uint32(1), shape=shape)
                tcgen05.wait_st()
        tmem.dealloc()
    return k


@pytest.mark.parametrize("warp,lane,shape,op", [
    (0, 32, "32x32b", "ld"),      # warp 0 reaches lanes 0-31
    (1, 0, "32x32b", "ld"),       # warp 1: 32-63
    (2, 64 + 16, "32x32b", "st"),  # 32 lanes from 80 run into warp 3's
    (3, 96 + 24, "16x64b", "ld"),  # 16 lanes from 120 run past 127
    (4, 32, "16x256b", "ld"),     # warp 4 is sub-partition 0
])
def test_lanes_outside_the_warps_subpartition_are_refused(warp, lane, shape, op):
    """9.7.16.8.1: "A lane of the Tensor Memory can be accessed by a single
    warp in the warpgroup": warp w % 4 = q reaches lanes 32q-32q+31. The
    hardware ignores the lane's sub-partition bits (DeepGEMM sm100 epilogues
    rely on it), so warp 0 reading at(32, c) got rows 0-31, silently."""
    e = build_error(_ld_kernel(warp, lane, shape, op), "tmem")
    assert f"lane {lane}" in str(e) and f"warp {warp}" in str(e)


@pytest.mark.parametrize("warp,lane,shape,op", [
    (0, 0, "32x32b", "ld"), (1, 32, "32x32b", "ld"), (3, 96, "32x32b", "st"), (5, 32, "32x32b", "ld"),
    (2, 64 + 16, "16x256b", "ld"), (0, 16, "16x64b", "st"),
])
def test_lanes_inside_the_subpartition_build(warp, lane, shape, op):
    assert "tcgen05." in _ld_kernel(warp, lane, shape, op).compile().ptx


# ============================================================================ run-time smem descriptor (Table 40)

@dsl.kernel(block=(32,), arch="sm_100a", name="tcgen05_audit_desc")
def _desc(out: dsl.Tensor("u32", (2,)), *, sw="none", base=0):
    d = tcgen05.encode_matrix_descriptor(dsl.Uint32(0x3FFF0), 0x3FFF0, 0x2A0, sw, base_offset=base)
    out[0] = d.to(dsl.Uint32)
    out[1] = (d >> 32).to(dsl.Uint32)


@pytest.mark.parametrize("sw", list(tcgen05.SWIZZLE_MODE))
@pytest.mark.parametrize("base", [0, 5, 7])
def test_runtime_smem_descriptor_matches_table_40(sw, base):
    """Table 40 (9.7.16.4.1): base offset at 49-51, the 3-bit swizzle code at
    61-63 (0/1/2/4/6, not wgmma's 2-bit field), 0b001 at 46-48: the in-kernel
    encoder (upstream nvvm.tcgen05.mma_smem_desc) lands every field where the
    pure function does, for every swizzle and base offset."""
    ptx = _desc.compile(sw=sw, base=base).ptx
    st = {int(o or 0): int(v) & 0xFFFFFFFF
          for o, v in re.findall(r"st\.global\.b32\s+\[%rd\d+(?:\+(\d+))?\],\s*(-?\d+);", ptx)}
    got = st[0] | st[4] << 32
    want = tcgen05.descriptor_bits(0x3FFF0, 0x3FFF0, 0x2A0, sw, base_offset=base)
    assert got == want, (hex(got), hex(want))
    assert (got >> 46) & 7 == 1 and (got >> 49) & 7 == base and got >> 61 == tcgen05.SWIZZLE_MODE[sw]


def _layout_b_mma(N):
    @dsl.kernel(block=(128,), cluster=(2, 1, 1), arch="sm_100a", name="tcgen05_audit_layout_b_mma")
    def k(descs: dsl.Tensor("u64", (2,))):
        tmem = lang.TMEMPool(cta_group=2)
        acc = tmem.alloc_tcgen05_mma_D((64, 128), "f32", M=128, cta_group=2)
        tmem.commit()
        with lang.WarpRole(0):
            idesc = tcgen05.encode_instr_descriptor(d_dtype="f32", a_dtype="bf16", b_dtype="bf16", M=128, N=N,
                                                    n_cta_groups=2)
            tcgen05.mma(acc, descs[0], descs[1], idesc, cta_group=2)
    return k


def test_a_layout_b_accumulator_takes_an_mma_of_its_own_n():
    """(The review.) Layout B folds N at N / 2: an N = 64 MMA into an N = 128 buffer put its upper 32 columns in
    lanes 64-127 at columns 0-31, where the buffer keeps columns 64-95 of its rows."""
    assert "the MMA's N must be the buffer's" in str(build_error(_layout_b_mma(64), "tmem"))
    _layout_b_mma(128).build()
