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
with NVTMA_GPU_ARTIFACTS the staged GPU-test kernels (benchmarks/diag/call_s47.sh)."""
import time

T0 = time.time()  # (torch's import under the tool is part of what a case waits for)

import os  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402

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


def main(first=0, last=len(CASES)):
    say("torch and nvtma imported")
    # RACE_QUANTIZE=kernel: the same cases quantized by quantize_x first, then the unfused GEMM
    mode_q = os.environ.get("RACE_QUANTIZE", "fused")
    g = gemm.Gemm(artifacts=os.environ.get("NVTMA_GPU_ARTIFACTS"), quantize=mode_q)
    bad = 0
    for i in range(first, min(last, len(CASES))):
        M, N, K, mode, cfg = CASES[i]
        name = f"[{i}] M{M}-N{N}-K{K}-{mode} {cfg}"
        if mode_q == "fused" and g.plan(M, N, K, scale=mode, quantize=True, config=cfg)[2] is not None:
            say(f"{name}: skipped (quantizes first at this config)")
            continue
        gen = torch.Generator(device="cuda").manual_seed(M * 7 + N)
        x = torch.randn(M, K, generator=gen, device="cuda").to(torch.bfloat16)
        w, sw, wdq = _quantize_w(torch.randn(N, K, generator=gen, device="cuda") / 8, mode)
        want = _x_reference(x) @ wdq.t()
        torch.cuda.synchronize()
        say(f"{name}: inputs ready, calling")
        start = time.time()
        y = g(x, w, w_scale=sw, scale=mode, config=cfg)
        torch.cuda.synchronize()
        err = ((y.float() - want).abs().max() / want.abs().max()).item()
        bad += err >= 1.5e-2
        say(f"{name}: {'ok' if err < 1.5e-2 else 'WRONG'} (max error {err:.2e} of max |y|), {time.time() - start:.1f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*map(int, sys.argv[1:])))
