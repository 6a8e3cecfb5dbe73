"""In-kernel profiling on the GPU: the traced warp-specialized pipeline and
GEMM give monotonic per-warp timelines with the expected events per role and
a trace viewers load; one range per tile costs at most 3% of the pipeline's
time (the median of interleaved per-round ratios of CUDA-graph replays;
run with -s to see the numbers)."""

import pytest

import profile_cases
from conftest import build

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from nvtma import profile  # noqa: E402


def _graph(fn, calls):
    """`calls` back-to-back launches of fn() captured in one CUDA graph: a
    replay times the kernels, not the host's launch path (which an extra
    argument lengthens)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up off the capture (loads the module)
        fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    return g


def _overhead(plain, traced, rounds=21, calls=50):
    """(plain ms, traced ms, traced / plain) per launch: each round replays
    both graphs back to back, in alternating order, and the ratio is the
    median over rounds of that round's ratio, so clock and thermal drift hit
    both alike and one noisy replay cannot decide it; the times are medians."""
    graphs = (_graph(plain, calls), _graph(traced, calls))
    for g in graphs:  # warm: clocks up, caches and TLBs filled
        g.replay()
    torch.cuda.synchronize()
    t = ([], [])
    for r in range(rounds):
        for i in ((0, 1) if r % 2 == 0 else (1, 0)):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            graphs[i].replay()
            e.record()
            e.synchronize()
            t[i].append(s.elapsed_time(e) / calls)
    return _median(t[0]), _median(t[1]), _median([b / a for a, b in zip(*t)])


def _median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def _check_timelines(prof, sms):
    """Per warp, records are written at each range's end: ends never go back,
    no range ends before it starts; SM ids are real."""
    for (cta, warp), evs in prof.by_warp().items():
        ends = [e.end_ns for e in evs]
        assert ends == sorted(ends), f"CTA {cta} warp {warp}: end times go back"
        for e in evs:
            assert e.start_ns <= e.end_ns and 0 <= e.cycles < 1 << 31, e
            assert 0 <= e.sm < sms and e.warp == warp, e
    # the trace's clock64-derived times are for display; ordering is checked on %globaltimer above


def _counts(prof):
    out = {}
    for e in prof.events:
        out[(e.role, e.name)] = out.get((e.role, e.name), 0) + 1
    return out


def _ws():
    ws = profile_cases.ws_pipeline()
    specs = profile_cases.ws_specs()
    x = torch.randn(ws.R, ws.C, device="cuda", dtype=torch.float16)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    return ws, specs, x, sms, (sms * 3,)


def test_ws_pipeline_trace(tmp_path):
    ws, specs, x, sms, grid = _ws()
    mod = build(specs["phases"])
    names = profile.event_table(mod, "ws_copy")
    buf = profile.alloc_buffer(grid, ws.ws_copy.block, names.events_per_warp)
    y = torch.empty_like(x)
    mod.ws_copy(x, y, buf, grid=grid)
    torch.cuda.synchronize()
    assert torch.equal(x, y)
    prof = profile.collect(buf, names)
    tiles = (ws.R // 64) * (ws.C // 128)
    assert prof.dropped == 0 and prof.ctas == grid[0] and prof.ctas_without_slot == 0
    want = {(r, n): tiles for r, ns in (("producer", ("tile", "acquire", "issue")),
                                       ("consumer", ("tile", "wait", "store"))) for n in ns}
    assert _counts(prof) == want
    _check_timelines(prof, sms)
    # every tile slice holds its two phases (recorded just before it, starting no earlier)
    for evs in prof.by_warp().values():
        for i, e in enumerate(evs):
            if e.name == "tile":
                a, b = evs[i - 2], evs[i - 1]
                assert a.name in ("acquire", "wait") and b.name in ("issue", "store")
                assert e.start_ns <= a.start_ns <= a.end_ns <= b.start_ns <= b.end_ns <= e.end_ns
    path = prof.write_trace(tmp_path / "ws.json")
    import json
    trace = json.loads(path.read_text())
    profile.check_trace(trace)
    assert sum(1 for ev in trace["traceEvents"] if ev["ph"] == "X") == 6 * tiles
    print(f"\nws_pipeline ({grid[0]} CTAs):\n{prof.table()}")


def test_ws_pipeline_overhead_one_range_per_tile():
    ws, specs, x, sms, grid = _ws()
    plain, traced = build(specs["plain"]), build(specs["tile"])
    names = profile.event_table(traced, "ws_copy")
    assert names.events == ("tile",)
    buf = profile.alloc_buffer(grid, ws.ws_copy.block, names.events_per_warp)
    y = torch.empty_like(x)
    a, b, ratio = _overhead(lambda: plain.ws_copy(x, y, grid=grid), lambda: traced.ws_copy(x, y, buf, grid=grid))
    prof = profile.collect(buf, names)   # the last replay's records
    assert _counts(prof) == {("producer", "tile"): (ws.R // 64) * (ws.C // 128),
                             ("consumer", "tile"): (ws.R // 64) * (ws.C // 128)}
    print(f"\nws_pipeline overhead, one range per tile per warp: {a * 1e3:.2f} us plain, {b * 1e3:.2f} us traced, "
          f"median ratio {ratio:.4f} ({100 * (ratio - 1):+.2f}%) over 21 interleaved rounds of 50 graph-replayed "
          "launches")
    assert ratio <= 1.03, f"profiling costs {100 * (ratio - 1):.2f}% of the kernel's time ({a:.4f} -> {b:.4f} ms)"


def _gemm_case():
    """The profiling GEMM's inputs and launch: (M, N, K, splits, wgs, wq, xq, sw, sx, want, parts, grid, sms)."""
    g = profile_cases.GEMM
    M, N, K, splits, wgs = g["M"], g["N"], g["K"], g["splits"], g["wgs"]
    gen = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(M, K, generator=gen, device="cuda")
    w = torch.randn(N, K, generator=gen, device="cuda") / 8
    sw = w.abs().amax().reshape(1) / 448
    wq = (w / sw).to(torch.float8_e4m3fn)
    sx = x.abs().amax(1).clamp(min=1e-6) / 448
    xq = (x / sx[:, None]).to(torch.float8_e4m3fn)
    want = (xq.float() * sx[:, None]) @ (wq.float() * sw).t()
    tiles = N // g["BN"]
    parts = tiles * splits                        # the kernel's shares of K steps: split K
    grid = (parts,)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert grid[0] <= sms
    return M, N, K, splits, wgs, wq, xq, sw, sx, want, parts, grid, sms


def _gemm_setup(kind):
    """The profiled GEMM of `kind` ("traced" or "clocks") and the plain one, built, with a problem's inputs, y,
    the split workspace and `kind`'s buffer: (profiled module, plain module, its event names (traced) or
    None, the case (_gemm_case's tuple), y, ws, counters, buffer)."""
    from nvtma.kernels import gemm
    specs = profile_cases.gemm_specs()
    prof_mod, plain = build(specs[kind]), build(specs["plain"])
    case = _gemm_case()
    M, N, K, splits, wgs, wq, xq, sw, sx, want, parts, grid, sms = case
    y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    ws, counters = gemm.workspace(torch, "cuda", specs[kind], N)
    if kind == "traced":
        names = profile.event_table(prof_mod, "gemm")
        buf = profile.alloc_buffer(grid, specs[kind].block, names.events_per_warp)
    else:
        names = None
        buf = torch.zeros(grid[0] * (wgs + 1) * gemm.CLOCK_WORDS, dtype=torch.int64, device="cuda")
    return prof_mod, plain, names, case, y, ws, counters, buf


def _gemm_overhead(kind):
    """(plain ms, profiled ms, median ratio) of the GEMM with `kind`'s profiling: its own test, apart from the
    checks of what the profiling records (those run under compute-sanitizer; this replays 2,100 launches)."""
    prof_mod, plain, _, case, y, ws, counters, buf = _gemm_setup(kind)
    M, N, K, splits, wgs, wq, xq, sw, sx, want, parts, grid, sms = case
    return _overhead(lambda: plain.gemm(wq, xq, y, ws, counters, parts, sw, sx, grid=grid),
                     lambda: prof_mod.gemm(wq, xq, y, ws, counters, parts, sw, sx, buf, grid=grid))


def test_gemm_trace(tmp_path):
    traced, _, names, case, y, ws, counters, buf = _gemm_setup("traced")
    M, N, K, splits, wgs, wq, xq, sw, sx, want, parts, grid, sms = case
    traced.gemm(wq, xq, y, ws, counters, parts, sw, sx, buf, grid=grid)
    torch.cuda.synchronize()
    err = ((y.float() - want).abs().max() / want.abs().max()).item()
    assert err < 1.5e-2
    prof = profile.collect(buf, names)
    kb = K // 128 // splits                       # k-blocks per share (one segment each)
    assert prof.dropped == 0
    assert _counts(prof) == {("producer", "acquire"): parts * kb, ("producer", "load"): parts * kb,
                             ("consumer", "wait"): parts * kb * wgs, ("consumer", "mma"): parts * kb * wgs,
                             ("consumer", "epilogue"): parts * wgs}
    # warpgroup scope: warp 0 (producer) and the first warp of each consumer warpgroup
    assert {w for (_, w) in prof.by_warp()} == {0} | {4 * (i + 1) for i in range(wgs)}
    _check_timelines(prof, sms)
    profile.check_trace(prof.chrome_trace())
    prof.write_trace(tmp_path / "gemm.json")
    print(f"\ngemm M={M} N={N} K={K} ({grid[0]} CTAs):\n{prof.table()}")


def test_gemm_trace_overhead():
    a, b, ratio = _gemm_overhead("traced")
    print(f"\ngemm overhead, ranges per k-block: {a * 1e3:.2f} us plain, {b * 1e3:.2f} us traced, median ratio "
          f"{ratio:.4f} ({100 * (ratio - 1):+.2f}%)")


def test_gemm_clock_sums_add_up():
    from nvtma.kernels import gemm
    clk, _, _, case, y, ws, counters, buf = _gemm_setup("clocks")
    M, N, K, splits, wgs, wq, xq, sw, sx, want, parts, grid, sms = case
    W = gemm.CLOCK_WORDS
    calls = 3  # sums add up over launches
    for _ in range(calls):
        clk.gemm(wq, xq, y, ws, counters, parts, sw, sx, buf, grid=grid)
    torch.cuda.synchronize()
    assert ((y.float() - want).abs().max() / want.abs().max()).item() < 1.5e-2
    sums = buf.view(grid[0], wgs + 1, W).cpu()
    names = {0: gemm.CLOCKS["producer"], **{g + 1: gemm.CLOCKS["consumer"] for g in range(wgs)}}
    for role, events in names.items():
        v = sums[:, role]
        span = v[:, W - 1]
        assert (span > 0).all(), role
        parts_ = v[:, :len(events)]
        assert (parts_ >= 0).all() and (v[:, len(events):W - 1] == 0).all()
        # the events are disjoint stretches of the warpgroup's span
        assert (parts_.sum(1) <= span).all(), (role, parts_.sum(1), span)
    cons, prod = sums[:, 1:].sum((0, 1)), sums[:, 0].sum(0)
    # every consumer waited on data, ran wgmmas, released slots and stored y; the producer (no PDL here) never
    # waited for the grid, and was blocked on the ring for part of its span
    assert (cons[:len(gemm.CLOCKS["consumer"])] > 0).all() and prod[2] == 0 and 0 < prod[0] < prod[W - 1]
    share = {n: round(float(cons[i] / cons[W - 1]), 3) for i, n in enumerate(gemm.CLOCKS["consumer"])}
    print(f"\ngemm clock sums, consumers' shares of their span: {share}")


def test_gemm_clock_sums_overhead():
    a, b, ratio = _gemm_overhead("clocks")
    print(f"\ngemm overhead, clock sums: {a * 1e3:.2f} us plain, {b * 1e3:.2f} us, median ratio {ratio:.4f} "
          f"({100 * (ratio - 1):+.2f}%)")
    assert ratio <= 1.4, f"the clock sums cost {100 * (ratio - 1):.2f}% of the GEMM's time ({a:.4f} -> {b:.4f} ms)"


def _split_run(spec, name):
    """One CTA of 128 threads of a split-warp case: x, and each warp's event names, sorted."""
    mod = build(spec)
    names = profile.event_table(mod, name)
    x = torch.zeros(128, device="cuda")
    buf = profile.alloc_buffer((1,), (128,), names.events_per_warp)
    getattr(mod, name)(x, buf, grid=(1,))
    torch.cuda.synchronize()
    prof = profile.collect(buf, names)
    assert prof.dropped == 0
    per_warp = {}
    for e in prof.events:
        per_warp.setdefault(e.warp, []).append(e.name)
    return x, {w: sorted(got) for w, got in per_warp.items()}


def test_events_where_a_branch_splits_every_warp():
    """Each half of every warp records its own events (its leader elected among the lanes running it): the
    launch returns (elect.sync over all 32 lanes in a half warp had waited forever), and x is right."""
    x, per_warp = _split_run(profile_cases.split_spec(), "split_warps")
    assert torch.equal(x, torch.tensor([3.0] * 16 + [6.0] * 16, device="cuda").repeat(4))
    # both parts of each warp, each pass of the loop, each record in a slot of its own (the leaders take
    # their slots atomically)
    assert per_warp == {w: ["high"] * 3 + ["low"] * 3 for w in range(4)}


def test_events_ending_both_arms_of_a_split_are_each_recorded():
    """"b" ends lanes 0-15's arm, "c" lanes 16-31's, compiled alike: each warp records a, b and c (with the
    elections merged past the branch's end, one of b and c was lost)."""
    _, per_warp = _split_run(profile_cases.split_tails_spec(), "split_tails")
    assert per_warp == {w: ["a", "b", "c"] for w in range(4)}
