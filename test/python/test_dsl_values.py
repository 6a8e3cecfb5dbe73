"""Values of the kernel language: scalar types, promotion, signed and
unsigned integer semantics, conversions (fp8 included), vectors and packed
math. Built to IR and PTX on the CPU; the arithmetic is checked on what
MLIR's folder computes from the IR the DSL built."""

import math
import re

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import build_error, folded_stores, instructions, ptx, ptx_constant_stores  # noqa: E402
from nvtma import dsl, lang  # noqa: E402
from nvtma.dsl import numeric  # noqa: E402

I32 = dsl.Tensor("i32", (64,))
F32 = dsl.Tensor("f32", (64,))


# --------------------------------------------------------------------------- types and promotion

def test_type_names_resolve_to_one_class():
    assert dsl.dtype("f16") is dsl.dtype("Float16") is dsl.dtype("float16") is dsl.Float16
    assert dsl.dtype("bf16") is dsl.BFloat16
    assert dsl.dtype("torch.float8_e4m3fn") is dsl.dtype("e4m3") is dsl.Float8E4M3FN
    assert dsl.dtype("f8E5M2") is dsl.Float8E5M2
    assert dsl.dtype("i32") is dsl.Int32 and dsl.dtype("u32") is dsl.Uint32 and dsl.dtype("index") is dsl.Index
    assert (dsl.Int32.width, dsl.Int32.signed) == (32, True)
    assert (dsl.Uint16.width, dsl.Uint16.signed) == (16, False)
    assert dsl.Float8E4M3FN.is_float and dsl.Float8E4M3FN.width == 8
    with pytest.raises(dsl.KernelBuildError, match="unknown element type 'f12'") as e:
        dsl.dtype("f12")
    assert e.value.rule == "dtype"


@pytest.mark.parametrize("a,b,want", [
    (dsl.Int32, dsl.Uint32, dsl.Uint32),      # same width, mixed signedness: unsigned, like C
    (dsl.Int32, dsl.Int64, dsl.Int64),
    (dsl.Uint8, dsl.Int16, dsl.Int16),
    (dsl.Index, dsl.Int32, dsl.Index),
    (dsl.Index, dsl.Uint32, dsl.Index),
    (dsl.Index, dsl.Uint64, dsl.Uint64),      # Index is signed 64-bit: with Uint64 it is unsigned, as Int64 is
    (dsl.Boolean, dsl.Int8, dsl.Int8),
    (dsl.Int32, dsl.Float16, dsl.Float16),
    (dsl.Float16, dsl.Float32, dsl.Float32),
    (dsl.Float16, dsl.BFloat16, dsl.Float32),  # neither holds the other
    (dsl.Float8E4M3FN, dsl.Float16, dsl.Float32),
])
def test_promotion(a, b, want):
    assert numeric.promote(a, b) is want
    assert numeric.promote(b, a) is want


def test_index_and_uint64_compare_unsigned():
    """Index met Uint64 as Index: Uint64(2**63) > Index(0) compared signed, so it was False."""
    @dsl.kernel(block=(32,))
    def k(y: I32, u: dsl.Uint64):
        y[0] = (u > dsl.block_idx().to(dsl.Index)).to(dsl.Int32)

    ir = str(k.build().ir)
    assert "arith.cmpi ugt" in ir and "arith.cmpi sgt" not in ir


def test_operator_result_types():
    seen = {}

    @dsl.kernel(block=(32,))
    def k(y: F32, a: dsl.Int32, u: dsl.Uint32, h: dsl.Float16, b: dsl.BFloat16):
        seen["i32+1"] = type(a + 1)
        seen["1.5*i32"] = type(1.5 * a)
        seen["i32+u32"] = type(a + u)
        seen["f16*2"] = type(h * 2)
        seen["f16+bf16"] = type(h + b)
        seen["i32<u32"] = type(a < u)
        seen["tid"] = type(dsl.thread_idx())
        y[0] = (a + u).to(dsl.Float32)

    k.build()
    assert seen == {"i32+1": dsl.Int32, "1.5*i32": dsl.Float32, "i32+u32": dsl.Uint32, "f16*2": dsl.Float16,
                    "f16+bf16": dsl.Float32, "i32<u32": dsl.Boolean, "tid": dsl.Int32}


def test_constants_take_values_or_bit_patterns_and_refuse_the_rest():
    @dsl.kernel(block=(32,))
    def ok(y: I32):
        y[0] = dsl.Int8(200).to(dsl.Int32)      # an 8-bit pattern: -56
        y[1] = dsl.Uint8(-1).to(dsl.Int32)      # 255
        y[2] = dsl.Int32(0xFFFFFFFF)            # a mask: -1

    assert folded_stores(ok) == {0: -56, 1: 255, 2: -1}

    @dsl.kernel(block=(32,))
    def bad(y: I32):
        y[0] = dsl.Int8(300).to(dsl.Int32)

    assert "300 does not fit Int8" in str(build_error(bad, "range"))


# --------------------------------------------------------------------------- integer semantics

def test_signed_and_unsigned_division_remainder_shift_compare_fold_like_python_and_c():
    @dsl.kernel(block=(32,))
    def k(y: I32):
        y[0] = dsl.Int32(-7) // 2                          # floor: -4 (C would say -3)
        y[1] = dsl.Int32(-7) % 2                           # floor: 1 (C: -1)
        y[2] = dsl.Int32(7) % -2                           # -1, the divisor's sign
        y[3] = (dsl.Uint32(0xFFFFFFF9) // 2).to(dsl.Int32)  # unsigned: 2147483644
        y[4] = (dsl.Uint32(0xFFFFFFF9) % 4).to(dsl.Int32)   # 1
        y[5] = dsl.select(dsl.Int32(-1) < dsl.Int32(1), 1, 0)          # signed: true
        y[6] = dsl.select(dsl.Uint32(0xFFFFFFFF) < dsl.Uint32(1), 1, 0)  # unsigned: false
        y[7] = dsl.Int32(-16) >> 2                         # arithmetic: -4
        y[8] = (dsl.Uint32(0xFFFFFFF0) >> 2).to(dsl.Int32)  # logical: 0x3FFFFFFC
        y[9] = ~dsl.Int32(5)                               # -6
        y[10] = -dsl.Int32(5) * 3 + 1                      # -14

    got = folded_stores(k)
    assert got == {0: -4, 1: 1, 2: -1, 3: 2147483644, 4: 1, 5: 1, 6: 0, 7: -4, 8: 0x3FFFFFFC, 9: -6, 10: -14}
    assert got[0] == -7 // 2 and got[1] == -7 % 2 and got[2] == 7 % -2


def test_signedness_picks_the_ops():
    @dsl.kernel(block=(32,))
    def k(y: I32, a: dsl.Int32, u: dsl.Uint32):
        y[0] = a // 3
        y[1] = (u // 3).to(dsl.Int32)
        y[2] = a % 3
        y[3] = (u % 3).to(dsl.Int32)
        y[4] = a >> 3
        y[5] = (u >> 3).to(dsl.Int32)
        y[6] = dsl.select(a < 7, 1, 0)
        y[7] = dsl.select(u < 7, 1, 0)

    ir = k.build().ir
    for op in ("arith.floordivsi", "arith.divui", "arith.remsi", "arith.remui", "arith.shrsi", "arith.shrui",
               "arith.cmpi slt", "arith.cmpi ult"):
        assert op in ir, op
    text = ptx(k)
    assert "shr.s32" in text and "shr.u32" in text
    assert re.search(r"setp\.\w+\.s32", text) and re.search(r"setp\.\w+\.u32", text)


# --------------------------------------------------------------------------- conversions

def test_integer_and_float_conversions_fold_to_the_expected_values():
    @dsl.kernel(block=(32,))
    def k(y: I32):
        y[0] = dsl.Float32(-1.7).to(dsl.Int32)      # toward zero: -1
        y[1] = dsl.Int8(-1).to(dsl.Int32)           # sign-extended
        y[2] = dsl.Uint8(255).to(dsl.Int32)         # zero-extended
        y[3] = dsl.Int32(300).to(dsl.Uint8).to(dsl.Int32)  # truncated: 44
        y[4] = dsl.Uint32(0xFFFFFFFF).to(dsl.Float32).to(dsl.Int64).to(dsl.Int32)  # 2**32 -> low word 0
        y[5] = dsl.Int32(-3).to(dsl.Float16).to(dsl.Int32)
        y[6] = dsl.Float16(2.5).to(dsl.BFloat16).to(dsl.Float32).to(dsl.Int32)
        y[7] = dsl.Boolean(True).to(dsl.Int32)
        y[8] = dsl.Int32(7).to(dsl.Boolean).to(dsl.Int32)
        y[9] = dsl.abs(dsl.Int32(-5))
        y[10] = (dsl.abs(dsl.Float32(-2.5)) * 2.0).to(dsl.Int32)
        y[11] = dsl.max(dsl.Int32(-3), dsl.Int32(2), dsl.Int32(-9))
        y[12] = dsl.min(dsl.Uint32(0xFFFFFFFF), dsl.Uint32(4)).to(dsl.Int32)  # unsigned: 4

    # (LLVM folds the float -> int conversions, saturating intrinsics MLIR's canonicalizer leaves)
    assert ptx_constant_stores(k) == {0: -1, 1: -1, 2: 255, 3: 44, 4: 0, 5: -3, 6: 2, 7: 1, 8: 1, 9: 5, 10: 5,
                                      11: 2, 12: 4}


# Known encodings: OCP 8-bit floating point spec, E4M3 (bias 7, no inf,
# max 448, NaN 0x7F) and E5M2 (bias 15, max 57344). Infinities saturate to
# the largest finite value and NaN is 0x7F, as the GPU's cvt.rn.satfinite
# converts at run time (E5M2 has inf, 0x7C, but no conversion here makes it:
# measured on the H200, test_gpu.py's conversions).
E4M3 = [(1.0, 0x38), (-1.0, 0xB8), (2.0, 0x40), (0.5, 0x30), (1.5, 0x3C), (1.0625, 0x38), (1.1875, 0x3A),
        (448.0, 0x7E), (1000.0, 0x7E), (-1e9, 0xFE), (2.0 ** -6, 0x08), (2.0 ** -9, 0x01), (0.0, 0x00),
        (-0.0, 0x80), (math.nan, 0x7F)]
E5M2 = [(1.0, 0x3C), (-2.0, 0xC0), (1.5, 0x3E), (1.125, 0x3C), (57344.0, 0x7B), (math.inf, 0x7B),
        (-math.inf, 0xFB), (2.0 ** -16, 0x01), (2.0 ** -14, 0x04), (math.nan, 0x7F)]


@pytest.mark.parametrize("cls,table", [(dsl.Float8E4M3FN, E4M3), (dsl.Float8E5M2, E5M2)], ids=["e4m3", "e5m2"])
def test_fp8_constants_have_the_standard_bit_patterns(cls, table):
    @dsl.kernel(block=(32,))
    def k(y: dsl.Tensor(cls.name, (64,))):
        for i, (v, _) in enumerate(table):
            y[i] = cls(v)

    ir = k.build().ir
    # an fp8 constant is an i8 constant bitcast to the fp8 type
    got = [int(v) & 0xFF for v in re.findall(r"arith\.constant (-?\d+) : i8", ir)]
    assert got == [bits for _, bits in table]
    assert ir.count("arith.bitcast") == len(table)


def test_fp8_scalar_and_packed_conversions_use_the_cvt_instructions():
    @dsl.kernel(block=(32,))
    def k(e4: dsl.Tensor("f8E4M3FN", (256,)), e5: dsl.Tensor("f8E5M2", (256,)), h: dsl.Tensor("f16", (256,)),
          f: dsl.Tensor("f32", (256,))):
        i = dsl.thread_idx()
        h.store_vec(e4.load_vec(2, i * 2).to(dsl.Float16), i * 2)          # e4m3x2 -> f16x2
        e4.store_vec(h.load_vec(2, i * 2 + 64).to(dsl.Float8E4M3FN), i * 2)  # f16x2 -> e4m3x2
        h.store_vec(e5.load_vec(2, i * 2).to(dsl.Float16), i * 2 + 128)      # e5m2x2 -> f16x2
        e5.store_vec(f.load_vec(2, i * 2).to(dsl.Float8E5M2), i * 2)        # f32x2 -> e5m2x2
        e4.store_vec(f.load_vec(4, i * 4 + 64).to(dsl.Float8E4M3FN), i * 4 + 64)  # f32x4 -> 2 cvts
        e4[i + 192] = f[i + 128].to(dsl.Float8E4M3FN)                         # scalar: a pair with 0
        f[i] = e4[i + 128].to(dsl.Float32)

    ins = instructions(ptx(k))
    for want in ("cvt.rn.f16x2.e4m3x2", "cvt.rn.satfinite.e4m3x2.f16x2", "cvt.rn.f16x2.e5m2x2",
                 "cvt.rn.satfinite.e5m2x2.f32", "cvt.rn.satfinite.e4m3x2.f32"):
        assert want in ins, (want, sorted(ins))


def test_fp8_has_no_arithmetic_and_converts_lanes_in_pairs():
    @dsl.kernel(block=(32,))
    def add(e: dsl.Tensor("f8E4M3FN", (64,))):
        e[0] = e[1] + e[2]

    assert "convert first" in str(build_error(add, "fp8-arith"))

    @dsl.kernel(block=(32,))
    def odd(e: dsl.Tensor("f8E4M3FN", (64,)), f: F32):
        v = dsl.vector_of([f[0], f[1], f[2]], dsl.Float32)
        e[0] = v.to(dsl.Float8E4M3FN)[0]

    assert "pairs of lanes; this vector has 3" in str(build_error(odd, "fp8-convert"))


def test_f32_pairs_convert_to_packed_bf16x2_and_f16x2():
    @dsl.kernel(block=(32,))
    def k(f: dsl.Tensor("f32", (256,)), b: dsl.Tensor("bf16", (256,)), h: dsl.Tensor("f16", (256,))):
        i = dsl.thread_idx()
        b.store_vec(f.load_vec(2, i * 2).to(dsl.BFloat16), i * 2)
        h.store_vec(f.load_vec(4, i * 4 + 64).to(dsl.Float16), i * 4)
        f.store_vec(b.load_vec(2, i * 2 + 64).to(dsl.Float32), i * 2)

    text = ptx(k)
    assert len(re.findall(r"cvt\.rn\.bf16x2\.f32", text)) == 1
    assert len(re.findall(r"cvt\.rn\.f16x2\.f32", text)) == 2
    assert not re.search(r"cvt\.rn\.bf16\.f32", text)  # no lane-by-lane fallback


def test_packed_lane_order():
    """Lane 0 of a packed f32x2 -> bf16x2 result is the low half: the cvt's
    first source (src_hi) must be lane 1."""
    @dsl.kernel(block=(32,))
    def k(f: dsl.Tensor("f32", (64,)), b: dsl.Tensor("bf16", (64,))):
        b.store_vec(f.load_vec(2, 0).to(dsl.BFloat16), 0)

    ir = k.build().ir
    lanes = dict(re.findall(r"(%\d+) = vector\.extract %\d+\[(\d)\]", ir))
    cvt = re.search(r"nvvm\.convert\.f32x2\.to\.bf16x2 (%\d+), (%\d+)", ir)
    assert cvt, ir
    assert (lanes[cvt.group(1)], lanes[cvt.group(2)]) == ("1", "0")


# --------------------------------------------------------------------------- vectors and math

def test_two_lane_half_math_is_packed():
    @dsl.kernel(block=(32,))
    def k(h: dsl.Tensor("f16", (256,)), b: dsl.Tensor("bf16", (256,))):
        i = dsl.thread_idx()
        x, y = h.load_vec(2, i * 2), h.load_vec(2, i * 2 + 64)
        h.store_vec(dsl.fma(x, y, x), i * 2)
        h.store_vec(x + y, i * 2 + 128)
        h.store_vec(x * y, i * 2 + 130)
        h.store_vec(dsl.min(x, y), i * 2 + 132)
        h.store_vec(dsl.max(x, y), i * 2 + 134)
        p, q = b.load_vec(2, i * 2), b.load_vec(2, i * 2 + 64)
        b.store_vec(dsl.fma(p, q, p), i * 2)
        b.store_vec(dsl.max(p, q), i * 2 + 128)

    ins = instructions(ptx(k))
    for want in ("fma.rn.f16x2", "add.rn.f16x2", "mul.rn.f16x2", "min.f16x2", "max.f16x2", "fma.rn.bf16x2",
                 "max.bf16x2"):
        assert want in ins, (want, sorted(ins))
    assert "max.f32" not in ins and "min.f32" not in ins  # no f32 detour


def test_vector_lanes_shapes_and_reductions():
    seen = {}

    @dsl.kernel(block=(32,))
    def k(f: dsl.Tensor("f32", (256,)), y: F32):
        i = dsl.thread_idx()
        v = f.load_vec(8, i * 8)
        seen["len"] = len(v)
        seen["dtype"] = v.dtype
        lo, hi = v[0:4], v[4:8]
        seen["halves"] = (len(lo), len(hi))
        w = lo.concat(hi).insert(3, 1.0)
        seen["lane"] = type(w[3])
        y[i] = (w * 2.0 + 1.0).reduce("add") + v.reduce("max")
        bits = v[0:2].bitcast(dsl.Uint64)
        seen["bits"] = type(bits)
        y[i + 32] = dsl.select(bits == 0, 1.0, 0.0)

    ir = k.build().ir
    assert seen == {"len": 8, "dtype": dsl.Float32, "halves": (4, 4), "lane": dsl.Float32, "bits": dsl.Uint64}
    # max: vector.reduction; a float add over 2^k lanes: a halving tree (no +0.0 seed, log2 n deep)
    assert "vector.reduction <maxnumf>" in ir and "vector.reduction <add>" not in ir
    text = ptx(k)
    assert "ld.global.v4.b32" in text
    assert not re.search(r"add\.rn\.f32\s+%r\d+, %r\d+, 0f00000000", text)


def test_vector_operand_mismatch_is_a_build_error():
    @dsl.kernel(block=(32,))
    def k(f: dsl.Tensor("f32", (256,))):
        f.store_vec(f.load_vec(4, 0) + f.load_vec(2, 8), 0)

    assert "lane counts and types must match" in str(build_error(k, "type"))


def test_math_functions_become_the_fast_instructions():
    @dsl.kernel(block=(32,))
    def k(f: dsl.Tensor("f32", (256,))):
        i = dsl.thread_idx()
        s = f[i]
        f[i + 32] = dsl.exp2(s)
        f[i + 64] = dsl.rsqrt(s)
        f[i + 96] = dsl.fdividef(s, f[i + 1])
        f[i + 128] = dsl.fma(s, f[i + 2], f[i + 3])
        f[i + 192] = dsl.select(s > 0.0, s, f[i + 4])
        f[i + 224] = dsl.log2(s) + dsl.sqrt(s)
        f[i + 160] = dsl.tanh(s)

    text = ptx(k)
    ins = instructions(text)
    for want in ("ex2.approx.f32", "rsqrt.approx.f32", "div.approx.f32", "fma.rn.f32", "selp.f32",
                 "lg2.approx.f32", "sqrt.rn.f32", "tanh.approx.f32"):
        assert want in ins, (want, sorted(ins))
    assert "inline asm" not in text  # tanh too: llvm.tanh with afn, not inline PTX


def test_integer_division_by_slash_is_refused():
    @dsl.kernel(block=(32,))
    def k(y: I32, a: dsl.Int32):
        y[0] = a / 2

    assert "use // for integer division" in str(build_error(k, "operator"))


def test_numeric_audit_vector_mod_floors_and_shifts_keep_their_left_type():
    """Vector % of signed lanes was C's remainder while // floored ((v // 2) * 2 + v % 2 was -9 for -7); a
    shift took the promoted type (Int32(-8) >> Uint32(1) shifted logically: 2147483644)."""
    @dsl.kernel(block=(32,))
    def k(out: dsl.Tensor("i32", (8,))):
        v = dsl.full(4, -7, dsl.Int32)
        out[0] = (v % 2)[0]
        out[1] = ((v // 2) * 2 + v % 2)[1]
        out[2] = (dsl.full(2, 7, dsl.Int32) % -2)[0]
        r = dsl.Int32(-8) >> dsl.Uint32(1)
        assert type(r) is dsl.Int32 and type(dsl.Int32(1) << dsl.Int64(3)) is dsl.Int32
        out[3] = r
    assert folded_stores(k) == {0: 1, 1: -7, 2: -1, 3: -4}


@pytest.mark.parametrize("expr,rule,message", [
    (lambda n: n << 32, "shift", "a shift of Int32 by 32: an amount in 0..31"),
    (lambda n: n >> -1, "shift", "a shift of Int32 by -1"),
    (lambda n: dsl.full(2, n, dsl.Int32) << 40, "shift", "a shift of Int32 by 40"),
    (lambda n: n // 0, "division", "`//` of Int32 by 0"),
    (lambda n: dsl.full(2, n, dsl.Int32) % 0, "division", "`%` of Int32 by 0"),
    (lambda n: n.to(dsl.Int8) < 200, "range", "200 does not fit Int8 (compare"),
    (lambda n: n // 0x80000000, "range", "2147483648 does not fit Int32 (floordiv"),
    (lambda n: dsl.max(n, 0xFFFFFFFF), "range", "4294967295 does not fit Int32 (max"),
    (lambda n: dsl.full(2, n, dsl.Int32) * dsl.Float32(2.5), "type", "with a vector of Int32 lanes: convert"),
    (lambda n: dsl.full(2, 1.0, dsl.Float16) + n.to(dsl.Float32), "type", "with a vector of Float16 lanes"),
], ids=["shl-width", "shr-negative", "vector-shl", "floordiv-0", "vector-mod-0", "int8-lt-200", "floordiv-2^31",
        "max-0xffffffff", "int-vector-times-float", "f16-vector-plus-f32"])
def test_numeric_audit_silent_results_are_build_errors(expr, rule, message):
    """Each built and computed something else: LLVM poison deleted the result's store (shifts past the width,
    division by 0), a Python int past a signed type was its bit pattern (Int8(5) < 200 was false), a scalar was
    converted to the lanes' type (an Int32 vector times 2.5 multiplied by 2)."""
    @dsl.kernel(block=(32,))
    def k(out: dsl.Tensor("i32", (8,)), n: dsl.Int32):
        r = expr(n)
        out[0] = r[0] if isinstance(r, dsl.Vector) else r
    err = build_error(k, rule)
    assert message in str(err), str(err)


def test_static_shared_buffers_keep_their_unsigned_elements():
    @dsl.kernel(block=(32,))
    def k(out: dsl.Tensor("u32", (8,))):
        s = lang.SMEMPool().alloc_static((4,), dsl.Uint32)
        assert type(s[0]) is dsl.Uint32
        out[0] = s[0] >> 4
    ir = k.build().ir
    assert "arith.shrui" in ir and "arith.shrsi" not in ir


def test_float_to_int_conversions_saturate_as_constants_and_at_run_time():
    """arith's fptosi made a NaN, inf or out-of-range value LLVM poison: a constant's store was deleted, and at run
    time cvt.rzi.s16 let an Int8 hold 300. Now NaN is 0 and values clamp (PTX's cvt.rzi rule), one cvt.rzi for
    32- and 64-bit results."""
    @dsl.kernel(block=(32,))
    def k(out: dsl.Tensor("i32", (8,)), f: dsl.Float32):
        out[0] = dsl.Float32(float("nan")).to(dsl.Int32)
        out[1] = dsl.Float32(3e9).to(dsl.Int32)
        out[2] = dsl.Float32(-1.0).to(dsl.Uint32).to(dsl.Int32)
        out[3] = dsl.Float32(300.0).to(dsl.Int8).to(dsl.Int32)
        out[4] = dsl.Float32(float("-inf")).to(dsl.Int32)
        out[5] = f.to(dsl.Int32)
        out[6] = f.to(dsl.Int8).to(dsl.Int32)
        out[7] = dsl.full(2, f, dsl.Float32).to(dsl.Int8)[0].to(dsl.Int32)
    text = ptx(k)
    assert ptx_constant_stores(k) == {0: 0, 1: 2147483647, 2: 0, 3: 127, 4: -2147483648}
    assert text.count("st.global.b32") == 8
    assert text.count("cvt.rzi.s32.f32") == 1 and "setp.gt.f32" not in text   # the 32-bit one: one cvt
    assert "min.f32" in text and "max.f32" in text     # the Int8 ones clamp first (the lane and the scalar: one)


def test_reflected_and_unary_vector_operators_and_divmod_work():
    """3 // v, 1 << v, ~v, abs(v), divmod(x, 3) were Python TypeErrors; 2 ** x and round(x) are typed errors."""
    @dsl.kernel(block=(32,))
    def k(out: dsl.Tensor("i32", (8,))):
        v = dsl.full(2, -7, dsl.Int32)
        out[0] = (15 // dsl.full(2, 4, dsl.Int32))[0]
        out[1] = (1 << dsl.full(2, 3, dsl.Int32))[1]
        out[2] = (~v)[0]
        out[3] = abs(v)[1]
        q, r = divmod(dsl.Int32(-7), 2)
        out[4], out[5] = q, r
        out[6] = (6 & dsl.full(2, 3, dsl.Int32))[0]
    assert ptx_constant_stores(k) == {0: 3, 1: 8, 2: 6, 3: 7, 4: -4, 5: 1, 6: 2}
    for expr, message in [(lambda: 2 ** dsl.Int32(3), "** on run-time values"),
                          (lambda: round(dsl.Float32(2.5)), "round() of a run-time Float32")]:
        @dsl.kernel(block=(32,))
        def bad(out: dsl.Tensor("i32", (8,))):
            out[0] = expr()
        assert message in str(build_error(bad, "operator"))


def test_int64_with_a_python_float_is_f64_and_redux_takes_32_bit_integers():
    """Int64(2**40 + 1) + 0.5 was a Float32 (2**40); reduce_add_sync_u32 converted a Float32 and truncated an
    Int64, silently."""
    from nvtma import cuda

    @dsl.kernel(block=(32,))
    def k(out: dsl.Tensor("i32", (8,)), n: dsl.Int64):
        r = n + 0.5
        assert type(r) is dsl.Float64 and type(n.to(dsl.Int32) + 0.5) is dsl.Float32
        out[0] = r.to(dsl.Int32)
    k.build()
    for val in (lambda: dsl.Float32(1.0), lambda: dsl.Int64(1), lambda: 2.5):
        @dsl.kernel(block=(32,))
        def bad(out: dsl.Tensor("i32", (8,))):
            out[0] = cuda.reduce_add_sync_u32(val())
        assert "a 32-bit integer" in str(build_error(bad, "type"))


def test_boolean_arithmetic_is_refused_logic_works():
    """Boolean + Boolean was 1-bit arithmetic: True + True was False."""
    @dsl.kernel(block=(32,))
    def k(out: dsl.Tensor("i32", (8,)), n: dsl.Int32):
        b = n > 0
        out[0] = (b + b).to(dsl.Int32)
    assert "`add` of Booleans: convert them first" in str(build_error(k, "operator"))

    @dsl.kernel(block=(32,))
    def ok(out: dsl.Tensor("i32", (8,))):
        t, f = dsl.Int32(3) > 0, dsl.Int32(3) < 0
        out[0] = (t & ~f).to(dsl.Int32) + (t ^ True).to(dsl.Int32) + t.to(dsl.Int32) * 2 + (t | f).to(dsl.Int32)
    assert ptx_constant_stores(ok) == {0: 4}
