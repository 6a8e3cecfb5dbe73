"""Host-side audit of the shipped GEMV and copy kernels' builders (nvtma.kernels.gemv, nvtma.kernels.copy):
arguments that built a kernel computing wrong results without a word, or that failed deep in the build (a
ZeroDivisionError, an IR verifier's note) instead of a ValueError naming the argument. Nothing here needs a GPU
or the MLIR extension: the refusals come before the kernel is traced."""

import pytest

from nvtma import kernels as K
from nvtma.kernels import copy as C

np = pytest.importorskip("numpy")

BIG = 1 << 31  # the first dim TMA's signed 32-bit coordinates cannot reach the end of


# --------------------------------------------------------------------------- coordinates past 2^31

@pytest.mark.parametrize("make,arg", [
    (lambda: K.gemv(32, BIG + 256), "k="),
    (lambda: K.gemv(BIG, 256), "m="),
    (lambda: K.tile_copy((BIG + 64,), "f16", (64,)), r"shape\[0\]="),
    (lambda: K.tile_copy((64, BIG + 64), "i8", (64, 64)), r"shape\[1\]="),
    (lambda: K.pipelined_copy(64, BIG + 128, "i8", (64, 128)), r"shape\[1\]="),
    (lambda: K.multicast_copy(64, BIG + 64, "i8", (64, 64)), r"shape\[1\]="),
    (lambda: K.reduce_add(32, BIG + 32, "f32"), r"shape\[1\]="),
], ids=["gemv-k", "gemv-m", "tile_copy-1d", "tile_copy-2d", "pipelined", "multicast", "reduce"])
def test_dims_past_the_signed_32_bit_coordinates_are_refused(make, arg):
    """TMA coordinates are s32 (the lowering truncates each to i32) while a descriptor takes dims up to 2^32:
    a kernel whose grid walks a dim of 2^31 elements or more (gemv's K of a 4 GiB bf16 W row block, a 4 GiB
    1-D tile_copy) loaded the boxes from 2^31 on at negative coordinates (zeros, out of bounds) and stored them
    nowhere: a silently short copy, a GEMV missing those products. Refused now, naming the dim."""
    with pytest.raises(ValueError, match=arg + r".*signed 32-bit"):
        make()


def test_dims_below_2_31_still_build_their_specialization():
    """The limit is 2^31 - 1: the largest dims below it are kept (the grid y/z limit aside)."""
    sp = K.tile_copy((BIG - 1,), "i8", (128,))
    assert sp.grid == (-(-(BIG - 1) // 128), 1, 1)
    assert K.gemv(32, BIG - 256, tile=(32, 256)).info["tiles"] == (BIG - 256) // 256


@pytest.mark.parametrize("make,arg", [
    (lambda: K.box_dump((20, 40), "f32", (8, 32), coords=(0, 1 << 40)), r"coords\[1\]"),
    (lambda: K.box_dump((20, 40), "f32", (8, 32), coords=(-BIG - 1, 0)), r"coords\[0\]"),
    (lambda: K.im2col_dump(2, 8, 8, 64, start=(0, 0, 0, 1 << 32)), r"start\[3\]"),
], ids=["box_dump-high", "box_dump-low", "im2col-start"])
def test_coordinates_that_do_not_fit_32_bits_are_refused(make, arg):
    """box_dump's `coords` and im2col_dump's `start` went into the kernel as index constants that the
    lowering truncated to i32: coords (0, 2^40) loaded the box at (0, 0) and dumped it as if it were the
    (out-of-bounds, filled) box asked for. Refused now."""
    with pytest.raises(ValueError, match=arg):
        make()


def test_box_dump_and_im2col_take_one_coordinate_per_dim():
    """Too few coordinates failed in the IR verifier ("'nvtma.copy' op has 1 coordinates"); now a
    ValueError naming the argument."""
    with pytest.raises(ValueError, match=r"coords=\(0,\): 2 integers"):
        K.box_dump((20, 40), "f32", (8, 32), coords=(0,))
    with pytest.raises(ValueError, match=r"start=\(0, 0, 0\): 4 integers"):
        K.im2col_dump(2, 8, 8, 64, start=(0, 0, 0))


# --------------------------------------------------------------------------- the grids the builders choose

def test_tile_copy_and_reduce_refuse_a_grid_y_or_z_past_65535_at_build():
    """tile_copy and reduce_add choose the grid themselves (one CTA per box: y the second-innermost dim's
    boxes, z the outer ones'); past 65535 the launch was refused with "grid=(1, 70000, 1): dim 1 is 70000",
    a grid the caller never chose. Now the build refuses, naming the shape and the boxes."""
    with pytest.raises(ValueError, match=r"shape \(4480000, 64\) in boxes \(64, 64\).*1 x 70000 x 1"):
        K.tile_copy((64 * 70000, 64), "f16", (64, 64))
    with pytest.raises(ValueError, match=r"1 x 1 x 70000"):
        K.tile_copy((70000, 2, 64), "f16", (1, 2, 64))
    with pytest.raises(ValueError, match="grid y of 70000"):
        K.reduce_add(32 * 70000, 32, "f32")
    assert K.tile_copy((64 * 65535, 64), "f16", (64, 64)).grid == (1, 65535, 1)


def test_gemv_records_the_largest_grid_its_32_bit_shares_take():
    """The GEMV splits its tiles (row blocks with split="rows") over the grid as (blockIdx + 1) * total //
    gridDim in 32 bits: past 2^32 / total CTAs the shares wrap and tiles are skipped or done twice, without a
    word (the launch's grid is the caller's). The builder now records the bound (info["max_grid"]) and says
    so; a shape whose tile count no grid can split is refused."""
    sp = K.gemv(1024, 4096, tile=(32, 256), split="tiles")
    assert sp.info["max_grid"] == ((1 << 32) - 1) // (32 * 16)
    assert K.gemv(1024, 4096, tile=(32, 256), split="rows").info["max_grid"] == ((1 << 32) - 1) // 32
    big = K.gemv(1 << 17, 1 << 17, tile=(32, 256))  # a 32 GiB bf16 W, 2^21 tiles: at most 2047 CTAs
    assert big.info["max_grid"] == 2047
    assert K.gemv(32, 256 * 5, tile=(32, 256), split="rows").info["max_grid"] == (1 << 31) - 1
    with pytest.raises(ValueError, match="32-bit tile arithmetic"):
        K.gemv(BIG - 32, BIG - 256, tile=(32, 256))


def test_gemv_tells_whether_y_must_be_zeroed():
    """split="tiles" adds partial sums into y with atomics, so y must be zeroed before every launch; the
    docstring read "y zeroed first", as if the kernel did it. The docstring says who now, and info["zero_y"]
    lets a caller (or a wrapper) check it."""
    assert K.gemv(1024, 4096, split="tiles").info["zero_y"] is True
    assert K.gemv(1024, 4096, split="rows").info["zero_y"] is False
    assert "caller" in K.gemv.__doc__ and "zeroes y before every launch" in K.gemv.__doc__


# --------------------------------------------------------------------------- typed errors naming the argument

@pytest.mark.parametrize("make,match", [
    (lambda: K.gemv(256, 1024, consumers=0), "consumers=0"),
    (lambda: K.gemv(256, 1024, consumers=-4), "consumers=-4"),
    (lambda: K.gemv(256, 1024, stages=0), "stages=0"),
    (lambda: K.gemv(256, 1024, stages=2.0), r"stages=2\.0: an integer"),
    (lambda: K.gemv(0, 1024), "m=0"),
    (lambda: K.gemv(256, 0), "k=0"),
    (lambda: K.gemv(256.0, 1024), r"m=256\.0: an integer"),
    (lambda: K.gemv(256, 1024, tile=(-32, 256)), r"tile\[0\]=-32"),
    (lambda: K.gemv(256, 1024, tile=(32, 256, 1)), r"tile=\(32, 256, 1\): 2 integers"),
    (lambda: K.gemv(256, 1024, tile=32), "tile=32: a tuple"),
    (lambda: K.tile_copy((64, 64), "f16", (0, 64)), r"box\[0\]=0"),
    (lambda: K.tile_copy((0, 64), "f16", (64, 64)), r"shape\[0\]=0"),
    (lambda: K.tile_copy((), "f16", ()), "at least one dim"),
    (lambda: K.pipelined_copy(256, 256, box=(0, 128)), r"box\[0\]=0"),
    (lambda: K.pipelined_copy(0, 256, box=(64, 128)), r"shape\[0\]=0"),
    (lambda: K.pipelined_copy(256, 256, box=(64, 128), stages=0), "stages=0"),
    (lambda: K.pipelined_copy(256, 256, box=(64, 128), threads=16), "threads=16"),
    (lambda: K.multicast_copy(512, 256, tile=(64, 64), cluster=0), "cluster=0"),
    (lambda: K.multicast_copy(512, 256, tile=(64, 64), cluster=32), "cluster=32"),
    (lambda: K.reduce_add(256, 256, box=(32,)), r"box=\(32,\): 2 integers"),
    (lambda: K.dump_descriptor((256, 256), box=(64, 64, 1)), r"box=\(64, 64, 1\): 2 integers"),
    (lambda: K.bulk_roundtrip(100), "nbytes=100: a multiple of 16"),
    (lambda: K.bulk_roundtrip(0), "nbytes=0: a multiple of 16"),
    (lambda: K.bulk_roundtrip(16.0), r"nbytes=16\.0"),
])
def test_bad_sizes_are_value_errors_naming_the_argument(make, match):
    """Zero counts divided by zero (consumers=0, a zero box: ZeroDivisionError), zero dims failed in the IR
    verifier or in a Uint32 division by 0 (gemv's k=0), floats failed in dsl.Tensor, a three-int tile
    failed to unpack, dump_descriptor's rank-3 box for a rank-2 shape was blamed on its inner box bytes,
    bulk_roundtrip's size on the verifier of cp.async.bulk: ValueErrors naming the argument now."""
    with pytest.raises(ValueError, match=match):
        make()


def test_gemv_refuses_x_dtypes_it_does_not_document():
    """x_dtype was checked only for "f16" (fp8 W with f16x2 math): "f32", "f8E4M3FN" or "i8" built a
    kernel no test runs (documented: "bf16", or "f16" with fp8 f16x2 math)."""
    for x in ("f32", "f8E4M3FN", "i8", "float16"):
        with pytest.raises(ValueError, match=f"x_dtype='{x}'"):
            K.gemv(256, 1024, "f8E4M3FN", scale="row", x_dtype=x)
    K.gemv(256, 1024, "f8E4M3FN", scale="row", x_dtype="f16", vec=16)
    with pytest.raises(ValueError, match="x_dtype='f16' needs fp8 W"):
        K.gemv(256, 1024, x_dtype="f16")


def test_cp_async_roundtrip_flags_are_bools():
    """zfill / mbarrier were taken by truthiness: zfill="no" built the zero-filling variant (each chunk
    reads only part of its source), whose output is not a copy."""
    for bad in ("no", "False", None, 2, 1.0):
        with pytest.raises(ValueError, match="zfill="):
            K.cp_async_roundtrip(8192, zfill=bad)
        with pytest.raises(ValueError, match="mbarrier="):
            K.cp_async_roundtrip(8192, mbarrier=bad)
    assert K.cp_async_roundtrip(8192, zfill=1).consts["zfill"] is True


def test_numpy_integers_are_taken_as_ints_with_the_same_key():
    """numpy integers (shapes computed with numpy) were refused by dsl.Tensor ("dims are non-negative ints");
    taken now as the Python ints they are, so the specialization (and its artifact key) is the one Python
    ints give."""
    i = np.int64
    assert K.gemv(i(256), i(1024), tile=(i(32), i(256)), stages=i(4)).key == K.gemv(256, 1024, tile=(32, 256),
                                                                                    stages=4).key
    assert K.tile_copy((i(256), i(256)), "f16", (i(64), i(64))).key == K.tile_copy((256, 256), "f16", (64, 64)).key
    assert K.pipelined_copy(i(1024), i(1024)).key == K.pipelined_copy(1024, 1024).key
    with pytest.raises(ValueError, match="an integer"):
        K.gemv(True, 1024)


def test_the_shipped_specs_are_unchanged():
    """The normalization keeps the constants of every valid call as they were (the artifacts' keys and
    PTX): tuples of Python ints, the flags as given."""
    sp = K.gemv(1024, 4096, "f8E4M3FN", tile=[64, 256], stages=4, scale="tensor", fp8_math="f32", split="rows",
                pdl=True)
    assert sp.consts["tile"] == (64, 256) and type(sp.consts["tile"][0]) is int
    assert sp.consts["pdl"] is True and sp.consts["stages"] == 4
    sp = K.cp_async_roundtrip(8192, zfill=True, mbarrier=False)
    assert (sp.consts["zfill"], sp.consts["mbarrier"]) == (True, False)
    assert K.box_dump((20, 40), "f32", (8, 32), "none", (16, 20)).consts["coords"] == (16, 20)
    assert K.im2col_dump(2, 8, 8, 64, 64, 64).consts["start"] == (0, 0, 0, 0)
    assert C.COORD_LIMIT == 1 << 31
