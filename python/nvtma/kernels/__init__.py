"""nvtma's kernel library, written in its own kernel language (nvtma.dsl).

Each function returns a ``dsl.Specialization``: ``.compile()``, ``.ir``,
and the launch defaults ``.grid``, ``.block``, ``.cluster``, ``.info``.
The examples, GPU tests and benchmarks are built from these.
"""

from .copy import (box_dump, bulk_roundtrip, cp_async_roundtrip, dump_descriptor, im2col_dump, multicast_copy,
                   pipelined_copy, reduce_add, tile_copy, update_descriptor)
from .gemv import gemv

from ..cpasync import CACHE_HINTS

__all__ = ["box_dump", "bulk_roundtrip", "cp_async_roundtrip", "dump_descriptor", "gemv", "im2col_dump",
           "multicast_copy", "pipelined_copy", "reduce_add", "tile_copy", "update_descriptor", "CACHE_HINTS"]
