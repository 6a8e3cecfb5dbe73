"""test/fuzz/fuzz_dsl_args.py over every public op of the kernel language: each odd argument is a typed error at
the call's line (or a value the op takes), never an untyped error from inside nvtma or an MLIR verifier's."""

import sys
from pathlib import Path

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
import fuzz_dsl_args  # noqa: E402


def test_every_op_refuses_odd_arguments_at_the_users_line():
    todo = fuzz_dsl_args.cases()
    assert len(todo) > 5000  # (every module's ops: a lost module or signature would shrink it)
    bugs = [(c, *fuzz_dsl_args.outcome(c)) for c in todo]
    bugs = [b for b in bugs if b[1] in ("VERIFY", "NO-LINE", "UNTYPED")]
    assert not bugs, "\n".join(f"{o} {c}: {d}" for c, o, d in bugs[:40])


@pytest.mark.parametrize("call,want", [
    ("cuda.shfl_sync(0, dsl.full(2, 1.0))", "typed"),
    ("cuda.ldg(x, (0,))", "typed"),
    ("cuda.ldg(x, (0, 0))", "ok"),
    ("dsl.sqrt(dsl.Float32(2.0))", "ok"),
])
def test_the_fuzzers_outcomes(call, want):
    assert fuzz_dsl_args.outcome(call)[0] == want
