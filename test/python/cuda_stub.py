"""A stand-in libcuda.so.1 for CPU tests and CPU-side launch timing.

It answers the few driver calls the runtime makes (through cuda.bindings and
through the abi3 launcher, both of which resolve symbols with
cuGetProcAddress), pretends to have two sm_90 devices, and records the last
launch so a test can check what reached the driver: the function, grid,
block, cluster, dynamic shared memory, stream, the context current at the
launch, and the parameter bytes. Nothing runs; every launch returns
CUDA_SUCCESS at once, which is what makes it useful to time the host-side
work of a launch on a machine without a GPU.

A pointer's device (cuPointerGetAttribute) is bits 36..39 of its address:
0x7F0000000000 is on device 0, 0x7F1000000000 on device 1.

It has no cuTensorMapEncodeTiled/Im2col, as a driver before CUDA 12.0 has
none: encoder="driver" is then LaunchError(rule="driver"), which a test
checks.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

SOURCE = r"""
#include <stdint.h>
#include <string.h>

typedef int CUresult;
typedef void *ptr_t;

#define MAXP 64
static struct {
  uint64_t count, ex_count, func, stream, ctx, params_bytes_n;
  unsigned grid[3], block[3], cluster[3], smem, num_attrs;
  unsigned char params[MAXP * 128];
  uint64_t smem_attr[4];
  uint64_t event_records, stream_waits, pushes, libraries;
  unsigned pdl;
  uint64_t wide_attr[4];
} last;
static uint64_t current_ctx = 0;
static uint64_t stack[16];
static int depth = 0;
static unsigned nparams_hint = 0;
static unsigned param_sizes[MAXP];

/* test hooks */
void *nvtmaStubLast(void) { return &last; }
void nvtmaStubSetParamSizes(unsigned n, const unsigned *sizes) {
  nparams_hint = n > MAXP ? MAXP : n;
  for (unsigned i = 0; i < nparams_hint; ++i) param_sizes[i] = sizes[i];
}
void nvtmaStubSetCurrent(uint64_t ctx) { current_ctx = ctx; }
static CUresult launch_result = 0;
void nvtmaStubFailLaunches(CUresult r) { launch_result = r; } /* every launch answers r (0: launches again) */

CUresult cuInit(unsigned f) { (void)f; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
static CUresult cuDeviceGetCount(int *n) { *n = 2; return 0; }
static CUresult cuDeviceGet(int *d, int o) { if (o < 0 || o > 1) return 101; *d = o; return 0; }
static CUresult cuDeviceGetName(char *name, int len, int dev) {
  (void)dev; strncpy(name, "NVIDIA Stub", len); return 0;
}
static CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  (void)dev;
  if (attr == 75) *v = 9;       /* compute capability major */
  else if (attr == 76) *v = 0;  /* minor */
  else if (attr == 38) *v = 50 * 1024 * 1024; /* L2 size */
  else *v = 0;
  return 0;
}
static CUresult cuDevicePrimaryCtxRetain(uint64_t *ctx, int dev) { *ctx = 0x1000 + dev; return 0; }
static CUresult cuCtxGetCurrent(uint64_t *ctx) { *ctx = current_ctx; return 0; }
static CUresult cuCtxSetCurrent(uint64_t ctx) { current_ctx = ctx; return 0; }
static CUresult cuCtxPushCurrent(uint64_t ctx) {
  if (depth == 16) return 1; stack[depth++] = current_ctx; current_ctx = ctx; last.pushes++; return 0;
}
static CUresult cuCtxPopCurrent(uint64_t *ctx) {
  if (!depth) return 201; if (ctx) *ctx = current_ctx; current_ctx = stack[--depth]; return 0;
}
static CUresult cuCtxGetDevice(int *dev) { *dev = current_ctx ? (int)(current_ctx - 0x1000) : 0; return 0; }
static CUresult cuLibraryLoadData(uint64_t *lib, const void *code, void *a, void *b, unsigned n, void *c,
                                  void *d, unsigned m) {
  (void)code; (void)a; (void)b; (void)n; (void)c; (void)d; (void)m;
  *lib = 0xAB000 + (++last.libraries); return 0;
}
static CUresult cuLibraryUnload(uint64_t lib) { (void)lib; return 0; }
static CUresult cuLibraryGetKernel(uint64_t *k, uint64_t lib, const char *name) {
  uint64_t h = 1469598103934665603ull;
  for (const char *p = name; *p; ++p) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  *k = (h & 0xFFFFFFF0ull) | 0x10 | (lib & 0xF); return 0;
}
static CUresult cuKernelSetAttribute(int attr, int val, uint64_t k, int dev) {
  (void)k;
  if (attr == 8 && dev >= 0 && dev < 4) last.smem_attr[dev] = (uint64_t)val;
  if (attr == 14 && dev >= 0 && dev < 4) last.wide_attr[dev] = (uint64_t)val; /* non-portable cluster size */
  return 0;
}
static CUresult cuPointerGetAttribute(void *data, int attr, uint64_t p) {
  if (attr == 9) { *(int *)data = (int)((p >> 36) & 0xF); return 0; } /* device ordinal */
  return 1;
}
static CUresult cuEventCreate(uint64_t *e, unsigned f) { (void)f; *e = 0xE0; return 0; }
static CUresult cuEventRecord(uint64_t e, uint64_t s) { (void)e; (void)s; last.event_records++; return 0; }
static CUresult cuEventDestroy(uint64_t e) { (void)e; return 0; }
static CUresult cuStreamWaitEvent(uint64_t s, uint64_t e, unsigned f) {
  (void)s; (void)e; (void)f; last.stream_waits++; return 0;
}

static void record(uint64_t f, const unsigned *g, const unsigned *b, unsigned smem, uint64_t stream,
                   void **params) {
  last.count++;
  last.func = f; last.stream = stream; last.smem = smem; last.ctx = current_ctx;
  memcpy(last.grid, g, sizeof last.grid); memcpy(last.block, b, sizeof last.block);
  size_t off = 0;
  for (unsigned i = 0; params && i < nparams_hint; ++i) {
    memcpy(last.params + off, params[i], param_sizes[i]);
    off += param_sizes[i];
  }
  last.params_bytes_n = off;
}
static CUresult cuLaunchKernel(uint64_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned smem, uint64_t stream, void **params, void **extra) {
  (void)extra;
  if (launch_result) return launch_result;
  unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  record(f, g, b, smem, stream, params);
  memset(last.cluster, 0, sizeof last.cluster); last.num_attrs = 0; last.pdl = 0;
  return 0;
}
typedef struct { int id; char pad[4]; union { char pad[64]; struct { unsigned x, y, z; } dim; int flag; } v; } Attr;
typedef struct { unsigned gx, gy, gz, bx, by, bz, smem; uint64_t stream; Attr *attrs; unsigned n; } Config;
static CUresult cuLaunchKernelEx(const Config *c, uint64_t f, void **params, void **extra) {
  (void)extra;
  if (launch_result) return launch_result;
  unsigned g[3] = {c->gx, c->gy, c->gz}, b[3] = {c->bx, c->by, c->bz};
  record(f, g, b, c->smem, c->stream, params);
  last.ex_count++; last.num_attrs = c->n;
  memset(last.cluster, 0, sizeof last.cluster); last.pdl = 0;
  for (unsigned i = 0; i < c->n; ++i) {
    if (c->attrs[i].id == 4) {
      last.cluster[0] = c->attrs[i].v.dim.x; last.cluster[1] = c->attrs[i].v.dim.y;
      last.cluster[2] = c->attrs[i].v.dim.z;
    }
    if (c->attrs[i].id == 6) last.pdl = (unsigned)c->attrs[i].v.flag;  /* programmatic serialization */
  }
  /* past 8 CTAs a cluster needs the kernel's non-portable-size attribute on the launch's device */
  int dev = current_ctx ? (int)(current_ctx - 0x1000) : 0;
  if (last.cluster[0] * last.cluster[1] * last.cluster[2] > 8 && (dev < 0 || dev > 3 || !last.wide_attr[dev]))
    return 912; /* CUDA_ERROR_INVALID_CLUSTER_SIZE */
  return 0;
}
static CUresult cuGetErrorName(CUresult e, const char **s) {
  *s = e == 0 ? "CUDA_SUCCESS" : "CUDA_ERROR_STUB"; return 0;
}
static CUresult cuGetErrorString(CUresult e, const char **s) { return cuGetErrorName(e, s); }

static const struct { const char *name; void *fn; } table[] = {
  {"cuInit", (void *)cuInit}, {"cuDriverGetVersion", (void *)cuDriverGetVersion},
  {"cuDeviceGetCount", (void *)cuDeviceGetCount}, {"cuDeviceGet", (void *)cuDeviceGet},
  {"cuDeviceGetName", (void *)cuDeviceGetName}, {"cuDeviceGetAttribute", (void *)cuDeviceGetAttribute},
  {"cuDevicePrimaryCtxRetain", (void *)cuDevicePrimaryCtxRetain},
  {"cuCtxGetCurrent", (void *)cuCtxGetCurrent}, {"cuCtxSetCurrent", (void *)cuCtxSetCurrent},
  {"cuCtxPushCurrent", (void *)cuCtxPushCurrent}, {"cuCtxPopCurrent", (void *)cuCtxPopCurrent},
  {"cuCtxGetDevice", (void *)cuCtxGetDevice},
  {"cuLibraryLoadData", (void *)cuLibraryLoadData}, {"cuLibraryUnload", (void *)cuLibraryUnload},
  {"cuLibraryGetKernel", (void *)cuLibraryGetKernel}, {"cuKernelSetAttribute", (void *)cuKernelSetAttribute},
  {"cuPointerGetAttribute", (void *)cuPointerGetAttribute},
  {"cuEventCreate", (void *)cuEventCreate}, {"cuEventRecord", (void *)cuEventRecord},
  {"cuEventDestroy", (void *)cuEventDestroy}, {"cuStreamWaitEvent", (void *)cuStreamWaitEvent},
  {"cuLaunchKernel", (void *)cuLaunchKernel}, {"cuLaunchKernelEx", (void *)cuLaunchKernelEx},
  {"cuGetErrorName", (void *)cuGetErrorName}, {"cuGetErrorString", (void *)cuGetErrorString},
};

static CUresult lookup(const char *sym, void **pfn) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
    if (!strcmp(table[i].name, sym)) { *pfn = table[i].fn; return 0; }
  *pfn = 0;
  return 500; /* CUDA_ERROR_NOT_FOUND */
}
CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, uint64_t flags, int *status) {
  (void)ver; (void)flags;
  CUresult r = lookup(sym, pfn);
  if (status) *status = r ? 1 : 0;
  return r;
}
CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, uint64_t flags) {
  (void)ver; (void)flags; return lookup(sym, pfn);
}
"""


class Last(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint64), ("ex_count", ctypes.c_uint64), ("func", ctypes.c_uint64),
                ("stream", ctypes.c_uint64), ("ctx", ctypes.c_uint64), ("params_bytes_n", ctypes.c_uint64),
                ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("cluster", ctypes.c_uint * 3),
                ("smem", ctypes.c_uint), ("num_attrs", ctypes.c_uint), ("params", ctypes.c_ubyte * (64 * 128)),
                ("smem_attr", ctypes.c_uint64 * 4), ("event_records", ctypes.c_uint64),
                ("stream_waits", ctypes.c_uint64), ("pushes", ctypes.c_uint64), ("libraries", ctypes.c_uint64),
                ("pdl", ctypes.c_uint), ("wide_attr", ctypes.c_uint64 * 4)]


def build(directory) -> Path | None:
    """Compiles the stub into DIR/libcuda.so.1; None without a C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        return None
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    src = d / "cuda_stub.c"
    src.write_text(SOURCE)
    out = d / "libcuda.so.1"
    r = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(out), str(src)], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"stub libcuda did not build: {r.stderr}")
    return d


def attach():
    """The stub loaded in this process (it must be the libcuda.so.1 that
    LD_LIBRARY_PATH found), as (library, Last structure)."""
    lib = ctypes.CDLL("libcuda.so.1")
    lib.nvtmaStubLast.restype = ctypes.c_void_p
    last = Last.from_address(lib.nvtmaStubLast())
    return lib, last


def set_param_sizes(lib, sizes):
    arr = (ctypes.c_uint * len(sizes))(*sizes)
    lib.nvtmaStubSetParamSizes(len(sizes), arr)


def env_with_stub(directory) -> dict:
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = str(directory) + (os.pathsep + env["LD_LIBRARY_PATH"]
                                               if env.get("LD_LIBRARY_PATH") else "")
    return env


def run(directory, code: str, timeout=120, **env_vars) -> str:
    """Runs `code` in a child Python whose libcuda.so.1 is the stub in
    DIRECTORY and whose import path starts with this folder (the test
    helpers), with ENV_VARS set; its output must end with OK. Its stdout."""
    env = env_with_stub(directory)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE)] + [p for p in sys.path if p])
    env.update(env_vars)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr
    return r.stdout
