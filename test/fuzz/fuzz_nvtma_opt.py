#!/usr/bin/env python3
"""Mutation fuzzer for nvtma-opt.

Takes valid nvtma IR (the lit inputs, split at `// -----`, and the kernels
of nvtma.kernels), mutates it (token swaps, enum and integer perturbations,
dropped operands and lines, truncation) and runs nvtma-opt on each mutant,
with and without the nvtma-to-ptx pipeline. A signal, an LLVM/MLIR crash
banner ("Stack dump", "LLVM ERROR", "PLEASE submit a bug report") or a hang
is a bug: the input is saved to --crashes. Diagnostics and non-zero exits
are the expected outcome for garbage.

    python test/fuzz/fuzz_nvtma_opt.py --iterations 2000 --seed 1 --crashes /tmp/crashes

Under AddressSanitizer/UBSan (cmake -DNVTMA_ENABLE_SANITIZERS=ON, then
--opt build-asan/bin/nvtma-opt), sanitizer reports count as crashes. The
MLIR/LLVM wheels are not sanitizer builds, so LLVM's allocator annotations in
header code compiled into nvtma-opt disagree with the uninstrumented
libLLVM: the fuzzer sets ASAN_OPTIONS=allow_user_poisoning=0 (unless you set
ASAN_OPTIONS yourself), which keeps every other check.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CRASH_MARKERS = ("Stack dump", "LLVM ERROR", "PLEASE submit a bug report", "Assertion", "Segmentation fault",
                 # a -DNVTMA_ENABLE_SANITIZERS=ON build of nvtma-opt
                 "ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")
ENUMS = ["none", "l2_64b", "l2_128b", "l2_256b", "swizzle_32b", "swizzle_64b", "swizzle_128b",
         "swizzle_128b_atom_32b", "swizzle_128b_atom_32b_flip_8b", "swizzle_128b_atom_64b", "interleave_16b",
         "interleave_32b", "nan_request_zero_fma", "float16", "bfloat16", "float32", "tfloat32", "uint8", "int64",
         "u4x16_align16b", "load", "store", "reduce", "load_multicast", "im2col_load", "gather4_load", "add", "max",
         "and", "g2s", "s2g", "s2s_cluster", "g2s_multicast", "s2g_bytemask"]
INTS = [0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 63, 64, 65, 127, 128, 129, 255, 256, 257, 512, 1024, 4096, 65536,
        2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 32 + 1, 2 ** 40, 2 ** 63 - 1, -1, -128, -32768, -2 ** 31]
TYPES = ["f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "i4", "i1", "index", "f8E4M3FN", "ui32"]


def seeds() -> list[str]:
    out = []
    for p in sorted((REPO / "test").rglob("*.mlir")):
        if "fuzz" in p.parts:
            continue
        text = p.read_text()
        for chunk in text.split("// -----"):
            lines = [ln for ln in chunk.splitlines() if not ln.strip().startswith("// RUN")]
            if "nvtma." in chunk:
                out.append("\n".join(lines))
    sys.path.insert(0, str(REPO / "python"))
    try:
        from nvtma import kernels as K
        for spec in (K.tile_copy((300, 500), "f32", (32, 32), "swizzle_128b"), K.pipelined_copy(1024, 1024),
                     K.multicast_copy(256, 256, "f16", (64, 64), 2), K.reduce_add(128, 128),
                     K.im2col_dump(2, 8, 8, 64), K.update_descriptor(128, 128), K.bulk_roundtrip(4096),
                     K.box_dump((20, 40), "f32", (8, 32), "none", (16, 20))):
            out.append(spec.ir)
    except Exception:
        pass
    return out


def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.choice([1, 1, 2, 3])):
        kind = rng.randrange(8)
        if kind == 0:  # integer perturbation
            nums = list(re.finditer(r"(?<![%\w#])-?\d+", text))
            if nums:
                m = rng.choice(nums)
                text = text[:m.start()] + str(rng.choice(INTS)) + text[m.end():]
        elif kind == 1:  # enum keyword swap
            words = [m for m in re.finditer(r"\b(" + "|".join(map(re.escape, ENUMS)) + r")\b", text)]
            if words:
                m = rng.choice(words)
                text = text[:m.start()] + rng.choice(ENUMS) + text[m.end():]
        elif kind == 2:  # element type swap
            ts = list(re.finditer(r"\b(f16|bf16|f32|i8|i32|f64|i64)\b", text))
            if ts:
                m = rng.choice(ts)
                text = text[:m.start()] + rng.choice(TYPES) + text[m.end():]
        elif kind == 3:  # drop an operand
            ops = list(re.finditer(r", %[\w#]+", text))
            if ops:
                m = rng.choice(ops)
                text = text[:m.start()] + text[m.end():]
        elif kind == 4:  # drop or duplicate a line
            lines = text.splitlines()
            if len(lines) > 2:
                i = rng.randrange(len(lines))
                if rng.random() < 0.5:
                    del lines[i]
                else:
                    lines.insert(i, lines[i])
                text = "\n".join(lines)
        elif kind == 5:  # truncate
            text = text[: rng.randrange(max(1, len(text)))]
        elif kind == 6:  # swap two SSA names
            names = re.findall(r"%[\w#]+", text)
            if len(names) > 1:
                a, b = rng.sample(names, 2)
                text = text.replace(a, "\0").replace(b, a).replace("\0", b)
        else:  # swap two tokens
            toks = re.split(r"(\s+)", text)
            if len(toks) > 4:
                i, j = rng.randrange(0, len(toks), 2), rng.randrange(0, len(toks), 2)
                toks[i], toks[j] = toks[j], toks[i]
                text = "".join(toks)
    return text


def run_one(opt: str, text: str, args: list, timeout: float):
    try:
        r = subprocess.run([opt, "-", *args], input=text, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", ""
    if r.returncode < 0:
        return f"signal {-r.returncode}", r.stderr[-2000:]
    if any(m in r.stderr for m in CRASH_MARKERS):
        return "crash banner", r.stderr[-2000:]
    return ("ok" if r.returncode == 0 else "diagnosed"), ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=None, help="stop after this many seconds")
    ap.add_argument("--crashes", default="fuzz-crashes")
    ap.add_argument("--opt", default=os.environ.get("NVTMA_OPT", "nvtma-opt"))
    os.environ.setdefault("ASAN_OPTIONS", "allow_user_poisoning=0")
    ap.add_argument("--timeout", type=float, default=20.0)
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    corpus = seeds()
    counts = {"ok": 0, "diagnosed": 0}
    bugs = []
    t0 = time.time()
    n = 0
    pipelines = [[], ["--nvtma-to-ptx"], ["--convert-nvtma-to-nvvm"]]
    for n in range(1, a.iterations + 1):
        if a.seconds and time.time() - t0 > a.seconds:
            n -= 1
            break
        text = mutate(rng.choice(corpus), rng)
        args = rng.choice(pipelines)
        status, err = run_one(a.opt, text, args, a.timeout)
        if status in counts:
            counts[status] += 1
            continue
        bugs.append(status)
        d = Path(a.crashes)
        d.mkdir(parents=True, exist_ok=True)
        (d / f"crash-{a.seed}-{n}.mlir").write_text(f"// nvtma-opt {' '.join(args)}: {status}\n{text}")
        (d / f"crash-{a.seed}-{n}.log").write_text(err)
    print(json.dumps(dict(inputs=n, seconds=round(time.time() - t0, 1), **counts, bugs=len(bugs),
                          kinds=sorted(set(bugs)))))
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
