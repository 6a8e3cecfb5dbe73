"""Runs the lit + FileCheck suite (test/) as part of pytest."""

import os
import re
import subprocess
import sys

import pytest

from helpers import REPO, llvm_tools_dir, nvtma_opt


def test_lit_suite(tmp_path):
    env = dict(os.environ, NVTMA_OPT=nvtma_opt(), FILECHECK_DIR=llvm_tools_dir(),
               NVTMA_LIT_EXEC_ROOT=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", "import lit.main; lit.main.main()", "-sv", str(REPO / "test")],
                       capture_output=True, text=True, env=env)
    print(r.stdout[-6000:], r.stderr[-3000:])
    assert r.returncode == 0, "lit failed:\n" + r.stdout[-4000:]
    passed = re.search(r"Passed\s*:\s*(\d+)", r.stdout)
    assert passed and int(passed.group(1)) >= 7, r.stdout[-2000:]


def test_no_dead_lit_directives():
    """A RUN/CHECK line without its colon is silently ignored by lit."""
    dead = re.compile(r"^\s*//\s*(RUN|CHECK[A-Z-]*)\s+[^:]")
    bad = []
    for path in (REPO / "test").rglob("*.mlir"):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if dead.match(line):
                bad.append(f"{path.relative_to(REPO)}:{i}: {line.strip()}")
    assert not bad, "dead lit directives:\n" + "\n".join(bad)


def _invalid_inputs():
    """Every lit file of negative cases, with the pass flags of its RUN line."""
    out = []
    for path in sorted((REPO / "test").rglob("*.mlir")):
        text = path.read_text()
        if "-verify-diagnostics" not in text:
            continue
        run = re.search(r"//\s*RUN:\s*nvtma-opt %s([^|\n]*)", text)
        flags = [f for f in (run.group(1).split() if run else []) if f not in ("-verify-diagnostics",)]
        if "-split-input-file" not in flags:
            flags.append("-split-input-file")
        out.append((path, flags))
    return out


def _id(value):
    return str(value.relative_to(REPO)) if hasattr(value, "relative_to") else None


@pytest.mark.parametrize("path,flags", _invalid_inputs(), ids=_id)
def test_diagnostics_are_deterministic(path, flags):
    """Every negative case, run twice, prints byte-identical diagnostics: an
    uninitialized read in a verifier once printed a different number on
    every run (issue 15)."""
    runs = [subprocess.run([nvtma_opt(), str(path), *flags], capture_output=True, timeout=120) for _ in range(2)]
    for r in runs:
        assert r.returncode in (0, 1), r.stderr[-2000:]
        assert b"error:" in r.stderr, "expected diagnostics"
    assert runs[0].stdout == runs[1].stdout
    assert runs[0].stderr == runs[1].stderr, "diagnostics differ between two runs"
