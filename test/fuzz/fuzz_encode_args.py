#!/usr/bin/env python3
"""Argument fuzzer for nvtma.tensormap: every public call with arguments of
every shape a careless caller passes (ints of any size, bools, floats with
NaN and inf, strings, bytes, None, nested and short sequences, objects with
__index__, other enums).

An input passes when the call returns or raises TensorMapError, gives the
same result (or the same message) twice, and, for encode_tiled, the abi3
fast path and the checked path agree. Anything else (another exception, a
different second answer, a dying worker) is a bug, saved to --crashes.

Work runs in child processes, so a crash in the extension shows as a dead
child: the fuzzer then replays the chunk one input at a time to find it.
With --sanitized the children load an AddressSanitizer + UBSan build of the
extension (built here from python/TensorMapFast.cpp and
lib/TensorMap/TensorMap.cpp) with libasan preloaded.

    python test/fuzz/fuzz_encode_args.py --inputs 60000 --seed 1 --sanitized
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SPELLINGS = {
    "dtype": ["float16", "bfloat16", "FLOAT32", "CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B", "uint8", "int64",
              "tfloat32", "u6x16_align16b", "float7", "", " float16 ", "FLOAT16\0"],
    "interleave": ["none", "interleave_16b", "INTERLEAVE_32B", "CU_TENSOR_MAP_INTERLEAVE_32B", "16B", "x"],
    "swizzle": ["none", "swizzle_32b", "swizzle_64b", "swizzle_128b", "swizzle_128b_atom_64b", "SWIZZLE_128B",
                "128B", "swizzle_16b"],
    "l2_promotion": ["none", "l2_64b", "l2_128b", "l2_256b", "L2_256B", "l2_512b"],
    "oob_fill": ["none", "nan_request_zero_fma", "NAN_REQUEST_ZERO_FMA", "zero"],
}
EDGE_INTS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 17, 31, 32, 64, 100, 127, 128, 255, 256, 257, 1024, 65536,
             2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 90, 2 ** 40, 2 ** 57, 2 ** 63 - 1, 2 ** 63,
             2 ** 64 - 1, 2 ** 64, 2 ** 100, -1, -2, -16, -2 ** 31, -2 ** 63, -2 ** 64]


class Index:
    """An integer by __index__ (numpy ints, torch sizes)."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v

    def __repr__(self):
        return f"Index({self.v})"


class Weird:
    """An object that looks like nothing in particular."""

    def __repr__(self):
        return "Weird()"


def scalar(rng: random.Random, good: int | None = None):
    r = rng.random()
    if good is not None and r < 0.55:
        return good
    choice = rng.randrange(12)
    if choice < 4:
        return rng.choice(EDGE_INTS)
    if choice == 4:
        return rng.choice([True, False])
    if choice == 5:
        return rng.choice([0.0, 1.5, 64.0, math.nan, math.inf, -math.inf, 1e300])
    if choice == 6:
        return rng.choice(["99", "abc", "", "0x10", "64"])
    if choice == 7:
        return rng.choice([b"@@", b"", bytearray(b"12"), memoryview(b"x")])
    if choice == 8:
        return None
    if choice == 9:
        return Index(rng.choice(EDGE_INTS))
    if choice == 10:
        return Weird()
    return rng.randrange(-10, 300)


def sequence(rng: random.Random, good: list):
    r = rng.random()
    if r < 0.5:
        return list(good)
    kind = rng.randrange(10)
    if kind == 0:
        return [scalar(rng, g) for g in good]
    if kind == 1:
        return tuple(good[: rng.randrange(len(good) + 1)])
    if kind == 2:
        return list(good) + [rng.choice(EDGE_INTS)]
    if kind == 3:
        return rng.choice(["99", b"@@", 256, None, 2.5, {1: 2}, {1, 2}, iter([1, 2])])
    if kind == 4:
        return range(len(good))
    if kind == 5:
        return [[g] for g in good]
    if kind == 6:
        return [Index(g) for g in good]
    if kind == 7:
        return [rng.choice(EDGE_INTS) for _ in good]
    if kind == 8:
        return [rng.choice([True, 1.0, math.nan, "1"]) for _ in good]
    return []


def enum_value(rng: random.Random, field: str, good):
    r = rng.random()
    if r < 0.5:
        return good
    if r < 0.75:
        return rng.choice(SPELLINGS[field])
    return scalar(rng)


def tiled_case(rng: random.Random):
    rank = rng.choice([1, 2, 2, 3, 4, 5])
    dims = [rng.choice([64, 128, 256, 1000, 4096]) for _ in range(rank)]
    strides, acc = [], 2
    for d in dims[:-1]:
        acc *= d
        strides.append(acc)
    kw = dict(dtype=enum_value(rng, "dtype", "float16"), rank=scalar(rng, rank),
              global_address=scalar(rng, 0x7F0000000000), global_dim=sequence(rng, dims),
              global_strides=sequence(rng, strides), box_dim=sequence(rng, [64] + [8] * (rank - 1)),
              element_strides=sequence(rng, [1] * rank), interleave=enum_value(rng, "interleave", "none"),
              swizzle=enum_value(rng, "swizzle", "swizzle_128b"),
              l2_promotion=enum_value(rng, "l2_promotion", "l2_128b"),
              oob_fill=enum_value(rng, "oob_fill", "none"))
    if rng.random() < 0.3:
        kw["sm"] = scalar(rng, rng.choice([90, 100]))
    return kw


def im2col_case(rng: random.Random):
    rank = rng.choice([3, 4, 5])
    dims = [64] + [rng.choice([8, 16, 32]) for _ in range(rank - 2)] + [2]
    strides, acc = [], 2
    for d in dims[:-1]:
        acc *= d
        strides.append(acc)
    return dict(dtype=enum_value(rng, "dtype", "float16"), rank=scalar(rng, rank),
                global_address=scalar(rng, 0x7F0000000000), global_dim=sequence(rng, dims),
                global_strides=sequence(rng, strides), pixel_box_lower_corner=sequence(rng, [0] * (rank - 2)),
                pixel_box_upper_corner=sequence(rng, [-1] * (rank - 2)), channels_per_pixel=scalar(rng, 64),
                pixels_per_column=scalar(rng, 32), element_strides=sequence(rng, [1] * rank),
                interleave=enum_value(rng, "interleave", "none"), swizzle=enum_value(rng, "swizzle", "swizzle_128b"),
                l2_promotion=enum_value(rng, "l2_promotion", "l2_128b"), oob_fill=enum_value(rng, "oob_fill", "none"))


def make_input(rng: random.Random):
    """(function name, args, kwargs): a random call."""
    r = rng.randrange(20)
    if r < 8:
        return "encode_tiled", (), tiled_case(rng)
    if r < 10:
        return "validate_tiled", (), tiled_case(rng)
    if r < 13:
        return "encode_im2col", (), im2col_case(rng)
    if r == 13:
        return "validate_im2col", (), im2col_case(rng)
    if r == 14:
        raw = bytearray(rng.getrandbits(8) for _ in range(128))
        if rng.random() < 0.5:  # a valid header word with random fields
            raw[8:12] = rng.getrandbits(19).to_bytes(4, "little")
        return "decode", (rng.choice([bytes(raw), raw.hex(), bytes(raw[: rng.randrange(130)]), scalar(rng)]),), {}
    if r == 15:
        return "replace_address", (rng.choice([bytes(128), scalar(rng)]), scalar(rng, 0x7F0000001000)), {}
    if r == 16:
        tile = sequence(rng, [rng.choice([1, 8, 64, 100, 256, 300, 512]) for _ in range(rng.randrange(1, 6))])
        return "cute_box", (tile, scalar(rng, rng.choice([1, 2, 4])), enum_value(rng, "swizzle", "swizzle_128b"),
                            scalar(rng, rng.choice([4, 8, 16, 32, 64])), enum_value(rng, "interleave", "none")), {}
    if r == 17:
        return "swizzle_span_bytes", (enum_value(rng, "swizzle", "swizzle_64b"),), {}
    if r == 18:
        return "element_bits", (enum_value(rng, "dtype", "bfloat16"),), {}
    return "encode_tiled", (), tiled_case(rng)


def _describe(value):
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return repr(value)


def _call(tm, name, args, kwargs):
    """('ok', result) | ('error', rule, message) | ('bug', description)."""
    try:
        out = getattr(tm, name)(*args, **kwargs)
        return ("ok", _describe(out))
    except tm.TensorMapError as e:
        return ("error", e.rule, str(e))
    except Exception as e:  # noqa: BLE001 - an untyped exception is the bug we look for
        return ("bug", f"{type(e).__name__}: {e}")


def _worker(seed: int, start: int, count: int, sanitized_ext: str | None, out_q):
    if sanitized_ext:
        os.environ["NVTMA_TENSORMAP_EXT"] = sanitized_ext
    import nvtma.tensormap as tm
    results = {"ok": 0, "error": 0, "bugs": []}
    for i in range(start, start + count):
        rng = random.Random(f"{seed}:{i}")
        name, args, kwargs = make_input(rng)
        first = _call(tm, name, args, kwargs)
        second = _call(tm, name, args, kwargs)
        problem = None
        if first[0] == "bug":
            problem = "untyped exception: " + first[1]
        elif first != second:
            problem = f"nondeterministic: {first!r} then {second!r}"
        elif name == "encode_tiled" and tm._fast_module():
            saved = tm._fast_c
            tm._fast_c = False  # the checked path alone
            try:
                checked = _call(tm, name, args, kwargs)
            finally:
                tm._fast_c = saved
            if (checked[0], checked[1]) != (first[0], first[1]):
                problem = f"fast path {first!r} but checked path {checked!r}"
        if problem:
            results["bugs"].append(dict(index=i, call=name, args=repr(args)[:500], kwargs=repr(kwargs)[:1000],
                                        problem=problem[:1000]))
        else:
            results[first[0]] += 1
    out_q.put(results)


def build_sanitized_extension(out_dir: Path) -> Path:
    """_tensormap_fast.abi3.so with -fsanitize=address,undefined."""
    out_dir.mkdir(parents=True, exist_ok=True)
    so = out_dir / "_tensormap_fast.abi3.so"
    srcs = [REPO / "python" / "TensorMapFast.cpp", REPO / "lib" / "TensorMap" / "TensorMap.cpp"]
    if so.exists() and all(so.stat().st_mtime > s.stat().st_mtime for s in srcs):
        return so
    cmd = ["c++", "-std=c++17", "-O1", "-g", "-fPIC", "-shared", "-fsanitize=address,undefined",
           "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer", f"-I{REPO / 'include'}",
           f"-I{sysconfig.get_paths()['include']}", *map(str, srcs), "-o", str(so)]
    subprocess.run(cmd, check=True)
    return so


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--sanitized", action="store_true", help="load an ASan+UBSan build of the extension")
    ap.add_argument("--crashes", default="fuzz-crashes")
    a = ap.parse_args(argv)
    ext = None
    env = dict(os.environ)
    if a.sanitized:
        ext = str(build_sanitized_extension(Path(a.crashes) / "asan-ext"))
        libasan = subprocess.run(["c++", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
        libubsan = subprocess.run(["c++", "-print-file-name=libubsan.so"], capture_output=True,
                                  text=True).stdout.strip()
        env["LD_PRELOAD"] = f"{libasan}:{libubsan}"
        env.setdefault("ASAN_OPTIONS", "detect_leaks=0:allow_user_poisoning=0")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    t0 = time.time()
    totals = {"ok": 0, "error": 0}
    bugs = []
    chunks = [(s, min(a.chunk, a.inputs - s)) for s in range(0, a.inputs, a.chunk)]
    for start, count in chunks:
        # Each chunk in a fresh interpreter: a crash kills only that chunk,
        # then it is replayed input by input to find the culprit.
        r = subprocess.run([sys.executable, __file__, "--_chunk", json.dumps([a.seed, start, count, ext])],
                           capture_output=True, text=True, env=env, timeout=max(600, count))
        if r.returncode != 0 or not r.stdout.strip():
            for i in range(start, start + count):
                one = subprocess.run([sys.executable, __file__, "--_chunk", json.dumps([a.seed, i, 1, ext])],
                                     capture_output=True, text=True, env=env, timeout=60)
                if one.returncode != 0:
                    rng = random.Random(f"{a.seed}:{i}")
                    name, args, kwargs = make_input(rng)
                    bugs.append(dict(index=i, call=name, args=repr(args)[:500], kwargs=repr(kwargs)[:1000],
                                     problem=f"worker died ({one.returncode}): {one.stderr[-1500:]}"))
                else:
                    res = json.loads(one.stdout.strip().splitlines()[-1])
                    totals["ok"] += res["ok"]
                    totals["error"] += res["error"]
                    bugs += res["bugs"]
            continue
        res = json.loads(r.stdout.strip().splitlines()[-1])
        totals["ok"] += res["ok"]
        totals["error"] += res["error"]
        bugs += res["bugs"]
    if bugs:
        d = Path(a.crashes)
        d.mkdir(parents=True, exist_ok=True)
        (d / f"encode-args-{a.seed}.json").write_text(json.dumps(bugs, indent=1))
    print(json.dumps(dict(fuzzer="encode-args", inputs=a.inputs, seconds=round(time.time() - t0, 1),
                          sanitized=a.sanitized, returned=totals["ok"], tensormap_errors=totals["error"],
                          bugs=len(bugs), kinds=sorted({b["problem"].split(":")[0] for b in bugs}))))
    return 1 if bugs else 0


def _chunk_main(spec: str) -> int:
    seed, start, count, ext = json.loads(spec)
    q = _ListQueue()
    _worker(seed, start, count, ext, q)
    print(json.dumps(q.items[0]))
    return 0


class _ListQueue:
    def __init__(self):
        self.items = []

    def put(self, x):
        self.items.append(x)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--_chunk":
        sys.exit(_chunk_main(sys.argv[2]))
    sys.exit(main())
