"""Memory in the kernel language: element and vector accesses of global
and shared tensors, dynamic dims read at run time, shared buffers from
lang.SMEMPool, the TMA swizzle and box layout a buffer records from the
atom that fills it, and pointers (cpasync.address_of) the descriptor ops
accept."""

import re

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from dsl_testing import assert_names_line, build_error, instructions, line_of, ptx, tma_load_and_wait  # noqa: E402
from nvtma import cpasync, dsl, lang  # noqa: E402

G2S = cpasync.CopyBulkTensorTileG2SOp
S2G = cpasync.CopyBulkTensorTileS2GOp


def flat_accesses(ir_text: str, dtype: str) -> list:
    """(op, constant flat element) of the loads and nvtma.address_of's of shared 1-D views of `dtype`, in
    program order, after folding."""
    from nvtma import ir
    from nvtma.passmanager import PassManager
    with ir.Context():
        m = ir.Module.parse(ir_text)
        PassManager.parse("builtin.module(canonicalize)").run(m.operation)
        text = str(m)
    consts = dict(re.findall(r"(%[\w-]+) = arith\.constant (\d+) : index", text))
    return [(op, int(consts[i])) for op, i in re.findall(
        rf"(memref\.load|nvtma\.address_of) %[\w-]+\[(%[\w-]+)\] : memref<\d+x{dtype}, #gpu\.address_space<workgroup>>",
        text) if i in consts]


def flat_loads(ir_text: str, dtype: str) -> list:
    """The constant element indices of the loads from shared 1-D views of
    `dtype` (the swizzle-aware accesses), after folding."""
    return [e for op, e in flat_accesses(ir_text, dtype) if op == "memref.load"]


def _swizzle_128b(byte: int) -> int:
    """TMA's 128B swizzle of a byte offset in a 1024-aligned buffer (CUDA
    programming guide, 'TMA Swizzle'): 16-byte chunk ^= row within 8 rows."""
    return byte ^ (((byte >> 7) & 7) << 4)


# --------------------------------------------------------------------------- element and vector accesses

def test_element_and_vector_accesses_of_global_and_shared():
    @dsl.kernel(block=(128,))
    def k(x: dsl.Tensor("bf16", (64, 256)), y: dsl.Tensor("bf16", (64, 256)), f: dsl.Tensor("f32", (1024,))):
        i = dsl.thread_idx()
        pool = lang.SMEMPool()
        s = pool.alloc((128, 8), "bf16")
        v = x.load_vec(8, i // 32, (i % 32) * 8)     # 16 bytes
        s.store_vec(v, i, 0)
        dsl.barrier()
        w = s.load_vec(8, 127 - i, 0)
        y.store_vec(w, i // 32, (i % 32) * 8)
        y[0, i] = s[i, 3] + x[1, i]
        f.store_vec(f.load_vec(4, i * 4) * 2.0, i * 4)

    ir = k.build().ir
    assert "vector.load" in ir and "vector.store" in ir and "memref.load" in ir and "memref.store" in ir
    assert "alignment = 16" in ir
    ins = instructions(ptx(k))
    assert {"ld.global.v4.b32", "st.shared.v4.b32", "ld.shared.v4.b32", "st.global.v4.b32"} <= ins, sorted(ins)
    assert "ld.shared.b16" in ins and "st.global.b16" in ins


def test_records_follow_vector_reductions_to_their_tensors():
    """cuda.red_add's vector reductions and packed atomics (nvtma.vector_atomic_add) assume their address is
    aligned to the value's size (v4.f32 16 bytes, v2.f32 8, bf16x2 4): the records follow it to the tensor,
    whose launch checks it. A scalar reduction (an llvm.atomicrmw of the element) records none."""
    from nvtma import cuda

    @dsl.kernel(block=(32,))
    def reds(a: dsl.Tensor("f32", (None,)), b: dsl.Tensor("f32", (None,)), c: dsl.Tensor("bf16", (None,)),
             d: dsl.Tensor("f32", (None,))):
        t = dsl.thread_idx()
        cuda.red_add(a, t * 4, dsl.full(4, 1.0))
        cuda.red_add(b, t * 2, dsl.full(2, 1.0))
        cuda.red_add(c, t * 2, dsl.full(2, 1.0, dsl.BFloat16))
        cuda.red_add(d, t, dsl.Float32(1.0))

    spec = reds.specialize([dsl.Tensor("f32", (None,)), dsl.Tensor("f32", (None,)), dsl.Tensor("bf16", (None,)),
                            dsl.Tensor("f32", (None,))])
    c = spec.compile()
    assert [p.get("align") for p in c.kernels[spec.name]["params"]] == [16, 8, 4, None]
    assert "red.gpu.global.add.v4.f32" in c.ptx


def test_records_mark_the_tensors_a_kernel_writes():
    """A parameter the kernel stores to (directly, through a pointer's atomic or by TMA) has "writes" in its
    record, and the launch refuses a view of it whose elements share memory; one it only reads has none."""
    from dsl_testing import tma_load_and_wait
    from nvtma import cpasync, cuda, lang

    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (None, None)), y: dsl.Tensor("f32", (None, None)), z: dsl.Tensor("f32", (None,)),
          a: dsl.Tensor("f16", (64, 64)), b: dsl.Tensor("f16", (64, 64))):
        t = dsl.thread_idx()
        y[0, t] = x[0, t] + dsl.Float32(x.shape[1])
        cuda.atomic_add(cpasync.address_of(z, [t]), None, dsl.Float32(1.0))
        ld = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, (64, 64))
        st = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), b, (64, 64))
        s = lang.SMEMPool().alloc_for(ld)
        tma_load_and_wait(ld, s)
        with lang.WarpRole(0):
            cpasync.copy(st, [0, 0], s)

    c = k.specialize([dsl.Tensor("f32", (None, None)), dsl.Tensor("f32", (None, None)), dsl.Tensor("f32", (None,)),
                      dsl.Tensor("f16", (64, 64)), dsl.Tensor("f16", (64, 64))]).compile()
    params = [p for p in c.kernels["k"]["params"] if p["kind"] == "memref"]
    assert [p.get("writes") for p in params] == [None, True, True, None, True]


def test_records_hold_the_alignment_the_kernels_accesses_assume():
    """A memref parameter's record has "align": what the kernel's accesses
    assume of its address and dynamic strides, so the launch refuses a view
    they would fault on (gemv's x at base + 2 faulted the context: misaligned
    address). Scalar accesses and TMA-only tensors (their descriptor has its
    own rules) record none."""
    from nvtma.kernels import bulk_roundtrip, cp_async_roundtrip, gemv, update_descriptor
    from nvtma.runtime import LaunchError, args

    def aligns(spec):
        c = spec.compile()
        return c, [p.get("align") for p in c.kernels[spec.name]["params"] if p["kind"] == "memref"]

    c, got = aligns(gemv(256, 1024))
    assert got == [None, 16, None], got   # w (TMA), x (16-byte vector loads), y (scalar atomics)
    x = [p for p in c.kernels["gemv"]["params"] if p["kind"] == "memref"][1]
    args.check_memref(args.TensorInfo(0x7F0000000000, (1024,), (1,), "bf16", 16), x, "x")
    with pytest.raises(LaunchError, match="x: address 0x7f0000000002 is not 16-byte aligned") as e:
        args.check_memref(args.TensorInfo(0x7F0000000002, (1024,), (1,), "bf16", 16), x, "x")
    assert (e.value.rule, e.value.arg) == ("alignment", "x")
    assert aligns(bulk_roundtrip(1024))[1] == [16, 16]        # cp.async.bulk's addresses
    assert aligns(cp_async_roundtrip(1024))[1] == [16, None]  # 16-byte cp.async from src; dst: byte stores
    # B goes into a descriptor (tensormap.replace); ws holds the descriptor the TMA load reads
    assert aligns(update_descriptor(128, 128))[1] == [None, 16, None, 64]


def test_records_hold_the_descriptors_tensormap_replace_writes_a_tensor_into():
    """update_descriptor's B goes into a descriptor on the device
    (tensormap.replace), where no driver checks it: its record lists the
    static fields of that descriptor ("tensormaps", the atom's), and the
    launch runs the driver's rules on B's dims, strides and address."""
    from nvtma.kernels import update_descriptor
    from nvtma.runtime import LaunchError, args

    spec = update_descriptor(128, 128)
    params = [p for p in spec.compile().kernels[spec.name]["params"] if p["kind"] == "memref"]
    assert [len(p.get("tensormaps") or ()) for p in params] == [0, 1, 0, 0]
    (t,) = params[1]["tensormaps"]
    assert {k: t[k] for k in ("mode", "rank", "tma_format", "element_bits", "box_dim", "swizzle", "interleave",
                              "element_strides")} == dict(mode="tiled", rank=2, tma_format=6, element_bits=16,
                                                          box_dim=[64, 64], swizzle=0, interleave=0,
                                                          element_strides=[1, 1])

    def b(shape, strides=None):
        return args.TensorInfo(0x7F0000000000, shape, strides or (shape[1], 1), "f16", 16)

    args.check_memref(b((192, 320)), params[1], "B")
    for info, rule in [(b((0, 64)), "global-dim-range"), (b((2, 64), (1 << 39, 1)), "global-stride-range")]:
        with pytest.raises(LaunchError) as e:
            args.check_memref(info, params[1], "B")
        assert (e.value.arg, e.value.rule) == ("B", rule), str(e.value)


@pytest.mark.parametrize("n,dtype,message", [(3, "f32", "12 bytes"), (32, "f32", "128 bytes")])
def test_vector_width_is_checked(n, dtype, message):
    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor(dtype, (1024,))):
        x.load_vec(n, 0)

    assert message in str(build_error(k, "vector-width"))


def test_wrong_index_count_is_a_build_error():
    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (4, 4))):
        x[1] = 0.0

    assert "1 indices for a rank-2 tensor" in str(build_error(k, "index"))


# --------------------------------------------------------------------------- dynamic dims

def test_dynamic_dims_are_read_at_run_time():
    seen = {}

    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (None, 8, None)), y: dsl.Tensor("i64", (4,))):
        shape = x.shape
        seen["shape"] = tuple(type(d) if not isinstance(d, int) else d for d in shape)
        with dsl.if_(dsl.thread_idx() == 0):
            y[0] = shape[0].to(dsl.Int64)      # first read inside a branch ...
        y[1] = x.shape[0].to(dsl.Int64)        # ... then outside it: each read is its own memref.dim
        y[2] = x.shape[2].to(dsl.Int64)

    ir = k.build().ir
    assert seen["shape"] == (dsl.Index, 8, dsl.Index)
    assert ir.count("memref.dim") >= 3
    assert "-9223372036854775808" not in ir  # never the dynamic-size sentinel as a value
    # the memref parameter is (ptr, ptr, offset, size0, size1, size2, stride0, ...): sizes 0 and 2 come
    # from parameters 3 and 5
    text = ptx(k)
    assert re.search(r"ld\.param\.b64\s+%rd\d+, \[k_param_3\]", text)
    assert re.search(r"ld\.param\.b64\s+%rd\d+, \[k_param_5\]", text)


def test_len_of_a_dynamic_dim_is_refused():
    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (None,))):
        len(x)

    assert "use t.shape[0]" in str(build_error(k, "shape"))


# --------------------------------------------------------------------------- shared buffers

def test_shared_buffers_are_aligned_and_recorded():
    seen = {}

    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("f16", (256, 256))):
        pool = lang.SMEMPool()
        small = pool.alloc((10,), "f32")                           # 40 bytes at 0
        ring = pool.alloc((3, 64, 64), "f16", swizzle="swizzle_128b")  # 1024-aligned
        tail = pool.alloc((16,), "i32")                            # 128-aligned after the ring
        seen["offsets"] = (small.info.offset, ring.info.offset, tail.info.offset)
        seen["stage"] = ring.stage(2).static_shape
        seen["swizzle"] = ring.swizzle
        tail[dsl.thread_idx() % 16] = small[3].to(dsl.Int32)   # used, so the window stays

    built = k.build()
    assert seen == {"offsets": (0, 1024, 1024 + 3 * 8192), "stage": (64, 64), "swizzle": "swizzle_128b"}
    assert built.smem_bytes == 1024 + 3 * 8192 + 128  # rounded up to 128
    c = k.compile()
    assert c.records["kernels"]["k"]["launch"]["smem"] == built.smem_bytes
    assert ".extern .shared .align 1024" in c.ptx


def test_buffer_allocated_inside_a_loop_is_usable_after_it():
    """Buffers are views built at the kernel's entry: cta_sum allocates its
    scratch on first use, inside the loop here, and uses it again after."""
    from nvtma import cuda

    @dsl.kernel(block=(128,))
    def k(x: dsl.Tensor("f32", (1024,)), n: dsl.Int32):
        i = dsl.thread_idx()
        for _ in dsl.range(n):
            x[i] = cuda.cta_sum(x[i])
        x[i] = cuda.cta_sum(x[i])

    ptx(k)


# --------------------------------------------------------------------------- swizzle and box layout

def test_swizzle_comes_from_the_atom_and_reads_are_logical():
    """s[r, c] is element (r, c) of the tile, wherever the 128B swizzle put it."""
    seen = {}

    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("bf16", (256, 256)), y: dsl.Tensor("bf16", (1024,))):
        pool = lang.SMEMPool()
        s = pool.alloc((64, 64), "bf16")            # no swizzle= : the atom says it
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64), swizzle="swizzle_128b")
        tma_load_and_wait(ld, s)
        seen["swizzle"] = s.swizzle
        for j, (r, c) in enumerate([(0, 0), (1, 8), (3, 17), (7, 63), (9, 40)]):
            y[j] = s[r, c]
        y[100] = s[dsl.thread_idx() % 64, 5]         # run-time index: the XOR is built

    ir = k.build().ir
    assert seen["swizzle"] == "swizzle_128b"
    want = [_swizzle_128b((r * 64 + c) * 2) // 2 for r, c in [(0, 0), (1, 8), (3, 17), (7, 63), (9, 40)]]
    assert want == [0, 64, 201, 455, 608]
    assert flat_loads(ir, "bf16") == want
    assert "arith.xori" in ir


def test_multi_box_tiles_are_box_major():
    """A [64, 128] bf16 tile with a 128B swizzle is two [64, 64] boxes
    (a box row is at most the swizzle span), one after the other."""
    seen = {}

    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("bf16", (256, 256)), y: dsl.Tensor("bf16", (1024,))):
        pool = lang.SMEMPool()
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 128), swizzle="swizzle_128b")
        s = pool.alloc_for(ld)
        tma_load_and_wait(ld, s)
        seen["box"] = (ld.box, s.info.box)
        y[0] = s[1, 8]
        y[1] = s[1, 72]      # box 1, element (1, 8) in it

    ir = k.build().ir
    assert seen["box"] == ((64, 64), (64, 64))
    assert flat_loads(ir, "bf16") == [_swizzle_128b(72 * 2) // 2, 64 * 64 + _swizzle_128b(72 * 2) // 2]


def test_unswizzled_multi_box_tile():
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("f16", (256, 1024)), y: dsl.Tensor("f16", (1024,))):
        pool = lang.SMEMPool()
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (4, 512))   # boxes of [4, 256]
        s = pool.alloc_for(ld)
        tma_load_and_wait(ld, s)
        y[0] = s[1, 300]

    assert flat_loads(k.build().ir, "f16") == [4 * 256 + 1 * 256 + 44]


def _copy_into(s_of_pool, atom_kw, before=None):
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("bf16", (256, 256)), y: dsl.Tensor("bf16", (64,))):
        pool = lang.SMEMPool()
        s = s_of_pool(pool)
        ld = cpasync.make_tiled_tma_atom(G2S(), a, s.static_shape[-2:], **atom_kw)
        bar = lang.TMABar(1)
        if before:
            before(s, y)
        with lang.WarpRole(0):
            cpasync.copy(ld, [0, 0], s if s.rank == 2 else s.stage(0), tma_bar_ptr=bar.at(0))

    return k


def test_swizzle_mismatch_is_a_build_error():
    k = _copy_into(lambda p: p.alloc((64, 64), "bf16", swizzle="swizzle_64b"), dict(swizzle="swizzle_128b"))
    err = build_error(k, "swizzle")
    assert "uses swizzle_128b, but this buffer holds swizzle_64b-swizzled data" in str(err)


def test_misaligned_swizzled_buffer_is_a_build_error():
    def pool_fn(p):
        p.alloc((8,), "f32")            # 32 bytes: the next buffer starts at 128
        return p.alloc((64, 64), "bf16")

    err = build_error(_copy_into(pool_fn, dict(swizzle="swizzle_128b")), "swizzle")
    assert "needs the buffer (and each stage of it) 1024-byte aligned" in str(err)
    assert "at shared offset 128" in str(err)


def test_ring_stages_must_keep_the_swizzle_alignment():
    # [2, 4, 64] bf16: 512-byte stages, so stage 1 would start mid-pattern
    err = build_error(_copy_into(lambda p: p.alloc((2, 4, 64), "bf16"), dict(swizzle="swizzle_128b")), "swizzle")
    assert "with 512-byte stages" in str(err)
    # 8-row stages (1024 bytes) are fine
    _copy_into(lambda p: p.alloc((2, 8, 64), "bf16"), dict(swizzle="swizzle_128b")).build()


def test_accesses_traced_before_the_atom_set_the_swizzle_are_refused():
    def write_first(s, y):
        s[0, 1] = y[0]          # built as unswizzled: the atom below would contradict it

    k = _copy_into(lambda p: p.alloc((64, 64), "bf16"), dict(swizzle="swizzle_128b"), before=write_first)
    assert "already read or wrote this buffer as unswizzled data" in str(build_error(k, "swizzle"))


def test_allocating_with_the_swizzle_makes_early_accesses_swizzled():
    def write_first(s, y):
        s[1, 8] = y[0]

    k = _copy_into(lambda p: p.alloc((64, 64), "bf16", swizzle="swizzle_128b"), dict(swizzle="swizzle_128b"),
                   before=write_first)
    assert re.search(r"memref\.store %\w+, %view_\d+\[%c64\]", k.build().ir)


def _store_tile(st, s):
    """The threads' writes to `s` fenced and published, then stored by atom `st`."""
    from nvtma import cuda
    cuda.fence_proxy_async()
    dsl.barrier()
    with lang.WarpRole(0):
        cpasync.copy(st, [0, 0], s)
        cpasync.bulk_commit_group()
        cpasync.bulk_wait_group(0)


def test_threads_write_a_tile_the_store_atom_then_reads_swizzled():
    """Written by threads first, stored by TMA after: allocated for the store
    atom, the writes go through its swizzle, and the fence orders them."""
    @dsl.kernel(block=(128,))
    def k(y: dsl.Tensor("bf16", (256, 256))):
        st = cpasync.make_tiled_tma_atom(S2G(), y, (64, 64), swizzle="swizzle_128b")
        s = lang.SMEMPool().alloc_for(st)
        s[1, 8] = dsl.BFloat16(1.0)
        _store_tile(st, s)

    ir = k.build().ir
    assert re.search(r"memref\.store %\w+, %view_\d+\[%c64\]", ir)   # (1, 8) swizzled: element 64
    text = ptx(k)
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in text and "fence.proxy.async.shared::cta" in text


def test_an_alias_for_a_store_atom_is_swizzled_and_box_major():
    """An f32 tile's bytes viewed as a [64, 128] bf16 y tile for a 128B-swizzled
    store atom (two boxes of [64, 64]): writes land where the TMA store reads
    them; an unaligned buffer or a shape other than the atom's is refused."""
    @dsl.kernel(block=(128,))
    def k(y: dsl.Tensor("bf16", (256, 256))):
        pool = lang.SMEMPool()
        f32 = pool.alloc((64, 64), "f32", align=1024)
        st = cpasync.make_tiled_tma_atom(S2G(), y, (64, 128), swizzle="swizzle_128b")
        t = pool.alias(f32, (64, 128), "bf16", atom=st)
        t[1, 72] = dsl.BFloat16(1.0)  # box 1, element (1, 8) in it
        _store_tile(st, t)

    want = 64 * 64 + _swizzle_128b((1 * 64 + 8) * 2) // 2
    assert re.search(rf"memref\.store %\w+, %view_\d+\[%c{want}\]", k.build().ir)

    def refused(shape, align, rule):
        @dsl.kernel(block=(128,))
        def bad(y: dsl.Tensor("bf16", (256, 256))):
            pool = lang.SMEMPool()
            pool.alloc((8,), "f32")
            f32 = pool.alloc((64, 64), "f32", align=align)
            st = cpasync.make_tiled_tma_atom(S2G(), y, (64, 128), swizzle="swizzle_128b")
            pool.alias(f32, shape, "bf16", atom=st)
        return build_error(bad, rule)

    assert "1024-byte alignment" in str(refused((64, 128), 128, "swizzle"))
    assert "for an atom of [64, 128]" in str(refused((32, 128), 1024, "smem"))


def test_static_shared_buffers_stay_out_of_the_pool():
    """alloc_static: a module global of its own per call, beside the pool
    (whose size, and so the launch's dynamic shared memory, is unchanged)."""
    seen = {}

    @dsl.kernel(block=(128,))
    def k(x: dsl.Tensor("f32", (256,)), y: dsl.Tensor("f32", (256,))):
        pool = lang.SMEMPool()
        ring = pool.alloc((64,), "f32")
        a, b = pool.alloc_static((128,), "f32"), pool.alloc_static((4,), "i32")
        t = dsl.thread_idx()
        a[t] = x[t]
        b[t % 4] = t
        dsl.barrier()
        ring[t % 64] = a[127 - t]
        y[t] = ring[t % 64] + b[t % 4].to(dsl.Float32)
        seen["smem"] = dsl.current_kernel().smem_bytes

    built = k.build()
    assert seen["smem"] == 256 and built.smem_bytes == 256
    assert re.search(r"memref\.global \"private\" @__nvtma_static_0 : memref<128xf32, #gpu\.address_space<workgroup>>",
                     built.ir)
    assert "@__nvtma_static_1 : memref<4xi32" in built.ir
    assert ".shared .align 16 .b8 __nvtma_static_0[512]" in ptx(k)


def test_prefetch_fetches_a_tile_into_l2_box_by_box():
    """cpasync.prefetch: one TMA L2 prefetch per box of the tile, no shared
    memory and no barrier; a multicast atom's CTA prefetches its slice, with
    the eviction policy it is given."""
    @dsl.kernel(block=(128,), cluster=(2, 1, 1))
    def k(a: dsl.Tensor("f16", (256, 256)), b: dsl.Tensor("f16", (256, 256))):
        two = cpasync.make_tiled_tma_atom(G2S(), a, (64, 128), swizzle="swizzle_128b")  # two 128-byte spans
        mc = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), b, (64, 64), num_multicast=2)
        with lang.WarpRole(0):
            cpasync.prefetch(two, [64, 0])
            cpasync.prefetch(mc, [0, 64], cta_rank=dsl.cluster_ctarank(), cache_hint="evict_first")

    text = ptx(k)
    got = re.findall(r"cp\.async\.bulk\.prefetch\.tensor\.2d\.L2\.global\.tile(\.L2::cache_hint)?", text)
    assert got == ["", "", ".L2::cache_hint"], got
    assert "cp.async.bulk.tensor" not in text.replace("cp.async.bulk.prefetch.tensor", "")


def test_a_multicast_tile_of_several_boxes_lies_box_after_box():
    """A multicast tile wider than its swizzle span (bf16 [64, 128], 128B:
    boxes of 64 columns, each CTA 32 of the rows) lies box after box, each
    box all the CTAs' rows: the second box's loads land 8192 bytes in (the
    rank's slice 4096 bytes into either), and element accesses see the same
    layout (row 0, column 64 is 8192 bytes in). Before, the second box went
    4096 bytes in, onto the other CTA's slice of the first."""
    @dsl.kernel(block=(128,), cluster=(2, 1, 1))
    def k(a: dsl.Tensor("bf16", (256, 256)), out: dsl.Tensor("bf16", (1,))):
        pool = lang.SMEMPool()
        t = pool.alloc((64, 128), "bf16", swizzle="swizzle_128b")
        atom = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), a, (64, 128),
                                           num_multicast=2, swizzle="swizzle_128b")
        bar = lang.TMABar(1)
        dsl.cluster_sync()
        rank = dsl.cluster_ctarank()
        with lang.WarpRole(0):
            cpasync.copy(atom, [0, 0], t, tma_bar_ptr=bar.at(0), mcast_mask=3, cta_rank=rank)
        bar.wait(0, 0)
        with dsl.if_(dsl.thread_idx() == 0):
            out[0] = t[0, 64]
        dsl.cluster_sync()

    ir_text = str(k.build().ir)
    assert "memref<2x64x64xbf16" in ir_text  # the blocked view nvtma.copy takes: [boxes, 64 rows, 64]
    text = ptx(k)
    assert len(re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx"
                          r"::bytes\.multicast::cluster", text)) == 2
    assert re.search(r"\b8192\b", text)


@pytest.mark.parametrize("case,rule", [("store", "prefetch"), ("multicast", "multicast"), ("rank", "multicast"),
                                       ("one_thread", "single-issuer")])
def test_prefetch_refuses(case, rule):
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("f16", (256, 256))):
        op = {"store": S2G(), "multicast": cpasync.CopyBulkTensorTileG2SMulticastOp()}.get(case, G2S())
        atom = cpasync.make_tiled_tma_atom(op, a, (64, 64), **({"num_multicast": 2} if case == "multicast" else {}))
        if case == "one_thread":
            with dsl.if_(dsl.thread_idx() == 0):
                cpasync.prefetch(atom, [0, 0])
        else:
            with lang.WarpRole(0):
                cpasync.prefetch(atom, [0, 0], **({"cta_rank": 0} if case == "rank" else {}))

    build_error(k, rule=rule)


# --------------------------------------------------------------------------- pointers

def test_address_of_gives_shared_and_global_pointers():
    seen = {}

    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (16, 16))):
        s = lang.SMEMPool().alloc((64,), "f32")
        seen["shared"] = str(cpasync.address_of(s, [3]).type)
        seen["global"] = str(cpasync.address_of(x, [2, 5]).type)

    k.build()
    assert seen == {"shared": "!llvm.ptr<3>", "global": "!llvm.ptr<1>"}


def test_address_of_a_global_tensor_feeds_update_tma_descriptor():
    """The descriptor-update chain CuTe writes with tma_desc_ptr=: copy the
    atom's descriptor to a global workspace, point it at another tensor,
    fence, then copy through it."""
    @dsl.kernel(block=(32,))
    def k(a: dsl.Tensor("f16", (256, 256)), b: dsl.Tensor("f16", (None, 256)), ws: dsl.Tensor("i8", (128,))):
        pool = lang.SMEMPool()
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        s = pool.alloc_for(ld)
        bar = lang.TMABar(1)
        dsl.barrier()
        desc = cpasync.address_of(ws)
        with lang.WarpRole(0):
            cpasync.copy_tensormap(ld, desc)
            cpasync.update_tma_descriptor(ld, b, desc)
            cpasync.fence_tma_desc_release()
            cpasync.fence_tma_desc_acquire(desc)
            bar.arrive_expect_tx(0, ld.tile_bytes)
            cpasync.copy(ld, [0, 0], s, tma_bar_ptr=bar.at(0), tma_desc_ptr=desc)
        bar.wait(0, 0)

    ir = k.build().ir
    assert "nvtma.update_tma_descriptor" in ir and "nvtma.atom_from_descriptor" in ir
    text = ptx(k)
    for want in ("tensormap.replace.tile.global_address.global.b1024.b64",
                 "tensormap.replace.tile.global_dim.global.b1024.b32",
                 "tensormap.replace.tile.global_stride.global.b1024.b64",
                 "fence.proxy.tensormap::generic.release.gpu", "fence.proxy.tensormap::generic.acquire.gpu"):
        assert want in text, want
    # the copy goes through the workspace pointer (the one the acquire fence names), not the
    # grid-constant descriptor parameter
    copy = re.search(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\S* \[%r\w+\], \[(%rd\d+), ", text)
    fence = re.search(r"fence\.proxy\.tensormap::generic\.acquire\.gpu \[(%rd\d+)\], 128", text)
    assert copy and fence, text
    assert copy.group(1) == fence.group(1)


def test_update_tma_descriptor_of_a_tensor_whose_type_breaks_the_drivers_rules_is_refused_at_build():
    """tensormap.replace writes the tensor's pitch into a descriptor on the
    device, where no driver checks it: a pitch its type fixes (100 f16 = 200
    bytes, not a multiple of 16) is refused when the kernel is built, naming
    the rule, the value and the user's line."""
    @dsl.kernel(block=(32,))
    def k(a: dsl.Tensor("f16", (256, 256)), b: dsl.Tensor("f16", (None, 100)), ws: dsl.Tensor("i8", (128,))):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 64))
        desc = cpasync.address_of(ws)
        cpasync.copy_tensormap(ld, desc)
        cpasync.update_tma_descriptor(ld, b, desc)  # the update

    err = build_error(k, "global-stride-align")
    assert "global-stride-align: global stride 0 is 200 bytes, not a multiple of 16" in str(err), str(err)
    assert_names_line(err, __file__, "the update")


# --------------------------------------------------------------------------- views of TMA-laid-out tiles (audit)

def _tile_kernel(body, swizzle="swizzle_128b", stages=None):
    """A kernel whose `body(s, y)` gets an f32 [64, 32] tile (or a ring of `stages`) a TMA atom with this swizzle
    filled: one box, or with the 64B swizzle two boxes of [64, 16] (a box row is at most the swizzle span)."""
    @dsl.kernel(block=(128,))
    def k(a: dsl.Tensor("f32", (256, 256)), y: dsl.Tensor("f32", (64,))):
        ld = cpasync.make_tiled_tma_atom(G2S(), a, (64, 32), swizzle=swizzle)
        s = lang.SMEMPool().alloc_for(ld, stages=stages)
        tma_load_and_wait(ld, s if stages is None else s.stage(0))
        body(s, y)

    return k


def _atomic_and_read(v, y, idx):
    from nvtma import cuda
    cuda.atomic_add(v, idx, 1.0, scope="cta")
    y[0] = v[idx]


@pytest.mark.parametrize("body,swizzle,stages,want", [
    # rows 1.. of a 128B-swizzled tile: element (0, 0) is byte 128 ^ 16 (address_of's all-zero shortcut took 128)
    (lambda s, y: _atomic_and_read(s.rows(1, 8), y, (0, 0)), "swizzle_128b", None, _swizzle_128b(128) // 4),
    # a ring of tiles of two 64B boxes: ring[1, 2, 20] is stage 1's box 1, row 2, column 4
    (lambda s, y: _atomic_and_read(s, y, (1, 2, 20)), "swizzle_64b", 2,
     2048 + 1024 + ((2 * 16 + 4) * 4 ^ (((2 * 64 + 16) >> 7 & 3) << 4)) // 4),
    # blocked: box 1, row 2, column 4 through the 64B swizzle, as s[2, 20]
    (lambda s, y: _atomic_and_read(s.blocked((64, 16)), y, (1, 2, 4)), "swizzle_64b", None,
     1024 + ((2 * 16 + 4) * 4 ^ (((2 * 64 + 16) >> 7 & 3) << 4)) // 4),
    # a single-box tile as [32, 64]: element (1, 0) is the tile's element 64 (row 2), swizzled
    (lambda s, y: _atomic_and_read(s.reshape((32, 64)), y, (1, 0)), "swizzle_128b", None,
     _swizzle_128b(64 * 4) // 4),
], ids=["rows-zero", "multi-box-ring", "blocked-swizzled", "reshape-2d"])
def test_views_of_tma_laid_out_tiles_address_the_elements_they_read(body, swizzle, stages, want):
    """Each view's atomic and read reach the same element, the one the TMA layout puts there (they
    disagreed: rows() at (0, 0), a multi-box ring's [i, r, c], blocked() of a swizzled tile, reshape())."""
    acc = flat_accesses(_tile_kernel(body, swizzle, stages).build().ir, "f32")
    assert acc == [("nvtma.address_of", want), ("memref.load", want)], acc


def test_the_blocked_and_ring_views_agree_with_the_tile():
    """A 64B multi-box ring: ring[1, r, c], ring.stage(1)[r, c] and ring.stage(1).blocked(box)[c // 16, r, c % 16]
    are one element."""
    def body(s, y):
        for j, (r, c) in enumerate([(2, 20), (9, 3), (63, 31)]):
            y[3 * j] = s[1, r, c]
            y[3 * j + 1] = s.stage(1)[r, c]
            y[3 * j + 2] = s.stage(1).blocked((64, 16))[c // 16, r, c % 16]
    loads = [e for _, e in flat_accesses(_tile_kernel(body, "swizzle_64b", 3).build().ir, "f32")]
    assert loads[0::3] == loads[1::3] == loads[2::3] and len(set(loads)) == 3, loads


@pytest.mark.parametrize("view", [lambda s: s.rows(8, 8), lambda s: s.reshape((2048,)), lambda s: s.reshape((32, 64))],
                         ids=["rows", "reshape-1d", "reshape-2d"])
def test_rows_and_reshapes_of_a_box_major_tile_are_refused(view):
    """Its rows are pieces of several boxes: rows(8, 8)[0, 0] read element 256 where the tile's (8, 0) is 128."""
    k = _tile_kernel(lambda s, y: y.__setitem__(0, view(s)[0, 0]), "swizzle_64b")
    assert "laid out in boxes of [64, 16], box after box" in str(build_error(k, "box"))


def test_a_tile_with_its_atoms_layout_is_not_carried_through_a_loop_or_branch():
    """It came back without its layout: its accesses went to the elements' row-major places, silently."""
    def body(s, y):
        for _, (cur, nxt) in dsl.range(4, carry=(s.stage(dsl.Index(0)), s.stage(dsl.Index(1)))):
            y[0] = cur[1, 4]
            dsl.yield_(nxt, cur)
    err = build_error(_tile_kernel(body, stages=2), "carry")
    assert "carry the stage index" in str(err) and "swizzle_128b" in str(err)


def test_an_alias_of_a_stage_is_that_stages_bytes():
    seen = {}

    def body(s, y):
        a = lang.SMEMPool().alias(s.stage(1), (64, 32), "f32")
        seen["offsets"] = (s.info.offset, a.info.offset)
        y[0] = a[0, 0]
        with pytest.raises(dsl.KernelBuildError, match="run-time index"):
            lang.SMEMPool().alias(s.stage(dsl.Index(1)), (64, 32), "f32")
    _tile_kernel(body, stages=2).build()
    assert seen["offsets"][1] == seen["offsets"][0] + 64 * 32 * 4


@pytest.mark.parametrize("index,message", [
    (lambda: (dsl.Float32(1.0), 0), "index Float32(f32)"),
    (lambda: (True, 0), "index True"),
    (lambda: (64, 0), "index 64 of a dim of 64"),
    (lambda: (0, -1), "index -1 of a dim of 32"),
], ids=["runtime-float", "bool", "past-the-end", "negative"])
def test_indices_that_are_not_in_range_integers_are_refused(index, message):
    """A run-time float became the swizzled offset computed in float (s[0.5, 0] read s[0, 16]); bools and Python
    ints outside the static dims built and read other memory."""
    k = _tile_kernel(lambda s, y: y.__setitem__(0, s[index()]))
    assert message in str(build_error(k, "index"))


@pytest.mark.parametrize("body,message", [
    (lambda x, y: y.__setitem__(-1, 1.0), "index -1 of a dim of run-time size"),
    (lambda x, y: y.__setitem__(0, x[0, -1]), "index -1 of a dim of run-time size"),
    (lambda x, y: y.store_vec(dsl.full(4, 1.0, dsl.Float32), -4), "index -4 of a dim of run-time size"),
], ids=["store", "load", "store-vec"])
def test_negative_indices_of_dynamic_dims_are_refused(body, message):
    """(audit) y[-1] of a dynamic dim built: the lowering's inbounds|nuw address went 16 GiB past y, x[0, -1]
    read 4 bytes before x."""
    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (None, None)), y: dsl.Tensor("f32", (None,))):
        body(x, y)

    assert message in str(build_error(k, "index"))


def test_vector_accesses_stay_inside_a_static_dim_and_a_rank():
    """store_vec(v, 8) of 4 lanes on a 10-element tensor wrote 8 bytes past it (only the first lane was
    checked); a rank-0 tensor's vector access was an IndexError."""
    @dsl.kernel(block=(32,))
    def k(y: dsl.Tensor("f32", (10,)), z: dsl.Tensor("f32", ()), *, case):
        if case == "past":
            y.store_vec(dsl.full(4, 1.0, dsl.Float32), 8)
        elif case == "rank0":
            z.store_vec(dsl.full(1, 1.0, dsl.Float32))
        else:
            y.store_vec(dsl.full(2, 1.0, dsl.Float32), 8)  # lanes 8-9: inside

    assert "a 4-lane access at 8 takes lanes 8-11 of a dim of 10" in str(build_error(k, "index", case="past"))
    assert "rank-0 tensor" in str(build_error(k, "index", case="rank0"))
    k.build(case="inside")
    with pytest.raises(dsl.KernelBuildError, match=r"one int in \[0, 2\*\*62\)"):
        dsl.Tensor("f32", (4, 4), strides=(2 ** 64, 1))


def test_rows_at_a_python_int_start_build_and_ldmatrix_rows_keep_16_bytes():
    """rows(1, 8) of a whole tile failed to verify (its offset was typed dynamic); an ldmatrix row 8 bytes in
    compiled."""
    from nvtma import cuda
    _tile_kernel(lambda s, y: y.__setitem__(0, s.rows(1, 8)[0, 0])).build()
    k = _tile_kernel(lambda s, y: cuda.ldmatrix(s, 0, 2, num=1))
    assert "ldmatrix/stmatrix row at [0, 2]" in str(build_error(k, "alignment"))


def test_atomics_and_address_of_a_swizzled_tile_reach_the_element_it_reads():
    """An atomic on s[1, 4] of a 128B-swizzled tile went to row-major element 36, while s[1, 4] reads
    element 32 (byte 144 with chunk 1 ^ row 1): it added into another element, silently."""
    from nvtma import cuda

    def body(s, y):
        cuda.atomic_add(s, (1, 4), 1.0, scope="cta")
        cuda.red_add(s, (2, 9), 2.0, scope="cta")
        cuda.atomic_add(cpasync.address_of(s, [3, 17]), None, 3.0, scope="cta")  # through a pointer
        y[0] = s[1, 4] + s[2, 9] + s[3, 17]
    acc = flat_accesses(_tile_kernel(body).build().ir, "f32")
    want = [_swizzle_128b(b) // 4 for b in (144, 292, 452)]
    assert want == [32, 65, 125]
    assert [e for op, e in acc if op == "nvtma.address_of"] == want, acc
    assert sorted(e for op, e in acc if op == "memref.load") == want, acc
