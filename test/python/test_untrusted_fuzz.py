"""Untrusted inputs that need no GPU, fuzzed: artifact directories
(kernels.json, the cubin's ELF tables, file kinds), compile-cache entries
(blobs, entries with a valid MAC over hostile sections) and the CLIs'
arguments. Each property is bounded; then one regression test per bug a
longer campaign found (the tests named after them).

Rules: nvtma.runtime.load returns or raises LaunchError(rule="artifact");
a cache entry is used or ignored; a CLI exits with a one-line message,
never a traceback or an internal error."""

import contextlib
import copy
import hashlib
import hmac
import io
import json
import os
import struct
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import runtime_fixtures as F
from nvtma.runtime import LaunchError, load
from nvtma.runtime import cache as C
from nvtma.runtime import cubin as _cubin
from nvtma.runtime.artifacts import CompiledArtifacts, records_digest, validate_records

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


@contextlib.contextmanager
def environ(**values):
    """os.environ with `values` set (None: unset), restored after (hypothesis tests take no monkeypatch)."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        yield
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


BASE = F.artifacts(F.static_records()).file_bytes()  # kernels.json, module.ptx, module.cubin


def from_files(files):
    """CompiledArtifacts.from_files (what load() checks once the files are
    read); records it accepts must make kernels (parameter buffers, no GPU)."""
    try:
        art = CompiledArtifacts.from_files(files)
    except LaunchError as e:
        assert e.rule == "artifact", str(e)
        return str(e)
    for name in art.kernels:
        try:
            art.kernel(name)
        except LaunchError:
            pass
    return None


def elf(sections):
    """A little-endian ELF64 holding `sections` [(name, data, sh_type)], names in a last .shstrtab."""
    secs = [(b"", b"", 0)] + list(sections)
    names, offs = b"\0", []
    for n, _, _ in secs:
        offs.append(len(names) if n else 0)
        names += n + b"\0" if n else b""
    offs.append(len(names))
    names += b".shstrtab\0"
    secs.append((b".shstrtab", names, 3))
    body, data_offs = b"", []
    for _, data, _ in secs:
        data_offs.append(64 + len(body))
        body += data
    shoff = 64 + len(body) + (-(64 + len(body)) % 8)
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, shoff)
    struct.pack_into("<HHH", header, 0x3A, 64, len(secs), len(secs) - 1)
    shdrs = b"".join(struct.pack("<IIQQQQIIQQ", offs[i], t, 0, 0, data_offs[i], len(d), 0, 0, 1, 0)
                     for i, (_, d, t) in enumerate(secs))
    return bytes(header) + body + b"\0" * (shoff - 64 - len(body)) + shdrs


def with_cubin(files, blob, recs=None):
    m = json.loads(files["kernels.json"])
    m["files"]["module.cubin"] = hashlib.sha256(blob).hexdigest()
    if recs is not None:
        m["records"], m["records_sha256"] = recs, records_digest(recs)
    return dict(files, **{"module.cubin": blob, "kernels.json": json.dumps(m).encode()})


# --------------------------------------------------------------------------- artifacts: properties

def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


MANIFEST = json.loads(BASE["kernels.json"])
PATHS = [p for p in _paths(MANIFEST) if p]

odd_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20),
              st.sampled_from([0, 1, 2, -1, 1 << 63, 1 << 64, 32.0, 2.0, True, "ab" * 64, "ab" * 65, "\0", "\ud800",
                               "x" * 5000, float("nan"), float("inf"), "tiled", "memref", "descriptor"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=8)


@FUZZ
@given(path=st.sampled_from(PATHS), value=odd_values, fix_digest=st.booleans(), delete=st.booleans())
def test_kernels_json_values_anywhere(path, value, fix_digest, delete):
    m = copy.deepcopy(MANIFEST)
    parent = m
    for p in path[:-1]:
        parent = parent[p]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    if fix_digest:
        try:
            m["records_sha256"] = records_digest(m.get("records"))
        except (TypeError, ValueError, RecursionError):
            pass
    from_files(dict(BASE, **{"kernels.json": json.dumps(m).encode()}))


@FUZZ
@given(at=st.integers(0, len(BASE["kernels.json"])), insert=st.sampled_from(
    [b"\xef\xbb\xbf", b"\xff", b"\0", b"NaN", b"Infinity", b"-Infinity", b"1e999", b"1" * 5000, b"\\ud800",
     b'"format": 2, ', b'"records": {}, ', b"[" * 3000, b"}", b'"', b"\xed\xa0\x80"]), cut=st.integers(0, 40))
def test_kernels_json_text(at, insert, cut):
    """Bytes spliced into the manifest text (a BOM, NaN literals, duplicate keys, non-UTF-8, deep nesting)."""
    data = BASE["kernels.json"]
    from_files(dict(BASE, **{"kernels.json": data[:at] + insert + data[at + cut:]}))


ELF_FIELDS = [(0x28, "<Q"), (0x3A, "<H"), (0x3C, "<H"), (0x3E, "<H")]


@FUZZ
@given(data=st.data())
def test_cubin_elf_tables(data):
    """Header and section-header fields of the cubin set to anything (its
    checksum recomputed): the loader reads the parameter table itself."""
    blob = bytearray(BASE["module.cubin"])
    shoff, = struct.unpack_from("<Q", blob, 0x28)
    shnum, = struct.unpack_from("<H", blob, 0x3C)
    for _ in range(data.draw(st.integers(1, 3))):
        if data.draw(st.booleans()):
            off, fmt = data.draw(st.sampled_from(ELF_FIELDS))
        else:
            i = data.draw(st.integers(0, shnum - 1))
            field, fmt = data.draw(st.sampled_from([(0, "<I"), (4, "<I"), (24, "<Q"), (32, "<Q")]))
            off = shoff + 64 * i + field
        bits = struct.calcsize(fmt) * 8
        value = data.draw(st.one_of(st.integers(0, (1 << bits) - 1), st.sampled_from([0, 1, 64, len(blob)])))
        struct.pack_into(fmt, blob, off, value & ((1 << bits) - 1))
    if data.draw(st.booleans()):
        blob = blob[:data.draw(st.integers(0, len(blob)))]
    from_files(with_cubin(BASE, bytes(blob)))


@FUZZ
@given(attrs=st.lists(st.tuples(st.sampled_from([0x01, 0x02, 0x03, 0x04, 0xFF]), st.sampled_from([0x17, 0x0A, 0x00]),
                                st.integers(0, 0xFFFF), st.binary(max_size=24)), max_size=12))
def test_cubin_nv_info_attributes(attrs):
    """Any stream of .nv.info attributes (formats, lengths past the section, short KPARAM_INFOs)."""
    info = b"".join(bytes([f, a]) + struct.pack("<H", n) + payload for f, a, n, payload in attrs)
    recs = F.records()
    from_files(with_cubin(BASE, elf([(b".nv.info.k", info, 0x70000000)]), recs))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(["kernels.json", "module.ptx", "module.cubin"]),
       kind=st.sampled_from(["missing", "dir", "fifo", "dev-zero", "outside", "loop", "inside", "sparse", "empty"]))
def test_artifact_file_kinds(tmp_path_factory, name, kind):
    d = F.artifacts(F.static_records()).save(tmp_path_factory.mktemp("a") / "aot")
    f = d / name
    data = f.read_bytes()
    f.unlink()
    if kind == "dir":
        f.mkdir()
    elif kind == "fifo":
        os.mkfifo(f)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", f)
    elif kind == "outside":
        (d.parent / "out").write_bytes(data)
        os.symlink(d.parent / "out", f)
    elif kind == "loop":
        os.symlink(name, f)
    elif kind == "inside":
        (d / "real").write_bytes(data)
        os.symlink("real", f)
    elif kind == "sparse":
        with open(f, "wb") as fh:
            fh.truncate((512 << 20) + 1)
    elif kind == "empty":
        f.write_bytes(b"")
    result = []

    def run():
        try:
            load(d)
            result.append("ok")
        except LaunchError as e:
            result.append(e.rule)
    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(30)
    assert not th.is_alive(), f"load() hung on {kind} {name}"
    assert result == (["ok"] if kind == "inside" else ["artifact"]), (kind, name, result)


# --------------------------------------------------------------------------- cache entries: properties

MAC = b"k" * 32
GOOD = C._pack(BASE, MAC)


@FUZZ
@given(data=st.data())
def test_cache_entry_blobs(data):
    """_unpack over cut, flipped or extended entries, with the MAC recomputed
    (a hostile layout our own key signed) or not: a dict of bytes or None."""
    body = bytearray(GOOD[:-32])
    for _ in range(data.draw(st.integers(1, 3))):
        op = data.draw(st.integers(0, 3))
        if op == 0 and body:
            body = body[:data.draw(st.integers(0, len(body)))]
        elif op == 1 and body:
            body[data.draw(st.integers(0, len(body) - 1))] = data.draw(st.integers(0, 255))
        elif op == 2 and len(body) >= 12:
            struct.pack_into("<I", body, 8, data.draw(st.integers(0, (1 << 32) - 1)))
        else:
            body += data.draw(st.binary(max_size=32))
    blob = bytes(body) + (hmac.new(MAC, bytes(body), hashlib.sha256).digest() if data.draw(st.booleans())
                          else GOOD[-32:])
    out = C._unpack(blob, MAC)
    assert out is None or all(isinstance(k, str) and isinstance(v, bytes) for k, v in out.items())


json_values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text()),
                           lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                   st.dictionaries(st.text(), inner, max_size=3)), max_leaves=6)


@FUZZ
@given(manifest=st.one_of(json_values, st.fixed_dictionaries(
    {"arch": json_values, "records": st.fixed_dictionaries({"kernels": json_values})})))
def test_cache_list_over_signed_hostile_entries(tmp_path_factory, manifest):
    """`nvtma-cache list` over an entry our own key signed whose kernels.json is anything."""
    with environ(NVTMA_CACHE_DIR=str(tmp_path_factory.mktemp("c") / "cache"), NVTMA_CACHE=None,
                 NVTMA_CACHE_SIZE=None):
        d = C.directory()
        assert C.store(d, "ab" * 32, {"kernels.json": json.dumps(manifest).encode()})
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert C.main(["list"]) == 0
    assert len(out.getvalue().splitlines()) == 2, out.getvalue()  # the entry's line, the total


# --------------------------------------------------------------------------- CLIs: properties

def run_tool(main, argv):
    """(status, stderr) of a console script's main, as sys.exit would see them."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code
    return rc, err.getvalue()


def assert_clean_failure(rc, err, prog):
    assert rc not in (0, None), err
    assert "Traceback" not in err and "internal error" not in err, err
    # one line naming the tool (argparse's usage before it; MLIR's diagnostics after a compile error's)
    assert any(ln.startswith(prog) for ln in err.splitlines()), err


cli_text = st.one_of(st.text(max_size=40), st.sampled_from(
    ["", "-", "00" * 128, "00" * 127, "0x" + "ff" * 128, "zz", "/dev/zero", "/", "é" * 10, "1" * 5000, "-1",
     "{}", "[]", "null", "[" * 5000, '{"mode": 5}', '{"dtype": "float16"}', '{"sm": 90}', "\udcff"]))


@FUZZ
@given(cmd=st.sampled_from(["decode", "encode", "bogus"]), arg=cli_text,
       extra=st.lists(st.sampled_from(["--sm", "90", "-1", "x", "1" * 5000, "--out", "/", "-h"]), max_size=3))
def test_tensormap_cli_argv(cmd, arg, extra):
    from nvtma._tools import tensormap_main
    if "-h" in extra or "--help" == arg:
        return
    argv = [cmd, arg] + extra
    if arg == "-":
        return  # stdin: test_cli_input_reads_are_bounded
    rc, err = run_tool(tensormap_main, argv)
    if rc not in (0, None):
        assert_clean_failure(rc, err, "nvtma-tensormap")


def _have_compiler():
    try:
        import nvtma._mlir_libs._nvtmaDialects  # noqa: F401
        return True
    except Exception:
        return False


@pytest.mark.skipif(not _have_compiler(), reason="needs the MLIR extension")
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(arch=st.sampled_from(["sm_90a", "sm_", "sm_x", "", "90", "sm_9999", "sm_90a\n", "é", "compute_90", "sm_-1",
                             "sm_1" + "0" * 40, "sm_90a sm_80"]),
       opt=st.sampled_from([None, "0", "3", "4", "-1", "99999999999999999999"]),
       ptx=st.sampled_from([None, "80", "0", "-1", "1" * 30, "999"]),
       src=st.sampled_from(["good", "empty", "garbage", "dir", "missing"]))
def test_compile_cli_argv(tmp_path_factory, arch, opt, ptx, src):
    from nvtma import kernels as K
    from nvtma._tools import compile_main
    t = tmp_path_factory.mktemp("c")
    path = t / "k.mlir"
    if src == "good":
        path.write_text(K.tile_copy((256, 256), "f16", (64, 64)).ir)
    elif src == "empty":
        path.write_text("")
    elif src == "garbage":
        path.write_bytes(b"module { \xff")
    elif src == "dir":
        path.mkdir()
    argv = [str(path), "-o", str(t / "out"), "--arch", arch, "--no-cubin"]
    argv += ["-O", opt] if opt is not None else []
    argv += ["--ptx-version", ptx] if ptx is not None else []
    with environ(NVTMA_CACHE="0"):
        rc, err = run_tool(compile_main, argv)
    if rc not in (0, None):
        assert_clean_failure(rc, err, "nvtma-compile")


# --------------------------------------------------------------------------- regressions

def test_cubin_sections_parsed_once_for_many_kernels():
    """4096 kernels in a cubin of 65000 sections: the section table was
    parsed once per kernel (4096 x 65000 headers: 208 s); now once."""
    n = 4096
    recs = {"kernels": {f"k{i}": {"params": []} for i in range(n)}}
    blob = elf([(f".nv.info.k{i}".encode(), b"", 0x70000000) for i in range(n)] + [(b"x", b"", 1)] * (65000 - n))
    t0 = time.time()
    validate_records(recs, blob)
    assert time.time() - t0 < 20


def test_cubin_long_section_names_are_not_scanned_per_header():
    """65536 section headers naming one 16 MiB string: each was scanned and
    copied (a terabyte); names past 4 KiB are skipped, a kernel's is found."""
    name_table = b"\0.nv.info.k\0" + b"A" * (16 << 20) + b"\0"  # names at 1 and 12
    n, names_at = 65535, 64
    shoff = names_at + len(name_table) + (-(names_at + len(name_table)) % 8)
    headers = [struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
               struct.pack("<IIQQQQIIQQ", 1, 0x70000000, 0, 0, names_at, 0, 0, 0, 1, 0)]
    headers += [struct.pack("<IIQQQQIIQQ", 12, 1, 0, 0, names_at, 0, 0, 0, 1, 0)] * (n - 3)
    headers.append(struct.pack("<IIQQQQIIQQ", 0, 3, 0, 0, names_at, len(name_table), 0, 0, 1, 0))
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, shoff)
    struct.pack_into("<HHH", header, 0x3A, 64, n, n - 1)
    blob = bytes(header) + name_table + b"\0" * (shoff - names_at - len(name_table)) + b"".join(headers)
    t0 = time.time()
    secs = _cubin.sections(blob)
    assert time.time() - t0 < 10
    assert ".nv.info.k" in secs and not any(k.startswith("AAAA") for k in secs)
    assert _cubin.kernel_params(blob, "k") == []


def test_cubin_attribute_flood_is_refused():
    """A .nv.info section of 10 million 4-byte attributes (a 512 MiB cubin
    could hold 128 million, and 4096 kernels' sections could all point at
    them) was read to the end, per kernel; more than 1024 besides the
    parameters' is refused, and more parameters than the records describe."""
    flood = elf([(b".nv.info.k", b"\x01\x00\x00\x00" * 10_000_000, 0x70000000)])
    t0 = time.time()
    with pytest.raises(LaunchError, match="more than 1024 attributes besides the parameters'") as e:
        validate_records({"kernels": {"k": {"params": []}}}, flood)
    assert e.value.rule == "artifact" and time.time() - t0 < 5
    kparam = b"\x04\x17\x0c\x00" + struct.pack("<IHHI", 0, 0, 0, 4 << 18)
    with pytest.raises(LaunchError, match=r"\.nv\.info\.k: more than 0 parameters") as e:
        validate_records({"kernels": {"k": {"params": []}}}, elf([(b".nv.info.k", kparam, 0x70000000)]))
    assert e.value.rule == "artifact"
    # 4096 kernels sharing one section of 1024 attributes: each reads at most that much
    n = 4096
    blob = bytearray(elf([(f".nv.info.k{i}".encode(), b"", 0x70000000) for i in range(n)]
                         + [(b"shared", b"\x01\x00\x00\x00" * 1024, 1)]))
    shoff, = struct.unpack_from("<Q", blob, 0x28)
    off, size = struct.unpack_from("<QQ", blob, shoff + (n + 1) * 64 + 24)
    for i in range(1, n + 1):
        struct.pack_into("<QQ", blob, shoff + i * 64 + 24, off, size)
    t0 = time.time()
    validate_records({"kernels": {f"k{i}": {"params": []} for i in range(n)}}, bytes(blob))
    assert time.time() - t0 < 20


@pytest.mark.parametrize("bits", [32.0, 8.0, 1.0])
def test_scalar_bits_float_is_refused(bits):
    """bits 32.0 == 32 passed the schema; the parameter sizes became floats and
    kernel() raised TypeError (bytearray(float))."""
    recs = F.records()
    recs["kernels"]["k"]["params"][2]["bits"] = bits
    with pytest.raises(LaunchError, match=rf"params\[2\]\.bits is {bits}, expected 1, 8, 16, 32 or 64") as e:
        validate_records(recs)
    assert e.value.rule == "artifact"


@pytest.mark.parametrize("manifest", [
    {"arch": [1], "records": {"kernels": {"k": {}}}},          # TypeError: list.__format__
    {"arch": None, "records": {"kernels": {"k": {}}}},         # TypeError: NoneType.__format__
    "deep",                                                      # RecursionError
    {"arch": "sm_90a\ud800", "records": {"kernels": {"k\ud800": {}}}},  # UnicodeEncodeError on print
    {"arch": "sm_90a", "records": {"kernels": {"a\nb": {}}}},  # a second line
])
def test_cache_list_of_signed_entry_with_odd_manifest(tmp_path, monkeypatch, capfd, manifest):
    """An entry with a valid MAC whose kernels.json is nested 100000 deep, has
    a non-string arch or names with a lone surrogate ended `nvtma-cache list`
    in a traceback; each entry is one line, names escaped."""
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("NVTMA_CACHE", raising=False)
    d = C.directory()
    raw = b"[" * 100000 if manifest == "deep" else json.dumps(manifest).encode()
    C.store(d, "ab" * 32, {"kernels.json": raw})
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", "import sys; from nvtma.runtime.cache import main; sys.exit(main())",
                        "list"], capture_output=True, text=True, env={**os.environ, "LC_ALL": "C.UTF-8"}, timeout=60)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and lines[1].startswith("1 entries"), r.stdout
    if manifest != "deep" and "\ud800" in str(manifest["arch"]):
        assert "k\\ud800" in lines[0] and "sm_90a\\ud800" in lines[0]
    if manifest != "deep" and "a\nb" in manifest["records"]["kernels"]:
        assert "a\\nb" in lines[0]


@pytest.mark.parametrize("value", ["\ud800", 5, [1], "ab"])
def test_build_id_memo_with_a_value_that_is_no_digest(tmp_path, monkeypatch, value):
    """build-ids.json holding "\ud800" for a binary was a UnicodeEncodeError
    from every compile (other non-digests were hashed in as they were); a
    value that is no digest is recomputed."""
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("NVTMA_CACHE", raising=False)
    d = C.directory()
    monkeypatch.setattr(C, "_build_id", None)
    want = C.build_id(d)
    memo = json.loads((d / "build-ids.json").read_text())
    if not memo:
        pytest.skip("no extension binaries to hash")
    (d / "build-ids.json").write_text(json.dumps({k: value for k in memo}))
    os.chmod(d / "build-ids.json", 0o600)
    monkeypatch.setattr(C, "_build_id", None)
    assert C.build_id(d) == want


def test_tensormap_cli_json_with_a_huge_integer():
    """An integer of more than 4300 digits in the encode JSON: json.loads
    raises a plain ValueError, which was an internal error."""
    from nvtma._tools import tensormap_main
    spec = '{"dtype": "float16", "rank": 1, "global_address": 0, "global_dim": [%s], "global_strides": [], ' \
           '"box_dim": [64], "element_strides": [1]}' % ("1" * 5000)
    rc, err = run_tool(tensormap_main, ["encode", spec])
    assert rc == 2 and err.strip() == "nvtma-tensormap: invalid JSON: a number of more than 4300 digits", err


def test_cli_input_reads_are_bounded(tmp_path, monkeypatch):
    """`nvtma-tensormap encode -` and `nvtma-compile` read stdin or their input
    file to the end: /dev/zero grew until memory ran out; now refused past a
    bound, naming the input (and decode reads no more of a file than hex of a
    descriptor could be)."""
    import subprocess
    import sys
    code = "import sys; from nvtma._tools import tensormap_main as m; sys.exit(m())"
    with open("/dev/zero", "rb") as zero:
        r = subprocess.run([sys.executable, "-c", code, "encode", "-"], stdin=zero, capture_output=True, text=True,
                           timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip() == "nvtma-tensormap: error: more than 1048576 characters in 'stdin'"
    from nvtma import _tools
    huge = tmp_path / "huge.hex"  # sparse: a regular file, decode read it whole (and decoded it as text)
    with open(huge, "wb") as f:
        f.truncate(1 << 30)
    t0 = time.time()
    rc, err = run_tool(_tools.tensormap_main, ["decode", str(huge)])
    assert rc == 1 and "descriptor-layout" in err and time.time() - t0 < 10, err
    monkeypatch.setattr(_tools, "_MAX_IR", 1 << 16)
    monkeypatch.setenv("NVTMA_CACHE", "0")
    rc, err = run_tool(_tools.compile_main, ["/dev/zero", "-o", str(tmp_path / "out")])
    assert rc == 1 and err.strip() == "nvtma-compile: error: more than 65536 characters in '/dev/zero'", err


@pytest.mark.parametrize("line", ["file\t/a\0b\tx", "file\tLOOP\tx"])
def test_a_cache_entry_s_link_line_naming_no_file_is_not_used(tmp_path, line):
    """A cache entry's link lines (compiler.link_stamp's) are resolved again
    before the entry is used: a NUL in the path raised ValueError and a
    symlink loop RuntimeError (Python 3.11) out of nvtma.compile; now the
    entry is not current (rebuilt), and link_stamp's error is a CompileError."""
    from nvtma import compiler
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    line = line.replace("LOOP", str(loop))
    assert compiler._links_current(line.encode(), "sm_90a") is False
    with pytest.raises(compiler.CompileError, match="the bitcode a GPU module links"):
        compiler.link_stamp("file", line.split("\t")[1], "sm_90a")
