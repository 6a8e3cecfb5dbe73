"""NVSHMEM on the host: start it, allocate symmetric tensors, prepare and
launch kernels that call nvtma.nvshmem's device helpers.

    from nvtma.runtime import nvshmem
    nvshmem.init()                          # torch.distributed's rank and size if it is up, else one PE
    x = nvshmem.tensor((4096,), torch.bfloat16)   # on the symmetric heap: a torch tensor
    nvshmem.launch(mod.all_gather, x, y, sig, epoch, grid=(8,))   # module init + cooperative launch
    nvshmem.free(x); nvshmem.finalize()

Through NVSHMEM's host library (libnvshmem_host.so.3 of the
nvidia-nvshmem-cu13 wheel, which PyTorch's CUDA 13 wheels install) with
ctypes: no nvshmem4py, no MLIR. PEs meet through NVSHMEM's unique-ID
bootstrap; the ID travels over torch.distributed when there are several.
Each module whose cubin holds NVSHMEM's device state gets
``nvshmemx_culibrary_init`` once per device before its first launch;
``launch`` is a cooperative launch (every CTA resident at once), what
NVSHMEM's collective launch gives kernels that wait on other PEs.

Everything here raises NvshmemError (a LaunchError, rule "nvshmem") when
NVSHMEM is missing, not initialized, or refuses a call; importing this
module needs neither NVSHMEM nor a GPU.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from .errors import LaunchError

__all__ = ["NvshmemError", "init", "finalize", "initialized", "my_pe", "n_pes", "tensor", "free", "barrier_all",
           "init_module", "launch", "host_library"]

STATE_SYMBOL = "nvshmemi_device_state_d"   # the cubin's constant NVSHMEM fills (culibrary_init)
_INIT_WITH_UNIQUEID = 1 << 3               # nvshmemx_init_attr flags
_UID_BYTES, _UID_ARGS_BYTES, _INIT_ARGS_BYTES, _ATTR_BYTES = 128, 24, 128, 144  # the v1 structs' sizes


class NvshmemError(LaunchError):
    """NVSHMEM is missing, not initialized, or refused a call."""

    def __init__(self, message: str, *, arg: str | None = None):
        super().__init__(message, arg=arg, rule="nvshmem")


_lib = None
_state = {"pes": None, "device": None, "buffers": {}, "modules": set()}


# --------------------------------------------------------------------------- the host library

def _library_paths():
    env = os.environ.get("NVTMA_NVSHMEM_HOST_LIB")
    if env:
        return [env]
    out = []
    try:  # the nvidia-nvshmem wheel (or CUDA_HOME) through cuda-pathfinder
        from cuda.pathfinder import load_nvidia_dynamic_lib
        dl = load_nvidia_dynamic_lib("nvshmem_host")
        if getattr(dl, "abs_path", None):
            out.append(dl.abs_path)
    except Exception:
        pass
    try:
        import importlib.util
        spec = importlib.util.find_spec("nvidia.nvshmem")
        for p in (spec.submodule_search_locations or []) if spec else []:
            out.append(str(Path(p) / "lib" / "libnvshmem_host.so.3"))
    except Exception:
        pass
    out.append("libnvshmem_host.so.3")  # the loader's search path
    return out


def host_library():
    """The loaded libnvshmem_host (ctypes.CDLL); NvshmemError when none loads."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for p in _library_paths():
        try:
            lib = ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            tried.append(f"{p} ({e})")
            continue
        _bind(lib)
        _lib = lib
        return lib
    raise NvshmemError("NVSHMEM's host library is not there: pip install nvidia-nvshmem-cu13 or set "
                       "NVTMA_NVSHMEM_HOST_LIB; tried " + "; ".join(tried))


def _bind(lib):
    c = ctypes
    sig = {
        "nvshmemx_get_uniqueid": (c.c_int, [c.c_void_p]),
        "nvshmemx_set_attr_uniqueid_args": (c.c_int, [c.c_int, c.c_int, c.c_void_p, c.c_void_p]),
        "nvshmemx_hostlib_init_attr": (c.c_int, [c.c_uint, c.c_void_p]),
        "nvshmemx_vendor_get_version_info": (None, [c.POINTER(c.c_int)] * 3),
        "nvshmemx_init_status": (c.c_int, []),
        "nvshmemx_hostlib_finalize": (None, []),
        "nvshmem_my_pe": (c.c_int, []),
        "nvshmem_n_pes": (c.c_int, []),
        "nvshmem_malloc": (c.c_void_p, [c.c_size_t]),
        "nvshmem_align": (c.c_void_p, [c.c_size_t, c.c_size_t]),
        "nvshmem_free": (None, [c.c_void_p]),
        "nvshmem_barrier_all": (None, []),
        "nvshmemx_barrier_all_on_stream": (None, [c.c_void_p]),
        "nvshmemx_culibrary_init": (c.c_int, [c.c_void_p]),
        "nvshmemx_culibrary_finalize": (c.c_int, [c.c_void_p]),
    }
    for name, (res, args) in sig.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            raise NvshmemError(f"{getattr(lib, '_name', 'libnvshmem_host')} has no {name}: NVSHMEM 3.3 or newer "
                               "is needed") from None
        f.restype, f.argtypes = res, args


def version() -> tuple:
    """(major, minor, patch) of the loaded host library."""
    lib = host_library()
    v = [ctypes.c_int() for _ in range(3)]
    lib.nvshmemx_vendor_get_version_info(*[ctypes.byref(x) for x in v])
    return tuple(x.value for x in v)


# --------------------------------------------------------------------------- init / finalize

def initialized() -> bool:
    return _state["pes"] is not None


def _require():
    if _state["pes"] is None:
        raise NvshmemError("NVSHMEM is not initialized: call nvtma.runtime.nvshmem.init() first")
    return host_library()


def unique_id() -> bytes:
    """A fresh 128-byte bootstrap ID (made on one PE, given to all)."""
    lib = host_library()
    uid = ctypes.create_string_buffer(_UID_BYTES)
    ctypes.c_int.from_buffer(uid).value = (1 << 16) + _UID_BYTES
    _check(lib.nvshmemx_get_uniqueid(uid), "nvshmemx_get_uniqueid")
    return uid.raw


def _check(status, what):
    if status:
        raise NvshmemError(f"{what} returned {status}")


def init(rank: int | None = None, world_size: int | None = None, *, device: int | None = None,
         uid: bytes | None = None) -> tuple:
    """Starts NVSHMEM on this process's GPU; returns (my_pe, n_pes).

    `rank` / `world_size` default to torch.distributed's when it is
    initialized (the bootstrap ID then goes out from rank 0 with a
    broadcast), else to one PE; `uid` gives the ID yourself (from
    unique_id() on rank 0). `device` defaults to the current CUDA device
    (torch's); it becomes current."""
    if _state["pes"] is not None:
        return _state["pes"]
    dist = None
    if rank is None or world_size is None:
        try:
            import torch.distributed as dist
            if not dist.is_available() or not dist.is_initialized():
                dist = None
        except ImportError:
            dist = None
        if dist is not None:
            rank, world_size = dist.get_rank(), dist.get_world_size()
        else:
            rank, world_size = 0, 1
    for v, what in ((rank, "rank"), (world_size, "world_size")):
        if isinstance(v, bool) or not isinstance(v, int):
            raise NvshmemError(f"{what}={v!r} is not an int", arg=what)
    if not 0 <= rank < world_size:
        raise NvshmemError(f"rank {rank} is not in 0..{world_size - 1}", arg="rank")
    if world_size > 1 and uid is None and dist is None:
        raise NvshmemError(f"{world_size} PEs need a shared bootstrap ID: start torch.distributed first, or pass "
                           "uid= (unique_id() on rank 0, sent to every rank)", arg="uid")
    lib = host_library()
    dev = _set_device(device)
    if uid is None:
        uid = unique_id() if rank == 0 else bytes(_UID_BYTES)
        if world_size > 1:
            box = [uid]
            dist.broadcast_object_list(box, src=0)
            uid = box[0]
    if not isinstance(uid, (bytes, bytearray)) or len(uid) != _UID_BYTES:
        raise NvshmemError(f"uid must be the {_UID_BYTES} bytes of unique_id(), got {type(uid).__name__}", arg="uid")
    uid_buf = ctypes.create_string_buffer(bytes(uid), _UID_BYTES)
    attr = ctypes.create_string_buffer(_ATTR_BYTES)
    # nvshmemx_init_attr_v1 { int version; void *mpi_comm; nvshmemx_init_args_v1 args { int version;
    # nvshmemx_uniqueid_args_v1 uid_args { int version; ... } ... } }: what nvshmemx_init_attr's macro sets
    for off, size in ((0, _ATTR_BYTES), (16, _INIT_ARGS_BYTES), (24, _UID_ARGS_BYTES)):
        ctypes.c_int.from_buffer(attr, off).value = (1 << 16) + size
    _check(lib.nvshmemx_set_attr_uniqueid_args(rank, world_size, uid_buf, attr), "nvshmemx_set_attr_uniqueid_args")
    # the host library's own init (nvshmem4py's too): nvshmem_init's inline wrapper also initializes the
    # device library linked into the application, which dynamically loaded cubins get from init_module
    _check(lib.nvshmemx_hostlib_init_attr(_INIT_WITH_UNIQUEID, attr), "nvshmemx_hostlib_init_attr")
    _state["keep"] = (uid_buf, attr)
    _state["pes"] = (int(lib.nvshmem_my_pe()), int(lib.nvshmem_n_pes()))
    _state["device"] = dev
    return _state["pes"]


def _set_device(device):
    from . import driver
    try:
        import torch
        if device is not None:
            torch.cuda.set_device(device)
        dev = torch.cuda.current_device()
        torch.cuda.init()
        torch.zeros(1, device=f"cuda:{dev}")  # the primary context exists and is current
        return dev
    except ImportError:
        pass
    dev = driver.current_device() if device is None else device
    d = driver.drv()
    driver.check(d.cuCtxSetCurrent(d.CUcontext(driver.primary_context(dev))), "cuCtxSetCurrent")
    return dev


def finalize() -> None:
    """Frees what tensor() allocated, releases initialized modules, stops NVSHMEM (collective)."""
    if _state["pes"] is None:
        return
    lib = host_library()
    for ptr in list(_state["buffers"]):
        lib.nvshmem_free(ctypes.c_void_p(ptr))
    _state["buffers"].clear()
    for lib_handle, _dev in list(_state["modules"]):
        lib.nvshmemx_culibrary_finalize(ctypes.c_void_p(lib_handle))
    _state["modules"].clear()
    lib.nvshmemx_hostlib_finalize()
    _state["pes"] = None


def my_pe() -> int:
    _require()
    return _state["pes"][0]


def n_pes() -> int:
    _require()
    return _state["pes"][1]


def barrier_all(stream=None) -> None:
    """Every PE's puts complete and every PE meets (nvshmemx_barrier_all_on_stream
    on `stream`, torch's current one by default; nvshmem_barrier_all with stream=False)."""
    lib = _require()
    if stream is False:
        lib.nvshmem_barrier_all()
        return
    lib.nvshmemx_barrier_all_on_stream(ctypes.c_void_p(_stream(stream)))


def _stream(stream):
    from .launch import default_stream, stream_handle
    return default_stream(_state["device"]) if stream is None else stream_handle(stream, _state["device"])


# --------------------------------------------------------------------------- symmetric tensors

def _torch():
    try:
        import torch
    except ImportError:
        raise NvshmemError("symmetric tensors are torch tensors: install torch") from None
    return torch


class _Symmetric:
    """Symmetric-heap bytes with the CUDA array interface (torch.as_tensor
    takes them without a copy and keeps this object alive)."""

    def __init__(self, ptr, nbytes):
        self.ptr, self.nbytes = ptr, nbytes
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 3, "strides": None, "stream": None}


def tensor(shape, dtype, *, zero: bool = True):
    """A torch tensor on NVSHMEM's symmetric heap (collective: every PE
    allocates the same shape in the same order). Free it with free() (also
    collective) or at finalize(); it must not outlive finalize()."""
    lib = _require()
    torch = _torch()
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in shape):
        raise NvshmemError(f"shape {shape!r} is not a tuple of sizes", arg="shape")
    dtype = getattr(torch, dtype) if isinstance(dtype, str) else dtype
    if not isinstance(dtype, torch.dtype):
        raise NvshmemError(f"dtype {dtype!r} is not a torch dtype", arg="dtype")
    count = 1
    for s in shape:
        count *= s
    nbytes = count * torch.empty((), dtype=dtype).element_size()
    ptr = lib.nvshmem_align(256, max(nbytes, 1))
    if not ptr:
        raise NvshmemError(f"nvshmem_align(256, {nbytes}) failed: the symmetric heap is full "
                           "(NVSHMEM_SYMMETRIC_SIZE sets its size)")
    buf = _Symmetric(ptr, max(nbytes, 1))
    _state["buffers"][ptr] = buf
    t = torch.as_tensor(buf, device=f"cuda:{_state['device']}")[:nbytes].view(dtype).view(shape)
    if zero:
        t.zero_()
    return t


def free(t) -> None:
    """Returns a tensor() to the symmetric heap (collective)."""
    lib = _require()
    ptr = t.data_ptr() if hasattr(t, "data_ptr") else int(t)
    if ptr not in _state["buffers"]:
        raise NvshmemError(f"address 0x{ptr:x} is not the start of a tensor() allocation", arg="tensor")
    _torch().cuda.synchronize(_state["device"])
    lib.nvshmem_free(ctypes.c_void_p(ptr))
    del _state["buffers"][ptr]


# --------------------------------------------------------------------------- modules and launches

def _library_handle(module) -> int:
    """The CUlibrary of a loaded nvtma module (CompiledModule / runtime.load), as an int."""
    if not module.kernels:
        raise NvshmemError("the module has no kernels")
    module._kernel_handle(next(iter(module.kernels)))  # loads the cubin
    lib = module._library
    return int(lib)


def uses_nvshmem(module) -> bool:
    """Whether the module's cubin holds NVSHMEM's device state (a kernel called nvtma.nvshmem)."""
    return module.cubin is not None and STATE_SYMBOL.encode() + b"\0" in module.cubin


def init_module(module) -> None:
    """nvshmemx_culibrary_init for `module` on this PE's device, once: fills
    the cubin's NVSHMEM state. Needs init(); launch() calls it."""
    lib = _require()
    if not uses_nvshmem(module):
        raise NvshmemError("this module's cubin has no NVSHMEM device state: none of its kernels calls "
                           "nvtma.nvshmem, or it was compiled without NVSHMEM's device library")
    h = _library_handle(module)
    key = (h, _state["device"])
    if key in _state["modules"]:
        return
    status = lib.nvshmemx_culibrary_init(ctypes.c_void_p(h))
    if status:
        raise NvshmemError(f"nvshmemx_culibrary_init returned {status}: the cubin's NVSHMEM device library "
                           f"may not match the host library {'.'.join(map(str, version()))} (build the kernels "
                           "with that version's bitcode: NVTMA_NVSHMEM_BITCODE)")
    _state["modules"].add(key)


def launch(kernel, *args, grid, stream=None, cooperative: bool = True):
    """Launches `kernel` (a loaded module's kernel: ``mod.name`` or
    ``mod.kernel(name)``) after init_module, as a cooperative launch: all
    CTAs resident at once, or a LaunchError (rule launch-config) when they
    cannot be, instead of a kernel that waits on a CTA that never runs."""
    from . import driver
    _require()
    init_module(kernel.artifacts)
    if not cooperative:
        return kernel(*args, grid=grid, stream=stream)
    cfg = kernel._config_for(args, grid, None, None, None)
    device, s, keep = kernel._pack(args, stream, "nvtma")
    if device != _state["device"]:
        raise NvshmemError(f"the tensors are on device {device}, NVSHMEM runs on device {_state['device']}",
                           arg="device")
    func = kernel._function()
    smem = cfg[6]
    kernel.allow_smem(func, smem, device)
    if kernel._wide:
        kernel.allow_clusters(func, cfg)
    d = driver.drv()
    c = d.CUlaunchConfig()
    c.gridDimX, c.gridDimY, c.gridDimZ = cfg[0:3]
    c.blockDimX, c.blockDimY, c.blockDimZ = cfg[3:6]
    c.sharedMemBytes = smem
    c.hStream = d.CUstream(s)
    attrs = []
    a = d.CUlaunchAttribute()
    a.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
    a.value.cooperative = 1
    attrs.append(a)
    if cfg[7]:
        a = d.CUlaunchAttribute()
        a.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = cfg[7:10]
        attrs.append(a)
    c.attrs = attrs
    c.numAttrs = len(attrs)
    err = d.cuLaunchKernelEx(c, d.CUfunction(func), kernel._params, 0)
    err = err[0] if isinstance(err, tuple) else err
    del keep
    if err == d.CUresult.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
        raise LaunchError(f"kernel {kernel.name}: grid {cfg[0:3]} has more CTAs than the GPU holds at once "
                          "(a collective launch needs every CTA resident)", arg="grid", rule="launch-config")
    if err != d.CUresult.CUDA_SUCCESS:
        raise LaunchError(f"kernel {kernel.name}: the launch failed ({driver.error_name(int(err))})", rule="driver")
