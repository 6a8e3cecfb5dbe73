#!/usr/bin/env python3
"""Record the CUDA driver's verdict and bytes for TMA descriptor parameter sets.

Runs where a CUDA driver is present (the H200 box); it calls libcuda through ctypes,
so arrays, ranks and enum values reach cuTensorMapEncodeTiled/Im2col exactly as C
code would pass them (no binding in between):

    python3 test/TensorMap/gen_driver_vectors.py --seed 1 --tiled 45000 --im2col 15000 \\
        --out test/TensorMap/vectors/driver_sm90.jsonl.gz

Each output line is one case from driver_cases.py plus the driver's answer:
``ok`` (bool), ``err`` (CUresult) and ``hex`` (the 128 bytes, when ok). The first
line is a header naming the driver version, the device and the generator's seed.
"""

import argparse
import ctypes
import gzip
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_cases  # noqa: E402

MAXR = 8  # arrays are this long, so ranks 0 and 6 are passed safely
U64A = ctypes.c_uint64 * MAXR
U32A = ctypes.c_uint32 * MAXR
I32A = ctypes.c_int32 * MAXR


class Driver:
    def __init__(self):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self._ok(self.cu.cuInit(0))
        dev = ctypes.c_int()
        self._ok(self.cu.cuDeviceGet(ctypes.byref(dev), 0))
        ctx = ctypes.c_void_p()
        self._ok(self.cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
        self._ok(self.cu.cuCtxSetCurrent(ctx))
        ver = ctypes.c_int()
        self._ok(self.cu.cuDriverGetVersion(ctypes.byref(ver)))
        name = ctypes.create_string_buffer(128)
        self._ok(self.cu.cuDeviceGetName(name, 128, dev))
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._ok(self.cu.cuDeviceGetAttribute(ctypes.byref(major), 75, dev))
        self._ok(self.cu.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev))
        self.meta = dict(driver_version=ver.value, device=name.value.decode(), cc=f"{major.value}{minor.value}")
        # CUtensorMap: 128 bytes, 64-byte aligned
        self.buf = ctypes.create_string_buffer(128 + 64)
        self.mapp = ctypes.c_void_p((ctypes.addressof(self.buf) + 63) // 64 * 64)
        u32, vp = ctypes.c_uint32, ctypes.c_void_p
        self.cu.cuTensorMapEncodeTiled.argtypes = [vp, u32, u32, vp, vp, vp, vp, vp, u32, u32, u32, u32]
        self.cu.cuTensorMapEncodeIm2col.argtypes = [vp, u32, u32, vp, vp, vp, vp, vp, u32, u32, vp, u32, u32, u32, u32]

    @staticmethod
    def _ok(err):
        if err != 0:
            raise RuntimeError(f"CUDA driver error {err}")

    def encode(self, c: dict):
        """(ok, CUresult, bytes or None) for one case."""
        m64 = (1 << 64) - 1
        dims = U64A(*[v & m64 for v in c["dims"][:MAXR]])
        strides = U64A(*[v & m64 for v in c["strides"][:MAXR]])
        es = U32A(*[v & 0xFFFFFFFF for v in c["es"][:MAXR]])
        addr = ctypes.c_void_p(c["addr"] & m64)
        ctypes.memset(self.mapp, 0, 128)
        if c["api"] == "tiled":
            box = U32A(*[v & 0xFFFFFFFF for v in c["box"][:MAXR]])
            err = self.cu.cuTensorMapEncodeTiled(self.mapp, c["dtype"], c["rank"], addr, dims, strides, box, es,
                                                 c["interleave"], c["swizzle"], c["l2"], c["oob"])
        else:
            lo, up = I32A(*c["lower"][:MAXR]), I32A(*c["upper"][:MAXR])
            err = self.cu.cuTensorMapEncodeIm2col(self.mapp, c["dtype"], c["rank"], addr, dims, strides, lo, up,
                                                  c["cpp"], c["ppc"], es, c["interleave"], c["swizzle"],
                                                  c["l2"], c["oob"])
        if err:
            return False, err, None
        return True, 0, ctypes.string_at(self.mapp, 128)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tiled", type=int, default=45000)
    ap.add_argument("--im2col", type=int, default=15000)
    ap.add_argument("--no-probes", action="store_true")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    drv = Driver()
    meta = dict(drv.meta, seed=a.seed, generator="test/TensorMap/driver_cases.py", abi="ctypes libcuda.so.1")
    cases = driver_cases.cases(a.seed, a.tiled, a.im2col, with_probes=not a.no_probes)
    t0 = time.perf_counter()
    n_ok = 0
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with gzip.open(a.out, "wt") as f:
        f.write(json.dumps(dict(header=meta)) + "\n")
        for c in cases:
            ok, err, b = drv.encode(c)
            # record what the C ABI received (values wrap to the argument widths)
            c["addr"] &= (1 << 64) - 1
            c["dims"] = [v & ((1 << 64) - 1) for v in c["dims"]]
            c["strides"] = [v & ((1 << 64) - 1) for v in c["strides"]]
            c["es"] = [v & 0xFFFFFFFF for v in c["es"]]
            if "box" in c:
                c["box"] = [v & 0xFFFFFFFF for v in c["box"]]
            c.update(ok=ok, err=err)
            if ok:
                c["hex"] = b.hex()
                n_ok += 1
            f.write(json.dumps(c, separators=(",", ":")) + "\n")
    print(json.dumps(dict(meta, cases=len(cases), accepted=n_ok, seconds=round(time.perf_counter() - t0, 2),
                          out=a.out)))


if __name__ == "__main__":
    main()
