"""The CUDA driver, as the runtime uses it.

Cold path (loading, devices, attributes) through cuda.bindings; the launch
itself through the abi3 launcher (`_lib/_launch_fast.abi3.so`, one C call
that resolves cuLaunchKernel/cuLaunchKernelEx with cuGetProcAddress). Where
that extension is missing (a source tree without a build), launches go
through cuda.bindings with the same arguments, slower but equivalent.

Cubins are loaded context-independently (cuLibraryLoadData): one CUlibrary
per module and one CUkernel per kernel serve every device; the driver loads
the code into a device's context on its first launch there. With a NULL
stream the launch goes to the current context, so the launcher pushes the
tensors' device's primary context (the one PyTorch and CuPy use) when
another is current.

Without a driver (no libcuda, no GPU, no cuda-bindings) every entry point
raises LaunchError(rule="driver").
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .errors import LaunchError

_drv = None


def drv():
    global _drv
    if _drv is None:
        try:
            from cuda.bindings import driver
        except ImportError as e:
            raise LaunchError(f"launching needs cuda-bindings (pip install cuda-bindings): {e}",
                              rule="driver") from None
        _drv = driver
    return _drv


def check(result, what: str):
    """Unpacks a cuda.bindings result tuple; raises LaunchError on an error."""
    d = drv()
    err = result[0] if isinstance(result, tuple) else result
    if err != d.CUresult.CUDA_SUCCESS:
        raise LaunchError(f"{what}: {error_name(int(err))}", rule="driver")
    if isinstance(result, tuple):
        return result[1] if len(result) == 2 else result[1:]
    return None


def error_name(code: int) -> str:
    try:
        d = drv()
        err, name = d.cuGetErrorName(d.CUresult(code))
        if err == d.CUresult.CUDA_SUCCESS and name:
            return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:
        pass
    return f"CUresult {code}"


_initialized = False


def init() -> None:
    """cuInit once; a missing driver library or GPU is a LaunchError."""
    global _initialized
    if _initialized:
        return
    d = drv()
    try:
        res = d.cuInit(0)
    except Exception as e:  # cuda.pathfinder's DynamicLibNotFoundError, RuntimeError
        raise LaunchError(f"no CUDA driver: {type(e).__name__}: {e}", rule="driver") from None
    check(res, "cuInit")
    _initialized = True


_contexts: dict[int, int] = {}


def device_count() -> int:
    init()
    return int(check(drv().cuDeviceGetCount(), "cuDeviceGetCount"))


def primary_context(device: int) -> int:
    """The primary context of `device` (retained once per process), as an int."""
    ctx = _contexts.get(device)
    if ctx is None:
        init()
        d = drv()
        n = device_count()
        if not 0 <= device < n:
            raise LaunchError(f"device {device} does not exist ({n} CUDA devices)", rule="device")
        dev = check(d.cuDeviceGet(device), "cuDeviceGet")
        ctx = int(check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain"))
        _contexts[device] = ctx
    return ctx


def current_device() -> int:
    """The device of the current context, or 0 when none is current."""
    init()
    d = drv()
    ctx = check(d.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if ctx is None or not int(ctx):
        return 0
    return int(check(d.cuCtxGetDevice(), "cuCtxGetDevice"))


def device_name(device: int) -> str:
    init()
    d = drv()
    dev = check(d.cuDeviceGet(device), "cuDeviceGet")
    name = check(d.cuDeviceGetName(256, dev), "cuDeviceGetName")
    return name.split(b"\0", 1)[0].decode(errors="replace") if isinstance(name, bytes) else str(name)


def pointer_device(ptr: int) -> int:
    """The device a CUDA pointer belongs to (CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)."""
    init()
    d = drv()
    res = d.cuPointerGetAttribute(d.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr)
    if res[0] != d.CUresult.CUDA_SUCCESS:
        raise LaunchError(f"address 0x{ptr:x} is not CUDA memory ({error_name(int(res[0]))})", rule="device")
    return int(res[1])


def load_library(cubin: bytes):
    """A context-independent CUlibrary of the cubin."""
    init()
    d = drv()
    return check(d.cuLibraryLoadData(cubin, None, None, 0, None, None, 0), "cuLibraryLoadData")


def get_kernel(library, name: str) -> int:
    """The CUkernel of `name` (launchable as a CUfunction on any device)."""
    return int(check(drv().cuLibraryGetKernel(library, name.encode()), f"cuLibraryGetKernel({name})"))


def set_max_dynamic_smem(kernel: int, nbytes: int, device: int) -> None:
    d = drv()
    check(d.cuKernelSetAttribute(d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 nbytes, d.CUkernel(kernel), d.CUdevice(device)),
          f"cuKernelSetAttribute(max dynamic shared memory = {nbytes})")


def allow_wide_clusters(kernel: int) -> None:
    """Lets the kernel launch clusters of more than 8 CTAs (up to 16 on
    sm_90: CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED; without it
    such a launch fails with CUDA_ERROR_INVALID_CLUSTER_SIZE) on every
    device, so that no launch path (the C fast path repeats a launch on a
    device by itself) can reach one where it is not set."""
    d = drv()
    for device in range(device_count()):
        check(d.cuKernelSetAttribute(d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                                     1, d.CUkernel(kernel), d.CUdevice(device)),
              "cuKernelSetAttribute(non-portable cluster size allowed)")


def wait_stream(ours: int, theirs: int) -> None:
    """Orders work queued on `ours` after what is queued on `theirs` now
    (an event recorded there and waited for here; 1 and 2 name the legacy and
    per-thread default streams, as in the CUDA array interface)."""
    d = drv()
    theirs = {1: d.CU_STREAM_LEGACY, 2: d.CU_STREAM_PER_THREAD}.get(theirs, theirs)
    ev = check(d.cuEventCreate(d.CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate")
    try:
        check(d.cuEventRecord(ev, d.CUstream(int(theirs))), "cuEventRecord")
        check(d.cuStreamWaitEvent(d.CUstream(ours), ev, 0), "cuStreamWaitEvent")
    finally:
        d.cuEventDestroy(ev)


@contextlib.contextmanager
def relaxed_capture():
    """This thread's stream-capture mode relaxed for the block, then as it
    was (cuThreadExchangeStreamCaptureMode, push-pop): while a graph is
    being captured in the global mode (torch.cuda.graph's default), the
    capturing thread may not cudaMalloc or synchronize any stream, even one
    the capture does not touch. torch's allocator relaxes the mode so for
    its captured allocations; this is for work kept outside the capture."""
    d = drv()
    was = check(d.cuThreadExchangeStreamCaptureMode(d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED),
                "cuThreadExchangeStreamCaptureMode")
    try:
        yield
    finally:
        check(d.cuThreadExchangeStreamCaptureMode(was), "cuThreadExchangeStreamCaptureMode")


# --------------------------------------------------------------------------- the launch call

_launch = None
_ext = None


def _extension():
    """The abi3 launcher module, or None where it is not built."""
    global _ext
    if _ext is None:
        _ext = _load_extension() or False
    return _ext or None


def _load_extension():
    if os.environ.get("NVTMA_LAUNCHER") == "bindings":
        return None
    path = Path(os.path.abspath(__file__)).parent.parent / "_lib" / "_launch_fast.abi3.so"
    if not path.exists():
        return None
    import importlib.util
    try:
        spec = importlib.util.spec_from_file_location("nvtma._lib._launch_fast", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except ImportError:
        return None
    return mod


def launcher():
    """launch(func, gx, gy, gz, bx, by, bz, smem, stream, params, ctx, cx, cy, cz[, flags]) -> CUresult,
    with cx == 0 meaning no cluster, flags bit 0 programmatic dependent launch
    and ctx the context to make current for a NULL stream."""
    global _launch
    if _launch is None:
        init()
        ext = _extension()
        if ext is not None:
            why = ext.init()
            if why:
                raise LaunchError(f"no CUDA driver: {why}", rule="driver")
            _launch = ext.launch
        else:
            _launch = _bindings_launch
    return _launch


_launch_cfg = None


def launcher_cfg():
    """launch_cfg(func, cfg, stream, params, ctx) -> CUresult, cfg being
    (gx, gy, gz, bx, by, bz, smem, cx, cy, cz[, flags]): the fast path's form."""
    global _launch_cfg
    if _launch_cfg is None:
        launch = launcher()
        ext = _extension()
        if ext is not None and launch is ext.launch:
            _launch_cfg = ext.launch_cfg
        else:
            def _launch_cfg(func, cfg, stream, params, ctx):
                return launch(func, *cfg[:7], stream, params, ctx, *cfg[7:])
    return _launch_cfg


def launcher_name() -> str:
    return "abi3 extension" if launcher() is not _bindings_launch else "cuda.bindings"


def _bindings_launch(func, gx, gy, gz, bx, by, bz, smem, stream, params, ctx, cx, cy, cz, flags=0):
    d = drv()
    pushed = False
    if ctx:
        cur = check(d.cuCtxGetCurrent(), "cuCtxGetCurrent")
        if cur is None or int(cur) != ctx:
            check(d.cuCtxPushCurrent(d.CUcontext(ctx)), "cuCtxPushCurrent")
            pushed = True
    try:
        if not cx and not flags & 1:
            err = d.cuLaunchKernel(d.CUfunction(func), gx, gy, gz, bx, by, bz, smem, d.CUstream(stream), params, 0)
        else:
            cfg = d.CUlaunchConfig()
            cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = gx, gy, gz
            cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = bx, by, bz
            cfg.sharedMemBytes = smem
            cfg.hStream = d.CUstream(stream)
            attrs = []
            if cx:
                a = d.CUlaunchAttribute()
                a.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
                a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = cx, cy, cz
                attrs.append(a)
            if flags & 1:
                a = d.CUlaunchAttribute()
                a.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
                a.value.programmaticStreamSerializationAllowed = 1
                attrs.append(a)
            cfg.attrs = attrs
            cfg.numAttrs = len(attrs)
            err = d.cuLaunchKernelEx(cfg, d.CUfunction(func), params, 0)
    finally:
        if pushed:
            d.cuCtxPopCurrent()
    return int(err[0] if isinstance(err, tuple) else err)


def driver_encode(mode: str, p: dict) -> bytes:
    """The same descriptor through cuTensorMapEncodeTiled/Im2col (cross-check)."""
    d = drv()
    init()
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
    name = "cuTensorMapEncodeTiled" if mode == "tiled" else "cuTensorMapEncodeIm2col"
    try:
        if mode == "tiled":
            res = d.cuTensorMapEncodeTiled(dt, p["rank"], p["global_address"], dims, strides,
                                           [U32(v) for v in p["box_dim"]], es, il, sw, l2, oob)
        else:
            res = d.cuTensorMapEncodeIm2col(dt, p["rank"], p["global_address"], dims, strides,
                                            list(p["pixel_box_lower_corner"]), list(p["pixel_box_upper_corner"]),
                                            p["channels_per_pixel"], p["pixels_per_column"], es, il, sw, l2, oob)
    except RuntimeError as e:
        if type(e).__name__ == "FunctionNotFoundError":  # cuda.bindings': a driver before CUDA 12.0
            why = f"the CUDA driver has no {name} (it came with CUDA 12.0; encoder='nvtma' needs no driver)"
        else:
            why = f"{name} failed ({type(e).__name__}: {e})"
        raise LaunchError(f"encoder='driver': {why}", arg="encoder", rule="driver") from None
    m = check(res, f"{name} (encoder='driver')")
    return b"".join(int(v).to_bytes(8, "little") for v in m.opaque)
