"""Blackwell (sm_100a) tcgen05 in the kernel language: compiled, not run.

No sm_100 GPU is lent here, so nothing below launches. What is checked:
the descriptor encoders bit by bit against the PTX ISA's tables, the
kernels down to PTX, cubin (nvJitLink/ptxas for sm_100a) and SASS (the
UTC*MMA / UTCBAR / UTCATOMSWS / LDTM instructions ptxas made of them), the
arch rule (tcgen05 in an sm_90a kernel is a KernelBuildError), and the
inputs LLVM 22 would abort on are refused before it sees them.
"""

import json
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import build_error  # noqa: E402
from helpers import REPO  # noqa: E402

from nvtma import cpasync, dsl, lang, tcgen05  # noqa: E402
from nvtma.dsl import KernelBuildError  # noqa: E402


def _bits(v, lo, hi):
    """Bits lo..hi (inclusive) of v."""
    return (v >> lo) & ((1 << (hi - lo + 1)) - 1)


# ============================================================================ shared-memory descriptor
# PTX ISA 9.7.16.4.1 "Shared Memory Descriptor", Table 40 (ISA 8.7-9.2):
#   0-13 matrix-descriptor-encode(start address)      14-15 reserved
#   16-29 encode(leading dimension byte offset)        30-31 reserved
#   32-45 encode(stride dimension byte offset)         46-48 fixed 0b001
#   49-51 matrix base offset    52 leading dimension stride mode
#   53-60 fixed 0               61-63 swizzle: 0 none, 1 128B with 32B atomic, 2 128B, 4 64B, 6 32B
#   matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4
TABLE_40 = {"start": (0, 13), "lbo": (16, 29), "sbo": (32, 45), "fixed": (46, 48), "base": (49, 51),
            "lbo_mode": (52, 52), "swizzle": (61, 63)}


def test_smem_descriptor_literals():
    # 128B-swizzled K-major tile at 0x400: start 0x40, LBO 16 -> 1, SBO 1024 -> 64, 0b001 at 46, swizzle 2
    assert tcgen05.descriptor_bits(0x400, 16, 1024, "swizzle_128b") == 0x4000_4040_0001_0040
    # every field at its maximum
    assert tcgen05.descriptor_bits(0x3FFF0, 0x3FFF0, 0x3FFF0, "swizzle_32b", base_offset=7,
                                   lbo_mode=1) == 0xC01E_7FFF_3FFF_3FFF
    # nothing but the fixed 0b001
    assert tcgen05.descriptor_bits(0, 0, 0) == 1 << 46


@pytest.mark.parametrize("swizzle,code", [("none", 0), ("swizzle_128b_atom_32b", 1), ("swizzle_128b", 2),
                                          ("swizzle_64b", 4), ("swizzle_32b", 6)])
def test_smem_descriptor_swizzle_codes(swizzle, code):
    d = tcgen05.descriptor_bits(0, 0, 0, swizzle)
    assert _bits(d, *TABLE_40["swizzle"]) == code
    assert d & ~(0b111 << 61) == 1 << 46


@pytest.mark.parametrize("field,kwargs,value", [
    ("start", dict(start_address=0x12340), 0x1234),
    ("lbo", dict(leading_byte_offset=0x2A0), 0x2A),
    ("sbo", dict(stride_byte_offset=0x3FFF0), 0x3FFF),
    ("base", dict(base_offset=5), 5),
    ("lbo_mode", dict(lbo_mode=1), 1),
])
def test_smem_descriptor_each_field_alone(field, kwargs, value):
    """Each argument lands in its Table 40 bits and nowhere else."""
    args = dict(start_address=0, leading_byte_offset=0, stride_byte_offset=0)
    args.update(kwargs)
    d = tcgen05.descriptor_bits(**args)
    lo, hi = TABLE_40[field]
    assert _bits(d, lo, hi) == value
    assert d & ~(((1 << (hi - lo + 1)) - 1) << lo) == 1 << 46, hex(d)


@pytest.mark.parametrize("kwargs", [dict(start_address=8), dict(leading_byte_offset=1 << 18),
                                    dict(stride_byte_offset=-16), dict(base_offset=8), dict(lbo_mode=2),
                                    dict(swizzle="swizzle_16b")])
def test_smem_descriptor_refuses(kwargs):
    args = dict(start_address=0, leading_byte_offset=16, stride_byte_offset=1024)
    args.update(kwargs)
    with pytest.raises(KernelBuildError) as e:
        tcgen05.descriptor_bits(**args)
    assert e.value.rule == "descriptor"


# ============================================================================ instruction descriptor
# PTX ISA 9.7.16.4.2 "Instruction descriptor", Table 42 (kind::tf32, f16, f8f6f4, i8):
#   0-1 sparsity selector  2 sparsity  3 saturate  4-5 dtype (F16 0, F32 1, S32 2)  6 reserved
#   7-9 atype  10-12 btype (tf32: TF32 2; f16: F16 0, BF16 1; f8f6f4: E4M3 0, E5M2 1, E2M3 3,
#   E3M2 4, E2M1 5; i8: unsigned 0, signed 1)  13/14 negate A/B  15/16 transpose A/B
#   17-22 N >> 3  23 reserved  24-28 M >> 4  29 reserved  30-31 .ws maximum shift
TABLE_42 = {"sel": (0, 1), "sparse": (2, 2), "sat": (3, 3), "dtype": (4, 5), "atype": (7, 9), "btype": (10, 12),
            "neg_a": (13, 13), "neg_b": (14, 14), "trans_a": (15, 15), "trans_b": (16, 16), "n": (17, 22),
            "m": (24, 28), "shift": (30, 31)}


@pytest.mark.parametrize("args,kwargs,want", [
    # D f32 (1 << 4), A/B bf16 (1 << 7, 1 << 10), N 128 >> 3 = 16 << 17, M 128 >> 4 = 8 << 24
    (("f32", "bf16", "bf16", 128, 128), {}, 0x0820_0490),
    # all-f16, M = 64, N = 8: only the shape bits
    (("f16", "f16", "f16", 64, 8), {}, 0x0402_0000),
    # tf32 (2 << 7, 2 << 10), M 128, N 256 (32 << 17)
    (("f32", "tf32", "tf32", 128, 256), {}, 0x0840_0910),
    # e4m3 x e5m2 (0, 1 << 10), 2-CTA M 256 (16 << 24), N 256, negate A (1 << 13), B MN-major (1 << 16)
    (("f32", "e4m3", "e5m2", 256, 256), dict(n_cta_groups=2, neg_a=True, trans_b=True), 0x1041_2410),
    # s8 x u8 -> s32 (2 << 4), saturate (1 << 3), M 128, N 64 (8 << 17)
    (("s32", "s8", "u8", 128, 64), dict(sat_d=True), 0x0810_00A8),
    # sparse (1 << 2) with selector 3, K 32
    (("f32", "f16", "f16", 128, 128), dict(is_sparse=True, sparse_id2=3, K=32), 0x0820_0017),
    # .ws maximum shift of 32 (3 << 30)
    (("f32", "f16", "f16", 128, 128), dict(max_shift=3), 0xC820_0010),
])
def test_instr_descriptor_literals(args, kwargs, want):
    assert tcgen05.instr_descriptor_bits(*args, **kwargs) == want


@pytest.mark.parametrize("t,code", [("e4m3", 0), ("e5m2", 1), ("e2m3", 3), ("e3m2", 4), ("e2m1", 5)])
def test_instr_descriptor_f8f6f4_type_codes(t, code):
    d = tcgen05.instr_descriptor_bits("f32", t, "e4m3", 128, 8)
    assert _bits(d, *TABLE_42["atype"]) == code
    d = tcgen05.instr_descriptor_bits("f32", "e4m3", t, 128, 8)
    assert _bits(d, *TABLE_42["btype"]) == code


def test_instr_descriptor_fields_are_separate():
    """Each option sets exactly its Table 42 bits."""
    base = tcgen05.instr_descriptor_bits("f32", "f16", "f16", 128, 128)
    for opt, field in (("neg_a", "neg_a"), ("neg_b", "neg_b"), ("trans_a", "trans_a"), ("trans_b", "trans_b")):
        d = tcgen05.instr_descriptor_bits("f32", "f16", "f16", 128, 128, **{opt: True})
        lo, hi = TABLE_42[field]
        assert d ^ base == 1 << lo, opt
    for n in range(8, 257, 8):
        d = tcgen05.instr_descriptor_bits("f32", "f16", "f16", 128, n)
        assert _bits(d, *TABLE_42["n"]) == n >> 3
        assert _bits(d, *TABLE_42["m"]) == 8
        assert _bits(d, 23, 23) == 0 and _bits(d, 29, 29) == 0 and _bits(d, 6, 6) == 0


@pytest.mark.parametrize("args,kwargs", [
    (("f32", "f16", "f16", 96, 128), {}),                         # M: 64 or 128 with one CTA
    (("f32", "f16", "f16", 64, 128), dict(n_cta_groups=2)),       # 128 or 256 with two
    (("f32", "f16", "f16", 128, 12), {}),                         # N a multiple of 8
    (("f32", "f16", "f16", 256, 24), dict(n_cta_groups=2)),       # ... of 16 with two CTAs
    (("f32", "f16", "f16", 128, 264), {}),                        # N <= 256
    (("f32", "f16", "bf16", 128, 128), {}),                       # A and B in one kind, one type
    (("f32", "f16", "e4m3", 128, 128), {}),
    (("s32", "f16", "f16", 128, 128), {}),                        # D type of the kind
    (("f32", "f16", "f16", 128, 128), dict(K=32)),                # K of kind::f16 is 16
    (("f32", "f16", "f16", 128, 128), dict(sat_d=True)),          # saturate: i8 only
    (("s32", "s8", "s8", 128, 128), dict(neg_a=True)),            # i8 cannot negate
    (("f32", "e2m1", "e2m1", 128, 128), dict(trans_a=True)),      # fp4 is K-major only
    (("f32", "f16", "f16", 128, 128), dict(n_cta_groups=3)),
    (("f32", "fp7", "fp7", 128, 128), {}),
])
def test_instr_descriptor_refuses(args, kwargs):
    with pytest.raises(KernelBuildError):
        tcgen05.instr_descriptor_bits(*args, **kwargs)


# PTX ISA 9.7.16.4.2, Table 43 (kind::mxf8f6f4) and Table 44 (kind::mxf4, mxf4nvf4):
#   2 sparsity  4-5 B scale-factor data ID  7-9 atype  10-12 btype (mxf4: 10-11, E2M1 = 1)
#   13/14 negate  15/16 transpose  17-22 N >> 3  23 scale type (UE8M0 1, UE4M3 0)  24-26 reserved
#   27-28 M >> 7  29-30 A scale-factor data ID  31 K dimension (mxf4*: dense K = 96 -> 1)
TABLE_43 = {"sparse": (2, 2), "sfb": (4, 5), "atype": (7, 9), "btype": (10, 12), "n": (17, 22),
            "scale": (23, 23), "m": (27, 28), "sfa": (29, 30), "k96": (31, 31)}


@pytest.mark.parametrize("args,kwargs,want", [
    # mxf8f6f4 e4m3 x e4m3, ue8m0 (1 << 23), M 128 (1 << 27), N 256 (32 << 17), SF IDs A 3 (<< 29), B 1 (<< 4)
    (("f32", "e4m3", "e4m3", "ue8m0", "ue8m0", 128, 256), dict(sfa_id=3, sfb_id=1), 0x68C0_0010),
    # mxf4nvf4 e2m1 (1 << 7, 1 << 10), ue4m3 (0), 2-CTA M 256 (2 << 27), N 128, IDs 2/2, K 96 (1 << 31)
    (("f32", "e2m1", "e2m1", "ue4m3", "ue4m3", 256, 128), dict(n_cta_groups=2, K=96, sfa_id=2, sfb_id=2),
     0xD020_04A0),
    # mxf8f6f4 with e2m1 x e3m2 (5 << 7, 4 << 10), M 128, N 8
    (("f32", "e2m1", "e3m2", "ue8m0", "ue8m0", 128, 8), {}, 0x0882_1280),
    # mxf4 (K 64) with ue8m0: the e2m1 code is 1, not 5
    (("f32", "e2m1", "e2m1", "ue8m0", "ue8m0", 128, 64), dict(K=64), 0x0890_0480),
])
def test_block_scaled_descriptor_literals(args, kwargs, want):
    assert tcgen05.instr_descriptor_block_scaled_bits(*args, **kwargs) == want


def test_block_scaled_fields():
    d = tcgen05.instr_descriptor_block_scaled_bits("f32", "e5m2", "e2m3", "ue8m0", "ue8m0", 256, 240,
                                                   n_cta_groups=2, sfa_id=1, sfb_id=2, neg_b=True, trans_a=True)
    want = dict(sparse=0, sfb=2, atype=1, btype=3, n=30, scale=1, m=2, sfa=1, k96=0)
    assert {f: _bits(d, *TABLE_43[f]) for f in want} == want
    assert _bits(d, 14, 14) == 1 and _bits(d, 15, 15) == 1 and _bits(d, 13, 13) == 0 and _bits(d, 16, 16) == 0
    assert _bits(d, 24, 26) == 0 and _bits(d, 0, 1) == 0 and _bits(d, 3, 3) == 0 and _bits(d, 6, 6) == 0


@pytest.mark.parametrize("args,kwargs", [
    (("f32", "e4m3", "e4m3", "ue4m3", "ue4m3", 128, 128), {}),            # ue4m3 is mxf4nvf4's
    (("f32", "e4m3", "e4m3", "ue8m0", "ue4m3", 128, 128), {}),            # one scale type
    (("f32", "e4m3", "e4m3", "ue8m0", "ue8m0", 64, 128), {}),             # M >> 7: 128 or 256
    (("f32", "e2m1", "e2m1", "ue8m0", "ue8m0", 128, 128), dict(K=64, sfa_id=1)),   # mxf4 IDs: 0 or 2
    (("f32", "e2m1", "e2m1", "ue8m0", "ue8m0", 128, 128), dict(K=64, trans_b=True)),
    (("f16", "e4m3", "e4m3", "ue8m0", "ue8m0", 128, 128), {}),            # f32 accumulators
    (("f32", "e4m3", "e4m3", "ue8m0", "ue8m0", 128, 128), dict(K=64)),    # mxf8f6f4 K is 32
])
def test_block_scaled_refuses(args, kwargs):
    with pytest.raises(KernelBuildError):
        tcgen05.instr_descriptor_block_scaled_bits(*args, **kwargs)


def test_infer_swizzle():
    assert tcgen05.infer_swizzle(64, "bf16") == "swizzle_128b"
    assert tcgen05.infer_swizzle(32, "f16") == "swizzle_64b"
    assert tcgen05.infer_swizzle(32, "e4m3") == "swizzle_32b"
    assert tcgen05.infer_swizzle(256, "e4m3") == "swizzle_128b"
    assert tcgen05.infer_swizzle(8, "f16") == "none"


# ============================================================================ TMEM layouts

def test_tmem_layouts():
    d = tcgen05.tmem_layout("D", (128, 256), "float32", M=128, cta_group=1)
    assert (d.lanes, d.cols, d.total_cols) == ("all", 256, 256)
    d = tcgen05.tmem_layout("D", (2, 128, 128), "f32", M=256, cta_group=2)   # a CTA holds 128 of 256 rows
    assert (d.lanes, d.cols, d.stages, d.total_cols) == ("all", 128, 2, 256)
    d = tcgen05.tmem_layout("D", (64, 64), "f32", M=64, cta_group=1)
    assert (d.lanes, d.cols) == ("half", 64)
    a = tcgen05.tmem_layout("A", (128, 64), "bf16", M=128, cta_group=1)   # 64 bf16 = 32 columns
    assert (a.lanes, a.cols) == ("all", 32)
    sf = tcgen05.tmem_layout("SF", (128, 8), "ue8m0", sf_per_mma=1)      # 8 factors, 4 a column, 4-column units
    assert sf.cols == 4
    sf = tcgen05.tmem_layout("SF", (256, 20), "ue8m0", sf_per_mma=4)     # 2 lane groups x 8 columns
    assert (sf.cols, sf.col_groups) == (16, 2)
    for bad in (lambda: tcgen05.tmem_layout("D", (64, 128), "f32", M=128, cta_group=1),
                lambda: tcgen05.tmem_layout("D", (128, 128), "bf16", M=128, cta_group=1),
                lambda: tcgen05.tmem_layout("D", (128, 128), "f32", M=64, cta_group=2),
                lambda: tcgen05.tmem_layout("SF", (128, 8), "f16", sf_per_mma=1)):
        with pytest.raises(KernelBuildError) as e:
            bad()
        assert e.value.rule in ("tmem", "cta-group")


# ============================================================================ kernels

def _compile(kernel, **consts):
    """The compiled module (PTX + sm_100a cubin) of an sm_100a kernel."""
    return kernel.compile(**consts)


def _stores(ptx):
    """{byte offset: value} of the constant 32-bit stores to the first global parameter."""
    out = {}
    for off, v in re.findall(r"st\.global\.b32\s+\[%rd\d+(?:\+(\d+))?\],\s*(-?\d+);", ptx):
        out[int(off or 0)] = int(v) & 0xFFFFFFFF
    for off, a, b in re.findall(r"st\.global\.v2\.b32\s+\[%rd\d+(?:\+(\d+))?\],\s*\{(-?\d+),\s*(-?\d+)\};", ptx):
        out[int(off or 0)], out[int(off or 0) + 4] = int(a) & 0xFFFFFFFF, int(b) & 0xFFFFFFFF
    return out


@dsl.kernel(block=(32,), arch="sm_100a")
def _encoders(out: dsl.Tensor("u32", (8,))):
    d = tcgen05.encode_matrix_descriptor(dsl.Uint32(0x12340), 16, 1024, "swizzle_64b")
    out[0] = d.to(dsl.Uint32)
    out[1] = (d >> 32).to(dsl.Uint32)
    i = tcgen05.encode_instr_descriptor(d_dtype="f32", a_dtype="bf16", b_dtype="bf16", M=128, N=128)
    out[2] = i.u32()
    s = tcgen05.encode_instr_descriptor_block_scaled(d_dtype="f32", a_dtype="e4m3", b_dtype="e4m3",
                                                     sfa_dtype="ue8m0", sfb_dtype="ue8m0", M=128, N=256)
    out[3] = tcgen05.runtime_instr_desc(s, sfa_id=3, sfb_id=1).u32()
    out[4] = tcgen05.get_tmem_addr(dsl.Uint32(0x40), 32, 5)


def test_runtime_encoders_fold_to_the_pure_values():
    """The in-kernel encoders (upstream nvvm.tcgen05.mma_smem_desc for the
    shared-memory one) compute what the pure functions do."""
    st = _stores(_compile(_encoders).ptx)
    want = tcgen05.descriptor_bits(0x12340, 16, 1024, "swizzle_64b")
    assert st[0] | st[4] << 32 == want, (hex(st[0] | st[4] << 32), hex(want))
    assert st[8] == tcgen05.instr_descriptor_bits("f32", "bf16", "bf16", 128, 128) == 0x0820_0490
    assert st[12] == tcgen05.instr_descriptor_block_scaled_bits("f32", "e4m3", "e4m3", "ue8m0", "ue8m0", 128,
                                                               256, sfa_id=3, sfb_id=1) == 0x68C0_0010
    assert st[16] == 0x40 + (32 << 16) + 5


@dsl.kernel(block=(32,), arch="sm_100a")
def _leader(out: dsl.Tensor("u32", (32,))):
    smem = lang.SMEMPool()
    buf = smem.alloc((32,), "u32")
    out[0] = tcgen05.sm100_2sm_leader_smem_addr(out[1])      # a run-time address
    out[2] = tcgen05.sm100_2sm_leader_smem_addr(buf)          # a shared buffer (1024-aligned)


def test_leader_address_clears_the_pair_bit():
    ptx = _compile(_leader).ptx
    masks = {int(m) & 0xFFFFFFFF for m in re.findall(r"and\.b32\s+%r\d+,\s*%r\d+,\s*(-?\d+);", ptx)}
    # & 0xFEFFFFFF; on the 1024-aligned buffer LLVM also clears the known-zero low bits
    assert masks == {0xFEFFFFFF, 0xFEFFFC00}, [hex(m) for m in masks]


# --------------------------------------------------------------------------- the MMA zoo
# One kernel per MMA flavour; descriptors are raw values (the example covers
# the TMA-fed SmemDescriptor path). ptxas turns each into its SASS family.

def _zoo_kernel(ptx=86, cluster=None, name="tcgen05_zoo"):
    @dsl.kernel(block=(128,), cluster=cluster, arch="sm_100a", ptx=ptx, name=name)
    def zoo(out: dsl.Tensor("u32", (128, 16)), descs: dsl.Tensor("u64", (4,)), *, what="f16", cta_group=1):
        tmem = lang.TMEMPool(cols=256 if what != "i8" else 128, cta_group=cta_group)
        done = lang.TCGen05Bar(1, 1, cta_group=cta_group)
        m = 128 * cta_group
        acc = tmem.alloc_tcgen05_mma_D((128, 128), "f32" if what != "i8" else "s32", M=m, cta_group=cta_group)
        a, b = descs[0], descs[1]
        types = {"f16": ("f16", "f32"), "bf16": ("bf16", "f32"), "tf32": ("tf32", "f32"), "e4m3": ("e4m3", "f32"),
                 "i8": ("s8", "s32")}
        with lang.WarpRole(0):
            if what in types:
                t, dt = types[what]
                idesc = tcgen05.encode_instr_descriptor(d_dtype=dt, a_dtype=t, b_dtype=t, M=m, N=128,
                                                        n_cta_groups=cta_group)
                tcgen05.mma(acc, a, b, idesc, accumulate=False)
            elif what in ("mxf8f6f4", "mxf4", "mxf4nvf4"):
                sfa = tmem.alloc_sf((128, 4), "ue8m0", sf_per_mma=4)
                sfb = tmem.alloc_sf((128, 4), "ue8m0", sf_per_mma=4)
                t = "e4m3" if what == "mxf8f6f4" else "e2m1"
                sf = "ue4m3" if what == "mxf4nvf4" else "ue8m0"
                idesc = tcgen05.encode_instr_descriptor_block_scaled(
                    d_dtype="f32", a_dtype=t, b_dtype=t, sfa_dtype=sf, sfb_dtype=sf, M=m, N=128,
                    K=None if what == "mxf8f6f4" else 64, n_cta_groups=cta_group)
                tcgen05.cp(sfa, b, shape="32x128b", multicast="warpx4", cta_group=cta_group)
                tcgen05.mma(acc, a, b, idesc, scale_a=sfa, scale_b=sfb,
                            block_size=16 if what == "mxf4nvf4" else None)
            elif what == "tmem_a":
                ta = tmem.alloc_tcgen05_mma_A((128, 64), "bf16", M=m, cta_group=cta_group)
                idesc = tcgen05.encode_instr_descriptor(d_dtype="f32", a_dtype="bf16", b_dtype="bf16", M=m,
                                                        N=128, n_cta_groups=cta_group)
                tcgen05.mma(acc, ta, b, idesc, scale_input_d=2)
                tcgen05.shift(ta, cta_group=cta_group)
            done.arrive(0, multicast_mask=3 if cta_group == 2 else None)
        done.wait(0, 0)
        tcgen05.fence_after_thread_sync()
        v = acc.load(0, 16, "u32")
        tcgen05.st(acc.at(0, 16), v[0:4], shape="16x128b")   # rows of 16 lanes a warp, 4 registers
        tcgen05.wait_st()
        out.store_vec(v, dsl.thread_idx(), 0)
        tmem.dealloc()
    return zoo


_ZOO = _zoo_kernel()
_ZOO88 = _zoo_kernel(ptx=88)
_ZOO2 = _zoo_kernel(cluster=(2, 1, 1), name="tcgen05_zoo_pair")
_ZOO2_88 = _zoo_kernel(ptx=88, cluster=(2, 1, 1), name="tcgen05_zoo_pair")


def _zoo(what, cta_group):
    """Block-scaled MMAs need PTX 8.8 (see test_block_scaled_needs_ptx88)."""
    scaled = what.startswith("mx")
    return {(1, False): _ZOO, (1, True): _ZOO88, (2, False): _ZOO2, (2, True): _ZOO2_88}[cta_group, scaled]

# flavour -> (PTX instruction, SASS instruction family) -- mnemonics as ptxas 13 prints them
ZOO = [
    ("f16", 1, "tcgen05.mma.cta_group::1.kind::f16", "UTCHMMA"),
    ("bf16", 1, "tcgen05.mma.cta_group::1.kind::f16", "UTCHMMA"),
    ("tf32", 1, "tcgen05.mma.cta_group::1.kind::tf32", "UTCHMMA"),
    ("e4m3", 1, "tcgen05.mma.cta_group::1.kind::f8f6f4", "UTCQMMA"),
    ("i8", 1, "tcgen05.mma.cta_group::1.kind::i8", "UTCIMMA"),
    ("mxf8f6f4", 1, "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale", "UTCQMMA"),
    ("mxf4", 1, "tcgen05.mma.cta_group::1.kind::mxf4.block_scale", "UTCOMMA"),
    ("tmem_a", 1, "tcgen05.mma.cta_group::1.kind::f16", "UTCHMMA"),
    ("f16", 2, "tcgen05.mma.cta_group::2.kind::f16", "UTCHMMA.2CTA"),
    ("e4m3", 2, "tcgen05.mma.cta_group::2.kind::f8f6f4", "UTCQMMA.2CTA"),
    ("mxf8f6f4", 2, "tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale", "UTCQMMA.2CTA"),
]


def _sass(compiled):
    try:
        return compiled.sass()
    except FileNotFoundError as e:
        pytest.skip(str(e))


@pytest.mark.parametrize("what,cta_group,ptx_mma,sass_mma", ZOO, ids=[f"{z[0]}-{z[1]}cta" for z in ZOO])
def test_mma_flavours_assemble_for_sm100a(what, cta_group, ptx_mma, sass_mma):
    c = _compile(_zoo(what, cta_group), what=what, cta_group=cta_group)
    assert ".target sm_100a" in c.ptx
    assert ptx_mma in c.ptx
    assert c.cubin[:4] == b"\x7fELF"                      # nvJitLink/ptxas accepted it for sm_100a
    sass = _sass(c)
    ops = set(re.findall(r"\b((?:UTC|LDTM|STTM)[A-Z0-9_.]*)", sass))
    assert sass_mma in ops or any(o.startswith(sass_mma + ".") for o in ops), ops
    assert any(o.startswith("UTCBAR") for o in ops), ops          # tcgen05.commit
    assert any(o.startswith("UTCATOMSWS") for o in ops), ops      # tcgen05.alloc / dealloc
    assert any(o.startswith("LDTM") for o in ops), ops            # tcgen05.ld
    assert any(o.startswith("STTM") for o in ops), ops            # tcgen05.st
    if cta_group == 2:
        assert "tcgen05.alloc.cta_group::2" in c.ptx
        assert "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster" in c.ptx
    if what.startswith("mx"):
        assert f"tcgen05.cp.cta_group::{cta_group}.32x128b.warpx4" in c.ptx
        assert any(o.startswith("UTCCP") for o in ops), ops
    if what == "tmem_a":
        assert "tcgen05.shift.cta_group::1.down" in c.ptx and any(o.startswith("UTCSHIFT") for o in ops)


@pytest.mark.parametrize("what", ["mxf8f6f4", "mxf4", "mxf4nvf4"])
def test_block_scaled_needs_ptx88(what):
    """Block-scaled MMAs below PTX 8.8: LLVM 22 aborts selecting
    .block16/.block32 there, and CUDA 13.0's ptxas reads the unqualified
    form as .block32 and refuses it; the DSL refuses first."""
    e = build_error(_ZOO, "ptx", what=what)
    assert "ptx=88" in str(e)
    # ptx=None is the default, 8.6 on sm_100a (it was a TypeError here: None < 88)
    e = build_error(_zoo_kernel(ptx=None, name="tcgen05_zoo_default_ptx"), "ptx", what=what)
    assert "ptx=None (PTX ISA 8.6, the default)" in str(e)


@pytest.mark.parametrize("what,cta_group", [("f16", 1), ("e4m3", 2), ("mxf8f6f4", 1), ("tmem_a", 1)])
def test_ptxas_assembles_too(what, cta_group, tmp_path):
    """nvtma.compile assembles with nvJitLink; the CUDA toolkit's ptxas
    (13.0 here) must take the same PTX for sm_100a."""
    from nvtma.compiler import find_tool
    ptxas = find_tool("ptxas")
    if not ptxas:
        pytest.skip("no ptxas")
    src = tmp_path / "k.ptx"
    src.write_text(_compile(_zoo(what, cta_group), what=what, cta_group=cta_group).ptx)
    r = subprocess.run([ptxas, "-arch=sm_100a", str(src), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "k.cubin").read_bytes()[:4] == b"\x7fELF"


def test_block16_assembles_at_ptx88():
    c = _compile(_ZOO88, what="mxf4nvf4")
    assert "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16" in c.ptx
    assert any(o.startswith("UTCOMMA") for o in re.findall(r"\b(UTC[A-Z0-9_.]*)", _sass(c)))


@dsl.kernel(block=(128,), arch="sm_100a")
def _stores_to_tmem(x: dsl.Tensor("f32", (128, 16))):
    v = x.load_vec(8, dsl.thread_idx(), 0)
    tcgen05.st(dsl.Uint32(0), v)                          # 8 f32 -> 8 registers
    tcgen05.st(dsl.Uint32(0), v.to(dsl.BFloat16))         # 8 bf16 -> 4 registers
    tcgen05.st(dsl.Uint32(0), v[0:2].to(dsl.BFloat16))    # 2 bf16 -> 1 register
    tcgen05.st(dsl.Uint32(0), x[0, 0])                    # one f32
    r = tcgen05.ld(dsl.Uint32(0), shape="16x256b", num=2)  # 8 registers
    tcgen05.wait_ld()
    tcgen05.st(dsl.Uint32(0), r, shape="16x256b", unpack=True)
    tcgen05.wait_st()


def test_st_takes_any_32_bit_multiple():
    ptx = _compile(_stores_to_tmem).ptx
    got = re.findall(r"tcgen05\.st\.sync\.aligned\.(\w+)\.x(\d+)(\.unpack::16b)?\.b32", ptx)
    assert sorted(got) == sorted([("32x32b", "8", ""), ("32x32b", "4", ""), ("32x32b", "1", ""),
                                  ("32x32b", "1", ""), ("16x256b", "2", ".unpack::16b")]), got
    assert "tcgen05.ld.sync.aligned.16x256b.x2.b32" in ptx


# --------------------------------------------------------------------------- the arch rule

def _arch_kernel(use):
    @dsl.kernel(block=(128,), arch="sm_90a", name="tcgen05_on_hopper")
    def k(out: dsl.Tensor("u32", (128,))):
        use(out)
    return k


def _in_warp0(fn):
    def use(out):
        with lang.WarpRole(0):
            fn(out)
    return use


USES = {
    "TMEMPool": lambda out: lang.TMEMPool(cols=32),
    "TCGen05Bar": lambda out: lang.TCGen05Bar(1, 1),
    "Pipeline(empty='tcgen05')": lambda out: lang.Pipeline(2, full="tma", empty="tcgen05"),
    "tcgen05.alloc": _in_warp0(lambda out: tcgen05.alloc(lang.SMEMPool().alloc((1,), "u32"), 32)),
    "tcgen05.mma": _in_warp0(lambda out: tcgen05.mma(dsl.Uint32(0), dsl.Uint64(0), dsl.Uint64(0), 0, kind="f16")),
    "tcgen05.commit": lambda out: (lambda bar: _in_warp0(lambda o: tcgen05.commit(bar, 0))(out))(
        lang.MBarrier(1, 1)),
    "tcgen05.ld": lambda out: tcgen05.ld(dsl.Uint32(0), num=4),
    "tcgen05.st": lambda out: tcgen05.st(dsl.Uint32(0), dsl.Uint32(1)),
    "tcgen05.cp": _in_warp0(lambda out: tcgen05.cp(dsl.Uint32(0), dsl.Uint64(0))),
    "tcgen05.shift": _in_warp0(lambda out: tcgen05.shift(dsl.Uint32(0))),
    "tcgen05.fence": lambda out: tcgen05.fence_after_thread_sync(),
    "tcgen05.wait": lambda out: tcgen05.wait_ld(),
    "tcgen05.encode_instr_descriptor": lambda out: tcgen05.encode_instr_descriptor(
        d_dtype="f32", a_dtype="f16", b_dtype="f16", M=128, N=128),
    "tcgen05.encode_matrix_descriptor": lambda out: tcgen05.encode_matrix_descriptor(dsl.Uint32(0), 16, 1024),
}


@pytest.mark.parametrize("what", list(USES))
def test_tcgen05_in_an_sm90a_kernel_is_a_build_error(what):
    e = build_error(_arch_kernel(USES[what]), "arch")
    assert "sm_100a" in str(e) and "sm_90a" in str(e), str(e)
    assert __file__ in e.where     # the user's line, not ours


def test_sm100a_ir_compiled_for_sm90a_is_a_compile_error():
    """The IR of an sm_100a kernel compiled for sm_90a: NVVM's verifier
    refuses it (an error, not an LLVM abort)."""
    import nvtma
    ir = _ZOO.build(what="f16").ir
    with pytest.raises(nvtma.CompileError, match="not supported on sm_90a"):
        nvtma.compile(ir, arch="sm_90a")


# --------------------------------------------------------------------------- misuse

def _k(body, block=(128,), cluster=None, ptx=86):
    @dsl.kernel(block=block, cluster=cluster, arch="sm_100a", ptx=ptx, name="tcgen05_misuse")
    def k(out: dsl.Tensor("u32", (128,))):
        body(out)
    return k


def _pool_d(n=128, cols=None):
    pool = lang.TMEMPool(cols=cols)
    return pool, pool.alloc_tcgen05_mma_D((128, n), "f32", M=128, cta_group=1)


MISUSE = {
    "alloc of 48 columns": (_in_warp0(lambda out: tcgen05.alloc(lang.SMEMPool().alloc((1,), "u32"), 48)), "tmem"),
    "alloc by 4 warps": (lambda out: tcgen05.alloc(lang.SMEMPool().alloc((1,), "u32"), 32), "warp-collective"),
    "ld in one lane": (lambda out: _under_elect(lambda: tcgen05.ld(dsl.Uint32(0), num=2)), "warp-collective"),
    "mma by 4 warps": (lambda out: tcgen05.mma(dsl.Uint32(0), dsl.Uint64(0), dsl.Uint64(0), 0, kind="f16"),
                       "single-issuer"),
    "mma without a kind": (_in_warp0(lambda out: tcgen05.mma(dsl.Uint32(0), dsl.Uint64(0), dsl.Uint64(0), 0)),
                           "tcgen05"),
    "mma cta_group against idesc": (_in_warp0(lambda out: tcgen05.mma(
        dsl.Uint32(0), dsl.Uint64(0), dsl.Uint64(0), tcgen05.encode_instr_descriptor(
            d_dtype="f32", a_dtype="f16", b_dtype="f16", M=256, N=128, n_cta_groups=2), cta_group=1)), "cta-group"),
    "scale_input_d on kind::i8": (_in_warp0(lambda out: tcgen05.mma(
        dsl.Uint32(0), dsl.Uint64(0), dsl.Uint64(0), 0, kind="i8", scale_input_d=1)), "tcgen05"),
    "mxf4nvf4 without block size": (_in_warp0(lambda out: tcgen05.mma(
        dsl.Uint32(0), dsl.Uint64(0), dsl.Uint64(0), 0, kind="mxf4nvf4", scale_a=dsl.Uint32(0),
        scale_b=dsl.Uint32(0))), "tcgen05"),
    "TMEMPool in a warp role": (_in_warp0(lambda out: lang.TMEMPool(cols=32)), "tmem"),
    "TMEMPool of 384 columns": (lambda out: lang.TMEMPool(cols=384), "tmem"),
    "TMEMPool in a branch": (lambda out: _in_branch(out, lambda: lang.TMEMPool(cols=32)), "tmem"),
    "dealloc in a loop": (lambda out: _dealloc_in_loop(lang.TMEMPool(cols=32)), "tmem"),
    "TMEM past 512 columns": (lambda out: _three_accumulators(lang.TMEMPool()), "tmem"),
    "TMEM past the pool": (lambda out: _pool_d(256, cols=128), "tmem"),
    "D address before commit": (lambda out: _pool_d()[1].addr, "tmem"),
    "D rows against M": (lambda out: lang.TMEMPool().alloc_tcgen05_mma_D((128, 64), "f32", M=64, cta_group=1),
                         "tmem"),
    "commit with a count": (_in_warp0(lambda out: lang.TCGen05Bar(1, 1).arrive(0, 2)), "mbarrier"),
    "descriptor of an unswizzled tile": (lambda out: tcgen05.SmemDescriptor(
        lang.SMEMPool().alloc((128, 64), "bf16", swizzle="none")), "descriptor"),
    "A type against idesc": (lambda out: _typed_mma(), "tcgen05"),
    "cta_group 1 and 2 in one kernel": (_in_warp0(lambda out: [tcgen05.shift(dsl.Uint32(0)),
                                                               tcgen05.shift(dsl.Uint32(0), cta_group=2)]),
                                        "cta-group"),
}


def _in_branch(out, fn):
    with dsl.if_(out[0] > 0):
        fn()


def _dealloc_in_loop(pool):
    for _ in dsl.range(2):
        pool.dealloc()


def _three_accumulators(pool):
    for _ in range(3):
        pool.alloc_tcgen05_mma_D((128, 256), "f32", M=128, cta_group=1)


def _under_elect(fn):
    with dsl.if_(dsl.elect_sync()):
        fn()


def _typed_mma():
    sA = lang.SMEMPool().alloc_tcgen05_mma_AB((128, 64), "f16")
    idesc = tcgen05.encode_instr_descriptor(d_dtype="f32", a_dtype="bf16", b_dtype="bf16", M=128, N=128)
    with lang.WarpRole(0):
        d = tcgen05.SmemDescriptor(sA)
        tcgen05.mma(dsl.Uint32(0), d.k_block(0), d.k_block(0), idesc)


@pytest.mark.parametrize("what", list(MISUSE))
def test_misuse_is_a_typed_error(what):
    body, rule = MISUSE[what]
    build_error(_k(body), rule)


# --------------------------------------------------------------------------- lang surface

@dsl.kernel(block=(128,), arch="sm_100a")
def _pipeline(x: dsl.Tensor("bf16", (256, 64)), *, pred=False):
    smem = lang.SMEMPool()
    ta = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), x, (128, 64), swizzle="swizzle_128b")
    ring = smem.alloc_tcgen05_mma_AB((2, 128, 64), "bf16")
    assert ring.swizzle == "swizzle_128b"
    pipe = lang.Pipeline(2, full="tma", empty="tcgen05")
    assert isinstance(pipe.empty, lang.TCGen05Bar)
    dsl.barrier()
    with lang.WarpRole(0):
        st = lang.PipelineState(2)
        pipe.producer_acquire(st)
        cpasync.copy(ta, [0, 0], ring.stage(0), tma_bar_ptr=pipe.full.at(st.index))
        pipe.producer_commit(st, ta.tile_bytes)
    with lang.WarpRole(1):
        st = lang.PipelineState(2)
        pipe.consumer_wait(st)
        if pred:
            pipe.empty.arrive(st.index, pred=dsl.elect_sync())
        else:
            pipe.consumer_release(st)      # one elected lane: tcgen05.commit on the empty barrier


@pytest.mark.parametrize("pred", [False, True])
def test_pipeline_tcgen05_empty_side_commits(pred):
    c = _compile(_pipeline, pred=pred)
    assert "tcgen05.commit.cta_group::1.mbarrier::arrive::one" in c.ptx
    assert "cp.async.bulk.tensor.2d" in c.ptx
    ops = set(re.findall(r"\b(UTCBAR[A-Z0-9_.]*)", _sass(c)))
    assert ops, "no UTCBAR in the SASS"


# --------------------------------------------------------------------------- the example

@pytest.mark.parametrize("cta_group,n,k", [(1, 128, 64), (2, 256, 128)])
def test_example_compiles_not_runs(cta_group, n, k, tmp_path):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    out = tmp_path / "aot"
    p = subprocess.run([sys.executable, str(REPO / "examples" / "tcgen05_gemm.py"), "--cta-group", str(cta_group),
                        "--n", str(n), "--k", str(k), "--aot", str(out)], capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "compiled, not run (no sm_100 GPU here)" in p.stdout
    assert f"tcgen05.mma.cta_group::{cta_group}.kind::f16" in p.stdout
    assert f"tcgen05.alloc.cta_group::{cta_group}" in p.stdout
    assert f"tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes{'.cta_group::2' * (cta_group == 2)}" \
        in p.stdout
    sass = re.search(r"SASS: (.*)", p.stdout).group(1)
    if not sass.startswith("skipped"):
        want = ["UTCHMMA", "UTCBAR", "LDTM", "UTCATOMSWS"] if cta_group == 1 else [
            "UTCHMMA.2CTA", "UTCBAR.2CTA.MULTICAST", "UTCATOMSWS.2CTA", "LDTM"]
        for w in want:
            assert w in sass, (w, sass)
    meta = json.loads((out / "kernels.json").read_text())
    assert meta["arch"] == "sm_100a"
    rec = meta["records"]["kernels"][f"tcgen05_gemm_{cta_group}cta"]
    assert (out / "module.cubin").read_bytes()[:4] == b"\x7fELF"
    assert rec["launch"]["block"] == [128, 1, 1]
    assert rec["launch"].get("cluster") == ([2, 1, 1] if cta_group == 2 else None)
    tma = [p for p in rec["params"] if p["kind"] == "descriptor"]
    assert len(tma) == 2 and all(("cta_group = 2" in p["atom"]) == (cta_group == 2) for p in tma)


def test_example_instructions_in_order():
    """The one-tile GEMM's PTX: TMEM allocated before the TMA loads, the
    MMAs (K/16 of them, the first without accumulate) before the commit,
    the TMEM load after the commit's barrier, dealloc last."""
    sys.path.insert(0, str(REPO / "examples"))
    try:
        import tcgen05_gemm
    finally:
        sys.path.pop(0)
    _, spec = tcgen05_gemm.build(1, 128, 128, "bf16")
    ptx = spec.compile().ptx
    order = [ptx.index(s) for s in ("tcgen05.alloc", "cp.async.bulk.tensor", "tcgen05.mma", "tcgen05.commit",
                                    "tcgen05.ld", "tcgen05.dealloc")]
    assert order == sorted(order), order
    mmas = re.findall(r"tcgen05\.mma\.\S+ \[%r\d+\], %rd\d+, %rd\d+, %r\d+, (%p\d+);", ptx)
    assert len(mmas) == 128 // 16
    assert len(set(mmas[1:])) == 1 and mmas[0] != mmas[1]     # accumulate off, then on
    idesc = tcgen05.instr_descriptor_bits("f32", "bf16", "bf16", 128, 128)
    assert f", {idesc};" in ptx


def test_docs_say_compiled_not_run():
    """Nothing sm_100 has run here, and the docs say so where they show it."""
    readme = (REPO / "README.md").read_text()
    lines = [ln for ln in readme.splitlines() if "tcgen05" in ln]
    assert lines and all("compiled, not run" in ln for ln in lines), lines
    dsl_md = (REPO / "docs" / "dsl.md").read_text()
    section = dsl_md[dsl_md.index("## Blackwell (compiled, not run)"):]
    assert "**Compiled, not run.**" in section[:400]
    assert "compiled, not run (no sm_100 GPU here)" in (REPO / "examples" / "tcgen05_gemm.py").read_text()


# --------------------------------------------------------------------------- on an sm_100 GPU (none is lent here)

def _sm100():
    try:
        from cuda.bindings import driver as d
        if d.cuInit(0)[0] != d.CUresult.CUDA_SUCCESS:
            return False
        _, dev = d.cuDeviceGet(0)
        attr = d.CUdevice_attribute
        _, major = d.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
        _, minor = d.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
        return (major, minor) == (10, 0)
    except Exception:
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _sm100(), reason="needs an sm_100 GPU (none is lent here: the tcgen05 path is compiled, "
                                         "not run)")
@pytest.mark.parametrize("cta_group,n,k", [(1, 128, 64), (1, 64, 192), (2, 256, 128)])
def test_example_gemm_on_sm100(cta_group, n, k):
    """Never run so far: the one-tile GEMM against torch, for the day an sm_100 GPU is lent."""
    torch = pytest.importorskip("torch")
    sys.path.insert(0, str(REPO / "examples"))
    try:
        import tcgen05_gemm
    finally:
        sys.path.pop(0)
    _, spec = tcgen05_gemm.build(cta_group, n, k, "bf16")
    compiled = spec.compile()
    m = 128 * cta_group
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    getattr(compiled, spec.name)(a, b, d, grid=(cta_group,))
    torch.cuda.synchronize()
    torch.testing.assert_close(d, a.float() @ b.float().T, rtol=1e-3, atol=1e-3)
