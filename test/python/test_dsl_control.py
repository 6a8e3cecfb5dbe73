"""Control flow of the kernel language: dsl.range with carried values and
unroll hints, if_/else_ with and without results, cond, while_,
range_constexpr, and the KernelBuildError a Python `if`/`while`/`and`/
`or`/`not` on a run-time value raises, naming the user's line."""

import re

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import assert_names_line, build_error, folded_stores, ptx  # noqa: E402
from nvtma import dsl  # noqa: E402

HERE = __file__
F32 = dsl.Tensor("f32", (64,))
DYN = dsl.Tensor("f32", (None,))


# --------------------------------------------------------------------------- loops

def test_range_carries_values_and_gives_typed_results():
    seen = {}

    @dsl.kernel(block=(32,))
    def k(x: DYN, y: F32, n: dsl.Int32):
        loop = dsl.range(0, n, 1, carry=(dsl.Float32(0.0), dsl.Int32(0)))
        for j, (acc, cnt) in loop:
            seen["counter"] = type(j)
            dsl.yield_(acc + x[j], cnt + 1)
        acc, cnt = loop.results
        seen["results"] = (type(acc), type(cnt))
        y[0] = acc
        y[1] = cnt.to(dsl.Float32)

    ir = k.build().ir
    assert seen == {"counter": dsl.Int32, "results": (dsl.Float32, dsl.Int32)}
    assert re.search(r"scf\.for %\w+ = %\w+ to %arg2 step %\w+ iter_args\(%\w+ = %\w+, %\w+ = %\w+\) -> "
                     r"\(f32, i32\)\s+: i32", ir)
    assert "scf.yield" in ir


def test_range_counter_type_follows_the_bounds():
    seen = []

    @dsl.kernel(block=(32,))
    def k(x: DYN, n: dsl.Int32, m: dsl.Int64):
        for i in dsl.range(8):
            seen.append(type(i))
        for i in dsl.range(n):
            seen.append(type(i))
        for i in dsl.range(2, m, 2):
            seen.append(type(i))
        for i in dsl.range(x.shape[0]):
            seen.append(type(i))

    k.build()
    assert seen == [dsl.Index, dsl.Int32, dsl.Int64, dsl.Index]


@pytest.mark.parametrize("unroll,loads", [(None, None), (1, 1), (4, 5)])
def test_unroll_hints_reach_llvm(unroll, loads):
    """unroll=1 keeps one copy of the body; unroll=4 makes four plus a
    remainder loop (five loads of x): the hint survives scf -> cf -> llvm."""
    @dsl.kernel(block=(32,))
    def k(x: DYN, y: F32, n: dsl.Int32, *, U=None):
        loop = dsl.range(n, carry=(dsl.Float32(0.0),), unroll=U)
        for j, (acc,) in loop:
            dsl.yield_(acc * x[j] + 1.0)
        y[dsl.thread_idx()] = loop.results[0]

    ir = k.build(U=unroll).ir
    if unroll is None:
        assert "loop_annotation" not in ir
        return
    want = "disable = true" if unroll == 1 else f"count = {unroll}"
    assert want in ir
    assert len(re.findall(r"ld\.global", ptx(k, U=unroll))) == loads


def test_full_unroll_of_a_constant_trip_count():
    @dsl.kernel(block=(32,))
    def k(x: F32, y: F32):
        loop = dsl.range(0, 6, carry=(dsl.Float32(0.0),), unroll=True)
        for j, (acc,) in loop:
            dsl.yield_(acc + x[j])
        y[0] = loop.results[0]

    assert "full = true" in k.build().ir
    text = ptx(k)
    assert len(re.findall(r"ld\.global", text)) == 6 and "bra" not in text


def test_python_loops_unroll_at_build_time_and_range_constexpr_takes_ints():
    @dsl.kernel(block=(32,))
    def k(y: dsl.Tensor("i32", (64,)), n: dsl.Int32):
        for i in dsl.range_constexpr(3):
            y[i] = i * 10
        for i in range(3, 5):
            y[i] = i * 10

    assert folded_stores(k) == {0: 0, 1: 10, 2: 20, 3: 30, 4: 40}
    assert "scf.for" not in k.build().ir

    @dsl.kernel(block=(32,))
    def bad(y: dsl.Tensor("i32", (64,)), n: dsl.Int32):
        for i in dsl.range_constexpr(n):
            y[0] = i

    assert "range_constexpr takes Python ints" in str(build_error(bad, "loop"))


@pytest.mark.parametrize("case,message,rule", [
    ("step", "positive step", "loop"),
    ("float", "bounds must be integers", "loop"),
    ("no_yield", "must end its body with dsl.yield_", "yield"),
    ("bad_yield", "dsl.yield_ in a dsl.range gives (i32), the carried values are (f32)", "yield"),
    ("twice", "traced once", "loop"),
    ("stray_yield", "dsl.yield_ outside", "yield"),
])
def test_loop_misuse(case, message, rule):
    @dsl.kernel(block=(32,))
    def k(x: DYN, n: dsl.Int32, *, case):
        if case == "step":
            for _ in dsl.range(0, n, 0):
                pass
        elif case == "float":
            for _ in dsl.range(0, 2.5):
                pass
        elif case == "no_yield":
            for _ in dsl.range(n, carry=(dsl.Float32(0.0),)):
                pass
        elif case == "bad_yield":
            for _, (acc,) in dsl.range(n, carry=(dsl.Float32(0.0),)):
                dsl.yield_(dsl.Int32(1))
        elif case == "twice":
            r = dsl.range(n)
            for _ in r:
                pass
            for _ in r:
                pass
        elif case == "stray_yield":
            dsl.yield_(dsl.Int32(1))

    err = build_error(k, rule, case=case)
    assert message in str(err)


# --------------------------------------------------------------------------- branches

def test_if_else_without_results():
    @dsl.kernel(block=(32,))
    def k(y: F32, a: dsl.Int32):
        with dsl.if_(a < 3):
            y[0] = 1.0
        with dsl.else_():
            y[1] = 2.0
        with dsl.if_(a > 5):      # no else: an scf.if with an empty else region
            y[2] = 3.0

    ir = k.build().ir
    assert ir.count("scf.if") == 2 and ir.count("} else {") == 1
    ptx(k)


def test_if_else_with_results_and_cond():
    seen = {}

    @dsl.kernel(block=(32,))
    def k(y: F32, a: dsl.Int32):
        with dsl.if_(a < 3) as br:
            dsl.yield_(dsl.Float32(1.0), a + 1)
        with dsl.else_():
            dsl.yield_(dsl.Float32(2.0), a - 1)
        f, i = br.results
        seen["if"] = (type(f), type(i))
        pair = dsl.cond(a == 0, lambda: (f, i), lambda: (f * 2.0, i * 2))
        seen["cond"] = tuple(type(v) for v in pair)
        y[0] = pair[0] + pair[1].to(dsl.Float32)

    ir = k.build().ir
    assert seen == {"if": (dsl.Float32, dsl.Int32), "cond": (dsl.Float32, dsl.Int32)}
    assert len(re.findall(r"= scf\.if %\w+ -> \(f32, i32\)", ir)) == 2
    ptx(k)


def test_if_results_fold():
    @dsl.kernel(block=(32,))
    def k(y: dsl.Tensor("i32", (8,))):
        with dsl.if_(dsl.Int32(-1) < 0) as br:
            dsl.yield_(dsl.Int32(7))
        with dsl.else_():
            dsl.yield_(dsl.Int32(9))
        y[0] = br.results[0]
        y[1] = dsl.cond(dsl.Uint32(0xFFFFFFFF) < 1, lambda: dsl.Int32(1), lambda: dsl.Int32(2))

    assert folded_stores(k) == {0: 7, 1: 2}


@pytest.mark.parametrize("case,message,rule", [
    ("python_bool", "dsl.if_ on a Python bool", "if"),
    ("else_alone", "dsl.else_ must follow", "else"),
    ("else_missing_yield", "its dsl.else_ must dsl.yield_ the same types", "yield"),
    ("else_only_yield", "the dsl.else_ yields values but its dsl.if_ branch does not", "yield"),
    ("cond_counts", "dsl.cond branches return 2 and 1 values", "yield"),
    ("scope", "dsl.if_ scope='block'", "if"),
])
def test_branch_misuse(case, message, rule):
    @dsl.kernel(block=(32,))
    def k(y: F32, a: dsl.Int32, *, case):
        if case == "python_bool":
            with dsl.if_(True):
                pass
        elif case == "else_alone":
            with dsl.else_():
                pass
        elif case == "else_missing_yield":
            with dsl.if_(a < 1):
                dsl.yield_(dsl.Float32(1.0))
            with dsl.else_():
                pass
        elif case == "else_only_yield":
            with dsl.if_(a < 1):
                pass
            with dsl.else_():
                dsl.yield_(dsl.Float32(1.0))
        elif case == "cond_counts":
            dsl.cond(a < 1, lambda: (a, a), lambda: a)
        elif case == "scope":
            with dsl.if_(a < 1, scope="block"):
                pass

    assert message in str(build_error(k, rule, case=case))


# --------------------------------------------------------------------------- while

def test_while_loop():
    seen = {}

    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32):
        loop = dsl.while_(lambda i, s: i < n, carry=(dsl.Int32(0), dsl.Float32(1.0)))
        for i, s in loop:
            dsl.yield_(i + 1, s * 2.0)
        i, s = loop.results
        seen["results"] = (type(i), type(s))
        y[0] = s

    ir = k.build().ir
    assert seen == {"results": (dsl.Int32, dsl.Float32)}
    assert re.search(r"scf\.while \(%\w+ = %\w+, %\w+ = %\w+\) : \(i32, f32\) -> \(i32, f32\)", ir)
    assert "scf.condition" in ir
    ptx(k)


def test_while_condition_must_be_a_run_time_value():
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32):
        for (i,) in dsl.while_(lambda i: True, carry=(dsl.Int32(0),)):
            dsl.yield_(i + 1)

    assert "returned bool, not a run-time Boolean" in str(build_error(k, "while"))


# --------------------------------------------------------------------------- Python control flow on run-time values

def _py_if(y, a):
    if a < 3:  # MARK:if
        y[0] = 1.0


def _py_while(y, a):
    while a < 3:  # MARK:while
        a = a + 1


def _py_and(y, a):
    c = (a < 3) and (a > 0)  # MARK:and
    y[0] = dsl.select(c, 1.0, 0.0)


def _py_or(y, a):
    c = (a < 3) or (a > 9)  # MARK:or
    y[0] = dsl.select(c, 1.0, 0.0)


def _py_not(y, a):
    c = not (a < 3)  # MARK:not
    y[0] = dsl.select(c, 1.0, 0.0)


def _py_chain(y, a):
    with dsl.if_(0 <= a < 3):  # MARK:chain
        y[0] = 1.0


def _py_ternary(y, a):
    y[0] = 1.0 if a == 3 else 2.0  # MARK:ternary


@pytest.mark.parametrize("body,marker", [(_py_if, "if"), (_py_while, "while"), (_py_and, "and"), (_py_or, "or"),
                                         (_py_not, "not"), (_py_chain, "chain"), (_py_ternary, "ternary")],
                         ids=["if", "while", "and", "or", "not", "chained-compare", "ternary"])
def test_python_control_flow_on_a_run_time_value_names_the_line(body, marker):
    @dsl.kernel(block=(32,))
    def k(y: F32, a: dsl.Int32):
        body(y, a)

    err = build_error(k, "python-control-flow")
    assert_names_line(err, HERE, f"MARK:{marker}")
    assert "dsl.if_" in str(err) and "dsl.select" in str(err)


def test_python_control_flow_on_build_time_values_is_fine():
    @dsl.kernel(block=(32,))
    def k(y: F32, a: dsl.Int32, *, fast=True, n=3):
        if fast and n > 2:        # Python values: decided while building
            y[0] = 1.0
        if not fast or n < 0:
            y[1] = 2.0

    assert folded_stores(k) == {0: 1.0}


def test_run_time_value_where_python_needs_an_int():
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32):
        for _ in range(n):  # MARK:range
            pass

    err = build_error(k, "python-int")
    assert_names_line(err, HERE, "MARK:range")


def test_unsigned_loop_bounds_count_unsigned():
    """The loop test was signed: Uint32 0..3e9 by 1e9 ran no iterations, and a run-time Uint32 stop of 2^31 or
    more gave none (max.s32 n, 0)."""
    from dsl_testing import ptx_constant_stores
    import nvtma

    @dsl.kernel(block=(32,))
    def k(out: dsl.Tensor("i32", (8,)), n: dsl.Uint32):
        loop = dsl.range(dsl.Uint32(0), dsl.Uint32(3_000_000_000), dsl.Uint32(1_000_000_000), carry=(dsl.Int32(0),))
        for _, (c,) in loop:
            dsl.yield_(c + 1)
        out[0] = loop.results[0]
        loop = dsl.range(dsl.Uint32(0), n, carry=(dsl.Int32(0),))
        for _, (c,) in loop:
            dsl.yield_(c + 1)
        out[1] = loop.results[0]
    assert ptx_constant_stores(k) == {0: 3}
    assert "max.s32" not in nvtma.compile(k.build().ir).ptx


@pytest.mark.parametrize("bounds,message", [
    (lambda n: (0, 10, dsl.Int32(0)), "dsl.range step 0: a positive step"),
    (lambda n: (10, 0, dsl.Int32(-1)), "dsl.range step -1"),
    (lambda n: (dsl.Int8(0), dsl.Int8(127), dsl.Int8(100)), "over Int8 bounds: its counter wraps"),
    (lambda n: (n, 3_000_000_000), "bound 3000000000 does not fit Int32"),
], ids=["zero-step", "negative-step", "int8-counter", "stop-past-int32"])
def test_loops_that_would_not_end_or_count_wrong_are_refused(bounds, message):
    """A constant zero step and an Int8 counter past 127 compiled to endless loops; a negative step ran no
    iterations (Python counts down); a Python stop past Int32 was a negative bit pattern."""
    @dsl.kernel(block=(32,))
    def k(out: dsl.Tensor("i32", (8,)), n: dsl.Int32):
        for i in dsl.range(*bounds(n)):
            out[0] = i.to(dsl.Int32)
    assert message in str(build_error(k, "loop"))


def test_else_must_follow_its_if_directly():
    """The else branch attached to the earlier if_, so it ran before the code written between them."""
    @dsl.kernel(block=(32,))
    def k(out: dsl.Tensor("i32", (8,)), n: dsl.Int32):
        with dsl.if_(n > 0):
            out[0] = 1
        out[1] = 2
        with dsl.else_():
            out[0] = 3
    assert "must follow its `with dsl.if_(...)` block directly" in str(build_error(k, "else"))


@pytest.mark.parametrize("case,made", [("if", "a value made at line {def}"), ("range", "a value made at line {def}"),
                                       ("else", "a value made at line {def}"),
                                       ("for_var", "the loop variable (or a carried value) of the loop at line {def}"),
                                       ("while_var", "the loop variable (or a carried value) of the loop at line "
                                                     "{def}")])
def test_a_value_used_outside_the_region_that_made_it_names_both_lines(case, made):
    """Python lets a name outlive its `with`/`for`; the MLIR value does not dominate the use. The verifier's
    "does not dominate this use" (rule verify, the whole kernel's diagnostics) is a region error at the use's
    line that says where the value was made and how to take it out."""
    from dsl_testing import line_of

    @dsl.kernel(block=(64,))
    def k(o: dsl.Tensor("i32", (64,))):
        t = dsl.thread_idx()
        if case == "if":
            with dsl.if_(t < 5):
                v = t + 1  # MARK:def-if
            o[0] = v  # MARK:use-if
        elif case == "else":
            with dsl.if_(t < 5):
                v = t + 2  # MARK:def-else
            with dsl.else_():
                o[1] = v  # MARK:use-else
        elif case == "range":
            for i in dsl.range(4):
                v = i + 3  # MARK:def-range
            o[2] = v  # MARK:use-range
        elif case == "for_var":
            for i in dsl.range(4):  # MARK:def-for_var
                o[i] = 0
            o[3] = i  # MARK:use-for_var
        else:
            w = dsl.while_(lambda i: i < 3, carry=(dsl.Int32(0),))
            for (v,) in w:  # MARK:def-while_var
                dsl.yield_(v + 1)
            o[4] = v  # MARK:use-while_var

    err = build_error(k, "region")
    assert_names_line(err, __file__, f"MARK:use-{case}")
    assert made.format(**{"def": line_of(__file__, f"MARK:def-{case}")}) in str(err)
    assert f"is used at line {line_of(__file__, f'MARK:use-{case}')}, outside that region" in str(err)
    assert "dsl.yield_" in str(err) and "loop.results" in str(err)


def test_region_results_and_values_made_before_a_region_still_build():
    @dsl.kernel(block=(64,))
    def k(o: dsl.Tensor("i32", (64,))):
        t = dsl.thread_idx()
        v = t * 2
        with dsl.if_(t < 5) as br:
            dsl.yield_(v + 1)
        with dsl.else_():
            dsl.yield_(v)
        (r,) = br.results
        loop = dsl.range(dsl.Int32(0), dsl.Int32(4), carry=(r,))
        for i, (acc,) in loop:
            dsl.yield_(acc + i)
        o[t] = loop.results[0] + v

    assert "st.global" in ptx(k)
