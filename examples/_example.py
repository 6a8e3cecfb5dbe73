"""What every example does besides its kernel: compile (or load the AOT
artifacts), print what was made, save, and run + check when a GPU is there.

An example calls ``main(doc, make_spec, check, add_args, ptx_ops=)``:
``make_spec(args)`` gives the kernel (a dsl Specialization: ``.ir``,
``.name``, ``.grid``), ``check(compiled, spec, args, torch) -> bool`` runs
it on the GPU and compares with torch; ``ptx_ops`` are patterns of the PTX
instructions worth reporting. It runs when a GPU is there (``--run`` insists).
"""

import argparse
import re

import nvtma


GEMM_CONFIG = ("BM,BN,wgs,splits[,mc[,stages[,ms[,kwg[,kc[,swap[,dsmem]]]]]]]] (ints; stages 0: the default ring; kwg "
               "0 or 1; kc: K steps a stage; swap 1, or 0: x the wgmmas' A; dsmem 1: splits 2 or 4 over a cluster, "
               "summed in shared memory, as x as A's always are)")


def gemm_config(text):
    """An argparse type: nvtma.kernels.gemm.Config from GEMM_CONFIG's form."""
    from nvtma.kernels import gemm
    try:
        vals = [int(v) for v in text.split(",")]
    except ValueError:
        vals = []
    if not 4 <= len(vals) <= 11 or any(len(vals) > i and vals[i] not in (0, 1) for i in (7, 9, 10)):
        raise argparse.ArgumentTypeError(f"{text!r}: {GEMM_CONFIG}")
    if len(vals) > 5 and vals[5] == 0:
        vals[5] = None
    for i in (7, 9, 10):
        if len(vals) > i:
            vals[i] = bool(vals[i])
    try:
        return gemm.given_config(vals)  # (the GEMM's rules for each field, as a Gemm call checks them)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{text!r}: {e}") from None


def gpu_ms(torch, fn, reps=50, trials=5):
    """GPU time of fn() in ms: after one warm-up call, the best of `trials`
    means over `reps` back-to-back calls, between CUDA events."""
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(trials):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(reps):
            fn()
        e.record()
        e.synchronize()
        best = min(best, s.elapsed_time(e) / reps)
    return best


def quantized_weight(torch, w32, scale):
    """(W as the GEMM takes it, its scale, W dequantized in float32) of a float32 [N, K] matrix: e4m3 with a
    per-tensor, per-row or 128x128 block scale (amax / 448), or bf16 ("bf16": no scale)."""
    if scale == "bf16":
        w = w32.to(torch.bfloat16)
        return w, None, w.float()
    if scale in ("tensor", "row"):
        sw = (w32.abs().amax().reshape(1) if scale == "tensor" else w32.abs().amax(1)).clamp(min=1e-12) / 448
        s = sw if scale == "tensor" else sw[:, None]
        w = (w32 / s).to(torch.float8_e4m3fn)
        return w, sw, w.float() * s
    n, k = w32.shape
    nb, kb = -(-n // 128), -(-k // 128)
    blocks = torch.nn.functional.pad(w32, (0, kb * 128 - k, 0, nb * 128 - n)).view(nb, 128, kb, 128)
    sw = blocks.abs().amax((1, 3)).clamp(min=1e-12) / 448
    w = (blocks / sw[:, None, :, None]).reshape(nb * 128, kb * 128)[:n, :k].to(torch.float8_e4m3fn)
    wdq = (torch.nn.functional.pad(w.float(), (0, kb * 128 - k, 0, nb * 128 - n)).view(nb, 128, kb, 128)
           * sw[:, None, :, None]).reshape(nb * 128, kb * 128)[:n, :k]
    return w, sw.contiguous(), wdq


def x_as_the_gemm_sees_it(torch, g, x, scale, n, config=None, options=None):
    """bf16 x [M, K] quantized as g's call of it by a W of `n` rows quantizes it (inside the GEMM: 1x128 blocks;
    by quantize_x first: per token, or per 1x128 block for block-scaled W; past a launch's rows each block of
    rows as its own call), then dequantized in float32; x as it is for bf16 W (`scale` "bf16" or None)."""
    from nvtma.kernels import gemm
    if scale in ("bf16", None):
        return x.float()
    options = options or {}
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    parts = []
    for s, b in gemm.row_blocks(x.shape[0], gemm.launch_rows(config, options, sms)):
        spec = g.plan(b - s, n, x.shape[1], gemm.F8, scale, quantize=True, sms=sms, config=config, **options)[0]
        fused = spec.info["x_scale"] == "fused"
        parts.append(gemm.dequantize_x(*g.quantize(x[s:b], "block" if fused or scale == "block" else "token")))
    return torch.cat(parts)


def graph_us(torch, fn, calls=1, replays=10):
    """GPU us of one fn() from CUDA-graph replays (host time out): `calls` calls captured in one graph on a
    side stream (after a warm-up call there), the best of `replays` replays, each between CUDA events on the
    stream the replay runs on."""
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=s):
        for _ in range(calls):
            fn()
    best = float("inf")
    for _ in range(replays):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(s):
            e0.record()
            graph.replay()
            e1.record()
        e1.synchronize()
        best = min(best, e0.elapsed_time(e1) * 1e3 / calls)
    return best


def report(compiled, spec, ptx_ops=()):
    ptx = compiled.ptx
    print(f"compiled {spec.name} in {compiled.compile_seconds * 1e3:.1f} ms"
          f"{' (cache hit)' if compiled.from_cache else ''}")
    tensor = sorted(set(re.findall(r"cp\.(?:reduce\.)?async\.bulk\.tensor\.[\w:.]+", ptx)))
    print(f"  PTX: {len(ptx.splitlines())} lines; {', '.join(tensor) or 'no tensor copies'}; "
          f"{ptx.count('.param .align 64 .b8')} grid-constant descriptor params")
    if ptx_ops:
        found = sorted({m for p in ptx_ops for m in re.findall(p, ptx)})
        print(f"  PTX instructions: {', '.join(found) or 'none'}")
    print(f"  cubin: {len(compiled.cubin)} bytes")
    for d in compiled.descriptor_records(spec.name):
        tmpl = bytes.fromhex(d["template"]) if d.get("template") else None
        byte10 = f", descriptor byte 10 = 0x{tmpl[10]:02x}" if tmpl else ""
        if d.get("mode") == "im2col":
            box = (f"im2col {d['pixels_per_column']} pixels x {d['channels_per_pixel']} channels, corners "
                   f"{d['pixel_box_lower_corner']}..{d['pixel_box_upper_corner']}")
        else:
            box = f"tiled box {d['box_dim'][::-1]}"
        print(f"  descriptor for argument {d['binds']}: {box} {d['tma_format_name']}, "
              f"l2_promotion {d['l2_promotion_name']}{byte10}")
    try:
        sass = compiled.sass()
        ops = sorted(set(re.findall(r"\b(UTMA[A-Z]+|UBLKCP|UBLKRED|SYNCS[.A-Z]*)\b", sass)))
        print(f"  SASS: {', '.join(ops)}")
    except (FileNotFoundError, nvtma.CompileError) as e:
        print(f"  SASS: skipped ({e})")


def main(doc, make_spec, check, add_args=None, argv=None, ptx_ops=()):
    ap = argparse.ArgumentParser(description=doc.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=doc)
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--aot", metavar="DIR", help="write module.ptx, module.cubin and kernels.json here")
    ap.add_argument("--from", dest="load", metavar="DIR",
                    help="run the AOT artifacts in DIR (made with the same flags): needs only the runtime, not MLIR")
    ap.add_argument("--run", action="store_true", help="run and check on the GPU (the default when one is there; "
                    "an error without one)")
    if add_args:
        add_args(ap)
    a = ap.parse_args(argv)
    try:
        spec = make_spec(a)
        if not a.load:
            spec.ir  # (built here: a kernel's build refuses some flags)
    except ValueError as e:  # (the kernel's refusal of these flags, KernelBuildError too: the rule and value)
        ap.error(str(e))
    if a.load:
        from nvtma import runtime
        compiled = runtime.load(a.load)
        print(f"loaded {spec.name} from {a.load}")
    else:
        try:
            compiled = nvtma.compile(spec.ir, arch=a.arch)  # the DSL kernel traced to IR text
        except nvtma.CompileError as e:
            print(f"error: {e}")
            return 2
        report(compiled, spec, ptx_ops)
        if a.aot:
            print(f"  wrote {compiled.save(a.aot)}/module.ptx, module.cubin, kernels.json")
    try:
        import torch
        if not torch.cuda.is_available():
            raise ImportError
    except ImportError:
        print("no GPU (or no torch): compiled only")
        return 1 if a.run else 0
    ok = check(compiled, spec, a, torch)
    print(f"ran on {torch.cuda.get_device_name()}: {'correct' if ok else 'WRONG'}")
    return 0 if ok else 1
