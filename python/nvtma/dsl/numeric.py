"""Scalar values of the kernel language, with CuTe DSL's type names.

A type class is also its value's class and its converter: ``Int32(3)`` is a
constant, ``Float32(x)`` converts ``x``, ``x.to(BFloat16)`` too. MLIR
integers are signless; signedness lives here, in the class, and picks the
signed or unsigned division, remainder, shift and comparison.

Integer ``//`` and ``%`` follow Python (floor) semantics for signed types,
like CuTe DSL's Int32; unsigned types (``Uint32``) use the cheaper unsigned
ops. ``Index`` is MLIR's ``index`` (signed, 64-bit on NVPTX), the type of
memref indices and of loop counters over them.
"""

from __future__ import annotations

import builtins
import functools
import math as _pymath
import struct

from .._lazy import lazy
from .errors import KernelBuildError, fail, show, user_op

ir = lazy("nvtma.ir")
arith = lazy("nvtma.dialects.arith")
nvvm = lazy("nvtma.dialects.nvvm")
vector = lazy("nvtma.dialects.vector")
llvm = lazy("nvtma.dialects.llvm")
_d = lazy("nvtma.dialects.nvtma")

__all__ = ["Val", "Numeric", "Integer", "Float", "Boolean", "Index", "Int8", "Int16", "Int32", "Int64", "Uint8",
           "Uint16", "Uint32", "Uint64", "Float16", "BFloat16", "Float32", "Float64", "Float8E4M3FN",
           "Float8E5M2", "dtype", "wrap", "as_value", "const", "select", "min", "max", "abs", "fma", "exp2", "exp",
           "log2", "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "fdividef"]


_state = []  # [dsl.kernel's _KernelState class], found on first use (kernel.py imports this module)


def _current_build():
    """The state of the kernel being traced (None outside a trace): what a
    value records as its owner."""
    if not _state:
        from .kernel import _KernelState
        _state.append(_KernelState)
    return _state[0].current


def build_owner():
    """What a value made now belongs to: the kernel being traced, or (the
    kernel's own arguments, wrapped just before its trace starts) the MLIR
    context they were made in."""
    b = _current_build()
    return b if b is not None else ir.Context.current


def check_build(owner, what):
    """A value (or a helper holding values: accumulators, mbarriers) kept
    from another kernel's build (a global, a closure, a cached object) lives
    in that build's MLIR context, and an op mixing two contexts segfaults:
    refused here. `owner` is what build_owner() said when it was made."""
    if owner is None:
        return
    cur = _current_build()
    if owner is cur or (cur is not None and owner is ir.Context.current):
        return
    name = getattr(getattr(owner, "kernel", None), "name", None)
    made = f"while building kernel {name!r}" if name else "for another kernel's build"
    fail(f"{what} was made {made} and is used {'outside any kernel' if cur is None else 'in another build'}: "
         "a value belongs to the build that made it; make it again in this kernel", rule="foreign-value")


class Val:
    """A run-time value of the kernel being built; ``.value`` is its MLIR Value."""

    __slots__ = ("_value", "_owner", "tag")

    def __init__(self, value):
        self.value = value

    @property
    def value(self):
        owner = self._owner
        if owner is not None and owner is not _current_build():
            check_build(owner, f"this {type(self).__name__}")
        return self._value

    @value.setter
    def value(self, v):
        self._value = v
        self._owner = build_owner()

    @property
    def type(self):
        return self.value.type

    def __bool__(self):
        fail("a Python `if`, `while`, `and`, `or` or `not` on a run-time value decides at build time; use "
             "dsl.if_/dsl.else_, dsl.while_, dsl.select or the operators & | ~ instead", rule="python-control-flow")

    def __index__(self):
        fail("a run-time value used where Python needs an int (a Python range, a list index, a shape); use "
             "dsl.range or keep the value a build-time constant", rule="python-int")

    __int__ = __float__ = __index__
    __hash__ = object.__hash__

    def __iter__(self):
        fail(f"a {type(self).__name__} value cannot be iterated", rule="python-iter")

    def __repr__(self):
        if not self._live():
            return f"{type(self).__name__}(<of another build>)"
        return f"{type(self).__name__}({self._value.type})"

    def _live(self) -> bool:
        """Whether this value belongs to the kernel being built (or to no
        build): a value of a finished build must not be touched at all, its
        MLIR objects are gone (reading its type segfaulted)."""
        owner = self._owner
        if owner is None or owner is _current_build():
            return True
        return _current_build() is not None and owner is ir.Context.current


# --------------------------------------------------------------------------- type classes

class Numeric(Val):
    """A scalar; subclasses are the element types."""

    __slots__ = ()
    name = ""        # MLIR spelling
    width = 0
    is_float = False
    signed = True

    @classmethod
    def mlir_type(cls):
        raise NotImplementedError

    def __init__(self, x=0):
        if not type(self).name:  # (dsl.Float(1.5): a TypeError from the MLIR type's lookup)
            fail(f"dsl.{type(self).__name__} is the class of several element types: make a value of one "
                 "(Float32, Int32, ...)", rule="type")
        if _is_value(x):
            if x.type != type(self).mlir_type():
                fail(f"{type(self).__name__} wraps {type(self).name}, got a {x.type} value", rule="type")
            self.value = x
        elif isinstance(x, Val):
            if isinstance(x.value.type, ir.VectorType):  # was a scalar class holding the whole vector
                fail(f"{type(self).__name__}() of a {x.value.type} vector: take a lane (v[i]) or convert lane by "
                     f"lane (v.to({type(self).__name__}))", rule="type")
            self.value = convert(x, type(self)).value
        elif isinstance(x, (bool, int, float)):
            self.value = _constant(type(self), x)
        else:
            fail(f"cannot make a {type(self).__name__} from {type(x).__name__}", rule="type")

    # --- conversions
    def to(self, cls):
        """This value converted to `cls` (a type class or its name)."""
        return convert(self, dtype(cls))

    def bitcast(self, cls):
        cls = dtype(cls)
        if cls is Index or type(self) is Index:
            fail(f"bitcast {type(self).__name__} to {cls.__name__}: index has no fixed bit width in MLIR; convert "
                 "with .to(Int64) first", rule="bitcast")
        if cls.width != self.width:
            fail(f"bitcast {type(self).__name__} to {cls.__name__}: widths differ ({self.width} vs {cls.width})",
                 rule="bitcast")
        return cls(_op(arith.BitcastOp, cls.mlir_type(), self.value))

    # --- arithmetic
    def __add__(self, o): return _binary(self, o, "add")
    def __radd__(self, o): return _binary(o, self, "add")
    def __sub__(self, o): return _binary(self, o, "sub")
    def __rsub__(self, o): return _binary(o, self, "sub")
    def __mul__(self, o): return _binary(self, o, "mul")
    def __rmul__(self, o): return _binary(o, self, "mul")
    def __truediv__(self, o): return _binary(self, o, "div")
    def __rtruediv__(self, o): return _binary(o, self, "div")
    def __floordiv__(self, o): return _binary(self, o, "floordiv")
    def __rfloordiv__(self, o): return _binary(o, self, "floordiv")
    def __mod__(self, o): return _binary(self, o, "mod")
    def __rmod__(self, o): return _binary(o, self, "mod")
    def __and__(self, o): return _binary(self, o, "and")
    def __rand__(self, o): return _binary(o, self, "and")
    def __or__(self, o): return _binary(self, o, "or")
    def __ror__(self, o): return _binary(o, self, "or")
    def __xor__(self, o): return _binary(self, o, "xor")
    def __rxor__(self, o): return _binary(o, self, "xor")
    def __lshift__(self, o): return _binary(self, o, "shl")
    def __rlshift__(self, o): return _binary(o, self, "shl")
    def __rshift__(self, o): return _binary(self, o, "shr")
    def __rrshift__(self, o): return _binary(o, self, "shr")

    def __lt__(self, o): return _compare(self, o, "lt")
    def __le__(self, o): return _compare(self, o, "le")
    def __gt__(self, o): return _compare(self, o, "gt")
    def __ge__(self, o): return _compare(self, o, "ge")
    def __eq__(self, o): return _compare(self, o, "eq")
    def __ne__(self, o): return _compare(self, o, "ne")
    __hash__ = Val.__hash__

    @user_op
    def __neg__(self):
        if self.is_float:
            _no_f8(type(self), "negation")
            return type(self)(_op(arith.NegFOp, self.value))
        if type(self) is Boolean:  # (0 - b on an i1: -True was True)
            fail("negation of a Boolean: convert it first (-b.to(Int32)); ~ is logical not", rule="operator")
        return type(self)(_op(arith.SubIOp, _constant(type(self), 0), self.value))

    def __pos__(self):
        return self

    @user_op
    def __invert__(self):
        if self.is_float:
            fail(f"~ on a {type(self).__name__}", rule="operator")
        return type(self)(_op(arith.XOrIOp, self.value, _constant(type(self), -1 if self.signed else
                                                                  (1 << self.width) - 1)))

    def __abs__(self):
        return abs(self)

    def __pow__(self, o):
        fail("** on run-time values: multiply, or use dsl.exp2/dsl.log2", rule="operator")

    __rpow__ = __pow__  # (2 ** Int32 was Python's TypeError)

    def __divmod__(self, o):
        return self // o, self % o

    def __rdivmod__(self, o):
        return o // self, o % self

    def __round__(self, ndigits=None):
        fail(f"round() of a run-time {type(self).__name__}: .to(Int32) truncates toward zero; add 0.5 (or use "
             "dsl.select on the sign) first to round", rule="operator")


class Integer(Numeric):
    __slots__ = ()

    @classmethod
    def mlir_type(cls):
        return ir.IntegerType.get_signless(cls.width)

    @property
    def min(self):
        return -(1 << (self.width - 1)) if self.signed else 0

    @property
    def max(self):
        return (1 << (self.width - 1)) - 1 if self.signed else (1 << self.width) - 1


class Float(Numeric):
    __slots__ = ()
    is_float = True
    _get = None

    @classmethod
    def mlir_type(cls):
        return getattr(ir, cls._get).get()


def _int(name, width, signed):
    return type(name, (Integer,), {"__slots__": (), "name": f"i{width}", "width": width, "signed": signed,
                                   "__doc__": f"{'Signed' if signed else 'Unsigned'} {width}-bit integer."})


Int8, Int16, Int32, Int64 = (_int(f"Int{w}", w, True) for w in (8, 16, 32, 64))
Uint8, Uint16, Uint32, Uint64 = (_int(f"Uint{w}", w, False) for w in (8, 16, 32, 64))


class Boolean(Integer):
    """An i1: comparison results and predicates."""
    __slots__ = ()
    name = "i1"
    width = 1
    signed = False

    def __invert__(self):
        return Boolean(_op(arith.XOrIOp, self.value, _constant(Boolean, 1)))

    def __and__(self, o):
        r = _binary(self, o, "and")
        ta, tb = getattr(self, "tag", None), getattr(o, "tag", None)
        if isinstance(ta, tuple) or isinstance(tb, tuple):
            r.tag = ("one",) + (ta[1:] if isinstance(ta, tuple) else ()) + (tb[1:] if isinstance(tb, tuple) else ())
        return r

    __rand__ = __and__


class Index(Integer):
    """MLIR's index: memref indices, loop counters over them."""
    __slots__ = ()
    name = "index"
    width = 64

    @classmethod
    def mlir_type(cls):
        return ir.IndexType.get()

    # the names the kernel library used before the numeric types existed
    def to_i32(self):
        return Int32(self)

    def to_index(self):
        return self


def _float(name, mlir, width, getter):
    return type(name, (Float,), {"__slots__": (), "name": mlir, "width": width, "_get": getter,
                                 "__doc__": f"{mlir} floating point."})


Float16 = _float("Float16", "f16", 16, "F16Type")
BFloat16 = _float("BFloat16", "bf16", 16, "BF16Type")
Float32 = _float("Float32", "f32", 32, "F32Type")
Float64 = _float("Float64", "f64", 64, "F64Type")
Float8E4M3FN = _float("Float8E4M3FN", "f8E4M3FN", 8, "Float8E4M3FNType")
Float8E5M2 = _float("Float8E5M2", "f8E5M2", 8, "Float8E5M2Type")

_FLOAT8 = (Float8E4M3FN, Float8E5M2)
_ALL = (Boolean, Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Index, Float16, BFloat16, Float32,
        Float64, Float8E4M3FN, Float8E5M2)
_BY_NAME = {c.__name__: c for c in _ALL}
# MLIR spellings and the usual short names; signless MLIR integers are signed here
_BY_NAME.update({"i1": Boolean, "bool": Boolean, "i8": Int8, "i16": Int16, "i32": Int32, "i64": Int64,
                 "ui8": Uint8, "ui16": Uint16, "ui32": Uint32, "ui64": Uint64, "u8": Uint8, "u16": Uint16,
                 "u32": Uint32, "u64": Uint64, "index": Index, "f16": Float16, "bf16": BFloat16,
                 "f32": Float32, "f64": Float64, "f8E4M3FN": Float8E4M3FN, "f8E5M2": Float8E5M2,
                 "e4m3": Float8E4M3FN, "e5m2": Float8E5M2, "float16": Float16, "bfloat16": BFloat16,
                 "float32": Float32, "float8_e4m3fn": Float8E4M3FN, "float8_e5m2": Float8E5M2})


_SHORT = ("i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "index", "f16", "bf16", "f32", "f64", "f8E4M3FN",
          "f8E5M2")


def dtype(x):
    """The type class for a class, a name ("f16", "bf16", "i32", CuTe's
    "Float16", torch's "float8_e4m3fn") or an MLIR type."""
    if isinstance(x, type) and issubclass(x, Numeric) and x not in (Numeric, Integer, Float):
        return x
    if isinstance(x, str):
        c = _BY_NAME.get(x.replace("torch.", ""))
        if c is None:
            raise KernelBuildError(f"unknown element type {x!r}; one of {', '.join(_SHORT)} (or the classes' names: "
                                   "Int32, BFloat16 ...)", rule="dtype")
        return c
    if _is_type(x):
        return from_mlir(x)
    raise KernelBuildError(f"not an element type: {x!r}", rule="dtype")


def from_mlir(t):
    if isinstance(t, ir.IndexType):
        return Index
    if isinstance(t, ir.IntegerType):
        c = {1: Boolean, 8: Int8, 16: Int16, 32: Int32, 64: Int64}.get(ir.IntegerType(t).width)
        if c is None:  # (an i4 or i128 value was a KeyError out of wrap() and dtype())
            raise KernelBuildError(f"no DSL type for MLIR type {t}: integers are 1, 8, 16, 32 or 64 bits",
                                   rule="dtype")
        return c
    s = str(t)
    for c in _ALL:
        if c.is_float and c.name == s:
            return c
    raise KernelBuildError(f"no DSL type for MLIR type {t}", rule="dtype")


def declared(cls, elem):
    """`cls` where it names MLIR type `elem` (a Uint32 for an i32), else None: the class a vector's or
    tensor's elements keep, which their signless MLIR type cannot say."""
    return cls if cls is not None and cls.mlir_type() == elem else None


def _is_value(x):
    return isinstance(x, ir.Value)


def _is_type(x):
    return isinstance(x, ir.Type)


def wrap(v):
    """The DSL value for an MLIR Value (scalars, vectors, memrefs)."""
    if isinstance(v, Val):
        return v
    t = v.type
    if isinstance(t, ir.VectorType):
        from .vector import Vector
        return Vector(v)
    if isinstance(t, ir.MemRefType):
        from .tensor import TensorValue
        return TensorValue(v)
    try:
        return from_mlir(t)(v)
    except KernelBuildError:
        return Val(v)


def run_time_integer(v) -> bool:
    """Whether `v` is a run-time integer: a DSL scalar that is neither a float nor a Boolean (what an index,
    a count or a stage may be besides a Python int)."""
    return isinstance(v, Numeric) and not type(v).is_float and not isinstance(v, Boolean)


def as_value(x, cls=None):
    """The MLIR Value of x; Python numbers become constants of `cls`
    (default Index for ints, Float32 for floats, Boolean for bools)."""
    if isinstance(x, Val):
        if cls is not None and isinstance(x, Numeric) and type(x).mlir_type() != cls.mlir_type():
            return convert(x, cls).value
        if cls is not None and not isinstance(x, Numeric):  # (its value reached an op that takes a scalar)
            from .tensor import TensorValue
            from .vector import Vector
            if isinstance(x, TensorValue):
                fail(f"a tensor ({x!r}) where a {cls.__name__} value goes: index it (t[i, j]) for an element",
                     rule="type")
            if isinstance(x, Vector):
                fail(f"a vector ({x!r}) where one {cls.__name__} value goes: take a lane (v[0]) or reduce it",
                     rule="type")
        return x.value
    if isinstance(x, bool):
        return _constant(cls or Boolean, x)
    if isinstance(x, int):
        return _constant(cls or Index, x)
    if isinstance(x, float):
        return _constant(cls or Float32, x)
    if _is_value(x):
        return x
    fail(f"expected a run-time value or a Python number, got {type(x).__name__}", rule="type")


def const(v, cls=None):
    """A constant: ``const(3)`` is an Index, ``const(1.0, Float16)`` an f16."""
    if cls is None:
        cls = Boolean if isinstance(v, bool) else Index if isinstance(v, int) else Float32
    return dtype(cls)(v)


# --------------------------------------------------------------------------- constants

def _op(opcls, *args, **kwargs):
    return opcls(*args, **kwargs).result


def _constant(cls, x):
    if _current_build() is None:  # not MLIR's RuntimeError "requires a Context"
        fail(f"{cls.__name__}({x!r}) is a run-time constant: make it inside an @nvtma.dsl.kernel function",
             rule="outside-kernel")
    if cls.is_float:
        try:
            x = float(x)
        except OverflowError:
            fail(f"{show(x)} does not fit {cls.__name__} (it is past the largest double)", rule="range")
        if cls in _FLOAT8:
            bits = _f8_bits(x, cls)
            i8 = _op(arith.ConstantOp, ir.IntegerType.get_signless(8), bits)
            return _op(arith.BitcastOp, cls.mlir_type(), i8)
        return _op(arith.ConstantOp, cls.mlir_type(), ir.FloatAttr.get(cls.mlir_type(), x))
    if isinstance(x, float):
        if not x.is_integer():
            fail(f"{x!r} is not an integer, {cls.__name__} needs one", rule="range")
        x = int(x)
    x = int(x)
    lo = -(1 << (cls.width - 1)) if cls.width > 1 else 0
    hi = (1 << cls.width) - 1
    if cls is Index:
        lo, hi = -(1 << 63), (1 << 63) - 1
    if not lo <= x <= hi:
        fail(f"{show(x)} does not fit {cls.__name__}", rule="range")
    if cls.width > 1 and x >= 1 << (cls.width - 1) and cls is not Index:
        x -= 1 << cls.width  # unsigned bit pattern as the signless constant
    return _op(arith.ConstantOp, cls.mlir_type(), x)


def _f8_bits(x: float, cls) -> int:
    """Round-to-nearest-even fp8 encoding, saturating to the largest finite value (infinities too) and NaN
    0x7F, as the GPU's cvt.rn.satfinite does at run time (measured on the H200: an e5m2 constant of inf was
    0x7C and NaN 0x7E where the run-time conversion gives 0x7B and 0x7F)."""
    ebits, mbits, bias = (4, 3, 7) if cls is Float8E4M3FN else (5, 2, 15)
    if _pymath.isnan(x):
        return 0x7F
    sign = 0x80 if _pymath.copysign(1.0, x) < 0 else 0
    a = builtins.abs(x)  # the module's abs is the DSL's
    maxv = 448.0 if cls is Float8E4M3FN else 57344.0
    if a >= maxv:
        a = maxv
    if a == 0:
        return sign
    e = _pymath.floor(_pymath.log2(a))
    e = builtins.max(e, 1 - bias)  # the module's max is the DSL's
    q = a / 2.0 ** e * (1 << mbits)  # mantissa with the implicit bit, scaled
    r = round(q)  # Python rounds half to even
    if r >= 2 << mbits:
        e += 1
        r //= 2
    if r < 1 << mbits:  # subnormal
        return sign | int(r)
    return sign | ((e + bias) << mbits) | (int(r) - (1 << mbits))


# --------------------------------------------------------------------------- promotion and conversion

_RANK = {Float64: 6, Float32: 5, Float16: 4, BFloat16: 4, Float8E4M3FN: 3, Float8E5M2: 3}


def _result_class(a, b):
    ca = type(a) if isinstance(a, Numeric) else None
    cb = type(b) if isinstance(b, Numeric) else None
    if ca is None and cb is None:
        fail("an operation on two Python values reached the DSL", rule="type")
    if ca is None or cb is None:
        c, py = (ca, b) if cb is None else (cb, a)
        if isinstance(py, float) and not c.is_float:
            return Float64 if c.width > 32 else Float32  # (Int64 + 0.5 lost its low bits in a Float32)
        if not isinstance(py, (bool, int, float)):
            fail(f"cannot combine {c.__name__} with {type(py).__name__}", rule="type")
        return c
    return promote(ca, cb)


def promote(ca, cb):
    """The type two operands of types `ca` and `cb` meet in."""
    if ca is cb:
        return ca
    if ca.is_float or cb.is_float:
        if ca.is_float and cb.is_float:
            if {ca, cb} == {Float16, BFloat16} or ca in _FLOAT8 or cb in _FLOAT8:
                return Float32
            return ca if _RANK[ca] > _RANK[cb] else cb
        return ca if ca.is_float else cb
    if Index in (ca, cb):
        other = cb if ca is Index else ca
        # Index is a signed 64-bit integer here: with Uint64 it meets in Uint64, as Int64 does (like C's
        # ptrdiff_t and uint64_t), so Uint64(2**63) > Index(0) compares unsigned
        return other if other.width == 64 and not other.signed and other is not Boolean else Index
    if Boolean in (ca, cb):
        return cb if ca is Boolean else ca
    if ca.width != cb.width:
        return ca if ca.width > cb.width else cb
    return ca if not ca.signed else cb  # same width, mixed signedness: unsigned, like C


@user_op
def convert(x, cls):
    """x (a DSL value or a Python number) as a value of type class `cls`."""
    cls = dtype(cls)
    if not isinstance(x, Numeric):
        if isinstance(x, (bool, int, float)):
            return cls(x)
        from .vector import Vector
        if isinstance(x, Vector):
            return x.to(cls)
        fail(f"cannot convert {type(x).__name__} to {cls.__name__}", rule="type")
    src = type(x)
    v = x.value
    if src.mlir_type() == cls.mlir_type():
        return cls(v)
    if cls is Boolean:
        if src in _FLOAT8:  # arith.cmpf has no f8 lowering (an unrealized cast reached LLVM translation)
            return convert(convert(x, Float32), Boolean)
        if src.is_float:
            return Boolean(_op(arith.CmpFOp, arith.CmpFPredicate.UNE, v, _constant(src, 0.0)))
        return Boolean(_op(arith.CmpIOp, arith.CmpIPredicate.ne, v, _constant(src, 0)))
    if src.is_float and cls.is_float:
        return cls(_convert_float(v, src, cls))
    if src.is_float:  # float -> integer
        if src in _FLOAT8:
            return convert(convert(x, Float32), cls)
        tgt = Int64 if cls is Index else cls
        r = _fp_to_int_sat(v, src, tgt)
        return cls(_op(arith.IndexCastOp, cls.mlir_type(), r) if cls is Index else r)
    if cls.is_float:  # integer -> float
        if src is Index:
            v, src = _op(arith.IndexCastOp, Int64.mlir_type(), v), Int64
        if cls in _FLOAT8:
            return convert(convert(Int64(v) if src is Int64 else src(v), Float32), cls)
        signed = src.signed and src is not Boolean
        return cls(_op(arith.SIToFPOp if signed else arith.UIToFPOp, cls.mlir_type(), v))
    # integer -> integer
    if src is Index or cls is Index:
        signed = src.signed if cls is Index else True
        return cls(_op(arith.IndexCastOp if signed else arith.IndexCastUIOp, cls.mlir_type(), v))
    if cls.width > src.width:
        signed = src.signed and src is not Boolean
        return cls(_op(arith.ExtSIOp if signed else arith.ExtUIOp, cls.mlir_type(), v))
    if cls.width < src.width:
        return cls(_op(arith.TruncIOp, cls.mlir_type(), v))
    return cls(v)  # same width, other signedness


def _convert_float(v, src, cls):
    """Scalar float -> float. fp8 goes through the packed NVVM conversions
    (LLVM has no fp8 type): with a zero partner lane."""
    if cls in _FLOAT8 or src in _FLOAT8:
        from .vector import Vector
        pair = Vector.from_elements([src(v), src(0.0)])
        return pair.to(cls)[0].value
    if {src, cls} == {Float16, BFloat16}:
        return _op(arith.TruncFOp, cls.mlir_type(), _op(arith.ExtFOp, Float32.mlir_type(), v))
    if cls.width > src.width:
        return _op(arith.ExtFOp, cls.mlir_type(), v)
    return _op(arith.TruncFOp, cls.mlir_type(), v)


def f64_to_f32_odd(v):
    """An f64 Value rounded to f32 toward zero with the lost bits ORed into the last one (round to odd): a
    narrower rounding of it after (to fp8: there is no cvt from f64) is then the f64's own. Rounded to
    nearest first, a double 1 ulp above an fp8 midpoint met the midpoint in f32 and went to even."""
    rz = _d.TruncFRzOp(v).result
    inexact = _op(arith.CmpFOp, arith.CmpFPredicate.UNE, _op(arith.ExtFOp, ir.F64Type.get(), rz), v)
    i32 = ir.IntegerType.get_signless(32)
    bits = _op(arith.OrIOp, _op(arith.BitcastOp, i32, rz), _op(arith.ExtUIOp, i32, inexact))
    return _op(arith.BitcastOp, ir.F32Type.get(), bits)


def _fp_to_int_sat(v, src, tgt, lanes=None):
    """Float (f16/bf16/f32/f64, or `lanes` of them) -> integer `tgt`, saturating: NaN is 0 and values past the
    range clamp, as PTX's cvt.rzi does at run time. arith's fptosi made them LLVM poison, so a constant NaN or
    3e9 lost the store of its result, and an Int8 of 300.0 held 300 (cvt.rzi.s16)."""
    if src in (Float16, BFloat16):  # exactly in f32 (the intrinsic's f16/bf16 forms lower through it anyway)
        f32 = ir.VectorType.get([lanes], Float32.mlir_type()) if lanes else Float32.mlir_type()
        v, src = _op(arith.ExtFOp, f32, v), Float32
    # nvtma.fptoint_sat: one cvt.rzi for a scalar to 32 or 64 bits (NaN selected to 0 where cvt.rzi gives the
    # top bit: cvt.rzi.s64 gave INT64_MIN on the H200, cvt.rzi.s32.f64 2^31 on the H100), else LLVM's fptosi.sat
    rt = tgt.mlir_type()
    if lanes:
        rt = ir.VectorType.get([lanes], rt)
    return _d.FPToIntSatOp(rt, v, is_unsigned=not tgt.signed).result


def _no_f8(cls, what):
    if cls in _FLOAT8:
        fail(f"{what} on {cls.__name__}: fp8 has no arithmetic; convert first (x.to(Float16) or .to(Float32))",
             rule="fp8-arith")


_INT_OPS = {"add": "AddIOp", "sub": "SubIOp", "mul": "MulIOp", "and": "AndIOp", "or": "OrIOp", "xor": "XOrIOp",
            "shl": "ShLIOp"}
_FLOAT_OPS = {"add": "AddFOp", "sub": "SubFOp", "mul": "MulFOp", "div": "DivFOp"}


def known_int(x):
    """The integer a DSL integer value holds when it is known at build (a constant, arithmetic of constants
    as `_folded` folds it, or a vector broadcast of one), read with its class's signedness; else None."""
    from .vector import Vector
    if not isinstance(x, (Numeric, Vector)):
        return None
    cls = x.dtype if isinstance(x, Vector) else type(x)
    if cls.is_float or not x._live():
        return None
    v = x.value
    if isinstance(x, Vector) and isinstance(_view(v), vector.BroadcastOp):
        v = v.owner.operands[0]
    v = _folded(v)
    if v is None:
        return None
    # (v is a bit pattern of the value's width: 64 for Index, which reads signed)
    return _as_signed(v, 64) if cls is Index else _as_signed(v, cls.width) if cls.signed else v


def _view(v):
    """The op that makes MLIR value `v`, as its dialect class (None: a block argument, or not a value)."""
    owner = getattr(v, "owner", None)
    op = getattr(owner, "operation", None)
    return op.opview if op is not None else None


def _width(t):
    """The bits of an MLIR integer or index type (index: 64, as the NVPTX lowering makes it); None for others."""
    if isinstance(t, ir.IndexType):
        return 64
    return ir.IntegerType(t).width if isinstance(t, ir.IntegerType) else None


def _as_signed(p, w):
    """Bit pattern p of w bits as a signed integer."""
    return p - (1 << w) if p >> (w - 1) & 1 else p


def _sdiv(a, b, w, rounding):
    """Signed a / b rounded toward zero, down or up (a, b patterns of w bits), or None where LLVM makes it
    poison or undefined: by 0, or -2^(w-1) / -1."""
    a, b = _as_signed(a, w), _as_signed(b, w)
    if b == 0 or (a == -(1 << (w - 1)) and b == -1):
        return None
    if rounding == "zero":
        return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return a // b if rounding == "floor" else -(-a // b)


def _srem(a, b, w):
    """Signed a rem b, of the dividend's sign (-2^(w-1) rem -1 is 0, as MLIR and LLVM fold it); None by 0."""
    a, b = _as_signed(a, w), _as_signed(b, w)
    if b == 0:
        return None
    return abs(a) % abs(b) * (1 if a >= 0 else -1)


def _shift(a, b, w, f):
    """f(a, b) for a shift by b of a w-bit value, or None where b is w or more (LLVM poison)."""
    return None if b >= w else f(a, b)


# arith's integer ops on w-bit patterns (their results wrapped to w bits after): None where the op is poison
_FOLDS = {
    "AddIOp": lambda a, b, w: a + b,
    "SubIOp": lambda a, b, w: a - b,
    "MulIOp": lambda a, b, w: a * b,
    "AndIOp": lambda a, b, w: a & b,
    "OrIOp": lambda a, b, w: a | b,
    "XOrIOp": lambda a, b, w: a ^ b,
    "DivUIOp": lambda a, b, w: a // b if b else None,
    "RemUIOp": lambda a, b, w: a % b if b else None,
    "CeilDivUIOp": lambda a, b, w: -(-a // b) if b else None,
    "DivSIOp": lambda a, b, w: _sdiv(a, b, w, "zero"),
    "FloorDivSIOp": lambda a, b, w: _sdiv(a, b, w, "floor"),
    "CeilDivSIOp": lambda a, b, w: _sdiv(a, b, w, "ceil"),
    "RemSIOp": _srem,
    "ShLIOp": lambda a, b, w: _shift(a, b, w, int.__lshift__),
    "ShRUIOp": lambda a, b, w: _shift(a, b, w, int.__rshift__),
    "ShRSIOp": lambda a, b, w: _shift(_as_signed(a, w), b, w, int.__rshift__),
    "MinSIOp": lambda a, b, w: builtins.min(_as_signed(a, w), _as_signed(b, w)),
    "MaxSIOp": lambda a, b, w: builtins.max(_as_signed(a, w), _as_signed(b, w)),
    "MinUIOp": lambda a, b, w: builtins.min(a, b),
    "MaxUIOp": lambda a, b, w: builtins.max(a, b),
}
# cmpi's predicates (arith::CmpIPredicate's values) on w-bit patterns
_ORDER = (int.__lt__, int.__le__, int.__gt__, int.__ge__)
_CMPI = [lambda a, b, w: a == b, lambda a, b, w: a != b] + [
    (lambda f: lambda a, b, w: f(_as_signed(a, w), _as_signed(b, w)))(f) for f in _ORDER] + [
    (lambda f: lambda a, b, w: f(a, b))(f) for f in _ORDER]
_CASTS = {"ExtSIOp": True, "IndexCastOp": True, "ExtUIOp": False, "IndexCastUIOp": False, "TruncIOp": False}


def _folded(v, depth=0, memo=None):
    """The bit pattern an MLIR integer value holds where constants and arith's integer ops (+ - * & | ^, the
    divisions and remainders, shifts, min/max, comparisons, select, casts) of them make it: Int32(16) + 16
    and Int64(3) % 4 (a remsi, compares and a select) are known here as LLVM folds them; None elsewhere (a
    run-time value, an op that is poison on its constants, or past `depth` ops). Each op is folded once a
    call (`memo`: x * x + x shares its operands)."""
    op = _view(v)
    w = _width(v.type) if op is not None else None
    if w is None:
        return None
    memo = {} if memo is None else memo
    key = op.operation
    if key not in memo:
        memo[key] = _fold_op(op, w, depth, memo)
    return memo[key]


def _fold_op(op, w, depth, memo):
    """_folded's value of op's result (w bits), from its operands' (each folded once, in `memo`)."""
    name = type(op).__name__
    if isinstance(op, arith.ConstantOp):
        a = op.attributes["value"]
        return ir.IntegerAttr(a).value % (1 << w) if isinstance(a, ir.IntegerAttr) else None
    if depth >= 64 or name not in _FOLDS and name not in _CASTS and name not in ("CmpIOp", "SelectOp"):
        return None
    if name == "SelectOp":
        c = _folded(op.operands[0], depth + 1, memo)
        return None if c is None else _folded(op.operands[1 if c else 2], depth + 1, memo)
    args = [_folded(o, depth + 1, memo) for o in op.operands]
    if None in args:
        return None
    if name in _CASTS:
        r = _as_signed(args[0], _width(op.operands[0].type)) if _CASTS[name] else args[0]
    elif name == "CmpIOp":
        r = int(_CMPI[ir.IntegerAttr(op.attributes["predicate"]).value](*args, _width(op.operands[0].type)))
    else:
        r = _FOLDS[name](*args, w)
    return None if r is None else r % (1 << w)


def _int_operands(kind, cls, a, b):
    """Python-int operands an integer op of `cls` cannot take, refused at build: a shift by a Python int
    outside [0, width) and a // or % by 0 are poison in LLVM (the store of the result was deleted, silently);
    so are those by a DSL constant (x << Int32(40), x // Int32(0)). A Python int past a signed type's range
    compared, divided or taken min/max of was read as the bit pattern (Int8(5) < 200 was false); a negative
    one with an unsigned type too (Uint32(5) < -1 was true, Uint32(5) // -2 was 0, max(u, -1) was 2**32-1)."""
    if cls is Boolean and kind not in ("and", "or", "xor", "compare", "min", "max"):
        # (1-bit arithmetic: True + True was False)
        fail(f"`{kind}` of Booleans: convert them first (b.to(Int32)); & | ^ ~ are logical", rule="operator")
    if cls.is_float or cls is Boolean:
        return
    if kind in ("shl", "shr", "floordiv", "mod") and not isinstance(b, int):
        k = known_int(b)
        if k is not None:
            # as the op sees it: converted to `cls` (truncated or extended), a shift amount read unsigned
            k %= 1 << cls.width
            if kind in ("shl", "shr") and k >= cls.width:
                fail(f"a shift of {cls.__name__} by the constant {show(known_int(b))}: an amount in "
                     f"0..{cls.width - 1} (a wider one is LLVM poison)", rule="shift")
            if kind in ("floordiv", "mod") and k == 0:
                fail(f"`{ {'floordiv': '//', 'mod': '%'}[kind] }` of {cls.__name__} by the constant 0",
                     rule="division")
    if kind == "floordiv" and cls.signed:
        # the one signed quotient past the type, -2^(w-1) // -1, is LLVM poison too (its store was deleted); % -1
        # is 0 (MLIR and LLVM fold it so)
        n, d = (x if isinstance(x, int) and not isinstance(x, bool) else known_int(x) for x in (a, b))
        if n == -(1 << (cls.width - 1)) and d == -1:
            fail(f"`//` of {cls.__name__} {show(n)} by the constant -1: the quotient 2**{cls.width - 1} does not fit "
                 f"{cls.__name__} (LLVM poison){'; convert to a wider type first' if cls.width < 64 else ''}",
                 rule="division")
    py = b if isinstance(b, int) else a if isinstance(a, int) else None
    if py is None or isinstance(py, bool):
        return
    if kind in ("shl", "shr") and py is b and not 0 <= b < cls.width:
        fail(f"a shift of {cls.__name__} by {show(b)}: an amount in 0..{cls.width - 1} (a wider one is LLVM "
             "poison)", rule="shift")
    if kind in ("floordiv", "mod") and py is b and b == 0:
        fail(f"`{ {'floordiv': '//', 'mod': '%'}[kind] }` of {cls.__name__} by 0", rule="division")
    if kind not in ("floordiv", "mod", "min", "max", "compare") or cls is Index:
        return
    if cls.signed and not -(1 << (cls.width - 1)) <= py < 1 << (cls.width - 1):
        fail(f"{show(py)} does not fit {cls.__name__} ({kind}: its bit pattern would be a negative "
             f"{cls.__name__}); convert the value to an unsigned or wider type first", rule="range")
    if not cls.signed and py < 0:
        fail(f"{show(py)} with a {cls.__name__} ({kind}: its bit pattern would be a large {cls.__name__}, "
             f"{py % (1 << cls.width)}); convert the value to a signed type first", rule="range")


def _floor_mod(x, y, zero):
    """Python's floor modulo of signed MLIR values x % y (scalars or vectors; `zero` like them): r = x rem y,
    plus y where r and y differ in sign."""
    r = _op(arith.RemSIOp, x, y)
    fix = _op(arith.AndIOp, _op(arith.CmpIOp, arith.CmpIPredicate.ne, r, zero),
              _op(arith.CmpIOp, arith.CmpIPredicate.ne,
                  _op(arith.CmpIOp, arith.CmpIPredicate.slt, r, zero),
                  _op(arith.CmpIOp, arith.CmpIPredicate.slt, y, zero)))
    return _op(arith.SelectOp, fix, _op(arith.AddIOp, r, y), r)


@user_op
def _binary(a, b, kind):
    from .vector import Vector
    if isinstance(a, Vector) or isinstance(b, Vector):
        return Vector._binary(a, b, kind)
    # a shift has its left operand's type (C's rule: Int32 >> Uint32 shifted logically as a Uint32)
    cls = type(a) if kind in ("shl", "shr") and isinstance(a, Numeric) and not type(a).is_float \
        else _result_class(a, b)
    _int_operands(kind, cls, a, b)
    x, y = as_value(a, cls), as_value(b, cls)
    if cls.is_float:
        _no_f8(cls, kind)
        name = _FLOAT_OPS.get(kind)
        if name is None:
            fail(f"`{ {'floordiv': '//', 'mod': '%'}.get(kind, kind) }` on {cls.__name__} values", rule="operator")
        return cls(_op(getattr(arith, name), x, y))
    if kind in _INT_OPS:
        return cls(_op(getattr(arith, _INT_OPS[kind]), x, y))
    if kind == "div":
        fail(f"`/` on {cls.__name__} values: use // for integer division, or convert to a float type first",
             rule="operator")
    if kind == "shr":
        return cls(_op(arith.ShRSIOp if cls.signed else arith.ShRUIOp, x, y))
    if kind == "floordiv":
        return cls(_op(arith.FloorDivSIOp if cls.signed else arith.DivUIOp, x, y))
    if kind == "mod":
        if not cls.signed:
            return cls(_op(arith.RemUIOp, x, y))
        return cls(_floor_mod(x, y, _constant(cls, 0)))
    fail(f"unsupported operation {kind}", rule="operator")


_ICMP = {"eq": ("eq", "eq"), "ne": ("ne", "ne"), "lt": ("slt", "ult"), "le": ("sle", "ule"),
         "gt": ("sgt", "ugt"), "ge": ("sge", "uge")}
_FCMP = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}


@user_op
def _compare(a, b, kind):
    from .vector import Vector
    if isinstance(a, Vector) or isinstance(b, Vector):
        return Vector._compare(a, b, kind)
    cls = _result_class(a, b)
    _int_operands("compare", cls, a, b)
    x, y = as_value(a, cls), as_value(b, cls)
    if cls.is_float:
        _no_f8(cls, "comparison")
        return Boolean(_op(arith.CmpFOp, getattr(arith.CmpFPredicate, _FCMP[kind].upper()), x, y))
    pred = _ICMP[kind][0 if cls.signed else 1]
    r = Boolean(_op(arith.CmpIOp, getattr(arith.CmpIPredicate, pred), x, y))
    if kind == "eq":
        # `thread_idx() == c`, `warp_idx() == c`, `lane_idx() == c`: the
        # branch it guards runs on one thread / warp / lane per warp
        ids = [getattr(v, "tag", None) for v in (a, b) if isinstance(v, Numeric)]
        other = b if isinstance(a, Numeric) and getattr(a, "tag", None) else a
        uniform = isinstance(other, (int, bool)) or getattr(other, "tag", None) == "uniform"
        if uniform and ids and ids[0] in ("thread", "warp", "lane", "warpgroup"):
            r.tag = ("one", ids[0])
            if ids[0] in ("warp", "warpgroup") and isinstance(other, int) and not isinstance(other, bool):
                n = 4 if ids[0] == "warpgroup" else 1
                r.tag += (("first", other * n, n),)  # which warps run it (may_run_partial)
    return r


def narrowing(b):
    """The (warps, lanes, first warp or None) narrowing a Boolean's tag promises, or None."""
    t = getattr(b, "tag", None)
    if not isinstance(t, tuple):
        return None
    kinds = t[1:] if t[0] == "one" else ()
    warps = lanes = None
    lo = hi = None
    for k in kinds:
        if isinstance(k, tuple):  # ("first", first warp, warps): where they are known, intersected
            lo = k[1] if lo is None else builtins.max(lo, k[1])
            hi = k[1] + k[2] if hi is None else builtins.min(hi, k[1] + k[2])
        elif k == "thread":
            warps, lanes = 1, 1
        elif k == "warp":
            warps = 1
        elif k == "lane":
            lanes = 1
        elif k == "warpgroup":
            warps = 4 if warps is None else builtins.min(warps, 4)
    return warps, lanes, lo if lo is not None and lo < hi else None


# --------------------------------------------------------------------------- functions

@user_op
def select(cond, a, b):
    """`a` where `cond` else `b` (no branch: both are evaluated)."""
    from .vector import Vector
    if isinstance(a, Vector) or isinstance(b, Vector) or isinstance(cond, Vector):
        return Vector._select(cond, a, b)
    cls = _result_class(a, b) if isinstance(a, Numeric) or isinstance(b, Numeric) else None
    if cls is None:
        cls = Float32 if isinstance(a, float) or isinstance(b, float) else Int32
    c = as_value(cond, Boolean)
    return cls(_op(arith.SelectOp, c, as_value(a, cls), as_value(b, cls)))


def _float_fn_op(member, *args):
    """nvtma.float_fn of f32 (or f64) Values, its one PTX instruction: `member` picks it from the dialect's
    FloatFn enum (taken when the op is built: the dialect loads lazily)."""
    return _d.FloatFnOp(member(_d.FloatFn), list(args)).result


def _tanh_afn(v):
    """llvm.tanh with the afn fast-math flag: what NVPTX selects tanh.approx.f32 for."""
    return llvm.TanhOp(v, fastmathFlags=llvm.FastmathFlags.afn).result


def _f32_only(cls, name):
    """A Float64 refused by a function PTX has only in f32: computed in f32, its Float64 result silently had
    f32 precision (dsl.exp2(Float64(x)) truncated x to f32 and back)."""
    if cls is Float64:
        fail(f"dsl.{name} of a Float64: PTX has it in f32 only, and a Float64 result would hold f32 precision; "
             f"convert explicitly (dsl.{name}(x.to(Float32)))", rule="type")


def _float_fn(name, x, fn, f64=None):
    """fn (f32 Value -> f32 Value) applied to x: a scalar or each lane of a
    vector; 16-bit floats are computed in f32 and rounded back; Float64
    with `f64` (f64 Value -> f64 Value) where there is one, else refused."""
    from .vector import Vector
    x = _float_operand(x, name)
    cls = x.dtype if isinstance(x, Vector) else type(x)
    if not cls.is_float:
        fail(f"{name} needs a float value, got {cls.__name__}", rule="type")
    _no_f8(cls, name)
    if f64 is None:
        _f32_only(cls, name)
    if isinstance(x, Vector):
        lanes = [_float_fn(name, x[i], fn, f64) for i in range(len(x))]
        return Vector.from_elements(lanes, cls)
    if cls is Float64:
        return Float64(f64(x.value))
    r = Float32(fn(convert(x, Float32).value))
    return r if cls is Float32 else convert(r, cls)


def _unary(name, op, doc, f64=False):
    """A float function of one value, built by `op` (f32 Value -> f32 Value; f64 too where `f64`, else a
    Float64 is refused)."""
    @user_op
    def f(x):
        return _float_fn(name, x, op, op if f64 else None)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _fn(kind):
    """Builds one Value from another with the dialect's float function `kind` (a FloatFn member picker)."""
    return lambda v: _float_fn_op(kind, v)


# Each is one PTX instruction: ex2, lg2, sqrt (round to nearest), rsqrt, tanh, sin and cos, the approximate
# ones within the few ulp the PTX manual gives (ex2: 2).
exp2 = _unary("exp2", _fn(lambda e: e.EX2_APPROX), "Two to the power x, of a Float32; approximate (within 2 ulp).")
log2 = _unary("log2", _fn(lambda e: e.LG2_APPROX), "The base-two logarithm of a Float32; approximate.")
sqrt = _unary("sqrt", _fn(lambda e: e.SQRT_RN),
              "The square root of a Float32 or a Float64, correctly rounded (to nearest).", f64=True)
rsqrt = _unary("rsqrt", _fn(lambda e: e.RSQRT_APPROX),
               "One over the square root of a Float32 or a Float64; approximate.", f64=True)
tanh = _unary("tanh", _tanh_afn, "The hyperbolic tangent of a Float32; approximate.")
sin = _unary("sin", _fn(lambda e: e.SIN_APPROX), "The sine of a Float32; approximate.")
cos = _unary("cos", _fn(lambda e: e.COS_APPROX), "The cosine of a Float32; approximate.")


def _float_operand(x, name):
    """x as the operand of a float function: a run-time value, or a Python
    number made a Float32 (anything else: a typed error, not Python's
    TypeError from the arithmetic on it)."""
    from .vector import Vector
    if isinstance(x, (Numeric, Vector)):
        return x
    if isinstance(x, (int, float)):
        return Float32(x)
    # (a tensor or a pointer: an AttributeError on its class's is_float)
    fail(f"dsl.{name}({x!r}): a run-time scalar or vector, or a Python number", rule="type")


def _via_f32(x, name, fn):
    """fn(x) on x's value in f32, rounded once to a 16-bit float x's type: x·log2 e rounded to bf16 put 2-3
    ulp of error into exp(bf16), log2 rounded before its ·ln 2 a second rounding into log."""
    from .vector import Vector
    cls = x.dtype if isinstance(x, Vector) else type(x)
    if cls in (Float16, BFloat16):
        return fn(x.to(Float32)).to(cls)
    _f32_only(cls, name)
    return fn(x)


@user_op
def exp(x):
    """e**x as exp2(x·log2 e), like CUDA's __expf (16-bit floats: in f32, rounded once)."""
    return _via_f32(_float_operand(x, "exp"), "exp", lambda v: exp2(v * 1.4426950408889634))


@user_op
def log(x):
    """ln x as log2(x)·ln 2 (16-bit floats: in f32, rounded once)."""
    return _via_f32(_float_operand(x, "log"), "log", lambda v: log2(v) * 0.6931471805599453)


@user_op
def fdividef(a, b):
    """a / b with div.approx.f32 (CUDA's __fdividef): 2 ulp, fast; lane by lane on vectors."""
    from .vector import Vector
    if isinstance(a, Vector) or isinstance(b, Vector):  # the f32 intrinsic took the whole vector
        n = len(a if isinstance(a, Vector) else b)
        if isinstance(a, Vector) and isinstance(b, Vector) and len(a) != len(b):
            fail(f"dsl.fdividef of {a!r} and {b!r}: lane counts must match", rule="type")
        lane = lambda x, i: x[i] if isinstance(x, Vector) else x  # noqa: E731
        return Vector.from_elements([fdividef(lane(a, i), lane(b, i)) for i in builtins.range(n)], Float32)
    a, b = convert(a, Float32) if isinstance(a, Val) else Float32(a), \
        convert(b, Float32) if isinstance(b, Val) else Float32(b)
    return Float32(_float_fn_op(lambda e: e.DIV_APPROX, a.value, b.value))


@user_op
def abs(x):  # noqa: A001
    """|x| (floats: fabs; integers: x < 0 ? -x : x)."""
    from .vector import Vector
    if not isinstance(x, Val):
        if not isinstance(x, (int, float)):
            fail(f"dsl.abs({x!r}): a run-time value or a Python number", rule="type")
        return builtins.abs(x)
    x = _float_operand(x, "abs")  # (a tensor or a pointer: refused)
    cls = x.dtype if isinstance(x, Vector) else type(x)
    if cls.is_float:
        _no_f8(cls, "abs")
        return max(x, -x)  # max.f32 / packed max: no libdevice, works on vectors
    if not cls.signed:  # (Booleans and unsigned values: x < 0 is never true, and -b is refused)
        return x
    return select(x < 0, -x, x)


def _minmax(a, b, which):
    from .vector import Vector
    if isinstance(a, Vector) or isinstance(b, Vector):
        return Vector._minmax(a, b, which)
    cls = _result_class(a, b)
    _int_operands(which, cls, a, b)
    x, y = as_value(a, cls), as_value(b, cls)
    if cls.is_float:
        _no_f8(cls, which)
        return cls(_op(arith.MinNumFOp if which == "min" else arith.MaxNumFOp, x, y))
    name = {("min", True): "MinSIOp", ("min", False): "MinUIOp", ("max", True): "MaxSIOp",
            ("max", False): "MaxUIOp"}[(which, cls.signed)]
    return cls(_op(getattr(arith, name), x, y))


@user_op
def min(a, b, *more):  # noqa: A001
    """The smallest value (floats: minNum, a NaN loses)."""
    return functools.reduce(lambda r, c: _minmax(r, c, "min"), more, _minmax(a, b, "min"))


@user_op
def max(a, b, *more):  # noqa: A001
    """The largest value (floats: maxNum, a NaN loses)."""
    return functools.reduce(lambda r, c: _minmax(r, c, "max"), more, _minmax(a, b, "max"))


@user_op
def fma(a, b, c):
    """a·b + c with one rounding (fma.rn; packed f16x2/bf16x2 on 2-lane vectors)."""
    from .vector import Vector
    if any(isinstance(v, Vector) for v in (a, b, c)):
        return Vector._fma(a, b, c)
    ref = next((v for v in (a, b, c) if isinstance(v, Numeric)), None)
    if ref is None:  # was a StopIteration escaping from here
        fail(f"dsl.fma({a!r}, {b!r}, {c!r}) has no run-time value: compute it in Python, or make one operand a "
             "run-time value (dsl.Float32(x))", rule="type")
    for i, v in enumerate((a, b, c)):
        if not isinstance(v, Numeric) and (isinstance(v, bool) or not isinstance(v, (int, float))):
            fail(f"dsl.fma operand {i}: {show(v)} is not a number or a run-time value", rule="type")
    # all three operands meet in one type (it was the first one's met with each other one alone: in
    # fma(Float16, Float64, Float32) the Float64 was rounded to a Float32)
    cls = functools.reduce(promote, (type(v) for v in (a, b, c) if isinstance(v, Numeric)))
    if not cls.is_float:
        return a * b + c
    _no_f8(cls, "fma")
    return cls(llvm.FMAOp(as_value(a, cls), as_value(b, cls), as_value(c, cls)).result)


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]
