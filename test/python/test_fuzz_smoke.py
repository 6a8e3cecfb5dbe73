"""Bounded runs of the fuzzers (the long runs are in test/fuzz): no signal,
crash banner, hang, untyped exception or output that differs between two
runs."""

import json
import subprocess
import sys

import pytest

from helpers import REPO, nvtma_opt


def _run(args, tmp_path, timeout=900):
    r = subprocess.run([sys.executable, *map(str, args), "--crashes", str(tmp_path)], capture_output=True, text=True,
                       timeout=timeout)
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    found = "\n".join(p.read_text()[:2000] for p in tmp_path.glob("*.mlir")) + \
        "\n".join(p.read_text()[:4000] for p in tmp_path.glob("*.json"))
    return summary, found


@pytest.mark.parametrize("generator", ["mutation", "atoms", "bytecode"])
def test_nvtma_opt_fuzz_smoke(generator, tmp_path):
    summary, found = _run([REPO / "test" / "fuzz" / "fuzz_nvtma_opt.py", "--generator", generator,
                           "--iterations", "240", "--seed", "20261130", "--opt", nvtma_opt()], tmp_path)
    assert summary["inputs"] == 240
    assert summary["bugs"] == 0, f"bugs: {summary} {found}"


def test_encode_argument_fuzz_smoke(tmp_path):
    summary, found = _run([REPO / "test" / "fuzz" / "fuzz_encode_args.py", "--inputs", "3000", "--seed", "20261130"],
                          tmp_path)
    assert summary["inputs"] == 3000 and summary["returned"] > 100 and summary["tensormap_errors"] > 100
    assert summary["bugs"] == 0, f"bugs: {summary} {found}"


def test_dsl_fuzz_smoke(tmp_path):
    """test/fuzz/fuzz_dsl.py over 300 seeds: random kernels, many of them
    wrong on purpose, each built and compiled in a child process; every
    outcome is a compiled kernel or a typed error."""
    pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")
    summary, _ = _run([REPO / "test" / "fuzz" / "fuzz_dsl.py", "--seeds", "0:300"], tmp_path)
    found = "\n".join(p.read_text()[:3000] for p in tmp_path.glob("*.py") if not p.name.startswith("late-"))
    assert summary["inputs"] == 300
    assert summary["outcomes"].get("ok", 0) > 10 and summary["outcomes"].get("typed", 0) > 50, summary
    assert summary["bugs"] == 0, f"bugs: {summary} {found}"
