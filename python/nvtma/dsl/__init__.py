"""nvtma's kernel language: kernels as Python functions.

    from nvtma import dsl, cpasync, lang, cuda

    @dsl.kernel(block=(128,))
    def scale(x: dsl.Tensor("f32", (None,)), y: dsl.Tensor("f32", (None,)), a: dsl.Float32):
        i = dsl.block_idx() * 128 + dsl.thread_idx()
        with dsl.if_(i < x.shape[0]):
            y[i] = a * x[i]

Values are typed (CuTe DSL's names: Int32, Uint32, Float16, BFloat16,
Float32, Float8E4M3FN, Boolean, Index ...) with operators, short vectors
with packed math, and run-time control flow (dsl.range, dsl.if_/else_,
dsl.cond, dsl.while_). Python control flow over Python values runs at build
time; over run-time values it raises KernelBuildError. Warp/CTA helpers
(shuffles, reductions, atomics, fences, printf) are in nvtma.cuda (TIRx's
Tx.cuda names), TMA in nvtma.cpasync (CuTe's names), tensor cores in
nvtma.wgmma, pipelines/barriers/schedulers in nvtma.lang. docs/dsl.md is
the reference.
"""

from .control import cond, else_, flatten, if_, range, range_constexpr, unflatten, while_, yield_  # noqa: A004
from .errors import KernelBuildError, user_op
from .ids import (barrier, block_dim, block_idx, cluster_arrive, cluster_ctaid, cluster_ctarank, cluster_dim,
                  cluster_idx, cluster_size, cluster_sync, cluster_wait, cta_sync, elect_active, elect_sync, grid_dim,
                  lane_idx, max_grid, smid, thread_idx, thread_rank, warp_idx, warpgroup_idx)
from .kernel import BuiltKernel, Specialization, active_threads, current_kernel, kernel, narrowed
from .numeric import (BFloat16, Boolean, Float, Float8E4M3FN, Float8E5M2, Float16, Float32, Float64, Index, Int8,
                      Int16, Int32, Int64, Integer, Numeric, Uint8, Uint16, Uint32, Uint64, Val, abs, as_value,
                      const, convert, cos, dtype, exp, exp2, fdividef, fma, log, log2, max, min, rsqrt, select,
                      sin, sqrt, tanh, wrap)
from .tensor import Tensor, TensorValue
from .vector import Vector, full, vector_of, zeros

# the names of the first DSL
Int = Int32
Bool = Boolean

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("control", "errors", "ids", "kernel_mod",
                                                                    "numeric", "tensor", "vector")]
