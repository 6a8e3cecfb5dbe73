"""The GEMM's ring protocol, model-checked: every interleaving of the
producer, the TMA loads (completing in any order), the quantizing warps
(x_scale="fused") and the consumer warpgroups, with mbarriers that wait by
phase parity as the hardware does (a wait for parity P passes while the
barrier's completed-phase count is odd when P is even, and the reverse).

A run fails if a reader takes a slot's data from another step (a parity wait
that passed a lap early) or if no one can move before the end (a hang). The
GPU showed the fused protocol's first per-warp form hang (16384 x 16384, M =
1); these are the designs behind the kernel's `_quantize_stages` and `kwg`,
small enough to explore exhaustively."""

import pytest


class Ring:
    """One design: S slots, T steps, Q quantizing warps that wait for every
    step and all arrive on xready ("all"), that wait only for their own
    steps and arrive alone ("own"), or none (Q = 0), and C consumer
    warpgroups taking alternate steps (kwg: C = 2) of each segment (split
    K / stream K: `segments`, lengths summing to T), all of them past a
    segment before any starts the next when `barrier` (the kernel's
    _sum_warpgroups)."""

    def __init__(self, S, T, Q=0, quantizers="all", C=1, segments=None, barrier=True):
        self.S, self.T, self.Q, self.mode, self.C = S, T, Q, quantizers, C
        self.xcount = Q if quantizers == "all" else 1
        self.barrier = barrier
        # each consumer's steps in order, as (step, segment)
        self.steps = [[] for _ in range(C)]
        t0 = 0
        for k, n in enumerate(segments or [T]):
            for g in range(C):
                self.steps[g] += [(t, k) for t in range(t0 + g, t0 + n, C)]
            t0 += n
        assert t0 == T

    def start(self):
        S = self.S
        # producer step, loads in flight, slot data (step, landed), full / xready / empty phase counts,
        # xready arrivals pending, e4m3 slot (step), quantizer steps, consumer steps
        return (0, frozenset(), ((-1, True),) * S, (0,) * S, (0,) * S, (0,) * S, (-1,) * S, (0,) * S,
                (0,) * self.Q, (0,) * self.C)

    @staticmethod
    def passes(count, parity):
        return count % 2 != parity

    def moves(self, st):
        """(what, next state or an error string) of each move that can happen in st."""
        p, flight, data, full, xr, xpend, xq, empty, qs, cs = st
        S, T = self.S, self.T
        if p < T and self.passes(empty[p % S], (p // S + 1) % 2):  # producer_acquire, then the loads
            i = p % S
            yield "issue", (p + 1, flight | {p}, _set(data, i, (p, False)), full, xr, xpend, xq, empty, qs, cs)
        for t in flight:  # a load lands (any order): the full barrier's phase completes
            i = t % S
            yield "land", (p, flight - {t}, _set(data, i, (t, True)), _set(full, i, full[i] + 1), xr, xpend, xq,
                           empty, qs, cs)
        for w, t in enumerate(qs):
            if t >= T:
                continue
            i, lap = t % S, t // S
            own = t % self.Q == w
            if self.mode == "own" and not own:
                yield "skip", (p, flight, data, full, xr, xpend, xq, empty, _set(qs, w, t + 1), cs)
                continue
            if not self.passes(full[i], lap % 2):
                continue
            nxq = xq
            if own:  # converts the slot: it must hold this step's landed loads
                if data[i] != (t, True):
                    yield "quantize", f"warp {w} converted step {t} from slot {i} holding {data[i]}"
                    continue
                nxq = _set(xq, i, t)
            pend = xpend[i] + 1
            nxr, npend = (xr, _set(xpend, i, pend)) if pend < self.xcount else (_set(xr, i, xr[i] + 1),
                                                                                  _set(xpend, i, 0))
            yield "convert", (p, flight, data, full, nxr, npend, nxq, empty, _set(qs, w, t + 1), cs)
        for g, j in enumerate(cs):
            if j >= len(self.steps[g]):
                continue
            t, k = self.steps[g][j]
            if self.barrier and any(self.steps[h][cs[h]][1] < k for h in range(self.C) if cs[h] < len(self.steps[h])):
                continue  # another warpgroup is still in an earlier segment
            i, lap = t % S, t // S
            if not self.passes(full[i], lap % 2) or (self.Q and not self.passes(xr[i], lap % 2)):
                continue
            got = xq[i] if self.Q else (data[i][0] if data[i][1] else None)
            if got != t:
                yield "consume", f"consumer {g} took step {t} from slot {i} holding step {got}"
                continue
            yield "release", (p, flight, data, full, xr, xpend, xq, _set(empty, i, empty[i] + 1), qs,
                              _set(cs, g, j + 1))

    def check(self, limit=2_000_000):
        """None if every interleaving ends with all steps consumed, else what went wrong."""
        seen, todo = set(), [self.start()]
        while todo:
            st = todo.pop()
            if st in seen:
                continue
            seen.add(st)
            if len(seen) > limit:
                raise RuntimeError("state space too large")
            nxt = list(self.moves(st))
            for what, s2 in nxt:
                if isinstance(s2, str):
                    return s2
                todo.append(s2)
            if not nxt and not all(j >= len(self.steps[g]) for g, j in enumerate(st[9])):
                return f"hang: producer at {st[0]}, quantizers at {st[8]}, consumers at {st[9]}"
        return None


def _set(t, i, v):
    return t[:i] + (v,) + t[i + 1:]


def _steps(S):
    """Steps enough for two laps and more of the ring (of its first slots past 6 stages: the
    state space grows fast)."""
    return 2 * S + 3 if S <= 6 else S + 4


@pytest.mark.parametrize("S", [2, 3, 4, 5, 6, 8])
def test_every_quantizing_warp_waits_for_every_stage(S):
    """The kernel's protocol: three warps, each converting every third
    stage, all waiting for every stage and all arriving on its xready."""
    assert Ring(S, _steps(S), Q=3, quantizers="all").check() is None


@pytest.mark.parametrize("S", [2, 4, 5, 8])
def test_warps_waiting_only_for_their_own_stages_convert_a_lap_early(S):
    """The form that hung on the GPU: a warp waiting only for its own
    stages finds a slot whose previous lap is still landing (loads complete
    out of order) and its parity wait passes. With three stages each warp's
    own previous step is the slot's previous lap, so that ring escapes."""
    err = Ring(S, _steps(S), Q=3, quantizers="own").check()
    assert err is not None and "converted step" in err, err
    assert Ring(3, 9, Q=3, quantizers="own").check() is None


@pytest.mark.parametrize("S", [2, 3, 4, 5])
def test_one_consumer_warpgroup_takes_any_ring(S):
    assert Ring(S, 2 * S + 3).check() is None


@pytest.mark.parametrize("S,ok", [(2, True), (4, True), (6, True), (3, False), (5, False)])
def test_alternate_k_warpgroups_need_an_even_ring(S, ok):
    """kwg: warpgroup g takes steps g, g + 2, ...; with an odd ring a slot's
    previous lap was the other warpgroup's, and a wait can pass on it."""
    err = Ring(S, 2 * S + 3, C=2).check()
    assert (err is None) == ok, err
    if not ok:
        assert "holding step" in err


@pytest.mark.parametrize("S", [2, 4])
def test_alternate_k_warpgroups_meet_between_segments(S):
    """Segments of odd length (split K, stream K) restart the alternation,
    so a warpgroup's steps change parity at a boundary: the even ring alone
    does not keep its slots its own. The barrier at the end of each segment
    (both warpgroups past every wait of it) does."""
    segs = [3, 3, 2 * S - 1]
    assert Ring(S, sum(segs), C=2, segments=segs).check() is None
    err = Ring(S, sum(segs), C=2, segments=segs, barrier=False).check()
    assert err is not None and "holding step" in err, err
