#!/usr/bin/env python3
"""Fuzzer for nvtma-opt: mutated lit inputs and structured kernels.

Three generators feed nvtma-opt, each input under one of several pass
pipelines (none, nvtma-to-ptx with a random target, the nvtma passes one by
one):
  - mutation: valid nvtma IR (the lit inputs split at `// -----`) mutated by
    token swaps, enum and integer perturbations, dropped operands and lines,
    truncation, and the inputs that once ended the process: chips and PTX
    versions LLVM cannot select, deep nesting, huge literals, dense index
    arrays, symbol names that are not UTF-8 or not PTX names (and, with
    INT_TYPE_MUTATIONS, integer attributes and memory spaces of unsigned,
    signed or wider-than-64-bit types);
  - structured (--generator atoms): kernels built from TMA atoms and the
    ops that use them: mostly valid ones (built by the dialect's rules, so
    that the lowering runs), some with random fields and extreme values
    under random targets, some of the valid ones mutated; and kernels whose
    memref parameters reach vector loads, bulk copies, descriptor updates
    and TMA atoms through scf.for iter_args, scf.if results, casts and
    subviews (what the kernel records trace), on many chips;
  - bytecode: the lit inputs that parse, written as MLIR bytecode, with one
    to four bytes changed or the tail cut (MLIR's bytecode reader aborts,
    raises fatal errors and loops on such input; nvtma-opt reads bytecode in
    a child first, with --nvtma-bytecode-read-limit=2 here).

A signal, an LLVM/MLIR crash banner ("Stack dump", "LLVM ERROR", "PLEASE
submit a bug report"), a sanitizer report, a hang (--timeout seconds per
input) or an output that differs between two runs (timing properties
ignored) is a bug: the input is saved to --crashes. Diagnostics and non-zero
exits are the expected outcome for garbage.

Text inputs run --batch at a time through one nvtma-opt (-split-input-file);
a batch that fails is replayed one input at a time to name the culprit.
Bytecode inputs run one at a time (bytecode cannot be split).

    python test/fuzz/fuzz_nvtma_opt.py --iterations 2000 --seed 1 --crashes /tmp/crashes
    python test/fuzz/fuzz_nvtma_opt.py --generator atoms --iterations 2000 --opt build/asan/bin/nvtma-opt
    python test/fuzz/fuzz_nvtma_opt.py --generator bytecode --iterations 2000 --seed 1

Under AddressSanitizer/UBSan (cmake -DNVTMA_ENABLE_SANITIZERS=ON, then
--opt build/asan/bin/nvtma-opt), sanitizer reports count as crashes. The
MLIR/LLVM wheels are not sanitizer builds, so LLVM's allocator annotations in
header code compiled into nvtma-opt disagree with the uninstrumented
libLLVM: the fuzzer sets ASAN_OPTIONS=allow_user_poisoning=0 (unless you set
ASAN_OPTIONS yourself), which keeps every other check.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# What a crash prints, at the start of a line: diagnostics echo the input's
# source lines, and an input may contain these words.
CRASH_MARKERS = re.compile(
    r"^(Stack dump:|LLVM ERROR:|PLEASE submit a bug report|.*: Assertion `.*' failed|Segmentation fault"
    # a -DNVTMA_ENABLE_SANITIZERS=ON build of nvtma-opt
    r"|==\d+==ERROR: (AddressSanitizer|LeakSanitizer)|\S+:\d+:\d+: runtime error:)", re.M)
# Fields of the output that legitimately differ between runs.
TIMING = re.compile(r"(LLVMIRToISATimeInMs|ISAToBinaryTimeInMs)\s*=\s*\d+\s*:\s*i64"
                    # the bytecode reader's "bytecode buffer 0x... is not aligned"
                    r"|(?<=bytecode buffer )0x[0-9a-f]+")
SPLIT = "// -----"

ENUMS = ["none", "l2_64b", "l2_128b", "l2_256b", "swizzle_32b", "swizzle_64b", "swizzle_128b",
         "swizzle_128b_atom_32b", "swizzle_128b_atom_32b_flip_8b", "swizzle_128b_atom_64b", "interleave_16b",
         "interleave_32b", "nan_request_zero_fma", "float16", "bfloat16", "float32", "tfloat32", "uint8", "int64",
         "u4x16_align16b", "load", "store", "reduce", "load_multicast", "im2col_load", "gather4_load", "add", "max",
         "and", "g2s", "s2g", "s2s_cluster", "g2s_multicast", "s2g_bytemask"]
INTS = [0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 63, 64, 65, 127, 128, 129, 255, 256, 257, 512, 1024, 4096, 65536,
        2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 32 + 1, 2 ** 40, 2 ** 63 - 1, -1, -128, -32768, -2 ** 31]
TYPES = ["f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "i4", "i1", "index", "f8E4M3FN", "ui32", "i6"]
# Chips and PTX versions, LLVM 22's and others (issue 16: sm_91a, sm_92, sm_95
# "Cannot select"; sm_100f, sm_110a with the default +ptx86: LLVM ERROR).
CHIPS = ["sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_101a", "sm_103f", "sm_110a", "sm_120a", "sm_121f",
         "sm_80", "sm_89", "sm_91a", "sm_92", "sm_95", "sm_99", "sm_100x", "sm_", "sm_9000", "gfx90a", ""]
FEATURES = ["+ptx80", "+ptx83", "+ptx86", "+ptx87", "+ptx88", "+ptx90", "+ptx78", "+ptx91", "+ptx99", "+ptx",
            "", "+ptx86,+ptx88", "+sm_90a", "-ptx86", "+ptx0086"]
# Chips LLVM serves, each with a PTX version it takes (lib/Target/TargetInfo.cpp's table: the oldest, or newer).
# Integer attributes and memory spaces of unsigned, signed or wider-than-64-bit types (mutation kind 13):
# they found IntegerAttr::getInt() aborts in getAddressSpace, checkSharedAlloc, checkAlignments,
# FinalizeDescriptorParams, the inline asm's nvtma.align and the mbarrier group's memory space (all
# diagnostics now); False makes kind 13 a kind 12 (launch attributes).
INT_TYPE_MUTATIONS = True
# Symbol names MLIR takes and the records, PTX or LLVM may not (mutation kind 14): bytes that are not UTF-8 (one
# ended nvtma-opt in llvm::json), a NUL, spaces, non-ASCII letters, an empty name, a dot, a leading digit.
NAMES = ["{}\\FF", "\\C3{}", "my {}", "{}\\00", "gr\\C3\\B6\\C3\\9Fe{}", "", "{}.x", "1{}", "llvm.{}"]
TARGETS = [("sm_90a", 80), ("sm_90a", 86), ("sm_100", 86), ("sm_100a", 86), ("sm_100f", 88), ("sm_103a", 88),
           ("sm_103f", 90), ("sm_110", 90), ("sm_110f", 90), ("sm_120a", 87), ("sm_121a", 88)]


def seeds() -> list[str]:
    out = []
    for p in sorted((REPO / "test").rglob("*.mlir")):
        if "fuzz" in p.relative_to(REPO).parts:  # the checkout itself may sit in a folder named fuzz
            continue
        text = p.read_text()
        for chunk in text.split(SPLIT):
            lines = [ln for ln in chunk.splitlines() if not ln.strip().startswith("// RUN")]
            if "nvtma." in chunk or "gpu.module" in chunk:
                out.append("\n".join(lines))
    return out


def _huge(rng: random.Random) -> str:
    n = rng.choice([129, 200, 1000, 20000, 100000])
    return ("0x" + "f" * n) if rng.random() < 0.3 else "9" * n


def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.choice([1, 1, 2, 3])):
        kind = rng.randrange(15)
        if kind == 13 and not INT_TYPE_MUTATIONS:
            kind = 12
        if kind == 0:  # integer perturbation
            nums = list(re.finditer(r"(?<![%\w#])-?\d+", text))
            if nums:
                m = rng.choice(nums)
                text = text[:m.start()] + str(rng.choice(INTS)) + text[m.end():]
        elif kind == 1:  # enum keyword swap
            words = list(re.finditer(r"\b(" + "|".join(map(re.escape, ENUMS)) + r")\b", text))
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
        elif kind == 7:  # swap two tokens
            toks = re.split(r"(\s+)", text)
            if len(toks) > 4:
                i, j = rng.randrange(0, len(toks), 2), rng.randrange(0, len(toks), 2)
                toks[i], toks[j] = toks[j], toks[i]
                text = "".join(toks)
        elif kind == 8:  # a target LLVM may not serve
            target = f'#nvvm.target<chip = "{rng.choice(CHIPS)}", features = "{rng.choice(FEATURES)}"' + (
                f", O = {rng.choice([0, 3, 4, -1, 99])}>" if rng.random() < 0.3 else ">")
            if "#nvvm.target<" in text:
                text = re.sub(r"#nvvm\.target<[^>]*>", target, text, count=1)
            else:
                text = re.sub(r"(gpu\.module @\w+)", lambda m: f"{m.group(1)} [{target}]", text, count=1)
        elif kind == 9:  # deep nesting
            depth = rng.choice([255, 256, 257, 300, 5000, 20000])
            if rng.random() < 0.5:
                text = f"module attributes {{a = {'[' * depth}{']' * depth}}} {{}}\n" + text
            else:
                text = text + "\nfunc.func @deep(%c: i1) {\n" + "scf.if %c {\n" * depth + "}\n" * depth + \
                    "return\n}\n"
        elif kind == 10:  # huge literal
            nums = list(re.finditer(r"(?<![%\w#])\d+", text))
            if nums:
                m = rng.choice(nums)
                text = text[:m.start()] + _huge(rng) + text[m.end():]
        elif kind == 11:  # dense index arrays
            text = text.replace("array<i64", "array<index", 1) if rng.random() < 0.7 else text + "\narray<index"
        elif kind == 13:  # integers of other types: unsigned, signed, past 64 bits (attributes, memory spaces)
            ints = list(re.finditer(r"(?<![%\w#])(-?\d+) : (i64|i32|i16|index)\b", text))
            if ints and rng.random() < 0.6:
                m = rng.choice(ints)
                t = rng.choice(["ui32", "si64", "ui64", "i128", "i1"])
                v = str(2 ** 70) if t == "i128" and rng.random() < 0.5 else m.group(1)
                text = text[:m.start()] + f"{v} : {t}" + text[m.end():]
            else:  # every use of one memory space, so that the types still match
                space = rng.choice(["3 : ui32", "1 : ui32", f"{2 ** 70} : i128", "3", "1 : i64", "-1"])
                text = text.replace(f"#gpu.address_space<{rng.choice(['workgroup', 'global'])}>", space)
        elif kind == 14:  # one symbol renamed everywhere it stands, quoted
            names = sorted(set(re.findall(r"@([A-Za-z_$][\w$.]*)", text)))
            if names:
                old = rng.choice(names)
                new = rng.choice(NAMES).format(old)
                text = re.sub(rf"@{re.escape(old)}(?![\w$.])", lambda _: f'@"{new}"', text)
        else:  # launch attributes with odd values (kind 12)
            attrs = rng.choice([
                "known_block_size = array<i32: 4096, 1, 1>", "known_cluster_size = array<i32: 8, 8, 8>",
                "nvtma.dynamic_smem = 999999999 : i64", "nvtma.dynamic_smem = -1 : i64",
                "nvtma.dynamic_smem = \"x\"", "known_block_size = array<i32: 0, 1, 1>",
                "known_block_size = array<i32: 128>", "nvtma.descriptor_params = [1]", "nvtma.kernels = 3"])
            text = re.sub(r"\) kernel \{", f") kernel attributes {{{attrs}}} {{", text, count=1)
    return text


# --------------------------------------------------------------------------- structured atoms and ops

KINDS = ["load", "load_multicast", "store", "reduce", "im2col_load", "im2col_load_multicast", "im2col_store",
         "gather4_load"]
SWIZZLES = ["none", "swizzle_32b", "swizzle_64b", "swizzle_128b", "swizzle_128b_atom_32b",
            "swizzle_128b_atom_32b_flip_8b", "swizzle_128b_atom_64b"]
FORMATS = ["uint8", "uint16", "uint32", "int32", "uint64", "int64", "float16", "float32", "float64", "bfloat16",
           "float32_ftz", "tfloat32", "tfloat32_ftz", "u4x16_align8b", "u4x16_align16b", "u6x16_align16b"]
ELEMS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "i4": 4, "i6": 6,
         "f8E4M3FN": 8, "ui32": 32}
DIMS = [1, 2, 3, 4, 8, 16, 32, 48, 64, 100, 128, 256, 257, 512, 0, -1, 2 ** 31, 2 ** 40]


def _pick(rng, good, bad, p_bad=0.15):
    return rng.choice(bad) if rng.random() < p_bad else good


def atom(rng: random.Random, rank: int | None = None):
    """(type text, kind, element, rank, tile): a random atom, mostly valid."""
    kind = rng.choice(KINDS)
    elem = rng.choice(list(ELEMS))
    im2col = kind.startswith("im2col")
    if rank is None:
        rank = rng.randint(3, 5) if im2col else (2 if kind == "gather4_load" else rng.randint(1, 5))
    bits = ELEMS[elem]
    if im2col:
        box = [rng.choice([8, 16, 32, 64, 128]), _pick(rng, max(1, 128 // max(bits, 1)) * rng.choice([1, 2]), DIMS)]
    elif kind == "gather4_load":
        box = [4, rng.choice([16, 32, 64, 128])]
    else:
        box = [_pick(rng, rng.choice([1, 2, 8, 16, 32, 64, 128, 256]), DIMS) for _ in range(rank)]
        box[-1] = _pick(rng, max(1, (rng.choice([16, 32, 64, 128]) * 8) // max(bits, 1)), DIMS)
    fields = []
    if rng.random() < 0.2:
        fields.append(f"tma_format = {rng.choice(FORMATS)}")
    fields.append("box = [" + ", ".join(map(str, box)) + "]")
    tile = list(box)
    if rng.random() < 0.3:
        tile = [b * rng.choice([1, 1, 2, 4]) if b > 0 else b for b in box]
        if rng.random() < 0.1:
            tile[0] += 1
        fields.append("tile = [" + ", ".join(map(str, tile)) + "]")
    for key, values in (("swizzle", SWIZZLES), ("l2_promotion", ["none", "l2_64b", "l2_128b", "l2_256b"]),
                        ("interleave", ["none", "interleave_16b", "interleave_32b"]),
                        ("oob_fill", ["none", "nan_request_zero_fma"])):
        if rng.random() < 0.35:
            fields.append(f"{key} = {rng.choice(values)}")
    if rng.random() < 0.2:
        n = rank if rng.random() < 0.8 else rank + 1
        fields.append("element_strides = [" + ", ".join(str(_pick(rng, rng.randint(1, 8), [0, 9, -1, 2 ** 32]))
                                                         for _ in range(n)) + "]")
    if "multicast" in kind or rng.random() < 0.05:
        fields.append(f"multicast = {_pick(rng, rng.choice([1, 2, 4]), [0, 17, 2 ** 32 - 1])}")
    if rng.random() < 0.1:
        fields.append(f"cta_group = {rng.choice([1, 2, 3])}")
    if kind == "reduce" and rng.random() < 0.6:
        fields.append(f"reduction = {rng.choice(['add', 'min', 'max', 'inc', 'dec', 'and', 'or', 'xor'])}")
    if im2col:
        n = rank - 2
        lo = [_pick(rng, rng.randint(-4, 0), [-2 ** 15, 2 ** 15, -2 ** 40]) for _ in range(n)]
        up = [_pick(rng, rng.randint(-4, 0), [-2 ** 15, 2 ** 15, 2 ** 40]) for _ in range(n)]
        fields += ["lower_corner = [" + ", ".join(map(str, lo)) + "]",
                   "upper_corner = [" + ", ".join(map(str, up)) + "]"]
    if rng.random() < 0.3:
        rng.shuffle(fields)  # any order parses
    return f"!nvtma.tma_atom<{kind}, {elem}, " + ", ".join(fields) + ">", kind, elem, rank, tile


def structured_kernel(rng: random.Random) -> str:
    """A gpu.module with a kernel using one or two random atoms."""
    chip = rng.choice(["sm_90a"] * 5 + ["sm_100a"] * 3 + CHIPS)
    feats = rng.choice(["+ptx86"] * 6 + FEATURES)
    target = f'[#nvvm.target<chip = "{chip}", features = "{feats}">]' if rng.random() < 0.9 else ""
    t, kind, elem, rank, tile = atom(rng)
    shape = [_pick(rng, rng.choice([64, 128, 256, 1000, 4096]), ["?", 0, 2 ** 40]) for _ in range(rank)]
    mem = "memref<" + "x".join(map(str, shape)) + f"x{elem}>"
    smem_shape = [t_ if isinstance(t_, int) and t_ > 0 else 1 for t_ in tile] if rng.random() < 0.85 else \
        [rng.choice([1, 64, 128])] * rank
    smem = "memref<" + "x".join(map(str, smem_shape)) + f"x{elem}, #gpu.address_space<workgroup>>"
    bars = "!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>"
    coords = rank if kind != "gather4_load" else 5
    if rng.random() < 0.1:
        coords += rng.choice([-1, 1])
    coord_list = ", ".join(["%c0"] * max(coords, 0))
    launch = rng.choice(["", "", " attributes {known_block_size = array<i32: 128, 1, 1>}",
                         " attributes {known_cluster_size = array<i32: 2, 1, 1>, nvtma.dynamic_smem = 4096 : i64}",
                         " attributes {known_block_size = array<i32: 2048, 1, 1>}"])
    body = ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
            f"%bars = nvgpu.mbarrier.create -> {bars}",
            f"%a = nvtma.make_tiled_tma_atom %A {{cta_tiler = array<i64: {', '.join(map(str, tile))}>}} : {mem} -> {t}"]
    is_load = kind in ("load", "load_multicast", "im2col_load", "im2col_load_multicast", "gather4_load")
    copy = f"nvtma.copy %a[{coord_list}], %s"
    extra = []
    if is_load:
        copy += ", barrier %bars[%c0]"
    if kind.startswith("im2col") and is_load:
        body.append("%o = arith.constant 0 : i16")
        copy += " offsets[" + ", ".join(["%o"] * (rank - 2)) + "]"
    if "multicast" in kind:
        body.append("%m = arith.constant 3 : i16")
        copy += " mask %m cta %c0"
    copy += f" : {t}, {smem}" + (f", {bars}" if is_load else "")
    body.append(copy)
    if rng.random() < 0.3:
        extra.append(f"nvtma.prefetch_descriptor %a : {t}")
    if rng.random() < 0.15:
        extra.append(f"nvtma.update_tma_descriptor %a, %A, %g : {t}, {mem}, !llvm.ptr<1>")
        extra.append("nvtma.fence_tma_desc_release")
    if rng.random() < 0.15:
        shape = f"{rng.choice([1, 2, 4, 17])}, {rng.choice([1, 2, 2 ** 40])}"
        extra.append(f"%mm = nvtma.create_tma_multicast_mask [%c0, %c1] {{cluster_shape = array<i64: {shape}>, "
                     f"mode = {rng.choice([0, 1, 2])} : i64}} : i16")
    if rng.random() < 0.1:
        extra.append(f"%pc:{len(tile)} = nvtma.tma_partition %a[" + ", ".join(["%c1"] * len(tile)) + f"] : {t} -> "
                     + ", ".join(["index"] * len(tile)))
    if not is_load:
        extra += ["nvtma.bulk_commit_group", f"nvtma.bulk_wait_group {rng.choice([0, 1, 7])}"]
    rng.shuffle(extra)
    body += extra
    body.append("gpu.return")
    wg = f"workgroup(%s: {smem}) " if rng.random() < 0.95 else ""
    lines = ["module attributes {gpu.container_module} {", f"  gpu.module @m {target} {{",
             f"    gpu.func @k(%A: {mem}, %g: !llvm.ptr<1>) {wg}kernel{launch} {{"]
    lines += ["      " + b for b in body]
    lines += ["    }", "  }", "}"]
    return "\n".join(lines)


def _cute_box(tile, multicast, swizzle, bits):
    """CuTe's box rule (nvtma::tensormap::cuteBox), for non-interleaved
    atoms."""
    span = {"none": 0, "swizzle_32b": 32, "swizzle_64b": 64}.get(swizzle, 128)
    box = []
    for i, extent in enumerate(tile):
        extent = extent // multicast if i == 0 else extent
        cap = 256
        if i == len(tile) - 1 and span:
            cap = min(cap, max(1, span * 8 // bits))
        b = min(extent, cap)
        while b > 1 and extent % b:
            b -= 1
        box.append(b)
    return box


def valid_kernel(rng: random.Random) -> str:
    """A kernel that should lower to PTX: atoms built by the dialect's rules
    (the CuTe box, spans, formats, targets), the copies that fit them."""
    kind = rng.choice(["load", "load", "load_multicast", "store", "store", "reduce", "im2col_load", "im2col_store",
                       "gather4_load"])
    elem = "i32" if kind == "reduce" else rng.choice(["f16", "bf16", "f32", "i8", "f8E4M3FN", "f64", "i64"])
    bits = ELEMS[elem]
    chip, ptx = ("sm_100a", 86) if kind == "gather4_load" or rng.random() < 0.2 else ("sm_90a", 86)
    if rng.random() < 0.3:
        chip, ptx = rng.choice(TARGETS)
    fields = {}
    swizzle = rng.choice(["none", "swizzle_32b", "swizzle_64b", "swizzle_128b"])
    multicast = 1
    if kind == "gather4_load":
        rank, tile = 2, [4, rng.choice([16, 32, 64]) * 128 // bits // 8 * 8 or 16]
        box, swizzle = list(tile), "none"
    elif kind.startswith("im2col"):
        rank = rng.randint(3, 5)
        channels = rng.choice([1, 2, 4]) * 128 // bits
        box = [rng.choice([8, 16, 32, 64]), channels]
        tile = list(box)
        swizzle = "none" if channels * bits // 8 > 128 else swizzle
        if channels * bits // 8 > {"none": 1 << 30, "swizzle_32b": 32, "swizzle_64b": 64}.get(swizzle, 128):
            swizzle = "none"
        n = rank - 2
        fields["lower_corner"] = [rng.randint(-2, 0) for _ in range(n)]
        fields["upper_corner"] = [rng.randint(-2, 0) for _ in range(n)]
    else:
        rank = rng.randint(1, 5)
        unit = max(1, 128 // bits)  # 16 bytes of elements
        tile = [rng.choice([1, 2, 4, 8, 16, 32, 64]) for _ in range(rank - 1)] + [unit * rng.choice([1, 2, 4, 8])]
        if kind == "load_multicast":
            multicast = rng.choice([2, 4])
            tile[0] = max(tile[0], 1) * multicast
        box = _cute_box(tile, multicast, swizzle, bits)
        if (box[-1] * bits // 8) % 16:
            swizzle = "none"
            box = _cute_box(tile, multicast, swizzle, bits)
        if any((t % b) for t, b in zip(tile, box)) or (box[-1] * bits // 8) % 16 or \
                math.prod(tile) * bits // 8 > 96 * 1024:
            return valid_kernel(rng)
    if swizzle != "none":
        fields["swizzle"] = swizzle
    if rng.random() < 0.3:
        fields["l2_promotion"] = rng.choice(["none", "l2_64b", "l2_256b"])
    if elem in ("f16", "bf16", "f32", "f64") and rng.random() < 0.2 and kind.endswith("load"):
        fields["oob_fill"] = "nan_request_zero_fma"
    if multicast > 1:
        fields["multicast"] = multicast
    if kind == "reduce" and rng.random() < 0.7:
        fields["reduction"] = rng.choice(["add", "min", "max", "inc", "dec", "and", "or", "xor"])
    parts = [f"box = [{', '.join(map(str, box))}]"]
    if tile != box:
        parts.append(f"tile = [{', '.join(map(str, tile))}]")
    for k, v in fields.items():
        parts.append(f"{k} = [{', '.join(map(str, v))}]" if isinstance(v, list) else f"{k} = {v}")
    t = f"!nvtma.tma_atom<{kind}, {elem}, " + ", ".join(parts) + ">"
    shape = [rng.choice([64, 128, 256, 1024]) * (1 if i else 1) for i in range(rank)]
    if kind.startswith("im2col"):
        shape[-1] = box[1] * rng.choice([1, 2])
    mem = "memref<" + "x".join(map(str, shape)) + f"x{elem}>"
    boxes = math.prod(t_ // b for t_, b in zip(tile, box))
    inner_split = any(t_ != b for t_, b in list(zip(tile, box))[1:])
    smem_shape = [boxes] + box if inner_split else tile
    if kind.startswith("im2col"):
        smem_shape = box
    smem = "memref<" + "x".join(map(str, smem_shape)) + f"x{elem}, #gpu.address_space<workgroup>>"
    bars = "!nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>"
    is_load = kind.endswith("load") or kind == "load_multicast"
    coords = 5 if kind == "gather4_load" else rank
    body = ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
            f"%bars = nvgpu.mbarrier.create -> {bars}",
            "%tid = gpu.thread_id x", "%i = arith.remui %tid, %c1 : index",
            f"%a = nvtma.make_tiled_tma_atom %A {{cta_tiler = array<i64: {', '.join(map(str, tile))}>}} : {mem} -> {t}"]
    if rng.random() < 0.5:
        body.append(f"%p:{len(tile)} = nvtma.tma_partition %a[" + ", ".join(["%i"] * len(tile)) + f"] : {t} -> " +
                    ", ".join(["index"] * len(tile)))
        coord_list = ", ".join(f"%p#{k}" for k in range(len(tile))) if coords == len(tile) else \
            ", ".join(["%c0"] * coords)
    else:
        coord_list = ", ".join(["%i"] * coords)
    copy = f"nvtma.copy %a[{coord_list}], %s"
    if is_load:
        copy += ", barrier %bars[%c0]"
        if kind == "im2col_load":
            body.append("%o = arith.constant 0 : i16")
            copy += " offsets[" + ", ".join(["%o"] * (rank - 2)) + "]"
        if multicast > 1:
            body.append(f"%m = nvtma.create_tma_multicast_mask [%i] {{cluster_shape = array<i64: {multicast}>, "
                        "mode = 0 : i64} : i16")
            copy += " mask %m cta %i"
        if rng.random() < 0.2:
            body.append("%h = arith.constant 1152921504606846976 : i64")
            copy += " cache_hint %h"
    copy += f" : {t}, {smem}" + (f", {bars}" if is_load else "")
    body.append(copy)
    if rng.random() < 0.3:
        body.append(f"nvtma.prefetch_descriptor %a : {t}")
    if not is_load:
        body += ["nvtma.bulk_commit_group", f"nvtma.bulk_wait_group {rng.choice([0, 1])}"]
    if rng.random() < 0.2:
        body.append(f"nvtma.copy_tensormap %a, %g : {t}, !llvm.ptr<1>")
    body.append("gpu.return")
    launch = rng.choice(["", " attributes {known_block_size = array<i32: 128, 1, 1>}",
                         f" attributes {{known_cluster_size = array<i32: {multicast}, 1, 1>, "
                         "nvtma.dynamic_smem = 1024 : i64}"])
    return _module(rng, chip, ptx, f"(%A: {mem}, %g: !llvm.ptr<1>) workgroup(%s: {smem}) kernel{launch}", body,
                   0.25)


def _module(rng, chip, ptx, signature, body, mutated):
    """A gpu.module for `chip` at +ptx`ptx` holding kernel @k`signature` of `body`, mutated at rate `mutated`."""
    lines = ["module attributes {gpu.container_module} {",
             f'  gpu.module @m [#nvvm.target<chip = "{chip}", features = "+ptx{ptx}">] {{',
             f"    gpu.func @k{signature} {{"]
    lines += ["      " + b for b in body] + ["    }", "  }", "}"]
    text = "\n".join(lines)
    return mutate(text, rng) if rng.random() < mutated else text


def flow_kernel(rng: random.Random) -> str:
    """A kernel whose memref parameters reach their uses through region
    branches and views: scf.for iter_args (kept or swapped each trip),
    scf.if results, memref.cast, subviews. The uses are what the kernel
    records trace back to a parameter: vector loads and stores, a bulk copy
    into an address of it, a descriptor update to it, a TMA atom of it."""
    elem = rng.choice(["f16", "bf16", "f32", "i8", "f64", "i32"])
    bits = ELEMS[elem]
    rank = rng.choice([1, 2, 2, 3])
    dyn = "memref<" + "?x" * rank + f"{elem}>"
    static = "memref<" + "".join(f"{rng.choice([64, 128, 256])}x" for _ in range(rank)) + f"{elem}>"
    box = [rng.choice([1, 8, 16]) for _ in range(rank - 1)] + [512 // bits]
    atom = f"!nvtma.tma_atom<load, {elem}, box = [{', '.join(map(str, box))}]>"
    zeros = ", ".join(["%c0"] * rank)
    body = ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index", "%c4 = arith.constant 4 : index",
            "%c16 = arith.constant 16 : i32", "%smem = llvm.mlir.zero : !llvm.ptr<3>",
            "%wp = nvtma.address_of %ws[%c0] : memref<16xi64> -> !llvm.ptr",
            "%wg = llvm.addrspacecast %wp : !llvm.ptr to !llvm.ptr<1>"]
    n = [0]

    def fresh(prefix):
        n[0] += 1
        return f"%{prefix}{n[0]}"

    def uses(m, t, ind):
        """Uses of memref `m` of type `t`, indented `ind` levels."""
        out = []
        for _ in range(rng.randint(1, 3)):
            r = rng.random()
            if r < 0.3:
                lanes = rng.choice([1, 2, 4, 8, 16]) * 32 // bits or 1
                al = rng.choice([4, 8, 16, 16, 32, 64])
                v = fresh("v")
                out.append(f"{v} = vector.load {m}[{zeros}] {{alignment = {al} : i64}} : {t}, vector<{lanes}x{elem}>")
                if rng.random() < 0.5:
                    out.append(f"vector.store {v}, {m}[{zeros}] {{alignment = {al} : i64}} : {t}, "
                               f"vector<{lanes}x{elem}>")
            elif r < 0.5:
                p, g = fresh("p"), fresh("g")
                out += [f"{p} = nvtma.address_of {m}[{zeros}] : {t} -> !llvm.ptr",
                        f"{g} = llvm.addrspacecast {p} : !llvm.ptr to !llvm.ptr<1>",
                        f"nvtma.bulk_copy s2g {g}, %smem, %c16 : !llvm.ptr<1>, !llvm.ptr<3>"]
            elif r < 0.8:
                a = fresh("a")
                out += [f"{a} = nvtma.atom_from_descriptor %wg : !llvm.ptr<1> -> {atom}",
                        f"nvtma.update_tma_descriptor {a}, {m}, %wg : {atom}, {t}, !llvm.ptr<1>"]
                if rng.random() < 0.3:
                    out.append("nvtma.fence_tma_desc_release")
            elif r < 0.9:  # of a parameter (or, refused, of what flowed from one)
                a = fresh("a")
                src, st = (m, t) if rng.random() < 0.2 else ("%a", dyn)
                out += [f"{a} = nvtma.make_tiled_tma_atom {src} {{cta_tiler = array<i64: {', '.join(map(str, box))}>}} "
                        f": {st} -> {atom}", f"nvtma.prefetch_descriptor {a} : {atom}"]
            else:
                out.append(f"{fresh('x')} = memref.load {m}[{zeros}] : {t}")
        return ["  " * ind + u for u in out]

    m, t = "%a", dyn
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.4:  # a loop carrying the memrefs, swapped or kept each trip
            res, x, y = fresh("r"), fresh("m"), fresh("n")
            body.append(f"{res}:2 = scf.for %i{n[0]} = %c0 to %c4 step %c1 iter_args({x} = {m}, {y} = %b) -> "
                        f"({t}, {t}) {{")
            body += uses(x, t, 1)
            body += [f"  scf.yield {rng.choice([f'{y}, {x}', f'{x}, {y}', f'{x}, {x}'])} : {t}, {t}", "}"]
            m = f"{res}#{rng.randrange(2)}"
        elif r < 0.7:  # a branch yielding one of two memrefs
            res = fresh("r")
            other = rng.choice(["%b", m])
            body += [f"{res} = scf.if %flag -> ({t}) {{", f"  scf.yield {m} : {t}", "} else {",
                     f"  scf.yield {other} : {t}", "}"]
            m = res
        elif r < 0.85:  # a static parameter cast to the dynamic type
            res = fresh("r")
            body.append(f"{res} = memref.cast %c : {static} to {dyn}")
            m = res
        else:  # a view with other dims: its descriptor updates are not recorded
            res = fresh("r")
            sizes = [rng.choice([4, 16]) for _ in range(rank)]
            vt = "memref<" + "".join(f"{d}x" for d in sizes) + f"{elem}, strided<[" + \
                ", ".join(["?"] * (rank - 1) + ["1"]) + f"], offset: {'?' if rank > 1 else 1}>>"
            body.append(f"{res} = memref.subview {m}[{', '.join(['1'] * rank)}] [{', '.join(map(str, sizes))}] "
                        f"[{', '.join(['1'] * rank)}] : {t} to {vt}")
            body += uses(res, vt, 0)
            continue
        body += uses(m, t, 0)
    body.append("gpu.return")
    chip, ptx = rng.choice(TARGETS)
    return _module(rng, chip, ptx, f"(%a: {dyn}, %b: {dyn}, %c: {static}, %ws: memref<16xi64>, %flag: i1) kernel",
                   body, 0.2)


# --------------------------------------------------------------------------- running

def pipelines(rng: random.Random) -> list[str]:
    r = rng.randrange(10)
    if r < 3:
        return []
    if r < 6:
        return ["--nvtma-to-ptx"]
    if r == 6:
        opts = [f"chip={rng.choice(CHIPS) or 'sm_90a'}"]
        if rng.random() < 0.5:
            opts.append(f"features={rng.choice([f for f in FEATURES if f and ',' not in f])}")
        if rng.random() < 0.3:
            opts.append(f"O={rng.choice([0, 2, 3, 4, 99])}")
        return [f"--nvtma-to-ptx={' '.join(opts)}"]
    if r == 7:
        return ["--nvtma-check-target", "--nvtma-materialize-descriptors", "--nvtma-write-kernel-records"]
    if r == 8:
        return ["--nvtma-materialize-descriptors", "--convert-nvtma-to-nvvm"]
    return ["--canonicalize", "--cse"]


def bytecode_seeds(opt: str) -> list[bytes]:
    """The lit inputs that parse, as MLIR bytecode."""
    out = []
    for text in seeds():
        r = subprocess.run([opt, "-", "--emit-bytecode"], input=text.encode(), capture_output=True, timeout=60)
        if r.returncode == 0 and r.stdout[:4] == b"ML\xefR":
            out.append(r.stdout)
    return out


def corrupt(data: bytes, rng: random.Random) -> bytes:
    """One to four bytes past the magic changed (to 0, 0xff, any value or one
    bit flipped), sometimes the tail cut."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(4, len(b))
        b[i] = rng.choice([0, 0xFF, rng.randrange(256), b[i] ^ (1 << rng.randrange(8))])
    if rng.random() < 0.1:
        del b[rng.randrange(4, len(b)):]
    return bytes(b)


def run_batch(opt: str, texts: list[str] | bytes, args: list[str], timeout: float):
    """(status, normalized output, stderr tail) of one nvtma-opt run: text
    inputs split with -split-input-file, or one bytecode input."""
    if isinstance(texts, bytes):
        cmd, data = [opt, "-", *args], texts
    else:
        cmd, data = [opt, "-", "-split-input-file", *args], f"\n{SPLIT}\n".join(texts).encode()
    try:
        r = subprocess.run(cmd, input=data, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", "", ""
    r.stdout, r.stderr = (x.decode(errors="replace") for x in (r.stdout, r.stderr))
    if r.returncode < 0:
        return f"signal {-r.returncode}", "", r.stderr[-2000:]
    if CRASH_MARKERS.search(r.stderr):
        return "crash banner", "", r.stderr[-2000:]
    return "ran", TIMING.sub("<time>", r.stdout + "\n" + r.stderr), ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=300, help="inputs to run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--generator", choices=["mutation", "atoms", "bytecode"], default="mutation")
    ap.add_argument("--seconds", type=float, default=None, help="stop after this many seconds")
    ap.add_argument("--batch", type=int, default=16, help="inputs per nvtma-opt process")
    ap.add_argument("--crashes", default="fuzz-crashes")
    ap.add_argument("--opt", default=os.environ.get("NVTMA_OPT", "nvtma-opt"))
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per input")
    ap.add_argument("--no-determinism", action="store_true", help="run each batch once")
    a = ap.parse_args(argv)
    os.environ.setdefault("ASAN_OPTIONS", "allow_user_poisoning=0:detect_leaks=0")
    os.environ.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    rng = random.Random(f"{a.generator}:{a.seed}")
    corpus = seeds() if a.generator == "mutation" else bytecode_seeds(a.opt) if a.generator == "bytecode" else []
    bugs, done, diagnosed, reader_failed = [], 0, 0, 0
    t0 = time.time()

    def record(status, texts, args, err):
        d = Path(a.crashes)
        d.mkdir(parents=True, exist_ok=True)
        name = f"{a.generator}-{a.seed}-{done}"
        if isinstance(texts, bytes):
            (d / f"{name}.mlirbc").write_bytes(texts)
            (d / f"{name}.json").write_text(json.dumps(dict(args=args, status=status)))
        else:
            (d / f"{name}.mlir").write_text(f"// nvtma-opt {' '.join(args)}: {status}\n" + f"\n{SPLIT}\n".join(texts))
        (d / f"{name}.log").write_text(err)
        bugs.append(status)

    SLOW_READ = "MLIR's bytecode reader had not finished after"

    def check_one(inputs, args):
        """Runs one input ([text] or bytecode) twice and records a crash, hang
        or output that differs; returns the output when neither happened."""
        one = run_batch(a.opt, inputs, args, a.timeout)
        again = one if one[0] != "ran" or a.no_determinism else run_batch(a.opt, inputs, args, a.timeout)
        if one[0] != "ran":
            record(one[0], inputs, args, one[2])
        elif again[0] != "ran":
            record(again[0], inputs, args, again[2])
        # The read limit is wall-clock time: a read of about the limit's length
        # (a corrupted count can make MLIR's reader take seconds over 1 KB) is
        # stopped in one run and not in the other under load, which is not a bug.
        elif one[1] != again[1] and SLOW_READ not in one[1] + again[1]:
            record("nondeterministic output", inputs, args, f"--- run 1\n{one[1][-3000:]}\n--- run 2\n"
                   f"{again[1][-3000:]}")
        else:
            return one[1]
        return None

    while done < a.iterations:
        if a.seconds and time.time() - t0 > a.seconds:
            break
        if a.generator == "bytecode":
            out = check_one(corrupt(rng.choice(corpus), rng), ["--nvtma-bytecode-read-limit=2", *pipelines(rng)])
            if out is not None:
                diagnosed += out.count("error:")
                reader_failed += "corrupted MLIR bytecode" in out
            done += 1
            continue
        n = min(a.batch, a.iterations - done)
        if a.generator == "mutation":
            texts = [mutate(rng.choice(corpus), rng) for _ in range(n)]
        else:
            texts = [(valid_kernel, valid_kernel, structured_kernel, flow_kernel)[rng.randrange(4)](rng)
                     for _ in range(n)]
        # `// -----` inside an input would split it differently.
        texts = [t.replace(SPLIT, "//") for t in texts]
        args = pipelines(rng)
        first = run_batch(a.opt, texts, args, a.timeout * n)
        second = first if a.no_determinism or first[0] != "ran" else run_batch(a.opt, texts, args, a.timeout * n)
        if first[0] == "ran" and second[0] == "ran" and first[1] == second[1]:
            done += n
            diagnosed += first[1].count("error:")
            continue
        # Replay one by one: which input crashed, hung or differed?
        for text in texts:
            check_one([text], args)
            done += 1
        if first[0] == "ran" and second[0] == "ran" and first[1] != second[1] and not bugs:
            # The batch differed but no input alone does: report the batch.
            record("nondeterministic output (batch)", texts, args, "")
    print(json.dumps(dict(fuzzer=f"nvtma-opt/{a.generator}", opt=a.opt, inputs=done,
                          seconds=round(time.time() - t0, 1), diagnostics=diagnosed,
                          **(dict(reader_failed=reader_failed) if a.generator == "bytecode" else {}), bugs=len(bugs),
                          kinds=sorted(set(bugs)))))
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
