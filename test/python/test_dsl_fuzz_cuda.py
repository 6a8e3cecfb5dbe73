"""The fuzz campaign's findings in nvtma.cuda and nvtma.lang: each bad input
is a KernelBuildError naming its rule, the value and the user's line (they
were bare TypeErrors, MLIR verifier errors, or PTX that faulted or computed
something else), and the valid forms still build."""

import re

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import assert_names_line, build_error, ptx  # noqa: E402
from nvtma import cpasync, cuda, dsl, lang  # noqa: E402

HERE = __file__


def _kernel(body, *, block=(128,), cluster=None):
    """A kernel whose body is `body(o, h)` (an f32 and an f16 tensor of 64)."""
    @dsl.kernel(block=block, cluster=cluster, name="k")
    def k(o: dsl.Tensor("f32", (64,)), h: dsl.Tensor("f16", (64,))):
        body(o, h)

    return k


def _refused(body, rule, marker, *needles, **kw):
    return _kernel_refused(_kernel(body, **kw), rule, marker, *needles)


def _kernel_refused(kernel, rule, marker, *needles):
    """Building `kernel` is KernelBuildError(rule) with each of `needles`, at the line marked `marker`."""
    err = build_error(kernel, rule)
    for n in needles:
        assert n in str(err), str(err)
    assert_names_line(err, HERE, f"MARK:{marker}")
    return err


def _atomics(text):
    return [ln.strip() for ln in text.splitlines() if re.match(r"\s*(atom|red)\.", ln)]


# --------------------------------------------------------------------------- D5: an index on a pointer

@pytest.mark.parametrize("body,marker", [
    (lambda o, h: cuda.atomic_add(cpasync.address_of(o, [0]), 5, dsl.Float32(1.0)), "ptr-add"),  # MARK:ptr-add
    (lambda o, h: cuda.atomic_max(cpasync.address_of(o, [0]), 5, dsl.Float32(1.0)), "ptr-max"),  # MARK:ptr-max
    (lambda o, h: cuda.red_add(cpasync.address_of(o, [0]), 5, dsl.Float32(1.0)), "ptr-red"),  # MARK:ptr-red
    (lambda o, h: cuda.red_add(cpasync.address_of(o, [0]), 5, dsl.full(2, 1.0)), "ptr-red-v2"),  # MARK:ptr-red-v2
    (lambda o, h: cuda.atomic_cas(cpasync.address_of(o, [0]).value, 5, 0, 1), "ptr-cas"),  # MARK:ptr-cas
], ids=["atomic_add", "atomic_max", "red_add", "red_add-v2", "atomic_cas"])
def test_an_atomic_through_a_pointer_with_an_index_is_refused(body, marker):
    """atomic_add(address_of(o, [0]), 5, v) added into o[0]: the index was dropped."""
    _refused(body, "atomic", marker, "an atomic through a pointer with index 5", "cpasync.address_of(tensor, idx)")


def test_an_atomic_through_a_pointer_takes_the_element_address_of_address_of():
    k = _kernel(lambda o, h: cuda.atomic_add(cpasync.address_of(o, [5]), None, dsl.Float32(1.0)))
    assert any(re.search(r"\.add\.f32\s.*\[%rd\d+\+20\]", a) for a in _atomics(ptx(k))), _atomics(ptx(k))


# --------------------------------------------------------------------------- D6: alignment through address_of

@pytest.mark.parametrize("body,marker,message", [
    (lambda o, h: cuda.atomic_add(cpasync.address_of(h, [1]), None, dsl.full(2, dsl.Float16(1.0))),  # MARK:f16x2
     "f16x2", "a packed atomic add at an address 2 bytes off the 4-byte alignment it needs (byte 2"),
    (lambda o, h: cuda.red_add(cpasync.address_of(h, [3]), dsl.full(2, dsl.Float16(1.0))),  # MARK:red-f16x2
     "red-f16x2", "2 bytes off the 4-byte alignment it needs (byte 6"),
    (lambda o, h: cuda.red_add(cpasync.address_of(o, [2]), dsl.full(4, 1.0)),  # MARK:red-v4
     "red-v4", "red_add of Vector<4 x Float32> at an address 8 bytes off the 16-byte alignment it needs (byte 8"),
    (lambda o, h: cuda.red_add(cpasync.address_of(o, [1]), dsl.full(2, 1.0)),  # MARK:red-v2
     "red-v2", "4 bytes off the 8-byte alignment it needs (byte 4"),
], ids=["atomic-f16x2", "red-f16x2", "red-v4-f32", "red-v2-f32"])
def test_vector_atomics_through_a_misaligned_address_of_are_refused(body, marker, message):
    """The same access on the tensor was refused; through address_of(h, [1]) it compiled at byte 2 (a
    misaligned-address fault on the GPU)."""
    _refused(body, "alignment", marker, message)


def _cluster_pointer(dtype="f32"):
    s = lang.SMEMPool().alloc((64,), dtype)
    return cpasync.cluster_address(s, [0], 1)


@pytest.mark.parametrize("body,marker,message", [
    (lambda o, h: cuda.red_add(_cluster_pointer(), dsl.full(4, 1.0)),  # MARK:cluster-red-v4
     "cluster-red-v4", "red_add of f32 x4 through a pointer of address space 7: the vector red forms take a global"),
    (lambda o, h: cuda.atomic_add(_cluster_pointer("f16"), None, dsl.full(2, dsl.Float16(1.0))),  # MARK:cluster-f16x2
     "cluster-f16x2", "packed atomic add of Vector<2 x Float16> through a pointer of address space 7"),
], ids=["red-v4", "atomic-f16x2"])
def test_vector_atomics_through_a_cluster_pointer_are_refused(body, marker, message):
    """A shared::cluster pointer (cluster_address) to red_add's f32 form was cast to a global one: a garbage
    address, no error; the f16x2 form reached the op's verifier ("IR does not verify")."""
    _refused(body, "atomic", marker, message, cluster=(2, 1, 1))


def test_vector_atomics_through_an_aligned_address_of_build():
    def body(o, h):
        cuda.atomic_add(cpasync.address_of(h, [2]), None, dsl.full(2, dsl.Float16(1.0)))
        cuda.red_add(cpasync.address_of(o, [4]), dsl.full(4, 1.0))
    ops = _atomics(ptx(_kernel(body)))
    assert any("atom.gpu.global.add.noftz.f16x2" in a for a in ops), ops
    assert any("red.gpu.global.add.v4.f32" in a for a in ops), ops


# --------------------------------------------------------------------------- D10: static shared memory

@pytest.mark.parametrize("order", ["pool-first", "static-first"])
def test_static_and_pool_shared_memory_together_past_the_cta_limit_are_refused(order):
    """200,000 B of pool and 40,000 B of alloc_static compiled (the launch would ask for more than a CTA has)."""
    def body(o, h):
        pool = lang.SMEMPool()
        if order == "pool-first":
            pool.alloc((200000,), "u8")
            pool.alloc_static((10000,), "f32")  # MARK:static-second
        else:
            pool.alloc_static((10000,), "f32")
            pool.alloc((200000,), "u8")  # MARK:pool-second
    marker = "static-second" if order == "pool-first" else "pool-second"
    err = _refused(body, "smem", marker, "a Hopper CTA gets at most 232448")
    assert "40000" in str(err) and ("200000" in str(err) or "200064" in str(err)), str(err)


def test_a_static_buffer_past_the_cta_limit_is_refused_at_its_line():
    """4 MiB of alloc_static came back from ptxas, with no line."""
    _refused(lambda o, h: lang.SMEMPool().alloc_static((2 ** 20,), "f32"), "smem", "big",  # MARK:big
             "SMEMPool.alloc_static of [1048576] Float32 (4194304 bytes)", "at most 232448")


def test_a_static_buffer_of_index_values_counts_eight_bytes_each():
    """An Index buffer (i64s once lowered) was an AttributeError counting its bytes (MLIR's index type has no
    width; fuzz_dsl seeds 2533, 3450, 3613)."""
    def body(o, h):
        s = lang.SMEMPool().alloc_static((4, 32), dsl.Index)
        s[0, dsl.thread_idx()] = dsl.Index(3)
        o[0] = dsl.Float32(s[0, 1])
    _kernel(body).build()
    _refused(lambda o, h: lang.SMEMPool().alloc_static((30000,), dsl.Index), "smem", "index",  # MARK:index
             "SMEMPool.alloc_static of [30000] Index (240000 bytes)", "at most 232448")


def test_static_and_pool_shared_memory_within_the_cta_limit_build():
    def body(o, h):
        pool = lang.SMEMPool()
        a = pool.alloc((200000,), "u8")
        s = pool.alloc_static((8000,), "f32")
        s[dsl.thread_idx()] = 1.0
        a[dsl.thread_idx()] = 1
        o[0] = s[dsl.thread_idx() + 1]
    _kernel(body).build()


def test_static_shared_memory_of_any_helper_counts_at_the_end_of_the_build():
    """The build's own check counted the pool alone: a static buffer of another helper (the profiler's
    counters) beside a pool near the limit asked the launch for more than a CTA has."""
    def body(o, h):
        lang.SMEMPool().alloc((232000,), "u8")
        dsl.current_kernel().static_smem("__counters", [256], dsl.Int32.mlir_type())
    err = build_error(_kernel(body), "smem")
    assert "needs 233088 bytes of shared memory (232064 dynamic, 1024 static)" in str(err), str(err)


def test_a_bad_pool_swizzle_names_the_users_line():
    """The encoder's TensorMapError came out of SMEMPool.alloc with no line of the user's."""
    _refused(lambda o, h: lang.SMEMPool().alloc((64, 64), "f16", swizzle="bogus"),  # MARK:pool-swizzle
             "argument", "pool-swizzle", "swizzle: 'bogus' is not a Swizzle")


# --------------------------------------------------------------------------- D11: elect_sync(membermask)

def _elect_kernel(elect):
    @dsl.kernel(block=(32,), name="k")
    def k(o: dsl.Tensor("i32", (32,))):
        with dsl.if_(dsl.lane_idx() < 16):
            with dsl.if_(elect(cuda.activemask())):
                o[0] = 1
    return k


@pytest.mark.parametrize("elect", [cuda.elect_sync, lang.elect_sync, dsl.elect_sync], ids=["cuda", "lang", "dsl"])
def test_elect_sync_takes_the_documented_membermask(elect):
    # elect_sync(activemask()) is elect_active: the election among the active lanes as one statement
    text = ptx(_elect_kernel(elect))
    assert re.search(r"activemask\.b32\s+(\S+);\s*elect\.sync\s+\S+\|\S+, \1;", text), text
    assert text == ptx(_elect_kernel(lambda mask: cuda.elect_active()))


@pytest.mark.parametrize("elect", [lambda: dsl.elect_sync(cuda.activemask()), dsl.elect_active, cuda.elect_active],
                         ids=["elect_sync-activemask", "dsl", "cuda"])
def test_elections_ending_both_arms_of_a_split_stay_apart(elect):
    # built from the activemask and elect.sync intrinsics, two elections alike at the end of both arms were
    # merged by LLVM past the branch's end, where the warp runs reconverged: one lane of the whole warp
    # added instead of one of each half. Each is an nvtma.elect_active with inline PTX of its own (what
    # follows may be shared: each half's elected lane runs it)
    @dsl.kernel(block=(32,), name="k")
    def k(o: dsl.Tensor("i32", (32,))):
        with dsl.if_(dsl.lane_idx() < 16):
            with dsl.if_(elect()):
                cuda.atomic_add(o, (0,), 1)
        with dsl.else_():
            with dsl.if_(elect()):
                cuda.atomic_add(o, (0,), 1)
    text = ptx(k)
    assert len(re.findall(r"elect\.sync", text)) == 2 and len(set(re.findall(r"elect_active (\d+)", text))) == 2


def test_elect_sync_without_a_mask_is_unchanged():
    def kernel(elect):
        @dsl.kernel(block=(32,), name="k")
        def k(o: dsl.Tensor("i32", (32,))):
            with dsl.if_(elect()):
                o[0] = 1
        return k
    want = ptx(kernel(dsl.elect_sync))
    assert "elect.sync" in want
    assert ptx(kernel(cuda.elect_sync)) == want
    assert ptx(kernel(lang.elect_sync)) == want


# --------------------------------------------------------------------------- B5/D12: SMEMPool.alloc(align=)

@pytest.mark.parametrize("align,shown", [
    (1000, "1000"), ((1 << 20,), "(1048576,)"), ("x", "'x'"), (200.5, "200.5"), (0, "0"), (-8, "-8"),
    (True, "True"), ("Int32", "Int32("),
], ids=["not-a-power-of-two", "tuple", "str", "float", "zero", "negative", "bool", "run-time"])
def test_smem_alloc_align_is_a_power_of_two(align, shown):
    def body(o, h):
        a = dsl.Int32(256) if align == "Int32" else align
        lang.SMEMPool().alloc((4,), "f32", align=a)  # MARK:align
    _refused(body, "smem", "align", f"SMEMPool.alloc align={shown}", "a power of two")


def test_smem_alloc_takes_a_power_of_two_align():
    seen = []

    def body(o, h):
        pool = lang.SMEMPool()
        pool.alloc((3,), "u8")
        seen.append(pool.alloc((4,), "f32", align=2048).info.offset)
    _kernel(body).build()
    assert seen == [2048]


# --------------------------------------------------------------------------- D9: the scheduler's cluster_size

@pytest.mark.parametrize("cluster", [(3,), None, (2, 2)], ids=["cluster-3", "no-cluster", "cluster-2x2"])
def test_persistent_scheduler_cluster_size_must_divide_the_kernels_clusters(cluster):
    def body(o, h):
        for t in lang.PersistentTileScheduler(100, cluster_size=2):  # MARK:sched
            o[0] = t.i.to(dsl.Float32)
    cl = list(cluster) + [1] * (3 - len(cluster)) if cluster else [1, 1, 1]
    _refused(body, "scheduler", "sched", "cluster_size=2", f"the kernel's clusters are {cl} CTAs", cluster=cluster)


@pytest.mark.parametrize("cluster", [(2,), (4,)])
def test_persistent_scheduler_cluster_size_within_the_clusters_builds(cluster):
    def body(o, h):
        for t in lang.PersistentTileScheduler(100, cluster_size=2):
            o[0] = t.i.to(dsl.Float32)
    _kernel(body, cluster=cluster).build()


# --------------------------------------------------------------------------- B4, B6-B9, C5: typed errors

@pytest.mark.parametrize("body,rule,marker,message", [
    (lambda o, h: cuda.stmatrix(lang.SMEMPool().alloc((64, 64), "bf16"), dsl.lane_idx(), 0, 4096),  # MARK:stm-int
     "stmatrix", "stm-int", "stmatrix registers 4096: a Vector, or a list"),
    (lambda o, h: cuda.stmatrix(lang.SMEMPool().alloc((64, 64), "bf16"), dsl.lane_idx(), 0, None),  # MARK:stm-none
     "stmatrix", "stm-none", "stmatrix registers None"),
    (lambda o, h: cuda.cta_reduce(dsl.Float32(1.0), dsl.Float32),  # MARK:red-type
     "reduce", "red-type", "reduction Float32 (a type)"),
    (lambda o, h: cuda.warp_reduce(dsl.Float32(1.0), lambda a: a),  # MARK:red-arity
     "reduce", "red-arity", "a function of two values"),
    (lambda o, h: cuda.cta_reduce(dsl.Float32(1.0), "prod"),  # MARK:red-name
     "reduce", "red-name", "reduction 'prod'"),
    (lambda o, h: cuda.atomic_add(o, 0, dsl.Float32(1.0), scope=["gpu"]),  # MARK:scope-atomic
     "atomic", "scope-atomic", "atomic scope ['gpu']"),
    (lambda o, h: cuda.atomic_cas(o, 0, 1, 2, scope=["gpu"]),  # MARK:scope-cas
     "atomic", "scope-cas", "atomic scope ['gpu']"),
    (lambda o, h: cuda.red_add(h, 0, dsl.full(2, dsl.Float16(1.0)), scope="planet"),  # MARK:scope-packed
     "atomic", "scope-packed", "atomic scope 'planet'"),
    (lambda o, h: cuda.thread_fence(["gpu"]),  # MARK:scope-fence
     "fence", "scope-fence", "fence scope ['gpu']"),
    (lambda o, h: cuda.fence_proxy_async(["shared::cta"]),  # MARK:space-fence
     "fence", "space-fence", "fence_proxy_async space ['shared::cta']"),
    (lambda o, h: cuda.fmul2_rn(None, None),  # MARK:fmul2
     "type", "fmul2", "fmul2_rn of None: a 2-lane Float32 vector"),
    (lambda o, h: cuda.fadd2_rn(dsl.full(2, 1.0), dsl.Float32(1.0)),  # MARK:fadd2
     "type", "fadd2", "fadd2_rn of Float32("),
    (lambda o, h: cuda.mbarrier_wait(None, 0, 0),  # MARK:mbar
     "mbarrier", "mbar", "mbarrier_wait of None: a lang.MBarrier"),
    (lambda o, h: cuda.printf("%d\n", dsl.full(2, dsl.Int32(1))),  # MARK:printf
     "printf", "printf", "printf argument 0 is Vector<2 x Int32>: a scalar"),
    (lambda o, h: cuda.reduce_add_sync_u32(dsl.full(2, dsl.Uint32(1))),  # MARK:redux
     "type", "redux", "reduce_add_sync_u32 of Vector<2 x Uint32>: a 32-bit integer"),
], ids=["stmatrix-int", "stmatrix-none", "reduce-type", "reduce-one-arg", "reduce-name", "atomic-scope-list",
        "cas-scope-list", "packed-red-scope", "fence-scope-list", "fence-proxy-space-list", "fmul2-none",
        "fadd2-scalar", "mbarrier-wait-none", "printf-vector", "redux-vector"])
def test_bad_helper_arguments_are_typed_build_errors(body, rule, marker, message):
    _refused(body, rule, marker, message)


def test_the_checked_helpers_still_build_their_valid_forms():
    def body(o, h):
        v = cuda.fadd2_rn(cuda.fmul2_rn(cuda.make_float2(o[0], o[1]), cuda.make_float2(o[2], o[3])),
                          cuda.make_float2(1.0, 2.0))
        o[0] = cuda.warp_reduce(v[0], lambda a, b: a + b) + cuda.cta_reduce(v[1], dsl.max)
        cuda.printf("%d %f\n", dsl.thread_idx(), o[0])
        bar = lang.MBarrier(1)
        cuda.mbarrier_wait(bar, 0, 0)
        cuda.thread_fence("cta")
        cuda.fence_proxy_async("global")
    text = ptx(_kernel(body))
    assert "vprintf" in text and "mbarrier.try_wait.parity" in text and "fence.proxy.async.global" in text


# --------------------------------------------------------------------------- setmaxnreg: register budgets

def _roles(*roles, block):
    """A kernel of `block` threads whose warpgroups setmaxnreg: roles are (warpgroup, regs, increase)."""
    def body(o, h):
        for wg, regs, increase in roles:
            with lang.WarpgroupRole(wg, regs=regs, increase=increase):  # MARK:role
                o[dsl.thread_idx() % 64] = 1.0
    return _kernel(body, block=(block,))


def _assembled(kernel):
    """The PTX of `kernel`, assembled (ptxas accepted it); its setmaxnreg counts, in order."""
    import warnings

    import nvtma
    from nvtma.compiler import RegisterBudgetWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegisterBudgetWarning)  # (nvJitLink's ptxas ignores setmaxnreg: C7504)
        text = nvtma.compile(kernel.build().ir, cache=False).ptx
    return text, re.findall(r"setmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+);", text)


BUDGETS = [(128, 256), (256, 256), (257, 168), (384, 168), (512, 128), (520, 96), (640, 96), (768, 80),
           (1024, 64)]


@pytest.mark.parametrize("threads,budget", BUDGETS)
def test_the_register_budget_is_the_one_ptxas_checks_setmaxnreg_dec_against(threads, budget):
    """ptxas (nvJitLink 13.5, ptxas 13.0) refuses a setmaxnreg.dec above the registers a thread starts with
    in a kernel without an inc: "(C7406) setmaxnreg.dec has register count (176) which is larger than the
    largest temporal register count in the program (168)", 65536 over the threads in whole warpgroups, in
    8s. The dec to the budget assembles; PTX with the next count up is refused."""
    from nvtma.compiler import CompileError, ptx_to_cubin
    assert lang.register_budget(threads) == budget
    text, counts = _assembled(_roles((0, budget, False), block=threads))
    assert counts == [("dec", str(budget))]
    if budget < 256:
        bad = re.sub(r"(setmaxnreg\.dec\.sync\.aligned\.u32\s+)\d+", rf"\g<1>{budget + 8}", text)
        with pytest.raises(CompileError, match=rf"C7406.*\({budget}\)"):
            ptx_to_cubin(bad, "sm_90a")


@pytest.mark.parametrize("threads,budget", [b for b in BUDGETS if b[1] < 256])
def test_a_setmaxnreg_dec_above_the_budget_is_refused_at_the_users_role(threads, budget):
    """It was a CompileError from ptxas, naming no line of the user's."""
    err = _refused(lambda o, h: _roles((0, budget + 8, False), block=threads).fn(o, h), "setmaxnreg", "role",
                   f"setmaxnreg.dec to {budget + 8} registers", f"above the {budget} registers",
                   f"{threads}-thread CTA", "C7406", block=(threads,))
    assert f"regs={budget} or less" in str(err)


@pytest.mark.parametrize("order", ["inc-first", "dec-first"])
def test_a_setmaxnreg_dec_above_every_inc_of_the_kernel_is_refused_wherever_the_inc_is(order):
    """With an inc in the kernel, ptxas takes the largest inc as the most a warp holds, before or after the dec
    in the program: at 384 threads (168 at launch) warpgroup 1 down to 40 and up to 104, and warpgroup 0's dec
    to 160 (below what it holds) was a C7406; beside an inc to 232 it assembles."""
    def kernel(inc, dec):
        roles = [(1, 40, False), (1, inc, True), (0, dec, False)]
        return _roles(*(roles if order == "inc-first" else roles[2:] + roles[:2]), block=384)

    err = build_error(kernel(104, 160), "setmaxnreg")
    assert_names_line(err, HERE, "MARK:role")
    assert "setmaxnreg.dec to 160 registers" in str(err) and "above 104, the most any setmaxnreg.inc" in str(err)
    _, counts = _assembled(kernel(232, 160))
    assert sorted(counts) == [("dec", "160"), ("dec", "40"), ("inc", "232")]


def test_setmaxnreg_incs_past_the_budget_and_their_sum_are_not_refused():
    """ptxas takes these (an inc waits at run time until the CTA has the registers): 384 threads, the producer
    at 40 and two consumers at 232 (CUTLASS's split, 64512 registers: all of the CTA's), or an inc to what the
    warps hold (a no-op)."""
    _, counts = _assembled(_roles((0, 40, False), (1, 232, True), (2, 232, True), block=384))
    assert sorted(counts) == [("dec", "40"), ("inc", "232"), ("inc", "232")]
    assert _assembled(_roles((1, 128, True), block=512))[1] == [("inc", "128")]


@pytest.mark.parametrize("case", ["inc-at-launch", "inc-after-dec", "dec-after-dec"])
def test_setmaxnreg_the_wrong_way_from_what_a_warpgroup_holds_is_refused(case):
    """PTX: .inc raises a warp's count from the one it holds and .dec lowers it, the other way undefined, and
    ptxas takes both: the GEMM's one consumer warpgroup raised to 232 in a 256-thread CTA, which starts at 256.
    What a warpgroup holds is followed in build order: the launch's count, then its last role's."""
    roles, block, message = {
        "inc-at-launch": ([(1, 232, True)], 256, "setmaxnreg.inc to 232 registers (regs=232) for warpgroup 1 is "
                          "below the 256 registers its threads hold at launch"),
        "inc-after-dec": ([(1, 40, False), (1, 24, True)], 384, "setmaxnreg.inc to 24 registers (regs=24) for "
                          "warpgroup 1 is below the 40 registers warpgroup 1 holds since the setmaxnreg at "),
        "dec-after-dec": ([(0, 40, False), (0, 104, False)], 384, "setmaxnreg.dec to 104 registers (regs=104) "
                          "for warpgroup 0 is above the 40 registers warpgroup 0 holds since the setmaxnreg at "),
    }[case]
    err = build_error(_roles(*roles, block=block), "setmaxnreg")
    assert_names_line(err, HERE, "MARK:role")
    assert message in str(err), str(err)
    # a role over a range counts for each of its warpgroups
    assert build_error(_roles((0, 40, False), ((0, 2), 24, True), block=384), "setmaxnreg")
    _assembled(_roles((0, 40, False), ((1, 3), 232, True), block=384))


@pytest.mark.parametrize("case", ["warp-role", "in-a-warp", "one-lane", "partial-warpgroup"])
def test_setmaxnreg_where_less_than_a_whole_warpgroup_runs_is_refused(case):
    """PTX: "the same setmaxnreg instruction must be executed by all warps in a warpgroup" (else undefined):
    a warp's role, a warpgroup role inside one warp's or one lane's branch, and the partial last warpgroup of
    a 160-thread block built it."""
    def body(o, h):
        if case == "warp-role":
            with lang.WarpRole(1, regs=40):  # MARK:setmaxnreg-warp-role
                o[0] = 1.0
        elif case == "in-a-warp":
            with dsl.if_(dsl.warp_idx() == 0):
                with lang.WarpgroupRole(0, regs=40):  # MARK:setmaxnreg-in-a-warp
                    o[0] = 1.0
        elif case == "one-lane":
            with dsl.if_(dsl.elect_sync()):
                with lang.WarpgroupRole(0, regs=40):  # MARK:setmaxnreg-one-lane
                    o[0] = 1.0
        else:
            with lang.WarpgroupRole(1, regs=40):  # MARK:setmaxnreg-partial-warpgroup
                o[0] = 1.0

    _refused(body, "setmaxnreg", f"setmaxnreg-{case}", "setmaxnreg (regs=40) must be executed by all 4 warps",
             "lang.WarpgroupRole", block=(160,) if case == "partial-warpgroup" else (128,))
    # the whole first warpgroup of that block may
    assert _assembled(_roles((0, 40, False), block=160))[1] == [("dec", "40")]


# --------------------------------------------------------------------------- fuzz_dsl's "verify" outcomes (s61)
# Each reached an MLIR verifier, which refused it with the whole kernel's IR (rule verify); the DSL names the
# rule and the user's line.

def _verify_gap_kernel(case):
    @dsl.kernel(block=(64,))
    def k(o: dsl.Tensor("u32", (64,)), f: dsl.Tensor("i1", (64,)), p: dsl.Float16):
        t = dsl.thread_idx()
        if case == "red_bool":
            cuda.red_add(f, (t,), True)  # MARK:vg-red_bool
        elif case == "exch_bool":
            cuda.atomic_exch(f, (t,), True)  # MARK:vg-exch_bool
        elif case == "cas_bool":
            cuda.atomic_cas(f, (t,), False, True)  # MARK:vg-cas_bool
        elif case == "ballot_vec":
            o[t] = cuda.ballot_sync(dsl.full(2, 1.0))  # MARK:vg-ballot_vec
        elif case == "all_vec":
            o[t] = cuda.all_sync(dsl.full(4, 1)).to(dsl.Uint32)  # MARK:vg-all_vec
        elif case == "bar_vec":
            o[t] = cuda.syncthreads_and(dsl.full(3, 1.0)).to(dsl.Uint32)  # MARK:vg-bar_vec
        else:
            lang.MBarrier(2, p)  # MARK:vg-mbar_f16
    return k


@pytest.mark.parametrize("case,rule,message", [
    ("red_bool", "atomic", "atomic add on Boolean (i1)"),
    ("exch_bool", "atomic", "atomic exch on Boolean (i1)"),
    ("cas_bool", "atomic", "atomic cas on Boolean (i1)"),
    ("ballot_vec", "type", "a vector (Vector<2 x Float32>) where one Boolean value goes: take a lane"),
    ("all_vec", "type", "a vector (Vector<4 x Float32>) where one Boolean value goes"),
    ("bar_vec", "type", "a vector (Vector<3 x Float32>) where one Int32 value goes"),
    ("mbar_f16", "mbarrier", "MBarrier count Float16(f16): an arrival count is a Python int or a run-time integer"),
])
def test_what_the_verifier_refused_is_refused_at_the_users_line(case, rule, message):
    _kernel_refused(_verify_gap_kernel(case), rule, f"vg-{case}", message)


def test_an_mbarrier_count_known_only_at_run_time_builds():
    """A run-time Int32 arrival count (nvgpu's init takes an index) was a verifier error; it is converted."""
    @dsl.kernel(block=(64,))
    def k(o: dsl.Tensor("u32", (64,)), n: dsl.Int32):
        bar = lang.MBarrier(1, n)
        bar.arrive(0)
        o[dsl.thread_idx()] = cuda.ballot_sync(dsl.thread_idx() < 7)

    text = ptx(k)
    assert "mbarrier.init.shared" in text and "vote.sync.ballot.b32" in text


def _probe_kernel(case):
    @dsl.kernel(block=(128,), cluster=(2,))
    def k(x: dsl.Tensor("f32", (64,)), o: dsl.Tensor("u32", (128,))):
        s = lang.SMEMPool().alloc((64,), "f32")
        bar = lang.TMABar(2)
        rb = bar.remote_view(1).ptr(0)
        dsl.cluster_sync()
        with lang.WarpRole(0):
            if case == "ldg_int":
                cuda.ldg(3, (0,))  # MARK:pr-ldg_int
            elif case == "index_vector":
                cuda.ldg(x, (dsl.full(2, 0),))  # MARK:pr-index_vector
            elif case == "stage_f32":
                cuda.mbarrier_wait(bar, dsl.Float32(0.0), 0)  # MARK:pr-stage_f32
            elif case == "phase_vector":
                cuda.mbarrier_wait(bar, 0, dsl.full(2, 0))  # MARK:pr-phase_vector
            elif case == "rank_f32":
                cpasync.cluster_address(s, [0], dsl.Float32(1.0))  # MARK:pr-rank_f32
            elif case == "read_int":
                cpasync.bulk_wait_group(0, read=3)  # MARK:pr-read_int
            else:
                cpasync.dsmem_store(dsl.full(4, 1.0), cpasync.cluster_address(s, [1], 1), rb)  # MARK:pr-dsmem_v4
    return k


@pytest.mark.parametrize("case,rule,message", [
    ("ldg_int", "index", "ldg of 3: a tensor"),  # (a TypeError from inside nvtma)
    ("index_vector", "index", "index Vector<2 x Float32> of tensor"),  # (the verifier)
    ("stage_f32", "mbarrier", "stage Float32(f32) of a TMABar: a Python int or a run-time integer"),  # (converted)
    ("phase_vector", "mbarrier", "phase Vector<2 x Float32>: a parity"),  # (the verifier)
    ("rank_f32", "cluster", "cluster_address rank Float32(f32): a Python int or a run-time integer"),  # (converted)
    ("read_int", "wait-group", "bulk_wait_group read=3: True or False"),  # (taken as True)
    # (st.async of 16 bytes at byte 4 of the peer's buffer: a misaligned address at run time)
    ("dsmem_v4", "alignment", "dsmem_store of vector<4xf32> at an address 4 bytes off the 16-byte alignment"),
])
def test_helpers_the_fuzzer_did_not_reach_check_their_arguments(case, rule, message):
    _kernel_refused(_probe_kernel(case), rule, f"pr-{case}", message)


def test_dsmem_store_at_aligned_cluster_addresses_and_run_time_stages_build():
    @dsl.kernel(block=(128,), cluster=(2,))
    def k(o: dsl.Tensor("u32", (128,)), st: dsl.Int32):
        s = lang.SMEMPool().alloc((64,), "f32")
        bar = lang.TMABar(2)
        rb = bar.remote_view(1).ptr(0)
        dsl.cluster_sync()
        with lang.WarpRole(0):
            cpasync.dsmem_store(dsl.full(4, 1.0), cpasync.cluster_address(s, [4], dsl.cluster_ctarank() ^ 1), rb)
            cpasync.dsmem_store(dsl.Float32(1.0), cpasync.cluster_address(s, [63], 1), rb)
        bar.wait(st & 1, 0)

    text = ptx(k)
    assert "st.async" in text and "mapa" in text
