"""Python bindings of the nvtma dialect: ODS-generated op builders and enums,
plus the atom type built from its fields through the C API (never by
spelling a string)."""

from ._nvtma_ops_gen import *  # noqa: F401,F403
from ._nvtma_enum_gen import *  # noqa: F401,F403
from .._mlir_libs._nvtmaDialects.nvtma import register_dialect  # noqa: F401
from .._mlir_libs import _nvtmaDialects as _ext

from .. import ir
from ..ir import Context, MLIRError, Type

__all__ = ["tma_atom_type", "tma_atom_type_str", "tma_atom_bytes", "element_type_of", "register_dialect"]


def _spelling(field: str, value) -> str:
    """An enum field as the dialect spells it: a str, a generated enum
    member (str() is its spelling) or an nvtma.tensormap enum member."""
    if isinstance(value, str):
        return value
    dialect = getattr(value, "dialect", None)  # nvtma.tensormap enums
    if isinstance(dialect, str):
        return dialect
    if hasattr(value, "__str__") and type(value).__module__.endswith("_nvtma_enum_gen"):
        return str(value)
    raise MLIRError(f"{field}: {value!r} is not a spelling of the dialect's enum", [])


def _ints(field: str, values) -> list:
    if values is None:
        return []
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise MLIRError(f"{field}: {values!r} is not a list of integers", [])
    out = []
    for v in values:
        if isinstance(v, bool) or not hasattr(type(v), "__index__"):
            raise MLIRError(f"{field}: {v!r} is not an integer", [])
        v = v.__index__()
        if not -(1 << 63) <= v < 1 << 63:
            raise MLIRError(f"{field}: {v} does not fit 64 bits", [])
        out.append(v)
    return out


def _count(field: str, value) -> int:
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise MLIRError(f"{field}: {value!r} is not an integer", [])
    v = value.__index__()
    if not 0 <= v < 1 << 32:
        raise MLIRError(f"{field} is {v}, it must fit 32 bits unsigned", [])
    return v


# the float types the bindings build (their spelling is what str() gives)
_FLOAT_TYPES = ("F16Type", "BF16Type", "F32Type", "F64Type", "FloatTF32Type", "Float8E4M3FNType", "Float8E5M2Type",
                "Float8E4M3Type", "Float8E4M3FNUZType", "Float8E4M3B11FNUZType", "Float8E5M2FNUZType",
                "Float8E3M4Type", "Float8E8M0FNUType", "Float4E2M1FNType", "Float6E2M3FNType", "Float6E3M2FNType")


def element_type_of(spelling: str, context) -> Type:
    """The element type MLIR spells `spelling` ("f16", "bf16", "f8E4M3FN",
    "i8", "ui32", "si64", "index"): the one of the bindings' integer (1 to
    64 bits), float and index types whose own spelling it is, built, not
    parsed. MLIRError for any other spelling."""
    with context:
        types = [getattr(ir, name).get() for name in _FLOAT_TYPES if hasattr(ir, name)]
        types += [get(width) for width in (1, 8, 16, 32, 64) for get in
                  (ir.IntegerType.get_signless, ir.IntegerType.get_signed, ir.IntegerType.get_unsigned)]
        types.append(ir.IndexType.get())
        known = {str(t): t for t in types}
    if spelling not in known:
        raise MLIRError(f"element type {spelling!r} is not one of {', '.join(known)}", [])
    return known[spelling]


def tma_atom_type(kind, element_type, box, *, tma_format=None, tile=None, swizzle="none",
                  l2_promotion="l2_128b", interleave="none", oob_fill="none", element_strides=None,
                  multicast=1, cta_group=1, reduction="add", lower_corner=None, upper_corner=None,
                  context=None) -> Type:
    """The `!nvtma.tma_atom` with these fields, built through the C API and
    checked by the type's verifier. `element_type` is an `ir.Type` or its
    MLIR spelling ("f16", "ui32": element_type_of); enum fields take the
    dialect's spellings, the generated enums or nvtma.tensormap's enums;
    `tma_format`, `tile` and `element_strides` default from the element
    type, the box and the rank.
    Invalid fields raise MLIRError with the verifier's message."""
    ctx = context if context is not None else Context.current
    if isinstance(element_type, str):
        element_type = element_type_of(element_type, ctx)
    try:
        return _ext.tma_atom_type(
            ctx, _spelling("kind", kind), element_type,
            "" if tma_format is None else _spelling("tma_format", tma_format), _ints("box", box),
            _ints("tile", tile), _spelling("swizzle", swizzle), _spelling("l2_promotion", l2_promotion),
            _spelling("interleave", interleave), _spelling("oob_fill", oob_fill),
            _ints("element_strides", element_strides), _count("multicast", multicast),
            _count("cta_group", cta_group), _spelling("reduction", reduction), _ints("lower_corner", lower_corner),
            _ints("upper_corner", upper_corner))
    except ValueError as e:
        raise MLIRError(str(e), []) from None


def tma_atom_bytes(atom_type) -> tuple[int, int]:
    """(box bytes, tile bytes) of an `!nvtma.tma_atom`: what one TMA
    instruction and one nvtma.copy of the atom move (the tile bytes are
    what a load's mbarrier expects)."""
    return tuple(_ext.tma_atom_bytes(atom_type))


def tma_atom_type_str(kind, element_type, box, **fields) -> str:
    """The canonical `!nvtma.tma_atom<...>` spelling of an atom, made by the
    type itself (through tma_atom_type) rather than spelled here."""
    ctx = fields.pop("context", None)
    if ctx is None:
        try:
            ctx = Context.current
        except ValueError:
            ctx = None
    if ctx is None:
        with Context() as fresh:
            return str(tma_atom_type(kind, element_type, box, context=fresh, **fields))
    return str(tma_atom_type(kind, element_type, box, context=ctx, **fields))
