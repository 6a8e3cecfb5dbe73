#!/usr/bin/env python3
"""Diagnosis: the two-consumer-warpgroup GEMM assembled by each ptxas given
(whole-program, so setmaxnreg is honoured) and by nvJitLink, as artifacts;
run them with gemm_variants.py run DIR.
    python3 benchmarks/diag/ptxas_variants.py DIR NAME=PTXAS ...
"""
import subprocess
import sys
import tempfile
from pathlib import Path

from nvtma import compiler
from nvtma.kernels import gemm

CFGS = [(8, 128, 2, "tensor"), (64, 128, 2, None)]


def main():
    d = Path(sys.argv[1])
    keep = compiler.ptx_to_cubin
    for spec in sys.argv[2:] + ["nvjitlink=-"]:
        name, exe = spec.split("=")

        def by(ptx, arch, exe=exe):
            if exe == "-":
                return keep(ptx, arch)
            with tempfile.TemporaryDirectory() as t:
                (Path(t) / "k.ptx").write_text(ptx)
                subprocess.run([exe, f"-arch={arch}", "-O3", f"{t}/k.ptx", "-o", f"{t}/k.cubin"], check=True)
                return (Path(t) / "k.cubin").read_bytes()
        compiler.ptx_to_cubin = by
        for BM, BN, wgs, sc in CFGS:
            sp = gemm.gemm_spec(BM, BN, wgs, w_dtype="bf16" if sc is None else "f8E4M3FN", w_scale=sc)
            sp.compile().save(d / f"{name}-h1-{BM}-{BN}-{wgs}-{sc}")


if __name__ == "__main__":
    main()
