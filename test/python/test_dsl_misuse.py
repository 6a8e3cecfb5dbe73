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
    @dsl.kernel(block=(32,))
    def k(a: dsl.Tensor("f16", (256, 256))):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        cpasync.tma_partition(ld, [0])  # MARK:verifier

    err = build_error(k, "verify")
    line = f'"{HERE}":{_line("MARK:verifier")}'
    assert "'nvtma.tma_partition' op has 1 tile coordinates, the atom's tile has 2 dims" in str(err)
    assert f"loc({line}" in str(err), str(err)


def _line(marker):
    from dsl_testing import line_of
    return line_of(HERE, marker)
