#!/usr/bin/env python3
"""All-gather and ring all-reduce of bf16 tensors over every GPU, as DSL
kernels calling NVSHMEM (nvtma.nvshmem), checked against torch.distributed
(NCCL), bandwidth side by side. One process per GPU:

    torchrun --nproc-per-node 8 examples/nvshmem_allgather.py           # or --nprocs 8 without torchrun
    python examples/nvshmem_allgather.py                                # one GPU: n_pes == 1
    python examples/nvshmem_allgather.py --aot out/  (no GPU needed)    # then --from out/ where there is one

all_gather: CTA b of PE p puts its slice of x into y[p] on every PE with
putmem_signal_nbi.block (the signal word [p, b] set to this launch's epoch),
then waits for the slices of every PE. all_reduce: a ring, reduce-scatter
then all-gather, n - 1 steps each; CTA b owns slice b of each chunk, so the
CTAs of a PE never wait for one another: at each step it waits for its
slice from the previous PE, adds (in f32, one bf16 rounding per step like
NCCL's ring), and puts the sum to the next PE. Epochs make the signals
reusable without a reset; a barrier between all-reduces keeps the next
launch's puts out of buffers a slower PE still reads.

Needs the nvidia-nvshmem-cu13 wheel (PyTorch's CUDA 13 wheels bring it):
its device bitcode where the kernels are compiled, its host library where
they run; the bitcode must be the host library's version
(NVTMA_NVSHMEM_BITCODE picks one).
"""

import argparse
import os
import sys
import time

from _example import gpu_ms
from nvtma import cpasync, dsl, nvshmem

BLOCK = 256      # threads per CTA
VEC = 8          # bf16 per 16-byte access


def _ptr(t, i):
    return cpasync.address_of(t, [i])


@dsl.kernel(block=(BLOCK,), name="all_gather")
def all_gather(x: dsl.Tensor("bf16", (None,)), y: dsl.Tensor("bf16", (None,)), sig: dsl.Tensor("u64", (None,)),
               epoch: dsl.Uint64):
    """y[p * count:(p + 1) * count] = x of PE p, for every PE p; sig holds
    n_pes * grid words (symmetric), x count = grid * per elements."""
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    b, nb = dsl.block_idx().to(dsl.Int32), dsl.grid_dim().to(dsl.Int32)
    count = x.shape[0].to(dsl.Int32)
    per = count // nb
    lo = b * per
    for step in dsl.range(n):
        p = (me + step) % n  # self first, then the others in a ring: no PE is everyone's first target
        nvshmem.putmem_signal_nbi.block(_ptr(y, me * count + lo), _ptr(x, lo), per.to(dsl.Int64) * 2,
                                        _ptr(sig, me * nb + b), epoch, "set", p)
    t = dsl.thread_idx().to(dsl.Int32)
    with dsl.if_(t < n):
        nvshmem.signal_wait_until(_ptr(sig, t * nb + b), "ge", epoch)


def _add_slice(dst, src, recv, base, rbase, per):
    """dst[base + i] = src[base + i] + recv[rbase + i], i < per, 8 bf16 at a time (f32 math)."""
    t = dsl.thread_idx().to(dsl.Int32)
    for i in dsl.range(t * VEC, per, BLOCK * VEC):
        s = src.load_vec(VEC, base + i).to(dsl.Float32) + recv.load_vec(VEC, rbase + i).to(dsl.Float32)
        dst.store_vec(s.to(dsl.BFloat16), base + i)


def _copy_slice(dst, src, base, per):
    t = dsl.thread_idx().to(dsl.Int32)
    for i in dsl.range(t * VEC, per, BLOCK * VEC):
        dst.store_vec(src.load_vec(VEC, base + i), base + i)


def _wait(sig, word, epoch):
    """One thread waits for the signal word, then the CTA reads what it guards."""
    with dsl.if_(dsl.thread_idx() == 0):
        nvshmem.signal_wait_until(_ptr(sig, word), "ge", epoch)
    dsl.barrier()


@dsl.kernel(block=(BLOCK,), name="all_reduce")
def all_reduce(x: dsl.Tensor("bf16", (None,)), y: dsl.Tensor("bf16", (None,)), acc: dsl.Tensor("bf16", (None,)),
               recv: dsl.Tensor("bf16", (None,)), sig: dsl.Tensor("u64", (None,)), epoch: dsl.Uint64):
    """y = the sum of every PE's x (count elements: n_pes * grid * per).
    y, recv ((n_pes - 1) * count / n_pes elements) and sig (2 * (n_pes - 1) *
    grid words) are symmetric; acc (count) is local scratch."""
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    b, nb = dsl.block_idx().to(dsl.Int32), dsl.grid_dim().to(dsl.Int32)
    count = x.shape[0].to(dsl.Int32)
    chunk = count // n
    per = chunk // nb
    o = b * per                      # this CTA's slice within each chunk
    nxt = (me + 1) % n
    nbytes = per.to(dsl.Int64) * 2
    steps = n - 1
    # reduce-scatter: step s sends the partial sum of chunk me - s, receives chunk me - s - 1
    with dsl.if_(n > 1):
        nvshmem.putmem_signal_nbi.block(_ptr(recv, o), _ptr(x, me * chunk + o), nbytes, _ptr(sig, b), epoch,
                                        "set", nxt)
    for s in dsl.range(steps):
        _wait(sig, s * nb + b, epoch)
        k = (me - s - 1 + n) % n
        last = s == steps - 1
        with dsl.if_(last):          # the fully reduced chunk (me + 1) goes straight to y
            _add_slice(y, x, recv, k * chunk + o, s * chunk + o, per)
        with dsl.else_():
            _add_slice(acc, x, recv, k * chunk + o, s * chunk + o, per)
        dsl.barrier()
        with dsl.if_(last):
            nvshmem.putmem_signal_nbi.block(_ptr(y, k * chunk + o), _ptr(y, k * chunk + o), nbytes,
                                            _ptr(sig, steps * nb + b), epoch, "set", nxt)
        with dsl.else_():
            nvshmem.putmem_signal_nbi.block(_ptr(recv, (s + 1) * chunk + o), _ptr(acc, k * chunk + o), nbytes,
                                            _ptr(sig, (s + 1) * nb + b), epoch, "set", nxt)
    with dsl.if_(n == 1):
        _copy_slice(y, x, o, per)
    # all-gather: step s receives the reduced chunk me - s into y and passes it on
    for s in dsl.range(steps):
        _wait(sig, (steps + s) * nb + b, epoch)
        k = (me - s + n) % n
        with dsl.if_(s + 1 < steps):
            nvshmem.putmem_signal_nbi.block(_ptr(y, k * chunk + o), _ptr(y, k * chunk + o), nbytes,
                                            _ptr(sig, (steps + s + 1) * nb + b), epoch, "set", nxt)
    nvshmem.quiet()


def specs():
    return {"all_gather": all_gather.specialize(), "all_reduce": all_reduce.specialize()}


# --------------------------------------------------------------------------- host

def _modules(a):
    from nvtma import runtime
    if a.load:
        return {name: runtime.load(os.path.join(a.load, name)) for name in specs()}
    return {name: spec.compile() for name, spec in specs().items()}


def worker(rank, world, a):
    import torch
    import torch.distributed as dist
    from nvtma.runtime import nvshmem as shm

    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")       # no NVLink multicast on shared machines
    os.environ.setdefault("NVSHMEM_REMOTE_TRANSPORT", "none")  # one node: NVLink / P2P only, no NIC probing
    if not dist.is_initialized():
        dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", local))
    me, n = shm.init()
    assert (me, n) == (dist.get_rank(), dist.get_world_size()), ((me, n), dist.get_rank())
    mods = _modules(a)
    grid = a.blocks
    count = a.count  # elements per PE for all-gather, total for all-reduce
    if count % (n * grid * VEC):
        raise SystemExit(f"--count {count} must be a multiple of n_pes * blocks * {VEC} = {n * grid * VEC}")
    torch.manual_seed(1234 + me)
    x = shm.tensor((count,), torch.bfloat16)
    x.copy_(torch.randn(count, device="cuda").to(torch.bfloat16))
    y = shm.tensor((n * count,), torch.bfloat16)
    sig = shm.tensor((max(n * grid, 2 * (n - 1) * grid, 1),), torch.uint64)
    epoch = [0]

    def nv_gather():
        epoch[0] += 1
        shm.launch(mods["all_gather"].all_gather, x, y, sig, epoch[0], grid=(grid,))

    want = torch.empty(n * count, device="cuda", dtype=torch.bfloat16)
    nv_gather()
    dist.all_gather_into_tensor(want, x)
    torch.cuda.synchronize()
    ok_g = torch.equal(y, want)

    # all-reduce: y2 = sum over PEs of x
    y2 = shm.tensor((count,), torch.bfloat16)
    recv = shm.tensor((max((n - 1) * (count // n), 1),), torch.bfloat16)
    sig2 = shm.tensor((max(2 * (n - 1) * grid, 1),), torch.uint64)
    acc = torch.empty(count, device="cuda", dtype=torch.bfloat16)

    def nv_reduce():
        epoch[0] += 1
        shm.launch(mods["all_reduce"].all_reduce, x, y2, acc, recv, sig2, epoch[0], grid=(grid,))
        shm.barrier_all()  # the next launch's puts wait for every PE to be done with this one

    nv_reduce()
    ref = x.clone()
    dist.all_reduce(ref)
    torch.cuda.synchronize()
    # the same sum in another order: a bf16 rounding per ring step
    err = (y2.float() - ref.float()).abs().max().item()
    scale = ref.float().abs().max().item()
    ok_r = err <= 2 ** -6 * max(scale, 1.0) * max(n - 1, 1)

    gbytes = count * 2 / 1e9
    t_ng = gpu_ms(torch, nv_gather, a.iters, 1) / 1e3
    t_cg = gpu_ms(torch, lambda: dist.all_gather_into_tensor(want, x), a.iters, 1) / 1e3
    t_nr = gpu_ms(torch, nv_reduce, a.iters, 1) / 1e3
    t_cr = gpu_ms(torch, lambda: dist.all_reduce(ref), a.iters, 1) / 1e3
    if me == 0:
        bus_g, bus_r = (n - 1) / n if n > 1 else 1.0, 2 * (n - 1) / n if n > 1 else 1.0
        print(f"{n} PE(s) on {torch.cuda.get_device_name()}, {count} bf16 per PE, grid {grid}x{BLOCK}")
        print(f"  all_gather  nvtma+NVSHMEM {t_ng * 1e6:9.1f} us {gbytes * n * bus_g / t_ng:7.1f} GB/s bus"
              f" | NCCL {t_cg * 1e6:9.1f} us {gbytes * n * bus_g / t_cg:7.1f} GB/s  {'correct' if ok_g else 'WRONG'}")
        print(f"  all_reduce  nvtma+NVSHMEM {t_nr * 1e6:9.1f} us {gbytes * bus_r / t_nr:7.1f} GB/s bus"
              f" | NCCL {t_cr * 1e6:9.1f} us {gbytes * bus_r / t_cr:7.1f} GB/s  {'correct' if ok_r else 'WRONG'}"
              f" (max error {err:.3g})")
    torch.cuda.synchronize()
    dist.barrier()
    shm.finalize()
    dist.destroy_process_group()
    if not (ok_g and ok_r):
        raise SystemExit(1)


def _spawned(rank, world, a, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank))
    worker(rank, world, a)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aot", metavar="DIR", help="compile both kernels into DIR/all_gather, DIR/all_reduce and stop")
    ap.add_argument("--from", dest="load", metavar="DIR", help="run the kernels --aot wrote (no MLIR needed)")
    ap.add_argument("--nprocs", type=int, default=None, help="processes (GPUs) when not under torchrun "
                    "(default: every GPU)")
    ap.add_argument("--count", type=int, default=1 << 24, help="bf16 elements per PE (default 16 Mi: 32 MiB)")
    ap.add_argument("--blocks", type=int, default=32, help="CTAs per kernel")
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args(argv)
    if a.aot:
        for name, spec in specs().items():
            t0 = time.perf_counter()
            c = spec.compile()
            c.save(os.path.join(a.aot, name))
            print(f"{name}: {len(c.ptx.splitlines())} PTX lines, cubin {len(c.cubin)} bytes, "
                  f"{time.perf_counter() - t0:.1f} s -> {os.path.join(a.aot, name)}")
        return 0
    try:
        import torch
        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if not gpu:
        for name, spec in specs().items():
            c = spec.compile()
            print(f"{name}: compiled ({len(c.cubin)}-byte cubin); no GPU: not run")
        return 0
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:   # torchrun
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), a)
        return 0
    world = a.nprocs or torch.cuda.device_count()
    if world == 1:
        _spawned(0, 1, a, _free_port())
        return 0
    import torch.multiprocessing as mp
    mp.spawn(_spawned, args=(world, a, _free_port()), nprocs=world, join=True)
    return 0


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    sys.exit(main())
