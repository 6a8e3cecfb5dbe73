"""In-kernel profiling in the DSL: a disabled Profiler builds nothing (the
same IR and PTX as the kernel without the calls), an enabled one reads
%globaltimer and %clock64 and writes its warp's slot of the buffer behind
bounds checks, its name table travels with the IR and the saved artifact,
misuse is a typed build error; the traced examples compile."""

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import line_of  # noqa: E402
from helpers import REPO  # noqa: E402

import nvtma  # noqa: E402
from nvtma import dsl, lang, profile  # noqa: E402

F32 = dsl.Tensor("f32", (None,))
BUF = dsl.Tensor("i64", (None,))
E = 16


@dsl.kernel(block=(128,))
def traced(x: dsl.Tensor("f32", (None,)), *prof, calls=True, enabled=None, scope="warp"):
    if calls:
        p = profile.Profiler(prof[0] if prof else None, events_per_warp=E, enabled=enabled, scope=scope)
    n = x.shape[0]
    with lang.WarpRole(0):
        if calls:
            with p.role("producer"), p.range("loop"):
                for i in dsl.range(n):
                    if calls:
                        with p.range("body"):
                            x[i] = x[i] * 2.0
                        p.mark("tick")
        else:
            for i in dsl.range(n):
                x[i] = x[i] * 2.0
    if calls:
        s = p.start("span", role="all")
        p.push("pushed")
    with dsl.if_(dsl.thread_idx() == 5):
        x[0] = x[0] + 1.0
    if calls:
        p.pop("pushed")
        p.end(s)  # mark: last-line


def _ir(built):
    """The IR without source locations (the kernel's lines differ between the variants)."""
    from nvtma import ir
    with ir.Context():
        return ir.Module.parse(built.ir).operation.get_asm(enable_debug_info=False)


def _ptx(types, **consts):
    return nvtma.compile(traced.build(types, **consts).ir, cache=False).ptx


def test_disabled_profiler_builds_nothing():
    # no buffer: the Profiler is off; the IR and PTX are the kernel's without the calls
    off, none = traced.build([F32], calls=True), traced.build([F32], calls=False)
    assert _ir(off) == _ir(none)
    assert _ptx([F32], calls=True) == _ptx([F32], calls=False)
    # a buffer passed but enabled=False: the same PTX as no calls with the same parameters
    assert _ptx([F32, BUF], calls=True, enabled=False) == _ptx([F32, BUF], calls=False)
    assert "nvtma_profile" not in off.ir
    # and the enabled build does differ (the comparison above could fail)
    assert _ptx([F32, BUF], calls=True) != _ptx([F32, BUF], calls=False)


def test_enabled_profiler_reads_timers_and_writes_behind_bounds_checks():
    ptx = _ptx([F32, BUF])
    assert ptx.count("%globaltimer") >= 2 and ptx.count("%clock64") >= 2
    assert "st.global.v2.b64" in ptx          # a record: two 16-byte stores
    assert "elect.sync" in ptx and "bar.warp.sync" in ptx
    # the buffer is parameters 5-9 (allocated, aligned, offset, size, stride): its size bounds every slot
    size = re.findall(r"ld\.param\.b64\s+(%rd\d+), \[traced_param_8\];", ptx)
    assert size, "the buffer's size is not read"
    assert re.search(rf"setp\.\w+\.s64\s+%p\d+, (%rd\d+, {size[0]}|{size[0]}, %rd\d+);", ptx), \
        "no bounds check against the buffer's size"
    # the per-warp count against events_per_warp (n < 16, as n > 15), in 32 bits
    assert re.search(rf"setp\.(gt|ge|lt|le)\.[su]32\s+%p\d+, %r\d+, ({E - 1}|{E});", ptx)
    # the header's magic word (stored as one 64-bit or two 32-bit halves)
    m = profile.MAGIC
    assert str(m) in ptx or (str(m & 0xFFFFFFFF) in ptx and str(m >> 32) in ptx)
    # the counters live in shared memory
    assert "st.shared.b32" in ptx and re.search(r"ld\.shared\.(s|b|u)32", ptx)


def test_an_event_writes_one_record_and_the_count_is_written_once_at_the_end():
    on, off = _ptx([F32, BUF]), _ptx([F32, BUF], calls=False)
    # 16-byte stores only: the header (4), the count (1, once per warp), two per
    # event site (5: the ranges loop and body, the mark, the pop, the span's end)
    assert on.count("st.global.v2.b64") - off.count("st.global.v2.b64") == 4 + 1 + 2 * 5
    # no int64 word split in two 4-byte stores (of a 64-bit register's halves or
    # of constants): the 4-byte stores left are the kernel's own f32 ones
    split = re.findall(r"st\.global\.b32\s+\[[^\]]+\], (?:%rd\d+|-?\d+);", on)
    assert not split, split
    # the count: the last thing the kernel does, after a warp sync, behind the
    # slot's bounds check
    from nvtma import ir
    with ir.Context():
        m = ir.Module.parse(traced.build([F32, BUF]).ir)
        func = next(op for op in m.body.operations[0].regions[0].blocks[0].operations
                    if op.operation.name == "gpu.func")
        body = func.regions[0].blocks[0]
        ops = [op.operation.name for op in body.operations]
        assert ops[-4:] == ["nvvm.bar.warp.sync", "nvvm.elect.sync", "scf.if", "gpu.return"], ops[-6:]
        flush = body.operations[len(ops) - 2].operation.get_asm(enable_debug_info=False)
    assert re.search(r"vector\.store %\w+, %arg1\[%\w+\] \{alignment = 16 : i64\} : memref<\?xi64>, vector<2xi64>",
                     flush), flush


@dsl.kernel(block=(32,))
def one_range(x: dsl.Tensor("f32", (None,)), b: dsl.Tensor("i64", (None,)), *, nested):
    p = profile.Profiler(b, events_per_warp=4)
    with p.range("r"):
        x[0] = x[0] + 1.0
        if nested:
            p.mark("m")


def test_each_event_takes_its_slot_with_one_shared_atomic_after_its_timer():
    # the event's slot: one atom.shared.add on the warp's count by the recording lane, after the event's timer;
    # no lane reads the count before (the kernel's end reads it once, after bar.warp.sync, to store it)
    def order(nested):
        ptx = nvtma.compile(one_range.build(nested=nested).ir, cache=False).ptx
        return [m.group(0) for m in re.finditer(r"%globaltimer|atom\.shared\.\w+\.\w+|ld\.shared\.\w+|bar\.warp\.sync",
                                                ptx)]
    atom, ld, sync = "atom.shared.add.u32", "ld.shared.b32", "bar.warp.sync"
    assert order(False) == [sync, "%globaltimer", "%globaltimer", atom, sync, ld]
    assert order(True) == [sync, "%globaltimer", "%globaltimer", atom, "%globaltimer", atom, sync, ld]


def test_the_end_of_kernel_code_has_the_kernels_location():
    # built by the kernel builder after the function returned: located at the
    # function's last line, not at whoever called build()
    k = dsl.kernel(block=(128,))(traced.fn)
    text = k.build([F32, BUF]).ir  # mark: build-call
    assert f'test_profile.py":{line_of(__file__, "mark: build-call")}:' not in text
    assert f'test_profile.py":{line_of(__file__, "mark: last-line")}:' in text


def test_warpgroup_scope_records_from_one_warp_per_warpgroup():
    ir = traced.build([F32, BUF], scope="warpgroup").ir
    assert "arith.remsi" in ir or "arith.remui" in ir or "arith.andi" in ir  # warp % 4
    ptx = _ptx([F32, BUF], scope="warpgroup")
    assert "%globaltimer" in ptx
    assert profile.event_table(traced.build([F32, BUF], scope="warpgroup")).scope == "warpgroup"


def test_name_table_travels_with_the_ir_and_the_artifact(tmp_path):
    built = traced.build([F32, BUF])
    t = profile.event_table(built, "traced")
    assert t.events == ("loop", "body", "tick", "span", "pushed")   # ids in first-use order
    assert t.roles == ("", "producer", "all") and t.events_per_warp == E and t.warps == 4
    c = nvtma.compile(built.ir, cache=False)
    c.save(tmp_path / "a")
    from nvtma import runtime
    assert profile.event_table(runtime.load(tmp_path / "a"), "traced") == t
    assert profile.event_table(c) == t


@dsl.kernel(block=(64,))
def odd_names(x: dsl.Tensor("i64", (None,))):
    p = profile.Profiler(x, events_per_warp=2)
    p.mark('a "quoted" \\ naïve name')


def test_names_with_quotes_and_unicode_round_trip():
    assert profile.event_table(odd_names.build()).events == ('a "quoted" \\ naïve name',)


# --------------------------------------------------------------------------- misuse

@dsl.kernel(block=(64,))
def misuse(x: dsl.Tensor("f32", (None,)), b: dsl.Tensor("i64", (None,)), *, case):
    if case == "dtype":
        profile.Profiler(x)  # mark: dtype
    elif case == "nested":
        with dsl.if_(dsl.thread_idx() < 32):
            profile.Profiler(b)  # mark: nested
    elif case == "twice":
        profile.Profiler(b)
        profile.Profiler(b)  # mark: twice
    else:
        p = profile.Profiler(b)
        if case == "pop-empty":
            p.pop()  # mark: pop-empty
        elif case == "pop-name":
            p.push("a")
            p.pop("b")  # mark: pop-name
        elif case == "escape":
            with dsl.if_(dsl.thread_idx() < 32):
                s = p.start("s")
            p.end(s)  # mark: escape
        elif case == "twice-ended":
            s = p.start("s")
            p.end(s)
            p.end(s)  # mark: twice-ended
        elif case == "name":
            p.mark("")  # mark: name
        elif case == "scope":
            p.mark("m", scope="cta")  # mark: scope
        elif case == "role":
            with p.role(7):  # mark: role
                pass


@pytest.mark.parametrize("case,words", [
    ("dtype", "1-D int64 or uint64 global tensor"), ("nested", "top level"), ("twice", "one Profiler"),
    ("pop-empty", "no pushed range"), ("pop-name", "closes 'a'"), ("escape", "outside the block"),
    ("twice-ended", "ended twice"), ("name", "printable string"), ("scope", "'warp' or 'warpgroup'"),
    ("role", "role name 7")])
def test_misuse_is_a_build_error_at_the_users_line(case, words):
    with pytest.raises(dsl.KernelBuildError) as e:
        misuse.build(case=case)
    assert e.value.rule == "profile", str(e.value)
    assert words in str(e.value)
    assert e.value.where == f"{__file__}:{line_of(__file__, f'mark: {case}')}", str(e.value)


@dsl.kernel(block=(32, 2))
def two_d(b: dsl.Tensor("i64", (None,))):
    profile.Profiler(b)  # mark: two-d


def test_two_dimensional_blocks_are_refused():
    with pytest.raises(dsl.KernelBuildError) as e:
        two_d.build()
    assert e.value.rule == "profile" and "1-D block" in str(e.value)
    assert e.value.where == f"{__file__}:{line_of(__file__, 'mark: two-d')}"


def test_bad_constructor_arguments():
    assert lang.Profiler is profile.Profiler
    for kw in [dict(events_per_warp=0), dict(events_per_warp=True), dict(scope="block")]:
        with pytest.raises(dsl.KernelBuildError) as e:
            profile.Profiler(None, **kw)
        assert e.value.rule == "profile"


# --------------------------------------------------------------------------- the traced examples

def _run(args, timeout=300):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    p = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=timeout)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_ws_pipeline_profile_compiles_and_saves(tmp_path):
    out = _run([str(REPO / "examples" / "ws_pipeline.py"), "--profile", str(tmp_path / "t.json"), "--aot",
                str(tmp_path / "a")])
    assert "profile: events tile, acquire, issue, wait, store for roles producer, consumer, 64 per warp" in out
    from nvtma import runtime
    mod = runtime.load(tmp_path / "a")
    assert profile.event_table(mod, "ws_copy").roles == ("", "producer", "consumer")
    assert "%globaltimer" in mod.ptx
    # one slice per tile: only "tile"
    out = _run([str(REPO / "examples" / "ws_pipeline.py"), "--profile", str(tmp_path / "t.json"), "--per-tile"])
    assert "profile: events tile for roles producer, consumer" in out


def test_gemm_traced_variant():
    from nvtma.kernels import gemm
    sp = gemm.gemm_spec(16, 128, 2, profile=128)
    t = profile.event_table(sp)
    # (a PDL build, the default: the producer's W prefetch and its griddepcontrol.wait too)
    assert t.events == ("prefetch", "grid_wait", "acquire", "load", "wait", "mma", "epilogue")
    assert t.roles == ("", "producer", "consumer")
    assert profile.event_table(gemm.gemm_spec(16, 128, 2, profile=128, pdl=False)).events == \
        ("acquire", "load", "wait", "mma", "epilogue")
    assert t.scope == "warpgroup" and t.warps == 12 and t.events_per_warp == 128
    plain = gemm.gemm_spec(16, 128, 2)
    assert "nvtma_profile" not in plain.ir and "profile" not in plain.consts
    assert sp.smem == plain.smem  # the counters are static shared memory: the dynamic layout is kept
    assert len(sp.kernel.signature()) == 6 and len(sp.param_types) == len(plain.param_types) + 1
    ptx = nvtma.compile(sp.ir, cache=False).ptx
    assert ptx.count("%globaltimer") >= 2 and "wgmma.mma_async" in ptx
    # block scales: each stage's promotion is an event too
    assert "promote" in profile.event_table(gemm.gemm_spec(16, 128, 2, profile=128, w_scale="block")).events


def test_gemm_clock_sums_in_registers():
    from nvtma.kernels import gemm
    sp, plain = gemm.gemm_spec(16, 128, 2, profile="clocks"), gemm.gemm_spec(16, 128, 2)
    assert "nvtma_profile" not in sp.ir and len(sp.param_types) == len(plain.param_types) + 1
    ptx = nvtma.compile(sp.ir, cache=False).ptx
    # clock reads in the loops, no memory access per event: the sums are added into the buffer once per
    # warpgroup (producer: blocked, x_load, grid_wait and the span; consumers: wait, mma, after_mma, epilogue,
    # span), each by one 64-bit reduction (the kernel as built has none)
    assert ptx.count("%clock64") >= 8 and "%globaltimer" not in ptx
    adds = re.findall(r"(?:red|atom)\.global\.add\.u64", ptx)
    assert len(adds) == len(gemm.CLOCKS["producer"]) + 1 + len(gemm.CLOCKS["consumer"]) + 1, adds
    assert not re.findall(r"(?:red|atom)\.global\.add\.u64", nvtma.compile(plain.ir, cache=False).ptx)
    for bad in (0, True, "total", 1.5):
        with pytest.raises(ValueError, match="profile="):
            gemm.gemm_spec(16, 128, 2, profile=bad)
    with pytest.raises(ValueError, match="clocks"):
        gemm.gemm_spec(16, 128, 2, profile="clocks", diag="stream_only")


def test_profile_gemm_example_compiles(tmp_path):
    out = _run([str(REPO / "examples" / "profile_gemm.py"), "--m", "8", "--n", "4096", "--k", "4096",
                "--profile", str(tmp_path / "g.json"), "--aot", str(tmp_path / "a")])
    assert "traced events prefetch, grid_wait, acquire, load, wait, mma, epilogue (roles producer, consumer)" in out
    out = _run([str(REPO / "examples" / "profile_gemm.py"), "--m", "8", "--n", "4096", "--k", "4096",
                "--from", str(tmp_path / "a")])
    assert "traced events prefetch, grid_wait, acquire, load, wait, mma, epilogue" in out


@dsl.kernel(block=(64,))
def split_warps(x: dsl.Tensor("f32", (None,)), b: dsl.Tensor("i64", (None,))):
    """Events in both branches of a condition that splits each warp (lanes 0-15 / 16-31)."""
    p = profile.Profiler(b, events_per_warp=8)
    with dsl.if_(dsl.lane_idx() < 16):
        with p.range("low"):
            x[dsl.thread_idx()] = x[dsl.thread_idx()] + 1.0
    with dsl.else_():
        p.mark("high")


def test_events_in_a_branch_that_splits_a_warp_elect_among_its_active_lanes():
    # elect.sync over all 32 lanes in a half warp waits for the other half forever: the leader is elected
    # among the lanes that run the event (activemask), so each part of the warp records it
    ptx = nvtma.compile(split_warps.build().ir, cache=False).ptx
    masks = re.findall(r"elect\.sync\s+(\S+)\|\S+, (\S+);", ptx)
    # the setup and the end elect over the whole warp (-1); each of the two events by its lanes' activemask
    assert [m for _, m in masks].count("-1") == 2 and len(masks) == 4, masks
    assert ptx.count("activemask.b32") == 2 and len(set(re.findall(r"elect_active (\d+)", ptx))) == 2


def test_events_ending_both_arms_of_a_split_keep_their_own_elections():
    # built from the activemask and elect.sync intrinsics, "b" and "c" compiled alike and LLVM merged their
    # elections past the branch's end, where the warp runs reconverged: one lane of the whole warp recorded
    # one of them, the other was lost. Each site elects with an nvtma.elect_active, whose inline PTX is its
    # own (numbered), so each arm keeps its own; what follows the election may be shared (the slots are taken
    # atomically, lane by lane)
    import profile_cases
    ptx = nvtma.compile(profile_cases.split_tails_spec().ir, cache=False).ptx
    assert ptx.count("activemask.b32") == 3
    assert len(set(re.findall(r"elect_active (\d+)", ptx))) == 3
    assert len(re.findall(r"elect\.sync", ptx)) == 5  # the three sites', the setup's and the end's


def test_only_the_recording_lanes_touch_the_count_and_atomically():
    # each event site's leader (elected among the lanes running it) takes its slot with one atomic add on the
    # warp's count in shared memory and stores nothing there: the parts of a split warp, running interleaved,
    # take slots of their own, and no other lane reads the count (no warp syncs needed around the event)
    from nvtma import ir
    sys.path.insert(0, str(REPO / "examples"))
    import ws_pipeline

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                ops = list(block.operations)
                for i, o in enumerate(ops):
                    yield ops, i, o
                    yield from walk(o)
    for built, sites in ((split_warps.build(), 2), (ws_pipeline.ws_copy.build(ws_pipeline.PROFILED), 6)):
        with ir.Context():
            m = ir.Module.parse(built.ir)
            checked = 0
            for ops, i, o in walk(m.operation):
                if o.operation.name != "nvtma.elect_active":
                    continue  # (the setup's and the end's: elect.sync over the whole converged warp)
                branch = next(x.operation for x in ops[i + 1:] if x.operation.name == "scf.if")
                assert branch.operands[0].owner.name == "nvtma.elect_active"
                body = str(branch)
                assert len(re.findall(r"llvm\.atomicrmw add .*!llvm\.ptr<3>, i32", body)) == 1, body
                assert not re.search(r"memref\.(store|load) .*#gpu\.address_space<workgroup>>", body)
                checked += 1
            assert checked == sites
            # the setup's and the end's warp syncs only: none around the events
            assert len(re.findall(r"nvvm\.bar\.warp\.sync", str(m))) == 2


def test_elect_sync_membermask():
    @dsl.kernel(block=(32,))
    def k(y: dsl.Tensor("i32", (None,)), *, mask):
        with dsl.if_(dsl.elect_sync(mask)):
            y[0] = 1

    @dsl.kernel(block=(32,))
    def one_lane(y: dsl.Tensor("i32", (None,)), *, mask):
        with dsl.if_(dsl.lane_idx() == 0, scope="lane"):
            with dsl.if_(dsl.elect_sync(dsl.Uint32(mask) if mask > 1 else mask)):
                y[0] = 1

    assert "elect.sync" in k.build(mask=0xFFFF).ir and "elect.sync" in one_lane.build(mask=1).ir
    for kern, bad in ((k, 0), (k, 1 << 32), (k, 1.0), (k, True), (one_lane, 0xFFFFFFFF), (one_lane, 3)):
        with pytest.raises(dsl.KernelBuildError, match="membermask") as e:
            kern.build(mask=bad)
        assert e.value.rule == "warp-collective"
