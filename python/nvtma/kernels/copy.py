"""TMA copy kernels: tiles, a persistent pipelined copy, multicast, reduce,
im2col, bulk and cp.async round trips, descriptor dump and update.

Each public function returns a ``dsl.Specialization`` (``.compile()``,
``.ir``, ``.grid``, ``.block``, ``.info``) of a DSL kernel below.
"""

from __future__ import annotations

import math
import operator

from .. import cpasync, dsl, lang

G2S, S2G = cpasync.CopyBulkTensorTileG2SOp, cpasync.CopyBulkTensorTileS2GOp

# TMA coordinates are signed 32-bit (the lowering truncates each to i32): in a dim of 2^31 elements or more the
# boxes from 2^31 on load from a negative coordinate (zeros, out of bounds) and store nowhere, without a word
COORD_LIMIT = 1 << 31
# the launch's grid y and z (a grid x goes to 2^31 - 1)
GRID_YZ = 65535


def _t(elem, shape):
    return dsl.Tensor(elem, tuple(shape))


def _int(name, v, lo=1, hi=None):
    """`v` as a Python int (a numpy integer too) in [lo, hi], or a ValueError naming the argument (a bool, float
    or string is none: a float dim failed deep in the build, a zero one divided by zero)."""
    if isinstance(v, bool) or not hasattr(type(v), "__index__"):
        raise ValueError(f"{name}={v!r}: an integer")
    v = operator.index(v)
    if v < lo or (hi is not None and v > hi):
        raise ValueError(f"{name}={v}: " + (f"{lo}..{hi}" if hi is not None else f"at least {lo}"))
    return v


def _ints(name, vs, rank=None, lo=1, hi=None):
    """A tuple of `_int`s (`rank` of them where given)."""
    try:
        vs = tuple(vs)
    except TypeError:
        raise ValueError(f"{name}={vs!r}: a tuple of integers") from None
    if rank is not None and len(vs) != rank:
        raise ValueError(f"{name}={vs}: {rank} integers")
    return tuple(_int(f"{name}[{i}]", v, lo, hi) for i, v in enumerate(vs))


def _extent(name, n):
    """A tensor dim whose every element a TMA coordinate reaches: a positive int below 2^31."""
    n = _int(name, n)
    if n >= COORD_LIMIT:
        raise ValueError(f"{name}={n}: at most 2^31 - 1 (TMA coordinates are signed 32-bit: the boxes from 2^31 on "
                         f"would load zeros and store nothing)")
    return n


def _dims(name, shape, rank=None):
    """A tensor's static shape of `_extent`s."""
    shape = _ints(name, shape, rank)
    if not shape:
        raise ValueError(f"{name}=(): at least one dim")
    return tuple(_extent(f"{name}[{i}]", n) for i, n in enumerate(shape))


def _coords(name, coords, rank):
    """`rank` coordinates given as Python ints that fit TMA's signed 32 bits (a larger one was truncated to its
    low 32 bits: another box, loaded without a word)."""
    return _ints(name, coords, rank, lo=-COORD_LIMIT, hi=COORD_LIMIT - 1)


def _flag(name, v):
    """A bool (a truthy string such as "no" built the other variant)."""
    if v not in (False, True) or not isinstance(v, (bool, int)):
        raise ValueError(f"{name}={v!r}: False or True")
    return bool(v)


def _one_box_load(bar, atom, coords, smem, **kw):
    """Warp 0 loads one tile into `smem`; every thread then waits for it.
    Thread 0 arms the barrier (initialized and published before)."""
    with dsl.if_(dsl.thread_idx() == 0):
        bar.arrive_expect_tx(0, atom.tile_bytes)
    with lang.WarpRole(0):
        cpasync.copy(atom, coords, smem, tma_bar_ptr=bar.at(0), **kw)
    bar.wait(0, 0)


def _store_and_drain(atom, coords, smem):
    """Warp 0 stores `smem` and waits for the store to finish."""
    with lang.WarpRole(0):
        cpasync.copy(atom, coords, smem)
        cpasync.bulk_commit_group()
        cpasync.bulk_wait_group(0)


def _tma_bar():
    bar = lang.TMABar(1)
    dsl.barrier()  # the init is published before anyone arms or waits
    return bar


# --------------------------------------------------------------------------- descriptors

@dsl.kernel(block=(32,), name="dump_desc")
def dump_desc_kernel(x: dsl.Tensor, out: dsl.Tensor("i64", (16,)), *, box, l2_promotion, swizzle):
    """The #3672 check: the kernel copies its own descriptor out."""
    a = cpasync.make_tiled_tma_atom(G2S(), x, box, l2_promotion=l2_promotion, swizzle=swizzle)
    with dsl.if_(dsl.thread_idx() == 0):
        cpasync.copy_tensormap(a, cpasync.address_of(out))


def dump_descriptor(shape, elem="f16", box=(64, 64), l2_promotion="l2_128b", swizzle="none"):
    """A kernel that copies its own descriptor (of `shape`, `box`, ...) into a 16 x i64 buffer."""
    shape = _ints("shape", shape)
    box = _ints("box", box, len(shape))
    sp = dump_desc_kernel.specialize([_t(elem, shape), _t("i64", (16,))], box=tuple(box), l2_promotion=l2_promotion,
                              swizzle=swizzle)
    sp.grid = (1, 1, 1)
    return sp


# --------------------------------------------------------------------------- tiled copy

def _whole_boxes(rows, cols, box, what="box"):
    """A grid of whole boxes covers rows x cols (else its tail would go uncopied)."""
    box = _ints(what, box, 2)
    if rows % box[0] or cols % box[1]:
        raise ValueError(f"{rows}x{cols} is not a multiple of the {what} {tuple(box)}")


def _tile_coords(tiles):
    """This CTA's tile coordinate per dim (outermost first): x = innermost
    tiles, y = the next, z = all outer dims decoded."""
    rank = len(tiles)
    coords = [None] * rank
    coords[rank - 1] = dsl.block_idx("x")
    if rank >= 2:
        coords[rank - 2] = dsl.block_idx("y")
    rest = dsl.block_idx("z")
    for d in reversed(range(rank - 2)):
        coords[d] = rest % tiles[d]
        rest = rest // tiles[d]
    return coords


@dsl.kernel(block=(128,), name="tile_copy")
def tile_copy_kernel(src: dsl.Tensor, dst: dsl.Tensor, *, box, swizzle, l2_promotion, oob_fill, prefetch,
                     l2_prefetch=False):
    """One CTA per box: TMA load -> shared -> TMA store. Edge boxes load
    with `oob_fill` and store clipped. `prefetch`: the load's descriptor is
    prefetched first; `l2_prefetch`: its box too, into L2 (TMA prefetch)."""
    shape = src.static_shape
    tiles = [math.ceil(s / b) for s, b in zip(shape, box)]
    pool = lang.SMEMPool()
    s = pool.alloc(box, src.dtype, swizzle=swizzle)
    ld = cpasync.make_tiled_tma_atom(G2S(), src, box, swizzle=swizzle, l2_promotion=l2_promotion, oob_fill=oob_fill)
    st = cpasync.make_tiled_tma_atom(S2G(), dst, box, swizzle=swizzle)
    if prefetch:
        with lang.WarpRole(0):
            cpasync.prefetch_descriptor(ld)
    bar = _tma_bar()
    coords = cpasync.tma_partition(ld, _tile_coords(tiles))
    if l2_prefetch:
        with lang.WarpRole(0):
            cpasync.prefetch(ld, coords, cache_hint="evict_last")
    _one_box_load(bar, ld, coords, s)
    _store_and_drain(st, coords, s)


def tile_copy(shape, elem="f16", box=(64, 64), swizzle="none", l2_promotion="l2_128b", oob_fill="none",
                   prefetch=False, l2_prefetch=False):
    """One CTA per `box` of `shape` (grid: the box counts, innermost on x, the next on y, the rest on z)."""
    shape = _dims("shape", shape)
    rank = len(shape)
    box = _ints("box", box)
    if len(box) != rank:
        raise ValueError(f"box {box} for a rank-{rank} tensor")
    tiles = [math.ceil(s / b) for s, b in zip(shape, box)]
    yz = (tiles[-2] if rank >= 2 else 1, math.prod(tiles[:-2]) if rank > 2 else 1)
    if max(yz) > GRID_YZ:
        raise ValueError(f"shape {shape} in boxes {box} takes a grid of {tiles[-1]} x {yz[0]} x {yz[1]} CTAs: its "
                         f"y and z go to {GRID_YZ} (larger boxes of the outer dims, or a persistent copy)")
    sp = tile_copy_kernel.specialize([_t(elem, shape), _t(elem, shape)], box=tuple(box), swizzle=swizzle,
                              l2_promotion=l2_promotion, oob_fill=oob_fill, prefetch=prefetch,
                              **({"l2_prefetch": True} if l2_prefetch else {}))
    sp.grid = (tiles[-1], tiles[-2] if rank >= 2 else 1, math.prod(tiles[:-2]) if rank > 2 else 1)
    sp.info = dict(tiles=tiles, box_bytes=math.prod(box) * dsl.dtype(elem).width // 8)
    return sp


@dsl.kernel(block=(128,), name="box_dump")
def box_dump_kernel(src: dsl.Tensor, out: dsl.Tensor, *, box, oob_fill, coords):
    """Loads one (possibly out-of-bounds) box at `coords` and writes shared
    memory verbatim to `out`: shows the OOB fill."""
    pool = lang.SMEMPool()
    s = pool.alloc(box, src.dtype)
    ld = cpasync.make_tiled_tma_atom(G2S(), src, box, oob_fill=oob_fill)
    bar = _tma_bar()
    _one_box_load(bar, ld, [dsl.Index(c) for c in coords], s)
    n = math.prod(box)
    for e in dsl.range(dsl.thread_idx(), n, dsl.block_dim()):
        idx, rest = [], e
        for d in reversed(box):
            idx.insert(0, rest % d)
            rest = rest // d
        out[tuple(idx)] = s[tuple(idx)]


def box_dump(shape, elem="f32", box=(8, 32), oob_fill="none", coords=(0, 0)):
    shape = _ints("shape", shape)
    box = _ints("box", box, len(shape))
    coords = _coords("coords", coords, len(shape))
    sp = box_dump_kernel.specialize([_t(elem, shape), _t(elem, box)], box=tuple(box), oob_fill=oob_fill,
                             coords=tuple(coords))
    sp.grid = (1, 1, 1)
    return sp


# --------------------------------------------------------------------------- pipelined copy

@dsl.kernel(block=lambda threads, **_: (threads,), name="pipelined_copy")
def pipelined_copy_kernel(src: dsl.Tensor, dst: dsl.Tensor, *, box, stages, l2_load, l2_store, load_hint, store_hint,
                   threads):
    """Persistent TMA copy like ../shared/bench/tma_copy_bw.cu: each CTA
    walks tiles blockIdx.x, +gridDim.x, ...; `stages` loads in flight; one
    warp issues, and each stage is refilled once its store has read shared
    memory (bulk_wait_group.read)."""
    by, bx = box
    rows, cols = src.static_shape
    tiles_x = cols // bx
    pool = lang.SMEMPool()
    ring = pool.alloc((stages, by, bx), src.dtype)
    ld = cpasync.make_tiled_tma_atom(G2S(), src, box, l2_promotion=l2_load)
    st = cpasync.make_tiled_tma_atom(S2G(), dst, box, l2_promotion=l2_store)
    full = lang.TMABar(stages)
    dsl.barrier()
    sched = lang.PersistentTileScheduler((rows // by) * tiles_x)
    # unsigned tile arithmetic: the values are non-negative and udiv/urem are cheaper
    n = dsl.Uint32(sched.count)
    bid, grid = dsl.Uint32(dsl.block_idx()), dsl.Uint32(dsl.grid_dim())

    def coords(i):
        t = bid + i * grid
        return [(t // tiles_x) * by, (t % tiles_x) * bx]

    def load(i):
        s = i % stages
        full.arrive_expect_tx(s, ld.tile_bytes)
        cpasync.copy(ld, coords(i), ring.stage(s), tma_bar_ptr=full.at(s), cache_hint=load_hint)

    with lang.WarpRole(0):
        for i in dsl.range(dsl.min(n, stages)):
            load(i)
        for i in dsl.range(n):
            s = i % stages
            full.wait(s, (i // stages) % 2 != 0)
            cpasync.copy(st, coords(i), ring.stage(s), cache_hint=store_hint)
            cpasync.bulk_commit_group()
            # refill the stage the previous store read from
            with dsl.if_((i >= 1) & (i - 1 + stages < n)):
                cpasync.bulk_wait_group(1, read=True)
                load(i - 1 + stages)
        cpasync.bulk_wait_group(0)


def pipelined_copy(rows, cols, elem="f16", box=(64, 128), stages=4, l2_load="l2_128b", l2_store="none",
                        threads=32, load_hint=None, store_hint=None):
    """`load_hint` / `store_hint`: an L2 eviction priority (cpasync.CACHE_HINTS) or None."""
    rows, cols = _dims("shape", (rows, cols))
    box = _ints("box", box, 2)
    by, bx = box
    stages, threads = _int("stages", stages), _int("threads", threads, 32, 1024)
    _whole_boxes(rows, cols, box)
    for h in (load_hint, store_hint):
        if h is not None and h not in cpasync.CACHE_HINTS:
            raise ValueError(f"cache hint {h!r}: one of {sorted(cpasync.CACHE_HINTS)} or None")
    sp = pipelined_copy_kernel.specialize([_t(elem, (rows, cols)), _t(elem, (rows, cols))], box=tuple(box),
                                          stages=stages, l2_load=l2_load, l2_store=l2_store, load_hint=load_hint,
                                          store_hint=store_hint, threads=threads)
    sp.info = dict(tiles=(rows // by) * (cols // bx), tile_bytes=by * bx * dsl.dtype(elem).width // 8,
                   stages=stages)
    return sp


# --------------------------------------------------------------------------- multicast

@dsl.kernel(block=(128,), cluster=lambda cluster, **_: (cluster, 1, 1), name="multicast_copy")
def multicast_copy_kernel(src: dsl.Tensor, out: dsl.Tensor, *, tile, cluster):
    """Clusters of `cluster` CTAs share one tile: each CTA loads slice
    `rank` and multicasts it to all; then every CTA stores its full copy to
    out[blockIdx.x] (out: [grid, tile...])."""
    ty, tx = tile
    cols = src.static_shape[1]
    tiles_x = cols // tx
    pool = lang.SMEMPool()
    s3 = pool.alloc((1, ty, tx), src.dtype)
    ld = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), src, tile, num_multicast=cluster)
    st = cpasync.make_tiled_tma_atom(S2G(), out, (1, ty, tx))
    bar = lang.TMABar(1)
    dsl.barrier()
    bid = dsl.block_idx()
    rank = dsl.cluster_ctarank()
    t = bid // cluster
    co = cpasync.tma_partition(ld, [t // tiles_x, t % tiles_x])
    with dsl.if_(dsl.thread_idx() == 0):
        bar.arrive_expect_tx(0, ld.tile_bytes)
    dsl.cluster_sync()  # every CTA's barrier is armed before any multicast lands
    mask = cpasync.create_tma_multicast_mask((cluster,), (rank,), 0)
    with lang.WarpRole(0):
        cpasync.copy(ld, co, s3.stage(0), tma_bar_ptr=bar.at(0), mcast_mask=mask, cta_rank=rank)
    bar.wait(0, 0)
    _store_and_drain(st, [bid, 0, 0], s3)
    dsl.cluster_sync()  # no CTA leaves while a peer may still write to its shared memory


def multicast_copy(rows, cols, elem="f16", tile=(64, 64), cluster=2):
    rows, cols = _dims("shape", (rows, cols))
    tile = _ints("tile", tile, 2)
    cluster = _int("cluster", cluster, 2, 16)
    ty, tx = tile
    _whole_boxes(rows, cols, tile, "tile")
    ntiles = (rows // ty) * (cols // tx)
    grid = ntiles * cluster
    sp = multicast_copy_kernel.specialize([_t(elem, (rows, cols)), _t(elem, (grid, ty, tx))], tile=tuple(tile),
                                   cluster=cluster)
    sp.grid = (grid, 1, 1)
    sp.info = dict(ntiles=ntiles)
    return sp


# --------------------------------------------------------------------------- reduce

@dsl.kernel(block=(128,), name="reduce_tile")
def reduce_tile_kernel(src: dsl.Tensor, out: dsl.Tensor, *, box, reduction):
    """out[tile] <op>= src[tile] through cp.reduce.async.bulk.tensor."""
    pool = lang.SMEMPool()
    s = pool.alloc(box, src.dtype)
    ld = cpasync.make_tiled_tma_atom(G2S(), src, box)
    rd = cpasync.make_tiled_tma_atom(cpasync.CopyReduceBulkTensorTileS2GOp(cpasync.ReductionKind(reduction)), out,
                                     box)
    bar = _tma_bar()
    co = cpasync.tma_partition(ld, [dsl.block_idx("y"), dsl.block_idx("x")])
    _one_box_load(bar, ld, co, s)
    _store_and_drain(rd, co, s)


def reduce_add(rows, cols, elem="f32", box=(32, 32), reduction="add"):
    rows, cols = _dims("shape", (rows, cols))
    box = _ints("box", box, 2)
    by, bx = box
    _whole_boxes(rows, cols, box)
    if rows // by > GRID_YZ:
        raise ValueError(f"{rows} rows in boxes of {by} take a grid y of {rows // by}: it goes to {GRID_YZ}")
    sp = reduce_tile_kernel.specialize([_t(elem, (rows, cols)), _t(elem, (rows, cols))], box=tuple(box),
                                reduction=reduction)
    sp.grid = (cols // bx, rows // by, 1)
    return sp


# --------------------------------------------------------------------------- im2col

@dsl.kernel(block=(128,), name="im2col_dump")
def im2col_dump_kernel(src: dsl.Tensor, out: dsl.Tensor, *, pixels, channels, lower, upper, start, offsets):
    """One im2col load of `pixels` x `channels` from an NHWC tensor starting
    at `start` = (n, h, w, c) with `offsets` (w, h), dumped to out."""
    pool = lang.SMEMPool()
    s = pool.alloc((pixels, channels), src.dtype)
    ld = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorIm2ColG2SOp(tuple(lower), tuple(upper)), src,
                                     (pixels, channels))
    bar = _tma_bar()
    _one_box_load(bar, ld, [dsl.Index(v) for v in start], s, offsets=[dsl.Int16(o) for o in offsets])
    for e in dsl.range(dsl.thread_idx(), pixels * channels, dsl.block_dim()):
        p, q = e // channels, e % channels
        out[p, q] = s[p, q]


def im2col_dump(n, h, w, c, pixels=64, channels=64, lower=(0, 0), upper=(0, 0), start=(0, 0, 0, 0),
                     offsets=(0, 0), elem="f16"):
    n, h, w, c = _dims("shape", (n, h, w, c))
    start = _coords("start", start, 4)
    sp = im2col_dump_kernel.specialize([_t(elem, (n, h, w, c)), _t(elem, (pixels, channels))], pixels=pixels,
                                channels=channels, lower=tuple(lower), upper=tuple(upper), start=tuple(start),
                                offsets=tuple(offsets))
    sp.grid = (1, 1, 1)
    return sp


# --------------------------------------------------------------------------- bulk, cp.async

@dsl.kernel(block=(128,), name="bulk_roundtrip")
def bulk_roundtrip_kernel(src: dsl.Tensor, dst: dsl.Tensor, *, nbytes):
    """cp.async.bulk global -> shared (mbarrier) -> global (bulk group)."""
    pool = lang.SMEMPool()
    s = pool.alloc((nbytes,), "i8")
    bar = _tma_bar()
    with dsl.if_(dsl.thread_idx() == 0):
        bar.arrive_expect_tx(0, nbytes)
    sp = cpasync.address_of(s)
    with lang.WarpRole(0):
        cpasync.bulk_copy(cpasync.CopyBulkG2SOp(), sp, cpasync.address_of(src), nbytes, tma_bar_ptr=bar.at(0))
    bar.wait(0, 0)
    with lang.WarpRole(0):
        cpasync.bulk_copy(cpasync.CopyBulkS2GOp(), cpasync.address_of(dst), sp, nbytes)
        cpasync.bulk_commit_group()
        cpasync.bulk_wait_group(0)


def bulk_roundtrip(nbytes=16384):
    if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 16 or nbytes % 16:
        # (cp.async.bulk moves whole 16-byte units)
        raise ValueError(f"nbytes={nbytes!r}: a multiple of 16 bytes, at least 16")
    sp = bulk_roundtrip_kernel.specialize([_t("i8", (nbytes,)), _t("i8", (nbytes,))], nbytes=nbytes)
    sp.grid = (1, 1, 1)
    return sp


@dsl.kernel(block=(128,), name="cp_async_roundtrip")
def cp_async_roundtrip_kernel(src: dsl.Tensor, dst: dsl.Tensor, *, nbytes, cache_mode, zfill=False, mbarrier=False):
    """Every thread cp.async's 16-byte chunks to shared memory, then copies
    shared memory back out with plain loads and stores. `zfill`: chunk k
    reads only its first (7 k) % 17 bytes, the rest zero filled; `mbarrier`:
    the copies complete on an mbarrier (each thread's cp_async_arrive)
    rather than a cp.async group."""
    pool = lang.SMEMPool()
    s = pool.alloc((nbytes,), "i8")
    if mbarrier:  # an arrival a thread, each once its copies landed
        bar = lang.MBarrier(1, 128)
        dsl.barrier()
    op = cpasync.CopyG2SOp(cpasync.LoadCacheMode(cache_mode))
    for k in dsl.range(dsl.thread_idx(), nbytes // 16, dsl.block_dim()):
        off = k * 16
        cpasync.cp_async(cpasync.address_of(s, [off]), cpasync.address_of(src, [off]), 16, op=op,
                         src_size=(k * 7 % 17).to(dsl.Int32) if zfill else None)
    if mbarrier:
        cpasync.cp_async_arrive(bar.at(0))
        bar.wait(0, 0)
    else:
        cpasync.cp_async_commit_group()
        cpasync.cp_async_wait_group(0)
    dsl.barrier()
    for e in dsl.range(dsl.thread_idx(), nbytes, dsl.block_dim()):
        dst[e] = s[e]


def cp_async_roundtrip(nbytes=8192, cache_mode="cache_global", zfill=False, mbarrier=False):
    if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 16 or nbytes % 16:
        # (16-byte cp.async chunks: a tail would be stored from shared memory no copy wrote)
        raise ValueError(f"nbytes={nbytes!r}: a multiple of 16 bytes, at least 16")
    zfill, mbarrier = _flag("zfill", zfill), _flag("mbarrier", mbarrier)
    sp = cp_async_roundtrip_kernel.specialize([_t("i8", (nbytes,)), _t("i8", (nbytes,))], nbytes=nbytes,
                                              cache_mode=cache_mode, zfill=zfill, mbarrier=mbarrier)
    sp.grid = (1, 1, 1)
    return sp


# --------------------------------------------------------------------------- descriptor update

@dsl.kernel(block=(128,), name="update_descriptor")
def update_descriptor_kernel(A: dsl.Tensor, B: dsl.Tensor, out: dsl.Tensor, ws: dsl.Tensor("i64", (16,)), *, box):
    """Copies A's descriptor to `ws`, re-points it at B on the device
    (tensormap.replace), fences, loads B's first tile through it and stores
    that to `out`; `ws` keeps the patched descriptor for inspection."""
    pool = lang.SMEMPool()
    s = pool.alloc(box, A.dtype)
    a = cpasync.make_tiled_tma_atom(G2S(), A, box)
    o = cpasync.make_tiled_tma_atom(S2G(), out, box)
    wg = cpasync.address_of(ws)
    with dsl.if_(dsl.thread_idx() == 0):
        cpasync.copy_tensormap(a, wg)
    dsl.barrier()
    with lang.WarpRole(0):
        cpasync.update_tma_descriptor(a, B, wg)
    cpasync.fence_tma_desc_release()
    bar = _tma_bar()
    cpasync.fence_tma_desc_acquire(wg)
    _one_box_load(bar, a, [0, 0], s, tma_desc_ptr=wg)
    _store_and_drain(o, [0, 0], s)


def update_descriptor(rows, cols, elem="f16", box=(64, 64)):
    rows, cols = _ints("shape", (rows, cols))
    box = _ints("box", box, 2)
    sp = update_descriptor_kernel.specialize([_t(elem, (rows, cols)), _t(elem, (None, None)), _t(elem, (rows, cols)),
                                       _t("i64", (16,))], box=tuple(box))
    sp.grid = (1, 1, 1)
    return sp
