#!/usr/bin/env python3
"""Fuzzer for the arguments of every public op of the kernel language (nvtma.cuda, cpasync, lang, dsl, wgmma).

fuzz_dsl.py writes whole plausible programs, so it reaches the ops its
generator knows; this one reaches every op the modules export. For each op
and each of its positional parameters it builds one kernel that calls the op
with that argument odd (None, a str, a float, -1, 2**40, a bool, a vector, a
Float32, an Int64, a Boolean, a global tensor, a shared buffer, a barrier, a
tuple, an empty list, an fp8 value, an Index) and the others 0, and builds it
(`k.build()`, no lowering). Each call's outcome is one of:

  ok        it built (the odd value was one the op takes)
  typed     a KernelBuildError naming the call's line (not rule `verify`), or
            a ValueError/TypeError raised on purpose or by Python at the line
  VERIFY    a KernelBuildError of rule `verify`: the DSL left the check to an
            MLIR verifier, which named the whole kernel
  NO-LINE   a KernelBuildError that names another line
  UNTYPED   any other exception from inside nvtma (AttributeError, TypeError,
            ZeroDivisionError ...)

VERIFY, NO-LINE and UNTYPED are bugs (the brief: a typed error naming the rule,
the value and the user's line). A process crash (an MLIR assertion) ends the
run; the last "CASE" line printed with --verbose is the call.

  PYTHONPATH=build/dev/python_packages python test/fuzz/fuzz_dsl_args.py [--cases A:B] [--verbose]

Prints one JSON summary line; exits 1 if there are bugs.
"""

import argparse
import inspect
import json
import sys
import time
import traceback
from collections import Counter

MODULES = ("cuda", "cpasync", "lang", "dsl", "wgmma")
# not ops: decorators, control flow (fuzz_dsl's), classes of values, the DSL's own plumbing
SKIP = {"kernel", "jit", "compile", "Tensor", "lazy", "fail", "user_op", "user_site", "dataclass", "field", "show",
        "current_kernel", "flatten", "unflatten", "wrap", "Val", "TensorValue", "known_int", "narrowed",
        "active_threads", "build_owner", "check_build", "as_value", "printf", "Profiler", "range", "while_",
        "if_", "else_", "cond", "range_constexpr", "yield_", "WarpRole", "WarpGroupRole"}
ODD = ["None", "'a'", "1.5", "-1", "2 ** 40", "True", "dsl.full(2, 1.0)", "dsl.Float32(1.0)", "dsl.Int64(7)",
       "dsl.Boolean(True)", "x", "s", "bar", "(1, 2)", "[]", "dsl.Float8E4M3FN(1.0)", "dsl.Index(3)"]
CASE_FILE = "fuzz_dsl_args_case.py"


def cases():
    """Every call: "module.op(arg, ...)" with one odd argument, the others 0."""
    import nvtma
    from nvtma import cpasync, cuda, dsl, lang, wgmma  # noqa: F401 (the modules' ops)
    out = []
    for mname in MODULES:
        mod = getattr(nvtma, mname)
        for name in sorted(dir(mod)):
            f = getattr(mod, name)
            if name.startswith("_") or name in SKIP or not callable(f) or (
                    inspect.isclass(f) and issubclass(f, BaseException)):
                continue
            try:
                sig = inspect.signature(getattr(f, "__wrapped__", f))
            except (TypeError, ValueError):  # (a builtin without one)
                continue
            params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            if inspect.isclass(f) and params and params[0].name == "self":
                params = params[1:]
            required = sum(p.default is p.empty for p in params)
            for i in range(len(params)):
                for odd in ODD:
                    args = ["0"] * max(required, i + 1)
                    args[i] = odd
                    out.append(f"{mname}.{name}({', '.join(args)})")
    return out


def outcome(call):
    """(outcome, detail) of building a kernel that makes `call`."""
    from nvtma import cpasync, cuda, dsl, lang, wgmma
    from nvtma.dsl import KernelBuildError
    g = {"cpasync": cpasync, "cuda": cuda, "dsl": dsl, "lang": lang, "wgmma": wgmma}
    exec(compile(f"def body(x, s, bar, o):\n    r = {call}\n", CASE_FILE, "exec"), g)  # noqa: S102 (our own call)
    body = g["body"]

    @dsl.kernel(block=(128,), cluster=(2,))
    def k(x: dsl.Tensor("f32", (64, 64)), o: dsl.Tensor("u32", (128,))):
        s = lang.SMEMPool().alloc((64, 64), "f32")
        bar = lang.TMABar(2)
        with lang.WarpRole(0):
            body(x, s, bar, o)

    try:
        k.build()
        return "ok", ""
    except KernelBuildError as e:
        if e.rule == "verify":
            return "VERIFY", str(e).splitlines()[1:2][0][:160] if "\n" in str(e) else str(e)[:160]
        if not (e.where or "").startswith(f"{CASE_FILE}:2"):
            return "NO-LINE", f"KernelBuildError({e.rule}) at {e.where}: {str(e)[:120]}"
        return "typed", f"KernelBuildError({e.rule})"
    except Exception as e:  # noqa: BLE001 (classifying every kind is the point)
        inner = traceback.extract_tb(e.__traceback__)[-1]
        on_purpose = isinstance(e, (TypeError, ValueError)) and (inner.line or "").lstrip().startswith("raise")
        if inner.filename == CASE_FILE or on_purpose:
            return "typed", type(e).__name__
        where = f"{inner.filename.rsplit('/', 1)[-1]}:{inner.lineno}"
        return "UNTYPED", f"{type(e).__name__} at {where}: {str(e).splitlines()[0][:120] if str(e) else ''}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=None, help="A:B runs cases A..B-1 of the list (default: all)")
    ap.add_argument("--verbose", action="store_true", help="print each call before it is built")
    a = ap.parse_args(argv)
    todo = cases()
    if a.cases:
        lo, _, hi = a.cases.partition(":")
        todo = todo[int(lo or 0):int(hi) if hi else None]
    t0, counts, bugs = time.time(), Counter(), []
    for call in todo:
        if a.verbose:
            print("CASE", call, file=sys.stderr, flush=True)
        o, detail = outcome(call)
        counts[o] += 1
        if o in ("VERIFY", "NO-LINE", "UNTYPED"):
            bugs.append((call, o, detail))
    for call, o, detail in bugs:
        print(f"{o} {call}: {detail}", file=sys.stderr)
    print(json.dumps(dict(fuzzer="dsl-args", inputs=len(todo), seconds=round(time.time() - t0, 1),
                          outcomes=dict(sorted(counts.items())), bugs=len(bugs))))
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
