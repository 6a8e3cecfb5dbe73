"""A cubin's own kernel parameter table, read in pure Python.

ptxas records each kernel's parameters in the ELF section
``.nv.info.<kernel>`` as EIATTR_KPARAM_INFO attributes (what ``cuobjdump
-elf`` prints): ordinal, offset and size in the parameter constant bank.
The artifact loader compares them with kernels.json, so records that do not
describe the cubin (edited, or from another build) are refused before a
launch would pack the wrong bytes.

Every malformation is a ValueError; the caller turns it into
LaunchError(rule="artifact").
"""

from __future__ import annotations

import struct

_EIFMT_SVAL = 0x04
_EIATTR_KPARAM_INFO = 0x17
_MAX_SECTIONS = 1 << 16
# Names longer than this are skipped unread: a kernel's section is ".nv.info." + at most 1024
# characters (one 16 MiB name shared by 65535 headers was scanned and copied once per header).
_MAX_NAME = 1 << 12
# Attributes besides the parameters' in one .nv.info.<kernel> (ptxas writes a few dozen): the sections
# of 4096 kernels may all point at one 512 MiB run of attributes, each read in Python.
_MAX_OTHER_ATTRIBUTES = 1024


def sections(blob: bytes) -> dict:
    if len(blob) < 64 or blob[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    if blob[4] != 2 or blob[5] != 1:
        raise ValueError("not a little-endian 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", blob, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x3A)
    if shentsize != 64 or not 0 < shnum <= _MAX_SECTIONS or shstrndx >= shnum:
        raise ValueError(f"ELF section table: entry size {shentsize}, {shnum} sections, names in {shstrndx}")
    if shoff + shnum * 64 > len(blob):
        raise ValueError("ELF section table past the end of the file")
    headers = [struct.unpack_from("<IIQQQQ", blob, shoff + i * 64) for i in range(shnum)]
    names_off, names_size = headers[shstrndx][4], headers[shstrndx][5]
    if names_off + names_size > len(blob):
        raise ValueError("ELF section names past the end of the file")
    out = {}
    for name_off, sh_type, _flags, _addr, off, size in headers:
        if name_off >= names_size:
            raise ValueError("ELF section name out of range")
        stop = min(names_off + names_size, names_off + name_off + _MAX_NAME + 1)
        end = blob.find(b"\0", names_off + name_off, stop)
        if end < 0:
            if stop < names_off + names_size:
                continue  # longer than any name looked up
            raise ValueError("ELF section name not terminated")
        name = blob[names_off + name_off:end].decode("latin-1")
        if sh_type != 8 and off + size > len(blob):  # 8: NOBITS
            raise ValueError(f"ELF section {name} past the end of the file")
        out[name] = (off, size, sh_type)
    return out


def kernel_params(blob: bytes, kernel: str, secs: dict | None = None, max_params: int | None = None) -> list:
    """[(ordinal, offset, size)] of `kernel`'s parameters, by ordinal.
    `secs`: sections(blob), parsed once by a caller reading many kernels
    (4096 kernels each parsing 65536 section headers took minutes).
    `max_params`: more parameters than this is an error, found without
    reading the rest of the section."""
    if secs is None:
        secs = sections(blob)
    sec = secs.get(f".nv.info.{kernel}")
    if sec is None:
        raise ValueError(f"the cubin has no kernel {kernel!r}")
    off, size, _ = sec
    data = memoryview(blob)[off:off + size]  # not a copy per kernel of one shared 512 MiB section
    params = {}
    i = others = 0
    while i + 4 <= len(data):
        fmt, attr = data[i], data[i + 1]
        if fmt != _EIFMT_SVAL or attr != _EIATTR_KPARAM_INFO:
            others += 1
            if others > _MAX_OTHER_ATTRIBUTES:
                raise ValueError(f".nv.info.{kernel}: more than {_MAX_OTHER_ATTRIBUTES} attributes besides "
                                 "the parameters'")
        elif max_params is not None and len(params) >= max_params:
            raise ValueError(f".nv.info.{kernel}: more than {max_params} parameters")
        if fmt == _EIFMT_SVAL:
            n, = struct.unpack_from("<H", data, i + 2)
            payload = data[i + 4:i + 4 + n]
            if len(payload) != n:
                raise ValueError(f".nv.info.{kernel}: attribute past the end of the section")
            i += 4 + n
            if attr == _EIATTR_KPARAM_INFO:
                if n < 12:
                    raise ValueError(f".nv.info.{kernel}: a {n}-byte KPARAM_INFO")
                _index, ordinal, offset, flags = struct.unpack_from("<IHHI", payload)
                if ordinal in params:
                    raise ValueError(f".nv.info.{kernel}: parameter {ordinal} listed twice")
                params[ordinal] = (ordinal, offset, (flags >> 18) & 0x3FFF)
        else:  # NVAL / BVAL / HVAL: four bytes in all
            i += 4
    out = [params[k] for k in sorted(params)]
    if [p[0] for p in out] != list(range(len(out))):
        raise ValueError(f".nv.info.{kernel}: parameter ordinals {[p[0] for p in out]} are not 0..n-1")
    return out


def expected_sizes(params: list) -> list:
    """The sizes the lowered kernel's parameters have, from the records: a
    memref expands to 3 + 2·rank 8-byte values, a descriptor is 128 bytes."""
    sizes = []
    for p in params:
        kind = p["kind"]
        if kind == "memref":
            sizes += [8] * (3 + 2 * len(p["shape"]))
        elif kind == "descriptor":
            sizes.append(128)
        elif kind == "scalar":
            sizes.append(max(p["bits"] // 8, 1))
        else:
            sizes.append(8)
    return sizes
