"""Kernels the benchmarks run, shared by the artifact builder and run.py."""

import hashlib

from nvtma import kernels as K

ROWS = COLS = 16384                      # fp16: 512 MiB per buffer
BOXES = [(64, 128), (128, 64), (32, 256)]  # rows x cols, the hand-written kernel's boxes
PROMOTIONS = ["none", "l2_64b", "l2_128b", "l2_256b"]


def copy_spec(box, promo, stages=4):
    return K.pipelined_copy(ROWS, COLS, "f16", box, stages=stages, l2_load=promo, l2_store="none")


GEMV_M = GEMV_K = 16384
# W dtype, scale, tile, stages, fp8 math, consumer warps, split (see nvtma.kernels.gemv)
GEMV_CONFIGS = [
    dict(w_dtype="bf16", scale=None, tile=(32, 256), stages=4, fp8_math="f32", consumers=4, split="tiles"),
    dict(w_dtype="bf16", scale=None, tile=(32, 256), stages=4, fp8_math="f32", consumers=4, split="rows"),
    dict(w_dtype="bf16", scale=None, tile=(64, 256), stages=4, fp8_math="f32", consumers=8, split="rows"),
    dict(w_dtype="f8E4M3FN", scale="row", tile=(64, 256), stages=6, fp8_math="f16x2", consumers=4, split="tiles"),
    dict(w_dtype="f8E4M3FN", scale="row", tile=(64, 256), stages=6, fp8_math="f16x2_bits", consumers=4,
         split="tiles"),
    dict(w_dtype="f8E4M3FN", scale="row", tile=(64, 256), stages=6, fp8_math="f16x2_bits", consumers=8,
         split="rows"),
    dict(w_dtype="f8E4M3FN", scale="tensor", tile=(64, 256), stages=6, fp8_math="f16x2", consumers=4,
         split="tiles"),
    dict(w_dtype="f8E4M3FN", scale="tensor", tile=(64, 256), stages=6, fp8_math="f16x2_bits", consumers=4,
         split="tiles"),
    dict(w_dtype="f8E4M3FN", scale="tensor", tile=(64, 256), stages=6, fp8_math="f16x2_bits", consumers=8,
         split="tiles"),
    dict(w_dtype="f8E4M3FN", scale="tensor", tile=(64, 256), stages=6, fp8_math="f16x2_bits", consumers=4,
         split="rows"),
    dict(w_dtype="f8E4M3FN", scale="tensor", tile=(64, 256), stages=6, fp8_math="f16x2_bits", consumers=8,
         split="rows"),
]


def gemv_spec(cfg, promo):
    return K.gemv(GEMV_M, GEMV_K, l2_promotion=promo, **cfg)


def launch_spec():
    return K.tile_copy((64, 64), "f16", (64, 64))


def key(spec):
    return hashlib.sha256(spec.ir.encode()).hexdigest()[:20]


def all_specs():
    specs = [copy_spec(b, p) for b in BOXES for p in PROMOTIONS]
    specs += [gemv_spec(c, p) for c in GEMV_CONFIGS for p in PROMOTIONS]
    specs.append(launch_spec())
    return specs
