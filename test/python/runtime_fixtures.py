"""Records and cubins for runtime tests that need no compiler.

`fake_cubin(records)` writes the smallest ELF file the artifact loader
accepts for `records`: a section-name table and, per kernel, a
``.nv.info.<kernel>`` section whose EIATTR_KPARAM_INFO entries list the
parameter sizes the records imply (as ptxas would). It holds no code: it is
for checks that stop before the driver.
"""

import copy
import struct

from nvtma.runtime import cubin as _cubin

# A record like the compiler writes for tile_copy(memref<256x256xf16> x 2) + an i32.
MEMREF = dict(kind="memref", type="memref<256x256xf16>", element="f16", element_bits=16, shape=[256, 256],
              strides=[256, 1], offset=0)
DYN = dict(MEMREF, shape=[None, None], strides=[None, 1], type="memref<?x?xf16>")
DESC = dict(kind="descriptor", binds=0, mode="tiled", rank=2, tma_format=6, element_bits=16, interleave=0,
            swizzle=3, l2_promotion=3, oob_fill=0, element_strides=[1, 1], box_dim=[64, 64], template=None)
SCALAR = dict(kind="scalar", type="i32", bits=32)
# A memref's "tensormaps" entry: the static fields of a descriptor tensormap.replace points the tensor at.
TMAP = dict(atom="!nvtma.tma_atom<load, f16, box = [64, 64]>", mode="tiled", rank=2, tma_format=6, element_bits=16,
            interleave=0, swizzle=0, l2_promotion=2, oob_fill=0, element_strides=[1, 1], box_dim=[64, 64])


def records(params=None, launch=None, name="k"):
    params = params if params is not None else [MEMREF, dict(MEMREF), SCALAR, DESC, dict(DESC, binds=1)]
    rec = {"params": copy.deepcopy(params)}
    if launch is not None:
        rec["launch"] = launch
    return {"kernels": {name: rec}}


def template_for(desc, shape, ptr=0):
    """The template the compiler would write for a static tensor."""
    from nvtma import tensormap as tm
    bits = desc["element_bits"]
    strides, acc = [], 1
    for d in reversed(shape):
        strides.insert(0, acc)
        acc *= d
    gs = [s * bits // 8 for s in reversed(strides)][1:]
    return tm.encode_tiled(desc["tma_format"], desc["rank"], ptr, list(reversed(shape)), gs, desc["box_dim"],
                           desc["element_strides"], desc["interleave"], desc["swizzle"], desc["l2_promotion"],
                           desc["oob_fill"]).hex()


def static_records():
    """records() with every descriptor's template filled in for a 256 x 256 tensor (an AOT artifact's)."""
    recs = records()
    for p in recs["kernels"]["k"]["params"]:
        if p["kind"] == "descriptor":
            p["template"] = template_for(p, (256, 256))
    return recs


def fake_cubin(recs) -> bytes:
    sections = [(b"", b"")]  # the null section
    for name, rec in recs["kernels"].items():
        info = b""
        off = 0
        for i, size in enumerate(_cubin.expected_sizes(rec["params"])):
            align = 16 if size >= 16 else size
            off = (off + align - 1) // align * align
            payload = struct.pack("<IHHI", 0, i, off, (size << 18) | 0x1F000)
            info += bytes([0x04, 0x17]) + struct.pack("<H", len(payload)) + payload
            off += size
        sections.append((f".nv.info.{name}".encode(), info))
    names = b"\0"
    name_offs = []
    for n, _ in sections:
        if n:
            name_offs.append(len(names))
            names += n + b"\0"
        else:
            name_offs.append(0)
    name_offs.append(len(names))
    names += b".shstrtab\0"
    sections.append((b".shstrtab", names))
    body = b""
    data_offs = []
    base = 64
    for _, data in sections:
        data_offs.append(base + len(body))
        body += data
    shoff = base + len(body)
    shoff += (-shoff) % 8
    pad = shoff - base - len(body)
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, shoff)
    struct.pack_into("<HHH", header, 0x3A, 64, len(sections), len(sections) - 1)
    shdrs = b""
    for i, (n, data) in enumerate(sections):
        sh_type = 0 if i == 0 else (3 if n == b".shstrtab" else 0x70000000)
        shdrs += struct.pack("<IIQQQQIIQQ", name_offs[i], sh_type, 0, 0, data_offs[i] if i else 0, len(data),
                             0, 0, 1, 0)
    return bytes(header) + body + b"\0" * pad + shdrs


def artifacts(recs=None, **kw):
    from nvtma.runtime.artifacts import CompiledArtifacts
    recs = recs if recs is not None else records()
    return CompiledArtifacts(ir=None, ptx="// ptx", cubin=fake_cubin(recs), records=recs, arch="sm_90a", **kw)
