"""A bounded run of the nvtma-opt mutation fuzzer (the long runs are in
test/fuzz): no signal, crash banner or hang."""

import json
import subprocess
import sys

from helpers import REPO, nvtma_opt


def test_fuzz_smoke(tmp_path):
    r = subprocess.run([sys.executable, str(REPO / "test" / "fuzz" / "fuzz_nvtma_opt.py"), "--iterations", "250",
                        "--seed", "20261129", "--crashes", str(tmp_path), "--opt", nvtma_opt()],
                       capture_output=True, text=True, timeout=900)
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["inputs"] == 250
    assert summary["bugs"] == 0, f"crashes: {summary} " + "\n".join(
        p.read_text()[:2000] for p in tmp_path.glob("*.mlir"))
