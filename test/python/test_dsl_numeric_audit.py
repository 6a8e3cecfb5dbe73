"""An audit of the numeric and vector types for silently wrong results and
crashes: a test whose docstring says what was wrong failed before its fix;
the others keep what was right (in-range values, the bit-pattern rule).
Built to IR and PTX on the CPU; values are what MLIR's or LLVM's folder
computes from the IR the DSL built."""

import re

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import build_error, folded_stores, instructions, ptx, ptx_constant_stores  # noqa: E402
from nvtma import dsl, ir  # noqa: E402
from nvtma.dsl import numeric  # noqa: E402

I32 = dsl.Tensor("i32", (64,))
I64 = dsl.Tensor("i64", (64,))
F32 = dsl.Tensor("f32", (64,))


# --------------------------------------------------------------------------- Python ints with unsigned types

@pytest.mark.parametrize("op", [
    lambda u: u < -1,
    lambda u: u == -1,
    lambda u: -1 >= u,
    lambda u: u // -2,
    lambda u: u % -3,
    lambda u: dsl.max(u, -1),
    lambda u: dsl.min(-5, u),
    lambda u: dsl.full(2, u) < -1,
])
def test_a_negative_python_int_with_an_unsigned_value_is_refused(op):
    """A negative Python int took a Uint's bit pattern: Uint32(5) < -1 was true, Uint32(5) // -2 was 0 and
    max(u, -1) was 2**32 - 1, where Python (and the signed types' rule) says otherwise."""
    @dsl.kernel(block=(32,))
    def k(y: I32, u: dsl.Uint32):
        r = op(u)
        y[0] = (r[0] if isinstance(r, dsl.Vector) else r).to(dsl.Int32)

    assert "does not fit" not in str(e := build_error(k, "range")) and "-" in str(e)


def test_unsigned_with_python_ints_in_range_and_bit_patterns_still_build():
    @dsl.kernel(block=(32,))
    def k(y: I32):
        u = dsl.Uint32(0xFFFFFFF0)
        y[0] = (u < 0xFFFFFFFF).to(dsl.Int32)
        y[1] = (u // 16).to(dsl.Int32)
        y[2] = (u + -1).to(dsl.Int32)     # + - * & | ^ take the bit pattern, as documented
        y[3] = (u & -16).to(dsl.Int32)

    assert folded_stores(k) == {0: 1, 1: 0x0FFFFFFF, 2: 0xFFFFFFEF - (1 << 32), 3: 0xFFFFFFF0 - (1 << 32)}


# --------------------------------------------------------------------------- DSL constants as amounts and divisors

@pytest.mark.parametrize("op,rule", [
    (lambda x: x << dsl.Int32(40), "shift"),
    (lambda x: x >> dsl.Uint32(32), "shift"),
    (lambda x: x >> dsl.Int32(-1), "shift"),
    (lambda x: x // dsl.Int32(0), "division"),
    (lambda x: x % dsl.Uint64(0), "division"),
    (lambda x: (x.to(dsl.Int8) << dsl.Int32(264)).to(dsl.Int32), "shift"),   # an i8 of it is 8
    (lambda x: (dsl.full(4, x) << dsl.full(4, 33, dsl.Int32))[0], "shift"),
    (lambda x: (dsl.full(4, x) // dsl.Int32(0))[0], "division"),
    (lambda x: x << (dsl.Int32(16) + 16), "shift"),           # (the review: sums of constants, which LLVM folds)
    (lambda x: x % (dsl.Int32(1) - 1), "division"),
    (lambda x: x >> (dsl.Int32(8) * 4), "shift"),
])
def test_a_shift_or_division_by_a_dsl_constant_out_of_range_is_refused(op, rule):
    """x << Int32(40) and x // Int32(0) are LLVM poison as a Python 40 or 0 is (refused): the store of the
    result was deleted without a word (the kernel stored nothing)."""
    @dsl.kernel(block=(32,))
    def k(y: I32, x: dsl.Int32):
        y[0] = op(x)

    build_error(k, rule)


def test_shifts_and_divisions_by_dsl_constants_in_range_fold():
    @dsl.kernel(block=(32,))
    def k(y: I32):
        x = dsl.Int32(-64)
        y[0] = x >> dsl.Int32(3)
        y[1] = x << dsl.Uint8(31)
        y[2] = x // dsl.Int64(-8)
        y[3] = (dsl.full(2, x, dsl.Int32) >> dsl.full(2, 1, dsl.Int32))[1]
        y[4] = dsl.Int8(-128).to(dsl.Int32) >> dsl.Index(7)

    assert folded_stores(k) == {0: -8, 1: 0, 2: 8, 3: -32, 4: -1}


# --------------------------------------------------------------------------- Booleans

def test_boolean_negation_is_refused_and_abs_of_unsigned_values_is_the_value():
    """-Boolean(True) was True (0 - 1 in one bit) where arithmetic on Booleans is refused."""
    @dsl.kernel(block=(32,))
    def k(y: I32, b: dsl.Boolean):
        y[0] = (-b).to(dsl.Int32)

    build_error(k, "operator")

    @dsl.kernel(block=(32,))
    def k2(y: I32, b: dsl.Boolean, u: dsl.Uint32):
        y[0] = dsl.abs(b).to(dsl.Int32)
        y[1] = dsl.abs(u).to(dsl.Int32)

    text = str(k2.build().ir)
    assert "arith.select" not in text and "arith.subi" not in text


@pytest.mark.parametrize("kind", ["add", "mul"])
def test_sum_of_boolean_lanes_is_refused(kind):
    """reduce("add") of Boolean lanes was their parity (an i1 sum: three True lanes summed to 1)."""
    @dsl.kernel(block=(32,))
    def k(y: I32, b: dsl.Boolean):
        y[0] = dsl.vector_of([b, b, b]).reduce(kind).to(dsl.Int32)

    build_error(k, "operator")


def test_boolean_lanes_any_and_all_and_counted_as_ints():
    @dsl.kernel(block=(32,))
    def k(y: I32):
        v = dsl.vector_of([True, False, True])
        y[0] = v.reduce("max").to(dsl.Int32)
        y[1] = v.reduce("min").to(dsl.Int32)
        y[2] = v.to(dsl.Int32).reduce("add")

    assert ptx_constant_stores(k) == {0: 1, 1: 0, 2: 2}


def test_a_vector_of_python_bools_has_boolean_lanes():
    """vector_of([True, False]) was a vector of Int32 lanes (const(True) is a Boolean)."""
    seen = {}

    @dsl.kernel(block=(32,))
    def k(y: I32):
        v = dsl.vector_of([True, False])
        seen["dtype"] = v.dtype
        y[0] = (~v)[1].to(dsl.Int32)

    assert folded_stores(k) == {0: 1}
    assert seen["dtype"] is dsl.Boolean


# --------------------------------------------------------------------------- vectors

def test_vectors_of_mixed_signedness_meet_unsigned_as_scalars_do():
    """Two vectors of one width and mixed signedness took the left one's class: an Int32 vector < a Uint32 one
    compared signed (true for -1 < 1) while the Uint32 one > the Int32 one compared unsigned (false), and the
    scalars compare unsigned (false, like C)."""
    @dsl.kernel(block=(32,))
    def k(y: I32):
        a = dsl.full(2, -1, dsl.Int32)
        b = dsl.full(2, 1, dsl.Uint32)
        y[0] = (a < b)[0].to(dsl.Int32)
        y[1] = (b > a)[0].to(dsl.Int32)
        y[2] = (dsl.Int32(-1) < dsl.Uint32(1)).to(dsl.Int32)
        y[3] = (a // b)[0].to(dsl.Int32)      # 0xFFFFFFFF // 1, unsigned
        y[4] = dsl.max(a, b)[0].to(dsl.Int32)
        y[5] = (a >> dsl.full(2, 31, dsl.Uint32))[0]   # a shift keeps its left operand's (signed) class

    assert folded_stores(k) == {0: 0, 1: 0, 2: 0, 3: -1, 4: -1, 5: -1}


def test_select_on_a_vector_condition_with_scalar_operands():
    """dsl.select(vector_condition, a, b) with scalar a, b built a scalar arith.select on a vector condition:
    an MLIR assertion aborted the whole Python process. The scalars now broadcast to the condition's lanes."""
    @dsl.kernel(block=(32,))
    def k(y: I32):
        c = dsl.vector_of([dsl.Int32(1), dsl.Int32(5), dsl.Int32(2)]) < 3
        r = dsl.select(c, dsl.Int32(10), 20)
        f = dsl.select(c, dsl.Float32(0.5), dsl.Int32(3))   # the scalars meet in Float32, as a scalar select's
        for i in range(3):
            y[i] = r[i]
            y[3 + i] = (f[i] * 2).to(dsl.Int32)

    assert ptx_constant_stores(k) == {0: 10, 1: 20, 2: 10, 3: 1, 4: 6, 5: 1}


def test_vector_select_conditions_are_booleans():
    """A vector select on an Int32 condition (scalar or lanes) was IR that did not verify; it is now != 0, as a
    scalar select's is. Lane counts that differ are a typed error."""
    @dsl.kernel(block=(32,))
    def k(y: I32):
        v = dsl.vector_of([dsl.Int32(1), dsl.Int32(2)])
        y[0] = dsl.select(dsl.Int32(7), v, 0)[1]
        y[1] = dsl.select(dsl.vector_of([dsl.Int32(0), dsl.Int32(3)]), v, -1)[0]

    assert folded_stores(k) == {0: 2, 1: -1}

    @dsl.kernel(block=(32,))
    def k2(y: I32, a: dsl.Int32):
        y[0] = dsl.select(dsl.full(2, a) < 3, dsl.full(4, a), 0)[0]

    build_error(k2, "type")


def test_full_of_a_dsl_value_keeps_its_type():
    """dsl.full(n, Int32 value) made Float32 lanes (the value converted to f32)."""
    seen = {}

    @dsl.kernel(block=(32,))
    def k(y: I32, a: dsl.Int32):
        seen["int"] = dsl.full(4, a).dtype
        seen["py"] = dsl.full(4, 1).dtype
        y[0] = a

    k.build()
    assert seen == {"int": dsl.Int32, "py": dsl.Float32}


def test_a_float_sum_of_negative_zeros_is_negative_zero():
    """A float reduce("add") of a lane count that is not a power of two was seeded with +0.0: three -0.0
    lanes summed to +0.0."""
    @dsl.kernel(block=(32,))
    def k(y: I32, x: dsl.Float32):
        y[0] = dsl.full(3, -0.0).reduce("add").bitcast(dsl.Int32)
        y[1] = dsl.full(3, 1.5).reduce("add").bitcast(dsl.Int32)

    assert ptx_constant_stores(k) == {0: -(1 << 31), 1: numeric.f32_bits(4.5)}


# --------------------------------------------------------------------------- float functions and fma

def test_fma_meets_all_three_operands_types():
    """dsl.fma(Float16, Float64, Float32) met the first type with each other one alone, so the last pair
    (Float16, Float32) won: the Float64 operand was rounded to f32."""
    seen = {}

    @dsl.kernel(block=(32,))
    def k(y: F32, a: dsl.Float16, b: dsl.Float64, c: dsl.Float32):
        r = dsl.fma(a, b, c)
        seen["t"] = type(r)
        y[0] = r.to(dsl.Float32)

    text = str(k.build().ir)
    assert seen["t"] is dsl.Float64
    assert "f64 to f32" not in text.split("llvm.intr.fma")[0]


def test_float64_math_is_f64_or_refused():
    """dsl.sqrt, rsqrt, exp2, ... of a Float64 computed in f32 and returned a Float64 of f32 precision. sqrt
    and rsqrt have f64 forms now; the functions PTX has in f32 only are refused for a Float64."""
    @dsl.kernel(block=(32,))
    def k(y: F32, a: dsl.Float64):
        y[0] = dsl.sqrt(a).to(dsl.Float32)
        y[1] = dsl.rsqrt(dsl.full(2, a))[1].to(dsl.Float32)

    ins = instructions(ptx(k))
    assert "sqrt.rn.f64" in ins and "rsqrt.approx.f64" in ins and "sqrt.rn.f32" not in ins

    for fn in (dsl.exp2, dsl.exp, dsl.log2, dsl.log, dsl.tanh, dsl.sin, dsl.cos):
        @dsl.kernel(block=(32,))
        def k2(y: F32, a: dsl.Float64):
            y[0] = fn(a).to(dsl.Float32)

        assert fn.__name__ in str(build_error(k2, "type"))


@pytest.mark.parametrize("cls,unit", [(dsl.Float16, "f16"), (dsl.BFloat16, "bf16")])
def test_exp_and_log_of_16_bit_floats_round_once(cls, unit):
    """dsl.exp(x) of a Float16/BFloat16 rounded x·log2 e to 16 bits before the f32 ex2 (2-3 bf16 ulp of error
    at |x| ~ 10), dsl.log rounded log2 x before its ·ln 2: both now in f32, rounded once."""
    @dsl.kernel(block=(32,))
    def k(y: F32, a: cls):
        y[0] = dsl.exp(a).to(dsl.Float32)
        y[1] = dsl.log(dsl.full(2, a))[0].to(dsl.Float32)

    text = ptx(k)
    assert not re.search(rf"\bmul\.\w*{unit}", text), text
    assert len(re.findall(r"\bmul\.rn\.f32|\bmul\.f32", text)) == 2


# --------------------------------------------------------------------------- conversions

def test_f64_to_fp8_rounds_once():
    """A Float64 went to fp8 through an f32 rounded to nearest: 1.0625 + 2**-40 (above the e4m3 midpoint
    between 1 and 1.125) met the midpoint in f32 and went to even, 1.0, where the constant is 1.125. The f32 is
    now rounded to odd (cvt.rz plus a sticky bit), which a second rounding cannot move."""
    @dsl.kernel(block=(32,))
    def k(y: F32, a: dsl.Float64):
        y[0] = a.to(dsl.Float8E4M3FN).to(dsl.Float32)
        y[1] = dsl.full(2, a).to(dsl.Float8E5M2)[1].to(dsl.Float32)

    ins = instructions(ptx(k))
    assert "cvt.rz.f32.f64" in ins and "cvt.rn.f32.f64" not in ins
    x = 1.0625 + 2 ** -40
    assert numeric._f8_bits(x, dsl.Float8E4M3FN) == 0x39  # 1.125: the constant's, and the GPU's to check


def test_odd_integer_widths_are_a_typed_error():
    """dsl.dtype of an i4 or i128 MLIR type, and wrap() of such a value, was a KeyError."""
    with ir.Context():
        for w in (4, 128):
            with pytest.raises(dsl.KernelBuildError, match=f"i{w}") as e:
                dsl.dtype(ir.IntegerType.get_signless(w))
            assert e.value.rule == "dtype"


# --------------------------------------------------------------------------- what the DSL knows of its constants

def _random_expression(rng, cls, depth):
    """A DSL integer of class `cls` made of constants by + - * // % << >> & | ^, min, max, select and
    conversions, `depth` ops deep at most."""
    classes = (dsl.Int8, dsl.Int32, dsl.Int64, dsl.Uint32, dsl.Uint64, dsl.Index)
    if depth == 0 or rng.random() < 0.2:
        src = rng.choice(classes)
        bits = 64 if src is dsl.Index else src.width
        v = rng.choice([0, 1, 2, 3, 7, 8, 31, 32, 33, 63, 64, 100, rng.randrange(1 << bits)])
        lo = -(1 << (bits - 1)) if src.signed or src is dsl.Index else 0
        v = v % (1 << bits) + lo if rng.random() < 0.3 else v
        c = src(min(v, (1 << (bits - (1 if src.signed or src is dsl.Index else 0))) - 1))
        return c if src is cls else c.to(cls)
    a, b = (_random_expression(rng, cls, depth - 1) for _ in range(2))
    kind = rng.choice(["+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^", "min", "max", "select"])
    if kind in ("<<", ">>"):
        b = b % (64 if cls is dsl.Index else cls.width)
    if kind == "min":
        return dsl.min(a, b)
    if kind == "max":
        return dsl.max(a, b)
    if kind == "select":
        return dsl.select(a < b, a, _random_expression(rng, cls, depth - 1))
    return {"+": a.__add__, "-": a.__sub__, "*": a.__mul__, "//": a.__floordiv__, "%": a.__mod__,
            "<<": a.__lshift__, ">>": a.__rshift__, "&": a.__and__, "|": a.__or__, "^": a.__xor__}[kind](b)



@pytest.mark.parametrize("seed", range(6))
def test_what_the_dsl_knows_of_its_constants_is_what_mlir_folds(seed):
    """known_int (what the build-time checks read: shift amounts, divisors, a TMA copy's innermost
    coordinate) of expressions of constants by every integer op, select and conversions, against the value
    MLIR's canonicalizer folds the same IR to. An expression whose op is refused (a shift or division by a
    constant out of range) is left out. It knew only constants and + - * of them: Int64(3) % 4 as the
    innermost coordinate of a TMA copy was the lowering's error, not the DSL's (fuzz_dsl's one "late")."""
    import random
    from nvtma.dsl import KernelBuildError
    rng = random.Random(seed)
    known = {}

    @dsl.kernel(block=(32,))
    def k(y: I64):
        for i in range(64):
            cls = rng.choice((dsl.Int8, dsl.Int32, dsl.Int64, dsl.Uint32, dsl.Uint64, dsl.Index))
            try:
                e = _random_expression(rng, cls, rng.randrange(1, 5))
            except KernelBuildError as err:
                assert err.rule in ("shift", "division", "range"), err
                continue
            known[i] = numeric.known_int(e)
            y[i] = e.to(dsl.Int64)

    got = folded_stores(k)
    assert len(got) >= 40, (known, got)
    for i in got:  # every value MLIR folds is known, and the same (an Int64 of it: mod 2^64)
        assert known[i] is not None and (known[i] - got[i]) % (1 << 64) == 0, (i, known[i], got[i])
