"""Python bindings of the nvtma dialect: ODS-generated op builders and enums,
plus helpers to spell `!nvtma.tma_atom` types."""

from ._nvtma_ops_gen import *  # noqa: F401,F403
from ._nvtma_enum_gen import *  # noqa: F401,F403
from .._mlir_libs._nvtmaDialects.nvtma import register_dialect  # noqa: F401

from ..ir import Type

_DEFAULTS = dict(swizzle="none", l2_promotion="l2_128b", interleave="none", oob_fill="none",
                 multicast=1, cta_group=1, reduction="add")


def _ints(v):
    return "[" + ", ".join(str(int(x)) for x in v) + "]"


def tma_atom_type_str(kind: str, element_type, box, *, tma_format=None, tile=None, swizzle="none",
                      l2_promotion="l2_128b", interleave="none", oob_fill="none", element_strides=None,
                      multicast=1, cta_group=1, reduction="add", lower_corner=None, upper_corner=None) -> str:
    """The `!nvtma.tma_atom<...>` spelling of an atom; defaults are elided."""
    parts = [str(kind), str(element_type)]
    if tma_format is not None:
        parts.append(f"tma_format = {tma_format}")
    parts.append(f"box = {_ints(box)}")
    if tile is not None and list(tile) != list(box):
        parts.append(f"tile = {_ints(tile)}")
    for key, val in (("swizzle", swizzle), ("l2_promotion", l2_promotion), ("interleave", interleave),
                     ("oob_fill", oob_fill)):
        if val != _DEFAULTS[key]:
            parts.append(f"{key} = {val}")
    if element_strides is not None and any(int(s) != 1 for s in element_strides):
        parts.append(f"element_strides = {_ints(element_strides)}")
    if multicast != 1:
        parts.append(f"multicast = {int(multicast)}")
    if cta_group != 1:
        parts.append(f"cta_group = {int(cta_group)}")
    if kind == "reduce" and reduction != "add":
        parts.append(f"reduction = {reduction}")
    if lower_corner is not None:
        parts.append(f"lower_corner = {_ints(lower_corner)}")
        parts.append(f"upper_corner = {_ints(upper_corner)}")
    return "!nvtma.tma_atom<" + ", ".join(parts) + ">"


def tma_atom_type(*args, context=None, **kwargs) -> Type:
    """Parses the atom type (see tma_atom_type_str); invalid fields raise
    MLIRError with the verifier's message."""
    return Type.parse(tma_atom_type_str(*args, **kwargs), context)
