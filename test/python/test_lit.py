"""Runs the lit + FileCheck suite (test/) as part of pytest."""

import os
import re
import subprocess
import sys

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
