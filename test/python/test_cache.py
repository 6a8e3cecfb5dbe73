"""The compile cache: hits, rebuilds of anything wrong, trust on shared
machines (a second user), key contents, size bound, environment, CLI."""

import json
import multiprocessing
import os
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from nvtma.runtime import cache as C

HAVE_COMPILER = True
try:
    import nvtma._mlir_libs._nvtmaDialects  # noqa: F401
except Exception:
    HAVE_COMPILER = False
needs_compiler = pytest.mark.skipif(not HAVE_COMPILER, reason="needs the MLIR extension")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("NVTMA_CACHE", raising=False)
    monkeypatch.delenv("NVTMA_CACHE_SIZE", raising=False)


def small_ir():
    from nvtma import kernels as K
    return K.tile_copy((256, 256), "f16", (64, 64)).ir


def entry_files(tmp_path):
    return sorted((tmp_path / "cache").rglob("*" + C.ENTRY_SUFFIX))


# --------------------------------------------------------------------------- hits and rebuilds

@needs_compiler
def test_hit_then_truncated_entry_rebuilt(tmp_path):
    import nvtma
    ir = small_ir()
    a = nvtma.compile(ir)
    assert not a.from_cache
    b = nvtma.compile(ir)
    assert b.from_cache and b.cubin == a.cubin and b.records == a.records
    (e,) = entry_files(tmp_path)
    e.write_bytes(e.read_bytes()[:100])
    c = nvtma.compile(ir)
    assert not c.from_cache and c.cubin == a.cubin
    assert nvtma.compile(ir).from_cache
    assert not nvtma.compile(ir, opt_level=2).from_cache   # options are in the key


@needs_compiler
def test_own_target_level_keyed_apart():
    """A module with its own #nvvm.target: opt_level None means its level (cached as asked), another level is
    refused, never served from that entry."""
    import nvtma
    ir = small_ir().replace("gpu.module @kernels {",
                            'gpu.module @kernels [#nvvm.target<O = 1, chip = "sm_90a", features = "+ptx86">] {', 1)
    assert "nvvm.target<O = 1" in ir
    a = nvtma.compile(ir)
    assert not a.from_cache and nvtma.compile(ir).from_cache
    with pytest.raises(nvtma.CompileError, match="asks for O = 1"):
        nvtma.compile(ir, opt_level=3)


@needs_compiler
@pytest.mark.parametrize("manifest", [b"[]", b"null", b"[" * 50000, b'{"format": 2}', b"{}",
                                      b'{"format": 2, "arch": "sm_90a", "records": [], "files": {}}',
                                      "records-empty"])
def test_valid_but_wrong_entries_are_rebuilt(tmp_path, manifest):
    """Entries that pass the HMAC (written with this user's key) but hold
    nonsense are rebuilt, never fatal."""
    import nvtma
    ir = small_ir()
    good = nvtma.compile(ir)
    (e,) = entry_files(tmp_path)
    key = e.stem
    files = dict(good.file_bytes())
    if manifest == "records-empty":
        m = json.loads(files["kernels.json"])
        m["records"] = {"kernels": []}
        files["kernels.json"] = json.dumps(m).encode()
    else:
        files["kernels.json"] = manifest
    assert C.store(C.directory(), key, files)
    again = nvtma.compile(ir)
    assert not again.from_cache and again.cubin == good.cubin
    assert nvtma.compile(ir).from_cache


def test_store_and_load_need_no_compiler(tmp_path):
    d = C.directory()
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert C.store(d, "ab" * 32, {"kernels.json": b"{}", "module.ptx": b"x"})
    assert C.load(d, "ab" * 32) == {"kernels.json": b"{}", "module.ptx": b"x"}
    (path,) = entry_files(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    blob = bytearray(path.read_bytes())
    blob[20] ^= 1   # one flipped bit
    path.write_bytes(bytes(blob))
    assert C.load(d, "ab" * 32) is None
    # a symlinked entry is not followed
    other = tmp_path / "elsewhere"
    assert C.store(d, "cd" * 32, {"x": b"1"})
    os.replace(C.entry_path(d, "cd" * 32), other)
    os.symlink(other, C.entry_path(d, "cd" * 32))
    assert C.load(d, "cd" * 32) is None


def test_entry_from_another_key_is_refused(tmp_path, monkeypatch):
    """Another user's cache (another HMAC key) cannot feed this one."""
    d = C.directory()
    assert C.store(d, "ef" * 32, {"x": b"1"})
    blob = C.entry_path(d, "ef" * 32).read_bytes()
    (d / ".key").write_bytes(os.urandom(32))
    assert C.load(d, "ef" * 32) is None
    assert blob  # the entry itself was untouched


# --------------------------------------------------------------------------- trust

def test_group_or_world_writable_directory_is_refused(tmp_path, monkeypatch):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o777)
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(d))
    with pytest.warns(C.CacheWarning, match="writable by group and others"):
        assert C.directory() is None
    os.chmod(d, 0o770)
    with pytest.warns(C.CacheWarning, match="writable by group"):
        assert C.directory() is None
    os.chmod(d, 0o700)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert C.directory() == d


def _unused_uid():
    import pwd
    for uid in range(54321, 54421):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    return None


def _as_other_user(uid, fn):
    """Runs fn() in a forked child with another uid/gid; its exit status."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            fn()
            os._exit(0)
        except BaseException as e:
            os.write(2, f"as uid {uid}: {type(e).__name__}: {e}\n".encode())
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _two_user_setup():
    if not hasattr(os, "fork") or os.geteuid() != 0:
        pytest.skip("a second user needs root (to switch uid in a forked child)")
    uid = _unused_uid()
    if uid is None:
        pytest.skip("no unused uid")
    return uid


@pytest.fixture
def open_root(monkeypatch):
    """A directory the second user can traverse (pytest's tmp root is 0700)."""
    import shutil
    import tempfile
    d = Path(tempfile.mkdtemp(prefix="nvtma-two-users-"))
    os.chmod(d, 0o711)
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(d / "cache"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@needs_compiler
def test_two_users_planted_entry_is_refused_and_rebuilt(open_root, monkeypatch):
    """Another uid plants an entry where the victim's cache would find it;
    the victim refuses it (owner, HMAC) and rebuilds. Also: a cache directory
    owned by the other user is refused outright."""
    import nvtma
    uid = _two_user_setup()
    ir = small_ir()
    good = nvtma.compile(ir)
    (e,) = entry_files(open_root)
    sub = e.parent
    # the attacker owns the subdirectory (as if it had been left writable)
    os.chown(sub, uid, uid)
    os.chmod(sub, 0o777)
    os.chmod(open_root / "cache", 0o711)
    evil = dict(good.file_bytes())
    evil["module.cubin"] = b"\x7fELF attacker"

    def plant():
        os.unlink(e)
        data = C._pack(evil, os.urandom(32))   # no access to the victim's key
        with open(e, "wb") as f:
            f.write(data)
    assert _as_other_user(uid, plant) == 0
    assert os.stat(e).st_uid == uid
    again = nvtma.compile(ir)
    assert not again.from_cache and again.cubin == good.cubin
    # the attacker's own directory as the cache: refused with a warning
    theirs = open_root / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, uid, uid)
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(theirs))
    with pytest.warns(C.CacheWarning, match=f"owned by uid {uid}"):
        c = nvtma.compile(ir)
    assert not c.from_cache


def test_two_users_forged_entry_in_a_shared_dir(open_root, monkeypatch):
    """No compiler needed: the attacker writes a well-formed entry (own key)
    into a world-writable directory; the victim neither uses the directory
    nor accepts the entry."""
    uid = _two_user_setup()
    shared = open_root / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    key = "12" * 32

    def plant():
        (shared / "12").mkdir()
        with open(shared / "12" / (key + C.ENTRY_SUFFIX), "wb") as f:
            f.write(C._pack({"kernels.json": b"{}"}, os.urandom(32)))
    assert _as_other_user(uid, plant) == 0
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(shared))
    with pytest.warns(C.CacheWarning):
        assert C.directory() is None
    assert C.load(shared, key) is None   # and even if asked directly: not ours


# --------------------------------------------------------------------------- environment

@pytest.mark.parametrize("value,on", [("0", False), ("false", False), ("False", False), ("OFF", False),
                                      ("No", False), (" no ", False), ("1", True), ("TRUE", True),
                                      ("on", True), ("Yes", True), ("", True)])
def test_boolean_values(monkeypatch, value, on):
    monkeypatch.setenv("NVTMA_CACHE", value)
    assert (C.configured_dir() is not None) == on


def test_unknown_boolean_warns(monkeypatch):
    monkeypatch.setenv("NVTMA_CACHE", "maybe")
    with pytest.warns(C.CacheWarning, match="not a boolean"):
        assert C.configured_dir() is not None


def test_empty_cache_dir_means_the_default(monkeypatch, tmp_path):
    monkeypatch.setenv("NVTMA_CACHE_DIR", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert C.configured_dir() == tmp_path / "home" / ".cache" / "nvtma"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert C.configured_dir() == tmp_path / "xdg" / "nvtma"


@needs_compiler
def test_cache_off(monkeypatch):
    import nvtma
    monkeypatch.setenv("NVTMA_CACHE", "Off")
    ir = small_ir()
    assert not nvtma.compile(ir).from_cache
    assert not nvtma.compile(ir).from_cache


# --------------------------------------------------------------------------- key, size, CLI

def test_key_covers_build_tools_target_and_options(monkeypatch):
    base = C.compile_key("ir", "sm_90a", "+ptx86", 3, "cubin")
    assert base == C.compile_key("ir", "sm_90a", "+ptx86", 3, "cubin")
    for args in (("ir2", "sm_90a", "+ptx86", 3, "cubin"), ("ir", "sm_100a", "+ptx86", 3, "cubin"),
                 ("ir", "sm_90a", "+ptx87", 3, "cubin"), ("ir", "sm_90a", "+ptx86", 2, "cubin"),
                 ("ir", "sm_90a", "+ptx86", 3, "ptx")):
        assert C.compile_key(*args) != base
    monkeypatch.setattr(C, "_build_id", "another build")
    assert C.compile_key("ir", "sm_90a", "+ptx86", 3, "cubin") != base
    monkeypatch.setattr(C, "_tool_id", "nvjitlink=99.0")
    assert C.compile_key("ir", "sm_90a", "+ptx86", 3, "cubin") != base


def test_build_id_is_memoized_and_content_based(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "_build_id", None)
    d = C.directory()
    a = C.build_id(d)
    assert (d / "build-ids.json").exists() or not list(Path(C.__file__).parent.parent.glob("_lib/*.so"))
    monkeypatch.setattr(C, "_build_id", None)
    assert C.build_id(d) == a
    assert "nvjitlink" in C.tool_id() or "ptxas" in C.tool_id()


def test_lru_eviction(monkeypatch):
    d = C.directory()
    for i in range(6):
        assert C.store(d, f"{i:02d}" * 32, {"blob": bytes(1000)})
        os.utime(C.entry_path(d, f"{i:02d}" * 32), (1000 + i, 1000 + i))
    C.load(d, "00" * 32)  # touch the oldest: now the most recent
    assert C.evict(d, 3 * 1200) == 3
    left = sorted(p.stem[:2] for p, _, _ in C.entries(d))
    assert left == ["00", "04", "05"]
    monkeypatch.setenv("NVTMA_CACHE_SIZE", "2K")
    assert C.size_limit() == 2048
    C.store(d, "99" * 32, {"blob": bytes(1000)})
    assert len(C.entries(d)) <= 2


def test_cli(tmp_path, capsys):
    d = C.directory()
    C.store(d, "ab" * 32, {"kernels.json": json.dumps({"arch": "sm_90a", "records": {"kernels": {"k": {}}}}).encode()})
    assert C.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "sm_90a" in out and "k" in out and "1 entries" in out
    assert C.main(["info"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["used"] and info["entries"] == 1
    assert C.main(["clear"]) == 0
    assert "removed 1" in capsys.readouterr().out
    assert C.entries(d) == []


def test_cli_console_script_is_declared():
    root = Path(__file__).resolve().parents[2]
    text = (root / "pyproject.toml").read_text()
    assert 'nvtma-cache = "nvtma.runtime.cache:main"' in text


# --------------------------------------------------------------------------- concurrency

def _compile_in_child(args):
    cache, ir = args
    os.environ["NVTMA_CACHE_DIR"] = cache
    import nvtma as n
    c = n.compile(ir)
    return len(c.cubin), c.records == json.loads(json.dumps(c.records))


@needs_compiler
def test_concurrent_compiles_converge_on_one_entry(tmp_path):
    import nvtma
    from nvtma import kernels as K
    cache = str(tmp_path / "shared-cache")
    ir = K.tile_copy((512, 512), "bf16", (64, 64)).ir
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        results = pool.map(_compile_in_child, [(cache, ir)] * 8)
    assert len({r[0] for r in results}) == 1 and all(r[1] for r in results)
    assert len(list(Path(cache).rglob("*" + C.ENTRY_SUFFIX))) == 1
    assert not list(Path(cache).rglob("*.tmp*"))
    os.environ["NVTMA_CACHE_DIR"] = cache
    assert nvtma.compile(ir).from_cache


@needs_compiler
def test_aot_round_trip_without_mlir(tmp_path):
    import nvtma
    from nvtma import kernels as K
    c = nvtma.compile(K.tile_copy((300, 500), "f32", (32, 32), swizzle="swizzle_128b").ir)
    out = c.save(tmp_path / "aot")
    assert {p.name for p in out.iterdir()} == {"module.ptx", "module.cubin", "module.mlir", "kernels.json"}
    code = ("import sys, json; import nvtma.runtime as r; m = r.load(sys.argv[1]); "
            "print(json.dumps([list(m.kernels), len(m.cubin)])); "
            "print(any(k.startswith('nvtma._mlir_libs') for k in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    names, size = json.loads(res.stdout.splitlines()[0])
    assert names == ["tile_copy"] and size == len(c.cubin)
    assert res.stdout.splitlines()[1] == "False", "the runtime imported MLIR"


@needs_compiler
def test_compile_options_are_checked_before_mlir():
    import nvtma
    ir = small_ir()
    for kw in (dict(opt_level=4), dict(opt_level=99), dict(opt_level="3"), dict(opt_level=True),
               dict(ptx_version="86"), dict(ptx_version=10 ** 6), dict(arch=90)):
        with pytest.raises(nvtma.CompileError):
            nvtma.compile(ir, cache=False, **kw)


def test_the_tool_id_names_the_ptxas_a_failed_nvjitlink_falls_back_to(tmp_path, monkeypatch):
    """(audit) With nvJitLink importable the compile key named it alone, though ptx_to_cubin falls back to
    ptxas ($PTXAS first) where nvJitLink refuses a module: those cubins stayed cached across ptxas changes."""
    pytest.importorskip("cuda.bindings.nvjitlink")
    from nvtma.runtime import cache as C
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\n")
    monkeypatch.setenv("PTXAS", str(fake))
    monkeypatch.setattr(C, "_tool_id", None)
    first = C.tool_id()
    assert f"ptxas-file={fake}:" in first
    fake.write_text("#!/bin/sh\necho other\n")
    monkeypatch.setattr(C, "_tool_id", None)
    assert C.tool_id() != first


def test_a_corrupt_build_id_memo_is_rebuilt(tmp_path, monkeypatch):
    """'[' * 200000 in build-ids.json was a RecursionError from every compile."""
    d = C.directory()
    (d / "build-ids.json").write_text("[" * 200000)
    os.chmod(d / "build-ids.json", 0o600)
    monkeypatch.setattr(C, "_build_id", None)
    assert C.build_id(d)


def test_a_cache_dir_in_an_unknown_users_home_is_refused(monkeypatch, tmp_path):
    """NVTMA_CACHE_DIR=~nosuchuser/c was a RuntimeError from expanduser in every compile and in nvtma-cache."""
    monkeypatch.setenv("NVTMA_CACHE_DIR", "~nvtma-no-such-user/c")
    monkeypatch.chdir(tmp_path)
    with pytest.warns(C.CacheWarning, match="a path in the home of an unknown user"):
        assert C.directory() is None
    assert not any(tmp_path.iterdir())  # nothing made under the working directory
    r = subprocess.run([sys.executable, "-m", "nvtma.runtime.cache", "info"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONWARNINGS="ignore"))
    assert r.returncode == 1 and "unknown user (~nvtma-no-such-user)" in r.stderr, r.stderr
