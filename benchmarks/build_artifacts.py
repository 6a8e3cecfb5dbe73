#!/usr/bin/env python3
"""Compile the benchmark kernels ahead of time: DIR/<ir-hash>/."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nvtma  # noqa: E402
import common  # noqa: E402

out = Path(sys.argv[1])
for spec in common.all_specs():
    nvtma.compile(spec.ir).save(out / common.key(spec))
print(f"{len(common.all_specs())} benchmark kernels -> {out}")
