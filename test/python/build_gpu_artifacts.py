#!/usr/bin/env python3
"""Compile every GPU-test kernel ahead of time into DIR/<spec.key>/ (kernel
name + constants + nvtma version) so the GPU tests run where the MLIR
extension is not importable."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import build, spec_key  # noqa: E402
from gpu_cases import all_specs  # noqa: E402
import test_gpu_launch_abi  # noqa: E402  (kernels given as IR text: the lowering's ABI)


def main():
    out = Path(sys.argv[1])
    specs = all_specs() + list(test_gpu_launch_abi.SPECS)
    for spec in specs:
        build(spec).save(out / spec_key(spec))
    print(f"{len(specs)} kernels -> {out}")


if __name__ == "__main__":
    main()
