"""The nvtma dialect from Python: ODS-generated builders and the type helper."""

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from nvtma import ir  # noqa: E402
from nvtma.dialects import arith, func, gpu, memref  # noqa: E402
from nvtma.dialects import nvtma as d  # noqa: E402


def test_context_knows_everything_the_lowering_needs():
    with ir.Context() as ctx:
        for name in ("nvtma", "gpu", "nvvm", "llvm", "nvgpu", "arith", "scf", "memref", "func", "cf", "math"):
            assert ctx.dialects[name] is not None


def test_atom_type_roundtrip_and_verifier():
    with ir.Context():
        t = d.tma_atom_type("load", "f16", [64, 64], swizzle="swizzle_128b", l2_promotion="l2_256b")
        assert str(t) == "!nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b, l2_promotion = l2_256b>"
        with pytest.raises(Exception, match="box-dim-range"):
            d.tma_atom_type("load", "i8", [64, 512])


def test_an_element_type_spelling_is_built_not_parsed():
    """tma_atom_type's element-type spelling: each integer and float type MLIR spells, the same type as the
    bindings build; anything else (a wider integer, a vector, IR) an MLIRError naming the spelling."""
    with ir.Context() as ctx:
        for spelling, built in (("f16", ir.F16Type.get()), ("bf16", ir.BF16Type.get()),
                                ("f8E4M3FN", ir.Float8E4M3FNType.get()), ("tf32", ir.FloatTF32Type.get()),
                                ("i8", ir.IntegerType.get_signless(8)), ("ui32", ir.IntegerType.get_unsigned(32)),
                                ("si64", ir.IntegerType.get_signed(64)), ("index", ir.IndexType.get())):
            assert d.element_type_of(spelling, ctx) == built
        assert str(d.tma_atom_type("load", "ui32", [32, 32])) == "!nvtma.tma_atom<load, ui32, box = [32, 32]>"
        for bad in ("i128", "i0", "f7", "vector<4xf16>", "f16 ", "!llvm.ptr", "i" + "9" * 400):
            with pytest.raises(ir.MLIRError, match="element type"):
                d.element_type_of(bad, ctx)
            with pytest.raises(ir.MLIRError, match="element type"):
                d.tma_atom_type("load", bad, [32, 32])


def test_build_a_kernel_with_the_generated_builders():
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse("""
          gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
            gpu.func @k(%A: memref<256x256xf16>, %B: memref<256x256xf16>,
                        %s: memref<64x64xf16, #gpu.address_space<workgroup>>,
                        %bars: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>,
                        %g: !llvm.ptr<1>) kernel {
              gpu.return
            }
          }""")
        kernel = module.body.operations[0].regions[0].blocks[0].operations[0]
        A, B, s, bars, g = kernel.regions[0].blocks[0].arguments
        ret = kernel.regions[0].blocks[0].operations[0]
        ld = d.tma_atom_type("load", "f16", [64, 64], l2_promotion="l2_256b")
        st = d.tma_atom_type("store", "f16", [64, 64])
        with ir.InsertionPoint(ret):
            c0 = arith.ConstantOp(ir.IndexType.get(), 0).result
            a = d.MakeTiledTmaAtomOp(ld, A, [64, 64]).result
            b = d.MakeTiledTmaAtomOp(st, B, [64, 64]).result
            co = d.TmaPartitionOp([ir.IndexType.get()] * 2, a, [c0, c0]).results
            d.PrefetchDescriptorOp(a)
            d.CopyOp(a, list(co), s, [], barriers=bars, barrier_id=c0)
            d.CopyOp(b, list(co), s, [])
            d.BulkCommitGroupOp()
            d.BulkWaitGroupOp(0, read=True)
            d.CopyTensormapOp(a, g)
            d.FenceTmaDescReleaseOp()
            d.FenceTmaDescAcquireOp(g)
            d.AtomFromDescriptorOp(ld, g)
            i16 = ir.IntegerType.get_signless(16)
            d.CreateTmaMulticastMaskOp([c0], [2], 0)
        assert module.operation.verify()
        text = str(module)
        for op in ("make_tiled_tma_atom", "tma_partition", "prefetch_descriptor", "nvtma.copy", "bulk_commit_group",
                   "bulk_wait_group 0 {read}", "copy_tensormap", "fence_tma_desc_release", "fence_tma_desc_acquire",
                   "atom_from_descriptor", "create_tma_multicast_mask"):
            assert op in text, op


def test_the_warp_and_vector_ops_build_from_python():
    """The ops the DSL builds where NVVM has none (or one LLVM moves or merges), through the generated
    builders and enums; each verifies, and a bad one is the verifier's error."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse("""
          gpu.module @m [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
            gpu.func @k(%acc: !llvm.struct<(f32, f32, f32, f32)>, %a: vector<4xi32>, %b: i64, %d: i1,
                        %g: !llvm.ptr<1>, %h: vector<2xbf16>, %f: vector<2xf32>) kernel {
              gpu.return
            }
          }""")
        kernel = module.body.operations[0].regions[0].blocks[0].operations[0]
        acc, a, b, dd, g, h, f = kernel.regions[0].blocks[0].arguments
        with ir.InsertionPoint(kernel.regions[0].blocks[0].operations[0]):
            assert str(d.ReadSpecialRegisterOp(d.SpecialRegister.TID_Z).result.type) == "i32"
            assert str(d.ElectActiveOp().result.type) == "i1"
            r = d.WgmmaMmaAsyncRsOp(acc, a, b, dd, 8, d.WgmmaType.E4M3, d.WgmmaType.E5M2, scale_a=-1).result
            assert r.type == acc.type
            assert d.vector_atomic_add(h.type, g, h, scope=d.AtomicScope.CLUSTER).type == h.type
            d.vector_atomic_add(None, g, f)
        assert module.operation.verify()
        text = str(module)
        for op in ("read_special_register <tid_z>", "elect_active", "scale_a = -1", "atomic_scope<cluster>"):
            assert op in text, op
        with ir.InsertionPoint(kernel.regions[0].blocks[0].operations[0]):
            d.vector_atomic_add(f.type, g, f)
        with pytest.raises(ir.MLIRError, match="the f32 vector forms are reductions"):
            module.operation.verify()


def test_the_numeric_ops_build_from_python_and_parse_back_with_locations():
    """The numerics and barrier the DSL builds where NVVM has no op (nvtma.float_fn, truncf_rz, fptoint_sat,
    activemask, barrier_sync), through the generated builders: results inferred where the op fixes them, a bad
    one the verifier's error, and the text printed with locations parses back (nvvm.barrier's did not: its
    syntax read the trailing loc(...) as a reduction)."""
    with ir.Context(), ir.Location.file("k.py", 3, 1):
        module = ir.Module.parse("""
          gpu.module @m [#nvvm.target<chip = "sm_90a">] {
            gpu.func @k(%x: f32, %w: f64, %v: vector<4xf32>, %id: i32, %n: i32) kernel {
              gpu.return
            }
          }""")
        kernel = module.body.operations[0].regions[0].blocks[0].operations[0]
        x, w, v, bid, n = kernel.regions[0].blocks[0].arguments
        with ir.InsertionPoint(kernel.regions[0].blocks[0].operations[0]):
            assert d.FloatFnOp(d.FloatFn.DIV_APPROX, [x, x]).result.type == x.type
            assert d.FloatFnOp(d.FloatFn.SQRT_RN, [w]).result.type == w.type
            assert str(d.TruncFRzOp(w).result.type) == "f32"
            i8 = ir.VectorType.get([4], ir.IntegerType.get_signless(8))
            assert d.FPToIntSatOp(i8, v, is_unsigned=True).result.type == i8
            assert str(d.ActivemaskOp().result.type) == "i32"
            d.BarrierSyncOp(bid, count=n)
            d.BarrierSyncOp(bid)
        assert module.operation.verify()
        text = module.operation.get_asm(enable_debug_info=True)
        for op in ("float_fn <div_approx>", "truncf_rz", "fptoint_sat %arg2 unsigned", "activemask",
                   "barrier_sync %arg3, %arg4 loc("):
            assert op in text, op
        assert str(ir.Module.parse(text)) == str(module)
        with ir.InsertionPoint(kernel.regions[0].blocks[0].operations[0]):
            d.FloatFnOp(d.FloatFn.EX2_APPROX, [w])
        with pytest.raises(ir.MLIRError, match="ex2_approx is f32 only in PTX"):
            module.operation.verify()


def test_enums_are_exposed():
    assert d.L2Promotion.L2_256B.value == 3
    assert d.Swizzle.SWIZZLE_128B_ATOM_64B.value == 6
    assert d.TmaFormat.BFLOAT16.value == 9


def test_tma_atom_type_through_the_bindings_takes_every_field():
    """contracts.md item 4: tma_atom_type builds the type through the C API
    (no string spelling); element_strides and cta_group, which the old
    string path dropped, reach the type; spellings of the defaults are the
    same type."""
    from nvtma import tensormap as tm
    with ir.Context():
        t = d.tma_atom_type("load_multicast", "bf16", [32, 64], tile=[64, 64], multicast=2, cta_group=2,
                            element_strides=[1, 2], swizzle=tm.Swizzle.SWIZZLE_128B,
                            l2_promotion=d.L2Promotion.L2_256B, oob_fill="nan_request_zero_fma",
                            tma_format="bfloat16")
        assert str(t) == ("!nvtma.tma_atom<load_multicast, bf16, box = [32, 64], tile = [64, 64], "
                          "swizzle = swizzle_128b, l2_promotion = l2_256b, oob_fill = nan_request_zero_fma, "
                          "element_strides = [1, 2], multicast = 2, cta_group = 2>")
        assert ir.Type.parse(str(t)) == t
        assert d.tma_atom_bytes(t) == (32 * 64 * 2, 64 * 64 * 2)
        plain = d.tma_atom_type("load", ir.F16Type.get(), [64, 64])
        spelled = d.tma_atom_type("load", "f16", (64, 64), tma_format="float16", tile=[64, 64],
                                  element_strides=[1, 1], swizzle="none", l2_promotion="l2_128b")
        assert plain == spelled and str(plain) == "!nvtma.tma_atom<load, f16, box = [64, 64]>"
        im2col = d.tma_atom_type("im2col_load", "f16", [128, 64], lower_corner=[-1, -1], upper_corner=[-1, -1])
        assert "lower_corner = [-1, -1], upper_corner = [-1, -1]" in str(im2col)
        red = d.tma_atom_type("reduce", "i32", [32, 32], reduction=d.ReductionKind.MAX)
        assert "reduction = max" in str(red)


@pytest.mark.parametrize("kwargs,message", [
    (dict(box=[64, 512]), "box-dim-range: box dim 0 is 512 elements, the range is 1..256"),
    (dict(swizzle="swizzle_16b"), "swizzle 'swizzle_16b' is not one of none, swizzle_32b"),
    (dict(kind="copy"), "kind 'copy' is not one of load, load_multicast"),
    (dict(tma_format="float7"), "tma_format 'float7' is not one of uint8"),
    (dict(box=[64, 64.0]), "box: 64.0 is not an integer"),
    (dict(box="64"), "box: '64' is not a list of integers"),
    (dict(multicast=-1), "multicast is -1"),
    (dict(multicast=True), "multicast: True is not an integer"),
    (dict(element_strides=[1, 1, 1]), "element_strides has 3 entries, the tensor rank is 2"),
    (dict(swizzle=3), "swizzle: 3 is not a spelling"),
])
def test_tma_atom_type_errors_are_mlir_errors(kwargs, message):
    args = dict(kind="load", element_type="i8", box=[64, 64])
    args.update(kwargs)
    with ir.Context():
        with pytest.raises(ir.MLIRError) as e:
            d.tma_atom_type(**args)
    assert message in str(e.value), str(e.value)
    assert "unknown:" not in str(e.value)
