"""Host-side robustness of launch arguments (a host-side fuzz
campaign's findings 3, 4 and 9): scalars given as tensors or arrays, malformed
__cuda_array_interface__ fields and odd launch keywords are LaunchErrors
naming the argument and the rule, never truncated, coerced or let through
as Python's own exceptions. The launches run against the stand-in libcuda
(cuda_stub), so these need no GPU."""

import pytest

import runtime_fixtures as F
from helpers import FakeCudaArray
from nvtma.runtime import LaunchError

P = 0x7F0000000000


@pytest.fixture
def k():
    # tile_copy's record: two memref<256x256xf16>, an i32, two descriptors
    return F.artifacts(F.records()).kernel("k")


def t(ptr=P, shape=(256, 256), **kw):
    return FakeCudaArray(ptr, shape, **kw)


def test_finding3_scalar_tensors_and_arrays_are_never_truncated(k):
    """A 0-d float tensor or array for an integer parameter is refused as a
    Python float is (int() truncated 2.7 to 2); a tensor or array of more
    than 0 dims for any scalar parameter is a LaunchError naming it (was
    torch's ValueError or numpy's TypeError); 0-d integer ones still pack."""
    import struct
    np = pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    with pytest.raises(LaunchError, match=r"^argument 2: float for an integer parameter \(i32\)$") as e:
        k.pack(t(), t(), 2.7)
    assert (e.value.arg, e.value.rule) == ("argument 2", "type")
    for v, what in ((torch.tensor(2.7), r"Tensor \(torch\.float32\)"), (np.array(2.7), r"ndarray \(float64\)"),
                    (torch.tensor(True), r"Tensor \(torch\.bool\)")):
        with pytest.raises(LaunchError, match=rf"^argument 2: {what} for an integer parameter \(i32\)$") as e:
            k.pack(t(), t(), v)
        assert (e.value.arg, e.value.rule) == ("argument 2", "type")
    for v, what in ((torch.tensor([1, 2]), r"Tensor \(torch\.int64\) of shape \(2,\)"),
                    (np.array([1, 2]), r"ndarray \(int64\) of shape \(2,\)"),
                    (np.array([3]), r"ndarray \(int64\) of shape \(1,\)")):
        with pytest.raises(LaunchError, match=rf"^argument 2: {what} for a scalar parameter \(i32\)") as e:
            k.pack(t(), t(), v)
        assert (e.value.arg, e.value.rule) == ("argument 2", "type")
    fk = F.artifacts(F.records([F.MEMREF, dict(kind="scalar", type="f32", bits=32)])).kernel("k")
    with pytest.raises(LaunchError, match=r"^argument 1: Tensor \(torch\.float32\) of shape \(2,\) for a scalar "
                                          r"parameter \(f32\)") as e:
        fk.pack(t(), torch.tensor([1.0, 2.0]))
    assert e.value.rule == "type"
    for v in (torch.tensor(7), np.array(7), np.int64(7), torch.tensor(7, dtype=torch.uint8)):
        k.pack(t(), t(), v)
        assert struct.unpack("<i", k.param_bytes()[2])[0] == 7
    fk.pack(t(), torch.tensor(2.5))
    assert struct.unpack("<f", fk.param_bytes()[1])[0] == 2.5


class _CAI:
    def __init__(self, cai):
        self.__cuda_array_interface__ = cai


class _NoGet:  # indexable, but not a mapping
    def __getitem__(self, key):
        return {"typestr": "<f2", "shape": (256, 256), "data": (P, False)}[key]


def _cai(**kw):
    d = dict(data=(P, False), shape=(256, 256), typestr="<f2", strides=None, version=3)
    d.update(kw)
    return _CAI(d)


@pytest.mark.parametrize("obj, rule, message", [
    (_cai(strides=(512.0, 2.0)), "stride", r"strides \(512\.0, 2\.0\): 512\.0 is not an int"),
    (_cai(strides=5), "stride", r"strides 5: pass a tuple of ints"),
    (_cai(strides=(None, 2)), "stride", r"strides \(None, 2\): None is not an int"),
    (_cai(strides="ab"), "stride", r"strides 'ab': pass a tuple of ints"),
    (_cai(strides=(512, True)), "stride", r"strides \(512, True\): True is not an int"),
    (_cai(shape=(256.7, 256)), "shape", r"shape \(256\.7, 256\): 256\.7 is not an int"),
    (_cai(shape=("256", 256)), "shape", r"shape \('256', 256\): '256' is not an int"),
    (_cai(shape=256), "shape", r"shape 256: pass a tuple of ints"),
    (_cai(version="3"), "cuda-array-interface", r"version '3' is not an int"),
    (_cai(version=None), "cuda-array-interface", r"version None is not an int"),
    (_cai(stream=-1), "cuda-array-interface", r"stream -1 is not a 64-bit handle"),
    (_cai(stream=1 << 64), "cuda-array-interface", r"stream 18446744073709551616 is not a 64-bit handle"),
    (_cai(stream="5"), "cuda-array-interface", r"stream '5' is not an int"),
    (_cai(stream=0), "cuda-array-interface", r"stream 0; the interface forbids it"),
    (_cai(data=(1 << 64, False)), "address", r"data pointer 0x10000000000000000 is not a 64-bit address"),
    (_CAI(_NoGet()), "cuda-array-interface", r"malformed __cuda_array_interface__ \(a _NoGet, not a dict\)"),
])
def test_finding4_malformed_cuda_array_interface_fields(k, obj, rule, message):
    """Each field is checked where the interface's dict is read: untyped
    exceptions (struct.error, TypeError, OverflowError from cuda.bindings,
    AttributeError) and coercions (int(256.7), int('256')) were the
    answers before."""
    with pytest.raises(LaunchError, match=message) as e:
        k.pack(obj, t(), 1)
    assert (e.value.arg, e.value.rule) == ("argument 0", rule)
    assert "argument 0:" in str(e.value)


def test_finding4_valid_interfaces_still_pack(k):
    """What the interface allows keeps working: strides given, a list shape,
    numpy integers, a v3 stream, a v2 dict without one."""
    np = pytest.importorskip("numpy")
    k.pack(_cai(strides=(512, 2)), t(), 1)
    k.pack(_cai(shape=[256, 256], strides=[512, 2]), t(), 1)
    k.pack(_cai(shape=(np.int64(256), 256), strides=(np.int64(512), 2)), t(), 1)
    k.pack(_cai(shape=(256, 256), version=2, stream="ignored before v3"), t(), 1)
    from nvtma.runtime import args
    info = args.from_cai(_cai(stream=(1 << 64) - 1), "x")
    assert info.shape == (256, 256) and info.strides == (256, 1) and info.stream == (1 << 64) - 1


# --------------------------------------------------------------------------- malformed DLPack capsules

class _Capsule:
    """A __dlpack__ producer over a hand-made DLManagedTensor (legacy or
    versioned capsule), each field settable, NULL pointers included."""

    def __init__(self, data=P, shape=(256, 256), strides=None, ndim=None, dtype=(2, 16, 1), byte_offset=0,
                 null_shape=False, versioned=False):
        import ctypes
        from nvtma.runtime import args as A
        self._shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self._strides = None if strides is None else (ctypes.c_int64 * max(len(strides), 1))(*strides)
        self.m = A._DLManagedTensorVersioned() if versioned else A._DLManagedTensor()
        if versioned:
            self.m.major, self.m.minor = 1, 0
        tensor = self.m.dl_tensor
        tensor.data = data
        tensor.device.device_type, tensor.device.device_id = 2, 0
        tensor.ndim = len(shape) if ndim is None else ndim
        tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes = dtype
        if not null_shape:
            tensor.shape = self._shape
        if self._strides is not None:
            tensor.strides = self._strides
        tensor.byte_offset = byte_offset
        self.name = b"dltensor_versioned" if versioned else b"dltensor"

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None, max_version=None):
        import ctypes
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.m), self.name, None)


@pytest.mark.parametrize("versioned", [False, True], ids=["legacy", "versioned"])
@pytest.mark.parametrize("kw, rule, message", [
    (dict(null_shape=True), "dlpack", r"^x: the DLPack tensor's shape is a NULL pointer for ndim 2$"),
    (dict(byte_offset=(1 << 64) - 16), "address",
     r"^x: DLPack data 0x7f0000000000 \+ byte_offset 18446744073709551600 is 0x100007efffffffff0, not a 64-bit "
     r"address$"),
    (dict(data=(1 << 64) - 256, byte_offset=512), "address", r"^x: DLPack data 0xffffffffffffff00 \+ byte_offset 512"),
    (dict(ndim=65), "rank", r"^x: DLPack ndim 65, the range is 0\.\.64$"),
    (dict(ndim=-1), "rank", r"^x: DLPack ndim -1, the range is 0\.\.64$"),
    (dict(dtype=(2, 16, 2)), "dtype", r"^x: DLPack dtype \(code 2, 16 bits, 2 lanes\) has no kernel element type$"),
    (dict(shape=(256, -1)), "shape", r"^x: DLPack shape \(256, -1\)$"),
], ids=["null-shape", "byte-offset-wraps", "data-plus-offset-wraps", "ndim-65", "ndim-negative", "lanes",
        "negative-dim"])
def test_malformed_dlpack_capsules_are_launch_errors(kw, rule, message, versioned):
    """Each field of the DLTensor a capsule holds is checked as it is read:
    a NULL shape with ndim > 0 was ctypes' ValueError("NULL pointer
    access"), a data pointer plus byte_offset past 2^64 a struct.error when
    the memref was packed; ndim, lanes and negative dims were refused
    already."""
    from nvtma.runtime import args
    bad = _Capsule(versioned=versioned, **kw)
    with pytest.raises(LaunchError, match=message) as e:
        args.from_dlpack(bad, "x")
    assert (e.value.arg, e.value.rule) == ("x", rule)
    dyn = F.artifacts(F.records([F.DYN, F.SCALAR])).kernel("k")
    with pytest.raises(LaunchError) as e:
        dyn.pack(bad, 1)
    assert (e.value.arg, e.value.rule) == ("argument 0", rule)


def test_valid_dlpack_capsules_still_read():
    """NULL strides are a compact row-major tensor (DLPack before 1.2), a
    NULL shape with ndim 0 is a scalar, byte_offset is added to the data
    pointer."""
    from nvtma.runtime import args
    info = args.from_dlpack(_Capsule(), "x")
    assert (info.ptr, info.shape, info.strides, info.elem) == (P, (256, 256), (256, 1), "f16")
    info = args.from_dlpack(_Capsule(shape=(4, 8, 16), strides=(256, 32, 1), byte_offset=64, versioned=True), "x")
    assert (info.ptr, info.shape, info.strides) == (P + 64, (4, 8, 16), (256, 32, 1))
    info = args.from_dlpack(_Capsule(shape=(), null_shape=True), "x")
    assert (info.shape, info.strides) == ((), ())
    F.artifacts(F.records([F.DYN, F.SCALAR])).kernel("k").pack(_Capsule(), 1)


def test_memref_sizes_and_strides_past_64_bits_are_launch_errors():
    """A lowered memref's sizes and strides are signed 64-bit words: an
    interface's Python ints past them, or a DLPack tensor's compact strides
    computed from a huge shape, were struct.error("argument out of range")
    when packed."""
    d3 = dict(F.DYN, shape=[None, None, None], strides=[None, None, 1], type="memref<?x?x?xf16>")
    k3 = F.artifacts(F.records([d3, F.SCALAR])).kernel("k")
    dyn = F.artifacts(F.records([F.DYN, F.SCALAR])).kernel("k")
    for kern, bad, rule, message in [
        (dyn, _cai(shape=(1 << 70, 4)), "shape", r"^argument 0: dim 0 is 1180591620717411303424, past a memref "
                                                 r"size's signed 64 bits$"),
        (dyn, _cai(strides=(1 << 70, 2)), "stride", r"^argument 0: stride 0 is 590295810358705651712 elements, "
                                                    r"past a memref stride's signed 64 bits$"),
        (dyn, _cai(strides=(-(1 << 70), 2)), "stride", r"stride 0 is -590295810358705651712 elements"),
        (k3, _Capsule(shape=(2, 1 << 32, 1 << 32)), "stride", r"^argument 0: stride 0 is 18446744073709551616 "
                                                             r"elements, past a memref stride's signed 64 bits$"),
    ]:
        with pytest.raises(LaunchError, match=message) as e:
            kern.pack(bad, 1)
        assert (e.value.arg, e.value.rule) == ("argument 0", rule)
    k3.pack(_Capsule(shape=(2, 1 << 31, 1 << 31)), 1)   # the largest compact strides still pack
    assert k3.param_bytes()[0][-24:-16] == (1 << 62).to_bytes(8, "little")


# --------------------------------------------------------------------------- launches (stub libcuda)

# the child process's prelude (kernel(), t(), expect()) and runner: test_runtime_launch's (the stub: conftest's)
from test_runtime_launch import run  # noqa: E402


def test_finding9_stream_encoder_and_grid_keywords(stub):
    """A getPtr object without __int__ and a non-int device_index are stream
    errors (were a TypeError and "stream is on cuda:0, the tensors on
    cuda:0"); an unknown encoder is refused with the valid ones (was taken
    as nvtma's without its cache); numpy integers are launch dims on a fresh
    kernel as after a cached config, and a float or bool equal to a cached
    dim is refused there as on a fresh kernel (the cache hit let it through)."""
    run(stub, """
        import numpy as np
        from fractions import Fraction
        k = kernel()
        kw = dict(block=(128,))
        class GetPtrOnly:
            def getPtr(self): return 0
        msg = expect("stream", k, t(), t(), 7, grid=(4,), stream=GetPtrOnly(), **kw)
        assert "int() failed" in msg, msg
        class TorchLike:
            cuda_stream, device_index = 0x5550, "0"
        msg = expect("stream", k, t(), t(), 7, grid=(4,), stream=TorchLike(), **kw)
        assert msg == "stream.device_index is '0', not a CUDA device ordinal (an int)", msg
        TorchLike.device_index = np.int64(0)
        k(t(), t(), 7, grid=(4,), stream=TorchLike(), **kw)
        assert last.stream == 0x5550
        for bad in ("bogus", None, ""):
            msg = expect("launch-config", k, t(), t(), 7, grid=(4,), encoder=bad, **kw)
            assert msg == f"encoder={bad!r}: pass one of 'nvtma', 'driver'", msg

        fresh = kernel()
        n = last.count
        fresh(t(), t(), 7, grid=(np.int64(4), np.int32(2)), **kw)
        assert last.count == n + 1 and tuple(last.grid) == (4, 2, 1), tuple(last.grid)
        fresh(t(), t(), 7, grid=np.int64(3), block=(np.int64(128),), smem=np.int64(0))
        assert tuple(last.grid) == (3, 1, 1) and tuple(last.block) == (128, 1, 1)
        for k2 in (kernel(), fresh):   # before and after a config of equal ints is cached
            k2(t(), t(), 7, grid=(4,), **kw)
            k2(t(), t(), 7, grid=[1, 1], block=[128], smem=0)
            for grid in ((4.0,), (Fraction(4),), (True,), [True, 1], (np.float64(4),)):
                expect("launch-config", k2, t(), t(), 7, grid=grid, **kw)
            expect("launch-config", k2, t(), t(), 7, grid=(4,), block=(128.0,))
            expect("launch-config", k2, t(), t(), 7, grid=[1, 1], block=[128], smem=0.0)
            expect("launch-config", k2, t(), t(), 7, grid=[1, 1], block=[128], smem=False)
            k2(t(), t(), 7, grid=(np.int64(4),), **kw)
            assert tuple(last.grid) == (4, 1, 1)
    """)
