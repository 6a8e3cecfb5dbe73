#!/usr/bin/env python3
"""A 2-D TMA copy (tiled load -> shared memory -> tiled store) with a chosen
L2 promotion on the load descriptor.

Without a GPU it compiles and prints what it made (PTX / SASS statistics and
the descriptor record, L2 promotion included); with one it also runs the
copy and checks it against the input. ``--aot DIR`` writes module.ptx,
module.cubin and kernels.json into DIR (load them with nvtma.runtime.load).

    python examples/tma_copy.py --l2-promotion l2_256b --rows 4096 --cols 4096
"""

import argparse
import re
import sys

import nvtma
from nvtma import kernels


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=4096)
    ap.add_argument("--box", default="64x128", help="rows x cols of one TMA box")
    ap.add_argument("--l2-promotion", default="l2_256b", choices=["none", "l2_64b", "l2_128b", "l2_256b"])
    ap.add_argument("--stages", type=int, default=4)
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--aot", metavar="DIR", help="write the AOT artifacts here")
    a = ap.parse_args(argv)
    by, bx = (int(v) for v in a.box.split("x"))
    spec = kernels.pipelined_copy(a.rows, a.cols, "f16", (by, bx), stages=a.stages, l2_load=a.l2_promotion)
    compiled = nvtma.compile(spec.ir, arch=a.arch)
    rec = compiled.descriptor_records(spec.name)
    ptx = compiled.ptx
    print(f"compiled {spec.name} for {a.arch} in {compiled.compile_seconds * 1e3:.1f} ms"
          f"{' (cache hit)' if compiled.from_cache else ''}")
    print(f"  PTX: {len(ptx.splitlines())} lines, "
          f"{len(re.findall(r'cp[.]async[.]bulk[.]tensor', ptx))} cp.async.bulk.tensor, "
          f"{ptx.count('.param .align 64 .b8')} grid-constant descriptor params")
    print(f"  cubin: {len(compiled.cubin)} bytes")
    for d in rec:
        desc = "load" if d["binds"] == 0 else "store"
        tmpl = bytes.fromhex(d["template"]) if d["template"] else None
        byte10 = f", descriptor byte 10 = 0x{tmpl[10]:02x}" if tmpl else ""
        print(f"  {desc} descriptor: box {d['box_dim'][::-1]} {d['tma_format_name']}, "
              f"l2_promotion {d['l2_promotion_name']}{byte10}")
    try:
        sass = compiled.sass()
        ops = sorted(set(re.findall(r"\b(UTMA[A-Z]+|UBLKCP|SYNCS[.A-Z]*)\b", sass)))
        print(f"  SASS: {', '.join(ops)}")
    except (FileNotFoundError, nvtma.CompileError) as e:
        print(f"  SASS: skipped ({e})")
    if a.aot:
        out = compiled.save(a.aot)
        print(f"  wrote {out}/module.ptx, module.cubin, kernels.json")
    try:
        import torch
        if not torch.cuda.is_available():
            raise ImportError
    except ImportError:
        print("no GPU (or no torch): compiled only")
        return 0
    x = torch.randn(a.rows, a.cols, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    grid = torch.cuda.get_device_properties(0).multi_processor_count * 3
    compiled.pipelined_copy(x, y, grid=(grid,), block=spec.block)
    torch.cuda.synchronize()
    ok = torch.equal(x, y)
    print(f"ran on {torch.cuda.get_device_name()}: {'correct' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
