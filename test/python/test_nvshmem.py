"""nvtma.nvshmem (TIRx's Tx.nvshmem) and the host side (nvtma.runtime.nvshmem).

CPU: the llvm.calls and declarations each helper builds, the nvtma.link
mark, kernels without NVSHMEM left alone, linking NVSHMEM's device bitcode
into the cubin (when the nvidia-nvshmem wheel or NVTMA_NVSHMEM_BITCODE is
there), the typed errors. GPU (marker gpu): the n_pes == 1 run of the
helpers and of examples/nvshmem_allgather.py; several GPUs: the example
under torchrun, skipped with fewer than 2.
"""

import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from nvtma.runtime import nvshmem as host

REPO = Path(__file__).resolve().parents[2]
HAVE_MLIR = True
try:
    import nvtma._mlir_libs._nvtmaDialects  # noqa: F401
except Exception:
    HAVE_MLIR = False
needs_mlir = pytest.mark.skipif(not HAVE_MLIR, reason="needs the MLIR extension")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(tmp_path / "cache"))


def _bitcode_or_skip():
    from nvtma import nvshmem
    try:
        return nvshmem.bitcode_library("sm_90a")
    except FileNotFoundError as e:
        pytest.skip(f"no NVSHMEM device bitcode: {e}")


def _kernels():
    from nvtma import cpasync, dsl, nvshmem

    @dsl.kernel(block=(128,), name="every_helper")
    def every_helper(x: dsl.Tensor("bf16", (1024,)), y: dsl.Tensor("bf16", (4, 1024)),
                     sig: dsl.Tensor("u64", (8,)), flag: dsl.Tensor("i32", (1,)), out: dsl.Tensor("i32", (2,))):
        me, n = nvshmem.my_pe(), nvshmem.n_pes()
        out[0] = me
        out[1] = nvshmem.n_pes()   # a second call: still one declaration
        peer = (me + 1) % n
        nvshmem.putmem_nbi(cpasync.address_of(y, [me, 0]), x, 2048, peer)
        nvshmem.putmem_nbi.warp(y, x, 2048, peer)
        nvshmem.putmem_nbi.block(y, x, 2048, peer)
        nvshmem.getmem_nbi(x, y, 64, peer)
        nvshmem.getmem_nbi.warp(x, y, 64, peer)
        nvshmem.getmem_nbi.block(x, y, 64, peer)
        nvshmem.putmem_signal_nbi(y, x, 2048, sig, 1, "set", peer)
        nvshmem.putmem_signal_nbi.warp(y, x, 2048, sig, 1, "add", peer)
        nvshmem.putmem_signal_nbi.block(y, x, 2048, cpasync.address_of(sig, [me]), 2 ** 63, nvshmem.SIGNAL_ADD,
                                        peer)
        nvshmem.signal_op(sig, 7, "set", peer)
        with dsl.if_(dsl.thread_idx() == 0):
            nvshmem.signal_wait_until(sig, "ge", 1)
            nvshmem.wait_until(flag, "==", 3)
            nvshmem.quiet()
            nvshmem.fence()
            nvshmem.barrier_all()
        with dsl.if_(dsl.warp_idx() == 0):
            nvshmem.barrier_all.warp()
        nvshmem.barrier_all.block()

    @dsl.kernel(block=(128,), name="plain")
    def plain(x: dsl.Tensor("f32", (1024,)), y: dsl.Tensor("f32", (1024,))):
        i = dsl.block_idx() * 128 + dsl.thread_idx()
        y[i] = x[i] * 2.0

    return every_helper, plain


# --------------------------------------------------------------------------- lowering

DECLS = {
    "nvshmem_my_pe": "() -> i32",
    "nvshmem_n_pes": "() -> i32",
    "nvshmem_putmem_nbi": "(!llvm.ptr, !llvm.ptr, i64, i32)",
    "nvshmemx_putmem_nbi_warp": "(!llvm.ptr, !llvm.ptr, i64, i32)",
    "nvshmemx_putmem_nbi_block": "(!llvm.ptr, !llvm.ptr, i64, i32)",
    "nvshmem_getmem_nbi": "(!llvm.ptr, !llvm.ptr, i64, i32)",
    "nvshmemx_getmem_nbi_warp": "(!llvm.ptr, !llvm.ptr, i64, i32)",
    "nvshmemx_getmem_nbi_block": "(!llvm.ptr, !llvm.ptr, i64, i32)",
    "nvshmem_putmem_signal_nbi": "(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32)",
    "nvshmemx_putmem_signal_nbi_warp": "(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32)",
    "nvshmemx_putmem_signal_nbi_block": "(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64, i32, i32)",
    "nvshmemx_signal_op": "(!llvm.ptr, i64, i32, i32)",
    "nvshmem_signal_wait_until": "(!llvm.ptr, i32, i64) -> i64",
    "nvshmem_int32_wait_until": "(!llvm.ptr, i32, i32)",
    "nvshmem_quiet": "()",
    "nvshmem_fence": "()",
    "nvshmem_barrier_all": "()",
    "nvshmemx_barrier_all_warp": "()",
    "nvshmemx_barrier_all_block": "()",
}


@needs_mlir
def test_each_helper_is_one_declared_llvm_call_and_the_module_asks_for_nvshmem():
    every_helper, _ = _kernels()
    text = every_helper.build().ir
    assert re.search(r'gpu\.module @kernels attributes \{nvtma\.link = \["nvshmem"\]\}', text)
    decls = dict(re.findall(r"llvm\.func @(\w+)(\([^)]*\)(?: -> \w+)?)", text))
    assert decls == DECLS
    for name in DECLS:
        assert len(re.findall(rf"llvm\.func @{name}\(", text)) == 1, name
    calls = re.findall(r"llvm\.call @(\w+)\(", text)
    assert set(calls) == set(DECLS)
    assert calls.count("nvshmem_n_pes") == 2
    # signal ops and comparisons: NVSHMEM's enum values
    sig = re.search(r"llvm\.call @nvshmemx_signal_op\((%\w+), (%\w+), (%\w+), (%\w+)\)", text)
    assert re.search(rf"{re.escape(sig.group(3))} = arith\.constant 9 : i32", text)
    wait = re.search(r"llvm\.call @nvshmem_int32_wait_until\((%\w+), (%\w+), (%\w+)\)", text)
    assert re.search(rf"{re.escape(wait.group(2))} = arith\.constant 0 : i32", text)  # "==" is NVSHMEM_CMP_EQ
    # 2**63 as a signal: the same 64 bits
    assert "arith.constant -9223372036854775808 : i64" in text


@needs_mlir
def test_a_kernel_without_nvshmem_is_built_and_compiled_as_before(monkeypatch):
    """No mark, no declarations, no device libraries to link, and
    nvtma.compile gives the same PTX whatever NVSHMEM's state."""
    import nvtma
    _, plain = _kernels()
    text = plain.build().ir
    assert "nvtma.link" not in text and "llvm.func" not in text
    out = nvtma.compile(text, cache=False)
    assert out.libraries == ""
    before = out.ptx
    monkeypatch.setenv("NVTMA_NVSHMEM_BITCODE", "/nonexistent/libnvshmem_device.bc")
    after = nvtma.compile(text, cache=False).ptx
    assert before == after
    assert "nvshmem" not in after


@needs_mlir
def test_the_helpers_need_a_kernel_and_good_operands():
    from nvtma import dsl, nvshmem
    with pytest.raises(dsl.KernelBuildError) as e:
        nvshmem.my_pe()
    assert e.value.rule == "outside-kernel"

    def bad(body):
        @dsl.kernel(block=(32,), name="bad")
        def k(x: dsl.Tensor("f32", (64,)), sig: dsl.Tensor("u64", (4,))):
            body(x, sig)
        with pytest.raises(dsl.KernelBuildError) as e:
            k.build()
        assert e.value.rule == "nvshmem", str(e.value)
        return str(e.value)

    assert "'set' or 'add'" in bad(lambda x, sig: nvshmem.signal_op(sig, 1, "xor", 0))
    assert "'set' (9) or 'add' (10)" in bad(lambda x, sig: nvshmem.signal_op(sig, 1, 3, 0))
    assert "comparison 'approx'" in bad(lambda x, sig: nvshmem.signal_wait_until(sig, "approx", 1))
    assert "comparison 6" in bad(lambda x, sig: nvshmem.signal_wait_until(sig, 6, 1))
    assert "pe must be an integer" in bad(lambda x, sig: nvshmem.putmem_nbi(x, x, 16, 0.5))
    assert "pe must be an integer" in bad(lambda x, sig: nvshmem.putmem_nbi(x, x, 16, x[0]))
    assert "nbytes 18446744073709551616 does not fit in 64 bits" in bad(
        lambda x, sig: nvshmem.putmem_nbi(x, x, 1 << 64, 0))
    assert "must be a tensor or a pointer" in bad(lambda x, sig: nvshmem.putmem_nbi(3, x, 16, 0))
    assert "32- or 64-bit integer tensor" in bad(lambda x, sig: nvshmem.wait_until(x, "eq", 1))


# --------------------------------------------------------------------------- linking

def _elf_symbols(blob: bytes) -> set:
    """The names in a cubin's .symtab."""
    from nvtma.runtime.cubin import sections
    secs = sections(blob)
    off, size, _ = secs[".symtab"]
    soff, ssize, _ = secs[".strtab"]
    names = set()
    for i in range(0, size, 24):
        name_off, = struct.unpack_from("<I", blob, off + i)
        end = blob.index(b"\0", soff + name_off)
        names.add(blob[soff + name_off:end].decode())
    return names


@needs_mlir
def test_nvshmem_kernels_link_the_device_bitcode_into_one_cubin():
    bc = _bitcode_or_skip()
    import nvtma
    every_helper, plain = _kernels()
    c = nvtma.compile(every_helper.build().ir, cache=False)
    # every NVSHMEM call resolved from the bitcode: only CUDA's system calls (printf, assert) stay extern
    externs = set(re.findall(r"^\.extern \.func\s+(?:\([^)]*\)\s*)?(\w+)", c.ptx, re.M))
    assert externs <= {"vprintf", "__assertfail"}, externs
    assert re.search(r"^\.visible \.const \.align 8 \.b8 nvshmemi_device_state_d\[\d+\];", c.ptx, re.M)
    assert re.search(r"^\.visible \.entry every_helper\(", c.ptx, re.M)
    syms = _elf_symbols(c.cubin)
    assert {"every_helper", "nvshmemi_device_state_d", "nvshmemi_device_lib_version_d"} <= syms
    assert host.uses_nvshmem(c)
    p = nvtma.compile(plain.build().ir, cache=False)
    assert not host.uses_nvshmem(p)
    assert len(c.cubin) > 4 * len(p.cubin)  # NVSHMEM's transfer code came along
    # the library's version is in the cubin, as culibrary_init will compare it with the host's
    ver = re.search(r"nvshmemi_device_lib_version_d\[12\] = \{([\d, ]+)\}", c.ptx)
    assert ver, "the device library records its version"
    assert str(bc).endswith(".bc")


@needs_mlir
def test_a_cached_module_names_the_linked_bitcode(tmp_path, monkeypatch):
    """A cache entry records the bitcode it was linked against; once the
    name finds other bitcode, the entry is not used."""
    bc = _bitcode_or_skip()
    import shutil

    import nvtma
    from nvtma.compiler import link_stamp
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(tmp_path / "cache"))
    every_helper, _ = _kernels()
    text = every_helper.build().ir
    first = nvtma.compile(text, cache=True)
    assert first.libraries == link_stamp("library", "nvshmem", "sm_90a")[0]
    assert first.libraries.startswith(f"library\tnvshmem\t{bc.resolve()}:")
    again = nvtma.compile(text, cache=True)
    assert again.from_cache and again.libraries == first.libraries
    copy = tmp_path / "lib" / bc.name
    copy.parent.mkdir()
    shutil.copy(bc, copy)
    monkeypatch.setenv("NVTMA_NVSHMEM_BITCODE", str(copy))
    moved = nvtma.compile(text, cache=True)
    assert not moved.from_cache and moved.libraries.startswith(f"library\tnvshmem\t{copy.resolve()}:")
    assert nvtma.compile(text, cache=True).from_cache


@needs_mlir
def test_missing_bitcode_is_a_compile_error(monkeypatch, tmp_path):
    import nvtma
    from nvtma import nvshmem
    every_helper, _ = _kernels()
    text = every_helper.build().ir
    monkeypatch.setenv("NVTMA_NVSHMEM_BITCODE", str(tmp_path / "nowhere"))
    with pytest.raises(nvtma.CompileError, match="NVSHMEM kernels need NVSHMEM's device library.*NVTMA_NVSHMEM"):
        nvtma.compile(text, cache=False)
    monkeypatch.delenv("NVTMA_NVSHMEM_BITCODE")
    monkeypatch.setattr(nvshmem, "_candidate_dirs", lambda: [tmp_path])
    with pytest.raises(nvtma.CompileError, match="pip install nvidia-nvshmem-cu13"):
        nvtma.compile(text, cache=False)
    with pytest.raises(nvtma.CompileError, match="links 'nvshmem'"):
        nvtma.compile(text.replace('nvtma.link = ["nvshmem"]', 'nvtma.link = ["rocshmem"]'), cache=False)
    own = text.replace("gpu.module @kernels attributes", 'gpu.module @kernels [#nvvm.target<chip = "sm_90a">] '
                       "attributes")
    fake = tmp_path / "bc" / "libnvshmem_device.bc"  # refused before anything reads it
    fake.parent.mkdir()
    fake.write_bytes(b"BC")
    monkeypatch.setenv("NVTMA_NVSHMEM_BITCODE", str(fake))
    with pytest.raises(nvtma.CompileError, match="has its own #nvvm.target and nvtma.link"):
        nvtma.compile(own, cache=False)


def test_the_bitcode_for_each_chip(tmp_path, monkeypatch):
    """The newest per-arch library not newer than the chip, else the generic one."""
    from nvtma import nvshmem
    for n in ("libnvshmem_device_sm_80.bc", "libnvshmem_device_sm_90.bc", "libnvshmem_device_sm_100.bc"):
        (tmp_path / n).write_bytes(b"BC")
    monkeypatch.setenv("NVTMA_NVSHMEM_BITCODE", str(tmp_path))
    assert nvshmem.bitcode_library("sm_90a").name == "libnvshmem_device_sm_90.bc"
    assert nvshmem.bitcode_library("sm_100a").name == "libnvshmem_device_sm_100.bc"
    assert nvshmem.bitcode_library("sm_120").name == "libnvshmem_device_sm_100.bc"
    assert nvshmem.bitcode_library("sm_89").name == "libnvshmem_device_sm_80.bc"
    generic = tmp_path / "old"
    generic.mkdir()
    (generic / "libnvshmem_device.bc").write_bytes(b"BC")
    monkeypatch.setenv("NVTMA_NVSHMEM_BITCODE", str(generic))
    assert nvshmem.bitcode_library("sm_90a").name == "libnvshmem_device.bc"
    monkeypatch.setenv("NVTMA_NVSHMEM_BITCODE", str(generic / "libnvshmem_device.bc"))
    assert nvshmem.bitcode_library("sm_90a") == generic / "libnvshmem_device.bc"
    monkeypatch.setenv("NVTMA_NVSHMEM_BITCODE", str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="NVTMA_NVSHMEM_BITCODE"):
        nvshmem.bitcode_library("sm_90a")


@needs_mlir
def test_the_example_compiles_without_a_gpu(tmp_path):
    _bitcode_or_skip()
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, str(REPO / "examples" / "nvshmem_allgather.py"), "--aot", str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    import nvtma.runtime
    for name in ("all_gather", "all_reduce"):
        mod = nvtma.runtime.load(tmp_path / name)
        assert host.uses_nvshmem(mod), name
        assert list(mod.kernels) == [name]


# --------------------------------------------------------------------------- the host side, no GPU

def test_the_host_side_imports_and_refuses_without_init():
    assert not host.initialized()
    for call in (host.my_pe, host.n_pes, host.barrier_all, lambda: host.tensor((4,), "float32"),
                 lambda: host.free(0)):
        with pytest.raises(host.NvshmemError, match="not initialized") as e:
            call()
        assert e.value.rule == "nvshmem"
    from nvtma.runtime import LaunchError
    assert issubclass(host.NvshmemError, LaunchError)


def test_a_missing_host_library_is_a_typed_error(monkeypatch):
    monkeypatch.setattr(host, "_lib", None)
    monkeypatch.setenv("NVTMA_NVSHMEM_HOST_LIB", "/nonexistent/libnvshmem_host.so.3")
    with pytest.raises(host.NvshmemError, match="host library is not there.*nonexistent"):
        host.init()
    with pytest.raises(host.NvshmemError, match="host library"):
        host.unique_id()


def test_init_checks_ranks_before_nvshmem_starts(monkeypatch):
    monkeypatch.setattr(host, "host_library", lambda: pytest.fail("NVSHMEM must not be touched"))
    with pytest.raises(host.NvshmemError, match="rank 3 is not in 0..1"):
        host.init(3, 2)
    with pytest.raises(host.NvshmemError, match="2 PEs need a shared bootstrap ID"):
        host.init(0, 2)
    with pytest.raises(host.NvshmemError, match="is not an int"):
        host.init(True, 2)


def test_the_host_library_binds_when_there():
    """With NVSHMEM's host library present (the wheel, or NVTMA_NVSHMEM_HOST_LIB):
    every entry point the runtime calls exists, the version reads, a
    bootstrap ID is made (none of it needs a GPU)."""
    try:
        host.host_library()
    except host.NvshmemError as e:
        pytest.skip(str(e))
    v = host.version()
    assert v >= (3, 3, 0), v
    uid = host.unique_id()
    assert len(uid) == 128 and struct.unpack_from("<i", uid)[0] == (1 << 16) + 128


@needs_mlir
def test_launch_is_cooperative_after_module_init_through_the_driver_stub(tmp_path, stub):
    """host.launch on the stand-in libcuda (no GPU): the module's CUlibrary
    goes to nvshmemx_culibrary_init once, the launch is one cuLaunchKernelEx
    with one attribute (cooperative) and the kernel's record's block."""
    _bitcode_or_skip()
    sys.path.insert(0, str(Path(__file__).parent))
    import cuda_stub
    import nvshmem_cases
    nvshmem_cases.specs()["probe"].compile().save(tmp_path / "probe")
    code = f"""
import nvtma.runtime
import cuda_stub
from helpers import FakeCudaArray as A
from nvtma.runtime import nvshmem as host
lib, last = cuda_stub.attach()
inits = []
class FakeNvshmem:
    def nvshmemx_culibrary_init(self, h):
        inits.append(h.value)
        return 0
host._lib = FakeNvshmem()
host._state.update(pes=(0, 1), device=0)
mod = nvtma.runtime.load({str(tmp_path / "probe")!r})
args = (A(0x7F0000100000, (1024,), "<i4"), A(0x7F0000200000, (1024,), "<i4"), A(0x7F0000300000, (2,), "<u8"),
        A(0x7F0000400000, (8,), "<i4"), 5)
host.launch(mod.probe, *args, grid=(1,))
host.launch(mod.probe, *args, grid=(1,))
assert len(inits) == 1 and inits[0], inits
assert last.ex_count == 2 and last.num_attrs == 1, (last.ex_count, last.num_attrs)
assert list(last.grid) == [1, 1, 1] and list(last.block) == [128, 1, 1]
try:
    host.launch(mod.probe, *args, grid=(1,), stream="no")
except nvtma.runtime.LaunchError as e:
    assert e.rule == "stream", e.rule
else:
    raise AssertionError("a bad stream launched")
print("OK")
"""
    cuda_stub.run(stub, code, timeout=300)


# --------------------------------------------------------------------------- GPU: one PE

def _modules():
    """The example's kernels: compiled here, or AOT from $NVTMA_GPU_ARTIFACTS/nvshmem/."""
    art = os.environ.get("NVTMA_GPU_ARTIFACTS")
    import nvtma.runtime
    if art and (Path(art) / "nvshmem" / "all_gather" / "kernels.json").exists():
        return {n: nvtma.runtime.load(Path(art) / "nvshmem" / n) for n in ("all_gather", "all_reduce", "probe")}
    if not HAVE_MLIR:
        pytest.skip("no MLIR extension and no AOT artifacts in $NVTMA_GPU_ARTIFACTS/nvshmem")
    _bitcode_or_skip()
    sys.path.insert(0, str(Path(__file__).parent))
    import nvshmem_cases
    return {n: s.compile() for n, s in nvshmem_cases.specs().items()}


@pytest.fixture(scope="module")
def one_pe():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    mods = _modules()
    os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")
    os.environ.setdefault("NVSHMEM_REMOTE_TRANSPORT", "none")
    try:
        pes = host.init(0, 1)
    except host.NvshmemError as e:
        pytest.skip(f"NVSHMEM did not start: {e}")
    yield torch, mods, pes
    host.finalize()


@pytest.mark.gpu
def test_gpu_one_pe_probe(one_pe):
    """my_pe/n_pes in the kernel, a put and a get to itself with a signal, fence, quiet, barrier_all."""
    torch, mods, pes = one_pe
    assert pes == (0, 1)
    x = host.tensor((1024,), torch.int32)
    y = host.tensor((1024,), torch.int32)
    sig = host.tensor((2,), torch.uint64)
    out = torch.zeros(8, device="cuda", dtype=torch.int32)
    x.copy_(torch.arange(1024, device="cuda", dtype=torch.int32) * 3)
    host.launch(mods["probe"].probe, x, y, sig, out, 5, grid=(1,))
    torch.cuda.synchronize()
    assert out[:2].tolist() == [0, 1]                 # my_pe, n_pes
    assert out[2].item() == 5                         # the signal word signal_wait_until returned
    assert torch.equal(y, x)                          # putmem_signal_nbi.block to itself
    assert out[3].item() == x[1023].item()            # getmem_nbi from itself, after quiet()
    assert sig.tolist() == [5, 6]                     # signal_op "set" 5, then "add" 1 on word 1 from 5
    for t in (x, y, sig):
        host.free(t)


@pytest.mark.gpu
@pytest.mark.parametrize("count,blocks", [(1 << 16, 8), (3 << 20, 24)])
def test_gpu_one_pe_all_gather_and_all_reduce_degenerate(one_pe, count, blocks):
    """With one PE all-gather and all-reduce are copies of x."""
    torch, mods, _ = one_pe
    x = host.tensor((count,), torch.bfloat16)
    x.copy_(torch.randn(count, device="cuda").to(torch.bfloat16))
    y = host.tensor((count,), torch.bfloat16)
    sig = host.tensor((blocks,), torch.uint64)
    for epoch in (1, 2):
        y.zero_()
        host.launch(mods["all_gather"].all_gather, x, y, sig, epoch, grid=(blocks,))
        torch.cuda.synchronize()
        assert torch.equal(y, x), epoch
        assert sig.tolist() == [epoch] * blocks
    y2 = host.tensor((count,), torch.bfloat16)
    recv = host.tensor((1,), torch.bfloat16)
    sig2 = host.tensor((1,), torch.uint64)
    acc = torch.empty(count, device="cuda", dtype=torch.bfloat16)
    host.launch(mods["all_reduce"].all_reduce, x, y2, acc, recv, sig2, 1, grid=(blocks,))
    host.barrier_all()
    torch.cuda.synchronize()
    assert torch.equal(y2, x)
    for t in (x, y, sig, y2, recv, sig2):
        host.free(t)


@pytest.mark.gpu
def test_gpu_a_grid_too_large_for_a_collective_launch_is_refused(one_pe):
    torch, mods, _ = one_pe
    from nvtma.runtime import LaunchError
    x = host.tensor((1 << 20,), torch.bfloat16)
    y = host.tensor((1 << 20,), torch.bfloat16)
    sig = host.tensor((1 << 14,), torch.uint64)
    with pytest.raises(LaunchError) as e:
        host.launch(mods["all_gather"].all_gather, x, y, sig, 1, grid=(1 << 14,))
    assert e.value.rule == "launch-config"
    for t in (x, y, sig):
        host.free(t)


# --------------------------------------------------------------------------- several GPUs

def _gpus():
    try:
        import torch
        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except ImportError:
        return 0


@pytest.mark.gpu
@pytest.mark.skipif(_gpus() < 2, reason="needs 2 or more GPUs")
def test_gpu_example_on_every_gpu():
    """examples/nvshmem_allgather.py, one process per GPU: both collectives
    equal torch.distributed's (NCCL) and it prints both bandwidths."""
    args = [sys.executable, str(REPO / "examples" / "nvshmem_allgather.py"), "--count", str(1 << 22), "--iters", "5"]
    art = os.environ.get("NVTMA_GPU_ARTIFACTS")
    if art and (Path(art) / "nvshmem" / "all_gather").exists():
        args += ["--from", str(Path(art) / "nvshmem")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), NVSHMEM_DISABLE_NVLS="1", NCCL_NVLS_ENABLE="0")
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    assert r.stdout.count("correct") == 2 and "WRONG" not in r.stdout, r.stdout
