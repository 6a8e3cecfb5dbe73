"""The kernels the GPU tests run (IR only: importable without MLIR)."""

import struct

from nvtma import kernels as K

PROMOTIONS = ["none", "l2_64b", "l2_128b", "l2_256b"]

# (elem, shape, box, swizzle): every dtype, ranks 2..5, every swizzle the
# driver takes on sm_90, edges that leave partial boxes
TILE_CASES = [
    ("f32", (300, 500), (32, 32), "swizzle_128b"),
    ("f32", (64, 96), (16, 8), "swizzle_32b"),
    ("f16", (1000, 3000), (64, 64), "swizzle_128b"),
    ("f16", (257, 136), (64, 32), "swizzle_64b"),
    ("f16", (128, 128), (64, 64), "none"),
    ("bf16", (513, 264), (128, 64), "swizzle_128b"),
    ("bf16", (64, 64), (32, 16), "swizzle_32b"),
    ("f8E4M3FN", (256, 512), (64, 128), "swizzle_128b"),
    ("i8", (100, 208), (32, 64), "swizzle_64b"),
    ("i8", (129, 80), (64, 32), "swizzle_32b"),
    ("f16", (3, 50, 96), (1, 32, 64), "swizzle_128b"),
    ("f32", (3, 5, 100, 72), (1, 2, 16, 32), "none"),
    ("bf16", (2, 3, 4, 40, 64), (1, 1, 2, 16, 64), "swizzle_128b"),
    ("f32", (6, 200), (8, 32), "swizzle_128b"),
]


def dump_specs():
    return {p: K.dump_descriptor((256, 256), "f16", (64, 64), l2_promotion=p) for p in PROMOTIONS}


def tile_specs():
    return [K.tile_copy(shape, elem, box, swizzle=sw) for elem, shape, box, sw in TILE_CASES]


# (zfill, mbarrier) of cp_async_roundtrip's GPU cases: part of each chunk read (the rest zeros), completion on an
# mbarrier, both
CP_ASYNC_VARIANTS = [(True, False), (False, True), (True, True)]


def all_specs():
    specs = list(dump_specs().values()) + tile_specs()
    specs += [K.tile_copy((1000, 1000), "f16", (64, 64), prefetch=True, l2_promotion="l2_256b")]
    specs += [K.tile_copy((1000, 1000), "f16", (64, 64), prefetch=True, l2_prefetch=True, swizzle="swizzle_128b")]
    specs += [K.box_dump((20, 40), "f32", (8, 32), oob, (16, 20)) for oob in ("none", "nan_request_zero_fma")]
    specs += [K.multicast_copy(512, 256, "f16", (64, 64), c) for c in (2, 4, 8, 16)]
    specs += [K.reduce_add(256, 256, "f32", (32, 32))]
    specs += [K.im2col_dump(2, 8, 8, 64, 64, 64)]
    specs += [K.bulk_roundtrip(16384), K.cp_async_roundtrip(8192)]
    specs += [K.cp_async_roundtrip(8192, zfill=z, mbarrier=m) for z, m in CP_ASYNC_VARIANTS]
    specs += [K.update_descriptor(256, 256)]
    specs += [K.pipelined_copy(1024, 2048, "f16", (64, 128), 4, load_hint=h[0], store_hint=h[1])
              for h in ((None, None), ("evict_first", "evict_last"))]
    specs += [gemv_spec(*c) for c in GEMV_CASES] + [gemv_pdl_spec()]
    specs += [swizzled_atomics_spec(), conversions_spec(), vector_atomics_spec(), split_elections_spec(),
              float_fns_spec()]
    specs += [rs_wgmma_spec(d) for d in RS_WGMMA_TYPES] + [doubled_spec()]
    specs += [static_smem_spec(n) for n in STATIC_SMEM_WORDS]
    specs += gemm_specs()
    return specs


def swizzled_atomics_spec():
    """Atomics into a 128B-swizzled shared tile a TMA load filled: thread t adds 1 (atomic_add) and 2 (red_add)
    into element (t % 64, t // 64 * 16 + t % 16) at run-time indices, thread 0 adds 10 into (5, 5) at Python-int
    ones, then each thread reads its element back into y[t] (= a[r, c] + 3, + 10 for t = 5). Atomics went to the
    element's row-major place, not the swizzled one the load and the read use (thirty-fourth session)."""
    from nvtma import cpasync, cuda, dsl, lang
    from dsl_testing import tma_load_and_wait

    @dsl.kernel(block=(128,), name="swizzled_atomics")
    def swizzled_atomics(a: dsl.Tensor, y: dsl.Tensor):
        ld = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, (64, 32), swizzle="swizzle_128b")
        s = lang.SMEMPool().alloc_for(ld)
        tma_load_and_wait(ld, s)
        t = dsl.thread_idx()
        r, c = t % 64, t // 64 * 16 + t % 16
        cuda.atomic_add(s, (r, c), 1.0, scope="cta")
        cuda.red_add(s, (r, c), 2.0, scope="cta")
        with dsl.if_(t == 0):
            cuda.atomic_add(s, (5, 5), 10.0, scope="cta")
        dsl.barrier()
        y[t] = s[r, c]

    return swizzled_atomics.specialize([dsl.Tensor("f32", (64, 32)), dsl.Tensor("f32", (128,))])


def vector_atomics_spec():
    """nvtma.vector_atomic_add on the GPU: thread t of 128 adds (1, 2) as f16x2 into h[2p:2p+2] and (1, 0.5) as
    bf16x2 (red) into b[2p:2p+2] for p = t % 32, 4 x 1.0 (red.v4) into f4[4q:4q+4] and (1, 2) (red.v2) into
    f2[2q:2q+2] for q = t % 8, and (1, 2) as f16x2 into a zeroed shared tile at [2p], read back into sh; thread 0
    alone adds (3, 4) into h[64:66] and stores the old value it returns into old."""
    from nvtma import cuda, dsl, lang

    @dsl.kernel(block=(128,), name="vector_atomics")
    def vector_atomics(h: dsl.Tensor, b: dsl.Tensor, f4: dsl.Tensor, f2: dsl.Tensor, sh: dsl.Tensor,
                       old: dsl.Tensor):
        t = dsl.thread_idx()
        p, q = t % 32, t % 8
        f16, bf16 = dsl.Float16, dsl.BFloat16
        s = lang.SMEMPool().alloc((64,), "f16")
        with dsl.if_(t < 64):
            s[t] = f16(0.0)
        dsl.barrier()
        cuda.atomic_add(h, (p * 2,), dsl.vector_of([f16(1.0), f16(2.0)], f16))
        cuda.red_add(b, (p * 2,), dsl.vector_of([bf16(1.0), bf16(0.5)], bf16))
        cuda.red_add(f4, (q * 4,), dsl.full(4, 1.0))
        cuda.red_add(f2, (q * 2,), dsl.vector_of([dsl.Float32(1.0), dsl.Float32(2.0)], dsl.Float32))
        cuda.atomic_add(s, (p * 2,), dsl.vector_of([f16(1.0), f16(2.0)], f16), scope="cta")
        with dsl.if_(t == 0):
            old.store_vec(cuda.atomic_add(h, (64,), dsl.vector_of([f16(3.0), f16(4.0)], f16)), 0)
        dsl.barrier()
        with dsl.if_(t < 64):
            sh[t] = s[t]

    return vector_atomics.specialize([dsl.Tensor("f16", (66,)), dsl.Tensor("bf16", (64,)), dsl.Tensor("f32", (32,)),
                                      dsl.Tensor("f32", (16,)), dsl.Tensor("f16", (64,)), dsl.Tensor("f16", (2,))])


def split_elections_spec():
    """Elections ending both arms of a branch that splits each warp (lanes 0-9 / 10-31): in each arm one lane
    adds 1 to o[warp], through dsl.elect_active in one arm and elect_sync(cuda.activemask()) in the other, so
    each warp's count is 2 (merged past the branch's end, as LLVM did with the intrinsics, it was 1)."""
    from nvtma import cuda, dsl

    @dsl.kernel(block=(128,), name="split_elections")
    def split_elections(o: dsl.Tensor):
        w = dsl.warp_idx()
        with dsl.if_(dsl.lane_idx() < 10):
            with dsl.if_(dsl.elect_active()):
                cuda.atomic_add(o, (w,), 1)
        with dsl.else_():
            with dsl.if_(dsl.elect_sync(cuda.activemask())):
                cuda.atomic_add(o, (w,), 1)

    return split_elections.specialize([dsl.Tensor("i32", (4,))])


def doubled_spec():
    """y = 2 x over any 2-D f32 views (dynamic shapes and outer strides): y's record says the kernel writes it,
    x's does not, so an expanded x is taken and an expanded y refused at launch."""
    from nvtma import dsl

    @dsl.kernel(block=(128,), name="doubled")
    def doubled(x: dsl.Tensor, y: dsl.Tensor):
        r = dsl.block_idx()
        for c in dsl.range(dsl.thread_idx(), y.shape[1], dsl.block_dim()):
            y[r, c] = x[r, c] * 2.0

    return doubled.specialize([dsl.Tensor("f32", (None, None)), dsl.Tensor("f32", (None, None))])


# Static shared memory past 48 KiB (64 KiB, and 224 KiB of sm_90a's 227): what ptxas takes for an `a` chip
STATIC_SMEM_WORDS = [16384, 57344]


def static_smem_spec(words):
    """y[i] = s[words - 1 - i] after s[i] = i, s `words` i32 of static shared memory (SMEMPool.alloc_static, a
    module global): nvtma-check-target takes up to 227 KiB of it on sm_90a (ptxas's limit for the chip), so a
    launch with no dynamic shared memory must get all of it."""
    from nvtma import dsl, lang

    @dsl.kernel(block=(256,), name=f"static_smem_{words}")
    def static_smem(y: dsl.Tensor):
        s = lang.SMEMPool().alloc_static((words,), "i32")
        for i in dsl.range(dsl.thread_idx(), words, dsl.block_dim()):
            s[i] = i
        dsl.barrier()
        for i in dsl.range(dsl.thread_idx(), words, dsl.block_dim()):
            y[i] = s[words - 1 - i]

    return static_smem.specialize([dsl.Tensor("i32", (words,))])


# A from registers (nvtma.wgmma_mma_async_rs), with the first K-block run again under a run-time scale_d
RS_WGMMA_TYPES = ["bf16", "f16"]


def rs_wgmma_spec(dtype):
    from dsl_testing import wgmma_tile_gemm
    from nvtma import dsl
    return wgmma_tile_gemm(dtype, 64, rega=True, redo_first=True).specialize(
        [dsl.Tensor(dtype, (64, 256)), dsl.Tensor(dtype, (64, 256)), dsl.Tensor("f32", (64, 64))])


# float values whose conversions to integers (saturating, NaN to 0) and to fp8 (e4m3 and e5m2, round to nearest
# even, saturating to the largest finite value) the GPU checks at run time and as constants
CONVERT_VALUES = [0.0, -0.0, 1.0, -1.0, 0.4, -0.6, 2.5, -2.5, 127.9, 128.0, -128.9, -129.0, 255.5, 256.0, 300.0,
                  -300.0, 32767.5, 32768.0, -40000.0, 65535.9, 65536.0, 1e6, 2147483520.0, 2147483648.0,
                  -2147483648.0, -3e9, 4294967040.0, 4294967296.0, 9.2233715e18, 1e19, 1.9e19, -1e19, 1e30,
                  float("inf"), float("-inf"), float("nan"), 448.0, 464.0, 480.0, -500.0, 0.0136, 1e-3, 1e-6, 1e-9,
                  57344.0, 61439.0, 61440.0, -70000.0, 0.1, 3.3, -17.7, 1.5e-5]
CONVERT_INTS = ["Int8", "Uint8", "Int16", "Uint16", "Int32", "Uint32", "Int64", "Uint64"]
CONVERT_F8 = ["Float8E4M3FN", "Float8E5M2"]


def conversions_spec():
    """Thread t converts x[t] (f32) at run time to every integer type (ri[j, t], as Int64) and to e4m3 and e5m2,
    from f32 and from f16 (rf[2j + from_f16, t], the byte); thread 0 stores the same conversions of the values
    as constants (ci, cf): the integer ones folded by LLVM, the fp8 ones encoded by the DSL. Neither had run
    on a GPU (thirty-fifth session). The integer ones again from the value as a Float64 (rd, cd): cvt.rzi of an
    f64 NaN to 32 bits gave the top bit, not 0 (thirty-ninth session's fuzzing)."""
    from nvtma import dsl

    n = len(CONVERT_VALUES)
    ints = [getattr(dsl, name) for name in CONVERT_INTS]
    f8s = [getattr(dsl, name) for name in CONVERT_F8]

    @dsl.kernel(block=(64,), name="conversions")
    def conversions(x: dsl.Tensor, ri: dsl.Tensor, ci: dsl.Tensor, rf: dsl.Tensor, cf: dsl.Tensor, rd: dsl.Tensor,
                    cd: dsl.Tensor):
        t = dsl.thread_idx()
        with dsl.if_(t < n):
            v = x[t]
            for j, cls in enumerate(ints):
                ri[j, t] = v.to(cls).to(dsl.Int64)
                rd[j, t] = v.to(dsl.Float64).to(cls).to(dsl.Int64)
            for j, cls in enumerate(f8s):
                rf[2 * j, t] = v.to(cls).bitcast(dsl.Uint8)
                rf[2 * j + 1, t] = v.to(dsl.Float16).to(cls).bitcast(dsl.Uint8)
        with dsl.if_(t == 0):
            for i, value in enumerate(CONVERT_VALUES):
                for j, cls in enumerate(ints):
                    ci[j, i] = dsl.Float32(value).to(cls).to(dsl.Int64)
                    cd[j, i] = dsl.Float64(struct.unpack("f", struct.pack("f", value))[0]).to(cls).to(dsl.Int64)
                for j, cls in enumerate(f8s):
                    cf[j, i] = cls(value).bitcast(dsl.Uint8)

    return conversions.specialize([dsl.Tensor("f32", (n,)), dsl.Tensor("i64", (len(ints), n)),
                                   dsl.Tensor("i64", (len(ints), n)), dsl.Tensor("ui8", (2 * len(f8s), n)),
                                   dsl.Tensor("ui8", (len(f8s), n)), dsl.Tensor("i64", (len(ints), n)),
                                   dsl.Tensor("i64", (len(ints), n))])


# dsl's float functions of one value (nvtma.float_fn, tanh an afn llvm.tanh), in y's rows; then fdividef
FLOAT_FNS = ["exp2", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh"]
# 4-lane f32 vectors converted to these (nvtma.fptoint_sat's vector form: LLVM's fptosi.sat / fptoui.sat)
FLOAT_FN_INTS = ["Int8", "Uint8", "Int32", "Uint16"]


def float_fns_lanes(v):
    """The 4 lanes float_fns converts to each of FLOAT_FN_INTS, from x[t] (a dsl Float32, or a float32 array)."""
    return [v * 100.0, v * -100.0, v * 1e4, v - 0.5]


def float_fns_spec():
    """Thread t computes each of FLOAT_FNS of x[t] (y[k, t]), then fdividef(x[t], x[t] + 1) (y[-1, t]); sqrt and
    rsqrt of d[t] as Float64 (yd[0/1, t]); and float_fns_lanes(x[t]) as a vector converted to each of
    FLOAT_FN_INTS (vi[j, lane, t], as Int64). Only conversions of scalars had run on a GPU."""
    from nvtma import dsl

    ints = [getattr(dsl, name) for name in FLOAT_FN_INTS]

    @dsl.kernel(block=(64,), name="float_fns")
    def float_fns(x: dsl.Tensor, y: dsl.Tensor, d: dsl.Tensor, yd: dsl.Tensor, vi: dsl.Tensor):
        t = dsl.thread_idx()
        v = x[t]
        for k, name in enumerate(FLOAT_FNS):
            y[k, t] = getattr(dsl, name)(v)
        y[len(FLOAT_FNS), t] = dsl.fdividef(v, v + 1.0)
        w = d[t]
        yd[0, t] = dsl.sqrt(w)
        yd[1, t] = dsl.rsqrt(w)
        lanes = dsl.Vector.from_elements(float_fns_lanes(v), dsl.Float32)
        for j, cls in enumerate(ints):
            iv = lanes.to(cls)
            for i in range(4):
                vi[j, i, t] = iv[i].to(dsl.Int64)

    return float_fns.specialize([dsl.Tensor("f32", (64,)), dsl.Tensor("f32", (len(FLOAT_FNS) + 1, 64)),
                                 dsl.Tensor("f64", (64,)), dsl.Tensor("f64", (2, 64)),
                                 dsl.Tensor("i64", (len(ints), 4, 64))])


# (W dtype, scale, tile, fp8 math, split, vec, x dtype): the weight-streaming GEMV of the benchmarks, small
GEMV_CASES = [("bf16", None, (32, 256), "f32", "tiles", 8, "bf16"),
              ("bf16", None, (32, 256), "f32", "rows", 8, "bf16"),
              ("f8E4M3FN", "row", (64, 256), "f32", "tiles", 8, "bf16"),
              ("f8E4M3FN", "row", (64, 256), "f16x2", "tiles", 8, "bf16"),
              ("f8E4M3FN", "tensor", (32, 256), "f16x2", "tiles", 8, "bf16"),
              ("f8E4M3FN", "tensor", (64, 256), "f16x2", "tiles", 16, "bf16"),
              ("f8E4M3FN", "row", (64, 256), "f16x2", "rows", 16, "bf16"),
              ("f8E4M3FN", "tensor", (64, 256), "f16x2", "rows", 16, "f16")]
GEMV_SHAPE = (1024, 4096)


def gemv_spec(w_dtype, scale, tile, fp8_math, split, vec, x_dtype):
    return K.gemv(*GEMV_SHAPE, w_dtype, tile=tile, stages=4, scale=scale, fp8_math=fp8_math, split=split, vec=vec,
                  x_dtype=x_dtype)


def gemv_pdl_spec():
    """The GEMV built for programmatic dependent launch (fp8 W, f32 math, whole row blocks a CTA)."""
    return K.gemv(*GEMV_SHAPE, "f8E4M3FN", tile=(64, 256), stages=4, scale="tensor", fp8_math="f32", split="rows",
                  pdl=True)


# (M, N, K, mode, config or None): the weight-streaming GEMM at small sizes; M not a multiple of 8,
# N and K tails, one and several K splits, every W scaling and bf16
GEMM_CASES = [
    (1, 256, 512, "tensor", None),
    (5, 200, 528, "tensor", (8, 64, 1, 1)),
    (13, 384, 1024, "row", (16, 128, 2, 3)),
    (77, 320, 2048, "row", (128, 64, 1, 4)),
    (64, 512, 1024, "block", (64, 128, 2, 1)),
    (33, 384, 1040, "block", (64, 128, 2, 3)),
    (256, 192, 768, "tensor", (256, 64, 1, 2)),
    (16, 448, 1000, "bf16", (16, 64, 1, 1)),
    (100, 256, 2048, "bf16", (128, 128, 2, 5)),
    # block scaling with one consumer warpgroup: a stage's partial promoted while the next one's wgmmas run
    (5, 320, 1040, "block", (8, 64, 1, 2)),
    (100, 256, 2048, "block", (128, 64, 1, 3)),
    # x multicast over 2-CTA clusters (a fifth config value): odd tile counts (a group's second tile
    # past N), split K, stream K, K tails, block scales, bf16, two consumer warpgroups
    (70, 320, 2048, "tensor", (128, 64, 1, 3, 2)),
    (128, 448, 1040, "row", (128, 64, 1, 0, 2)),
    (64, 512, 1024, "block", (64, 64, 1, 2, 2)),
    (96, 384, 1536, "bf16", (128, 128, 1, 1, 2)),
    (40, 256, 768, "tensor", (64, 128, 2, 1, 2)),
    # M split over 2-CTA clusters sharing W (a seventh config value, each CTA BM rows of x): the second
    # CTA's rows partly past M (x padded to the cluster's rows, or its box's OOB fill), split K (a
    # count per tile and CTA), stream K, K tails, every scaling and bf16
    (100, 256, 2048, "tensor", (64, 64, 1, 1, 1, None, 2)),
    (121, 448, 1024, "tensor", (64, 64, 1, 1, 1, None, 2)),
    (77, 320, 2048, "row", (64, 64, 1, 3, 1, None, 2)),
    (200, 384, 1040, "block", (128, 64, 1, 2, 1, None, 2)),
    (201, 384, 1040, "block", (128, 64, 1, 1, 1, None, 2)),  # x's scales' box from 76, not 73 (16 bytes)
    (40, 256, 768, "bf16", (32, 128, 2, 0, 1, None, 2)),
    (256, 192, 768, "tensor", (128, 64, 1, 2, 1, 6, 2)),
    # two consumer warpgroups on alternate K steps (kwg, an eighth value): segments of odd and even
    # length (split K, stream K: one warpgroup may have no step), with the M split, every scaling
    (100, 256, 2048, "block", (64, 64, 2, 1, 1, None, 2, True)),
    (77, 320, 1040, "block", (128, 64, 2, 3, 1, None, 1, True)),
    (5, 320, 1040, "block", (8, 64, 2, 0, 1, None, 1, True)),
    (40, 256, 768, "tensor", (64, 128, 2, 1, 1, None, 1, True)),
    (16, 448, 1000, "bf16", (16, 64, 2, 2, 1, None, 1, True)),
    # block scaling with BN = 192: the last tile's third m64 block starts past N's last 128-row scale
    # block (its scale read clamped: read past the scales, it faulted at 16384 x 16384 in a benchmark)
    (5, 200, 528, "block", (8, 192, 1, 1)),
    (24, 200, 528, "block", (32, 192, 1, 0)),
    # three and four consumer warpgroups, one m64 block of W each (registers raised to 152 and 112):
    # a last tile partly past N, split K, stream K, block scales, bf16, x multicast
    (128, 400, 1040, "tensor", (128, 192, 3, 1)),
    (77, 448, 2048, "row", (128, 256, 4, 3)),
    (33, 320, 1536, "block", (64, 192, 3, 0)),
    (100, 256, 1024, "bf16", (128, 192, 3, 2)),
    (64, 640, 768, "tensor", (64, 192, 3, 1, 2)),
    # x tiles the epilogue's 8-row chunks do not divide at their widest (24 rows against 16 at BN = 192,
    # 40 against 32 at BN = 128): every row of y written, whole K and split K
    (20, 400, 1040, "tensor", (24, 192, 1, 1)),
    (40, 320, 1024, "row", (40, 128, 1, 2)),
    # W as A with each tile's K steps split over a cluster (dsmem, an eleventh value): a K tail a K step a stage
    # (4.1 K steps: 2 + 3) and an N tail; one K step (the last CTA takes it, the other none); 4 CTAs in stages of
    # 2 K steps and an N tail; block scales (each stage promoted, then the sum) over two warpgroups with a K tail;
    # bf16 at 128-row x tiles; 70 tiles over 66 clusters (the partials' slot freed tile after tile); row scales at
    # 32 rows in stages of 4 K steps
    (5, 200, 528, "tensor", (8, 64, 1, 2, 1, None, 1, False, 1, True, True)),
    (13, 384, 128, "row", (16, 64, 1, 2, 1, None, 1, False, 1, True, True)),
    (3, 296, 2048, "tensor", (8, 64, 1, 4, 1, None, 1, False, 2, True, True)),
    (40, 256, 1040, "block", (64, 128, 2, 2, 1, None, 1, False, 1, True, True)),
    (100, 256, 768, "bf16", (128, 64, 1, 2, 1, None, 1, False, 1, True, True)),
    (16, 4480, 512, "tensor", (16, 64, 1, 2, 1, None, 1, False, 2, True, True)),
    (30, 448, 2048, "row", (32, 64, 1, 2, 1, None, 1, False, 4, True, True)),
]


# (M, N, K, mode, config): a tile reaching past M, its x loaded as one or two boxes of BM / 2 rows (xhalf):
# M in the first half (one box; exactly BM / 2 rows), in the second (two, overlapping), split K and stream K
# (the workspace's rows past M), the M split (a CTA with no rows of M: no box), two consumer warpgroups, kwg,
# block scales, bf16
HALF_CASES = [
    (77, 320, 2048, "row", (128, 64, 1, 4)),
    (70, 448, 1040, "tensor", (128, 64, 1, 0)),
    (100, 256, 2048, "block", (128, 64, 1, 3)),
    (20, 256, 768, "tensor", (32, 128, 1, 1, 1, None, 2)),
    (77, 320, 1040, "block", (128, 64, 2, 3, 1, None, 1, True)),
    (96, 384, 1536, "bf16", (128, 128, 2, 1)),
    (33, 320, 1024, "row", (64, 128, 2, 2)),
    (40, 256, 768, "tensor", (128, 64, 1, 1)),
    (64, 256, 2048, "tensor", (128, 64, 1, 2)),
]


# (M, N, K, mode, config, kc): stages of kc K steps, each operand's stage one TMA box of its [K / bk, rows, bk]
# view: a last stage partly past K (zeros), N tails, M not a multiple of 8, split K and stream K, two warpgroups,
# BM = 128 through the TMA stores, every W scaling and bf16
KC_CASES = [
    (5, 320, 1152, "tensor", (8, 64, 1, 1), 4),
    (13, 448, 2048, "row", (16, 64, 1, 3), 2),
    (40, 256, 1536, "bf16", (64, 128, 2, 0), 2),
    (1, 7168, 2048, "tensor", (8, 64, 1, 1, 1, 4), 4),
    (100, 384, 1024, "tensor", (128, 64, 1, 2), 2),
    (8, 200, 640, "bf16", (8, 64, 1, 1), 4),
    (30, 512, 3072, "tensor", (32, 128, 1, 5, 1, 3), 3),
    # block scales: x's a box of kc rows a stage, W's read per K step (a step past K reads the last column)
    (5, 320, 1152, "block", (8, 64, 1, 1), 4),
    (40, 256, 2048, "block", (64, 128, 2, 3), 2),
    (77, 200, 1536, "block", (128, 64, 1, 0), 2),
    # W multicast over CTA pairs (the M split), each CTA loading half a stage's K steps: M past one CTA's rows,
    # per tensor and block-scaled
    (100, 256, 2048, "tensor", (64, 64, 1, 1, 1, None, 2), 2),
    (128, 384, 1536, "block", (64, 64, 1, 1, 1, None, 2), 4),
]


# (M, N, K, mode, config, y dtype): x as the wgmmas' A (swap=False, the config's tenth value): W tiles of any
# multiple of 8 rows (16, 24, 56), a last tile partly past N, M not a multiple of 8 and BM not a power of two
# (40, 80: the second warpgroup's 64 rows mostly past it), one and several K steps a stage (x's pad rows), a K
# tail, more tiles than SMs (persistent CTAs), per-tensor and row scales, bf16, f32 y
XA_CASES = [
    (5, 200, 528, "tensor", (8, 16, 1, 1, 1, None, 1, False, 1, False), "bf16"),
    (13, 448, 2048, "row", (16, 56, 1, 1, 1, None, 1, False, 2, False), "bf16"),
    (40, 320, 1024, "bf16", (40, 32, 1, 1, 1, None, 1, False, 4, False), "bf16"),
    (77, 384, 2048, "tensor", (80, 24, 2, 1, 1, None, 1, False, 2, False), "bf16"),
    (128, 256, 1536, "row", (128, 16, 2, 1, 1, None, 1, False, 4, False), "bf16"),
    (16, 8192, 512, "tensor", (16, 16, 1, 1, 1, None, 1, False, 4, False), "bf16"),
    (1, 4096, 1024, "bf16", (8, 32, 1, 1, 1, None, 1, False, 8, False), "bf16"),
    (30, 320, 1040, "row", (32, 64, 1, 1, 1, 3, 1, False, 1, False), "f32"),
    (64, 7168, 2048, "tensor", (64, 56, 1, 1, 1, None, 1, False, 4, False), "bf16"),
    # an N tail at 24-row tiles with row scales, f32 y, M = 5, 9 K steps in stages of 4 (the last one partial);
    # M = 1 with row scales into f32 y; 513 tiles on 132 CTAs with row scales and an N tail; three warpgroups;
    # an N tail at 24-row tiles over two warpgroups
    (5, 320, 1152, "row", (8, 24, 1, 1, 1, None, 1, False, 4, False), "f32"),
    (1, 448, 1024, "row", (8, 56, 1, 1, 1, None, 1, False, 2, False), "f32"),
    (16, 8200, 512, "row", (16, 16, 1, 1, 1, None, 1, False, 4, False), "bf16"),
    (150, 256, 1024, "tensor", (152, 32, 3, 1, 1, None, 1, False, 2, False), "bf16"),
    (77, 200, 2048, "row", (80, 24, 2, 1, 1, None, 1, False, 2, False), "bf16"),
    # block-scaled W and x: M = 5 with an N tail (2.5 W blocks) and a last stage past K (9 K steps in stages of 2);
    # M = 77 over two warpgroups (x's tile 96 rows) into f32 y, W tiles of 32 rows and an N tail; 128-row tiles of
    # x and W a K step a stage; a K tail (1040) at 64 x 128; 16-row W tiles over 132 CTAs in stages of 4 K steps
    (5, 320, 1152, "block", (8, 64, 1, 1, 1, None, 1, False, 2, False), "bf16"),
    (77, 448, 2048, "block", (96, 32, 2, 1, 1, None, 1, False, 2, False), "f32"),
    (128, 512, 1536, "block", (128, 128, 2, 1, 1, None, 1, False, 1, False), "bf16"),
    (40, 384, 1040, "block", (64, 128, 1, 1, 1, None, 1, False, 1, False), "bf16"),
    (16, 2112, 2048, "block", (16, 16, 1, 1, 1, None, 1, False, 4, False), "bf16"),
    # the M split (ms = 2): CTA pairs, each its share of M, W's tile multicast (half a stage's K steps loaded by
    # each CTA, or with a K step a stage half its rows): the second CTA's rows ending at M (overlapping the first's:
    # M = 100, 77, 70; block-scaled, from the first multiple of 4 at or past M - BM: 13 -> 16, 29 -> 32, its x
    # scales' box on 16 bytes), an N tail (the last tile's second half past N), f32 y, row and block scales, bf16,
    # 128 tiles over 66 pairs
    (128, 512, 2048, "tensor", (64, 64, 1, 1, 1, None, 2, False, 2, False), "bf16"),
    (100, 448, 2048, "row", (56, 24, 1, 1, 1, None, 2, False, 2, False), "f32"),
    (77, 336, 1152, "block", (64, 32, 1, 1, 1, None, 2, False, 1, False), "bf16"),
    (128, 384, 2048, "block", (64, 64, 1, 1, 1, None, 2, False, 2, False), "f32"),
    (90, 4096, 1024, "tensor", (48, 32, 1, 1, 1, None, 2, False, 4, False), "bf16"),
    (70, 256, 1024, "bf16", (40, 32, 1, 1, 1, None, 2, False, 4, False), "bf16"),
    (93, 336, 1152, "block", (64, 32, 1, 1, 1, None, 2, False, 2, False), "bf16"),
    (77, 336, 1152, "tensor", (64, 32, 1, 1, 1, None, 2, False, 1, False), "bf16"),
    # pairs past M = 128, block-scaled: two warpgroups a CTA (the second CTA from 72 and 56), f32 y, a K tail
    (200, 384, 2048, "block", (128, 64, 2, 1, 1, None, 2, False, 2, False), "bf16"),
    (150, 320, 1040, "block", (96, 32, 2, 1, 1, None, 2, False, 1, False), "f32"),
    # the K split over a cluster (splits 2 or 4): a K tail (4.1 K steps, a step a stage: 2 + 3); bf16 W and x; 512
    # tiles over 66 clusters (each cluster's CTAs take several, the partials' slot freed tile after tile); row scales
    # into f32 y with a K tail; two warpgroups (M = 77) and an N tail; block scales; one K step (the last CTA takes it,
    # the other none); 4 CTAs a cluster with an N tail
    (5, 200, 528, "tensor", (8, 16, 1, 2, 1, None, 1, False, 1, False), "bf16"),
    (1, 4096, 1024, "bf16", (8, 32, 1, 2, 1, None, 1, False, 4, False), "bf16"),
    (16, 8192, 512, "tensor", (16, 16, 1, 2, 1, None, 1, False, 2, False), "bf16"),
    (30, 320, 1040, "row", (32, 64, 1, 2, 1, 3, 1, False, 1, False), "f32"),
    (77, 384, 2048, "tensor", (80, 24, 2, 2, 1, None, 1, False, 2, False), "bf16"),
    (40, 384, 1040, "block", (64, 128, 1, 2, 1, None, 1, False, 1, False), "bf16"),
    (8, 256, 128, "tensor", (8, 32, 1, 2, 1, None, 1, False, 1, False), "f32"),
    (4, 4000, 4096, "row", (8, 64, 1, 4, 1, None, 1, False, 2, False), "bf16"),
    # BM = 8 with an odd count of 8-column groups (a thread's first rows of two groups a store, the last one alone);
    # a tile of 40 rows (its first three warps store)
    (3, 600, 1024, "row", (8, 24, 1, 2, 1, None, 1, False, 2, False), "bf16"),
    (33, 320, 2048, "tensor", (40, 16, 1, 2, 1, None, 1, False, 4, False), "f32"),
]


# (N, K, M, mode): Gemm()'s own configs (gemm.MEASURED) at benchmark shapes and M between the table's tiles: the M
# split's second CTA starting inside M (block-scaled x's scales from a column on 16 bytes: 130 -> 4, 201 -> 76, 255
# -> 128), x as A over CTA pairs (the table's M = 128 entries), x as A at 96 rows, and W as A with K split over
# 2-CTA clusters (dsmem: the table's 2112 x 7168 entries at M = 1-64, every scaling and bf16, and 4096 x 7168's
# row-scaled at M = 1-8)
TABLE_CASES = [(7168, 2048, 77, "tensor"), (7168, 2048, 77, "block"), (7168, 2048, 130, "block"),
               (7168, 2048, 201, "tensor"), (7168, 2048, 201, "block"), (7168, 2048, 255, "block"),
               (4096, 7168, 100, "block"), (2112, 7168, 93, "block"), (2112, 7168, 77, "row"),
               (4096, 7168, 201, "block"), (2112, 7168, 150, "block"), (2112, 7168, 5, "bf16"),
               (2112, 7168, 13, "bf16"), (2112, 7168, 30, "bf16"), (2112, 7168, 3, "tensor"),
               (2112, 7168, 20, "block"), (2112, 7168, 50, "row"), (4096, 7168, 7, "row"),
               # (thirty-first session's entries: W as A's K split over pairs at 4096 x 7168, M = 17-32; x as A's
               # at 2112 x 7168, M = 33-64; pairs sharing W at M = 65-128, x as A and W as A)
               (4096, 7168, 20, "tensor"), (2112, 7168, 50, "bf16"), (4096, 7168, 100, "row"),
               (7168, 2048, 100, "row"), (2112, 7168, 99, "bf16")]


# (M, N, K, mode): x of more than 256 rows: 257-512 in one launch over CTA pairs, more in gemm.row_blocks' blocks
# (520: 512 + 8; 700: 512 + 188), K tails and N not a multiple of the tile among them
ROWS_CASES = [(300, 512, 1024, "tensor"), (300, 384, 1040, "block"), (520, 448, 768, "row"), (300, 320, 1024, "bf16"),
              (257, 320, 512, "row"), (700, 384, 1040, "block")]


def gemm_specs():
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    out = [g.plan(M, N, K, *(("bf16", None) if mode == "bf16" else ("f8E4M3FN", mode)))[0]
           for N, K, M, mode in TABLE_CASES]
    for M, N, K, mode, cfg, kc in KC_CASES:
        wd, scale = ("bf16", None) if mode == "bf16" else ("f8E4M3FN", mode)
        for opts in ({"kc": kc}, {}):  # and the same config a K step a stage
            sp, _, q = g.plan(M, N, K, wd, scale, quantize=mode != "bf16", config=cfg, **opts)
            out += [sp, g.plan(M, N, K, wd, scale, config=cfg, **opts)[0]] + ([q] if q is not None else [])
    for M, N, K, mode, cfg in HALF_CASES:
        gh = gemm.Gemm(xhalf=True)
        for rows in (M, cfg[0] * (cfg[6] if len(cfg) > 6 else 1)):  # x as it is, and padded by the caller
            out.append(gh.plan(rows, N, K, "bf16" if mode == "bf16" else "f8E4M3FN", None if mode == "bf16" else mode,
                               config=cfg)[0])
    for M, N, K, mode, cfg in GEMM_CASES:
        wd = "bf16" if mode == "bf16" else "f8E4M3FN"
        # e4m3 x; bf16 x quantized in the GEMM, or before it
        for quantize in (False,) if mode == "bf16" else (False, "fused", "kernel"):
            sp, _, q = g.plan(M, N, K, wd, None if mode == "bf16" else mode, quantize=quantize, config=cfg)
            out += [sp] + ([q] if q is not None else [])
    for M, N, K, mode, cfg, yd in XA_CASES:
        wd, scale = ("bf16", None) if mode == "bf16" else ("f8E4M3FN", mode)
        for quantize in (False,) if mode == "bf16" else (False, True):  # e4m3 x, and bf16 x quantized first
            sp, _, q = g.plan(M, N, K, wd, scale, y_dtype=yd, quantize=quantize, config=cfg)
            out += [sp] + ([q] if q is not None else [])
    gk = gemm.Gemm(quantize="kernel")  # (test_gpu_gemm's)
    for M, N, K, mode in ROWS_CASES:
        wd, scale = ("bf16", None) if mode == "bf16" else ("f8E4M3FN", mode)
        for rows in {b - a for a, b in gemm.row_blocks(M)}:
            for quantize in (False,) if mode == "bf16" else (False, True):  # e4m3 x, and bf16 x quantized first
                sp, _, q = gk.plan(rows, N, K, wd, scale, quantize=quantize)
                out += [sp] + ([q] if q is not None else [])
            if mode == "tensor":  # and into an f32 out=
                out.append(gk.plan(rows, N, K, wd, scale, y_dtype="f32")[0])
    out.append(g.plan(1, 256, 512, "f8E4M3FN", "tensor", y_dtype="f32")[0])  # y into an f32 out=
    # Gemm(autotune=True) over a problem the table does not hold: every candidate's kernel
    # and Gemm(autotune="all") over one the table holds
    out += [g.plan(*case, "f8E4M3FN", "tensor", config=c)[0]
            for case in (AUTOTUNE_CASE, AUTOTUNE_TABLE_CASE) for c in gemm.candidates(*case, scale="tensor")]
    return out


AUTOTUNE_CASE = (16, 1024, 2048)  # M, N, K
AUTOTUNE_TABLE_CASE = (8, 7168, 2048)  # in gemm.MEASURED
