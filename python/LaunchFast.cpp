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
// Limited API (abi3): one build serves every CPython >= 3.10.
//
//===----------------------------------------------------------------------===//

#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>

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

constexpr int kClusterDimension = 4; // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION

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

// launch(func, gx, gy, gz, bx, by, bz, smem, stream, params, ctx, cx, cy, cz) -> CUresult
// cx == 0: no cluster (cuLaunchKernel); ctx == 0: launch in whatever is current.
PyObject *launch(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 14) {
    PyErr_SetString(PyExc_TypeError, "launch takes 14 arguments");
    return nullptr;
  }
  if (!initialized && !resolve()) {
    PyErr_SetString(PyExc_RuntimeError, initError);
    return nullptr;
  }
  uint64_t func, stream, params, ctx;
  unsigned dims[6], smem, cluster[3];
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

  Handle f = reinterpret_cast<Handle>(func), s = reinterpret_cast<Handle>(stream);
  void **kp = reinterpret_cast<void **>(params);
  Handle pushed = nullptr;
  bool push = false;
  if (ctx) {
    Handle cur = nullptr;
    CUresult r = drv.getCurrent(&cur);
    if (r)
      return PyLong_FromLong(r);
    if (cur != reinterpret_cast<Handle>(ctx)) {
      r = drv.push(reinterpret_cast<Handle>(ctx));
      if (r)
        return PyLong_FromLong(r);
      push = true;
    }
  }
  CUresult r;
  if (!cluster[0]) {
    r = drv.launch(f, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], smem, s, kp, nullptr);
  } else {
    LaunchAttribute attr;
    std::memset(&attr, 0, sizeof attr);
    attr.id = kClusterDimension;
    attr.value.clusterDim.x = cluster[0];
    attr.value.clusterDim.y = cluster[1];
    attr.value.clusterDim.z = cluster[2];
    LaunchConfig cfg{dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], smem, s, &attr, 1};
    r = drv.launchEx(&cfg, f, kp, nullptr);
  }
  if (push) {
    CUresult p = drv.pop(&pushed);
    if (!r)
      r = p;
  }
  return PyLong_FromLong(r);
}

PyMethodDef methods[] = {
    {"init", init, METH_NOARGS, "resolve the driver's launch entry points: '' or the reason they are missing"},
    {"launch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(launch)), METH_FASTCALL,
     "launch(func, gx, gy, gz, bx, by, bz, smem, stream, params, ctx, cx, cy, cz) -> CUresult"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDef = {PyModuleDef_HEAD_INIT, "_launch_fast", nullptr, -1, methods,
                         nullptr, nullptr, nullptr, nullptr};

} // namespace

PyMODINIT_FUNC PyInit__launch_fast(void) { return PyModule_Create(&moduleDef); }
