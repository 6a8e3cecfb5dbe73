"""What reaches the driver: streams, devices, launch configuration and the
packed parameters, checked against a stand-in libcuda (cuda_stub) in a
child process, so these run on a machine without a GPU."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cuda_stub

HERE = Path(__file__).resolve().parent

PRELUDE = """
import sys, types, struct
import cuda_stub, runtime_fixtures as F
from helpers import FakeCudaArray
from nvtma.runtime import LaunchError, driver
lib, last = cuda_stub.attach()

def kernel(recs=None, name="k"):
    art = F.artifacts(recs)
    k = art.kernel(name)
    cuda_stub.set_param_sizes(lib, k._buffer.entry_sizes)
    return k

def t(ptr=0x7F0000000000, shape=(256, 256), **kw):
    return FakeCudaArray(ptr, shape, **kw)

def expect(rule, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except LaunchError as e:
        assert e.rule == rule, (rule, e.rule, str(e))
        return str(e)
    raise AssertionError(f"no LaunchError({rule})")
"""


def run(stub, code: str, fake_torch=False):
    return cuda_stub.run(stub, PRELUDE + (FAKE_TORCH if fake_torch else "") + textwrap.dedent(code) + "\nprint('OK')\n")


# A minimal stand-in for torch: the runtime asks only for the raw current-stream getter.
FAKE_TORCH = """
torch = types.ModuleType("torch")
torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda dev: 0x5000 + dev, _cuda_getDevice=lambda: 0)
class _T: pass
torch.Tensor = _T
sys.modules["torch"] = torch
"""


def test_default_stream_is_torchs_current_stream_on_the_tensors_device(stub):
    run(stub, """
        k = kernel()
        k(t(), t(), 7, grid=(4, 4), block=(128,))
        assert last.stream == 0x5000, hex(last.stream)
        k(t(0x7F1000000000), t(0x7F1000001000), 7, grid=(4, 4), block=(128,))
        assert last.stream == 0x5001 and last.ctx == 0x1001, (hex(last.stream), hex(last.ctx))
    """, fake_torch=True)


def test_default_stream_without_torch_is_the_legacy_stream(stub):
    run(stub, """
        k = kernel()
        k(t(), t(), 7, grid=(4, 4), block=(128,))
        assert last.stream == 0 and last.count == 1
        assert "torch" not in sys.modules
    """)


def test_explicit_streams_of_every_kind(stub):
    run(stub, """
        from cuda.bindings import driver as d
        k = kernel()
        class TorchLike:  # torch.cuda.Stream
            cuda_stream = 0xABC0; device_index = 0
        class CoreLike:   # cuda.core: the __cuda_stream__ protocol
            def __cuda_stream__(self): return (0, 0xDEF0)
        for s, want in ((0x1230, 0x1230), (TorchLike(), 0xABC0), (CoreLike(), 0xDEF0), (d.CUstream(0x4560), 0x4560)):
            k(t(), t(), 7, grid=(4, 4), block=(128,), stream=s)
            assert last.stream == want, (s, hex(last.stream))
        for bad in ("1", 1.5, True, -1, 1 << 64, object()):
            expect("stream", k, t(), t(), 7, grid=(4, 4), block=(128,), stream=bad)
        class Other:
            cuda_stream = 0xABC0; device_index = 1
        expect("device", k, t(), t(), 7, grid=(4, 4), block=(128,), stream=Other())
    """)


def test_device_of_the_tensors_and_mismatch(stub):
    out = run(stub, """
        k = kernel()
        lib.nvtmaStubSetCurrent(0x1000)   # device 0's context is current
        k(t(0x7F1000000000), t(0x7F1000001000), 7, grid=(4, 4), block=(128,))
        assert last.ctx == 0x1001, hex(last.ctx)   # pushed for the launch
        assert last.pushes == 1
        k(t(), t(), 7, grid=(4, 4), block=(128,))
        assert last.ctx == 0x1000 and last.pushes == 1   # no push needed
        print(expect("device", k, t(), t(0x7F1000000000), 7, grid=(4, 4), block=(128,)))
    """)
    assert "argument 1 is on cuda:1, an earlier tensor on cuda:0" in out


def test_grid_block_cluster_smem_reach_the_driver(stub):
    run(stub, """
        recs = F.records(launch={"block": [128, 1, 1], "cluster": [2, 1, 1], "smem": 65536})
        k = kernel(recs)
        k(t(), t(), 7, grid=[8, 2])   # a list, block/cluster/smem from the record
        assert list(last.grid) == [8, 2, 1] and list(last.block) == [128, 1, 1]
        assert list(last.cluster) == [2, 1, 1] and last.ex_count == 1 and last.smem == 65536
        assert last.smem_attr[0] == 65536
        k(t(), t(), 7, grid=lambda x, y, n: (x.__cuda_array_interface__["shape"][0] // 32,))
        assert list(last.grid) == [8, 1, 1]
        expect("launch-config", k, t(), t(), 7, grid=(8,), block=(64,))
        expect("launch-config", k, t(), t(), 7, grid=(8,), cluster=(4,))
        expect("launch-config", k, t(), t(), 7, grid=(8,), smem=1024)
        expect("launch-config", k, t(), t(), 7, grid="64")
        expect("launch-config", k, t(), t(), 7, grid=(64.0,))
        expect("launch-config", k, t(), t(), 7, grid=(3,))   # not a multiple of the cluster
        k2 = kernel()   # no launch record: block is required
        expect("launch-config", k2, t(), t(), 7, grid=(4,))
        ex = last.ex_count
        k2(t(), t(), 7, grid=[64, 64], block=[128])
        assert list(last.grid) == [64, 64, 1] and last.ex_count == ex   # no cluster: cuLaunchKernel
    """)


def test_clusters_past_8_ctas_are_opted_in(stub):
    """sm_90 launches clusters of 9-16 CTAs only for a kernel that allows
    non-portable cluster sizes (the stub, like the driver, fails such a
    launch with CUDA_ERROR_INVALID_CLUSTER_SIZE otherwise): the first such
    launch opts the kernel in, on every device (the C fast path may repeat
    a launch on another device by itself), and no launch before it does."""
    run(stub, """
        k8 = kernel(F.records(launch={"block": [128, 1, 1], "cluster": [8, 1, 1], "smem": 0}))
        k8(t(), t(), 7, grid=[16])
        assert list(last.cluster) == [8, 1, 1] and last.wide_attr[0] == 0
        k = kernel(F.records(launch={"block": [128, 1, 1], "cluster": None, "smem": 0}))
        k(t(), t(), 7, grid=[32, 2], cluster=(2, 2, 1))
        assert last.wide_attr[0] == 0 and last.wide_attr[1] == 0
        k(t(), t(), 7, grid=[32, 2], cluster=(8, 2, 1))
        assert list(last.cluster) == [8, 2, 1] and last.wide_attr[0] == 1 and last.wide_attr[1] == 1
        k(t(0x7F1000000000), t(0x7F1000000000), 7, grid=[16], cluster=(16,))
        assert list(last.cluster) == [16, 1, 1] and last.ctx == 0x1001
        expect("launch-config", k, t(), t(), 7, grid=[32], cluster=(32,))
        # without the opt-in the stub refuses the launch (the runtime, opted in already, does not ask again)
        last.wide_attr[0] = last.wide_attr[1] = 0
        expect("driver", k, t(), t(), 7, grid=[16], cluster=(16,))
    """)


def test_any_dynamic_shared_memory_is_opted_in(stub):
    """A kernel opts in to its dynamic shared memory whatever its size: the
    48 KB a kernel may use without opting in count its static shared memory
    too, so 48 KB of dynamic (x as the GEMM's A, three stages of 16 KB)
    beside a few hundred static bytes failed to launch on the H200 when
    only sizes past 48 KB opted in. None without dynamic shared memory."""
    run(stub, """
        k = kernel(F.records(launch={"block": [128, 1, 1], "cluster": None, "smem": 49152}))
        k(t(), t(), 7, grid=[8])
        assert last.smem == 49152 and last.smem_attr[0] == 49152
        k(t(), t(), 7, grid=[8])
        assert last.smem_attr[0] == 49152
        last.smem_attr[0] = 0
        k0 = kernel(F.records(launch={"block": [128, 1, 1], "cluster": None, "smem": 0}))
        k0(t(), t(), 7, grid=[8])
        assert last.smem_attr[0] == 0
    """)


def test_a_pdl_kernel_is_launched_with_programmatic_serialization(stub):
    """A record with launch.pdl launches through cuLaunchKernelEx with the
    programmatic-stream-serialization attribute, also beside a cluster and on
    the repeated (C) path; a record without it does not; pdl must be a bool."""
    run(stub, """
        k = kernel(F.records(launch={"block": [128, 1, 1], "cluster": None, "smem": 0, "pdl": True}))
        for _ in range(3):
            k(t(), t(), 7, grid=(4,))
            assert last.pdl == 1 and last.num_attrs == 1, (last.pdl, last.num_attrs)
        k = kernel(F.records(launch={"block": [128, 1, 1], "cluster": [2, 1, 1], "smem": 0, "pdl": True}))
        k(t(), t(), 7, grid=(4,))
        assert last.pdl == 1 and last.num_attrs == 2 and list(last.cluster) == [2, 1, 1]
        k = kernel(F.records(launch={"block": [128, 1, 1], "cluster": None, "smem": 0}))
        ex = last.ex_count
        k(t(), t(), 7, grid=(4,))
        assert last.pdl == 0 and last.ex_count == ex   # plain cuLaunchKernel
        from nvtma.runtime import artifacts
        try:
            artifacts.validate_records(F.records(launch={"block": [128, 1, 1], "pdl": 1}))
        except LaunchError as e:
            assert e.rule == "artifact" and "launch.pdl" in str(e), str(e)
        else:
            raise AssertionError("launch.pdl = 1 accepted")
    """)


def test_a_grid_past_the_records_max_grid_is_refused(stub):
    """A record's launch.max_grid (dsl.max_grid: the most CTAs the kernel's
    work split holds) bounds every launch's CTAs in all, before the driver
    is touched, the same grid object again too; a grid within it launches,
    also after a refused one; max_grid must be an int of at least 1."""
    run(stub, """
        k = kernel(F.records(launch={"block": [128, 1, 1], "cluster": None, "smem": 0, "max_grid": 96}))
        g = (96,)
        k(t(), t(), 7, grid=g)
        k(t(), t(), 7, grid=g)
        assert list(last.grid) == [96, 1, 1]
        n = last.count
        big = (97,)
        msg = expect("launch-config", k, t(), t(), 7, grid=big)
        assert "97 CTAs" in msg and "at most 96" in msg and "max_grid" in msg, msg
        expect("launch-config", k, t(), t(), 7, grid=big)   # the same object again: not cached as checked
        expect("launch-config", k, t(), t(), 7, grid=(8, 12, 2))   # 192 in all
        expect("launch-config", k, t(), t(), 7, grid=lambda *a: (200,))
        assert last.count == n   # refused before the driver
        k(t(), t(), 7, grid=(8, 12))
        assert list(last.grid) == [8, 12, 1] and last.count == n + 1
        from nvtma.runtime import artifacts
        for bad in (0, -3, 1.5, True, "96"):
            try:
                artifacts.validate_records(F.records(launch={"block": [128, 1, 1], "max_grid": bad}))
            except LaunchError as e:
                assert e.rule == "artifact" and "launch.max_grid" in str(e), str(e)
            else:
                raise AssertionError(f"launch.max_grid = {bad!r} accepted")
    """)


def test_parameters_packed_and_descriptors_reencoded_only_on_change(stub):
    run(stub, """
        from nvtma import tensormap as tm
        k = kernel()
        a, b, c = t(0x7F0000000000), t(0x7F0000100000), t(0x7F0000200000)
        k(a, b, 7, grid=(4,), block=(128,))
        p = bytes(last.params[:last.params_bytes_n])
        n = 8 * 7
        assert struct.unpack_from("<QQq", p, 0) == (a.__cuda_array_interface__["data"][0],) * 2 + (0,)
        assert struct.unpack_from("<qqqq", p, 24) == (256, 256, 256, 1)
        assert struct.unpack_from("<i", p, 2 * n)[0] == 7
        d0 = p[2 * n + 4:2 * n + 4 + 128]
        f = tm.decode(d0)
        assert f.global_address == 0x7F0000000000 and f.box_dim == (64, 64) and int(f.swizzle) == 3
        calls = []
        real = tm.encode_tiled
        tm.encode_tiled = lambda *x, **y: calls.append(1) or real(*x, **y)
        for i in range(6):   # alternate the output: only addresses change
            k(a, b if i % 2 else c, 7, grid=(4,), block=(128,))
            p = bytes(last.params[:last.params_bytes_n])
            want = (b if i % 2 else c).__cuda_array_interface__["data"][0]
            assert struct.unpack_from("<Q", p, n)[0] == want
            assert tm.decode(p[2 * n + 4 + 128:2 * n + 4 + 256]).global_address == want
        assert calls == [], "descriptors were re-encoded for a pointer change"
        k(a, t(0x7F0000300000, shape=(256, 256)), 8, grid=(4,), block=(128,))
        assert struct.unpack_from("<i", bytes(last.params[:last.params_bytes_n]), 2 * n)[0] == 8
        expect("alignment", k, a, t(0x7F0000300008), 7, grid=(4,), block=(128,))
        expect("address-range", k, a, t(1 << 57), 7, grid=(4,), block=(128,))
    """)


def test_static_template_keeps_the_address_checks(stub):
    run(stub, """
        recs = F.records()
        for p in recs["kernels"]["k"]["params"]:
            if p["kind"] == "descriptor":
                p["template"] = F.template_for(p, (256, 256))
        k = kernel(recs)
        k(t(), t(0x7F0000100000), 7, grid=(4,), block=(128,))
        expect("alignment", k, t(0x7F0000000008), t(), 7, grid=(4,), block=(128,))
        expect("address-range", k, t(1 << 57), t(), 7, grid=(4,), block=(128,))
        k(t(), t(0x7F0000100000), 7, grid=(4,), block=(128,))
        expect("alignment", k, t(), t(0x7F0000100004), 7, grid=(4,), block=(128,))   # fast path too
    """)


def test_cuda_array_interface_stream_is_waited_for(stub):
    run(stub, """
        k = kernel()
        a = t(); a.__cuda_array_interface__["stream"] = 0x7770
        k(a, t(), 7, grid=(4,), block=(128,), stream=0x1230)
        assert last.event_records == 1 and last.stream_waits == 1
        a.__cuda_array_interface__["stream"] = 0x1230   # the launch stream itself: nothing to wait for
        k(a, t(), 7, grid=(4,), block=(128,), stream=0x1230)
        assert last.stream_waits == 1
    """)


def test_dlpack_producer(stub):
    run(stub, """
        import ctypes
        from nvtma.runtime import args as A
        class Producer:
            # a hand-made __dlpack__: a legacy capsule over a static DLManagedTensor
            def __init__(self, ptr, shape, code=2, bits=16, dev=(2, 0)):
                self.shape = (ctypes.c_int64 * len(shape))(*shape)
                self.m = A._DLManagedTensor()
                t = self.m.dl_tensor
                t.data = ptr; t.device.device_type, t.device.device_id = dev; t.ndim = len(shape)
                t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
                t.shape = self.shape
                self.dev = dev; self.streams = []
            def __dlpack_device__(self): return self.dev
            def __dlpack__(self, stream=None, max_version=None):
                self.streams.append(stream)
                mk = ctypes.pythonapi.PyCapsule_New
                mk.restype = ctypes.py_object
                mk.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
                return mk(ctypes.addressof(self.m), b"dltensor", None)
        k = kernel()
        x = Producer(0x7F0000000000, (256, 256))
        k(x, t(), 7, grid=(4,), block=(128,), stream=0x4440)
        assert x.streams == [0x4440]
        assert struct.unpack_from("<Q", bytes(last.params[:16]), 0)[0] == 0x7F0000000000
        k(x, t(), 7, grid=(4,), block=(128,))
        assert x.streams[-1] == 1   # the legacy default stream is 1 in the protocol
        expect("dtype", k, Producer(0x7F0000000000, (256, 256), code=2, bits=32), t(), 7, grid=(4,), block=(128,))
        expect("device", k, Producer(0x7F0000000000, (256, 256), dev=(1, 0)), t(), 7, grid=(4,), block=(128,))
        expect("device", k, t(), Producer(0x7F1000000000, (256, 256), dev=(2, 1)), 7, grid=(4,), block=(128,))
        bf = Producer(0x7F0000000000, (256, 256), code=4, bits=16)
        assert A.from_dlpack(bf, "x").elem == "bf16"
        f8 = Producer(0x7F0000000000, (256, 256), code=10, bits=8)
        assert A.from_dlpack(f8, "x").elem == "f8E4M3FN"
    """)


def test_driver_encoder_without_the_drivers_entry_point(stub):
    """encoder="driver" on a driver without cuTensorMapEncodeTiled (before
    CUDA 12.0; the stub has none either) is LaunchError(rule="driver")
    naming the encoder and the entry point, not cuda.bindings'
    FunctionNotFoundError; an argument the driver's types cannot hold (a
    negative byte stride) is refused as nvtma's encoder refuses it, not
    with cuda.bindings' OverflowError. The kernel launches afterwards."""
    run(stub, """
        k = kernel()
        msg = expect("driver", k, t(), t(0x7F0000100000), 7, grid=(4,), block=(128,), encoder="driver")
        assert msg == ("encoder='driver': the CUDA driver has no cuTensorMapEncodeTiled (it came with CUDA 12.0; "
                       "encoder='nvtma' needs no driver)"), msg
        try:
            k.pack(t(), t(0x7F0000100000), 7, encoder="driver")
            raise AssertionError("packed without the driver's encoder")
        except LaunchError as e:
            assert (e.rule, e.arg) == ("driver", "encoder"), (e.rule, e.arg)
        dyn = kernel(F.records([F.DYN, F.SCALAR, dict(F.DESC)]))
        msg = expect("argument", dyn, t(strides=(-512, 2)), 7, grid=(4,), block=(128,), encoder="driver")
        assert msg == "argument 0: global_strides[0] is -512, it does not fit the driver's 64-bit unsigned argument"
        n = last.count
        k(t(), t(0x7F0000100000), 7, grid=(4,), block=(128,))
        assert last.count == n + 1
    """)


def test_cuda_array_interface_refusals(stub):
    run(stub, """
        k = kernel()
        expect("address", k, t(0), t(), 7, grid=(4,), block=(128,))
        expect("dtype", k, t(typestr=">f2"), t(), 7, grid=(4,), block=(128,))
        raw = t(typestr="<V2")   # bf16 as the interface can say it: a 2-byte raw element
        k(raw, t(), 7, grid=(4,), block=(128,))
        expect("dtype", k, t(typestr="<V4"), t(), 7, grid=(4,), block=(128,))
        m = t(); m.__cuda_array_interface__["mask"] = object()
        expect("cuda-array-interface", k, m, t(), 7, grid=(4,), block=(128,))
    """)


def test_no_driver_is_a_launch_error():
    """Without libcuda a launch is LaunchError(rule="driver"), not cuda.pathfinder's
    DynamicLibNotFoundError."""
    pytest.importorskip("cuda.bindings")
    code = textwrap.dedent("""
        import runtime_fixtures as F
        from helpers import FakeCudaArray
        from nvtma.runtime import LaunchError
        k = F.artifacts().kernel("k")
        t = lambda p=0x7F0000000000: FakeCudaArray(p, (256, 256))
        try:
            k(t(), t(), 1, grid=[64, 64], block=(128,))
        except LaunchError as e:
            print("rule", e.rule)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE)] + [p for p in sys.path if p]))
    env["LD_LIBRARY_PATH"] = "/nonexistent"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    try:
        import ctypes
        ctypes.CDLL("libcuda.so.1")
        pytest.skip("this machine has a CUDA driver")
    except OSError:
        pass
    assert r.stdout.strip() == "rule driver", r.stdout + r.stderr


def test_memref_parameters_are_one_kernel_parameter_per_word():
    """A lowered memref is 3 + 2·rank kernel parameters: cuLaunchKernel's
    kernelParams needs one entry for each (one entry for the whole memref made
    the driver read past the array: INVALID_VALUE or a crash on the H200)."""
    import ctypes
    from nvtma.runtime.launch import ParamBuffer, param_layout
    layout = param_layout([{"kind": "memref", "shape": [None, None]}, {"kind": "scalar", "bits": 32, "type": "i32"},
                           {"kind": "descriptor"}])
    b = ParamBuffer(layout)
    assert b.entry_sizes == [8] * 7 + [4, 128]
    ptrs = list((ctypes.c_void_p * 9).from_address(b.address))
    assert [p - ptrs[0] for p in ptrs[:7]] == [8 * j for j in range(7)]
    assert ptrs[7] - ptrs[0] == b.offsets[1] - b.offsets[0] and ptrs[8] - ptrs[0] == b.offsets[2] - b.offsets[0]
