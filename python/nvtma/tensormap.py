"""TMA descriptors (CUtensorMap) encoded, decoded and validated without a GPU.

Mirrors the driver's ``cuTensorMapEncodeTiled`` / ``cuTensorMapEncodeIm2col``
argument lists and produces the same 128 bytes; invalid parameters raise
:class:`TensorMapError` naming the broken rule. Pure Python over a small C
library (``libnvtma_tensormap``): it needs neither MLIR nor CUDA, so it runs on a
GPU box under any Python, and on a build machine with no GPU.

    >>> from nvtma import tensormap as tm
    >>> desc = tm.encode_tiled("CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 2, 0x7f0000000000,
    ...     [256, 256], [512], [64, 64], [1, 1], "none", "none", "l2_256b", "none")
    >>> hex(desc[10]), tm.decode(desc).l2_promotion
    ('0x6', <L2Promotion.L2_256B: 3>)
"""

from __future__ import annotations

import ctypes
import dataclasses
import enum
import os
from pathlib import Path
from typing import Sequence

__all__ = [
    "TensorMapError", "DataType", "Interleave", "Swizzle", "L2Promotion", "OOBFill", "TensorMapFields",
    "encode_tiled", "encode_im2col", "validate_tiled", "validate_im2col", "decode", "replace_address",
    "element_bits", "rule_names", "DESCRIPTOR_BYTES",
]

DESCRIPTOR_BYTES = 128


class TensorMapError(ValueError):
    """Parameters the driver would refuse (or bytes it would never write).

    ``rule`` is the rule's stable name (``box-dim-range``), ``index`` the
    offending dimension (or None) and ``value`` the offending value.
    """

    def __init__(self, message: str, rule: str = "argument", index: int | None = None, value=None):
        super().__init__(message)
        self.rule = rule
        self.index = index
        self.value = value


class _Enum(enum.IntEnum):
    """Accepts CUDA's enumerator names, nvtma's dialect spellings, ints and
    cuda-bindings enum values."""

    @classmethod
    def coerce(cls, value, arg: str):
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            key = value.strip()
            hit = cls._lookup().get(key.lower())
            if hit is None:
                raise TensorMapError(
                    f"{arg}: {value!r} is not a {cls.__name__}; expected one of "
                    f"{', '.join(m.dialect for m in cls)} or CUDA's {cls._cuda_prefix()}* names",
                    rule="argument", value=value)
            return hit
        if isinstance(value, enum.Enum):  # cuda.bindings enums, other IntEnums
            value = value.value
        try:
            return cls(int(value))
        except (TypeError, ValueError):
            raise TensorMapError(f"{arg}: {value!r} is not a {cls.__name__} "
                                 f"(valid values {[int(m) for m in cls]})",
                                 rule="argument", value=value) from None

    @classmethod
    def _lookup(cls):
        table = cls.__dict__.get("_table")
        if table is None:
            table = {}
            for m in cls:
                for name in (m.name, m.dialect, cls._cuda_prefix() + m.cuda_suffix):
                    table[name.lower()] = m
            cls._table = table
        return table

    @property
    def dialect(self) -> str:
        """The spelling nvtma's MLIR dialect uses (`l2_256b`, `swizzle_128b`)."""
        return self.name.lower()

    @property
    def cuda_suffix(self) -> str:
        return self.name

    @property
    def cuda_name(self) -> str:
        return self._cuda_prefix() + self.cuda_suffix


class DataType(_Enum):
    """CUtensorMapDataType."""
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    INT32 = 3
    UINT64 = 4
    INT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT32_FTZ = 10
    TFLOAT32 = 11
    TFLOAT32_FTZ = 12
    U4X16_ALIGN8B = 13
    U4X16_ALIGN16B = 14
    U6X16_ALIGN16B = 15

    @staticmethod
    def _cuda_prefix():
        return "CU_TENSOR_MAP_DATA_TYPE_"

    @property
    def cuda_suffix(self):
        packed = {13: "16U4_ALIGN8B", 14: "16U4_ALIGN16B", 15: "16U6_ALIGN16B"}
        return packed.get(int(self), self.name)


class Interleave(_Enum):
    """CUtensorMapInterleave."""
    NONE = 0
    INTERLEAVE_16B = 1
    INTERLEAVE_32B = 2

    @staticmethod
    def _cuda_prefix():
        return "CU_TENSOR_MAP_INTERLEAVE_"

    @property
    def cuda_suffix(self):
        return self.name.replace("INTERLEAVE_", "")


class Swizzle(_Enum):
    """CUtensorMapSwizzle."""
    NONE = 0
    SWIZZLE_32B = 1
    SWIZZLE_64B = 2
    SWIZZLE_128B = 3
    SWIZZLE_128B_ATOM_32B = 4
    SWIZZLE_128B_ATOM_32B_FLIP_8B = 5
    SWIZZLE_128B_ATOM_64B = 6

    @staticmethod
    def _cuda_prefix():
        return "CU_TENSOR_MAP_SWIZZLE_"

    @property
    def cuda_suffix(self):
        return self.name.replace("SWIZZLE_", "")

    @property
    def span_bytes(self) -> int:
        return (0, 32, 64, 128, 128, 128, 128)[int(self)]


class L2Promotion(_Enum):
    """CUtensorMapL2promotion: the granularity L2 fills from DRAM."""
    NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3

    @staticmethod
    def _cuda_prefix():
        return "CU_TENSOR_MAP_L2_PROMOTION_"


class OOBFill(_Enum):
    """CUtensorMapFloatOOBfill."""
    NONE = 0
    NAN_REQUEST_ZERO_FMA = 1

    @staticmethod
    def _cuda_prefix():
        return "CU_TENSOR_MAP_FLOAT_OOB_FILL_"


_ELEMENT_BITS = (8, 16, 32, 32, 64, 64, 16, 32, 64, 16, 32, 32, 32, 4, 8, 8)


def element_bits(dtype) -> int:
    """Bits one element of `dtype` takes in global memory."""
    return _ELEMENT_BITS[DataType.coerce(dtype, "dtype")]


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


# --------------------------------------------------------------------------- C ABI

class _Params(ctypes.Structure):
    _fields_ = [
        ("mode", ctypes.c_uint32), ("dataType", ctypes.c_uint32), ("rank", ctypes.c_uint32),
        ("interleave", ctypes.c_uint32), ("swizzle", ctypes.c_uint32), ("l2Promotion", ctypes.c_uint32),
        ("oobFill", ctypes.c_uint32), ("channelsPerPixel", ctypes.c_uint32), ("pixelsPerColumn", ctypes.c_uint32),
        ("boxDim", ctypes.c_uint32 * 5), ("elementStrides", ctypes.c_uint32 * 5),
        ("pixelBoxLowerCorner", ctypes.c_int32 * 3), ("pixelBoxUpperCorner", ctypes.c_int32 * 3),
        ("globalAddress", ctypes.c_uint64), ("globalDim", ctypes.c_uint64 * 5),
        ("globalStrides", ctypes.c_uint64 * 4),
    ]


class _Status(ctypes.Structure):
    _fields_ = [("rule", ctypes.c_uint32), ("index", ctypes.c_int32), ("value", ctypes.c_int64),
                ("message", ctypes.c_char * 192)]


_ABI_VERSION = 1
_lib = None


def _library_path() -> Path:
    env = os.environ.get("NVTMA_TENSORMAP_LIB")
    if env:
        return Path(env)
    here = Path(os.path.abspath(__file__)).parent  # not resolve(): dev trees symlink sources
    for cand in (here / "_lib" / "libnvtma_tensormap.so",):
        if cand.exists():
            return cand
    raise ImportError(
        f"libnvtma_tensormap.so not found next to {here} (set NVTMA_TENSORMAP_LIB to its path); "
        "reinstall nvtma with `pip install .`")


def _load():
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(str(_library_path()))
    lib.nvtmaTensorMapAbiVersion.restype = ctypes.c_int
    if lib.nvtmaTensorMapAbiVersion() != _ABI_VERSION:
        raise ImportError(f"libnvtma_tensormap ABI {lib.nvtmaTensorMapAbiVersion()} != {_ABI_VERSION}")
    P, S, U8 = ctypes.POINTER(_Params), ctypes.POINTER(_Status), ctypes.c_char_p
    lib.nvtmaTensorMapValidate.argtypes = [P, ctypes.c_uint32, S]
    lib.nvtmaTensorMapEncode.argtypes = [P, ctypes.c_uint32, ctypes.c_void_p, S]
    lib.nvtmaTensorMapDecode.argtypes = [U8, P, S]
    lib.nvtmaTensorMapReplaceAddress.argtypes = [ctypes.c_void_p, ctypes.c_uint64, S]
    lib.nvtmaTensorMapRuleName.restype = ctypes.c_char_p
    lib.nvtmaTensorMapRuleName.argtypes = [ctypes.c_uint32]
    lib.nvtmaTensorMapNumRules.restype = ctypes.c_uint32
    _lib = lib
    return lib


def rule_names() -> list[str]:
    """Names of every rule the validator checks, in the C library's order."""
    lib = _load()
    return [lib.nvtmaTensorMapRuleName(i).decode() for i in range(lib.nvtmaTensorMapNumRules())]


def _raise(st: _Status):
    lib = _load()
    rule = lib.nvtmaTensorMapRuleName(st.rule).decode()
    raise TensorMapError(st.message.decode(), rule=rule, index=None if st.index < 0 else st.index,
                         value=st.value)


def _ints(name: str, values, n: int, bits: int, signed: bool = False) -> list[int]:
    try:
        seq = [int(v) for v in values]
    except TypeError:
        raise TensorMapError(f"{name} must be a sequence of integers, got {values!r}") from None
    if len(seq) != n:
        raise TensorMapError(f"{name} has {len(seq)} entries, rank needs {n}", rule="argument-count",
                             value=len(seq))
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    for i, v in enumerate(seq):
        if not lo <= v <= hi:
            raise TensorMapError(f"{name}[{i}] is {v}, it does not fit the driver's {bits}-bit "
                                 f"{'signed' if signed else 'unsigned'} argument",
                                 rule="argument", index=i, value=v)
    return seq


def _rank(rank, lo: int, hi: int) -> int:
    r = int(rank)
    if not lo <= r <= hi:
        raise TensorMapError(f"rank-range: rank is {r}, the range is {lo}..{hi}", rule="rank-range", value=r)
    return r


def _common(p: _Params, dtype, rank, global_address, global_dim, global_strides, element_strides,
            interleave, swizzle, l2_promotion, oob_fill):
    p.dataType = DataType.coerce(dtype, "dtype")
    p.rank = rank
    p.globalAddress = _ints("global_address", [global_address], 1, 64)[0]
    p.globalDim[:rank] = _ints("global_dim", global_dim, rank, 64)
    p.globalStrides[:rank - 1] = _ints("global_strides", global_strides, rank - 1, 64)
    p.elementStrides[:rank] = _ints("element_strides", element_strides, rank, 32)
    p.interleave = Interleave.coerce(interleave, "interleave")
    p.swizzle = Swizzle.coerce(swizzle, "swizzle")
    p.l2Promotion = L2Promotion.coerce(l2_promotion, "l2_promotion")
    p.oobFill = OOBFill.coerce(oob_fill, "oob_fill")


def _tiled_params(dtype, rank, global_address, global_dim, global_strides, box_dim, element_strides,
                  interleave="none", swizzle="none", l2_promotion="l2_128b", oob_fill="none") -> _Params:
    rank = _rank(rank, 1, 5)
    p = _Params()
    p.mode = 0
    _common(p, dtype, rank, global_address, global_dim, global_strides, element_strides,
            interleave, swizzle, l2_promotion, oob_fill)
    p.boxDim[:rank] = _ints("box_dim", box_dim, rank, 32)
    return p


def _im2col_params(dtype, rank, global_address, global_dim, global_strides, pixel_box_lower_corner,
                   pixel_box_upper_corner, channels_per_pixel, pixels_per_column, element_strides,
                   interleave="none", swizzle="none", l2_promotion="l2_128b", oob_fill="none") -> _Params:
    rank = _rank(rank, 3, 5)
    p = _Params()
    p.mode = 1
    _common(p, dtype, rank, global_address, global_dim, global_strides, element_strides,
            interleave, swizzle, l2_promotion, oob_fill)
    p.pixelBoxLowerCorner[:rank - 2] = _ints("pixel_box_lower_corner", pixel_box_lower_corner, rank - 2, 32, True)
    p.pixelBoxUpperCorner[:rank - 2] = _ints("pixel_box_upper_corner", pixel_box_upper_corner, rank - 2, 32, True)
    p.channelsPerPixel = _ints("channels_per_pixel", [channels_per_pixel], 1, 32)[0]
    p.pixelsPerColumn = _ints("pixels_per_column", [pixels_per_column], 1, 32)[0]
    return p


def _encode(p: _Params, sm: int) -> bytes:
    lib = _load()
    out = ctypes.create_string_buffer(DESCRIPTOR_BYTES)
    st = _Status()
    if not lib.nvtmaTensorMapEncode(ctypes.byref(p), int(sm), out, ctypes.byref(st)):
        _raise(st)
    return out.raw


def _validate(p: _Params, sm: int) -> None:
    st = _Status()
    if not _load().nvtmaTensorMapValidate(ctypes.byref(p), int(sm), ctypes.byref(st)):
        _raise(st)


def encode_tiled(dtype, rank, global_address, global_dim: Sequence[int], global_strides: Sequence[int],
                 box_dim: Sequence[int], element_strides: Sequence[int], interleave="none", swizzle="none",
                 l2_promotion="l2_128b", oob_fill="none", *, sm: int = 90) -> bytes:
    """The 128 bytes ``cuTensorMapEncodeTiled`` writes for these arguments.

    ``global_dim``, ``box_dim`` and ``element_strides`` have ``rank`` entries
    (innermost first), ``global_strides`` ``rank - 1`` byte strides.
    """
    # Fast path: the abi3 extension, one C call. Anything it does not take
    # (or the validator refuses) takes the checked path below, which names
    # the argument or the driver rule.
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
    """encode_tiled of _lib/_tensormap_fast.abi3.so, or False where it is
    missing or NVTMA_FAST_ENCODE=0."""
    global _fast_c
    if _fast_c is None:
        _fast_c = False
        path = Path(os.path.abspath(__file__)).parent / "_lib" / "_tensormap_fast.abi3.so"
        if os.environ.get("NVTMA_FAST_ENCODE", "1") != "0" and path.exists():
            import importlib.util
            try:
                spec = importlib.util.spec_from_file_location("nvtma._lib._tensormap_fast", path)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
                mod.set_tables(tuple(_fast_tables()))
                _fast_c = mod.encode_tiled
            except ImportError:
                pass
    return _fast_c


_fast = None


def _fast_tables():
    """Exact spellings (and ints / IntEnum members) -> value, per enum."""
    global _fast
    if _fast is None:
        tables = []
        for cls in (DataType, Interleave, Swizzle, L2Promotion, OOBFill):
            t = {}
            for m in cls:
                for name in (m.name, m.dialect, m.cuda_name):
                    t[name] = int(m)
                t[int(m)] = int(m)
            tables.append(t)
        _fast = tables
    return _fast


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
    _validate(_tiled_params(*args, **kwargs), sm)


def validate_im2col(*args, sm: int = 90, **kwargs) -> None:
    """Raise TensorMapError if ``encode_im2col`` would; return None otherwise."""
    _validate(_im2col_params(*args, **kwargs), sm)


def _as_bytes(desc) -> bytes:
    if isinstance(desc, str):
        try:
            desc = bytes.fromhex(desc.replace(" ", "").replace("0x", ""))
        except ValueError:
            raise TensorMapError("descriptor-layout: not a hex string", rule="descriptor-layout") from None
    desc = bytes(desc)
    if len(desc) != DESCRIPTOR_BYTES:
        raise TensorMapError(f"descriptor-layout: a descriptor has 128 bytes, got {len(desc)}",
                             rule="descriptor-layout", value=len(desc))
    return desc


def decode(desc) -> TensorMapFields:
    """Every field of a descriptor (bytes, bytearray, memoryview or hex)."""
    raw = _as_bytes(desc)
    p, st = _Params(), _Status()
    if not _load().nvtmaTensorMapDecode(raw, ctypes.byref(p), ctypes.byref(st)):
        _raise(st)
    r = p.rank
    common = dict(dtype=DataType(p.dataType), rank=r, global_address=p.globalAddress,
                  global_dim=tuple(p.globalDim[:r]), global_strides=tuple(p.globalStrides[:r - 1]),
                  element_strides=tuple(p.elementStrides[:r]), interleave=Interleave(p.interleave),
                  swizzle=Swizzle(p.swizzle), l2_promotion=L2Promotion(p.l2Promotion),
                  oob_fill=OOBFill(p.oobFill))
    if p.mode == 0:
        return TensorMapFields(mode="tiled", box_dim=tuple(p.boxDim[:r]), **common)
    return TensorMapFields(mode="im2col", pixel_box_lower_corner=tuple(p.pixelBoxLowerCorner[:r - 2]),
                           pixel_box_upper_corner=tuple(p.pixelBoxUpperCorner[:r - 2]),
                           channels_per_pixel=p.channelsPerPixel, pixels_per_column=p.pixelsPerColumn,
                           **common)


def replace_address(desc, global_address: int) -> bytes:
    """A copy of `desc` pointing at `global_address` (cuTensorMapReplaceAddress)."""
    buf = ctypes.create_string_buffer(_as_bytes(desc), DESCRIPTOR_BYTES)
    st = _Status()
    addr = _ints("global_address", [global_address], 1, 64)[0]
    if not _load().nvtmaTensorMapReplaceAddress(buf, addr, ctypes.byref(st)):
        _raise(st)
    return buf.raw
