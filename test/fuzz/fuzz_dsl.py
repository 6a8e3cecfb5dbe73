#!/usr/bin/env python3
"""Fuzzer for the kernel language's misuse surface (nvtma.dsl and the
helpers written in it: cuda, lang, wgmma, cpasync).

Each seed generates one small kernel as Python source: typed scalars,
vectors, conversions and mixed-type arithmetic, dsl.if_/else_/range/cond/
while_/yield_, shared-memory buffers, tensor element and vector accesses,
warp shuffles and reductions, atomics, barriers, TMA atoms and copies,
cp.async, wgmma descriptors and accumulators, lang's pipelines, roles and
schedulers, vector methods and math on every element type (stored, so that
they reach the lowering), descriptors in memory (update_tma_descriptor,
copy_tensormap, atoms from a descriptor pointer), profiler ranges, marks,
push/pop, spans and roles. Most statements are
plausible; a mutation rate (--rate, per choice) makes some of them wrong
(mismatched dtypes or lane counts, out-of-range constants, huge or negative
shapes, values used outside the region that made them or kept from another
kernel's build, branches entered and never exited, deep nesting, wrong arch
or PTX version for a feature).
The program is built and compiled (``k.compile()``) in a child process
that runs a batch of programs one after another; the parent reads one JSON
line per program (a program that never answers is the one that crashed or
hung; a child that dies at interpreter exit has its batch replayed one
program per child) and classifies it:

  ok        it compiled
  typed     KernelBuildError (or another nvtma error class: TensorMapError,
            CompileError for the arch/PTX screening), or a ValueError /
            TypeError raised on purpose (a `raise` statement) or by Python
            at the program's own line
  late      CompileError from lowering or ptxas: the DSL built IR that the
            compiler then refused (a check the DSL could have made)
  UNTYPED   any other exception (AttributeError, IndexError, KeyError,
            AssertionError, RecursionError, a raw MLIRError ...) or a
            ValueError/TypeError that escaped from inside nvtma or a binding
  CRASH     the child died (signal, abort, LLVM ERROR, segfault)
  HANG      no answer within --timeout seconds
  known     an untyped error listed in KNOWN: found, reported, not fixed
            yet (none now)

CRASH, UNTYPED and HANG are bugs: each program is saved to --crashes as a
standalone script (``python FILE`` reruns it) with the outcome on top.
Deterministic by seed. --accepted also lists, by the generator's line, the
wrong choices of programs that compiled with one wrong choice: most are
wrong only in some contexts (a shape of 0, a valid arch among the odd
ones); the rest is misuse taken silently (it found a Boolean tensor index
and PipelineState.advance(True)).

    python test/fuzz/fuzz_dsl.py --seeds 0:500 --crashes /tmp/dsl-crashes
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------- the generator

INT_T = ["Int8", "Int16", "Int32", "Int64", "Uint8", "Uint16", "Uint32", "Uint64", "Index", "Boolean"]
FLOAT_T = ["Float16", "BFloat16", "Float32", "Float64", "Float8E4M3FN", "Float8E5M2"]
ALL_T = INT_T + FLOAT_T
COMMON_T = ["Int32", "Int32", "Float32", "Float32", "Float16", "BFloat16", "Uint32", "Int64", "Index"]
ELEM = {"f32": "Float32", "f16": "Float16", "bf16": "BFloat16", "i32": "Int32", "i8": "Int8", "i64": "Int64",
        "f8E4M3FN": "Float8E4M3FN", "u32": "Uint32", "f64": "Float64", "i16": "Int16", "e5m2": "Float8E5M2",
        "index": "Index", "u8": "Uint8", "u64": "Uint64", "i1": "Boolean"}
WEIRD_INT = [0, -1, 1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 127, 128, 255, 256, 1023, 1024, 65535, 65536,
             2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 32 + 1, 2 ** 63 - 1, 2 ** 63, 2 ** 64, -2 ** 31, -2 ** 63,
             -2 ** 63 - 1, 10 ** 30]
WEIRD_FLOAT = ["0.0", "-0.0", "1.5", "1e38", "1e39", "-1e300", "float('inf')", "float('nan')", "448.0", "65504.0",
               "1e-45", "3.0"]
WEIRD_OBJ = ["None", "'x'", "[]", "()", "{}", "object()", "(1, 2)", "[1, 2, 3]", "1j", "b'a'"]
BIN_OPS = ["+", "-", "*", "/", "//", "%", "&", "|", "^", "<<", ">>"]
CMP_OPS = ["<", "<=", ">", ">=", "==", "!="]
ARCHS = ["sm_90a", "sm_90a", "sm_90a", "sm_90a", "sm_90", "sm_100a", "sm_80", "sm_89", "sm_90x", "sm_9", "gfx90a",
         "sm_120a", ""]
PTXS = ["86", "86", "86", "86", "80", "83", "87", "88", "60", "99", "0", "-1", "'86'", "None", "86.0", "10 ** 20"]

# option lists used inside f-strings (3.11: no backslashes or quotes there)
O0 = ['"add"', '"max"', '"min"', '"mul"', '"xor"', '3']
O1 = ['"thread"', '"warp"', '"block"', '3', 'None']
O2 = ['2', 'True', '"full"', '0', '-1', '2 ** 40', '1.5', 'None']
O3 = ['"cta"', '"gpu"', '"sys"', '"cluster"', '"warp"', 'None', '3']
O4 = ['"gpu"', '"cta"', '"sys"', '"warp"', 'None']
O5 = ['"shared::cta"', '"global"', '"all"', '"x"']
O6 = ['"swizzle_128b"', '"swizzle_64b"', '"none"', '"swizzle_256b"', '3', 'None']
O7 = ['"swizzle_128b"', '"swizzle_64b"', '"swizzle_32b"', '"none"', '"bogus"']
O8 = ['"l2_256b"', '"none"', '"l2_512b"', '7']
O9 = ['"evict_first"', '"evict_never"', 'dsl.Int64(0)', '5']
O10 = ['"swizzle_128b"', '"none"', '"swizzle_16b"']
O11 = ['"mbar"', '"tma"', '"x"']
O12 = ['"x"', '"y"', '"z"', '"w"', '0', 'None']
O13 = ['int', 'float', 'dsl.Numeric', 'dsl.Vector', '"x"']
L0 = ["'tma'", "'mbar'"]
L1 = ["'x'", "None"]
L2 = ["'mbar'"]
L3 = ["'tma'", "3"]
L4 = ["'evict_last'"]
L5 = ["'x'", "1.5"]
L6 = ["'swizzle_128b'"]
L7 = ["'x'", "None"]


class Gen:
    def __init__(self, rng: random.Random, rate: float):
        self.rng = rng
        self.rate = rate
        self.lines = []
        self.ind = 1
        self.env = []       # (name, kind, info) visible now
        self.dead = []      # names made inside a region that ended (using them is a mutation)
        self.n = 0
        self.depth = 0
        self.tensors = []   # (name, elem, shape)
        self.tensors_extra = []
        self.block = 128
        self.bad_lines = set()  # generator lines whose choice was a wrong one (--accepted)
        self.prof = False   # whether the program made a Profiler (`prof`)

    # ------------------------------------------------------------- helpers
    def bad(self, scale=1.0):
        wrong = self.rng.random() < self.rate * scale
        if wrong:  # the generator's line that chose it (the W helper's caller for its choices)
            f = sys._getframe(1)
            self.bad_lines.add(f.f_back.f_lineno if f.f_code.co_name == "<lambda>" else f.f_lineno)
        return wrong

    def emit(self, s):
        self.lines.append("    " * self.ind + s)

    def fresh(self, kind, info=None):
        self.n += 1
        name = f"v{self.n}"
        self.env.append((name, kind, info))
        return name

    def pick(self, kind, pred=None):
        c = [e for e in self.env if e[1] == kind and (pred is None or pred(e))]
        if self.dead and self.bad(0.3):
            d = [e for e in self.dead if e[1] == kind]
            if d:
                return self.rng.choice(d)
        return self.rng.choice(c) if c else None

    def int_lit(self, lo=0, hi=64):
        if self.bad():
            return str(self.rng.choice(WEIRD_INT))
        return str(self.rng.randrange(lo, hi))

    def dtype(self, common=True):
        if self.bad() or not common:
            return self.rng.choice(ALL_T + (["'f33'", "'i4'", "None", "int", "float"] if self.bad() else []))
        return self.rng.choice(COMMON_T)

    def dname(self, t):
        return t if t.startswith("'") or t in ("None", "int", "float") else f"dsl.{t}"

    def scalar(self, want_float=None):
        """An expression for a scalar: a variable, an id, a constant or a Python number."""
        r = self.rng.random()
        if self.bad(0.5):
            return self.rng.choice(WEIRD_OBJ + WEIRD_FLOAT + [str(x) for x in WEIRD_INT])
        v = self.pick("s")
        if v is not None and r < 0.55:
            return v[0]
        if r < 0.7:
            return self.rng.choice(["dsl.thread_idx()", "dsl.lane_idx()", "dsl.warp_idx()", "dsl.block_idx()",
                                    "dsl.block_dim()", "dsl.thread_idx('y')", "dsl.cluster_ctarank()"])
        if r < 0.85:
            t = self.rng.choice(COMMON_T)
            lit = self.rng.choice(["0", "1", "3", "-2", "1.0", "0.5"]) if t.startswith(("F", "B")) else \
                self.rng.choice(["0", "1", "3", "7"])
            return f"dsl.{t}({lit})"
        return self.rng.choice(["1", "2", "0", "1.5", "-3", "True", "0.25"]) if want_float is not False else "1"

    def index(self, dim=64):
        r = self.rng.random()
        if self.bad():
            return self.rng.choice(["-1", str(dim), "2 ** 40", "1.5", "None", "dsl.Float32(1.0)", "dsl.Int8(3)",
                                    "(1, 2)", "slice(0, 2)", "dsl.Boolean(True)", "2 ** 64"])
        if r < 0.4:
            return str(self.rng.randrange(max(dim, 1)))
        if r < 0.8:
            return f"dsl.thread_idx() % {max(dim, 1)}"
        v = self.pick("s", lambda e: e[2] in INT_T)
        return f"({v[0]}) % {max(dim, 1)}" if v else "0"

    def tensor(self):
        return self.rng.choice(self.tensors) if self.tensors else None

    # ------------------------------------------------------------- statements
    def stmt(self):
        kinds = [self.s_const, self.s_binop, self.s_compare, self.s_convert, self.s_math, self.s_vector,
                 self.s_vector_op, self.s_load, self.s_store, self.s_vec_mem, self.s_if, self.s_range,
                 self.s_cond, self.s_while, self.s_shuffle, self.s_reduce, self.s_atomic, self.s_barrier,
                 self.s_smem, self.s_tma, self.s_wgmma, self.s_cpasync, self.s_misc, self.s_mbarrier, self.s_lang,
                 self.s_vector_more, self.s_math_typed, self.s_desc, self.s_sink, self.s_profile]
        weights = [6, 8, 4, 6, 4, 5, 5, 5, 5, 4, 4, 3, 2, 1, 3, 3, 3, 2, 3, 2, 2, 2, 2, 2, 4, 4, 4, 2, 4,
                   8 if self.prof else 0]
        self.rng.choices(kinds, weights)[0]()

    def s_const(self):
        t = self.dtype()
        if t.startswith(("Float", "BFloat")) and not self.bad():
            lit = self.rng.choice(["1.0", "-2.5", "0.0", "3", "100.0"])
        elif self.bad():
            lit = self.rng.choice(WEIRD_FLOAT + WEIRD_OBJ + [str(x) for x in WEIRD_INT])
        else:
            lit = self.int_lit()
        name = self.fresh("s", t.strip("'"))
        how = self.rng.choice(["{t}({l})", "dsl.const({l}, {t})", "dsl.convert({l}, {t})"])
        self.emit(f"{name} = {how.format(t=self.dname(t), l=lit)}")

    def s_binop(self):
        a, b = self.scalar(), self.scalar()
        op = self.rng.choice(BIN_OPS)
        self.emit(f"{self.fresh('s', '?')} = ({a}) {op} ({b})")

    def s_compare(self):
        a, b = self.scalar(), self.scalar()
        self.emit(f"{self.fresh('s', 'Boolean')} = ({a}) {self.rng.choice(CMP_OPS)} ({b})")

    def s_convert(self):
        v = self.pick("s") or self.pick("v")
        src = v[0] if v else self.scalar()
        t = self.dtype(common=False)
        how = self.rng.choice(["({v}).to({t})", "({v}).bitcast({t})", "{t}({v})", "dsl.convert({v}, {t})"])
        kind = v[1] if v else "s"
        info = v[2] if v and kind == "v" else t
        self.emit(f"{self.fresh(kind, info)} = {how.format(v=src, t=self.dname(t))}")

    def s_math(self):
        fn = self.rng.choice(["exp2", "exp", "log2", "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "abs"])
        r = self.rng.random()
        if r < 0.5:
            e = f"dsl.{fn}({self.scalar()})"
        elif r < 0.65:
            e = f"dsl.{self.rng.choice(['min', 'max'])}({self.scalar()}, {self.scalar()})"
        elif r < 0.8:
            e = f"dsl.select({self.scalar()}, {self.scalar()}, {self.scalar()})"
        elif r < 0.9:
            e = f"dsl.fma({self.scalar()}, {self.scalar()}, {self.scalar()})"
        else:
            e = f"dsl.fdividef({self.scalar()}, {self.scalar()})"
        self.emit(f"{self.fresh('s', '?')} = {e}")

    def lanes(self):
        if self.bad():
            return self.rng.choice(["0", "1", "3", "5", "17", "-2", "1000", "2 ** 20", "2.0", "None"])
        return self.rng.choice(["2", "4", "8", "2", "4", "16"])

    def s_vector(self):
        n, t = self.lanes(), self.dtype()
        r = self.rng.random()
        if r < 0.4:
            e = f"dsl.full({n}, {self.scalar()}, {self.dname(t)})"
        elif r < 0.6:
            e = f"dsl.zeros({n}, {self.dname(t)})"
        else:
            k = self.rng.choice([0, 1, 2, 2, 3, 4, 8])
            e = f"dsl.vector_of([{', '.join(self.scalar() for _ in range(k))}]" + \
                (f", {self.dname(t)})" if self.rng.random() < 0.6 else ")")
        self.emit(f"{self.fresh('v', t)} = {e}")

    def s_vector_op(self):
        v = self.pick("v")
        if v is None:
            return self.s_vector()
        w = self.pick("v") or v
        r = self.rng.random()
        if r < 0.2:
            e = f"{v[0]}[{self.int_lit(0, 2) if self.rng.random() < 0.7 else self.scalar()}]"
            kind = "s"
        elif r < 0.3:
            e = f"{v[0]}.reduce({self.rng.choice(O0)})"
            kind = "s"
        elif r < 0.45:
            e = f"{v[0]} {self.rng.choice(BIN_OPS + CMP_OPS)} {self.rng.choice([w[0], self.scalar()])}"
            kind = "v"
        elif r < 0.55:
            e = f"{v[0]}.to({self.dname(self.dtype())})"
            kind = "v"
        elif r < 0.62:
            e = f"{v[0]}.bitcast({self.dname(self.dtype())})"
            kind = "v"
        elif r < 0.7:
            e = f"{v[0]}.insert({self.int_lit(0, 2)}, {self.scalar()})"
            kind = "v"
        elif r < 0.78:
            lo, hi = self.int_lit(0, 2), self.int_lit(1, 4)
            e = f"{v[0]}[{lo}:{hi}]"
            kind = "v"
        elif r < 0.84:
            e = f"{v[0]}.concat({w[0]})"
            kind = "v"
        elif r < 0.9:
            mask = [self.rng.randrange(-1, 8) for _ in range(self.rng.randrange(0, 5))]
            if self.bad():
                mask = self.rng.choice([[100], [-5], [2 ** 40], ["'a'"], [1.5]])
            e = f"{v[0]}.shuffle({self.rng.choice([w[0], 'None'])}, {mask})"
            kind = "v"
        elif r < 0.95:
            e = f"dsl.{self.rng.choice(['min', 'max'])}({v[0]}, {w[0]})"
            kind = "v"
        else:
            e = f"dsl.fma({v[0]}, {w[0]}, {self.scalar()})"
            kind = "v"
        self.emit(f"{self.fresh(kind, v[2])} = {e}")

    def typed_value(self, t, n=None):
        """A run-time value of type class `t` (a scalar, or an n-lane vector), mostly made from thread_idx so
        that nothing folds it away before the lowering; sometimes a constant, for the folders."""
        base = self.rng.choice(["dsl.thread_idx()", "dsl.lane_idx()", "dsl.Float32(dsl.thread_idx()) * 0.5", "3"])
        return f"dsl.full({n}, {base}, dsl.{t})" if n else f"dsl.convert({base}, dsl.{t})"

    def s_vector_more(self):
        """Vector methods on every element type (fp8, Index, Boolean too): two-vector shuffles, concat, to and
        bitcast to any type, reduce, lane counts up to the limit, lane-wise operators."""
        rng = self.rng
        t = rng.choice(ALL_T)
        n = rng.choice([2, 4, 8, 16, 3, 1]) if not self.bad() else rng.choice([512, 1024, 1025])
        v = self.fresh("v", t)
        self.emit(f"{v} = {self.typed_value(t, n)}")
        m, t2 = rng.choice([n, n, 2, 4]), t if not self.bad() else rng.choice(ALL_T)
        w = self.fresh("v", t2)
        self.emit(f"{w} = {self.typed_value(t2, m)}")
        r, kind = rng.random(), "v"
        if r < 0.2:
            mask = [rng.randrange(n + m) for _ in range(rng.randrange(1, 9))]
            if self.bad():
                mask[rng.randrange(len(mask))] = rng.choice([n + m, -1, "True", "1.5", "dsl.Int32(0)"])
            e = f"{v}.shuffle({w}, [{', '.join(map(str, mask))}])"
        elif r < 0.3:
            e = f"{v}.concat({rng.choice([w, v, self.scalar()])})"
        elif r < 0.5:
            e = f"{v}.to(dsl.{rng.choice(ALL_T)})"
        elif r < 0.6:
            e = f"{v}.bitcast(dsl.{rng.choice(ALL_T)})"
        elif r < 0.7:
            op = rng.choice(["'add'", "'mul'", "'max'", "'min'"] + (["'and'", "None", "[1]", "3"] if self.bad() else
                                                                      []))
            e, kind = f"{v}.reduce({op})", "s"
        elif r < 0.8:
            e = f"{v}.insert({self.int_lit(0, n)}, {rng.choice([self.scalar(), w + '[0]'])})"
        elif r < 0.9:
            e = rng.choice([f"-{v}", f"dsl.abs({v})"])
        elif r < 0.95:
            e, kind = f"{v}[{rng.choice(['0', self.scalar()])}]", "s"
        else:
            e = f"{v} {rng.choice(BIN_OPS + CMP_OPS)} {rng.choice([w, self.scalar(), v])}"
        self.emit(f"{self.fresh(kind, '?')} = {e}")
        if rng.random() < 0.5:
            self.sink(self.env[-1])

    def s_math_typed(self):
        """Math functions, dsl.fma/min/max/select/abs and comparisons on values of every element type,
        scalars and vectors, mixed with Python numbers and values of other types."""
        rng = self.rng
        t = rng.choice(ALL_T)
        n = rng.choice([None, None, 2, 4]) if not self.bad() else rng.choice([1, 3, 8])
        a = self.fresh("v" if n else "s", t)
        self.emit(f"{a} = {self.typed_value(t, n)}")
        other = lambda: rng.choice([  # noqa: E731 (an operand: itself, a scalar, a Python number, another type)
            a, a, self.scalar(), rng.choice(["2", "0.5", "True", "-1", "1e10"]),
            self.typed_value(rng.choice(ALL_T), n if not self.bad() else rng.choice([None, 2]))])
        r = rng.random()
        if r < 0.35:
            fn = rng.choice(["exp2", "exp", "log2", "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "abs"])
            e = f"dsl.{fn}({a})"
        elif r < 0.55:
            args = [a, other(), other()]
            rng.shuffle(args)
            e = f"dsl.fma({', '.join(args)})"
        elif r < 0.75:
            e = f"dsl.{rng.choice(['min', 'max'])}({', '.join(rng.sample([a, other()], 2))})"
        elif r < 0.9:
            c = rng.choice([self.cond(), f"{a} > {other()}", f"{a} == {a}"])
            e = f"dsl.select({c}, {', '.join(rng.sample([a, other()], 2))})"
        else:
            e = f"{a} {rng.choice(CMP_OPS + ['+', '*', '-'])} {other()}"
        self.emit(f"{self.fresh('v' if n else 's', '?')} = {e}")
        if rng.random() < 0.5:
            self.sink(self.env[-1])

    def s_desc(self):
        """Descriptors in memory: update_tma_descriptor to tensors of other static shapes, types and memory
        spaces, copy_tensormap, the descriptor fences, an atom read from a descriptor pointer."""
        rng = self.rng
        t = self.tensor()
        if t is None or t[0][0] != "x":
            return
        name, elem, shape = t
        tile = tuple(min(d, 32) if isinstance(d, int) else 16 for d in shape)
        atom = self.fresh("atom", (elem, tile))
        self.emit(f"{atom} = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), {name}, {tile})")
        # the new tensor: another parameter with a static shape, mostly of the atom's rank and element type
        shape2 = tuple(rng.choice([16, 64, 128, 256]) for _ in shape)
        elem2 = elem if not self.bad() else rng.choice(list(ELEM))
        if self.bad():
            shape2 = rng.choice([shape2 + (64,), shape2[:-1] or (64,), tuple(2 ** 40 for _ in shape)])
        new = f"u{self.n}"
        self.tensors_extra.append((new, elem2, shape2))
        s = self.pick("b")
        dst = rng.choice([new, new, new] + ([s[0]] if s and self.bad() else []) + (["3", "None"] if self.bad() else []))
        ptr = rng.choice([f"cpasync.address_of({name})", f"cpasync.address_of({new})"] +
                         ([f"cpasync.address_of({s[0]})"] if s else []) +
                         (["0", "dsl.Int64(0)", "None", f"cpasync.address_of({name}, [1] * {len(shape)})"]
                          if self.bad() else []))
        r = rng.random()
        if r < 0.5:
            self.emit(f"cpasync.update_tma_descriptor({atom if not self.bad() else rng.choice(['3', 'None'])}, {dst}, "
                      f"{ptr})")
            self.emit(rng.choice(["cpasync.fence_tma_desc_release()", f"cpasync.fence_tma_desc_acquire({ptr})"]))
        elif r < 0.7:
            self.emit(f"cpasync.copy_tensormap({atom}, {ptr})")
        elif r < 0.8 and s:
            self.emit(f"cpasync.cp_fence_tma_desc_release({rng.choice([ptr, f'cpasync.address_of({name})'])}, "
                      f"cpasync.address_of({s[0]}))")
        else:
            a2 = self.fresh("atom", (elem, tile))
            self.emit(f"{a2} = cpasync.make_tma_atom_from_descriptor({ptr}, {atom if not self.bad() else '3'})")
            sm, bar = self.fresh("b", ELEM.get(elem, "?")), self.fresh("bar")
            self.emit(f"{sm} = lang.SMEMPool().alloc_for({a2})")
            self.emit(f"{bar} = lang.TMABar(1)")
            self.emit("with lang.WarpRole(0):")
            self.emit(f"    {bar}.arrive_expect_tx(0, {a2}.tile_bytes)")
            self.emit(f"    cpasync.copy({a2}, [{', '.join('0' for _ in shape)}], {sm}, tma_bar_ptr={bar}.at(0))")
            self.emit(f"{bar}.wait(0, 0)")

    def s_sink(self):
        """Stores a value made earlier, so that its ops reach the lowering (an unused value is folded away)."""
        self.sink(self.pick(self.rng.choice(["s", "v"])))

    def sink(self, v):
        t = self.tensor()
        if t is None or v is None:
            return
        name, elem, shape = t
        cls = f"dsl.{ELEM.get(elem, 'Float32')}"
        idx = ", ".join("0" for _ in shape)
        if v[1] == "v" and self.rng.random() < 0.3:
            self.emit(f"{name}.store_vec(dsl.convert({v[0]}, {cls}), {idx})")
        else:
            self.emit(f"{name}[{idx}] = dsl.convert({v[0]}{'[0]' if v[1] == 'v' else ''}, {cls})")

    def s_load(self):
        t = self.tensor()
        if t is None:
            return
        name, elem, shape = t
        idx = ", ".join(self.index(d if isinstance(d, int) else 64) for d in shape)
        if self.bad(0.5):
            idx = ", ".join(self.index() for _ in range(self.rng.randrange(0, 4)))
        self.emit(f"{self.fresh('s', ELEM.get(elem, '?'))} = {name}[{idx or '()'}]")

    def s_store(self):
        t = self.tensor()
        if t is None:
            return
        name, elem, shape = t
        idx = ", ".join(self.index(d if isinstance(d, int) else 64) for d in shape)
        val = self.scalar()
        if self.bad(0.5):
            v = self.pick("v")
            val = v[0] if v else val
        self.emit(f"{name}[{idx or '()'}] = {val}")

    def s_vec_mem(self):
        t = self.tensor()
        if t is None:
            return
        name, elem, shape = t
        idx = [self.index(d if isinstance(d, int) else 64) for d in shape]
        if not self.bad():
            idx[-1] = "0"
        al = f", align={self.rng.choice(['4', '16', '0', '3', '-1', '2 ** 40'])}" if self.bad() else ""
        if self.rng.random() < 0.5:
            self.emit(f"{self.fresh('v', ELEM.get(elem, '?'))} = {name}.load_vec({self.lanes()}, {', '.join(idx)}{al})")
        else:
            v = self.pick("v")
            if v is None:
                return
            self.emit(f"{name}.store_vec({v[0]}, {', '.join(idx)}{al})")

    def body(self, n=None):
        """Statements of a nested region; names made inside die at its end."""
        saved = list(self.env)
        self.ind += 1
        self.depth += 1
        start = len(self.lines)
        for _ in range(n if n is not None else self.rng.randrange(1, 4)):
            if self.depth < 4:
                self.stmt()
            else:
                self.rng.choice([self.s_binop, self.s_store, self.s_const])()
        if len(self.lines) == start:
            self.emit("pass")
        made = [e for e in self.env if e not in saved]
        self.ind -= 1
        self.depth -= 1
        self.env = saved
        self.dead += made
        return made

    def cond(self):
        if self.bad():
            return self.rng.choice(["True", "1", "None", "dsl.Float32(1.0)", "dsl.thread_idx()", "'x'",
                                    "dsl.full(2, 1, dsl.Boolean)"])
        return self.rng.choice([f"dsl.thread_idx() < {self.rng.randrange(1, 200)}", "dsl.lane_idx() == 0",
                                "dsl.warp_idx() == 1", "dsl.elect_sync()", f"({self.scalar()}) > 0"])

    def s_if(self):
        scope = f", scope={self.rng.choice(O1)}" if self.bad() else ""
        results = self.rng.random() < 0.3
        self.emit(f"with dsl.if_({self.cond()}{scope}) as {self.fresh('br')}:")
        self.body()
        if results:
            self.ind += 1
            self.emit(f"dsl.yield_({self.scalar()})")
            self.ind -= 1
        if self.rng.random() < 0.5 or (results and not self.bad()):
            if self.bad(0.5):
                self.emit(f"{self.fresh('s', '?')} = dsl.Int32(0)")  # else_ no longer directly after
            self.emit("with dsl.else_():")
            self.body()
            if results and not self.bad(0.5):
                self.ind += 1
                self.emit(f"dsl.yield_({self.scalar()})")
                self.ind -= 1

    def s_range(self):
        if self.bad():
            bounds = ", ".join(self.rng.choice(["0", "-1", "2 ** 63", "1.5", "dsl.Float32(2.0)", "dsl.Int8(4)",
                                                "dsl.Boolean(True)", "dsl.Uint64(3)", "None", "4", "dsl.Index(2)"])
                               for _ in range(self.rng.randrange(1, 4)))
        else:
            bounds = self.rng.choice(["4", "0, 8, 2", "dsl.thread_idx() % 4", "dsl.Int32(3)", "1, 5"])
        kw = ""
        if self.rng.random() < 0.3:
            kw += f", unroll={self.rng.choice(O2)}"
        carry = self.rng.random() < 0.4
        if carry:
            init = [self.scalar() for _ in range(self.rng.randrange(1, 3))]
            kw += f", carry=({', '.join(init)},)"
            loop = self.fresh("loop")
            self.emit(f"{loop} = dsl.range({bounds}{kw})")
            i = self.fresh("s", "Index")
            names = [self.fresh("s", "?") for _ in init]
            self.emit(f"for {i}, ({', '.join(names)},) in {loop}:")
            self.body()
            self.ind += 1
            if not self.bad():
                self.emit(f"dsl.yield_({', '.join(self.scalar() if self.bad() else n for n in names)})")
            elif self.rng.random() < 0.5:
                self.emit(f"dsl.yield_({', '.join(self.scalar() for _ in range(self.rng.randrange(0, 4)))})")
            self.ind -= 1
            self.env = [e for e in self.env if e[0] not in names and e[0] != i]
            self.dead += [(n, "s", "?") for n in names]
            r = self.fresh("s", "?")
            self.emit(f"{r} = {loop}.results[0]")
        else:
            i = self.fresh("s", "Index")
            self.emit(f"for {i} in dsl.range({bounds}{kw}):")
            self.body()
            self.env = [e for e in self.env if e[0] != i]
            self.dead.append((i, "s", "Index"))

    def s_cond(self):
        a, b = self.scalar(), self.scalar()
        if self.bad(0.5):
            b = f"({self.scalar()}, {self.scalar()})"
        self.emit(f"{self.fresh('s', '?')} = dsl.cond({self.cond()}, lambda: {a}, lambda: {b})")

    def s_while(self):
        init = self.scalar() if self.bad() else "dsl.Int32(0)"
        loop = self.fresh("loop")
        c = self.rng.choice(["lambda i: i < 4", "lambda i: i", "lambda i: True", "lambda i, j: i < j",
                             "lambda i: i < 4"])
        self.emit(f"{loop} = dsl.while_({c}, carry=({init},))")
        i = self.fresh("s", "Int32")
        self.emit(f"for ({i},) in {loop}:")
        self.body(1)
        self.ind += 1
        if not self.bad():
            self.emit(f"dsl.yield_({i} + 1)")
        self.ind -= 1

    def s_shuffle(self):
        fn = self.rng.choice(["shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"])
        v = self.pick("v") if self.rng.random() < 0.2 else None
        val = v[0] if v else self.scalar()
        arg = self.int_lit(0, 32) if self.rng.random() < 0.7 else self.scalar()
        extra = ""
        if self.bad():
            extra = f", mask={self.rng.choice(['0', '-1', '2 ** 32', '2 ** 40', 'dsl.Float32(1.0)', 'None'])}"
        if self.bad():
            extra += f", width={self.rng.choice(['0', '3', '64', '-32', '33', '1', '16', 'None', 'dsl.Int32(8)'])}"
        self.emit(f"{self.fresh('s', '?')} = cuda.{fn}({val}, {arg}{extra})")

    def s_reduce(self):
        r = self.rng.random()
        v = self.pick("v") if self.rng.random() < 0.15 else None
        val = v[0] if v else self.scalar()
        if r < 0.4:
            op = self.rng.choice(["'sum'", "'max'", "'min'", "'and'", "'or'", "'xor'", "lambda a, b: a + b",
                                  "'avg'", "None", "3"])
            w = f", width={self.rng.choice(['32', '16', '8', '0', '3', '64', '-1', '1'])}" if self.rng.random() < 0.4 \
                else ""
            e = f"cuda.warp_reduce({val}, {op}{w})"
        elif r < 0.6:
            e = f"cuda.{self.rng.choice(['warp_sum', 'warp_max', 'warp_min'])}({val})"
        elif r < 0.8:
            e = f"cuda.{self.rng.choice(['cta_sum', 'cta_max', 'cta_min'])}({val})"
        else:
            e = f"cuda.{self.rng.choice(['ballot_sync', 'any_sync', 'all_sync', 'reduce_add_sync_u32', 'reduce_min_sync_u32', 'syncthreads_and', 'syncthreads_or'])}({val})"
        self.emit(f"{self.fresh('s', '?')} = {e}")

    def s_atomic(self):
        t = self.tensor()
        if t is None:
            return
        name, elem, shape = t
        fn = self.rng.choice(["atomic_add", "atomic_max", "atomic_min", "atomic_exch", "red_add", "atomic_cas"])
        idx = "(" + ", ".join(self.index(d if isinstance(d, int) else 64) for d in shape) + ",)"
        if self.bad(0.5):
            idx = self.rng.choice(["None", "()", "(0, 0, 0, 0)", "0"])
        v = self.pick("v") if self.rng.random() < 0.25 else None
        val = v[0] if v else self.scalar()
        sc = f", scope={self.rng.choice(O3)}" \
            if self.rng.random() < 0.3 else ""
        if fn == "atomic_cas":
            self.emit(f"{self.fresh('s', '?')} = cuda.atomic_cas({name}, {idx}, {self.scalar()}, {val}{sc})")
        else:
            self.emit(f"{self.fresh('s', '?')} = cuda.{fn}({name}, {idx}, {val}{sc})")

    def s_barrier(self):
        r = self.rng.random()
        if r < 0.3:
            self.emit("dsl.barrier()")
        elif r < 0.5:
            self.emit(f"cuda.barrier_sync({self.int_lit(0, 16)}, {self.rng.choice(['None', '128', '32', '33', '0', '-32', '2048'])})")
        elif r < 0.6:
            self.emit(f"cuda.barrier_arrive({self.int_lit(1, 16)}, {self.rng.choice(['128', '32', '31', '0'])})")
        elif r < 0.75:
            self.emit(f"cuda.thread_fence({self.rng.choice(O4)})")
        elif r < 0.85:
            self.emit(f"cuda.fence_proxy_async({self.rng.choice(O5)})")
        elif r < 0.92:
            self.emit(self.rng.choice(["dsl.cluster_sync()", "cuda.warp_sync()", "cuda.warpgroup_sync()",
                                       "cuda.warp_sync(0)", "dsl.cluster_arrive(relaxed=True)"]))
        else:
            self.emit(self.rng.choice(["cuda.griddepcontrol_wait()", "cuda.griddepcontrol_launch_dependents()"]))

    def shape(self, rank=None):
        rank = rank or self.rng.choice([1, 2, 2, 3])
        if self.bad():
            return "(" + ", ".join(self.rng.choice(["0", "-4", "2 ** 40", "2 ** 62", "1.5", "None", "64", "'8'",
                                                    "dsl.Int32(4)"]) for _ in range(rank)) + ",)"
        return "(" + ", ".join(str(self.rng.choice([2, 4, 8, 16, 32, 64])) for _ in range(rank)) + ",)"

    def s_smem(self):
        t = self.dtype()
        r = self.rng.random()
        shape = self.shape()
        kw = ""
        if self.rng.random() < 0.3:
            kw += f", swizzle={self.rng.choice(O6)}"
        if self.rng.random() < 0.2:
            kw += f", align={self.rng.choice(['16', '1024', '0', '3', '-128', '2 ** 40'])}"
        name = self.fresh("b", t)
        if r < 0.8:
            self.emit(f"{name} = lang.SMEMPool().alloc({shape}, {self.dname(t)}{kw})")
        else:
            self.emit(f"{name} = lang.SMEMPool().alloc_static({shape}, {self.dname(t)})")
        try:
            dims = eval(shape)  # noqa: S307 (our own literal)
            if all(isinstance(d, int) and d > 0 for d in dims):
                self.tensors.append((name, {v: k for k, v in ELEM.items()}.get(t, t), dims))
        except Exception:
            pass
        if self.rng.random() < 0.3:
            if self.rng.random() < 0.5:
                self.emit(f"{self.fresh('b', t)} = {name}.stage({self.index(4)})")
            else:
                self.emit(f"{self.fresh('b', t)} = {name}.reshape({self.shape()})")

    def s_tma(self):
        t = self.tensor()
        if t is None or t[0][0] != "x":
            return
        name, elem, shape = t
        op = self.rng.choice(["G2S", "G2S", "S2G", "MC", "Reduce"])
        opx = {"G2S": "cpasync.CopyBulkTensorTileG2SOp()", "S2G": "cpasync.CopyBulkTensorTileS2GOp()",
               "MC": "cpasync.CopyBulkTensorTileG2SMulticastOp()",
               "Reduce": "cpasync.CopyReduceBulkTensorTileS2GOp()"}[op]
        tile = "(" + ", ".join(str(min(d, self.rng.choice([8, 16, 32, 64]))) if isinstance(d, int) else "16"
                               for d in shape) + ",)"
        if self.bad():
            tile = self.shape(len(shape) if self.rng.random() < 0.7 else None)
        kw = ""
        if self.rng.random() < 0.5:
            kw += f", swizzle={self.rng.choice(O7)}"
        if self.rng.random() < 0.3:
            kw += f", l2_promotion={self.rng.choice(O8)}"
        if op == "MC" or self.bad(0.3):
            kw += f", num_multicast={self.rng.choice(['2', '1', '0', '3', '-1', '2.0'])}"
        atom = self.fresh("atom", (elem, tile))
        self.emit(f"{atom} = cpasync.make_tiled_tma_atom({opx}, {name}, {tile}{kw})")
        s = self.fresh("b", ELEM.get(elem, "?"))
        self.emit(f"{s} = lang.SMEMPool().alloc_for({atom}{', stages=' + self.int_lit(1, 4) if self.bad() else ''})")
        bar = self.fresh("bar")
        self.emit(f"{bar} = lang.TMABar({self.int_lit(1, 3) if self.bad() else 1})")
        self.emit("dsl.barrier()")
        role = self.rng.choice(["with lang.WarpRole(0):", "with lang.WarpRole(0):", "with dsl.if_(dsl.thread_idx() == 0):",
                                "if True:"])
        self.emit(role)
        self.ind += 1
        if op in ("G2S", "MC"):
            self.emit(f"{bar}.arrive_expect_tx({self.index(2) if self.bad() else 0}, {atom}.tile_bytes)")
        coords = ", ".join(self.index(4) for _ in shape) if not self.bad() else \
            ", ".join(self.index() for _ in range(self.rng.randrange(0, 4)))
        extra = f", tma_bar_ptr={bar}.at(0)" if op in ("G2S", "MC") and not self.bad() else ""
        if op == "MC":
            extra += ", mcast_mask=3, cta_rank=dsl.cluster_ctarank()"
        if self.rng.random() < 0.2:
            extra += f", cache_hint={self.rng.choice(O9)}"
        self.emit(f"cpasync.copy({atom}, [{coords}], {s}{extra})")
        self.ind -= 1
        if op in ("G2S", "MC"):
            self.emit(f"{bar}.wait(0, {self.rng.choice(['0', '1', 'dsl.Boolean(True)', '2', 'None'] if self.bad() else ['0'])})")

    def s_wgmma(self):
        r = self.rng.random()
        if r < 0.25:
            args = [self.rng.choice(["0", "16", "1024", "8", "-16", "2 ** 18", "1.5"]) for _ in range(3)]
            self.emit(f"{self.fresh('s', '?')} = dsl.Uint64(wgmma.descriptor_bits({', '.join(args)}, "
                      f"{self.rng.choice(O10)}, {self.int_lit(0, 8)}))")
            return
        if r < 0.45:
            n = self.rng.choice(["64", "8", "256", "12", "0", "512", "-8", "64.0"]) if self.bad() else \
                self.rng.choice(["64", "32", "128", "8"])
            acc = self.fresh("acc", n)
            kw = f", dtype={self.dname(self.dtype())}" if self.bad() else ""
            kw += f", m={self.rng.choice(['64', '128', '0'])}" if self.bad() else ""
            self.emit(f"{acc} = wgmma.Accumulator({n}{kw})")
            if self.rng.random() < 0.5:
                self.emit(f"{self.fresh('s', 'Float32')} = {acc}[{self.int_lit(0, 4)}]")
            return
        # a full tile: TMA-loaded operands then mma
        dt = self.rng.choice(["bf16", "f16", "f8E4M3FN"] + (["f32", "i8", "e5m2"] if self.bad() else []))
        K = self.rng.choice([64, 128] if dt != "f8E4M3FN" else [128]) if not self.bad() else \
            self.rng.choice([16, 32, 48, 64, 128, 256])
        n = self.rng.choice([64, 32]) if not self.bad() else self.rng.choice([8, 16, 24, 64, 96])
        sw = "swizzle_128b" if not self.bad() else self.rng.choice(["swizzle_64b", "swizzle_32b", "none",
                                                                      "swizzle_128b"])
        self.tensors_extra.append((f"wa{self.n}", dt, (64, 256)))
        self.tensors_extra.append((f"wb{self.n}", dt, (n, 256)))
        a, b = f"wa{self.n}", f"wb{self.n}"
        self.n += 1
        self.emit(f"la = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), {a}, (64, {K}), swizzle='{sw}')")
        self.emit(f"lb = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), {b}, ({n}, {K}), swizzle='{sw}')")
        self.emit("sa, sb = lang.SMEMPool().alloc_for(la), lang.SMEMPool().alloc_for(lb)")
        self.emit("wbar = lang.TMABar(1)")
        self.emit("dsl.barrier()")
        self.emit("with lang.WarpRole(0):")
        self.emit("    wbar.arrive_expect_tx(0, la.tile_bytes + lb.tile_bytes)")
        self.emit("    cpasync.copy(la, [0, 0], sa, tma_bar_ptr=wbar.at(0))")
        self.emit("    cpasync.copy(lb, [0, 0], sb, tma_bar_ptr=wbar.at(0))")
        self.emit("wbar.wait(0, 0)")
        self.emit("da, db = wgmma.SmemDescriptor(sa), wgmma.SmemDescriptor(sb)")
        acc = self.fresh("acc", str(n))
        nacc = n if not self.bad() else self.rng.choice([8, 64, 128, 256])
        self.emit(f"{acc} = wgmma.Accumulator({nacc})")
        self.emit("wgmma.fence()")
        kbs = K * {"bf16": 16, "f16": 16, "f32": 32, "i8": 8}.get(dt, 8) // 256  # K-blocks of 256 bits
        kbs = kbs if not self.bad() else kbs + self.rng.choice([1, 2])
        if self.bad():
            bt = self.rng.choice(["'e4m3'", "'bf16'", "'tf32'", "'s8'", "'x'"])
            self.emit(f"for kb in range({kbs}):")
            self.emit(f"    {acc} = wgmma.mma_async({acc}, da.k_block(kb), db.k_block(kb), b_type={bt})")
        elif self.rng.random() < 0.3:
            self.emit(f"for kb in range({kbs}):")
            self.emit(f"    regs = cuda.ldmatrix(sa, 16 * dsl.warp_idx() + dsl.lane_idx() % 16, kb * 16 + "
                      f"(dsl.lane_idx() // 16) * 8, num={self.rng.choice(['4', '4', '2', '3'])})")
            self.emit(f"    {acc} = wgmma.mma_async({acc}, regs, db.k_block(kb), a_type='{dt}')")
        else:
            self.emit(f"for kb in range({kbs}):")
            self.emit(f"    {acc} = wgmma.mma_async({acc}, da.k_block(kb), db.k_block(kb))")
        self.emit("wgmma.commit_group()")
        self.emit(f"wgmma.wait_group({self.int_lit(0, 2) if self.bad() else 0})")
        self.emit(f"{self.fresh('s', 'Float32')} = {acc}[{self.int_lit(0, 4)}]")

    def s_cpasync(self):
        t = self.tensor()
        if t is None:
            return
        name, elem, shape = t
        s = self.pick("b")
        r = self.rng.random()
        if s is None:
            return
        idx = ", ".join(self.index(4) for _ in shape)
        if r < 0.6:
            size = self.rng.choice(["16", "8", "4", "16", "2", "32", "0", "dsl.Int32(16)"]) if self.bad() else \
                self.rng.choice(["16", "8", "4"])
            opk = ", op=cpasync.CopyG2SOp(cpasync.LoadCacheMode.GLOBAL)" if self.rng.random() < 0.3 else ""
            self.emit(f"cpasync.cp_async(cpasync.address_of({s[0]}), cpasync.address_of({name}, [{idx}]), {size}{opk})")
            self.emit("cpasync.cp_async_commit_group()")
            self.emit(f"cpasync.cp_async_wait_group({self.int_lit(0, 2)})")
        else:
            opx = self.rng.choice(["CopyBulkG2SOp", "CopyBulkS2GOp", "CopyBulkS2SOp"])
            size = self.rng.choice(["16", "256", "15", "0", "-16", "2 ** 40"]) if self.bad() else "256"
            bar = self.fresh("bar")
            self.emit(f"{bar} = lang.TMABar(1)")
            self.emit("with lang.WarpRole(0):")
            dst, src = (f"cpasync.address_of({s[0]})", f"cpasync.address_of({name})")
            if opx != "CopyBulkG2SOp":
                dst, src = src, dst
            bp = f", tma_bar_ptr={bar}.at(0)" if opx == "CopyBulkG2SOp" else ""
            self.emit(f"    cpasync.bulk_copy(cpasync.{opx}(), {dst}, {src}, {size}{bp})")

    def s_mbarrier(self):
        bar = self.fresh("bar")
        depth = self.int_lit(1, 4) if self.bad() else "2"
        count = self.rng.choice(["1", "128", "0", "-1", "2 ** 40", "dsl.Int32(2)"]) if self.bad() else "1"
        self.emit(f"{bar} = lang.MBarrier({depth}, {count})")
        stage = self.index(2)
        r = self.rng.random()
        if r < 0.5:
            self.emit(f"{bar}.arrive({stage})")
        elif r < 0.7:
            self.emit(f"{bar}.arrive({stage}, count={self.rng.choice(['1', '0', '-1', '2 ** 40', 'dsl.Float32(1.0)'])})")
        self.emit(f"{bar}.wait({stage}, {self.rng.choice(['0', '1', 'dsl.Boolean(False)'] + (['2', '-1', 'None', '1.5'] if self.bad() else []))})")
        if self.rng.random() < 0.3:
            pdepth = self.int_lit(1, 5)
            self.emit(f"pipe = lang.Pipeline({pdepth}, full={self.rng.choice(O11)})")
            self.emit(f"st = lang.PipelineState({pdepth})")
            self.emit("pipe.producer_acquire(st)")
            self.emit(f"st = st.advance({self.rng.choice(['1', '2', '0', '-1', 'dsl.Int32(3)', '100'])})")
            self.emit("pipe.consumer_wait(st)")

    def s_lang(self):
        """Pipelines, roles, schedulers, descriptors and the rest of lang/cpasync/wgmma/cuda."""
        rng = self.rng
        r = rng.random()
        W = lambda good, bad: rng.choice(bad) if self.bad() else rng.choice(good)  # noqa: E731
        if r < 0.12:
            st = self.fresh("st")
            self.emit(f"{st} = lang.PipelineState({W(['2', '4'], ['0', '-1', '1.5', 'None', 'dsl.Int32(2)'])}"
                      f"{', ' + self.scalar() if rng.random() < 0.3 else ''})")
            self.emit(f"{st} = {st}.advance({W(['1', '2', 'dsl.Int32(1)'], ['-1', '100', 'None', '1.5', 'True'])})")
            self.emit(f"{self.fresh('s', '?')} = {st}.index")
        elif r < 0.22:
            pipe = self.fresh("pipe")
            d = W(["2", "4"], ["0", "1.5", "-2"])
            self.emit(f"{pipe} = lang.Pipeline({d}, full={W(L0, L1)}, "
                      f"empty={W(L2, L3)}, init_empty={W(['1', '4'], ['0', '-1'])})")
            st = self.fresh("st")
            self.emit(f"{st} = lang.PipelineState({d})")
            self.emit(f"with lang.WarpRole({W(['0', '1'], ['-1', '64', 'dsl.Int32(0)', 'None'])}"
                      f"{', regs=' + rng.choice(['40', '232', '20', '300']) if rng.random() < 0.3 and self.bad() else ''}):")
            self.emit(f"    {pipe}.producer_acquire({st})")
            self.emit(f"    {pipe}.producer_commit({st}{', ' + W(['1024'], ['None', '-1', '2 ** 40']) if rng.random() < 0.7 else ''})")
            self.emit(f"{pipe}.consumer_wait({st})")
            self.emit(f"{pipe}.consumer_release({st}{', elect=False' if rng.random() < 0.3 else ''}"
                      f"{', ranks=' + W(['[0]'], ['[0, 1]', '[16]', '[-1]']) if rng.random() < 0.2 else ''})")
        elif r < 0.32:
            kind = rng.choice(["PersistentTileScheduler({n}{c})", "ClusterPersistentScheduler2D({n}, {n})",
                               "GroupMajor3D({n}, 2, 2, {g})", "FlashAttentionLinearScheduler(2, {n}, 4)"])
            n = W(["8", "dsl.Int32(8)", "p0" if any(e[0] == "p0" for e in self.env) else "8"],
                  ["0", "-1", "1.5", "None", "dsl.Float32(2.0)", "2 ** 40"])
            c = f", cluster_size={W(['2'], ['0', '17', '1.5', 'True'])}" if rng.random() < 0.3 else ""
            t = self.fresh("tile")
            self.emit(f"for {t} in lang.{kind.format(n=n, c=c, g=W(['2'], ['0', '-1']))}:")
            self.ind += 1
            self.emit(f"{self.fresh('s', '?')} = {t}.i")
            self.ind -= 1
        elif r < 0.4:
            self.emit(f"with lang.WarpgroupRole({W(['0', '(0, 1)'], ['-1', '(1, 0)', '(0, 100)', 'None', '1.5'])}"
                      f"{', regs=' + W(['40', '232'], ['7', '1000']) if rng.random() < 0.4 else ''}"
                      f"{', increase=True' if rng.random() < 0.3 else ''}):")
            self.body(1)
        elif r < 0.5:
            t = self.tensor()
            if t is None or t[0][0] != "x":
                return
            atom = self.fresh("atom")
            self.emit(f"{atom} = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), {t[0]}, "
                      f"{tuple(min(d, 32) if isinstance(d, int) else 16 for d in t[2])})")
            self.emit(f"{self.fresh('s', '?')} = cpasync.tma_partition({atom}, [{', '.join(self.index(4) for _ in range(len(t[2]) if not self.bad() else rng.randrange(0, 4)))}])[0]")
            self.emit("with lang.WarpRole(0):")
            self.emit(f"    cpasync.prefetch({atom}, [{', '.join(self.index(4) for _ in t[2])}]"
                      f"{', cta_rank=0' if self.bad() else ''}{', cache_hint=' + W(L4, L5) if rng.random() < 0.3 else ''})")
            if rng.random() < 0.3:
                self.emit(f"cpasync.prefetch_descriptor({atom})")
        elif r < 0.58:
            cs = W(["(2,)", "(2, 2)"], ["()", "(0,)", "(-1,)", "(2 ** 40,)", "(1.5,)"])
            self.emit(f"{self.fresh('s', 'Int16')} = cpasync.create_tma_multicast_mask({cs}, "
                      f"({W(['dsl.cluster_ctarank()', '0'], ['None', '1.5'])},), {W(['0'], ['3', '-1', '2 ** 40'])})")
        elif r < 0.66:
            s = self.pick("b")
            if s is None:
                return
            regs = W(["dsl.vector_of([dsl.Uint32(0)] * 4)", "[dsl.Int32(0), dsl.Int32(1)]"],
                     ["[]", "[dsl.Int32(0)] * 3", "[dsl.Float32(1.0)]", "[None]"])
            self.emit(f"cuda.stmatrix({s[0]}, {self.index(8)}, {self.index(8)}, {regs}"
                      f"{', trans=True' if rng.random() < 0.3 else ''})")
        elif r < 0.74:
            addr = W(["dsl.Uint32(1024)", "cpasync.address_of(lang.SMEMPool().alloc((64, 64), dsl.Float16))"],
                     ["None", "dsl.Float32(1.0)", "2 ** 40", "-16"])
            self.emit(f"{self.fresh('s', 'Uint64')} = wgmma.encode_matrix_descriptor({addr}, "
                      f"{W(['16'], ['8', '-16', '2 ** 20'])}, {W(['1024'], ['1000', '2 ** 30'])}, "
                      f"{W(L6, L7)})")
        elif r < 0.82:
            v = self.scalar()
            self.emit(f"{self.fresh('s', 'Boolean')} = cuda.{rng.choice(['syncthreads_and', 'syncthreads_or', 'any_sync', 'all_sync'])}({v})")
        elif r < 0.9:
            s = self.pick("b")
            if s is None:
                return
            self.emit(f"{self.fresh('b', s[2])} = lang.SMEMPool().alias({s[0]}, {self.shape()}, {self.dname(self.dtype())})")
        else:
            self.emit(f"{self.fresh('s', '?')} = cuda.{rng.choice(['uint_as_float', 'float_as_uint', 'half2float', 'ffs_u32'])}({self.scalar()})")

    def s_misc(self):
        r = self.rng.random()
        if r < 0.2:
            args = ", ".join(self.scalar() for _ in range(self.rng.randrange(0, 3)))
            fmt = self.rng.choice(["'%d\\n'", "'%f %d'", "'x'", "''", "'%s'", "3", "'%d' * 40"])
            self.emit(f"cuda.printf({fmt}{', ' if args else ''}{args})")
        elif r < 0.35:
            self.emit(f"cuda.nano_sleep({self.scalar()})")
        elif r < 0.5:
            self.emit(f"{self.fresh('s', 'Int32')} = cuda.ffs_u32({self.scalar()})")
        elif r < 0.6:
            self.emit(f"{self.fresh('s', 'Int64')} = cuda.clock64()")
        elif r < 0.75:
            s = self.pick("b")
            if s:
                self.emit(f"{self.fresh('v', 'Uint32')} = cuda.ldmatrix({s[0]}, {self.index(8)}, {self.index(8)}, "
                          f"num={self.rng.choice(['1', '2', '4', '3', '8'])})")
        elif r < 0.85:
            self.emit(f"{self.fresh('s', 'Int32')} = dsl.{self.rng.choice(['thread_idx', 'block_idx', 'cluster_ctaid', 'block_dim'])}"
                      f"({self.rng.choice(O12)})")
        elif r < 0.92:
            v = self.pick("s")
            if v:
                self.emit(f"cuda.trap_when_assert_failed({v[0]})")
        else:
            t = self.tensor()
            if t:
                self.emit(f"{self.fresh('s', '?')} = {t[0]}.shape[{self.int_lit(0, 3)}]")
                self.emit(f"{self.fresh('s', '?')} = len({t[0]})")

    def event_name(self):
        if self.bad():
            return self.rng.choice(["''", "'x' * 200", "3", "None", "'a\\n'", "dsl.Int32(1)"])
        return repr(self.rng.choice("abcde"))

    def event_kw(self):
        kw = []
        if self.rng.random() < 0.2:
            kw.append(f"scope={self.rng.choice(['warp', 'warpgroup']) if not self.bad() else 'block'!r}")
        if self.rng.random() < 0.15:
            kw.append(f"role={self.event_name()}")
        return "".join(", " + k for k in kw)

    def s_profile(self):
        """Profiler events (the program made `prof` at its top level): ranges, marks, push/pop, start/end
        spans and roles, around other statements, in branches and loops; wrong ones unbalanced, ended twice,
        popped by another name, or with bad names and scopes."""
        r = self.rng.random()
        if r < 0.3:
            self.emit(f"with prof.range({self.event_name()}{self.event_kw()}):")
            self.body()
        elif r < 0.45:
            self.emit(f"prof.mark({self.event_name()}{self.event_kw()})")
        elif r < 0.6:
            name = self.event_name()
            self.emit(f"prof.push({name}{self.event_kw()})")
            if self.rng.random() < 0.5:
                self.stmt()
            if not self.bad(0.5):
                self.emit(f"prof.pop({name if self.rng.random() < 0.5 else ''})")
            elif self.rng.random() < 0.5:
                self.emit(f"prof.pop({self.event_name()})")
        elif r < 0.8:
            h = self.fresh("span")
            self.emit(f"{h} = prof.start({self.event_name()}{self.event_kw()})")
            if self.rng.random() < 0.5:
                self.stmt()
            if not self.bad(0.5):  # (else the span is left unended: a build error)
                self.emit(f"prof.end({h})")
                if self.bad(0.3):
                    self.emit(f"prof.end({h})")
        elif r < 0.9:
            self.emit(f"with prof.role({self.event_name()}):")
            self.body()
        else:  # an event where only some lanes or warps run
            self.emit(f"with dsl.if_({self.cond()}):")
            self.ind += 1
            self.emit(f"prof.mark({self.event_name()}{self.event_kw()})")
            self.ind -= 1

    # ------------------------------------------------------------- a program
    def program(self, seed: int) -> str:
        rng = self.rng
        self.tensors_extra = []
        params = []
        for i in range(rng.randrange(1, 4)):
            elem = rng.choice(["f32", "f32", "f16", "bf16", "i32", "i8", "f8E4M3FN", "i64", "u32", "index", "i16", "f64",
                               "e5m2", "u8", "u64", "i1"])
            rank = rng.choice([1, 2, 2])
            shape = tuple(rng.choice([64, 128, 256]) for _ in range(rank))
            if rng.random() < 0.2:
                shape = shape[:-1] + (None,) if rank > 1 else (None,)
            spec_shape = repr(shape)
            spec_elem = repr(elem)
            if self.bad(0.5):
                spec_shape = rng.choice(["(-1,)", "(2 ** 62, 2 ** 62)", "(0,)", "(2 ** 64,)", "(1.5,)", "()",
                                         "(True,)", "[64, 64]", "(2 ** 31, 4)"])
            if self.bad(0.3):
                spec_elem = rng.choice(["'f33'", "'i4'", "None", "'index'", "'i1'", "'f64'"])
            params.append(f"x{i}: dsl.Tensor({spec_elem}, {spec_shape})")
            try:
                self.tensors.append((f"x{i}", elem, eval(spec_shape)))  # noqa: S307
            except Exception:
                pass
        for i in range(rng.randrange(0, 3)):
            t = rng.choice(["Int32", "Float32", "Float16", "Uint32", "Int64", "Boolean", "Index"])
            name = f"p{i}"
            params.append(f"{name}: dsl.{t}" if not self.bad(0.3) else f"{name}: {rng.choice(O13)}")
            self.env.append((name, "s", t))
        self.tensors = [t for t in self.tensors if isinstance(t[2], tuple) and
                        all(d is None or (isinstance(d, int) and 0 < d < 2 ** 31) for d in t[2]) and t[2]]
        block = rng.choice(["128", "128", "32", "256", "64"])
        if self.bad(0.5):
            block = rng.choice(["0", "2048", "(32, 32, 2)", "-1", "1.5", "()", "(1, 2, 3, 4)", "None", "33"])
        self.block = block
        kw = [f"block=({block},)" if not block.startswith("(") and block != "None" else f"block={block}"]
        if rng.random() < 0.15 or self.bad(0.3):
            kw.append(f"cluster={rng.choice(['(2,)', '(2, 1, 1)', '(4, 2, 2)', '(0,)', '(17,)', '(1,)'])}")
        kw.append(f"arch={rng.choice(ARCHS) if self.bad(0.5) else 'sm_90a'!r}")
        kw.append(f"ptx={rng.choice(PTXS) if self.bad(0.5) else '86'}")
        if rng.random() < 0.05:
            kw.append("pdl=True")
        if rng.random() < 0.15:  # a Profiler, and events among the statements (s_profile)
            self.prof = True
            elem = "'i64'" if not self.bad(0.3) else rng.choice(["'f32'", "'i32'", "'u64'"])
            params.append(f"xp: dsl.Tensor({elem}, (None,))")
            scope = rng.choice(["'warp'", "'warp'", "'warpgroup'"]) if not self.bad(0.3) else "'cta'"
            events = rng.choice(["64", "8", "1"]) if not self.bad(0.3) else rng.choice(["0", "2 ** 20", "True", "1.5"])
            if self.bad(0.2):  # made where not every thread runs, or twice
                self.emit(rng.choice(["with dsl.if_(dsl.thread_idx() < 64):", "for _p in dsl.range(2):"]))
                self.emit(f"    prof = profile.Profiler(xp, events_per_warp={events}, scope={scope})")
            else:
                self.emit(f"prof = profile.Profiler(xp, events_per_warp={events}, scope={scope})")
        for _ in range(rng.randrange(2, 9)):
            self.stmt()
        if self.bad(0.2):
            # deep region nesting, built by a Python loop
            self.emit("import contextlib")
            self.emit("with contextlib.ExitStack() as _st:")
            self.emit(f"    for _ in range({rng.choice([50, 300, 2000])}):")
            self.emit("        _st.enter_context(dsl.if_(dsl.thread_idx() < 7))")
            self.emit("    x_ = dsl.Int32(1) + 1")
        if self.bad(0.2):
            # a branch entered and never exited (a hand-made __enter__, an unclosed ExitStack)
            self.emit(rng.choice(["dsl.if_(dsl.thread_idx() < 3).__enter__()",
                                  "__import__('contextlib').ExitStack().enter_context(dsl.if_(dsl.lane_idx() == 0))"]))
            if rng.random() < 0.5:
                self.stmt()
        prelude = []
        if self.bad(0.3):
            # values kept from another kernel's build (a global, a closure, a cached helper)
            what = rng.choice(["dsl.thread_idx()", "x", "dsl.full(2, 1.0)", "wgmma.Accumulator(8)", "lang.MBarrier(1)",
                               "dsl.Float32(2.0)", "lang.PipelineState(2)"])
            prelude = ["_LEAK = []", "", "", "@dsl.kernel(block=(128,))",
                       "def k_prev(x: dsl.Tensor('f32', (64,))):", f"    _LEAK.append({what})", "", "",
                       "k_prev.build()" if rng.random() < 0.8 else "k_prev.compile()", "", ""]
            use = {"x": "_LEAK[0][0] = 1.0", "dsl.full(2, 1.0)": f"{self.fresh('v', 'Float32')} = _LEAK[0] + 1.0",
                   "wgmma.Accumulator(8)": f"{self.fresh('s', 'Float32')} = _LEAK[0][1]",
                   "lang.MBarrier(1)": "_LEAK[0].arrive(0)",
                   "lang.PipelineState(2)": "_LEAK[0] = _LEAK[0].advance()"}.get(what, f"{self.fresh('s', '?')} = "
                                                                                f"_LEAK[0] * 2")
            at = rng.randrange(len(self.lines) + 1)
            nxt = self.lines[at] if at < len(self.lines) else "    "
            self.lines.insert(at, nxt[:len(nxt) - len(nxt.lstrip())] + use)  # indented like the line it precedes
            if rng.random() < 0.3:
                self.lines.append("    print(repr(_LEAK[0]))")
        body = self.lines or ["    pass"]
        for nm, elem, shape in self.tensors_extra:
            params.append(f"{nm}: dsl.Tensor({elem!r}, {shape!r})")
        head = [f"# fuzz_dsl seed {seed}", "from nvtma import cpasync, cuda, dsl, lang, profile, wgmma", "", ""]
        head += prelude + [
            f"@dsl.kernel({', '.join(kw)})", f"def k({', '.join(params)}):"]
        tail = ["", "", "if __name__ == '__main__':", "    print(len(k.compile().ptx))"]
        return "\n".join(head + body + tail) + "\n"


def generate(seed: int, rate: float = 0.08, wrong_lines=None) -> str:
    """The program of `seed`; `wrong_lines`, a set, gets the generator's lines that chose a wrong value."""
    rng = random.Random(f"dsl:{seed}")
    g = Gen(rng, rate if rng.random() < 0.8 else rate * 3)
    src = g.program(seed)
    if wrong_lines is not None:
        wrong_lines |= g.bad_lines
    return src


# --------------------------------------------------------------------------- the child

# Untyped errors found and not fixed yet: reported, counted as "known", not
# as new bugs. (the file raising it, what it says.) @dsl.kernel(block=None),
# the first, is now a KernelBuildError (rule launch-config).
KNOWN: list = []


def classify(e: BaseException, filename: str) -> tuple[str, str]:
    """(outcome, detail) of an exception a program raised."""
    from nvtma.compiler import CompileError
    from nvtma.dsl import KernelBuildError
    name = type(e).__name__
    tb = traceback.extract_tb(e.__traceback__)
    inner = tb[-1] if tb else None
    if isinstance(e, KernelBuildError):
        detail = f"KernelBuildError({e.rule})" + ("" if e.where and filename in e.where else " no-line")
        if e.rule == "verify":  # the DSL left the check to the IR's verifier: which op (a check it could make)
            op = re.search(r"'([\w.]+)' op ([^,;(]{0,60})", str(e))
            detail += f": {op.group(1)} {op.group(2).strip()}" if op else ""
        return "typed", detail
    if isinstance(e, CompileError):
        msg = str(e)
        early = msg.startswith(("arch ", "ptx_version ", "opt level", "unsupported target"))
        return ("typed" if early else "late"), "CompileError" + ("" if early else ": " + msg.splitlines()[0][:80])
    mod = type(e).__module__ or ""
    if mod.startswith("nvtma") and not name.endswith("MLIRError") and "ir" not in mod.split("."):
        return "typed", name
    if isinstance(e, (ValueError, TypeError)) and not name.endswith("MLIRError"):
        if inner is not None and inner.filename == filename:
            return "typed", f"{name} at the program's line"
        if inner is not None and (inner.line or "").lstrip().startswith("raise "):
            return "typed", f"{name} raised in {Path(inner.filename).name}:{inner.lineno}"
    if inner is not None and inner.filename == filename and isinstance(e, (AttributeError, IndexError, KeyError,
                                                                          ZeroDivisionError, OverflowError,
                                                                          NameError, ImportError, MemoryError)):
        return "typed", f"{name} at the program's line"
    where = f"{Path(inner.filename).name}:{inner.lineno}" if inner is not None else "?"
    for f, m in KNOWN:
        if inner is not None and Path(inner.filename).name == f and m in str(e):
            return "known", f"{name} at {where}: {str(e).splitlines()[0][:120]}"
    return "UNTYPED", f"{name} at {where}: {str(e).splitlines()[0][:120] if str(e) else ''}"


def child() -> int:
    os.environ.setdefault("NVTMA_CACHE", "0")
    sys.setrecursionlimit(4000)
    out = sys.stdout
    # each program is a real file, so that errors can name its lines
    work = Path(tempfile.mkdtemp(prefix="nvtma-fuzz-dsl-"))
    for line in sys.stdin:
        job = json.loads(line)
        path = work / f"fuzz_dsl_{job['seed']}.py"
        path.write_text(job["source"])
        filename = str(path)
        print(json.dumps({"start": job["seed"]}), file=out, flush=True)
        t0 = time.time()
        try:
            g = {"__name__": "fuzz_dsl_program", "__file__": filename}
            exec(compile(job["source"], filename, "exec", dont_inherit=True), g)  # noqa: S102 (our own generated program)
            g["k"].compile()
            outcome, detail = "ok", ""
        except BaseException as e:  # noqa: BLE001 (classifying every kind is the point)
            if isinstance(e, KeyboardInterrupt):
                raise
            try:
                outcome, detail = classify(e, filename)
            except BaseException as e2:  # noqa: BLE001
                outcome, detail = "UNTYPED", f"classify failed: {e2!r}"
            if outcome in ("UNTYPED", "late"):
                detail += "\n" + "".join(traceback.format_exception(e, limit=-8))[-3000:]
        print(json.dumps({"done": job["seed"], "outcome": outcome, "detail": detail,
                          "seconds": round(time.time() - t0, 2)}), file=out, flush=True)
        path.unlink()
    shutil.rmtree(work, ignore_errors=True)
    return 0


# --------------------------------------------------------------------------- the parent

def run_batch(jobs, timeout, results, record):
    """Runs jobs [(seed, source)] in children, restarting one after a crash or hang."""
    pending = list(jobs)
    while pending:
        env = dict(os.environ, NVTMA_CACHE="0", PYTHONFAULTHANDLER="1")
        p = subprocess.Popen([sys.executable, __file__, "--child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, text=True)
        for seed, src in pending:
            p.stdin.write(json.dumps({"seed": seed, "source": src}) + "\n")
        p.stdin.close()
        current, deadline = None, time.time() + timeout + 30
        finished = set()
        while True:
            left = deadline - time.time()
            if left <= 0:
                p.kill()
                p.wait()
                err = p.stderr.read()
                seed = current if current is not None else pending[len(finished)][0]
                record(seed, dict(pending)[seed], "HANG", f"no answer in {timeout} s\n{err[-3000:]}")
                results[seed] = ("HANG", "")
                finished.add(seed)
                break
            r, _, _ = select.select([p.stdout], [], [], left)
            if not r:
                continue
            line = p.stdout.readline()
            if not line:  # the child ended
                rc = p.wait()
                err = p.stderr.read()
                if current is not None and current not in finished:
                    record(current, dict(pending)[current], "CRASH", f"exit status {rc}\n{err[-4000:]}")
                    results[current] = ("CRASH", f"rc={rc}")
                    finished.add(current)
                elif rc != 0 and len(finished) == len(pending) and len(pending) > 1:
                    # every program answered, then the process died (at
                    # interpreter exit): replay them one per child to find which
                    for seed, src in pending:
                        one = {}
                        run_batch([(seed, src)], timeout, one, record)
                        if one.get(seed, ("",))[0] == "CRASH":
                            results[seed] = one[seed]
                elif rc != 0:
                    seed = pending[0][0]
                    record(seed, pending[0][1], "CRASH", f"exit status {rc} after the program answered (at "
                           f"interpreter exit)\n{err[-4000:]}")
                    results[seed] = ("CRASH", f"rc={rc} at exit")
                break
            msg = json.loads(line)
            if "start" in msg:
                current = msg["start"]
                deadline = time.time() + timeout
            else:
                seed = msg["done"]
                results[seed] = (msg["outcome"], msg["detail"])
                finished.add(seed)
                if msg["outcome"] in ("UNTYPED", "late"):
                    record(seed, dict(pending)[seed], msg["outcome"], msg["detail"])
                current = None
        pending = [(s, src) for s, src in pending if s not in finished]


def parse_seeds(text):
    a, _, b = text.partition(":")
    return range(int(a), int(b)) if b else range(int(a), int(a) + 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0:100", help="A:B runs seeds A..B-1 (or one seed)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per program")
    ap.add_argument("--batch", type=int, default=50, help="programs per child process")
    ap.add_argument("--rate", type=float, default=0.08, help="mutation rate per choice")
    ap.add_argument("--crashes", default="fuzz-dsl-crashes", help="where failing programs are written")
    ap.add_argument("--print", dest="show", type=int, default=None, help="print the program of this seed")
    ap.add_argument("--accepted", action="store_true",
                    help="also list the generator lines whose wrong choices were in programs that compiled (most "
                         "are wrong only in some contexts; the rest are misuse the language takes silently)")
    ap.add_argument("--top", type=int, default=12, help="how many of the commonest outcomes the summary lists")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        return child()
    if a.show is not None:
        print(generate(a.show, a.rate), end="")
        return 0
    seeds = list(parse_seeds(a.seeds))
    results, bugs = {}, []
    t0 = time.time()

    def record(seed, src, status, detail):
        d = Path(a.crashes)
        d.mkdir(parents=True, exist_ok=True)
        head = "".join(f"# {ln}\n" for ln in f"{status}: {detail}".splitlines()[:60])
        (d / f"{status.lower()}-{seed}.py").write_text(head + src)
        if status != "late":
            bugs.append((seed, status, detail.splitlines()[0] if detail else ""))

    wrong = {}   # seed -> generator lines of its wrong choices
    for i in range(0, len(seeds), a.batch):
        jobs = [(s, generate(s, a.rate, wrong.setdefault(s, set()))) for s in seeds[i:i + a.batch]]
        run_batch(jobs, a.timeout, results, record)
    if a.accepted:
        taken, example = Counter(), {}
        for seed, (outcome, _) in results.items():
            if outcome == "ok" and len(wrong[seed]) == 1:  # (one wrong choice: it alone was taken)
                (line,) = wrong[seed]
                taken[line] += 1
                example.setdefault(line, seed)
        src = Path(__file__).read_text().splitlines()
        for line, n in taken.most_common():
            print(f"accepted {n}x (seed {example[line]}): fuzz_dsl.py:{line}: {src[line - 1].strip()[:110]}",
                  file=sys.stderr)
    counts = Counter(o for o, _ in results.values())
    details, seed_of = Counter(), {}
    for seed, (o, d) in sorted(results.items()):
        if o != "ok":
            key = f"{o}: {d.splitlines()[0] if d else ''}"
            details[key] += 1
            seed_of.setdefault(key, seed)
    for seed, status, first in bugs:
        print(f"{status} seed {seed}: {first}", file=sys.stderr)
    print(json.dumps(dict(fuzzer="dsl", inputs=len(results), seconds=round(time.time() - t0, 1),
                          outcomes=dict(sorted(counts.items())),
                          bugs=sum(counts[k] for k in ("CRASH", "UNTYPED", "HANG")),
                          top=dict(details.most_common(a.top)),
                          first_seed={d: seed_of[d] for d, _ in details.most_common(a.top)})))
    return 1 if any(counts[k] for k in ("CRASH", "UNTYPED", "HANG")) else 0


if __name__ == "__main__":
    sys.exit(main())
