"""Parameter sets for cross-checking nvtma's TensorMap encoder against the driver.

Pure Python, no CUDA: the generator (gen_driver_vectors.py, run on a GPU machine)
feeds these to cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col, and the CI tests
feed the recorded cases to nvtma.tensormap. Each case is a dict of the driver's
arguments, enums as ints with CUDA's values.

Two kinds of cases: *probes* change one field of a valid base at a time (they expose
the byte layout), *random* cases draw every field, mostly inside the documented
ranges, then break zero to two rules on purpose (they expose the rules).
"""

import random

# Storage bytes per element of CUtensorMapDataType 0..15 (packed types: per U4/U6
# value as laid out in global memory; ALIGN16B types pad to 1 byte per value).
ELEM_BYTES = [1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4, 0.5, 1, 1]
NUM_DTYPES = 16
NUM_SWIZZLES = 7
SWIZZLE_SPAN = [0, 32, 64, 128, 128, 128, 128]

U32 = 1 << 32
U40 = 1 << 40


def _pick_dim(rng):
    r = rng.random()
    if r < 0.45:
        return rng.randint(1, 300)
    if r < 0.75:
        return rng.randint(1, 1 << 16)
    if r < 0.9:
        return 1 << rng.randint(0, 32)
    return rng.randint(1, U32)


def _dense_strides(dtype, dims, rng, align=16):
    """Byte strides of a (possibly padded) dense layout, rank-1 entries."""
    eb = ELEM_BYTES[dtype]
    strides = []
    cur = max(1, int(dims[0] * eb))
    for d in dims[1:]:
        cur = (cur + align - 1) // align * align
        if rng.random() < 0.3:
            cur += align * rng.randint(1, 8)
        strides.append(cur)
        cur = cur * d
    return strides


def _pick_box0(dtype, swizzle, interleave, rng):
    eb = ELEM_BYTES[dtype]
    if dtype in (14, 15):
        return 128
    span = SWIZZLE_SPAN[swizzle] if interleave == 0 and swizzle else 256 * 8
    limit_bytes = min(span, int(256 * eb)) if span else int(256 * eb)
    unit = max(1, int(16 / eb))
    n = max(1, int(limit_bytes // 16))
    return min(256, unit * rng.randint(1, n))


def _pick_dtype(rng):
    # packed types are sm_100-only: keep a small share so the rule stays covered
    return rng.randrange(NUM_DTYPES) if rng.random() < 0.1 else rng.randrange(13)


def _pick_swizzle(rng):
    # the 128B-atom swizzles are sm_100-only: likewise a small share
    return rng.randrange(NUM_SWIZZLES) if rng.random() < 0.1 else rng.randrange(4)


def _fit_smem(box, es, eb, limit=233472):
    """Shrink outer box dims until the box fits the per-SM shared memory."""
    def size():
        t = eb
        for b, e in zip(box, es):
            t *= b // e
        return t
    i = len(box) - 1
    while size() > limit and i > 0:
        box[i] = max(1, box[i] // 2)
        if box[i] == 1:
            i -= 1


def _layout(rng, dtype, rank, interleave):
    """Swizzle, dims, the global address alignment and dense strides of a case."""
    swizzle = 1 if interleave == 2 and rng.random() < 0.5 else _pick_swizzle(rng)
    dims = [_pick_dim(rng) for _ in range(rank)]
    if dtype in (14, 15):
        dims[0] = 128 * rng.randint(1, 64)
    elif dtype == 13:
        dims[0] = 2 * max(1, dims[0] // 2)
    align = 32 if (interleave == 2 or dtype in (14, 15)) else 16
    return swizzle, dims, align, _dense_strides(dtype, dims, rng, align)


def _address(rng, align):
    base = 0x7F0000000000 + rng.randrange(1 << 32) * 256
    return base + align * rng.randrange(16)


def _finish(rng, case):
    """L2 promotion and OOB fill drawn last, then zero to two fields broken."""
    case.update(l2=rng.randrange(4), oob=1 if (rng.random() < 0.3) else 0)
    for _ in range(rng.choice([0, 0, 0, 1, 1, 2])):
        _mutate(case, rng)
    return case


def random_tiled(rng: random.Random) -> dict:
    dtype = _pick_dtype(rng)
    rank = rng.randint(1, 5)
    interleave = 0 if rng.random() < 0.7 else rng.randint(1, 2)
    if interleave and rank < 3:
        rank = rng.randint(3, 5)
    swizzle, dims, align, strides = _layout(rng, dtype, rank, interleave)
    box = [_pick_box0(dtype, swizzle, interleave, rng)]
    box += [rng.randint(1, 256) if rng.random() < 0.5 else rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256])
            for _ in range(rank - 1)]
    es = [1 if rng.random() < 0.6 else rng.randint(1, 8) for _ in range(rank)]
    if rng.random() < 0.9:
        _fit_smem(box, es, ELEM_BYTES[dtype])
    return _finish(rng, dict(api="tiled", dtype=dtype, rank=rank, addr=_address(rng, align), dims=dims,
                             strides=strides, box=box, es=es, interleave=interleave, swizzle=swizzle))


def random_im2col(rng: random.Random) -> dict:
    dtype = _pick_dtype(rng)
    rank = rng.randint(3, 5)
    interleave = 0 if rng.random() < 0.7 else rng.randint(1, 2)
    swizzle, dims, align, strides = _layout(rng, dtype, rank, interleave)
    lim = {3: 1 << 15, 4: 1 << 7, 5: 1 << 4}[rank]
    cpp = _pick_box0(dtype, swizzle, interleave, rng)
    ppc = rng.randint(1, 1024) if rng.random() < 0.7 else rng.choice([1, 32, 64, 128, 256, 512, 1024])
    eb = ELEM_BYTES[dtype]
    while rng.random() < 0.9 and ppc > 1 and cpp * ppc * eb > 233472:
        ppc //= 2
    # keep the sampled box inside the tensor most of the time (non-zero area rule)
    sp = range(1, rank - 1) if interleave == 0 else range(0, rank - 2)
    lower = [rng.randint(-lim, lim - 1) for _ in range(rank - 2)]
    upper = [rng.randint(-lim, lim - 1) for _ in range(rank - 2)]
    if rng.random() < 0.8:
        for j, d in enumerate(sp):
            if dims[d] + upper[j] - lower[j] <= 0:
                lower[j], upper[j] = -min(lim, abs(lower[j])), min(lim - 1, abs(upper[j]))
    es = [1 if rng.random() < 0.6 else rng.randint(1, 8) for _ in range(rank)]
    return _finish(rng, dict(api="im2col", dtype=dtype, rank=rank, addr=_address(rng, align), dims=dims,
                             strides=strides, lower=lower, upper=upper, cpp=cpp, ppc=ppc, es=es,
                             interleave=interleave, swizzle=swizzle))


def _mutate(c: dict, rng: random.Random) -> None:
    """Break (or stress) one field; the driver's verdict tells us the rule."""
    rank = c["rank"]
    kinds = ["addr", "dim", "stride", "es", "enum", "rank", "dim_big"]
    if c["api"] == "tiled":
        kinds += ["box", "box", "box0"]
    else:
        kinds += ["corner", "cpp", "ppc"]
    k = rng.choice(kinds)
    if rank < 1 and k not in ("addr", "enum", "rank"):
        return
    if k == "addr":
        c["addr"] += rng.choice([1, 2, 4, 8, 16, 24, 48])
        if rng.random() < 0.05:
            c["addr"] = 0
    elif k == "dim":
        i = rng.randrange(rank)
        c["dims"][i] = rng.choice([0, 1, 2, 3, 127, 129, U32 - 1, U32, U32 + 1, rng.randint(1, U32)])
    elif k == "dim_big":
        i = rng.randrange(rank)
        c["dims"][i] = rng.choice([U32, U32 - 1, 1 << 31, (1 << 31) + 1])
    elif k == "stride" and rank > 1:
        i = rng.randrange(rank - 1)
        c["strides"][i] = rng.choice([0, 8, 16, 24, 32, 48, 64, c["strides"][i] + rng.choice([-32, -16, -8, 1, 8, 16, 32]),
                                      U40 - 16, U40, U40 + 16, (U40 - 1) // 16 * 16, 1 << 39, 1 << 36, 1 << 32,
                                      rng.randrange(1, U40) // 16 * 16, rng.randrange(1, 1 << 20) * 16])
    elif k == "es":
        i = rng.randrange(rank)
        c["es"][i] = rng.choice([0, 1, 2, 7, 8, 9, 16])
    elif k == "enum":
        f = rng.choice(["dtype", "interleave", "swizzle", "l2", "oob"])
        c[f] = rng.randrange({"dtype": 16, "interleave": 3, "swizzle": 7, "l2": 4, "oob": 2}[f])
    elif k == "rank":
        new = rng.choice([0, 1, 2, 3, 4, 5, 6]) if c["api"] == "tiled" else rng.choice([1, 2, 3, 4, 5, 6])
        _resize(c, new, rng)
    elif k == "box":
        i = rng.randrange(rank)
        c["box"][i] = rng.choice([0, 1, 2, 8, 16, 24, 32, 64, 128, 255, 256, 257, 512, rng.randint(1, 256)])
    elif k == "box0":
        c["box"][0] = rng.randint(1, 300)
    elif k == "corner" and rank > 2:
        i = rng.randrange(rank - 2)
        which = rng.choice(["lower", "upper"])
        lim = {3: 1 << 15, 4: 1 << 7, 5: 1 << 4}.get(rank, 16)
        c[which][i] = rng.choice([-lim - 1, -lim, lim - 1, lim, 0, rng.randint(-2 * lim, 2 * lim)])
        if rng.random() < 0.3:
            c["upper"] = list(c["lower"])
    elif k == "cpp":
        c["cpp"] = rng.choice([0, 1, 2, 8, 16, 24, 32, 64, 128, 255, 256, 257, 512, rng.randint(1, 300)])
    elif k == "ppc":
        c["ppc"] = rng.choice([0, 1, 1023, 1024, 1025, 2048, rng.randint(1, 1100)])


def _resize(c: dict, new: int, rng: random.Random) -> None:
    old = c["rank"]
    c["rank"] = new
    grow = max(0, new - old)
    c["dims"] = (c["dims"] + [rng.randint(1, 64) for _ in range(grow)])[:max(new, 0)]
    s = c["strides"]
    while len(s) < new - 1:
        s.append((s[-1] if s else 256) * 64)
    c["strides"] = s[:max(new - 1, 0)]
    c["es"] = (c["es"] + [1] * grow)[:new]
    if c["api"] == "tiled":
        c["box"] = (c["box"] + [1] * grow)[:new]
    else:
        nc = max(new - 2, 0)
        c["lower"] = (c["lower"] + [0] * nc)[:nc]
        c["upper"] = (c["upper"] + [1] * nc)[:nc]


def probe_cases() -> list:
    """One-field-at-a-time variations of valid bases: they expose the byte layout."""
    out = []
    base = dict(api="tiled", dtype=6, rank=5, addr=0x7F1234560000,
                dims=[1024, 512, 64, 8, 4], strides=[4096, 4096 * 512, 4096 * 512 * 64, 4096 * 512 * 64 * 8],
                box=[64, 32, 4, 2, 1], es=[1, 1, 1, 1, 1], interleave=0, swizzle=0, l2=0, oob=0)

    def var(**kw):
        c = {k: (list(v) if isinstance(v, list) else v) for k, v in base.items()}
        for k, v in kw.items():
            c[k] = v
        out.append(c)

    var()
    for k in range(0, 48):
        var(addr=16 << k if k < 44 else (0x7F1234560000 | (1 << k)) & ((1 << 64) - 1))
    vals = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 255, 256, 257, 65535, 65536, 65537,
            1 << 20, (1 << 24) + 3, 1 << 31, U32 - 1, U32, U32 + 1, 0]
    for i in range(5):
        for v in vals:
            d = list(base["dims"]); d[i] = v
            var(dims=d)
    svals = [0, 8, 16, 32, 48, 64, 4096, 4112, 1 << 20, (1 << 32) - 16, 1 << 32, (1 << 36) + 16,
             1 << 39, U40 - 16, U40, U40 + 16, (1 << 48)]
    for i in range(4):
        for v in svals:
            s = list(base["strides"]); s[i] = v
            var(strides=s)
        for k in range(4, 41):
            s = list(base["strides"]); s[i] = 1 << k
            var(strides=s)
    for i in range(5):
        for v in list(range(0, 258)) + [300, 512, 1024]:
            b = list(base["box"]); b[i] = v
            var(box=b)
        for v in range(0, 11):
            e = list(base["es"]); e[i] = v
            var(es=e)
    for dt in range(16):
        for il in range(3):
            for sw in range(7):
                for l2 in range(4):
                    for oob in range(2):
                        eb = ELEM_BYTES[dt]
                        b0 = 128 if dt in (14, 15) else max(1, int(32 / eb))
                        d0 = 1024
                        s = [4096, 4096 * 512, 4096 * 512 * 64, 4096 * 512 * 64 * 8]
                        var(dtype=dt, interleave=il, swizzle=sw, l2=l2, oob=oob,
                            box=[b0, 32, 4, 2, 1], dims=[d0, 512, 64, 8, 4], strides=s,
                            addr=0x7F1234560000)
    for r in range(0, 7):
        var(rank=r, dims=([17, 19, 23, 29, 31, 37])[:r], strides=[1024, 1 << 16, 1 << 22, 1 << 28, 1 << 34][:max(r - 1, 0)],
            box=[8, 2, 3, 4, 5, 6][:r], es=[1, 2, 3, 4, 5, 6][:r])
    # im2col probes
    ib = dict(api="im2col", dtype=6, rank=5, addr=0x7F1234560000,
              dims=[64, 32, 32, 16, 8], strides=[128, 4096, 131072, 2097152],
              lower=[-1, -1, -1], upper=[1, 1, 1], cpp=64, ppc=128, es=[1, 1, 1, 1, 1],
              interleave=0, swizzle=0, l2=0, oob=0)

    def ivar(**kw):
        c = {k: (list(v) if isinstance(v, list) else v) for k, v in ib.items()}
        for k, v in kw.items():
            c[k] = v
        out.append(c)

    ivar()
    for r, lim in ((3, 1 << 15), (4, 1 << 7), (5, 1 << 4)):
        dims = [64, 32, 32, 16, 8][:r]
        strides = [128, 4096, 131072, 2097152][:r - 1]
        for j in range(r - 2):
            for v in sorted(set([-lim - 1, -lim, -lim + 1, -2, -1, 0, 1, 2, 3, lim - 2, lim - 1, lim] +
                                [1 << k for k in range(16) if (1 << k) < lim] + [-(1 << k) for k in range(16) if (1 << k) <= lim])):
                lo = [0] * (r - 2); up = [1] * (r - 2)
                lo[j] = v
                ivar(rank=r, dims=dims, strides=strides, es=[1] * r, lower=lo, upper=up)
                lo = [-1] * (r - 2); up = [0] * (r - 2)
                up[j] = v
                ivar(rank=r, dims=dims, strides=strides, es=[1] * r, lower=lo, upper=up)
    for v in list(range(0, 258)) + [300, 512]:
        ivar(cpp=v)
    for v in list(range(0, 64)) + [127, 128, 129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2048]:
        ivar(ppc=v)
    for i in range(5):
        for v in range(0, 10):
            e = [1] * 5; e[i] = v
            ivar(es=e)
    for dt in range(16):
        for il in range(3):
            for sw in range(7):
                for l2 in range(4):
                    eb = ELEM_BYTES[dt]
                    cp = 128 if dt in (14, 15) else max(1, int(32 / eb))
                    ivar(dtype=dt, interleave=il, swizzle=sw, l2=l2, oob=l2 & 1, cpp=cp,
                         dims=[256, 32, 32, 16, 8], strides=[512, 16384, 524288, 8388608])
    # im2col: the non-zero-area rule when a spatial dim is near or past 2^31
    big = [(1 << 31) - 1, 1 << 31, (1 << 31) + 1, (1 << 31) + 2, 3 << 30, (1 << 32) - 1, 1 << 32]
    corner = [-32768, -20000, -100, -1, 0, 1, 100, 20000, 32767]
    for il in (0, 1):
        for d in big:
            for lo in corner:
                for up in corner:
                    for es in ([1, 1, 1], [1, 7, 1], [7, 1, 1], [1, 1, 7]):
                        dims = [64, d, 3] if il == 0 else [d, 64, 3]
                        ivar(rank=3, dims=dims, strides=[128, 1 << 36], es=es, lower=[lo], upper=[up],
                             interleave=il, cpp=32, ppc=64)
    # rank 1 and degenerate ranks through the C ABI; addresses past 2^48
    for r in (0, 1, 6):
        var(rank=r, dims=[256] * r, strides=[512] * max(r - 1, 0), box=[16] * r, es=[1] * r)
    for d0 in (1, 16, 255, 256, 1 << 20, 1 << 32):
        for b0 in (8, 64, 256):
            var(rank=1, dims=[d0], strides=[], box=[b0], es=[1])
    for k in range(44, 64):
        var(addr=(1 << k) | 0x1230)
    var(addr=(1 << 64) - 16)
    for f, v in (("dtype", 16), ("dtype", 255), ("interleave", 3), ("swizzle", 7), ("l2", 4), ("oob", 2)):
        var(**{f: v})
    return out


def cases(seed: int, n_tiled: int, n_im2col: int, with_probes: bool = True) -> list:
    rng = random.Random(seed)
    out = probe_cases() if with_probes else []
    out += [random_tiled(rng) for _ in range(n_tiled)]
    out += [random_im2col(rng) for _ in range(n_im2col)]
    return out
