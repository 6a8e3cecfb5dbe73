#!/usr/bin/env python3
"""Launch cost, side by side, as one JSON line (microseconds per launch).

    python3 benchmarks/launch_bench.py --artifacts DIR     # on the GPU (bench_art of .ci/stage-gpu)
    python3 benchmarks/launch_bench.py --stub              # here: a stand-in libcuda, host cost only

The kernel is the benchmarks' launch kernel (a 64x64 f16 tile copy: two
tensors, two TMA descriptors). Columns:

* ``same``: nvtma, the same arguments every launch;
* ``changing``: nvtma, the output alternating between two tensors (the usual
  case: descriptors get a new address);
* ``bare_bindings``: cuda.bindings' cuLaunchKernel of the same function with
  the parameters packed once (CUfunction/CUstream objects made once);
* ``bare_c``: the abi3 launcher's call with the same packed parameters (the
  floor of nvtma's mechanism);
* ``torch_add``: torch.add(a, b, out=c) on tiny tensors (GPU mode only);
* ``full_path_changing``: the full, checked intake and packing alone (no launch),
  what a launch costs when the metadata changes.

Each is the best of --rounds rounds of --n launches, host wall time per
launch, timed in batches of 200 with the GPU queue drained (untimed) in
between, so a kernel slower than its launch cannot turn the figure into GPU
time. In --stub mode the driver
returns at once, so the figures are the host-side work only; tensors are
torch tensors when torch is importable (made to look like device tensors),
else __cuda_array_interface__ objects. Target: changing <= bare_bindings + 1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


BATCH = 200  # launches between drains: far below the driver's queue depth, so host time is measured, not GPU time


def best_of(fn, n, rounds, sync=None):
    """Host microseconds per launch: the best round of `n` launches, timed in
    batches with the GPU queue drained (untimed) between batches."""
    best = float("inf")
    for _ in range(rounds):
        total = 0.0
        done = 0
        while done < n:
            if sync:
                sync()
            t = time.perf_counter()
            fn(BATCH)
            total += time.perf_counter() - t
            done += BATCH
        if sync:
            sync()
        best = min(best, total / done * 1e6)
    return round(best, 3)


def launch_kernel(artifacts: str | None):
    sys.path.insert(0, str(HERE))
    import common
    spec = common.launch_spec()
    if artifacts:
        import nvtma.runtime
        mod = nvtma.runtime.load(Path(artifacts) / common.key(spec))
    else:
        import nvtma
        mod = nvtma.compile(spec.ir)
    return mod.kernel(spec.name), spec


def stub_kernel():
    """The launch kernel's records and a parameter-table cubin, without a compiler."""
    sys.path.insert(0, str(REPO / "test" / "python"))
    import runtime_fixtures as F
    m = dict(F.MEMREF, shape=[64, 64], strides=[64, 1], type="memref<64x64xf16>")
    d = dict(F.DESC, box_dim=[64, 64], swizzle=0, l2_promotion=2)
    recs = F.records([m, dict(m), d, dict(d, binds=1)], launch={"block": [128, 1, 1], "cluster": None, "smem": 0},
                     name="tile_copy")
    for p in recs["kernels"]["tile_copy"]["params"]:
        if p["kind"] == "descriptor":
            p["template"] = F.template_for(p, (64, 64))
    return F.artifacts(recs).kernel("tile_copy")


def run(a) -> dict:
    from nvtma.runtime import driver
    torch = None
    try:
        import torch
    except ImportError:
        pass
    if a.stub:
        k = stub_kernel()
        grid, block = (1, 1, 1), (128, 1, 1)
        if torch is not None:
            # no CUDA runtime under the stand-in driver: torch's stream getter answers the default stream
            torch._C._cuda_getCurrentRawStream = lambda device: 0

            class DeviceLike(torch.Tensor):  # a CPU tensor that reports a device address
                __torch_function__ = torch._C._disabled_torch_function_impl

                def get_device(self):
                    return 0

                def data_ptr(self):
                    return self._fake_ptr
            from nvtma.runtime import args as _a
            _a._torch_tensor = DeviceLike  # the runtime's exact-class fast paths take it as torch.Tensor
            _a._torch_exact = (DeviceLike,)
            bufs = []
            for i in range(3):
                t = torch.empty(64, 64, dtype=torch.float16).as_subclass(DeviceLike)
                t._fake_ptr = 0x7F0000000000 + i * 0x100000
                bufs.append(t)
            kind = "torch tensors (a subclass reporting device 0)"
        else:
            sys.path.insert(0, str(REPO / "test" / "python"))
            from helpers import FakeCudaArray
            bufs = [FakeCudaArray(0x7F0000000000 + i * 0x100000, (64, 64)) for i in range(3)]
            kind = "__cuda_array_interface__ objects"
        sync = None
    else:
        k, spec = launch_kernel(a.artifacts)
        grid, block = spec.grid, spec.block
        bufs = [torch.randn(64, 64, device="cuda", dtype=torch.float16) for _ in range(3)]
        kind = "torch CUDA tensors"
        sync = torch.cuda.synchronize
    x, y1, y2 = bufs
    kw = dict(grid=grid, block=block) if k.rec_block is None else dict(grid=grid)
    for _ in range(100):
        k(x, y1, **kw)
        k(x, y2, **kw)
    out = {"bench": "launch", "mode": "stub" if a.stub else "gpu", "tensors": kind, "n": a.n, "rounds": a.rounds,
           "launcher": driver.launcher_name(), "us": {}}
    us = out["us"]

    def same(n):
        for _ in range(n):
            k(x, y1, **kw)

    def changing(n):
        for i in range(n // 2):
            k(x, y1, **kw)
            k(x, y2, **kw)

    def pack_changing(n):
        p = k.pack
        for i in range(n // 2):
            p(x, y1)
            p(x, y2)
    us["same"] = best_of(same, a.n, a.rounds, sync)
    us["changing"] = best_of(changing, a.n, a.rounds, sync)
    us["full_path_changing"] = best_of(pack_changing, a.n, a.rounds, sync)
    # the bare calls: the same function, parameters packed once
    k(x, y1, **kw)
    func = k._func
    device, stream = 0, 0
    if torch is not None and not a.stub:
        stream = torch.cuda.current_stream().cuda_stream
    ctx = driver.primary_context(device)
    cfg = k._config(grid, kw.get("block"), None, None)
    from cuda.bindings import driver as d
    f, s, params = d.CUfunction(func), d.CUstream(stream), k._buffer.address
    g3, b3, smem = cfg[0:3], cfg[3:6], cfg[6]

    def bare_bindings(n):
        launch = d.cuLaunchKernel
        for _ in range(n):
            launch(f, g3[0], g3[1], g3[2], b3[0], b3[1], b3[2], smem, s, params, 0)
    us["bare_bindings"] = best_of(bare_bindings, a.n, a.rounds, sync)
    launch_c = driver.launcher()

    def bare_c(n):
        for _ in range(n):
            launch_c(func, g3[0], g3[1], g3[2], b3[0], b3[1], b3[2], smem, stream, params, ctx, 0, 0, 0)
    us["bare_c"] = best_of(bare_c, a.n, a.rounds, sync)
    if torch is not None and not a.stub:
        ta, tb, tc = (torch.randn(16, device="cuda") for _ in range(3))

        def torch_add(n):
            for _ in range(n):
                torch.add(ta, tb, out=tc)
        us["torch_add"] = best_of(torch_add, a.n, a.rounds, sync)
    out["changing_minus_bare_bindings_us"] = round(us["changing"] - us["bare_bindings"], 3)
    out["target_met"] = us["changing"] <= us["bare_bindings"] + 1.0
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--artifacts", help="a directory of AOT benchmark kernels (benchmarks/build_artifacts.py)")
    ap.add_argument("--stub", action="store_true", help="time the host side against a stand-in libcuda")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    if a.stub and os.environ.get("NVTMA_BENCH_STUB") is None:
        # the stand-in libcuda must be found by the dynamic loader: re-run with it on LD_LIBRARY_PATH
        sys.path.insert(0, str(REPO / "test" / "python"))
        import tempfile
        import cuda_stub
        d = cuda_stub.build(tempfile.mkdtemp(prefix="nvtma-stub-"))
        env = cuda_stub.env_with_stub(d)
        env["NVTMA_BENCH_STUB"] = str(d)
        return subprocess.call([sys.executable, __file__, *sys.argv[1:]] if argv is None else
                               [sys.executable, __file__, *argv], env=env)
    print(json.dumps(run(a)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
