"""Short vectors (2-16 lanes) and packed math.

A ``Vector`` is an MLIR ``vector<N x T>``: operators work lane by lane (a
Python number or scalar broadcasts), 2-lane f16/bf16 math becomes the
packed f16x2/bf16x2 instructions, and ``to`` uses the packed conversions
(e4m3x2/e5m2x2 <-> f16x2, f32x2 -> bf16x2, f32x4 -> e4m3x4).

    v = t.load_vec(8, row, col)          # 8 x bf16, one 16-byte load
    f = v.to(Float32)                    # 8 x f32
    s = (f * x).reduce("add")            # Float32
"""

from __future__ import annotations

import builtins

from .._lazy import lazy
from . import numeric as _n
from .errors import KernelBuildError, fail, show, user_op
from .numeric import Boolean, Float16, Float32, Numeric, Val, as_value, dtype

ir = lazy("nvtma.ir")
arith = lazy("nvtma.dialects.arith")
vector = lazy("nvtma.dialects.vector")
nvvm = lazy("nvtma.dialects.nvvm")
llvm = lazy("nvtma.dialects.llvm")

__all__ = ["Vector", "vector_of", "full", "zeros"]


MAX_LANES = 1024  # far past any register fragment; a vector of 2^64 lanes was a binding TypeError


def _vt(n, cls):
    if not 1 <= n <= MAX_LANES:
        fail(f"a vector of {show(n)} lanes: 1 to {MAX_LANES}", rule="vector")
    return ir.VectorType.get([n], cls.mlir_type())


def _lane_index(i, n):
    """A run-time lane index of an `n`-lane vector as Index: an integer value (a float one was truncated
    without a word); a DSL constant past the lanes is refused as a Python int is (LLVM's extract or insert of
    it is poison: the stores of what it made were deleted), and a negative one too (it does not wrap)."""
    if not _n.run_time_integer(i):
        fail(f"lane index {show(i)}: a Python int or a run-time integer", rule="index")
    k = _n.known_int(i)
    if k is not None and not 0 <= k < n:
        fail(f"lane {show(k)} of a {n}-lane vector{' (a DSL value does not wrap around)' if k < 0 else ''}",
             rule="index")
    return i if isinstance(i, _n.Index) else _n.Index(i)


class Vector(Val):
    """A vector value; ``v.dtype`` is its element type class, ``len(v)`` its lanes."""

    __slots__ = ("_dtype",)

    def __init__(self, value, dtype=None):
        """`dtype`: the lanes' class where the MLIR type cannot say it (MLIR's integers are signless: a
        vector of Uint32 is a vector<N x i32>, whose lanes would read back as Int32, and compare, divide,
        shift and convert as signed)."""
        if not isinstance(getattr(value, "type", None), ir.VectorType):  # (an int: an AttributeError on .type)
            fail(f"Vector wraps an MLIR vector value, got {show(value)} (dsl.vector_of / dsl.full make vectors)",
                 rule="type")
        self.value = value
        self._dtype = _n.declared(dtype, ir.VectorType(value.type).element_type)

    @property
    def dtype(self):
        return self._dtype or _n.from_mlir(ir.VectorType(self.value.type).element_type)

    def __len__(self):
        return ir.VectorType(self.value.type).shape[0]

    @property
    def n(self):
        return len(self)

    def __repr__(self):
        if not self._live():
            return "Vector(<of another build>)"
        t = ir.VectorType(self._value.type)
        return f"Vector<{t.shape[0]} x {(self._dtype or _n.from_mlir(t.element_type)).__name__}>"

    # ------------------------------------------------------------------ building
    @staticmethod
    @user_op
    def from_elements(values, dtype=None):
        """A vector of the given scalars (converted to `dtype` or the first's type)."""
        if isinstance(values, Val) or not hasattr(values, "__iter__"):
            fail(f"a vector of {values!r}: give a list of scalars (dsl.full(n, x) repeats one)", rule="vector")
        values = list(values)
        if not values:
            fail("a vector needs at least one element", rule="vector")
        for i, v in enumerate(values):
            if isinstance(v, Vector):  # (it reached vector.from_elements' verifier as a lane)
                fail(f"a vector's elements are scalars: element {i} is a {v!r}; take its lanes (v[0], v[1] ...) "
                     "or build the vector from scalars", rule="vector")
        cls = _n.dtype(dtype) if dtype is not None else next(
            (type(v) for v in values if isinstance(v, Numeric)), Float32 if isinstance(values[0], float) else
            Boolean if all(isinstance(v, bool) for v in values) else _n.Int32)  # ([True, False] was Int32)
        vals = [as_value(v, cls) for v in values]
        return Vector(vector.FromElementsOp(_vt(len(vals), cls), vals).result, cls)

    # ------------------------------------------------------------------ lanes
    @user_op
    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):
            try:
                lo, hi, step = i.indices(n)
            except KernelBuildError:  # (a run-time value in it: rule python-int)
                raise
            except (TypeError, ValueError):  # (a step of 0, a str: Python's own errors)
                fail(f"vector slice {i}: a non-empty contiguous slice of Python ints", rule="vector")
            if step != 1 or hi <= lo:
                fail(f"vector slice {i}: a non-empty contiguous slice", rule="vector")
            return Vector(vector.ShuffleOp(self.value, self.value, list(builtins.range(lo, hi))).result, self.dtype)
        if isinstance(i, int):
            if not -n <= i < n:
                fail(f"lane {show(i)} of a {n}-lane vector", rule="index")
            return self.dtype(vector.ExtractOp(self.value, [], [i % n]).result)
        idx = as_value(_lane_index(i, n), _n.Index)
        return self.dtype(vector.ExtractOp(self.value, [idx], [ir.ShapedType.get_dynamic_size()]).result)

    @user_op
    def insert(self, i, x):
        """A copy with lane `i` set to `x`."""
        v = as_value(x, self.dtype)
        n = len(self)
        if isinstance(i, int):
            if not -n <= i < n:  # like v[i]: not wrapped around
                fail(f"lane {show(i)} of a {n}-lane vector", rule="index")
            return Vector(vector.InsertOp(v, self.value, [], [i % n]).result, self.dtype)
        idx = as_value(_lane_index(i, n), _n.Index)
        return Vector(vector.InsertOp(v, self.value, [idx], [ir.ShapedType.get_dynamic_size()]).result, self.dtype)

    def lanes(self):
        """The lanes as a list of scalars."""
        return [self[i] for i in range(len(self))]

    def _same_kind(self, other, what):
        if not isinstance(other, Vector):
            fail(f"{what} with {show(other)}: a dsl Vector", rule="type")
        if other.dtype is not self.dtype:
            fail(f"{what} of {self.dtype.__name__} and {other.dtype.__name__} vectors", rule="type")

    @user_op
    def concat(self, other):
        self._same_kind(other, "concat")
        n, m = len(self), len(other)
        _vt(n + m, self.dtype)
        return Vector(vector.ShuffleOp(self.value, other.value, list(range(n + m))).result, self.dtype)

    @user_op
    def shuffle(self, other, mask):
        """Lanes `mask` of self ++ other (vector.shuffle); `other` None: of self alone."""
        if other is None:
            other = self
        else:
            self._same_kind(other, "shuffle")
        n = len(self) + len(other)
        if not isinstance(mask, (list, tuple)) or not mask:
            fail(f"shuffle mask {show(mask)}: a non-empty list of lane indices", rule="vector")
        for m in mask:
            if not isinstance(m, int) or isinstance(m, bool) or not 0 <= m < n:
                fail(f"shuffle mask entry {show(m)}: a lane index in 0..{n - 1}", rule="vector")
        _vt(len(mask), self.dtype)
        return Vector(vector.ShuffleOp(self.value, other.value, list(mask)).result, self.dtype)

    # ------------------------------------------------------------------ conversions
    @user_op
    def to(self, cls):
        """Lane-wise conversion; fp8 lanes go through the packed cvt instructions
        two at a time (so an even lane count is needed for fp8)."""
        cls = dtype(cls)
        src = self.dtype
        if cls is src:
            return self
        if _n.Index in (src, cls):
            # index has its own casts (trunci/extsi on vector<N x index> did not verify); floats and
            # Booleans go through Int64
            other = cls if src is _n.Index else src
            if other.is_float or other is Boolean:
                return self.to(_n.Int64).to(cls)
            op = arith.IndexCastUIOp if src is not _n.Index and not src.signed else arith.IndexCastOp
            return Vector(op(_vt(len(self), cls), self.value).result, cls)
        f8 = _n._FLOAT8
        if src in f8 or cls in f8:
            return _convert_fp8(self, src, cls)
        n = len(self)
        v = self.value
        if src.is_float and cls.is_float:
            if {src, cls} == {Float16, _n.BFloat16}:
                return self.to(Float32).to(cls)
            if src is Float32 and cls in (Float16, _n.BFloat16) and n % 2 == 0:
                return _f32_pairs_to_16(self, cls)
            op = arith.ExtFOp if cls.width > src.width else arith.TruncFOp
            return Vector(op(_vt(n, cls), v).result, cls)
        if cls is Boolean:
            return self != 0
        if src.is_float:
            return Vector(_n._fp_to_int_sat(v, src, cls, n), cls)
        elif cls.is_float:
            op = arith.SIToFPOp if src.signed and src is not Boolean else arith.UIToFPOp
        elif cls.width > src.width:
            op = arith.ExtSIOp if src.signed and src is not Boolean else arith.ExtUIOp
        elif cls.width < src.width:
            op = arith.TruncIOp
        else:  # the same bits (Int32 <-> Uint32), relabelled
            return Vector(v, cls)
        return Vector(op(_vt(n, cls), v).result, cls)

    @user_op
    def bitcast(self, cls):
        """Reinterpret the bits: a vector of `cls` lanes (a scalar when that is one lane)."""
        cls = dtype(cls)
        if _n.Index in (cls, self.dtype):  # the vector.bitcast folder asserted on index lanes
            fail(f"bitcast of {self!r} to {cls.__name__}: Index has no fixed bit width; convert with .to()",
                 rule="bitcast")
        bits = len(self) * self.dtype.width
        if bits % cls.width:
            fail(f"bitcast {len(self)} x {self.dtype.__name__} ({bits} bits) to {cls.__name__} lanes",
                 rule="bitcast")
        r = vector.BitCastOp(_vt(bits // cls.width, cls), self.value).result
        if bits // cls.width == 1:
            return cls(vector.ExtractOp(r, [], [0]).result)
        return Vector(r, cls)

    # ------------------------------------------------------------------ math
    @user_op
    def reduce(self, kind="add"):
        """The lanes combined: "add", "mul", "max", "min" (floats: maxnumf/minnumf)."""
        cls = self.dtype
        _n._no_f8(cls, "reduce")
        if not isinstance(kind, str):  # a list was an unhashable-type TypeError
            fail(f"reduce kind {show(kind)}: add, mul, max or min", rule="vector")
        if cls is Boolean and kind in ("add", "mul"):  # (an i1 sum is the lanes' parity: 3 x True added to 1)
            fail(f"reduce({kind!r}) of Boolean lanes: convert them first (v.to(Int32).reduce({kind!r})); max is "
                 "any, min is all", rule="operator")
        names = {"add": "add", "mul": "mul"}
        if kind in ("max", "min"):
            name = f"{kind}numf" if cls.is_float else f"{kind}{'s' if cls.signed else 'u'}i"
        else:
            name = names.get(kind)
        if name is None:
            fail(f"reduce kind {kind!r}: add, mul, max or min", rule="vector")
        n = len(self)
        if cls.is_float and kind in ("add", "mul") and n > 1 and n & (n - 1) == 0:
            # a halving tree (log2 n dependent steps, packed for 16-bit
            # floats): vector.reduction lowers to a chain seeded with +0.0
            v = self
            while len(v) > 1:
                h = len(v) // 2
                v = v[0:h] + v[h:] if kind == "add" else v[0:h] * v[h:]
            return v[0]
        k = getattr(vector.CombiningKind, name.upper())
        acc = None
        if cls.is_float and kind == "add":
            # the lowering seeds the chain with +0.0, which turned a sum of -0.0 lanes into +0.0; -0.0 is the
            # identity of IEEE addition
            acc = _n._constant(cls, -0.0)
        return cls(vector.ReductionOp(cls.mlir_type(), k, self.value, acc=acc).result)

    @staticmethod
    def _lift(x, like):
        """x as a vector shaped like `like` (scalars broadcast)."""
        if isinstance(x, Vector):
            return x
        cls = like.dtype
        if isinstance(x, Numeric) and type(x) is not cls:
            # (it was converted to the lanes' type: an Int32 vector times Float32(2.5) multiplied by 2, an f16
            # vector plus Float32(70000.0) added inf)
            fail(f"{x!r} with a vector of {cls.__name__} lanes: convert one of them (x.to({cls.__name__}) or "
                 f"v.to({type(x).__name__}))", rule="type")
        return Vector(vector.BroadcastOp(like.value.type, as_value(x, cls)).result, cls)

    @staticmethod
    @user_op
    def _binary(a, b, kind):
        like = a if isinstance(a, Vector) else b
        _n._int_operands(kind, like.dtype, a, b)
        x, y = Vector._lift(a, like), Vector._lift(b, like)
        _match(kind, x, y)
        cls = _lanes_class(x, y, kind)
        if cls.is_float:
            _n._no_f8(cls, kind)
            name = _n._FLOAT_OPS.get(kind)
        else:
            if kind == "mod" and cls.signed:  # Python's floor modulo, as scalars (and as // floors)
                zero = vector.BroadcastOp(x.value.type, _n._constant(cls, 0)).result
                return Vector(_n._floor_mod(x.value, y.value, zero), cls)
            name = _n._INT_OPS.get(kind) or {
                "floordiv": "FloorDivSIOp" if cls.signed else "DivUIOp",
                "mod": "RemUIOp",
                "shr": "ShRSIOp" if cls.signed else "ShRUIOp"}.get(kind)
        if name is None:
            fail(f"`{kind}` on {cls.__name__} vectors", rule="operator")
        return Vector(getattr(arith, name)(x.value, y.value).result, cls)

    @staticmethod
    @user_op
    def _compare(a, b, kind):
        like = a if isinstance(a, Vector) else b
        _n._int_operands("compare", like.dtype, a, b)
        x, y = Vector._lift(a, like), Vector._lift(b, like)
        _match(f"comparison {kind}", x, y)
        cls = _lanes_class(x, y)
        _n._no_f8(cls, f"comparison {kind}")  # arith.cmpf on f8 failed in the lowering
        if cls.is_float:
            return Vector(arith.CmpFOp(getattr(arith.CmpFPredicate, _n._FCMP[kind].upper()), x.value, y.value).result)
        pred = _n._ICMP[kind][0 if cls.signed else 1]
        return Vector(arith.CmpIOp(getattr(arith.CmpIPredicate, pred), x.value, y.value).result)

    @staticmethod
    def _select(cond, a, b):
        if isinstance(cond, Vector):
            if cond.dtype is not Boolean:  # like a scalar condition: != 0 (an i32 vector did not verify)
                cond = cond.to(Boolean)
            if not isinstance(a, Vector) and not isinstance(b, Vector):
                # scalars broadcast to the condition's lanes (their scalar select on a vector condition hit an
                # MLIR assertion that aborted Python)
                cls = _n._result_class(a, b) if isinstance(a, Numeric) or isinstance(b, Numeric) else \
                    Float32 if isinstance(a, float) or isinstance(b, float) else _n.Int32
                a, b = (Vector(vector.BroadcastOp(_vt(len(cond), cls), as_value(x, cls)).result, cls) for x in (a, b))
        like = a if isinstance(a, Vector) else b
        x, y = Vector._lift(a, like), Vector._lift(b, like)
        _match("select", x, y)
        if isinstance(cond, Vector):
            if len(cond) != len(x):
                fail(f"select of {x!r} on a {len(cond)}-lane condition: lane counts must match", rule="type")
            c = cond.value
        else:  # a scalar: one choice for all lanes (an Int32 one is != 0, as for scalars; it did not verify)
            c = as_value(cond, Boolean)
        return Vector(arith.SelectOp(c, x.value, y.value).result, _lanes_class(x, y))

    @staticmethod
    def _minmax(a, b, which):
        like = a if isinstance(a, Vector) else b
        _n._int_operands(which, like.dtype, a, b)
        x, y = Vector._lift(a, like), Vector._lift(b, like)
        # checked here: the f16/bf16 intrinsic call took mismatched operands
        # and failed only in LLVM translation, after the build
        _match(which, x, y)
        cls = _lanes_class(x, y)
        _n._no_f8(cls, which)
        if cls in (Float16, _n.BFloat16):
            # llvm.minnum on the vector: min.f16x2 / min.bf16x2 (arith's
            # vector minnumf reaches NVPTX as f32 math, one lane at a time)
            op = llvm.MinNumOp if which == "min" else llvm.MaxNumOp
            return Vector(op(x.value, y.value).result, cls)
        if cls.is_float:
            op = arith.MinNumFOp if which == "min" else arith.MaxNumFOp
        else:
            op = getattr(arith, {("min", True): "MinSIOp", ("min", False): "MinUIOp", ("max", True): "MaxSIOp",
                                 ("max", False): "MaxUIOp"}[(which, cls.signed)])
        return Vector(op(x.value, y.value).result, cls)

    @staticmethod
    def _fma(a, b, c):
        like = next(v for v in (a, b, c) if isinstance(v, Vector))
        x, y, z = (Vector._lift(v, like) for v in (a, b, c))
        _match("fma", x, y)
        _match("fma", x, z)
        if not like.dtype.is_float:
            return x * y + z
        _n._no_f8(like.dtype, "fma")
        return Vector(vector.FMAOp(x.value, y.value, z.value).result)

    # the operators of Numeric, lane-wise
    __add__ = Numeric.__add__
    __radd__ = Numeric.__radd__
    __sub__ = Numeric.__sub__
    __rsub__ = Numeric.__rsub__
    __mul__ = Numeric.__mul__
    __rmul__ = Numeric.__rmul__
    __truediv__ = Numeric.__truediv__
    __rtruediv__ = Numeric.__rtruediv__
    __floordiv__ = Numeric.__floordiv__
    __rfloordiv__ = Numeric.__rfloordiv__
    __mod__ = Numeric.__mod__
    __rmod__ = Numeric.__rmod__
    __divmod__ = Numeric.__divmod__
    __rdivmod__ = Numeric.__rdivmod__
    __and__ = Numeric.__and__
    __rand__ = Numeric.__rand__
    __or__ = Numeric.__or__
    __ror__ = Numeric.__ror__
    __xor__ = Numeric.__xor__
    __rxor__ = Numeric.__rxor__
    __lshift__ = Numeric.__lshift__
    __rlshift__ = Numeric.__rlshift__
    __rshift__ = Numeric.__rshift__
    __rrshift__ = Numeric.__rrshift__
    __pow__ = __rpow__ = Numeric.__pow__
    __round__ = Numeric.__round__
    __lt__ = Numeric.__lt__
    __le__ = Numeric.__le__
    __gt__ = Numeric.__gt__
    __ge__ = Numeric.__ge__
    __eq__ = Numeric.__eq__
    __ne__ = Numeric.__ne__
    __hash__ = Val.__hash__

    @user_op
    def __neg__(self):
        _n._no_f8(self.dtype, "negation")
        if self.dtype.is_float:
            return Vector(arith.NegFOp(self.value).result)
        return 0 - self

    def __pos__(self):
        return self

    @user_op
    def __invert__(self):
        cls = self.dtype
        if cls.is_float:
            fail(f"~ on a vector of {cls.__name__}", rule="operator")
        return self ^ (1 if cls is Boolean else -1 if cls.signed else (1 << cls.width) - 1)

    def __abs__(self):
        return _n.abs(self)


def _match(what, x, y):
    """Two vector operands of one lane-wise operation have one type."""
    if x.value.type != y.value.type:
        fail(f"{what} of {x!r} and {y!r}: lane counts and types must match", rule="type")


def _lanes_class(x, y, kind=None):
    """The lanes' class of a lane-wise op on vectors x and y of one MLIR type: signed and unsigned lanes of
    one width meet as unsigned, as scalars do; a shift keeps its left operand's. (It was x's: an Int32
    vector < a Uint32 one compared signed, the Uint32 one > the Int32 one unsigned.)"""
    if x.dtype is y.dtype or kind in ("shl", "shr"):
        return x.dtype
    return _n.promote(x.dtype, y.dtype)


def _convert_fp8(v: Vector, src, cls):
    """Packed fp8 conversions, two lanes per cvt; other lanes through f16/f32."""
    n = len(v)
    if n % 2:
        fail(f"fp8 vector conversions work on pairs of lanes; this vector has {n}", rule="fp8-convert")
    i8x2 = ir.VectorType.get([2], ir.IntegerType.get_signless(8))
    if src in _n._FLOAT8:  # fp8 -> f16 pairs -> cls
        raw = vector.BitCastOp(ir.VectorType.get([n], ir.IntegerType.get_signless(8)), v.value).result
        halves = []
        for j in range(0, n, 2):
            pair = vector.ShuffleOp(raw, raw, [j, j + 1]).result
            halves.append(Vector(nvvm.ConvertF8x2ToF16x2Op(_vt(2, Float16), pair, ir.TypeAttr.get(
                src.mlir_type())).result))
        h = _concat(halves)
        return h.to(cls) if cls is not Float16 else h
    # -> fp8: from f32 pairs (cvt.rn.satfinite.e4m3x2.f32) or f16 pairs
    dst_t = ir.TypeAttr.get(cls.mlir_type())
    sat = nvvm.SaturationMode.SATFINITE
    if src is not Float16:
        f = Vector.from_elements([Float32(_n.f64_to_f32_odd(x.value)) for x in v.lanes()], Float32) \
            if src is _n.Float64 else v.to(Float32)
        parts = []
        for j in range(0, n, 2):
            # the i16's upper byte comes from `a`: lane j+1 goes in a, lane j in b
            parts.append(Vector(nvvm.ConvertF32x2ToF8x2Op(i8x2, f[j + 1].value, f[j].value, dst_t,
                                                          rnd=nvvm.FPRoundingMode.RN, sat=sat).result))
    else:
        parts = []
        for j in range(0, n, 2):
            parts.append(Vector(nvvm.ConvertF16x2ToF8x2Op(i8x2, v[j:j + 2].value, dst_t).result))
    raw = _concat(parts)
    return Vector(vector.BitCastOp(_vt(n, cls), raw.value).result, cls)


def _f32_pairs_to_16(v: Vector, cls):
    """f32 lanes -> f16/bf16 two at a time (cvt.rn.f16x2.f32 /
    cvt.rn.bf16x2.f32): LLVM turns a vector fptrunc into one cvt per lane."""
    op = nvvm.ConvertF32x2ToBF16x2Op if cls is _n.BFloat16 else nvvm.ConvertF32x2ToF16x2Op
    parts = []
    for j in range(0, len(v), 2):
        # the cvt's first source (src_hi) fills the upper half: lane j + 1
        parts.append(Vector(op(_vt(2, cls), v[j + 1].value, v[j].value, rnd=nvvm.FPRoundingMode.RN).result))
    return _concat(parts)


def _concat(parts):
    """The parts end to end, joined pairwise: a chain of concats of growing width is quadratic in IR (16 s
    to compile 1024 lanes) and, for the fp8 conversions' 2-byte pieces, costs LLVM prmt/cvt/shr shuffles
    a tree of joins does not (32-512 fewer PTX instructions in each GEMM kernel that quantizes x)."""
    while len(parts) > 1:
        parts = [parts[i].concat(parts[i + 1]) if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


@user_op
def vector_of(values, dtype=None):
    """A vector of the given scalars: ``vector_of([a, b], Float16)``."""
    return Vector.from_elements(values, dtype)


@user_op
def full(n, value, dtype=None):
    """An n-lane vector with every lane `value`; `dtype` None: a DSL value's own type (an Int32 was made
    Float32 lanes), Float32 for a Python number."""
    cls = _n.dtype(dtype if dtype is not None else type(value) if isinstance(value, Numeric) else Float32)
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_LANES:
        fail(f"a vector of {show(n)} lanes: a positive Python int up to {MAX_LANES}", rule="vector")
    return Vector(vector.BroadcastOp(_vt(n, cls), as_value(value, cls)).result, cls)


def zeros(n, dtype=Float32):
    cls = _n.dtype(dtype)
    return full(n, 0.0 if cls.is_float else 0, cls)
