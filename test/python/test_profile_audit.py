"""An audit of in-kernel profiling for silently wrong results, crashes and
misuse not refused clearly: the host side on synthetic buffers written as
the kernel writes them, the kernel side by its IR (no GPU)."""

import math

import pytest

from nvtma import profile_report as pr
from nvtma.profile_report import ProfileError

from test_profile_report import buffer, rec, table  # noqa: E402 (the synthetic buffers of the report tests)

# --------------------------------------------------------------------------- host side: times


def _one_warp(recs, E=8):
    return pr.collect(buffer({(0, 0): recs}, E=E, ctas=1), table(E=E))


def test_clock_times_survive_32_bit_clock_wraps():
    """The records keep 32 bits of %clock64 (2.1 s at 2 GHz). times() took the
    clock distance from the warp's first start as a signed 32-bit value, so an
    event 1.5 s into a kernel was placed 0.65 s *before* its warp's first
    event, and a 3 s range lasted 0.85 s (its cycles wrapped). The timer read
    with the clock now says how many times it wrapped."""
    ghz, c0 = 2.0, 1000
    recs = [rec(0, 1, 10_000, 11_000, clock0=c0, cycles=2000),
            rec(0, 1, 1_500_010_000, 1_500_011_000, clock0=c0 + 3_000_000_000, cycles=2000),
            rec(0, 1, 1_600_000_000, 4_600_000_000, clock0=c0 + 3_199_980_000, cycles=6_000_000_000)]
    p = _one_warp(recs)
    (a, _), (b, _), (c, d) = (p.times(clock_ghz=ghz)[id(e)] for e in p.events)
    assert a == 0.0 and b == pytest.approx(1.5e9) and c == pytest.approx(1.59999e9)
    assert d - c == pytest.approx(3e9)
    rows = p.summary(clock_ghz=ghz)
    assert rows[0]["max_ns"] == pytest.approx(3e9) and rows[0]["min_ns"] == pytest.approx(1000)
    t = p.chrome_trace(clock_ghz=ghz)
    pr.check_trace(t)
    assert max(x["args"]["cycles"] for x in t["traceEvents"] if x["ph"] == "X") == 6_000_000_000
    # a wrap between close events (the clock's low bits roll over) still reads as the short step it is
    near = [rec(0, 1, 1000, 1010, clock0=0xFFFFFF00, cycles=10), rec(0, 1, 2000, 2010, clock0=0x100, cycles=10)]
    p = _one_warp(near)
    (a, _), (b, _) = (p.times(clock_ghz=1.0)[id(e)] for e in p.events)
    assert b - a == 0x200


def test_clock_rate_measured_past_2_ghz():
    """clock_ghz() read the clock distance between a warp's first and last
    starts as a signed 32-bit value: at 3 GHz, starts 0.9 s apart (2.7e9
    cycles) came out negative and were dropped, so no rate was measured."""
    recs = [rec(0, 1, 0, 10, clock0=5, cycles=30), rec(0, 1, 900_000_000, 900_000_010, clock0=5 + 2_700_000_000,
                                                          cycles=30)]
    assert _one_warp(recs).clock_ghz() == pytest.approx(3.0)


@pytest.mark.parametrize("bad", [0, 0.0, -2.0, math.nan, math.inf, True, "2"])
def test_bad_clock_rates_are_refused(bad):
    """clock_ghz=-2 gave negative durations and percentiles, 0 silently fell
    back to the raw timer, NaN gave NaN summaries: now a ProfileError naming
    the value."""
    p = _one_warp([rec(0, 1, 0, 100)])
    for call in (p.times, p.summary, p.table, p.chrome_trace):
        with pytest.raises(ProfileError) as e:
            call(clock_ghz=bad)
        assert e.value.rule == "trace" and f"clock_ghz {bad!r}" in str(e.value)


def test_zero_events_give_an_empty_valid_report():
    p = pr.collect(buffer({}), table())
    assert p.events == [] and p.summary() == [] and p.clock_ghz() is None
    assert "0 events from 0 warps of 2 CTAs" in p.table()
    t = p.chrome_trace()
    pr.check_trace(t)
    assert t["otherData"]["events"] == 0


# --------------------------------------------------------------------------- host side: which buffer

def _stamped(tab, slots, **kw):
    w = buffer(slots, E=tab.events_per_warp, warps=tab.warps, **kw)
    w[7] = tab.fingerprint
    return w


def test_a_buffer_from_another_build_is_refused():
    """Only events per warp and warps per CTA were compared: a buffer decoded
    with another build's table of the same sizes (the GEMM built with and
    without PDL: prefetch, grid_wait, acquire... against acquire, load, ...)
    came out with every event misnamed. The kernel now writes its table's
    fingerprint into the header's last word."""
    pdl = table(events=("prefetch", "grid_wait", "acquire", "load", "wait"), E=4)
    plain = table(events=("acquire", "load", "wait", "mma", "epilogue"), E=4)
    w = _stamped(plain, {(0, 0): [rec(0, 1, 10, 20), rec(1, 1, 20, 30)]})
    assert [e.name for e in pr.collect(w, plain).events] == ["acquire", "load"]
    with pytest.raises(ProfileError) as e:
        pr.collect(w, pdl)
    assert e.value.rule == "names" and "another build" in str(e.value) and f"{plain.fingerprint:#x}" in str(e.value)
    # the fingerprint covers the kernel name, roles and scope too, and never reads as "none" (0)
    for other in (pr.EventTable("k2", plain.events, plain.roles, 4, 2), table(events=plain.events, roles=("",), E=4),
                  pr.EventTable("k", plain.events, plain.roles, 4, 2, "warpgroup")):
        assert other.fingerprint != plain.fingerprint and 0 < other.fingerprint < 1 << 63
    # a buffer of a build from before the fingerprint (0) decodes as before
    w[7] = 0
    assert len(pr.collect(w, pdl).events) == 2
    assert pr.EventTable.from_json(plain.to_json()).fingerprint == plain.fingerprint


def test_buffer_dtypes():
    """A float64 copy of the buffer (8-byte elements) was read as if its bits
    were the words and refused as 'no profile header', hiding the cause; a
    big-endian int64 array was refused the same way though its words are right."""
    np = pytest.importorskip("numpy")
    t = table()
    words = buffer({(0, 0): [rec(0, 1, 10, 20)]})
    arr = np.array(words, dtype=np.int64)
    for bad in (arr.astype(np.float64), arr.astype(np.complex64)):
        with pytest.raises(ProfileError) as e:
            pr.collect(bad, t)
        assert e.value.rule == "buffer" and str(bad.dtype) in str(e.value)
    assert pr.collect(arr.astype(">i8"), t).events == pr.collect(arr, t).events
    assert pr.collect(arr.view(np.uint64), t).events == pr.collect(arr, t).events
    torch = pytest.importorskip("torch")
    with pytest.raises(ProfileError) as e:
        pr.collect(torch.tensor(words, dtype=torch.int64).double(), t)
    assert "torch.float64" in str(e.value)


def test_two_name_tables_for_one_kernel_in_one_ir_text_are_refused():
    """event_tables() kept the last of two different tables for one kernel
    name (two builds' IR together): the other build's buffers decoded with it."""
    def attr(t):
        return 'nvtma_profile = "' + t.to_json().replace('"', "\\22") + '"'
    a, b = table(events=("x", "y")), table(events=("y", "x"))
    assert pr.event_table(attr(a) + "\n" + attr(a)) == a
    with pytest.raises(ProfileError) as e:
        pr.event_tables(attr(a) + "\n" + attr(b))
    assert e.value.rule == "names" and "'k'" in str(e.value)


# --------------------------------------------------------------------------- kernel side

mlir = pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import line_of  # noqa: E402

import nvtma  # noqa: E402
from nvtma import dsl, lang, profile  # noqa: E402

BUF = dsl.Tensor("i64", (None,))


@dsl.kernel(block=(64,))
def stamped(x: dsl.Tensor("f32", (None,)), b: BUF):
    p = profile.Profiler(b, events_per_warp=4)
    with p.range("a"):
        x[0] = x[0] + 1.0
    p.mark("late")   # a name added after the header was built


def test_the_header_carries_the_final_tables_fingerprint():
    """(See test_a_buffer_from_another_build_is_refused.) The header is built
    before the kernel's names are known: its last word is set as names are
    added, so it is the final table's."""
    built = stamped.build()
    fp = profile.event_table(built).fingerprint
    assert profile.event_table(built).events == ("a", "late")
    assert built.ir.count(f"arith.constant {fp} : i64") == 1
    assert str(fp) in nvtma.compile(built.ir, cache=False).ptx


@dsl.kernel(block=(64,))
def misuse(x: dsl.Tensor("f32", (None,)), b: BUF, *, case):
    p = profile.Profiler(b, events_per_warp=4)
    n = x.shape[0]
    if case == "pop-in-loop":
        p.push("a")
        for i in dsl.range(n):
            p.pop("a")  # mark: pop-in-loop
    elif case == "end-in-loop":
        s = p.start("a")
        for i in dsl.range(n):
            p.end(s)  # mark: end-in-loop
    elif case == "end-in-while":
        s = p.start("a")
        for (i,) in dsl.while_(lambda i: i < n, carry=(dsl.Int32(0),)):
            p.end(s)  # mark: end-in-while
            dsl.yield_((i + 1,))
    elif case == "pop-in-if":
        p.push("a")
        with dsl.if_(x[0] > 0.0):
            p.pop("a")  # mark: pop-in-if
    elif case == "push-never-popped":
        p.push("a")  # mark: push-never-popped
        p.mark("m")
    elif case == "push-in-if-never-popped":
        with dsl.if_(x[0] > 0.0):
            p.push("a")  # mark: push-in-if-never-popped
        with p.range("b"):
            x[0] = 1.0
    elif case == "start-never-ended":
        p.start("a")  # mark: start-never-ended
    elif case == "warpgroup-event-in-warp-1":
        with lang.WarpRole(1):
            p.mark("m", scope="warpgroup")  # mark: warpgroup-event-in-warp-1


@pytest.mark.parametrize("case,words", [
    # the end ran once per iteration: n records of one start (all but one wrong), before: built
    ("pop-in-loop", "inside the body of an scf.for"), ("end-in-loop", "once per iteration"),
    ("end-in-while", "(scf.while)"),
    # popped on one path only: the range stayed open on the other, later ranges' depth wrong
    ("pop-in-if", "inside the body of an scf.if"),
    # never ended: nothing recorded, silently
    ("push-never-popped", "range 'a' started here never ends"),
    ("push-in-if-never-popped", "range 'a' started here never ends"),
    ("start-never-ended", "span 'a' started here never ends"),
    # only warp % 4 == 0 records a warpgroup event: in warp 1 alone it was never recorded
    ("warpgroup-event-in-warp-1", "would never be recorded")])
def test_unbalanced_ranges_and_unrecordable_events_are_refused(case, words):
    """Each of these built, and the trace silently lacked events or held
    wrong ones; now a KernelBuildError with rule "profile" at the user's line."""
    with pytest.raises(dsl.KernelBuildError) as e:
        misuse.build(case=case)
    assert e.value.rule == "profile", str(e.value)
    assert words in str(e.value), str(e.value)
    assert e.value.where == f"{__file__}:{line_of(__file__, f'mark: {case}')}", str(e.value)


@dsl.kernel(block=(64,))
def allowed(x: dsl.Tensor("f32", (None,)), b: BUF):
    p = profile.Profiler(b, events_per_warp=4)
    s = p.start("s")
    with dsl.if_(x[0] > 0.0):        # a span may end in a branch (documented: no record where not taken)
        p.end(s)
    for i in dsl.range(x.shape[0]):  # ranges started and ended in a loop's body
        with p.range("body"):
            x[i] = 0.0
    with lang.WarpgroupRole(0):
        p.mark("wg", scope="warpgroup")


def test_balanced_uses_still_build():
    assert profile.event_table(allowed.build()).events == ("s", "body", "wg")


@dsl.kernel(block=(48,))
def partial_warp(b: BUF):
    profile.Profiler(b)  # mark: partial-warp


def test_a_block_with_a_partial_warp_is_refused_as_profiling():
    """A 48-thread block was refused by bar.warp.sync's rule
    ("warp-collective"), naming a warp_sync the user never wrote."""
    with pytest.raises(dsl.KernelBuildError) as e:
        partial_warp.build()
    assert e.value.rule == "profile" and "block of 48 threads has a partial warp" in str(e.value)
    assert e.value.where == f"{__file__}:{line_of(__file__, 'mark: partial-warp')}"
