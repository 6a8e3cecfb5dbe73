"""Run-time control flow: loops with carried values, if/else with results, while.

Python control flow over Python values runs at build time (a Python ``for``
unrolls); over run-time values it must go through these, because Python
cannot see the value (``if x < n:`` on a run-time ``x`` raises
KernelBuildError). The loop bodies are traced once::

    for i in dsl.range(n):                       # scf.for
        ...
    loop = dsl.range(n, carry=(acc,), unroll=4)  # loop-carried values
    for i, (acc,) in loop:
        dsl.yield_(acc + x[i])
    (acc,) = loop.results

    with dsl.if_(i < n):                         # scf.if
        ...
    with dsl.else_():
        ...
    y = dsl.cond(i < n, lambda: a, lambda: b)    # scf.if with results

    loop = dsl.while_(lambda i, s: i < n, carry=(i0, s0))   # scf.while
    for i, s in loop:
        dsl.yield_(i + 1, s * 2)
"""

from __future__ import annotations

import ast
import atexit
import linecache

from .._lazy import lazy
from . import numeric as _n
from . import types as _types
from .errors import KernelBuildError, fail, show, user_code, user_frame, user_location, user_op, user_site
from .kernel import current_kernel as _current_kernel
from .kernel import narrowed
from .numeric import Boolean, Index, Numeric, Val, as_value, wrap

ir = lazy("nvtma.ir")
scf = lazy("nvtma.dialects.scf")
llvm = lazy("nvtma.dialects.llvm")
arith = lazy("nvtma.dialects.arith")
nvvm = lazy("nvtma.dialects.nvvm")
memref = lazy("nvtma.dialects.memref")
vector = lazy("nvtma.dialects.vector")

__all__ = ["range", "range_constexpr", "if_", "else_", "cond", "while_", "yield_", "flatten", "unflatten"]

_builtin_range = range


# --------------------------------------------------------------------------- carried structures

def flatten(tree):
    """(leaf values, rebuild) of a nest of tuples/lists/Vals/objects with
    `_flatten()` (register fragments); Python numbers are leaves too."""
    leaves = []

    def walk(t):
        if isinstance(t, (tuple, list)):
            kids = [walk(x) for x in t]
            return lambda it, likes, kids=kids, ty=type(t): ty(k(it, likes) for k in kids)
        if hasattr(t, "_flatten"):
            vals, rebuild = t._flatten()
            kids = [walk(x) for x in vals]
            return lambda it, likes, kids=kids, rebuild=rebuild: rebuild([k(it, likes) for k in kids])
        leaves.append(t)
        i = len(leaves) - 1
        return lambda it, likes, i=i: _retyped(next(it), likes[i])

    build = walk(tree)
    # (`like`: the leaves whose classes the values take, where not the tree's own: an if's results take
    # the class both branches' values meet in)
    return leaves, lambda vals, like=None: build(iter(vals), leaves if like is None else like)


def _retyped(v, like):
    """v, a region's argument or result standing for `like`, with like's class: MLIR's integers are
    signless, so an unsigned scalar, vector or tensor carried through a loop or branch came back signed
    (compared, divided, shifted and converted as signed)."""
    from .tensor import TensorValue
    from .vector import Vector
    if isinstance(like, Numeric) and isinstance(v, Numeric) and type(v) is not type(like) \
            and type(like).mlir_type() == v.value.type:
        return type(like)(v.value)
    if isinstance(like, Vector) and isinstance(v, Vector):
        return Vector(v.value, like.dtype)
    if isinstance(like, TensorValue) and isinstance(v, TensorValue):
        _refuse_permuted(like)
        return TensorValue(v.value, dtype=like.dtype)
    return v


def _refuse_permuted(t):
    if t._permuted():  # its accesses would have gone to the elements' row-major places, silently
        fail(f"a shared {list(t.static_shape)} tile with its TMA atom's layout ({t.swizzle or 'boxes'}) "
             "carried through a loop or branch: its elements' places are not the memref's; carry the stage "
             "index (an Index) and take ring.stage(i) inside", rule="carry")


def _class_of(x):
    """The class a leaf's value reads as: a scalar's, or a vector's or tensor's elements' (None: a Python
    number, or a value without one)."""
    from .tensor import TensorValue
    from .vector import Vector
    if isinstance(x, Numeric):
        return type(x)
    if isinstance(x, (Vector, TensorValue)):
        return x.dtype
    return None


def _met(like, x, frame, k):
    """Of `like` (the if_ branch's value, or a loop's carried one) and `x` (what the dsl.else_ or the loop
    body yields for it; one MLIR type), the one whose class the region's result takes. MLIR's integers are
    signless, so the two may be of one type and two classes (Int32 and Uint32): signed and unsigned values
    of one width meet as unsigned, as they do in an operator or dsl.select; a loop's body has already read
    its carried value as the carry's class, so there the yielded value must meet in that class."""
    from .tensor import TensorValue
    from .vector import Vector
    if isinstance(x, TensorValue):
        _refuse_permuted(x)  # (its layout would have been dropped: the result takes the other's)
    a, b = _class_of(like), _class_of(x)
    if a is None or b is None or a is b:
        return like if a is not None or b is None else x  # (a Python number takes the other's class)
    tensors = isinstance(like, TensorValue) or isinstance(x, TensorValue)
    unsigned = _n.promote(a, b) if a.signed != b.signed and not a.is_float and Boolean not in (a, b) and \
        Index not in (a, b) and not tensors else None  # (tensors are not operands: no rule to meet by)
    loop = frame.what != "dsl.else_"
    if unsigned is not None and not (loop and unsigned is not a and _read_signed(frame, k)):
        return like if unsigned is a else x
    kind = "tensor of " if tensors else "vector of " if isinstance(x, Vector) else ""

    def one(cls):  # (a Uint32, an Int32, a vector of Int32)
        return f"a {kind}{cls.__name__}" if kind or cls.__name__[0] not in "AEIO" else f"an {cls.__name__}"
    at = f" (value {k + 1} of {len(frame.types)})" if len(frame.types) > 1 else ""
    if loop:
        fail(f"dsl.yield_ in a {frame.what} gives {one(b)} for a carried {kind}{a.__name__}{at}: the body read "
             f"the carried value as {a.__name__} (its comparisons, divisions, shifts); start the carry as "
             f"{one(b)}" + ("" if tensors else f", or yield x.to(dsl.{a.__name__})"), rule="yield")
    fail(f"dsl.yield_ in a dsl.else_ gives {one(b)}, the dsl.if_ branch {one(a)}{at}: the results would read as "
         f"one of them; yield {'tensors' if tensors else 'values'} of one element class", rule="yield")


# the signed predicates of arith.cmpi (slt, sle, sgt, sge); the ops whose results carry an operand's bits on,
# read further by _read_signed (the unsigned ones read no sign; their results may still be read as signed)
_SIGNED_PREDICATES = {2, 3, 4, 5}


def _passing_ops():
    return (arith.AddIOp, arith.SubIOp, arith.MulIOp, arith.AndIOp, arith.OrIOp, arith.XOrIOp, arith.ShLIOp,
            arith.TruncIOp, arith.SelectOp, arith.DivUIOp, arith.RemUIOp, arith.ShRUIOp, arith.MaxUIOp,
            arith.MinUIOp, arith.CeilDivUIOp)


def _read_signed(frame, k):
    """Whether a loop's carried value `k` (its block arguments: the body's, and a dsl.while_ condition's) is
    read as signed anywhere, through the ops that pass its bits on: a signed compare, division, remainder,
    right shift, extension, conversion to float, max or min, or an op this does not know (conservatively:
    a value carried into another region counts as read)."""
    if not frame.args:
        return True
    todo = [a[k] for a in frame.args]
    seen = set()
    while todo:
        for use in todo.pop().uses:
            op = use.owner
            op = op.opview if hasattr(op, "opview") else op
            if isinstance(op, (memref.StoreOp, vector.StoreOp)) and use.operand_number == 0:
                continue  # (its bits stored)
            if isinstance(op, arith.CmpIOp):
                if ir.IntegerAttr(op.attributes["predicate"]).value in _SIGNED_PREDICATES:
                    return True
                continue
            if isinstance(op, (arith.ExtUIOp, arith.UIToFPOp)):
                continue
            if isinstance(op, (scf.YieldOp, scf.ConditionOp)) and op.operation.parent == frame.op.operation:
                continue  # (the loop's own next value, or a dsl.while_ condition's to its body: read there)
            if not isinstance(op, _passing_ops()):
                return True
            r = op.result
            if r not in seen:
                if len(seen) > 4096:
                    return True
                seen.add(r)
                todo.append(r)
    return False


def _leaf_values(leaves, what):
    out = []
    for x in leaves:
        if isinstance(x, Val):
            out.append(x.value)
        elif isinstance(x, bool):
            out.append(as_value(x, Boolean))
        elif isinstance(x, int):
            out.append(as_value(x, _n.Int32))
        elif isinstance(x, float):
            out.append(as_value(x, _n.Float32))
        else:
            fail(f"{what}: {type(x).__name__} is not a run-time value or a Python number", rule="carry")
    return out


def unflatten(rebuild, values, like=None):
    """The structure `rebuild` makes of MLIR `values`, each with the class of its leaf of the flattened tree
    (or of `like`, a list of leaves)."""
    return rebuild([wrap(v) for v in values], like)


class _Frame:
    """An open region that expects a dsl.yield_ (loops with carries, if with results), or, `takes` False, one
    that refuses it (a dsl.range without carry=)."""
    stack = []

    def __init__(self, what, types, takes=True, likes=None):
        from .kernel import _KernelState
        self.what = what
        self.types = types
        self.takes = takes
        self.likes = likes  # the leaves the yielded values stand beside: a loop's carry, the if_ branch's
        self.args = self.op = None  # a loop's carried block arguments per block ([[values]]), its op: _read_signed
        self.kernel = _KernelState.current  # (a build that failed with a region left open leaves its frame)
        self.yielded = None
        self.leaves = None  # what was yielded, as the DSL values (their classes)
        self.met = None  # per value, the leaf whose class the region's result takes (_met)
        self.at = None  # (user's line, location) of the dsl.yield_
        self.then = None  # a dsl.else_'s: (the scf.if, its dsl.if_ branch's frame)


@user_op
def yield_(*values):
    """The next values of the innermost carried loop (or the results of the
    innermost if_/else_ branch that returns values)."""
    from .kernel import _KernelState
    stack = _Frame.stack
    while stack and stack[-1].kernel is not _KernelState.current:  # frames an earlier, failed build left
        stack.pop()
    if not stack:
        fail("dsl.yield_ outside a dsl.range/dsl.while_ with carry= or a dsl.if_ with results", rule="yield")
    frame = stack[-1]
    if not frame.takes:
        # (it went to the enclosing if_ or carried loop: the value of one iteration of this loop, or the
        # loop's own value, which does not dominate the yield)
        fail(f"dsl.yield_ inside a {frame.what} without carry=: give the loop carry=(...) to carry values "
             "through it, or yield after the loop", rule="yield")
    if frame.yielded is not None:
        fail(f"dsl.yield_ called twice in one {frame.what} body", rule="yield")
    if len(values) == 1 and isinstance(values[0], (tuple, list)) and frame.types is not None and \
            len(frame.types) != 1:
        values = values[0]
    leaves, _ = flatten(list(values))
    frame.at = (user_site(), ir.Location.current)
    if frame.types is not None and len(leaves) == len(frame.types):
        # Python numbers take the carried (or the other branch's) value's type and class
        likes = frame.likes or [None] * len(leaves)
        if frame.then is not None:
            for k, (x, like) in enumerate(zip(leaves, likes)):
                if _is_number(like):
                    _then_number(frame, k, like, x)
        leaves = [_python_number(x, t, like, frame, k) if _is_number(x) else x
                  for k, (x, t, like) in enumerate(zip(leaves, frame.types, likes))]
    if frame.what == "dsl.if_":  # (its numbers' types are settled by the dsl.else_: _then_number)
        vals = [_then_default(x, k, len(leaves)) if _is_number(x) else _leaf_values([x], "dsl.yield_")[0]
                for k, x in enumerate(leaves)]
    else:
        vals = _leaf_values(leaves, "dsl.yield_")
    if frame.types is not None:
        got = [v.type for v in vals]
        if got != list(frame.types):
            if frame.what == "dsl.else_":
                fail(f"dsl.yield_ in a dsl.else_ gives ({', '.join(map(str, got))}), the dsl.if_ branch yields "
                     f"({', '.join(map(str, frame.types))}): convert one of them (x.to(dsl.Int64)); a Python "
                     "number takes the type of a scalar or vector beside it", rule="yield")
            fail(f"dsl.yield_ in a {frame.what} gives ({', '.join(map(str, got))}), the carried values are "
                 f"({', '.join(map(str, frame.types))})", rule="yield")
        if frame.likes is not None:
            frame.met = [_met(like, x, frame, k) for k, (like, x) in enumerate(zip(frame.likes, leaves))]
    frame.yielded = vals
    frame.leaves = leaves


def _is_number(x):
    return isinstance(x, (bool, int, float))


def _python_number(x, t, like, frame, k):
    """A Python number yielded for a value of MLIR type `t` beside `like` (a loop's carry, the dsl.if_
    branch's value), made as arithmetic with `like` makes it: of like's class where it has one of type `t`,
    else of t's; a vector's lanes broadcast. One it cannot be (1.5 for an Int32, 300 for an Int8): a
    KernelBuildError naming the yield."""
    from .vector import Vector
    try:
        if isinstance(like, Vector) and like.value.type == t:
            return Vector._lift(x, like)
        cls = type(like) if isinstance(like, Numeric) and type(like).mlir_type() == t else _n.from_mlir(t)
        return cls(x)
    except KernelBuildError as e:
        beside = f"beside the dsl.if_ branch's value, {_described(like, t)}" if frame.what == "dsl.else_" \
            else f"for a carried value, {_described(like, t)}"
        raise KernelBuildError(f"dsl.yield_ in a {frame.what} gives the Python number {show(x)} {beside}"
                               f"{_value_at(frame, k)}: {e.message}", where=e.where, rule=e.rule) from None


def _then_default(x, k, n):
    """The value a Python number the dsl.if_ branch yields (value `k` of `n`) stands as until its dsl.else_:
    an Int32, Float32 or Boolean (an int past Int32, an Int64: the else_ may yield one), which the else_'s
    value may retype."""
    if isinstance(x, int) and not isinstance(x, bool):
        try:
            return as_value(x, _n.Int32 if -(1 << 31) <= x < 1 << 32 else _n.Int64)
        except KernelBuildError as e:  # (past 64 bits: no DSL integer holds it)
            at = f" (value {k + 1} of {n})" if n > 1 else ""
            raise KernelBuildError(f"dsl.yield_ in a dsl.if_ gives the Python number {show(x)}{at}: {e.message}",
                                   where=e.where, rule=e.rule) from None
    return _leaf_values([x], "dsl.yield_")[0]


def _then_number(frame, k, like, x):
    """The dsl.if_ branch yielded the Python number `like` for value `k`, and its dsl.else_ (`frame`) yields
    `x`: beside a typed scalar or vector the number takes x's type, as in arithmetic with x, rebuilt in the
    if_ branch (the if's result types are rebuilt at the else_'s end); beside another Python number it is an
    Int32, Float32 or Boolean. One that cannot be (1.5 beside an Int32, 300 beside an Int8): a
    KernelBuildError at the if_ branch's yield."""
    from .vector import Vector
    op, then = frame.then
    where, loc = then.at
    term = list(op.then_block.operations)[-1]  # (its scf.yield)
    old = term.operands[k]
    try:
        if _is_number(x) or not isinstance(x, (Numeric, Vector)):
            if old.type != _then_type(like):  # (an int past Int32, made an Int64 until now)
                with loc:
                    _n.Int32(like)
            return
        if old.type == x.value.type:
            return  # (the class is the else_'s: _met)
        with ir.InsertionPoint(term), loc:
            new = Vector._lift(like, x).value if isinstance(x, Vector) else type(x)(like).value
    except KernelBuildError as e:
        other = f"{_described(x, x.value.type)}{_value_at(frame, k)}: a number takes the type of the typed value " \
            "beside it, as in arithmetic" if isinstance(x, Val) else \
            f"the Python number {show(x)} too{_value_at(frame, k)}: two numbers are an Int32, Float32 or Boolean"
        raise KernelBuildError(f"dsl.yield_ in a dsl.if_ gives the Python number {show(like)} where its dsl.else_ "
                               f"gives {other}, and {e.message}", where=where, rule=e.rule) from None
    term.operands[k] = new
    if not list(old.uses):
        old.owner.erase()
    frame.types[k] = new.type


def _then_type(x):
    """The MLIR type a Python number yielded in both branches has: an Int32's, Float32's or Boolean's."""
    return (_n.Boolean if isinstance(x, bool) else _n.Int32 if isinstance(x, int) else _n.Float32).mlir_type()


def _described(v, t):
    """`v` (a carried or yielded leaf of MLIR type `t`) as an error message names it: "an Int8", "a vector
    of Float32", "the Python number 1 (an Int32)"."""
    from .vector import Vector

    def one(name):
        return f"an {name}" if name[0] in "AEIOU" else f"a {name}"
    if isinstance(v, Numeric):
        return one(type(v).__name__)
    if isinstance(v, Vector):
        return f"a vector of {v.dtype.__name__}"
    if _is_number(v):
        return f"the Python number {show(v)} ({one(_n.from_mlir(t).__name__)})"
    return f"a {t} value"


def _value_at(frame, k):
    n = len(frame.types)
    return f" (value {k + 1} of {n})" if n > 1 else ""


# --------------------------------------------------------------------------- nesting

# Regions inside regions: past about 250 the printed IR nests deeper than
# MLIR's parser reads back (256 brackets), so the kernel built and then failed
# to compile. Counted from the IR itself (no state to leak when a build fails).
_MAX_NESTING = 200


def _insertion_block(what):
    """Where ops go now; outside a kernel there is no such place (MLIR's
    ValueError "No current InsertionPoint")."""
    try:
        return ir.InsertionPoint.current.block
    except ValueError:
        fail(f"{what} builds IR: use it inside an @nvtma.dsl.kernel function", rule="outside-kernel")


def _check_nesting(what):
    op = _insertion_block(what).owner
    depth = 0
    while op is not None and depth <= _MAX_NESTING:
        depth += 1
        op = op.operation.parent
    if depth > _MAX_NESTING:
        fail(f"{what} nested inside {_MAX_NESTING} run-time regions (dsl.if_/else_/range/while_): MLIR cannot read "
             "back IR nested that deep; flatten the control flow", rule="nesting")


# --------------------------------------------------------------------------- what tracing cannot see

# A region's body is traced once, by Python: a Python return/break/continue that leaves a dsl.if_ (or a
# role built on one) is taken while tracing, for every thread, so the code after it in the function or
# loop body was never built (`with dsl.if_(i > 3): continue` dropped the rest of the loop body for all i);
# and a name the body rebinds to a value from before it holds that value after it on every path
# (`v = a` / `with dsl.if_(c): v = b` / `y[0] = v` stored b for every thread). Both are refused.

def _user_at():
    """(frame, line, instruction) of the user's code now, or None: where a region's `with`/`for` is."""
    f = _frame()
    return (f, f.f_lineno, f.f_lasti) if f is not None else None


def _frame():
    """The user's frame whose `with`/`for` the region stands for: past the user's own context managers
    (a generator whose `with dsl.if_(...)` body is one `yield`: `with leader(): v = b` is the branch)."""
    f = user_frame()
    for _ in _builtin_range(8):
        if f is None or not f.f_code.co_flags & _CO_GENERATOR:
            return f
        node = _node(f, f.f_lineno)
        body = node.body if isinstance(node, ast.With) else []
        while len(body) == 1 and isinstance(body[0], ast.Try):  # (try: yield / finally: ...)
            body = body[0].body
        if not (len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Yield)):
            return f
        c = f.f_back
        while c is not None and c.f_code.co_filename.endswith("contextlib.py"):
            c = c.f_back
        if c is None:
            return f
        f = c
    return f


_CO_GENERATOR = 0x20  # (inspect.CO_GENERATOR)


_FACTS = {}  # file -> {line of a `with` or `for`: its ast node (parents linked)}
# by id() of a node _FACTS keeps: what its body assigns and its jumps (each read once, not at every branch)
_ASSIGNED, _JUMPS = {}, {}


def _node(frame, line):
    """The `with`/`for` statement at `line` of `frame`'s file, its ancestors linked (`_up`), or None where the
    source cannot be read (typed at a prompt, exec'd)."""
    name = frame.f_code.co_filename
    got = _FACTS.get(name)
    if got is None:
        got = _FACTS[name] = {}
        try:
            tree = ast.parse("".join(linecache.getlines(name, frame.f_globals)))
        except (SyntaxError, ValueError):
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            for child in ast.iter_child_nodes(node):
                child._up = node
            if isinstance(node, (ast.With, ast.For)) and node.lineno not in got:
                got[node.lineno] = node
    return got.get(line)


def _assigned(stmts):
    """The names `stmts` assign, but not in Python loops inside them: a build-time loop rebinds its names
    each pass (gemm.py's `for r, j, (nn, m) in places:` in a branch), to values made before the branch."""
    for st in stmts:
        if isinstance(st, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        targets = st.targets if isinstance(st, ast.Assign) else \
            [st.target] if isinstance(st, (ast.AugAssign, ast.AnnAssign)) else \
            [i.optional_vars for i in st.items if i.optional_vars is not None] if isinstance(st, ast.With) else []
        for t in targets:
            yield from (n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        for n in ast.walk(st) if not isinstance(st, (ast.If, ast.With, ast.Try)) else ():
            if isinstance(n, ast.NamedExpr):  # (v := w)
                yield n.target.id
        for f in ("body", "orelse", "finalbody"):
            sub = getattr(st, f, None)
            if sub and isinstance(sub[0], ast.stmt):
                yield from _assigned(sub)
        for h in list(getattr(st, "handlers", None) or []) + list(getattr(st, "cases", None) or []):
            yield from _assigned(h.body)


def _jumps(stmts, in_loop, guarded=False):
    """The statements in `stmts` that jump out of them, each with whether a Python `if`/`match` guards it
    (a build-time condition: it may not be taken): a return, or a break/continue not of a loop inside them
    (functions and classes defined inside do not count)."""
    for st in stmts:
        if isinstance(st, ast.Return) or (isinstance(st, (ast.Break, ast.Continue)) and not in_loop):
            yield st, guarded
            continue
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        branch = isinstance(st, (ast.If, ast.Match))
        if isinstance(st, (ast.For, ast.AsyncFor, ast.While)):
            parts = [(st.body, True), (st.orelse, in_loop)]
        else:
            parts = [(getattr(st, f, None) or [], in_loop) for f in ("body", "orelse", "finalbody")]
            parts += [(h.body, in_loop) for h in getattr(st, "handlers", None) or []]
            parts += [(c.body, in_loop) for c in getattr(st, "cases", None) or []]
        for body, loop in parts:
            if body and isinstance(body[0], ast.stmt):
                yield from _jumps(body, loop, guarded or branch)


def _enclosing_loop(node):
    """The Python `for`/`while` statement whose body holds `node` (within its function), or None."""
    n = getattr(node, "_up", None)
    while n is not None and not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module)):
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
            return n
        n = getattr(n, "_up", None)
    return None


def _refuse_jump_out(region):
    """At a branch's normal exit: its user's `with` body must not end by a Python jump: one in the body is
    always taken while tracing; one a build-time `if` guards leaves a DSL loop's body untraced when taken (a
    jump out of a Python loop, or a return, under a build-time condition is the user's metaprogramming)."""
    at = region.user
    if at is None:
        return
    f, line, lasti = at
    if f.f_lasti == lasti or _frame() is not f:
        return  # entered and exited inside the user's `__enter__` (a helper's own complete branch)
    node = _node(f, line)
    if not isinstance(node, ast.With):
        return
    jumps = _JUMPS.get(id(node))
    if jumps is None:
        jumps = _JUMPS[id(node)] = tuple(_jumps(node.body, in_loop=False))
    if not jumps:
        return
    loop = _enclosing_loop(node)
    dsl_loop = loop is not None and any(isinstance(r, _Body) and r.user is not None and r.user[0] is f
                                        and r.user[1] == loop.lineno for r in _OpenRegions.regions)
    for jump, guarded in jumps:
        if guarded and (isinstance(jump, ast.Return) or not dsl_loop) or not _skips(jump, node):
            continue
        word = type(jump).__name__.lower()
        raise KernelBuildError(
            f"a Python `{word}` inside this {region.what} (line {line}) is taken while tracing, for every "
            f"thread: what follows the branch was never built; put it in a dsl.else_ (or the branch around it)",
            where=f"{f.f_code.co_filename}:{jump.lineno}", rule="python-control-flow")


def _skips(jump, node):
    """Whether `jump`, taken in the body of the `with` statement `node`, leaves out code: a statement after
    the `with` before the jump's target (the end of the function for a return, of the loop's body for a
    continue), or further passes of a loop (a break; a return inside a loop). A helper's role that ends in
    `return` leaves out nothing."""
    if isinstance(jump, ast.Break):
        return True
    if isinstance(jump, ast.Return) and jump.value is not None and not (
            isinstance(jump.value, ast.Constant) and jump.value.value is None):
        return True  # (the value the branch chose goes back on every path: `with dsl.if_(c): return b`)
    cur = node
    while True:
        up = getattr(cur, "_up", None)
        if up is None:
            return True
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)) and cur in up.body:
            return cur is not up.body[-1]
        if isinstance(up, (ast.For, ast.AsyncFor, ast.While)) and any(x is cur for x in up.body):
            return isinstance(jump, ast.Return) or cur is not up.body[-1]
        blocks = [b for f in ("body", "orelse", "finalbody") for b in [getattr(up, f, None)] if isinstance(b, list)]
        blocks += [h.body for h in getattr(up, "handlers", None) or []]
        block = next((b for b in blocks if any(x is cur for x in b)), None)
        if block is not None and block[-1] is not cur:
            return True
        if block is not None and isinstance(up, ast.Try) and block is up.body and up.orelse:
            return True  # (the try's else)
        cur = up


# (where a name is read again: only then does its rebinding in a body matter)

_LOADED = {}  # id(ast node of a parsed file, kept in _FACTS) -> the names read in it


def _loads(node, name):
    got = _LOADED.get(id(node))
    if got is None:
        got = _LOADED[id(node)] = frozenset(n.id for n in ast.walk(node)
                                            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
    return name in got


def _stores(targets, name):
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)
               if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))


def _first_use(stmts, name):
    """"load" if running `stmts` may read `name` before assigning it, "store" if they surely assign it first,
    else None."""
    for st in stmts:
        use = _use(st, name)
        if use is not None:
            return use
    return None


def _use(st, name):
    if isinstance(st, ast.Assign):
        return "load" if _loads(st.value, name) or any(_loads(t, name) for t in st.targets) else \
            "store" if _stores(st.targets, name) else None
    if isinstance(st, ast.AnnAssign):
        return "load" if st.value is not None and _loads(st.value, name) else \
            "store" if st.value is not None and _stores([st.target], name) else None
    if isinstance(st, (ast.With, ast.AsyncWith)):
        if any(_loads(i.context_expr, name) for i in st.items):
            return "load"
        return "store" if _stores([i.optional_vars for i in st.items if i.optional_vars], name) else \
            _first_use(st.body, name)
    if isinstance(st, (ast.If, ast.While, ast.For, ast.AsyncFor, ast.Try, ast.Match)):
        head = [getattr(st, f) for f in ("test", "iter", "subject") if hasattr(st, f)]
        if any(_loads(h, name) for h in head):
            return "load"
        if isinstance(st, ast.Try) and _first_use(st.body, name) == "store" and not _loads(st, name):
            return "store"
        if isinstance(st, ast.If):
            a, b = _first_use(st.body, name), _first_use(st.orelse, name)
            return "load" if "load" in (a, b) else "store" if a == b == "store" else None
        return "load" if _loads(st, name) else None
    if isinstance(st, ast.Delete) and _stores(st.targets, name):
        return "store"
    return "load" if _loads(st, name) else None   # (a def or lambda reading it: a closure, read later)


def _read_after(node, name):
    """Whether `name` may be read after the statement `node` runs, before it is assigned again (conservative:
    a loop around `node` runs its body again; the end of the function ends the name)."""
    if isinstance(node, ast.For) and _first_use(node.body, name) == "load":
        return True  # a DSL loop's body read it before rebinding it: the next iteration reads the new value
    seen = set()
    cur = node
    while True:
        up = getattr(cur, "_up", None)
        if up is None:
            return False
        if not isinstance(cur, ast.stmt) or isinstance(up, ast.Match):  # (an except or case clause)
            cur = up
            continue
        body = next((b for f in ("body", "orelse", "finalbody") for b in [getattr(up, f, None)]
                     if isinstance(b, list) and any(x is cur for x in b)), None)
        if body is None:
            body = next((h.body for h in getattr(up, "handlers", []) if any(x is cur for x in h.body)), None)
        if body is None:
            return True
        i = next(j for j, x in enumerate(body) if x is cur)
        use = _first_use(body[i + 1:], name)
        if use is not None:
            return use == "load"
        if isinstance(up, (ast.For, ast.AsyncFor, ast.While)) and body is up.body and id(up) not in seen:
            seen.add(id(up))  # the next pass of a loop around it: from its top to here
            use = _first_use(body[:i + 1] if not isinstance(up, ast.While) else [up.test] + body[:i + 1], name)
            if use == "load":
                return True
            # (else the loop may end after this pass: what follows it reads the name as the body left it)
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            return False
        cur = up


_ABSENT = object()  # a name not bound as a body starts


def _snapshot(region):
    """The user's locals that the region's `with`/`for` body assigns, as the body starts (_refuse_rebound)."""
    at = region.user
    node = _node(at[0], at[1]) if at is not None else None
    names = () if node is None else _ASSIGNED.get(id(node))
    if names is None:
        names = _ASSIGNED[id(node)] = frozenset(_assigned(node.body))
    if names:
        loc = at[0].f_locals
        # (a name the body makes holds, after it, what the body gave it on every path too)
        region.locals = {n: loc.get(n, _ABSENT) for n in names}
    else:
        region.locals = None


def _scalars(x):
    """The run-time scalars and vectors in `x` (a value, a nest of tuples/lists, a fragment)."""
    from .vector import Vector
    if not isinstance(x, (Val, tuple, list)) and not hasattr(type(x), "_flatten"):
        return []
    try:
        leaves, _ = flatten(x)
    except Exception:  # noqa: BLE001 (a container nothing here made)
        return []
    return [v for v in leaves if isinstance(v, (Numeric, Vector)) and v._live()]


def _inside(value, op):
    """Whether the MLIR `value` is made inside `op`'s regions."""
    owner = value.owner
    cur = owner.owner if isinstance(owner, ir.Block) else owner
    target = op.operation
    for _ in _builtin_range(_MAX_NESTING + 8):
        if cur is None:
            return False
        cur = cur.operation
        if cur == target:
            return True
        cur = cur.parent
    return False


def _refuse_rebound(region, op, how):
    """At a body's normal end: a name of the user's that held a run-time value before the body and that the
    body rebound to other values all made before `op` (so none of them is the body's own) holds them after
    `op` for every thread and path."""
    before = region.locals
    if before is None or _frame() is not region.user[0]:
        return
    now = region.user[0].f_locals
    for name, old in before.items():
        new = now.get(name, old)
        if old is new or new is _ABSENT:
            continue
        was = [v.value for v in _scalars(old)] if old is not _ABSENT else []
        if isinstance(new, (int, float)) and not isinstance(new, bool) and was:
            pass  # a run-time value rebound to a Python number (`v = x[i]` / `with dsl.if_(m): v = 0.0`)
        else:
            vals = [v.value for v in _scalars(new)]
            if not vals or any(_inside(v, op) for v in vals) or vals == was:
                continue
        node = _node(*region.user[:2])
        if node is not None and not _read_after(node, name):
            continue  # (a name the code after the body does not read: a build-time loop's, `d = descs[kb]`)
        f, line = region.user[:2]  # (the user's `with`/`for`, also through their own context managers)
        raise KernelBuildError(
            f"`{name}` is rebound inside this {region.what} to a value made before it (or a Python number): "
            f"Python assigns it while tracing, so after the {region.what} it holds that value on every path, "
            f"whatever the run-time condition or trip count; {how}", where=f"{f.f_code.co_filename}:{line}",
            rule="rebind")


# --------------------------------------------------------------------------- for

def _loop_annotation(unroll):
    if unroll is None:
        return None
    if unroll is True or unroll == "full":
        return _types.loop_unroll(0)
    if isinstance(unroll, int) and not isinstance(unroll, bool) and 1 <= unroll < 1 << 31:
        return _types.loop_unroll(unroll)
    fail(f"unroll={unroll!r}: a positive int, True/'full', or None", rule="unroll")


_NO_RESULTS = object()  # a loop's results until the `for` over it has traced its body to the end


def _results_of(loop, what):
    """`loop.results`: read before the loop's body was traced they were None, and the user's next line failed
    with Python's TypeError."""
    if loop._results is _NO_RESULTS:
        when = "inside its body (or after a Python break out of it)" if loop._used else "before the loop is iterated"
        fail(f"`.results` of a {what} read {when}: they are the values its last trip yields, there once a `for` "
             "over the loop has traced its body; read them after that `for`", rule="loop")
    return loop._results


class range:  # noqa: N801,A001 (mirrors Python's range)
    """``for i in dsl.range(start, stop, step, unroll=None, carry=None)``: an
    scf.for. The counter's type is the promoted type of the bounds (Index for
    Python ints). `unroll` is a hint for LLVM (an int count, or True for a
    full unroll). With `carry`, iterating gives ``(i, carried)`` and the body
    must end with ``dsl.yield_(next values)``; ``.results`` holds the final
    values after the loop."""

    def __init__(self, start, stop=None, step=1, *, unroll=None, carry=None):
        if stop is None:
            start, stop = 0, start
        self.bounds = (start, stop, step)
        self.unroll = unroll
        self.carry = carry
        self._results = _NO_RESULTS
        self._used = False

    @property
    def results(self):
        if self.carry is None:
            fail("a dsl.range without carry= has no results: carry values with dsl.range(..., carry=(v,)) and "
                 "dsl.yield_(the next v)", rule="loop")
        return _results_of(self, "dsl.range")

    @results.setter
    def results(self, v):
        self._results = v

    def __iter__(self):
        if self._used:
            fail("a dsl.range is traced once; make a new one for another loop", rule="loop")
        self._used = True
        start, stop, step = self.bounds
        nums = [b for b in self.bounds if isinstance(b, Numeric)]
        if any(isinstance(b, float) or (isinstance(b, Numeric) and b.is_float) for b in self.bounds):
            fail("dsl.range bounds must be integers", rule="loop")
        cls = Index
        for b in nums:
            cls = type(b) if cls is Index and b is nums[0] else _n.promote(cls, type(b))
        if cls is Boolean:
            cls = _n.Int32
        _check_nesting("dsl.range")
        with user_location():
            if cls is not Index and cls.width < 32:  # (Int8 0..127 by 100 compiled to an endless loop)
                fail(f"dsl.range over {cls.__name__} bounds: its counter wraps past the top of the type; use "
                     "Int32 or Index bounds", rule="loop")
            for b in self.bounds:  # (a stop of 3e9 with Int32 bounds was its bit pattern, a negative stop)
                if isinstance(b, int) and not isinstance(b, bool) and cls.signed and cls is not Index and \
                        not -(1 << (cls.width - 1)) <= b < 1 << (cls.width - 1):
                    fail(f"dsl.range bound {show(b)} does not fit {cls.__name__} (the type of its other bounds)",
                         rule="loop")
                if isinstance(b, int) and not isinstance(b, bool) and not cls.signed and b < 0:
                    # (its bit pattern: dsl.range(-1, n) over a Uint32 n started at 4294967295, no iterations)
                    fail(f"dsl.range bound {show(b)} with {cls.__name__} bounds: an unsigned counter has no "
                         "negative values; convert the bounds to a signed type", rule="loop")
            lo, hi, st = (as_value(b, cls) for b in (start, stop, step))
            known = step if isinstance(step, int) else _constant_int(st, cls)
            if known is not None and known <= 0:
                # (a zero step loops forever; a negative one does not count down as Python's range does)
                fail(f"dsl.range step {show(known)}: a positive step (count down with a positive step and "
                     "stop - 1 - i)", rule="loop")
            if known is None and not _known_positive(st):
                _trap_unless_positive(cls(st))
            if cls is not Index and cls.width == 32 and known != 1:
                _refuse_or_trap_on_wrap(cls, lo, hi, st, known)
            leaves, rebuild = flatten(self.carry if self.carry is not None else [])
            init = _leaf_values(leaves, "carry")
            loop = scf.ForOp(lo, hi, st, init)
            if cls is not Index and not cls.signed:
                # an unsigned trip count (a Uint32 stop of 3e9 was a negative one: no iterations)
                loop.operation.attributes["unsignedCmp"] = ir.UnitAttr.get()
            ann = _loop_annotation(self.unroll)
            if ann is not None:
                # scf-to-cf moves LLVM-dialect attributes to the latch branch and
                # cf-to-llvm copies them onto llvm.br, whose own name for it is
                # `loop_annotation` (the prefixed name is dropped unread)
                loop.operation.attributes[_types.attribute_name("loop_annotation")] = ann
        carried = self.carry is not None
        frame = _Frame("dsl.range", [v.type for v in init], takes=carried, likes=_carried(leaves, init))
        frame.args, frame.op = [list(loop.inner_iter_args)], loop
        yield from _traced_body(loop.body, "dsl.range", frame, loop, lambda: (
            (cls(loop.induction_variable), unflatten(rebuild, list(loop.inner_iter_args))) if carried
            else cls(loop.induction_variable)), "carry it: dsl.range(..., carry=(v,)) and dsl.yield_(the next v)")
        if carried and frame.yielded is None:
            fail("a dsl.range with carry= must end its body with dsl.yield_(...)", rule="yield")
        with ir.InsertionPoint(loop.body), user_location():
            scf.YieldOp(frame.yielded or [])
        if carried:
            self.results = unflatten(rebuild, list(loop.results), like=frame.met)


def _carried(leaves, init):
    """A loop's carried leaves as its body reads them: a Python number as the value it was made (Int32 ...)."""
    return [x if isinstance(x, Val) else wrap(v) for x, v in zip(leaves, init)]


def _traced_body(block, what, frame, op, item, how):
    """A loop's body, traced once: the user's `for` gets `item()` (made inside `block`); a body left by a break
    or return is refused at the kernel's end, names rebound in it (`how` says what to do) at its end."""
    body = _enter_body(block, what, frame)
    try:
        got = item()
        _snapshot(body)
        yield got
    except GeneratorExit:
        _left_early(body)
        raise
    finally:
        _leave_body(body)
    _refuse_rebound(body, op, how)


class _Body:
    """A loop body being traced: the region its generator keeps open while the user's `for` runs it."""
    scope = None


def _enter_body(block, what, frame):
    body = _Body()
    body.ip, body.frame = ir.InsertionPoint(block), frame
    body.user = _user_at()
    _Frame.stack.append(frame)
    body.ip.__enter__()
    _opened(body, what)
    return body


def _leave_body(body):
    """Exits a loop body, unless the kernel's end has (a generator the user never ran to its end)."""
    if not any(r is body for r in _OpenRegions.regions):
        return
    _closed(body)
    body.ip.__exit__(None, None, None)
    if body.frame in _Frame.stack:
        _Frame.stack.remove(body.frame)


def _left_early(body):
    """The user's `for` over a loop left its body without asking for the next iteration: a Python break or
    return (or an exception). The body then has no terminator, and the break was taken while tracing, not at
    run time: refused at the kernel's end (an exception, unless caught, ends the build before that)."""
    k = body.kernel
    if k is not None:
        k.scratch.setdefault(("left-early",), []).append((body.what, user_site()))


def _positive_sregs():
    """The special registers that are never 0: block, grid and cluster sizes (a block_dim() stride needs no
    guard)."""
    return tuple(getattr(nvvm, f"{r}{d}Op") for r in ("BlockDim", "GridDim", "ClusterDim", "ClusterDimBlocks")
                 for d in "XYZ")


def _known_positive(v, depth=0):
    """Whether the run-time step `v` is a block, grid or cluster size, a positive constant, or a product of
    two of those in 64 bits (widened or not): a grid-stride loop's step needs no guard."""
    op = _n._view(v)
    if isinstance(op, _positive_sregs()):
        return True
    if depth > 6:
        return False
    if isinstance(op, arith.ConstantOp):
        a = op.attributes["value"]
        return isinstance(a, ir.IntegerAttr) and 0 < ir.IntegerAttr(a).value < 1 << 31
    if isinstance(op, (arith.IndexCastOp, arith.IndexCastUIOp, arith.ExtSIOp, arith.ExtUIOp)):
        return _known_positive(op.operands[0], depth + 1)
    if isinstance(op, arith.MulIOp) and depth < 6 and _wide(v):
        # (two sizes or constants below 2^31, multiplied in 64 bits: no wrap; a 32-bit grid_dim() * block_dim()
        # passes 2^31 with 2^21 CTAs of 1024 threads, and keeps its guard)
        return all(_known_positive(x, 6) for x in op.operands)  # (depth 6: no product inside)
    return False


def _wide(v):
    t = v.type
    return isinstance(t, ir.IndexType) or (isinstance(t, ir.IntegerType) and ir.IntegerType(t).width >= 64)


def _trap_unless_positive(step):
    """A run-time step of 0 looped forever, and a negative one counted up past the stop until the counter
    wrapped (scf.for assumes a positive step): the kernel traps there instead, before the loop, as the
    build refuses such constant steps (Python's range raises for 0)."""
    _trap_if(step == 0 if not step.signed or type(step) is _n.Boolean else step <= 0)


def _trap_if(bad):
    """The kernel traps where the run-time Boolean `bad` holds."""
    guard = scf.IfOp(as_value(bad), [], has_else=False)
    with ir.InsertionPoint(guard.then_block):
        llvm.Trap()
        scf.YieldOp([])


def _refuse_or_trap_on_wrap(cls, lo, hi, st, step):
    """A 32-bit counter whose last value plus the step passes the top of its type wraps, and the loop never
    ends (`dsl.range(0, n, 4)` with n = 2^31 - 1). Known bounds: a KernelBuildError; run-time ones: the
    kernel traps before the loop, as it does for a run-time step of 0 (a step of 1 never wraps, and 64-bit
    counters would need a stop near 2^63)."""
    top = (1 << 31) - 1 if cls.signed else (1 << 32) - 1
    a, b = _constant_int(lo, cls), _constant_int(hi, cls)
    if a is not None and b is not None and step is not None:
        if a < b and a + (b - 1 - a) // step * step > top - step:
            fail(f"dsl.range({a}, {b}, {step}) over {cls.__name__}: its last counter value plus the step "
                 f"passes {top}, so the counter wraps and the loop never ends; use Int64 bounds", rule="loop")
        return
    u = _n.Uint32
    start, stop, by = cls(lo), cls(hi), cls(st)
    # the last counter value, start + (stop - 1 - start) // step * step, in unsigned arithmetic: exact, since
    # it lies between start and stop (the difference of an empty range wraps, and start < stop drops it)
    last = u(start.value) + (u(stop.value) - u(start.value) - 1) // u(by.value) * u(by.value)
    _trap_if((start < stop) & (cls(last.value) > cls(top) - by))


def _constant_int(v, cls):
    """The value of `v` where an arith.constant makes it (as `cls` reads its bits), else None."""
    op = _n._view(v)
    if not isinstance(op, arith.ConstantOp):
        return None
    x = ir.IntegerAttr(op.attributes["value"]).value
    if cls is not Index and not cls.signed and x < 0:
        x += 1 << cls.width
    return x


def range_constexpr(*args):
    """A Python range unrolled at build time (CuTe's range_constexpr)."""
    for a in args:
        if isinstance(a, Val):
            fail("range_constexpr takes Python ints; use dsl.range for run-time bounds", rule="loop")
    return _builtin_range(*args)


# --------------------------------------------------------------------------- if / else

def _last_ifs():
    """The scf.if of the innermost finished `if_` at each insertion block of the kernel being built, so that
    `else_` can attach to it. Kept with the kernel: a process-wide table kept every build's MLIR context
    alive (each if_ without an else_ left an entry)."""
    return _current_kernel().scratch.setdefault(("if-last",), {})


class _Branch:
    """What `with dsl.if_(...) as br` gives: ``br.results`` after the else_."""

    def __init__(self, op):
        self.op = op
        self._results = None
        self.needs_else = None  # where the if_ that yields values is, until its else_ comes

    @property
    def results(self):
        if self._results is None and self.needs_else is not None:
            fail("br.results of a dsl.if_ that yields values is read before its dsl.else_: the results are "
                 "the then or the else values; add `with dsl.else_(): dsl.yield_(...)` right after the if_",
                 rule="yield")
        return self._results

    @results.setter
    def results(self, v):
        self._results = v


def _block_key():
    return ir.InsertionPoint.current.block


def _last_built(block):
    """The operation just before the current insertion point in `block`, or None."""
    ref = ir.InsertionPoint.current.ref_operation
    last = None
    for o in block.operations:
        if ref is not None and o == ref:
            break
        last = o
    return last.operation if last is not None else None


class _OpenRegions:
    """dsl.if_/else_ branches entered and not yet exited. A branch left open
    (entered by hand, or through a contextlib.ExitStack never closed) leaves
    its insertion point on MLIR's thread-local context stack: the kernel's
    return lands inside the branch, the kernel's own `with` exits pop the
    wrong entries, and the interpreter aborts at exit (the stack's Python
    references are dropped after finalization, without the GIL). So the
    kernel's end refuses the kernel, and atexit drains what is left."""
    regions = []


def _opened(region, what):
    from .errors import user_site
    from .kernel import _KernelState
    region.what, region.where, region.kernel = what, user_site(), _KernelState.current
    _OpenRegions.regions.append(region)
    k = region.kernel
    if k is not None and ("open-regions",) not in k.scratch:
        k.scratch[("open-regions",)] = True
        k.at_exit.insert(0, lambda k=k: _refuse_left_open(k))


def _closed(region):
    _OpenRegions.regions[:] = [r for r in _OpenRegions.regions if r is not region]


def _refuse_left_open(k):
    """At the kernel's end (its exit hooks run under the end location it
    entered last): exits the branches (and loop bodies) left open beneath
    that location, so that the kernel's own `with` exits pop what they
    pushed, then refuses. Also refuses loop bodies a Python break or return
    left, and if_s that yield values with no else_."""
    left = [r for r in _OpenRegions.regions if r.kernel is k]
    if left:
        end = ir.Location.current
        end.__exit__(None, None, None)
        _unwind(left)
        end.__enter__()
        if isinstance(left[0], _Body):  # (a generator the user advanced by hand and dropped)
            raise KernelBuildError(f"this {left[0].what}'s body is started but never finished: the kernel "
                                   "would return inside it; run the loop with a `for` to its end",
                                   where=left[0].where, rule="region")
        raise KernelBuildError(f"this {left[0].what} is entered but never exited: the kernel would return inside "
                               "it; use `with` (and close a contextlib.ExitStack before the kernel returns)",
                               where=left[0].where, rule="region")
    early = k.scratch.get(("left-early",))
    if early:
        what, where = early[0]
        raise KernelBuildError(f"a Python break or return left this {what} body while tracing: the body is "
                               "traced once, so the jump ends the tracing, not the loop at run time (and the "
                               "body was left without its end); stop the loop by its bounds or a dsl.while_ "
                               "condition, and put the rest of the body in a dsl.if_", where=where,
                               rule="python-control-flow")
    for br in k.scratch.get(("if-results",), []):
        if br.needs_else is not None:
            raise KernelBuildError("this dsl.if_ yields values but has no dsl.else_: where its condition is "
                                   "false there would be no values; add `with dsl.else_(): dsl.yield_(...)` "
                                   "right after it", where=br.needs_else, rule="yield")


def _unwind(regions):
    """Exits `regions` (in the order they were entered) as their `with`
    statements would have, innermost first."""
    for r in reversed(regions):
        if getattr(r, "scope", None):
            r.scope.__exit__(None, None, None)
        r.ip.__exit__(None, None, None)
        if r.frame in _Frame.stack:
            _Frame.stack.remove(r.frame)
        _closed(r)


@atexit.register
def _drain():
    """Pops what branches left open left on MLIR's context stack, while the
    interpreter can still drop the references."""
    if not _OpenRegions.regions:
        return
    _OpenRegions.regions.clear()
    for _ in _builtin_range(1 << 20):
        if ir.Context.current is None:
            return
        for current in (lambda: ir.InsertionPoint.current, lambda: ir.Location.current, lambda: ir.Context.current):
            try:
                current().__exit__(None, None, None)
                break
            except Exception:  # noqa: BLE001 (not this kind of entry on top)
                continue
        else:
            return


def _branch_exited(region, et, how):
    """A branch's body ended: without an exception, no Python jump may have left it and no name it rebinds may
    be read after it (`how` says what to do instead)."""
    try:
        if et is None:
            _refuse_jump_out(region)
            _refuse_rebound(region, region.op, how)
    finally:
        region.user = region.locals = None  # (frames: no cycles through the user's locals)


class if_:  # noqa: N801
    """``with dsl.if_(cond): ...`` emits scf.if; a following ``with
    dsl.else_(): ...`` fills its else branch. Branches that end with
    ``dsl.yield_(values)`` make the if produce them: read them from the
    object ``with dsl.if_(...) as br`` binds, as ``br.results``, after the else."""

    _SCOPES = {None: None, "thread": (1, 1), "warp": (1, None), "lane": (None, 1), "warpgroup": (4, None)}

    def __init__(self, cond, *, scope=None):
        if isinstance(cond, bool):
            fail("dsl.if_ on a Python bool: use a Python `if` for build-time conditions", rule="if")
        if isinstance(cond, Val) and not isinstance(cond, Numeric):  # (a Vector's lanes reached MLIR's verifier)
            fail(f"dsl.if_ on a {type(cond).__name__}: a branch takes one run-time Boolean; reduce the lanes "
                 "first (v.reduce('max') != 0) or use dsl.select lane-wise", rule="if")
        if scope not in self._SCOPES:
            fail(f"dsl.if_ scope={scope!r}: 'thread', 'warp', 'lane' or 'warpgroup' (what the condition selects)",
                 rule="if")
        self.cond = cond
        n = _n.narrowing(cond) if isinstance(cond, Val) else None
        # (a scope= still takes which warps the condition names: warp_idx() == 0, scope="warp")
        self.narrow = (*self._SCOPES[scope], n[2] if n else None) if self._SCOPES[scope] else n

    def __enter__(self):
        _check_nesting("dsl.if_")
        with user_location():
            c = as_value(self.cond, Boolean) if isinstance(self.cond, Val) else None
            if c is None:
                fail(f"dsl.if_ needs a run-time Boolean, got {type(self.cond).__name__}", rule="if")
            if isinstance(self.cond, Numeric) and type(self.cond) is not Boolean:
                c = as_value(self.cond != 0)
            self.op = scf.IfOp(c, [], has_else=False)
        self.block = _block_key()
        self.branch = _Branch(self.op)
        self.frame = _Frame("dsl.if_", None)
        _Frame.stack.append(self.frame)
        self.ip = ir.InsertionPoint(self.op.then_block)
        self.ip.__enter__()
        self.scope = narrowed(*self.narrow) if self.narrow else None
        if self.scope:
            self.scope.__enter__()
        _opened(self, "dsl.if_")
        self.user = _user_at()
        _snapshot(self)
        return self.branch

    def __exit__(self, et, ev, tb):
        _closed(self)
        if self.scope:
            self.scope.__exit__(et, ev, tb)
        self.ip.__exit__(et, ev, tb)
        _Frame.stack.pop()
        _branch_exited(self, et, "yield it: `with dsl.if_(c) as br: dsl.yield_(b)`, `with dsl.else_(): "
                       "dsl.yield_(a)`, `v, = br.results` (or v = dsl.select(c, b, a))")
        if et is not None:
            return False
        then = self.op.then_block
        with ir.InsertionPoint(then), user_location():
            if self.frame.yielded:
                # results: rebuild the op with result types and an else region
                types = [v.type for v in self.frame.yielded]
                scf.YieldOp(self.frame.yielded)
                new = scf.IfOp(self.op.condition, types, has_else=True, ip=ir.InsertionPoint(self.op))
                _move_ops(then, new.then_block)
                self.op.operation.erase()
                self.op = self.branch.op = new
            else:
                scf.YieldOp([])
        if self.frame.yielded:
            self.branch.needs_else = self.where
            _current_kernel().scratch.setdefault(("if-results",), []).append(self.branch)
        _last_ifs()[self.block] = (self.op, self.branch, [v.type for v in (self.frame.yielded or [])],
                                   self.frame)
        return False


def _move_ops(src, dst):
    ops = list(src.operations)
    for op in ops:
        dst.append(op)


def _with_result_types(op, types):
    """The scf.if `op` rebuilt with result types `types`, its two branches moved into it."""
    new = scf.IfOp(op.condition, types, has_else=True, loc=op.location, ip=ir.InsertionPoint(op))
    _move_ops(op.then_block, new.then_block)
    _move_ops(op.regions[1].blocks[0], new.regions[1].blocks[0])
    op.operation.erase()
    return new


class else_:  # noqa: N801
    """The else branch of the `dsl.if_` just before it in the same block."""

    def __enter__(self):
        _insertion_block("dsl.else_")
        key = _block_key()
        entry = _last_ifs().pop(key, None)
        if entry is None:
            fail("dsl.else_ must follow a `with dsl.if_(...)` block directly", rule="else")
        op, branch, types, then = entry
        self.leaves = then.leaves
        if _last_built(key) != op.operation:
            # (the else branch attached to the if_ and ran before what was built in between)
            fail("dsl.else_ must follow its `with dsl.if_(...)` block directly: code between them would run "
                 "before the else branch", rule="else")
        if not types and len(op.regions[1].blocks) == 0:
            op.regions[1].blocks.append()
        if len(op.regions[1].blocks[0].operations) > 0:
            fail("this dsl.if_ already has an else branch", rule="else")
        self.op, self.branch, self.types = op, branch, types
        self.frame = _Frame("dsl.else_", list(types) or None, likes=self.leaves if types else None)
        self.frame.then = (op, then) if types else None
        _Frame.stack.append(self.frame)
        self.ip = ir.InsertionPoint(op.regions[1].blocks[0])
        self.ip.__enter__()
        _opened(self, "dsl.else_")
        branch.needs_else = None
        self.user = _user_at()
        _snapshot(self)
        return branch

    def __exit__(self, et, ev, tb):
        _closed(self)
        self.ip.__exit__(et, ev, tb)
        _Frame.stack.pop()
        _branch_exited(self, et, "yield it from both branches (`with dsl.if_(c) as br: dsl.yield_(b)`, "
                       "`with dsl.else_(): dsl.yield_(a)`, `v, = br.results`)")
        if et is not None:
            return False
        with ir.InsertionPoint(self.op.regions[1].blocks[0]), user_location():
            if self.types:
                if self.frame.yielded is None:
                    fail("the dsl.if_ branch yields values, so its dsl.else_ must dsl.yield_ the same types",
                         rule="yield")
                scf.YieldOp(self.frame.yielded)
                if self.frame.types != self.types:  # (the if_ branch's Python numbers took the else_'s types)
                    self.op = self.branch.op = _with_result_types(self.op, self.frame.types)
                self.branch.results = [_retyped(wrap(r), like) for r, like in zip(self.op.results, self.frame.met)]
            else:
                if self.frame.yielded:
                    fail("the dsl.else_ yields values but its dsl.if_ branch does not", rule="yield")
                scf.YieldOp([])
        return False


def _check_callable(fn, nargs, what):
    """`fn` can be called with `nargs` positional values, or a
    KernelBuildError naming `what` (not Python's TypeError from inside the DSL)."""
    import inspect
    if not callable(fn):
        fail(f"{what} is {type(fn).__name__}, not a function (write lambda: ...)", rule="callable")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature: let the call decide
        return
    try:
        sig.bind(*[None] * nargs)
    except TypeError:
        fail(f"{what} {getattr(fn, '__qualname__', fn)}{sig} cannot take {nargs} value"
             f"{'' if nargs == 1 else 's'}", rule="callable")


@user_op
def cond(pred, true_fn, false_fn):
    """``true_fn()`` if `pred` else ``false_fn()``, as an scf.if with results;
    both return the same structure of values (a value, a tuple, a fragment)."""
    _check_callable(true_fn, 0, "dsl.cond's true_fn")
    _check_callable(false_fn, 0, "dsl.cond's false_fn")
    with if_(pred) as br:
        with user_code():
            t = true_fn()
        t_leaves, rebuild = flatten(t)
        yield_(*t_leaves)
    with else_():
        with user_code():
            f = false_fn()
        f_leaves, _ = flatten(f)
        if len(f_leaves) != len(t_leaves):
            fail(f"dsl.cond branches return {len(t_leaves)} and {len(f_leaves)} values", rule="yield")
        yield_(*f_leaves)
    got = br.results or []  # (None: branches that return an empty structure)
    return unflatten(rebuild, got, like=got)  # (the class both branches' values meet in)


# --------------------------------------------------------------------------- while

class while_:  # noqa: N801
    """``loop = dsl.while_(lambda *carried: condition, carry=(...))`` then
    ``for vals in loop: ...; dsl.yield_(next values)``: an scf.while that
    runs the body while the condition holds; ``loop.results`` is the final
    carried tuple."""

    def __init__(self, condition, carry):
        self.condition = condition
        self.carry = carry
        self._results = _NO_RESULTS
        self._used = False

    @property
    def results(self):
        return _results_of(self, "dsl.while_")

    @results.setter
    def results(self, v):
        self._results = v

    def __iter__(self):
        self._used = True
        _check_nesting("dsl.while_")
        leaves, rebuild = flatten(self.carry)
        with user_location():
            init = _leaf_values(leaves, "carry")
            types = [v.type for v in init]
            op = scf.WhileOp(types, init)
            before = op.before.blocks.append(*types)
            after = op.after.blocks.append(*types)
        with ir.InsertionPoint(before):
            args = unflatten(rebuild, list(before.arguments))
            _check_callable(self.condition, len(args) if isinstance(args, (tuple, list)) else 1,
                            "the dsl.while_ condition")
            with user_code():
                c = self.condition(*args) if isinstance(args, (tuple, list)) else self.condition(args)
            if not isinstance(c, Val):
                fail(f"the dsl.while_ condition returned {type(c).__name__}, not a run-time Boolean", rule="while")
            with user_location():
                scf.ConditionOp(as_value(c, Boolean), list(before.arguments))
        frame = _Frame("dsl.while_", types, likes=_carried(leaves, init))
        frame.args, frame.op = [list(before.arguments), list(after.arguments)], op
        yield from _traced_body(after, "dsl.while_", frame, op, lambda: unflatten(rebuild, list(after.arguments)),
                                "carry it: dsl.while_(cond, carry=(..., v)) and dsl.yield_(..., the next v)")
        if frame.yielded is None:
            fail("a dsl.while_ body must end with dsl.yield_(next values)", rule="yield")
        with ir.InsertionPoint(after), user_location():
            scf.YieldOp(frame.yielded)
        self.results = unflatten(rebuild, list(op.results), like=frame.met)
