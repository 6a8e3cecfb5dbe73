"""Argument intake: GPU tensors in, what a launch needs out.

Three ways in, each giving a TensorInfo (pointer, shape, element strides,
element type, device, and the object that keeps the memory alive):

* torch tensors, read directly (the fast path);
* any ``__dlpack__`` producer: the DLPack capsule is read (legacy and
  versioned), asked for the launch stream so the producer orders its work
  before ours, and kept until the launch is done;
* ``__cuda_array_interface__`` (v2/v3): bf16/fp8 only as same-width raw
  (``V``) types, which is all the interface can say; its ``stream`` is
  honoured by making the launch stream wait for it; null pointers, masks and
  big-endian types are refused.

Every refusal is a LaunchError naming the argument and the rule.
"""

from __future__ import annotations

import ctypes
import functools
import math
import numbers
import operator
import re
import struct
import sys
from collections.abc import Mapping

from .errors import LaunchError

# memref element type -> (kind, bits); kind: f float, i integer (signless)
_MLIR_ELEM = re.compile(r"^(f|bf|i|ui|si)(\d+)(.*)$")

_TORCH_NAMES = {
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "int8": "i8", "uint8": "ui8", "int16": "i16", "uint16": "ui16", "int32": "i32", "uint32": "ui32",
    "int64": "i64", "uint64": "ui64", "bool": "i1",
    "float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2", "float8_e4m3fnuz": "f8E4M3FNUZ",
    "float8_e5m2fnuz": "f8E5M2FNUZ", "float8_e8m0fnu": "f8E8M0FNU",
}
# __cuda_array_interface__ typestr (without the byte-order character) -> element type
_TYPESTR = {"f2": "f16", "f4": "f32", "f8": "f64", "i1": "i8", "u1": "ui8", "i2": "i16", "u2": "ui16",
            "i4": "i32", "u4": "ui32", "i8": "i64", "u8": "ui64", "b1": "i1",
            # raw elements: how bf16 and fp8 arrays (ml_dtypes) describe themselves
            "V1": "raw8", "V2": "raw16", "V4": "raw32", "V8": "raw64"}
# DLPack (type code, bits) -> element type
_DLPACK = {(0, 8): "i8", (0, 16): "i16", (0, 32): "i32", (0, 64): "i64",
           (1, 8): "ui8", (1, 16): "ui16", (1, 32): "ui32", (1, 64): "ui64",
           (2, 16): "f16", (2, 32): "f32", (2, 64): "f64", (4, 16): "bf16", (6, 8): "i1",
           (10, 8): "f8E4M3FN", (11, 8): "f8E4M3FNUZ", (12, 8): "f8E5M2", (13, 8): "f8E5M2FNUZ",
           (14, 8): "f8E8M0FNU"}
_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
_ADDR_END = 1 << 64

_BITS = {"i1": 8}


def element_bits(elem: str) -> int:
    """Storage bits of one element (i1 is stored in a byte)."""
    b = _BITS.get(elem)
    if b is None:
        m = re.search(r"(\d+)", elem)
        b = int(m.group(1)) if m else 0
        if elem.startswith("f8"):
            b = 8
        _BITS[elem] = b
    return b


def element_compatible(tensor_elem: str, memref_elem: str) -> bool:
    """Same bits and same kind; signless MLIR integers take any signedness;
    a raw (void) element of the same width takes anything."""
    if tensor_elem == memref_elem:
        return True
    if tensor_elem.startswith("raw"):
        return element_bits(memref_elem) == int(tensor_elem[3:])
    a, b = _MLIR_ELEM.match(tensor_elem), _MLIR_ELEM.match(memref_elem)
    if not a or not b or a.group(2) != b.group(2) or a.group(3) or b.group(3):
        return False
    ints = ("i", "ui", "si")
    return a.group(1) in ints and b.group(1) == "i"


class TensorInfo:
    """One GPU tensor argument, as a launch sees it."""

    __slots__ = ("ptr", "shape", "strides", "elem", "bits", "device", "owner", "stream")

    def __init__(self, ptr, shape, strides, elem, bits, device=None, owner=None, stream=None):
        self.ptr, self.shape, self.strides, self.elem, self.bits = ptr, shape, strides, elem, bits
        self.device = device  # CUDA ordinal, None when unknown
        self.owner = owner    # keeps the memory alive until the launch is made (DLPack capsule)
        self.stream = stream  # a producer's stream the launch must wait for (CUDA array interface)


# --------------------------------------------------------------------------- torch

_torch_tensor = None
_torch_exact = None
_torch_dtypes = {}


def torch_tensor_type():
    """torch.Tensor once torch is imported (never imports it); with it
    `_torch_exact`, the exact types the launch's fast paths take: torch.Tensor
    and nn.Parameter (a weight: a subclass that answers shape, strides and
    addresses as a tensor does)."""
    global _torch_tensor, _torch_exact
    if _torch_tensor is None:
        torch = sys.modules.get("torch")
        if torch is None or not hasattr(torch, "Tensor"):
            return None
        param = getattr(getattr(torch, "nn", None), "Parameter", None)
        _torch_exact = (torch.Tensor,) + ((param,) if isinstance(param, type) else ())
        _torch_tensor = torch.Tensor
    return _torch_tensor


def torch_elem(dtype, arg: str) -> str:
    elem = _torch_dtypes.get(dtype)
    if elem is None:
        elem = _TORCH_NAMES.get(str(dtype).replace("torch.", ""))
        if elem is None:
            raise LaunchError(f"{arg}: dtype {dtype} has no kernel element type", arg=arg, rule="dtype")
        _torch_dtypes[dtype] = elem
    return elem


def from_torch(t, arg: str) -> TensorInfo:
    dev = t.get_device()
    if dev < 0:
        raise LaunchError(f"{arg}: a {t.device} tensor; TMA reads GPU memory, move it with .cuda()",
                          arg=arg, rule="device")
    elem = torch_elem(t.dtype, arg)
    return TensorInfo(t.data_ptr(), tuple(t.shape), tuple(t.stride()), elem, element_bits(elem), dev, t)


# --------------------------------------------------------------------------- DLPack

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_capsule_api = None


def _capsules():
    global _capsule_api
    if _capsule_api is None:
        api = ctypes.pythonapi
        api.PyCapsule_IsValid.restype = ctypes.c_int
        api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        _capsule_api = api
    return _capsule_api


MAX_RANK = 64


def dlpack_device(obj, arg: str) -> int:
    try:
        dev_type, dev_id = obj.__dlpack_device__()
        dev_type, dev_id = int(dev_type), int(dev_id)
    except Exception as e:
        raise LaunchError(f"{arg}: __dlpack_device__() failed ({type(e).__name__}: {e})", arg=arg,
                          rule="dlpack") from None
    if dev_type in (1, 3):  # kDLCPU, kDLCUDAHost
        raise LaunchError(f"{arg}: a host array ({type(obj).__name__}, DLPack device type {dev_type}); pass a GPU "
                          "tensor", arg=arg, rule="device")
    if dev_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise LaunchError(f"{arg}: a DLPack tensor on device type {dev_type}; TMA reads CUDA memory "
                          f"(type {_DL_CUDA})", arg=arg, rule="device")
    if dev_id < 0:
        raise LaunchError(f"{arg}: DLPack device id {dev_id}", arg=arg, rule="device")
    return dev_id


def from_dlpack(obj, arg: str, stream: int | None = None) -> TensorInfo:
    """Reads a __dlpack__ producer's tensor. `stream` is the launch stream
    (None: the legacy default stream): the producer makes its pending work on
    the tensor visible to it."""
    dev = dlpack_device(obj, arg)
    s = 1 if not stream else int(stream)  # 0 is not allowed by the protocol: 1 is the legacy stream
    capsule = None
    for kwargs in ({"stream": s, "max_version": (1, 1)}, {"stream": s}, {}):
        try:
            capsule = obj.__dlpack__(**kwargs)
            break
        except TypeError:
            continue
        except Exception as e:
            raise LaunchError(f"{arg}: __dlpack__() failed ({type(e).__name__}: {e})", arg=arg,
                              rule="dlpack") from None
    if capsule is None:
        raise LaunchError(f"{arg}: __dlpack__() takes none of the protocol's arguments", arg=arg, rule="dlpack")
    api = _capsules()
    try:
        if api.PyCapsule_IsValid(capsule, b"dltensor_versioned"):
            m = _DLManagedTensorVersioned.from_address(api.PyCapsule_GetPointer(capsule, b"dltensor_versioned"))
            if m.major != 1:
                raise LaunchError(f"{arg}: DLPack version {m.major}.{m.minor}, nvtma reads 1.x", arg=arg,
                                  rule="dlpack")
            t = m.dl_tensor
        elif api.PyCapsule_IsValid(capsule, b"dltensor"):
            t = _DLManagedTensor.from_address(api.PyCapsule_GetPointer(capsule, b"dltensor")).dl_tensor
        else:
            raise LaunchError(f"{arg}: __dlpack__() returned {type(capsule).__name__}, not a DLPack capsule",
                              arg=arg, rule="dlpack")
    except ctypes.ArgumentError:
        raise LaunchError(f"{arg}: __dlpack__() returned {type(capsule).__name__}, not a DLPack capsule",
                          arg=arg, rule="dlpack") from None
    if t.device.device_type not in (_DL_CUDA, _DL_CUDA_MANAGED) or t.device.device_id != dev:
        raise LaunchError(f"{arg}: the capsule's device ({t.device.device_type}, {t.device.device_id}) is not "
                          f"the one __dlpack_device__ named", arg=arg, rule="device")
    ndim = t.ndim
    if not 0 <= ndim <= MAX_RANK:
        raise LaunchError(f"{arg}: DLPack ndim {ndim}, the range is 0..{MAX_RANK}", arg=arg, rule="rank")
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    elem = _DLPACK.get((code, bits))
    if elem is None or lanes != 1:
        raise LaunchError(f"{arg}: DLPack dtype (code {code}, {bits} bits, {lanes} lanes) has no kernel element "
                          "type", arg=arg, rule="dtype")
    # Each field read once: a read makes a new ctypes pointer. A NULL one indexed is ctypes' ValueError.
    sp, st = t.shape, t.strides
    if not sp and ndim:
        raise LaunchError(f"{arg}: the DLPack tensor's shape is a NULL pointer for ndim {ndim}", arg=arg,
                          rule="dlpack")
    shape = tuple(sp[:ndim])
    if shape and min(shape) < 0:
        raise LaunchError(f"{arg}: DLPack shape {shape}", arg=arg, rule="shape")
    if st:
        strides = tuple(st[:ndim])
    else:  # NULL strides: compact row-major (DLPack before 1.2)
        strides = _row_major(shape)
    data = t.data or 0
    ptr = data + t.byte_offset
    if not 0 < ptr < _ADDR_END:
        if not ptr:
            raise LaunchError(f"{arg}: a null data pointer", arg=arg, rule="address")
        raise LaunchError(f"{arg}: DLPack data 0x{data:x} + byte_offset {t.byte_offset} is 0x{ptr:x}, not a 64-bit "
                          "address", arg=arg, rule="address")
    return TensorInfo(ptr, shape, strides, elem, element_bits(elem), dev, (obj, capsule))


def _row_major(shape):
    strides, acc = [], 1
    for d in reversed(shape):
        strides.insert(0, acc)
        acc *= max(d, 1)
    return tuple(strides)


# --------------------------------------------------------------------------- CUDA array interface

_INT = frozenset((int,))  # shape and strides entries of the usual interface: exactly ints (checked in C)
_TYPESIZE = {ts: int(ts[1:]) for ts in _TYPESTR}


def _cai_ints(v, arg: str, field: str, rule: str) -> tuple:
    """The interface's shape or strides when not a tuple of plain ints: a
    list, or integers of other types (numpy's), become a tuple of ints;
    anything else (a float, a str, None, a bare int) is refused."""
    if isinstance(v, (tuple, list)):
        out = []
        for d in v:
            if isinstance(d, bool) or not isinstance(d, numbers.Integral):
                raise LaunchError(f"{arg}: __cuda_array_interface__ {field} {v!r}: {d!r} is not an int", arg=arg,
                                  rule=rule)
            out.append(int(d))
        return tuple(out)
    raise LaunchError(f"{arg}: __cuda_array_interface__ {field} {v!r}: pass a tuple of ints", arg=arg, rule=rule)


def _cai_malformed(arg: str, what: str):
    raise LaunchError(f"{arg}: malformed __cuda_array_interface__ ({what})", arg=arg,
                      rule="cuda-array-interface") from None


def from_cai(obj, arg: str, device_of=None) -> TensorInfo:
    """Reads __cuda_array_interface__. `device_of(ptr)` gives a pointer's
    device (a driver query); without it the device is left unknown. Every
    field is checked here, where the dict is read: a shape, strides, version
    or stream of the wrong type is refused, never coerced."""
    try:
        cai = obj.__cuda_array_interface__
    except Exception as e:
        _cai_malformed(arg, f"{type(e).__name__}: {e}")
    if cai.__class__ is not dict and not isinstance(cai, Mapping):
        _cai_malformed(arg, f"a {type(cai).__name__}, not a dict")
    try:
        typestr = cai["typestr"]
        shape = cai["shape"]
        data = cai["data"]
        ptr = data[0]
    except Exception as e:
        _cai_malformed(arg, f"{type(e).__name__}: {e}")
    if shape.__class__ is not tuple or not _INT.issuperset(map(type, shape)):
        shape = _cai_ints(shape, arg, "shape", "shape")
    if not isinstance(typestr, str) or len(typestr) < 3:
        raise LaunchError(f"{arg}: typestr {typestr!r}", arg=arg, rule="dtype")
    order, ts = typestr[0], typestr[1:]
    size = _TYPESIZE.get(ts, 0)
    if order == ">" and size > 1:
        raise LaunchError(f"{arg}: big-endian typestr {typestr!r}; GPUs are little-endian", arg=arg, rule="dtype")
    if order not in "<>|=":
        raise LaunchError(f"{arg}: typestr {typestr!r}", arg=arg, rule="dtype")
    elem = _TYPESTR.get(ts)
    if elem is None:
        raise LaunchError(f"{arg}: typestr {typestr!r} has no kernel element type", arg=arg, rule="dtype")
    if cai.get("mask") is not None:
        raise LaunchError(f"{arg}: masked arrays are not supported", arg=arg, rule="cuda-array-interface")
    if ptr.__class__ is not int or not 0 < ptr < _ADDR_END:
        if not isinstance(ptr, int) or isinstance(ptr, bool) or ptr <= 0:
            raise LaunchError(f"{arg}: data pointer {ptr!r}; a launch needs the tensor's device address", arg=arg,
                              rule="address")
        if ptr >= _ADDR_END:
            raise LaunchError(f"{arg}: data pointer 0x{ptr:x} is not a 64-bit address", arg=arg, rule="address")
    if shape and min(shape) < 0:
        raise LaunchError(f"{arg}: shape {shape}", arg=arg, rule="shape")
    raw_strides = cai.get("strides")
    if raw_strides is None:
        strides = _row_major(shape)
    else:
        if raw_strides.__class__ is not tuple or not _INT.issuperset(map(type, raw_strides)):
            raw_strides = _cai_ints(raw_strides, arg, "strides", "stride")
        if len(raw_strides) != len(shape):
            raise LaunchError(f"{arg}: {len(raw_strides)} strides for rank {len(shape)}", arg=arg, rule="stride")
        strides = []
        for s in raw_strides:
            if s % size:
                raise LaunchError(f"{arg}: byte stride {s} is not a multiple of the element size {size}",
                                  arg=arg, rule="alignment")
            strides.append(s // size)
        strides = tuple(strides)
    version = cai.get("version", 2)
    if version.__class__ is not int:
        if isinstance(version, bool) or not isinstance(version, int):
            raise LaunchError(f"{arg}: __cuda_array_interface__ version {version!r} is not an int", arg=arg,
                              rule="cuda-array-interface")
    stream = cai.get("stream") if version >= 3 else None
    if stream is not None and (stream.__class__ is not int or not 0 < stream < _ADDR_END):
        if isinstance(stream, bool) or not isinstance(stream, int):
            raise LaunchError(f"{arg}: __cuda_array_interface__ stream {stream!r} is not an int (a CUstream "
                              "handle)", arg=arg, rule="cuda-array-interface")
        if stream == 0:
            raise LaunchError(f"{arg}: __cuda_array_interface__ stream 0; the interface forbids it (1 is the legacy "
                              "default stream)", arg=arg, rule="cuda-array-interface")
        if not 0 < stream < _ADDR_END:
            raise LaunchError(f"{arg}: __cuda_array_interface__ stream {stream} is not a 64-bit handle", arg=arg,
                              rule="cuda-array-interface")
    device = device_of(ptr) if device_of is not None else None
    return TensorInfo(ptr, shape, strides, elem, size * 8, device, obj, stream)


def intake(obj, arg: str, *, stream: int | None = None, device_of=None) -> TensorInfo:
    """A TensorInfo for any supported GPU tensor; LaunchError otherwise."""
    tt = torch_tensor_type()
    if tt is not None and isinstance(obj, tt):
        return from_torch(obj, arg)
    if hasattr(obj, "__cuda_array_interface__"):
        return from_cai(obj, arg, device_of)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return from_dlpack(obj, arg, stream)
    if hasattr(obj, "__array_interface__") or hasattr(obj, "__array__"):
        raise LaunchError(f"{arg}: a host array ({type(obj).__name__}); pass a GPU tensor",
                          arg=arg, rule="device")
    raise LaunchError(f"{arg}: {type(obj).__name__} is not a GPU tensor (torch.Tensor, __dlpack__ or "
                      "__cuda_array_interface__)", arg=arg, rule="type")


def tensor_info(obj, arg: str) -> TensorInfo:
    """Compatibility name of intake() without a stream."""
    return intake(obj, arg)


# --------------------------------------------------------------------------- checks against the record

def check_memref(t: TensorInfo, p: dict, arg: str) -> None:
    """The tensor must fit the memref type the kernel was compiled for."""
    if not element_compatible(t.elem, p["element"]):
        raise LaunchError(f"{arg}: element type {t.elem}, the kernel takes {p['type']}", arg=arg, rule="dtype")
    shape = p["shape"]
    if len(t.shape) != len(shape):
        raise LaunchError(f"{arg}: rank {len(t.shape)}, the kernel takes {p['type']}", arg=arg, rule="rank")
    for i, (got, want) in enumerate(zip(t.shape, shape)):
        if want is not None and got != want:
            raise LaunchError(f"{arg}: dim {i} is {got}, the kernel takes {p['type']}", arg=arg, rule="shape")
    for i, (got, want) in enumerate(zip(t.strides, p["strides"])):
        if want is not None and got != want and t.shape[i] != 1:
            raise LaunchError(f"{arg}: stride {i} is {got} elements, {p['type']} has {want} "
                              "(make it .contiguous() or compile for a strided layout)", arg=arg,
                              rule="contiguity")
    align = p.get("align")
    if align and all(t.shape):  # (an empty tensor: nothing of it is accessed)
        check_align(t.ptr, align, arg)
        for i, (n, got) in enumerate(zip(t.shape[:-1], t.strides)):
            # every outer stride (a static one too: a kernel compiled with one its own accesses cannot take is
            # refused at each launch): a row (or plane) starts at base + i * stride
            if n > 1 and got * t.bits % (8 * align):
                raise LaunchError(f"{arg}: stride {i} is {got * t.bits / 8:g} bytes, not a multiple of {align}; "
                                  f"{_ALIGN_WHY.format(align=align)}", arg=arg, rule="alignment")
    if p.get("writes") and overlaps_itself(t.shape, t.strides):
        raise LaunchError(f"{arg}: a view whose elements share memory (shape {tuple(t.shape)}, strides "
                          f"{tuple(t.strides)}, e.g. an expanded one), and the kernel writes it: writes to one "
                          "place from several elements collide; pass one whose elements are distinct "
                          "(.contiguous())", arg=arg, rule="overlap")
    for d in p.get("tensormaps") or ():
        check_tensormap(t, d, arg)


_EXACT_OVERLAP_LIMIT = 1 << 20  # elements: past it, strides that do not nest count as overlapping


def overlaps_itself(shape, strides) -> bool:
    """Whether two elements of a strided view are at one address: a dim of stride 0 (expanded), or strides that
    do not nest (each larger than the reach of the smaller ones) and, counted exactly, do meet; a view past
    _EXACT_OVERLAP_LIMIT elements whose strides do not nest counts as overlapping (not shown distinct)."""
    if 0 in shape:
        return False
    dims = sorted((abs(s), n) for n, s in zip(shape, strides) if n > 1)
    reach = 0  # the largest offset the smaller dims reach
    for s, n in dims:
        if s <= reach:
            break
        reach += (n - 1) * s
    else:
        return False
    if dims[0][0] == 0:
        return True
    if math.prod(n for _, n in dims) > _EXACT_OVERLAP_LIMIT:
        return True
    return _offsets_meet(tuple(dims))


@functools.lru_cache(maxsize=64)
def _offsets_meet(dims) -> bool:
    """Whether two of the offsets of (stride, size) `dims` are equal, counted exactly: up to about 0.8 s at
    _EXACT_OVERLAP_LIMIT elements, so cached (a loop launching with one odd view pays it once)."""
    import numpy as np
    offsets = np.zeros(1, dtype=np.int64)
    for s, n in dims:
        offsets = (offsets[:, None] + np.arange(n, dtype=np.int64) * s).ravel()
    return np.unique(offsets).size != offsets.size


_I64 = 1 << 63


def check_memref_words(t: TensorInfo, arg: str) -> None:
    """A lowered memref passes its address as an unsigned 64-bit word and its
    sizes and strides as signed ones: a value past them (an interface's
    Python ints, a compact layout's strides computed from a huge shape) is
    refused naming it, where packing raised struct's unnamed "argument out
    of range"."""
    if not 0 <= t.ptr < _ADDR_END:
        raise LaunchError(f"{arg}: address 0x{t.ptr:x} is not a 64-bit address", arg=arg, rule="address")
    for i, n in enumerate(t.shape):
        if not 0 <= n < _I64:
            raise LaunchError(f"{arg}: dim {i} is {n}, past a memref size's signed 64 bits", arg=arg, rule="shape")
    for i, s in enumerate(t.strides):
        if not -_I64 <= s < _I64:
            raise LaunchError(f"{arg}: stride {i} is {s} elements, past a memref stride's signed 64 bits", arg=arg,
                              rule="stride")


_ALIGN_WHY = ("its kernel's accesses assume {align} (vector loads and stores, cp.async, bulk copies, "
              "tensormap.replace, a TMA descriptor kept in it), and a misaligned one faults the CUDA context")


def check_align(ptr: int, align: int, arg: str) -> None:
    """A memref argument's address against its record's "align" (what the
    kernel's accesses assume: a misaligned one faults the context)."""
    if ptr % align:
        raise LaunchError(f"{arg}: address 0x{ptr:x} is not {align}-byte aligned; {_ALIGN_WHY.format(align=align)}",
                          arg=arg, rule="alignment")


ADDRESS_LIMIT = 1 << 57  # the descriptor's global address field


def descriptor_align(d: dict) -> int:
    """The global-address alignment a descriptor needs (32 bytes for 32-byte
    interleave and the packed 16-byte formats, else 16)."""
    return 32 if d["interleave"] == 2 or d["tma_format"] in (14, 15) else 16


def check_address(ptr: int, align: int, arg: str) -> None:
    if ptr % align:
        raise LaunchError(f"{arg}: address 0x{ptr:x} is not {align}-byte aligned (TMA rule address-align)",
                          arg=arg, rule="alignment")
    if not 0 < ptr < ADDRESS_LIMIT:
        raise LaunchError(f"{arg}: address 0x{ptr:x} is past the 57-bit address space (TMA rule address-range)",
                          arg=arg, rule="address-range")


def descriptor_params(t: TensorInfo, d: dict, arg: str) -> dict:
    """Arguments of encode_tiled / encode_im2col for a descriptor record."""
    check_address(t.ptr, descriptor_align(d), arg)
    return _descriptor_fields(t, d, arg)


def _descriptor_fields(t: TensorInfo, d: dict, arg: str) -> dict:
    """descriptor_params without the address checks."""
    rank = d["rank"]
    if len(t.shape) != rank:
        raise LaunchError(f"{arg}: rank {len(t.shape)}, its TMA descriptor has rank {rank}", arg=arg, rule="rank")
    if t.strides[-1] != 1 and t.shape[-1] != 1:
        raise LaunchError(f"{arg}: the innermost dim must be contiguous for TMA (stride {t.strides[-1]})",
                          arg=arg, rule="contiguity")
    if element_bits(t.elem) != d["element_bits"] and not t.elem.startswith("raw"):
        raise LaunchError(f"{arg}: {t.elem} elements, its TMA descriptor moves {d['element_bits']}-bit ones",
                          arg=arg, rule="dtype")
    bits = d["element_bits"]
    dims = list(reversed(t.shape))
    strides = [s * bits // 8 for s in reversed(t.strides)][1:]
    common = dict(dtype=d["tma_format"], rank=rank, global_address=t.ptr, global_dim=dims,
                  global_strides=strides, element_strides=d["element_strides"], interleave=d["interleave"],
                  swizzle=d["swizzle"], l2_promotion=d["l2_promotion"], oob_fill=d["oob_fill"])
    if d["mode"] == "tiled":
        common["box_dim"] = d["box_dim"]
    else:
        common.update(pixel_box_lower_corner=d["pixel_box_lower_corner"],
                      pixel_box_upper_corner=d["pixel_box_upper_corner"],
                      channels_per_pixel=d["channels_per_pixel"], pixels_per_column=d["pixels_per_column"])
    return common


TENSORMAP_DIM_LIMIT = 1 << 32  # tensormap.replace takes a dim as a 32-bit operand
# TMA copies take signed 32-bit coordinates (cp.async.bulk.tensor's tensorCoords are .s32, in every mode: tile,
# im2col, gather4; the lowering truncates each index to i32), while a descriptor takes dims up to 2^32: of a dim
# of 2^31 elements or more the boxes from element 2^31 on have no coordinate (one there wraps negative: a load
# fills zeros, a store writes nothing), a silently short copy. The limit of nvtma.kernels' builders too.
COORDINATE_LIMIT = 1 << 31


def check_coordinates(t: TensorInfo, d: dict, arg: str, why: str = "") -> None:
    """Every dim of a tensor bound to a TMA descriptor (record `d`) below
    COORDINATE_LIMIT, so that each element has a coordinate a copy can take."""
    rank = d["rank"]
    for j, n in enumerate(t.shape):
        if n >= COORDINATE_LIMIT:
            raise LaunchError(f"{arg}: coordinate-range: tensor dim {j} is {n} elements, the limit is 2^31 - 1 "
                              f"(descriptor dim {rank - 1 - j}); TMA copies take signed 32-bit coordinates, none "
                              f"reaches element 2^31 of a dim{why}", arg=arg, rule="coordinate-range")


def tensormap_align(p: dict) -> int:
    """The address alignment the descriptors tensormap.replace points a memref
    record at need (0: none does)."""
    return max((descriptor_align(d) for d in p.get("tensormaps") or ()), default=0)


def check_tensormap(t: TensorInfo, d: dict, arg: str) -> None:
    """The driver's rules on the address, dims and byte strides that
    tensormap.replace (nvtma.update_tma_descriptor) writes into a descriptor
    of record `d`'s static fields on the device, where no driver checks them."""
    from .. import tensormap as tm
    align = descriptor_align(d)
    if t.ptr:  # the address rules as the fast paths name them, on a new address
        check_address(t.ptr, align, arg)
    p = _descriptor_fields(t, d, arg)
    why = f"tensormap.replace writes it into a descriptor ({d.get('atom') or d['mode']}) on the device"
    try:
        (tm.validate_tiled if d["mode"] == "tiled" else tm.validate_im2col)(**p)
    except tm.TensorMapError as e:
        raise LaunchError(f"{arg}: {e}{_tensor_dim(e.rule, e.index, d['rank'])}; {why}", arg=arg,
                          rule=e.rule) from None
    for i, n in enumerate(p["global_dim"]):
        if n >= TENSORMAP_DIM_LIMIT:
            raise LaunchError(f"{arg}: global-dim-range: global dim {i} is {n}, the limit is below 2^32"
                              f"{_tensor_dim('global-dim-range', i, d['rank'])}; {why}, as a 32-bit operand",
                              arg=arg, rule="global-dim-range")
    check_coordinates(t, d, arg, f"; {why}")
    if not t.ptr:  # after the dims: an empty tensor's null address is not what is wrong with it
        check_address(t.ptr, align, arg)


def _tensor_dim(rule: str, index, rank: int) -> str:
    """The tensor dim a descriptor rule's index names (descriptor dims count
    from the innermost; strides skip it)."""
    if index is None:
        return ""
    if rule.startswith("global-stride"):
        return f" (the stride of tensor dim {rank - 2 - index})"
    if rule in ("global-dim-range", "box-dim-range", "element-stride-range"):
        return f" (tensor dim {rank - 1 - index})"
    return ""


def encode_descriptor(t: TensorInfo, d: dict, arg: str, encoder: str = "nvtma") -> bytes:
    """128 descriptor bytes for tensor `t` under record `d`."""
    from .. import tensormap as tm
    p = descriptor_params(t, d, arg)
    try:
        if encoder == "driver":
            from .driver import driver_encode
            # what fits the driver's argument types, checked as nvtma's encoder checks it (cuda.bindings raised
            # OverflowError on a negative stride); the driver's rules are the driver's to judge
            (tm._tiled_params if d["mode"] == "tiled" else tm._im2col_params)(**p)
            out = driver_encode(d["mode"], p)
        elif d["mode"] == "tiled":
            out = tm.encode_tiled(**p)
        else:
            out = tm.encode_im2col(**p)
    except tm.TensorMapError as e:
        raise LaunchError(f"{arg}: {e}", arg=arg, rule=e.rule) from None
    check_coordinates(t, d, arg)
    if len(out) != 128:  # the parameter slot is 128 bytes: anything else is a bug upstream
        raise LaunchError(f"{arg}: the encoder returned {len(out)} bytes, a descriptor has 128", arg=arg,
                          rule="artifact")
    return bytes(out)


# --------------------------------------------------------------------------- scalars

_FLOAT_FORMATS = {"f32": "<f", "f64": "<d", "f16": "<e"}


_DTYPE_NAMES = {}


def _dtype_name(dtype) -> str:
    """str(dtype), remembered: numpy's takes microseconds."""
    try:
        name = _DTYPE_NAMES.get(dtype)
    except TypeError:  # unhashable
        return str(dtype)
    if name is None:
        name = str(dtype)
        if len(_DTYPE_NAMES) < 64:
            _DTYPE_NAMES[dtype] = name
    return name


def _what(value) -> str:
    """A scalar argument's description for messages: "float", "int64",
    "Tensor (torch.float32)"."""
    what = type(value).__name__
    dtype = getattr(value, "dtype", None)
    name = what if dtype is None else _dtype_name(dtype)
    return what if name == what else f"{what} ({name})"


def _bool_dtype(value, ty: str, arg: str) -> bool:
    """Whether a scalar argument other than a Python number (a numpy scalar,
    a 0-d tensor or array) holds a bool; one of more than 0 dims is refused
    (what it would convert to is an element, or an error of its library's)."""
    if getattr(value, "ndim", 0):
        raise LaunchError(f"{arg}: {_what(value)} of shape {tuple(value.shape)} for a scalar parameter ({ty}); pass "
                          "a number or a 0-d tensor or array", arg=arg, rule="type")
    dtype = getattr(value, "dtype", None)
    return dtype is not None and _dtype_name(dtype) in ("bool", "torch.bool")


def pack_scalar(value, p: dict, arg: str) -> bytes:
    """A scalar argument's bytes for record `p`: a Python number, a numpy
    scalar, or a 0-d tensor or array. An integer parameter takes integers
    only (through __index__: a float tensor is refused as a float is, not
    truncated); a bool only for i1."""
    ty = p["type"]
    bits = p["bits"]
    cls = value.__class__
    if ty.startswith("f") or ty.startswith("bf"):
        fmt = _FLOAT_FORMATS.get(ty)
        if fmt is None:
            raise LaunchError(f"{arg}: scalar type {ty} is not supported", arg=arg, rule="type")
        if cls is not float and cls is not int:
            if not hasattr(value, "__float__") or (
                    isinstance(value, bool) if isinstance(value, (int, float)) else _bool_dtype(value, ty, arg)):
                raise LaunchError(f"{arg}: {_what(value)} for a float parameter ({ty})", arg=arg, rule="type")
        try:
            return struct.pack(fmt, float(value))
        except (OverflowError, struct.error):
            raise LaunchError(f"{arg}: {value!r} does not fit {ty}", arg=arg, rule="range") from None
        except (TypeError, ValueError) as e:
            raise LaunchError(f"{arg}: {_what(value)} for a float parameter ({ty}): {e}", arg=arg,
                              rule="type") from None
    if cls is int:
        v = value
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):  # numpy's integers, an IntEnum
        v = operator.index(value)
    else:
        # a bool, np.bool_, or a bool tensor or array: i1's only
        truth = isinstance(value, bool) if isinstance(value, (int, float)) else _bool_dtype(value, ty, arg)
        if isinstance(value, float) or (truth and bits != 1) or not (truth or hasattr(value, "__index__")):
            raise LaunchError(f"{arg}: {_what(value)} for an integer parameter ({ty})", arg=arg, rule="type")
        try:
            # lossless: int() would truncate a float tensor or array
            v = (1 if value else 0) if truth else operator.index(value)
        except (TypeError, ValueError):
            raise LaunchError(f"{arg}: {_what(value)} for an integer parameter ({ty})", arg=arg,
                              rule="type") from None
    signed = p.get("signed")
    if signed is True:
        lo, hi, what = -(1 << (bits - 1)), (1 << (bits - 1)) - 1, ty
    elif signed is False:
        lo, hi, what = 0, (1 << bits) - 1, f"unsigned {ty}"
    else:  # a record from before "signed": either reading of the bits
        lo, hi, what = -(1 << (bits - 1)), (1 << bits) - 1, ty
    if not lo <= v <= hi:
        raise LaunchError(f"{arg}: {v} does not fit {what}, the range is {lo}..{hi}", arg=arg, rule="range")
    return (v & ((1 << bits) - 1)).to_bytes(max(bits // 8, 1), "little")
