"""The Python DSL: kernels as functions, cpasync with CuTe's names, lang."""

import re
import sys

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from helpers import REPO  # noqa: E402
from nvtma import cpasync, dsl, lang  # noqa: E402

sys.path.insert(0, str(REPO / "examples"))


def test_ws_pipeline_example_builds_and_compiles():
    import ws_pipeline
    built = ws_pipeline.ws_copy.build(promo="l2_64b")
    ir = built.ir
    assert built.smem_bytes == 4 * 64 * 128 * 2
    assert ir.count("nvtma.make_tiled_tma_atom") == 2
    assert "l2_promotion = l2_64b" in ir
    assert "nvvm.setmaxregister" not in ir  # no register budget asked for
    assert ir.count("nvgpu.mbarrier.try_wait.parity") == 2  # full and empty waits
    assert "scf.for" in ir and "prefetch_descriptor" in ir
    c = ws_pipeline.ws_copy.compile(promo="l2_256b")
    (ld, st) = c.descriptor_records("ws_copy")
    assert ld["l2_promotion_name"] == "l2_256b" and bytes.fromhex(ld["template"])[10] == 0x06
    assert st["l2_promotion_name"] == "l2_128b"
    assert "cp.async.bulk.tensor.2d" in c.ptx


def test_cute_style_unpacking_and_multicast_fields():
    @dsl.kernel(block=(128,), cluster=(2, 1, 1))
    def k(a: dsl.Tensor("bf16", (1024, 1024))):
        pool = lang.SMEMPool()
        s = pool.alloc((64, 64), "bf16", swizzle="swizzle_128b")
        # the multicast op: num_multicast with the plain load op is an error (CuTe raises too)
        atom, tma_tensor = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), a, (64, 64),
                                                       (64, 64), num_multicast=2, swizzle="swizzle_128b",
                                                       l2_promotion="CU_TENSOR_MAP_L2_PROMOTION_L2_256B")
        assert tma_tensor is a
        bar = lang.TMABar(1)
        rank = dsl.cluster_ctarank()
        mask = cpasync.create_tma_multicast_mask((2,), (rank,), 0)
        dsl.cluster_sync()
        with lang.WarpRole(0):  # one warp issues: 4 warps each arming the barrier would be a build error
            bar.arrive_expect_tx(0, 64 * 64 * 2)
            cpasync.copy(atom, cpasync.tma_partition(atom, [0, 0]), s, tma_bar_ptr=bar.at(0), mcast_mask=mask,
                         cta_rank=rank)
        bar.wait(0, 0)
        dsl.cluster_sync()

    ir = k.build().ir
    assert re.search(r"load_multicast, bf16, box = \[32, 64\], tile = \[64, 64\], swizzle = swizzle_128b, "
                     r"l2_promotion = l2_256b, multicast = 2", ir)
    assert "mask %" in ir and "cta %" in ir
    c = k.compile()
    assert "multicast::cluster" in c.ptx and "%cluster_ctarank" in c.ptx


def test_runtime_loops_and_python_unrolling():
    @dsl.kernel(block=(32,))
    def k(a: dsl.Tensor("f32", (256, 256)), n: dsl.Int32):
        for _ in range(3):        # Python loop: unrolled at build time
            dsl.barrier()
        for i in dsl.range(n):    # run-time loop over an Int32 count (an Int32 counter)
            with dsl.if_(i < 5):
                dsl.barrier()

    ir = k.build().ir
    assert ir.count("gpu.barrier") == 4 and ir.count("scf.for") == 1 and "scf.if" in ir
    assert re.search(r"scf\.for %\w+ = %\w+ to %arg\d+ step %\w+\s+: i32", ir)


def test_build_errors_are_typed():
    @dsl.kernel
    def bad(a: int):
        pass

    with pytest.raises(dsl.KernelBuildError, match="annotate it with dsl.Tensor"):
        bad.build()

    @dsl.kernel
    def bad_box(a: dsl.Tensor("i32", (256, 256))):
        cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, (64, 64), (64, 64),
                                    oob_fill="nan_request_zero_fma")

    with pytest.raises(dsl.KernelBuildError, match="oob-fill-data-type: .* data type is INT32"):
        bad_box.build()

    with pytest.raises(dsl.KernelBuildError, match="inside an @nvtma.dsl.kernel"):
        lang.SMEMPool()


def test_warp_roles_set_register_budgets():
    @dsl.kernel(block=(384,))
    def k(a: dsl.Tensor("f16", (64, 64))):
        with lang.WarpgroupRole(0, regs=40):
            dsl.barrier()
        with lang.WarpgroupRole(1, regs=232, increase=True):
            dsl.barrier()

    ir = k.build().ir
    assert ir.count("nvvm.setmaxregister") == 2
