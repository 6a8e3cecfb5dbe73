#!/usr/bin/env python3
"""The kernels the profiling GPU tests run (test_gpu_profile.py): the
warp-specialized pipeline plain, traced per phase and traced one slice per
tile, and the weight-streaming GEMM plain and traced. Ahead of time, for a
machine without the MLIR extension:

    python test/python/profile_cases.py DIR      # DIR/<spec.key>/ each, next to build_gpu_artifacts.py's
"""

import sys
from pathlib import Path

from helpers import load_file

REPO = Path(__file__).resolve().parents[2]

# the GEMM case: M, N, K, fp8 W with a per-tensor scale; 2 K splits, 2 consumer warpgroups
GEMM = dict(M=16, N=4096, K=8192, BM=16, BN=128, wgs=2, splits=2, events=256)


def ws_pipeline():
    """examples/ws_pipeline.py as a module (its kernel and parameter types)."""
    return load_file("nvtma_example_ws_pipeline", REPO / "examples" / "ws_pipeline.py")


def ws_specs():
    ws = ws_pipeline()
    k = ws.ws_copy
    return {"plain": k.specialize(None, promo="l2_256b"),
            "phases": k.specialize(ws.PROFILED, promo="l2_256b", phases=True),
            "tile": k.specialize(ws.PROFILED, promo="l2_256b", phases=False)}


def gemm_specs():
    from nvtma.kernels import gemm
    g = GEMM
    # not built for PDL: its W stages loaded before the wait are not traced as acquire/load
    return {"plain": gemm.gemm_spec(g["BM"], g["BN"], g["wgs"], pdl=False),
            "traced": gemm.gemm_spec(g["BM"], g["BN"], g["wgs"], profile=g["events"], pdl=False),
            "clocks": gemm.gemm_spec(g["BM"], g["BN"], g["wgs"], profile="clocks", pdl=False)}


_SPLIT = {}


def split_spec():
    """Events in both branches of a condition that splits every warp (lanes 0-15 / 16-31), in a loop: each
    part elects its own leader (elect.sync over all 32 lanes would wait forever)."""
    if "k" not in _SPLIT:
        from nvtma import dsl, profile

        @dsl.kernel(block=(128,), name="split_warps")
        def split_warps(x: dsl.Tensor("f32", (None,)), b: dsl.Tensor("i64", (None,))):
            p = profile.Profiler(b, events_per_warp=16)
            t = dsl.thread_idx()
            for _ in dsl.range(3):
                with dsl.if_(dsl.lane_idx() < 16):
                    with p.range("low"):
                        x[t] = x[t] + 1.0
                with dsl.else_():
                    p.mark("high")
                    x[t] = x[t] + 2.0
        _SPLIT["k"] = split_warps.specialize()
    return _SPLIT["k"]


def split_tails_spec():
    """Events ending both arms of a condition that splits every warp, alike but for their names ("b" after "a"
    in lanes 0-15, "c" in 16-31): each arm's election its own (merged, one of "b" and "c" was lost)."""
    if "tails" not in _SPLIT:
        from nvtma import dsl, profile

        @dsl.kernel(block=(128,), name="split_tails")
        def split_tails(x: dsl.Tensor("f32", (None,)), b: dsl.Tensor("i64", (None,))):
            p = profile.Profiler(b, events_per_warp=8)
            with dsl.if_(dsl.lane_idx() < 16):
                p.mark("a")
                p.mark("b")
            with dsl.else_():
                p.mark("c")
        _SPLIT["tails"] = split_tails.specialize()
    return _SPLIT["tails"]


def all_specs():
    return list(ws_specs().values()) + list(gemm_specs().values()) + [split_spec(), split_tails_spec()]


def main():
    out = Path(sys.argv[1])
    specs = all_specs()
    for spec in specs:
        spec.compile().save(out / spec.key)
    print(f"{len(specs)} profiling kernels -> {out}")


if __name__ == "__main__":
    main()
