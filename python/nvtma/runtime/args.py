"""Kernel arguments: tensors in, packed kernel parameters out.

A lowered kernel takes, for each original argument, a memref's expanded
descriptor (allocated pointer, aligned pointer, offset, sizes, strides), a
scalar, or a pointer; then one 128-byte descriptor per TMA atom, encoded here
from the record the compiler wrote and the bound tensor.
"""

from __future__ import annotations

import ctypes
import re
import struct

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
_TYPESTR = {"f2": "f16", "f4": "f32", "f8": "f64", "i1": "i8", "u1": "ui8", "i2": "i16", "u2": "ui16",
            "i4": "i32", "u4": "ui32", "i8": "i64", "u8": "ui64"}


def element_compatible(tensor_elem: str, memref_elem: str) -> bool:
    """Same bits and same kind; signless MLIR integers take any signedness."""
    if tensor_elem == memref_elem:
        return True
    a, b = _MLIR_ELEM.match(tensor_elem), _MLIR_ELEM.match(memref_elem)
    if not a or not b or a.group(2) != b.group(2) or a.group(3) or b.group(3):
        return False
    ints = ("i", "ui", "si")
    return a.group(1) in ints and b.group(1) == "i"


class TensorInfo:
    __slots__ = ("ptr", "shape", "strides", "elem", "bits")

    def __init__(self, ptr, shape, strides, elem, bits):
        self.ptr, self.shape, self.strides, self.elem, self.bits = ptr, shape, strides, elem, bits


def _bits_of(elem: str) -> int:
    m = re.search(r"(\d+)", elem)
    return int(m.group(1)) if m else 0


def tensor_info(obj, arg: str) -> TensorInfo:
    """Pointer, shape, element strides and element type of a GPU tensor:
    torch tensors, or anything with __cuda_array_interface__ (CuPy, Numba)."""
    mod = type(obj).__module__
    if mod.startswith("torch"):
        if not obj.is_cuda:
            raise LaunchError(f"{arg}: a CPU tensor ({obj.device}); TMA reads GPU memory, move it with .cuda()",
                              arg=arg, rule="device")
        name = str(obj.dtype).replace("torch.", "")
        elem = _TORCH_NAMES.get(name)
        if elem is None:
            raise LaunchError(f"{arg}: dtype {obj.dtype} has no MLIR element type here", arg=arg, rule="dtype")
        return TensorInfo(obj.data_ptr(), tuple(obj.shape), tuple(obj.stride()), elem, _bits_of(elem))
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        ts = cai["typestr"][1:]
        elem = _TYPESTR.get(ts)
        if elem is None:
            raise LaunchError(f"{arg}: typestr {cai['typestr']} is not supported", arg=arg, rule="dtype")
        size = int(ts[1:])
        shape = tuple(cai["shape"])
        if cai.get("strides") is None:
            strides, acc = [], 1
            for d in reversed(shape):
                strides.insert(0, acc)
                acc *= d
        else:
            for s in cai["strides"]:
                if s % size:
                    raise LaunchError(f"{arg}: byte stride {s} is not a multiple of the element size {size}",
                                      arg=arg, rule="alignment")
            strides = [s // size for s in cai["strides"]]
        return TensorInfo(int(cai["data"][0]), shape, tuple(strides), elem, size * 8)
    if hasattr(obj, "__array_interface__") or hasattr(obj, "__array__"):
        raise LaunchError(f"{arg}: a host array ({type(obj).__name__}); pass a GPU tensor",
                          arg=arg, rule="device")
    raise LaunchError(f"{arg}: {type(obj).__name__} is not a GPU tensor (torch.Tensor or "
                      "__cuda_array_interface__)", arg=arg, rule="type")


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


def descriptor_params(t: TensorInfo, d: dict, arg: str) -> dict:
    """Arguments of encode_tiled / encode_im2col for a descriptor record."""
    rank = d["rank"]
    if len(t.shape) != rank:
        raise LaunchError(f"{arg}: rank {len(t.shape)}, its TMA descriptor has rank {rank}", arg=arg, rule="rank")
    if t.strides[-1] != 1 and t.shape[-1] != 1:
        raise LaunchError(f"{arg}: the innermost dim must be contiguous for TMA (stride {t.strides[-1]})",
                          arg=arg, rule="contiguity")
    bits = d["element_bits"]
    if t.ptr % 16:
        raise LaunchError(f"{arg}: address 0x{t.ptr:x} is not 16-byte aligned (TMA rule address-align)",
                          arg=arg, rule="alignment")
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


def encode_descriptor(t: TensorInfo, d: dict, arg: str, encoder: str = "nvtma") -> bytes:
    """128 descriptor bytes for tensor `t` under record `d`."""
    from .. import tensormap as tm
    p = descriptor_params(t, d, arg)
    try:
        if encoder == "driver":
            from .driver import driver_encode
            return driver_encode(d["mode"], p)
        if d["mode"] == "tiled":
            return tm.encode_tiled(**p)
        return tm.encode_im2col(**p)
    except tm.TensorMapError as e:
        raise LaunchError(f"{arg}: {e}", arg=arg, rule=e.rule) from None


_SCALAR = {8: "<b", 16: "<h", 32: "<i", 64: "<q"}


def pack_scalar(value, p: dict, arg: str) -> bytes:
    ty = p["type"]
    bits = p["bits"]
    if ty.startswith("f") or ty.startswith("bf"):
        if ty == "f32":
            return struct.pack("<f", float(value))
        if ty == "f64":
            return struct.pack("<d", float(value))
        if ty == "f16":
            return struct.pack("<e", float(value))
        raise LaunchError(f"{arg}: scalar type {ty} is not supported", arg=arg, rule="type")
    if isinstance(value, float) or not hasattr(value, "__index__"):
        raise LaunchError(f"{arg}: {type(value).__name__} for an integer parameter ({ty})", arg=arg, rule="type")
    v = int(value)
    lo, hi = -(1 << (bits - 1)), (1 << bits) - 1
    if not lo <= v <= hi:
        raise LaunchError(f"{arg}: {v} does not fit {ty}", arg=arg, rule="range")
    return (v & ((1 << bits) - 1)).to_bytes(max(bits // 8, 1), "little")


class ParamBuffer:
    """One contiguous, 64-byte-aligned block holding every parameter, and
    the void*[] array cuLaunchKernel takes."""

    def __init__(self, layout):
        # layout: list of (size, align)
        offs, cur = [], 0
        for size, align in layout:
            cur = (cur + align - 1) // align * align
            offs.append(cur)
            cur += size
        self._raw = ctypes.create_string_buffer(cur + 64)
        base = (ctypes.addressof(self._raw) + 63) // 64 * 64
        self.base = base
        self.offsets = offs
        self.ptrs = (ctypes.c_void_p * max(len(offs), 1))(*[base + o for o in offs])
        self.address = ctypes.addressof(self.ptrs)

    def write(self, i: int, data: bytes) -> None:
        ctypes.memmove(self.base + self.offsets[i], data, len(data))
