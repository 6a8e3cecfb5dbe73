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
