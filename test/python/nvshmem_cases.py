#!/usr/bin/env python3
"""The kernels the NVSHMEM GPU tests run (test_nvshmem.py): a probe of
every helper on one PE, and examples/nvshmem_allgather.py's all-gather and
all-reduce. Ahead of time, for a machine without the MLIR extension (with
the bitcode of the NVSHMEM version installed there: NVTMA_NVSHMEM_BITCODE):

    python test/python/nvshmem_cases.py DIR     # DIR/nvshmem/<name>/, next to build_gpu_artifacts.py's
"""

import sys
from pathlib import Path

from helpers import load_file

REPO = Path(__file__).resolve().parents[2]


def example():
    """examples/nvshmem_allgather.py as a module."""
    if str(REPO / "examples") not in sys.path:  # its `from _example import ...`
        sys.path.insert(0, str(REPO / "examples"))
    return load_file("nvtma_example_nvshmem_allgather", REPO / "examples" / "nvshmem_allgather.py")


def probe_kernel():
    from nvtma import cpasync, dsl, nvshmem

    @dsl.kernel(block=(128,), name="probe")
    def probe(x: dsl.Tensor("i32", (1024,)), y: dsl.Tensor("i32", (1024,)), sig: dsl.Tensor("u64", (2,)),
              out: dsl.Tensor("i32", (8,)), v: dsl.Uint64):
        """out = [my_pe, n_pes, the awaited signal, x[1023] fetched with a get];
        y = x put to itself with signal word 0 = v; word 1 = v, then + 1."""
        me, n = nvshmem.my_pe(), nvshmem.n_pes()
        t = dsl.thread_idx()
        nvshmem.putmem_signal_nbi.block(y, x, 4096, sig, v, "set", me)
        with dsl.if_(t == 0):
            out[0] = me
            out[1] = n
            out[2] = nvshmem.signal_wait_until(sig, "eq", v).to(dsl.Int32)
            nvshmem.getmem_nbi(cpasync.address_of(out, [3]), cpasync.address_of(x, [1023]), 4, me)
            nvshmem.quiet()
            nvshmem.signal_op(cpasync.address_of(sig, [1]), v, "set", me)
            nvshmem.fence()
            nvshmem.signal_op(cpasync.address_of(sig, [1]), 1, "add", me)
            nvshmem.quiet()
            nvshmem.barrier_all()

    return probe


def specs():
    ex = example()
    return {"all_gather": ex.all_gather.specialize(), "all_reduce": ex.all_reduce.specialize(),
            "probe": probe_kernel().specialize()}


def main():
    out = Path(sys.argv[1]) / "nvshmem"
    for name, spec in specs().items():
        spec.compile().save(out / name)
    print(f"3 NVSHMEM kernels -> {out}")


if __name__ == "__main__":
    main()
