"""The fuzz campaign's findings in the language's core (kernel, numeric, vector, control): each one either
works now or is a KernelBuildError that names the rule, the value and the user's line."""

import math
import re
import warnings

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import assert_names_line, build_error, folded_stores, ptx, ptx_constant_stores  # noqa: E402
from nvtma import dsl  # noqa: E402

HERE = __file__


# --------------------------------------------------------------------------- A1: kernel names

@pytest.mark.parametrize("name", [5, "", "my kernel", "a-b", "k.k", 'a"b', "a\nb", "a\0b", "größe", "1abc",
                                  "llvm.foo", "_", "$", "x" * 1025])
def test_a_kernel_name_that_is_no_ptx_identifier_is_refused_where_it_is_given(name):
    """A name NVPTX cannot print ended the process (LLVM ERROR: Symbol name with unsupported characters)."""
    with pytest.raises(dsl.KernelBuildError) as e:
        dsl.kernel(block=(32,), name=name)  # MARK:bad-name
    assert e.value.rule == "kernel-name", str(e.value)
    assert_names_line(e.value, HERE, "MARK:bad-name")
    assert repr(name)[:20] in str(e.value) and "@dsl.kernel(name=...)" in str(e.value)


def test_a_function_name_that_is_no_ptx_identifier_is_refused_at_its_def():
    with pytest.raises(dsl.KernelBuildError) as e:
        @dsl.kernel(block=(32,))  # MARK:bad-def-name
        def größe(o: dsl.Tensor("f32", (64,))):
            o[0] = 1.0
    assert e.value.rule == "kernel-name"
    assert_names_line(e.value, HERE, "MARK:bad-def-name")
    assert "'größe' (the function's name)" in str(e.value) and "name=" in str(e.value)


@pytest.mark.parametrize("name", ["$a", "a$b", "_1", "__x", "ret", "x" * 1024])
def test_kernel_names_ptx_takes_compile(name):
    @dsl.kernel(block=(32,), name=name)
    def k(o: dsl.Tensor("f32", (64,))):
        o[0] = 1.0

    assert re.search(rf"\.entry {re.escape(name)}\(", ptx(k))


# --------------------------------------------------------------------------- D4, B12, B14: the kernel function

def test_a_generator_kernel_function_is_refused_at_its_def():
    """Tracing only made the generator: none of the body ran and the kernel compiled to a bare `ret`."""
    @dsl.kernel(block=(32,))  # MARK:generator
    def k(o: dsl.Tensor("f32", (32,))):
        o[dsl.thread_idx()] = 1.0
        yield

    err = build_error(k, "kernel-function")
    assert_names_line(err, HERE, "MARK:generator")
    assert "a generator" in str(err)


def test_an_async_kernel_function_is_refused_without_a_never_awaited_warning():
    @dsl.kernel(block=(32,))  # MARK:coroutine
    async def k(o: dsl.Tensor("f32", (32,))):
        o[0] = 1.0

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        err = build_error(k, "kernel-function")
        import gc
        gc.collect()
    assert_names_line(err, HERE, "MARK:coroutine")
    assert "a coroutine (`async def`)" in str(err)


def test_a_kernel_that_builds_itself_is_refused_not_a_recursion_error():
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor("f32", (32,)), *, inner=False):
        o[0] = 1.0
        if not inner:
            k.build()  # MARK:self-build

    err = build_error(k, "recursion")
    assert_names_line(err, HERE, "MARK:self-build")
    assert "k is built inside its own body" in str(err)
    assert "st.global" in ptx(k, inner=True)  # (the kernel builds again afterwards)


@pytest.mark.parametrize("bad", [5, "f32", None.__class__])
def test_param_types_that_are_not_a_list_are_a_signature_error(bad):
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor, n: dsl.Int32):
        o[0] = n.to(o.dtype)

    with pytest.raises(dsl.KernelBuildError) as e:
        k.compile(bad)  # MARK:param-types
    assert e.value.rule == "signature"
    assert_names_line(e.value, HERE, "MARK:param-types")
    assert f"param_types={bad!r} is not a list or tuple" in str(e.value)


# --------------------------------------------------------------------------- D1: NaN to integers

def test_a_float64_nan_constant_converts_to_integer_zero():
    """cvt.rzi.s32.f64 of NaN is INT32_MIN in PTX (0 only from narrower sources to narrower results), and LLVM
    folds the constant alike: the documented NaN is 0 needs the select the 64-bit results had."""
    @dsl.kernel(block=(1,))
    def k(o: dsl.Tensor("i32", (64,))):
        o[0] = dsl.Float64(math.nan).to(dsl.Int32)
        o[1] = dsl.Float64(math.nan).to(dsl.Uint32).to(dsl.Int32)
        o[2] = dsl.Float64(-math.nan).to(dsl.Int32)
        o[3] = dsl.Float32(math.nan).to(dsl.Int32)
        o[4] = dsl.Float64(3.75).to(dsl.Int32)
        o[5] = dsl.Float64(-1e300).to(dsl.Int32)
        o[6] = dsl.Float64(math.inf).to(dsl.Uint32).to(dsl.Int32)
        o[7] = dsl.Float64(math.nan).to(dsl.Int64).to(dsl.Int32)

    assert ptx_constant_stores(k) == {0: 0, 1: 0, 2: 0, 3: 0, 4: 3, 5: -2 ** 31, 6: -1, 7: 0}


def test_a_run_time_float64_to_32_bit_integer_selects_nan_to_zero_and_float32_keeps_one_cvt():
    @dsl.kernel(block=(1,))
    def k(x: dsl.Tensor("f64", (4,)), y: dsl.Tensor("f32", (4,)), o: dsl.Tensor("i32", (4,)),
          u: dsl.Tensor("u32", (4,))):
        o[0] = x[0].to(dsl.Int32)
        u[0] = x[1].to(dsl.Uint32)
        o[1] = y[0].to(dsl.Int32)

    text = ptx(k)
    for cvt in ("s32", "u32"):
        m = re.search(rf"cvt\.rzi\.{cvt}\.f64\s+(%r\d+), (%rd\d+);\s*setp\.nan\.f64\s+(%p\d+), \2, \2;\s*"
                      rf"selp\.b32\s+%r\d+, 0, \1, \3;", text)
        assert m, (cvt, text)
    # a Float32 source: PTX's own NaN is 0, one cvt as before
    assert text.count("setp.nan") == 2 and "cvt.rzi.s32.f32" in text


# --------------------------------------------------------------------------- D3: INT_MIN // -1

def _div_kernel(case):
    @dsl.kernel(block=(1,))
    def k(o: dsl.Tensor("i32", (64,)), p: dsl.Tensor("i64", (64,)), q: dsl.Tensor("i8", (64,)), *, case=case):
        if case == "int32":
            o[0] = dsl.Int32(-2 ** 31) // dsl.Int32(-1)  # MARK:int-min-div-int32
        elif case == "int64":
            p[0] = dsl.Int64(-2 ** 63) // -1  # MARK:int-min-div-int64
        elif case == "int8":
            q[0] = dsl.Int8(-128) // dsl.Int8(-1)  # MARK:int-min-div-int8
        elif case == "python-dividend":
            o[0] = -2 ** 31 // dsl.Int32(-1)  # MARK:int-min-div-python-dividend
        elif case == "folded":
            o[0] = (dsl.Int32(-2 ** 30) * 2) // (dsl.Int32(0) - 1)  # MARK:int-min-div-folded
        elif case == "vector":
            o[0] = (dsl.full(4, dsl.Int32(-2 ** 31)) // -1)[0]  # MARK:int-min-div-vector
        elif case == "divmod":
            o[0], o[1] = divmod(dsl.Int32(-2 ** 31), -1)  # MARK:int-min-div-divmod
    return k


@pytest.mark.parametrize("case", ["int32", "int64", "int8", "python-dividend", "folded", "vector", "divmod"])
def test_a_constant_int_min_floor_divided_by_minus_one_is_refused(case):
    """LLVM's sdiv of INT_MIN by -1 is poison: the store of the quotient was deleted."""
    err = build_error(_div_kernel(case), "division")
    assert_names_line(err, HERE, f"MARK:int-min-div-{case}")
    width = {"int64": 64, "int8": 8}.get(case, 32)
    assert f"{-2 ** (width - 1)} by the constant -1" in str(err) and f"2**{width - 1} does not fit" in str(err)


def test_int_min_modulo_minus_one_and_neighbours_of_the_overflow_build():
    @dsl.kernel(block=(1,))
    def k(o: dsl.Tensor("i32", (64,))):
        o[0] = dsl.Int32(-2 ** 31) % -1
        o[1] = (dsl.full(4, dsl.Int32(-2 ** 31)) % -1)[3]
        o[2] = dsl.Int32(-2 ** 31 + 1) // -1
        o[3] = dsl.Int32(-2 ** 31) // -2
        o[4] = (dsl.Uint32(2 ** 31) // dsl.Uint32(2 ** 32 - 1)).to(dsl.Int32)

    assert ptx_constant_stores(k) == {0: 0, 1: 0, 2: 2 ** 31 - 1, 3: 2 ** 30, 4: 0}


# --------------------------------------------------------------------------- D2, B13: vector lanes

@pytest.mark.parametrize("case", ["get", "insert", "negative", "unsigned", "folded"])
def test_a_dsl_constant_lane_past_the_vector_is_refused_as_a_python_int_is(case):
    """extractelement/insertelement past the vector is poison: LLVM deleted the stores."""
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor("f32", (64,))):
        v = o.load_vec(4, 0)
        if case == "get":
            o[8] = v[dsl.Int32(9)]  # MARK:lane-get
        elif case == "insert":
            o[8] = v.insert(dsl.Int32(7), 2.0)[0]  # MARK:lane-insert
        elif case == "negative":
            o[8] = v[dsl.Int32(-1)]  # MARK:lane-negative
        elif case == "unsigned":
            o[8] = v[dsl.Uint32(2 ** 32 - 1)]  # MARK:lane-unsigned
        else:
            o[8] = v[dsl.Index(2) + 2]  # MARK:lane-folded

    err = build_error(k, "index")
    assert_names_line(err, HERE, f"MARK:lane-{case}")
    lane = {"get": 9, "insert": 7, "negative": -1, "unsigned": 2 ** 32 - 1, "folded": 4}[case]
    assert f"lane {lane} of a 4-lane vector" in str(err)


def test_dsl_constant_lanes_inside_the_vector_build():
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor("f32", (64,))):
        v = o.load_vec(4, 0)
        o[8] = v[dsl.Int32(3)] + v.insert(dsl.Uint32(0), 1.0)[1] + v[dsl.thread_idx() % 4]

    assert "st.global.b32" in ptx(k)


def test_a_vector_slice_of_step_zero_is_a_vector_error_at_the_users_line():
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor("f32", (64,))):
        v = dsl.full(4, dsl.Float32(1.0))
        o[0] = v[::0][0]  # MARK:step-zero

    err = build_error(k, "vector")
    assert_names_line(err, HERE, "MARK:step-zero")
    assert "vector slice slice(None, None, 0)" in str(err)


# --------------------------------------------------------------------------- C7: loop results

@pytest.mark.parametrize("case", ["range-before", "range-inside", "while-before", "range-no-carry"])
def test_loop_results_read_before_the_loop_is_traced_are_a_loop_error(case):
    """They were None, and the user's line failed with Python's TypeError."""
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor("f32", (32,))):
        if case == "range-before":
            loop = dsl.range(0, 4, carry=(dsl.Float32(0.0),))
            o[0] = loop.results[0]  # MARK:results-range-before
        elif case == "range-inside":
            loop = dsl.range(0, 4, carry=(dsl.Float32(0.0),))
            for i, (acc,) in loop:
                o[1] = loop.results[0]  # MARK:results-range-inside
                dsl.yield_(acc + 1.0)
        elif case == "while-before":
            w = dsl.while_(lambda i: i < 4, carry=(dsl.Int32(0),))
            o[0] = w.results[0].to(dsl.Float32)  # MARK:results-while-before
        else:
            loop = dsl.range(4)
            for i in loop:
                o[i] = 1.0
            o[0] = loop.results  # MARK:results-range-no-carry

    err = build_error(k, "loop")
    assert_names_line(err, HERE, f"MARK:results-{case}")
    want = {"range-before": "`.results` of a dsl.range read before the loop is iterated",
            "range-inside": "`.results` of a dsl.range read inside its body",
            "while-before": "`.results` of a dsl.while_ read before the loop is iterated",
            "range-no-carry": "a dsl.range without carry= has no results"}[case]
    assert want in str(err)


def test_loop_results_after_the_loop_are_the_carried_values():
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor("f32", (32,))):
        loop = dsl.range(0, 4, carry=(dsl.Float32(0.0),))
        for i, (acc,) in loop:
            dsl.yield_(acc + 1.0)
        w = dsl.while_(lambda i: i < 4, carry=(dsl.Int32(0),))
        for (i,) in w:
            dsl.yield_(i + 1)
        (r,), (n,) = loop.results, w.results
        assert isinstance(r, dsl.Float32) and isinstance(n, dsl.Int32)
        o[0] = r + n.to(dsl.Float32)

    assert "scf.for" in k.build().ir


# --------------------------------------------------------------------------- if_: a Python number beside a typed value

def _if_kernel(then, other, number_in, out="i32"):
    """A kernel storing at [0] and [1] the result of a dsl.if_/else_ whose branches yield the Python number
    `then` and the typed value `other(n)`: the number in the branch `number_in` names, with the condition
    true at [0] and false at [1] (build-time known, so MLIR folds the branch)."""
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor(out, (8,)), n: dsl.Int32):
        for i, c in enumerate((dsl.Int32(1) > 0, dsl.Int32(1) < 0)):
            a, b = (then, other(n)) if number_in == "then" else (other(n), then)
            with dsl.if_(c) as br:
                dsl.yield_(a)  # MARK:if-yield
            with dsl.else_():
                dsl.yield_(b)  # MARK:else-yield
            (r,) = br.results
            k.seen.append(type(r))
            o[i] = r if out != "i32" else r.to(dsl.Int32)

    k.seen = []
    return k


@pytest.mark.parametrize("number_in", ["then", "else"])
@pytest.mark.parametrize("number,other,cls,out", [
    (7, lambda n: n.to(dsl.Int8), dsl.Int8, "i32"),
    (-3, lambda n: n.to(dsl.Int64), dsl.Int64, "i32"),
    (2 ** 40, lambda n: n.to(dsl.Int64), dsl.Int64, "i64"),
    (200, lambda n: n.to(dsl.Uint8), dsl.Uint8, "i32"),
    (True, lambda n: n.to(dsl.Int16), dsl.Int16, "i32"),
    (2.0, lambda n: n.to(dsl.Int32), dsl.Int32, "i32"),
    (0.5, lambda n: n.to(dsl.Float16), dsl.Float16, "f16"),
    (3, lambda n: n.to(dsl.Float32), dsl.Float32, "f32"),
], ids=["int8", "int64", "int64-past-int32", "uint8", "bool-int16", "integral-float-int32", "float16",
        "int-float32"])
def test_a_python_number_beside_a_typed_if_result_takes_its_type(number, other, cls, out, number_in):
    """A Python number yielded in the dsl.if_ branch was an Int32/Float32/Boolean, and a typed dsl.else_ value
    beside it was refused ("gives (i8), the dsl.if_ branch yields (i32)"; 2**40 did not fit Int32): it takes
    the typed value's type in either branch, as in arithmetic with it (Int8 + 7 is an Int8)."""
    k = _if_kernel(number, other, number_in, out)
    text = k.build().ir
    assert k.seen == [cls, cls], k.seen
    assert re.findall(r"scf\.if .* -> \((\S+)\)", text) == [cls.name] * 2
    got = folded_stores(k)
    want = int(number) if not cls.is_float else float(number)
    assert got[0 if number_in == "then" else 1] == want, got


def test_a_python_number_beside_a_typed_vector_result_is_broadcast():
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor("f16", (8,)), n: dsl.Int32):
        v = dsl.full(2, n.to(dsl.Float16))
        with dsl.if_(n > 3) as br:
            dsl.yield_(0.5)
        with dsl.else_():
            dsl.yield_(v)
        (r,) = br.results
        o.store_vec(r, 0)
        with dsl.if_(n > 4) as br:
            dsl.yield_(v)
        with dsl.else_():
            dsl.yield_(1.5)
        o.store_vec(br.results[0], 2)

    text = ptx(k)
    assert re.findall(r"scf\.if .* -> \((\S+)\)", k.build().ir) == ["vector<2xf16>"] * 2
    assert "st.global" in text


@pytest.mark.parametrize("number_in", ["then", "else"])
@pytest.mark.parametrize("number,other,message", [
    (1.5, lambda n: n, "1.5 is not an integer, Int32 needs one"),
    (300, lambda n: n.to(dsl.Int8), "300 does not fit Int8"),
    (-1, lambda n: n.to(dsl.Boolean), "-1 does not fit Boolean"),
    (2 ** 70, lambda n: n.to(dsl.Int64), "does not fit Int64"),
], ids=["float-int32", "300-int8", "minus-1-boolean", "2^70-int64"])
def test_a_python_number_that_is_not_of_the_typed_results_type_is_refused_at_its_yield(number, other, message,
                                                                                       number_in):
    """1.5 beside an Int32, 300 beside an Int8: the number cannot be of the other branch's type; a typed error at
    the number's dsl.yield_ (it was "gives (i32), the dsl.if_ branch yields (f32)" at the else_, or, the number
    in the else_, a bare "300 does not fit Int8")."""
    err = build_error(_if_kernel(number, other, number_in), "range")
    assert_names_line(err, HERE, "MARK:if-yield" if number_in == "then" else "MARK:else-yield")
    assert message in str(err) and "dsl.yield_ in a dsl." in str(err)
    assert f"the Python number {number}" in str(err)


def test_dsl_cond_takes_a_python_number_beside_a_typed_value():
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor("i32", (8,)), n: dsl.Int32):
        r = dsl.cond(n > 3, lambda: 0, lambda: n.to(dsl.Int8))
        k.seen = type(r)
        o[0] = r.to(dsl.Int32)
        dsl.cond(n > 3, lambda: 300, lambda: n.to(dsl.Int8))  # MARK:cond-300

    err = build_error(k, "range")
    assert k.seen is dsl.Int8
    assert_names_line(err, HERE, "MARK:cond-300")
    assert "300 does not fit Int8" in str(err)


def test_a_python_number_yielded_for_a_carried_vector_is_broadcast_and_one_past_a_carry_is_named():
    """The same rule in a loop: 0.0 for a carried vector was "no DSL type for MLIR type vector<2xf32>"."""
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor("f32", (8,)), n: dsl.Int32, *, bad=False):
        loop = dsl.range(0, n, carry=(dsl.full(2, 1.0), n.to(dsl.Int8)))
        for i, (v, b) in loop:
            dsl.yield_(0.0, 300 if bad else 3)  # MARK:loop-yield
        o.store_vec(loop.results[0], 0)

    assert "vector.broadcast" in k.build().ir
    err = build_error(k, "range", bad=True)
    assert_names_line(err, HERE, "MARK:loop-yield")
    assert "dsl.yield_ in a dsl.range gives the Python number 300 for a carried value, an Int8 (value 2 of 2): " \
           "300 does not fit Int8" in str(err)


def test_a_vector_among_vector_ofs_elements_is_refused_at_the_users_line():
    """fuzz_dsl seed 854133: a Vector lane reached vector.from_elements' verifier (rule verify)."""
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor("i64", (128,))):
        v = dsl.full(2, dsl.Int32(3))
        w = dsl.vector_of([dsl.Int64(0), v, dsl.Int64(1), v])  # MARK:vector-of-vector
        o[dsl.thread_idx()] = w[0]

    err = build_error(k, "vector")
    assert "element 1 is a Vector<2 x Int32>" in str(err)
    assert_names_line(err, __file__, "MARK:vector-of-vector")
