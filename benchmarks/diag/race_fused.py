#!/usr/bin/env python3
"""racecheck over the fused-quantization GEMMs at a cost the device budget allows. Under racecheck the
test_gpu_gemm.py test of a fused case (`test_gemm_quantizes_bf16_x_inside`) takes a minute or more: each runs
quantize_x and the unfused GEMM first, then the fused GEMM twice, and the tool instruments every launch (five
of them did not finish in 429 s on an H100, session 42). Here each case is one fused call, its reference in
torch alone (x quantized in 1x128 blocks as the kernel does, float32 matmul), so with
`--kernel-name kne=gemm` the tool instruments the fused GEMMs and nothing else (the unfused GEMMs and
quantize_x ran clean under racecheck before). A case whose config cannot take x's bf16 tiles (the call would
quantize first) is skipped. Each case's start and result print with the seconds since the process began (a
time limit keeps what finished, and shows where it stopped).
    compute-sanitizer --tool racecheck --kernel-name kne=gemm python3 benchmarks/diag/race_fused.py [FIRST [LAST]]
with NVTMA_GPU_ARTIFACTS the staged GPU-test kernels (benchmarks/diag/call_s47.sh). Session 46: the fused cases
over a cluster (from case 9) never finish under racecheck; `race_fused.py build DIR` (here) compiles them with
both cluster barriers (gemm_spec diag "barriers", the protocol racecheck finished in session 8), and with
RACE_DIAG_ART=DIR only those cases run, with those kernels."""
import time

T0 = time.time()  # (torch's import under the tool is part of what a case waits for)

import os  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common

import torch  # noqa: E402

import common  # noqa: E402
import gpu_cases  # noqa: E402
from nvtma.kernels import gemm  # noqa: E402
from test_gpu_gemm import _quantize_w  # noqa: E402

CASES = [c for c in gpu_cases.GEMM_CASES if c[3] != "bf16"]


def _x_reference(x):
    """bf16 x quantized in 1x128 blocks (amax / 448 a block, as the kernel's quantizing warps) and back."""
    M, K = x.shape
    kb = -(-K // 128)
    xp = torch.nn.functional.pad(x.float(), (0, kb * 128 - K)).view(M, kb, 128)
    s = xp.abs().amax(2, keepdim=True).clamp(min=1e-12) / 448
    return ((xp / s).to(torch.float8_e4m3fn).float() * s).reshape(M, kb * 128)[:, :K]


def say(what):
    print(f"{time.time() - T0:7.1f} s  {what}", flush=True)


def _cluster_cases():
    """(case index, the case's fused GEMM spec) of the cases over a cluster (x multicast or the M split)."""
    g = gemm.Gemm(quantize="fused")
    for i, (M, N, K, mode, cfg) in enumerate(CASES):
        sp, _, q = g.plan(M, N, K, scale=mode, quantize=True, config=cfg)
        if q is None and max(sp.info["mc"], sp.info["ms"]) > 1:
            yield i, sp


def build(d):
    """The cluster cases' fused GEMMs with both cluster barriers (diag "barriers"), into d (RACE_DIAG_ART)."""
    for i, sp in _cluster_cases():
        v = common.with_diag(sp, "barriers")
        v.compile().save(Path(d) / v.key)
        print(f"[{i}] {v.key}")


def main(first=0, last=len(CASES)):
    say("torch and nvtma imported")
    # RACE_QUANTIZE=kernel: the same cases quantized by quantize_x first, then the unfused GEMM (its reference
    # quantized as quantize_x does); RACE_DIAG_ART: the cluster cases' fused GEMMs built by `build`
    mode_q = os.environ.get("RACE_QUANTIZE", "fused")
    g = gemm.Gemm(artifacts=os.environ.get("NVTMA_GPU_ARTIFACTS"), quantize=mode_q)
    diag_art = os.environ.get("RACE_DIAG_ART")
    if diag_art and mode_q != "fused":
        raise SystemExit("RACE_DIAG_ART: `build` makes the fused GEMMs' barrier builds only (RACE_QUANTIZE=fused)")
    gd = gemm.Gemm(artifacts=diag_art) if diag_art else None
    sms = torch.cuda.get_device_properties(0).multi_processor_count  # (the SMs _prepare plans for; build: 132)
    bad = 0
    for i in range(first, min(last, len(CASES))):
        M, N, K, mode, cfg = CASES[i]
        name = f"[{i}] M{M}-N{N}-K{K}-{mode} {cfg}"
        if mode_q == "fused" and g.plan(M, N, K, scale=mode, quantize=True, sms=sms, config=cfg)[2] is not None:
            say(f"{name}: skipped (quantizes first at this config)")
            continue
        gen = torch.Generator(device="cuda").manual_seed(M * 7 + N)
        x = torch.randn(M, K, generator=gen, device="cuda").to(torch.bfloat16)
        w, sw, wdq = _quantize_w(torch.randn(N, K, generator=gen, device="cuda") / 8, mode)
        xdq = (_x_reference(x) if mode_q == "fused" else
               gemm.dequantize_x(*g.quantize(x, "block" if mode == "block" else "token")))
        want = xdq @ wdq.t()
        call = g._prepare(x, w, sw, mode, None, None, None, cfg, {})
        if gd is not None:
            sp = g.plan(M, N, K, scale=mode, quantize=True, sms=sms, config=cfg)[0]
            if max(sp.info["mc"], sp.info["ms"]) == 1:
                continue
            call.kernel = gd.module(common.with_diag(sp, "barriers")).gemm
            name += " with the cluster barriers"
        torch.cuda.synchronize()
        say(f"{name}: inputs ready, calling")
        start = time.time()
        y = call(x, w, sw, None, None)
        torch.cuda.synchronize()
        err = ((y.float() - want).abs().max() / want.abs().max()).item()
        bad += err >= 1.5e-2
        say(f"{name}: {'ok' if err < 1.5e-2 else 'WRONG'} (max error {err:.2e} of max |y|), "
            f"{time.time() - start:.1f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["build"]:
        build(sys.argv[2])
    else:
        sys.exit(main(*map(int, sys.argv[1:])))
