"""AOT artifacts are untrusted input: schema, checksums, file kinds, atomic
save, modes. Every failure is LaunchError(rule="artifact"); no GPU needed."""

import json
import os
import stat
import subprocess
import sys
import threading

import pytest

import runtime_fixtures as F
from helpers import FakeCudaArray
from nvtma.runtime import LaunchError, load
from nvtma.runtime.artifacts import CompiledArtifacts, validate_records


def saved(tmp_path, recs=None, name="aot"):
    return F.artifacts(recs).save(tmp_path / name)


def edit_manifest(d, fn, fix_checksum=True):
    m = json.loads((d / "kernels.json").read_text())
    fn(m)
    if fix_checksum:
        from nvtma.runtime.artifacts import records_digest
        m["records_sha256"] = records_digest(m["records"])
    (d / "kernels.json").write_text(json.dumps(m))


def artifact_error(d):
    with pytest.raises(LaunchError) as e:
        load(d)
    assert e.value.rule == "artifact", str(e.value)
    return str(e.value)


def test_round_trip(tmp_path):
    d = saved(tmp_path, F.static_records())
    art = load(d)
    assert list(art.kernels) == ["k"] and art.cubin[:4] == b"\x7fELF"
    assert sorted(p.name for p in d.iterdir()) == ["kernels.json", "module.cubin", "module.ptx"]


@pytest.mark.parametrize("length", [0, 64, 127, 129, 200, 1 << 20])
def test_template_must_be_exactly_128_bytes(tmp_path, length):
    """A longer template once overflowed the 128-byte parameter slot (heap
    overflow before any driver call); a shorter one gave a truncated descriptor."""
    d = saved(tmp_path, F.static_records())

    def fn(m):
        m["records"]["kernels"]["k"]["params"][3]["template"] = "ab" * length
    edit_manifest(d, fn)
    assert "template" in artifact_error(d)


def test_packing_layer_refuses_wrong_sized_descriptors():
    """Even records that skipped validation cannot write past a slot."""
    recs = F.static_records()
    recs["kernels"]["k"]["params"][3]["template"] = "ab" * 200
    with pytest.raises(LaunchError) as e:
        CompiledArtifacts(ir=None, ptx="", cubin=None, records=recs, arch="sm_90a", validate=False).kernel("k")
    assert e.value.rule == "artifact"
    k = F.artifacts(F.records()).kernel("k")
    with pytest.raises(LaunchError):
        k._buffer.write(3, b"\0" * 200)


def test_template_must_decode_to_its_record(tmp_path):
    recs = F.static_records()
    recs["kernels"]["k"]["params"][3]["l2_promotion"] = 1  # the template says 3
    with pytest.raises(LaunchError, match="l2_promotion"):
        validate_records(recs)
    recs = F.static_records()
    t = bytearray(bytes.fromhex(recs["kernels"]["k"]["params"][3]["template"]))
    t[20:28] = (1234).to_bytes(8, "little")  # another global dim
    recs["kernels"]["k"]["params"][3]["template"] = t.hex()
    with pytest.raises(LaunchError):
        validate_records(recs)


@pytest.mark.parametrize("binds", [-1, 2, 5, "0", None, 1.0, True])
def test_binds_in_range(binds):
    recs = F.records()
    recs["kernels"]["k"]["params"][3]["binds"] = binds
    with pytest.raises(LaunchError, match="binds") as e:
        validate_records(recs)
    assert e.value.rule == "artifact"


@pytest.mark.parametrize("mutate", [
    lambda r: r.update(kernels=[]),
    lambda r: r.update(kernels=None),
    lambda r: r["kernels"].update(k=[]),
    lambda r: r["kernels"]["k"].update(params={}),
    lambda r: r["kernels"]["k"]["params"][0].update(shape=[-1, 256]),
    lambda r: r["kernels"]["k"]["params"][0].update(shape=[256] * 40),
    lambda r: r["kernels"]["k"]["params"][0].update(strides=[256]),
    lambda r: r["kernels"]["k"]["params"][0].update(align=24),
    lambda r: r["kernels"]["k"]["params"][0].update(align=0),
    lambda r: r["kernels"]["k"]["params"][0].update(align="16"),
    lambda r: r["kernels"]["k"]["params"][0].update(align=True),
    lambda r: r["kernels"]["k"]["params"][0].update(align=1 << 40),
    lambda r: r["kernels"]["k"]["params"][0].update(tensormaps=dict(F.TMAP)),
    lambda r: r["kernels"]["k"]["params"][0].update(tensormaps=[]),
    lambda r: r["kernels"]["k"]["params"][0].update(tensormaps=[F.TMAP] * 65),
    lambda r: r["kernels"]["k"]["params"][0].update(tensormaps=["tiled"]),
    lambda r: r["kernels"]["k"]["params"][0].update(tensormaps=[dict(F.TMAP, rank=3, box_dim=[64, 64, 1],
                                                                      element_strides=[1, 1, 1])]),
    lambda r: r["kernels"]["k"]["params"][0].update(tensormaps=[dict(F.TMAP, mode="tile")]),
    lambda r: r["kernels"]["k"]["params"][0].update(tensormaps=[dict(F.TMAP, box_dim=[64, 512])]),
    lambda r: r["kernels"]["k"]["params"][0].update(tensormaps=[dict(F.TMAP, tma_format=16)]),
    lambda r: r["kernels"]["k"]["params"][0].update(tensormaps=[F.TMAP, dict(F.TMAP, interleave=None)]),
    lambda r: r["kernels"]["k"]["params"][2].update(bits=7),
    lambda r: r["kernels"]["k"]["params"][2].update(signed="yes"),
    lambda r: r["kernels"]["k"]["params"][2].update(kind="tensor"),
    lambda r: r["kernels"]["k"]["params"][3].update(rank=3),
    lambda r: r["kernels"]["k"]["params"][3].update(box_dim=[64, 512]),
    lambda r: r["kernels"]["k"]["params"][3].update(swizzle=9),
    lambda r: r["kernels"]["k"]["params"][3].update(element_strides=[1]),
    lambda r: r["kernels"]["k"]["params"].insert(0, dict(F.DESC)),   # a descriptor before a tensor
    lambda r: r["kernels"]["k"].update(launch={"block": [2048, 1, 1]}),
    lambda r: r["kernels"]["k"].update(launch={"cluster": [4, 4, 4]}),
    lambda r: r["kernels"]["k"].update(launch={"smem": -1}),
    lambda r: r["kernels"]["k"].update(launch=[128]),
    lambda r: r["kernels"]["k"]["params"].extend([dict(F.MEMREF, shape=[1] * 16, strides=[1] * 16)] * 200),
], ids=lambda f: "")
def test_schema(mutate):
    recs = F.records()
    mutate(recs)
    with pytest.raises(LaunchError) as e:
        validate_records(recs)
    assert e.value.rule == "artifact"


def test_a_memrefs_alignment_is_optional():
    recs = F.records()
    recs["kernels"]["k"]["params"][0]["align"] = 16
    validate_records(recs)


def test_a_memrefs_tensormaps_are_descriptor_fields_of_its_rank():
    """"tensormaps" (what tensormap.replace points the tensor at) passes the
    descriptor records' own field checks; a well-formed list loads."""
    recs = F.records()
    recs["kernels"]["k"]["params"][0]["tensormaps"] = [dict(F.TMAP), dict(F.TMAP, swizzle=2, box_dim=[32, 64])]
    validate_records(recs)
    recs["kernels"]["k"]["params"][0]["tensormaps"][1]["rank"] = 1
    with pytest.raises(LaunchError, match=r"params\[0\]\.tensormaps\[1\]\.rank is 1, its tensor has rank 2") as e:
        validate_records(recs)
    assert e.value.rule == "artifact"


def test_params_must_match_the_cubins_table():
    recs = F.records()
    cubin = F.fake_cubin(recs)
    recs["kernels"]["k"]["params"][2]["bits"] = 64   # the cubin has an i32 there
    recs["kernels"]["k"]["params"][2]["type"] = "i64"
    with pytest.raises(LaunchError, match="cubin's parameters") as e:
        CompiledArtifacts(ir=None, ptx="", cubin=cubin, records=recs, arch="sm_90a")
    assert e.value.rule == "artifact"
    with pytest.raises(LaunchError, match="no kernel"):
        CompiledArtifacts(ir=None, ptx="", cubin=F.fake_cubin(F.records(name="other")), records=F.records(),
                          arch="sm_90a")
    with pytest.raises(LaunchError, match="ELF"):
        CompiledArtifacts(ir=None, ptx="", cubin=b"\x7fELF" + b"\0" * 10, records=F.records(), arch="sm_90a")



def test_kernel_attribute_is_cached_and_never_shadows_a_method():
    art = F.artifacts(F.records(name="tile_copy"))
    k = art.tile_copy
    assert art.tile_copy is k is art.kernel("tile_copy") and vars(art)["tile_copy"] is k
    assert not hasattr(art, "other")
    named = F.artifacts(F.records(name="manifest"))   # a kernel named like a method
    k = named.__getattr__("manifest")
    assert named.kernel("manifest") is k and "manifest" not in vars(named) and callable(named.manifest)
    assert isinstance(named.manifest(), dict)

def test_records_checksum(tmp_path):
    d = saved(tmp_path)
    edit_manifest(d, lambda m: m["records"]["kernels"]["k"]["params"][2].update(type="u32"), fix_checksum=False)
    assert "records do not match their checksum" in artifact_error(d)


def test_file_checksums(tmp_path):
    d = saved(tmp_path)
    (d / "module.cubin").write_bytes(b"garbage")
    assert "checksum" in artifact_error(d)


@pytest.mark.parametrize("content", [b"[]", b"null", b"[" * 100000, b"{}", b'{"format": 2}', b"\xff\xfe",
                                     b'{"format": 1, "arch": "sm_90a"}'])
def test_corrupt_manifests(tmp_path, content):
    d = saved(tmp_path)
    (d / "kernels.json").write_bytes(content)
    artifact_error(d)


def test_fifo_does_not_hang(tmp_path):
    d = saved(tmp_path)
    os.unlink(d / "module.cubin")
    os.mkfifo(d / "module.cubin")
    result = []
    th = threading.Thread(target=lambda: result.append(pytest.raises(LaunchError, load, d)), daemon=True)
    th.start()
    th.join(10)
    assert not th.is_alive(), "load() hung on a FIFO"
    assert "not a regular file" in str(result[0].value)


def test_symlinks(tmp_path):
    d = saved(tmp_path)
    outside = tmp_path / "outside.cubin"
    outside.write_bytes((d / "module.cubin").read_bytes())
    os.unlink(d / "module.cubin")
    os.symlink(outside, d / "module.cubin")
    assert "symlink out of" in artifact_error(d)
    os.unlink(d / "module.cubin")
    os.symlink("/dev/zero", d / "module.cubin")
    artifact_error(d)
    os.unlink(d / "module.cubin")
    (d / "real.cubin").write_bytes(outside.read_bytes())
    os.symlink("real.cubin", d / "module.cubin")   # inside the directory: fine
    load(d)


def test_missing_files(tmp_path):
    d = saved(tmp_path)
    os.unlink(d / "module.ptx")
    assert "missing" in artifact_error(d)
    artifact_error(tmp_path / "nowhere")


def test_save_replaces_whole_and_keeps_the_old_on_failure(tmp_path, monkeypatch):
    d = saved(tmp_path, F.records(name="old"))
    new = F.artifacts(F.records(name="new"))

    real = os.fsync
    calls = []

    def failing(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(fd)
    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(OSError):
        new.save(d)
    monkeypatch.setattr(os, "fsync", real)
    assert list(load(d).kernels) == ["old"], "the old artifact was damaged"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temporary files left behind"
    new.save(d)
    assert list(load(d).kernels) == ["new"]


def test_save_refuses_a_directory_that_is_not_an_artifact(tmp_path):
    """nvtma-compile -o DIR replaced any directory whole: the user's files in it were deleted."""
    d = tmp_path / "project"
    (d / "src").mkdir(parents=True)
    (d / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="holds notes.txt, src: not an nvtma artifact"):
        F.artifacts().save(d)
    assert (d / "notes.txt").read_text() == "mine" and (d / "src").is_dir()
    with pytest.raises(FileNotFoundError, match="named ''"):
        F.artifacts().save("")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert list(load(F.artifacts(F.records(name="k")).save(empty)).kernels) == ["k"]  # an empty one is used


def test_modes_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        d = saved(tmp_path, name="a")
        assert stat.S_IMODE((d / "module.cubin").stat().st_mode) == 0o644
        assert stat.S_IMODE(d.stat().st_mode) == 0o755
        os.umask(0o077)
        d = saved(tmp_path, name="b")
        assert stat.S_IMODE((d / "kernels.json").stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_launching_a_tampered_artifact_is_typed(tmp_path):
    """Packing happens before the driver: an artifact with odd but valid
    records still only gives LaunchError."""
    d = saved(tmp_path, F.static_records())
    k = load(d).kernel("k")
    t = FakeCudaArray(0x7F0000000000, (256, 256))
    with pytest.raises(LaunchError):
        k(t, FakeCudaArray(0x7F0000000008, (256, 256)), 1, grid=(1,), block=(128,))


def test_loader_needs_no_mlir(tmp_path):
    d = saved(tmp_path, F.static_records())
    code = ("import sys, nvtma.runtime as r; m = r.load(sys.argv[1]); print(list(m.kernels)); "
            "print(any(k.startswith('nvtma._mlir_libs') for k in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code, str(d)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["['k']", "False"]


def test_tamperer_smoke():
    """A bounded run of test/fuzz/fuzz_artifacts.py: every failure typed."""
    from helpers import REPO
    r = subprocess.run([sys.executable, str(REPO / "test" / "fuzz" / "fuzz_artifacts.py"), "--inputs", "300",
                        "--seed", "7"], capture_output=True, text=True, timeout=600)
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["inputs"] == 300 and summary["bugs"] == 0, r.stdout + r.stderr
    assert summary["outcomes"].get("LaunchError(artifact)", 0) > 100


KEY_SRC = '''
from nvtma import dsl

@dsl.kernel(block=(32,))
def k(a: dsl.Tensor("i32", (32,))):
    a[dsl.thread_idx()] = dsl.Int32({value})
'''


def spec_key(path):
    """A fresh process's key of the kernel in the module file at `path` (each process reads the sources once)."""
    code = ("import importlib.util, sys\n"
            f"s = importlib.util.spec_from_file_location('keymod', {str(path)!r})\n"
            "m = importlib.util.module_from_spec(s); s.loader.exec_module(m)\n"
            "print(m.k.specialize().key)")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_spec_key_follows_the_kernels_code_not_its_path(tmp_path):
    # AOT directories are named by the key: artifacts compiled from other code must not be found under it
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one, moved, other = tmp_path / "a" / "k.py", tmp_path / "b" / "k.py", tmp_path / "a" / "k2.py"
    one.write_text(KEY_SRC.format(value=1))
    moved.write_text(KEY_SRC.format(value=1))
    other.write_text(KEY_SRC.format(value=2))
    key = spec_key(one)
    assert key.startswith("k-")
    assert spec_key(moved) == key  # the same code elsewhere (where artifacts are compiled and where loaded)
    assert spec_key(other) != key  # the same name and constants, another body


def test_spec_key_covers_the_library_sources():
    import importlib
    from nvtma.kernels import gemm
    K = importlib.import_module("nvtma.dsl.kernel")  # the module (nvtma.dsl.kernel is also the decorator)
    key = gemm.gemm_spec(16, 64, 1).key
    assert gemm.gemm_spec(16, 64, 1).key == key
    saved_package, saved_fps = list(K._package), dict(K._fingerprints)
    try:
        K._fingerprints.clear()
        K._package[:] = ["0" * 64]  # as if a source of the DSL or the kernel library had changed
        assert gemm.gemm_spec(16, 64, 1).key != key
    finally:
        K._package[:] = saved_package
        K._fingerprints.clear(), K._fingerprints.update(saved_fps)
    assert gemm.gemm_spec(16, 64, 1).key == key


def test_gemm_refuses_a_module_saved_under_another_specs_key(tmp_path):
    """Gemm(artifacts=DIR) loads DIR/<spec.key>: a module saved there from another spec (or from IR text)
    would run with this spec's grid and operands, its tiles, scales and workspace read out of bounds."""
    from nvtma.kernels import gemm
    spec = gemm.gemm_spec(16, 64, 1)
    F.artifacts().save(tmp_path / spec.key)  # no spec named in its records
    with pytest.raises(LaunchError, match=f"holds a module compiled from no dsl specialization, not {spec.key}"):
        gemm.Gemm(artifacts=tmp_path).module(spec)
    other = gemm.gemm_spec(32, 64, 1).key
    F.artifacts(dict(F.records(), spec=other)).save(tmp_path / spec.key)
    with pytest.raises(LaunchError, match=f"compiled from spec {other}, not {spec.key}") as e:
        gemm.Gemm(artifacts=tmp_path).module(spec)
    assert e.value.rule == "artifact"
    F.artifacts(dict(F.records(), spec=spec.key)).save(tmp_path / spec.key)
    assert gemm.Gemm(artifacts=tmp_path).module(spec).records["spec"] == spec.key


@pytest.mark.parametrize("bad", [5, "", "x" * 5000])
def test_records_spec_is_a_name(bad):
    with pytest.raises(LaunchError, match="records.spec is"):
        validate_records(dict(F.records(), spec=bad))


def test_a_compiled_specialization_names_itself_in_its_records(tmp_path):
    """spec.compile() and nvtma.compile(spec) record the spec's key, which survives save and load (what
    Gemm(artifacts=) checks); IR text names none."""
    from conftest import have_compiler
    if not have_compiler():
        pytest.skip("no MLIR extension")
    import nvtma
    from nvtma import dsl

    @dsl.kernel(block=(32,))
    def named(a: dsl.Tensor("i32", (32,))):
        a[dsl.thread_idx()] = dsl.Int32(7)

    spec = named.specialize()
    for mod in (spec.compile(), nvtma.compile(spec)):
        assert mod.records["spec"] == spec.key
    assert load(spec.compile().save(tmp_path / "a")).records["spec"] == spec.key
    assert "spec" not in nvtma.compile(spec.ir).records
