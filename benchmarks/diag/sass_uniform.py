#!/usr/bin/env python3
"""Whether ptxas kept the GEMM consumers' ring waits in the uniform datapath:
for each compiled kernel under DIR (DIR/<spec.key>/module.cubin, as
gemm_bench.py or config_probe.py build them), the address operand of its
second mbarrier try-wait in SASS (the first consumer wait: UR..., uniform,
or R...+URZ, per-thread), and its R2UR count. Twelfth session: 104 of the
268 four-wait benchmark kernels wait per-thread; every BM = 16 one with a
TMA-stored y; where the two builds of one config differed
(s18-config-probe-whole-k), the one waiting in uniform registers was faster
more often than not, by up to 8%, but not always. No GPU needed.
    python3 benchmarks/diag/sass_uniform.py DIR
"""
import re
import subprocess
import sys
from pathlib import Path


def cuobjdump():
    from nvtma.compiler import find_tool
    tool = find_tool("cuobjdump")
    if tool is None:
        sys.exit("sass_uniform: cuobjdump not found (install nvidia-cuda-cuobjdump or set CUOBJDUMP)")
    return tool


def consumer_wait(cubin, tool=None):
    """(address operand of the second try-wait or None, R2UR count) of a cubin's SASS."""
    sass = subprocess.run([tool or cuobjdump(), "-sass", str(cubin)], capture_output=True, text=True,
                          check=True).stdout
    waits = re.findall(r"TRYWAIT\s+P\d+,\s*\[([^\]]+)\]", sass)
    return (waits[1] if len(waits) > 1 else None), sass.count("R2UR")


def main(d):
    tool = cuobjdump()
    counts = {}
    for cubin in sorted(Path(d).glob("*/module.cubin")):
        op, r2ur = consumer_wait(cubin, tool)
        kind = "none" if op is None else "uniform" if op.startswith("UR") else "per-thread"
        counts[kind] = counts.get(kind, 0) + 1
        print(f"{cubin.parent.name} {kind} {op} R2UR={r2ur}")
    print(counts)


if __name__ == "__main__":
    main(sys.argv[1])
