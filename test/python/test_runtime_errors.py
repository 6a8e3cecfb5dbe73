"""Launch-time misuse: typed errors naming the argument and the rule,
checked before the driver is touched (so these run without a GPU)."""

import pytest

from helpers import FakeCudaArray
from nvtma.runtime import LaunchError
import runtime_fixtures as F

RECORDS = F.records()
MEMREF, DESC = F.MEMREF, F.DESC


@pytest.fixture
def k():
    return F.artifacts(RECORDS).kernel("k")


def ok_tensor(ptr=0x7F0000000000, shape=(256, 256), **kw):
    return FakeCudaArray(ptr, shape, **kw)


def launch(k, *args, **kw):
    kw.setdefault("grid", (4, 4))
    kw.setdefault("block", (128,))
    k(*args, **kw)


def test_wrong_argument_count(k):
    with pytest.raises(LaunchError, match="takes 3 arguments") as e:
        launch(k, ok_tensor(), ok_tensor())
    assert e.value.rule == "arg-count"


def test_wrong_dtype(k):
    with pytest.raises(LaunchError, match="argument 0: element type f32") as e:
        launch(k, ok_tensor(typestr="<f4"), ok_tensor(), 1)
    assert e.value.rule == "dtype" and e.value.arg == "argument 0"


def test_wrong_rank_and_shape(k):
    with pytest.raises(LaunchError, match="rank 3") as e:
        launch(k, ok_tensor(shape=(2, 256, 256)), ok_tensor(), 1)
    assert e.value.rule == "rank"
    with pytest.raises(LaunchError, match="dim 1 is 128") as e:
        launch(k, ok_tensor(), ok_tensor(shape=(256, 128)), 1)
    assert e.value.rule == "shape" and e.value.arg == "argument 1"


def test_misaligned_pointer(k):
    with pytest.raises(LaunchError, match="not 16-byte aligned") as e:
        launch(k, ok_tensor(ptr=0x7F0000000002), ok_tensor(), 1)
    assert e.value.rule == "alignment"


def test_memref_alignment_its_kernel_assumes():
    """A memref record's "align" (what its kernel's vector accesses, cp.async,
    bulk copies or tensormap.replace assume) is checked at launch on the
    address and on each dynamic outer stride in bytes."""
    from nvtma.runtime import args
    x = dict(F.DYN, element="bf16", type="memref<?x?xbf16>", align=16)

    def info(ptr, shape=(4, 64), strides=(64, 1)):
        return args.TensorInfo(ptr, shape, strides, "bf16", 16)

    args.check_memref(info(0x7F0000000000), x, "x")
    why = "its kernel's accesses assume 16"
    with pytest.raises(LaunchError, match=f"x: address 0x7f0000000002 is not 16-byte aligned; {why}") as e:
        args.check_memref(info(0x7F0000000002), x, "x")
    assert (e.value.rule, e.value.arg) == ("alignment", "x")
    with pytest.raises(LaunchError, match="x: stride 0 is 130 bytes, not a multiple of 16") as e:
        args.check_memref(info(0x7F0000000000, strides=(65, 1)), x, "x")
    assert (e.value.rule, e.value.arg) == ("alignment", "x")
    args.check_memref(info(0x7F0000000000, (1, 64), (65, 1)), x, "x")   # one row: its stride is never stepped
    plain = {k: v for k, v in x.items() if k != "align"}
    args.check_memref(info(0x7F0000000002, strides=(65, 1)), plain, "x")  # no record, no rule
    args.check_memref(info(0x7F0000000002, (0, 64), (65, 1)), x, "x")   # empty: nothing of it is accessed
    # a static stride too: a kernel compiled with one its own accesses cannot take is refused at each launch
    fixed = dict(x, shape=[None, 100], strides=[100, 1], type="memref<?x100xbf16>")
    with pytest.raises(LaunchError, match="x: stride 0 is 200 bytes, not a multiple of 16"):
        args.check_memref(info(0x7F0000000000, (4, 100), (100, 1)), fixed, "x")
    # sub-byte elements: a stride's bytes, not its elements (16 4-bit values are 8 bytes)
    f4 = dict(x, element="f4E2M1FN", type="memref<?x?xf4E2M1FN>")
    args.check_memref(args.TensorInfo(0x7F0000000000, (4, 64), (32, 1), "f4E2M1FN", 4), f4, "x")
    with pytest.raises(LaunchError, match="x: stride 0 is 8 bytes, not a multiple of 16"):
        args.check_memref(args.TensorInfo(0x7F0000000000, (4, 16), (16, 1), "f4E2M1FN", 4), f4, "x")
    # and at launch, before the driver
    kk = F.artifacts({"kernels": {"k": {"params": [dict(MEMREF, align=16), dict(MEMREF), F.SCALAR]}}}).kernel("k")
    with pytest.raises(LaunchError, match="argument 0: address 0x7f0000000008 is not 16-byte aligned") as e:
        launch(kk, ok_tensor(ptr=0x7F0000000008), ok_tensor(), 1)
    assert (e.value.rule, e.value.arg) == ("alignment", "argument 0")


def test_a_written_memref_refuses_a_view_whose_elements_share_memory():
    """A memref record's "writes" (the kernel may write it): a view with elements at one address (an expanded
    dim, strides that meet) is refused at launch, where the kernel's writes to them collided silently; a
    read-only one (no "writes") takes it, and distinct layouts pass (transposed, padded, interleaved)."""
    from nvtma.runtime import args
    w = dict(F.DYN, element="f32", strides=[None, None], type="memref<?x?xf32, strided<[?, ?]>>", writes=True)

    def info(shape, strides):
        return args.TensorInfo(0x7F0000000000, shape, strides, "f32", 32)

    for shape, strides in (((4, 64), (0, 1)), ((64, 2), (1, 1)), ((3, 2), (1, 2)), ((2048, 1024), (512, 1))):
        with pytest.raises(LaunchError, match=r"x: a view whose elements share memory \(shape \(\d+, \d+\), "
                           r"strides .*the kernel writes it.*\.contiguous\(\)") as e:
            args.check_memref(info(shape, strides), w, "x")
        assert (e.value.rule, e.value.arg) == ("overlap", "x")
        args.check_memref(info(shape, strides), {k: v for k, v in w.items() if k != "writes"}, "x")
    for shape, strides in (((4, 64), (64, 1)), ((4, 64), (1, 4)), ((4, 64), (80, 1)), ((3, 2), (2, 3)),
                           ((1, 64), (0, 1)), ((0, 64), (0, 1)), ((4, 1), (1, 0))):
        args.check_memref(info(shape, strides), w, "x")
    # strides that do not nest are counted exactly, once per layout: a loop launching with it pays that once
    before = args._offsets_meet.cache_info()
    for _ in range(3):
        args.check_memref(info((3, 1000), (1001, 3)), w, "x")
    after = args._offsets_meet.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 2)
    # and at launch, before the driver
    kk = F.artifacts({"kernels": {"k": {"params": [dict(F.DYN), dict(F.DYN, writes=True), F.SCALAR]}}}).kernel("k")
    with pytest.raises(LaunchError, match="argument 1: a view whose elements share memory") as e:
        launch(kk, ok_tensor(), ok_tensor(strides=(0, 2)), 1)
    assert (e.value.rule, e.value.arg) == ("overlap", "argument 1")
    with pytest.raises(Exception) as e:  # the same view read only: past the checks (no GPU here)
        launch(kk, ok_tensor(strides=(0, 2)), ok_tensor(), 1)
    assert getattr(e.value, "rule", None) != "overlap"


def test_a_tensor_tensormap_replace_writes_meets_the_drivers_rules():
    """A memref record's "tensormaps" (tensormap.replace writes its address,
    dims and byte strides into descriptors of those fields on the device,
    where no driver checks them): the launch runs the driver's rules on them
    and names the argument and the TMA rule."""
    from nvtma.runtime import args
    b = dict(F.DYN, tensormaps=[dict(F.TMAP)])   # no "align": the descriptor's own rules

    def info(shape=(192, 320), strides=None, ptr=0x7F0000000000):
        return args.TensorInfo(ptr, shape, strides or (shape[1], 1), "f16", 16)

    args.check_memref(info(), b, "B")
    args.check_memref(info((1, 64)), b, "B")          # a box larger than the tensor: the driver allows it
    for bad, rule, match in [
        (info((0, 64)), "global-dim-range", r"B: global-dim-range: global dim 1 is 0, the range is 1\.\.2\^32 "
                                            r"\(tensor dim 0\); tensormap\.replace writes it into a descriptor"),
        (info((2, 64), (1 << 39, 1)), "global-stride-range", r"global stride 0 is 1099511627776 bytes"),
        (info((1 << 33, 64)), "global-dim-range", r"global dim 1 is 8589934592"),
        (info((1 << 32, 64)), "global-dim-range", r"global dim 1 is 4294967296, the limit is below 2\^32 "
                                                  r"\(tensor dim 0\).*as a 32-bit operand"),
        (info(ptr=1 << 57), "address-range", r"past the 57-bit address space"),
        (info(ptr=0x7F0000000008), "alignment", r"address 0x7f0000000008 is not 16-byte aligned"),
        (info(ptr=0), "address-range", r"address 0x0"),
        (info((0, 64), ptr=0), "global-dim-range", r"global dim 1 is 0"),   # torch.empty(0, 64): a null address
    ]:
        with pytest.raises(LaunchError, match=match) as e:
            args.check_memref(bad, b, "B")
        assert (e.value.arg, e.value.rule) == ("B", rule), str(e.value)
    # the fields are the recorded atom's: a 64-byte swizzle caps the inner box, not the tensor
    args.check_memref(info(), dict(b, tensormaps=[dict(F.TMAP, swizzle=2, box_dim=[32, 64])]), "B")
    # without the record no rule of it applies
    args.check_memref(info((0, 64)), F.DYN, "B")
    # and at launch, before the driver
    kk = F.artifacts({"kernels": {"k": {"params": [dict(b), dict(MEMREF), F.SCALAR]}}}).kernel("k")
    with pytest.raises(LaunchError, match="argument 0: global-dim-range: global dim 1 is 0") as e:
        launch(kk, ok_tensor(shape=(0, 64)), ok_tensor(), 1)
    assert (e.value.arg, e.value.rule) == ("argument 0", "global-dim-range")
    with pytest.raises(LaunchError, match="argument 0: global-stride-range") as e:
        launch(kk, ok_tensor(shape=(2, 64), strides=(1 << 40, 2)), ok_tensor(), 1)
    assert (e.value.arg, e.value.rule) == ("argument 0", "global-stride-range")
    kk.pack(ok_tensor(shape=(192, 320)), ok_tensor(), 1)


BIG = 1 << 31  # the first dim no signed 32-bit TMA coordinate reaches the end of
COORD = r"TMA copies take signed 32-bit coordinates, none reaches element 2\^31 of a dim"


def test_a_descriptors_dims_past_signed_32_bit_coordinates_are_refused(monkeypatch):
    """A descriptor takes dims up to 2^32 (the driver and nvtma's encoder
    agree), but TMA copies take s32 coordinates (the lowering truncates each
    to i32, in every mode): a tensor dim of 2^31 elements or more bound to
    a descriptor left the boxes from element 2^31 on unreachable (a
    coordinate there wraps negative: zeros loaded, nothing stored), a
    silently short copy. Refused at launch naming the tensor dim, the value
    and the limit, with either encoder, for tiled and im2col descriptors,
    a compiler-encoded template's static shape and the descriptors
    tensormap.replace writes a tensor into."""
    from nvtma.runtime import args, driver
    from nvtma import tensormap as tm
    k = F.artifacts(F.records([F.DYN, F.SCALAR, dict(DESC)])).kernel("k")
    for shape, dim in (((BIG, 64), 0), ((64, BIG), 1), ((1 << 32, 64), 0)):
        with pytest.raises(LaunchError, match=rf"^argument 0: coordinate-range: tensor dim {dim} is {max(shape)} "
                                              rf"elements, the limit is 2\^31 - 1 \(descriptor dim {1 - dim}\); "
                                              rf"{COORD}$") as e:
            k.pack(ok_tensor(shape=shape), 1)
        assert (e.value.arg, e.value.rule) == ("argument 0", "coordinate-range")
    with pytest.raises(LaunchError, match="global dim 1 is 4294967297, the range is 1..2") as e:
        k.pack(ok_tensor(shape=((1 << 32) + 1, 64)), 1)   # past the driver's own limit: its rule, first
    assert e.value.rule == "global-dim-range"
    k.pack(ok_tensor(shape=(BIG - 1, 64)), 1)
    k.pack(ok_tensor(shape=(64, BIG - 64)), 1)

    # the driver's encoder (a stand-in here: the test has no driver) is checked alike
    monkeypatch.setattr(driver, "driver_encode", lambda mode, p: tm.encode_tiled(**p))
    k.pack(ok_tensor(shape=(BIG - 1, 64)), 1, encoder="driver")
    with pytest.raises(LaunchError, match=rf"tensor dim 0 is {BIG} elements") as e:
        k.pack(ok_tensor(shape=(BIG, 64)), 1, encoder="driver")
    assert e.value.rule == "coordinate-range"

    # im2col (NHWC as rank 4): its coordinates are s32 too
    col = dict(DESC, mode="im2col", rank=4, element_strides=[1, 1, 1, 1], swizzle=0, pixel_box_lower_corner=[0, 0],
               pixel_box_upper_corner=[0, 0], channels_per_pixel=64, pixels_per_column=64)
    del col["box_dim"]
    nhwc = dict(F.DYN, shape=[None] * 4, strides=[None, None, None, 1], type="memref<?x?x?x?xf16>")
    kc = F.artifacts(F.records([nhwc, F.SCALAR, col])).kernel("k")
    kc.pack(ok_tensor(shape=(2, 8, 8, 64)), 1)
    with pytest.raises(LaunchError, match=rf"tensor dim 0 is {BIG} elements.*\(descriptor dim 3\)") as e:
        kc.pack(ok_tensor(shape=(BIG, 1, 1, 64)), 1)
    assert e.value.rule == "coordinate-range"

    # a static tensor's compiler-encoded template (the driver's rules passed it at compile time)
    static = dict(MEMREF, shape=[BIG, 64], strides=[64, 1], type=f"memref<{BIG}x64xf16>")
    recs = F.records([static, F.SCALAR, dict(DESC)])
    recs["kernels"]["k"]["params"][2]["template"] = F.template_for(DESC, (BIG, 64))
    with pytest.raises(LaunchError, match=rf"^argument 0: coordinate-range: tensor dim 0 is {BIG}") as e:
        F.artifacts(recs).kernel("k").pack(ok_tensor(shape=(BIG, 64)), 1)
    assert e.value.rule == "coordinate-range"

    # tensormap.replace: the dims it writes go through the same copies
    b = dict(F.DYN, tensormaps=[dict(F.TMAP)])
    with pytest.raises(LaunchError, match=rf"^B: coordinate-range: tensor dim 0 is {BIG} elements.*; tensormap\.replace "
                                          r"writes it into a descriptor") as e:
        args.check_memref(args.TensorInfo(0x7F0000000000, (BIG, 64), (64, 1), "f16", 16), b, "B")
    assert (e.value.arg, e.value.rule) == ("B", "coordinate-range")
    args.check_memref(args.TensorInfo(0x7F0000000000, (BIG - 1, 64), (64, 1), "f16", 16), b, "B")


def test_non_contiguous(k):
    with pytest.raises(LaunchError, match="stride 0 is 512") as e:
        launch(k, ok_tensor(strides=(1024, 2)), ok_tensor(), 1)
    assert e.value.rule == "contiguity"


def test_host_arrays_and_non_tensors(k):
    np = pytest.importorskip("numpy")
    with pytest.raises(LaunchError, match="host array") as e:
        launch(k, np.zeros((256, 256), np.float16), ok_tensor(), 1)
    assert e.value.rule == "device"
    with pytest.raises(LaunchError, match="is not a GPU tensor"):
        launch(k, "tensor", ok_tensor(), 1)


def test_scalar_type_and_range(k):
    with pytest.raises(LaunchError, match="float for an integer parameter"):
        launch(k, ok_tensor(), ok_tensor(), 1.5)
    with pytest.raises(LaunchError, match="does not fit i32"):
        launch(k, ok_tensor(), ok_tensor(), 1 << 40)


@pytest.mark.parametrize("signed, bad, good", [
    (True, [1 << 31, -(1 << 31) - 1], [-(1 << 31), (1 << 31) - 1]),
    (False, [-1, 1 << 32], [0, (1 << 32) - 1]),
    (None, [-(1 << 31) - 1, 1 << 32], [-(1 << 31), (1 << 32) - 1]),   # a record from before "signed"
])
def test_scalar_range_follows_the_records_signedness(signed, bad, good):
    """An i32 record's "signed" bounds a Python int by the signed or the
    unsigned range: the bits alone let an Int32 take 3e9 (reaching the kernel
    negative) and a Uint32 take -1. Without the field, either reading."""
    import struct
    p = dict(F.SCALAR) if signed is None else dict(F.SCALAR, signed=signed)
    k = F.artifacts(F.records([F.MEMREF, p])).kernel("k")
    rng = {True: r"i32, the range is -2147483648\.\.2147483647", False: r"unsigned i32, the range is 0\.\.4294967295",
           None: r"i32, the range is -2147483648\.\.4294967295"}[signed]
    for v in bad:
        with pytest.raises(LaunchError, match=f"argument 1: {v} does not fit {rng}") as e:
            k.pack(ok_tensor(), v)
        assert (e.value.arg, e.value.rule) == ("argument 1", "range")
    for v in good:
        k.pack(ok_tensor(), v)
        assert struct.unpack("<I", k.param_bytes()[1])[0] == v & 0xFFFFFFFF


def test_dsl_int32_and_uint32_parameters_are_bounded_by_their_sign():
    """The DSL's signedness reaches the record (nvtma.unsigned on a Uint
    parameter): Int32 takes -2^31..2^31-1, Uint32 0..2^32-1."""
    pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")
    import struct
    import nvtma
    from nvtma import dsl

    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (64,)), n: dsl.Int32, u: dsl.Uint32):
        with dsl.if_(dsl.thread_idx().to(dsl.Int32) < n):
            x[dsl.thread_idx()] = u.to(dsl.Float32)

    mod = nvtma.compile(k.build().ir, cubin=False)
    assert [p.get("signed") for p in mod.records["kernels"]["k"]["params"]] == [None, True, False]
    kk = mod.kernel("k")
    x = ok_tensor(shape=(64,), typestr="<f4")
    with pytest.raises(LaunchError, match="argument 1: 2147483648 does not fit i32") as e:
        kk.pack(x, 1 << 31, 0)
    assert e.value.rule == "range"
    with pytest.raises(LaunchError, match="argument 2: -1 does not fit unsigned i32") as e:
        kk.pack(x, 0, -1)
    assert e.value.rule == "range"
    kk.pack(x, -(1 << 31), (1 << 32) - 1)
    b = kk.param_bytes()
    assert struct.unpack("<i", b[1])[0] == -(1 << 31) and struct.unpack("<I", b[2])[0] == (1 << 32) - 1


def test_launch_config(k):
    with pytest.raises(LaunchError, match="more than 1024 threads"):
        launch(k, ok_tensor(), ok_tensor(), 1, block=(64, 32))
    with pytest.raises(LaunchError, match="not a multiple of cluster"):
        launch(k, ok_tensor(), ok_tensor(), 1, grid=(3,), cluster=(2,))
    with pytest.raises(LaunchError, match="smem"):
        launch(k, ok_tensor(), ok_tensor(), 1, smem=300000)
    with pytest.raises(LaunchError, match="range is 1"):
        launch(k, ok_tensor(), ok_tensor(), 1, grid=(0,))


def test_descriptor_rules_at_launch(k):
    # a 260-byte row pitch breaks the driver's stride rule for the descriptor
    rec = dict(RECORDS)
    m = dict(MEMREF, shape=[None, None], strides=[None, 1], type="memref<?x?xf16>")
    rec = {"kernels": {"k": {"params": [m, dict(m), dict(kind="scalar", type="i32", bits=32), DESC,
                                        dict(DESC, binds=1)]}}}
    kk = F.artifacts(rec).kernel("k")
    with pytest.raises(LaunchError, match="global-stride-align") as e:
        launch(kk, ok_tensor(shape=(256, 130)), ok_tensor(shape=(256, 130)), 1)
    assert e.value.rule == "global-stride-align"


def test_unknown_kernel():
    art = F.artifacts(RECORDS)
    with pytest.raises(AttributeError, match="no kernel 'nope'"):
        art.kernel("nope")
