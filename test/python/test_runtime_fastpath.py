"""The launch fast path (LaunchFast.cpp's Packer and the Python fallback):
addresses rewritten in place, anything else sent to the full checked path,
errors still typed. torch is stood in for by a class with the five members
the fast path reads, so this runs without torch and without a GPU (a
stand-in libcuda records each launch)."""

import textwrap

import pytest

import cuda_stub

PRELUDE = """
import sys, types, struct
import cuda_stub, runtime_fixtures as F
from nvtma.runtime import LaunchError, args as A
lib, last = cuda_stub.attach()

class DType:
    def __str__(self): return "torch.float16"
F16 = DType()

class T:  # the members of torch.Tensor the runtime reads
    def __init__(self, ptr, shape=(256, 256), dev=0):
        self.ptr, self.shape, self.dev, self.dtype = ptr, tuple(shape), dev, F16
        self.strides = tuple(int(__import__("math").prod(shape[i + 1:])) for i in range(len(shape)))
    def stride(self): return self.strides
    def get_device(self): return self.dev
    def data_ptr(self): return self.ptr

torch = types.ModuleType("torch")
torch.Tensor = T
torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda d: 0x5000 + d, _cuda_getDevice=lambda: 0)
sys.modules["torch"] = torch

def kernel(recs=None):
    k = F.artifacts(recs).kernel("k")
    cuda_stub.set_param_sizes(lib, k._buffer.entry_sizes)
    return k

def params():
    return bytes(last.params[:last.params_bytes_n])

N = 8 * 7
def addrs():
    p = params()
    return (struct.unpack_from("<Q", p, 0)[0], struct.unpack_from("<Q", p, N)[0],
            struct.unpack_from("<Q", p, 2 * N + 4)[0], struct.unpack_from("<Q", p, 2 * N + 4 + 128)[0])

def expect(rule, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except LaunchError as e:
        assert e.rule == rule, (rule, e.rule, str(e))
        return
    raise AssertionError(f"no LaunchError({rule})")

# A kernel object's own entry (LaunchFast.cpp's Launcher): with the extension
# a repeated launch never enters Kernel.__call__ (counted by a profile hook
# here); without it each launch does. Both must launch the same.
FAST = __import__("os").environ.get("NVTMA_LAUNCHER") != "bindings"

def counted(k):
    from nvtma.runtime.launch import Kernel
    code, calls = Kernel.__call__.__code__, []
    sys.setprofile(lambda frame, event, arg: calls.append(1) if event == "call" and frame.f_code is code else None)
    return calls

def in_python(calls, n):
    # n launches since the last look: none through Kernel.__call__ with the
    # extension, all without; n None: at least one (a miss, a new config)
    got = len(calls)
    calls.clear()
    assert (got > 0) if n is None else got == (0 if FAST else n), (got, n)
"""


@pytest.fixture(params=["extension", "bindings"])
def launcher(request):
    return request.param


def run(stub, launcher, code):
    # bindings: no abi3 extension, the Python fast path
    env = {"NVTMA_LAUNCHER": "bindings"} if launcher == "bindings" else {}
    cuda_stub.run(stub, PRELUDE + textwrap.dedent(code) + "\nprint('OK')\n", **env)


def test_alternating_outputs_take_the_fast_path(stub, launcher):
    run(stub, launcher, """
        k = kernel()
        full = []
        real = k._pack
        k._pack = lambda *a, **kw: full.append(1) or real(*a, **kw)
        x, y1, y2 = T(0x7F0000000000), T(0x7F0000100000), T(0x7F0000200000)
        k(x, y1, 7, grid=(4,), block=(128,))
        assert len(full) == 1 and addrs() == (x.ptr, y1.ptr, x.ptr, y1.ptr)
        assert last.stream == 0x5000
        for i in range(10):
            y = (y1, y2)[i % 2]
            k(x, y, 7, grid=(4,), block=(128,))
            assert addrs() == (x.ptr, y.ptr, x.ptr, y.ptr), i
        assert len(full) <= 2, f"{len(full)} full-path packs for address-only changes"
        assert last.count == 11
    """)


def test_everything_else_takes_the_checked_path(stub, launcher):
    run(stub, launcher, """
        k = kernel()
        x, y = T(0x7F0000000000), T(0x7F0000100000)
        k(x, y, 7, grid=(4,), block=(128,))
        k(x, y, 7, grid=(4,), block=(128,))
        expect("shape", k, x, T(0x7F0000200000, (128, 256)), 7, grid=(4,), block=(128,))
        expect("alignment", k, x, T(0x7F0000200008), 7, grid=(4,), block=(128,))
        expect("address-range", k, x, T(1 << 57), 7, grid=(4,), block=(128,))
        expect("device", k, x, T(0x7F0000200000, dev=1), 7, grid=(4,), block=(128,))
        n = last.count
        k(x, y, 7, grid=(4,), block=(128,))     # a good launch after the errors
        assert last.count == n + 1 and addrs() == (x.ptr, y.ptr, x.ptr, y.ptr)
        k(x, y, 9, grid=(4,), block=(128,))     # another scalar
        assert struct.unpack_from("<i", params(), 2 * N)[0] == 9
        x1, y1 = T(0x7F1000000000, dev=1), T(0x7F1000100000, dev=1)
        k(x1, y1, 9, grid=(4,), block=(128,))
        k(x1, y1, 9, grid=(4,), block=(128,))
        assert last.stream == 0x5001 and last.ctx == 0x1001
        s = types.SimpleNamespace(cuda_stream=0xCAFE0, device_index=1)
        k(x1, y1, 9, grid=(4,), block=(128,), stream=s)
        k(x1, T(0x7F1000200000, dev=1), 9, grid=(4,), block=(128,), stream=s)
        assert last.stream == 0xCAFE0 and addrs()[1] == 0x7F1000200000
    """)


def test_a_memrefs_alignment_is_checked_on_every_path(stub, launcher):
    # "align": what the kernel's accesses assume of the address (16-byte vector loads); a launch
    # that repeats the metadata with another address must not skip it (it faulted the context)
    run(stub, launcher, """
        k = kernel(F.records([dict(F.MEMREF, align=16), dict(F.MEMREF), F.SCALAR]))
        x, y = T(0x7F0000000000), T(0x7F0000100000)
        for _ in range(3):
            k(x, y, 7, grid=(4,), block=(128,))
        n = last.count
        for ptr in (0x7F0000000002, 0x7F0000000008):
            expect("alignment", k, T(ptr), y, 7, grid=(4,), block=(128,))
        assert last.count == n
        y2 = T(0x7F0000100002)                  # y records no alignment
        k(x, y2, 7, grid=(4,), block=(128,))
        assert last.count == n + 1 and struct.unpack_from("<Q", params(), N)[0] == y2.ptr
        x2 = T(0x7F0000000010)
        k(x2, y, 7, grid=(4,), block=(128,))
        k(x2, y, 7, grid=(4,), block=(128,))
        assert last.count == n + 3 and struct.unpack_from("<Q", params(), 0)[0] == x2.ptr
    """)


def test_a_tensormap_replaced_address_is_checked_on_every_path(stub, launcher):
    # "tensormaps": tensormap.replace writes the tensor's address into a descriptor on the device. A launch
    # that repeats the metadata keeps the dims and strides the driver's rules passed, but its new address
    # must still meet them (address-align, address-range), "align" recorded or not
    run(stub, launcher, """
        k = kernel(F.records([dict(F.DYN, tensormaps=[F.TMAP]), dict(F.MEMREF), F.SCALAR]))
        x, y = T(0x7F0000000000), T(0x7F0000100000)
        for _ in range(3):
            k(x, y, 7, grid=(4,), block=(128,))
        n = last.count
        expect("address-range", k, T(1 << 57), y, 7, grid=(4,), block=(128,))
        expect("alignment", k, T(0x7F0000000008), y, 7, grid=(4,), block=(128,))
        assert last.count == n
        x2 = T(0x7F0000000010)
        k(x2, y, 7, grid=(4,), block=(128,))
        k(x2, y, 7, grid=(4,), block=(128,))
        assert last.count == n + 2 and struct.unpack_from("<Q", params(), 0)[0] == x2.ptr
        expect("global-dim-range", k, T(0x7F0000000000, (0, 256)), y, 7, grid=(4,), block=(128,))
        assert last.count == n + 2
    """)


def test_a_descriptors_dims_past_signed_32_bit_coordinates_are_refused_on_every_path(stub, launcher):
    # TMA coordinates are s32: a dim of 2^31 or more bound to a descriptor (or written into one by
    # tensormap.replace) is refused. The fast paths repeat only a shape the checked path passed: a new
    # tensor of such a shape, or the same object resized in place, takes the checked path and is refused
    run(stub, launcher, """
        BIG = 1 << 31
        for recs in (F.records([F.DYN, dict(F.DYN), F.SCALAR, F.DESC, dict(F.DESC, binds=1)]),
                     F.records([dict(F.DYN, tensormaps=[F.TMAP]), dict(F.DYN), F.SCALAR])):
            k = kernel(recs)
            x, y = T(0x7F0000000000), T(0x7F0000100000)
            for _ in range(3):
                k(x, y, 7, grid=(4,), block=(128,))
            n = last.count
            expect("coordinate-range", k, T(0x7F0000000000, (BIG, 256)), y, 7, grid=(4,), block=(128,))
            x.shape, x.strides = (BIG, 64), (64, 1)     # the same object, resized in place
            expect("coordinate-range", k, x, y, 7, grid=(4,), block=(128,))
            expect("coordinate-range", k, x, y, 7, grid=(4,), block=(128,))
            assert last.count == n
            x.shape, x.strides = (BIG - 1, 64), (64, 1)
            k(x, y, 7, grid=(4,), block=(128,))
            k(x, y, 7, grid=(4,), block=(128,))
            assert last.count == n + 2 and struct.unpack_from("<q", params(), 24)[0] == BIG - 1
    """)


def test_an_extension_with_another_slot_table_leaves_the_python_path(stub):
    # an abi3 extension built before the slot table changed (a source tree pulled without a rebuild) refused every
    # kernel with a tensor argument ("malformed slot table"): the kernel launches through the Python path instead
    run(stub, "extension", """
        from nvtma.runtime import driver
        ext = driver._extension()
        class Old:
            def __getattr__(self, name): return getattr(ext, name)
            def Packer(self, buffer, slots): raise ValueError("malformed slot table")
        driver._extension = lambda: Old()
        k = kernel()
        assert k._cpack is None and k._cfast is None and type(k).__name__ == "Kernel"
        x, y = T(0x7F0000000000), T(0x7F0000100000)
        for _ in range(2):
            k(x, y, 7, grid=(4,), block=(128,))
        assert addrs()[:2] == (x.ptr, y.ptr)
        expect("alignment", k, T(0x7F0000000008), y, 7, grid=(4,), block=(128,))
    """)


def test_dynamic_smem_attribute_before_the_fast_path(stub, launcher):
    run(stub, launcher, """
        k = kernel(F.records(launch={"block": [128, 1, 1], "cluster": None, "smem": 100000}))
        x, y = T(0x7F0000000000), T(0x7F0000100000)
        k(x, y, 7, grid=(4,))
        k(x, y, 7, grid=(4,))
        assert last.smem == 100000 and last.smem_attr[0] == 100000
        x1, y1 = T(0x7F1000000000, dev=1), T(0x7F1000100000, dev=1)
        k(x1, y1, 7, grid=(4,))   # another device: its own attribute
        assert last.smem_attr[1] == 100000 and last.ctx == 0x1001
    """)


def test_repeated_launches_skip_python(stub, launcher):
    run(stub, launcher, """
        k = kernel()
        from nvtma.runtime.launch import Kernel
        assert isinstance(k, Kernel) and type(k).__name__ == ("FastKernel" if FAST else "Kernel")
        x, y1, y2 = T(0x7F0000000000), T(0x7F0000100000), T(0x7F0000200000)
        g = (4,)
        k(x, y1, 7, grid=g, block=(128,))
        calls = counted(k)
        n = last.count
        for i in range(20):
            y = (y1, y2)[i % 2]
            k(x, y, 7, grid=g, block=(128,))
            assert addrs() == (x.ptr, y.ptr, x.ptr, y.ptr) and last.stream == 0x5000, i
        k(x, y1, 7, grid=g, block=(128,), encoder="nvtma")
        k(x, y2, 7, **{"gr" + "id": g, "block": (128,)})   # keywords spelled at run time
        assert last.count == n + 22 and addrs()[1] == y2.ptr
        in_python(calls, 22)
    """)


def test_parameters_take_the_fast_path_other_subclasses_do_not(stub, launcher):
    # nn.Parameter (a weight passed as it is) launches without Python like a tensor; any other
    # subclass of the tensor type may answer shape, strides or address its own way: the checked path
    run(stub, launcher, """
        class Parameter(T):
            pass
        class Other(T):
            pass
        torch.nn = types.SimpleNamespace(Parameter=Parameter)
        k = kernel()
        full = []
        real = k._pack
        k._pack = lambda *a, **kw: full.append(1) or real(*a, **kw)
        x, y1, y2 = Parameter(0x7F0000000000), T(0x7F0000100000), T(0x7F0000200000)
        g = (4,)
        k(x, y1, 7, grid=g, block=(128,))
        calls = counted(k)
        for i in range(10):
            y = (y1, y2)[i % 2]
            k(x, y, 7, grid=g, block=(128,))
            assert addrs() == (x.ptr, y.ptr, x.ptr, y.ptr), i
        in_python(calls, 10)
        assert len(full) == 1, f"{len(full)} full-path packs"   # the first launch's only
        o = Other(0x7F0000300000)
        k(o, y1, 7, grid=g, block=(128,))
        assert addrs() == (o.ptr, y1.ptr, o.ptr, y1.ptr)
        in_python(calls, None)
        assert len(full) == 2
    """)


def test_metadata_changed_in_place_is_repacked(stub, launcher):
    run(stub, launcher, """
        recs = F.records([F.DYN, dict(F.DYN), F.SCALAR, F.DESC, dict(F.DESC, binds=1)])
        k = kernel(recs)
        x, y = T(0x7F0000000000), T(0x7F0000100000)
        for _ in range(3):
            k(x, y, 7, grid=(4,), block=(128,))
        calls = counted(k)
        before = params()
        y.shape, y.strides = (128, 512), (1024, 1)   # the same object, resized in place
        k(x, y, 7, grid=(4,), block=(128,))
        in_python(calls, None)
        fresh = kernel(recs)
        fresh(x, y, 7, grid=(4,), block=(128,))
        assert params() != before
        k(x, y, 7, grid=(4,), block=(128,))
        assert params() == bytes(last.params[:last.params_bytes_n])
        after = params()
        fresh(x, y, 7, grid=(4,), block=(128,))
        assert params() == after, "the kernel launched stale descriptors"
        y.strides = (2048, 1)                         # strides alone
        k(x, y, 7, grid=(4,), block=(128,))
        in_python(calls, None)
        assert struct.unpack_from("<q", params(), N + 40)[0] == 2048   # the memref's stride 0
        class F32:
            def __str__(self): return "torch.float32"
        y.dtype = F32()
        expect("dtype", k, x, y, 7, grid=(4,), block=(128,))
        y.dtype = F16
        y.dev = 1
        expect("device", k, x, y, 7, grid=(4,), block=(128,))
        y.dev = 0
        k(x, y, 7, grid=(4,), block=(128,))
        calls.clear()
        k(x, y, 7, grid=(4,), block=(128,))
        in_python(calls, 1)
    """)


def test_a_scalar_changed_in_place_is_repacked(stub, launcher):
    # pack_scalar takes anything with __index__/__float__: a 0-d numpy array or torch tensor, which can
    # change in place; recognized by identity, the launch repeated its old value
    run(stub, launcher, """
        class Box:   # a mutable scalar: any object with __index__
            def __init__(self, v): self.v = v
            def __index__(self): return self.v
            def set(self, v): self.v = v
        box = Box(3)
        scalars = [(box, box.set)]
        try:
            import numpy as np
        except ImportError:
            pass
        else:
            arr = np.array(3, dtype=np.int32)   # a 0-d array: int(arr) == 3
            scalars.append((arr, arr.fill))
        k = kernel()
        x, y = T(0x7F0000000000), T(0x7F0000100000)
        calls = counted(k)
        for obj, put in scalars:
            for v in (11, 12, 13, 14):   # from the third launch on the armed C entry is tried first
                put(v)
                k(x, y, obj, grid=(4,), block=(128,))
                assert struct.unpack_from("<i", params(), 2 * N)[0] == v, (type(obj).__name__, v)
            got = len(calls)
            calls.clear()
            assert got == 4, f"{got} of 4 launches of a mutable scalar were checked in Python"
        m = 5   # an int is still recognized by identity: the fast path again
        k(x, y, m, grid=(4,), block=(128,))
        in_python(calls, None)
        k(x, y, m, grid=(4,), block=(128,))
        k(x, y, m, grid=(4,), block=(128,))
        in_python(calls, 2)
        assert struct.unpack_from("<i", params(), 2 * N)[0] == 5
    """)


def test_other_keywords_take_the_python_path(stub, launcher):
    run(stub, launcher, """
        k = kernel()
        x, y = T(0x7F0000000000), T(0x7F0000100000)
        g = (4,)
        k(x, y, 7, grid=g, block=(128,))
        k(x, y, 7, grid=g, block=(128,))
        calls = counted(k)
        k(x, y, 7, grid=(2, 2), block=(128,))          # another grid: Python, then armed with it
        assert tuple(last.grid) == (2, 2, 1)
        in_python(calls, None)
        k(x, y, 7, grid=(2, 2), block=(128,))
        in_python(calls, 1)
        try:
            k(x, y, 7, grid=(2, 2), block=(128,), gird=3)
        except TypeError as e:
            assert "gird" in str(e)
        else:
            raise AssertionError("an unknown keyword launched")
        gl = [4, 2]                                      # a list may change between launches
        k(x, y, 7, grid=gl, block=(128,))
        gl[0] = 8
        k(x, y, 7, grid=gl, block=(128,))
        assert tuple(last.grid) == (8, 2, 1)
        expect("launch-config", k, x, y, 7, grid=(4,), block=(64, 64))
        calls.clear()
        s1 = types.SimpleNamespace(cuda_stream=0xCAFE0, device_index=0)
        s2 = types.SimpleNamespace(cuda_stream=0xCAFF0, device_index=0)
        # (stream, the handle launched on, Python calls: None for a new config, 1 for a repeat)
        for stream, handle, py in ((s1, 0xCAFE0, None), (s1, 0xCAFE0, 1), (s2, 0xCAFF0, None), (None, 0x5000, 1)):
            k(x, y, 7, grid=g, block=(128,), stream=stream)
            assert last.stream == handle
            in_python(calls, py)
        k(x, y, 9, grid=g, block=(128,))                # another scalar
        assert struct.unpack_from("<i", params(), 2 * N)[0] == 9
        in_python(calls, None)
        k(x, y, 9, grid=g, block=(128,))
        in_python(calls, 1)
        expect("launch-config", k, x, y, 9, grid=g, block=(128,), encoder=None)  # Kernel.__call__ decides: refused
    """)


def test_a_failed_launch_raises_launch_error(stub, launcher):
    run(stub, launcher, """
        k = kernel()
        x, y1, y2 = T(0x7F0000000000), T(0x7F0000100000), T(0x7F0000200000)
        k(x, y1, 7, grid=(4,), block=(128,))
        k(x, y1, 7, grid=(4,), block=(128,))
        calls = counted(k)
        lib.nvtmaStubFailLaunches(999)
        n = last.count
        expect("driver", k, x, y2, 7, grid=(4,), block=(128,))
        in_python(calls, 1)
        lib.nvtmaStubFailLaunches(0)
        k(x, y2, 7, grid=(4,), block=(128,))
        assert last.count == n + 1 and addrs()[1] == y2.ptr
        in_python(calls, 1)
    """)


def test_wide_cluster_on_the_fast_path_of_another_device(stub, launcher):
    """A 16-CTA cluster repeated by the fast path on a device no Python launch of it reached (its arguments
    packed by k.pack): the kernel was opted in to non-portable cluster sizes on every device (the stub fails
    such a launch without it)."""
    run(stub, launcher, """
        k = kernel(F.records(launch={"block": [128, 1, 1], "cluster": None, "smem": 0}))
        x0, y0 = T(0x7F0000000000), T(0x7F0000100000)
        x1, y1 = T(0x7F1000000000, dev=1), T(0x7F1000100000, dev=1)
        g, c2, c16 = (32,), (2,), (16,)
        k(x1, y1, 7, grid=g, cluster=c2)      # device 1 known to the fast path
        k(x0, y0, 7, grid=g, cluster=c16)     # device 0's launch opts in
        k.pack(x1, y1, 7)
        k(x1, y1, 7, grid=g, cluster=c16)
        assert list(last.cluster) == [16, 1, 1] and last.ctx == 0x1001 and last.wide_attr[1] == 1
    """)
