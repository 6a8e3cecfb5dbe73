"""The weight-streaming GEMM on the GPU: every W scaling and bf16, M not a
multiple of 8, N and K tails, one and several K splits, against float32 torch."""

import os

import pytest

import gpu_cases

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from nvtma.kernels import gemm  # noqa: E402


def _gemm(quantize="kernel"):
    return gemm.Gemm(artifacts=os.environ.get("NVTMA_GPU_ARTIFACTS"), quantize=quantize)


def _quantize_w(w32, mode):
    N, K = w32.shape
    if mode == "tensor":
        s = w32.abs().amax().reshape(1) / 448
        q = (w32 / s).to(torch.float8_e4m3fn)
        return q, s, q.float() * s
    if mode == "row":
        s = w32.abs().amax(1).clamp(min=1e-6) / 448
        q = (w32 / s[:, None]).to(torch.float8_e4m3fn)
        return q, s, q.float() * s[:, None]
    nb, kb = -(-N // 128), -(-K // 128)
    wp = torch.nn.functional.pad(w32, (0, kb * 128 - K, 0, nb * 128 - N)).view(nb, 128, kb, 128)
    s = wp.abs().amax((1, 3)).clamp(min=1e-6) / 448
    q = (wp / s[:, None, :, None]).reshape(nb * 128, kb * 128)[:N, :K].to(torch.float8_e4m3fn)
    deq = (torch.nn.functional.pad(q.float(), (0, kb * 128 - K, 0, nb * 128 - N)).view(nb, 128, kb, 128)
           * s[:, None, :, None]).reshape(nb * 128, kb * 128)[:N, :K]
    return q, s.contiguous(), deq


def _same(a, b):
    """Equal, but for the order split K's partials were added in (f32 atomics), which
    may round a bf16 element the other way: at most one bf16 step of it."""
    a, b = a.float(), b.float()
    return bool(((a - b).abs() <= torch.maximum(a.abs(), b.abs()) * 2.0 ** -7 + 1e-6).all())


def _case_inputs(M, N, K, seed=None):
    """bf16 x [M, K] and float32 W [N, K], from `seed` (default: one per problem)."""
    gen = torch.Generator(device="cuda").manual_seed(M * 7 + N if seed is None else seed)
    x = torch.randn(M, K, generator=gen, device="cuda").to(torch.bfloat16)
    return x, torch.randn(N, K, generator=gen, device="cuda") / 8


def _quantized_case(g, M, N, K, mode):
    """(bf16 x, x as the GEMM takes it, W, the call's scale keywords, float32 y): bf16 W and x, or W quantized
    (`mode`'s scaling) and x quantized by `g` as that scaling asks, the reference from the dequantized values."""
    x, w32 = _case_inputs(M, N, K)
    if mode == "bf16":
        w = w32.to(torch.bfloat16)
        return x, x, w, {}, x.float() @ w.float().t()
    w, sw, wdq = _quantize_w(w32, mode)
    xin, sx = g.quantize(x, "block" if mode == "block" else "token")
    return x, xin, w, dict(w_scale=sw, scale=mode, x_scale=sx), gemm.dequantize_x(xin, sx) @ wdq.t()


CASE_IDS = dict(ids=lambda c: f"M{c[0]}-N{c[1]}-K{c[2]}-{c[3]}")


@pytest.mark.parametrize("case", gpu_cases.GEMM_CASES, **CASE_IDS)
def test_gemm_matches_torch(case):
    M, N, K, mode, cfg = case
    g = _gemm()
    x, w32 = _case_inputs(M, N, K)
    if mode == "bf16":
        w = w32.to(torch.bfloat16)
        want = x.float() @ w.float().t()
        kw = {}
    else:
        w, sw, wdq = _quantize_w(w32, mode)
        # x quantized by the same kernel the API uses, so the reference sees the same x
        xq, sx = g.quantize(x, "block" if mode == "block" else "token")
        xdq = gemm.dequantize_x(xq, sx)  # sx: [M], or [M, kb] (a view of the kernel's transposed storage)
        # the quantizer itself: within e4m3's rounding of the bf16 x
        assert ((xdq - x.float()).abs() <= x.float().abs() * 0.07 + 1e-3).all()
        want = xdq @ wdq.t()
        kw = dict(w_scale=sw, scale=mode)
    for rep in range(2):  # the second call reuses the split-K counters the first reset
        y = g(x if mode == "bf16" else xq, w, x_scale=None if mode == "bf16" else sx, config=cfg, **kw)
        torch.cuda.synchronize()
        err = ((y.float() - want).abs().max() / want.abs().max()).item()
        assert err < 1.5e-2, f"call {rep}: max error {err:.3e} of max |y|"
    # bf16 x through the quantize-then-GEMM path gives the same y (x padded to the tile or not)
    if mode != "bf16":
        y2 = g(x, w, config=cfg, **kw)
        torch.cuda.synchronize()
        assert _same(y2, y)
    if mode == "block":  # DeepGEMM's [M, K/128] scale layout is taken too
        y3 = g(xq, w, x_scale=sx.contiguous(), config=cfg, **kw)
        torch.cuda.synchronize()
        assert _same(y3, y)


@pytest.mark.parametrize("case", gpu_cases.XA_CASES, **CASE_IDS)
def test_gemm_with_x_as_the_wgmmas_a(case):
    """x as the wgmmas' A and W's tile as their B (swap=False: W tiles of
    any multiple of 8 rows, each consumer warpgroup 64 rows of x, the rows
    of a stage past BM never loaded, y stored from the registers) matches
    float32 torch call after call, in bf16 and f32 y, and bf16 x quantized
    first gives the same y (Gemm's "auto" quantization takes quantize_x for
    these kernels: they cannot quantize x themselves)."""
    M, N, K, mode, cfg, yd = case
    g = _gemm(quantize="auto")
    out_dtype = torch.float32 if yd == "f32" else torch.bfloat16
    spec = g.plan(M, N, K, "bf16" if mode == "bf16" else gemm.F8, None if mode == "bf16" else mode, y_dtype=yd,
                  config=cfg)[0]
    assert spec.info["swap"] is False and spec.info["BN"] == cfg[1]
    x, xin, w, kw, want = _quantized_case(g, M, N, K, mode)
    for rep in range(2):
        y = g(xin, w, config=cfg, out_dtype=out_dtype, **kw)
        torch.cuda.synchronize()
        assert y.dtype == out_dtype
        err = ((y.float() - want).abs().max() / want.abs().max()).item()
        assert err < 1.5e-2, f"call {rep}: max error {err:.3e} of max |y|"
    if mode != "bf16":  # bf16 x, quantized by quantize_x first: the same y
        y2 = g(x, w, config=cfg, out_dtype=out_dtype, **{k: v for k, v in kw.items() if k != "x_scale"})
        torch.cuda.synchronize()
        assert _same(y2, y)


@pytest.mark.parametrize("case", gpu_cases.TABLE_CASES, ids=lambda c: f"N{c[0]}-K{c[1]}-M{c[2]}-{c[3]}")
def test_gemm_takes_its_tables_configs_at_any_m(case):
    """Gemm()'s own configs (no config given: gemm.MEASURED's for the H200's
    132 SMs) at benchmark shapes and M between the table's tiles match
    float32 torch: the M split's second CTA starting inside M (block-scaled
    M = 130 or 201 faulted with an illegal instruction before its x scales'
    box was put on 16 bytes), x as A over CTA pairs, and W as A with K
    split over CTA pairs (dsmem)."""
    N, K, M, mode = case
    g = _gemm()
    if M <= 32 and N == 2112:  # (the table's 2112 x 7168 entries at M = 1-32: K split over 2-CTA clusters)
        assert g.plan(M, N, K, "bf16" if mode == "bf16" else gemm.F8, None if mode == "bf16" else mode
                      )[0].info["ksplit"] == 2
    x, xin, w, kw, want = _quantized_case(g, M, N, K, mode)
    y = g(xin, w, **kw)
    torch.cuda.synchronize()
    err = ((y.float() - want).abs().max() / want.abs().max()).item()
    assert err < 1.5e-2, f"max error {err:.3e} of max |y|"


def test_gemm_m_split_takes_the_last_rows_of_m():
    """With the M split, the CTA whose BM rows would reach past M computes
    M's last BM rows instead (rows the first CTA computes too, written
    twice): y equals the y of x padded with zero rows to the cluster's
    rows, bit for bit, call after call (the twice-written rows are the same
    values), with no copy of x."""
    M, N, K, cfg = 100, 256, 2048, (64, 64, 1, 1, 1, None, 2)
    g = _gemm()
    x, w32 = _case_inputs(M, N, K)
    w, sw, wdq = _quantize_w(w32, "tensor")
    xq, sx = g.quantize(x)
    xp = torch.zeros(128, K, device="cuda", dtype=torch.uint8)
    xp[:M] = xq.view(torch.uint8)
    sxp = torch.ones(128, device="cuda")
    sxp[:M] = sx
    padded = g(xp.view(torch.float8_e4m3fn), w, w_scale=sw, scale="tensor", x_scale=sxp, config=cfg)[:M]
    ys = [g(xq, w, w_scale=sw, scale="tensor", x_scale=sx, config=cfg) for _ in range(3)]
    torch.cuda.synchronize()
    want = gemm.dequantize_x(xq, sx) @ wdq.t()
    assert ((ys[0].float() - want).abs().max() / want.abs().max()).item() < 1.5e-2
    for y in ys:
        assert torch.equal(y, padded)


@pytest.mark.parametrize("case", gpu_cases.HALF_CASES, **CASE_IDS)
def test_gemm_half_boxes_of_x_end_at_m(case):
    """A tile reaching past M loads x as one or two boxes of BM / 2 rows
    (the second overlapping the first, ending 0-7 rows past M), so rows
    past M beyond those 7 are never loaded (their accumulators hold whatever
    shared memory held, and feed no y and no split-K workspace): y is the y
    of x padded with zero rows to the tile by the caller (one box of BM
    rows) bit for bit (up to split K's order of additions), call after call,
    and matches float32 torch. (Gemm builds these kernels where M ends inside one
    x tile of 128 or more rows; xhalf=True here: wherever they can be.)"""
    M, N, K, mode, cfg = case
    g = gemm.Gemm(artifacts=os.environ.get("NVTMA_GPU_ARTIFACTS"), xhalf=True)
    rows = cfg[0] * (cfg[6] if len(cfg) > 6 else 1)
    assert g.plan(M, N, K, "bf16" if mode == "bf16" else gemm.F8, None if mode == "bf16" else mode,
                  config=cfg)[0].info["xhalf"]
    x, w32 = _case_inputs(M, N, K)
    if mode == "bf16":
        w, kw, xq, sx, sxp = w32.to(torch.bfloat16), {}, x, None, None
        want = x.float() @ w.float().t()
        xp = torch.zeros(rows, K, device="cuda", dtype=torch.bfloat16)
        xp[:M] = x
    else:
        w, sw, wdq = _quantize_w(w32, mode)
        kw = dict(w_scale=sw, scale=mode)
        xq, sx = g.quantize(x, "block" if mode == "block" else "token")
        want = gemm.dequantize_x(xq, sx) @ wdq.t()
        xp = torch.zeros(rows, K, device="cuda", dtype=torch.uint8)
        xp[:M] = xq.view(torch.uint8)
        xp = xp.view(torch.float8_e4m3fn)
        sxp = torch.ones((rows,) + tuple(sx.shape[1:]), device="cuda")
        sxp[:M] = sx
    padded = g(xp, w, x_scale=sxp, config=cfg, **kw)[:M]
    ys = [g(xq, w, x_scale=sx, config=cfg, **kw) for _ in range(3)]
    torch.cuda.synchronize()
    err = ((ys[0].float() - want).abs().max() / want.abs().max()).item()
    assert err < 1.5e-2, f"max error {err:.3e} of max |y|"
    for y in ys:
        assert _same(y, padded) if cfg[3] != 1 else torch.equal(y, padded)


@pytest.mark.parametrize("case", [c for c in gpu_cases.GEMM_CASES if c[3] != "bf16"], **CASE_IDS)
def test_gemm_quantizes_bf16_x_inside(case):
    """Gemm(quantize="fused"): bf16 x quantized in the GEMM, a scale per row
    and 128 K values (1x128 blocks), so y is x quantized in 1x128 blocks
    (by quantize_x) times W, up to fp8's and f32's rounding; twice a call
    (split K's counters reset). Where a ring of two stages with x's bf16
    tiles does not fit, the call quantizes with quantize_x first."""
    M, N, K, mode, cfg = case
    g, gf = _gemm(), _gemm("fused")
    x, w32 = _case_inputs(M, N, K)
    w, sw, wdq = _quantize_w(w32, mode)
    xb, sb = g.quantize(x, "block")
    want = gemm.dequantize_x(xb, sb) @ wdq.t()
    fused = gf.plan(M, N, K, scale=mode, quantize=True, config=cfg)[2] is None
    before = g(x, w, w_scale=sw, scale=mode, config=cfg)  # quantize_x, then the GEMM
    for rep in range(2):
        y = gf(x, w, w_scale=sw, scale=mode, config=cfg)
        torch.cuda.synchronize()
        if not fused:
            assert _same(y, before)
            continue
        err = ((y.float() - want).abs().max() / want.abs().max()).item()
        assert err < 1.5e-2, f"call {rep}: max error {err:.3e} of max |y|"


def _inputs(M, N, K, mode, seed):
    """(x, w, keywords) of a call: e4m3 x and W with scales, or bf16."""
    x, w32 = _case_inputs(M, N, K, seed)
    if mode == "bf16":
        return x, w32.to(torch.bfloat16), {}
    w, sw, _ = _quantize_w(w32, mode)
    xq, sx = _gemm().quantize(x, "block" if mode == "block" else "token")
    return xq, w, dict(w_scale=sw, scale=mode, x_scale=sx)


@pytest.mark.parametrize("case", [gpu_cases.GEMM_CASES[i] for i in (0, 2, 4, 7, 11)], **CASE_IDS)
def test_gemm_calls_again_with_new_tensors(case):
    """A Gemm plans and checks a kind of call once (its signature: shapes,
    strides, dtypes, devices, options), then takes a prepared path: calls
    with new tensors of the same kind, at other addresses, alternating with
    another problem, W as an nn.Parameter, into out=, bf16 x quantized by
    quantize_x first, each give the y a fresh Gemm gives for them."""
    M, N, K, mode, cfg = case
    g = _gemm()
    sets = [_inputs(M, N, K, mode, seed) for seed in (1, 2)]
    other = _inputs(1, 256, 512, "tensor", 3)  # gpu_cases.GEMM_CASES[0]: another kind of call between
    want = [_gemm()(x, w, config=cfg, **kw) for x, w, kw in sets]
    want_other = _gemm()(other[0], other[1], **other[2])
    for rep in range(3):
        for (x, w, kw), y0 in zip(sets, want):
            assert _same(g(x, w, config=cfg, **kw), y0), f"call {rep}"
            assert _same(g(other[0], other[1], **other[2]), want_other)
    x, w, kw = sets[1]
    wp = torch.nn.Parameter(w, requires_grad=False)
    assert _same(g(x, wp, config=cfg, **kw), want[1])
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    for _ in range(2):
        out.zero_()
        assert g(x, w, config=cfg, out=out, **kw) is out and _same(out, want[1])
    if mode != "bf16":  # bf16 x, quantized by quantize_x, then the GEMM: twice, new x
        gk = _gemm()
        for seed in (4, 5, 4):
            x16 = torch.randn(M, K, generator=torch.Generator(device="cuda").manual_seed(seed), device="cuda")
            x16 = x16.to(torch.bfloat16)
            kw16 = {k: v for k, v in kw.items() if k != "x_scale"}
            assert _same(gk(x16, w, config=cfg, **kw16), _gemm()(x16, w, config=cfg, **kw16))


@pytest.mark.parametrize("case", gpu_cases.ROWS_CASES, **CASE_IDS)
def test_gemm_takes_more_than_256_rows(case):
    """x of more than 256 rows (a prefill's M): 257-512 in one launch over CTA pairs sharing W (each CTA its
    half of M, the second one's rows from M's last: 257 rows overlap the most), more in gemm.row_blocks'
    blocks, a launch each: every row of y matches float32 torch (the blocks' seams too) and the block's own
    call; so does y written into out= whose rows have a pitch of their own (f32 too), and bf16 x quantized by
    quantize_x; the calls run on torch's current stream after the work queued there, and are captured by
    torch.cuda.graph (replays with new x give new y)."""
    M, N, K, mode = case
    g = _gemm()
    x, xin, w, kw, want = _quantized_case(g, M, N, K, mode)
    blocks = gemm.row_blocks(M)
    assert len(blocks) == -(-M // gemm.ROWS_A_LAUNCH) and blocks[-1][1] == M
    y = g(xin, w, **kw)
    torch.cuda.synchronize()
    assert y.shape == (M, N) and y.dtype == torch.bfloat16
    err = (y.float() - want).abs().amax(1) / want.abs().max()
    assert (err < 1.5e-2).all(), f"rows {torch.nonzero(err >= 1.5e-2).flatten().tolist()[:8]}: {err.max():.3e}"
    for a, b in blocks if len(blocks) > 1 else ():
        part = kw if mode == "bf16" else dict(kw, x_scale=kw["x_scale"][a:b])
        assert _same(y[a:b], g(xin[a:b], w, **part)), f"rows {a}-{b}"
    wide = torch.full((M, N + 64), float("nan"), device="cuda", dtype=torch.bfloat16)
    assert g(xin, w, out=wide[:, :N], **kw).data_ptr() == wide.data_ptr()
    assert _same(wide[:, :N], y) and wide[:, N:].isnan().all()
    if mode == "tensor":
        y32 = torch.empty(M, N, device="cuda")
        assert g(xin, w, out=y32, **kw) is y32
        assert ((y32 - want).abs().max() / want.abs().max()).item() < 1.5e-2
    if mode != "bf16":
        assert _same(g(x, w, **{k: v for k, v in kw.items() if k != "x_scale"}), y)
    x2 = _case_inputs(M, N, K, seed=1)[0]  # another x, for the same W
    if mode == "bf16":
        xin2, sx, sx2, want2 = x2, None, None, x2.float() @ w.float().t()
    else:
        xin2, sx2 = g.quantize(x2, "block" if mode == "block" else "token")
        sx, wdq = kw["x_scale"], _quantize_w(_case_inputs(M, N, K)[1], mode)[2]
        want2 = gemm.dequantize_x(xin2, sx2) @ wdq.t()
    y2 = g(xin2, w, **kw if sx is None else dict(kw, x_scale=sx2))
    torch.cuda.synchronize()
    assert ((y2.float() - want2).abs().max() / want2.abs().max()).item() < 1.5e-2
    xs, ss = torch.zeros_like(xin), None if sx is None else sx.clone()
    call = kw if sx is None else dict(kw, x_scale=ss)

    def write(xn, sn):  # kernels writing x's bytes and its scales just before the call
        xs.copy_(xn)
        if ss is not None:
            ss.copy_(sn)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(20_000_000)  # queued work, then x written, after ~10 ms
        write(xin2, sx2)
        ys = g(xs, w, **call)
    s.synchronize()
    assert _same(ys, y2)
    xsrc, ssrc = torch.empty_like(xin), None if sx is None else torch.empty_like(ss)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        write(xsrc, ssrc)
        yg = g(xs, w, **call)
    for xn, sn, want_y in ((xin, sx, y), (xin2, sx2, y2), (xin, sx, y)):
        xsrc.copy_(xn)
        if ssrc is not None:
            ssrc.copy_(sn)
        graph.replay()
        torch.cuda.synchronize()
        assert _same(yg, want_y)


def test_gemm_writes_f32_y_into_out():
    """out= a float32 tensor: y in f32 (the kernel for out_dtype=torch.float32), into it, call after call."""
    x, w, kw = _inputs(1, 256, 512, "tensor", 3)
    g = _gemm()
    want = g(x, w, out_dtype=torch.float32, **kw)
    assert want.dtype == torch.float32
    out = torch.full((1, 256), float("nan"), device="cuda")
    for _ in range(2):
        assert g(x, w, out=out, **kw) is out  # split K (4 here): f32 sums in another order, a few ulp
        assert ((out - want).abs() <= want.abs().max() * 1e-5).all()
        out.fill_(float("nan"))
    y16 = g(x, w, **kw).float()
    assert ((want - y16).abs() <= want.abs() * 2.0 ** -8 + 1e-6).all()


def test_gemm_as_a_torch_op_under_torch_compile():
    """Gemm.torch_op: a custom op torch.compile takes into a full graph; its
    y is the call's, for new inputs too. (Under compute-sanitizer, NVTMA_SANITIZER set, the CUDA graph trees'
    slow-path pool check is off: racecheck made it refuse the trees' own pool, live copies of the inputs made by
    inductor's clone_preserve_strides, none of them the Gemm's allocations; H100, s52c.)"""
    import torch._inductor.config as inductor_config
    g = _gemm()
    op = g.torch_op("nvtma_test::gemm")
    f = torch.compile(lambda x, w, sw, sx: op(x, w, sw, sx, "tensor") * 2, fullgraph=True)
    for seed in (6, 7):
        x, w, kw = _inputs(1, 256, 512, "tensor", seed)
        assert _same(f(x, w, kw["w_scale"], kw["x_scale"]), g(x, w, **kw) * 2)
    # mode="reduce-overhead": torch's CUDA graph trees record the op (its launch on the capture stream)
    # and replay it; new inputs are copied into the graph's, its output is overwritten by the next replay
    fr = torch.compile(lambda x, w, sw, sx: op(x, w, sw, sx, "tensor") + 1, mode="reduce-overhead")
    with inductor_config.patch({"triton.slow_path_cudagraph_asserts": os.environ.get("NVTMA_SANITIZER", "0") == "0"}):
        for seed in (8, 9, 10, 11):
            x, w, kw = _inputs(1, 256, 512, "tensor", seed)
            assert _same(fr(x, w, kw["w_scale"], kw["x_scale"]).clone(), g(x, w, **kw) + 1), f"seed {seed}"


def test_gemm_of_an_empty_problem_is_zeros():
    """M, N or K zero: y is [M, N], zeros where K is 0 (torch.matmul's), with no launch."""
    g = _gemm()
    bf = dict(device="cuda", dtype=torch.bfloat16)
    w, x = torch.randn(256, 512, **bf), torch.randn(4, 512, **bf)
    assert g(torch.empty(0, 512, **bf), w).shape == (0, 256)
    assert g(x, torch.empty(0, 512, **bf)).shape == (4, 0)
    y = g(torch.empty(4, 0, **bf), torch.empty(256, 0, **bf))
    assert y.shape == (4, 256) and y.dtype == torch.bfloat16 and not y.any()
    out = torch.ones(4, 256, device="cuda")
    assert g(torch.empty(4, 0, **bf), torch.empty(256, 0, **bf), out=out) is out and not out.any()
    f8 = dict(device="cuda", dtype=torch.float8_e4m3fn)
    y = g(torch.empty(3, 0, **f8), torch.empty(128, 0, **f8), w_scale=torch.ones(1, device="cuda"),
          scale="tensor", x_scale=torch.ones(3, device="cuda"), out_dtype=torch.float32)
    assert y.shape == (3, 128) and y.dtype == torch.float32 and not y.any()


def test_gemm_autotune_times_the_candidates_once(tmp_path, monkeypatch):
    """Gemm(autotune=True), a problem the table does not hold: the first
    call times every candidate (each launches), runs the fastest and stores
    it; a second Gemm (as another process) takes the stored winner without
    timing; under graph capture an untuned problem takes the cost model's
    config. Every y against float32 torch (configs differ in how their f32
    sums are split: up to two bf16 steps apart)."""
    monkeypatch.setenv("NVTMA_AUTOTUNE_DIR", str(tmp_path))
    M, N, K = gpu_cases.AUTOTUNE_CASE
    art = os.environ.get("NVTMA_GPU_ARTIFACTS")

    def err(y, x, w, kw):
        want = (x.float() * kw["x_scale"][:, None]) @ (w.float() * kw["w_scale"]).t()
        return ((y.float() - want).abs().max() / want.abs().max()).item()
    x, w, kw = _inputs(M, N, K, "tensor", 12)
    g = gemm.Gemm(artifacts=art, autotune=True)
    y = g(x, w, **kw)
    assert err(y, x, w, kw) < 1.5e-2
    (tuner,) = g._tuners.values()
    assert tuner.trials == len(gemm.candidates(M, N, K, scale="tensor"))  # every candidate launched and timed
    assert len(list(tmp_path.glob("*.json"))) == 1
    for seed in (13, 14):  # later calls: the winner, prepared
        x2, w2, kw2 = _inputs(M, N, K, "tensor", seed)
        assert err(g(x2, w2, **kw2), x2, w2, kw2) < 1.5e-2
    assert tuner.trials == len(gemm.candidates(M, N, K, scale="tensor"))
    g2 = gemm.Gemm(artifacts=art, autotune=True)
    assert _same(g2(x, w, **kw), y)  # the same config
    assert next(iter(g2._tuners.values())).trials == 0  # the stored winner
    for stored in (True, False):  # a Gemm's first call under capture: the stored winner, untimed; with none
        # stored, the cost model's config
        if not stored:
            monkeypatch.setenv("NVTMA_AUTOTUNE_DIR", str(tmp_path / "none"))
        g3 = gemm.Gemm(artifacts=art, autotune=True)
        xs = x.clone()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            yg = g3(xs, w, **kw)
        graph.replay()
        torch.cuda.synchronize()
        (t3,) = g3._tuners.values()
        assert t3.trials == 0 and _same(yg, y if stored else _gemm()(x, w, **kw))
        assert (t3.known_config(x, w, kw["w_scale"], kw["x_scale"]) == tuner.best_config(
            x, w, kw["w_scale"], kw["x_scale"])) if stored else t3.known_config(x, w, kw["w_scale"],
                                                                                kw["x_scale"]) is None


def test_gemm_autotune_under_torch_compiles_cuda_graph_trees(tmp_path, monkeypatch):
    """Gemm(autotune=True) as a torch op under torch.compile(mode="reduce-overhead"): the graph trees' warm-up
    call times the candidates on a thread of its own, so that the copies of W it streams from (twice the L2,
    here 100 MB) are not made in the graph's memory pool, where every allocation of the warm-up's thread goes;
    the later calls replay the winner's launch."""
    def pools():  # bytes in the pools of torch.cuda.graph_pool_handle(), ids (0, n), which graph trees use
        # (those of graphs gone released first); a CUDAGraph's own pool, (n, 0), is not one: under
        # compute-sanitizer torch keeps the autotune timing graphs' pools, empty, after the graphs go (s58)
        torch.cuda.empty_cache()
        return sum(s["total_size"] for s in torch.cuda.memory_snapshot()
                   if s["segment_pool_id"][0] == 0 and s["segment_pool_id"][1] != 0)
    monkeypatch.setenv("NVTMA_AUTOTUNE_DIR", str(tmp_path))
    # one config for inductor's kernel of `+ 1`: with several, its first launch (no inductor cache yet) times
    # them in the warm-up too, with an L2-sized buffer to flush the cache between runs, and that buffer lands
    # in the graph tree's pool (50 MiB on an H100, s59)
    import torch._inductor.config as inductor_config
    monkeypatch.setattr(inductor_config.triton, "autotune_pointwise", False)
    M, N, K = gpu_cases.AUTOTUNE_CASE
    before = pools()
    g = gemm.Gemm(artifacts=os.environ.get("NVTMA_GPU_ARTIFACTS"), autotune=True)
    op = g.torch_op("nvtma_test::gemm_tuned")
    f = torch.compile(lambda x, w, sw, sx: op(x, w, sw, sx, "tensor") + 1, mode="reduce-overhead")
    for seed in (16, 17, 18, 19):
        x, w, kw = _inputs(M, N, K, "tensor", seed)
        y = f(x, w, kw["w_scale"], kw["x_scale"]).clone()
        (tuner,) = g._tuners.values()
        best = gemm.Config(*tuner.best_config(x, w, kw["w_scale"], kw["x_scale"])["config"])
        assert _same(y, g(x, w, config=best, **kw) + 1), f"seed {seed}"
    assert tuner.trials == len(gemm.candidates(M, N, K, scale="tensor"))
    # the graph tree's pool: 22 MiB on an H100 (a 20 MiB segment for the static copy of W); W's 50 copies
    # made in it were 100 MiB more
    assert pools() - before < 64 << 20, (before, pools())


def test_gemm_autotune_all_times_the_table_problems_too(tmp_path, monkeypatch):
    """Gemm(autotune="all") times every candidate of a problem the table
    holds (H200s differ from the one the table was measured on);
    autotune=True runs the table's config there, untimed. y against float32
    torch either way."""
    monkeypatch.setenv("NVTMA_AUTOTUNE_DIR", str(tmp_path))
    M, N, K = gpu_cases.AUTOTUNE_TABLE_CASE
    assert gemm.MEASURED.get((N, K, M, "tensor"))
    art = os.environ.get("NVTMA_GPU_ARTIFACTS")
    x, w, kw = _inputs(M, N, K, "tensor", 15)
    want = (x.float() * kw["x_scale"][:, None]) @ (w.float() * kw["w_scale"]).t()
    for how, timed in (("all", len(gemm.candidates(M, N, K, scale="tensor"))), (True, None)):
        g = gemm.Gemm(artifacts=art, autotune=how)
        y = g(x, w, **kw)
        assert ((y.float() - want).abs().max() / want.abs().max()).item() < 1.5e-2
        if timed is None:
            assert not g._tuners
        else:
            (tuner,) = g._tuners.values()
            assert tuner.trials == timed and len(list(tmp_path.glob("*.json"))) == 1


def _split_k_calls():
    """A Gemm, a config of 4 K splits (the workspace in use), W, two (x, scales) and their y."""
    M, N, K, mode, cfg = gpu_cases.GEMM_CASES[3]
    g = _gemm()
    (x1, w, kw1), (x2, _, kw2) = _inputs(M, N, K, mode, 1), _inputs(M, N, K, mode, 2)
    kw2 = dict(kw1, x_scale=kw2["x_scale"])
    want = [g(x1, w, config=cfg, **kw1), g(x2, w, config=cfg, **kw2)]
    torch.cuda.synchronize()
    return g, cfg, w, (x1, kw1), (x2, kw2), want


def _two_streams():
    """Two side streams after what the current one has queued."""
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
    return streams


def test_one_gemm_on_two_streams_at_once_keeps_their_split_k_apart():
    """A split-K call's partials and tile counts live in a workspace the Gemm keeps; calls on two streams
    shared one, and their kernels' partials of a tile mixed (a helper's audit, from the code). Each stream
    now has its own."""
    g, cfg, w, (x1, kw1), (x2, kw2), want = _split_k_calls()
    streams = _two_streams()
    ys = [[], []]
    for _ in range(40):
        for j, (x, kw) in enumerate(((x1, kw1), (x2, kw2))):
            with torch.cuda.stream(streams[j]):
                ys[j].append(g(x, w, config=cfg, **kw))
    torch.cuda.synchronize()
    for j in range(2):
        assert all(_same(y, want[j]) for y in ys[j]), f"stream {j}"


def test_a_graph_replayed_beside_eager_calls_of_its_gemm_keeps_their_split_k_apart():
    """A captured split-K call took the workspace of the Gemm's eager calls: a replay on one stream while
    eager calls ran on another mixed their partials. A capture's workspace is its own now, made outside the
    capture's memory pool (the capture mode relaxed for it); the graph replays right beside eager calls."""
    g, cfg, w, (x1, kw1), (x2, kw2), want = _split_k_calls()
    eager = set(id(t) for ws in g._ws.values() for t in ws)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        yg = g(x2, w, config=cfg, **kw2)
    captured = [ws for ws in g._ws.values() if not eager & {id(t) for t in ws}]
    assert len(captured) == 1  # a pair of the capture's own
    assert len({t.data_ptr() for ws in g._ws.values() for t in ws}) == 2 * len(g._ws)  # none shares bytes
    streams = _two_streams()
    ys, yr = [], []
    for _ in range(40):
        with torch.cuda.stream(streams[0]):
            ys.append(g(x1, w, config=cfg, **kw1))
        with torch.cuda.stream(streams[1]):
            graph.replay()
            yr.append(yg.clone())
    torch.cuda.synchronize()
    assert all(_same(y, want[0]) for y in ys), "eager calls"
    assert all(_same(y, want[1]) for y in yr), "replays"


def test_gemm_refuses_inputs_it_would_mishandle():
    """Non-tensor scales were an AttributeError; inputs that require grad gave a y without grad_fn."""
    M, N, K, mode, cfg = gpu_cases.GEMM_CASES[0]
    x, w, kw = _inputs(M, N, K, mode, 1)
    from nvtma.runtime import LaunchError
    g = _gemm()
    with pytest.raises(LaunchError, match="w_scale is a float: a torch tensor") as e:
        g(x, w, **dict(kw, w_scale=1.0))
    assert e.value.rule == "scale"
    wg = w.float().requires_grad_().to(w.dtype)
    assert wg.requires_grad
    with torch.no_grad():  # planned here first: the call outside no_grad is not that plan reused unchecked
        assert _same(g(x, wg, **kw), g(x, w, **kw))
    with pytest.raises(LaunchError, match="requires grad: Gemm is for inference") as e:
        g(x, wg, **kw)
    assert e.value.rule == "autograd"


@pytest.mark.parametrize("case", [gpu_cases.GEMM_CASES[2] + ({},), gpu_cases.KC_CASES[0][:5] + (
    {"kc": gpu_cases.KC_CASES[0][5]},), gpu_cases.XA_CASES[1][:5] + ({},), gpu_cases.GEMM_CASES[-1] + ({},)],
    ids=["one-k-step", "kc", "x-as-a", "dsmem"])
def test_gemm_follows_the_current_stream_and_graphs(case):
    """Gemm calls (prepared or not) run on torch's current stream, after the
    work queued there, and are captured by torch.cuda.graph: replays with new
    x give new y (stages of several K steps too: their operand views are
    made in the call, where the graph captures the launch). x and its scales
    are written by kernels just before the call, on the stream and in the
    graph, so its launch has a programmatic edge to a kernel that writes
    what it reads (a copy is a memcpy, not a kernel)."""
    M, N, K, mode, cfg, opts = case
    how = dict(config=cfg, **opts)
    g = _gemm()
    (x1, w, kw), (x2, _, kw2) = _inputs(M, N, K, mode, 1), _inputs(M, N, K, mode, 2)
    kw2 = dict(kw, x_scale=kw2["x_scale"])
    want1, want2 = g(x1, w, **how, **kw), g(x2, w, **how, **kw2)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    xs, ss = torch.zeros_like(x1), torch.zeros_like(kw["x_scale"])

    def write(x, sx):  # elementwise kernels writing x's bytes and its scales
        torch.bitwise_or(x.view(torch.uint8), 0, out=xs.view(torch.uint8))
        torch.mul(sx, 1, out=ss)
    for rep in range(2):
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            torch.cuda._sleep(20_000_000)  # queued work, then x written, after ~10 ms
            write(*((x1, kw["x_scale"]) if rep == 0 else (x2, kw2["x_scale"])))
            y = g(xs, w, **how, **dict(kw, x_scale=ss))
        s.synchronize()
        assert _same(y, want1 if rep == 0 else want2), f"call {rep} on a side stream"
    xsrc, ssrc = torch.empty_like(xs), torch.empty_like(ss)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        write(xsrc, ssrc)
        yg = g(xs, w, **how, **dict(kw, x_scale=ss))
    for xn, sn, want in ((x2, kw2["x_scale"], want2), (x1, kw["x_scale"], want1)):
        xsrc.copy_(xn)
        ssrc.copy_(sn)
        graph.replay()
        torch.cuda.synchronize()
        assert _same(yg, want)


def test_gemm_typed_errors():
    from nvtma.runtime import LaunchError
    g = _gemm()
    w = torch.zeros(256, 512, device="cuda", dtype=torch.float8_e4m3fn)
    x = torch.zeros(4, 512, device="cuda", dtype=torch.bfloat16)
    one = torch.ones(1, device="cuda")
    # out: its shape, dtype and device (a wrong shape was taken for M and N), and out_dtype
    xq = torch.zeros(1, 512, device="cuda", dtype=torch.float8_e4m3fn)
    call = dict(w_scale=one, scale="tensor", x_scale=one)
    # quantize: x its kernel would read misaligned or past its rows is refused, no launch (K = 1100 faulted the
    # context), and an empty x quantizes to empty, no launch
    wide = torch.zeros(4, 1040, device="cuda", dtype=torch.bfloat16)
    for bad, rule in ((torch.zeros(4, 1100, device="cuda", dtype=torch.bfloat16), "shape"),
                      (wide[:, 4:516], "alignment"), (wide[:, :1024:2], "stride")):
        with pytest.raises(LaunchError) as e:
            g.quantize(bad)
        assert e.value.rule == rule
    assert [tuple(t.shape) for t in g.quantize(x[:0], "block")] == [(0, 512), (0, 4)]
    assert [tuple(t.shape) for t in g.quantize(x[:, :0], "block")] == [(4, 0), (4, 0)]
    assert [tuple(t.shape) for t in g.quantize(x[:, :0])] == [(4, 0), (4,)]
    torch.cuda.synchronize()
    # out whose rows overlap (every row's y would go into the same bytes)
    with pytest.raises(LaunchError, match="rows overlap") as e:
        g(x, w.to(torch.bfloat16), out=torch.empty(1, 256, device="cuda", dtype=torch.bfloat16).expand(4, 256))
    assert e.value.rule == "stride"
    with pytest.raises(LaunchError, match=r"out is \[5, 256\]: y is \[1, 256\]"):
        g(xq, w, out=torch.empty(5, 256, device="cuda", dtype=torch.bfloat16), **call)
    with pytest.raises(LaunchError, match="out is torch.float16"):
        g(xq, w, out=torch.empty(1, 256, device="cuda", dtype=torch.float16), **call)
    with pytest.raises(LaunchError, match="out_dtype"):
        g(xq, w, out=torch.empty(1, 256, device="cuda", dtype=torch.bfloat16), out_dtype=torch.float32, **call)
    with pytest.raises(LaunchError, match="out_dtype"):
        g(xq, w, out_dtype=torch.float16, **call)
    with pytest.raises(LaunchError, match="device"):
        g(xq, w, out=torch.empty(1, 256, dtype=torch.bfloat16), **call)
    # a misaligned x of a kind of call made before (the prepared path checks the address)
    g(xq, w, **call)
    bad = torch.zeros(512 + 8, device="cuda", dtype=torch.float8_e4m3fn)[8:].view(1, 512)
    with pytest.raises(LaunchError, match="x: address not 16-byte aligned"):
        g(bad, w, **call)
    # out over an input's bytes
    xo = torch.zeros(1, 512, device="cuda", dtype=torch.float8_e4m3fn)
    with pytest.raises(LaunchError, match="out overlaps x"):
        g(xo, w, out=xo.view(torch.bfloat16), **call)
    with pytest.raises(LaunchError, match="scale"):
        g(x, w)
    with pytest.raises(LaunchError, match="w_scale"):
        g(x, w, scale="row", w_scale=torch.ones(3, device="cuda"))
    with pytest.raises(LaunchError, match="K differs"):
        g(torch.zeros(4, 256, device="cuda", dtype=torch.bfloat16), w, scale="tensor",
          w_scale=torch.ones(1, device="cuda"))
    with pytest.raises(LaunchError, match=r"x_scale f32 of shape \(300,\)"):  # x of 300 rows: checked whole
        g(torch.zeros(300, 512, device="cuda", dtype=torch.float8_e4m3fn), w, scale="tensor",
          w_scale=torch.ones(1, device="cuda"), x_scale=torch.ones(299, device="cuda"))
    with pytest.raises(LaunchError, match="device"):
        g(x.cpu(), w, scale="tensor", w_scale=torch.ones(1, device="cuda"))
    with pytest.raises(LaunchError, match="x_scale is for e4m3 x"):  # it would go unread
        g(x, w, scale="tensor", w_scale=torch.ones(1, device="cuda"), x_scale=torch.ones(4, device="cuda"))
    with pytest.raises(LaunchError, match="no scales"):
        g(x, torch.zeros(256, 512, device="cuda", dtype=torch.bfloat16), x_scale=torch.ones(4, device="cuda"))


@pytest.mark.parametrize("case", gpu_cases.KC_CASES, ids=lambda c: f"M{c[0]}-N{c[1]}-K{c[2]}-{c[3]}-kc{c[5]}")
def test_gemm_stages_of_several_k_steps(case):
    """Stages of kc K steps (gemm_spec's kc: each operand's stage one TMA box
    of its [K / bk, rows, bk] view) match float32 torch call after call, and
    the y of one K step a stage to f32 rounding (the K steps' wgmmas go into
    the accumulator chains in another order); so does x with a row stride
    and an offset of its own (the view keeps them), and bf16 x quantized
    first (Gemm's "auto" quantization takes quantize_x for these kernels)."""
    M, N, K, mode, cfg, kc = case
    g = _gemm()
    wd, scale = ("bf16", None) if mode == "bf16" else (gemm.F8, mode)
    assert g.plan(M, N, K, wd, scale, config=cfg, kc=kc)[0].info["kc"] == kc
    x, xin, w, kw, want = _quantized_case(g, M, N, K, mode)
    one = g(xin, w, config=cfg, **kw)
    for rep in range(2):
        y = g(xin, w, config=cfg, kc=kc, **kw)
        torch.cuda.synchronize()
        err = ((y.float() - want).abs().max() / want.abs().max()).item()
        assert err < 1.5e-2, f"call {rep}: max error {err:.3e} of max |y|"
        assert _near(y, one)
    wide = torch.zeros(M + 1, K + 256, device="cuda", dtype=xin.dtype)
    xs = wide[1:, 128:128 + K]
    xs.copy_(xin)
    assert _near(g(xs, w, config=cfg, kc=kc, **kw), y)
    if mode != "bf16":  # bf16 x, quantized by quantize_x, then through the views
        auto = gemm.Gemm(artifacts=os.environ.get("NVTMA_GPU_ARTIFACTS"))
        assert _near(auto(x, w, config=cfg, kc=kc, **{k: v for k, v in kw.items() if k != "x_scale"}), one)


def _near(a, b):
    """Equal to a bf16 step of max |b| (f32 sums in another order round a bf16 element either way)."""
    a, b = a.float(), b.float()
    return (a - b).abs().max().item() <= b.abs().max().item() * 2.0 ** -7
