"""nvtma.compile: PTX, cubins, SASS, records, the cache and AOT artifacts."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import nvtma
from nvtma import kernels as K
from nvtma import tensormap as tm

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(tmp_path / "cache"))


def test_compile_copy_kernel_to_ptx_and_cubin():
    spec = K.tile_copy((1000, 3000), "f16", (64, 64), swizzle="swizzle_128b", l2_promotion="l2_256b")
    c = nvtma.compile(spec.ir)
    assert ".target sm_90a" in c.ptx
    assert re.search(r"\.param \.align 64 \.b8 tile_copy_param_\d+\[128\]", c.ptx)
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" in c.ptx
    assert "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group" in c.ptx
    assert c.cubin[:4] == b"\x7fELF"
    descs = c.descriptor_records("tile_copy")
    assert [d["binds"] for d in descs] == [0, 1]
    assert descs[0]["l2_promotion_name"] == "l2_256b" and descs[0]["swizzle"] == 3
    assert bytes.fromhex(descs[0]["template"])[10] == 0x06


@pytest.mark.parametrize("promo,byte10", [("none", 0), ("l2_64b", 2), ("l2_128b", 4), ("l2_256b", 6)])
def test_l2_promotion_in_the_ir_reaches_byte_10(promo, byte10):
    """The record and the encoder are the only path from the IR's
    l2_promotion to the descriptor: check both the template and a runtime
    encode from the record."""
    from nvtma.runtime import args as rargs
    spec = K.dump_descriptor((256, 256), "f16", (64, 64), l2_promotion=promo)
    c = nvtma.compile(spec.ir)
    (d,) = c.descriptor_records("dump_desc")
    assert bytes.fromhex(d["template"])[10] == byte10
    t = rargs.TensorInfo(0x7F0000000000, (256, 256), (256, 1), "f16", 16)
    assert rargs.encode_descriptor(t, d, "x")[10] == byte10


def _sass_tool():
    try:
        nvtma.compile(K.dump_descriptor((64, 64), "f16", (64, 64)).ir).sass()
        return True
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("name,make,want", [
    # prefetch.tensormap assembles to UTMACCTL.PF on sm_90
    ("load+store", lambda: K.tile_copy((512, 512), "f16", (64, 64), prefetch=True), ["UTMALDG", "UTMASTG", "UTMACCTL"]),
    ("reduce", lambda: K.reduce_add(256, 256), ["UTMALDG", "UTMAREDG"]),
    ("bulk", lambda: K.bulk_roundtrip(4096), ["UBLKCP"]),
    ("multicast", lambda: K.multicast_copy(256, 256, "f16", (64, 64), 2), ["UTMALDG"]),
    ("im2col", lambda: K.im2col_dump(2, 8, 8, 64), ["UTMALDG"]),
])
def test_sass_has_the_tma_instructions(name, make, want):
    if not _sass_tool():
        pytest.skip("cuobjdump not available")
    sass = nvtma.compile(make().ir).sass()
    for op in want:
        assert op in sass, f"{op} missing from the SASS of {name}"


def test_ptxas_accepts_every_kernel():
    ptxas = shutil.which("ptxas")
    if not ptxas:
        pytest.skip("no ptxas on PATH (nvJitLink already assembled the cubins)")
    import tempfile
    for spec in [K.pipelined_copy(1024, 1024), K.update_descriptor(128, 128), K.cp_async_roundtrip(),
                 K.box_dump((20, 40), "f32", (8, 32), "nan_request_zero_fma", (16, 20))]:
        c = nvtma.compile(spec.ir, cubin=False)
        with tempfile.TemporaryDirectory() as d:
            p = Path(d, "k.ptx")
            p.write_text(c.ptx)
            r = subprocess.run([ptxas, "-arch=sm_90a", str(p), "-o", str(Path(d, "k.cubin"))],
                               capture_output=True, text=True)
            assert r.returncode == 0, r.stderr


def test_invalid_ir_raises_compile_error_with_the_diagnostic():
    bad = K.tile_copy((100, 100), "f16", (64, 64)).ir.replace("box = [64, 64]", "box = [64, 512]", 1)
    with pytest.raises(nvtma.CompileError, match="box-dim-range"):
        nvtma.compile(bad)
    with pytest.raises(nvtma.CompileError, match="does not parse"):
        nvtma.compile("module { this is not mlir }")
    # MLIR's parser asserts (aborting the process) on dense index arrays
    with pytest.raises(nvtma.CompileError, match="dense arrays of 'index'"):
        nvtma.compile("module { func.func @f() attributes {v = array<index: 1, 2>} { return } }")
    with pytest.raises(nvtma.CompileError, match="dense arrays of 'index'"):
        nvtma.compile("module { func.func @f() attributes {v = array<index")
    with pytest.raises(nvtma.CompileError, match="sm_90 or newer"):
        nvtma.compile(K.dump_descriptor((64, 64)).ir, arch="sm_80")


def test_import_nvtma_is_light():
    code = "import sys, nvtma; print(sorted(m for m in sys.modules if m.startswith('nvtma')))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.stdout.strip() == "['nvtma']"


def test_nvtma_compile_cli(tmp_path):
    src = tmp_path / "k.mlir"
    src.write_text(K.tile_copy((256, 256), "f16", (64, 64), l2_promotion="l2_256b").ir)
    res = subprocess.run([sys.executable, "-c", "import sys; from nvtma._tools import compile_main as m; "
                          "sys.exit(m())", str(src), "-o", str(tmp_path / "out")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "l2_256b" in res.stdout and (tmp_path / "out" / "module.cubin").exists()
    src.write_text("garbage")
    res = subprocess.run([sys.executable, "-c", "import sys; from nvtma._tools import compile_main as m; "
                          "sys.exit(m())", str(src), "-o", str(tmp_path / "out2")], capture_output=True, text=True)
    assert res.returncode == 1 and "error" in res.stderr


def test_tensormap_api_has_no_mlir():
    res = subprocess.run([sys.executable, "-c", "import sys, nvtma.tensormap as t; "
                          "t.encode_tiled('float16', 2, 16, [64, 64], [128], [64, 64], [1, 1]); "
                          "print(any('_mlir' in m for m in sys.modules))"], capture_output=True, text=True)
    assert res.stdout.strip() == "False", res.stderr
    assert tm.element_bits("bfloat16") == 16


def test_sm100a_gather4_assembles():
    """An sm_100 feature (gather4) goes to an sm_100a cubin; the same IR on an
    sm_90a target is refused before LLVM sees it."""
    ir = (Path(__file__).resolve().parents[1] / "Target" / "gather4-sm100a-ptx.mlir").read_text()
    c = nvtma.compile(ir, arch="sm_100a", cache=False)
    assert "tile::gather4" in c.ptx and ".target sm_100a" in c.ptx
    assert c.cubin[:4] == b"\x7fELF"
    if _sass_tool():
        assert "UTMALDG" in c.sass()
    with pytest.raises(nvtma.CompileError, match="sm_100"):
        nvtma.compile(ir.replace('chip = "sm_100a"', 'chip = "sm_90a"'), arch="sm_90a", cache=False)


def test_cache_hints_reach_the_ptx():
    """load_hint / store_hint become the .L2::cache_hint forms with the
    policy value; an unknown hint is refused by name."""
    c = nvtma.compile(K.pipelined_copy(1024, 1024, "f16", (64, 128), load_hint="evict_first",
                                       store_hint="evict_last").ir, cubin=False)
    tma = [line for line in c.ptx.splitlines() if "cp.async.bulk.tensor" in line]
    assert tma and all(".L2::cache_hint" in line for line in tma), tma
    for value in (K.CACHE_HINTS["evict_first"], K.CACHE_HINTS["evict_last"]):
        assert str(value) in c.ptx or hex(value) in c.ptx.lower(), value
    plain = nvtma.compile(K.pipelined_copy(1024, 1024, "f16", (64, 128)).ir, cubin=False)
    assert ".L2::cache_hint" not in plain.ptx
    with pytest.raises(ValueError, match="evict_first"):
        K.pipelined_copy(1024, 1024, load_hint="first")


def test_compile_loads_no_python_dialect_modules():
    """nvtma.compile goes through one C-API call: no generated op classes
    (and no numpy) are imported on the way (they cost ~150 ms cold)."""
    code = ("import sys, nvtma; from nvtma import kernels; "
            "nvtma.compile(kernels.dump_descriptor((256, 256)).ir, cache=False); "
            "print(sorted(m for m in sys.modules if '.dialects' in m or m == 'numpy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
