#!/usr/bin/env python3
"""Decode steps of a stack of FP8 SwiGLU MLPs: the weight-streaming GEMM in a model.

Each layer is DeepSeek-V3's dense MLP on the RMS-normed residual, x +
down(silu(gate(n)) * up(n)) with n = x / rms(x), at hidden 7168 and
intermediate 2048: gate and up in one e4m3 W of 4096 x 7168,
down an e4m3 W of 7168 x 2048, with 128x128 block scales (or per-tensor,
per-row scales, or bf16 W). Every GEMM is nvtma.kernels.gemm.Gemm, called
on bf16 activations (quantized inside the GEMM or just before it). With a
GPU, each batch size is run as torch users run it:
- eagerly, each GEMM checked against float32 on its input quantized by the
  same granularity and dequantized (the stack against float32 with
  unquantized activations is reported: what e4m3 activations cost);
- inside ``torch.cuda.stream(s)`` after queued work;
- compiled with ``torch.compile(mode="reduce-overhead")`` through
  ``Gemm.torch_op`` (CUDA graphs): one GEMM checked against the eager
  call, the stack against float32 (inductor fuses the elementwise ops in
  f32, so the activations round, then quantize, otherwise than eagerly:
  the stack differs from the eager one by about what e4m3 costs);
- with the activations quantized by the model instead (fp8 W): e4m3 x and
  its scales to the GEMM from ``quantize_activations``, torch ops that
  torch.compile fuses into the norm's and SiLU's kernels; eagerly and
  compiled, each GEMM checked on its e4m3 input;
- and with ``--bench`` one decode step over all the layers (their weights
  are past L2 together: ``--layers`` of 44 MB each), compiled, timed from
  CUDA-graph replays (both ways of quantizing) beside the same stack in bf16
  with torch.matmul and, for per-tensor scales, with torch._scaled_mm; and
  the step's GEMMs alone. On an H100 (2026-12-06) quantizing in the model
  was no faster: per tensor within 4%, block-scaled 1.07-1.21x slower (the
  GEMM quantizes bf16 x inside itself there); the GEMMs alone (on e4m3 x)
  took 58-64% of a step.

    python examples/fp8_mlp.py                          # plan and compile every GEMM (no GPU needed)
    python examples/fp8_mlp.py --m 1 8 64 --run         # run, check (eager, on a stream, compiled)
    python examples/fp8_mlp.py --m 8 --run --bench      # and time a decode step beside torch
    python examples/fp8_mlp.py --aot DIR / --from DIR --run   # AOT: the GPU box needs no MLIR
"""

import argparse
import sys
from pathlib import Path

from _example import graph_us, quantized_weight, x_as_the_gemm_sees_it
from nvtma.kernels import gemm

HIDDEN, INTER = 7168, 2048


def shapes():
    """The layer's GEMMs, (name, N, K): gate and up as one, then down."""
    return [("gate_up", 2 * INTER, HIDDEN), ("down", HIDDEN, INTER)]


class Stack:
    """`layers` MLPs, each its own weights; ``step(x, gemm_call)`` runs them all on x [M, HIDDEN] bf16 with
    ``gemm_call(x, w, w_scale, x_scale)`` the GEMM (the Gemm, its torch op, or a torch baseline)."""

    def __init__(self, torch, layers, scale, seed=0):
        gen = torch.Generator(device="cuda").manual_seed(seed)
        self.scale = scale
        self.layers = [[quantized_weight(torch, torch.randn(n, k, generator=gen, device="cuda") / k ** 0.5, scale)
                        for _, n, k in shapes()] for _ in range(layers)]
        import torch._dynamo
        for layer in self.layers:  # fixed addresses, as a module's parameters are: the CUDA graphs of
            for w, sw, _ in layer:  # torch.compile(mode="reduce-overhead") read them in place, not copied in
                for t in (w, sw) if sw is not None else (w,):
                    torch._dynamo.mark_static_address(t)

    def step(self, torch, x, gemm_call, quantize=False):
        """``gemm_call(x, w, w_scale, x_scale)`` takes bf16 activations (x_scale None), or with `quantize` e4m3
        ones and their scales, quantized here (quantize_activations: torch.compile fuses that into the norm's and
        the SiLU's kernels)."""
        def act(t):
            return quantize_activations(torch, t, self.scale) if quantize else (t.to(x.dtype), None)
        for (wgu, sgu, _), (wd, sd, _) in self.layers:
            n, sn = act(_rms_normed(torch, x))
            h = gemm_call(n, wgu, sgu, sn)
            a, sa = act(torch.nn.functional.silu(h[:, :INTER]) * h[:, INTER:])
            x = x + gemm_call(a, wd, sd, sa).to(x.dtype)
        return x

    def reference(self, torch, x):
        """float32, W dequantized, the activations not quantized: what e4m3 activations approximate."""
        x = x.float()
        for (_, _, wgu), (_, _, wd) in self.layers:
            h = _rms_normed(torch, x) @ wgu.t()
            x = x + (torch.nn.functional.silu(h[:, :INTER]) * h[:, INTER:]) @ wd.t()
        return x


def quantize_activations(torch, t, scale):
    """(e4m3 t, its f32 scales) as the GEMM takes them, in torch ops a compiler fuses with what computes t: per
    1x128 block of a row for block-scaled W ([M, K / 128], a view of the transposed storage the kernel loads,
    gemm.block_scales_for_kernel: no copy in the call), else per row ([M]); each scale amax / 448."""
    t = t.float()
    M, K = t.shape
    if scale == "block":  # (K a multiple of 128 here)
        blocks = t.view(M, K // 128, 128)
        s = blocks.abs().amax(2).clamp(min=1e-12) / 448
        q = (blocks / s[:, :, None]).clamp(-448, 448).to(torch.float8_e4m3fn).view(M, K)
        cols = gemm.block_scale_columns(M)
        storage = torch.nn.functional.pad(s, (0, 0, 0, cols - M)).t().contiguous()  # [K / 128, cols]
        return q, storage[:, :M].t()
    s = t.abs().amax(1).clamp(min=1e-12) / 448
    return (t / s[:, None]).clamp(-448, 448).to(torch.float8_e4m3fn), s


def _rms_normed(torch, x):
    x = x.float()
    return x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-6)


def _err(torch, got, want):
    return ((got.float() - want.float()).abs().max() / want.float().abs().max()).item()


def run(torch, g, a):
    """Every batch size of --m: eager against the reference, on a stream, compiled; --bench times them."""
    stack = Stack(torch, a.layers, a.scale)
    kw = {} if a.scale == "bf16" else dict(scale=a.scale)

    fp8 = a.scale != "bf16"

    def ours(x, w, sw, sx=None):
        return g(x, w, w_scale=sw, x_scale=sx, **kw)
    scale_of = {id(w): sw for layer in stack.layers for w, sw, _ in layer}
    dequantized = {id(w): wdq for layer in stack.layers for w, _, wdq in layer}
    calls = []

    def ours_recorded(x, w, sw, sx=None):
        y = ours(x, w, sw, sx)
        calls.append((x, sx, w, y))
        return y
    op = g.torch_op("nvtma_example::gemm")

    def ours_op(x, w, sw, sx=None):
        return op(x, w, sw, sx, kw.get("scale"))

    # a function of its own each (torch.compile's recompile limit, 8, is per function), the model's quantizing with
    # static shapes (quantize_activations' scale columns are M's power of two)
    def step_bf16_x(x):
        return stack.step(torch, x, ours_op)

    def step_e4m3_x(x):
        return stack.step(torch, x, ours_op, True)
    compiled = {q: torch.compile(fn, mode="reduce-overhead", fullgraph=True, dynamic=False if q else None)
                for q, fn in ((False, step_bf16_x), (True, step_e4m3_x))[:2 if fp8 else 1]}
    one_gemm = torch.compile(ours_op, mode="reduce-overhead", fullgraph=True)
    benches = _benches(torch, stack, ours_op, a) if a.bench else None
    ok = True
    gen = torch.Generator(device="cuda").manual_seed(1)
    for m in a.m:
        x = torch.randn(m, HIDDEN, generator=gen, device="cuda").to(torch.bfloat16)
        calls.clear()
        y = stack.step(torch, x, ours_recorded)
        gemms = len(calls)
        # and the activations quantized by the model (e4m3 x and scales to the GEMM)
        e_ref_q = _err(torch, stack.step(torch, x, ours_recorded, True), stack.reference(torch, x)) if fp8 else None
        e_gemm = max(_err(torch, yc, (gemm.dequantize_x(xc, sx) if sx is not None else
                                      x_as_the_gemm_sees_it(torch, g, xc, a.scale, w.shape[0])) @
                          dequantized[id(w)].t()) for xc, sx, w, yc in calls)
        want = stack.reference(torch, x)
        e_ref = _err(torch, y, want)
        # on a stream of the caller's, behind queued work that writes x: the GEMMs must wait for it
        s = torch.cuda.Stream()
        x2 = torch.zeros_like(x)
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            torch.cuda._sleep(2_000_000)
            x2.copy_(x)
            y2 = stack.step(torch, x2, ours)
        torch.cuda.current_stream().wait_stream(s)
        e_stream = _err(torch, y2, y)
        # compiled: one GEMM on the eager call's inputs gives its y (up to split K's order of f32 sums); the
        # stack, whose elementwise ops inductor fuses in f32 (other roundings of the activations that are then
        # quantized), is as far from float32 as the eager stack
        # (warm-up, record, replay): one GEMM of bf16 x and (fp8) one of e4m3 x, each against its eager call
        e_one = max(_err(torch, one_gemm(xc, w, scale_of[id(w)], sx).clone(), yc)
                    for xc, sx, w, yc in (calls[0], calls[-1]) for _ in range(3))
        e_comp = {q: max(_err(torch, step(x).clone(), want) for _ in range(3)) for q, step in compiled.items()}
        good = (e_gemm < (2e-2 if fp8 else 1e-2) and e_stream < 1e-2 and e_one < 1e-2
                and max(e_comp.values()) < 1.5 * e_ref + 1e-2 and (not fp8 or e_ref_q < 1.5 * e_ref + 1e-2))
        ok &= good
        print(f"M={m}: {'correct' if good else 'WRONG'}: {len(calls)} GEMMs, the largest error {e_gemm:.1e} of "
              f"max |y|; on a stream after queued work {e_stream:.1e} from eager; compiled (CUDA graphs): one GEMM "
              f"{e_one:.1e} from eager, the stack {e_comp[False]:.1e} from float32 with unquantized activations "
              f"(eager {e_ref:.1e})" + (f"; the activations quantized by the model: compiled {e_comp[True]:.1e}, "
                                        f"eager {e_ref_q:.1e}" if fp8 else ""))
        if a.bench:  # (and the step's GEMMs alone: the last step's calls again, on its inputs)
            _bench(torch, stack, x, benches, lambda last=calls[-gemms:]: [ours(xc, w, scale_of[id(w)], sx)
                                                                          for xc, sx, w, _ in last])
    return ok


def _benches(torch, stack, ours_op, a):
    """The decode steps --bench times, each compiled (torch.compile: inductor fuses the norm, SiLU and adds;
    shapes dynamic from the second batch size on): nvtma on bf16 activations, nvtma on activations the model
    quantizes (fp8 W: inductor fuses quantize_activations into the norm and SiLU), bf16 torch.matmul, and for
    per-tensor scales torch._scaled_mm on x quantized per tensor (as a user would call it)."""
    plain = Stack.__new__(Stack)
    plain.scale = "bf16"
    plain.layers = [[(wdq.to(torch.bfloat16), None, None) for _, _, wdq in layer] for layer in stack.layers]

    def scaled_mm(x, w, sw, _):
        mp = -(-x.shape[0] // 16) * 16  # (_scaled_mm takes rows in 16s)
        sx = x.abs().amax().float().clamp(min=1e-12) / 448
        xq = torch.nn.functional.pad((x / sx).to(torch.float8_e4m3fn), (0, 0, 0, mp - x.shape[0]))
        return torch._scaled_mm(xq, w.t(), scale_a=sx, scale_b=sw.reshape(()),
                                out_dtype=torch.bfloat16)[:x.shape[0]]
    # a function of its own each (torch.compile keeps its compiled graphs per function: one lambda for all
    # three reached the recompile limit, 8, at the third batch size)
    def nvtma_step(x):
        return stack.step(torch, x, ours_op)

    def nvtma_model_quantized_step(x):
        return stack.step(torch, x, ours_op, True)

    def bf16_step(x):
        return plain.step(torch, x, lambda x, w, _, __: x @ w.t())

    def scaled_mm_step(x):
        return stack.step(torch, x, scaled_mm)
    steps = {"nvtma": (nvtma_step, None)}
    if a.scale != "bf16":  # (static shapes: see run)
        steps["nvtma, the model quantizing"] = (nvtma_model_quantized_step, False)
    steps["bf16 torch.matmul"] = (bf16_step, None)
    if a.scale == "tensor":
        steps["torch._scaled_mm"] = (scaled_mm_step, None)
    return {name: torch.compile(step, fullgraph=True, dynamic=dynamic) for name, (step, dynamic) in steps.items()}


def _bench(torch, stack, x, benches, gemms_alone):
    """GPU us of one decode step over every layer, from CUDA-graph replays of each compiled step (torch's against
    the faster nvtma step), and of `gemms_alone` (the step's GEMM calls, no norm, SiLU or quantization)."""
    wbytes = sum(w.numel() * w.element_size() for layer in stack.layers for w, _, _ in layer)
    us = {name: graph_us(torch, lambda step=step: step(x)) for name, step in benches.items()}
    ours = {n: t for n, t in us.items() if n.startswith("nvtma")}
    print(f"  {len(stack.layers)} layers ({wbytes / 2 ** 20:.0f} MiB of W), compiled: " +
          "; ".join(f"{n} {t:.1f} us ({wbytes / t / 1e6:.2f} TB/s of W)" for n, t in ours.items()) +
          "".join(f"; {n} {t:.1f} us ({t / min(ours.values()):.2f}x)" for n, t in us.items() if n not in ours) +
          f"; the step's GEMMs alone {graph_us(torch, gemms_alone):.1f} us")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--m", type=int, nargs="+", default=[1, 8, 64], help="batch sizes (rows of x) to run")
    ap.add_argument("--scale", default="block", choices=["block", "tensor", "row", "bf16"],
                    help="e4m3 W with this scale, or bf16 W")
    ap.add_argument("--layers", type=int, default=6, help="MLPs in the stack (6: 264 MB of e4m3 W)")
    ap.add_argument("--sms", type=int, default=132, help="SMs the configs are planned for (the GPU's, with --run)")
    ap.add_argument("--aot", metavar="DIR", help="write every kernel's artifacts here (one folder per kernel)")
    ap.add_argument("--from", dest="load", metavar="DIR", help="load what --aot wrote instead of compiling")
    ap.add_argument("--run", action="store_true", help="run and check on the GPU")
    ap.add_argument("--bench", action="store_true", help="with --run, time a decode step beside torch")
    a = ap.parse_args(argv)
    if min(a.m) < 1 or a.layers < 1 or a.sms < 1:
        ap.error("--m, --layers and --sms: at least 1")
    torch = None
    if a.run:
        import torch
        a.sms = torch.cuda.get_device_properties(0).multi_processor_count
    g = gemm.Gemm(artifacts=a.load)
    fp8 = a.scale != "bf16"
    specs = {}  # key -> spec: every kernel the runs take, each once
    for m in a.m:
        for name, n, k in shapes():
            # bf16 activations (fp8 W: quantized in the GEMM or by quantize_x), and (fp8 W) the model's e4m3 ones
            blocks = dict.fromkeys(b - s for s, b in gemm.row_blocks(m, gemm.launch_rows(None, {}, a.sms)))
            for rows, quantize in [(r, q) for q in ((True, False) if fp8 else (False,)) for r in blocks]:
                spec, _, qspec = g.plan(rows, n, k, gemm.F8 if fp8 else "bf16", a.scale if fp8 else None,
                                        quantize=quantize, sms=a.sms)
                i = spec.info
                print(f"M={rows} {name} ({n} x {k}): BM={i['BM']} BN={i['BN']} warpgroups={i['wgs']} "
                      f"stages={i['stages']} kc={i['kc']} ms={i['ms']} mc={i['mc']}"
                      f"{', x the wgmmas A' if not i['swap'] else ''}"
                      f"{', x quantized inside' if i['x_scale'] == 'fused' else ''}"
                      f"{', x quantized first' if qspec is not None else ''}"
                      f"{', e4m3 x from the model' if fp8 and not quantize else ''}")
                specs.update((sp.key, sp) for sp in (spec, qspec) if sp is not None)
    # --run's check quantizes x as each call does (x_as_the_gemm_sees_it): both quantizers, whichever the
    # calls took
    specs.update((sp.key, sp) for sp in map(gemm.quantize_x_spec, ("block", "token") if fp8 else ()))
    for sp in specs.values() if not a.load else ():
        compiled = g.module(sp)
        if a.aot:
            compiled.save(Path(a.aot) / sp.key)
    if a.aot:
        print(f"wrote the kernels to {a.aot}")
    if not a.run:
        return 0
    ok = run(torch, g, a)
    print(f"ran on {torch.cuda.get_device_name()}: {'correct' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
