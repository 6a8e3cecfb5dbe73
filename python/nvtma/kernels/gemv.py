"""The weight-streaming GEMV of CUTLASS #3672: y = scale · (W · x).

W [m, k] (bf16, or e4m3 fp8) is read once, through TMA with the chosen L2
promotion; warp 0 streams W tiles into a ring of shared-memory stages and
`consumers` warps multiply them with x. See ``gemv`` for the options.
"""

from __future__ import annotations

from .. import cpasync, cuda, dsl, lang
from ..dsl import Float16, Float32
from .copy import _extent, _int, _ints

# the grid's even shares of the tiles (or row blocks) are computed in 32 bits: (blockIdx + 1) * total
_SHARE_LIMIT = (1 << 32) - 1


def _max_grid(ntiles, row_blocks, split):
    """The most CTAs whose shares (bid + 1) · total the kernel computes in 32 bits (and a grid's x limit)."""
    return min(_SHARE_LIMIT // (ntiles if split == "tiles" else row_blocks), (1 << 31) - 1)


@dsl.kernel(block=lambda consumers, **_: ((consumers + 1) * 32,), name="gemv", pdl=lambda pdl=False, **_: pdl)
def gemv_kernel(w: dsl.Tensor, x: dsl.Tensor, y: dsl.Tensor, *scale, tile, stages, l2_promotion, consumers,
                scale_kind, fp8_math, split, vec, x_dtype, w_hint, pdl=False):
    bm, bk = tile
    m, k = w.static_shape
    packed = w.dtype is dsl.Float8E4M3FN and fp8_math != "f32"
    acc_n = 2 if packed else vec
    rpw = bm // consumers     # rows per consumer warp
    lpr = bk // vec           # lanes per row
    rps = 32 // lpr           # rows a warp covers at once
    nacc = rpw // rps         # rows (accumulators) per lane
    kt_count = k // bk
    ntiles = (m // bm) * kt_count
    fmt = "uint8" if w.dtype is dsl.Float8E4M3FN else None

    pool = lang.SMEMPool()
    ring = pool.alloc((stages, bm, bk), w.dtype)
    atom = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), w, tile, l2_promotion=l2_promotion,
                                       internal_type=fmt)
    full = lang.TMABar(stages, 1)
    empty = lang.MBarrier(stages, consumers * 32)   # every consumer thread arrives
    dsl.barrier()

    # the tile arithmetic is on non-negative values: unsigned division and remainder are cheaper
    bid, grid = dsl.Uint32(dsl.block_idx()), dsl.Uint32(dsl.grid_dim())
    dsl.max_grid(_max_grid(ntiles, m // bm, split))  # (bid + 1) · total below 2^32: the launch refuses more

    def share(total):  # this CTA's even share [bid·T/grid, (bid+1)·T/grid) of `total` items
        return (bid * total) // grid, ((bid + 1) * total) // grid

    if split == "tiles":
        tb, te = share(ntiles)
    else:  # whole row blocks: y is stored, not accumulated
        rb0, rb1 = share(m // bm)
        tb, te = rb0 * kt_count, rb1 * kt_count
    n = te - tb
    tid = dsl.thread_idx()

    with lang.WarpRole(0):  # the producer
        for i in dsl.range(n):
            s = i % stages
            with dsl.if_(i >= stages):
                # wait until the consumers released this slot's previous tile
                empty.wait(s, (i // stages - 1) % 2 != 0)
            t = tb + i
            with dsl.if_(tid == 0):
                full.arrive_expect_tx(s, atom.tile_bytes)
            cpasync.copy(atom, [(t // kt_count) * bm, (t % kt_count) * bk], ring.stage(s), tma_bar_ptr=full.at(s),
                         cache_hint=w_hint)
        if pdl:
            cuda.griddepcontrol_launch_dependents()  # every load issued: the next kernel may start

    with dsl.if_(tid >= 32):  # the consumers
        if pdl:
            # programmatic dependent launch: W is no earlier kernel's output, so the producer streams it from
            # the start; x, the scales and y may be, so the consumers wait for those kernels first
            cuda.griddepcontrol_wait()
        cw = (tid - 32) // 32
        lane = tid % 32
        llane, lrow = lane % lpr, lane // lpr
        lane0 = llane == 0
        r0 = cw * rpw
        lc = llane * vec
        rows = [r0 + r * rps + lrow for r in range(nacc)]
        sc_tensor = scale[0] if scale_kind == "tensor" else None
        sct = sc_tensor[0] if sc_tensor is not None else None
        zero = dsl.zeros(acc_n, Float32)
        loop = dsl.range(n, carry=tuple(zero for _ in range(nacc)))
        for i, accs in loop:
            s = i % stages
            t = tb + i
            rb, kt = t // kt_count, t % kt_count
            kc = kt * bk + lc
            # x first: its load overlaps the wait for W
            if x_dtype == "f16":
                xh = x.load_vec(vec, kc)
            else:
                xf = x.load_vec(vec, kc).to(Float32)
                xh = xf.to(Float16) if packed else None
            full.wait(s, (i // stages) % 2 != 0)
            slot = ring.stage(s)
            new = []
            for r in range(nacc):
                wv = slot.load_vec(vec, rows[r], lc)
                if packed:
                    new.append(accs[r] + _packed_dot(wv, xh, vec))
                else:
                    new.append(dsl.fma(wv.to(Float32), xf, accs[r]))
            empty.arrive(s)
            flush = (kt == kt_count - 1) | (i == n - 1)
            with dsl.if_(flush):
                ybase = rb * bm
                for r in range(nacc):
                    total = cuda.warp_reduce(new[r].reduce("add"), "sum", width=lpr) if lpr > 1 else \
                        new[r].reduce("add")
                    yrow = ybase + rows[r]
                    if scale_kind == "row":
                        total = total * scale[0][yrow]
                    elif scale_kind == "tensor":
                        total = total * sct
                    with dsl.if_(lane0):
                        if split == "rows":
                            y[yrow] = total
                        else:
                            cuda.atomic_add(y, (yrow,), total)
            dsl.yield_(*[dsl.select(flush, zero, v) for v in new])


def _packed_dot(wv, xh, vec):
    """Σ w·x over `vec` lanes as f32x2: e4m3 pairs -> f16x2, packed f16 FMAs
    in two interleaved chains, the chains' sum widened to f32."""
    pairs = vec // 2
    chains = 2 if pairs >= 4 else 1
    acc = [None] * chains
    for j in range(pairs):
        wh = wv[2 * j:2 * j + 2].to(Float16)
        xj = xh[2 * j:2 * j + 2]
        c = j % chains
        acc[c] = wh * xj if acc[c] is None else dsl.fma(wh, xj, acc[c])
    tot = acc[0] if chains == 1 else acc[0] + acc[1]
    return tot.to(Float32)


def gemv(m, k, w_dtype="bf16", tile=(32, 256), stages=6, l2_promotion="l2_128b", consumers=4, scale=None,
         fp8_math="f16x2", split="tiles", vec=8, x_dtype="bf16", w_hint=None, pdl=False):
    """y = scale · (W · x), the weight-streaming GEMV of CUTLASS #3672.

    W [m, k] (bf16 or f8E4M3FN, read once through TMA with `l2_promotion`:
    128B by default; 256B cost 5-7% on the H200, benchmarks/README.md),
    x [k] bf16 (16-byte aligned: lanes load `vec` elements at a time), y [m]
    f32, scale: None, "row" ([m] f32) or "tensor" ([1] f32); m and k below
    2^31 (TMA coordinates are signed 32-bit). Warp 0 streams W
    tiles into a ring of `stages` shared-memory slots; `consumers` warps each
    own tile[0] / consumers rows of a slot. The m/tile[0] × k/tile[1] tiles
    are split evenly over the grid in row-block order; a row's partial sum is
    reduced across its lanes and added to y when the CTA leaves the row block.

    bf16 W is widened to f32 and accumulated in f32. For fp8 W, `fp8_math`
    "f32" does the same; "f16x2" converts e4m3 pairs to f16x2 (x too, so |x|
    must fit f16), sums each lane's products of a tile with packed f16 FMAs
    and accumulates those partial sums in f32.

    `split` "tiles" (partial sums added into y with atomics: the caller
    zeroes y before every launch, in a CUDA graph with a captured zeroing,
    or the old values join the sum; ``info["zero_y"]``) or "rows" (each CTA
    owns whole row blocks and stores y). The launch's grid (pass grid=) is
    at most ``info["max_grid"]`` CTAs: the shares are computed in 32 bits,
    (blockIdx + 1) · tiles (row blocks with "rows"), so the kernel records
    that limit (`dsl.max_grid`) and the launch refuses a larger grid.
    `vec` elements of a row per lane and tile: 8 (a warp per row) or 16
    (fp8 with f16x2 math: half a warp per row). `x_dtype` "bf16", or "f16"
    with fp8 f16x2 math.
    `w_hint`: an L2 eviction priority for the W loads, or None. `pdl`: built
    for programmatic dependent launch: W streams before the earlier kernels
    end, x, the scales and y are touched after (split "tiles" zeroes y in
    an earlier kernel, which the consumers' wait orders too)."""
    m, k = _extent("m", m), _extent("k", k)
    tile = _ints("tile", tile, 2)
    stages, consumers, vec = _int("stages", stages), _int("consumers", consumers, 1, 31), _int("vec", vec)
    bm, bk = tile
    if w_dtype not in ("bf16", "f8E4M3FN"):
        raise ValueError(f"w_dtype {w_dtype!r}: bf16 or f8E4M3FN")
    if x_dtype not in ("bf16", "f16"):
        raise ValueError(f"x_dtype={x_dtype!r}: 'bf16', or 'f16' with fp8 W and f16x2 math")
    if vec not in (8, 16) or bk % vec or bk // vec not in (16, 32):
        raise ValueError(f"vec={vec} with tile {tile}: a row's {bk} elements over 16 or 32 lanes")
    if m % bm or k % bk or bm % consumers:
        raise ValueError(f"{m}x{k} with tile {tile} and {consumers} consumers")
    if scale not in (None, "row", "tensor") or (scale is None and w_dtype != "bf16"):
        raise ValueError(f"scale={scale!r}: None (bf16 only), 'row' or 'tensor'")
    if fp8_math not in ("f32", "f16x2") or split not in ("tiles", "rows"):
        raise ValueError(f"fp8_math={fp8_math!r} / split={split!r}")
    packed = w_dtype == "f8E4M3FN" and fp8_math != "f32"
    if vec == 16 and not packed:
        raise ValueError("vec=16 needs fp8 W with f16x2 math")
    if x_dtype == "f16" and not packed:
        raise ValueError("x_dtype='f16' needs fp8 W with f16x2 math")
    if pdl not in (False, True):
        raise ValueError(f"pdl={pdl!r}: False or True")
    if w_hint is not None and w_hint not in cpasync.CACHE_HINTS:
        raise ValueError(f"cache hint {w_hint!r}: one of {sorted(cpasync.CACHE_HINTS)} or None")
    lpr = bk // vec
    if (bm // consumers) % (32 // lpr):
        raise ValueError(f"{bm // consumers} rows per warp is not a multiple of {32 // lpr}")
    ntiles = (m // bm) * (k // bk)
    max_grid = _max_grid(ntiles, m // bm, split)
    if ntiles > _SHARE_LIMIT or max_grid < 1:
        raise ValueError(f"{m}x{k} in tiles {tile}: {ntiles} tiles, past the kernel's 32-bit tile arithmetic")
    types = [dsl.Tensor(w_dtype, (m, k)), dsl.Tensor(x_dtype, (k,)), dsl.Tensor("f32", (m,))]
    if scale:
        types.append(dsl.Tensor("f32", (m if scale == "row" else 1,)))
    eb = 1 if w_dtype == "f8E4M3FN" else 2
    sp = gemv_kernel.specialize(types, tile=tuple(tile), stages=stages, l2_promotion=l2_promotion,
                                consumers=consumers, scale_kind=scale, fp8_math=fp8_math, split=split, vec=vec,
                                x_dtype=x_dtype, w_hint=w_hint, **({"pdl": True} if pdl else {}))
    sp.info = dict(tiles=ntiles, tile_bytes=bm * bk * eb, stages=stages, w_bytes=m * k * eb, max_grid=max_grid,
                   zero_y=split == "tiles")
    return sp

