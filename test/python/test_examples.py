"""The examples compile without a GPU, print what they made and write AOT
artifacts that nvtma.runtime.load reads back."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("nvtma._mlir_libs._nvtmaDialects")

from helpers import REPO  # noqa: E402

# example, extra flags, what its report must say
CASES = [
    ("tma_copy", ["--l2-promotion", "l2_64b", "--rows", "1024", "--cols", "1024"],
     [r"cp\.async\.bulk\.tensor\.2d\.shared::cluster", "l2_promotion l2_64b, descriptor byte 10 = 0x02"]),
    ("multicast", ["--cluster", "4"], [r"multicast::cluster", r"tiled box \[16, 64\]"]),
    ("reduce_add", [], [r"cp\.reduce\.async\.bulk\.tensor\.2d\.global\.shared::cta\.add"]),
    ("im2col", ["--pixels", "32"], [r"\.im2col\.mbarrier", "im2col 32 pixels x 64 channels"]),
    ("ws_pipeline", ["--l2-promotion", "l2_256b"], [r"l2_promotion l2_256b \(byte 10 = 0x06\)"]),
    ("softmax", ["--rows", "1000", "--cols", "2048"],
     [r"PTX instructions: .*shfl\.sync\.bfly\.b32", r"PTX instructions: .*ex2\.approx\.f32",
      r"PTX instructions: .*cvt\.rn\.bf16x2\.f32", r"PTX instructions: .*ld\.global\.v4\.b32",
      r"PTX instructions: .*st\.global\.v4\.b32", "no tensor copies"]),
    ("wgmma_gemm", ["--n", "128", "--k", "256"],
     [r"PTX instructions: .*wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.f16\.f16",
      r"PTX instructions: .*wgmma\.wait_group", r"descriptor for argument 0: tiled box \[64, 64\] float16",
      r"descriptor for argument 1: tiled box \[128, 64\] float16"]),
    ("wgmma_gemm", ["--dtype", "e4m3", "--n", "64", "--k", "256"],
     [r"PTX instructions: .*wgmma\.mma_async\.sync\.aligned\.m64n64k32\.f32\.e4m3\.e4m3",
      r"descriptor for argument 0: tiled box \[64, 128\] uint8"]),
    ("transpose", ["--rows", "512", "--cols", "256"],
     [r"PTX instructions: .*cp\.async\.bulk\.tensor\.2d\.global\.shared::cta",
      r"PTX instructions: .*fence\.proxy\.async\.shared::cta", r"\.mbarrier::complete_tx::bytes",
      r"descriptor for argument 1: tiled box \[64, 64\] float16"]),
]


@pytest.mark.parametrize("name,flags,want", CASES, ids=[" ".join([c[0], *c[1][:2]]) for c in CASES])
def test_example_compiles_and_saves(name, flags, want, tmp_path):
    import re
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # the compile-only path, even on a GPU box
    out = tmp_path / "aot"
    p = subprocess.run([sys.executable, str(REPO / "examples" / f"{name}.py"), *flags, "--aot", str(out)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    for pattern in want:
        assert re.search(pattern, p.stdout), (pattern, p.stdout)
    meta = json.loads((out / "kernels.json").read_text())
    assert meta["arch"] == "sm_90a" and meta["records"]["kernels"]
    assert (out / "module.cubin").read_bytes()[:4] == b"\x7fELF"
    from nvtma import runtime
    loaded = runtime.load(out)
    assert set(loaded.kernels) == set(meta["records"]["kernels"])


@pytest.mark.parametrize("flags,want", [
    (["--m", "70", "--n", "320", "--k", "2048", "--config", "128,64,1,3,2"],
     [r"BM=128 BN=64 consumer warpgroups=1 stages=8 K splits=3, x multicast to 2 CTAs",
      r"wgmma\.mma_async\.sync\.aligned\.m64n128k32\.f32\.e4m3\.e4m3", r"griddepcontrol\.wait",
      r"\.multicast::cluster", r"descriptor for argument 0: tiled box \[64, 128\] uint8, l2_promotion l2_128b",
      r"compiled quantize_x"]),
    (["--m", "5", "--n", "7168", "--k", "2048", "--scale", "bf16", "--l2-w", "l2_256b", "--config", "8,64,1,1"],
     [r"BM=8 ", r"wgmma\.mma_async\.sync\.aligned\.m64n8k16\.f32\.bf16\.bf16",
      r"descriptor for argument 0: tiled box \[(64|128), 64\] bfloat16, l2_promotion l2_256b"]),
    # x as the wgmmas' A: m64n56 wgmmas (x's 64 rows by 56 of W's), W's box 56 rows of 2 K steps
    (["--m", "5", "--n", "7168", "--k", "2048", "--scale", "bf16", "--config", "8,56,1,1,1,9,1,0,2,0"],
     [r"BM=8 BN=56 .*, x the wgmmas A \(W tiles their B\)",
      r"wgmma\.mma_async\.sync\.aligned\.m64n56k16\.f32\.bf16\.bf16",
      r"descriptor for argument 0: tiled box \[2, 56, 64\] bfloat16", r"descriptor for argument 1: tiled box "
      r"\[2, 8, 64\] bfloat16"]),
    # stages of 4 K steps: W's and x's descriptors load 3-D boxes of 4 K steps
    (["--m", "1", "--n", "7168", "--k", "2048", "--config", "8,64,1,1,1,4,1,0,4"],
     [r"BM=8 BN=64 consumer warpgroups=1 stages=4 of 4 K steps \(a TMA box each\) K splits=1",
      r"descriptor for argument 0: tiled box \[4, 64, 128\] uint8", r"descriptor for argument 1: tiled box "
      r"\[4, 8, 128\] uint8"]),
    # bf16 x quantized inside the GEMM: x's descriptor loads bf16 boxes of 64 columns, no quantize_x
    (["--m", "8", "--n", "7168", "--k", "2048", "--scale", "row", "--quantize", "fused"],
     [r"BM=8 .*; x quantized inside the GEMM", r"wgmma\.mma_async\.sync\.aligned\.m64n8k32\.f32\.e4m3\.e4m3",
      r"descriptor for argument 1: tiled box \[8, 64\] bfloat16"]),
    # by default (--quantize auto) at small M too with block scales, at a config of its own where the problem's
    # would leave the quantizing warps behind W's stream (BN = 64 over CTA pairs: tiles of 128 W rows, split 4
    # ways); per tensor there, and at 7168 x 2048 (64-row tiles), bf16 x is quantized first (quantize_x), at the
    # problem's config
    (["--m", "16", "--n", "4096", "--k", "7168", "--scale", "block"],
     [r"BM=16 BN=128 consumer warpgroups=1 .*K splits=4, .*; x quantized inside the GEMM"]),
    (["--m", "16", "--n", "4096", "--k", "7168"],
     [r"BM=16 BN=64 consumer warpgroups=1 .*K splits=2 over a cluster", r"wrote .*/quantize_x-"]),
    (["--m", "1", "--n", "7168", "--k", "2048"],
     [r"BM=8 BN=64 consumer warpgroups=1 .*K splits=1, x loaded by each CTA; l2_promotion", r"wrote .*/quantize_x-"]),
    # 257-512 rows: one launch over CTA pairs sharing W, each CTA 160 of 300 rows (m64n160 wgmmas)
    (["--m", "300", "--n", "512", "--k", "1024"],
     [r"gemm M=300 .*BM=160 .*M split over 2 CTAs sharing W",
      r"wgmma\.mma_async\.sync\.aligned\.m64n160k32\.f32\.e4m3\.e4m3", r"wrote .*/quantize_x-"]),
])
def test_fp8_gemm_example_compiles_and_saves(flags, want, tmp_path):
    """examples/fp8_gemm.py (issue #13): the GEMM (and the quantizer of bf16
    x) compiled without a GPU, reported, saved where gemm.Gemm(artifacts=)
    loads them."""
    import re
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    out = tmp_path / "aot"
    p = subprocess.run([sys.executable, str(REPO / "examples" / "fp8_gemm.py"), *flags, "--aot", str(out)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    for pattern in want:
        assert re.search(pattern, p.stdout), (pattern, p.stdout)
    from nvtma import runtime
    dirs = sorted(d.name for d in out.iterdir())
    # quantize_x: the call's own; or, x quantized inside the GEMM, what --run's check and --bench use (and
    # --bench's GEMM on e4m3 x)
    fused = "x quantized inside the GEMM" in p.stdout
    quantizers = 0 if "bf16" in flags else 1 + (fused and "block" not in flags)
    assert [d.split("-")[0] for d in dirs] == ["gemm"] * (1 + fused) + ["quantize_x"] * quantizers
    assert "gemm" in runtime.load(out / dirs[0]).kernels


def test_fp8_mlp_example_compiles_and_saves(tmp_path):
    """examples/fp8_mlp.py: every GEMM of a decode step's layer planned, compiled and saved where
    gemm.Gemm(artifacts=) loads them, for each batch size (past 512 rows, each block's), with the quantizers
    --run's check uses."""
    import re
    from nvtma.kernels import gemm
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    out = tmp_path / "aot"
    p = subprocess.run([sys.executable, str(REPO / "examples" / "fp8_mlp.py"), "--m", "1", "64", "600", "--aot",
                        str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = re.findall(r"^M=(\d+) (gate_up|down) \((\d+) x (\d+)\): BM=\d+.*?(, e4m3 x from the model)?$",
                       p.stdout, re.M)
    # each on bf16 x and on e4m3 x the model quantized; 600 rows: two launches (gemm.row_blocks), each its own tile
    assert [(int(m), name, bool(e4m3)) for m, name, _, _, e4m3 in lines] == [
        (m, name, e4m3) for ms, names in (((1,), ("gate_up", "down")), ((64,), ("gate_up", "down")),
                                          ((320, 280), ("gate_up", "down")))
        for name in names for e4m3 in (False, True) for m in ms], p.stdout
    assert {(n, k) for _, _, n, k, _ in lines} == {("4096", "7168"), ("7168", "2048")}
    g = gemm.Gemm()
    want = {g.plan(int(m), int(n), int(k), gemm.F8, "block", quantize=not e4m3)[0].key for m, _, n, k, e4m3 in lines}
    want |= {gemm.quantize_x_spec(gran).key for gran in ("block", "token")}
    assert want <= {d.name for d in out.iterdir()}


@pytest.mark.parametrize("example,flags,message", [
    ("fp8_gemm", ["--config", "64,64,1,1,3"], r"argument --config: '64,64,1,1,3': config mc=3: 1, 2 or 4 CTAs"),
    ("fp8_gemm", ["--n", "0"], r"error: N = 0: at least 1"),
    ("fp8_gemm", ["--l2-w", "bogus"], r"error: l2_w: 'bogus' is not a L2Promotion"),
    ("fp8_gemm", ["--sms", "0"], r"error: --m 16, --sms 0: at least 1"),
    ("fp8_mlp", ["--sms", "0"], r"error: --m, --layers and --sms: at least 1"),
    ("profile_gemm", ["--config", "64,64,1,1,1,1"], r"argument --config: .*config stages=1"),
    ("profile_gemm", ["--m", "0"], r"error: M = 0: at least 1"),
    ("tma_copy", ["--rows", "100", "--cols", "3"], r"error: 100x3 is not a multiple of the box \(64, 128\)"),
    ("im2col", ["--pixels", "0"], r"error: .*copy\.py:\d+: SMEMPool\.alloc shape \(0, 64\): dim 0 is not positive"),
    ("ws_pipeline", ["--l2-promotion", "x"], r"error: .*ws_pipeline\.py:\d+: l2_promotion: 'x' is not a L2Promotion"),
])
def test_the_examples_refuse_bad_flags_as_usage_errors(example, flags, message):
    """The library's refusals of an example's flags (ValueErrors, KernelBuildErrors at the kernel's line, naming
    the rule and the value) are the command line's usage errors: exit status 2 and the message, no traceback."""
    import re
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    p = subprocess.run([sys.executable, str(REPO / "examples" / f"{example}.py"), *flags], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 2 and re.search(message, p.stderr) and "Traceback" not in p.stderr, p.stderr
