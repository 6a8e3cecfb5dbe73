"""Control flow that built, silently, something else than the Python it was written as (a `continue` in a
branch, a name rebound in a branch or loop body), hung or ran the wrong trip count (run-time steps of 0 or
below, negative Python bounds of an unsigned counter), or left the process in a bad state (a loop body
left open, every build's MLIR context kept alive): each refused at build time or made safe."""

import contextlib
import os
import re
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import assert_names_line, build_error, ptx  # noqa: E402
from nvtma import dsl  # noqa: E402

HERE = __file__
F32 = dsl.Tensor("f32", (None,))
I32 = dsl.Tensor("i32", (8,))


# --------------------------------------------------------------------------- Python jumps while tracing

def _continue_in_if(y, n):
    for i in dsl.range(n):
        with dsl.if_(i > 3):
            continue  # MARK:continue
        y[i] = 1.0


def _return_in_if(y, n):
    with dsl.if_(n > 3):
        y[0] = 2.0
        return  # MARK:return
    y[1] = 1.0


def _break_in_else(y, n):
    for i in range(2):
        with dsl.if_(n > i):
            y[i] = 1.0
        with dsl.else_():
            break  # MARK:break-else
        y[i + 2] = 3.0


def _break_in_role(y, n):
    from nvtma import lang
    for i in dsl.range(n):
        with lang.WarpRole(0):
            if i is not None:  # a build-time condition: the jump is taken all the same
                continue  # MARK:continue-role
        y[i] = 1.0


@pytest.mark.parametrize("body,marker", [(_continue_in_if, "continue"), (_return_in_if, "return"),
                                         (_break_in_else, "break-else"), (_break_in_role, "continue-role")],
                         ids=["continue-in-if", "return-in-if", "break-in-else", "continue-in-warp-role"])
def test_a_python_jump_out_of_a_branch_is_refused(body, marker):
    """`with dsl.if_(i > 3): continue` built, and left out the rest of the loop body for every i (the
    continue was taken while tracing); a return or break out of a branch dropped what followed the same way."""
    @dsl.kernel(block=(64,))
    def k(y: F32, n: dsl.Int32):
        body(y, n)

    err = build_error(k, "python-control-flow")
    assert_names_line(err, HERE, f"MARK:{marker}")
    assert "was never built" in str(err)


def test_jumps_of_loops_inside_a_branch_and_branches_a_helper_opens_are_fine():
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32):
        for i in dsl.range(n):
            with dsl.if_(i > 3):
                for j in range(4):  # a Python loop inside the branch: its own break/continue
                    if j == 1:
                        continue
                    if j == 3:
                        break
                    y[j] = 1.0
            y[i] = 2.0
        with dsl.if_(n > 0):
            def helper():
                return 1.0  # a function's return
            y[0] = helper()

    ptx(k)


def test_break_or_return_in_a_loop_body_is_refused():
    """A Python break in a dsl.range body ended the tracing, not the loop at run time; the build failed
    only at the verifier ("block with no terminator"), naming no break."""
    @dsl.kernel(block=(32,))
    def brk(y: F32, n: dsl.Int32):
        for i in dsl.range(n):
            y[i] = 1.0
            break  # MARK:break-range
        y[0] = 2.0

    @dsl.kernel(block=(32,))
    def ret(y: F32, n: dsl.Int32):
        for (i,) in dsl.while_(lambda i: i < n, carry=(dsl.Int32(0),)):
            y[i] = 1.0
            return  # MARK:return-while

    err = build_error(brk, "python-control-flow")
    assert_names_line(err, HERE, "MARK:break-range")
    assert "break or return left this dsl.range body" in str(err)
    err = build_error(ret, "python-control-flow")
    assert_names_line(err, HERE, "MARK:return-while")
    assert "dsl.while_ body" in str(err)


# --------------------------------------------------------------------------- names rebound in a body

def _rebound_in_if(y, n, a, b):
    v = a
    with dsl.if_(n > 3):  # MARK:rebound-if
        v = b
    y[0] = v


def _rebound_in_else(y, n, a, b):
    v = a
    with dsl.if_(n > 3):
        y[1] = v
    with dsl.else_():  # MARK:rebound-else
        v = b
    y[0] = v


def _swapped_in_loop(y, n, a, b):
    for _ in dsl.range(n):  # MARK:rebound-range
        a, b = b, a
    y[0] = a


def _rebound_in_while(y, n, a, b):
    for (i,) in dsl.while_(lambda i: i < n, carry=(dsl.Int32(0),)):  # MARK:rebound-while
        a = b
        dsl.yield_(i + 1)
    y[0] = a


@pytest.mark.parametrize("body,marker,hint", [
    (_rebound_in_if, "rebound-if", "dsl.select"), (_rebound_in_else, "rebound-else", "br.results"),
    (_swapped_in_loop, "rebound-range", "carry="), (_rebound_in_while, "rebound-while", "carry=")],
    ids=["if", "else", "swap-in-range", "while"])
def test_a_name_rebound_to_an_earlier_value_inside_a_body_is_refused(body, marker, hint):
    """`v = a; with dsl.if_(n > 3): v = b; y[0] = v` stored b for every thread (Python assigned v while
    tracing; the branch chose nothing), as did a swap in a loop body for any trip count, 0 included."""
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32, a: dsl.Float32, b: dsl.Float32):
        body(y, n, a, b)

    err = build_error(k, "rebind")
    assert_names_line(err, HERE, f"MARK:{marker}")
    assert "made before it" in str(err) and hint in str(err)


def test_names_a_body_makes_or_a_python_loop_in_it_rebinds_are_fine():
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32, a: dsl.Float32, b: dsl.Float32):
        vals, v, w = [a, b], a, b
        with dsl.if_(n > 3):
            v = v * 2.0          # made in the branch: its own value (used after it, the verifier says so)
            w = w                # the same value
            for j, x in enumerate(vals):  # a build-time loop rebinding names to earlier values
                y[j] = x + v
            t = a                # a name the branch makes
            y[2] = t
        for _ in dsl.range(n):
            n2 = n               # a name the body makes
            y[3] = n2.to(dsl.Float32)

    ptx(k)


# --------------------------------------------------------------------------- if_ with results

def test_an_if_that_yields_values_needs_its_else():
    """Without the else_ the build failed at MLIR's verifier ("'scf.if' op expects a non-empty block"), and
    `br.results` read before the else_ was None (a TypeError where it was unpacked)."""
    @dsl.kernel(block=(32,))
    def no_else(y: F32, n: dsl.Int32):
        with dsl.if_(n > 3):  # MARK:no-else
            dsl.yield_(dsl.Float32(1.0))
        y[0] = 1.0

    @dsl.kernel(block=(32,))
    def early(y: F32, n: dsl.Int32):
        with dsl.if_(n > 3) as br:
            dsl.yield_(dsl.Float32(1.0))
        y[0] = br.results[0]  # MARK:early-results

    err = build_error(no_else, "yield")
    assert_names_line(err, HERE, "MARK:no-else")
    assert "has no dsl.else_" in str(err)
    err = build_error(early, "yield")
    assert_names_line(err, HERE, "MARK:early-results")
    assert "read before its dsl.else_" in str(err)


def test_yield_inside_a_loop_without_carry_is_refused():
    """The yield went to the enclosing if_ (or carried loop) from inside the loop body."""
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32, a: dsl.Float32):
        with dsl.if_(n > 3) as br:
            for _ in dsl.range(n):
                dsl.yield_(a)  # MARK:yield-no-carry
        with dsl.else_():
            dsl.yield_(a)
        y[0] = br.results[0]

    err = build_error(k, "yield")
    assert_names_line(err, HERE, "MARK:yield-no-carry")
    assert "without carry=" in str(err)


def test_if_on_a_vector_is_refused():
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32):
        with dsl.if_(dsl.full(2, n, dsl.Int32) < 0):  # MARK:vector-if
            y[0] = 1.0

    err = build_error(k, "if")
    assert_names_line(err, HERE, "MARK:vector-if")
    assert "dsl.if_ on a Vector" in str(err)


# --------------------------------------------------------------------------- run-time steps, unsigned bounds

def test_a_run_time_step_of_zero_or_below_traps_before_the_loop():
    """A run-time step of 0 looped forever and a negative one counted up past the stop until the counter
    wrapped: the kernel now traps before such a loop (as the build refuses constant ones). Block, grid and
    cluster sizes are never 0: no guard for them (the copy kernels' strides)."""
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32, s: dsl.Int32, u: dsl.Uint32, *, case):
        if case == "signed":
            for i in dsl.range(0, n, s):
                y[i] = 1.0
        elif case == "unsigned":
            for i in dsl.range(dsl.Uint32(0), u, u):
                y[i] = 1.0
        elif case == "index":
            for i in dsl.range(0, y.shape[0], s.to(dsl.Index)):
                y[i] = 1.0
        elif case == "i32-product":
            for i in dsl.range(0, n, dsl.grid_dim() * dsl.block_dim()):
                y[i] = 1.0
        else:
            for i in dsl.range(dsl.thread_idx(), y.shape[0], dsl.block_dim()):
                y[i] = 1.0
            for i in dsl.range(0, n, dsl.grid_dim()):
                y[i] = 1.0
            for i in dsl.range(dsl.block_idx().to(dsl.Index) * 4, y.shape[0],
                               dsl.grid_dim().to(dsl.Index) * dsl.block_dim().to(dsl.Index)):
                y[i] = 1.0  # (a grid-stride loop: two sizes multiplied in 64 bits)

    # (a 32-bit counter also gets the wrap guard after it, test_dsl_range_wrap.py; an Index one does not)
    for case, pred, traps in (("signed", "sle", 2), ("unsigned", "eq", 2), ("index", "sle", 1)):
        ir = k.build(case=case).ir
        assert re.search(rf"arith\.cmpi {pred}, %\w+, %c0\w*", ir), case
        assert ir.count("llvm.intr.trap") == traps and ir.index("llvm.intr.trap") < ir.index("scf.for"), case
        assert "trap;" in ptx(k, case=case)
    sizes = k.build(case="sizes").ir  # no step guard; the Int32 grid-stride loop's wrap guard only
    assert not re.search(r"arith\.cmpi (sle|eq), %\w+, %c0\w*", sizes) and sizes.count("llvm.intr.trap") == 1
    # (the review: sizes multiplied in 32 bits wrap past 2^31 threads, and keep the guard)
    assert "llvm.intr.trap" in k.build(case="i32-product").ir


def test_a_negative_python_bound_of_an_unsigned_counter_is_refused():
    """dsl.range(-1, n) over a Uint32 n started at the bit pattern 4294967295: no iterations."""
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Uint32):
        for i in dsl.range(-1, n):  # MARK:unsigned-neg
            y[0] = 1.0

    err = build_error(k, "loop")
    assert_names_line(err, HERE, "MARK:unsigned-neg")
    assert "bound -1 with Uint32 bounds" in str(err)


# --------------------------------------------------------------------------- state across builds

def test_builds_do_not_keep_their_mlir_contexts_alive():
    """Each if_ without an else_ left an entry in a process-wide table, keeping its build's whole MLIR
    context (module, ops) alive for the life of the process."""
    import gc
    from nvtma import ir

    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32, *, i):
        with dsl.if_(n > i):
            y[0] = 1.0

    gc.collect()
    live = ir.Context._get_live_count()
    for i in range(4):
        k.build(i=i)
    gc.collect()
    assert ir.Context._get_live_count() == live


def test_a_loop_started_by_hand_and_dropped_is_refused_and_the_process_exits_cleanly():
    """A dsl.range advanced with next() and never finished kept its body's insertion point: the kernel's
    return went inside the loop (a verifier error), the generator's late exit failed ("Unbalanced
    InsertionPoint"), and the interpreter aborted at exit (Fatal Python error)."""
    script = textwrap.dedent("""
        from nvtma import dsl
        F = dsl.Tensor("f32", (None,))
        keep = []

        @dsl.kernel(block=(32,))
        def by_hand(y: F, n: dsl.Int32):
            it = iter(dsl.range(n))
            keep.append(it)
            y[next(it)] = 1.0

        @dsl.kernel(block=(32,))
        def fine(y: F, n: dsl.Int32):
            for i in dsl.range(n):
                y[i] = 1.0

        try:
            by_hand.build()
        except dsl.KernelBuildError as e:
            print("rule", e.rule, "never finished" in str(e))
        fine.build()
        keep.clear()
        print("ok")
    """)
    import nvtma
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(nvtma.__file__))))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "Fatal" not in r.stderr and "Unbalanced" not in r.stderr, r.stderr[-2000:]
    assert r.stdout.split() == ["rule", "region", "True", "ok"], r.stdout


def test_rebinding_a_name_nothing_reads_after_the_body_and_guarded_jumps_of_python_loops_are_fine():
    """The review's false positives: a build-time loop rebinding a name to its earlier values inside a
    branch, used only there (`d = vals[s]`), and a build-time `if s == 0: continue` of a Python loop around a
    branch, were refused."""
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32, a: dsl.Float32, b: dsl.Float32):
        vals = [a, b, a + b]
        for s in range(3):
            with dsl.if_(n > s):
                if s == 0:
                    continue
                d = vals[s]
                y[s] = d
        for i in dsl.range(n):
            with dsl.if_(i > 1):
                w = a
                y[i] = w
            w = b
            y[0] = w

    text = ptx(k)
    assert len(re.findall(r"st\.global\.(?:f32|b32)", text)) >= 3


def test_a_guarded_jump_out_of_a_dsl_loop_body_is_still_refused():
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32):
        for i in dsl.range(n):
            with dsl.if_(i > 1):
                if n is not None:
                    continue  # MARK:guarded-continue
            y[i] = 1.0

    assert_names_line(build_error(k, "python-control-flow"), HERE, "MARK:guarded-continue")


# --------------------------------------------------------------------------- the review's variants

def _rebound_to_a_number(y, n, a, b):
    i = dsl.thread_idx()
    v = a
    with dsl.if_(i >= n):  # MARK:rebound-number
        v = 0.0
    y[i] = v


def _rebound_in_a_python_loop(y, n, a, b):
    vals, v = [a, b], a
    for s in range(2):
        with dsl.if_(n > s):  # MARK:rebound-python-loop
            v = vals[s]
    y[0] = v


def _made_in_the_branch(y, n, a, b):
    with dsl.if_(n > 3):  # MARK:made-in-branch
        v = a
    y[0] = v


def _rebound_in_a_wrapper(y, n, a, b):
    v = a
    with _leader(n):  # MARK:rebound-wrapper
        v = b
    y[0] = v


@contextlib.contextmanager
def _leader(n):
    with dsl.if_(n == 0):
        yield


@pytest.mark.parametrize("body,marker", [
    (_rebound_to_a_number, "rebound-number"), (_rebound_in_a_python_loop, "rebound-python-loop"),
    (_made_in_the_branch, "made-in-branch"), (_rebound_in_a_wrapper, "rebound-wrapper")],
    ids=["python-number", "python-loop", "made-in-branch", "user-wrapper"])
def test_rebinding_variants_the_review_found_are_refused(body, marker):
    """Built silently: a run-time value rebound to a Python number in a branch (the masking idiom stored 0.0
    for every thread), a rebinding inside a Python loop read after the loop, a name first made in a branch
    and read after it, and a rebinding inside the user's own context manager around a dsl.if_."""
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32, a: dsl.Float32, b: dsl.Float32):
        body(y, n, a, b)

    assert_names_line(build_error(k, "rebind"), HERE, f"MARK:{marker}")


def test_a_jump_in_a_user_wrapper_is_refused_and_a_helpers_closing_return_is_fine():
    """A `continue` inside the user's own context manager around a dsl.if_ dropped the rest of the loop body;
    a helper whose role ends in `return` (nothing left out) was refused."""
    @dsl.kernel(block=(32,))
    def wrapped(y: F32, n: dsl.Int32):
        for i in dsl.range(n):
            with _leader(n):
                continue  # MARK:wrapper-continue
            y[i] = 1.0

    assert_names_line(build_error(wrapped, "python-control-flow"), HERE, "MARK:wrapper-continue")

    def producer(y):
        from nvtma import lang
        with lang.WarpRole(0):
            y[0] = 1.0
            return

    @dsl.kernel(block=(64,))
    def helper(y: F32, n: dsl.Int32):
        producer(y)
        y[1] = 2.0

    assert len(re.findall(r"st\.global\.(?:f32|b32)", ptx(helper))) == 2


def test_a_name_used_only_inside_a_match_case_branch_is_fine():
    @dsl.kernel(block=(32,))
    def k(y: F32, n: dsl.Int32, a: dsl.Float32, b: dsl.Float32, *, mode):
        d = a
        match mode:
            case "x":
                with dsl.if_(n > 0):
                    d = b
                    y[0] = d

    ptx(k, mode="x")


def test_the_second_review_s_variants():
    """A scope= on a branch that names its warp lost which warp (a shuffle in warp 0 of a 48-thread block was
    refused); `with dsl.if_(c): return b` at a helper's end returned b on every path; a walrus and a
    try/finally around the yield of the user's context manager hid a rebinding."""
    from nvtma import cuda

    @dsl.kernel(block=(48,))
    def scoped(y: F32, x: F32):
        with dsl.if_(dsl.warp_idx() == 0, scope="warp"):
            t = dsl.thread_idx()
            y[t] = cuda.shfl_xor_sync(x[t], 1)

    assert "shfl.sync.bfly.b32" in ptx(scoped)

    def pick(a, b, c):
        with dsl.if_(c):
            return b  # MARK:return-value

    @dsl.kernel(block=(32,))
    def picked(y: F32, n: dsl.Int32):
        v = pick(y[0], y[1], n > 0)
        y[2] = v

    assert_names_line(build_error(picked, "python-control-flow"), HERE, "MARK:return-value")

    @dsl.kernel(block=(32,))
    def walrus(y: F32, n: dsl.Int32, a: dsl.Float32, b: dsl.Float32):
        v = a
        with dsl.if_(n > 0):  # MARK:walrus
            y[1] = (v := b)
        y[0] = v

    assert_names_line(build_error(walrus, "rebind"), HERE, "MARK:walrus")

    @dsl.kernel(block=(32,))
    def guarded(y: F32, n: dsl.Int32, a: dsl.Float32, b: dsl.Float32):
        v = a
        with _leader_try(n):  # MARK:try-wrapper
            v = b
        y[0] = v

    assert_names_line(build_error(guarded, "rebind"), HERE, "MARK:try-wrapper")


@contextlib.contextmanager
def _leader_try(n):
    with dsl.if_(n == 0):
        try:
            yield
        finally:
            pass
