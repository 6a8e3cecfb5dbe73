"""Fuzzing findings in the TMA, wgmma and tcgen05 helpers and in tensors: bad arguments are typed
KernelBuildErrors naming the rule, the value and the user's line (not a KeyError, a TypeError from inside
nvtma, a verifier error at the kernel's def line or a late refusal by the lowering), and a tile a
128B_ATOM_32B TMA atom filled on sm_100a reads its elements where the TMA put them."""

import re

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import assert_names_line, build_error, ptx, tma_load_and_wait  # noqa: E402
from nvtma import cpasync, cuda, dsl, lang, tcgen05, wgmma  # noqa: E402

G2S = cpasync.CopyBulkTensorTileG2SOp


def _flat_loads(ir_text, dtype):
    """The constant element indices of the loads from shared 1-D (flat, swizzle-aware) views of `dtype`,
    after folding."""
    from nvtma import ir
    from nvtma.passmanager import PassManager
    with ir.Context():
        m = ir.Module.parse(ir_text)
        PassManager.parse("builtin.module(canonicalize)").run(m.operation)
        text = str(m)
    consts = dict(re.findall(r"(%[\w-]+) = arith\.constant (\d+) : index", text))
    return [int(consts[i]) for i in re.findall(
        rf"memref\.load %[\w-]+\[(%[\w-]+)\] : memref<\d+x{dtype}, #gpu\.address_space<workgroup>>", text)
        if i in consts]


# --------------------------------------------------------------------------- B1: the 128B-atom swizzles

def _atom_32b(byte):
    """CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B of a byte offset in an aligned buffer: the 32-byte chunk of a
    128-byte row ^= the row within 4 (CuTe's Swizzle<2, 5, 2>)."""
    return byte ^ (((byte >> 7) & 3) << 5)


def test_atom_32b_tile_reads_are_logical_on_sm100a():
    cells = [(0, 0), (1, 0), (1, 17), (2, 40), (3, 63), (5, 9)]
    seen = {}

    @dsl.kernel(block=(128,), arch="sm_100a")
    def k(x: dsl.Tensor("bf16", (256, 256)), y: dsl.Tensor("bf16", (64,))):
        pool = lang.SMEMPool()
        pool.alloc((64,), "bf16")                   # 128 bytes: the atom's buffer must still start on 1024
        ld = cpasync.make_tiled_tma_atom(G2S(), x, (64, 64), swizzle="swizzle_128b_atom_32b")
        s = pool.alloc_for(ld)
        seen["offset"] = s.info.offset
        tma_load_and_wait(ld, s)
        for j, (r, c) in enumerate(cells):
            y[j] = s[r, c]
        y[63] = s[dsl.thread_idx() % 64, 5]         # run-time index: the XOR is built

    ir = k.build().ir
    want = [_atom_32b((r * 64 + c) * 2) // 2 for r, c in cells]
    assert want == [0, 80, 65, 136, 207, 345]
    # not the 16-byte-chunk 128B pattern the other modes' table gave
    assert want != [((r * 64 + c) * 2 ^ (((r * 64 + c) * 2 >> 7) & 7) << 4) // 2 for r, c in cells]
    assert _flat_loads(ir, "bf16") == want
    assert "arith.xori" in ir
    assert seen["offset"] % 1024 == 0
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in k.compile().ptx


@pytest.mark.parametrize("swizzle", ["swizzle_128b_atom_64b", "swizzle_128b_atom_32b_flip_8b"])
def test_unmodeled_atom_swizzle_element_access_is_refused(swizzle):
    @dsl.kernel(block=(128,), arch="sm_100a")
    def k(x: dsl.Tensor("bf16", (256, 256)), y: dsl.Tensor("bf16", (64,))):
        ld = cpasync.make_tiled_tma_atom(G2S(), x, (64, 64), swizzle=swizzle)
        s = lang.SMEMPool().alloc_for(ld)
        tma_load_and_wait(ld, s)
        y[0] = s[0, 0]  # MARK:access

    err = build_error(k, "swizzle")
    assert swizzle in str(err) and "address pattern" in str(err)
    assert_names_line(err, __file__, "MARK:access")


def test_wgmma_descriptor_refuses_an_atom_swizzled_tile():
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("bf16", (64, 64))):
        t = lang.SMEMPool().alloc((64, 64), "bf16", swizzle="swizzle_128b_atom_32b")
        wgmma.SmemDescriptor(t)

    err = build_error(k, "descriptor")
    assert "swizzle_128b_atom_32b" in str(err) and "swizzle_32b, swizzle_64b, swizzle_128b" in str(err)


@pytest.mark.parametrize("swizzle", ["bogus", 3, ["swizzle_128b"], "swizzle_128b_atom_64b"])
def test_wgmma_descriptor_swizzle_argument_is_checked(swizzle):
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("bf16", (64, 64))):
        wgmma.SmemDescriptor(lang.SMEMPool().alloc((64, 64), "bf16"), swizzle=swizzle)

    err = build_error(k, "descriptor")
    assert f"swizzle={swizzle!r}" in str(err) and "swizzle_32b, swizzle_64b, swizzle_128b" in str(err)


def test_wider_than_16_byte_access_of_a_swizzled_tile_is_refused():
    """One flat-view load of 32 bytes read the lanes past the first 16-byte chunk from another chunk."""
    @dsl.kernel(block=(128,))
    def k(x: dsl.Tensor("bf16", (256, 256)), y: dsl.Tensor("bf16", (64,))):
        ld = cpasync.make_tiled_tma_atom(G2S(), x, (64, 64), swizzle="swizzle_128b")
        s = lang.SMEMPool().alloc_for(ld)
        tma_load_and_wait(ld, s)
        y.store_vec(s.load_vec(16, 1, 0), 0)

    assert "16-lane access of BFloat16 in a swizzle_128b-swizzled tile" in str(build_error(k, "vector-width"))


# --------------------------------------------------------------------------- B2, D9: cpasync arguments

def _cpasync_case(case):
    @dsl.kernel(block=(128,), cluster=(2, 1))
    def k(o: dsl.Tensor("f32", (64,)), m: dsl.Tensor("f32", (256, 256))):
        pool = lang.SMEMPool()
        ld = cpasync.make_tiled_tma_atom(G2S(), m, (64, 32), swizzle="swizzle_128b")
        sb = pool.alloc_for(ld)
        bar = lang.TMABar(1)
        with lang.WarpRole(0):
            if case == "copy":
                cpasync.copy(ld, 0, sb, tma_bar_ptr=bar.at(0))
            elif case == "prefetch":
                cpasync.prefetch(ld, None)
            elif case == "address_int_idx":
                cpasync.address_of(o, 0)
            elif case == "address_of_int":
                cpasync.address_of(5, [0])
            elif case == "tiler":
                cpasync.make_tiled_tma_atom(G2S(), m, (64, 32), 64)
            elif case == "mask":
                cpasync.create_tma_multicast_mask((2, 1), 0, 0)
            elif case == "mask_mode":
                cpasync.create_tma_multicast_mask((2, 1), (0, 0), 2)
            elif case == "mask_coord":
                cpasync.create_tma_multicast_mask((2, 1), (2, 0), 0)
            elif case == "mask_coord_const":
                cpasync.create_tma_multicast_mask((2, 1), (0, dsl.Int32(-1)), 0)
            elif case == "rank":
                cpasync.cluster_address(sb, [0, 0], 5)
            elif case == "rank_negative":
                cpasync.cluster_address(sb, [0, 0], -1)
            elif case == "rank_const":
                cpasync.cluster_address(sb, [0, 0], dsl.Int32(2))
            else:
                cpasync.cache_hint([])
    return k


@pytest.mark.parametrize("case,rule,message", [
    ("copy", "coordinates", "cpasync.copy coordinates 0: a list or tuple"),
    ("prefetch", "coordinates", "cpasync.prefetch coordinates None: a list or tuple"),
    ("address_int_idx", "index", "cpasync.address_of indices 0: a list or tuple"),
    ("address_of_int", "tensor", "cpasync.address_of of 5: a tensor"),
    ("tiler", "atom", "cta_tiler 64: the CTA's tile"),
    ("mask", "multicast", "cta_coord 0: this CTA's coordinates"),
    ("mask_mode", "multicast", "mcast_mode 2: a dim of the cluster shape [2, 1] (0-1)"),
    ("mask_coord", "multicast", "coordinate 0 is 2, the cluster has 2 CTAs along that dim (0-1)"),
    ("mask_coord_const", "multicast", "coordinate 1 is -1, the cluster has 1 CTAs along that dim (0-0)"),
    ("rank", "cluster", "cluster_address rank 5: a CTA rank 0-1 of the kernel's clusters of 2 CTAs"),
    ("rank_negative", "cluster", "cluster_address rank -1: a CTA rank 0-1"),
    ("rank_const", "cluster", "cluster_address rank Int32(i32): a CTA rank 0-1"),
    ("hint", "cache-hint", "cache hint []: one of"),
])
def test_cpasync_arguments_are_checked_first(case, rule, message):
    assert message in str(build_error(_cpasync_case(case), rule))


def test_cluster_address_of_a_run_time_or_valid_rank_still_builds():
    @dsl.kernel(block=(128,), cluster=(2,))
    def k(o: dsl.Tensor("i32", (64,))):
        b = lang.SMEMPool().alloc((64,), "f32")
        bar = lang.TMABar(1)
        cpasync.dsmem_store(dsl.Float32(1.0), cpasync.cluster_address(b, [0], 1), bar.remote_view(1).ptr(0))
        cpasync.dsmem_store(dsl.Float32(1.0), cpasync.cluster_address(b, [1], dsl.cluster_ctarank() ^ 1),
                            bar.remote_view(1).ptr(0))

    assert "mapa" in ptx(k)


# --------------------------------------------------------------------------- C1, C6: make_tiled_tma_atom

@pytest.mark.parametrize("case,rule,message", [
    ("tile0", "tile-dim-range", "tile dim 0 is 0"),
    ("swizzle_none", "argument", "swizzle: None is not a Swizzle"),
    ("l2", "argument", "l2_promotion: 'l2_512b' is not a L2Promotion"),
])
def test_tensormap_errors_from_an_atom_name_the_users_line(case, rule, message):
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("bf16", (64, 256))):
        if case == "tile0":
            cpasync.make_tiled_tma_atom(G2S(), a, (0, 64), swizzle="swizzle_128b")  # MARK:tile0
        elif case == "swizzle_none":
            cpasync.make_tiled_tma_atom(G2S(), a, (64, 64), swizzle=None)  # MARK:swizzle_none
        else:
            cpasync.make_tiled_tma_atom(G2S(), a, (64, 64), l2_promotion="l2_512b")  # MARK:l2

    err = build_error(k, rule)
    assert isinstance(err, dsl.KernelBuildError) and message in str(err)
    assert_names_line(err, __file__, f"MARK:{case}")


@pytest.mark.parametrize("case,message", [
    ("gather4", "a gather4 TMA atom needs an sm_100 or sm_110 family target"),
    ("cta_group2", "a cta_group 2 TMA atom needs an sm_100 or sm_110 family target"),
    ("atom_swizzle", "swizzle 'swizzle_128b_atom_32b' is an sm_100 TMA swizzle"),
])
def test_sm100_atoms_are_refused_at_build_on_sm90a(case, message):
    def body(A):
        if case == "gather4":
            cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensor2DGather4G2SOp(), A, (4, 64))  # MARK:gather4
        elif case == "cta_group2":
            cpasync.make_tiled_tma_atom(G2S(), A, (128, 64), cta_group=2)  # MARK:cta_group2
        else:
            cpasync.make_tiled_tma_atom(G2S(), A, (64, 64), swizzle="swizzle_128b_atom_32b")  # MARK:atom_swizzle

    @dsl.kernel(block=(128,), arch="sm_90a")
    def k90(A: dsl.Tensor("bf16", (128, 64))):
        body(A)

    @dsl.kernel(block=(128,), arch="sm_100a")
    def k100(A: dsl.Tensor("bf16", (128, 64))):
        body(A)

    err = build_error(k90, "arch")
    assert message in str(err) and "sm_90a" in str(err)
    assert_names_line(err, __file__, f"MARK:{case}")
    k100.build()  # the same atom on sm_100a


@pytest.mark.parametrize("op", ["update", "release", "acquire", "cp_release"])
def test_tensormap_ops_below_ptx83_are_refused_at_build(op):
    """tensormap.replace and the tensormap proxy fences arrived in PTX 8.3: below it the lowering's target check
    refused them only once the kernel was built (fuzz_dsl's "late" seed 766439); the DSL refuses at the line."""
    def make(version):
        @dsl.kernel(block=(32,), ptx=version)
        def k(a: dsl.Tensor("f16", (256, 256)), b: dsl.Tensor("f16", (None, None)), ws: dsl.Tensor("i8", (128,))):
            ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
            p = cpasync.address_of(ws)
            sp = cpasync.address_of(lang.SMEMPool().alloc((128,), "i8"))
            with lang.WarpRole(0):
                if op == "update":
                    cpasync.update_tma_descriptor(ld, b, p)  # MARK:ptx-update
                elif op == "release":
                    cpasync.fence_tma_desc_release()  # MARK:ptx-release
                elif op == "acquire":
                    cpasync.fence_tma_desc_acquire(p)  # MARK:ptx-acquire
                else:
                    cpasync.cp_fence_tma_desc_release(p, sp)  # MARK:ptx-cp_release
        return k

    err = build_error(make(82), "ptx")
    assert "needs PTX ISA 8.3" in str(err) and "ptx=82" in str(err)
    assert_names_line(err, __file__, f"MARK:ptx-{op}")
    text = make(83).compile().ptx
    assert ".version 8.3" in text and "tensormap" in text


def test_f32_vector_red_below_ptx81_is_refused_at_build():
    def make(version):
        @dsl.kernel(block=(32,), ptx=version)
        def k(o: dsl.Tensor("f32", (64,))):
            cuda.red_add(cpasync.address_of(o, [4]), dsl.full(4, 1.0))  # MARK:red-v4-ptx
        return k

    err = build_error(make(80), "ptx")
    assert "needs PTX ISA 8.1" in str(err) and "red.global.add.v4.f32" in str(err)
    assert_names_line(err, __file__, "MARK:red-v4-ptx")
    text = make(81).compile().ptx
    assert ".version 8.1" in text and "global.add.v4.f32" in text


@pytest.mark.parametrize("case", ["gather4", "cta_group2"])
def test_sm101_gather4_and_cta_group2_atoms_need_ptx88_or_older(case):
    """LLVM 22 selects them for sm_101a up to +ptx88 only: PTX ISA 9.0 renamed sm_101 to sm_110."""
    def make(version):
        @dsl.kernel(block=(128,), arch="sm_101a", ptx=version)
        def k(A: dsl.Tensor("bf16", (128, 64))):
            if case == "gather4":
                cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensor2DGather4G2SOp(), A, (4, 64))  # MARK:101-gather4
            else:
                cpasync.make_tiled_tma_atom(G2S(), A, (128, 64), cta_group=2)  # MARK:101-cta_group2
        return k

    err = build_error(make(90), "ptx")
    assert "sm_110a or sm_110f" in str(err) and "ptx=90" in str(err)
    assert_names_line(err, __file__, f"MARK:101-{case}")
    make(88).build()


@pytest.mark.parametrize("which", ["global", "shared"])
def test_cp_fence_tma_desc_release_pointer_spaces_are_checked_at_build(which):
    @dsl.kernel(block=(32,))
    def k(ws: dsl.Tensor("i8", (128,))):
        g = cpasync.address_of(ws)
        sp = cpasync.address_of(lang.SMEMPool().alloc((128,), "i8"))
        with lang.WarpRole(0):
            if which == "global":
                cpasync.cp_fence_tma_desc_release(sp, sp)  # MARK:cpf-global
            else:
                cpasync.cp_fence_tma_desc_release(g, g)  # MARK:cpf-shared

    err = build_error(k, "pointer")
    assert f"tma_desc_{which}_ptr has type !llvm.ptr<{3 if which == 'global' else 1}>" in str(err)
    assert f"in address space {which} ({1 if which == 'global' else 3}) (" in str(err)
    assert_names_line(err, __file__, f"MARK:cpf-{which}")


@pytest.mark.parametrize("op", ["copy", "update", "acquire"])
@pytest.mark.parametrize("given,shown", [("int", "index"), ("tensor", "memref<128xi8>"),
                                         ("cluster", "!llvm.ptr<7>")])
def test_descriptor_pointers_are_checked_at_build(op, given, shown):
    """A descriptor pointer that is not one (an int, a tensor, a shared::cluster address) failed the op's verifier
    with the whole kernel's IR; the DSL names the rule and the user's line."""
    @dsl.kernel(block=(32,), cluster=(2,))
    def k(a: dsl.Tensor("f16", (256, 256)), b: dsl.Tensor("f16", (None, None)), ws: dsl.Tensor("i8", (128,))):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        sm = lang.SMEMPool().alloc((128,), "i8")
        p = {"int": 5, "tensor": ws, "cluster": cpasync.cluster_address(sm, [0], 1)}[given]
        with lang.WarpRole(0):
            if op == "copy":
                cpasync.copy_tensormap(ld, p)  # MARK:desc-copy
            elif op == "update":
                cpasync.update_tma_descriptor(ld, b, p)  # MARK:desc-update
            else:
                cpasync.fence_tma_desc_acquire(p)  # MARK:desc-acquire

    err = build_error(k, "pointer")
    assert f"has type {shown}; it must point to the descriptor, in address space generic (0), global (1) or " \
           "shared (3)" in str(err)
    assert_names_line(err, __file__, f"MARK:desc-{op}")


def test_descriptor_pointers_in_global_and_shared_memory_build():
    @dsl.kernel(block=(32,))
    def k(a: dsl.Tensor("f16", (256, 256)), b: dsl.Tensor("f16", (None, None)), ws: dsl.Tensor("i8", (128,))):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        g = cpasync.address_of(ws)
        sp = cpasync.address_of(lang.SMEMPool().alloc((128,), "i8"))
        with lang.WarpRole(0):
            for p in (g, sp):
                cpasync.copy_tensormap(ld, p)
                cpasync.update_tma_descriptor(ld, b, p)
            cpasync.cp_fence_tma_desc_release(g, sp)
            cpasync.fence_tma_desc_acquire(g)

    text = ptx(k)
    assert "tensormap.replace.tile.global_address.global" in text
    assert "tensormap.replace.tile.global_address.shared::cta" in text
    assert "fence.proxy.tensormap::generic.acquire.gpu" in text


# --------------------------------------------------------------------------- wgmma: D7, D8, C2, C3, C4

def _wgmma_case(case):
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("bf16", (64, 256)), c: dsl.Tensor("f32", (64, 64))):
        pool = lang.SMEMPool()
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64), swizzle="swizzle_128b")
        sa = pool.alloc_for(ld)
        tma_load_and_wait(ld, sa)
        d = wgmma.SmemDescriptor(sa)
        acc = wgmma.Accumulator(64)
        wgmma.fence()
        if case == "kblock_float":
            acc = wgmma.mma_async(acc, d.k_block(1.5), d.k_block(0))  # MARK:kblock_float
        elif case == "kblock_runtime":
            acc = wgmma.mma_async(acc, d.k_block(dsl.Int32(0)), d.k_block(0))  # MARK:kblock_runtime
        elif case == "row_block_float":
            acc = wgmma.mma_async(acc, d.row_block(8.0), d.k_block(0))  # MARK:row_block_float
        elif case == "offset_float":
            d.add_16B_offset(0.5)  # MARK:offset_float
        elif case == "scale_d":
            acc = wgmma.mma_async(acc, d, d, scale_d=dsl.thread_idx() > 0)  # MARK:scale_d
        elif case == "scale_d_str":
            acc = wgmma.mma_async(acc, d, d, scale_d="yes")  # MARK:scale_d_str
        elif case == "a_type_list":
            acc = wgmma.mma_async(acc, d, d, a_type=["bf16"])  # MARK:a_type_list
        elif case == "ok":
            r = dsl.thread_idx() // 128 * 8
            acc = wgmma.mma_async(acc, d.row_block(r).k_block(1), d.k_block(1).add_16B_offset(dsl.Int32(0)),
                                  b_type="bf16", scale_d=False)
        wgmma.commit_group()
        wgmma.wait_group(0)
        c[0, 0] = acc[0]
    return k


@pytest.mark.parametrize("case,rule,message", [
    ("kblock_float", "descriptor", "SmemDescriptor.k_block(1.5): kb is a Python int"),
    ("kblock_runtime", "descriptor", "SmemDescriptor.k_block(Int32(i32)): kb is a Python int, fixed at build"),
    ("row_block_float", "descriptor", "SmemDescriptor.row_block(8.0): a Python int or a run-time integer"),
    ("offset_float", "descriptor", "SmemDescriptor.add_16B_offset(0.5): a Python int or a run-time integer"),
    ("scale_d", "wgmma", "wgmma.mma_async scale_d=Boolean(i1): with A in shared memory a Python bool, fixed at"),
    ("scale_d_str", "wgmma", "wgmma.mma_async scale_d='yes'"),
    ("a_type_list", "wgmma", "wgmma a_type=['bf16']: a type name"),
])
def test_wgmma_arguments_fixed_at_build_are_checked(case, rule, message):
    err = build_error(_wgmma_case(case), rule)
    assert message in str(err)
    assert "Python `if`" not in str(err)
    assert_names_line(err, __file__, f"MARK:{case}")


def test_wgmma_descriptor_offsets_that_are_ints_or_run_time_integers_still_build():
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16" in ptx(_wgmma_case("ok"))


@pytest.mark.parametrize("shape,dtype,given,message", [
    ((64, 16), "f64", "tf32", "wgmma a_type='tf32' for a tile of Float64"),
    ((64, 128), "u8", "f16", "wgmma a_type='f16' for a tile of Uint8"),  # (an integer tile of another width)
], ids=["tf32-on-f64", "f16-on-u8"])
def test_an_operand_type_the_tile_cannot_hold_is_refused(shape, dtype, given, message):
    @dsl.kernel(block=(128,))
    def k(c: dsl.Tensor("f32", (64, 64))):
        d = wgmma.SmemDescriptor(lang.SMEMPool().alloc(shape, dtype), swizzle="swizzle_128b")
        acc = wgmma.mma_async(wgmma.Accumulator(64), d.k_block(0), d.k_block(0), a_type=given, b_type=given)
        c[0, 0] = acc[0]

    assert message in str(build_error(k, "wgmma"))


def test_accumulator_from_vector_values_is_refused_at_the_users_line():
    @dsl.kernel(block=(128,))
    def k(c: dsl.Tensor("f32", (64, 64))):
        acc = wgmma.Accumulator.from_values(64, [dsl.full(2, dsl.Float32(0.0))] * 32)  # MARK:from_values
        c[0, 0] = acc[0]

    err = build_error(k, "wgmma")
    assert "Accumulator.from_values value 0 is Vector<2 x Float32>: a Float32 scalar" in str(err)
    assert_names_line(err, __file__, "MARK:from_values")


def test_accumulator_n_of_another_type_says_so():
    @dsl.kernel(block=(128,))
    def k(c: dsl.Tensor("f32", (64, 64))):
        c[0, 0] = wgmma.Accumulator("64")[0]

    assert "wgmma n = '64': a multiple of 8 in [8, 256], given as a Python int (not a str)" in str(
        build_error(k, "wgmma"))


# --------------------------------------------------------------------------- B3, B10: tensors

def test_indexing_a_tensor_with_a_type_class():
    @dsl.kernel(block=(32,))
    def k(o: dsl.Tensor("f32", (64,))):
        o[dsl.Int32] = 1.0  # MARK:type_index

    err = build_error(k, "index")
    assert "index Int32 of tensor memref<64xf32>: a type, not a value" in str(err)
    assert_names_line(err, __file__, "MARK:type_index")


@pytest.mark.parametrize("kw,message", [
    (dict(shape=4), "dsl.Tensor shape 4: a tuple of dims"),
    (dict(shape=(1.5,)), "dsl.Tensor shape (1.5,)"),
    (dict(shape=(-1,)), "dsl.Tensor shape (-1,)"),
    (dict(shape=(4,), strides=1), "dsl.Tensor strides 1: a tuple"),
])
def test_tensor_annotation_shapes_are_checked(kw, message):
    with pytest.raises(dsl.KernelBuildError) as e:
        dsl.Tensor("f32", **kw)
    assert e.value.rule == "shape" and message in str(e.value)


# --------------------------------------------------------------------------- B11: host-side encoders

@pytest.mark.parametrize("call,rule,message", [
    (lambda: wgmma.descriptor_bits(1024, "16", 1024, "swizzle_128b"), "descriptor", "leading byte offset '16'"),
    (lambda: wgmma.descriptor_bits(1024.0, 16, 1024), "descriptor", "start address 1024.0"),
    (lambda: wgmma.descriptor_bits(1024, 16, 1024, "swizzle_128b", base_offset=1.5), "descriptor",
     "base offset 1.5"),
    (lambda: wgmma.descriptor_bits(1024, 16, 1024, []), "descriptor", "swizzle []: one of"),
    (lambda: tcgen05.descriptor_bits(1024, 16, 1024, []), "descriptor", "swizzle []: one of"),
    (lambda: tcgen05.descriptor_bits(1024, 16, 1024, lbo_mode=1.0), "descriptor", "leading dimension mode 1.0"),
    (lambda: tcgen05.instr_descriptor_bits("f32", "bf16", "bf16", 128, 128, sparse_id2="x"), "tcgen05",
     "sparsity selector 'x'"),
    (lambda: tcgen05.instr_descriptor_bits("f32", "bf16", "bf16", 128, 128, max_shift=1.0), "tcgen05",
     "max_shift 1.0"),
    (lambda: tcgen05.instr_descriptor_bits("f32", "bf16", "bf16", 128.0, 128), "shape", "M = 128.0"),
    (lambda: tcgen05.instr_descriptor_bits("f32", "bf16", "bf16", 128, 128, trans_a="x"), "tcgen05",
     "trans_a='x': True or False"),
    (lambda: tcgen05.instr_descriptor_block_scaled_bits("f32", "e4m3", "e4m3", "ue8m0", "ue8m0", 128, 128,
                                                        sfa_id=2.0), "tcgen05", "sfa_id 2.0"),
    (lambda: tcgen05.instr_descriptor_block_scaled_bits("f32", "e4m3", "e4m3", "ue8m0", "ue8m0", 128, 128,
                                                        kind=[]), "tcgen05", "block-scaled kind []"),
    (lambda: tcgen05.infer_swizzle("64", "bf16"), "descriptor", "infer_swizzle row_elems '64': a positive int"),
])
def test_host_encoders_check_their_arguments(call, rule, message):
    with pytest.raises(dsl.KernelBuildError) as e:
        call()
    assert e.value.rule == rule and message in str(e.value), str(e.value)


# --------------------------------------------------------------------------- tcgen05.SmemDescriptor

@pytest.mark.parametrize("case,message", [
    ("atom_tile", "takes swizzle_32b/64b/128b K-major tiles, this one is swizzle_128b_atom_32b"),
    ("kblock_none", "K-block None of a tile with K = 64: a Python int, fixed at build time"),
    ("kblock_float", "K-block 1.5 of a tile with K = 64: a Python int"),
])
def test_tcgen05_descriptor_arguments_are_checked(case, message):
    """The 128B-atom swizzles now in the span table stay refused by the tcgen05 descriptor (their UMMA
    layout is not modeled); k_block(None) was a TypeError."""
    @dsl.kernel(block=(128,), arch="sm_100a")
    def k(a: dsl.Tensor("bf16", (128, 64))):
        pool = lang.SMEMPool()
        if case == "atom_tile":
            tcgen05.SmemDescriptor(pool.alloc((128, 64), "bf16", swizzle="swizzle_128b_atom_32b"))
        else:
            d = tcgen05.SmemDescriptor(pool.alloc_tcgen05_mma_AB((128, 64), "bf16"))
            d.k_block(None if case == "kblock_none" else 1.5)

    assert message in str(build_error(k, "descriptor"))


@pytest.mark.parametrize("strides,shown", [((1, 8), "8"), ((None, None), "not known at build")])
def test_a_vector_access_of_a_tensor_with_a_non_unit_innermost_stride_is_refused(strides, shown):
    """vector.load's verifier refused it ("most minor memref dim must have unit stride"), at no user line."""
    @dsl.kernel(block=(32,), name="k")
    def k(t: dsl.Tensor("f32", (8, 8), strides=strides), o: dsl.Tensor("f32", (64,))):
        o[0] = t.load_vec(4, 0, 0)[0]  # MARK:strided-vec
    err = build_error(k, "vector")
    assert f"a 4-lane access of a tensor whose innermost stride is {shown}" in str(err), str(err)
    assert_names_line(err, __file__, "MARK:strided-vec")


def test_a_vector_access_of_a_tensor_with_a_unit_innermost_stride_builds():
    @dsl.kernel(block=(32,), name="k")
    def k(t: dsl.Tensor("f32", (8, 8), strides=(None, 1)), o: dsl.Tensor("f32", (64,))):
        o.store_vec(t.load_vec(4, 0, 0), 0)
    assert "ld.global.v4.b32" in ptx(k), ptx(k)


# --------------------------------------------------------------------------- fuzz_dsl's "verify" outcomes (s61)

def _verified_case(case):
    @dsl.kernel(block=(128,), cluster=(2,))
    def k(a: dsl.Tensor("f16", (256, 256)), b: dsl.Tensor("f16", (None, None, None)),
          c: dsl.Tensor("i32", (None, None)), ws: dsl.Tensor("i8", (256,))):
        pool = lang.SMEMPool()
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        s = pool.alloc_for(ld)
        sb = pool.alloc((256,), "i8")
        bar = lang.TMABar(1)
        dsl.barrier()
        with lang.WarpRole(0):
            if case == "update_rank":
                cpasync.update_tma_descriptor(ld, b, cpasync.address_of(ws))  # MARK:vf-update_rank
            elif case == "update_dtype":
                cpasync.update_tma_descriptor(ld, c, cpasync.address_of(ws))  # MARK:vf-update_dtype
            elif case == "copy_coords":
                cpasync.copy(ld, [], s, tma_bar_ptr=bar.at(0))  # MARK:vf-copy_coords
            elif case == "s2s_no_barrier":
                cpasync.bulk_copy(cpasync.CopyBulkS2SOp(), cpasync.address_of(sb),  # MARK:vf-s2s_no_barrier
                                  cpasync.address_of(sb), 256)
            elif case == "cp_async_shared_src":
                cpasync.cp_async(cpasync.address_of(sb), cpasync.address_of(sb))  # MARK:vf-cp_async_shared_src
            else:
                cpasync.make_tma_atom_from_descriptor(dsl.Int64(0), ld)  # MARK:vf-atom_int
    return k


@pytest.mark.parametrize("case,rule,message", [
    ("update_rank", "tensor", "cpasync.update_tma_descriptor: tensor has rank 3, the atom describes rank 2"),
    ("update_dtype", "tensor", "cpasync.update_tma_descriptor: tensor element type 'i32' differs from the atom's"),
    ("copy_coords", "coordinates", "cpasync.copy: has 0 coordinates"),
    ("s2s_no_barrier", "bulk-copy", "cpasync.bulk_copy: s2s_cluster completes on the peer CTA's mbarrier"),
    ("cp_async_shared_src", "cp-async", "cpasync.cp_async: operand #1 must be LLVM pointer in address space 1"),
    ("atom_int", "pointer", "cpasync.make_tma_atom_from_descriptor: desc_ptr has type i64"),
])
def test_ops_the_verifier_refused_are_refused_at_the_users_line(case, rule, message):
    err = build_error(_verified_case(case), rule)
    assert message in str(err), str(err)
    assert " op " not in str(err).split(": ", 1)[1][:60], str(err)  # (the op's name is the DSL call's)
    assert_names_line(err, __file__, f"MARK:vf-{case}")
