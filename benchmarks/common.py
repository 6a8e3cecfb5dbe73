"""Kernels the benchmarks run, shared by the artifact builder and run.py."""

from nvtma import kernels as K

ROWS = COLS = 16384                      # fp16: 512 MiB per buffer
BOXES = [(64, 128), (128, 64), (32, 256)]  # rows x cols, the hand-written kernel's boxes
PROMOTIONS = ["none", "l2_64b", "l2_128b", "l2_256b"]


# (stages, load cache hint, store cache hint): the hand-written kernel's 4 stages, and with
# evict-first L2 hints (2 or 6 stages, or evict-first on the loads alone, were no better on the H200)
COPY_VARIANTS = [(4, None, None), (4, "evict_first", "evict_first")]


def copy_spec(box, promo, stages=4, load_hint=None, store_hint=None):
    return K.pipelined_copy(ROWS, COLS, "f16", box, stages=stages, l2_load=promo, l2_store="none",
                            load_hint=load_hint, store_hint=store_hint)


GEMV_M = GEMV_K = 16384
# W dtype, scale, tile, stages, fp8 math, consumer warps, split, vec, x dtype (see nvtma.kernels.gemv)
def _cfg(w_dtype, scale, tile, stages, fp8_math, consumers, split, vec=8, x_dtype="bf16", w_hint=None):
    return dict(w_dtype=w_dtype, scale=scale, tile=tile, stages=stages, fp8_math=fp8_math, consumers=consumers,
                split=split, vec=vec, x_dtype=x_dtype, w_hint=w_hint)


F8 = "f8E4M3FN"
EF = "evict_first"
GEMV_CONFIGS = [
    _cfg("bf16", None, (32, 256), 4, "f32", 4, "tiles"),
    _cfg("bf16", None, (32, 256), 4, "f32", 4, "rows"),
    _cfg("bf16", None, (32, 256), 4, "f32", 4, "rows", w_hint=EF),
    _cfg(F8, "row", (64, 256), 6, "f16x2", 4, "tiles"),
    _cfg(F8, "row", (64, 256), 4, "f16x2", 8, "rows", 16, w_hint=EF),
    _cfg(F8, "row", (64, 256), 4, "f16x2", 8, "rows", 16, "f16", EF),
    _cfg(F8, "tensor", (64, 256), 6, "f16x2", 4, "tiles"),
    _cfg(F8, "tensor", (64, 256), 4, "f16x2", 8, "rows", 16, w_hint=EF),
    _cfg(F8, "tensor", (64, 256), 4, "f16x2", 8, "rows", 16, "f16", EF),
]


def gemv_spec(cfg, promo):
    return K.gemv(GEMV_M, GEMV_K, l2_promotion=promo, **cfg)


def launch_spec():
    return K.tile_copy((64, 64), "f16", (64, 64))


def key(spec):
    """The artifact directory of a specialization (name + constants + nvtma version)."""
    return spec.key


def launch(kernel, grid):
    """Launch keywords from the kernel's record: block, cluster, dynamic shared memory."""
    rec = kernel.artifacts.kernels[kernel.name].get("launch") or {}
    kw = dict(grid=grid, block=tuple(rec.get("block") or (128,)), smem=rec.get("smem", 0))
    if rec.get("cluster"):
        kw["cluster"] = tuple(rec["cluster"])
    return kw


def all_specs():
    specs = [copy_spec(b, p, *v) for b in BOXES for p in PROMOTIONS for v in COPY_VARIANTS]
    specs += [gemv_spec(c, p) for c in GEMV_CONFIGS for p in PROMOTIONS]
    specs.append(launch_spec())
    return specs


def gpu(torch, seed=0):
    """(the CUDA device, a side stream to capture and replay on, a generator seeded there)."""
    dev = torch.device("cuda")
    return dev, torch.cuda.Stream(), torch.Generator(device=dev).manual_seed(seed)


def copies(w, at_least=2, total=256 << 20):
    """w and clones of it, enough that one pass over them reads >= `total`
    bytes (W then always comes from DRAM, L2 being 50 MB), at least `at_least`."""
    n = max(at_least, -(-total // (w.numel() * w.element_size())) + 1)
    return [w] + [w.clone() for _ in range(n - 1)]


def gemm_problem(torch, gen, N, K, M, fp8, scale="tensor"):
    """Random W [N, K] and x [M, K] for the GEMM: e4m3 with a per-tensor W
    scale and per-token x scales (or the same values as per-row W scales, or
    as 128x128 W block and 1x128 x block scales: `scale`), or bf16 (scales
    None); and y's float32 reference. (w, x, w_scale, x_scale, want)."""
    dev = torch.device("cuda")
    w32 = torch.randn(N, K, generator=gen, device=dev) / 4
    x32 = torch.randn(M, K, generator=gen, device=dev)
    if not fp8:
        w, x = w32.bfloat16(), x32.bfloat16()
        return w, x, None, None, x.float() @ w.float().t()
    sw = torch.tensor([0.02], device=dev)
    w = (w32 / sw).to(torch.float8_e4m3fn)
    sx = x32.abs().amax(1).clamp(min=1e-6) / 448
    x = (x32 / sx[:, None]).to(torch.float8_e4m3fn)
    want = (x.float() * sx[:, None]) @ (w.float() * sw).t()
    if scale == "row":
        sw = sw.expand(N).contiguous()
    elif scale == "block":
        # x's block scales [M, K/128] as a view of the transposed storage the kernel loads (no copy a call)
        from nvtma.kernels import gemm
        kb = -(-K // 128)
        st = torch.zeros(kb, gemm.block_scale_columns(M), device=dev)
        st[:, :M] = sx[None, :]
        sw, sx = sw.expand(-(-N // 128), kb).contiguous(), st[:, :M].t()
    return w, x, sw, sx, want


def scaled_mm(torch, x, wbufs, w_scale, mode="tensor"):
    """cuBLASLt's e4m3 GEMM, the baseline: call(i) = torch._scaled_mm of x
    (rows padded with zeros to a multiple of 16, as it takes them) and the
    i-th of wbufs, y in bf16, with W's per-tensor scale (`mode` "tensor") or
    per-row scales ("row": x's scales ones, row-wise)."""
    M, K = x.shape
    Mp = max(16, -(-M // 16) * 16)
    xp = torch.zeros(Mp, K, device=x.device, dtype=x.dtype)
    xp[:M] = x
    if mode == "tensor":
        sa, sb = torch.ones((), device=x.device), w_scale.reshape(())
    elif mode == "row":
        sa, sb = torch.ones(Mp, 1, device=x.device), w_scale.reshape(1, -1)
    else:
        raise ValueError(f"mode={mode!r}: 'tensor' or 'row'")
    return lambda i: torch._scaled_mm(xp, wbufs[i].t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)


def save_new(d, specs):
    """Compiles and saves each spec under d/<spec.key> unless it is there."""
    from pathlib import Path
    for sp in specs:
        if not (Path(d) / sp.key).exists():
            sp.compile().save(Path(d) / sp.key)


def graph_ms(torch, stream, call, nbufs, calls=20, reps=10, before=None):
    """GPU ms per call: CUDA events around replays of a CUDA graph of `calls`
    calls ``call(i % nbufs)`` on `stream` (each i called once first, outside
    the graph), the best of `reps` replays; ``before()`` runs ahead of each."""
    with torch.cuda.stream(stream):
        for i in range(nbufs):
            call(i)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for i in range(calls):
            call(i % nbufs)
    best = float("inf")
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        if before is not None:
            before()
        with torch.cuda.stream(stream):
            s.record()
            graph.replay()
            e.record()
        e.synchronize()
        best = min(best, s.elapsed_time(e) / calls)
    return best


# gemm_spec's diagnostics and profiling builds (`diag`: a kernel whose y is not the product, or not only;
# `profile`: a buffer parameter more) are not Gemm options (a Gemm refuses them: NOT_GEMM_OPTIONS), so the
# experiments plan the call as a Gemm does and build its kernel with them
SPEC_ONLY = ("diag", "profile")


def spec_args(spec):
    """gemm_spec's arguments that build the GEMM's `spec` again: its info and constants, and what the constants
    leave out where it is the kernel's default but not gemm_spec's (pdl off, TMA stores), y's dtype."""
    import inspect
    from nvtma.kernels import gemm
    params = inspect.signature(gemm.gemm_spec).parameters
    args = {k: v for k, v in {**spec.info, **spec.consts}.items() if k in params}
    return dict(args, pdl=spec.consts.get("pdl", False), store=spec.consts.get("store", "tma"),
                y_dtype=str(spec.param_types[2].dtype))


def with_spec(spec, **extra):
    """The GEMM's `spec` rebuilt with more of gemm_spec's options (`extra`'s that are not None; none: `spec`)."""
    extra = {k: v for k, v in extra.items() if v is not None}
    if not extra:
        return spec
    from nvtma.kernels import gemm
    return gemm.gemm_spec(**dict(spec_args(spec), **extra))


def with_diag(spec, diag):
    """The GEMM's `spec` rebuilt with gemm_spec's diagnostics `diag` (None: `spec`)."""
    return with_spec(spec, diag=diag)


def _spec_only(opts):
    """(opts without SPEC_ONLY's, SPEC_ONLY's)."""
    return ({k: v for k, v in opts.items() if k not in SPEC_ONLY}, {k: v for k, v in opts.items() if k in SPEC_ONLY})


def gemm_plan(g, M, N, K, w_dtype, scale, **kw):
    """g.plan(M, N, K, w_dtype, scale, **kw), its GEMM built with kw's SPEC_ONLY options: (spec, splits,
    quantizer spec)."""
    kw, extra = _spec_only(kw)
    sp, splits, q = g.plan(M, N, K, w_dtype, scale, **kw)
    return with_spec(sp, **extra), splits, q


def prepared(g, x, w, w_scale=None, scale=None, x_scale=None, config=None, **opts):
    """(the call g would make, planned and checked by g, its GEMM built with opts' SPEC_ONLY options and
    loaded from g's artifacts (gemm_plan's spec); that spec). A profile build's call takes its buffer last:
    call(x, w, w_scale, x_scale, None, buffer). The call is one launch of the plan's config: a ValueError for
    what g would run otherwise (autotuned, no launch at all, or blocks of rows)."""
    import torch
    from nvtma.kernels import gemm
    opts, extra = _spec_only(opts)
    if g.autotune or not (x.numel() and w.numel()) or x.shape[0] > gemm.launch_rows(config, opts, g._device_sms(x)):
        raise ValueError(f"prepared: one launch of the plan's config, not {tuple(x.shape)} x {tuple(w.shape)} "
                         f"with autotune={g.autotune!r}")
    call = g._prepare(x, w, w_scale, scale, x_scale, None, None, config, opts)
    fp8 = w.dtype == torch.float8_e4m3fn
    sp = gemm_plan(g, x.shape[0], w.shape[0], x.shape[1], gemm.F8 if fp8 else "bf16", scale,
                   quantize=fp8 and x.dtype == torch.bfloat16, sms=g._device_sms(x), config=config, **opts,
                   **extra)[0]
    if extra:
        call.kernel = g.module(sp).gemm
    return call, sp


_CALLS = {}


def gemm_call(g, x, w, w_scale=None, scale=None, x_scale=None, config=None, **opts):
    """g(x, w, ...); with a diag among opts, the same call with its GEMM built with it (`prepared`, once per
    kind of call). (A profile build's call takes its buffer: `prepared`.)"""
    extra = _spec_only(opts)[1]
    if "profile" in extra:
        raise ValueError("gemm_call: a profile build takes its buffer (common.prepared's call)")
    if not extra:
        return g(x, w, w_scale=w_scale, scale=scale, x_scale=x_scale, config=config, **opts)
    key = (id(g), config, x.device, tuple(x.shape), x.stride(), x.dtype, tuple(w.shape), w.stride(), w.dtype,
           scale, tuple(sorted(opts.items())))
    call = _CALLS.get(key)
    if call is None:
        if len(_CALLS) >= 1024:
            _CALLS.clear()
        call = _CALLS[key] = prepared(g, x, w, w_scale, scale, x_scale, config, **opts)[0]
    return call(x, w, w_scale, x_scale, None)
