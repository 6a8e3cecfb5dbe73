"""Registers nvtma and everything its lowering uses in every new Context."""

from ._nvtmaDialects import register_dialects  # noqa: F401
