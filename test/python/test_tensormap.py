"""nvtma.tensormap: byte-exact against the driver's recorded output, its
rules, decode, the CLI and property tests."""

import gzip
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from helpers import REPO
from nvtma import tensormap as tm

VECTORS = sorted((REPO / "test" / "TensorMap" / "vectors").glob("driver_sm90*.jsonl.gz"))


def _load(path):
    with gzip.open(path, "rt") as f:
        header = json.loads(f.readline())["header"]
        return header, [json.loads(line) for line in f]


def _encode(c):
    if c["api"] == "tiled":
        return tm.encode_tiled(c["dtype"], c["rank"], c["addr"], c["dims"], c["strides"], c["box"], c["es"],
                               c["interleave"], c["swizzle"], c["l2"], c["oob"])
    return tm.encode_im2col(c["dtype"], c["rank"], c["addr"], c["dims"], c["strides"], c["lower"], c["upper"],
                            c["cpp"], c["ppc"], c["es"], c["interleave"], c["swizzle"], c["l2"], c["oob"])


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.name)
def test_driver_vectors_byte_exact_and_same_verdict(path):
    header, cases = _load(path)
    assert header["device"] == "NVIDIA H200"
    assert len(cases) >= 20000
    accepted = sum(c["ok"] for c in cases)
    assert accepted >= 5000
    verdict_mismatch, byte_mismatch = [], []
    for c in cases:
        try:
            got = _encode(c)
            ok = True
        except tm.TensorMapError:
            ok = False
        if ok != c["ok"]:
            verdict_mismatch.append(c)
        elif ok and got.hex() != c["hex"]:
            byte_mismatch.append(c)
    assert not verdict_mismatch, f"{len(verdict_mismatch)} verdicts differ, first: {verdict_mismatch[0]}"
    assert not byte_mismatch, f"{len(byte_mismatch)} encodings differ, first: {byte_mismatch[0]}"


def _verdict(fn):
    try:
        return fn()
    except tm.TensorMapError as e:
        return e.rule


@pytest.mark.parametrize("path", VECTORS[:1], ids=lambda p: p.name)
def test_encode_fast_paths_agree_with_the_checked_path(path, monkeypatch):
    """encode_tiled's abi3 extension and the checked path give the same
    bytes or the same refused rule."""
    assert tm._fast_module(), "the _tensormap_fast extension was not built or does not load"
    _, cases = _load(path)
    cases = [c for c in cases if c["api"] == "tiled"][:6000]
    with_ext = [_verdict(lambda: _encode(c)) for c in cases]
    monkeypatch.setattr(tm, "_fast_c", False)
    without_ext = [_verdict(lambda: _encode(c)) for c in cases]
    checked = [_verdict(lambda: tm._encode(tm._tiled_params(
        c["dtype"], c["rank"], c["addr"], c["dims"], c["strides"], c["box"], c["es"], c["interleave"],
        c["swizzle"], c["l2"], c["oob"]), 90)) for c in cases]
    assert sum(isinstance(v, bytes) for v in checked) > 1000
    assert with_ext == checked and without_ext == checked
    # odd arguments leave the extension and get the checked path's verdict
    for odd in (dict(rank=2.0), dict(global_dim=(16384, -1)), dict(box_dim=(64, 1 << 33)), dict(swizzle="128B?"),
                dict(global_dim=range(128, 130)), dict(dtype=tm.DataType.BFLOAT16), dict(global_address=-16)):
        kw = dict(dtype="float16", rank=2, global_address=1 << 20, global_dim=[128, 128], global_strides=[256],
                  box_dim=[64, 64], element_strides=[1, 1])
        kw.update(odd)
        monkeypatch.setattr(tm, "_fast_c", None)
        fast = _verdict(lambda: tm.encode_tiled(**kw))
        monkeypatch.setattr(tm, "_fast_c", False)
        assert fast == _verdict(lambda: tm.encode_tiled(**kw)), odd


@pytest.mark.parametrize("path", VECTORS[:1], ids=lambda p: p.name)
def test_decode_is_the_inverse_of_encode(path):
    _, cases = _load(path)
    for c in [c for c in cases if c["ok"]][:4000]:
        f = tm.decode(bytes.fromhex(c["hex"]))
        r = c["rank"]
        assert f.rank == r and f.global_address == c["addr"]
        assert list(f.global_dim) == c["dims"][:r]
        assert list(f.global_strides) == c["strides"][: r - 1]
        assert list(f.element_strides) == c["es"][:r]
        assert (int(f.interleave), int(f.swizzle), int(f.l2_promotion), int(f.oob_fill)) == \
            (c["interleave"], c["swizzle"], c["l2"], c["oob"])
        assert int(f.dtype) == c["dtype"]
        if c["api"] == "tiled":
            assert f.mode == "tiled" and list(f.box_dim) == c["box"][:r]
        else:
            assert f.mode == "im2col"
            assert list(f.pixel_box_lower_corner) == c["lower"][: r - 2]
            assert list(f.pixel_box_upper_corner) == c["upper"][: r - 2]
            assert (f.channels_per_pixel, f.pixels_per_column) == (c["cpp"], c["ppc"])


ARGS = ("float16", 2, 0x7F0000000000, [256, 256], [512], [64, 64], [1, 1])


@pytest.mark.parametrize("promo,byte10", [("none", 0x00), ("l2_64b", 0x02), ("l2_128b", 0x04), ("l2_256b", 0x06),
                                          ("CU_TENSOR_MAP_L2_PROMOTION_L2_256B", 0x06), (3, 0x06)])
def test_l2_promotion_is_byte_10(promo, byte10):
    d = tm.encode_tiled(*ARGS, "none", "none", promo, "none")
    assert d[10] == byte10
    assert tm.decode(d).l2_promotion == tm.L2Promotion((byte10 >> 1) & 3)


def test_enum_spellings():
    a = tm.encode_tiled("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", 2, 0x7F0000000000, [256, 256], [512], [64, 64], [1, 1],
                        "CU_TENSOR_MAP_INTERLEAVE_NONE", "CU_TENSOR_MAP_SWIZZLE_128B",
                        "CU_TENSOR_MAP_L2_PROMOTION_L2_256B", "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE")
    b = tm.encode_tiled(tm.DataType.BFLOAT16, 2, 0x7F0000000000, [256, 256], [512], [64, 64], [1, 1],
                        tm.Interleave.NONE, tm.Swizzle.SWIZZLE_128B, tm.L2Promotion.L2_256B, tm.OOBFill.NONE)
    c = tm.encode_tiled("bfloat16", 2, 0x7F0000000000, [256, 256], [512], [64, 64], [1, 1], "none", "swizzle_128b",
                        "l2_256b", "none")
    assert a == b == c
    assert tm.DataType.coerce("CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B", "x") == tm.DataType.U4X16_ALIGN8B


@pytest.mark.parametrize("kwargs,rule,index", [
    (dict(box_dim=[64, 512]), "box-dim-range", 1),
    (dict(box_dim=[4, 64]), "box-inner-bytes", 0),
    (dict(global_strides=[520]), "global-stride-align", 0),
    (dict(global_address=0x7F0000000008), "address-align", None),
    (dict(global_dim=[0, 256]), "global-dim-range", 0),
    (dict(element_strides=[1, 9]), "element-stride-range", 1),
    (dict(swizzle="swizzle_32b"), "swizzle-span", None),
    (dict(swizzle="swizzle_128b_atom_32b"), "swizzle-arch", None),
    (dict(box_dim=[256, 256], dtype="float32", global_strides=[1024]), "box-shared-memory", None),
    (dict(oob_fill="nan_request_zero_fma", dtype="int32", global_strides=[1024], box_dim=[64, 32]),
     "oob-fill-data-type", None),
])
def test_errors_name_the_rule(kwargs, rule, index):
    args = dict(dtype="float16", rank=2, global_address=0x7F0000000000, global_dim=[256, 256], global_strides=[512],
                box_dim=[64, 64], element_strides=[1, 1], interleave="none", swizzle="none", l2_promotion="none",
                oob_fill="none")
    args.update(kwargs)
    with pytest.raises(tm.TensorMapError) as e:
        tm.encode_tiled(**args)
    assert e.value.rule == rule
    assert str(e.value).startswith(rule + ":")
    if index is not None:
        assert e.value.index == index
    assert isinstance(e.value, ValueError)


def test_argument_errors():
    with pytest.raises(tm.TensorMapError, match="global_dim has 1 entries, rank needs 2"):
        tm.encode_tiled("float16", 2, 0x7F0000000000, [256], [512], [64, 64], [1, 1])
    with pytest.raises(tm.TensorMapError, match="rank-range: rank is 6"):
        tm.encode_tiled("float16", 6, 0x7F0000000000, [1] * 6, [16] * 5, [1] * 6, [1] * 6)
    with pytest.raises(tm.TensorMapError, match="is not a Swizzle"):
        tm.encode_tiled(*ARGS, "none", "swizzle_16b")
    with pytest.raises(tm.TensorMapError, match="does not fit the driver's 64-bit"):
        tm.encode_tiled("float16", 2, 1 << 64, [256, 256], [512], [64, 64], [1, 1])
    with pytest.raises(tm.TensorMapError, match="descriptor-layout"):
        tm.decode(b"\0" * 100)
    bad = bytearray(tm.encode_tiled(*ARGS))
    bad[100] = 1
    with pytest.raises(tm.TensorMapError, match="byte 100 is 0x01"):
        tm.decode(bytes(bad))


def test_packed_types_and_atom_swizzles_need_sm100_and_are_not_guessed():
    with pytest.raises(tm.TensorMapError, match="data-type-arch"):
        tm.encode_tiled("u4x16_align16b", 2, 0x7F0000000000, [256, 256], [256], [128, 16], [1, 1])
    tm.validate_tiled("u4x16_align16b", 2, 0x7F0000000000, [256, 256], [256], [128, 16], [1, 1], sm=100)
    with pytest.raises(tm.TensorMapError, match="encoding-unverified"):
        tm.encode_tiled("u4x16_align16b", 2, 0x7F0000000000, [256, 256], [256], [128, 16], [1, 1], sm=100)


def test_replace_address():
    d = tm.encode_tiled(*ARGS)
    e = tm.replace_address(d, 0x7F0000001000)
    assert e[8:] == d[8:] and int.from_bytes(e[:8], "little") == 0x7F0000001000
    with pytest.raises(tm.TensorMapError, match="address-align"):
        tm.replace_address(d, 0x7F0000001001)


def test_rule_names_are_unique_and_kebab_case():
    names = tm.rule_names()
    assert len(names) == len(set(names)) >= 30
    assert all(n == n.lower() and " " not in n for n in names)


# ----------------------------------------------------------------------------- properties

DTYPES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
BITS = [8, 16, 32, 32, 64, 64, 16, 32, 64, 16, 32, 32, 32]


@st.composite
def tiled_params(draw):
    dt = draw(st.sampled_from(DTYPES))
    eb = BITS[dt] // 8
    rank = draw(st.integers(1, 5))
    il = draw(st.sampled_from([0, 0, 0, 1, 2])) if rank >= 3 else 0
    sw = draw(st.integers(0, 3))
    units = draw(st.integers(1, 16))
    box0 = min(256, units * 16 // eb)
    box = [box0] + [draw(st.integers(1, 256)) for _ in range(rank - 1)]
    dims = [draw(st.integers(1, 1 << 32)) for _ in range(rank)]
    strides = [draw(st.integers(0, (1 << 36) - 1)) * 16 for _ in range(rank - 1)]
    es = [draw(st.integers(1, 8)) for _ in range(rank)]
    addr = draw(st.integers(0, (1 << 52) - 1)) * 16
    return dict(dtype=dt, rank=rank, global_address=addr, global_dim=dims, global_strides=strides, box_dim=box,
                element_strides=es, interleave=il, swizzle=sw, l2_promotion=draw(st.integers(0, 3)),
                oob_fill=draw(st.integers(0, 1)))


@settings(max_examples=1500, deadline=None)
@given(tiled_params())
def test_property_validate_iff_encode_and_decode_inverts(p):
    try:
        tm.validate_tiled(**p)
        valid = True
    except tm.TensorMapError:
        valid = False
    try:
        raw = tm.encode_tiled(**p)
        encoded = True
    except tm.TensorMapError:
        encoded = False
    assert valid == encoded
    if encoded:
        f = tm.decode(raw)
        r = p["rank"]
        assert f.global_address == p["global_address"] and list(f.global_dim) == p["global_dim"]
        assert list(f.global_strides) == p["global_strides"][: r - 1] and list(f.box_dim) == p["box_dim"]
        assert list(f.element_strides) == p["element_strides"]
        assert (int(f.dtype), int(f.interleave), int(f.swizzle), int(f.l2_promotion), int(f.oob_fill)) == \
            (p["dtype"], p["interleave"], p["swizzle"], p["l2_promotion"], p["oob_fill"])


@settings(max_examples=800, deadline=None)
@given(st.binary(min_size=128, max_size=128))
def test_property_decode_never_crashes_and_roundtrips(raw):
    try:
        f = tm.decode(raw)
    except tm.TensorMapError:
        return
    again = (tm.encode_tiled if f.mode == "tiled" else tm.encode_im2col)
    assert f.rank >= 1 and again  # decode accepted: the bytes are a valid encoding


# ----------------------------------------------------------------------------- CLI

def _cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-c", "import sys; from nvtma._tools import tensormap_main as m; "
                           "sys.exit(m())", *args], capture_output=True, text=True, input=stdin)


def test_cli_encode_decode():
    spec = json.dumps(dict(mode="tiled", dtype="CU_TENSOR_MAP_DATA_TYPE_FLOAT16", rank=2,
                           global_address=0x7F0000000000, global_dim=[256, 256], global_strides=[512],
                           box_dim=[64, 64], element_strides=[1, 1], l2_promotion="l2_256b"))
    r = _cli("encode", spec)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert bytes.fromhex(out["hex"])[10] == 0x06
    assert out["fields"]["l2_promotion"] == "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"
    r = _cli("decode", out["hex"])
    assert r.returncode == 0 and json.loads(r.stdout)["box_dim"] == [64, 64]


def test_cli_errors_exit_nonzero_with_the_rule():
    r = _cli("encode", json.dumps(dict(dtype="float16", rank=2, global_address=16, global_dim=[256, 256],
                                       global_strides=[512], box_dim=[64, 999], element_strides=[1, 1])))
    assert r.returncode == 1 and "box-dim-range" in r.stderr
    r = _cli("encode", "{not json")
    assert r.returncode == 2 and "invalid JSON" in r.stderr
    r = _cli("decode", "abcd")
    assert r.returncode == 1 and "descriptor-layout" in r.stderr


@pytest.mark.parametrize("rank_field", [5, 6, 7])
def test_decode_refuses_ranks_past_five_before_reading_them(rank_field):
    """The header's rank field holds ranks up to 8; decode indexed its
    5-entry arrays with it (UBSan: writes past the arrays for ranks 6..8,
    issue 16). It is refused first, naming the field."""
    raw = bytearray(tm.encode_tiled(*ARGS))
    word = int.from_bytes(raw[8:12], "little")
    raw[8:12] = ((word & ~0x70) | (rank_field << 4)).to_bytes(4, "little")
    with pytest.raises(tm.TensorMapError, match=rf"descriptor-layout: the rank field is {rank_field + 1}, "
                       r"a descriptor has rank 1\.\.5") as e:
        tm.decode(bytes(raw))
    assert e.value.rule == "descriptor-layout"


# ----------------------------------------------------------------------------- typed errors (issue 16, item 10)

_TILED = dict(dtype="float16", rank=2, global_address=0x7F0000000000, global_dim=[256, 256], global_strides=[512],
              box_dim=[64, 64], element_strides=[1, 1])
_IM2COL = dict(dtype="float16", rank=3, global_address=0x7F0000000000, global_dim=[64, 32, 4],
               global_strides=[128, 4096], pixel_box_lower_corner=[0], pixel_box_upper_corner=[0],
               channels_per_pixel=64, pixels_per_column=32, element_strides=[1, 1, 1])
_NAN, _INF = float("nan"), float("inf")


@pytest.mark.parametrize("fn,change,argument", [
    # each of these was silently coerced, or raised something else
    ("tiled", dict(global_dim="99"), "global_dim"),            # became dims (9, 9)
    ("tiled", dict(box_dim=b"@@"), "box_dim"),                 # became (64, 64)
    ("tiled", dict(rank=2.7), "rank"),                         # truncated to 2
    ("tiled", dict(rank=True), "rank"),
    ("tiled", dict(rank="2"), "rank"),
    ("tiled", dict(dtype=True), "dtype"),                      # became UINT16
    ("tiled", dict(dtype=6.0), "dtype"),
    ("tiled", dict(dtype=None), "dtype"),
    ("tiled", dict(dtype=b"float16"), "dtype"),
    ("tiled", dict(dtype="abc"), "dtype"),
    ("tiled", dict(sm=2 ** 32 + 90), "sm_4294967386"),          # became sm_90
    ("tiled", dict(sm=True), "sm"),
    ("tiled", dict(sm="90"), "sm"),
    ("tiled", dict(global_address="abc"), "global_address"),  # ValueError
    ("tiled", dict(global_address=_NAN), "global_address"),   # ValueError
    ("tiled", dict(global_address=_INF), "global_address"),   # OverflowError
    ("tiled", dict(global_address=None), "global_address"),   # TypeError
    ("tiled", dict(global_address=16.0), "global_address"),
    ("tiled", dict(global_dim=[256, _NAN]), "global_dim[1]"),
    ("tiled", dict(global_dim=[256, None]), "global_dim[1]"),
    ("tiled", dict(global_dim=[True, 256]), "global_dim[0]"),
    ("tiled", dict(global_dim={256: 1, 128: 2}), "global_dim"),
    ("tiled", dict(global_dim=iter([256, 256])), "global_dim"),
    ("tiled", dict(global_dim=256), "global_dim"),
    ("tiled", dict(element_strides=[1, 1.0]), "element_strides[1]"),
    ("tiled", dict(box_dim=[64, -64]), "box_dim[1]"),
    ("tiled", dict(global_strides=[2 ** 64]), "global_strides[0]"),
    ("tiled", dict(interleave=3.0), "interleave"),
    ("tiled", dict(swizzle=None), "swizzle"),
    ("tiled", dict(l2_promotion=True), "l2_promotion"),
    ("tiled", dict(oob_fill=b"none"), "oob_fill"),
    ("tiled", dict(swizzle="SWIZZLE_128B", interleave="swizzle_128b"), "interleave"),
    ("im2col", dict(channels_per_pixel="64"), "channels_per_pixel"),
    ("im2col", dict(pixels_per_column=32.0), "pixels_per_column"),
    ("im2col", dict(pixel_box_lower_corner=[_NAN]), "pixel_box_lower_corner[0]"),
    ("im2col", dict(pixel_box_upper_corner=[2 ** 31]), "pixel_box_upper_corner[0]"),
    ("im2col", dict(rank=4.0), "rank"),
])
def test_bad_encode_arguments_are_tensormap_errors(fn, change, argument):
    """No silent coercion of strings, bytes, floats or bools, and no
    ValueError / OverflowError / TypeError: a TensorMapError naming the
    argument and the rule (issue 16)."""
    kwargs = dict(_TILED if fn == "tiled" else _IM2COL)
    kwargs.update(change)
    encode = tm.encode_tiled if fn == "tiled" else tm.encode_im2col
    validate = tm.validate_tiled if fn == "tiled" else tm.validate_im2col
    for call in (encode, validate):
        with pytest.raises(tm.TensorMapError) as e:
            call(**kwargs)
        assert type(e.value) is tm.TensorMapError
        assert argument in str(e.value), str(e.value)
        assert e.value.rule in ("argument", "argument-count", "rank-range", "target-arch"), e.value.rule


def test_the_fast_path_takes_only_what_the_checked_path_takes():
    """The abi3 fast path used to accept bools and floats as enum keys and
    ints (True == 1 and 6.0 == 6 as dict keys); it declines them now and the
    checked path refuses them."""
    assert tm._fast_module()
    for change in (dict(dtype=True), dict(dtype=6.0), dict(swizzle=0.0), dict(rank=True),
                   dict(global_dim=[256, True]), dict(sm=90.0)):
        kwargs = dict(_TILED, **change)
        assert tm._ext.encode_tiled(*[kwargs.get(k, d) for k, d in (
            ("dtype", None), ("rank", None), ("global_address", None), ("global_dim", None),
            ("global_strides", None), ("box_dim", None), ("element_strides", None), ("interleave", "none"),
            ("swizzle", "none"), ("l2_promotion", "l2_128b"), ("oob_fill", "none"), ("sm", 90))]) is None
        with pytest.raises(tm.TensorMapError):
            tm.encode_tiled(**kwargs)


@pytest.mark.parametrize("value", [128, None, 1.5, [0] * 128, "zz" * 128])
def test_decode_takes_bytes_or_hex_only(value):
    """decode(128) used to decode 128 zero bytes (bytes(128))."""
    with pytest.raises(tm.TensorMapError):
        tm.decode(value)
    with pytest.raises(tm.TensorMapError):
        tm.replace_address(value, 0x7F0000000000)


def test_numpy_and_torch_style_integers_are_accepted():
    class Index:  # what numpy integers and torch.Size entries offer
        def __init__(self, v):
            self.v = v

        def __index__(self):
            return self.v

    a = tm.encode_tiled(**_TILED)
    b = tm.encode_tiled(**dict(_TILED, global_dim=(Index(256), Index(256)), rank=Index(2),
                                global_address=Index(0x7F0000000000), global_strides=range(512, 513)))
    assert a == b


# ----------------------------------------------------------------------------- the one schema (issue 15)

def _python_schema():
    return [dict(name=cls.__name__, cases=[(m.name, int(m), m.dialect, m.cuda_suffix) for m in cls])
            for cls in (tm.DataType, tm.Interleave, tm.Swizzle, tm.L2Promotion, tm.OOBFill)]


def test_schema_from_cpp_python_and_ods_agree():
    """The descriptor enums are written once (Schema.def); the C++ library's
    table (through the extension), Python's enums and the dialect's ODS enums
    (Python bindings generated from the ODS the schema generated) agree
    case by case."""
    cpp = tm.schema()
    assert [e["name"] for e in cpp] == ["DataType", "Interleave", "Swizzle", "L2Promotion", "OOBFill"]
    assert _python_schema() == [dict(name=e["name"], cases=[(c["symbol"], c["value"], c["spelling"],
                                                             c["cuda_suffix"]) for c in e["cases"]]) for e in cpp]
    for e in cpp:
        cls = getattr(tm, e["name"])
        assert cls.__doc__ == e["description"]
        for c in e["cases"]:
            assert c["spelling"] == c["symbol"].lower()
            assert cls.coerce(e["cuda_prefix"] + c["cuda_suffix"], "x") == c["value"]
    # CUDA's own spellings of the packed types
    assert tm.DataType.U4X16_ALIGN8B.cuda_name == "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B"
    assert tm.Swizzle.SWIZZLE_128B_ATOM_64B.cuda_name == "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B"
    ods = pytest.importorskip("nvtma.dialects.nvtma", reason="the MLIR extension is not built")
    for e in cpp:
        cls = getattr(ods, e["ods_name"])
        assert [(m.name, int(m), str(m)) for m in cls] == \
            [(c["symbol"], c["value"], c["spelling"]) for c in e["cases"]], e["ods_name"]


def test_cuda_bindings_enum_values_match_the_schema():
    driver = pytest.importorskip("cuda.bindings.driver")
    for name, cuda in (("DataType", "CUtensorMapDataType"), ("Interleave", "CUtensorMapInterleave"),
                       ("Swizzle", "CUtensorMapSwizzle"), ("L2Promotion", "CUtensorMapL2promotion"),
                       ("OOBFill", "CUtensorMapFloatOOBfill")):
        theirs = {m.name: int(m.value) for m in getattr(driver, cuda)}
        for m in getattr(tm, name):
            assert theirs.get(m.cuda_name) == int(m), (m, theirs)


@pytest.mark.parametrize("swizzle,span", [("none", None), ("swizzle_32b", 32), ("swizzle_64b", 64),
                                          ("swizzle_128b", 128), ("swizzle_128b_atom_64b", 128),
                                          (tm.Swizzle.SWIZZLE_64B, 64), ("CU_TENSOR_MAP_SWIZZLE_32B", 32)])
def test_swizzle_span_bytes(swizzle, span):
    assert tm.swizzle_span_bytes(swizzle) == span
    assert tm.Swizzle.coerce(swizzle, "s").span_bytes == (span or 0)


@pytest.mark.parametrize("tile,mc,swizzle,bits,interleave,box", [
    ((64, 64), 1, "swizzle_128b", 16, "none", [64, 64]),
    ((64, 128), 1, "swizzle_128b", 16, "none", [64, 64]),      # innermost <= 128 B / 2 B
    ((64, 128), 1, "swizzle_64b", 16, "none", [64, 32]),
    ((64, 128), 1, "swizzle_32b", 32, "none", [64, 8]),
    ((64, 64), 2, "swizzle_128b", 16, "none", [32, 64]),       # split over 2 multicast CTAs
    ((512, 64), 1, "none", 16, "none", [256, 64]),             # <= 256 per dim
    ((300, 64), 1, "none", 16, "none", [150, 64]),             # the largest that divides
    ((8, 4, 128), 1, "swizzle_32b", 8, "interleave_32b", [8, 4, 128]),  # no span rule when interleaved
    ((8, 4, 128), 1, "swizzle_32b", 8, "none", [8, 4, 32]),
    ((64, 256), 1, "swizzle_128b", 4, "none", [64, 256]),       # 4-bit elements: 256 per 128 B
])
def test_cute_box(tile, mc, swizzle, bits, interleave, box):
    assert tm.cute_box(tile, mc, swizzle, bits, interleave) == box


@pytest.mark.parametrize("args,rule", [
    (((64, 64), 3, "none", 16), "tile-multicast-split"),
    (((0, 64), 1, "none", 16), "tile-dim-range"),
    (((64,) * 6, 1, "none", 16), "rank-range"),
    (((), 1, "none", 16), "rank-range"),
    (((64, 64), 1, "none", 0), "element-bits-range"),
    (((64, 64), 0, "none", 16), "tile-multicast-split"),
    (((64, 64), 1, "swizzle_16b", 16), "argument"),
    (((64, 64.0), 1, "none", 16), "argument"),
    (("64", 1, "none", 16), "argument"),
])
def test_cute_box_errors(args, rule):
    with pytest.raises(tm.TensorMapError) as e:
        tm.cute_box(*args)
    assert e.value.rule == rule, str(e.value)


def test_tensormap_needs_no_mlir_and_no_ctypes_mirror():
    import inspect
    src = inspect.getsource(tm)
    assert "ctypes" not in src and "_fields_" not in src
    r = subprocess.run([sys.executable, "-c", "import sys, nvtma.tensormap as t; t.cute_box([64, 64], 1, 'none', 16);"
                        "print(any('_mlir' in m for m in sys.modules))"], capture_output=True, text=True)
    assert r.stdout.strip() == "False", r.stderr


_GOOD = dict(mode="tiled", dtype="float16", rank=2, global_address=16, global_dim=[256, 256], global_strides=[512],
             box_dim=[64, 64], element_strides=[1, 1])


def _bad_cli_inputs(tmp):
    binary = tmp / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    locked = tmp / "locked.json"
    locked.write_text("00" * 128)
    locked.chmod(0)
    import os
    unreadable = [] if os.geteuid() == 0 else [("encode", str(locked)), ("decode", str(locked))]
    return unreadable + [
        ("encode", "{not json"),
        ("encode", "[]"),
        ("encode", "null"),
        ("encode", json.dumps(dict(_GOOD, mode=[]))),              # unhashable mode
        ("encode", json.dumps(dict(_GOOD, mode="gather"))),
        ("encode", json.dumps(dict(_GOOD, bogus=1))),               # unknown argument
        ("encode", json.dumps({k: v for k, v in _GOOD.items() if k != "box_dim"})),  # missing argument
        ("encode", json.dumps(dict(_GOOD, global_dim="99"))),
        ("encode", json.dumps(dict(_GOOD, rank=2.7))),
        ("encode", json.dumps(dict(_GOOD, dtype=True))),
        ("encode", json.dumps(dict(_GOOD, global_address=None))),
        ("encode", json.dumps(dict(_GOOD, global_dim=[256, {"a": 1}]))),
        ("encode", json.dumps(dict(_GOOD, sm=100))),
        ("encode", '{"mode": "tiled", "global_address": NaN}'),
        ("encode", json.dumps(_GOOD), "--sm", "99999999999999999999"),
        ("encode", json.dumps(_GOOD), "--sm", "80"),
        ("encode", json.dumps(_GOOD), "--out", str(tmp)),            # a directory
        ("encode", json.dumps(_GOOD), "--out", str(tmp / "no" / "such" / "dir" / "x.bin")),
        ("encode", str(binary)),
        ("encode", "-"),                                             # empty stdin
        ("encode", "-", "[" * 100000 + "]" * 100000),               # RecursionError in json
        ("decode", "abcd"),
        ("decode", ""),
        ("decode", "zz" * 128),
        ("decode", "00" * 128),
        ("decode", str(tmp)),
        ("decode", str(binary)),
        ("decode", "ff" * 200),
    ]


def test_cli_bad_inputs_end_in_one_message_not_a_traceback(tmp_path):
    """Every bad input ends nvtma-tensormap with a non-zero status and a
    one-line message (issue 16: 11 CLI inputs ended in tracebacks)."""
    for args in _bad_cli_inputs(tmp_path):
        stdin = args[2] if args[:2] == ("encode", "-") and len(args) == 3 else ""
        if stdin:
            args = args[:2]
        r = _cli(*args, stdin=stdin)
        assert r.returncode != 0, args
        assert "Traceback" not in r.stderr, (args, r.stderr[-2000:])
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("nvtma-tensormap"), (args, r.stderr[-2000:])
