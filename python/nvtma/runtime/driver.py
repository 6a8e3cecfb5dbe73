"""Thin wrappers over cuda.bindings.driver: context, modules, launches."""

from __future__ import annotations

from .errors import LaunchError

_drv = None


def drv():
    global _drv
    if _drv is None:
        try:
            from cuda.bindings import driver
        except ImportError as e:
            raise LaunchError("launching needs cuda-python (pip install cuda-bindings)", rule="driver") from e
        _drv = driver
    return _drv


def check(result, what: str):
    """Unpacks a cuda.bindings result tuple; raises LaunchError on an error."""
    d = drv()
    err = result[0] if isinstance(result, tuple) else result
    if err != d.CUresult.CUDA_SUCCESS:
        name = d.cuGetErrorName(err)[1]
        name = name.decode() if isinstance(name, bytes) else str(err)
        raise LaunchError(f"{what}: {name}", rule="driver")
    if isinstance(result, tuple):
        return result[1] if len(result) == 2 else result[1:]
    return None


_ctx = None


def current_context():
    """The current CUDA context, retaining device 0's primary context (the
    one PyTorch and CuPy use) when none is current."""
    global _ctx
    d = drv()
    check(d.cuInit(0), "cuInit")
    ctx = check(d.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if ctx is None or int(ctx) == 0:
        dev = check(d.cuDeviceGet(0), "cuDeviceGet")
        ctx = check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
        check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    global _initialized
    _ctx = ctx
    _initialized = True
    return ctx


_initialized = False


_fast = None


def _fast_api():
    """libcuda's cuCtxGetCurrent and cuLaunchKernel through ctypes: the
    launch path's two driver calls, without cuda.bindings' argument
    conversion (about half of a launch's host time). None where libcuda
    cannot be opened; the cuda.bindings path is used then."""
    global _fast
    if _fast is None:
        import ctypes
        try:
            lib = ctypes.CDLL("libcuda.so.1")
            get = lib.cuCtxGetCurrent
            get.argtypes, get.restype = [ctypes.POINTER(ctypes.c_void_p)], ctypes.c_int
            launch = lib.cuLaunchKernel
            launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
            launch.restype = ctypes.c_int
            cur = ctypes.c_void_p()
            _fast = (get, launch, cur, ctypes.byref(cur))
        except (OSError, AttributeError):
            _fast = False
    return _fast


def context_if_current():
    """The current context's handle (an int), or None; one driver call on
    the launch path."""
    if not _initialized:
        return None
    fast = _fast_api()
    if fast:
        get, _, cur, ref = fast
        return cur.value if get(ref) == 0 and cur.value else None
    err, ctx = drv().cuCtxGetCurrent()
    return int(ctx) if err == drv().CUresult.CUDA_SUCCESS and ctx is not None and int(ctx) else None


def load_module(cubin: bytes):
    d = drv()
    ctx = current_context()
    mod = check(d.cuModuleLoadData(cubin), "cuModuleLoadData")
    return ctx, mod


def get_function(mod, name: str):
    return check(drv().cuModuleGetFunction(mod, name.encode()), f"cuModuleGetFunction({name})")


def set_max_dynamic_smem(func, nbytes: int):
    d = drv()
    check(d.cuFuncSetAttribute(func, d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               nbytes), "cuFuncSetAttribute(max dynamic shared memory)")


def stream_handle(stream) -> int:
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "handle", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return int(stream)


def prepared_launch(func_ptr: int, grid, block, smem: int, stream: int, params_address: int):
    """The arguments of a ctypes cuLaunchKernel for `launch_prepared` (no
    cluster), or None where libcuda cannot be opened through ctypes."""
    if not func_ptr or not _fast_api():
        return None
    return (func_ptr, *grid, *block, smem, stream or None, params_address, None)


def launch_prepared(args: tuple):
    """cuLaunchKernel(*args) through ctypes (args from `prepared_launch`)."""
    rc = _fast[1](*args)
    if rc:
        check(drv().CUresult(rc), "cuLaunchKernel")


def launch(func, grid, block, cluster, smem: int, stream: int, params_address: int):
    """cuLaunchKernel / cuLaunchKernelEx (clusters) through cuda.bindings."""
    d = drv()
    if cluster is None:
        check(d.cuLaunchKernel(func, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, stream,
                               params_address, 0), "cuLaunchKernel")
        return
    cfg = d.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = block
    cfg.sharedMemBytes = smem
    cfg.hStream = d.CUstream(stream)
    a = d.CUlaunchAttribute()
    a.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = cluster
    cfg.attrs = [a]
    cfg.numAttrs = 1
    check(d.cuLaunchKernelEx(cfg, func, params_address, 0), "cuLaunchKernelEx")


def driver_encode(mode: str, p: dict) -> bytes:
    """The same descriptor through cuTensorMapEncodeTiled/Im2col (cross-check)."""
    d = drv()
    current_context()
    U32, U64 = d.cuuint32_t, d.cuuint64_t
    from ..tensormap import DataType, Interleave, L2Promotion, OOBFill, Swizzle
    dt = d.CUtensorMapDataType(int(DataType.coerce(p["dtype"], "dtype")))
    il = d.CUtensorMapInterleave(int(Interleave.coerce(p["interleave"], "interleave")))
    sw = d.CUtensorMapSwizzle(int(Swizzle.coerce(p["swizzle"], "swizzle")))
    l2 = d.CUtensorMapL2promotion(int(L2Promotion.coerce(p["l2_promotion"], "l2_promotion")))
    oob = d.CUtensorMapFloatOOBfill(int(OOBFill.coerce(p["oob_fill"], "oob_fill")))
    dims = [U64(v) for v in p["global_dim"]]
    strides = [U64(v) for v in p["global_strides"]] or [U64(0)]
    es = [U32(v) for v in p["element_strides"]]
    if mode == "tiled":
        res = d.cuTensorMapEncodeTiled(dt, p["rank"], p["global_address"], dims, strides,
                                       [U32(v) for v in p["box_dim"]], es, il, sw, l2, oob)
    else:
        res = d.cuTensorMapEncodeIm2col(dt, p["rank"], p["global_address"], dims, strides,
                                        list(p["pixel_box_lower_corner"]), list(p["pixel_box_upper_corner"]),
                                        p["channels_per_pixel"], p["pixels_per_column"], es, il, sw, l2, oob)
    m = check(res, "cuTensorMapEncode")
    return b"".join(int(v).to_bytes(8, "little") for v in m.opaque)
