#!/usr/bin/env python3
"""Compile time, nvtma vs CuTe DSL, side by side on one machine (no GPU needed).

    python benchmarks/compile_time.py [--cute-python PY] [--reps 5]

Each measurement runs in a fresh process (so "cold" is cold): `import`,
the first compile after import (for nvtma this loads the MLIR extension,
which `import nvtma` defers), their sum (a fresh process to its first cubin), then `--reps` more compiles of the same
kernel (the compiler's work, no cache), and for nvtma a cache hit. Kernels:
the CUTLASS #3672 reproduction (make_tiled_tma_atom + copy_tensormap) for
both; for nvtma also the pipelined copy and the GEMV of the benchmarks.
`--cute-python` is an interpreter with nvidia-cutlass-dsl installed (the
CuTe side is skipped without it). One JSON line per measurement.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

NVTMA_CHILD = r"""
import json, os, sys, time
T = time.perf_counter
t = T(); import nvtma; from nvtma import kernels; t_import = T() - t
specs = {
    "3672": kernels.dump_descriptor((256, 256), "f16", (64, 64)),
    "copy": kernels.pipelined_copy(16384, 16384, "f16", (64, 128), 4, "l2_256b"),
    "gemv": kernels.gemv(16384, 16384, "bf16", tile=(32, 256), stages=6),
}
spec = specs[sys.argv[1]]; reps = int(sys.argv[2])
t = T(); nvtma.compile(spec.ir, cache=False); first = T() - t
again = []
for _ in range(reps):
    t = T(); nvtma.compile(spec.ir, cache=False); again.append(T() - t)
nvtma.compile(spec.ir)  # fill the cache
t = T(); c = nvtma.compile(spec.ir); cached = T() - t
assert c.from_cache
print(json.dumps(dict(import_s=t_import, first_s=first, again_s=again, cached_s=cached)))
"""

CUTE_CHILD = r"""
import json, sys, time
T = time.perf_counter
t = T()
import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import cpasync
import cutlass.cute.runtime as rt
try:
    from cutlass.tensor_utils import TensorMapManager, TensorMapUpdateMode
except ImportError:
    from cutlass.utils import TensorMapManager, TensorMapUpdateMode
t_import = T() - t

@cute.kernel
def dump_desc(tma_atom: cute.CopyAtom, out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx == 0:
        ptr = TensorMapManager(TensorMapUpdateMode.GMEM, 128).get_tensormap_ptr(out.iterator)
        cpasync.copy_tensormap(tma_atom, ptr)

@cute.jit
def atom_desc(x: cute.Tensor, out: cute.Tensor):
    smem_layout = cute.make_layout((64, 64), stride=(64, 1))
    tma_atom, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), x, smem_layout, (64, 64))
    dump_desc(tma_atom, out).launch(grid=[1, 1, 1], block=[32, 1, 1])

x = rt.make_fake_compact_tensor(cutlass.Float16, (256, 256), stride_order=(1, 0), assumed_align=16)
out = rt.make_fake_compact_tensor(cutlass.Int64, (16,), assumed_align=128)
reps = int(sys.argv[2])
t = T(); cute.compile(atom_desc, x, out, options="--gpu-arch sm_90a"); first = T() - t
again = []
for _ in range(reps):
    t = T(); cute.compile(atom_desc, x, out, options="--gpu-arch sm_90a"); again.append(T() - t)
print(json.dumps(dict(import_s=t_import, first_s=first, again_s=again, version=cutlass.__version__
                      if hasattr(cutlass, "__version__") else "?")))
"""


def child(py, code, kernel, reps):
    """Runs `code` as a script (CuTe DSL needs its kernels' source file) in
    a fresh process with an empty nvtma cache."""
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "child.py")
        with open(script, "w") as f:
            f.write(code)
        e = dict(os.environ, NVTMA_CACHE_DIR=os.path.join(d, "cache"))
        p = subprocess.run([py, script, kernel, str(reps)], capture_output=True, text=True, env=e, timeout=600)
    if p.returncode:
        raise RuntimeError(p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def ms(s):
    return round(s * 1e3, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cute-python")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per measurement; the median is kept")
    a = ap.parse_args()
    machine = dict(cpu=platform.processor() or platform.machine(), cores=os.cpu_count(), python=platform.python_version())
    print(json.dumps(dict(bench="machine", **machine)), flush=True)

    def summary(runs):
        return dict(import_ms=ms(statistics.median(r["import_s"] for r in runs)),
                    process_to_first_cubin_ms=ms(statistics.median(r["import_s"] + r["first_s"] for r in runs)),
                    first_compile_ms=ms(statistics.median(r["first_s"] for r in runs)),
                    again_ms=ms(statistics.median(statistics.median(r["again_s"]) for r in runs)),
                    **({"cached_ms": round(statistics.median(r["cached_s"] for r in runs) * 1e3, 2)}
                       if "cached_s" in runs[0] else {}))

    # Interleaved (CuTe, then nvtma, per round) so machine noise hits both alike.
    runs = {"cute": [], "3672": [], "copy": [], "gemv": []}
    cute_error = None
    for _ in range(a.runs):
        if a.cute_python and cute_error is None:
            try:
                runs["cute"].append(child(a.cute_python, CUTE_CHILD, "3672", a.reps))
            except Exception as e:  # no CuTe DSL there
                cute_error = str(e)[-300:]
        for kernel in ("3672", "copy", "gemv"):
            runs[kernel].append(child(sys.executable, NVTMA_CHILD, kernel, a.reps))
    cute = summary(runs["cute"]) if runs["cute"] else None
    if cute:
        print(json.dumps(dict(bench="compile", impl="CuTe DSL cute.compile (4.8.1)", kernel="3672", **cute)),
              flush=True)
    elif cute_error:
        print(json.dumps(dict(bench="compile", impl="CuTe DSL", error=cute_error)), flush=True)
    for kernel in ("3672", "copy", "gemv"):
        ours = summary(runs[kernel])
        line = dict(bench="compile", impl="nvtma.compile (IR text -> PTX -> cubin)", kernel=kernel, **ours)
        if cute and kernel == "3672":
            line.update(vs="CuTe DSL, same kernel", vs_first_ms=cute["first_compile_ms"], vs_again_ms=cute["again_ms"],
                        vs_process_to_first_cubin_ms=cute["process_to_first_cubin_ms"],
                        first_ratio=round(ours["first_compile_ms"] / cute["first_compile_ms"], 2),
                        again_ratio=round(ours["again_ms"] / cute["again_ms"], 2),
                        process_to_first_cubin_ratio=round(ours["process_to_first_cubin_ms"]
                                                           / cute["process_to_first_cubin_ms"], 2))
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
