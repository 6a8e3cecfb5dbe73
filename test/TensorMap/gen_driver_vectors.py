#!/usr/bin/env python3
"""Record the CUDA driver's verdict and bytes for TMA descriptor parameter sets.

Runs where a CUDA driver and cuda-bindings are present (the H200 box):

    python3 test/TensorMap/gen_driver_vectors.py --seed 1 --tiled 40000 --im2col 15000 \
        --out test/TensorMap/vectors/driver_sm90.jsonl.gz

Each output line is one case from driver_cases.py plus the driver's answer:
``ok`` (bool), ``err`` (CUresult as int) and ``hex`` (the 128 bytes, when ok).
The first line is a header with the driver version and the device.
"""

import argparse
import gzip
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_cases  # noqa: E402

from cuda.bindings import driver as drv  # noqa: E402


def _check(res):
    err = res[0] if isinstance(res, tuple) else res
    if err != drv.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA error {err}")
    return res[1:] if isinstance(res, tuple) else None


def init_context():
    _check(drv.cuInit(0))
    (dev,) = _check(drv.cuDeviceGet(0))
    (ctx,) = _check(drv.cuDevicePrimaryCtxRetain(dev))
    _check(drv.cuCtxSetCurrent(ctx))
    (ver,) = _check(drv.cuDriverGetVersion())
    (name,) = _check(drv.cuDeviceGetName(128, dev))
    cc = []
    for a in (drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
              drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR):
        cc.append(_check(drv.cuDeviceGetAttribute(a, dev))[0])
    return dict(driver_version=ver, device=name.split(b"\0")[0].decode(), cc=f"{cc[0]}{cc[1]}")


def driver_encode(c: dict):
    """Return (ok, err_int, bytes_or_None) for one case, through the live driver."""
    U32, U64 = drv.cuuint32_t, drv.cuuint64_t
    dt = drv.CUtensorMapDataType(c["dtype"])
    il = drv.CUtensorMapInterleave(c["interleave"])
    sw = drv.CUtensorMapSwizzle(c["swizzle"])
    l2 = drv.CUtensorMapL2promotion(c["l2"])
    oob = drv.CUtensorMapFloatOOBfill(c["oob"])
    dims = [U64(v % (1 << 64)) for v in c["dims"]]
    strides = [U64(v % (1 << 64)) for v in c["strides"]]
    es = [U32(v % (1 << 32)) for v in c["es"]]
    if c["api"] == "tiled":
        box = [U32(v % (1 << 32)) for v in c["box"]]
        res = drv.cuTensorMapEncodeTiled(dt, c["rank"], c["addr"], dims, strides, box, es, il, sw, l2, oob)
    else:
        res = drv.cuTensorMapEncodeIm2col(dt, c["rank"], c["addr"], dims, strides, c["lower"], c["upper"],
                                          c["cpp"], c["ppc"], es, il, sw, l2, oob)
    err, m = res
    if err != drv.CUresult.CUDA_SUCCESS:
        return False, int(err), None
    return True, 0, b"".join(int(v).to_bytes(8, "little") for v in m.opaque)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tiled", type=int, default=40000)
    ap.add_argument("--im2col", type=int, default=15000)
    ap.add_argument("--no-probes", action="store_true")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    meta = init_context()
    import cuda.bindings
    meta.update(cuda_bindings=cuda.bindings.__version__, seed=a.seed, generator="driver_cases.py")
    cases = driver_cases.cases(a.seed, a.tiled, a.im2col, with_probes=not a.no_probes)
    t0 = time.perf_counter()
    n_ok = n_skip = 0
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with gzip.open(a.out, "wt") as f:
        f.write(json.dumps(dict(header=meta)) + "\n")
        for c in cases:
            try:
                ok, err, b = driver_encode(c)
            except (TypeError, ValueError, OverflowError) as e:  # binding refused the arguments
                c.update(ok=None, err=-1, pyerr=str(e)[:80])
                n_skip += 1
            else:
                c.update(ok=ok, err=err)
                if ok:
                    c["hex"] = b.hex()
                    n_ok += 1
            f.write(json.dumps(c, separators=(",", ":")) + "\n")
    dt = time.perf_counter() - t0
    print(json.dumps(dict(meta, cases=len(cases), accepted=n_ok, binding_refused=n_skip,
                          seconds=round(dt, 2), out=a.out)))


if __name__ == "__main__":
    main()
