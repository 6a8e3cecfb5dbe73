"""TMA descriptors (CUtensorMap) encoded, decoded and validated without a GPU.

Mirrors the driver's ``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col``
argument lists and produces the same 128 bytes; invalid parameters raise
:class:`TensorMapError` naming the argument or the broken rule. The work is
done by nvtma's C++ descriptor library through a small abi3 extension
(``_lib/_tensormap_fast``): it needs neither MLIR nor CUDA, so it runs on a
GPU box under any Python >= 3.10, and on a build machine with no GPU.

The enums, element sizes, swizzle spans and CuTe's box rule come from that
library (its one schema, ``nvtma/TensorMap/Schema.def``), not from Python.

    >>> from nvtma import tensormap as tm
    >>> desc = tm.encode_tiled("CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 2, 0x7f0000000000,
    ...     [256, 256], [512], [64, 64], [1, 1], "none", "none", "l2_256b", "none")
    >>> hex(desc[10]), tm.decode(desc).l2_promotion
    ('0x6', <L2Promotion.L2_256B: 3>)
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import importlib.util
import operator
import os
from pathlib import Path
from typing import Sequence

__all__ = [
    "TensorMapError", "DataType", "Interleave", "Swizzle", "L2Promotion", "OOBFill", "TensorMapFields",
    "encode_tiled", "encode_im2col", "validate_tiled", "validate_im2col", "decode", "replace_address",
    "element_bits", "swizzle_span_bytes", "cute_box", "rule_names", "schema", "DESCRIPTOR_BYTES",
]

DESCRIPTOR_BYTES = 128


class TensorMapError(ValueError):
    """Parameters the driver would refuse (or bytes it would never write).

    ``rule`` is the rule's stable name (``box-dim-range``; ``argument`` or
    ``argument-count`` for an argument of the wrong type or length),
    ``index`` the offending dimension (or None) and ``value`` the offending
    value.
    """

    def __init__(self, message: str, rule: str = "argument", index: int | None = None, value=None):
        super().__init__(message)
        self.rule = rule
        self.index = index
        self.value = value


# --------------------------------------------------------------------------- the extension

def _load_extension():
    # NVTMA_TENSORMAP_EXT: another build of the extension (the fuzzers load
    # a sanitizer build this way).
    env = os.environ.get("NVTMA_TENSORMAP_EXT")
    path = Path(env) if env else Path(os.path.abspath(__file__)).parent / "_lib" / "_tensormap_fast.abi3.so"
    if not path.exists():
        raise ImportError(f"{path} is missing: nvtma.tensormap needs its extension; reinstall nvtma")
    spec = importlib.util.spec_from_file_location("nvtma._lib._tensormap_fast", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_ext = _load_extension()


# --------------------------------------------------------------------------- enums

class _Enum(enum.IntEnum):
    """A descriptor enum. Accepts CUDA's enumerator names, the dialect's
    spellings, its own members, cuda.bindings enum values and ints; refuses
    everything else (bools, floats, bytes, other nvtma enums)."""

    @classmethod
    def coerce(cls, value, arg: str):
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            hit = cls._lookup().get(value.strip().lower())
            if hit is None:
                raise TensorMapError(
                    f"{arg}: {value!r} is not a {cls.__name__}; expected one of "
                    f"{', '.join(m.dialect for m in cls)} or CUDA's {cls._cuda_prefix}* names",
                    rule="argument", value=value)
            return hit
        if isinstance(value, _Enum):
            raise TensorMapError(f"{arg}: {value!r} is a {type(value).__name__}, not a {cls.__name__}",
                                 rule="argument", value=value)
        if isinstance(value, enum.Enum):  # cuda.bindings' CUtensorMap* enums
            value = value.value
        if isinstance(value, bool) or not isinstance(value, int):
            raise TensorMapError(f"{arg}: {value!r} is not a {cls.__name__} (a name or one of the values "
                                 f"{[int(m) for m in cls]})", rule="argument", value=value)
        try:
            return cls(value)
        except ValueError:
            raise TensorMapError(f"{arg}: {value!r} is not a {cls.__name__} (valid values "
                                 f"{[int(m) for m in cls]})", rule="argument", value=value) from None

    @classmethod
    def _lookup(cls):
        table = cls.__dict__.get("_table")
        if table is None:
            table = {}
            for m in cls:
                for name in (m.name, m.dialect, m.cuda_name):
                    table[name.lower()] = m
            cls._table = table
        return table

    @property
    def dialect(self) -> str:
        """The spelling nvtma's MLIR dialect uses (`l2_256b`, `swizzle_128b`)."""
        return self._spellings[int(self)]

    @property
    def cuda_suffix(self) -> str:
        return self._cuda_suffixes[int(self)]

    @property
    def cuda_name(self) -> str:
        return self._cuda_prefix + self.cuda_suffix


def schema() -> list[dict]:
    """The descriptor enums as the C++ library defines them (Schema.def):
    one dict per enum with name, ods_name, cuda_prefix, description and
    cases (symbol, value, spelling, cuda_suffix)."""
    return [dict(name=name, ods_name=ods, cuda_prefix=prefix, description=desc,
                 cases=[dict(symbol=s, value=v, spelling=sp, cuda_suffix=cs) for s, v, sp, cs in cases])
            for name, ods, prefix, desc, cases in _ext.schema()]


def _make_enums():
    made = {}
    for name, _ods, prefix, desc, cases in _ext.schema():
        cls = _Enum(name, [(sym, value) for sym, value, _, _ in cases], module=__name__, qualname=name)
        cls.__doc__ = desc
        cls._cuda_prefix = prefix
        cls._spellings = {value: spelling for _, value, spelling, _ in cases}
        cls._cuda_suffixes = {value: suffix for _, value, _, suffix in cases}
        made[name] = cls
    return made


_ENUMS = _make_enums()
DataType = _ENUMS["DataType"]
Interleave = _ENUMS["Interleave"]
Swizzle = _ENUMS["Swizzle"]
L2Promotion = _ENUMS["L2Promotion"]
OOBFill = _ENUMS["OOBFill"]
Swizzle.span_bytes = property(lambda self: _ext.swizzle_span_bytes(int(self)),
                              doc="Bytes of a row the swizzle permutes (0 for none).")


def element_bits(dtype) -> int:
    """Bits one element of `dtype` takes in global memory."""
    return _ext.element_bits(int(DataType.coerce(dtype, "dtype")))


def swizzle_span_bytes(swizzle) -> int | None:
    """Bytes of a shared-memory row the swizzle permutes (32, 64 or 128);
    None for no swizzle."""
    return _ext.swizzle_span_bytes(int(Swizzle.coerce(swizzle, "swizzle"))) or None


def rule_names() -> list[str]:
    """Names of every rule the validator checks, in the C++ library's order."""
    return list(_ext.rule_names())


# --------------------------------------------------------------------------- arguments

def _raise(failure):
    rule, index, value, message = failure
    raise TensorMapError(message, rule=rule, index=None if index < 0 else index, value=value)


def _int(name: str, value, bits: int, signed: bool = False, index: int | None = None) -> int:
    """An integer argument: an int or anything with __index__ (numpy ints),
    never a bool, float, str or bytes; it must fit the driver's field."""
    label = name if index is None else f"{name}[{index}]"
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TensorMapError(f"{label}: {value!r} is not an integer", rule="argument", index=index, value=value)
    v = operator.index(value)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not lo <= v <= hi:
        raise TensorMapError(f"{label} is {v}, it does not fit the driver's {bits}-bit "
                             f"{'signed' if signed else 'unsigned'} argument", rule="argument", index=index, value=v)
    return v


def _ints(name: str, values, n: int, bits: int, signed: bool = False) -> tuple:
    """A sequence of `n` integer arguments (list, tuple, range, torch.Size,
    a numpy array); strings, bytes, mappings and iterators are refused."""
    if (isinstance(values, (str, bytes, bytearray, memoryview, collections.abc.Mapping))
            or not hasattr(values, "__len__") or not hasattr(values, "__getitem__")):
        raise TensorMapError(f"{name}: {values!r} is not a sequence of integers", rule="argument", value=values)
    seq = list(values)
    if len(seq) != n:
        raise TensorMapError(f"{name} has {len(seq)} entries, rank needs {n}", rule="argument-count",
                             value=len(seq))
    return tuple(_int(name, v, bits, signed, i) for i, v in enumerate(seq))


def _rank(rank, lo: int, hi: int) -> int:
    if isinstance(rank, bool) or not hasattr(type(rank), "__index__"):
        raise TensorMapError(f"rank: {rank!r} is not an integer", rule="argument", value=rank)
    r = operator.index(rank)
    if not lo <= r <= hi:
        raise TensorMapError(f"rank-range: rank is {r}, the range is {lo}..{hi}", rule="rank-range", value=r)
    return r


def _sm(sm) -> int:
    if isinstance(sm, bool) or not hasattr(type(sm), "__index__"):
        raise TensorMapError(f"sm: {sm!r} is not an integer (90 or 100)", rule="target-arch", value=sm)
    v = operator.index(sm)
    if not 0 <= v < 1 << 32:
        raise TensorMapError(f"target-arch: sm_{v} is not a target nvtma knows the driver's rules for "
                             "(sm_90, sm_100)", rule="target-arch", value=v)
    return v


def _common(dtype, rank, global_address, global_dim, global_strides, element_strides, interleave, swizzle,
            l2_promotion, oob_fill):
    return dict(dtype=int(DataType.coerce(dtype, "dtype")), address=_int("global_address", global_address, 64),
                dims=_ints("global_dim", global_dim, rank, 64), strides=_ints("global_strides", global_strides,
                                                                             rank - 1, 64),
                es=_ints("element_strides", element_strides, rank, 32),
                il=int(Interleave.coerce(interleave, "interleave")), sw=int(Swizzle.coerce(swizzle, "swizzle")),
                l2=int(L2Promotion.coerce(l2_promotion, "l2_promotion")),
                oob=int(OOBFill.coerce(oob_fill, "oob_fill")))


def _tiled_params(dtype, rank, global_address, global_dim, global_strides, box_dim, element_strides,
                  interleave="none", swizzle="none", l2_promotion="l2_128b", oob_fill="none") -> tuple:
    """The checked arguments of the extension's encode() for a tiled map."""
    rank = _rank(rank, 1, 5)
    c = _common(dtype, rank, global_address, global_dim, global_strides, element_strides, interleave, swizzle,
                l2_promotion, oob_fill)
    box = _ints("box_dim", box_dim, rank, 32)
    return (0, c["dtype"], rank, c["address"], c["dims"], c["strides"], box, (), (), 0, 0, c["es"], c["il"],
            c["sw"], c["l2"], c["oob"])


def _im2col_params(dtype, rank, global_address, global_dim, global_strides, pixel_box_lower_corner,
                   pixel_box_upper_corner, channels_per_pixel, pixels_per_column, element_strides,
                   interleave="none", swizzle="none", l2_promotion="l2_128b", oob_fill="none") -> tuple:
    """The checked arguments of the extension's encode() for an im2col map."""
    rank = _rank(rank, 3, 5)
    c = _common(dtype, rank, global_address, global_dim, global_strides, element_strides, interleave, swizzle,
                l2_promotion, oob_fill)
    lower = _ints("pixel_box_lower_corner", pixel_box_lower_corner, rank - 2, 32, True)
    upper = _ints("pixel_box_upper_corner", pixel_box_upper_corner, rank - 2, 32, True)
    cpp = _int("channels_per_pixel", channels_per_pixel, 32)
    ppc = _int("pixels_per_column", pixels_per_column, 32)
    return (1, c["dtype"], rank, c["address"], c["dims"], c["strides"], (), lower, upper, cpp, ppc, c["es"],
            c["il"], c["sw"], c["l2"], c["oob"])


def _encode(params: tuple, sm, validate_only: bool = False):
    out = _ext.encode(*params, _sm(sm), validate_only)
    if isinstance(out, tuple):
        _raise(out)
    return out


# --------------------------------------------------------------------------- API

def encode_tiled(dtype, rank, global_address, global_dim: Sequence[int], global_strides: Sequence[int],
                 box_dim: Sequence[int], element_strides: Sequence[int], interleave="none", swizzle="none",
                 l2_promotion="l2_128b", oob_fill="none", *, sm: int = 90) -> bytes:
    """The 128 bytes ``cuTensorMapEncodeTiled`` writes for these arguments.

    ``global_dim``, ``box_dim`` and ``element_strides`` have ``rank`` entries
    (innermost first), ``global_strides`` ``rank - 1`` byte strides.
    """
    # Fast path: one C call for exact ints and known spellings. Anything it
    # does not take (or the validator refuses) takes the checked path below,
    # which names the argument or the driver rule.
    c = _fast_c if _fast_c is not None else _fast_module()
    if c:
        out = c(dtype, rank, global_address, global_dim, global_strides, box_dim, element_strides, interleave,
                swizzle, l2_promotion, oob_fill, sm)
        if out is not None:
            return out
    return _encode(_tiled_params(dtype, rank, global_address, global_dim, global_strides, box_dim,
                                 element_strides, interleave, swizzle, l2_promotion, oob_fill), sm)


_fast_c = None


def _fast_module():
    """The extension's encode_tiled, or False where NVTMA_FAST_ENCODE=0."""
    global _fast_c
    if _fast_c is None:
        _fast_c = False
        if os.environ.get("NVTMA_FAST_ENCODE", "1") != "0":
            _ext.set_tables(tuple(_fast_tables()))
            _fast_c = _ext.encode_tiled
    return _fast_c


def _fast_tables():
    """Exact spellings and ints -> value, per enum (the extension takes exact
    str and int keys only)."""
    tables = []
    for cls in (DataType, Interleave, Swizzle, L2Promotion, OOBFill):
        t = {}
        for m in cls:
            for name in (m.name, m.dialect, m.cuda_name):
                t[name] = int(m)
            t[int(m)] = int(m)
        tables.append(t)
    return tables


def encode_im2col(dtype, rank, global_address, global_dim: Sequence[int], global_strides: Sequence[int],
                  pixel_box_lower_corner: Sequence[int], pixel_box_upper_corner: Sequence[int],
                  channels_per_pixel: int, pixels_per_column: int, element_strides: Sequence[int],
                  interleave="none", swizzle="none", l2_promotion="l2_128b", oob_fill="none", *,
                  sm: int = 90) -> bytes:
    """The 128 bytes ``cuTensorMapEncodeIm2col`` writes for these arguments."""
    return _encode(_im2col_params(dtype, rank, global_address, global_dim, global_strides,
                                  pixel_box_lower_corner, pixel_box_upper_corner, channels_per_pixel,
                                  pixels_per_column, element_strides, interleave, swizzle,
                                  l2_promotion, oob_fill), sm)


def validate_tiled(*args, sm: int = 90, **kwargs) -> None:
    """Raise TensorMapError if ``encode_tiled`` would; return None otherwise."""
    _encode(_tiled_params(*args, **kwargs), sm, validate_only=True)


def validate_im2col(*args, sm: int = 90, **kwargs) -> None:
    """Raise TensorMapError if ``encode_im2col`` would; return None otherwise."""
    _encode(_im2col_params(*args, **kwargs), sm, validate_only=True)


def cute_box(tile: Sequence[int], num_multicast: int, swizzle, element_bits: int, interleave="none") -> list[int]:
    """CuTe's TMA box for `tile` (outermost first), the rule
    make_tiled_tma_atom uses: the tile split over `num_multicast` CTAs along
    its outermost dim, in the largest boxes of at most 256 elements per dim
    that divide it, the innermost also within the swizzle span (except for
    interleaved layouts)."""
    if (isinstance(tile, (str, bytes, bytearray, memoryview, collections.abc.Mapping))
            or not hasattr(tile, "__len__") or not hasattr(tile, "__getitem__")):
        raise TensorMapError(f"tile: {tile!r} is not a sequence of integers", rule="argument", value=tile)
    dims = tuple(_int("tile", v, 64, True, i) for i, v in enumerate(list(tile)))
    out = _ext.cute_box(dims, _int("num_multicast", num_multicast, 32),
                        int(Swizzle.coerce(swizzle, "swizzle")), _int("element_bits", element_bits, 32),
                        int(Interleave.coerce(interleave, "interleave")))
    if isinstance(out, tuple):
        _raise(out)
    return out


@dataclasses.dataclass(frozen=True)
class TensorMapFields:
    """Every field of a descriptor, as decode() reads it back."""
    mode: str  # "tiled" or "im2col"
    dtype: DataType
    rank: int
    global_address: int
    global_dim: tuple
    global_strides: tuple
    element_strides: tuple
    interleave: Interleave
    swizzle: Swizzle
    l2_promotion: L2Promotion
    oob_fill: OOBFill
    box_dim: tuple = ()
    pixel_box_lower_corner: tuple = ()
    pixel_box_upper_corner: tuple = ()
    channels_per_pixel: int = 0
    pixels_per_column: int = 0

    def to_json(self) -> dict:
        d = dataclasses.asdict(self)
        for k, v in d.items():
            if isinstance(v, enum.Enum):
                d[k] = v.cuda_name
        if self.mode == "tiled":
            for k in ("pixel_box_lower_corner", "pixel_box_upper_corner", "channels_per_pixel",
                      "pixels_per_column"):
                d.pop(k)
        else:
            d.pop("box_dim")
        return d


def _as_bytes(desc) -> bytes:
    """128 descriptor bytes from bytes, bytearray, memoryview or hex text."""
    if isinstance(desc, str):
        try:
            desc = bytes.fromhex(desc.replace(" ", "").replace("0x", ""))
        except ValueError:
            raise TensorMapError("descriptor-layout: not a hex string", rule="descriptor-layout") from None
    elif isinstance(desc, (bytes, bytearray, memoryview)):
        desc = bytes(desc)
    else:
        raise TensorMapError(f"desc: {type(desc).__name__} is not bytes, bytearray, memoryview or hex text",
                             rule="argument", value=desc)
    if len(desc) != DESCRIPTOR_BYTES:
        raise TensorMapError(f"descriptor-layout: a descriptor has 128 bytes, got {len(desc)}",
                             rule="descriptor-layout", value=len(desc))
    return desc


def decode(desc) -> TensorMapFields:
    """Every field of a descriptor (bytes, bytearray, memoryview or hex)."""
    out = _ext.decode(_as_bytes(desc))
    if isinstance(out, tuple):
        _raise(out)
    out.update(dtype=DataType(out["dtype"]), interleave=Interleave(out["interleave"]),
               swizzle=Swizzle(out["swizzle"]), l2_promotion=L2Promotion(out["l2_promotion"]),
               oob_fill=OOBFill(out["oob_fill"]))
    if out["mode"] == "tiled":
        for k in ("pixel_box_lower_corner", "pixel_box_upper_corner", "channels_per_pixel", "pixels_per_column"):
            out.pop(k)
    else:
        out.pop("box_dim")
    return TensorMapFields(**out)


def replace_address(desc, global_address: int) -> bytes:
    """A copy of `desc` pointing at `global_address` (cuTensorMapReplaceAddress)."""
    out = _ext.replace_address(_as_bytes(desc), _int("global_address", global_address, 64))
    if isinstance(out, tuple):
        _raise(out)
    return out
