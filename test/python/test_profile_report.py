"""Profile buffers -> events, Chrome trace-event JSON and summaries, on
synthetic buffers written the way the kernel writes them (no GPU, no MLIR)."""

import json
import struct

import pytest

from nvtma import profile_report as pr
from nvtma.profile_report import ProfileError, pack_meta

KIND = {k: i for i, k in enumerate(pr.KINDS)}


def table(events=("tile", "wait", "load", "flag"), roles=("", "producer", "consumer"), E=4, warps=2):
    return pr.EventTable("k", tuple(events), tuple(roles), E, warps)


def buffer(slots, E=4, warps=2, ctas=2, counts=None, words=None):
    """A buffer as the kernel leaves it: header, then per (cta, warp) slot a
    count and records (meta, start ns, end ns, (start clock << 32) | cycles)."""
    sw = pr.slot_words(E)
    n = words if words is not None else pr.HEADER_WORDS + ctas * warps * sw
    w = [0] * n
    w[:pr.HEADER_WORDS] = [pr.MAGIC, pr.VERSION, E, warps, ctas, pr.RECORD_WORDS, sw, 0]
    for (cta, warp), recs in slots.items():
        base = pr.HEADER_WORDS + (cta * warps + warp) * sw
        if base + sw > n:
            continue  # the kernel writes nothing past the buffer
        w[base] = (counts or {}).get((cta, warp), len(recs))
        for i, r in enumerate(recs[:E]):
            at = base + pr.SLOT_HEADER_WORDS + i * pr.RECORD_WORDS
            w[at:at + 4] = r
    return w


def rec(event, role, t0, t1, *, sm=3, warp=0, kind="range", depth=0, clock0=None, cycles=None):
    c0 = clock0 if clock0 is not None else t0 * 2
    cy = cycles if cycles is not None else (t1 - t0) * 2
    return [pack_meta(sm=sm, warp=warp, role=role, event=event, kind=KIND[kind], depth=depth),
            t0, t1, ((c0 & 0xFFFFFFFF) << 32) | (cy & 0xFFFFFFFF)]


def test_layout_sizes_and_meta_fields():
    # the slot is a count, a pad, then 4-word records: 16-byte aligned from an 8-word header
    assert pr.slot_words(64) == 2 + 4 * 64 and pr.HEADER_WORDS % 2 == 0
    assert pr.buffer_words((132,), (384,), 64) == 8 + 132 * 12 * 258
    assert pr.buffer_words(10, 64, 1) == 8 + 10 * 2 * 6
    assert pr.buffer_words((2, 3), (33,), 1) == 8 + 6 * 2 * 6  # 33 threads: 2 warps
    m = pack_meta(sm=131, warp=11, role=2, event=700, kind=2, depth=3, scope=1)
    assert (m & 0xFFFF, m >> 16 & 0xFF, m >> 24 & 0xFF, m >> 32 & 0xFFFF, m >> 48 & 0xF, m >> 52 & 0xF,
            m >> 56 & 0xF) == (131, 11, 2, 700, 2, 3, 1)
    assert pr.MAGIC.to_bytes(8, "little") == b"nvtmaprf"
    for bad in [(0, 64, 1), ((1, 2, 3, 4), 64, 1), (4, 64, 0), (4, 64, True), (4, "64", 1)]:
        with pytest.raises(ProfileError) as e:
            pr.buffer_words(*bad)
        assert e.value.rule == "size"


def test_decode_order_names_roles_and_kinds():
    slots = {
        (0, 0): [rec(1, 1, 100, 180, warp=0, depth=1), rec(2, 1, 190, 200, warp=0, depth=1),
                 rec(0, 1, 90, 260, warp=0)],                      # inner ranges end first
        (0, 1): [rec(3, 2, 150, 150, warp=1, kind="mark"), rec(1, 2, 120, 300, warp=1, kind="span")],
        (1, 1): [rec(0, 2, 500, 900, sm=7, warp=1)],
    }
    p = pr.collect(buffer(slots), table())
    assert [(e.cta, e.warp, e.seq, e.name, e.role, e.kind) for e in p.events] == [
        (0, 0, 0, "wait", "producer", "range"), (0, 0, 1, "load", "producer", "range"),
        (0, 0, 2, "tile", "producer", "range"), (0, 1, 0, "flag", "consumer", "mark"),
        (0, 1, 1, "wait", "consumer", "span"), (1, 1, 0, "tile", "consumer", "range")]
    e = p.events[-1]
    assert (e.sm, e.start_ns, e.end_ns, e.dur_ns, e.cycles, e.start_clock) == (7, 500, 900, 400, 800, 1000)
    assert p.events[0].depth == 1 and p.overflow == {} and p.ctas == 2 and p.ctas_without_slot == 0
    assert p.recorded == {(0, 0): 3, (0, 1): 2, (1, 1): 1}
    # decoding from bytes (what a numpy/torch int64 buffer holds) gives the same
    raw = struct.pack(f"<{len(buffer(slots))}q", *buffer(slots))
    assert pr.collect(raw, table()).events == p.events


def test_overflow_is_counted_and_the_slot_never_overrun():
    E = 3
    mine = [rec(0, 1, 10 * i, 10 * i + 5) for i in range(E)]
    nxt = [rec(1, 2, 1000, 1100, warp=1)]
    p = pr.collect(buffer({(0, 0): mine, (0, 1): nxt}, E=E, ctas=1, counts={(0, 0): E + 5}), table(E=E))
    assert p.overflow == {(0, 0): 5} and p.dropped == 5
    assert [(e.warp, e.name) for e in p.events] == [(0, "tile")] * 3 + [(1, "wait")]
    t = p.chrome_trace()
    pr.check_trace(t)
    ov = [x for x in t["traceEvents"] if x["name"] == "overflow"]
    assert len(ov) == 1 and ov[0]["args"] == {"dropped": 5} and ov[0]["ph"] == "i"
    assert t["otherData"]["dropped_events"] == 5
    assert "5 dropped past 3 per warp" in p.table()


def test_ctas_past_the_buffer_are_reported():
    E, warps = 2, 2
    full = pr.HEADER_WORDS + 2 * warps * pr.slot_words(E)       # room for 2 of the 3 CTAs
    slots = {(c, 0): [rec(0, 0, 10, 20)] for c in range(3)}
    p = pr.collect(buffer(slots, E=E, ctas=3, words=full), table(E=E))
    assert p.ctas == 3 and p.ctas_without_slot == 1
    assert sorted({e.cta for e in p.events}) == [0, 1]
    assert "1 CTAs had no slot" in p.table()


def test_bad_buffers_and_tables_raise_typed_errors():
    good = buffer({(0, 0): [rec(0, 0, 1, 2)]})
    cases = [
        ([0] * 4, "buffer"),                                         # no room for a header
        ([0] * len(good), "buffer"),                                  # never written
        ([pr.MAGIC, 99] + good[2:], "buffer"),                        # another format
        (good[:2] + [0] + good[3:], "buffer"),                        # events per warp 0
        (good[:6] + [7] + good[7:], "buffer"),                        # slot words inconsistent
        (buffer({(0, 0): [rec(9, 0, 1, 2)]}), "names"),               # event id past the table
        (buffer({(0, 0): [rec(0, 5, 1, 2)]}), "names"),               # role id past the table
        (buffer({(0, 0): [rec(0, 0, 1, 2)]}, counts={(0, 0): -1}), "buffer"),
        (b"\0" * 12, "buffer"),                                       # not whole words
        (object(), "buffer"),
    ]
    for buf, rule in cases:
        with pytest.raises(ProfileError) as e:
            pr.collect(buf, table())
        assert e.value.rule == rule, (rule, str(e.value))
    # a table from another build (events per warp differ)
    with pytest.raises(ProfileError) as e:
        pr.collect(good, table(E=8))
    assert e.value.rule == "names" and "another kernel" in str(e.value)
    with pytest.raises(ProfileError):
        pr.collect(good, {"events": []})


def _thread_names(t):
    return {(x["pid"], x["tid"]): x["args"]["name"] for x in t["traceEvents"]
            if x["ph"] == "M" and x["name"] == "thread_name"}


def test_chrome_trace_processes_threads_and_slices():
    slots = {
        (0, 0): [rec(1, 1, 100, 180, depth=1), rec(2, 1, 190, 200, depth=1), rec(0, 1, 90, 260)],
        (0, 1): [rec(3, 2, 150, 150, warp=1, kind="mark"), rec(1, 2, 120, 300, warp=1, kind="span")],
        (1, 0): [rec(0, 0, 95, 300, sm=4), rec(1, 1, 300, 310, sm=4)],   # no role, then a role: two threads
    }
    p = pr.collect(buffer(slots), table())
    t = p.chrome_trace(timebase="globaltimer")
    pr.check_trace(t)
    json.loads(json.dumps(t, allow_nan=False))
    procs = {x["pid"]: x["args"]["name"] for x in t["traceEvents"] if x.get("name") == "process_name"}
    assert procs == {3: "SM 3", 4: "SM 4"}
    assert sorted(_thread_names(t).values()) == ["CTA 0 warp 0 producer", "CTA 0 warp 1 consumer", "CTA 1 warp 0",
                                                 "CTA 1 warp 0 producer"]
    xs = [x for x in t["traceEvents"] if x["ph"] == "X"]
    # times in us from the earliest start; per thread sorted by start, enclosing slice first
    first = [(x["name"], x["ts"], x["dur"]) for x in xs if x["pid"] == 3]
    assert first == [("tile", 0.0, 0.17), ("wait", 0.01, 0.08), ("load", 0.1, 0.01)]
    assert [x["ph"] for x in t["traceEvents"] if x["name"] == "flag"] == ["i"]
    b = [x for x in t["traceEvents"] if x["ph"] in "be" and x["name"] == "wait"]
    assert [x["ph"] for x in b] == ["b", "e"] and b[0]["id"] == b[1]["id"]
    assert b[1]["ts"] - b[0]["ts"] == pytest.approx(0.18)
    # per CTA: process names carry the SM, threads per warp and role
    tc = p.chrome_trace(group="cta", timebase="globaltimer")
    pr.check_trace(tc)
    procs = {x["pid"]: x["args"]["name"] for x in tc["traceEvents"] if x.get("name") == "process_name"}
    assert procs == {0: "CTA 0 (SM 3)", 1: "CTA 1 (SM 4)"}
    assert "warp 1 consumer" in _thread_names(tc).values()
    with pytest.raises(ProfileError):
        p.chrome_trace(group="warp")


def test_clock_timebase_is_fine_and_measured():
    # a 1.5 GHz SM whose %globaltimer ticks every microsecond: durations and
    # placement come from the cycle counter, anchored at the warp's earliest start
    ghz, recs, t, clk = 1.5, [], 2_000_000, 5_000
    for i in range(40):
        c0 = clk + i * 1650                    # a range every 1100 ns, 300 ns long
        ns0 = t + i * 1100
        recs.append([pack_meta(sm=1, role=1, event=0), ns0 // 1000 * 1000, (ns0 + 300) // 1000 * 1000,
                     ((c0 & 0xFFFFFFFF) << 32) | 450])
    p = pr.collect(buffer({(0, 0): recs}, E=64, ctas=1), table(E=64))
    assert p.clock_ghz() == pytest.approx(ghz, rel=0.03)
    times = p.times()
    spans = [times[id(e)] for e in p.events]
    assert all(e - s == pytest.approx(300, rel=0.03) for s, e in spans)
    assert all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1))  # sequential, no overlap
    s = p.summary()
    assert s[0]["count"] == 40 and s[0]["p50_ns"] == pytest.approx(300, rel=0.03) and s[0]["mean_cycles"] == 450
    # raw timer: what the 1 us ticks give
    raw = p.summary(timebase="globaltimer")[0]
    assert raw["max_ns"] == 1000 and raw["min_ns"] == 0
    # a given clock wins; 32-bit clock wrap between events is undone
    assert p.summary(clock_ghz=3.0)[0]["p50_ns"] == 150
    wrap = [[pack_meta(role=1), 1000, 2000, ((0xFFFFFF00) << 32) | 10],
            [pack_meta(role=1), 100_000, 100_010, (0x100 << 32) | 10]]
    pw = pr.collect(buffer({(0, 0): wrap}, E=64, ctas=1), table(E=64))
    (a, _), (b, _) = (pw.times(clock_ghz=1.0)[id(e)] for e in pw.events)
    assert b - a == 0x200
    with pytest.raises(ProfileError):
        pr.collect(buffer({(0, 0): recs[:1]}, E=64, ctas=1), table(E=64)).times(timebase="clock")


def test_nesting_survives_epoch_timestamps():
    # %globaltimer counts ns since 1970 (~2^60, where a float keeps 256 ns):
    # a store ending 8 cycles before its tile must still nest in the trace,
    # and durations must keep their cycles (the H200 run that found this
    # had every time a multiple of 256 ns and 'store' overrunning 'tile')
    ghz, epoch, recs = 2.0, 1_796_000_000_123_456_789, []
    for i in range(12):                        # tile i: 1500 ns = 3000 cycles; store inside it ends 8 cycles early
        c0, ns0 = 10_000 + i * 3000, epoch + i * 1500
        recs.append(rec(2, 2, ns0 + 400, ns0 + 1496, sm=5, warp=1, depth=1, clock0=c0 + 800, cycles=2192))
        recs.append(rec(0, 2, ns0, ns0 + 1500, sm=5, warp=1, clock0=c0, cycles=3000))
    p = pr.collect(buffer({(0, 1): recs}, E=64, ctas=1), table(E=64))
    assert p.clock_ghz() == pytest.approx(ghz, rel=0.01)
    trace = p.chrome_trace()
    pr.check_trace(trace)
    rows = {r["name"]: r for r in p.summary()}
    assert rows["load"]["p50_ns"] == pytest.approx(1096, abs=1) and rows["tile"]["p50_ns"] == pytest.approx(1500, abs=1)
    assert min(e["ts"] for e in trace["traceEvents"] if e["ph"] == "X") == 0.0


def test_summary_count_mean_percentiles():
    recs = {(0, 0): [rec(0, 1, 1000 + 10 * i, 1000 + 10 * i + d) for i, d in enumerate(range(1, 51))],
            (0, 1): [rec(0, 1, 5000 + 10 * i, 5000 + 10 * i + d, warp=1) for i, d in enumerate(range(51, 101))]}
    recs[(1, 0)] = [rec(3, 2, 7, 7, kind="mark")] * 3
    p = pr.collect(buffer(recs, E=64), table(E=64))
    rows = {(r["role"], r["name"]): r for r in p.summary(timebase="globaltimer")}
    r = rows[("producer", "tile")]
    assert (r["count"], r["mean_ns"], r["p50_ns"], r["p99_ns"], r["min_ns"], r["max_ns"]) == (100, 50.5, 50, 99, 1,
                                                                                              100)
    assert rows[("consumer", "flag")] == {"role": "consumer", "name": "flag", "kind": "mark", "count": 3}
    text = p.table(timebase="globaltimer")
    assert text.splitlines()[0].split()[:3] == ["role", "event", "count"]
    assert any(ln.split()[:3] == ["producer", "tile", "100"] and ln.split()[3:6] == ["50", "50", "99"]
               for ln in text.splitlines())
    assert "flag (mark)" in text and "103 events from 3 warps of 2 CTAs" in text


def _trace(*events, names=True):
    meta = []
    if names:
        for pid, tid in {(e["pid"], e["tid"]) for e in events}:
            meta += [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "p"}},
                     {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": "t"}}]
    return {"traceEvents": meta + list(events)}


def X(name, ts, dur, tid=1):
    return {"ph": "X", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur}


def test_check_trace_rejects_what_viewers_misdraw():
    pr.check_trace(_trace(X("a", 0, 10), X("b", 2, 3), X("c", 5, 5), X("d", 10, 1)))  # nested and adjacent
    bad = [
        _trace(X("a", 0, 10), X("b", 5, 10)),                          # overlap without nesting
        _trace(X("a", 0, 10), names=False),                            # unnamed process/thread
        _trace(X("a", 0, -1)),
        _trace(X("a", float("nan"), 1)),
        _trace({"ph": "b", "name": "s", "cat": "c", "id": 1, "pid": 1, "tid": 1, "ts": 0}),   # never ends
        _trace({"ph": "e", "name": "s", "cat": "c", "id": 1, "pid": 1, "tid": 1, "ts": 0}),   # ends unbegun
        _trace({"ph": "Q", "name": "a", "pid": 1, "tid": 1, "ts": 0}),
        _trace({"ph": "X", "name": "a", "pid": "1", "tid": 1, "ts": 0, "dur": 1}),
        [],
    ]
    for t in bad:
        with pytest.raises(ProfileError) as e:
            pr.check_trace(t)
        assert e.value.rule == "trace"


def test_name_table_from_ir_text_and_escapes():
    names = ('tile', 'a "quoted" \\ name', "naïve")
    t = pr.EventTable("k2", names, ("", "prod"), 16, 4, "warpgroup")
    # as MLIR prints a string attribute: \\, \22 and hex escapes of non-ASCII bytes
    printed = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else
                      ("\\\\" if c == "\\" else "".join(f"\\{b:02X}" for b in c.encode()))
                      for c in t.to_json())
    ir = ('gpu.func @other() kernel {\n}\n'
          f'gpu.func @k2(%arg0: memref<?xi64>) kernel attributes {{known_block_size = array<i32: 128, 1, 1>, '
          f'nvtma_profile = "{printed}"}} {{\n')
    assert pr.event_table(ir, "k2") == t and pr.event_table(ir) == t
    assert set(pr.event_tables(ir)) == {"k2"}
    for src, kernel in [(ir, "other"), ("module {}", None), (42, None)]:
        with pytest.raises(ProfileError) as e:
            pr.event_table(src, kernel)
        assert e.value.rule == "names"
    with pytest.raises(ProfileError):
        pr.EventTable.from_json('{"format": 1}')
