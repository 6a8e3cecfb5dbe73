"""The host side of in-kernel profiling: the buffer layout, and a recorded
buffer turned into events, a Chrome trace-event JSON (Perfetto, chrome://tracing)
and a summary table. Pure Python: it runs where only the runtime is installed.

    buf = profile.alloc_buffer(grid, block, events_per_warp)     # int64 zeros, sized for the launch
    mod.kernel(..., buf, grid=grid)
    p = profile.collect(buf, profile.event_table(mod, "kernel"))
    p.write_trace("trace.json")                                    # one process per SM, a thread per warp/role
    print(p.table())                                               # count, mean, p50, p99 per event

The buffer (int64 words) is a header (its last word the name table's
fingerprint: another build's table is refused), then one slot per warp of every CTA:
a count word (events the warp tried to record; past `events_per_warp` they
are dropped and counted; written once, at the kernel's end, so it never
vouches for an earlier launch's records), a pad word, then `events_per_warp`
records of 4 words: meta (SM, warp, role, event id, kind, depth, scope as bit
fields), start and end in %globaltimer ns, and (start %clock64 low 32 bits)
<< 32 | (end - start cycles), whose 32-bit wraps the %globaltimer readings
undo (events seconds apart or long). The event and role names are build-time
strings; their table rides on the kernel's IR (the ``nvtma_profile``
attribute of its gpu.func), so the compiled module and its saved artifact
carry it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field

__all__ = ["ProfileError", "EventTable", "Event", "Profile", "event_table", "buffer_words", "alloc_buffer",
           "collect", "check_trace", "HEADER_WORDS", "RECORD_WORDS", "SLOT_HEADER_WORDS", "slot_words"]

# --------------------------------------------------------------------------- the layout (one schema)

MAGIC = int.from_bytes(b"nvtmaprf", "little")
VERSION = 1
HEADER_WORDS = 8        # magic, version, events per warp, warps per CTA, CTAs, record words, slot words,
#                         the name table's fingerprint (0: a build before it was written)
RECORD_WORDS = 4        # meta, start ns, end ns, (start clock << 32) | cycles
SLOT_HEADER_WORDS = 2   # count, pad (keeps records 16-byte aligned)
MAX_EVENTS_PER_WARP = 1 << 20
MAX_NAMES = 1 << 16
MAX_ROLES = 1 << 8

# meta bit fields: (shift, bits)
SM_FIELD = (0, 16)
WARP_FIELD = (16, 8)
ROLE_FIELD = (24, 8)
EVENT_FIELD = (32, 16)
KIND_FIELD = (48, 4)
DEPTH_FIELD = (52, 4)
SCOPE_FIELD = (56, 4)

KINDS = ("range", "mark", "span")   # nested ranges (range/push-pop), instants, start/end spans (may overlap)
SCOPES = ("warp", "warpgroup")
ATTRIBUTE = "nvtma_profile"         # the kernel function attribute holding the name table (JSON text)


def slot_words(events_per_warp: int) -> int:
    return SLOT_HEADER_WORDS + RECORD_WORDS * events_per_warp


def pack_meta(sm=0, warp=0, role=0, event=0, kind=0, depth=0, scope=0) -> int:
    """The meta word's fields (what the kernel ORs together), for tests and tools."""
    out = 0
    for v, (shift, bits) in ((sm, SM_FIELD), (warp, WARP_FIELD), (role, ROLE_FIELD), (event, EVENT_FIELD),
                             (kind, KIND_FIELD), (depth, DEPTH_FIELD), (scope, SCOPE_FIELD)):
        out |= (v & ((1 << bits) - 1)) << shift
    return out


def _field(meta, f):
    shift, bits = f
    return (meta >> shift) & ((1 << bits) - 1)


class ProfileError(ValueError):
    """A buffer, name table or trace that does not hold what it must; `rule` names the rule."""

    def __init__(self, message, rule="profile"):
        self.rule = rule
        super().__init__(message)


# --------------------------------------------------------------------------- sizing

def _count(v, what):
    if isinstance(v, int) and not isinstance(v, bool):
        v = (v,)
    try:
        dims = tuple(v)
    except TypeError:
        raise ProfileError(f"{what} {v!r}: an int or 1-3 positive ints", rule="size") from None
    if not 1 <= len(dims) <= 3 or any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in dims):
        raise ProfileError(f"{what} {v!r}: an int or 1-3 positive ints", rule="size")
    n = 1
    for d in dims:
        n *= d
    return n


def _check_events(events_per_warp):
    if isinstance(events_per_warp, bool) or not isinstance(events_per_warp, int) or \
            not 1 <= events_per_warp <= MAX_EVENTS_PER_WARP:
        raise ProfileError(f"events_per_warp {events_per_warp!r}: an int in 1..{MAX_EVENTS_PER_WARP}",
                           rule="size")
    return events_per_warp


def buffer_words(grid, block, events_per_warp: int) -> int:
    """int64 words a launch of `grid` CTAs of `block` threads needs so that
    every warp has a slot of `events_per_warp` records."""
    warps = -(-_count(block, "block") // 32)
    return HEADER_WORDS + _count(grid, "grid") * warps * slot_words(_check_events(events_per_warp))


def alloc_buffer(grid, block, events_per_warp: int, device="cuda"):
    """A zeroed torch int64 tensor of buffer_words(...) on `device`."""
    import torch
    return torch.zeros(buffer_words(grid, block, events_per_warp), dtype=torch.int64, device=device)


# --------------------------------------------------------------------------- names

@dataclass(frozen=True)
class EventTable:
    """What a kernel's build recorded: event and role names by id."""
    kernel: str
    events: tuple
    roles: tuple
    events_per_warp: int
    warps: int
    scope: str = "warp"

    @property
    def fingerprint(self) -> int:
        """A nonzero 63-bit hash of the whole table, which the kernel writes
        into its buffer's header: a buffer decoded with another build's table
        (same sizes, other names or order) is refused, not misnamed."""
        h = int.from_bytes(hashlib.blake2b(self.to_json().encode(), digest_size=8).digest(), "little") >> 1
        return h or 1

    def to_json(self) -> str:
        return json.dumps({"format": VERSION, "kernel": self.kernel, "events": list(self.events),
                           "roles": list(self.roles), "events_per_warp": self.events_per_warp,
                           "warps": self.warps, "scope": self.scope}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "EventTable":
        try:
            d = json.loads(text)
        except (TypeError, ValueError) as e:
            raise ProfileError(f"the profile name table is not JSON ({e})", rule="names") from None
        ok = (isinstance(d, dict) and d.get("format") == VERSION and isinstance(d.get("kernel"), str)
              and isinstance(d.get("events"), list) and all(isinstance(x, str) for x in d["events"])
              and isinstance(d.get("roles"), list) and all(isinstance(x, str) for x in d["roles"])
              and isinstance(d.get("events_per_warp"), int) and isinstance(d.get("warps"), int)
              and d.get("scope", "warp") in SCOPES)
        if not ok:
            raise ProfileError(f"the profile name table {text[:200]!r} is not a format-{VERSION} table",
                               rule="names")
        return cls(d["kernel"], tuple(d["events"]), tuple(d["roles"]), d["events_per_warp"], d["warps"],
                   d.get("scope", "warp"))


_ATTR_RE = re.compile(ATTRIBUTE + r' = "((?:[^"\\]|\\.)*)"')


def _unescape(s: str) -> str:
    """MLIR's printed string escapes (\\\\, \\" and \\XX hex bytes) undone."""
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n in "\\\"":
                out += n.encode()
                i += 2
                continue
            if n == "n":
                out += b"\n"
                i += 2
                continue
            if n == "t":
                out += b"\t"
                i += 2
                continue
            if i + 2 < len(s) and re.fullmatch(r"[0-9A-Fa-f]{2}", s[i + 1:i + 3]):
                out.append(int(s[i + 1:i + 3], 16))
                i += 3
                continue
        out += c.encode()
        i += 1
    return out.decode("utf-8", errors="replace")


def event_tables(source) -> dict:
    """{kernel name: EventTable} of every profiled kernel in `source`: IR
    text, or anything with an ``.ir`` (a dsl BuiltKernel or Specialization,
    a CompiledModule, a loaded artifact)."""
    text = source if isinstance(source, str) else getattr(source, "ir", None)
    if callable(getattr(source, "build", None)) and not isinstance(text, str):
        text = source.build().ir  # an @dsl.kernel without constants
    if not isinstance(text, str):
        raise ProfileError(f"no IR to read a profile name table from in {type(source).__name__} (an artifact "
                           "saved without module.mlir?)", rule="names")
    out = {}
    for m in _ATTR_RE.finditer(text):
        t = EventTable.from_json(_unescape(m.group(1)))
        if out.get(t.kernel, t) != t:  # (two builds' IR pasted together): which one ran is not ours to guess
            raise ProfileError(f"two different profile name tables for kernel {t.kernel!r} in one IR text",
                               rule="names")
        out[t.kernel] = t
    return out


def event_table(source, kernel: str | None = None) -> EventTable:
    """The name table of `kernel` (or of the only profiled kernel) in `source`."""
    tables = event_tables(source)
    if kernel is None:
        if len(tables) != 1:
            raise ProfileError(f"{len(tables)} profiled kernels ({', '.join(tables) or 'none'}): name one",
                               rule="names")
        return next(iter(tables.values()))
    if kernel not in tables:
        raise ProfileError(f"kernel {kernel!r} was not built with profiling (profiled kernels: "
                           f"{', '.join(tables) or 'none'})", rule="names")
    return tables[kernel]


# --------------------------------------------------------------------------- decoding

@dataclass(frozen=True)
class Event:
    """One record: `kind` is 'range' (nested, from range()/push-pop), 'mark'
    (an instant) or 'span' (start()/end(), may overlap others); times in
    %globaltimer ns, `cycles` the %clock64 delta, `seq` its place in the
    warp's records."""
    name: str
    role: str
    kind: str
    scope: str
    sm: int
    cta: int
    warp: int
    depth: int
    start_ns: int
    end_ns: int
    start_clock: int
    cycles: int
    seq: int

    @property
    def dur_ns(self) -> int:
        return self.end_ns - self.start_ns


def _words(buf) -> list:
    """The buffer's int64 words as Python ints: a torch tensor (any device),
    a numpy array, bytes-like, or a sequence of ints."""
    if hasattr(buf, "detach"):  # torch
        buf = buf.detach().cpu().contiguous()
        # (a float64 copy has 8-byte elements too, but its values are not the kernel's words)
        if buf.element_size() != 8 or buf.dtype.is_floating_point or buf.dtype.is_complex:
            raise ProfileError(f"the profile buffer holds {buf.dtype}, not int64 words", rule="buffer")
        try:
            buf = buf.numpy()
        except Exception:  # torch without numpy
            return [int(x) for x in buf.view(-1).tolist()]
    if hasattr(buf, "dtype") and hasattr(buf, "tobytes"):  # numpy
        if buf.dtype.itemsize != 8 or buf.dtype.kind not in "iu":
            raise ProfileError(f"the profile buffer holds {buf.dtype}, not int64 words", rule="buffer")
        buf = buf.astype("<i8", copy=False).tobytes()  # (a big-endian array's bytes are not the words)
    if isinstance(buf, (bytes, bytearray, memoryview)):
        mv = memoryview(buf).cast("B")
        if len(mv) % 8:
            raise ProfileError(f"a {len(mv)}-byte profile buffer is not whole int64 words", rule="buffer")
        return list(mv.cast("q"))
    try:
        return [int(x) for x in buf]
    except (TypeError, ValueError):
        raise ProfileError(f"cannot read int64 words from {type(buf).__name__}", rule="buffer") from None


def _u(v):
    return v & 0xFFFFFFFFFFFFFFFF


@dataclass
class Profile:
    """A decoded buffer: events in each warp's record order, per-warp
    overflow (events past the slot), and CTAs that had no slot in the buffer."""
    names: EventTable
    events: list
    overflow: dict = field(default_factory=dict)    # (cta, warp) -> dropped events
    recorded: dict = field(default_factory=dict)    # (cta, warp) -> events in the buffer
    ctas: int = 0
    ctas_without_slot: int = 0

    @property
    def dropped(self) -> int:
        return sum(self.overflow.values())

    def by_warp(self) -> dict:
        """(cta, warp) -> its events in record order."""
        out = {}
        for e in self.events:
            out.setdefault((e.cta, e.warp), []).append(e)
        return out

    # ------------------------------------------------------------------ time
    def clock_ghz(self) -> float | None:
        """SM cycles per ns, measured from the buffer: per warp, the %clock64
        and %globaltimer distance between its earliest and latest starts
        (spans of at least 10 us); the median over warps. None if no warp
        spans long enough."""
        ratios = []
        for evs in self.by_warp().values():
            a = min(evs, key=lambda e: (e.start_ns, e.seq))
            b = max(evs, key=lambda e: (e.start_ns, e.seq))
            dns = b.start_ns - a.start_ns
            # under 1 s, a later start is less than 2^32 cycles on (to 4.29 GHz): the low 32 bits are it
            if 10_000 <= dns < 1_000_000_000:
                dc = (b.start_clock - a.start_clock) & 0xFFFFFFFF
                if dc > 0:
                    ratios.append(dc / dns)
        if not ratios:
            return None
        ratios.sort()
        return ratios[len(ratios) // 2]

    def times(self, clock_ghz=None, timebase="auto") -> dict:
        """{event: (start, end)} in ns. With a clock rate (given, or measured
        by clock_ghz() when timebase="auto"), each warp's times come from its
        %clock64 readings, anchored at its earliest %globaltimer start: fine
        and monotonic within a warp, aligned across SMs to the timer's
        resolution. timebase="globaltimer" uses the raw timer. Times count
        from the buffer's earliest %globaltimer start: the timer counts ns
        since 1970 (~2^60), where a float keeps only 256 ns."""
        return {k: v[:2] for k, v in self._timeline(clock_ghz, timebase).items()}

    def _rate(self, clock_ghz, timebase):
        """The clock rate the times use (None: the raw timer)."""
        if timebase not in ("auto", "clock", "globaltimer"):
            raise ProfileError(f"timebase {timebase!r}: 'auto', 'clock' or 'globaltimer'", rule="trace")
        if clock_ghz is not None and (isinstance(clock_ghz, bool) or not isinstance(clock_ghz, (int, float))
                                      or not math.isfinite(clock_ghz) or clock_ghz <= 0):
            # a zero, negative or NaN rate would turn every duration into 0, a negative or NaN
            raise ProfileError(f"clock_ghz {clock_ghz!r}: a positive number of SM cycles per ns", rule="trace")
        ghz = clock_ghz if clock_ghz is not None or timebase == "globaltimer" else self.clock_ghz()
        if timebase == "clock" and not ghz:
            raise ProfileError("timebase='clock' needs clock_ghz (no warp spans long enough to measure it)",
                               rule="trace")
        return None if timebase == "globaltimer" else ghz

    def _timeline(self, clock_ghz=None, timebase="auto") -> dict:
        """{id(event): (start, end, cycles)}: times in ns as times() gives
        them, and the event's cycles with their 32-bit wraps undone."""
        ghz = self._rate(clock_ghz, timebase)
        out = {}
        origin = min((e.start_ns for e in self.events), default=0)  # integer ns, subtracted before any float
        for evs in self.by_warp().values():
            if not ghz:
                for e in evs:
                    out[id(e)] = (float(e.start_ns - origin), float(e.end_ns - origin), e.cycles)
                continue
            a = min(evs, key=lambda e: (e.start_ns, e.seq))
            for e in evs:
                # the records keep 32 bits of the clock (2.1 s at 2 GHz): the timer, read with it, says
                # how many times it wrapped, both since the warp's first start and within a long event
                dc = _unwrap32(e.start_clock - a.start_clock, (e.start_ns - a.start_ns) * ghz)
                cycles = max(0, _unwrap32(e.cycles, (e.end_ns - e.start_ns) * ghz))
                s = (a.start_ns - origin) + dc / ghz
                out[id(e)] = (s, s + cycles / ghz, cycles)
        return out

    # ------------------------------------------------------------------ trace
    def chrome_trace(self, group="sm", clock_ghz=None, timebase="auto") -> dict:
        """Chrome trace-event JSON (a dict): a process per SM (group="sm") or
        per CTA ("cta"), a thread per warp and role, a complete ('X') slice
        per range, an instant per mark, async begin/end per span, and an
        'overflow' instant where a warp dropped events."""
        if group not in ("sm", "cta"):
            raise ProfileError(f"group {group!r}: 'sm' or 'cta'", rule="trace")
        times = self._timeline(clock_ghz, timebase)
        t0 = min((v[0] for v in times.values()), default=0.0)
        sm_of_cta = {}
        for e in self.events:
            sm_of_cta.setdefault(e.cta, e.sm)

        def where(e):
            pid = e.sm if group == "sm" else e.cta
            key = (e.cta, e.warp, e.role) if group == "sm" else (e.warp, e.role)
            return pid, key

        threads = {}
        for e in self.events:
            pid, key = where(e)
            threads.setdefault(pid, set()).add(key)
        tids = {}
        out = []
        for pid in sorted(threads):
            pname = f"SM {pid}" if group == "sm" else f"CTA {pid} (SM {sm_of_cta.get(pid, '?')})"
            out.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": pname}})
            out.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
            for i, key in enumerate(sorted(threads[pid]), start=1):
                tids[(pid, key)] = i
                role = key[-1]
                who = f"CTA {key[0]} warp {key[1]}" if group == "sm" else f"warp {key[0]}"
                out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": i,
                            "args": {"name": f"{who} {role}" if role else who}})
                out.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": i, "args": {"sort_index": i}})
        body = []
        span_id = 0
        last_end = {}
        for e in self.events:
            pid, key = where(e)
            tid = tids[(pid, key)]
            s, t, cycles = times[id(e)]
            ts, te = (s - t0) / 1e3, (t - t0) / 1e3
            if te >= last_end.get((e.cta, e.warp), (-1.0,))[0]:
                last_end[(e.cta, e.warp)] = (te, pid, tid)
            args = {"sm": e.sm, "cta": e.cta, "warp": e.warp, "cycles": cycles, "seq": e.seq}
            cat = e.role or "warp"
            if e.kind == "mark":
                body.append({"ph": "i", "s": "t", "name": e.name, "cat": cat, "pid": pid, "tid": tid, "ts": ts,
                             "args": args})
            elif e.kind == "span":
                span_id += 1
                body.append({"ph": "b", "name": e.name, "cat": cat, "id": span_id, "pid": pid, "tid": tid,
                             "ts": ts, "args": args})
                body.append({"ph": "e", "name": e.name, "cat": cat, "id": span_id, "pid": pid, "tid": tid,
                             "ts": te, "args": {}})
            else:
                body.append({"ph": "X", "name": e.name, "cat": cat, "pid": pid, "tid": tid, "ts": ts,
                             "dur": max(t - s, 0.0) / 1e3, "args": dict(args, depth=e.depth)})
        for (cta, warp), n in sorted(self.overflow.items()):
            if n and (cta, warp) in last_end:
                te, pid, tid = last_end[(cta, warp)]
                body.append({"ph": "i", "s": "t", "name": "overflow", "cat": "profile", "pid": pid, "tid": tid,
                             "ts": te, "args": {"dropped": n}})
        # per thread by start, enclosing slices first: the order viewers nest by
        body.sort(key=lambda ev: (ev["pid"], ev["tid"], ev["ts"], -ev.get("dur", 0.0)))
        return {"traceEvents": out + body, "displayTimeUnit": "ns",
                "otherData": {"kernel": self.names.kernel, "events_per_warp": self.names.events_per_warp,
                              "events": len(self.events), "dropped_events": self.dropped,
                              "ctas": self.ctas, "ctas_without_slot": self.ctas_without_slot,
                              "clock_ghz": self._rate(clock_ghz, timebase)}}

    def write_trace(self, path, **kw):
        """Writes chrome_trace(**kw) as JSON to `path` (checked first)."""
        trace = self.chrome_trace(**kw)
        check_trace(trace)
        with open(path, "w") as f:
            json.dump(trace, f, allow_nan=False)
        return path

    # ------------------------------------------------------------------ summary
    def summary(self, clock_ghz=None, timebase="auto") -> list:
        """Per (role, event name): count, mean / p50 / p99 / min / max
        duration in ns and mean cycles (marks: count only), in first-seen order."""
        times = self._timeline(clock_ghz, timebase)
        groups = {}
        for e in self.events:
            s, t, cycles = times[id(e)]
            groups.setdefault((e.role, e.name, e.kind), []).append((t - s, cycles))
        rows = []
        for (role, name, kind), vals in groups.items():
            row = {"role": role, "name": name, "kind": kind, "count": len(vals)}
            if kind != "mark":
                d = sorted(v for v, _ in vals)
                row.update(mean_ns=sum(d) / len(d), p50_ns=_pct(d, 50), p99_ns=_pct(d, 99), min_ns=d[0],
                           max_ns=d[-1], total_ns=sum(d), mean_cycles=sum(c for _, c in vals) / len(vals))
            rows.append(row)
        return rows

    def table(self, clock_ghz=None, timebase="auto") -> str:
        """summary() as a text table, with the buffer's totals."""
        rows = self.summary(clock_ghz, timebase)
        head = ("role", "event", "count", "mean ns", "p50 ns", "p99 ns", "max ns", "mean cycles")
        lines = [head]
        for r in rows:
            if r["kind"] == "mark":
                lines.append((r["role"] or "-", r["name"] + " (mark)", str(r["count"]), "-", "-", "-", "-", "-"))
            else:
                lines.append((r["role"] or "-", r["name"], str(r["count"]), f"{r['mean_ns']:.0f}",
                              f"{r['p50_ns']:.0f}", f"{r['p99_ns']:.0f}", f"{r['max_ns']:.0f}",
                              f"{r['mean_cycles']:.0f}"))
        widths = [max(len(x[i]) for x in lines) for i in range(len(head))]
        text = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(x, widths)))
                for x in lines]
        ghz = self._rate(clock_ghz, timebase)
        clock = f"{ghz:.3f} GHz SM clock (measured)" if ghz and clock_ghz is None else \
            f"{ghz:.3f} GHz SM clock" if ghz else "%globaltimer times"
        warps = len(self.recorded)
        text.append(f"{self.names.kernel}: {len(self.events)} events from {warps} warps of {self.ctas} CTAs; "
                    f"{self.dropped} dropped past {self.names.events_per_warp} per warp"
                    + (f"; {self.ctas_without_slot} CTAs had no slot in the buffer" if self.ctas_without_slot else "")
                    + f"; {clock}")
        return "\n".join(text)


def _unwrap32(low, estimate):
    """The value congruent to `low` mod 2^32 nearest `estimate` (a count of
    cycles the %globaltimer gives, good to far better than 2^31 cycles)."""
    low &= 0xFFFFFFFF
    return low + round((estimate - low) / (1 << 32)) * (1 << 32)


def _pct(sorted_vals, p):
    """Nearest-rank percentile."""
    k = max(0, min(len(sorted_vals) - 1, math.ceil(p / 100 * len(sorted_vals)) - 1))
    return sorted_vals[k]


def collect(buffer, table: EventTable) -> Profile:
    """Decodes a profile buffer (after the kernel ran) with the kernel's name table."""
    if not isinstance(table, EventTable):
        raise ProfileError(f"collect takes the kernel's EventTable (profile.event_table(module, name)), got "
                           f"{type(table).__name__}", rule="names")
    w = _words(buffer)
    if len(w) < HEADER_WORDS:
        raise ProfileError(f"a {len(w)}-word buffer has no header ({HEADER_WORDS} words)", rule="buffer")
    if _u(w[0]) != MAGIC:
        raise ProfileError("the buffer has no profile header (the kernel did not run, ran without profiling, "
                           "or wrote elsewhere)", rule="buffer")
    if w[1] != VERSION:
        raise ProfileError(f"profile buffer format {w[1]}, this nvtma reads {VERSION}", rule="buffer")
    E, warps, ctas, rw, sw = w[2], w[3], w[4], w[5], w[6]
    if rw != RECORD_WORDS or not 1 <= E <= MAX_EVENTS_PER_WARP or sw != slot_words(E) or not 1 <= warps <= 32 \
            or ctas < 1:
        raise ProfileError(f"profile header fields (events {E}, warps {warps}, CTAs {ctas}, record words {rw}, "
                           f"slot words {sw}) are out of range", rule="buffer")
    if (E, warps) != (table.events_per_warp, table.warps):
        raise ProfileError(f"the buffer was written with {E} events per warp and {warps} warps per CTA, the name "
                           f"table of {table.kernel} says {table.events_per_warp} and {table.warps}: another "
                           "kernel's buffer", rule="names")
    # (0: written by a build from before the fingerprint; nothing to check)
    if w[7] != 0 and _u(w[7]) != table.fingerprint:
        raise ProfileError(f"the buffer's name-table fingerprint {_u(w[7]):#x} is not {table.kernel}'s "
                           f"({table.fingerprint:#x}): another kernel's buffer, or another build's (its event ids "
                           "would name the wrong events)", rule="names")
    slots = min(ctas * warps, (len(w) - HEADER_WORDS) // sw)
    events, overflow, recorded = [], {}, {}
    for slot in range(slots):
        base = HEADER_WORDS + slot * sw
        count = w[base]
        if count < 0:
            raise ProfileError(f"slot {slot} counts {count} events", rule="buffer")
        if count == 0:
            continue
        cta, warp = divmod(slot, warps)
        n = min(count, E)
        recorded[(cta, warp)] = n
        if count > n:
            overflow[(cta, warp)] = count - n
        for i in range(n):
            r = base + SLOT_HEADER_WORDS + i * RECORD_WORDS
            meta, t0, t1, ck = _u(w[r]), w[r + 1], w[r + 2], _u(w[r + 3])
            eid, rid, kind = _field(meta, EVENT_FIELD), _field(meta, ROLE_FIELD), _field(meta, KIND_FIELD)
            if eid >= len(table.events) or rid >= len(table.roles) or kind >= len(KINDS):
                raise ProfileError(f"CTA {cta} warp {warp} record {i}: event id {eid}, role id {rid}, kind {kind} "
                                   f"are not in {table.kernel}'s table ({len(table.events)} events, "
                                   f"{len(table.roles)} roles)", rule="names")
            scope = _field(meta, SCOPE_FIELD)
            events.append(Event(name=table.events[eid], role=table.roles[rid], kind=KINDS[kind],
                                scope=SCOPES[scope] if scope < len(SCOPES) else "warp",
                                sm=_field(meta, SM_FIELD), cta=cta, warp=_field(meta, WARP_FIELD),
                                depth=_field(meta, DEPTH_FIELD), start_ns=t0, end_ns=t1, start_clock=ck >> 32,
                                cycles=ck & 0xFFFFFFFF, seq=i))
    return Profile(table, events, overflow, recorded, ctas, max(0, ctas - slots // warps))


# --------------------------------------------------------------------------- validation

_PHASES = {"X", "i", "I", "b", "e", "M", "B", "E"}


def check_trace(trace) -> None:
    """Raises ProfileError unless `trace` is Chrome trace-event JSON a viewer
    loads as meant: the object form, typed fields per phase, names for every
    process and thread used, complete slices properly nested per thread,
    async begin/end pairs matched, no NaN or infinity."""
    def bad(msg):
        raise ProfileError(f"trace: {msg}", rule="trace")
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        bad("not an object with a traceEvents list")
    try:
        json.dumps(trace, allow_nan=False)
    except (TypeError, ValueError) as e:
        bad(f"not JSON-serializable ({e})")
    named_p, named_t, used = set(), set(), set()
    slices, spans = {}, {}
    num = (int, float)
    for i, ev in enumerate(trace["traceEvents"]):
        if not isinstance(ev, dict):
            bad(f"event {i} is {type(ev).__name__}")
        ph = ev.get("ph")
        if ph not in _PHASES:
            bad(f"event {i} has phase {ph!r}")
        if not isinstance(ev.get("name"), str) or not ev["name"]:
            bad(f"event {i} has no name")
        for k in ("pid", "tid"):
            if isinstance(ev.get(k), bool) or not isinstance(ev.get(k), int):
                bad(f"event {i} ({ev['name']}) has {k} {ev.get(k)!r}")
        if ph == "M":
            if not isinstance(ev.get("args"), dict):
                bad(f"metadata event {i} has no args")
            if ev["name"] == "process_name":
                named_p.add(ev["pid"])
            elif ev["name"] == "thread_name":
                named_t.add((ev["pid"], ev["tid"]))
            if ev["name"] in ("process_name", "thread_name") and not isinstance(ev["args"].get("name"), str):
                bad(f"metadata event {i} names nothing")
            continue
        ts = ev.get("ts")
        if isinstance(ts, bool) or not isinstance(ts, num) or ts < 0:
            bad(f"event {i} ({ev['name']}) has ts {ts!r}")
        used.add((ev["pid"], ev["tid"]))
        if "args" in ev and not isinstance(ev["args"], dict):
            bad(f"event {i} has args {type(ev['args']).__name__}")
        if ph == "X":
            d = ev.get("dur")
            if isinstance(d, bool) or not isinstance(d, num) or d < 0:
                bad(f"slice {i} ({ev['name']}) has dur {d!r}")
            slices.setdefault((ev["pid"], ev["tid"]), []).append((ts, ts + d, ev["name"]))
        elif ph in ("i", "I"):
            if ev.get("s", "t") not in ("t", "p", "g"):
                bad(f"instant {i} has scope {ev.get('s')!r}")
        elif ph in ("b", "e"):
            if "id" not in ev or not isinstance(ev.get("cat"), str):
                bad(f"async event {i} ({ev['name']}) needs an id and a cat")
            key = (ev["cat"], ev["id"], ev["pid"])
            if ph == "b":
                if key in spans:
                    bad(f"async id {ev['id']} begins twice")
                spans[key] = ts
            else:
                if key not in spans or spans[key] is None:
                    bad(f"async id {ev['id']} ends without a begin")
                if ts < spans[key]:
                    bad(f"async id {ev['id']} ends before it begins")
                spans[key] = None
    for p, t in sorted(used):
        if p not in named_p:
            bad(f"process {p} has no process_name")
        if (p, t) not in named_t:
            bad(f"thread {t} of process {p} has no thread_name")
    open_spans = [k for k, v in spans.items() if v is not None]
    if open_spans:
        bad(f"async id {open_spans[0][1]} never ends")
    eps = 1e-6
    for (p, t), ss in slices.items():
        ss.sort(key=lambda x: (x[0], -(x[1] - x[0])))
        stack = []
        for s, e, name in ss:
            while stack and stack[-1][1] <= s + eps:
                stack.pop()
            if stack and e > stack[-1][1] + eps:
                bad(f"slice {name!r} [{s}, {e}] on process {p} thread {t} overlaps {stack[-1][2]!r} "
                    f"[{stack[-1][0]}, {stack[-1][1]}] without nesting")
            stack.append((s, e, name))
