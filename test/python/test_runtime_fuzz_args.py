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


# --------------------------------------------------------------------------- launches (stub libcuda)

# the child process's prelude (kernel(), t(), expect()), its stub libcuda and its runner: test_runtime_launch's
from test_runtime_launch import run, stub  # noqa: E402,F401,F811 (stub: the fixture)


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
