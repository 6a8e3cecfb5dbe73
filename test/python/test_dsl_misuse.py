"""Every misuse issue #12 lists (what a CuTe DSL user hit writing nvtma
kernels from the docs) either works now or is a KernelBuildError that
names the rule and the user's line: one test each."""

import re

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import assert_names_line, build_error, folded_stores, ptx  # noqa: E402
import nvtma  # noqa: E402
from nvtma import cpasync, dsl, lang  # noqa: E402

HERE = __file__
G2S = cpasync.CopyBulkTensorTileG2SOp
G2S_MC = cpasync.CopyBulkTensorTileG2SMulticastOp


def test_python_if_on_a_run_time_boolean_is_an_error_naming_the_line():
    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (64,))):
        if dsl.thread_idx() < 3:  # MARK:python-if
            x[0] = 1.0

    err = build_error(k, "python-control-flow")
    assert_names_line(err, HERE, "MARK:python-if")
    assert "decides at build time; use dsl.if_" in str(err)


def test_dynamic_shape_is_a_run_time_value_not_a_sentinel():
    seen = []

    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (None, 64)), y: dsl.Tensor("i64", (2,))):
        seen.append(x.shape)
        y[0] = x.shape[0].to(dsl.Int64)

    ir = k.build().ir
    (rows, cols), = seen
    assert isinstance(rows, dsl.Index) and cols == 64
    assert "memref.dim %arg0" in ir and str(-2 ** 63) not in ir
    assert re.search(r"ld\.param\.b64\s+%rd\d+, \[k_param_3\]", ptx(k))  # the size field of the argument


@pytest.mark.parametrize("count", ["param", "shape"])
def test_persistent_tile_scheduler_takes_a_run_time_count(count):
    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (None,)), n: dsl.Int32, *, count=count):
        total = n if count == "param" else x.shape[0] // 64
        for tile in lang.PersistentTileScheduler(total):
            with dsl.if_(dsl.thread_idx() == 0):
                x[tile.linear] = tile.i.to(dsl.Float32)

    ir = k.build().ir
    assert "scf.for" in ir and "nvvm.read.ptx.sreg.nctaid.x" in ir
    ptx(k)


def test_copy_through_a_descriptor_pointer():
    """cpasync.copy(..., tma_desc_ptr=) copies through a descriptor in memory."""
    @dsl.kernel(block=(32,))
    def k(a: dsl.Tensor("f16", (256, 256)), ws: dsl.Tensor("i8", (128,))):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        s = lang.SMEMPool().alloc_for(ld)
        bar = lang.TMABar(1)
        dsl.barrier()
        with lang.WarpRole(0):
            bar.arrive_expect_tx(0, ld.tile_bytes)
            cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0), tma_desc_ptr=cpasync.address_of(ws))
        bar.wait(0, 0)

    ir = k.build().ir
    assert re.search(r"nvtma\.atom_from_descriptor %\w+ : !llvm\.ptr<1> -> !nvtma\.tma_atom<load, f16", ir)
    assert "cp.async.bulk.tensor.2d" in ptx(k)


def test_address_of_a_global_tensor_is_a_pointer_update_tma_descriptor_lowers():
    @dsl.kernel(block=(32,))
    def k(a: dsl.Tensor("f16", (256, 256)), b: dsl.Tensor("f16", (None, None)), ws: dsl.Tensor("i8", (128,))):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        p = cpasync.address_of(ws)
        with lang.WarpRole(0):
            cpasync.copy_tensormap(ld, p)
            cpasync.update_tma_descriptor(ld, b, p)
            cpasync.fence_tma_desc_release()

    assert "!llvm.ptr<1>" in k.build().ir
    text = ptx(k)
    assert "tensormap.replace.tile.global_address.global.b1024.b64" in text
    assert "tensormap.replace.tile.global_dim.global.b1024.b32" in text


def _multicast(mask_kind):
    @dsl.kernel(block=(32,), cluster=(2, 1, 1))
    def k(a: dsl.Tensor("f16", (256, 256)), m: dsl.Int32, *, mask_kind=mask_kind):
        ld = cpasync.make_tiled_tma_atom(G2S_MC(), a, (64, 64), num_multicast=2)
        s = lang.SMEMPool().alloc_for(ld)
        bar = lang.TMABar(1)
        dsl.cluster_sync()
        mask = {"int": 3, "Int32": dsl.Int32(3), "run-time": m,
                "create": cpasync.create_tma_multicast_mask((2,), (dsl.cluster_ctarank(),), 0)}[mask_kind]
        with lang.WarpRole(0):
            bar.arrive_expect_tx(0, ld.tile_bytes)
            cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0), mcast_mask=mask, cta_rank=dsl.cluster_ctarank())
        bar.wait(0, 0)
        dsl.cluster_sync()

    return k


@pytest.mark.parametrize("mask_kind", ["int", "Int32", "run-time", "create"])
def test_mcast_mask_takes_python_ints_and_int32(mask_kind):
    k = _multicast(mask_kind)
    ir = k.build().ir
    assert re.search(r"nvtma\.copy .* mask %\w+", ir)
    if mask_kind == "int":
        assert "arith.constant 3 : i16" in ir
    if mask_kind == "run-time":
        assert re.search(r"arith\.trunci %arg\d+ : i32 to i16", ir)
    assert "multicast::cluster" in ptx(k)


def test_num_multicast_with_the_non_multicast_op_is_an_error():
    @dsl.kernel(block=(32,), cluster=(2, 1, 1))
    def k(a: dsl.Tensor("f16", (256, 256))):
        cpasync.make_tiled_tma_atom(G2S(), a, (64, 64), num_multicast=2)  # MARK:num-multicast

    err = build_error(k, "multicast")
    assert_names_line(err, HERE, "MARK:num-multicast")
    assert "needs CopyBulkTensorTileG2SMulticastOp" in str(err)


def test_a_multicast_tile_its_ctas_do_not_cover_is_an_error():
    """1024 rows over 2 CTAs would be slices of 512, but a box holds 256
    rows: the CTAs' boxes would leave half the tile unloaded."""
    @dsl.kernel(block=(32,), cluster=(2, 1, 1))
    def k(a: dsl.Tensor("f16", (2048, 256))):
        cpasync.make_tiled_tma_atom(G2S_MC(), a, (1024, 64), num_multicast=2)  # MARK:slice

    err = build_error(k, "atom")
    assert_names_line(err, HERE, "MARK:slice")
    assert "multicast-slice: tile dim 0 is 1024, a multicast atom's is box dim 0 (256) times multicast (2)" in str(err)


@pytest.mark.parametrize("elem,column", [("f32", 13), ("f16", 4), ("f8E4M3FN", 8)])
def test_a_copy_starting_a_row_off_16_bytes_is_an_error(elem, column):
    """A tiled TMA load or store starts each row on 16 bytes (on the H200
    f32 column 13, 52 bytes in, faulted with an illegal instruction): an
    innermost coordinate off it known at build (a Python int, a DSL constant
    or arithmetic of them) is a KernelBuildError naming the line and the rule, not
    the lowering's verifier's error; 16 bytes in builds."""
    def make(col):
        @dsl.kernel(block=(32,))
        def k(a: dsl.Tensor(elem, (64, 256))):
            ld = cpasync.make_tiled_tma_atom(G2S(), a, (8, 32))
            s = lang.SMEMPool().alloc_for(ld)
            bar = lang.TMABar(1)
            with lang.WarpRole(0):
                cpasync.copy(ld, [0, col() if callable(col) else col], s, tma_bar_ptr=bar.at(0))  # MARK:off-row
        return k

    on = 128 // {"f32": 32, "f16": 16, "f8E4M3FN": 8}[elem]
    # a DSL constant as well (Int32(13), Int64(12) + 1, Int64(269) % 256), not only in the lowering's verifier
    for col in (column, lambda: dsl.Int32(column), lambda: dsl.Int64(column - 1) + 1,
                lambda: dsl.Int64(column + 256) % 256):
        err = build_error(make(col), "alignment")
        assert_names_line(err, HERE, "MARK:off-row")
        assert "a tiled TMA copy starts each row on 16 bytes" in str(err)
    make(on).build()
    make(lambda: dsl.Int32(on)).build()


def test_multicast_op_without_a_mask_is_an_error():
    @dsl.kernel(block=(32,), cluster=(2, 1, 1))
    def k(a: dsl.Tensor("f16", (256, 256))):
        ld = cpasync.make_tiled_tma_atom(G2S_MC(), a, (64, 64), num_multicast=2)
        s = lang.SMEMPool().alloc_for(ld)
        bar = lang.TMABar(1)
        with lang.WarpRole(0):
            cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0))  # MARK:no-mask

    err = build_error(k, "multicast")
    assert_names_line(err, HERE, "MARK:no-mask")


def test_swizzle_is_not_repeated_in_alloc_and_a_mismatch_is_an_error():
    @dsl.kernel(block=(32,))
    def ok(a: dsl.Tensor("f16", (256, 256))):
        s = lang.SMEMPool().alloc((64, 64), "f16")      # no swizzle= here ...
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64), swizzle="swizzle_128b")
        bar = lang.TMABar(1)
        with lang.WarpRole(0):
            cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0))
        assert s.swizzle == "swizzle_128b"              # ... the atom records it

    ok.build()

    @dsl.kernel(block=(32,))
    def bad(a: dsl.Tensor("f16", (256, 256))):
        s = lang.SMEMPool().alloc((64, 64), "f16", swizzle="swizzle_32b")
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64), swizzle="swizzle_128b")
        bar = lang.TMABar(1)
        with lang.WarpRole(0):
            cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0))  # MARK:swizzle

    err = build_error(bad, "swizzle")
    assert_names_line(err, HERE, "MARK:swizzle")


def test_cluster_ctarank_is_the_linear_rank():
    @dsl.kernel(block=(32,), cluster=(2, 2, 1))
    def k(y: dsl.Tensor("i32", (64,))):
        y[dsl.thread_idx()] = dsl.cluster_ctarank()

    text = ptx(k)
    assert "%cluster_ctarank" in text and "%cluster_ctaid" not in text


def test_int32_and_index_division_remainder_comparison_are_signed():
    @dsl.kernel(block=(32,))
    def k(y: dsl.Tensor("i32", (8,))):
        y[0] = dsl.Int32(-7) // 2
        y[1] = dsl.Int32(-7) % 2
        y[2] = dsl.select(dsl.Int32(-1) < 0, 1, 0)
        y[3] = (dsl.Index(-7) // 2).to(dsl.Int32)
        y[4] = (dsl.Index(-7) % 2).to(dsl.Int32)
        y[5] = dsl.select(dsl.Index(-1) < 0, 1, 0)

    assert folded_stores(k) == {0: -4, 1: 1, 2: 1, 3: -4, 4: 1, 5: 1}


@pytest.mark.parametrize("what", ["copy", "arrive_expect_tx"])
def test_single_issuer_ops_where_four_warps_run_are_an_error(what):
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("f16", (256, 256)), *, what=what):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        s = lang.SMEMPool().alloc_for(ld)
        bar = lang.TMABar(1)
        if what == "copy":
            cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0))  # MARK:4-warps-copy
        else:
            bar.arrive_expect_tx(0, ld.tile_bytes)  # MARK:4-warps-expect

    err = build_error(k, "single-issuer")
    assert_names_line(err, HERE, "MARK:4-warps-copy" if what == "copy" else "MARK:4-warps-expect")
    assert "up to 4 warps run this code" in str(err)


@pytest.mark.parametrize("role", ["WarpRole", "if-warp", "if-thread"])
def test_single_issuer_ops_inside_a_warp_role_issue_once(role):
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("f16", (256, 256)), *, role=role):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        s = lang.SMEMPool().alloc_for(ld)
        bar = lang.TMABar(1)
        dsl.barrier()
        if role == "WarpRole":
            with lang.WarpRole(1):
                bar.arrive_expect_tx(0, ld.tile_bytes)
                cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0))
        elif role == "if-warp":
            with dsl.if_(dsl.warp_idx() == 2):
                bar.arrive_expect_tx(0, ld.tile_bytes)
                cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0))
        else:
            with dsl.if_(dsl.thread_idx() == 0):
                bar.arrive_expect_tx(0, ld.tile_bytes)   # one thread: issued directly
        bar.wait(0, 0)

    text = ptx(k)
    assert len(re.findall(r"mbarrier\.arrive\.expect_tx", text)) == 1
    if role != "if-thread":
        assert "elect.sync" in text and len(re.findall(r"cp\.async\.bulk\.tensor", text)) == 1


def test_copy_from_a_single_thread_branch_is_an_error():
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("f16", (256, 256))):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        s = lang.SMEMPool().alloc_for(ld)
        bar = lang.TMABar(1)
        with dsl.if_(dsl.thread_idx() == 0):
            cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0))  # MARK:one-thread-copy

    err = build_error(k, "single-issuer")
    assert_names_line(err, HERE, "MARK:one-thread-copy")


def test_nvtma_compile_takes_kernels_and_specializations():
    @dsl.kernel(block=(32,))
    def k(y: dsl.Tensor("f32", (64,)), *, v=1.0):
        y[dsl.thread_idx()] = v

    a = nvtma.compile(k)
    b = nvtma.compile(k.specialize(v=2.0))
    assert "k" in a.kernels and "k" in b.kernels
    assert "1065353216" in a.ptx and "1073741824" in b.ptx   # the bits of 1.0f and 2.0f


def test_verifier_errors_name_the_users_line():
    """tma_partition runs its op's verifier as it is made (fuzz_dsl seed 895003): the error is the call's."""
    @dsl.kernel(block=(32,))
    def k(a: dsl.Tensor("f16", (256, 256))):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        cpasync.tma_partition(ld, [0])  # MARK:verifier

    err = build_error(k, "coordinates")
    assert "cpasync.tma_partition: has 1 tile coordinates, the atom's tile has 2 dims" in str(err)
    assert_names_line(err, HERE, "MARK:verifier")


def _line(marker):
    from dsl_testing import line_of
    return line_of(HERE, marker)


# --------------------------------------------------------------------------- found by test/fuzz/fuzz_dsl.py
#
# Inputs that ended the process (an MLIR assertion aborts it: the crash
# reproducers run in a child process, from test/fuzz/regressions/dsl), or
# raised an untyped error (TypeError/ZeroDivisionError from inside the DSL
# or a binding), or built IR the compiler refused only later (ptxas, the
# lowering). Each is now a KernelBuildError naming the rule, the value and
# the user's line.

import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from nvtma import cuda, wgmma  # noqa: E402

REGRESSIONS = Path(__file__).resolve().parents[1] / "fuzz" / "regressions" / "dsl"


@pytest.mark.parametrize("path", sorted(REGRESSIONS.glob("*.py")), ids=lambda p: p.stem)
def test_fuzz_dsl_crash_reproducers_are_build_errors(path):
    text = path.read_text()
    rule, _, message = next(ln for ln in text.splitlines() if ln.startswith("# EXPECT ")).removeprefix(
        "# EXPECT ").partition(": ")
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, f"exit status {r.returncode} (a negative one is a signal):\n{r.stderr[-3000:]}"
    last = r.stderr.strip().splitlines()[-1]
    line = next(i + 1 for i, ln in enumerate(text.splitlines()) if ln.rstrip().endswith("# MARK:error"))
    assert last.startswith(f"nvtma.dsl.errors.KernelBuildError: {path}:{line}: "), last
    assert message in last, last
    # the rule, as the exception carries it
    probe = ("import runpy, sys\nfrom nvtma import dsl\ntry:\n    runpy.run_path(sys.argv[1], run_name='__main__')\n"
             "except dsl.KernelBuildError as e:\n    print(e.rule)\n")
    r = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=300)
    assert r.stdout.strip() == rule, (r.stdout, r.stderr[-2000:])


def _kernel(body, *, arch="sm_90a", block=(128,)):
    """A kernel whose body is `body(x, y, flags)` (f32, bf16 and i1 tensors)."""
    @dsl.kernel(block=block, arch=arch)
    def k(x: dsl.Tensor("f32", (64, 64)), y: dsl.Tensor("bf16", (64,)), flags: dsl.Tensor("i1", (64,))):
        body(x, y, flags)

    return k


def _refused(body, rule, message, **kw):
    err = build_error(_kernel(body, **kw), rule)
    assert message in str(err), str(err)
    assert err.where is not None and err.where.startswith(HERE + ":"), err.where  # the user's line (a lambda here)
    return err


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: x.__setitem__((0, 0), wgmma.Accumulator(64)[32]),
     "accumulator register 32 of a 64 x 64 accumulator: it has 32 (0-31)"),
    (lambda x, y, f: wgmma.Accumulator(64)[10 ** 30], "accumulator register 1000000000000000000000000000000"),
    (lambda x, y, f: wgmma.Accumulator(64)[dsl.Int32(1)], "a Python int"),
    (lambda x, y, f: wgmma.Accumulator(64.0), "wgmma n = 64.0: a multiple of 8 in [8, 256]"),
], ids=["past-the-end", "huge", "run-time", "float-n"])
def test_accumulator_registers_are_checked(body, message):
    _refused(body, "wgmma", message)


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: x.__setitem__((0, 0), f[3].to(dsl.Float32)), "a load of a Boolean (i1) tensor"),
    (lambda x, y, f: f.__setitem__(3, dsl.thread_idx() < 3), "a store of a Boolean (i1) tensor"),
    (lambda x, y, f: f.load_vec(4, 0), "a vector access of a Boolean (i1) tensor"),
    (lambda x, y, f: lang.SMEMPool().alloc((4,), dsl.Boolean).__setitem__(0, dsl.Boolean(True)),
     "a store of a Boolean (i1) tensor"),
], ids=["global-load", "global-store", "load-vec", "shared-store"])
def test_boolean_tensors_are_not_loaded_or_stored(body, message):
    _refused(body, "dtype", message)


def test_cta_reduce_of_a_boolean_is_an_error():
    _refused(lambda x, y, f: cuda.cta_sum(dsl.thread_idx() < 3), "reduce", "cta_reduce of a Boolean")


@pytest.mark.parametrize("shape", [(2 ** 64,), (2 ** 62, 2 ** 62), (2 ** 62,)])
def test_tensor_shapes_past_int64_are_refused_where_they_are_declared(shape):
    """(2**64,) was a TypeError from MemRefType.get; (2**62, 2**62) built and
    failed in the lowering; (2**62,) of f32 is 2**64 bytes."""
    with pytest.raises(dsl.KernelBuildError) as e:
        dsl.Tensor("f32", shape)  # MARK:huge-shape
    assert e.value.rule == "shape"
    assert "do not fit a 64-bit size" in str(e.value)
    assert e.value.where == f"{HERE}:{_line('MARK:huge-shape')}"


def test_errors_of_tensor_annotations_name_the_users_line_not_dataclass_code():
    """dsl.Tensor is a dataclass: its errors named the generated __init__ ('<string>:5')."""
    with pytest.raises(dsl.KernelBuildError) as e:
        dsl.Tensor("f33", (4,))  # MARK:bad-dtype
    assert e.value.where == f"{HERE}:{_line('MARK:bad-dtype')}", e.value.where
    with pytest.raises(dsl.KernelBuildError) as e:
        dsl.Tensor("f32", (-1,))  # MARK:negative-dim
    assert e.value.where == f"{HERE}:{_line('MARK:negative-dim')}", e.value.where


@pytest.mark.parametrize("body,rule,message", [
    (lambda x, y, f: dsl.full(2.0, 1.0), "vector", "a vector of 2.0 lanes: a positive Python int"),
    (lambda x, y, f: dsl.full(0, 1.0), "vector", "a vector of 0 lanes"),
    (lambda x, y, f: dsl.zeros(None), "vector", "a vector of None lanes"),
    (lambda x, y, f: dsl.full(2, 1.0).insert(7, 2.0), "index", "lane 7 of a 2-lane vector"),
    (lambda x, y, f: x.load_vec(None, 0, 0), "vector-width", "a vector access of None lanes"),
    (lambda x, y, f: x.load_vec(4, 0, 0, align=3), "align", "align=3: a power of two"),
    (lambda x, y, f: x.store_vec(dsl.zeros(4), 0, 0, align=2 ** 40), "align", "align=1099511627776"),
], ids=["float-lanes", "no-lanes", "none-lanes", "insert-past-the-end", "load-vec-none", "align-3", "align-huge"])
def test_vector_lane_counts_and_alignments_are_checked(body, rule, message):
    _refused(body, rule, message)


@pytest.mark.parametrize("body,rule,message", [
    (lambda x, y, f: lang.SMEMPool().alloc((0, 4), dsl.Float32), "shape", "dim 0 is not positive"),
    (lambda x, y, f: lang.SMEMPool().alloc((None,), dsl.Float32), "shape", "dim None is not an int"),
    (lambda x, y, f: lang.SMEMPool().alloc((1.5,), dsl.Float32), "shape", "dim 1.5 is not an int"),
    (lambda x, y, f: lang.SMEMPool().alloc_static((4, -2), dsl.Float32), "shape", "dim -2 is not positive"),
    (lambda x, y, f: lang.SMEMPool().alloc((2 ** 62,), dsl.Int32), "smem",
     "takes the kernel's shared memory to 18446744073709551616 bytes; a Hopper CTA gets at most 232448"),
    (lambda x, y, f: lang.SMEMPool().alloc((dsl.Int32(4),), dsl.Int32), "python-int", "build-time constant"),
], ids=["zero-dim", "none-dim", "float-dim", "static-negative", "past-2**63-bytes", "run-time-dim"])
def test_shared_buffer_shapes_are_checked_at_the_allocation(body, rule, message):
    _refused(body, rule, message)


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: lang.MBarrier(2 ** 32 + 1), "MBarrier depth 4294967297: an int in [1, 29056]"),
    (lambda x, y, f: lang.MBarrier(0), "MBarrier depth 0"),
    (lambda x, y, f: lang.TMABar(1, 2 ** 40), "TMABar count 1099511627776: mbarrier.init takes an arrival count"),
    (lambda x, y, f: lang.Pipeline(2.0), "TMABar depth 2.0"),
], ids=["depth-past-u32", "depth-0", "count-huge", "pipeline-float-depth"])
def test_mbarrier_depths_and_counts_are_checked(body, message):
    _refused(body, "mbarrier", message)


@pytest.mark.parametrize("body,rule,message", [
    (lambda x, y, f: cuda.printf(3), "printf", "printf format 3: a Python str"),
    (lambda x, y, f: cuda.shfl_sync(x[0, 0], 1, width=None), "shuffle", "shuffle width None"),
    (lambda x, y, f: cuda.shfl_xor_sync(x[0, 0], 1, width=64), "shuffle", "shuffle width 64"),
    (lambda x, y, f: cuda.warp_reduce(x[0, 0], "sum", width=2.0), "reduce", "warp_reduce width 2.0"),
    (lambda x, y, f: cuda.barrier_arrive(1, 0), "barrier", "barrier_arrive thread count 0: a multiple of 32"),
    (lambda x, y, f: cuda.barrier_sync(1, 33), "barrier", "barrier_sync thread count 33"),
    (lambda x, y, f: cuda.barrier_sync(16, 64), "barrier", "barrier_sync barrier id 16: 0-15"),
], ids=["printf-fmt", "shfl-width-none", "shfl-width-64", "warp-reduce-float-width", "bar-arrive-0",
        "bar-sync-33", "bar-id-16"])
def test_warp_and_barrier_helper_arguments_are_checked(body, rule, message):
    _refused(body, rule, message)


def test_callables_of_cond_and_while_must_take_the_carried_values():
    """A while_ condition taking 2 values for a carry of 1 was Python's
    TypeError raised inside control.py; a non-callable branch of cond likewise."""
    def bad_while(x, y, f):
        loop = dsl.while_(lambda i, j: i < j, carry=(dsl.Int32(0),))
        for (i,) in loop:
            dsl.yield_(i + 1)

    _refused(bad_while, "callable", "cannot take 1 value")
    _refused(lambda x, y, f: dsl.cond(dsl.thread_idx() < 3, dsl.Int32(1), lambda: dsl.Int32(2)), "callable",
             "dsl.cond's true_fn is Int32, not a function")


@pytest.mark.parametrize("arch", ["sm_90", "sm_100a"])
def test_wgmma_off_sm_90a_is_refused_at_the_users_line(arch):
    """It built, then the lowering refused it: "'nvvm.wgmma.fence.aligned' op is not supported on sm_90"."""
    _refused(lambda x, y, f: wgmma.fence(), "arch", "wgmma.fence is a wgmma instruction: sm_90a only", arch=arch)


@pytest.mark.parametrize("body,rule,message", [
    (lambda x, y, f: wgmma.wait_group(-1), "wgmma", "wgmma.wait_group(-1): a non-negative Python int"),
    (lambda x, y, f: wgmma.wait_group(1.5), "wgmma", "wgmma.wait_group(1.5)"),
    (lambda x, y, f: cpasync.cp_async_wait_group(-1), "wait-group", "cp_async_wait_group(-1)"),
    (lambda x, y, f: cpasync.bulk_wait_group(2 ** 40), "wait-group", "bulk_wait_group(1099511627776)"),
], ids=["wgmma-negative", "wgmma-float", "cp-async-negative", "bulk-huge"])
def test_wait_group_counts_are_checked(body, rule, message):
    _refused(body, rule, message)


def _cp_async_into_shared(**kw):
    s = lang.SMEMPool().alloc((64,), "i8")
    return lambda x, y, f: cpasync.cp_async(cpasync.address_of(s, [0]), cpasync.address_of(x, [0, 0]), 16, **kw)


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: _cp_async_into_shared(src_size=17)(x, y, f), "cp.async src_size=17: 0 to the 16 bytes copied"),
    (lambda x, y, f: _cp_async_into_shared(src_size=-1)(x, y, f), "cp.async src_size=-1"),
    (lambda x, y, f: cpasync.cp_async_arrive(lang.MBarrier(1, 32).at(0), noinc=1), "noinc=1: True or False"),
], ids=["src-size-past-the-copy", "src-size-negative", "noinc-not-bool"])
def test_cp_async_zero_fill_and_arrive_are_checked(body, message):
    _refused(body, "cp-async", message)


def _nest(depth, body):
    """`body()` inside `depth` nested dsl.if_ (Python allows only 20 static `with` levels)."""
    if depth == 0:
        body()
        return
    with dsl.if_(dsl.thread_idx() < 100):
        _nest(depth - 1, body)


def test_run_time_regions_nested_past_what_mlir_reads_back_are_refused():
    """About 250 nested branches built, then nvtma.compile could not parse
    the IR back ("nesting depth 257 is over the limit of 256")."""
    def store(x, y, f):
        x[0, 0] = 1.0

    _refused(lambda x, y, f: _nest(250, lambda: store(x, y, f)), "nesting",
             "dsl.if_ nested inside 200 run-time regions")
    assert "st.global.b32" in ptx(_kernel(lambda x, y, f: _nest(150, lambda: store(x, y, f))))  # 150 compile


def test_a_branch_left_open_is_refused_and_the_process_survives():
    """A dsl.if_ entered and never exited built a kernel that returned inside
    the branch, and aborted the interpreter at exit (the child process here)."""
    def body(x, y, f):
        dsl.if_(dsl.thread_idx() < 3).__enter__()  # MARK:left-open
        x[0, 0] = 1.0

    err = build_error(_kernel(body), "region")
    assert "this dsl.if_ is entered but never exited" in str(err)
    assert err.where == f"{HERE}:{_line('MARK:left-open')}"
    # the same in a fresh interpreter: the error, then a clean exit
    src = ("from nvtma import dsl\n@dsl.kernel(block=(32,))\ndef k(x: dsl.Tensor('f32', (4,))):\n"
           "    dsl.if_(dsl.thread_idx() < 3).__enter__()\n    x[0] = 1.0\n"
           "try:\n    k.build()\nexcept dsl.KernelBuildError as e:\n    print(e.rule)\n")
    r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=300)
    assert (r.returncode, r.stdout.strip()) == (0, "region"), r.stderr[-2000:]


@pytest.mark.parametrize("shape,message", [
    ((None, 64), "reshape shape (None, 64): dim None is not an int"),
    ((-4, 16), "dim -4 is not positive"),
    ((2 ** 40, 0), "dim 0 is not positive"),
])
def test_reshape_shapes_are_checked(shape, message):
    """reshape((-4, None, 64)) was a TypeError (int *= None) inside tensor.py."""
    _refused(lambda x, y, f: lang.SMEMPool().alloc((64, 64), dsl.Float32).reshape(shape), "shape", message)


@pytest.mark.parametrize("kw,message", [
    (dict(a_type="x", b_type="x"), "wgmma a_type 'x': one of bf16, e4m3, e5m2, f16, tf32"),
    (dict(a_type="f32", b_type="f32"), "wgmma a_type 'f32'"),
    (dict(a_type="s8", b_type="s8"), "integer wgmmas need s32 accumulators"),
    (dict(a_type="bf16", b_type="bf16", scale_a=2), "wgmma scale_a=2: 1 or -1"),
    (dict(a_type="bf16", b_type="bf16", scale_b=1.0), "wgmma scale_b=1.0"),
], ids=["unknown", "f32-aborted", "s8", "scale-2", "scale-float"])
def test_wgmma_operand_types_and_scales_are_checked(kw, message):
    """"x" was an AttributeError, scale_a=2 a KeyError, "f32" an abort (llvm_unreachable in NVVM)."""
    _refused(lambda x, y, f: wgmma.mma_async(wgmma.Accumulator(64), dsl.Uint64(0), dsl.Uint64(0), **kw), "wgmma",
             message)


def test_a_descriptor_of_an_integer_tile_is_not_a_wgmma_operand():
    """An i8 tile's SmemDescriptor made mma_async raise KeyError('i8')."""
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("i8", (64, 256))):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 128), swizzle="swizzle_128b")
        s = lang.SMEMPool().alloc_for(ld)
        from dsl_testing import tma_load_and_wait
        tma_load_and_wait(ld, s)
        d = wgmma.SmemDescriptor(s)
        wgmma.mma_async(wgmma.Accumulator(64), d, d)  # MARK:i8-operand

    err = build_error(k, "wgmma")
    assert "a wgmma operand tile of Int8: f16, bf16, e4m3 or e5m2" in str(err)
    assert err.where == f"{HERE}:{_line('MARK:i8-operand')}"


@pytest.mark.parametrize("what,use,message", [
    ("scalar", lambda kept, x: x.__setitem__((0, 0), (kept + 1).to(dsl.Float32)),
     "this Int32 was made while building kernel 'first'"),
    ("vector", lambda kept, x: x.store_vec(kept, 0, 0), "this Vector was made while building kernel 'first'"),
    ("tensor", lambda kept, x: kept.__setitem__(0, 1.0), "this TensorValue was made for another kernel's build"),
    ("accumulator", lambda kept, x: kept[0], "this wgmma.Accumulator was made while building kernel 'first'"),
    ("mbarrier", lambda kept, x: kept.wait(0, 0), "this MBarrier was made while building kernel 'first'"),
])
def test_values_kept_from_another_build_are_refused(what, use, message):
    """A value kept from one kernel's build (a global, a closure, a cached
    helper) and used in the next lives in the first build's MLIR context:
    the op mixing the two segfaulted."""
    kept = []

    @dsl.kernel(block=(128,))
    def first(t: dsl.Tensor("f32", (64,))):
        kept.append({"scalar": dsl.thread_idx, "vector": lambda: dsl.full(4, 1.0), "tensor": lambda: t,
                     "accumulator": lambda: wgmma.Accumulator(8), "mbarrier": lambda: lang.MBarrier(1)}[what]())

    first.build()
    _refused(lambda x, y, f: use(kept[0], x), "foreign-value", message)
    # printed after its build, it says so (reading its MLIR type segfaulted: the build's objects are gone)
    if what in ("scalar", "vector", "tensor"):
        assert repr(kept[0]).endswith("(<of another build>)")


@pytest.mark.parametrize("call", [
    lambda: dsl.Int32(3), lambda: dsl.thread_idx(), lambda: dsl.full(2, 1.0), lambda: wgmma.Accumulator(64),
    lambda: list(dsl.range(4)), lambda: dsl.else_().__enter__(),
], ids=["constant", "thread-idx", "vector", "accumulator", "range", "else"])
def test_dsl_operations_outside_a_kernel_are_a_build_error(call):
    """They were MLIR's RuntimeError ("requires a Context") or ValueError ("No current InsertionPoint")."""
    with pytest.raises(dsl.KernelBuildError) as e:
        call()
    assert e.value.rule == "outside-kernel", str(e.value)
    assert "inside an @nvtma.dsl.kernel function" in str(e.value)


@pytest.mark.parametrize("body,rule,message", [
    (lambda x, y, f: dsl.fma(1.0, 2.0, 3.0), "type", "dsl.fma(1.0, 2.0, 3.0) has no run-time value"),
    (lambda x, y, f: dsl.vector_of(3), "vector", "a vector of 3: give a list of scalars"),
], ids=["fma-of-python-numbers", "vector-of-an-int"])
def test_python_values_where_run_time_values_are_needed(body, rule, message):
    """fma of three Python numbers was a StopIteration out of numeric.py; vector_of(3) a TypeError."""
    _refused(body, rule, message)


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: dsl.exp(None), "dsl.exp(None): a run-time scalar or vector, or a Python number"),
    (lambda x, y, f: dsl.log("x"), "dsl.log('x')"),
    (lambda x, y, f: dsl.abs((1, 2)), "dsl.abs((1, 2))"),
    (lambda x, y, f: dsl.sqrt([1.0]), "dsl.sqrt([1.0])"),
], ids=["exp-none", "log-str", "abs-tuple", "sqrt-list"])
def test_float_functions_of_non_numbers_are_typed_errors(body, message):
    """exp(None) was `None * float` failing inside numeric.py, abs((1, 2)) builtins.abs's TypeError."""
    _refused(body, "type", message)


def _schedule(sched):
    for tile in sched:
        pass


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: _schedule(lang.GroupMajor3D(None, 2, 2, 2)), "m_tiles=None: a non-negative int"),
    (lambda x, y, f: _schedule(lang.PersistentTileScheduler(1.5)), "num_tiles=1.5"),
    (lambda x, y, f: _schedule(lang.PersistentTileScheduler(dsl.Float32(2.0))), "num_tiles=Float32"),
    (lambda x, y, f: _schedule(lang.FlashAttentionLinearScheduler(2, -1, 4)), "num_heads=-1"),
    (lambda x, y, f: _schedule(lang.ClusterPersistentScheduler2D(4, 4, cluster_m=0)), "cluster_m=0: a positive int"),
], ids=["group-major-none", "persistent-float", "persistent-float-value", "flash-negative", "cluster-m-0"])
def test_scheduler_counts_are_checked(body, message):
    """GroupMajor3D(None, ...) was a TypeError (None * int) inside lang.py."""
    _refused(body, "scheduler", message)


def test_conversion_helpers_take_python_numbers_or_refuse_with_a_typed_error():
    """cuda.half2float(1.5) was an AttributeError ('float' object has no attribute 'to')."""
    def body(x, y, f):
        x[0, 0] = cuda.half2float(1.5) + cuda.bfloat162float(2)

    assert "st.global" in ptx(_kernel(body))
    _refused(lambda x, y, f: cuda.half2float("a"), "type", "half2float takes a Float16 value, got 'a'")
    _refused(lambda x, y, f: cuda.bfloat1622float2(1.0), "type", "bfloat1622float2 of 1.0: a 2-lane BFloat16 vector")
    _refused(lambda x, y, f: cuda.fp8x4_e4m3_from_float4(dsl.Float32(1.0)), "type", "a 4-lane Float32 vector")


def _f32(n):
    return dsl.full(n, 1.0, dsl.Float32)


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: cuda.float22half2(_f32(3)), "float22half2 of Vector<3 x Float32>: a 2-lane Float32"),
    (lambda x, y, f: cuda.float22half2(dsl.full(2, 1.0, dsl.Float16)), "a 2-lane Float32 vector"),
    (lambda x, y, f: cuda.float22bfloat162_rn(_f32(4)), "float22bfloat162_rn of Vector<4 x Float32>"),
    (lambda x, y, f: cuda.bfloat1622float2(dsl.full(2, 1.0, dsl.Float16)), "a 2-lane BFloat16 vector"),
    (lambda x, y, f: cuda.fp8x4_e4m3_from_float4(_f32(8)), "fp8x4_e4m3_from_float4 of Vector<8 x Float32>: a 4-lane"),
    (lambda x, y, f: cuda.hmax2(_f32(2), _f32(2)), "hmax2 of Vector<2 x Float32>: a 2-lane Float16 or BFloat16"),
    (lambda x, y, f: cuda.hmin2(dsl.full(4, 1.0, dsl.Float16), dsl.full(4, 1.0, dsl.Float16)), "hmin2 of Vector<4 x Float16>"),
    (lambda x, y, f: cuda.half2float(dsl.Float32(1.0)), "half2float takes a Float16 value, got Float32"),
    (lambda x, y, f: cuda.bfloat162float(dsl.Int32(1)), "bfloat162float takes a BFloat16 value, got Int32"),
    (lambda x, y, f: cuda.half2float(True), "half2float takes a Float16 value, got True"),
], ids=["f2h2-3-lanes", "f2h2-f16", "f2bf2-4-lanes", "bf2f2-f16", "fp8x4-8-lanes", "hmax2-f32", "hmin2-4-lanes",
        "half2float-f32", "bf162float-i32", "half2float-bool"])
def test_conversion_helpers_take_the_lanes_and_types_their_cuda_names_say(body, message):
    """float22half2 of 3 lanes, fp8x4_e4m3_from_float4 of 8 and hmax2 of f32 were taken (and converted right)."""
    _refused(body, "type", message)


def test_ldmatrix_indices_are_checked_like_element_accesses():
    """A slice as ldmatrix's row reached the swizzle arithmetic: TypeError slice * int in tensor.py."""
    def body(x, y, f):
        s = lang.SMEMPool().alloc((64, 64), dsl.Float16, swizzle="swizzle_128b")
        cuda.ldmatrix(s, slice(0, 2), 3, num=1)

    _refused(body, "index", "slicing a tensor")


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: cuda.red_add(dsl.Int32(3), dsl.full(4, 1.0)),
     "an atomic's target is a tensor (with indices) or a pointer (cpasync.address_of), got a i32 value"),
    (lambda x, y, f: cuda.atomic_add(dsl.Float32(3.0), 1.0), "got a f32 value"),
    (lambda x, y, f: cuda.atomic_add(x, (0, 0), dsl.full(2, 1.0, dsl.Float16)),
     "atomic add of Vector<2 x Float16> into Float32 memory: the lanes must be Float32"),
    (lambda x, y, f: cuda.red_add(x, (0, 0), dsl.full(2, 1.0, dsl.BFloat16)), "red_add of Vector<2 x BFloat16>"),
], ids=["red-add-to-an-int", "atomic-to-a-float", "f16x2-into-f32", "red-bf16x2-into-f32"])
def test_atomic_targets_and_packed_lanes_are_checked(body, message):
    """red_add to an Int32 'address' compiled (ptxas took the integer as an
    address); an f16x2 atomic into an f32 tensor reinterpreted its bits."""
    _refused(body, "atomic", message)


@pytest.mark.parametrize("box,message", [((0, 8), "dim 0 is not positive"), ((None, 8), "dim None is not an int")])
def test_blocked_boxes_are_checked(box, message):
    """blocked((0, 8)) was a ZeroDivisionError, (None, 8) a TypeError, inside tensor.py."""
    _refused(lambda x, y, f: lang.SMEMPool().alloc((64, 64), dsl.Float16).blocked(box), "shape", message)


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: lang.SMEMPool().alloc((64, 64), dsl.Float16).rows(0, 65), "rows(0, 65) of a tile of 64 rows"),
    (lambda x, y, f: lang.SMEMPool().alloc((64, 64), dsl.Float16).rows(40, 32), "rows(40, 32)"),
    (lambda x, y, f: lang.SMEMPool().alloc((64, 64), dsl.Float16).rows(0, dsl.Int32(8)), "rows(0, "),
    (lambda x, y, f: lang.SMEMPool().alloc((64,), dsl.Float16).rows(0, 8), "rows() takes a shared tile of 2"),
    (lambda x, y, f: x.rows(0, 1), "rows() takes a shared tile"),
], ids=["too-many", "past-the-end", "run-time-count", "1-d", "global"])
def test_row_views_are_checked(body, message):
    _refused(body, "shape" if "takes" in message else "index", message)


def test_a_tile_takes_tma_boxes_of_its_whole_rows_of_any_height():
    """Boxes of whole rows lie row after row whatever their heights, so one
    buffer takes copies of [64, 64] tiles and of [32, 64] ones into
    rows(r, 32) views (at a run-time row); boxes splitting the rows (box
    after box) into the same buffer still conflict."""
    def k_of(inner_split):
        @dsl.kernel(block=(128,))
        def k(x: dsl.Tensor("f16", (None, None))):
            G2S = cpasync.CopyBulkTensorTileG2SOp
            a = cpasync.make_tiled_tma_atom(G2S(), x, (64, 64), swizzle="swizzle_128b")
            h = cpasync.make_tiled_tma_atom(G2S(), x, (32, 64) if not inner_split else (64, 32),
                                            swizzle="swizzle_128b")
            t = lang.SMEMPool().alloc((64, 64), dsl.Float16, swizzle="swizzle_128b")
            bar = lang.TMABar(1)
            dsl.barrier()
            with lang.WarpRole(0):
                bar.arrive_expect_tx(0, a.tile_bytes + h.tile_bytes)
                cpasync.copy(a, [0, 0], t, tma_bar_ptr=bar.at(0))
                r = (dsl.block_idx() % 5 * 8).to(dsl.Int32)
                cpasync.copy(h, [r, 0], t.rows(r, 32) if not inner_split else t, tma_bar_ptr=bar.at(0))
        return k
    text = ptx(k_of(False))
    assert len(re.findall(r"cp\.async\.bulk\.tensor\.2d", text)) == 2
    assert "this buffer holds boxes of [64, 64]" in str(build_error(k_of(True), "box"))


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: lang.PipelineState(2, float("nan")), "PipelineState(depth, i=nan): i is an iteration number"),
    (lambda x, y, f: lang.PipelineState(2, 1j), "i=1j"),
    (lambda x, y, f: lang.PipelineState(0), "PipelineState depth 0: a positive Python int"),
    (lambda x, y, f: lang.PipelineState(2).advance(1.5), "advance(1.5): an int or an integer run-time value"),
    (lambda x, y, f: lang.PipelineState(2).advance(True), "advance(True): an int or an integer run-time value"),
    (lambda x, y, f: lang.PipelineState(2, dsl.Boolean(True)), "i is an iteration number"),
], ids=["nan", "complex", "depth-0", "advance-float", "advance-bool", "bool-iteration"])
def test_pipeline_states_are_checked(body, message):
    """PipelineState(2, nan) was a ValueError (float NaN to integer), 1j a TypeError, inside lang.py; a bool
    advanced the ring one slot (found by fuzz_dsl --accepted)."""
    _refused(body, "pipeline", message)


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: lang.MBarrier(2).arrive(2), "stage 2 of a 2-deep MBarrier: 0-1"),
    (lambda x, y, f: lang.TMABar(1).at(5), "stage 5 of a 1-deep TMABar: 0-0"),
    (lambda x, y, f: lang.MBarrier(2).wait(-1, 0), "stage -1 of a 2-deep MBarrier"),
    (lambda x, y, f: lang.MBarrier(2).wait(0, 2), "phase 2: a parity, 0 or 1"),
], ids=["arrive-past-depth", "at-past-depth", "wait-negative", "phase-2"])
def test_mbarrier_stages_and_phases_are_checked(body, message):
    """bar.at(5) on a 1-deep barrier compiled: the TMA would complete on the
    bytes after the barrier group. wait(0, 2) waited on parity 1."""
    _refused(body, "mbarrier", message)


def _role_barrier(x, y, f):
    with lang.WarpRole(1):
        lang.TMABar(1)


@pytest.mark.parametrize("body,rule,message", [
    (lambda x, y, f: lang.Pipeline(3).consumer_wait(lang.PipelineState(4)), "pipeline",
     "a 3-stage Pipeline driven by a 4-deep PipelineState"),
    (_role_barrier, "mbarrier", "TMABar created inside a warp role, branch or loop: thread 0"),
    (lambda x, y, f: lang.TMABar(1).arrive_expect_tx(0, 1 << 40), "mbarrier", "transaction count is 0 to 2**20 - 1"),
    (lambda x, y, f: lang.MBarrier(1).arrive(0, count=0), "mbarrier", "arrive count 0: 1 to 2**20 - 1"),
], ids=["state-depth", "in-role", "expect-tx-range", "arrive-0"])
def test_barrier_misuse_that_hung_is_refused(body, rule, message):
    """(thirty-fifth session's audit) A PipelineState of another depth indexed past the barrier group; a barrier
    made inside warp 1's role was never initialized (thread 0 inits it; LLVM dropped the init); expect_tx of
    1 << 40 bytes was 0; arrive(count=0) did nothing."""
    _refused(body, rule, message)


def test_a_run_time_integer_phase_is_its_parity():
    """bar.wait(s, i // 2) compared the round with 0: round 2 waited on parity 1."""
    @dsl.kernel(block=(32,))
    def k(r: dsl.Int32):
        lang.MBarrier(1, 1).wait(0, r)  # the round r: parity r & 1

    ir = str(k.build().ir)
    assert re.search(r"arith.andi %arg\d+, %c1_i32", ir), ir


def test_copy_checks_the_barrier_stage_and_refuses_float_cache_hints():
    def body(x, y, f, *, stage=0, hint=None):
        a = cpasync.make_tiled_tma_atom(G2S(), x, (32, 32))
        s = lang.SMEMPool().alloc_for(a)
        b = lang.TMABar(1)
        with lang.WarpRole(0):
            cpasync.copy(a, [0, 0], s, tma_bar_ptr=(b, stage), cache_hint=hint)

    _refused(lambda x, y, f: body(x, y, f, stage=3), "mbarrier", "stage 3 of a 1-deep TMABar")
    _refused(lambda x, y, f: body(x, y, f, hint=dsl.Float32(1.0)), "cache-hint", "cache_hint Float32")
    _refused(lambda x, y, f: cpasync.make_tiled_tma_atom(G2S(), x, 5), "atom", "smem_layout 5: the tile's shape")
    _refused(lambda x, y, f: cpasync.make_tiled_tma_atom(cpasync.CopyReduceBulkTensorTileS2GOp("sum"), x, (32, 32)),
             "atom", "reduction_kind 'sum': a cpasync.ReductionKind (add, min, max")


@pytest.mark.parametrize("call", [
    lambda t: cuda.atomic_add(t, (0,), 1), lambda t: cuda.atomic_max(t, (0,), 1),
    lambda t: cuda.atomic_exch(t, (0,), 1), lambda t: cuda.atomic_cas(t, (0,), 1, 2),
], ids=["add", "max", "exch", "cas"])
def test_atomics_on_index_tensors_are_refused(call):
    """llvm.atomicrmw on index aborted the process (an assertion in LLVM's type checks)."""
    @dsl.kernel(block=(32,))
    def k(t: dsl.Tensor("index", (64,))):
        call(t)

    err = build_error(k, "atomic")
    assert "on Index: declare the tensor (or convert the value) as Int64" in str(err)


def test_index_values_shuffle_as_int64():
    """warp_sum of an Index was refused as "bitcast Index to Uint64: widths differ (64 vs 64)"."""
    def body(x, y, f):
        x[0, 0] = cuda.warp_sum(dsl.thread_idx().to(dsl.Index)).to(dsl.Float32)

    assert "shfl.sync.bfly.b32" in ptx(_kernel(body))
    _refused(lambda x, y, f: dsl.Index(3).bitcast(dsl.Int64), "bitcast", "index has no fixed bit width in MLIR")


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: y.store_vec(dsl.max(dsl.full(2, 1.0, dsl.BFloat16), dsl.zeros(4, dsl.BFloat16)), 0),
     "max of Vector<2 x BFloat16> and Vector<4 x BFloat16>: lane counts and types must match"),
    (lambda x, y, f: dsl.min(dsl.full(16, 1.0, dsl.Float16), dsl.zeros(2, dsl.Int32)), "min of Vector<16 x Float16>"),
    (lambda x, y, f: dsl.fma(dsl.full(2, 1.0), dsl.zeros(4), 1.0), "fma of Vector<2 x Float32> and Vector<4 x"),
    (lambda x, y, f: dsl.full(2, 1.0, dsl.Float16) < dsl.full(2, 1.0), "comparison lt of Vector<2 x Float16>"),
], ids=["bf16-max-lanes", "f16-min-int", "fma", "compare"])
def test_vector_operands_of_min_max_fma_select_compare_must_match(body, message):
    """A bf16/f16 min/max of mismatched vectors built an llvm.minnum call that
    verified and then failed LLVM translation at compile time ("does not
    match any of the overloads"); the others were verifier errors."""
    _refused(body, "type", message)


@pytest.mark.parametrize("arch,ok", [("sm_90", False), ("sm_100", False), ("sm_90a", True), ("sm_100f", True)])
def test_setmaxnreg_needs_an_arch_specific_target(arch, ok):
    """On sm_90 / sm_100 LLVM could not select setmaxnreg: an LLVM ERROR ended the process."""
    def body(x, y, f):
        with lang.WarpgroupRole(0, regs=40):
            x[0, 0] = 1.0

    if ok:
        assert _kernel(body, arch=arch).build().ir
    else:
        _refused(body, "arch", f"setmaxnreg (regs=40) is an arch-specific instruction: it needs an 'a' or 'f' "
                               f"target such as sm_90a, not '{arch}'", arch=arch)


@pytest.mark.parametrize("args,message", [
    (((2 ** 40,), (0,), 0), "cluster shape (1099511627776,): 1-3 ints in [1, 16]"),
    (((1.5,), (0,), 0), "cluster shape (1.5,)"),
    ((2, (0,), 0), "cluster shape 2"),
    (((2,), (0,), 2 ** 40), "mcast_mode 1099511627776"),
], ids=["huge", "float", "int", "mode-huge"])
def test_multicast_mask_shapes_are_checked(args, message):
    """(2**40,) was a TypeError from MLIR's DenseI64ArrayAttr builder."""
    _refused(lambda x, y, f: cpasync.create_tma_multicast_mask(*args), "multicast", message)


def test_a_stage_far_past_the_ring_is_the_index_error():
    """stage(2**64) reached MLIR's StridedLayoutAttr builder (a TypeError) before the range check."""
    _refused(lambda x, y, f: lang.SMEMPool().alloc((4, 8, 8), dsl.Float32).stage(2 ** 64), "index",
             "stage 18446744073709551616 of a 4-stage buffer")


@pytest.mark.parametrize("swizzle", [None, "swizzle_128b"])
def test_a_none_index_is_an_index_error_swizzled_or_not(swizzle):
    """On a swizzled buffer s[None] reached the swizzle arithmetic: TypeError None + int in tensor.py."""
    _refused(lambda x, y, f: lang.SMEMPool().alloc((32,), dsl.Float32, swizzle=swizzle)[None], "index",
             "index None of tensor memref<32xf32")


def test_a_kernel_needs_a_block():
    """block=None (a cluster may be None) was a TypeError inside launch_dims."""
    with pytest.raises(dsl.KernelBuildError, match=r"block=None") as e:
        @dsl.kernel(block=None)
        def k(x: dsl.Tensor("f32", (4,))):
            pass
    assert e.value.rule == "launch-config"


def test_an_unspecialized_tensor_is_named_at_the_kernels_def():
    """A dsl.Tensor with no dtype or shape built without param_types: the
    error names the parameter and the kernel's own line, not build()'s caller."""
    @dsl.kernel
    def k(x: dsl.Tensor(None, (4,))):
        pass
    with pytest.raises(dsl.KernelBuildError, match=r"parameter 'x' of k: a dsl.Tensor without dtype") as e:
        k.build()
    assert e.value.rule == "specialize"
    assert e.value.where.endswith(f":{k.fn.__code__.co_firstlineno}")


@pytest.mark.parametrize("strides", [(1,), (128, -1, 1), (128, 1.5, 1), (True, None, 1)])
def test_tensor_strides_take_one_int_or_none_per_dim(strides):
    """dsl.Tensor(strides=) names the bad strides at the user's line: one
    non-negative int (elements) or None (run time) per dim of the shape."""
    with pytest.raises(dsl.KernelBuildError) as e:
        dsl.Tensor("f32", (None, None, 128), strides=strides)  # MARK:bad-strides
    assert e.value.rule == "shape" and "strides" in str(e.value)
    assert e.value.where == f"{HERE}:{_line('MARK:bad-strides')}", e.value.where
    with pytest.raises(dsl.KernelBuildError):
        dsl.Tensor("f32", None, strides=(1,))  # strides without a shape


# found by fuzz_dsl seeds 203564-500923 (the thirty-third session): each was an untyped error from inside the
# DSL (TypeError, AttributeError, OverflowError, a ValueError formatting an int of 20,000 digits) or, for a
# scalar made of a vector, no error at all
@pytest.mark.parametrize("body,rule,message", [
    (lambda x, y, f: x.store_vec(dsl.zeros(2).bitcast(dsl.Int64), 0, 0), "vector",
     "store_vec of Int64(i64): a dsl Vector"),
    (lambda x, y, f: dsl.Int32(1 << 20000), "range", "<an int of 20001 bits> does not fit Int32"),
    (lambda x, y, f: dsl.Float32(10 ** 309), "range", "does not fit Float32 (it is past the largest double)"),
    (lambda x, y, f: x[0, 0] + 10 ** 309, "range", "does not fit Float32"),
    (lambda x, y, f: dsl.fma(1.0, (), dsl.Int32(0)), "type", "dsl.fma operand 1: () is not a number"),
    (lambda x, y, f: dsl.zeros(4).shuffle(None, [1.5]), "vector", "shuffle mask entry 1.5: a lane index in 0..7"),
    (lambda x, y, f: dsl.zeros(4).shuffle(None, [2 ** 64]), "vector", "shuffle mask entry 18446744073709551616"),
    (lambda x, y, f: dsl.zeros(4).shuffle(None, 5), "vector", "shuffle mask 5: a non-empty list"),
    (lambda x, y, f: dsl.zeros(4).shuffle(3, [0]), "type", "shuffle with 3: a dsl Vector"),
    (lambda x, y, f: dsl.zeros(4).shuffle(dsl.zeros(4, dsl.Int32), [0]), "type",
     "shuffle of Float32 and Int32 vectors"),
    (lambda x, y, f: dsl.zeros(4).concat(dsl.Float32(1.0)), "type", "concat with Float32(f32): a dsl Vector"),
    (lambda x, y, f: dsl.full(2 ** 64, 1.0), "vector", "a vector of 18446744073709551616 lanes"),
    (lambda x, y, f: dsl.full(10 ** 6, 1.0), "vector", "a positive Python int up to 1024"),
    (lambda x, y, f: dsl.Uint8(dsl.zeros(8)), "type", "Uint8() of a vector<8xf32> vector: take a lane"),
    (lambda x, y, f: lang.SMEMPool().alloc((64, 64), dsl.BFloat16, swizzle="swizzle_128b")[1.5, 0], "index",
     "index 1.5 of tensor"),
], ids=["store-vec-scalar", "int-20000-bits", "float-overflow", "add-overflow", "fma-tuple", "mask-float",
        "mask-huge", "mask-int", "shuffle-int", "shuffle-dtype", "concat-scalar", "lanes-2**64", "lanes-10**6",
        "scalar-of-vector", "swizzled-float-index"])
def test_fuzz_dsl_untyped_errors_are_build_errors(body, rule, message):
    _refused(body, rule, message)


def test_two_vector_shuffle_and_an_fp8_truth_value_build():
    """shuffle(other, mask) read `other or self` (a Vector's truth value is a python-control-flow error);
    an fp8 value as a condition built arith.cmpf on f8, which the lowering left to LLVM translation."""
    def body(x, y, f):
        a, b = x.load_vec(2, 0, 0), x.load_vec(2, 0, 2)
        x.store_vec(a.shuffle(b, [0, 3]), 0, 4)
        cuda.trap_when_assert_failed(dsl.Float8E5M2(x[1, 0]))
    text = ptx(_kernel(body))
    assert "trap" in text


# the second fuzz round (fuzz_dsl seeds 600000 and up, same session)
@pytest.mark.parametrize("body,rule,message", [
    (lambda x, y, f: cpasync.update_tma_descriptor(None, x, cpasync.address_of(x)), "atom",
     "cpasync.update_tma_descriptor of None: a TMA atom"),
    (lambda x, y, f: cpasync.update_tma_descriptor(
        cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), x, (32, 32)), 3, cpasync.address_of(x)),
     "tensor", "points the descriptor at 3: a global tensor"),
    (lambda x, y, f: cpasync.update_tma_descriptor(
        cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), x, (32, 32)),
        lang.SMEMPool().alloc((64, 64), dsl.Float32), cpasync.address_of(x)),
     "tensor", "#gpu.address_space<workgroup>>): a global tensor"),
    (lambda x, y, f: cpasync.make_tma_atom_from_descriptor(cpasync.address_of(x), 3), "atom",
     "cpasync.make_tma_atom_from_descriptor of 3: a TMA atom"),
    # a kernel value of another type (the dialect asked whether it is an atom, not its type's spelling)
    (lambda x, y, f: cpasync.make_tma_atom_from_descriptor(cpasync.address_of(x), dsl.thread_idx()), "atom",
     "cpasync.make_tma_atom_from_descriptor of Int32(i32): a TMA atom"),
    (lambda x, y, f: x.load_vec(4, 0, 0).reduce([1]), "vector", "reduce kind [1]: add, mul, max or min"),
    (lambda x, y, f: dsl.max(x.load_vec(4, 0, 0).to(dsl.Float8E4M3FN), 2.0), "fp8-arith", "max on Float8E4M3FN"),
    (lambda x, y, f: (lambda v: v < v)(x.load_vec(4, 0, 0).to(dsl.Float8E4M3FN)), "fp8-arith",
     "comparison lt on Float8E4M3FN"),
    (lambda x, y, f: -x.load_vec(4, 0, 0).to(dsl.Float8E4M3FN), "fp8-arith", "negation on Float8E4M3FN"),
    (lambda x, y, f: x.__setitem__((0, 0), x.load_vec(2, 0, 0)), "vector",
     "one element; store a vector with t.store_vec(v, *idx)"),
], ids=["desc-atom-none", "desc-tensor-int", "desc-tensor-shared", "from-descriptor-like-int",
        "from-descriptor-like-index-value", "reduce-list", "fp8-vector-max", "fp8-vector-compare", "fp8-vector-neg",
        "store-vector-as-element"])
def test_fuzz_dsl_round_two_errors_are_build_errors(body, rule, message):
    _refused(body, rule, message)


def test_unsigned_elements_stay_unsigned_through_tensors_vectors_and_regions():
    """MLIR's integers are signless: a u32 tensor's elements read back as Int32, and a Uint32 carried through
    a loop or an if came back as one, so they converted (sitofp), compared (sgt), divided and shifted as signed:
    0xFFFFFFFF became -1.0."""
    seen = {}

    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("u32", (64,)), y: dsl.Tensor("f32", (64,))):
        seen["load"] = type(x[0])
        v = x.load_vec(4, 0)
        seen["vector"] = v.dtype
        seen["lane-op"] = (v + 1).dtype
        loop = dsl.range(4, carry=(x[1], v))
        for i, (c, w) in loop:
            seen["carried"] = (type(c), w.dtype)
            dsl.yield_(c + 1, w)
        c, w = loop.results
        seen["after-loop"] = (type(c), w.dtype)
        with dsl.if_(dsl.thread_idx() < 3) as br:
            dsl.yield_(c)
        with dsl.else_():
            dsl.yield_(c + 2)
        (r,) = br.results
        seen["if-result"] = type(r)
        y[0] = r.to(dsl.Float32)
        y[1] = dsl.select(w[0] > 1, 1.0, 0.0)
        y[2] = (w // 3)[1].to(dsl.Float32)

    ir = k.build().ir
    U = dsl.Uint32
    assert seen == {"load": U, "vector": U, "lane-op": U, "carried": (U, U), "after-loop": (U, U), "if-result": U}
    assert "arith.uitofp" in ir and "arith.sitofp" not in ir
    assert "arith.cmpi ugt" in ir and "arith.divui" in ir and "divsi" not in ir


def test_index_vectors_convert_and_fdividef_works_lane_by_lane():
    """Vector.to into or out of Index built trunci/extsi on vector<N x index> (did not verify); fdividef of a
    vector called the f32 intrinsic on the whole vector (an LLVM translation error)."""
    def body(x, y, f):
        v = dsl.full(4, dsl.thread_idx(), dsl.Index)
        assert v.to(dsl.Int64).dtype is dsl.Int64
        w = v.to(dsl.Int32) + v.to(dsl.Uint16).to(dsl.Int32) + v.to(dsl.Float32).to(dsl.Int32)
        x.store_vec(dsl.fdividef(w.to(dsl.Float32), 2.0), 0, 0)
        x[1, 0] = dsl.full(2, 3, dsl.Uint32).to(dsl.Index)[0].to(dsl.Float32)
    k = _kernel(body)
    assert k.build().ir.count("nvtma.float_fn <div_approx>") == 4  # one a lane (LLVM merges the equal lanes)
    assert "div.approx.f32" in ptx(k)


@pytest.mark.parametrize("body,rule,message,arch", [
    (lambda x, y, f: x.store_vec(x.load_vec(4, 0, 1), 0, 0), "alignment",
     "a 4-lane access of Float32 at element 1 of the innermost dim is 4 bytes off the 16 bytes it assumes",
     "sm_90a"),
    (lambda x, y, f: x.load_vec(4, 0, 0)[dsl.Float32(1.5)], "index", "lane index Float32(f32): a Python int",
     "sm_90a"),
    (lambda x, y, f: x.load_vec(4, 0, 0).insert(dsl.Float32(2.5), 0.0), "index", "lane index Float32(f32)",
     "sm_90a"),
    (lambda x, y, f: dsl.full(4, 1, dsl.Index).bitcast(dsl.Int32), "bitcast", "Index has no fixed bit width",
     "sm_90a"),
    (lambda x, y, f: cuda.red_add(lang.SMEMPool().alloc((64,), dsl.Float32), (0,), x.load_vec(4, 0, 0)), "atomic",
     "red_add of f32 x4 on shared memory: the vector red forms are .global only", "sm_90a"),
    (lambda x, y, f: cpasync.update_tma_descriptor(
        cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), x, (32, 32)), x, cpasync.address_of(x)),
     "arch", "an architecture-specific target (sm_90a, sm_100a ...), the kernel targets sm_90", "sm_90"),
], ids=["static-misaligned-vector", "float-lane", "float-insert-lane", "index-bitcast", "red-v4-shared",
        "tensormap-replace-sm_90"])
def test_fuzz_dsl_round_two_silent_and_late_cases_are_build_errors(body, rule, message, arch):
    _refused(body, rule, message, arch=arch)


@pytest.mark.parametrize("offset", [-1, 2 ** 32, 1.0])
def test_tcgen05_half_split_offset_is_an_immediate_in_range(offset):
    """tcgen05.ld/st 16x32bx2's offset: -1 or 2^32 ended the process (an APInt assertion in the lowering)."""
    from nvtma import tcgen05

    def body(x, y, f):
        t = lang.TMEMPool(cols=128).alloc_tcgen05_mma_D((128, 128), "float32", M=128, cta_group=1)
        tcgen05.ld(t, shape="16x32bx2", num=2, offset=offset)
    _refused(body, "tcgen05", f"tcgen05.ld offset={offset!r}: an immediate, a Python int in 0..2^32 - 1",
             arch="sm_100a")


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: cuda.red_add(x, (0, 1), x.load_vec(4, 0, 0)),
     "red_add of Vector<4 x Float32> at element 1 of the innermost dim is 4 bytes off the 16 bytes it assumes"),
    (lambda x, y, f: cuda.atomic_add(y, (1,), y.load_vec(2, 0).to(dsl.BFloat16)),
     "a packed atomic add at element 1 of the innermost dim is 2 bytes off the 4 bytes it assumes"),
], ids=["red-v4", "packed-bf16x2"])
def test_vector_atomics_at_a_python_int_index_off_their_alignment_are_refused(body, message):
    """They compiled, and faulted the context at run time (misaligned address)."""
    _refused(body, "alignment", message)


def _tile(shape, dtype):
    return lang.SMEMPool().alloc(shape, dtype)


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: cuda.atomic_add(_tile((8, 3), "bf16"), (1, 0), y.load_vec(2, 0)),
     "a packed atomic add at [1, 0] of a shared [8, 3] tile is at byte 6 of its buffer, 2 bytes off the 4"),
    (lambda x, y, f: cuda.red_add(_tile((8, 6), "f16"), (0, 1), y.load_vec(2, 0).to(dsl.Float16)),
     "at [0, 1] of a shared [8, 6] tile is at byte 2 of its buffer, 2 bytes off the 4"),
    (lambda x, y, f: x.store_vec(_tile((4, 6), "f32").load_vec(4, 1, 0), 0, 0),
     "a 4-lane access of Float32 at [1, 0] of a shared [4, 6] tile is at byte 24 of its buffer, 8 bytes off the 16"),
], ids=["packed-atomic-row", "packed-red-column", "vector-load-row"])
def test_shared_tile_accesses_at_python_int_indices_off_their_alignment_are_refused(body, message):
    """A shared tile's rows need not keep the alignment an access assumes (6-byte rows of 3 bf16): the
    whole offset is checked, not the innermost index only (they compiled and faulted at run time)."""
    _refused(body, "alignment", message)


def test_shared_tile_accesses_at_aligned_python_int_indices_build():
    def body(x, y, f):
        t = _tile((8, 6), "f16")
        cuda.atomic_add(t, (2, 0), y.load_vec(2, 0).to(dsl.Float16))   # byte 24
        cuda.red_add(t, (1, 4), y.load_vec(2, 0).to(dsl.Float16))      # byte 20
        x.store_vec(_tile((4, 8), "f32").load_vec(4, 2, 4), 0, 0)       # byte 80
    _kernel(body).build()


@pytest.mark.parametrize("body,message", [
    (lambda x, y, f: cpasync.address_of(x, [1]), "1 indices for a rank-2 tensor"),
    (lambda x, y, f: cuda.atomic_add(x, (1,), 1.0), "1 indices for a rank-2 tensor"),
    (lambda x, y, f: cpasync.address_of(x, [64, 0]), "index 64 of a dim of 64"),
], ids=["address_of-count", "atomic-count", "address_of-past-the-end"])
def test_global_tensor_addresses_check_their_indices(body, message):
    """A wrong count reached the op's verifier (a late error, another rule); a static index past the dim built."""
    _refused(body, "index", message)


def test_integer_like_indices_are_python_ints():
    """numpy's ints were refused as "not a run-time value or a Python number"."""
    np = pytest.importorskip("numpy")
    _kernel(lambda x, y, f: x.__setitem__((np.int64(3), np.int32(4)), x[np.int16(1), 2])).build()


# --------------------------------------------------------------------------- clusters, roles, barriers (audit)

def _multicast_kernel(cluster, slices, mask=None, shape=None):
    @dsl.kernel(block=(128,), cluster=cluster)
    def k(src: dsl.Tensor("f32", (256, 256))):
        ld = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), src, (64, 64),
                                         num_multicast=slices)
        s = lang.SMEMPool().alloc_for(ld)
        bar = lang.TMABar(1)
        with lang.WarpRole(0):
            m = mask if shape is None else cpasync.create_tma_multicast_mask(shape, [dsl.cluster_ctaid("x")], 0)
            cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0), mcast_mask=m, cta_rank=dsl.cluster_ctaid("x"))
    return k


@pytest.mark.parametrize("cluster,slices,mask,shape,message", [
    (None, 2, 0b11, None, "a multicast TMA load in a kernel without clusters"),
    ((2, 1, 1), 4, 0xF, None, "a multicast atom of 4 slices in clusters of 2 CTAs"),
    ((2, 1, 1), 2, 0x30, None, "multicast mask 0x30: bits for CTAs 0-1 of the cluster"),
    ((2, 1, 1), 2, None, (4,), "create_tma_multicast_mask cluster shape [4], but the kernel's clusters are [2, 1, 1]"),
], ids=["no-cluster", "slices", "mask-bits", "mask-shape"])
def test_multicast_addresses_only_the_kernels_cluster(cluster, slices, mask, shape, message):
    """Each built: bits and ranks past the cluster are undefined in PTX, and each CTA was armed for bytes from
    issuers that do not exist (a hang)."""
    assert message in str(build_error(_multicast_kernel(cluster, slices, mask, shape), "multicast"))
    assert _multicast_kernel((2, 1, 1), 2, 0b11).build()  # the cluster's own


@pytest.mark.parametrize("body,rule,message", [
    (lambda x, y, f: lang.MBarrier(1).remote_view(3), "multicast", "a remote mbarrier (mapa) in a kernel without"),
    (lambda x, y, f: cuda.barrier_sync(1, 256), "barrier", "barrier_sync waits for 256 threads, but the block has 128"),
    (lambda x, y, f: _static_tma(x), "smem", "cpasync.copy into a buffer of static shared memory"),
], ids=["remote-rank", "named-barrier-count", "static-smem-tma"])
def test_what_can_never_complete_is_refused(body, rule, message):
    _refused(body, rule, message)


def _static_tma(x):
    ld = cpasync.make_tiled_tma_atom(G2S(), x, (32, 32), swizzle="swizzle_128b")
    s = lang.SMEMPool().alloc_static((32, 32), "f32")
    bar = lang.TMABar(1)
    with lang.WarpRole(0):
        cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0))


def test_element_strides_other_than_1_are_refused():
    """element_strides=(2, 2) armed the barrier for the whole box (16384 bytes) where the TMA delivers a
    quarter (a hang), and the tile's accesses assumed the dense box."""
    _refused(lambda x, y, f: cpasync.make_tiled_tma_atom(G2S(), x, (64, 64), element_strides=(2, 2)), "atom",
             "element_strides=[2, 2]: a tiled copy's tile here is its box")
    assert _kernel(lambda x, y, f: cpasync.make_tiled_tma_atom(G2S(), x, (64, 64), element_strides=(1, 1))).build()


def _bulk_at(x, off):
    s = lang.SMEMPool().alloc((1024,), "f32")
    bar = lang.TMABar(1)
    with lang.WarpRole(0):
        cpasync.bulk_copy(cpasync.CopyBulkG2SOp(), cpasync.address_of(s, [off]), cpasync.address_of(x, [0, 0]),
                          1024, tma_bar_ptr=bar.at(0))


def _shared_descriptor(x):
    a = cpasync.make_tiled_tma_atom(G2S(), x, (32, 32))
    s, d = lang.SMEMPool().alloc_for(a), lang.SMEMPool().alloc((16,), "i64")
    bar = lang.TMABar(1)
    with lang.WarpRole(0):
        cpasync.copy(a, [0, 0], s, tma_bar_ptr=bar.at(0), tma_desc_ptr=cpasync.address_of(d))


@pytest.mark.parametrize("body,rule,message", [
    (lambda x, y, f: _bulk_at(x, 2), "alignment", "cpasync.bulk_copy its destination at an address 8 bytes off"),
    (lambda x, y, f: cpasync.cp_async(cpasync.address_of(lang.SMEMPool().alloc((64,), "f32"), [1]),
                                      cpasync.address_of(x, [0, 0]), 16), "alignment",
     "cp.async's destination at an address 4 bytes off the 16-byte alignment"),
    (lambda x, y, f: _shared_descriptor(x), "descriptor", "a TMA descriptor in shared memory"),
], ids=["bulk", "cp-async", "shared-descriptor"])
def test_addresses_that_fault_are_refused(body, rule, message):
    """(thirty-fifth session's audit) Bulk copies and cp.async at Python-int indices off their alignment, and
    a tensor copy through a descriptor in shared memory (PTX reads tensor maps from global, const or param
    memory), built and faulted."""
    _refused(body, rule, message)
    assert _kernel(lambda x, y, f: _bulk_at(x, 4)).build()  # 16 bytes in


def test_warpgroup_sync_needs_whole_warpgroups():
    _refused(lambda x, y, f: cuda.warpgroup_sync(), "barrier", "warpgroup_sync in a block of 96 threads",
             block=(96,))


def test_warps_of_a_block_with_y_and_z_dims_are_its_linear_ones():
    """block=(32, 4): warp_idx() was %tid.x >> 5, 0 in all four warps (warp 0's role ran four times)."""
    @dsl.kernel(block=(32, 4))
    def k(y: dsl.Tensor("i32", (4,))):
        with lang.WarpRole(1):
            y[0] = 1

    assert "%tid.y" in ptx(k)


def test_the_2d_cluster_scheduler_places_clusters_and_ctas_by_their_ids():
    """Cluster tiles came from blockIdx.x // (cluster_m * cluster_n): a 2-D cluster grid computed every tile
    twice, clusters of (4, 1, 1) with 2 x 2 tiles missed half."""
    def k_of(cluster):
        @dsl.kernel(block=(128,), cluster=cluster)
        def k(out: dsl.Tensor("i32", (8, 8))):
            for t in lang.ClusterPersistentScheduler2D(8, 8, cluster_m=2, cluster_n=2):
                out[t.m_idx, t.n_idx] = 1
        return k

    text = ptx(k_of((4, 1, 1)))
    assert "%clusterid.x" in text and "%cluster_ctarank" in text and "%ctaid.x" not in text
    assert "clusters are [2, 1, 1] CTAs" in str(build_error(k_of((2, 1, 1)), "scheduler"))


def test_one_tile_a_cluster_in_a_clustered_kernel_is_each_ctas_own():
    """ClusterPersistentScheduler2D with cluster_m = cluster_n = 1 in a kernel of 2-CTA clusters gave both CTAs
    of a cluster its %clusterid's tiles: each tile computed twice, half the tiles never."""
    @dsl.kernel(block=(128,), cluster=(2, 1, 1))
    def k(out: dsl.Tensor("i32", (8, 8))):
        for t in lang.ClusterPersistentScheduler2D(8, 8):
            out[t.m_idx, t.n_idx] = 1

    text = ptx(k)
    assert "%ctaid.x" in text and "%clusterid" not in text and "%cluster_ctarank" not in text


def test_a_kernel_built_with_an_unhashable_constant_is_built_not_a_type_error():
    """build(cfg={...}): the memo's key of the constants was made outside its try, a bare TypeError."""
    @dsl.kernel(block=(32,))
    def k(y: dsl.Tensor("i32", (4,)), *, cfg):
        y[0] = cfg["v"]

    assert "arith.constant 7 : i32" in k.build(cfg={"v": 7}).ir
    assert "arith.constant 9 : i32" in k.build(cfg={"v": 9}).ir


@pytest.mark.parametrize("coord", ["python", "constant"])
def test_tma_coordinates_past_signed_32_bits_are_refused(coord):
    """cpasync.copy at a coordinate of 2^32 (a Python int or a DSL constant) kept its low 32 bits: the box at
    0 was loaded without a word."""
    @dsl.kernel(block=(32,))
    def k(a: dsl.Tensor("f16", (None, None)), *, coord):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        s = lang.SMEMPool().alloc_for(ld)
        bar = lang.TMABar(1)
        dsl.barrier()
        far = 1 << 32 if coord == "python" else dsl.Index(1 << 32)
        with lang.WarpRole(0):
            bar.arrive_expect_tx(0, ld.tile_bytes)
            cpasync.copy(ld, [far, 0], s, tma_bar_ptr=bar.at(0))
        bar.wait(0, 0)

    assert "coordinate 4294967296: TMA coordinates are signed 32-bit" in str(build_error(k, "coordinates",
                                                                                         coord=coord))


@pytest.mark.parametrize("role,message", [
    (lambda: lang.WarpRole(12),
     "WarpRole 12: the block's 384 threads are 12 warp(s), 0-11: a role past them would never run"),
    (lambda: lang.WarpRole(-1), "WarpRole -1: the block's 384 threads are 12 warp(s), 0-11"),
    (lambda: lang.WarpRole(1.5), "WarpRole 1.5: a warp index, a Python int or a run-time integer value"),
    (lambda: lang.WarpRole(None), "WarpRole None: a warp index"),
    (lambda: lang.WarpgroupRole(3), "WarpgroupRole 3: the block's 384 threads are 3 warpgroup(s), 0-2"),
    (lambda: lang.WarpgroupRole(True), "WarpgroupRole True: a warpgroup index"),
    (lambda: lang.WarpgroupRole((1, 0)), "WarpgroupRole (1, 0): an empty range (lo < hi), a role that would never run"),
    (lambda: lang.WarpgroupRole((0, 4)), "WarpgroupRole range end 4: the block's 384 threads are 3 warpgroup(s), so a "
                                   "range ends at 1-3"),
    (lambda: lang.WarpgroupRole((0, 1, 2)), "WarpgroupRole (0, 1, 2): a warpgroup, or a range (lo, hi) of two"),
    (lambda: lang.WarpgroupRole((0, dsl.Int32(2))), "WarpgroupRole range end"),
])
def test_a_role_out_of_the_block_or_of_no_integer_is_refused(role, message):
    """Roles past the block's warps or warpgroups (or an empty range) built code that never ran; a float role
    compared warp indices with a float, a bool as 0 or 1, and a range of three took the first two."""
    def body(x, y, f):
        with role():
            x[0, 0] = 1.0
    _refused(body, "role", message, block=(384,))


def test_roles_of_run_time_warps_and_the_partial_last_warpgroup_build():
    def body(x, y, f):
        with lang.WarpRole(dsl.warp_idx() % 2):
            x[0, 0] = 1.0
        with lang.WarpgroupRole(dsl.Int32(1)):
            x[0, 0] = 2.0
        with lang.WarpgroupRole((1, 3)):
            x[0, 0] = 3.0
        with lang.WarpRole(11):  # the last warp
            x[0, 0] = 4.0
    assert _kernel(body, block=(384,)).build().ir
    with pytest.raises(dsl.KernelBuildError, match="WarpgroupRole range end 3: the block's 160 threads are 2"):
        _kernel(lambda x, y, f: lang.WarpgroupRole((1, 3)).__enter__(), block=(160,)).build()


@pytest.mark.parametrize("store", [True, False])
def test_a_boolean_index_is_refused(store):
    """t[cond] = v wrote element 0 or 1 (the i1 cast to an index), where numpy or Triton's mask would write the
    elements cond holds for (found by fuzz_dsl --accepted)."""
    def body(x, y, f):
        cond = dsl.thread_idx() < 5
        if store:
            y[cond] = 1.0
        else:
            y[0] = y[cond]
    _refused(body, "index", "index Boolean(i1) of tensor memref<64xbf16>: an integer, not a Boolean (for a masked "
                            "load or store, `with dsl.if_(cond):`)")
