#!/usr/bin/env python3
"""Artifact tamperer: mutates a saved AOT artifact and loads + packs it.

Starts from artifacts of real kernels (compiled here when the MLIR extension
is importable, else records + a parameter-table cubin written by
test/python/runtime_fixtures.py), then per input applies 1-3 mutations:
JSON values replaced by other types, out-of-range or huge numbers, deep
nesting, deleted or duplicated keys and list entries, templates of other
lengths or with flipped bytes, byte flips/truncation/garbage in kernels.json,
module files replaced, truncated, removed, turned into FIFOs, directories or
symlinks (inside and outside the directory). The records checksum is fixed
up for most JSON mutations so the schema check, not the checksum, has to
catch them.

Each mutant is loaded with nvtma.runtime.load and every kernel is packed
with fake GPU tensors of the recorded shapes (packing happens before any
driver call, so no GPU is needed). Outcomes are counted; anything but
success or LaunchError is a bug (printed and saved), and so is a load or
pack that takes over 10 s.

    python test/fuzz/fuzz_artifacts.py --inputs 20000 --seed 1
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "python"))

from nvtma.runtime import LaunchError, load  # noqa: E402
from nvtma.runtime.artifacts import records_digest  # noqa: E402


class Hang(Exception):
    pass


def seeds(workdir: Path) -> list:
    """Directories of valid artifacts to mutate."""
    out = []
    try:
        import nvtma
        from nvtma import kernels as K
        specs = [K.tile_copy((300, 500), "f32", (32, 32), swizzle="swizzle_128b"),
                 K.multicast_copy(512, 256, "f16", (64, 64), 2), K.im2col_dump(2, 8, 8, 64, 64, 64),
                 K.reduce_add(256, 256, "f32", (32, 32)), K.pipelined_copy(1024, 2048, "f16", (64, 128), 4),
                 # memref records with "align" and "tensormaps" (what their launches check)
                 K.update_descriptor(128, 128), K.gemv(256, 1024), K.bulk_roundtrip(4096)]
        for i, s in enumerate(specs):
            out.append(nvtma.compile(s.ir, cache=False).save(workdir / f"seed{i}"))
    except Exception:  # no MLIR extension: records + parameter-table cubins
        import runtime_fixtures as F
        recs = F.records()
        static = copy.deepcopy(recs)
        for p in static["kernels"]["k"]["params"]:
            if p["kind"] == "descriptor":
                p["template"] = F.template_for(p, (256, 256))
        dyn = F.records([F.DYN, dict(F.DYN), F.SCALAR, F.DESC, dict(F.DESC, binds=1)],
                        launch={"block": [128, 1, 1], "cluster": [2, 1, 1], "smem": 1024})
        for i, r in enumerate((recs, static, dyn)):
            out.append(F.artifacts(r).save(workdir / f"seed{i}"))
    return out


# --------------------------------------------------------------------------- mutations

WEIRD = [None, True, False, 0, -1, 1, 2, 7, 127, 128, 129, 255, 256, 257, 1 << 31, 1 << 32, 1 << 57, 1 << 63,
         1 << 64, -(1 << 63), 10 ** 30, 1.5, float("nan"), float("inf"), "", "0", "x", "ab" * 64, "ab" * 65,
         "ab" * 63, "zz" * 64, [], [0], [1, 1, 1], [None], {}, {"kind": "memref"}, "sm_90a", "tiled", "im2col",
         "descriptor", "memref", "scalar", "pointer"]


def paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths(v, prefix + (i,))


def get(obj, path):
    for p in path:
        obj = obj[p]
    return obj


def put(obj, path, value):
    get(obj, path[:-1])[path[-1]] = value


def deep(n):
    v = 0
    for _ in range(n):
        v = [v]
    return v


def mutate_json(m: dict, rng: random.Random) -> str:
    all_paths = [p for p in paths(m) if p]
    p = rng.choice(all_paths)
    parent = get(m, p[:-1])
    op = rng.randrange(9)
    if op == 0:
        put(m, p, rng.choice(WEIRD))
        return f"set {p} to weird"
    if op == 1:
        v = get(m, p)
        if isinstance(v, int) and not isinstance(v, bool):
            put(m, p, v + rng.choice([-1, 1, -v - 1, v, 1 << 20, -(1 << 40)]))
            return f"perturb int {p}"
        put(m, p, rng.choice(WEIRD))
        return f"set {p}"
    if op == 2:
        if isinstance(parent, dict):
            del parent[p[-1]]
        else:
            del parent[p[-1]]
        return f"delete {p}"
    if op == 3 and isinstance(parent, list):
        parent.insert(p[-1], copy.deepcopy(parent[p[-1]]))
        return f"duplicate {p}"
    if op == 4:
        put(m, p, deep(rng.choice([10, 1000, 5000])))
        return f"deep nesting at {p}"
    if op == 5:
        v = get(m, p)
        if isinstance(v, str) and len(v) == 256:  # a template
            b = bytearray(bytes.fromhex(v))
            for _ in range(rng.randrange(1, 4)):
                b[rng.randrange(128)] ^= 1 << rng.randrange(8)
            put(m, p, b.hex())
            return f"flip template bits {p}"
        if isinstance(v, list) and v:
            rng.shuffle(v)
            return f"shuffle {p}"
        put(m, p, rng.choice(WEIRD))
        return f"set {p}"
    if op == 6:
        v = get(m, p)
        if isinstance(v, str):
            put(m, p, v * rng.choice([0, 2, 1000]) if rng.random() < 0.5 else v[: rng.randrange(len(v) + 1)])
            return f"resize string {p}"
        put(m, p, rng.choice(WEIRD))
        return f"set {p}"
    if op == 7 and isinstance(parent, dict):
        parent[rng.choice(["extra", "kind", "binds", "template", "launch", "shape"])] = rng.choice(WEIRD)
        return f"add key under {p[:-1]}"
    put(m, p, rng.choice(WEIRD))
    return f"set {p}"


def mutate_files(d: Path, rng: random.Random, outside: Path) -> str:
    name = rng.choice(["module.ptx", "module.cubin", "module.mlir", "kernels.json"])
    f = d / name
    op = rng.randrange(9)
    if f.is_dir() and not f.is_symlink():
        shutil.rmtree(f)
    exists = f.exists() or f.is_symlink()
    if op == 0 and exists:
        f.unlink()
        return f"remove {name}"
    if op == 1 and f.is_file():
        data = f.read_bytes()
        f.write_bytes(data[: rng.randrange(len(data) + 1)])
        return f"truncate {name}"
    if op == 2 and f.is_file():
        b = bytearray(f.read_bytes())
        for _ in range(rng.randrange(1, 8)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        f.write_bytes(bytes(b))
        return f"flip bytes of {name}"
    if op == 3:
        if exists:
            f.unlink()
        os.mkfifo(f)
        return f"fifo as {name}"
    if op == 4:
        if exists:
            f.unlink()
        os.symlink(rng.choice(["/dev/zero", "/dev/null", str(outside), "/nonexistent", name]), f)
        return f"symlink as {name}"
    if op == 5:
        if exists:
            f.unlink()
        f.mkdir()
        return f"directory as {name}"
    if op == 6:
        if exists:
            f.unlink()
        with open(f, "wb") as fh:  # sparse, past the size limit
            fh.truncate(rng.choice([1 << 20, (512 << 20) + 1, (64 << 20) + 1]))
        return f"huge {name}"
    if op == 7 and f.is_file():
        f.write_bytes(os.urandom(rng.randrange(0, 4096)))
        return f"random bytes as {name}"
    if f.is_file():
        with open(f, "ab") as fh:
            fh.write(b"\0garbage" * rng.randrange(1, 100))
        return f"append to {name}"
    return "no-op"


def mutate(seed_dir: Path, d: Path, rng: random.Random, outside: Path) -> list:
    shutil.copytree(seed_dir, d, symlinks=True)
    done = []
    for _ in range(rng.randrange(1, 4)):
        if rng.random() < 0.7 and (d / "kernels.json").is_file() and not (d / "kernels.json").is_symlink():
            try:
                m = json.loads((d / "kernels.json").read_text())
            except (ValueError, UnicodeDecodeError, RecursionError):
                done.append(mutate_files(d, rng, outside))
                continue
            if not isinstance(m, dict) or not m:
                done.append(mutate_files(d, rng, outside))
                continue
            done.append(mutate_json(m, rng))
            if rng.random() < 0.8 and isinstance(m, dict):
                try:
                    m["records_sha256"] = records_digest(m.get("records"))
                except (TypeError, ValueError, RecursionError):
                    pass
            try:
                (d / "kernels.json").write_text(json.dumps(m))
            except (ValueError, RecursionError):
                done.append("unserializable")
        else:
            done.append(mutate_files(d, rng, outside))
    return done


# --------------------------------------------------------------------------- running

class Fake:
    def __init__(self, ptr, shape, typestr):
        self.__cuda_array_interface__ = dict(data=(ptr, False), shape=tuple(shape), typestr=typestr,
                                             strides=None, version=3)


_TYPESTR = {8: "|u1", 16: "<f2", 32: "<f4", 64: "<f8"}


def fake_args(kernel):
    args = []
    for i, p in enumerate(kernel.user_params):
        if p["kind"] == "memref":
            shape = [d if isinstance(d, int) else 64 for d in p["shape"]]
            bits = p.get("element_bits", 16)
            ts = {"f16": "<f2", "bf16": "<V2", "f32": "<f4", "i8": "|i1", "i64": "<i8", "i32": "<i4"}.get(
                p.get("element"), _TYPESTR.get(bits, "|u1"))
            args.append(Fake(0x7F0000000000 + i * (1 << 30), shape, ts))
        elif p["kind"] == "scalar":
            args.append(1.0 if p["type"].startswith(("f", "bf")) else 1)
        else:
            args.append(0x7F0000000000)
    return args


def exercise(d: Path) -> str:
    art = load(d)
    for name in art.kernels:
        k = art.kernel(name)
        k.pack(*fake_args(k))
    return "ok"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bugs", type=Path, default=None, help="save buggy mutants here")
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    work = Path(tempfile.mkdtemp(prefix="nvtma-fuzz-artifacts-"))
    outside = work / "outside.bin"
    outside.write_bytes(b"\x7fELF outside the artifact")
    counts = Counter()
    bugs = []
    t0 = time.time()

    def alarm(*_):
        raise Hang()
    signal.signal(signal.SIGALRM, alarm)
    try:
        base = seeds(work)
        for i in range(a.inputs):
            d = work / f"m{i}"
            how = mutate(rng.choice(base), d, rng, outside)
            signal.alarm(10)
            try:
                outcome = exercise(d)
            except LaunchError as e:
                outcome = f"LaunchError({e.rule})"
            except BaseException as e:  # noqa: BLE001 (counting every kind is the point)
                outcome = "BUG hang" if isinstance(e, Hang) else f"BUG {type(e).__name__}"
                bugs.append({"input": i, "mutations": how, "error": traceback.format_exc(limit=4)})
                if a.bugs:
                    a.bugs.mkdir(parents=True, exist_ok=True)
                    shutil.copytree(d, a.bugs / d.name, symlinks=True)
            finally:
                signal.alarm(0)
            counts[outcome] += 1
            shutil.rmtree(d, ignore_errors=True)
            try:
                os.unlink(d)
            except OSError:
                pass
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for b in bugs[:5]:
        print(json.dumps(b), file=sys.stderr)
    summary = {"inputs": a.inputs, "seconds": round(time.time() - t0, 1),
               "bugs": sum(v for k, v in counts.items() if k.startswith("BUG")),
               "outcomes": dict(sorted(counts.items(), key=lambda kv: -kv[1]))}
    print(json.dumps(summary))
    return 1 if summary["bugs"] else 0


if __name__ == "__main__":
    sys.exit(main())
