"""dsl.range over a 32-bit counter whose last value plus the step passes the
top of its type: the counter wraps and the loop never ends (a grid-stride
loop over 2^31 - 1 bytes). Known bounds are refused at build; run-time ones
trap before the loop. A step of 1 never wraps and needs no guard, nor do
64-bit counters."""

import pytest

import dsl_testing  # noqa: F401 (puts the build on the path)
from dsl_testing import build_error
from nvtma import dsl

I32, U32 = (1 << 31) - 1, (1 << 32) - 1


def _wraps(a, b, s, top):
    """Python's answer: the range's last value plus the step passes `top`."""
    r = range(a, b, s)
    return len(r) > 0 and r[-1] + s > top


def _loop(lo, hi, step):
    """A kernel looping dsl.range(lo, hi, step); each bound a constant or a function of the Int32 and Uint32
    parameters."""
    @dsl.kernel(block=(32,))
    def k(y: dsl.Tensor("i32", (64,)), n: dsl.Int32, u: dsl.Uint32):
        b = [f(n, u) if callable(f) else f for f in (lo, hi, step)]
        for i in dsl.range(*b):
            y[dsl.thread_idx()] = dsl.Int32(i)
    return k


# (start, stop, step) near the top of Int32 and Uint32: wrapping or not
CASES = [(0, I32, 4, I32), (3, I32 - 1, 4, I32), (0, I32 - 1, 4, I32), (I32 - 7, I32, 8, I32), (-5, I32, 1 << 30, I32),
         (I32, I32, 4, I32), (I32 - 3, I32 - 3, 2, I32), (-(1 << 31), I32, 1 << 30, I32), (5, 100, 7, I32),
         (0, U32, 4, U32), (1, U32 - 2, 4, U32), (U32 - 10, U32, 3, U32), (7, 1 << 31, 1 << 31, U32), (0, 10, 3, U32)]


@pytest.mark.parametrize("a, b, s, top", CASES)
def test_the_run_time_guard_traps_exactly_where_the_counter_wraps(a, b, s, top):
    """Bounds made at run time from constants (so LLVM folds the guard): the
    PTX keeps a trap where Python's range says the counter wraps, none where
    it does not."""
    T = dsl.Int32 if top == I32 else dsl.Uint32
    k = _loop(lambda n, u: T(a) + T(0) * (n if T is dsl.Int32 else u),
              lambda n, u: T(b) + T(0) * (n if T is dsl.Int32 else u), s)
    assert ("trap;" in k.compile().ptx) == _wraps(a, b, s, top)


@pytest.mark.parametrize("a, b, s, top", CASES)
def test_known_bounds_that_wrap_are_refused(a, b, s, top):
    T = dsl.Int32 if top == I32 else dsl.Uint32
    k = _loop(lambda n, u: T(a), lambda n, u: T(b), s)
    if _wraps(a, b, s, top):
        e = build_error(k, rule="loop")
        assert "wraps" in str(e) and "Int64" in str(e)
    else:
        assert "trap;" not in k.compile().ptx


def test_only_strided_32_bit_loops_are_guarded():
    assert "trap;" not in _loop(0, lambda n, u: n, 1).compile().ptx  # a step of 1
    assert "trap;" not in _loop(0, lambda n, u: n.to(dsl.Int64), 4).compile().ptx  # 64-bit counter
    assert "trap;" not in _loop(lambda n, u: n.to(dsl.Index), lambda n, u: n.to(dsl.Index) * 3, 4).compile().ptx
    text = _loop(0, lambda n, u: n, 4).compile().ptx
    assert text.count("trap;") == 1  # the wrap guard (a constant step needs no positivity guard)
    text = _loop(lambda n, u: u, lambda n, u: u * 3, lambda n, u: u).compile().ptx
    assert text.count("trap;") == 2 and "rem.u32" in text  # a run-time step: both guards
