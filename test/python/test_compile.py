"""nvtma.compile: PTX, cubins, SASS, records, the cache and AOT artifacts."""

import json
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


@pytest.mark.parametrize("make,match", [
    (lambda: K.reduce_add(100, 100, box=(32, 32)), r"100x100 is not a multiple of the box \(32, 32\)"),
    (lambda: K.multicast_copy(256, 200, "f16", (64, 64), 2), r"256x200 is not a multiple of the tile \(64, 64\)"),
    (lambda: K.cp_async_roundtrip(1000), "nbytes=1000: a multiple of 16 bytes"),
    (lambda: K.pipelined_copy(1000, 1024), "not a multiple of the box"),
])
def test_copy_kernels_refuse_sizes_their_grid_leaves_partly_uncopied(make, match):
    """The library's copies of whole boxes (a grid of them) refuse sizes whose tail no box covers: it was
    left uncopied (reduce_add, multicast_copy) or stored from shared memory no copy wrote (cp_async_roundtrip)."""
    with pytest.raises(ValueError, match=match):
        make()


def test_invalid_ir_raises_compile_error_with_the_diagnostic():
    bad = K.tile_copy((128, 128), "f16", (64, 64)).ir.replace("box = [64, 64]", "box = [64, 512]", 1)
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


def test_compile_takes_a_kernels_own_arch():
    """nvtma.compile(kernel) targets the arch (and PTX version) the kernel
    was declared for, not sm_90a; an explicit arch still wins."""
    from nvtma import dsl

    @dsl.kernel(block=(32,), arch="sm_100a", ptx=87)
    def k(y: dsl.Tensor("i32", (None,))):
        y[0] = dsl.Int32(1)

    for mod in (k, k.specialize()):
        ptx = nvtma.compile(mod, cubin=False, cache=False).ptx
        assert ".target sm_100a" in ptx and ".version 8.7" in ptx
    assert ".target sm_90a" in nvtma.compile(k, arch="sm_90a", ptx_version=86, cubin=False, cache=False).ptx
    assert ".target sm_90a" in nvtma.compile(k.build().ir, cubin=False, cache=False).ptx   # IR text: the default


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


def test_compile_loads_no_python_dialect_modules(tmp_path):
    """nvtma.compile goes through one C-API call: no generated op classes
    (and no numpy) are imported on the way (they cost ~150 ms cold)."""
    ir_file = tmp_path / "k.mlir"
    ir_file.write_text(K.dump_descriptor((256, 256)).ir)  # built here: the DSL itself uses the op classes
    code = ("import sys, nvtma; "
            f"nvtma.compile(open({str(ir_file)!r}).read(), cache=False); "
            "print(sorted(m for m in sys.modules if '.dialects' in m or m == 'numpy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


# ----------------------------------------------------------------------------- inputs that killed the process

_PLAIN = """module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%g: !llvm.ptr<1>) kernel {
      nvtma.bulk_commit_group
      gpu.return
    }
  }
}"""
_IR_TARGET = _PLAIN.replace("gpu.module @m {", 'gpu.module @m [#nvvm.target<chip = "sm_100f", features = "+ptx86">] {')
_DEEP_BRACKETS = "module attributes {a = " + "[" * 20000 + "]" * 20000 + "} {}"
_DEEP_REGIONS = "func.func @f(%c: i1) {\n" + "scf.if %c {\n" * 5000 + "}\n" * 5000 + "return\n}"
_LITERAL_20K = "func.func @f() -> i64 {\n %c = arith.constant " + "9" * 20000 + " : i64\n return %c : i64\n}"
_LITERAL_100K = "func.func @f() -> i64 {\n %c = arith.constant " + "7" * 100000 + " : i64\n return %c : i64\n}"
_GATHER4 = """module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%A: memref<256x256xf16>) workgroup(%s: memref<4x64xf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %bars = nvgpu.mbarrier.create -> !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
      %a = nvtma.make_tiled_tma_atom %A {cta_tiler = array<i64: 4, 64>} : memref<256x256xf16> -> ATOM
      nvtma.copy %a[%c0, %c0, %c0, %c0, %c0], %s, barrier %bars[%c0] : ATOM, memref<4x64xf16, \
#gpu.address_space<workgroup>>, !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}""".replace("ATOM", "!nvtma.tma_atom<gather4_load, f16, box = [4, 64]>")

_CRASHERS = [
    # (id, ir, compile kwargs, what the CompileError must say)
    ("sm_91a", _PLAIN, dict(arch="sm_91a"), r"unsupported target:\nchip 'sm_91a' is not one LLVM's NVPTX backend "
     r"can select; supported: .*sm_90a, sm_100"),
    ("sm_92", _PLAIN, dict(arch="sm_92"), "chip 'sm_92' is not one"),
    ("sm_95", _PLAIN, dict(arch="sm_95"), "chip 'sm_95' is not one"),
    ("sm_100f+ptx86", _PLAIN, dict(arch="sm_100f", ptx_version=86), r"\+ptx86 is too old for sm_100f, it needs "
     r"\+ptx88 or newer; supported: \+ptx88, \+ptx90"),
    ("sm_110a+ptx86", _PLAIN, dict(arch="sm_110a", ptx_version=86), r"\+ptx86 is too old for sm_110a"),
    ("ptx99", _PLAIN, dict(ptx_version=99), r"features '\+ptx99' are not one PTX ISA version LLVM knows"),
    ("O4", _PLAIN, dict(opt_level=4), r"opt level 4 is not one LLVM takes; supported: 0, 1, 2, 3"),
    ("O99", _PLAIN, dict(opt_level=99), "opt level 99 is not one"),
    ("O-1", _PLAIN, dict(opt_level=-1), "opt level -1 is not one"),
    ("Ohuge", _PLAIN, dict(opt_level=2 ** 70), "opt level 1180591620717411303424 is not one"),
    ("Ostr", _PLAIN, dict(opt_level="3"), "opt level '3' is not one"),
    ("ir-target", _IR_TARGET, dict(arch="sm_100f"), r"gpu.module @m: \+ptx86 is too old for sm_100f"),
    ("brackets", _DEEP_BRACKETS, {}, r"does not parse or verify:\n1:279: error: nesting depth 257 is over the limit"),
    ("regions", _DEEP_REGIONS, {}, r"257:11: error: nesting depth 257 is over the limit of 256"),
    ("literal-20k", _LITERAL_20K, {}, "a numeric literal of 20000 digits is over the limit of 128"),
    ("literal-100k", _LITERAL_100K, {}, "a numeric literal of 100000 digits is over the limit of 128"),
    # LLVM selects gather4 (and cta_group::2) copies only for the sm_100/sm_110 families' a/f chips
    ("gather4-sm_100", _GATHER4, dict(arch="sm_100"), r"gather4 TMA copies need an sm_100 or sm_110 family target "
     r"with the a or f suffix \(sm_100a, .*\), the target is sm_100"),
    ("gather4-sm_120a", _GATHER4, dict(arch="sm_120a"), "gather4 TMA copies need an sm_100 or sm_110 family"),
    # NVPTX prints no symbol it cannot write unquoted ("LLVM ERROR: Symbol name with unsupported characters")
    ("name-space", _PLAIN.replace("@k", '@"my kernel"'), {}, r"symbol \"my kernel\" is not a name PTX takes: ASCII "
     r"letters, digits, '_' and '\$', not starting with a digit"),
    ("name-unicode", _PLAIN.replace("@k", '@"größe"'), {}, r"symbol \"gr\\C3\\B6\\C3\\9Fe\" is not a name PTX takes"),
    ("name-llvm", _PLAIN.replace("    gpu.func @k", "    llvm.func @llvm.f() {\n      llvm.return\n    }\n    gpu.func @k"),
     {}, r"defines \"llvm.f\" in the llvm. namespace, which LLVM keeps for its intrinsics"),
    # a gpu.module's name need not be a PTX name, but the kernel records are JSON: llvm::json asserted on it
    ("module-name-not-utf8", _PLAIN.replace("@m", '@"m\\FF"'), {},
     r"'gpu.module' op name \"m\\FF\" is not valid UTF-8, which the kernel records \(JSON\) take"),
]

_CHILD = """
import json, sys, time
import nvtma
ir, kwargs = json.load(sys.stdin)
t0 = time.perf_counter()
try:
    nvtma.compile(ir, cubin=False, cache=False, **kwargs)
    print(json.dumps(["ok", "", time.perf_counter() - t0]))
except nvtma.CompileError as e:
    print(json.dumps(["CompileError", str(e), time.perf_counter() - t0]))
"""


@pytest.mark.parametrize("name,ir,kwargs,message", _CRASHERS, ids=[c[0] for c in _CRASHERS])
def test_inputs_that_killed_the_process_are_compile_errors(name, ir, kwargs, message):
    """Each of these ended the Python process (SIGABRT, SIGSEGV, LLVM ERROR)
    or hung it (issue 16). Run in a child so that a crash is a failure here,
    not the end of the test session."""
    r = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps([ir, kwargs]), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, f"the child died with {r.returncode}: {r.stderr[-2000:]}"
    kind, text, seconds = json.loads(r.stdout.strip().splitlines()[-1])
    assert kind == "CompileError", (kind, r.stderr[-2000:])
    assert re.search(message, text), text
    assert seconds < 5, f"{name} took {seconds:.1f} s"


_SHARED_GLOBAL = """module attributes {gpu.container_module} {
  gpu.module @m {
    memref.global "private" @buf : memref<Nxf32, #gpu.address_space<workgroup>>
    func.func @fill(%v: f32) {
      %t = gpu.thread_id x
      %b = memref.get_global @buf : memref<Nxf32, #gpu.address_space<workgroup>>
      memref.store %v, %b[%t] : memref<Nxf32, #gpu.address_space<workgroup>>
      return
    }
    gpu.func @k(%p: memref<4xf32>) kernel {
      %c1 = arith.constant 1 : index
      %v = memref.load %p[%c1] : memref<4xf32>
      func.call @fill(%v) : (f32) -> ()
      gpu.barrier
      %b = memref.get_global @buf : memref<Nxf32, #gpu.address_space<workgroup>>
      %w = memref.load %b[%c1] : memref<Nxf32, #gpu.address_space<workgroup>>
      memref.store %w, %p[%c1] : memref<4xf32>
      gpu.return
    }
  }
}"""


@pytest.mark.parametrize("floats,arch,refused", [
    (12288, "sm_90", False), (12289, "sm_90", True),           # 48 KiB on a chip that is not an `a` one
    (58112, "sm_90a", False), (58113, "sm_90a", True),         # 227 KiB on sm_90a
    (2 ** 30, "sm_90a", True),                                 # 4 GiB: ptxas's size wraps to no shared memory
])
def test_static_shared_memory_past_what_ptxas_gives_the_chip_is_refused(floats, arch, refused):
    """A kernel's shared globals (here one a function it calls uses) count
    as its static shared memory. ptxas refuses more than the chip takes,
    with no line; where the size wraps at 2^32 bytes it gave the kernel no
    shared memory at all, and the kernel wrote past it."""
    ir = _SHARED_GLOBAL.replace("memref<Nx", f"memref<{floats}x")
    if not refused:
        assert nvtma.compile(ir, arch=arch, cache=False).cubin[:4] == b"\x7fELF"
        return
    with pytest.raises(nvtma.CompileError, match=rf"has {floats * 4} bytes of static shared memory \({floats * 4} "
                       rf"of the shared globals it uses: @buf\); ptxas gives a kernel of {arch} at most"):
        nvtma.compile(ir, arch=arch, cache=False)


def test_gather4_compiles_for_the_blackwell_a_and_f_chips():
    """The chips the gather4 refusal above leaves: the sm_100/sm_110 families' a/f targets."""
    for arch in ("sm_100a", "sm_100f", "sm_103a", "sm_110f"):
        c = nvtma.compile(_GATHER4, arch=arch, cubin=False, cache=False)
        assert "tile::gather4" in c.ptx, (arch, c.ptx[:300])


def test_chips_llvm_selects_compile_with_their_default_ptx():
    """sm_100f and sm_110a need newer PTX than nvtma's default +ptx86: with no
    ptx_version they get the oldest version they accept."""
    for arch, version in (("sm_100f", "8.8"), ("sm_110a", "9.0"), ("sm_90a", "8.6"), ("sm_100a", "8.6")):
        c = nvtma.compile(_PLAIN, arch=arch, cubin=False, cache=False)
        assert f".version {version}" in c.ptx and f".target {arch}" in c.ptx, (arch, c.ptx[:300])


def test_records_carry_the_launch_configuration():
    """contracts.md item 1: the record's "launch" comes from known_block_size,
    known_cluster_size and nvtma.dynamic_smem; the PTX requires that block
    (.reqntid) and cluster (.reqnctapercluster), and dynamic shared memory is
    PTX's extern array (1024-byte aligned), not a static variable."""
    ir = (Path(__file__).resolve().parents[1] / "Target" / "launch-ptx.mlir").read_text()
    c = nvtma.compile(ir, cache=False)
    assert c.cubin[:4] == b"\x7fELF"  # ptxas takes .reqntid with the cluster directives
    rec = c.kernels["dyn_copy"]
    assert rec["launch"] == {"block": [128, 1, 1], "cluster": [2, 1, 1], "smem": 9216}
    assert [p["kind"] for p in rec["params"]] == ["memref", "descriptor"]
    assert ".reqntid 128, 1, 1" in c.ptx and ".maxntid" not in c.ptx
    assert ".reqnctapercluster 2, 1, 1" in c.ptx
    assert ".extern .shared .align 1024 .b8 __dynamic_shmem__0[];" in c.ptx
    plain = nvtma.compile(_PLAIN, cubin=False, cache=False)
    assert plain.kernels["k"]["launch"] == {"block": None, "cluster": None, "smem": 0}


def test_nvtma_compile_cli_bad_inputs_end_in_a_message_not_a_traceback(tmp_path):
    """issue 16: the CLIs end bad input with a non-zero status and a message
    (the first line names the tool), never a traceback."""
    good = tmp_path / "k.mlir"
    good.write_text(_PLAIN)
    binary = tmp_path / "b.mlir"
    binary.write_bytes(b"\xff\xfe\x00\x80 garbage")
    deep = tmp_path / "deep.mlir"
    deep.write_text(_DEEP_BRACKETS)
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    cases = [
        ([str(tmp_path / "missing.mlir"), "-o", str(tmp_path / "o1")], None),
        ([str(tmp_path), "-o", str(tmp_path / "o2")], None),                      # a directory
        ([str(binary), "-o", str(tmp_path / "o3")], None),                        # not UTF-8
        ([str(deep), "-o", str(tmp_path / "o4")], None),                          # nesting bound
        ([str(good), "-o", str(a_file)], None),                                   # output is a file
        ([str(good), "-o", str(tmp_path / "o5"), "--arch", "sm_91a"], None),
        ([str(good), "-o", str(tmp_path / "o6"), "--arch", "gfx90a"], None),
        ([str(good), "-o", str(tmp_path / "o7"), "--ptx-version", "99"], None),
        ([str(good), "-o", str(tmp_path / "o8"), "-O", "4"], None),
        (["-", "-o", str(tmp_path / "o9")], ""),                                   # empty stdin
        (["-", "-o", str(tmp_path / "o10")], "module { garbage"),
    ]
    for args, stdin in cases:
        r = subprocess.run([sys.executable, "-c", "import sys; from nvtma._tools import compile_main as m; "
                            "sys.exit(m())", *args, "--no-cubin"], capture_output=True, text=True, input=stdin,
                           timeout=120)
        assert r.returncode != 0, (args, r.stdout)
        assert "Traceback" not in r.stderr, (args, r.stderr[-2000:])
        assert r.stderr.startswith("nvtma-compile: error: "), (args, r.stderr[-500:])


def test_a_ptxas_known_to_miscompile_wgmma_is_not_the_fallback_for_wgmma_kernels(monkeypatch, tmp_path):
    """Without nvJitLink, PTX goes to the ptxas on PATH; CUDA 13.0's
    miscompiles wgmma descriptor arithmetic (the two-warpgroup GEMM's results
    were wrong on the H200), so it is refused for kernels with wgmma, with the
    reason, and still used for the others."""
    from nvtma import compiler
    import cuda.bindings
    monkeypatch.setitem(sys.modules, "cuda.bindings.nvjitlink", None)   # "no nvJitLink"
    monkeypatch.delattr(cuda.bindings, "nvjitlink", raising=False)
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PTXAS", str(fake))
    assert compiler._ptxas_release(str(fake)) == (13, 0)
    with pytest.raises(compiler.CompileError, match=r"ptxas .*13\.0's ptxas miscompiles wgmma"):
        compiler.ptx_to_cubin(".version 8.6\n.target sm_90a\n// wgmma.mma_async.sync.aligned\n", "sm_90a")
    with pytest.raises(compiler.CompileError) as e:   # no wgmma: this ptxas is run (and fails here)
        compiler.ptx_to_cubin(".version 8.6\n.target sm_90a\n", "sm_90a")
    assert "miscompiles" not in str(e.value) and "nvJitLink unavailable" in str(e.value) and "ptxas:" in str(e.value)
    assert compiler._ptxas_refuses("wgmma.mma_async", (13, 5)) is None


def test_a_gpu_module_targeting_another_chip_is_refused():
    """(audit) A gpu.module's own #nvvm.target<chip = "sm_100a"> won over compile(arch="sm_90a"): the module
    was labelled sm_90a with PTX for sm_100a."""
    import nvtma
    from nvtma import dsl

    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (64,))):
        x[dsl.thread_idx()] = 1.0

    ir = k.build().ir
    other = ir.replace("gpu.module @kernels {", 'gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {', 1)
    assert other != ir
    with pytest.raises(nvtma.CompileError, match="targets sm_100a"):
        nvtma.compile(other, arch="sm_90a", cubin=False, cache=False)
    level = ir.replace("gpu.module @kernels {", 'gpu.module @kernels [#nvvm.target<O = 0, chip = "sm_90a">] {', 1)
    with pytest.raises(nvtma.CompileError, match="asks for O = 0"):
        nvtma.compile(level, arch="sm_90a", opt_level=3, cubin=False, cache=False)
    assert ".target sm_90a" in nvtma.compile(ir, arch="sm_90a", cubin=False, cache=False).ptx


def test_a_gpu_module_s_own_target_is_read_from_the_ir_not_its_spelling():
    """The module's own #nvvm.target is checked after parsing (not matched in the text): O left to its default
    (2) differs from an opt_level asked for; opt_level left open compiles at the module's level; a target in a
    comment or a string is no target; and the message names the module and both values."""
    import nvtma
    from nvtma import dsl

    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (64,))):
        x[dsl.thread_idx()] = 1.0

    ir = k.build().ir
    own = ir.replace("gpu.module @kernels {", 'gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {', 1)
    with pytest.raises(nvtma.CompileError) as e:
        nvtma.compile(own, arch="sm_90a", opt_level=3, cubin=False, cache=False)
    assert ("(arch='sm_90a', opt_level=3)" in str(e.value)
            and "gpu.module @kernels asks for O = 2 (its own #nvvm.target), the compile O = 3" in str(e.value))
    at_two = nvtma.compile(own, arch="sm_90a", cubin=False, cache=False).ptx
    assert at_two == nvtma.compile(own, arch="sm_90a", opt_level=2, cubin=False, cache=False).ptx
    two = ir.replace("gpu.module @kernels {", 'gpu.module @kernels [#nvvm.target<O = 2, chip = "sm_90a">] {', 1)
    assert at_two == nvtma.compile(two, arch="sm_90a", cubin=False, cache=False).ptx
    spelled = "// #nvvm.target<O = 0, chip = \"sm_100a\">\n" + ir
    assert nvtma.compile(spelled, arch="sm_90a", opt_level=3, cubin=False, cache=False).ptx == \
        nvtma.compile(ir, arch="sm_90a", opt_level=3, cubin=False, cache=False).ptx


def _bitcode(path: Path, value: int) -> Path:
    """A small NVPTX LLVM bitcode file (llvm-as of the tools wheel) defining a function returning `value`."""
    from helpers import llvm_tools_dir
    ll = path.with_suffix(".ll")
    ll.write_text(f'target triple = "nvptx64-nvidia-cuda"\ndefine i32 @nvtma_test_link() {{\n  ret i32 {value}\n}}\n')
    subprocess.run([str(Path(llvm_tools_dir()) / "llvm-as"), str(ll), "-o", str(path)], check=True)
    return path


def _plain_ir():
    from nvtma import dsl

    @dsl.kernel(block=(32,))
    def k(x: dsl.Tensor("f32", (64,))):
        x[dsl.thread_idx()] = 1.0

    return k.build().ir


def test_a_cache_entry_linked_against_other_bitcode_is_not_used(tmp_path, monkeypatch):
    """A cache entry records each bitcode file it linked (a device library's, by its name, and a file a module's
    own #nvvm.target links), stamped before LLVM read it: the same file, a hit; the file rewritten or gone, or
    the name finding another, a miss (recompiled, or refused where nothing is found)."""
    from nvtma import compiler
    if not (Path(__import__("helpers").llvm_tools_dir()) / "llvm-as").exists():
        pytest.skip("no llvm-as")
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(tmp_path / "cache"))
    ir = _plain_ir()
    bc = _bitcode(tmp_path / "lib.bc", 7)
    monkeypatch.setattr(compiler, "_device_library", lambda name, arch: bc if name == "nvshmem" else 1 / 0)
    named = ir.replace("gpu.module @kernels {", 'gpu.module @kernels attributes {nvtma.link = ["nvshmem"]} {', 1)
    own = ir.replace("gpu.module @kernels {",
                     f'gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90a", link = ["{bc}"]>] {{', 1)
    for text, kind, what in ((named, "library", "nvshmem"), (own, "file", str(bc))):
        first = nvtma.compile(text, cubin=False, cache=True)
        assert not first.from_cache
        assert first.libraries == compiler.link_stamp(kind, what, "sm_90a")[0]
        assert first.libraries.startswith(f"{kind}\t{what}\t{bc.resolve()}:")
        assert nvtma.compile(text, cubin=False, cache=True).from_cache
        _bitcode(bc, 8)  # rewritten: another inode, size or times
        again = nvtma.compile(text, cubin=False, cache=True)
        assert not again.from_cache and again.libraries != first.libraries
        assert nvtma.compile(text, cubin=False, cache=True).from_cache
    other = _bitcode(tmp_path / "other.bc", 7)
    monkeypatch.setattr(compiler, "_device_library", lambda name, arch: other)
    assert not nvtma.compile(named, cubin=False, cache=True).from_cache   # the name finds another file
    bc.write_bytes(b"not bitcode")
    with pytest.raises(nvtma.CompileError):  # the cached entry is not used: LLVM reads the file
        nvtma.compile(own, cubin=False, cache=True)
    bc.unlink()
    with pytest.raises(nvtma.CompileError, match="the bitcode a GPU module links"):
        nvtma.compile(own, cubin=False, cache=True)


def test_a_gpu_module_the_compile_cannot_serve_is_refused_before_anything_is_linked(tmp_path, monkeypatch):
    """Refused, naming the module: two #nvvm.targets; an own target with nvtma.link; a library name nvtma does
    not link. lower_to_ptx without a resolver refuses a module that asks for a library, and what the
    resolver raises, or a path that is not a str, comes back as such."""
    from nvtma import compiler
    from nvtma._mlir_libs._mlir.ir import Context
    from nvtma._mlir_libs._nvtmaDialects import lower_to_ptx
    ir = _plain_ir()
    resolved = []
    monkeypatch.setattr(compiler, "_device_library", lambda name, arch: resolved.append(name))
    two = ir.replace("gpu.module @kernels {", 'gpu.module @kernels [#nvvm.target<chip = "sm_90a">, '
                     '#nvvm.target<O = 3, chip = "sm_90a">] {', 1)
    with pytest.raises(nvtma.CompileError, match="gpu.module @kernels has more than one #nvvm.target"):
        nvtma.compile(two, cubin=False, cache=False)
    both = ir.replace("gpu.module @kernels {", 'gpu.module @kernels [#nvvm.target<chip = "sm_90a">] attributes '
                      '{nvtma.link = ["nvshmem"]} {', 1)
    with pytest.raises(nvtma.CompileError, match="has its own #nvvm.target and nvtma.link"):
        nvtma.compile(both, cubin=False, cache=False)
    assert resolved == []
    named = ir.replace("gpu.module @kernels {", 'gpu.module @kernels attributes {nvtma.link = ["nvshmem"]} {', 1)
    with Context() as ctx:
        with pytest.raises(ValueError, match="^module:\nthe IR asks to link device library 'nvshmem' and no"):
            lower_to_ptx(ctx, named, "sm_90a")
        with pytest.raises(ZeroDivisionError):
            lower_to_ptx(ctx, named, "sm_90a", resolve_link=lambda name: 1 / 0)
        with pytest.raises(ValueError, match="^module:\nthe bitcode path for device library 'nvshmem' is not"):
            lower_to_ptx(ctx, named, "sm_90a", resolve_link=lambda name: 7)
        with pytest.raises(ValueError, match="is not a str of UTF-8"):
            lower_to_ptx(ctx, named, "sm_90a", resolve_link=lambda name: "/tmp/\udcff.bc")
    monkeypatch.undo()
    with pytest.raises(nvtma.CompileError, match="nvtma links 'nvshmem'"):
        nvtma.compile(named.replace('"nvshmem"', '"rocshmem"'), cubin=False, cache=False)


def test_the_cli_leaves_the_opt_level_to_the_module_s_own_target(tmp_path, capsys):
    """nvtma-compile without -O compiles a module whose own target asks for O = 1; with -O 3, exit 1 naming
    both levels."""
    ir = _plain_ir().replace("gpu.module @kernels {", 'gpu.module @kernels [#nvvm.target<O = 1, chip = '
                             '"sm_90a">] {', 1)
    src = tmp_path / "k.mlir"
    src.write_text(ir)
    from nvtma._tools import compile_main
    assert compile_main([str(src), "-o", str(tmp_path / "out"), "--no-cubin"]) == 0
    assert (tmp_path / "out" / "module.ptx").exists()
    assert compile_main([str(src), "-o", str(tmp_path / "out3"), "--no-cubin", "-O", "3"]) == 1
    assert "asks for O = 1 (its own #nvvm.target), the compile O = 3" in capsys.readouterr().err


