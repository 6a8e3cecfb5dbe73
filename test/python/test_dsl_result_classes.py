"""The classes of values rebuilt from a region's MLIR results: dsl.if_ results, dsl.cond, dsl.range and
dsl.while_ carries (inside the body and after the loop). MLIR's integers are signless, so a Uint32 and an
Int32 are both i32: the class, which picks signed or unsigned comparisons, division, shifts and conversions,
must come from the yielded values. The two branches of an if of one width and mixed signedness meet as
unsigned, as an operator's operands and dsl.select's do; a loop's body has already read its carried value
as the carry's class, so a yield that would make it unsigned is refused."""

import re

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import assert_names_line, build_error, folded_stores  # noqa: E402
from nvtma import dsl  # noqa: E402

HERE = __file__
I32 = dsl.Tensor("i32", (16,))
U32 = dsl.Tensor("u32", (16,))
F32 = dsl.Tensor("f32", (None,))
PAIRS = [(dsl.Int8, dsl.Uint8), (dsl.Int16, dsl.Uint16), (dsl.Int32, dsl.Uint32), (dsl.Int64, dsl.Uint64)]


def _preds(ir):
    return re.findall(r"arith\.cmpi (\w+)", ir)


# --------------------------------------------------------------------------- dsl.if_ / dsl.else_

@pytest.mark.parametrize("unsigned_in", ["then", "else"])
@pytest.mark.parametrize("S,U", PAIRS, ids=lambda c: c.__name__)
def test_if_results_of_mixed_signedness_meet_unsigned(S, U, unsigned_in):
    """The result took the dsl.if_ branch's class: with an Int32 there and a Uint32 in the dsl.else_,
    br.results was an Int32 and `r > 3` compared signed (false for 0xFFFFFFF0); the other order gave a Uint32."""
    seen = {}

    @dsl.kernel(block=(32,))
    def k(y: I32):
        big = U((1 << U.width) - 16)  # 0xF...F0: negative as the signed class reads it
        small = dsl.Int32(0).to(S)
        # (the condition picks `big`, in the branch `unsigned_in` names)
        a, b, c = (big, small, dsl.Int32(0) < 1) if unsigned_in == "then" else (small, big, dsl.Int32(0) > 1)
        with dsl.if_(c) as br:
            dsl.yield_(a)
        with dsl.else_():
            dsl.yield_(b)
        (r,) = br.results
        seen["r"] = type(r)
        seen["select"] = type(dsl.select(c, a, b))
        y[0] = (r > 3).to(dsl.Int32)

    ir = k.build().ir
    assert seen == {"r": U, "select": U}
    assert _preds(ir) == ["slt" if unsigned_in == "then" else "sgt", "ugt"]  # (the condition's, then r > 3)
    assert folded_stores(k) == {0: 1}


def test_if_python_number_takes_the_other_branchs_class():
    """A Python int yielded in the dsl.if_ branch made the results Int32 beside a Uint32 dsl.else_ (and a
    Python int in the dsl.else_ was made an Int32, not of the branch's class)."""
    seen = []

    @dsl.kernel(block=(32,))
    def k(y: I32, u: dsl.Uint32, n: dsl.Int32):
        with dsl.if_(n < 5) as br:
            dsl.yield_(3_000_000_000, u)
        with dsl.else_():
            dsl.yield_(u, 7)
        a, b = br.results
        seen.extend([type(a), type(b)])
        y[0] = (a > 3).to(dsl.Int32)
        y[1] = (b > 3).to(dsl.Int32)

    ir = k.build().ir
    assert seen == [dsl.Uint32, dsl.Uint32]
    assert _preds(ir) == ["slt", "ugt", "ugt"]


def test_if_results_keep_booleans_indexes_floats_and_same_classes():
    """What was right stays right: one class in both branches, Python numbers on both sides (Int32, Float32,
    Boolean), a Boolean with a Python bool, an Index."""
    seen = []

    @dsl.kernel(block=(32,))
    def k(y: I32, b: dsl.Boolean, n: dsl.Int32, x: F32):
        with dsl.if_(n < 5) as br:
            dsl.yield_(b, 1, 2.0, x.shape[0], dsl.Int64(1), dsl.Uint32(1))
        with dsl.else_():
            dsl.yield_(True, 4, 5.0, dsl.Index(3), dsl.Int64(2), dsl.Uint32(2))
        seen.extend(type(v) for v in br.results)
        with dsl.if_(n < 5) as br2:
            dsl.yield_(1, 2.0, False)
        with dsl.else_():
            dsl.yield_(3, 4.0, True)
        seen.extend(type(v) for v in br2.results)
        y[0] = br.results[1]

    k.build()
    assert seen == [dsl.Boolean, dsl.Int32, dsl.Float32, dsl.Index, dsl.Int64, dsl.Uint32,
                    dsl.Int32, dsl.Float32, dsl.Boolean]


def test_if_vector_lanes_of_mixed_signedness_meet_unsigned():
    seen = {}

    @dsl.kernel(block=(32,))
    def k(y: I32, n: dsl.Int32):
        with dsl.if_(n < 5) as br:
            dsl.yield_(dsl.full(2, 1, dsl.Int32))
        with dsl.else_():
            dsl.yield_(dsl.full(2, 2, dsl.Uint32))
        (v,) = br.results
        seen["lanes"] = v.dtype
        y[0] = (v[0] > 3).to(dsl.Int32)

    ir = k.build().ir
    assert seen == {"lanes": dsl.Uint32}
    assert _preds(ir) == ["slt", "ugt"]


def test_if_tensors_of_two_element_classes_are_refused():
    """A u32 and an i32 tensor are one memref type: the result took the dsl.if_ branch's element class."""
    @dsl.kernel(block=(32,))
    def k(y: I32, a: U32, b: I32, n: dsl.Int32):
        with dsl.if_(n < 5) as br:
            dsl.yield_(a)
        with dsl.else_():
            dsl.yield_(b)  # MARK:tensors
        y[0] = br.results[0][0]

    err = build_error(k, rule="yield")
    assert_names_line(err, HERE, "MARK:tensors")
    assert "gives a tensor of Int32, the dsl.if_ branch a tensor of Uint32" in str(err)


def test_if_tensors_of_one_element_class_keep_it():
    seen = []

    @dsl.kernel(block=(32,))
    def k(y: I32, a: U32, b: U32, n: dsl.Int32):
        with dsl.if_(n < 5) as br:
            dsl.yield_(a)
        with dsl.else_():
            dsl.yield_(b)
        (t,) = br.results
        seen.extend([t.dtype, type(t[0])])
        y[0] = (t[0] > 3).to(dsl.Int32)

    ir = k.build().ir
    assert seen == [dsl.Uint32, dsl.Uint32]
    assert _preds(ir) == ["slt", "ugt"]


# --------------------------------------------------------------------------- dsl.cond

@pytest.mark.parametrize("case", ["mixed", "mixed-reversed", "python-then", "python-else", "nested"])
def test_cond_results_take_the_class_both_branches_meet_in(case):
    """dsl.cond rebuilt its results from the true_fn's values: an Int32 (or a Python int) there made a Uint32
    false_fn's value an Int32; its class is now dsl.select's."""
    seen = {}
    fns = {"mixed": (lambda u, i: i, lambda u, i: u), "mixed-reversed": (lambda u, i: u, lambda u, i: i),
           "python-then": (lambda u, i: 7, lambda u, i: u), "python-else": (lambda u, i: u, lambda u, i: 7),
           "nested": (lambda u, i: (i, [i]), lambda u, i: (u, [u]))}

    @dsl.kernel(block=(32,))
    def k(y: I32, u: dsl.Uint32, i: dsl.Int32, n: dsl.Int32):
        t, f = fns[case]
        r = dsl.cond(n < 5, lambda: t(u, i), lambda: f(u, i))
        if case == "nested":
            assert isinstance(r, tuple) and isinstance(r[1], list)
            r = r[1][0]
        seen["r"] = type(r)
        y[0] = (r > 3).to(dsl.Int32)

    ir = k.build().ir
    assert seen == {"r": dsl.Uint32}
    assert _preds(ir) == ["slt", "ugt"]


def test_cond_of_one_class_folds_unsigned():
    @dsl.kernel(block=(32,))
    def k(y: I32):
        r = dsl.cond(dsl.Int32(0) < 1, lambda: dsl.Uint32(0xFFFFFFF0), lambda: dsl.Int32(1))
        y[0] = (r > 3).to(dsl.Int32)
        y[1] = (r // 16).to(dsl.Int32)

    assert folded_stores(k) == {0: 1, 1: 0x0FFFFFFF}


def test_cond_of_empty_structures_returns_them():
    seen = []

    @dsl.kernel(block=(32,))
    def k(y: I32, n: dsl.Int32):
        seen.append(dsl.cond(n < 5, lambda: (), lambda: ()))
        seen.append(dsl.cond(n < 5, lambda: [], lambda: []))

    k.build()
    assert seen == [(), []]


# --------------------------------------------------------------------------- dsl.range / dsl.while_ carries

def test_range_carry_keeps_its_class_inside_and_after():
    """A signed next value (or a Python number, 3e9 included) into a Uint32 carry meets it as a Uint32."""
    seen = {}

    @dsl.kernel(block=(32,))
    def k(y: I32, u: dsl.Uint32, i: dsl.Int32, n: dsl.Int32):
        loop = dsl.range(n, carry=(u, u, dsl.full(2, 1, dsl.Uint32)))
        for _j, (a, b, v) in loop:
            seen["inside"] = (type(a), type(b), v.dtype)
            y[1] = (a > 5).to(dsl.Int32)
            dsl.yield_(i, 3_000_000_000, dsl.full(2, 1, dsl.Int32))
        a, b, v = loop.results
        seen["after"] = (type(a), type(b), v.dtype)
        y[0] = (a > 3).to(dsl.Int32)

    ir = k.build().ir
    U = dsl.Uint32
    assert seen == {"inside": (U, U, U), "after": (U, U, U)}
    assert _preds(ir) == ["ugt", "ugt"]


@pytest.mark.parametrize("loop", ["range", "while"])
@pytest.mark.parametrize("init", ["int32", "python", "vector"])
def test_an_unsigned_next_value_for_a_signed_carry_is_refused(loop, init):
    """The body read the carry as an Int32 (a Python 0 is one: a signed compare, a signed max of its lanes),
    so the Uint32 the body yields cannot be one; the loop's results had been Int32 too (signed)."""
    @dsl.kernel(block=(32,))
    def k(y: I32, u: dsl.Uint32, i: dsl.Int32, n: dsl.Int32):
        c0 = {"int32": i, "python": 0, "vector": dsl.full(2, 1, dsl.Int32)}[init]
        nxt = dsl.full(2, 1, dsl.Uint32) if init == "vector" else u

        def read(c):
            y[1] = (c.reduce("max") if init == "vector" else c + 1 > 2).to(dsl.Int32)
        if loop == "range":
            lp = dsl.range(n, carry=(n, c0))
            for _j, (m, c) in lp:
                read(c)
                dsl.yield_(m, nxt)  # MARK:unsigned-next
        else:
            lp = dsl.while_(lambda m, c: m < 10, carry=(n, c0))
            for m, c in lp:
                read(c)
                dsl.yield_(m + 1, nxt)  # MARK:unsigned-next-while
        y[0] = lp.results[0]

    err = build_error(k, rule="yield")
    assert_names_line(err, HERE, "MARK:unsigned-next" if loop == "range" else "MARK:unsigned-next-while")
    what = "dsl.range" if loop == "range" else "dsl.while_"
    if init == "vector":
        want = f"dsl.yield_ in a {what} gives a vector of Uint32 for a carried vector of Int32 (value 2 of 2)"
    else:
        want = f"dsl.yield_ in a {what} gives a Uint32 for a carried Int32 (value 2 of 2)"
    assert str(err).split(": ", 1)[1].startswith(want), str(err)
    assert "start the carry as a" in str(err) and "x.to(dsl.Int32)" in str(err)


def test_while_carry_keeps_its_class_in_condition_body_and_results():
    seen = {}

    @dsl.kernel(block=(32,))
    def k(y: I32, u: dsl.Uint64, i: dsl.Int64):
        def cond(c):
            seen["condition"] = type(c)
            return c < 10

        lp = dsl.while_(cond, carry=(u,))
        for (c,) in lp:
            seen["body"] = type(c)
            dsl.yield_(i)
        (r,) = lp.results
        seen["after"] = type(r)
        y[0] = (r > 3).to(dsl.Int32)

    ir = k.build().ir
    assert seen == {"condition": dsl.Uint64, "body": dsl.Uint64, "after": dsl.Uint64}
    assert _preds(ir) == ["ult", "ugt"]


def test_range_tensor_carry_of_another_element_class_is_refused():
    @dsl.kernel(block=(32,))
    def k(y: I32, a: I32, b: U32, n: dsl.Int32):
        lp = dsl.range(n, carry=(a,))
        for _j, (t,) in lp:
            dsl.yield_(b)  # MARK:tensor-carry
        y[0] = lp.results[0][0]

    err = build_error(k, rule="yield")
    assert_names_line(err, HERE, "MARK:tensor-carry")
    assert "gives a tensor of Uint32 for a carried tensor of Int32: the body read" in str(err)
    assert "x.to(" not in str(err)


@pytest.mark.parametrize("loop", ["range", "while"])
def test_an_unsigned_next_value_for_a_carry_never_read_signed_is_unsigned(loop):
    """h = 0, then h ^ u (a Uint32) each pass: the body reads the carry only through bit operations and a
    store, so the carry meets the yielded value as a Uint32: the loop's results are one (compared unsigned)."""
    @dsl.kernel(block=(32,))
    def k(y: I32, u: dsl.Uint32, n: dsl.Int32):
        if loop == "range":
            lp = dsl.range(n, carry=(0,))
            for _j, (h,) in lp:
                y[1] = (h << 1) | 1
                dsl.yield_(h ^ u)
            (h,) = lp.results
        else:
            lp = dsl.while_(lambda m, h: m < n, carry=(0, 0))
            for m, h in lp:
                y[1] = h & 3
                dsl.yield_(m + 1, h | u)
            h = lp.results[1]
        assert type(h) is dsl.Uint32
        y[0] = (h > 3).to(dsl.Int32)

    assert "ugt" in _preds(k.build().ir)
