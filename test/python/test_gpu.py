"""GPU tests: run on an sm_90 device (the H200), skipped elsewhere."""

import pytest

from conftest import build, launch
import gpu_cases
from nvtma import kernels as K

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

_TORCH = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "i8": "int8", "f8E4M3FN": "float8_e4m3fn"}


def rand(shape, elem, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    dt = getattr(torch, _TORCH[elem])
    if elem == "i8":
        return torch.randint(-128, 127, shape, generator=g, device="cuda", dtype=torch.int8)
    x = torch.randn(shape, generator=g, device="cuda", dtype=torch.float32)
    return x.to(dt)


def poison(shape, elem):
    """A tensor whose every byte is 0x7B: unwritten elements show."""
    t = torch.empty(shape, dtype=getattr(torch, _TORCH[elem]), device="cuda")
    t.view(torch.uint8).fill_(0x7B)
    return t


def bits(t):
    return t.view({1: torch.uint8, 2: torch.int16}.get(t.element_size(), torch.int32))


# --------------------------------------------------------------------------- #3672

@pytest.mark.parametrize("promo", gpu_cases.PROMOTIONS)
def test_l2_promotion_reaches_the_descriptor(promo):
    """A kernel copies its own descriptor out: the bytes equal the driver's
    cuTensorMapEncodeTiled for the same tensor, and byte 10 bits [2:1] hold
    the requested L2 promotion (CUTLASS #3672)."""
    from cuda.bindings import driver as drv
    spec = gpu_cases.dump_specs()[promo]
    mod = build(spec)
    x = torch.randn(256, 256, dtype=torch.float16, device="cuda")
    out = torch.zeros(16, dtype=torch.int64, device="cuda")
    mod.dump_desc(x, out, **launch(spec, mod))
    torch.cuda.synchronize()
    got = out.cpu().numpy().tobytes()
    U32, U64 = drv.cuuint32_t, drv.cuuint64_t
    want = {"none": 0, "l2_64b": 1, "l2_128b": 2, "l2_256b": 3}[promo]
    err, m = drv.cuTensorMapEncodeTiled(
        drv.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, x.data_ptr(), [U64(256), U64(256)],
        [U64(512)], [U32(64), U32(64)], [U32(1), U32(1)], drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        drv.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE, drv.CUtensorMapL2promotion(want),
        drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert err == drv.CUresult.CUDA_SUCCESS
    driver_bytes = b"".join(int(v).to_bytes(8, "little") for v in m.opaque)
    assert int.from_bytes(got[:8], "little") == x.data_ptr()
    assert (got[10] >> 1) & 3 == want, f"byte 10 = 0x{got[10]:02x}"
    assert got == driver_bytes, (got.hex(), driver_bytes.hex())


# --------------------------------------------------------------------------- tiled copies

@pytest.mark.parametrize("case", gpu_cases.TILE_CASES, ids=lambda c: f"{c[0]}-{'x'.join(map(str, c[1]))}-{c[3]}")
def test_tile_copy_matches_input(case):
    elem, shape, box, swizzle = case
    spec = K.tile_copy(shape, elem, box, swizzle=swizzle)
    mod = build(spec)
    x = rand(shape, elem, seed=sum(shape))
    y = poison(shape, elem)
    mod.tile_copy(x, y, **launch(spec, mod))
    torch.cuda.synchronize()
    assert torch.equal(bits(x), bits(y)), "output differs from input"


@pytest.mark.parametrize("kw", [dict(l2_promotion="l2_256b"), dict(l2_prefetch=True, swizzle="swizzle_128b")],
                         ids=["l2_256b", "l2_prefetch"])
def test_prefetch_then_copy(kw):
    """The descriptor prefetched, with 256-byte L2 promotion, or each CTA's
    box prefetched into L2 (cpasync.prefetch) before its TMA load: the copy
    is still exact (edge boxes included)."""
    spec = K.tile_copy((1000, 1000), "f16", (64, 64), prefetch=True, **kw)
    mod = build(spec)
    x = rand((1000, 1000), "f16", 7)
    y = poison((1000, 1000), "f16")
    mod.tile_copy(x, y, **launch(spec, mod))
    torch.cuda.synchronize()
    assert torch.equal(bits(x), bits(y))


def test_driver_encoding_cross_check():
    """The same launch with descriptors from cuTensorMapEncodeTiled."""
    spec = K.tile_copy((1000, 3000), "f16", (64, 64), swizzle="swizzle_128b")
    mod = build(spec)
    x = rand((1000, 3000), "f16", 3)
    y = poison((1000, 3000), "f16")
    k = mod.kernel("tile_copy")
    ours = k.descriptor_bytes(x, y, encoder="nvtma")
    theirs = k.descriptor_bytes(x, y, encoder="driver")
    assert ours == theirs
    k(x, y, **launch(spec, mod), encoder="driver")
    torch.cuda.synchronize()
    assert torch.equal(bits(x), bits(y))


@pytest.mark.parametrize("oob", ["none", "nan_request_zero_fma"])
def test_out_of_bounds_fill(oob):
    spec = K.box_dump((20, 40), "f32", (8, 32), oob, (16, 20))
    mod = build(spec)
    x = torch.randn(20, 40, device="cuda")
    out = torch.full((8, 32), 123.0, device="cuda")
    mod.box_dump(x, out, **launch(spec, mod))
    torch.cuda.synchronize()
    inside = out[:4, :20]
    assert torch.equal(inside, x[16:20, 20:40])
    outside = torch.cat([out[4:, :].flatten(), out[:4, 20:].flatten()])
    if oob == "none":
        assert torch.all(outside == 0)
    else:
        assert torch.all(torch.isnan(outside))


# --------------------------------------------------------------------------- multicast, reduce, im2col

@pytest.mark.parametrize("cluster", [2, 4, 8, 16])
def test_multicast_cluster(cluster):
    """16 CTAs a cluster is sm_90's non-portable size: the launch opts the kernel in. (compute-sanitizer
    synccheck reports "Missing wait" there, and faults on a kernel of two cluster barriers: benchmarks/README.md,
    forty-first session.)"""
    spec = K.multicast_copy(512, 256, "f16", (64, 64), cluster)
    mod = build(spec)
    x = rand((512, 256), "f16", cluster)
    out = poison((spec.grid[0], 64, 64), "f16")
    mod.multicast_copy(x, out, **launch(spec, mod))
    torch.cuda.synchronize()
    tiles = x.view(8, 64, 4, 64).permute(0, 2, 1, 3).reshape(32, 64, 64)
    want = tiles.repeat_interleave(cluster, dim=0)
    assert torch.equal(bits(out), bits(want))


def test_reduce_add():
    spec = K.reduce_add(256, 256, "f32", (32, 32))
    mod = build(spec)
    a = torch.randn(256, 256, device="cuda")
    b = torch.randn(256, 256, device="cuda")
    want = a + b
    mod.reduce_tile(a, b, **launch(spec, mod))
    torch.cuda.synchronize()
    torch.testing.assert_close(b, want, rtol=0, atol=1e-6)


def test_atomics_into_a_swizzled_tile_reach_the_element_it_reads():
    spec = gpu_cases.swizzled_atomics_spec()
    mod = build(spec)
    a = torch.randn(64, 32, device="cuda")
    y = torch.zeros(128, device="cuda")
    mod.swizzled_atomics(a, y, **launch(spec, mod, grid=(1, 1, 1)))
    torch.cuda.synchronize()
    t = torch.arange(128, device="cuda")
    want = a[t % 64, t // 64 * 16 + t % 16] + 3
    want[5] += 10
    torch.testing.assert_close(y, want, rtol=0, atol=1e-6)


def test_vector_atomics_add_each_lane():
    """nvtma.vector_atomic_add: packed f16x2 / bf16x2 atomics (global and shared, old value returned) and the
    f32 v2 / v4 reductions each add every lane, once per thread (gpu_cases.vector_atomics_spec)."""
    spec = gpu_cases.vector_atomics_spec()
    mod = build(spec)
    h = torch.randint(-8, 8, (66,), device="cuda").half()
    b = torch.randint(-8, 8, (64,), device="cuda").bfloat16()
    f4, f2 = torch.randn(32, device="cuda"), torch.randn(16, device="cuda")
    sh, old = torch.full((64,), 7.0, device="cuda").half(), torch.zeros(2, device="cuda").half()
    h0, b0, f40, f20 = h.clone(), b.clone(), f4.clone(), f2.clone()
    mod.vector_atomics(h, b, f4, f2, sh, old, **launch(spec, mod, grid=(1, 1, 1)))
    torch.cuda.synchronize()
    pair = torch.tensor([1.0, 2.0], device="cuda").repeat(32)
    torch.testing.assert_close(h[:64], h0[:64] + 4 * pair.half(), rtol=0, atol=0)
    torch.testing.assert_close(h[64:], h0[64:] + torch.tensor([3.0, 4.0], device="cuda").half(), rtol=0, atol=0)
    torch.testing.assert_close(old, h0[64:], rtol=0, atol=0)
    torch.testing.assert_close(b, b0 + 4 * torch.tensor([1.0, 0.5], device="cuda").repeat(32).bfloat16(), rtol=0,
                               atol=0)
    torch.testing.assert_close(f4, f40 + 16, rtol=0, atol=1e-5)
    torch.testing.assert_close(f2, f20 + 16 * torch.tensor([1.0, 2.0], device="cuda").repeat(8), rtol=0, atol=1e-5)
    torch.testing.assert_close(sh, 4 * pair.half(), rtol=0, atol=0)


def test_float_functions_match_numpy():
    """dsl's float functions on the GPU (nvtma.float_fn: ex2/lg2/rsqrt/sin/cos/div .approx within their PTX error
    bounds, sqrt.rn exact in f32 and f64; tanh.approx), and vectors converted to integers lane by lane, truncating
    and saturating (nvtma.fptoint_sat's vector form), against numpy (gpu_cases.float_fns_spec)."""
    import numpy as np
    spec = gpu_cases.float_fns_spec()
    mod = build(spec)
    rng = np.random.default_rng(5)
    xs = rng.uniform(0.05, 8.0, 64).astype(np.float32)
    ds = rng.uniform(0.05, 1e6, 64)
    nf, ni = len(gpu_cases.FLOAT_FNS), len(gpu_cases.FLOAT_FN_INTS)
    x, d = torch.from_numpy(xs).cuda(), torch.from_numpy(ds).cuda()
    y = torch.full((nf + 1, 64), float("nan"), device="cuda")
    yd = torch.full((2, 64), float("nan"), dtype=torch.float64, device="cuda")
    vi = torch.full((ni, 4, 64), 0x5A5A, dtype=torch.int64, device="cuda")
    mod.float_fns(x, y, d, yd, vi, **launch(spec, mod, grid=(1, 1, 1)))
    torch.cuda.synchronize()
    got = y.cpu().numpy()
    x64 = xs.astype(np.float64)
    want = {"exp2": np.exp2(x64), "log2": np.log2(x64), "sqrt": np.sqrt(xs), "rsqrt": 1 / np.sqrt(x64),
            "sin": np.sin(x64), "cos": np.cos(x64), "tanh": np.tanh(x64)}
    # (rtol, atol): about the PTX ISA's bounds (ex2 2 ulp, lg2 2^-22, rsqrt 2^-22.9 relative, sin/cos 2^-20.5
    # absolute, tanh 2^-10.99 relative), sqrt.rn exact
    tol = {"exp2": (4e-7, 0), "log2": (4e-7, 4e-7), "sqrt": (0, 0), "rsqrt": (3e-7, 0), "sin": (0, 1e-6),
           "cos": (0, 1e-6), "tanh": (6e-4, 0)}
    for k, name in enumerate(gpu_cases.FLOAT_FNS):
        np.testing.assert_allclose(got[k], want[name], rtol=tol[name][0], atol=tol[name][1], err_msg=name)
    # div.approx's 2 ulp after the f32 rounding of x + 1
    np.testing.assert_allclose(got[nf], x64 / (x64 + 1), rtol=5e-7, err_msg="fdividef")
    np.testing.assert_array_equal(yd[0].cpu().numpy(), np.sqrt(ds))
    # rsqrt.approx.f64: the ISA states no bound here; an f32-like one still tells it from another function
    np.testing.assert_allclose(yd[1].cpu().numpy(), 1 / np.sqrt(ds), rtol=1e-6)
    lanes = np.stack(gpu_cases.float_fns_lanes(xs)).astype(np.float32)  # (4, 64), rounded as the GPU's f32
    for j, name in enumerate(gpu_cases.FLOAT_FN_INTS):
        info = np.iinfo(getattr(np, name.lower()))
        want_i = np.clip(np.trunc(lanes.astype(np.float64)), info.min, info.max).astype(np.int64)
        np.testing.assert_array_equal(vi[j].cpu().numpy(), want_i, err_msg=name)


def test_elections_ending_both_arms_of_a_split_each_elect():
    """dsl.elect_active and elect_sync(cuda.activemask()) at the ends of both arms of a branch that splits
    every warp: one lane of each part adds 1, so each warp counts 2 (gpu_cases.split_elections_spec)."""
    spec = gpu_cases.split_elections_spec()
    mod = build(spec)
    o = torch.zeros(4, dtype=torch.int32, device="cuda")
    mod.split_elections(o, **launch(spec, mod, grid=(1, 1, 1)))
    torch.cuda.synchronize()
    assert o.tolist() == [2, 2, 2, 2]


def test_a_written_view_whose_elements_share_memory_is_refused():
    """y's record says the kernel writes it: an expanded y (every row one row of memory) is refused at launch
    (rule "overlap"), where the rows' writes collided; an expanded x (read only) is taken, and y is right."""
    from nvtma.runtime import LaunchError
    spec = gpu_cases.doubled_spec()
    mod = build(spec)
    x, y = torch.randn(1, 300, device="cuda").expand(8, 300), torch.zeros(8, 300, device="cuda")
    mod.doubled(x, y, **launch(spec, mod, grid=(8, 1, 1)))
    torch.cuda.synchronize()
    torch.testing.assert_close(y, 2 * x, rtol=0, atol=0)
    with pytest.raises(LaunchError, match="argument 1: a view whose elements share memory") as e:
        mod.doubled(y, torch.zeros(1, 300, device="cuda").expand(8, 300), **launch(spec, mod, grid=(8, 1, 1)))
    assert e.value.rule == "overlap"


@pytest.mark.parametrize("words", gpu_cases.STATIC_SMEM_WORDS)
def test_static_shared_memory_past_48_kib_on_sm_90a(words):
    """A kernel of 64 KiB and of 224 KiB of static shared memory (no dynamic): ptxas takes up to 227 KiB for
    sm_90a and check-target holds a kernel to that; each CTA must get all of it (y is s reversed)."""
    spec = gpu_cases.static_smem_spec(words)
    mod = build(spec)
    y = torch.full((words,), -1, dtype=torch.int32, device="cuda")
    getattr(mod, f"static_smem_{words}")(y, **launch(spec, mod, grid=(2, 1, 1)))
    torch.cuda.synchronize()
    assert torch.equal(y, torch.arange(words - 1, -1, -1, dtype=torch.int32, device="cuda"))


@pytest.mark.parametrize("dtype", gpu_cases.RS_WGMMA_TYPES)
def test_wgmma_with_a_from_registers(dtype):
    """nvtma.wgmma_mma_async_rs: c = a·bᵀ over a 64 x 64 x 64 tile with A from registers (ldmatrix), the
    first K-block run again with a run-time scale_d that is false (counted twice, c is off by a·bᵀ of it)."""
    spec = gpu_cases.rs_wgmma_spec(dtype)
    mod = build(spec)
    t = getattr(torch, {"bf16": "bfloat16", "f16": "float16"}[dtype])
    a, b = torch.randn(64, 256, device="cuda").to(t), torch.randn(64, 256, device="cuda").to(t)
    c = torch.zeros(64, 64, device="cuda")
    mod.gemm(a, b, c, **launch(spec, mod, grid=(1, 1, 1)))
    torch.cuda.synchronize()
    want = a[:, :64].float() @ b[:, :64].float().T
    torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-3)


def test_float_conversions_saturate_alike_at_run_time_and_as_constants():
    """Float -> integer conversions truncate, saturate and take NaN to 0 (PTX's cvt.rzi, and a select for an f64
    source or a 64-bit result, where cvt.rzi gives the top bit), from f32 and f64; float -> fp8 rounds
    to nearest even and saturates to the largest finite value (cvt.rn.satfinite), from f32 and from f16; the
    constants the DSL encodes and LLVM folds equal what the GPU computes at run time."""
    import math
    import numpy as np
    from nvtma.dsl import numeric
    spec = gpu_cases.conversions_spec()
    mod = build(spec)
    vals = gpu_cases.CONVERT_VALUES
    n, ni, nf = len(vals), len(gpu_cases.CONVERT_INTS), len(gpu_cases.CONVERT_F8)
    x = torch.tensor(vals, dtype=torch.float32, device="cuda")
    ri = torch.full((ni, n), 0x5A5A, dtype=torch.int64, device="cuda")
    ci, rf, cf = ri.clone(), torch.full((2 * nf, n), 0x5A, dtype=torch.uint8, device="cuda"), \
        torch.full((nf, n), 0x5A, dtype=torch.uint8, device="cuda")
    rd, cd = ri.clone(), ri.clone()
    mod.conversions(x, ri, ci, rf, cf, rd, cd, **launch(spec, mod, grid=(1, 1, 1)))
    torch.cuda.synchronize()
    f32 = [float(np.float32(v)) for v in vals]
    bad = []  # every disagreement, (what, value, got, want)
    for j, name in enumerate(gpu_cases.CONVERT_INTS):
        cls = getattr(numeric, name)
        lo, hi = (-(1 << (cls.width - 1)), (1 << (cls.width - 1)) - 1) if cls.signed else (0, (1 << cls.width) - 1)
        want = [0 if math.isnan(v) else min(max(math.trunc(v) if math.isfinite(v) else v, lo), hi) for v in f32]
        want = [int(w) - (1 << 64) if w >= 1 << 63 else int(w) for w in want]  # Uint64 as its Int64 bits
        for what, got in (("run time", ri[j].tolist()), ("constant", ci[j].tolist()),
                          ("run time from f64", rd[j].tolist()), ("constant from f64", cd[j].tolist())):
            bad += [(f"{name} {what}", v, g, w) for v, g, w in zip(vals, got, want) if g != w]
    for j, name in enumerate(gpu_cases.CONVERT_F8):
        tdt, top = {"Float8E4M3FN": (torch.float8_e4m3fn, 448.0), "Float8E5M2": (torch.float8_e5m2, 57344.0)}[name]
        for from_f16 in (0, 1):
            src = x.to(torch.float16).to(torch.float32) if from_f16 else x
            # finite values round to nearest even, saturating; inf saturates to the largest finite value
            want = src.clamp(-top, top).to(tdt).view(torch.uint8).tolist()
            got = rf[2 * j + from_f16].tolist()
            for v, s_, g, w in zip(vals, src.tolist(), got, want):
                if math.isnan(s_):
                    if not math.isnan(torch.tensor([g], dtype=torch.uint8).view(tdt).float().item()):
                        bad.append((f"{name} from {'f16' if from_f16 else 'f32'}", v, g, "NaN"))
                elif g != w:
                    bad.append((f"{name} from {'f16' if from_f16 else 'f32'}", v, g, w))
        # the DSL's constants: what the GPU computes from f32
        bad += [(f"{name} constant", v, c, r) for v, c, r in zip(vals, cf[j].tolist(), rf[2 * j].tolist()) if c != r]
    assert not bad, bad


def test_im2col_rows():
    spec = K.im2col_dump(2, 8, 8, 64, 64, 64)
    mod = build(spec)
    x = rand((2, 8, 8, 64), "f16", 11)
    out = poison((64, 64), "f16")
    mod.im2col_dump(x, out, **launch(spec, mod))
    torch.cuda.synchronize()
    want = x.reshape(-1, 64)[:64]
    assert torch.equal(bits(out), bits(want))


# --------------------------------------------------------------------------- non-tensor copies

@pytest.mark.parametrize("make,n", [(K.bulk_roundtrip, 16384), (K.cp_async_roundtrip, 8192)],
                         ids=["bulk_g2s_s2g", "cp_async"])
def test_byte_roundtrip(make, n):
    """Non-tensor copies: global -> shared -> global, byte for byte."""
    spec = make(n)
    mod = build(spec)
    x = torch.randint(0, 255, (n,), dtype=torch.uint8, device="cuda").view(torch.int8)
    y = torch.zeros_like(x)
    getattr(mod, spec.name)(x, y, **launch(spec, mod))
    torch.cuda.synchronize()
    assert torch.equal(x, y)


@pytest.mark.parametrize("zfill,mbarrier", gpu_cases.CP_ASYNC_VARIANTS,
                         ids=["zero-fill", "mbarrier", "zero-fill-mbarrier"])
def test_cp_async_zero_fill_and_mbarrier(zfill, mbarrier):
    """cp.async reading only part of each chunk (the rest zeros) and completing
    on an mbarrier through each thread's cp.async.mbarrier.arrive.noinc."""
    n = 8192
    spec = K.cp_async_roundtrip(n, zfill=zfill, mbarrier=mbarrier)
    mod = build(spec)
    x = torch.randint(1, 255, (n,), dtype=torch.uint8, device="cuda").view(torch.int8)
    y = torch.full_like(x, 7)
    getattr(mod, spec.name)(x, y, **launch(spec, mod))
    torch.cuda.synchronize()
    want = x.view(-1, 16).clone()
    if zfill:
        kept = (torch.arange(n // 16, device="cuda") * 7 % 17)[:, None]
        want[torch.arange(16, device="cuda")[None, :] >= kept] = 0
    assert torch.equal(y.view(-1, 16), want)


# --------------------------------------------------------------------------- descriptor update on device

def test_update_descriptor_then_use():
    from nvtma import tensormap as tm
    spec = K.update_descriptor(256, 256)
    mod = build(spec)
    A = rand((256, 256), "f16", 1)
    B = rand((192, 320), "f16", 2)
    out = poison((256, 256), "f16")
    ws = torch.zeros(16, dtype=torch.int64, device="cuda")
    mod.update_descriptor(A, B, out, ws, **launch(spec, mod))
    torch.cuda.synchronize()
    assert torch.equal(bits(out[:64, :64]), bits(B[:64, :64])), "the copy did not read B through the patched map"
    patched = ws.cpu().numpy().tobytes()
    want = tm.encode_tiled("float16", 2, B.data_ptr(), [320, 192], [640], [64, 64], [1, 1], "none", "none",
                           "l2_128b", "none")
    assert patched == want, (patched.hex(), want.hex())


# --------------------------------------------------------------------------- pipelined copy

@pytest.mark.parametrize("hints", [(None, None), ("evict_first", "evict_last")], ids=["no-hint", "hints"])
def test_pipelined_copy(hints):
    """Every grid, also one with more CTAs than tiles; with and without L2
    cache hints on the loads and stores."""
    spec = K.pipelined_copy(1024, 2048, "f16", (64, 128), 4, load_hint=hints[0], store_hint=hints[1])
    mod = build(spec)
    x = rand((1024, 2048), "f16", 5)
    y = poison((1024, 2048), "f16")
    for grid in (1, 7, 132, 256, 300):
        y.view(torch.uint8).fill_(0x7B)
        mod.pipelined_copy(x, y, **launch(spec, mod, (grid,)))
        torch.cuda.synchronize()
        assert torch.equal(bits(x), bits(y)), f"grid {grid}"


# --------------------------------------------------------------------------- GEMV

@pytest.mark.parametrize("case", gpu_cases.GEMV_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[3]}-{c[4]}-vec{c[5]}-x{c[6]}")
def test_gemv(case):
    """y = scale · W·x over every grid split (split "tiles": CTAs that start
    or end inside a row block add partial sums into a zeroed y; split "rows":
    CTAs store whole rows into a NaN-poisoned y, and grids larger than the
    row-block count leave CTAs idle), against torch in f32 (f16x2 math: f16
    products, so within a few 1e-3 of the largest |y|)."""
    w_dtype, scale, tile, math_, split, _, x_dtype = case
    spec = gpu_cases.gemv_spec(*case)
    mod = build(spec)
    m, k = gpu_cases.GEMV_SHAPE
    w = rand((m, k), w_dtype, 21)
    x = rand((k,), "bf16", 22)
    want = w.float() @ x.float()
    args = [w, x if x_dtype == "bf16" else x.half()]
    if scale == "row":
        s = torch.rand(m, device="cuda") + 0.5
        want = want * s
    elif scale == "tensor":
        s = torch.tensor([0.37], device="cuda")
        want = want * s
    for grid in (1, 7, 132, 200):
        y = torch.zeros(m, device="cuda") if split == "tiles" else torch.full((m,), float("nan"), device="cuda")
        mod.gemv(*args, y, *([s] if scale else []), **launch(spec, mod, (grid,)))
        torch.cuda.synchronize()
        if math_ == "f32" or w_dtype == "bf16":
            torch.testing.assert_close(y, want, rtol=1e-4, atol=2e-3, msg=lambda e: f"grid {grid}: {e}")
        else:
            err = ((y - want).abs().max() / want.abs().max()).item()
            assert err < 4e-3, f"grid {grid}: max error {err:.2e} of max |y|"


def test_misaligned_views_are_refused_and_the_context_lives():
    """A view that the kernel's own accesses would fault on is a LaunchError
    naming the argument, from the record's "align": gemv's x read in 16-byte
    vectors (x at base + 2 lost the context to a misaligned address), on the
    first launch and after good ones (the fast paths see only a new
    address); the bulk copy's source; update_descriptor's B (its pitch goes
    into a descriptor) and its descriptor workspace. The context still
    computes afterwards."""
    from nvtma.runtime import LaunchError
    spec = gpu_cases.gemv_spec(*gpu_cases.GEMV_CASES[0])  # bf16 W, no scale
    mod = build(spec)
    m, k = gpu_cases.GEMV_SHAPE
    w, x = rand((m, k), "bf16", 41), rand((k,), "bf16", 42)
    bad = torch.empty(k + 8, dtype=torch.bfloat16, device="cuda")[1:k + 1]
    bad.copy_(x)
    assert bad.data_ptr() % 16 == 2 and bad.shape == x.shape and bad.stride() == x.stride()
    kw = launch(spec, mod, (132,))
    y = torch.zeros(m, device="cuda")

    def refused(fn, *args, arg, **kwargs):
        with pytest.raises(LaunchError) as e:
            fn(*args, **kwargs)
        assert (e.value.arg, e.value.rule) == (arg, "alignment"), str(e.value)

    refused(mod.gemv, w, bad, y, arg="argument 1", **kw)
    for _ in range(2):
        mod.gemv(w, x, y, **kw)
    refused(mod.gemv, w, bad, y, arg="argument 1", **kw)
    y.zero_()
    mod.gemv(w, x, y, **kw)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, w.float() @ x.float(), rtol=1e-4, atol=2e-3)

    spec = K.bulk_roundtrip(16384)
    mod = build(spec)
    src = torch.zeros(16384 + 16, dtype=torch.int8, device="cuda")
    refused(mod.bulk_roundtrip, src[1:16385], src[:16384].clone(), arg="argument 0", **launch(spec, mod))

    spec = K.update_descriptor(256, 256)
    mod = build(spec)
    A, out = rand((256, 256), "f16", 1), poison((256, 256), "f16")
    B = rand((192, 320), "f16", 2)
    ws = torch.zeros(16, dtype=torch.int64, device="cuda")
    padded = torch.zeros(192, 321, dtype=torch.float16, device="cuda")[:, :320]   # a 642-byte pitch
    refused(mod.update_descriptor, A, padded, out, ws, arg="argument 1", **launch(spec, mod))
    refused(mod.update_descriptor, A, B, out, torch.zeros(17, dtype=torch.int64, device="cuda")[1:],
            arg="argument 3", **launch(spec, mod))
    mod.update_descriptor(A, B, out, ws, **launch(spec, mod))
    torch.cuda.synchronize()
    assert torch.equal(bits(out[:64, :64]), bits(B[:64, :64]))


def test_tensors_tensormap_replace_writes_are_refused_by_the_drivers_rules():
    """update_descriptor's B goes into a descriptor on the device
    (tensormap.replace), where no driver checks it: a B the driver would
    refuse (no rows) is a LaunchError naming it and the TMA rule, before and
    after good launches (the fast paths see a new shape: the checked path);
    the context still computes afterwards."""
    from nvtma.runtime import LaunchError
    spec = K.update_descriptor(256, 256)
    mod = build(spec)
    A, out = rand((256, 256), "f16", 1), poison((256, 256), "f16")
    B = rand((192, 320), "f16", 2)
    ws = torch.zeros(16, dtype=torch.int64, device="cuda")
    empty = torch.empty(0, 64, dtype=torch.float16, device="cuda")

    def refused():
        with pytest.raises(LaunchError) as e:
            mod.update_descriptor(A, empty, out, ws, **launch(spec, mod))
        assert (e.value.arg, e.value.rule) == ("argument 1", "global-dim-range"), str(e.value)

    refused()
    for _ in range(2):
        mod.update_descriptor(A, B, out, ws, **launch(spec, mod))
    refused()
    out.view(torch.uint8).fill_(0x7B)
    mod.update_descriptor(A, B, out, ws, **launch(spec, mod))
    torch.cuda.synchronize()
    assert torch.equal(bits(out[:64, :64]), bits(B[:64, :64]))


def test_gemv_with_pdl_waits_for_the_stream_and_graphs():
    """A GEMV built for programmatic dependent launch streams W before the
    earlier kernels end but reads x and writes y after them: on a side stream
    behind queued work that writes x, and in a CUDA graph replayed on new x,
    y is W·x of the x written last."""
    spec = gpu_cases.gemv_pdl_spec()
    mod = build(spec)
    assert mod.kernels["gemv"]["launch"].get("pdl") is True
    m, k = gpu_cases.GEMV_SHAPE
    w = rand((m, k), "f8E4M3FN", 31)
    s = torch.tensor([0.37], device="cuda")
    xs = [rand((k,), "bf16", 32 + i) for i in range(2)]
    wants = [(w.float() @ x.float()) * s for x in xs]
    x, y = torch.zeros(k, device="cuda", dtype=torch.bfloat16), torch.empty(m, device="cuda")
    kw = launch(spec, mod, (132,))
    stream = torch.cuda.Stream()
    for i in range(2):
        y.fill_(float("nan"))
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            torch.cuda._sleep(20_000_000)  # ~10 ms of queued work, then a kernel writing x (not a copy:
            torch.mul(xs[i], 1, out=x)  # the launch's programmatic edge is to the kernel before it)
            mod.gemv(w, x, y, s, **kw)
        stream.synchronize()
        torch.testing.assert_close(y, wants[i], rtol=1e-4, atol=2e-3, msg=lambda e: f"call {i}: {e}")
    src = torch.empty_like(x)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        torch.mul(src, 1, out=x)  # a kernel writing x, then the GEMV: a programmatic edge in the graph
        mod.gemv(w, x, y, s, **kw)
    for i in (1, 0):
        src.copy_(xs[i])
        y.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(y, wants[i], rtol=1e-4, atol=2e-3, msg=lambda e: f"replay on x {i}: {e}")
