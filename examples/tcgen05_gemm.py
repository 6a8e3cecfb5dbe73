#!/usr/bin/env python3
"""A one-tile Blackwell GEMM: D = A·Bᵀ with tcgen05.mma, fed by TMA, the
accumulator in Tensor Memory. Compiled, not run (no sm_100 GPU here).

--cta-group 1: one CTA, M = 128 rows of A, N columns (B is N x K), f32 D.
--cta-group 2: a 2-CTA cluster, M = 256: each CTA loads 128 rows of A and
N/2 rows of B (cta_group::2 TMA atoms), the pair's leader issues
tcgen05.mma.cta_group::2 over both CTAs' shared memory, its commit
signals both CTAs, each reads its 128 rows of D from its own TMEM.

Compiles for sm_100a to a cubin (nvJitLink), prints the tcgen05 PTX
instructions and the SASS UTC* / LDTM instructions it became; ``--aot DIR``
writes module.ptx, module.cubin and kernels.json. It never launches: there
is no sm_100 GPU here.

    python examples/tcgen05_gemm.py --cta-group 2 --n 256 --k 128
"""

import argparse
import re
import sys

import nvtma
from nvtma import cpasync, dsl, lang, tcgen05

ARCH = "sm_100a"


def make_kernel(cta_group):
    """The @dsl.kernel for a cta_group (1 or 2): constants N, K, dtype."""
    cluster = (2, 1, 1) if cta_group == 2 else None

    @dsl.kernel(block=(128,), cluster=cluster, arch=ARCH, name=f"tcgen05_gemm_{cta_group}cta")
    def gemm(A: dsl.Tensor, B: dsl.Tensor, D: dsl.Tensor, *, N=128, K=64, dtype="bf16"):
        M = 128 * cta_group                    # the instruction's M
        rows_a, rows_b = M // cta_group, N // cta_group
        rank = dsl.cluster_ctarank() if cta_group == 2 else 0
        smem = lang.SMEMPool()
        sA = smem.alloc_tcgen05_mma_AB((rows_a, K), dtype)     # the swizzle inferred from the row (128B for K=64)
        sB = smem.alloc_tcgen05_mma_AB((rows_b, K), dtype)
        load = cpasync.CopyBulkTensorTileG2SOp(cta_group=cta_group)
        ta = cpasync.make_tiled_tma_atom(load, A, (rows_a, K), swizzle=sA.swizzle)
        tb = cpasync.make_tiled_tma_atom(load, B, (rows_b, K), swizzle=sB.swizzle)
        loaded = lang.TMABar(1, 1)
        done = lang.TCGen05Bar(1, 1, cta_group=cta_group, multicast_mask=0b11 if cta_group == 2 else None)
        tmem = lang.TMEMPool(cta_group=cta_group)
        acc = tmem.alloc_tcgen05_mma_D((rows_a, N), "float32", M=M, cta_group=cta_group)
        tmem.commit()                          # tcgen05.alloc by warp 0, the address published (a CTA barrier)
        if cta_group == 2:
            dsl.cluster_sync()                 # the peer's barriers are initialized before the leader commits

        with lang.WarpRole(0):
            loaded.arrive_expect_tx(0, ta.tile_bytes + tb.tile_bytes)
            cpasync.copy(ta, [rank * rows_a, 0], sA, tma_bar_ptr=loaded.at(0))
            cpasync.copy(tb, [rank * rows_b, 0], sB, tma_bar_ptr=loaded.at(0))
            loaded.wait(0, 0)
        if cta_group == 2:
            # both halves of A and B landed before the leader's MMA reads them
            tcgen05.fence_before_thread_sync()
            dsl.cluster_sync()
        tcgen05.fence_after_thread_sync()

        idesc = tcgen05.encode_instr_descriptor(d_dtype="f32", a_dtype=dtype, b_dtype=dtype, M=M, N=N,
                                                n_cta_groups=cta_group)
        a, b = tcgen05.SmemDescriptor(sA), tcgen05.SmemDescriptor(sB)
        leader = (dsl.cluster_ctarank() % 2 == 0) if cta_group == 2 else None
        with lang.WarpRole(0):
            def issue():
                with dsl.if_(dsl.elect_sync()):
                    for kb in range(K // idesc.K):
                        tcgen05.mma(acc, a.k_block(kb), b.k_block(kb), idesc, accumulate=kb > 0)
                    done.arrive(0)             # tcgen05.commit (multicast to the pair with cta_group 2)
            if leader is None:
                issue()
            else:
                with dsl.if_(leader):
                    issue()
        done.wait(0, 0)
        tcgen05.fence_after_thread_sync()

        # epilogue: warp w holds rows 32w..32w+31 of this CTA's 128 (one row a thread)
        row = rank * rows_a + dsl.warp_idx() * 32 + dsl.lane_idx()
        for c in range(0, N, 16):
            D.store_vec(acc.load(c, 16), row, c)
        tmem.dealloc()

    return gemm


def build(cta_group, n, k, dtype):
    kern = make_kernel(cta_group)
    m = 128 * cta_group
    types = [dsl.Tensor(dtype, (m, k)), dsl.Tensor(dtype, (n, k)), dsl.Tensor("f32", (m, n))]
    return kern, kern.specialize(types, N=n, K=k, dtype=dtype)


def report(compiled):
    ptx = compiled.ptx
    ins = sorted(set(re.findall(r"\b(tcgen05\.[\w:.]+|cp\.async\.bulk\.tensor\.[\w:.]+)", ptx)))
    target = re.search(r"\.target\s+(\S+)", ptx).group(1)
    print(f"  PTX ({len(ptx.splitlines())} lines, .target {target}):")
    for i in ins:
        print(f"    {i}")
    print(f"  cubin: {len(compiled.cubin)} bytes (sm_100a)")
    try:
        sass = compiled.sass()
        ops = sorted(set(re.findall(r"\b(UTC[A-Z]+(?:\.[A-Z0-9_]+)*|LDTM(?:\.[A-Z0-9_]+)*)\b", sass)))
        print(f"  SASS: {', '.join(ops)}")
    except (FileNotFoundError, nvtma.CompileError) as e:
        print(f"  SASS: skipped ({e})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cta-group", type=int, choices=(1, 2), default=1)
    ap.add_argument("--n", type=int, default=128, help="N (columns of D)")
    ap.add_argument("--k", type=int, default=64, help="K (a multiple of 16; the swizzle follows the row bytes)")
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "f16"))
    ap.add_argument("--aot", metavar="DIR", help="write module.ptx, module.cubin and kernels.json here")
    a = ap.parse_args(argv)
    step = 16 * a.cta_group
    if a.n % step or not step <= a.n <= 256 or a.k % 16 or a.k < 16:
        ap.error(f"--n: a multiple of {step} in [{step}, 256] (16 columns per TMEM load, N/2 rows of B a CTA with "
                 "cta_group 2); --k: a multiple of 16")
    kern, spec = build(a.cta_group, a.n, a.k, a.dtype)
    try:
        compiled = nvtma.compile(spec, arch=ARCH)
    except (nvtma.CompileError, dsl.KernelBuildError) as e:
        print(f"error: {e}")
        return 2
    m = 128 * a.cta_group
    print(f"compiled {spec.name}: D[{m}, {a.n}] = A[{m}, {a.k}] · B[{a.n}, {a.k}]ᵀ ({a.dtype}, f32 accumulator in "
          f"TMEM), cta_group {a.cta_group}, block {spec.block}, cluster {spec.cluster}")
    report(compiled)
    if a.aot:
        print(f"  wrote {compiled.save(a.aot)}/module.ptx, module.cubin, kernels.json")
    print("compiled, not run (no sm_100 GPU here)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
