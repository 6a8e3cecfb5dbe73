//===- LaunchFast.cpp - the runtime's kernel launch call -------------------===//
//
// One driver call per launch, made from C: cuLaunchKernel, or
// cuLaunchKernelEx when the launch has a cluster. Python has already
// packed the parameters (one buffer, one void*[] over it); this module only
// turns a dozen Python ints into the call, which is what cuda.bindings also
// does but with a conversion per argument that costs more than the driver
// call's own host time on a fast path. The driver entry points are resolved
// once through cuGetProcAddress (libcuda.so.1, opened at first use), the
// way the CUDA runtime finds them, so no CUDA header or library is needed to
// build this file.
//
// When the stream is a NULL/legacy handle the driver launches into the
// current context; the caller passes the context of the tensors' device and
// it is pushed around the launch if another one is current (a second call
// only in that case).
//
// The Packer type is the launch's fast path over torch tensors: for each
// tensor argument it keeps the last shape, strides, dtype, device and
// address the Python side packed, and when an exact torch.Tensor (or
// nn.Parameter: a weight) repeats all but the address it writes only the
// address (the memref's two pointers and each bound descriptor's address
// field, after the TMA address checks).
// Anything else answers -1 and Python takes its full, checked path, then
// commits the new state here.
//
// The Launcher type is the base of the runtime's Kernel: a call enters C
// first. When the launch configuration keywords are the very objects of the
// last launch Python armed it with, and the Packer's fast path takes the
// arguments, the launch is made here without a Python frame; anything else
// (another keyword, a miss, a driver not yet resolved) calls Kernel.__call__
// with the same arguments. A failed launch raises through Python as well.
//
// Limited API (abi3): one build serves every CPython >= 3.10.
//
//===----------------------------------------------------------------------===//

#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h> // PyMemberDef: in Python.h from 3.12 on

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

using CUresult = int;
using Handle = void *;

// The driver's types, as far as this file needs them (cuda.h, CUDA 12.0+).
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } clusterDim;
    int programmaticStreamSerializationAllowed;
  } value;
};
static_assert(sizeof(LaunchAttribute) == 72, "CUlaunchAttribute layout");

struct LaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  Handle hStream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
};

constexpr int kClusterDimension = 4;           // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
constexpr int kProgrammaticSerialization = 6;  // CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
// A launch configuration's flags (its 11th value): bit 0, programmatic dependent launch.
constexpr unsigned kFlagPdl = 1;

using GetProcAddressV2 = CUresult (*)(const char *, void **, int, uint64_t, int *);
using GetProcAddressV1 = CUresult (*)(const char *, void **, int, uint64_t);
using LaunchKernel = CUresult (*)(Handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, Handle, void **, void **);
using LaunchKernelEx = CUresult (*)(const LaunchConfig *, Handle, void **, void **);
using CtxGetCurrent = CUresult (*)(Handle *);
using CtxPushCurrent = CUresult (*)(Handle);
using CtxPopCurrent = CUresult (*)(Handle *);

struct Driver {
  LaunchKernel launch = nullptr;
  LaunchKernelEx launchEx = nullptr;
  CtxGetCurrent getCurrent = nullptr;
  CtxPushCurrent push = nullptr;
  CtxPopCurrent pop = nullptr;
} drv;

// Empty once the driver is resolved; else why it is not.
char initError[256] = "not initialized";
bool initialized = false;

bool resolve() {
  if (initialized)
    return true;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(initError, sizeof initError, "cannot open libcuda.so.1 (%s)", e ? e : "unknown");
    return false;
  }
  auto v2 = reinterpret_cast<GetProcAddressV2>(dlsym(lib, "cuGetProcAddress_v2"));
  auto v1 = reinterpret_cast<GetProcAddressV1>(dlsym(lib, "cuGetProcAddress"));
  if (!v2 && !v1) {
    snprintf(initError, sizeof initError, "libcuda.so.1 has no cuGetProcAddress (driver older than 11.3)");
    return false;
  }
  auto get = [&](const char *name, void **fn) {
    *fn = nullptr;
    // 12000: the CUDA 12.0 ABI of each entry point (cuCtxPushCurrent is _v2)
    CUresult r = v2 ? v2(name, fn, 12000, 0, nullptr) : v1(name, fn, 12000, 0);
    return r == 0 && *fn;
  };
  if (!get("cuLaunchKernel", reinterpret_cast<void **>(&drv.launch)) ||
      !get("cuLaunchKernelEx", reinterpret_cast<void **>(&drv.launchEx)) ||
      !get("cuCtxGetCurrent", reinterpret_cast<void **>(&drv.getCurrent)) ||
      !get("cuCtxPushCurrent", reinterpret_cast<void **>(&drv.push)) ||
      !get("cuCtxPopCurrent", reinterpret_cast<void **>(&drv.pop))) {
    snprintf(initError, sizeof initError, "libcuda.so.1 lacks a launch entry point (driver older than 12.0)");
    return false;
  }
  initialized = true;
  initError[0] = 0;
  return true;
}

bool asU64(PyObject *o, uint64_t &out) {
  unsigned long long v = PyLong_AsUnsignedLongLong(o);
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred())
    return false;
  out = v;
  return true;
}

bool asU32(PyObject *o, unsigned &out) {
  uint64_t v;
  if (!asU64(o, v))
    return false;
  if (v > 0xFFFFFFFFull) {
    PyErr_SetString(PyExc_OverflowError, "launch dimension does not fit 32 bits");
    return false;
  }
  out = static_cast<unsigned>(v);
  return true;
}

// init() -> "" when the driver's entry points are resolved, else the reason.
PyObject *init(PyObject *, PyObject *) {
  resolve();
  return PyUnicode_FromString(initError);
}

// launch(func, gx, gy, gz, bx, by, bz, smem, stream, params, ctx, cx, cy, cz[, flags]) -> CUresult
// cx == 0: no cluster; flags & 1: programmatic dependent launch (else
// cuLaunchKernel); ctx == 0: launch in whatever is current.
PyObject *doLaunch(uint64_t func, const unsigned *dims, unsigned smem, uint64_t stream, uint64_t params, uint64_t ctx,
                   const unsigned *cluster, unsigned flags);

PyObject *launch(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 14 && nargs != 15) {
    PyErr_SetString(PyExc_TypeError, "launch takes 14 or 15 arguments");
    return nullptr;
  }
  uint64_t func, stream, params, ctx;
  unsigned dims[6], smem, cluster[3], flags = 0;
  if (!asU64(args[0], func))
    return nullptr;
  for (int i = 0; i < 6; ++i)
    if (!asU32(args[1 + i], dims[i]))
      return nullptr;
  if (!asU32(args[7], smem) || !asU64(args[8], stream) || !asU64(args[9], params) || !asU64(args[10], ctx))
    return nullptr;
  for (int i = 0; i < 3; ++i)
    if (!asU32(args[11 + i], cluster[i]))
      return nullptr;
  if (nargs == 15 && !asU32(args[14], flags))
    return nullptr;
  return doLaunch(func, dims, smem, stream, params, ctx, cluster, flags);
}

// launch_cfg(func, cfg, stream, params, ctx) -> CUresult, with cfg the
// tuple (gx, gy, gz, bx, by, bz, smem, cx, cy, cz[, flags]) a kernel keeps
// per configuration: one tuple instead of ten arguments on the fast path.
PyObject *launchCfg(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  Py_ssize_t n = nargs == 5 && PyTuple_Check(args[1]) ? PyTuple_Size(args[1]) : 0;
  if (n != 10 && n != 11) {
    PyErr_SetString(PyExc_TypeError, "launch_cfg(func, cfg 10- or 11-tuple, stream, params, ctx)");
    return nullptr;
  }
  uint64_t func, stream, params, ctx;
  unsigned v[11] = {};
  if (!asU64(args[0], func) || !asU64(args[2], stream) || !asU64(args[3], params) || !asU64(args[4], ctx))
    return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!asU32(PyTuple_GetItem(args[1], i), v[i]))
      return nullptr;
  return doLaunch(func, v, v[6], stream, params, ctx, v + 7, v[10]);
}

CUresult launchRaw(uint64_t func, const unsigned *dims, unsigned smem, uint64_t stream, uint64_t params, uint64_t ctx,
                   const unsigned *cluster, unsigned flags) {
  Handle f = reinterpret_cast<Handle>(func), s = reinterpret_cast<Handle>(stream);
  void **kp = reinterpret_cast<void **>(params);
  Handle pushed = nullptr;
  bool push = false;
  if (ctx) {
    Handle cur = nullptr;
    CUresult r = drv.getCurrent(&cur);
    if (r)
      return r;
    if (cur != reinterpret_cast<Handle>(ctx)) {
      r = drv.push(reinterpret_cast<Handle>(ctx));
      if (r)
        return r;
      push = true;
    }
  }
  CUresult r;
  if (!cluster[0] && !(flags & kFlagPdl)) {
    r = drv.launch(f, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], smem, s, kp, nullptr);
  } else {
    LaunchAttribute attrs[2];
    std::memset(attrs, 0, sizeof attrs);
    unsigned n = 0;
    if (cluster[0]) {
      attrs[n].id = kClusterDimension;
      attrs[n].value.clusterDim.x = cluster[0];
      attrs[n].value.clusterDim.y = cluster[1];
      attrs[n].value.clusterDim.z = cluster[2];
      ++n;
    }
    if (flags & kFlagPdl) {
      attrs[n].id = kProgrammaticSerialization;
      attrs[n].value.programmaticStreamSerializationAllowed = 1;
      ++n;
    }
    LaunchConfig cfg{dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], smem, s, attrs, n};
    r = drv.launchEx(&cfg, f, kp, nullptr);
  }
  if (push) {
    CUresult p = drv.pop(&pushed);
    if (!r)
      r = p;
  }
  return r;
}

PyObject *doLaunch(uint64_t func, const unsigned *dims, unsigned smem, uint64_t stream, uint64_t params, uint64_t ctx,
                   const unsigned *cluster, unsigned flags) {
  if (!initialized && !resolve()) {
    PyErr_SetString(PyExc_RuntimeError, initError);
    return nullptr;
  }
  return PyLong_FromLong(launchRaw(func, dims, smem, stream, params, ctx, cluster, flags));
}

// ---------------------------------------------------------------------------
// Packer

constexpr int kMaxRank = 16;
constexpr int kMaxDescs = 8;
constexpr uint64_t kAddressLimit = uint64_t(1) << 57;

enum SlotKind { Memref = 0, Scalar = 1, Other = 2 };

struct Slot {
  int kind = Other;
  Py_ssize_t offset = 0;
  int ndesc = 0;
  Py_ssize_t descOffset[kMaxDescs];
  uint64_t descAlign[kMaxDescs];
  uint64_t align = 0; // the record's "align": what the kernel's accesses assume
  // the TMA address rules where tensormap.replace writes the address into a
  // descriptor on the device (0: it does not)
  uint64_t tmapAlign = 0;
  bool valid = false;
  int rank = 0;
  long long shape[kMaxRank];
  long long strides[kMaxRank];
  PyObject *dtype = nullptr; // owned
  long device = -1;
  uint64_t ptr = 0;
  PyObject *value = nullptr; // owned (scalars)
};

constexpr int kMaxDevices = 64;

struct Packer {
  PyObject_HEAD
  PyObject *buffer; // the bytearray the parameters live in (owned)
  Py_ssize_t size;
  Py_ssize_t nslots;
  Slot *slots;
  // launch(): what Python resolved once (any of them unset: Python launches)
  uint64_t func;
  uint64_t params;
  PyObject *tensorType;   // owned
  PyObject *streamGetter; // owned: torch's current-stream getter
  PyObject *streamObj;    // owned: the last explicit stream= object
  uint64_t streamHandle;
  uint64_t ctx[kMaxDevices];
  unsigned smemAllowed[kMaxDevices];
};

PyObject *strShape, *strStride, *strDtype, *strGetDevice, *strDataPtr;
PyTypeObject *packerType;

void clearSlot(Slot &s) {
  Py_CLEAR(s.dtype);
  Py_CLEAR(s.value);
  s.valid = false;
}

void packerDealloc(PyObject *self) {
  Packer *p = reinterpret_cast<Packer *>(self);
  for (Py_ssize_t i = 0; i < p->nslots; ++i)
    clearSlot(p->slots[i]);
  delete[] p->slots;
  Py_XDECREF(p->buffer);
  Py_XDECREF(p->tensorType);
  Py_XDECREF(p->streamGetter);
  Py_XDECREF(p->streamObj);
  PyTypeObject *tp = Py_TYPE(self);
  freefunc f = reinterpret_cast<freefunc>(PyType_GetSlot(tp, Py_tp_free));
  f(self);
  Py_DECREF(tp);
}

// Packer(buffer: bytearray, slots: tuple) with slots[i] one of
//   (0, offset, ((desc_offset, align), ...), align, tmap_align)
//                                               a tensor argument (align,
//                                               tmap_align 0: none)
//   (1,)                                        a scalar
//   (2,)                                        anything else (never fast)
PyObject *packerNew(PyTypeObject *type, PyObject *args, PyObject *) {
  PyObject *buffer, *spec;
  if (!PyArg_ParseTuple(args, "OO", &buffer, &spec))
    return nullptr;
  if (!PyByteArray_Check(buffer) || !PyTuple_Check(spec)) {
    PyErr_SetString(PyExc_TypeError, "Packer(bytearray, tuple)");
    return nullptr;
  }
  allocfunc alloc = reinterpret_cast<allocfunc>(PyType_GetSlot(type, Py_tp_alloc));
  Packer *p = reinterpret_cast<Packer *>(alloc(type, 0));
  if (!p)
    return nullptr;
  Py_INCREF(buffer);
  p->buffer = buffer;
  p->func = p->params = p->streamHandle = 0;
  p->tensorType = p->streamGetter = p->streamObj = nullptr;
  for (int d = 0; d < kMaxDevices; ++d) {
    p->ctx[d] = 0;
    p->smemAllowed[d] = 48 * 1024;
  }
  p->size = PyByteArray_Size(buffer);
  p->nslots = PyTuple_Size(spec);
  p->slots = new Slot[p->nslots];
  for (Py_ssize_t i = 0; i < p->nslots; ++i) {
    PyObject *t = PyTuple_GetItem(spec, i);
    Slot &s = p->slots[i];
    if (!t || !PyTuple_Check(t) || PyTuple_Size(t) < 1)
      goto bad;
    s.kind = static_cast<int>(PyLong_AsLong(PyTuple_GetItem(t, 0)));
    if (s.kind == Memref) {
      if (PyTuple_Size(t) != 5)
        goto bad;
      s.align = PyLong_AsUnsignedLongLong(PyTuple_GetItem(t, 3));
      s.tmapAlign = PyLong_AsUnsignedLongLong(PyTuple_GetItem(t, 4));
      s.offset = PyLong_AsSsize_t(PyTuple_GetItem(t, 1));
      PyObject *descs = PyTuple_GetItem(t, 2);
      if (!PyTuple_Check(descs) || PyTuple_Size(descs) > kMaxDescs)
        goto bad;
      s.ndesc = static_cast<int>(PyTuple_Size(descs));
      for (int d = 0; d < s.ndesc; ++d) {
        PyObject *pair = PyTuple_GetItem(descs, d);
        if (!PyTuple_Check(pair) || PyTuple_Size(pair) != 2)
          goto bad;
        s.descOffset[d] = PyLong_AsSsize_t(PyTuple_GetItem(pair, 0));
        s.descAlign[d] = PyLong_AsUnsignedLongLong(PyTuple_GetItem(pair, 1));
        if (s.descOffset[d] < 0 || s.descOffset[d] + 8 > p->size || !s.descAlign[d])
          goto bad;
      }
      if (s.offset < 0 || s.offset + 16 > p->size)
        goto bad;
    } else if (s.kind != Scalar) {
      s.kind = Other;
    }
  }
  if (PyErr_Occurred())
    goto fail;
  return reinterpret_cast<PyObject *>(p);
bad:
  PyErr_SetString(PyExc_ValueError, "Packer: malformed slot table");
fail:
  Py_DECREF(p);
  return nullptr;
}

// The long of a call's result, or false (the error cleared) if it is not one.
bool callLong(PyObject *obj, PyObject *name, long long &out) {
  PyObject *r = PyObject_CallMethodObjArgs(obj, name, nullptr);
  if (!r) {
    PyErr_Clear();
    return false;
  }
  out = PyLong_AsLongLong(r);
  Py_DECREF(r);
  if (out == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// A tuple of ints equal to `want` (n entries)?
bool sameInts(PyObject *tuple, const long long *want, int n) {
  if (!tuple || !PyTuple_Check(tuple) || PyTuple_Size(tuple) != n)
    return false;
  for (int i = 0; i < n; ++i) {
    long long v = PyLong_AsLongLong(PyTuple_GetItem(tuple, i));
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    if (v != want[i])
      return false;
  }
  return true;
}

bool readInts(PyObject *tuple, long long *out, int &n) {
  if (!PyTuple_Check(tuple) || PyTuple_Size(tuple) > kMaxRank)
    return false;
  n = static_cast<int>(PyTuple_Size(tuple));
  for (int i = 0; i < n; ++i) {
    out[i] = PyLong_AsLongLong(PyTuple_GetItem(tuple, i));
    if (out[i] == -1 && PyErr_Occurred())
      return false;
  }
  return true;
}

// Is a's type exactly `types` (a type), or one of them (a tuple of types)?
// Exact types only: a subclass may answer shape, stride or data_ptr its own
// way (nn.Parameter, which does not, is named by the Python side).
bool exactType(PyObject *a, PyObject *types) {
  PyObject *tp = reinterpret_cast<PyObject *>(Py_TYPE(a));
  if (!PyTuple_Check(types))
    return tp == types;
  for (Py_ssize_t i = 0, n = PyTuple_Size(types); i < n; ++i)
    if (PyTuple_GetItem(types, i) == tp)
      return true;
  return false;
}

// The fast path's packing of argv[0..n): the device, or -1 (take the full
// path).
long fastPack(Packer *p, PyObject *const *argv, Py_ssize_t n, PyObject *tensorType) {
  if (n != p->nslots || !tensorType)
    return -1;
  char *base = PyByteArray_AsString(p->buffer);
  long device = -1;
  for (Py_ssize_t i = 0; i < n; ++i) {
    Slot &s = p->slots[i];
    PyObject *a = argv[i];
    if (!s.valid)
      return -1;
    if (s.kind == Scalar) {
      // The same object packs to the same bytes: Python commits only scalars
      // that cannot change (ints, floats, bools, numpy scalars), after its
      // type and range checks; a 0-d array or tensor is never committed.
      if (a != s.value)
        return -1;
      continue;
    }
    if (s.kind != Memref || !exactType(a, tensorType))
      return -1;
    PyObject *shape = PyObject_GetAttr(a, strShape);
    bool same = sameInts(shape, s.shape, s.rank);
    Py_XDECREF(shape);
    if (!same) {
      PyErr_Clear();
      return -1;
    }
    PyObject *strides = PyObject_CallMethodObjArgs(a, strStride, nullptr);
    same = sameInts(strides, s.strides, s.rank);
    Py_XDECREF(strides);
    if (!same) {
      PyErr_Clear();
      return -1;
    }
    PyObject *dtype = PyObject_GetAttr(a, strDtype);
    same = dtype == s.dtype;
    Py_XDECREF(dtype);
    long long dev, ptr;
    if (!same || !callLong(a, strGetDevice, dev) || dev != s.device || !callLong(a, strDataPtr, ptr)) {
      PyErr_Clear();
      return -1;
    }
    uint64_t addr = static_cast<uint64_t>(ptr);
    if (addr != s.ptr) {
      if (s.align && addr % s.align)
        return -1; // Python names the broken rule
      // the TMA address rules, of each descriptor it goes into
      auto tmaAddress = [addr](uint64_t align) {
        return addr && addr % align == 0 && addr < kAddressLimit;
      };
      if (s.tmapAlign && !tmaAddress(s.tmapAlign))
        return -1;
      for (int d = 0; d < s.ndesc; ++d)
        if (!tmaAddress(s.descAlign[d]))
          return -1;
      std::memcpy(base + s.offset, &addr, 8);
      std::memcpy(base + s.offset + 8, &addr, 8);
      for (int d = 0; d < s.ndesc; ++d)
        std::memcpy(base + s.descOffset[d], &addr, 8);
      s.ptr = addr;
    }
    device = static_cast<long>(dev);
  }
  return device;
}

// A tuple's items into out[0..max): their number, or -1 if more.
Py_ssize_t tupleItems(PyObject *tuple, PyObject **out, Py_ssize_t max) {
  Py_ssize_t n = PyTuple_Size(tuple);
  if (n < 0 || n > max) {
    PyErr_Clear();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; ++i)
    out[i] = PyTuple_GetItem(tuple, i);
  return n;
}

constexpr Py_ssize_t kMaxArgs = 64;

// fast(args, tensor_types) -> device (>= 0) or -1 (take the full path);
// tensor_types: the exact tensor type, or a tuple of them
PyObject *packerFast(PyObject *self, PyObject *const *argv, Py_ssize_t nargs) {
  PyObject *items[kMaxArgs];
  Py_ssize_t n = nargs == 2 && PyTuple_Check(argv[0]) ? tupleItems(argv[0], items, kMaxArgs) : -1;
  if (n < 0)
    return PyLong_FromLong(-1);
  return PyLong_FromLong(fastPack(reinterpret_cast<Packer *>(self), items, n, argv[1]));
}

// One launch of argv[0..n) with the configuration cfg, from C: the CUresult,
// or -1 when Python must launch (metadata changed, an unknown device or
// stream, an smem attribute to set, no driver yet...). stream is the
// stream= argument (None: torch's current stream on the tensors' device).
int packerLaunch(Packer *p, PyObject *const *argv, Py_ssize_t n, const unsigned *cfg, PyObject *stream) {
  if (!p->func || !initialized)
    return -1;
  long dev = fastPack(p, argv, n, p->tensorType);
  if (dev < 0 || dev >= kMaxDevices || !p->ctx[dev] || cfg[6] > p->smemAllowed[dev])
    return -1;
  uint64_t handle;
  if (stream == Py_None) {
    if (!p->streamGetter)
      return -1;
    PyObject *d = PyLong_FromLong(dev); // a small int: no allocation
    PyObject *r = d ? PyObject_CallFunctionObjArgs(p->streamGetter, d, nullptr) : nullptr;
    bool ok = r && asU64(r, handle);
    Py_XDECREF(d);
    Py_XDECREF(r);
    if (!ok) {
      PyErr_Clear();
      return -1;
    }
  } else if (stream == p->streamObj) {
    handle = p->streamHandle;
  } else {
    return -1;
  }
  return launchRaw(p->func, cfg, cfg[6], handle, p->params, p->ctx[dev], cfg + 7, cfg[10]);
}

// configure(func, params, tensor_types, stream_getter|None)
PyObject *packerConfigure(PyObject *self, PyObject *args) {
  Packer *p = reinterpret_cast<Packer *>(self);
  PyObject *func, *params, *tt, *getter;
  if (!PyArg_ParseTuple(args, "OOOO", &func, &params, &tt, &getter))
    return nullptr;
  uint64_t f, pa;
  if (!asU64(func, f) || !asU64(params, pa))
    return nullptr;
  p->func = f;
  p->params = pa;
  Py_XDECREF(p->tensorType);
  Py_XDECREF(p->streamGetter);
  p->tensorType = tt == Py_None ? nullptr : tt;
  p->streamGetter = getter == Py_None ? nullptr : getter;
  Py_XINCREF(p->tensorType);
  Py_XINCREF(p->streamGetter);
  Py_RETURN_NONE;
}

// set_device(device, ctx, smem_allowed)
PyObject *packerSetDevice(PyObject *self, PyObject *args) {
  Packer *p = reinterpret_cast<Packer *>(self);
  long dev;
  unsigned long long ctx;
  unsigned smem;
  if (!PyArg_ParseTuple(args, "lKI", &dev, &ctx, &smem))
    return nullptr;
  if (dev >= 0 && dev < kMaxDevices) {
    p->ctx[dev] = ctx;
    p->smemAllowed[dev] = smem;
  }
  Py_RETURN_NONE;
}

// set_stream(obj, handle): the explicit stream= object launch() recognizes
PyObject *packerSetStream(PyObject *self, PyObject *args) {
  Packer *p = reinterpret_cast<Packer *>(self);
  PyObject *obj;
  unsigned long long h;
  if (!PyArg_ParseTuple(args, "OK", &obj, &h))
    return nullptr;
  Py_XDECREF(p->streamObj);
  Py_INCREF(obj);
  p->streamObj = obj;
  p->streamHandle = h;
  Py_RETURN_NONE;
}

// commit(i, shape, strides, dtype, device, ptr): tensor slot i as just packed
// commit(i, value): scalar slot i (an immutable value, packed by Python)
PyObject *packerCommit(PyObject *self, PyObject *args) {
  Packer *p = reinterpret_cast<Packer *>(self);
  Py_ssize_t n = PyTuple_Size(args);
  if (n < 2) {
    PyErr_SetString(PyExc_TypeError, "commit(i, ...)");
    return nullptr;
  }
  Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GetItem(args, 0));
  if (i < 0 || i >= p->nslots) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_IndexError, "commit: no such slot");
    return nullptr;
  }
  Slot &s = p->slots[i];
  clearSlot(s);
  if (s.kind == Scalar && n == 2) {
    s.value = PyTuple_GetItem(args, 1);
    Py_INCREF(s.value);
    s.valid = true;
    Py_RETURN_NONE;
  }
  if (s.kind != Memref || n != 6) {
    PyErr_SetString(PyExc_TypeError, "commit: wrong arguments for this slot");
    return nullptr;
  }
  int rank, srank;
  if (!readInts(PyTuple_GetItem(args, 1), s.shape, rank) || !readInts(PyTuple_GetItem(args, 2), s.strides, srank) ||
      rank != srank) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "commit: shape and strides of one rank, at most 16");
    return nullptr;
  }
  s.rank = rank;
  s.dtype = PyTuple_GetItem(args, 3);
  Py_INCREF(s.dtype);
  s.device = PyLong_AsLong(PyTuple_GetItem(args, 4));
  s.ptr = PyLong_AsUnsignedLongLong(PyTuple_GetItem(args, 5));
  if (PyErr_Occurred()) {
    clearSlot(s);
    return nullptr;
  }
  s.valid = true;
  Py_RETURN_NONE;
}

PyObject *packerReset(PyObject *self, PyObject *) {
  Packer *p = reinterpret_cast<Packer *>(self);
  for (Py_ssize_t i = 0; i < p->nslots; ++i)
    clearSlot(p->slots[i]);
  Py_RETURN_NONE;
}

PyMethodDef packerMethods[] = {
    {"fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(packerFast)), METH_FASTCALL,
     "fast(args, tensor_type) -> device, or -1 for the full path"},
    {"commit", packerCommit, METH_VARARGS, "commit(i, shape, strides, dtype, device, ptr) | commit(i, value)"},
    {"reset", packerReset, METH_NOARGS, "forget every slot"},
    {"configure", packerConfigure, METH_VARARGS, "configure(func, params, tensor_type, stream_getter)"},
    {"set_device", packerSetDevice, METH_VARARGS, "set_device(device, ctx, smem_allowed)"},
    {"set_stream", packerSetStream, METH_VARARGS, "set_stream(obj, handle)"},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot packerSlots[] = {{Py_tp_new, reinterpret_cast<void *>(packerNew)},
                             {Py_tp_dealloc, reinterpret_cast<void *>(packerDealloc)},
                             {Py_tp_methods, packerMethods},
                             {Py_tp_doc, const_cast<char *>("the launch fast path over torch tensors")},
                             {0, nullptr}};

PyType_Spec packerSpec = {"nvtma._lib._launch_fast.Packer", sizeof(Packer), 0, Py_TPFLAGS_DEFAULT, packerSlots};

// ---------------------------------------------------------------------------
// Launcher

// PEP 590's protocol, stable since 3.8 but in the limited API only from 3.12.
#ifndef Py_TPFLAGS_HAVE_VECTORCALL
#define Py_TPFLAGS_HAVE_VECTORCALL (1UL << 11)
#endif
constexpr size_t kArgumentsOffset = size_t(1) << (8 * sizeof(size_t) - 1);
using Vectorcall = PyObject *(*)(PyObject *, PyObject *const *, size_t, PyObject *);

enum Keyword { Grid, Block, Cluster, Smem, Stream, Encoder, NumKeywords };
PyObject *keywordNames[NumKeywords];
PyObject *strNvtma;

struct Launcher {
  PyObject_HEAD
  Vectorcall vectorcall;
  PyObject *packer; // owned: the kernel's Packer
  PyObject *slow;   // owned: slow(self, *args, **kwargs), Kernel.__call__
  PyObject *fail;   // owned: fail(self, rc) raises the launch's LaunchError
  bool armed;
  PyObject *key[Stream]; // owned: grid, block, cluster, smem of the armed launch
  unsigned cfg[11];      // (gx, gy, gz, bx, by, bz, smem, cx, cy, cz, flags)
};

// The call's keywords, matched against the armed ones. Absent ones are None
// (Kernel.__call__'s defaults), but for encoder: nullptr, its default being
// "nvtma".
struct Keywords {
  PyObject *value[NumKeywords];
  Keywords() {
    for (PyObject *&v : value)
      v = Py_None;
    value[Encoder] = nullptr;
  }
  bool set(PyObject *name, PyObject *v) {
    for (int k = 0; k < NumKeywords; ++k)
      if (name == keywordNames[k]) {
        value[k] = v;
        return true;
      }
    if (!PyUnicode_Check(name)) // a keyword spelled at run time: not interned
      return false;
    for (int k = 0; k < NumKeywords; ++k)
      if (PyUnicode_Compare(name, keywordNames[k]) == 0) {
        value[k] = v;
        return true;
      }
    PyErr_Clear();
    return false; // Kernel.__call__ raises the TypeError
  }
  bool match(const Launcher *l) const {
    for (int k = 0; k < Stream; ++k)
      if (value[k] != l->key[k])
        return false;
    PyObject *e = value[Encoder];
    if (!e || e == strNvtma)
      return true;
    if (!PyUnicode_CheckExact(e))
      return false;
    int c = PyUnicode_Compare(e, strNvtma);
    PyErr_Clear();
    return c == 0;
  }
};

void launcherDisarm(Launcher *l) {
  l->armed = false;
  for (PyObject *&k : l->key)
    Py_CLEAR(k);
}

// The C launch: Py_None on success, the raised LaunchError, or nullptr with
// no error set when Python must take the call.
PyObject *launcherFast(Launcher *l, PyObject *self, PyObject *const *argv, Py_ssize_t n, const Keywords &kw) {
  if (!l->armed || !kw.match(l))
    return nullptr;
  // the getters may run Python code that re-arms or rebinds this launcher
  unsigned cfg[11];
  std::memcpy(cfg, l->cfg, sizeof cfg);
  PyObject *packer = l->packer;
  Py_INCREF(packer);
  int rc = packerLaunch(reinterpret_cast<Packer *>(packer), argv, n, cfg, kw.value[Stream]);
  Py_DECREF(packer);
  if (rc < 0)
    return nullptr;
  if (rc == 0)
    Py_RETURN_NONE;
  PyObject *r = PyLong_FromLong(rc);
  PyObject *fail = l->fail;
  Py_INCREF(fail);
  PyObject *e = r ? PyObject_CallFunctionObjArgs(fail, self, r, nullptr) : nullptr;
  Py_DECREF(fail);
  Py_XDECREF(r);
  if (e) { // fail() raises; should it not, the launch still failed
    Py_DECREF(e);
    PyErr_Format(PyExc_RuntimeError, "the launch failed (CUresult %d)", rc);
  }
  return nullptr;
}

PyObject *launcherSlow(Launcher *l, PyObject *self, PyObject *args, PyObject *kwargs) {
  if (!l->slow) {
    PyErr_SetString(PyExc_TypeError, "Launcher: no kernel bound");
    return nullptr;
  }
  Py_ssize_t n = PyTuple_Size(args);
  PyObject *all = PyTuple_New(n + 1);
  if (!all)
    return nullptr;
  Py_INCREF(self);
  PyTuple_SetItem(all, 0, self);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *a = PyTuple_GetItem(args, i);
    Py_INCREF(a);
    PyTuple_SetItem(all, i + 1, a);
  }
  PyObject *slow = l->slow;
  Py_INCREF(slow);
  PyObject *r = PyObject_Call(slow, all, kwargs);
  Py_DECREF(slow);
  Py_DECREF(all);
  return r;
}

// tp_call: what CPython < 3.12 uses for a Python subclass (Kernel).
PyObject *launcherCall(PyObject *self, PyObject *args, PyObject *kwargs) {
  Launcher *l = reinterpret_cast<Launcher *>(self);
  if (l->armed) {
    PyObject *argv[kMaxArgs];
    Py_ssize_t n = tupleItems(args, argv, kMaxArgs);
    Keywords kw;
    bool ok = n >= 0;
    if (ok && kwargs) {
      Py_ssize_t pos = 0;
      PyObject *k, *v;
      while (ok && PyDict_Next(kwargs, &pos, &k, &v))
        ok = kw.set(k, v);
    }
    if (ok) {
      PyObject *r = launcherFast(l, self, argv, n, kw);
      if (r || PyErr_Occurred())
        return r;
    }
  }
  return launcherSlow(l, self, args, kwargs);
}

// The vectorcall entry (CPython >= 3.12 gives it to the subclass too).
PyObject *launcherVectorcall(PyObject *self, PyObject *const *argv, size_t nargsf, PyObject *kwnames) {
  Launcher *l = reinterpret_cast<Launcher *>(self);
  Py_ssize_t n = static_cast<Py_ssize_t>(nargsf & ~kArgumentsOffset);
  Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
  if (l->armed) {
    Keywords kw;
    bool ok = true;
    for (Py_ssize_t i = 0; ok && i < nkw; ++i)
      ok = kw.set(PyTuple_GetItem(kwnames, i), argv[n + i]);
    if (ok) {
      PyObject *r = launcherFast(l, self, argv, n, kw);
      if (r || PyErr_Occurred())
        return r;
    }
  }
  PyObject *args = PyTuple_New(n), *kwargs = nkw ? PyDict_New() : nullptr;
  bool ok = args && (kwargs || !nkw);
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    Py_INCREF(argv[i]);
    PyTuple_SetItem(args, i, argv[i]);
  }
  for (Py_ssize_t i = 0; ok && i < nkw; ++i)
    ok = PyDict_SetItem(kwargs, PyTuple_GetItem(kwnames, i), argv[n + i]) == 0;
  PyObject *r = ok ? launcherSlow(l, self, args, kwargs) : nullptr;
  Py_XDECREF(args);
  Py_XDECREF(kwargs);
  return r;
}

PyObject *launcherNew(PyTypeObject *type, PyObject *, PyObject *) {
  allocfunc alloc = reinterpret_cast<allocfunc>(PyType_GetSlot(type, Py_tp_alloc));
  Launcher *l = reinterpret_cast<Launcher *>(alloc(type, 0));
  if (!l)
    return nullptr;
  l->vectorcall = launcherVectorcall;
  l->packer = l->slow = l->fail = nullptr;
  l->armed = false;
  for (PyObject *&k : l->key)
    k = nullptr;
  return reinterpret_cast<PyObject *>(l);
}

int launcherTraverse(PyObject *self, visitproc visit, void *arg) {
  Launcher *l = reinterpret_cast<Launcher *>(self);
  Py_VISIT(l->packer);
  Py_VISIT(l->slow);
  Py_VISIT(l->fail);
  for (PyObject *k : l->key)
    Py_VISIT(k);
  return 0;
}

int launcherClear(PyObject *self) {
  Launcher *l = reinterpret_cast<Launcher *>(self);
  launcherDisarm(l);
  Py_CLEAR(l->packer);
  Py_CLEAR(l->slow);
  Py_CLEAR(l->fail);
  return 0;
}

void launcherDealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  launcherClear(self);
  PyTypeObject *tp = Py_TYPE(self);
  freefunc f = reinterpret_cast<freefunc>(PyType_GetSlot(tp, Py_tp_free));
  f(self);
  Py_DECREF(tp);
}

// _fast_bind(packer, slow, fail)
PyObject *launcherBind(PyObject *self, PyObject *args) {
  Launcher *l = reinterpret_cast<Launcher *>(self);
  PyObject *packer, *slow, *fail;
  if (!PyArg_ParseTuple(args, "OOO", &packer, &slow, &fail))
    return nullptr;
  if (Py_TYPE(packer) != packerType || !PyCallable_Check(slow) || !PyCallable_Check(fail)) {
    PyErr_SetString(PyExc_TypeError, "_fast_bind(Packer, callable, callable)");
    return nullptr;
  }
  Py_INCREF(packer);
  Py_INCREF(slow);
  Py_INCREF(fail);
  launcherClear(self);
  l->packer = packer;
  l->slow = slow;
  l->fail = fail;
  Py_RETURN_NONE;
}

// _fast_arm(grid, block, cluster, smem, cfg): the next calls with these very
// objects (and no stream, or the Packer's stream object) launch from C.
PyObject *launcherArm(PyObject *self, PyObject *args) {
  Launcher *l = reinterpret_cast<Launcher *>(self);
  PyObject *key[Stream], *cfg;
  if (!PyArg_ParseTuple(args, "OOOOO!", &key[0], &key[1], &key[2], &key[3], &PyTuple_Type, &cfg))
    return nullptr;
  launcherDisarm(l);
  Py_ssize_t n = PyTuple_Size(cfg);
  if ((n != 10 && n != 11) || !l->packer) {
    PyErr_SetString(PyExc_TypeError, "_fast_arm: a bound launcher and a 10- or 11-tuple cfg");
    return nullptr;
  }
  l->cfg[10] = 0;
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!asU32(PyTuple_GetItem(cfg, i), l->cfg[i]))
      return nullptr;
  for (int k = 0; k < Stream; ++k) {
    Py_INCREF(key[k]);
    l->key[k] = key[k];
  }
  l->armed = true;
  Py_RETURN_NONE;
}

PyObject *launcherDisarmPy(PyObject *self, PyObject *) {
  launcherDisarm(reinterpret_cast<Launcher *>(self));
  Py_RETURN_NONE;
}

PyMethodDef launcherMethods[] = {
    {"_fast_bind", launcherBind, METH_VARARGS, "_fast_bind(packer, slow, fail)"},
    {"_fast_arm", launcherArm, METH_VARARGS, "_fast_arm(grid, block, cluster, smem, cfg)"},
    {"_fast_disarm", launcherDisarmPy, METH_NOARGS, "launch every call through Python again"},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef launcherMembers[] = {
    {const_cast<char *>("__vectorcalloffset__"), T_PYSSIZET, offsetof(Launcher, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyType_Slot launcherSlots[] = {{Py_tp_new, reinterpret_cast<void *>(launcherNew)},
                               {Py_tp_dealloc, reinterpret_cast<void *>(launcherDealloc)},
                               {Py_tp_traverse, reinterpret_cast<void *>(launcherTraverse)},
                               {Py_tp_clear, reinterpret_cast<void *>(launcherClear)},
                               {Py_tp_call, reinterpret_cast<void *>(launcherCall)},
                               {Py_tp_methods, launcherMethods},
                               {Py_tp_members, launcherMembers},
                               {Py_tp_doc, const_cast<char *>("a kernel whose calls enter C first")},
                               {0, nullptr}};

PyType_Spec launcherSpec = {"nvtma._lib._launch_fast.Launcher", sizeof(Launcher), 0,
                            Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
                            launcherSlots};

PyMethodDef methods[] = {
    {"init", init, METH_NOARGS, "resolve the driver's launch entry points: '' or the reason they are missing"},
    {"launch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(launch)), METH_FASTCALL,
     "launch(func, gx, gy, gz, bx, by, bz, smem, stream, params, ctx, cx, cy, cz) -> CUresult"},
    {"launch_cfg", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(launchCfg)), METH_FASTCALL,
     "launch_cfg(func, (gx, gy, gz, bx, by, bz, smem, cx, cy, cz), stream, params, ctx) -> CUresult"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDef = {PyModuleDef_HEAD_INIT, "_launch_fast", nullptr, -1, methods,
                         nullptr, nullptr, nullptr, nullptr};

} // namespace

PyMODINIT_FUNC PyInit__launch_fast(void) {
  PyObject *m = PyModule_Create(&moduleDef);
  if (!m)
    return nullptr;
  strShape = PyUnicode_InternFromString("shape");
  strStride = PyUnicode_InternFromString("stride");
  strDtype = PyUnicode_InternFromString("dtype");
  strGetDevice = PyUnicode_InternFromString("get_device");
  strDataPtr = PyUnicode_InternFromString("data_ptr");
  const char *names[NumKeywords] = {"grid", "block", "cluster", "smem", "stream", "encoder"};
  for (int k = 0; k < NumKeywords; ++k)
    if (!(keywordNames[k] = PyUnicode_InternFromString(names[k]))) {
      Py_DECREF(m);
      return nullptr;
    }
  strNvtma = PyUnicode_InternFromString("nvtma");
  PyObject *packer = PyType_FromSpec(&packerSpec);
  packerType = reinterpret_cast<PyTypeObject *>(packer);
  Py_XINCREF(packer); // packerType keeps one
  PyObject *launcher = PyType_FromSpec(&launcherSpec);
  if (!strShape || !strStride || !strDtype || !strGetDevice || !strDataPtr || !strNvtma || !packer || !launcher ||
      PyModule_AddObject(m, "Packer", packer) < 0) {
    Py_XDECREF(packer);
    Py_XDECREF(launcher);
    Py_DECREF(m);
    return nullptr;
  }
  if (PyModule_AddObject(m, "Launcher", launcher) < 0) {
    Py_DECREF(launcher);
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
