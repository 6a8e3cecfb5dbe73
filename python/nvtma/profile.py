"""In-kernel profiling: timed ranges and marks per warp, with TVM TIRx's IKET names.

    @dsl.kernel(block=(64,))
    def k(x: dsl.Tensor("f16", (None,)), *prof):               # prof: () or (the int64 buffer,)
        p = profile.Profiler(prof[0] if prof else None, events_per_warp=64)
        with lang.WarpRole(0), p.role("producer"):
            for i in dsl.range(n):
                with p.range("acquire"):                         # a slice from entry to exit
                    pipe.producer_acquire(st)
                p.mark("issued")                                 # an instant
    # host: buf = profile.alloc_buffer(grid, block, 64); k(x, buf, grid=grid)
    #       profile.collect(buf, profile.event_table(module, "k")).write_trace("t.json")

One elected lane per warp records (``scope="warpgroup"``: one per
warpgroup; elected among the lanes that run the event together, so in a
branch that splits a warp each part records it, in slots of its own: the
recording lane takes the next slot with a shared-memory atomic on the warp's
count), reading
%globaltimer (ns, comparable across SMs) and %clock64 (cycles, for fine
durations) at both ends. Each warp writes its own slot of
the buffer: a bounded number of records (past them, events are only
counted), and once, at the kernel's end, its count; a record or a slot that
would fall outside the buffer is not written. An event costs its timer reads,
a shared-memory atomic and one 32-byte record: no global count per event.
Event and role names are build-time strings; their ids and the table
(``nvtma_profile`` on the kernel function) are fixed by the build, and the
header's last word is the table's fingerprint (the host refuses another
build's table). Ranges must balance: a push never popped, a span never
ended, a pop in a branch or loop its push is outside of, an end in a loop
its start is outside of are build errors.

A Profiler made with no buffer (or ``enabled=False``) builds nothing: the
kernel's IR and PTX are those of the same kernel without the calls.
Layout and host side: nvtma.profile_report (re-exported here).
"""

from __future__ import annotations

from . import cuda, dsl
from ._lazy import lazy
from .dsl.errors import KernelBuildError, fail, user_op, user_site
from .dsl.numeric import Index, Int32, Int64, Uint32
from .profile_report import (HEADER_WORDS, KINDS, MAGIC, RECORD_WORDS, SCOPES, SLOT_HEADER_WORDS, VERSION,
                             EventTable, Profile, ProfileError, alloc_buffer, buffer_words, check_trace, collect,
                             event_table, event_tables, pack_meta, slot_words)
from .profile_report import ATTRIBUTE, MAX_EVENTS_PER_WARP, MAX_NAMES, MAX_ROLES

ir = lazy("nvtma.ir")
gpu = lazy("nvtma.dialects.gpu")
arith = lazy("nvtma.dialects.arith")
scf = lazy("nvtma.dialects.scf")

__all__ = ["Profiler", "ProfileError", "EventTable", "Profile", "buffer_words", "alloc_buffer", "collect",
           "event_table", "event_tables", "check_trace"]

_MAX_NAME = 128
_COUNTERS = "__nvtma_profile_counters"
_KIND = {k: i for i, k in enumerate(KINDS)}


def _check_name(name, what):
    if not isinstance(name, str) or not 1 <= len(name) <= _MAX_NAME or not name.isprintable():
        fail(f"profile {what} name {name!r}: a printable string of 1-{_MAX_NAME} characters", rule="profile")
    return name


class _Range:
    """What ``Profiler.range`` returns: a with-block timed as one slice."""

    def __init__(self, prof, name, role, scope):
        self.prof, self.name, self.role, self.scope = prof, name, role, scope

    def __enter__(self):
        p = self.prof
        if p.enabled:
            self.open = p.push(self.name, role=self.role, scope=self.scope)
        return self

    def __exit__(self, et, ev, tb):
        p = self.prof
        if p.enabled:
            if et is not None:  # a build error inside: leave the stack as it is, record nothing
                return False
            p.pop(self.name)
        return False


class _Role:
    def __init__(self, prof, name):
        self.prof, self.name = prof, name

    def __enter__(self):
        self.prof._roles_stack.append(self.name)
        return self

    def __exit__(self, *exc):
        self.prof._roles_stack.pop()
        return False


class _Open:
    """A started range: its ids, scope and timer readings, and the block they
    were read in (their uses must be where that block dominates)."""
    __slots__ = ("name", "eid", "rid", "scope", "depth", "t0", "c0", "block", "ended", "where")

    def __init__(self, name, eid, rid, scope, depth, t0, c0, block):
        self.name, self.eid, self.rid, self.scope, self.depth = name, eid, rid, scope, depth
        self.t0, self.c0, self.block, self.ended = t0, c0, block, False
        self.where = user_site()


class Profiler:
    """Records timed events of this kernel into `buffer` (a 1-D int64/uint64
    global tensor parameter sized with ``profile.buffer_words(grid, block,
    events_per_warp)``, 16-byte aligned: ``profile.alloc_buffer`` makes
    one). Make it at the kernel's top level of a 1-D block, where every
    thread runs (each warp zeroes its counter). `scope`: who records by
    default, one lane of every warp ("warp") or of the first warp of every
    warpgroup ("warpgroup"); each call may override it."""

    def __init__(self, buffer=None, *, events_per_warp=64, scope="warp", enabled=None):
        self.enabled = (buffer is not None) if enabled is None else bool(enabled)
        if isinstance(events_per_warp, bool) or not isinstance(events_per_warp, int) or \
                not 1 <= events_per_warp <= MAX_EVENTS_PER_WARP:
            fail(f"events_per_warp {events_per_warp!r}: an int in 1..{MAX_EVENTS_PER_WARP}", rule="profile")
        self.scope = self._check_scope(scope)
        self.events_per_warp = events_per_warp
        self._events = {}
        self._roles = {"": 0}
        self._roles_stack = []
        self._stack = []
        self._spans = []         # start()s, to refuse one never ended at the kernel's end
        if not self.enabled:
            return
        if buffer is None:
            fail("Profiler(enabled=True) needs the buffer (a 1-D int64 global tensor parameter)", rule="profile")
        if not isinstance(buffer, dsl.TensorValue) or buffer.rank != 1 or buffer.space != "global" or \
                buffer.dtype not in (dsl.Int64, dsl.Uint64):
            what = buffer.value.type if isinstance(buffer, dsl.TensorValue) else type(buffer).__name__
            fail(f"the profile buffer is {what}: a 1-D int64 or uint64 global tensor parameter", rule="profile")
        k = dsl.current_kernel()
        if ("profile",) in k.scratch:
            fail("a kernel has one Profiler (its warps' counters and slots are the kernel's)", rule="profile")
        if k.scope or ir.InsertionPoint.current.block != k.entry:
            fail("make the Profiler at the kernel's top level, where every thread runs (each warp zeroes its "
                 "event counter there)", rule="profile")
        if k.block[1] != 1 or k.block[2] != 1:
            fail(f"profiling numbers warps as thread_idx.x // 32: a 1-D block, not {k.block}", rule="profile")
        if k.block[0] % 32:
            # the setup and the end-of-kernel count elect their leader with elect.sync over all 32 lanes,
            # after bar.warp.sync, which a partial warp never completes (and bar.warp.sync's refusal would
            # name a call the user did not write)
            fail(f"profiling records per whole warp: a block of {k.block[0]} threads has a partial warp "
                 "(make it a multiple of 32)", rule="profile")
        k.scratch[("profile",)] = self
        self.k = k
        self.buf = buffer
        self.warps = (k.block[0] + 31) // 32
        self._setup()
        self._publish()

    # ------------------------------------------------------------------ setup
    @user_op
    def _setup(self):
        E, sw = self.events_per_warp, slot_words(self.events_per_warp)
        self.counters = self._counters()
        self.warp = dsl.warp_idx()
        # in 64 bits: a grid may hold more than 2^31 CTAs
        gx, gy, gz = (dsl.grid_dim(d).to(Index) for d in "xyz")
        cta = dsl.block_idx("x").to(Index) + gx * (dsl.block_idx("y").to(Index) + gy * dsl.block_idx("z").to(Index))
        slot = cta * self.warps + self.warp.to(Index)
        self.base = slot * sw + HEADER_WORDS
        self.records = self.base + SLOT_HEADER_WORDS
        words = self.buf.shape[0]
        self.fits = self.base + sw <= words
        self.meta0 = dsl.smid().to(Int64) | (self.warp.to(Int64) << 16)
        with self._leader("warp", converged=True):  # (the kernel's top level: every lane)
            # a warp without a slot starts full: its events write nothing, so
            # that an event's one bounds check is its count against E
            self.counters[self.warp] = dsl.select(self.fits, Int32(0), Int32(E))
            with dsl.if_((cta == 0) & (self.warp == 0) & (words >= HEADER_WORDS)):
                ctas = gx * gy * gz
                # the last word: the name table's fingerprint, set by _publish as names are added (the
                # host refuses to decode the buffer with another build's table)
                i64 = ir.IntegerType.get_signless(64)
                self._fingerprint = arith.ConstantOp(i64, ir.IntegerAttr.get(i64, 0))
                head = [MAGIC, VERSION, E, self.warps, ctas, RECORD_WORDS, sw, Int64(self._fingerprint.result)]
                head = [v.to(Int64) if isinstance(v, dsl.Val) else Int64(v) for v in head]
                for i in range(0, HEADER_WORDS, 2):
                    self.buf.store_vec(dsl.Vector.from_elements(head[i:i + 2], self.buf.dtype), i)
        # the next event's leader may be another lane of the warp
        cuda.warp_sync()
        self.k.at_exit.append(self._flush)

    def _flush(self):
        """The kernel's end (a hook of the kernel builder): each warp writes
        its count, the events it tried to record, once."""
        # a range or span that never ends records nothing: the trace would silently lack it
        for o in self._stack + [o for o in self._spans if not o.ended]:
            what, ender = ("range", "pop()") if o in self._stack else ("span", "end()")
            raise KernelBuildError(f"profile {what} {o.name!r} started here never ends (no {ender} before the "
                                   "kernel's end): it would record nothing", where=o.where, rule="profile")
        cuda.warp_sync()  # the last event's leader may be another lane
        with self._leader("warp", converged=True), dsl.if_(self.fits):
            n = self.counters[self.warp].to(Uint32).to(Int64)
            # the count and the pad word: one 16-byte store
            self.buf.store_vec(dsl.Vector.from_elements([n, Int64(0)], self.buf.dtype), self.base)

    def _counters(self):
        """Each warp's event count: a static shared array, so that profiling
        leaves the kernel's dynamic shared-memory layout as it is."""
        return self.k.static_smem(_COUNTERS, [self.warps], ir.IntegerType.get_signless(32))

    def _publish(self):
        """The name table, as JSON text on the kernel function."""
        t = EventTable(self.k.kernel.name, tuple(self._events), tuple(self._roles), self.events_per_warp,
                       self.warps, self.scope)
        self.k.func.operation.attributes[ATTRIBUTE] = ir.StringAttr.get(t.to_json())
        fp = getattr(self, "_fingerprint", None)
        if fp is not None:
            fp.attributes["value"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), t.fingerprint)

    @staticmethod
    def _check_scope(scope):
        if scope not in SCOPES:
            fail(f"profile scope {scope!r}: 'warp' or 'warpgroup'", rule="profile")
        return scope

    def _ids(self, name, role):
        """(event id, role id) of build-time names, new ones appended to the table."""
        _check_name(name, "event")
        role = role if role is not None else (self._roles_stack[-1] if self._roles_stack else "")
        if role:
            _check_name(role, "role")
        if not self.enabled:
            return 0, 0
        new = False
        if name not in self._events:
            if len(self._events) >= MAX_NAMES:
                fail(f"more than {MAX_NAMES} profile event names in one kernel", rule="profile")
            self._events[name] = len(self._events)
            new = True
        if role not in self._roles:
            if len(self._roles) >= MAX_ROLES:
                fail(f"more than {MAX_ROLES - 1} profile roles in one kernel", rule="profile")
            self._roles[role] = len(self._roles)
            new = True
        if new:
            self._publish()
        return self._events[name], self._roles[role]

    # ------------------------------------------------------------------ recording
    def _leader(self, scope, converged=False):
        """The branch one lane of each recording warp runs: elect.sync among
        the active lanes where several may run (over all 32 where the warp is
        `converged`), directly where one lane is; for "warpgroup", only in the
        warpgroup's first warp."""
        return _Leader(self, scope, converged)

    @staticmethod
    def _now():
        return cuda.globaltimer(), cuda.clock64()

    def _emit(self, kind, eid, rid, depth, scope, t0, c0, t1, c1):
        """One record, in the slot the leader takes from the warp's count."""
        E = self.events_per_warp
        const = pack_meta(role=rid, event=eid, kind=_KIND[kind], depth=min(depth, 15), scope=SCOPES.index(scope))
        with self._leader(scope):
            meta = self.meta0 | Int64(const)
            clocks = (c0 << 32) | ((c1 - c0) & 0xFFFFFFFF)
            # only the leaders touch the count, atomically: the parts of a split warp, running interleaved,
            # each take slots of their own (a plain read and write let one part's record take the other's)
            n = cuda.atomic_add(self.counters, (self.warp,), Int32(1), scope="cta")
            # unsigned: a count of E or more writes nothing, and the record's offset is a zero-extended product
            # (no 64-bit index math); a warp without a slot (its count starts at E) writes nothing even once its
            # count wraps past 2^32
            n = n.to(Uint32)
            with dsl.if_((n < E) & self.fits):
                at = self.records + n.to(Index) * RECORD_WORDS
                self.buf.store_vec(dsl.Vector.from_elements([meta, t0, t1, clocks], self.buf.dtype), at)

    def _reaches(self, block):
        """Whether `block` is the insertion block or encloses it (values read
        there are usable here)."""
        return self._between(block) is not None

    def _between(self, block):
        """The ops whose regions lie between `block` and the insertion block,
        innermost first; None if `block` does not enclose it."""
        b, ops = ir.InsertionPoint.current.block, []
        while b is not None:
            if b == block:
                return ops
            op = b.owner
            if op is None or isinstance(op.opview, gpu.GPUFuncOp):
                return None
            ops.append(op.operation)
            b = op.operation.block
        return None

    # ------------------------------------------------------------------ the API
    def role(self, name):
        """``with prof.role("producer"):`` events inside default to this role."""
        _check_name(name, "role")
        return _Role(self, name)

    def range(self, name, *, role=None, scope=None):
        """``with prof.range("load"):`` one slice from entry to exit (nested ranges nest)."""
        scope = self._check_scope(scope or self.scope)
        self._ids(name, role)
        return _Range(self, name, role, scope)

    @user_op
    def mark(self, name, *, role=None, scope=None):
        """An instant event here (IKET's mark)."""
        scope = self._check_scope(scope or self.scope)
        eid, rid = self._ids(name, role)
        if not self.enabled:
            return
        t, c = self._now()
        self._emit("mark", eid, rid, len(self._stack), scope, t, c, t, c)

    @user_op
    def push(self, name, *, role=None, scope=None):
        """Opens a nested range (IKET's range_push); ``pop`` closes the innermost."""
        scope = self._check_scope(scope or self.scope)
        eid, rid = self._ids(name, role)
        if not self.enabled:
            return None
        o = self._open(name, eid, rid, scope)
        self._stack.append(o)
        return o

    @user_op
    def pop(self, name=None):
        """Closes the innermost pushed range (checked against `name` if given)."""
        if name is not None:
            _check_name(name, "event")
        if not self.enabled:
            return
        if not self._stack:
            fail(f"profile pop({name!r}) with no pushed range open", rule="profile")
        o = self._stack[-1]
        if name is not None and name != o.name:
            fail(f"profile pop({name!r}) closes {o.name!r}, the innermost open range", rule="profile")
        inner = self._between(o.block)
        if inner:  # (None: outside it, which _end refuses)
            # in a branch the range stays open where it is not taken (later ranges would nest in it), in a
            # loop body it ends once per iteration
            fail(f"profile pop() of {o.name!r} inside the body of an {inner[-1].name} that its push is outside of: "
                 "ranges nest, pop in the block of the push", rule="profile")
        self._end(o, "range")
        self._stack.pop()

    @user_op
    def start(self, name, *, role=None, scope=None):
        """Starts a span that need not nest (IKET's range_start); returns the
        handle ``end`` takes."""
        scope = self._check_scope(scope or self.scope)
        eid, rid = self._ids(name, role)
        if not self.enabled:
            return _Open(name, 0, 0, scope, 0, None, None, None)
        o = self._open(name, eid, rid, scope)
        self._spans.append(o)
        return o

    @user_op
    def end(self, handle):
        """Ends a span ``start`` returned (IKET's range_end)."""
        if not isinstance(handle, _Open):
            fail(f"profile end() takes what start() returned, got {type(handle).__name__}", rule="profile")
        if not self.enabled:
            return
        if handle.block is None:
            fail(f"profile end({handle.name!r}): the span was started by a disabled Profiler", rule="profile")
        self._end(handle, "span")

    def _open(self, name, eid, rid, scope):
        t, c = self._now()
        return _Open(name, eid, rid, scope, len(self._stack), t, c, ir.InsertionPoint.current.block)

    def _end(self, o, kind):
        if o.ended:
            fail(f"profile range {o.name!r} ended twice", rule="profile")
        inner = self._between(o.block)
        if inner is None:
            fail(f"profile range {o.name!r} ends outside the block it started in (a branch or loop body that "
                 "does not contain the start): end it where it started or inside that block", rule="profile")
        # (ops whose body may run more than once per run of the code around them)
        loops = [op for op in inner if isinstance(op.opview, (scf.ForOp, scf.WhileOp, scf.ParallelOp, scf.ForallOp))]
        if loops:
            # one start, an end per iteration: as many records, all from the one start time
            fail(f"profile range {o.name!r} ends inside a loop ({loops[-1].name}) that its start is outside of: it "
                 "would end once per iteration", rule="profile")
        t, c = self._now()
        self._emit(kind, o.eid, o.rid, o.depth, o.scope, o.t0, o.c0, t, c)
        o.ended = True

    # TIRx's IKET spellings
    range_push = push
    range_pop = pop
    range_start = start
    range_end = end


class _Leader:
    def __init__(self, prof, scope, converged):
        self.prof, self.scope, self.converged = prof, scope, converged
        self.ctx, self.elected = [], None

    def __enter__(self):
        warps, lanes = dsl.active_threads()
        if self.scope == "warpgroup":
            self._check_warpgroup()
            c = dsl.if_(self.prof.warp % 4 == 0, scope="warp")
            c.__enter__()
            self.ctx.append(c)
        if lanes > 1:
            # among the lanes running together: in a branch that splits a warp, elect.sync over all 32 lanes
            # would wait for the others forever (each part of the warp records the event)
            self.elected = dsl.if_(dsl.elect_sync(None) if self.converged else dsl.elect_active())
            self.elected.__enter__()
            self.ctx.append(self.elected)
        return self

    def _check_warpgroup(self):
        """A warpgroup-scoped event where the known running warps hold no
        warpgroup's first warp would never be recorded."""
        k = self.prof.k
        lo, hi = 0, self.prof.warps
        for w, _, first in k.scope:
            if w is not None and first is not None:
                lo, hi = max(lo, first), min(hi, first + w)
        if lo < hi and not any(x % 4 == 0 for x in range(lo, hi)):
            fail(f"a profile event of scope 'warpgroup' where only warps {lo}..{hi - 1} run: only a warpgroup's "
                 "first warp (warp % 4 == 0) records it, so it would never be recorded (use scope='warp')",
                 rule="profile")

    def __exit__(self, et, ev, tb):
        for c in reversed(self.ctx):
            c.__exit__(et, ev, tb)
        return False
