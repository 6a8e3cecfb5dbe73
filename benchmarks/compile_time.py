#!/usr/bin/env python3
"""Compile time, nvtma vs CuTe DSL, side by side in one run (no GPU needed).

    python benchmarks/compile_time.py [--cute-python PY] [--reps 5] [--runs 3] [--cute-check]

Each measurement runs in a fresh process (so "cold" is cold): the import (for
nvtma `import nvtma` plus its kernel library; for CuTe `import cutlass.cute`
plus benchmarks/cute_kernels.py), the first compile after the import (for
nvtma this loads the MLIR extension, which `import nvtma` defers), their sum
(a fresh process to its first cubin), then `--reps` more compiles of the same
kernel (the compiler's work, no cache), and for nvtma a cache hit.

Kernels, the same on both sides (benchmarks/cute_kernels.py holds CuTe's):
"3672" (make_tiled_tma_atom + copy_tensormap, CUTLASS #3672), "tile_copy"
(TMA load + store of one 64x64 fp16 tile per CTA) and "gemv" (bf16 W through
a 4-stage TMA ring, one producer and four consumer warps, whole row blocks per
CTA); nvtma also compiles its pipelined copy ("copy"). `--cute-python` is an
interpreter with nvidia-cutlass-dsl (default: this one, if it has it);
`--cute-check` then runs CuTe's tile copy and GEMV on the GPU against torch.
One JSON line per measurement.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAIRS = ("3672", "tile_copy", "gemv")

NVTMA_CHILD = r"""
import json, sys, time
T = time.perf_counter
t = T(); import nvtma; from nvtma import kernels; t_import = T() - t
specs = {
    "3672": lambda: kernels.dump_descriptor((256, 256), "f16", (64, 64)),
    "tile_copy": lambda: kernels.tile_copy((16384, 16384), "f16", (64, 64)),
    "gemv": lambda: kernels.gemv(16384, 16384, "bf16", tile=(32, 256), stages=4, consumers=4, split="rows"),
    "copy": lambda: kernels.pipelined_copy(16384, 16384, "f16", (64, 128), 4, "l2_256b"),
}
name, reps = sys.argv[1], int(sys.argv[2])
t = T(); spec = specs[name](); nvtma.compile(spec.ir, cache=False); first = T() - t
again = []
for _ in range(reps):
    t = T(); spec = specs[name](); nvtma.compile(spec.ir, cache=False); again.append(T() - t)
nvtma.compile(spec.ir)  # fill the cache
t = T(); c = nvtma.compile(specs[name]().ir); cached = T() - t
assert c.from_cache
print(json.dumps(dict(import_s=t_import, first_s=first, again_s=again, cached_s=cached)))
"""

CUTE_CHILD = r"""
import json, sys, time
T = time.perf_counter
sys.path.insert(0, sys.argv[3])
t = T()
import cutlass
import cutlass.cute
import cute_kernels as ck
t_import = T() - t
name, reps = sys.argv[1], int(sys.argv[2])
t = T(); ck.compile_kernel(name); first = T() - t
again = []
for _ in range(reps):
    t = T(); ck.compile_kernel(name); again.append(T() - t)
print(json.dumps(dict(import_s=t_import, first_s=first, again_s=again, version=getattr(cutlass, "__version__", "?"))))
"""


def child(py, code, kernel, reps):
    """Runs `code` as a script (CuTe DSL needs its kernels' source file) in
    a fresh process with an empty nvtma cache."""
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "child.py")
        with open(script, "w") as f:
            f.write(code)
        e = dict(os.environ, NVTMA_CACHE_DIR=os.path.join(d, "cache"))
        p = subprocess.run([py, script, kernel, str(reps), str(HERE)], capture_output=True, text=True, env=e,
                           timeout=600)
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def ms(s):
    return round(s * 1e3, 1)


def summary(runs):
    return dict(import_ms=ms(statistics.median(r["import_s"] for r in runs)),
                process_to_first_cubin_ms=ms(statistics.median(r["import_s"] + r["first_s"] for r in runs)),
                first_compile_ms=ms(statistics.median(r["first_s"] for r in runs)),
                again_ms=ms(statistics.median(statistics.median(r["again_s"]) for r in runs)),
                **({"cached_ms": round(statistics.median(r["cached_s"] for r in runs) * 1e3, 2)}
                   if "cached_s" in runs[0] else {}))


def has_cute(py):
    return subprocess.run([py, "-c", "import cutlass.cute"], capture_output=True).returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cute-python")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per measurement; the median is kept")
    ap.add_argument("--cute-check", action="store_true", help="then run CuTe's tile copy and GEMV on the GPU")
    a = ap.parse_args()
    cute_py = a.cute_python or (sys.executable if has_cute(sys.executable) else None)
    machine = dict(cpu=platform.processor() or platform.machine(), cores=os.cpu_count(),
                   python=platform.python_version())
    print(json.dumps(dict(bench="machine", **machine)), flush=True)
    # Interleaved (CuTe, then nvtma, per round) so machine noise hits both alike.
    runs = {("cute", k): [] for k in PAIRS} | {("nvtma", k): [] for k in PAIRS + ("copy",)}
    cute_error = None
    for _ in range(a.runs):
        for kernel in PAIRS + ("copy",):
            if kernel in PAIRS and cute_py and cute_error is None:
                try:
                    runs[("cute", kernel)].append(child(cute_py, CUTE_CHILD, kernel, a.reps))
                except Exception as e:
                    cute_error = str(e)[-300:]
            runs[("nvtma", kernel)].append(child(sys.executable, NVTMA_CHILD, kernel, a.reps))
    if cute_error:
        print(json.dumps(dict(bench="compile", impl="CuTe DSL", error=cute_error)), flush=True)
    for kernel in PAIRS + ("copy",):
        cute = summary(runs[("cute", kernel)]) if runs.get(("cute", kernel)) else None
        if cute:
            print(json.dumps(dict(bench="compile", impl="CuTe DSL cute.compile (4.8.1)", kernel=kernel, **cute)),
                  flush=True)
        ours = summary(runs[("nvtma", kernel)])
        line = dict(bench="compile", impl="nvtma.compile (IR text -> PTX -> cubin)", kernel=kernel, **ours)
        if cute:
            line.update(vs="CuTe DSL, same kernel",
                        first_ratio=round(ours["first_compile_ms"] / cute["first_compile_ms"], 2),
                        again_ratio=round(ours["again_ms"] / cute["again_ms"], 2),
                        process_to_first_cubin_ratio=round(ours["process_to_first_cubin_ms"]
                                                           / cute["process_to_first_cubin_ms"], 2))
        print(json.dumps(line), flush=True)
    if a.cute_check and cute_py:
        cute_check(cute_py)


def cute_check(py):
    """Runs CuTe's tile copy and GEMV once on the GPU against torch, each in
    its own process with a time limit."""
    for name in ("tile_copy", "gemv"):
        code = ("import json, sys; sys.path.insert(0, %r); import cute_kernels as ck; "
                "print(json.dumps(list(ck.run_check(%r))))" % (str(HERE), name))
        try:
            p = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=120)
            ok, detail = json.loads(p.stdout.strip().splitlines()[-1])
            line = dict(correct=ok, detail=detail)
        except subprocess.TimeoutExpired:
            line = dict(correct=False, error="did not finish in 120 s")
        except (IndexError, ValueError):
            line = dict(correct=False, error=p.stderr[-400:])
        print(json.dumps(dict(bench="cute_check", kernel=name, **line)), flush=True)


if __name__ == "__main__":
    main()
