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

import atexit

from .._lazy import lazy
from . import numeric as _n
from . import types as _types
from .errors import fail, show, user_code, user_location, user_op
from .kernel import narrowed
from .numeric import Boolean, Index, Numeric, Val, as_value, wrap

ir = lazy("nvtma.ir")
scf = lazy("nvtma.dialects.scf")
llvm = lazy("nvtma.dialects.llvm")

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
            return lambda it, kids=kids, ty=type(t): ty(k(it) for k in kids)
        if hasattr(t, "_flatten"):
            vals, rebuild = t._flatten()
            kids = [walk(x) for x in vals]
            return lambda it, kids=kids, rebuild=rebuild: rebuild([k(it) for k in kids])
        leaves.append(t)
        return lambda it, like=t: _retyped(next(it), like)

    build = walk(tree)
    return leaves, lambda vals: build(iter(vals))


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
        if like._permuted():  # its accesses would have gone to the elements' row-major places, silently
            fail(f"a shared {list(like.static_shape)} tile with its TMA atom's layout ({like.swizzle or 'boxes'}) "
                 "carried through a loop or branch: its elements' places are not the memref's; carry the stage "
                 "index (an Index) and take ring.stage(i) inside", rule="carry")
        return TensorValue(v.value, dtype=like.dtype)
    return v


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


def unflatten(rebuild, values):
    return rebuild([wrap(v) for v in values])


class _Frame:
    """An open region that expects a dsl.yield_ (loops with carries, if with results)."""
    stack = []

    def __init__(self, what, types):
        self.what = what
        self.types = types
        self.yielded = None
        self.leaves = None  # what was yielded, as the DSL values (their classes)


@user_op
def yield_(*values):
    """The next values of the innermost carried loop (or the results of the
    innermost if_/else_ branch that returns values)."""
    if not _Frame.stack:
        fail("dsl.yield_ outside a dsl.range/dsl.while_ with carry= or a dsl.if_ with results", rule="yield")
    frame = _Frame.stack[-1]
    if frame.yielded is not None:
        fail(f"dsl.yield_ called twice in one {frame.what} body", rule="yield")
    if len(values) == 1 and isinstance(values[0], (tuple, list)) and frame.types is not None and \
            len(frame.types) != 1:
        values = values[0]
    leaves, _ = flatten(list(values))
    if frame.types is not None and len(leaves) == len(frame.types):
        # Python numbers take the carried value's type
        leaves = [_n.from_mlir(t)(x) if isinstance(x, (bool, int, float)) else x
                  for x, t in zip(leaves, frame.types)]
    vals = _leaf_values(leaves, "dsl.yield_")
    if frame.types is not None:
        got = [v.type for v in vals]
        if got != list(frame.types):
            fail(f"dsl.yield_ in a {frame.what} gives ({', '.join(map(str, got))}), the carried values are "
                 f"({', '.join(map(str, frame.types))})", rule="yield")
    frame.yielded = vals
    frame.leaves = leaves


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


# --------------------------------------------------------------------------- for

def _loop_annotation(unroll):
    if unroll is None:
        return None
    if unroll is True or unroll == "full":
        return _types.loop_unroll(0)
    if isinstance(unroll, int) and not isinstance(unroll, bool) and 1 <= unroll < 1 << 31:
        return _types.loop_unroll(unroll)
    fail(f"unroll={unroll!r}: a positive int, True/'full', or None", rule="unroll")


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
        self.results = None
        self._used = False

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
            lo, hi, st = (as_value(b, cls) for b in (start, stop, step))
            known = step if isinstance(step, int) else _constant_int(st, cls)
            if known is not None and known <= 0:
                # (a zero step loops forever; a negative one does not count down as Python's range does)
                fail(f"dsl.range step {show(known)}: a positive step (count down with a positive step and "
                     "stop - 1 - i)", rule="loop")
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
        frame = _Frame("dsl.range", [v.type for v in init]) if self.carry is not None else None
        with ir.InsertionPoint(loop.body):
            iv = cls(loop.induction_variable)
            if frame is None:
                yield iv
                with user_location():
                    scf.YieldOp([])
            else:
                _Frame.stack.append(frame)
                try:
                    yield iv, unflatten(rebuild, list(loop.inner_iter_args))
                finally:
                    _Frame.stack.pop()
                if frame.yielded is None:
                    fail("a dsl.range with carry= must end its body with dsl.yield_(...)", rule="yield")
                with user_location():
                    scf.YieldOp(frame.yielded)
        if frame is not None:
            self.results = unflatten(rebuild, list(loop.results))


def _constant_int(v, cls):
    """The value of `v` where an arith.constant makes it (as `cls` reads its bits), else None."""
    owner = v.owner if isinstance(v, ir.Value) else None
    op = getattr(owner, "operation", owner)
    if op is None or getattr(op, "name", None) != "arith.constant":
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

class _IfState:
    """The scf.if of the innermost finished `if_` at each insertion block, so
    that `else_` can attach to it."""
    last = {}


class _Branch:
    """What `with dsl.if_(...) as br` gives: ``br.results`` after the else_."""

    def __init__(self, op):
        self.op = op
        self.results = None


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
    entered last): exits the branches left open beneath that location, so
    that the kernel's own `with` exits pop what they pushed, then refuses."""
    left = [r for r in _OpenRegions.regions if r.kernel is k]
    if left:
        end = ir.Location.current
        end.__exit__(None, None, None)
        _unwind(left)
        end.__enter__()
        from .errors import KernelBuildError
        raise KernelBuildError(f"this {left[0].what} is entered but never exited: the kernel would return inside "
                               "it; use `with` (and close a contextlib.ExitStack before the kernel returns)",
                               where=left[0].where, rule="region")


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


class if_:  # noqa: N801
    """``with dsl.if_(cond): ...`` emits scf.if; a following ``with
    dsl.else_(): ...`` fills its else branch. Branches that end with
    ``dsl.yield_(values)`` make the if produce them: read them from the
    object ``with dsl.if_(...) as br`` binds, as ``br.results``, after the else."""

    _SCOPES = {None: None, "thread": (1, 1), "warp": (1, None), "lane": (None, 1), "warpgroup": (4, None)}

    def __init__(self, cond, *, scope=None):
        if isinstance(cond, bool):
            fail("dsl.if_ on a Python bool: use a Python `if` for build-time conditions", rule="if")
        if scope not in self._SCOPES:
            fail(f"dsl.if_ scope={scope!r}: 'thread', 'warp', 'lane' or 'warpgroup' (what the condition selects)",
                 rule="if")
        self.cond = cond
        self.narrow = self._SCOPES[scope] or (_n.narrowing(cond) if isinstance(cond, Val) else None)

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
        return self.branch

    def __exit__(self, et, ev, tb):
        _closed(self)
        if self.scope:
            self.scope.__exit__(et, ev, tb)
        self.ip.__exit__(et, ev, tb)
        _Frame.stack.pop()
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
        _IfState.last[self.block] = (self.op, self.branch, [v.type for v in (self.frame.yielded or [])],
                                     self.frame.leaves)
        return False


def _move_ops(src, dst):
    ops = list(src.operations)
    for op in ops:
        dst.append(op)


class else_:  # noqa: N801
    """The else branch of the `dsl.if_` just before it in the same block."""

    def __enter__(self):
        _insertion_block("dsl.else_")
        key = _block_key()
        entry = _IfState.last.pop(key, None)
        if entry is None:
            fail("dsl.else_ must follow a `with dsl.if_(...)` block directly", rule="else")
        op, branch, types, self.leaves = entry
        if _last_built(key) != op.operation:
            # (the else branch attached to the if_ and ran before what was built in between)
            fail("dsl.else_ must follow its `with dsl.if_(...)` block directly: code between them would run "
                 "before the else branch", rule="else")
        if not types and len(op.regions[1].blocks) == 0:
            op.regions[1].blocks.append()
        if len(op.regions[1].blocks[0].operations) > 0:
            fail("this dsl.if_ already has an else branch", rule="else")
        self.op, self.branch, self.types = op, branch, types
        self.frame = _Frame("dsl.else_", types or None)
        _Frame.stack.append(self.frame)
        self.ip = ir.InsertionPoint(op.regions[1].blocks[0])
        self.ip.__enter__()
        _opened(self, "dsl.else_")
        return branch

    def __exit__(self, et, ev, tb):
        _closed(self)
        self.ip.__exit__(et, ev, tb)
        _Frame.stack.pop()
        if et is not None:
            return False
        with ir.InsertionPoint(self.op.regions[1].blocks[0]), user_location():
            if self.types:
                if self.frame.yielded is None:
                    fail("the dsl.if_ branch yields values, so its dsl.else_ must dsl.yield_ the same types",
                         rule="yield")
                scf.YieldOp(self.frame.yielded)
                self.branch.results = [_retyped(wrap(r), like) for r, like in zip(self.op.results, self.leaves)]
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
    return unflatten(rebuild, list(br.op.results))


# --------------------------------------------------------------------------- while

class while_:  # noqa: N801
    """``loop = dsl.while_(lambda *carried: condition, carry=(...))`` then
    ``for vals in loop: ...; dsl.yield_(next values)``: an scf.while that
    runs the body while the condition holds; ``loop.results`` is the final
    carried tuple."""

    def __init__(self, condition, carry):
        self.condition = condition
        self.carry = carry
        self.results = None

    def __iter__(self):
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
        frame = _Frame("dsl.while_", types)
        with ir.InsertionPoint(after):
            _Frame.stack.append(frame)
            try:
                yield unflatten(rebuild, list(after.arguments))
            finally:
                _Frame.stack.pop()
            if frame.yielded is None:
                fail("a dsl.while_ body must end with dsl.yield_(next values)", rule="yield")
            with user_location():
                scf.YieldOp(frame.yielded)
        self.results = unflatten(rebuild, list(op.results))
