"""Blackwell (sm_100a) tensor cores: tcgen05 and Tensor Memory, with TIRx's names.

Compiled, not run: no sm_100 GPU has run any of this (the checks are PTX,
ptxas/nvJitLink and SASS ones; docs/dsl.md, "Blackwell").

    tmem = lang.TMEMPool(cols=128)                        # tcgen05.alloc by warp 0, address published
    acc = tmem.alloc_tcgen05_mma_D((128, 128), "float32", M=128, cta_group=1)
    idesc = tcgen05.encode_instr_descriptor(d_dtype="f32", a_dtype="bf16", b_dtype="bf16", M=128, N=128)
    a, b = tcgen05.SmemDescriptor(sA), tcgen05.SmemDescriptor(sB)   # K-major tiles a TMA atom filled
    with lang.WarpRole(0), dsl.if_(dsl.elect_sync()):
        for k in range(K // 16):
            tcgen05.mma(acc, a.k_block(k), b.k_block(k), idesc, accumulate=k > 0)
        done.arrive(0)                                    # lang.TCGen05Bar: tcgen05.commit
    done.wait(0, 0)
    tcgen05.fence_after_thread_sync()
    row = acc.load(0, 16)                                 # tcgen05.ld: this thread's row, 16 columns

Every instruction is an upstream ``nvvm.tcgen05.*`` op; the helpers check
what LLVM 22 would otherwise abort on (the kernel's arch, the PTX version of
block16/block32 scaling) and raise KernelBuildError instead. Descriptors are
pure functions returning ints (``descriptor_bits``, ``instr_descriptor_bits``,
``instr_descriptor_block_scaled_bits``: PTX ISA 9.7.16.4.1-2, Tables 40,
42-44) and run-time versions (``encode_*``) that build the value in a kernel.
"""

from __future__ import annotations

from . import dsl
from ._lazy import lazy
from .dsl import types
from .dsl.errors import fail, python_int as _is_int, show, user_op
from .dsl.numeric import Boolean, Int16, Int32, Numeric, Uint8, Uint32, Uint64, Val, as_value
from .dsl.tensor import SWIZZLE_BYTES

ir = lazy("nvtma.ir")
llvm = lazy("nvtma.dialects.llvm")
nvvm = lazy("nvtma.dialects.nvvm")

__all__ = ["ARCHES", "SWIZZLE_MODE", "TmemLayout", "descriptor_bits", "instr_descriptor_bits",
           "instr_descriptor_block_scaled_bits", "infer_swizzle", "encode_matrix_descriptor",
           "encode_instr_descriptor", "encode_instr_descriptor_block_scaled", "runtime_instr_desc",
           "InstrDescriptor", "SmemDescriptor", "get_tmem_addr", "sm100_2sm_leader_smem_addr", "alloc", "dealloc",
           "relinquish_alloc_permit", "mma", "commit", "ld", "st", "cp", "shift", "fence_before_thread_sync",
           "fence_after_thread_sync", "wait_ld", "wait_st", "TmemBuffer", "tmem_layout", "require_arch"]

# The chips LLVM 22's NVVM dialect and NVPTX backend take every tcgen05 op for
# that nvJitLink/ptxas (CUDA 13) also assemble: sm_101a was renamed sm_110a,
# whose PTX 9.0 tcgen05.alloc NVVM refuses; sm_103a/sm_100f likewise.
ARCHES = ("sm_100a",)

TMEM_COLUMNS = 512
TMEM_LANES = 128

# ----------------------------------------------------------------------------- arch

def require_arch(what):
    """Fails unless the kernel being built targets a tcgen05 chip: MLIR
    would only reject the op at compile time, far from the user's line."""
    k = dsl.current_kernel().kernel
    if k.arch not in ARCHES:
        fail(f"{what} is a tcgen05 (Blackwell) instruction: the kernel must target sm_100a, this one targets "
             f"{k.arch} (@dsl.kernel(arch='sm_100a'))", rule="arch")
    return k


def _cta_group(cta_group, what):
    """The NVVM attribute of `cta_group`, checked against the kernel's
    other tcgen05 ops: ptxas refuses a kernel that mixes .cta_group::1 and
    .cta_group::2."""
    if cta_group not in (1, 2):
        fail(f"cta_group {cta_group!r}: 1 or 2 (CtaGroup.ONE / TWO)", rule="cta-group")
    seen = dsl.current_kernel().scratch.setdefault("tcgen05.cta_group", cta_group)
    if seen != cta_group:
        fail(f"{what} with cta_group {cta_group}, but this kernel's other tcgen05 ops use cta_group {seen}: "
             "ptxas refuses a kernel that mixes .cta_group::1 and .cta_group::2", rule="cta-group")
    return nvvm.CTAGroupKind.CTA_1 if cta_group == 1 else nvvm.CTAGroupKind.CTA_2


def _whole_warp(what):
    """Warp-collective (.sync.aligned) instructions: every lane of the calling warps."""
    from .dsl.kernel import active_threads
    warps, lanes = active_threads()
    if lanes != 32:
        fail(f"{what} is executed by whole warps (.sync.aligned), but this code runs on {lanes} lane(s) of each "
             "warp: call it outside elect/lane branches", rule="warp-collective")
    return warps


def _one_warp(what):
    if _whole_warp(what) != 1:
        fail(f"{what} is executed by exactly one warp, but several run this code: call it inside "
             "lang.WarpRole(w)", rule="warp-collective")


# ----------------------------------------------------------------------------- shared-memory descriptor

# PTX ISA 9.7.16.4.1, Table 40: the 3-bit swizzling mode at bits 61-63 (not
# wgmma's 2-bit field at 62-63), keyed by the TMA swizzle that lays the data out
SWIZZLE_MODE = {"none": 0, "swizzle_128b_atom_32b": 1, "swizzle_128b": 2, "swizzle_64b": 4, "swizzle_32b": 6}
_VERSION = 1 << 46  # bits 46-48: "fixed constant value of 0b001"


def _encode_field(name, v):
    if not isinstance(v, int) or isinstance(v, bool) or v % 16 or not 0 <= v < 1 << 18:
        fail(f"matrix descriptor {name} {v!r}: a multiple of 16 below {1 << 18}", rule="descriptor")
    return (v & 0x3FFFF) >> 4  # matrix-descriptor-encode(x)


def descriptor_bits(start_address: int, leading_byte_offset: int, stride_byte_offset: int, swizzle="none",
                    base_offset: int = 0, lbo_mode: int = 0) -> int:
    """The 64-bit tcgen05 shared-memory descriptor as a Python int (PTX ISA
    9.7.16.4.1, Table 40): bits 0-13 start address >> 4, 16-29 leading
    dimension byte offset >> 4, 32-45 stride dimension byte offset >> 4,
    46-48 the constant 0b001, 49-51 base offset, 52 leading-dimension mode
    (1 = absolute address, sm_103a only), 61-63 swizzle mode."""
    if not isinstance(swizzle, str) or swizzle not in SWIZZLE_MODE:
        fail(f"swizzle {show(swizzle)}: one of {', '.join(SWIZZLE_MODE)}", rule="descriptor")
    if not _is_int(base_offset) or not 0 <= base_offset < 8:
        fail(f"base offset {show(base_offset)}: 0-7", rule="descriptor")
    if not _is_int(lbo_mode) or lbo_mode not in (0, 1):
        fail(f"leading dimension mode {show(lbo_mode)}: 0 (relative) or 1 (absolute)", rule="descriptor")
    return (_encode_field("start address", start_address) | _encode_field("leading byte offset", leading_byte_offset)
            << 16 | _encode_field("stride byte offset", stride_byte_offset) << 32 | _VERSION | base_offset << 49
            | lbo_mode << 52 | SWIZZLE_MODE[swizzle] << 61)


def infer_swizzle(row_elems, dtype) -> str:
    """The widest TMA/UMMA swizzle whose span divides a K-major row of
    `row_elems` elements (what SMEMPool.alloc_tcgen05_mma_AB picks)."""
    if not _is_int(row_elems) or row_elems < 1:
        fail(f"infer_swizzle row_elems {show(row_elems)}: a positive int (the elements of a K-major row)",
             rule="descriptor")
    width = _bits(dtype)
    row = row_elems * width // 8
    for span, sw in ((128, "swizzle_128b"), (64, "swizzle_64b"), (32, "swizzle_32b")):
        if row % span == 0:
            return sw
    return "none"


def _bits(dtype):
    name = _type_name(dtype)
    return _TYPE_BITS[name]


@user_op
def encode_matrix_descriptor(addr, leading_byte_offset, stride_byte_offset, swizzle="none", base_offset=0):
    """The descriptor of a matrix at shared address `addr` (a !llvm.ptr<3>
    value, a shared buffer, or a 32-bit shared address) as a run-time Uint64,
    built by upstream nvvm.tcgen05.mma_smem_desc. The offsets are Python ints
    (checked) or run-time values (trusted)."""
    require_arch("tcgen05.encode_matrix_descriptor")
    if not isinstance(swizzle, str) or swizzle not in SWIZZLE_MODE:
        fail(f"swizzle {show(swizzle)}: one of {', '.join(SWIZZLE_MODE)}", rule="descriptor")
    for name, v in (("leading byte offset", leading_byte_offset), ("stride byte offset", stride_byte_offset)):
        if isinstance(v, int):
            _encode_field(name, v)
    if not isinstance(base_offset, int) or not 0 <= base_offset < 8:
        fail(f"base offset {base_offset!r}: 0-7", rule="descriptor")
    a = _shared_u32(addr)

    def enc(v):  # matrix-descriptor-encode; the op keeps the low 14 bits
        v = Uint32(v) if isinstance(v, int) else v.to(Uint32)
        return as_value(v >> 4)
    d = nvvm.tcgen05_mma_smem_desc(ir.IntegerType.get_signless(64), enc(a & 0x3FFFF), enc(leading_byte_offset),
                                   enc(stride_byte_offset), as_value(Uint8(base_offset)), as_value(Boolean(False)),
                                   as_value(Uint8(SWIZZLE_MODE[swizzle])))
    # LLVM 22's op leaves bits 46-48 zero; Table 40 fixes them to 0b001
    return Uint64(d) | Uint64(_VERSION)


def _shared_u32(addr):
    """A 32-bit shared-memory address from a pointer, shared buffer or integer value."""
    if isinstance(addr, dsl.TensorValue):
        from .cpasync import address_of
        addr = address_of(addr)  # the buffer's physical start
    if isinstance(addr, Val) and not isinstance(addr, Numeric):
        return Uint32(llvm.PtrToIntOp(ir.IntegerType.get_signless(32), addr.value).result)
    if isinstance(addr, Numeric):
        return addr.to(Uint32)
    if isinstance(addr, int):
        return Uint32(addr)
    fail(f"a shared-memory address: a pointer, a shared buffer or a 32-bit value, got {type(addr).__name__}",
         rule="type")


# ----------------------------------------------------------------------------- instruction descriptor

# element types by their PTX names, with the aliases the DSL and torch use
_ALIASES = {"float16": "f16", "half": "f16", "bfloat16": "bf16", "float32": "f32", "float": "f32",
            "f8E4M3FN": "e4m3", "float8_e4m3fn": "e4m3", "Float8E4M3FN": "e4m3", "f8E5M2": "e5m2",
            "float8_e5m2": "e5m2", "Float8E5M2": "e5m2", "Float16": "f16", "BFloat16": "bf16", "Float32": "f32",
            "int8": "s8", "i8": "s8", "Int8": "s8", "uint8": "u8", "ui8": "u8", "Uint8": "u8", "int32": "s32",
            "i32": "s32", "Int32": "s32", "float4_e2m1fn": "e2m1", "float6_e2m3fn": "e2m3",
            "float6_e3m2fn": "e3m2", "float8_e8m0fnu": "ue8m0"}
_TYPE_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "s32": 32, "e4m3": 8, "e5m2": 8, "e2m3": 6, "e3m2": 6,
              "e2m1": 4, "s8": 8, "u8": 8, "ue8m0": 8, "ue4m3": 8}


def _type_name(t):
    if isinstance(t, type) and issubclass(t, Numeric):
        t = t.__name__
    name = _ALIASES.get(t, t) if isinstance(t, str) else None
    if name not in _TYPE_BITS:
        fail(f"element type {t!r}: one of {', '.join(_TYPE_BITS)}", rule="dtype")
    return name


# PTX ISA 9.7.16.4.2, Table 42: kind -> (A/B type codes at bits 7-9 / 10-12,
# D type codes at bits 4-5, K of one dense instruction)
_DENSE = {
    "tf32": ({"tf32": 2}, {"f32": 1}, 8),
    "f16": ({"f16": 0, "bf16": 1}, {"f16": 0, "f32": 1}, 16),
    "f8f6f4": ({"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5}, {"f16": 0, "f32": 1}, 32),
    "i8": ({"u8": 0, "s8": 1}, {"s32": 2}, 32),
}
_NARROW = ("e2m3", "e3m2", "e2m1")  # no MN-major (transposed) operands


def _kind_of(a, b):
    for kind, (codes, _, _) in _DENSE.items():
        if a in codes and b in codes:
            if kind == "f16" and a != b:
                fail(f"kind::f16 multiplies f16 by f16 or bf16 by bf16, not {a} by {b}", rule="tcgen05")
            return kind
    fail(f"operand types {a} and {b} share no tcgen05.mma kind (f16/bf16, tf32, the fp8/fp6/fp4 family, s8/u8)",
         rule="tcgen05")


def _check_mn(M, N, cta_group, ms, what):
    if not _is_int(cta_group) or cta_group not in (1, 2):
        fail(f"n_cta_groups {cta_group!r}: 1 or 2", rule="cta-group")
    step = 8 * cta_group
    if not _is_int(M) or M not in ms[cta_group]:
        fail(f"{what} with cta_group {cta_group}: M = {M!r}, one of {ms[cta_group]} (PTX ISA Table 39: M is the "
             "instruction's M, both CTAs' rows with cta_group 2)", rule="shape")
    if not isinstance(N, int) or isinstance(N, bool) or N % step or not step <= N <= 256:
        fail(f"{what} with cta_group {cta_group}: N = {N!r}, a multiple of {step} in [{step}, 256]", rule="shape")
    if what == "kind::i8":
        # PTX ISA 9.7.16.2.1, Table 39, .kind::i8: cta_group::1 "N = {8, 16, 24, 32, 48, ... 256} steps of 16
        # after N > 32"; cta_group::2 "N = {32, 64, ... 256} steps of 32" (the idesc's N >> 3 field would
        # take the others, and the hardware would read an undefined shape)
        ok = (N <= 32 or N % 16 == 0) if cta_group == 1 else N % 32 == 0
        if not ok:
            rule_ = "8, 16, 24, 32, then steps of 16 to 256" if cta_group == 1 else "a multiple of 32 in [32, 256]"
            fail(f"kind::i8 with cta_group {cta_group}: N = {N}, {rule_} (PTX ISA Table 39)", rule="shape")


def instr_descriptor_bits(d_dtype, a_dtype, b_dtype, M, N, K=None, trans_a=False, trans_b=False, n_cta_groups=1,
                          neg_a=False, neg_b=False, sat_d=False, is_sparse=False, sparse_id2=0, max_shift=0) -> int:
    """The 32-bit instruction descriptor of tcgen05.mma kind::f16 / tf32 /
    f8f6f4 / i8 as a Python int (PTX ISA 9.7.16.4.2, Table 42): bits 0-1
    sparsity selector, 2 sparsity, 3 saturate, 4-5 D type, 7-9 A type, 10-12
    B type, 13/14 negate A/B, 15/16 transpose A/B (MN-major), 17-22 N >> 3,
    24-28 M >> 4, 30-31 .ws maximum shift. `K` (optional) is checked against
    the kind's K (doubled when sparse)."""
    _check_flags(trans_a=trans_a, trans_b=trans_b, neg_a=neg_a, neg_b=neg_b, sat_d=sat_d, is_sparse=is_sparse)
    a, b, d = _type_name(a_dtype), _type_name(b_dtype), _type_name(d_dtype)
    kind = _kind_of(a, b)
    codes, dcodes, k = _DENSE[kind]
    if d not in dcodes:
        fail(f"kind::{kind} accumulates into {' or '.join(dcodes)}, not {d}", rule="tcgen05")
    k *= 2 if is_sparse else 1
    if K is not None and K != k:
        fail(f"kind::{kind}{' sparse' if is_sparse else ''} has K = {k}, got K = {K}", rule="shape")
    _check_mn(M, N, n_cta_groups, {1: (64, 128), 2: (128, 256)}, f"kind::{kind}")
    if kind == "i8" and (neg_a or neg_b):
        fail("kind::i8 cannot negate A or B", rule="tcgen05")
    if sat_d and kind != "i8":
        fail(f"saturate is for kind::i8, not kind::{kind}", rule="tcgen05")
    if (trans_a and a in _NARROW) or (trans_b and b in _NARROW):
        fail("fp6/fp4 operands are K-major only (no transpose)", rule="tcgen05")
    if not _is_int(sparse_id2) or not 0 <= sparse_id2 < 4 or (sparse_id2 and not is_sparse):
        fail(f"sparsity selector {show(sparse_id2)}: 0-3, with is_sparse", rule="tcgen05")
    if not _is_int(max_shift) or max_shift not in (0, 1, 2, 3):
        fail(f"max_shift {show(max_shift)}: 0 (none), 1 (8), 2 (16), 3 (32)", rule="tcgen05")
    return (sparse_id2 | bool(is_sparse) << 2 | bool(sat_d) << 3 | dcodes[d] << 4 | codes[a] << 7 | codes[b] << 10
            | bool(neg_a) << 13 | bool(neg_b) << 14 | bool(trans_a) << 15 | bool(trans_b) << 16 | (N >> 3) << 17
            | (M >> 4) << 24 | max_shift << 30)


def _check_flags(**flags):
    """The descriptor's one-bit fields: bools (0 or 1 taken); anything else was taken for its truth value."""
    for name, v in flags.items():
        if not isinstance(v, int) or v not in (0, 1):
            fail(f"{name}={show(v)}: True or False", rule="tcgen05")


# PTX ISA 9.7.16.4.2, Tables 43-44: kind -> A/B codes, K of one dense instruction
_SCALED = {
    "mxf8f6f4": ({"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5}, 32),
    "mxf4": ({"e2m1": 1}, 64),
    "mxf4nvf4": ({"e2m1": 1}, 64),
}
_SCALE_TYPE = {"ue8m0": 1, "ue4m3": 0}  # bit 23


def _scaled_kind(a, b, sf, K, kind):
    if kind is None:
        # e2m1 x e2m1 at K = 64/96 or with ue4m3 scales is the mxf4 family
        fp4 = a == b == "e2m1" and (K in (64, 96) or sf == "ue4m3")
        kind = ("mxf4nvf4" if sf == "ue4m3" else "mxf4") if fp4 else "mxf8f6f4"
    if not isinstance(kind, str) or kind not in _SCALED:
        fail(f"block-scaled kind {show(kind)}: one of {', '.join(_SCALED)}", rule="tcgen05")
    codes = _SCALED[kind][0]
    if a not in codes or b not in codes:
        fail(f"kind::{kind} takes {' / '.join(codes)} operands, got {a} and {b}", rule="tcgen05")
    if sf not in _SCALE_TYPE or (sf == "ue4m3" and kind != "mxf4nvf4"):
        fail(f"kind::{kind} scale factors: {'ue8m0 or ue4m3' if kind == 'mxf4nvf4' else 'ue8m0'}, got {sf}",
             rule="tcgen05")
    return kind


def instr_descriptor_block_scaled_bits(d_dtype, a_dtype, b_dtype, sfa_dtype, sfb_dtype, M, N, K=None,
                                       trans_a=False, trans_b=False, n_cta_groups=1, neg_a=False, neg_b=False,
                                       is_sparse=False, sfa_id=0, sfb_id=0, kind=None) -> int:
    """The 32-bit instruction descriptor of block-scaled tcgen05.mma
    (kind::mxf8f6f4, mxf4, mxf4nvf4) as a Python int (PTX ISA 9.7.16.4.2,
    Tables 43-44): bit 2 sparsity, 4-5 B scale-factor data ID, 7-9 A type,
    10-12 (mxf4: 10-11) B type, 13/14 negate, 15/16 transpose, 17-22 N >> 3,
    23 scale type (1 = ue8m0, 0 = ue4m3), 27-28 M >> 7, 29-30 A scale-factor
    data ID, 31 K = 96 (mxf4 family, dense)."""
    _check_flags(trans_a=trans_a, trans_b=trans_b, neg_a=neg_a, neg_b=neg_b, is_sparse=is_sparse)
    a, b, d = _type_name(a_dtype), _type_name(b_dtype), _type_name(d_dtype)
    sfa, sfb = _type_name(sfa_dtype), _type_name(sfb_dtype)
    if sfa != sfb:
        fail(f"one scale type serves A and B (bit 23), got {sfa} and {sfb}", rule="tcgen05")
    kind = _scaled_kind(a, b, sfa, K, kind)
    codes, k = _SCALED[kind]
    if d != "f32":
        fail(f"kind::{kind} accumulates into f32, not {d}", rule="tcgen05")
    fp4 = kind != "mxf8f6f4"
    ks = (k, 96) if fp4 and not is_sparse else (2 * k,) if is_sparse else (k,)
    if K is not None and K not in ks:
        fail(f"kind::{kind}{' sparse' if is_sparse else ''} has K = {' or '.join(map(str, ks))}, got K = {K}",
             rule="shape")
    if fp4 and (trans_a or trans_b):
        fail(f"kind::{kind} operands are K-major only (no transpose)", rule="tcgen05")
    if (trans_a and a in _NARROW) or (trans_b and b in _NARROW):
        fail("fp6/fp4 operands are K-major only (no transpose)", rule="tcgen05")
    _check_mn(M, N, n_cta_groups, {1: (128,), 2: (128, 256)}, f"kind::{kind}")
    # PTX ISA 9.7.16.2.1, Table 39: the dense K1 = 96 shape of mxf4/mxf4nvf4 is "256xNxK1" with cta_group::2
    # only, and the sparse block-scaled shapes with cta_group::2 are "256xNxK" only
    if K == 96 and (n_cta_groups, M) != (2, 256):
        fail(f"kind::{kind} with K = 96 is a cta_group 2, M = 256 shape only (PTX ISA Table 39: 256xNxK1), "
             f"got cta_group {n_cta_groups}, M = {M}", rule="shape")
    if is_sparse and n_cta_groups == 2 and M != 256:
        fail(f"sparse kind::{kind} with cta_group 2 has M = 256 only (PTX ISA Table 39), got M = {M}", rule="shape")
    ids = (0, 2) if fp4 else (0, 1, 2, 3)
    for name, v in (("sfa_id", sfa_id), ("sfb_id", sfb_id)):
        if not _is_int(v) or v not in ids:
            fail(f"{name} {v!r}: one of {ids} for kind::{kind}", rule="tcgen05")
    return (bool(is_sparse) << 2 | sfb_id << 4 | codes[a] << 7 | codes[b] << 10 | bool(neg_a) << 13
            | bool(neg_b) << 14 | bool(trans_a) << 15 | bool(trans_b) << 16 | (N >> 3) << 17 | _SCALE_TYPE[sfa] << 23
            | (M >> 7) << 27 | sfa_id << 29 | (K == 96) << 31)


class InstrDescriptor(Val):
    """A tcgen05.mma instruction descriptor (an i32 value) that remembers
    what it encodes (kind, M, N, K, cta_group, block scaling, operand types):
    tcgen05.mma checks its operands against it. ``bits`` is the int when it
    is a constant; ``u32()`` the value for arithmetic."""

    def __init__(self, value, bits=None, *, kind, M, N, K, cta_group, scaled, ab=None):
        self.value = value
        self.__dict__.update(bits=bits, kind=kind, M=M, N=N, K=K, cta_group=cta_group, scaled=scaled, ab=ab)

    def u32(self):
        return Uint32(self.value)

    def replace(self, value):
        """The same descriptor facts over another i32 value (run-time fields)."""
        out = InstrDescriptor(as_value(value, Uint32), None, **{k: getattr(self, k) for k in self._FACTS})
        return out

    _FACTS = ("kind", "M", "N", "K", "cta_group", "scaled", "ab")


@user_op
def encode_instr_descriptor(*, d_dtype, a_dtype, b_dtype, M, N, K=None, trans_a=False, trans_b=False,
                            n_cta_groups=1, neg_a=False, neg_b=False, sat_d=False, is_sparse=False):
    """TIRx's tcgen05.encode_instr_descriptor, returning the value (an
    InstrDescriptor, a Uint32 constant) instead of writing through a pointer."""
    require_arch("tcgen05.encode_instr_descriptor")
    bits = instr_descriptor_bits(d_dtype, a_dtype, b_dtype, M, N, K, trans_a, trans_b, n_cta_groups, neg_a, neg_b,
                                 sat_d, is_sparse)
    a, b = _type_name(a_dtype), _type_name(b_dtype)
    kind = _kind_of(a, b)
    return InstrDescriptor(as_value(Uint32(bits)), bits, kind=kind, M=M, N=N,
                           K=_DENSE[kind][2] * (2 if is_sparse else 1), cta_group=n_cta_groups, scaled=False,
                           ab=(a, b))


@user_op
def encode_instr_descriptor_block_scaled(*, d_dtype, a_dtype, b_dtype, sfa_dtype, sfb_dtype, M, N, K=None,
                                         trans_a=False, trans_b=False, n_cta_groups=1, neg_a=False, neg_b=False,
                                         is_sparse=False, sfa_id=0, sfb_id=0, kind=None):
    """TIRx's tcgen05.encode_instr_descriptor_block_scaled, returning the value."""
    require_arch("tcgen05.encode_instr_descriptor_block_scaled")
    bits = instr_descriptor_block_scaled_bits(d_dtype, a_dtype, b_dtype, sfa_dtype, sfb_dtype, M, N, K, trans_a,
                                              trans_b, n_cta_groups, neg_a, neg_b, is_sparse, sfa_id, sfb_id, kind)
    a, b, sf = _type_name(a_dtype), _type_name(b_dtype), _type_name(sfa_dtype)
    kind = _scaled_kind(a, b, sf, K, kind)
    return InstrDescriptor(as_value(Uint32(bits)), bits, kind=kind, M=M, N=N, K=K or _SCALED[kind][1],
                           cta_group=n_cta_groups, scaled=sf, ab=(a, b))


@user_op
def runtime_instr_desc(idesc, sfa_id=None, sfb_id=None):
    """`idesc` with run-time scale-factor data IDs (bits 29-30 and 4-5):
    the byte of each TMEM scale column an MMA reads."""
    if not isinstance(idesc, InstrDescriptor) or not idesc.scaled:
        fail("runtime_instr_desc takes a block-scaled InstrDescriptor", rule="tcgen05")
    v = idesc.u32()
    for shift_, sid in ((29, sfa_id), (4, sfb_id)):
        if sid is None:
            continue
        if isinstance(sid, int) and sid not in ((0, 2) if idesc.kind != "mxf8f6f4" else (0, 1, 2, 3)):
            fail(f"scale-factor data ID {sid} for kind::{idesc.kind}", rule="tcgen05")
        sid = Uint32(sid) if isinstance(sid, int) else sid.to(Uint32)
        v = (v & (~(3 << shift_) & 0xFFFFFFFF)) | ((sid & 3) << shift_)
    return idesc.replace(v)


# ----------------------------------------------------------------------------- operands in shared memory

class SmemDescriptor:
    """The tcgen05 descriptors of a K-major shared tile [rows, K] filled by a
    TMA atom (its swizzle and box layout recorded on the buffer), like
    wgmma.SmemDescriptor but with the tcgen05 encoding (Table 40).
    ``k_block(k)`` is the descriptor of the k-th 256-bit slice of K (one
    MMA's K: 16 f16/bf16, 8 tf32, 32 fp8)."""

    def __init__(self, tile, *, swizzle=None):
        require_arch("tcgen05.SmemDescriptor")
        if not isinstance(tile, dsl.TensorValue) or tile.space != "shared":
            fail("tcgen05.SmemDescriptor takes a shared-memory tile", rule="descriptor")
        sw = swizzle or tile.swizzle
        if sw is None:
            fail("this tile's swizzle is unknown: allocate it with SMEMPool.alloc_tcgen05_mma_AB, fill it with a "
                 "TMA atom first, or pass swizzle=", rule="descriptor")
        if sw not in ("swizzle_32b", "swizzle_64b", "swizzle_128b"):  # (the 128B-atom layouts are not modeled)
            fail(f"tcgen05.SmemDescriptor takes swizzle_32b/64b/128b K-major tiles, this one is {sw}",
                 rule="descriptor")
        shape = tile.static_shape
        if len(shape) != 2:
            fail(f"tcgen05.SmemDescriptor takes a [rows, K] tile, got shape {shape}", rule="descriptor")
        self.tile, self.swizzle, self.dtype = tile, sw, tile.dtype
        self.rows, self.k = shape
        eb = max(self.dtype.width // 8, 1)
        span = SWIZZLE_BYTES[sw]
        box = tile.info.box if tile.info is not None and tile.info.box else None
        self.row_bytes = (box[-1] if box else self.k) * eb
        self.box_rows = box[0] if box else self.rows
        if self.row_bytes != span:
            fail(f"a K-major {sw} tile needs rows of exactly {span} bytes per box, this one has {self.row_bytes} "
                 "(make the atom's innermost box dim span the swizzle)", rule="descriptor")
        self.k_per_block = 256 // self.dtype.width
        # swizzled K-major: stride = 8 rows of the span; the leading offset is unused (1 by convention)
        self.desc = encode_matrix_descriptor(tile, 16, 8 * span, sw)

    @user_op
    def k_block(self, kb):
        """The descriptor of K-block `kb` (a Python int)."""
        eb = max(self.dtype.width // 8, 1)
        k0 = kb * self.k_per_block if _is_int(kb) else None
        if k0 is None or not 0 <= k0 < self.k:
            fail(f"K-block {show(kb)} of a tile with K = {self.k}" + (": a Python int, fixed at build time"
                 if k0 is None else ""), rule="descriptor")
        in_box = self.row_bytes // eb
        byte = (k0 // in_box) * self.box_rows * self.row_bytes + (k0 % in_box) * eb
        view = object.__new__(SmemDescriptor)
        view.__dict__.update(self.__dict__)
        view.desc = self.desc + (byte >> 4) if byte else self.desc
        return view

    @property
    def operand_type(self):
        """The MMA type of the tile's elements (f32 data is read as tf32)."""
        t = _type_name(self.dtype)
        return "tf32" if t == "f32" else t


# ----------------------------------------------------------------------------- tensor memory addresses

def _note_lane(v, lane):
    """Records that TMEM address `v` (a Python object of this build) has the static lane `lane`, for ld/st's
    lane-access check; the kernel's scratch keeps `v` alive, so its id is not reused during the build."""
    dsl.current_kernel().scratch.setdefault("tcgen05.lanes", {})[id(v)] = (v, lane)
    return v


def _static_lane(taddr):
    """The lane of TMEM address `taddr` where the build knows it (a buffer, or its at() with a Python int)."""
    if isinstance(taddr, TmemBuffer):
        return 0
    hit = dsl.current_kernel().scratch.get("tcgen05.lanes", {}).get(id(taddr))
    return hit[1] if hit is not None and hit[0] is taddr else None


def _static_warp():
    """The warp index running the code being built, where one known warp does (lang.WarpRole(w), a branch on
    warp_idx() == w, or a one-warp block), else None."""
    k = dsl.current_kernel()
    block = k.threads
    if block <= 32:
        return 0
    for w, _, first in k.scope:
        if w == 1 and first is not None:
            return first
    return None


def _check_lanes(taddr, shape, what):
    """PTX ISA 9.7.16.8.1 (access restrictions): warp w of a warpgroup reaches TMEM lanes 32·(w % 4) ..
    32·(w % 4) + 31 only. A static lane outside them, or an access that runs past them (32 lanes for 32x32b,
    16 for the 16x shapes), is refused where the build knows the warp: the hardware ignores the
    sub-partition bits of the lane (DeepGEMM's sm100 epilogues rely on that), so it would read this warp's
    own lanes instead, silently."""
    lane, warp = _static_lane(taddr), _static_warp()
    if lane is None or warp is None:
        return
    sub = warp % 4
    rows = 32 if shape == "32x32b" else 16
    if lane // 32 != sub or lane % 32 + rows > 32:
        fail(f"{what}.{shape} at TMEM lane {lane} from warp {warp}: warp {warp} reaches lanes {32 * sub}-"
             f"{32 * sub + 31} only (warp % 4 = {sub}; PTX ISA 9.7.16.8.1), and a {shape} access takes {rows} "
             f"lanes from the address's: address its lanes, acc.at({32 * sub}, col)", rule="tmem")


@user_op
def get_tmem_addr(addr, lane=0, col=0):
    """The Tensor Memory address `lane` rows and `col` 32-bit columns past
    `addr` (bits 31-16 lane, 15-0 column)."""
    if isinstance(addr, TmemBuffer):
        if isinstance(lane, int):
            return _note_lane(get_tmem_addr(addr.addr, lane, col), lane)
        addr = addr.addr
    if isinstance(lane, int) and not 0 <= lane < TMEM_LANES:
        fail(f"TMEM lane {lane}: 0-127", rule="tmem")
    if isinstance(col, int) and not 0 <= col < TMEM_COLUMNS:
        fail(f"TMEM column {col}: 0-511", rule="tmem")
    a = addr if isinstance(addr, Numeric) else Uint32(addr)
    off = (lane << 16) + col if isinstance(lane, int) and isinstance(col, int) else None
    if off is not None:
        return a.to(Uint32) + off if off else a.to(Uint32)
    return a.to(Uint32) + (Uint32(lane) << 16) + col


@user_op
def sm100_2sm_leader_smem_addr(addr):
    """The shared::cluster address of the same shared location in the
    leader (even) CTA of this CTA's pair: bit 24 (the pair rank in the
    cluster shared window) cleared, as CUTLASS's 2-SM kernels do."""
    return _shared_u32(addr) & 0xFEFFFFFF


def _tmem_ptr(taddr):
    """!llvm.ptr<6> for a TMEM address (Uint32, TmemBuffer)."""
    if isinstance(taddr, TmemBuffer):
        taddr = taddr.addr
    v = as_value(taddr, Uint32) if not isinstance(taddr, int) else as_value(Uint32(taddr))
    return llvm.IntToPtrOp(types.ptr(6), v).result


# ----------------------------------------------------------------------------- allocation

def _check_cols(ncols, what):
    if isinstance(ncols, int) and (ncols < 32 or ncols > TMEM_COLUMNS or ncols & (ncols - 1)):
        fail(f"{what} of {ncols} columns: a power of two in [32, 512]", rule="tmem")


@user_op
def alloc(dst, ncols, *, cta_group=1):
    """tcgen05.alloc: one whole warp allocates `ncols` TMEM columns (a power
    of two, 32-512; with cta_group 2, one warp of each CTA of the pair) and
    the address lands at `dst` (a shared u32 buffer or pointer)."""
    require_arch("tcgen05.alloc")
    _one_warp("tcgen05.alloc")
    _check_cols(ncols, "tcgen05.alloc")
    if isinstance(dst, dsl.TensorValue):
        from .cpasync import address_of
        dst = address_of(dst)
    nvvm.Tcgen05AllocOp(dsl.as_value(dst), as_value(ncols, Int32), group=_cta_group(cta_group, "tcgen05.alloc"))


@user_op
def dealloc(taddr, ncols, *, cta_group=1):
    """tcgen05.dealloc: the allocating warp frees `ncols` columns at `taddr`."""
    require_arch("tcgen05.dealloc")
    _one_warp("tcgen05.dealloc")
    _check_cols(ncols, "tcgen05.dealloc")
    nvvm.Tcgen05DeallocOp(_tmem_ptr(taddr), as_value(ncols, Int32),
                          group=_cta_group(cta_group, "tcgen05.dealloc"))


@user_op
def relinquish_alloc_permit(*, cta_group=1):
    """tcgen05.relinquish_alloc_permit: this CTA allocates no more TMEM."""
    require_arch("tcgen05.relinquish_alloc_permit")
    _one_warp("tcgen05.relinquish_alloc_permit")
    nvvm.Tcgen05RelinquishAllocPermitOp(group=_cta_group(cta_group, "tcgen05.relinquish_alloc_permit"))


# ----------------------------------------------------------------------------- fences and waits

@user_op
def fence_before_thread_sync():
    """tcgen05.fence::before_thread_sync: prior tcgen05 ops before the next barrier."""
    require_arch("tcgen05.fence")
    nvvm.Tcgen05FenceOp(nvvm.Tcgen05FenceKind.BEFORE_THREAD_SYNC)


@user_op
def fence_after_thread_sync():
    """tcgen05.fence::after_thread_sync: later tcgen05 ops after the last barrier/wait."""
    require_arch("tcgen05.fence")
    nvvm.Tcgen05FenceOp(nvvm.Tcgen05FenceKind.AFTER_THREAD_SYNC)


@user_op
def wait_ld():
    """tcgen05.wait::ld: this thread's tcgen05.ld results are in registers."""
    require_arch("tcgen05.wait")
    nvvm.Tcgen05WaitOp(nvvm.Tcgen05WaitKind.LOAD)


@user_op
def wait_st():
    """tcgen05.wait::st: this thread's tcgen05.st writes reached TMEM."""
    require_arch("tcgen05.wait")
    nvvm.Tcgen05WaitOp(nvvm.Tcgen05WaitKind.STORE)


# ----------------------------------------------------------------------------- MMA

_KIND_ATTR = {"f16": "F16", "tf32": "TF32", "f8f6f4": "F8F6F4", "i8": "I8"}
_SCALED_ATTR = {"mxf8f6f4": "MXF8F6F4", "mxf4": "MXF4", "mxf4nvf4": "MXF4NVF4"}
_COLLECTOR = {"discard": "DISCARD", "lastuse": "LASTUSE", "fill": "FILL", "use": "USE"}
_BLOCK = {None: "DEFAULT", 16: "BLOCK16", 32: "BLOCK32"}


def _issue(what, body, pred=None):
    """Runs `body` in one thread: under `pred` when given, else elected in
    the calling warp (or directly when one thread runs this code)."""
    from .lang import _single_issuer
    if pred is not None:
        with dsl.if_(pred, scope="thread"):
            body()
        return
    if _single_issuer(what) == "direct":
        body()
    else:
        with dsl.if_(dsl.elect_sync()):
            body()


def _check_d_fits(d, info):
    """The accumulator buffer holds what the instruction descriptor makes the MMA write: its M / cta_group
    rows and N columns (N / 2 in Layout B). A wider N or another M would write past the buffer into the
    pool's next columns or lanes, silently."""
    lay = d.layout
    if isinstance(info.M, int) and lay.rows * info.cta_group != info.M:
        fail(f"tcgen05.mma with M = {info.M} (cta_group {info.cta_group}) into a TMEM accumulator allocated for "
             f"M = {lay.rows * info.cta_group} ({lay.rows} rows a CTA)", rule="tmem")
    need = info.N // 2 if lay.lanes == "2x2" else info.N
    if isinstance(info.N, int) and lay.lanes == "2x2" and need != lay.cols:
        # (Layout B folds the N columns at N / 2: a narrower MMA's upper half lands where the buffer keeps others)
        fail(f"tcgen05.mma with N = {info.N} into a Layout B (M = 128, cta_group 2) accumulator of N = "
             f"{2 * lay.cols}: the MMA's N must be the buffer's", rule="tmem")
    if isinstance(info.N, int) and need > lay.cols:
        fail(f"tcgen05.mma with N = {info.N} writes {need} TMEM columns, but the accumulator has {lay.cols} a "
             "stage", rule="tmem")


def _operand_a(a):
    """(value, from TMEM) of an A operand: a descriptor or a TMEM address."""
    if isinstance(a, SmemDescriptor):
        return as_value(a.desc, Uint64), False
    if isinstance(a, TmemBuffer):
        return _tmem_ptr(a), True
    if isinstance(a, int):
        return as_value(Uint64(a)), False
    if isinstance(a, Numeric) and not a.is_float and a.width in (32, 64):
        # 64 bits: a shared-memory descriptor; 32 bits: a TMEM address
        return (as_value(a, Uint64), False) if a.width == 64 else (_tmem_ptr(a), True)
    fail(f"tcgen05.mma's A: a SmemDescriptor, a 64-bit descriptor or a TMEM buffer/address, got "
         f"{type(a).__name__}", rule="tcgen05")


@user_op
def mma(d, a, b, idesc, *, accumulate=True, kind=None, cta_group=None, scale_a=None, scale_b=None,
        block_size=None, scale_input_d=None, disable_output_lane=None, collector="discard", a_shift=False,
        pred=None):
    """tcgen05.mma: D (TMEM) = A·B (+ D when `accumulate`), one instruction
    issued by one thread (elected here from the calling warp; or `pred`).
    A is a SmemDescriptor (``k_block``), a 64-bit descriptor or a TMEM
    buffer/address; B a descriptor; `idesc` an InstrDescriptor (its kind,
    shape and cta_group are checked against the operands) or a raw value
    with `kind=` and `cta_group=`. With scale_a/scale_b (TMEM scale
    factors) it is the block-scaled form (``kind::mxf8f6f4/mxf4/mxf4nvf4``,
    PTX 8.8: ``@dsl.kernel(ptx=88)``); `block_size` 16/32 is the
    ``.block16/.block32`` qualifier.
    With cta_group 2 only the pair's leader CTA issues it."""
    k = require_arch("tcgen05.mma")
    info = idesc if isinstance(idesc, InstrDescriptor) else None
    kind = kind or (info.kind if info is not None else None)
    if cta_group is None:
        cta_group = info.cta_group if info is not None else 1
    if info is not None and info.cta_group != cta_group:
        fail(f"tcgen05.mma with cta_group {cta_group} but the instruction descriptor encodes "
             f"n_cta_groups={info.cta_group}", rule="cta-group")
    scaled = scale_a is not None or scale_b is not None
    if scaled != (kind in _SCALED):
        fail(f"kind {kind!r} {'with' if scaled else 'without'} scale factors: block-scaled kinds "
             f"({', '.join(_SCALED)}) take scale_a= and scale_b=, the others none", rule="tcgen05")
    if kind not in _KIND_ATTR and kind not in _SCALED:
        fail(f"tcgen05.mma kind {kind!r}: one of {', '.join(list(_KIND_ATTR) + list(_SCALED))} (pass an "
             "InstrDescriptor or kind=)", rule="tcgen05")
    if info is not None and info.ab:
        for name, opnd, want in (("A", a, info.ab[0]), ("B", b, info.ab[1])):
            if isinstance(opnd, SmemDescriptor) and opnd.operand_type != want:
                fail(f"tcgen05.mma's {name} holds {opnd.operand_type}, the instruction descriptor says {want}",
                     rule="tcgen05")
    if collector not in _COLLECTOR:
        fail(f"collector {collector!r}: one of {', '.join(_COLLECTOR)}", rule="tcgen05")
    group = _cta_group(cta_group, "tcgen05.mma")
    if info is not None and isinstance(d, TmemBuffer) and d.role in ("D", "C"):
        _check_d_fits(d, info)
    dptr = _tmem_ptr(d)
    av, a_tmem = _operand_a(a)
    if a_shift and not a_tmem:
        fail("a_shift shifts an A operand in TMEM, this A is in shared memory", rule="tcgen05")
    bv = as_value(b.desc if isinstance(b, SmemDescriptor) else b, Uint64)
    iv = as_value(idesc, Uint32)
    acc = as_value(accumulate if isinstance(accumulate, Val) else Boolean(bool(accumulate)), Boolean)
    col = getattr(nvvm.Tcgen05MMACollectorOp, _COLLECTOR[collector])
    if scaled:
        if scale_a is None or scale_b is None:
            fail("block-scaled tcgen05.mma needs both scale_a= and scale_b=", rule="tcgen05")
        if block_size not in _BLOCK:
            fail(f"block_size {block_size!r}: None (the kind's default), 16 or 32", rule="tcgen05")
        if kind == "mxf4nvf4" and block_size is None:
            fail("kind::mxf4nvf4 needs block_size=16 or 32 (.block16/.block32)", rule="tcgen05")
        if (kind, block_size) in (("mxf8f6f4", 16), ("mxf4", 16)):
            fail(f"kind::{kind} scales blocks of 32 elements, not {block_size}", rule="tcgen05")
        if info is not None and info.scaled == "ue4m3" and block_size != 16:
            # PTX ISA 9.7.16.10.7.1, Table 57: UE4M3 scale factors go with .scale_vec::4X / .block16 only
            # (the descriptor's bit 23 says ue4m3; .block32 would read them as 2 factors per 64 elements)
            fail(f"kind::{kind} with ue4m3 scale factors takes block_size=16 (.block16), not {block_size}",
                 rule="tcgen05")
        # LLVM 22 aborts selecting .block16/.block32 below PTX 8.8, and CUDA 13.0's ptxas reads the unqualified
        # form as .block32 and refuses it there too
        k.require_ptx(88, "block-scaled tcgen05.mma")
        if scale_input_d is not None or disable_output_lane is not None or a_shift:
            fail("block-scaled tcgen05.mma takes no scale_input_d, disable_output_lane or a_shift", rule="tcgen05")

        def body():
            nvvm.Tcgen05MMABlockScaleOp(getattr(nvvm.MMABlockScaleKind, _SCALED_ATTR[kind]), group, dptr, av, bv,
                                        iv, acc, _tmem_ptr(scale_a), _tmem_ptr(scale_b),
                                        blockScale=getattr(nvvm.Tcgen05MMABlockScale, _BLOCK[block_size]),
                                        collectorOp=col)
        _issue("tcgen05.mma", body, pred)
        return
    kw = {"collectorOp": col}
    if a_shift:
        kw["aShift"] = True
    if scale_input_d is not None:
        if kind not in ("f16", "tf32"):
            fail(f"scale_input_d is for kind::f16 and kind::tf32, not kind::{kind}", rule="tcgen05")
        if isinstance(scale_input_d, int) and not 0 <= scale_input_d <= 15:
            fail(f"scale_input_d {scale_input_d}: 0-15 (D is scaled by 2^-scale_input_d)", rule="tcgen05")
        kw["scaleInputD"] = as_value(scale_input_d if isinstance(scale_input_d, Val) else Uint64(scale_input_d),
                                     Uint64)
    if disable_output_lane is not None:
        n = 4 * cta_group
        lanes = list(disable_output_lane) if not isinstance(disable_output_lane, Val) else None
        if lanes is not None and len(lanes) != n:
            fail(f"disable_output_lane with cta_group {cta_group}: {n} x 32-bit masks, got {len(lanes)}",
                 rule="tcgen05")
        kw["disableOutputLane"] = (dsl.vector_of([Int32(x) if isinstance(x, int) else x for x in lanes],
                                                 Int32).value if lanes is not None else disable_output_lane.value)

    def body():
        nvvm.Tcgen05MMAOp(getattr(nvvm.Tcgen05MMAKind, _KIND_ATTR[kind]), group, dptr, av, bv, iv, acc, **kw)
    _issue("tcgen05.mma", body, pred)


@user_op
def commit(barrier, stage=0, *, cta_group=1, multicast_mask=None, pred=None):
    """tcgen05.commit: mbarrier `barrier[stage]` (a lang barrier, or a
    pointer) gets one arrival when every tcgen05 op this thread issued
    before completes; `multicast_mask` (i16) signals the barrier at the same
    offset in each masked CTA of the cluster. One thread issues it (elected
    here, or `pred`)."""
    require_arch("tcgen05.commit")
    group = _cta_group(cta_group, "tcgen05.commit")
    ptr = barrier.ptr(stage) if hasattr(barrier, "ptr") else barrier
    kw = {}
    if multicast_mask is not None:
        if isinstance(multicast_mask, int) and not 0 < multicast_mask < 1 << 16:
            fail(f"multicast mask {multicast_mask:#x}: 16 bits, not zero", rule="multicast")
        m = multicast_mask if isinstance(multicast_mask, Val) else Int16(multicast_mask)
        kw["multicastMask"] = as_value(m, Int16)

    def body():
        nvvm.Tcgen05CommitOp(dsl.as_value(ptr), group=group, **kw)
    _issue("tcgen05.commit", body, pred)


# ----------------------------------------------------------------------------- TMEM <-> registers / shared

# shape -> 32-bit registers of one .x1 access (PTX ISA 9.7.16.2.3, Table 49)
_LDST = {"32x32b": ("SHAPE_32X32B", 1), "16x64b": ("SHAPE_16X64B", 1), "16x128b": ("SHAPE_16X128B", 2),
         "16x256b": ("SHAPE_16X256B", 4), "16x32bx2": ("SHAPE_16X32BX2", 1)}


def _ldst_regs(shape, num, what):
    if shape not in _LDST:
        fail(f"{what} shape {shape!r}: one of {', '.join(_LDST)}", rule="tcgen05")
    per = _LDST[shape][1]
    if num not in (1, 2, 4, 8, 16, 32, 64, 128) or num * per > 128:
        fail(f"{what}.{shape}.x{num}: num is a power of two 1-128 and at most 128 registers ({num * per})",
             rule="tcgen05")
    return per * num


@user_op
def ld(taddr, *, shape="32x32b", num=1, pack=False, offset=None):
    """tcgen05.ld.sync.aligned.<shape>.x<num>: whole warps read TMEM into
    registers (a Vector of Int32, or one Int32). Each warp reaches only the
    32 lanes of its sub-partition (warp_idx % 4), so taddr's lane must be
    one of them (32·(warp % 4) for 32x32b: lane i of the warp gets row
    32·(warp % 4) + i, `num` columns from taddr's); a static lane outside
    them, from a known warp, is refused. Wait with wait_ld() before using
    the registers. `offset` (16x32bx2) is the second access's column
    offset."""
    require_arch("tcgen05.ld")
    _whole_warp("tcgen05.ld")
    n = _ldst_regs(shape, num, "tcgen05.ld")
    _check_lanes(taddr, shape, "tcgen05.ld")
    if (shape == "16x32bx2") != (offset is not None):
        fail("offset= goes with shape 16x32bx2 (and only with it)", rule="tcgen05")
    i32 = ir.IntegerType.get_signless(32)
    t = ir.VectorType.get([n], i32) if n > 1 else i32
    kw = {"pack": True} if pack else {}
    if offset is not None:
        kw["offset"] = _half_split_offset(offset, "tcgen05.ld")
    r = nvvm.tcgen05_ld(t, getattr(nvvm.Tcgen05LdStShape, _LDST[shape][0]), _tmem_ptr(taddr), **kw)
    return dsl.Vector(r) if n > 1 else Int32(r)


def _half_split_offset(offset, what):
    """The 16x32bx2 shape's second-access column offset: an immediate of 32 bits (-1 or 2^32 ended the
    process in the lowering's APInt)."""
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset < 2 ** 32:
        fail(f"{what} offset={show(offset)}: an immediate, a Python int in 0..2^32 - 1", rule="tcgen05")
    return as_value(Uint64(offset), Uint64)


@user_op
def st(taddr, values, *, shape="32x32b", unpack=False, offset=None):
    """tcgen05.st.sync.aligned.<shape>: whole warps write registers
    (`values`: a Vector of 32-bit lanes, or one 32-bit value) to TMEM, the
    mirror of ld. Wait with wait_st() before an MMA reads them."""
    require_arch("tcgen05.st")
    _whole_warp("tcgen05.st")
    if isinstance(values, dsl.Vector):
        bits = len(values) * values.dtype.width
        if bits % 32:
            fail(f"tcgen05.st stores 32-bit registers, got {len(values)} x {values.dtype.__name__} ({bits} bits)",
                 rule="tcgen05")
        values = values.bitcast(Int32) if values.dtype is not Int32 else values   # f32, f16 pairs, ...
    if isinstance(values, dsl.Vector):
        n, val = len(values), values.value
    else:
        sv = values if isinstance(values, Numeric) else Int32(values)
        if sv.width != 32:
            fail(f"tcgen05.st stores 32-bit registers, got {type(sv).__name__}", rule="tcgen05")
        n, val = 1, as_value(sv.bitcast(Int32) if sv.is_float else sv, Int32)
    per = _LDST.get(shape, (None, 1))[1]
    if n % per:
        fail(f"tcgen05.st.{shape} moves {per} registers per repeat, got {n}", rule="tcgen05")
    _ldst_regs(shape, n // per, "tcgen05.st")
    _check_lanes(taddr, shape, "tcgen05.st")
    if (shape == "16x32bx2") != (offset is not None):
        fail("offset= goes with shape 16x32bx2 (and only with it)", rule="tcgen05")
    kw = {"unpack": True} if unpack else {}
    if offset is not None:
        kw["offset"] = _half_split_offset(offset, "tcgen05.st")
    nvvm.tcgen05_st(getattr(nvvm.Tcgen05LdStShape, _LDST[shape][0]), _tmem_ptr(taddr), val, **kw)


_CP_SHAPES = {"128x256b": "SHAPE_128x256b", "4x256b": "SHAPE_4x256b", "128x128b": "SHAPE_128x128b",
              "64x128b": "SHAPE_64x128b", "32x128b": "SHAPE_32x128b"}
_CP_MULTICAST = {None: "NONE", "warpx2::02_13": "WARPX2_02_13", "warpx2::01_23": "WARPX2_01_23",
                 "warpx4": "WARPX4"}
_CP_NEEDS = {"64x128b": ("warpx2::02_13", "warpx2::01_23"), "32x128b": ("warpx4",)}
_CP_FORMATS = {None: None, "b6x16_p32": "B6x16_P32", "b4x16_p64": "B4x16_P64"}


@user_op
def cp(taddr, smem_desc, *, shape="128x256b", multicast=None, cta_group=1, src_format=None, pred=None):
    """tcgen05.cp: an asynchronous copy of the shared-memory matrix that
    `smem_desc` (a SmemDescriptor or 64-bit descriptor) describes into TMEM
    at `taddr` (scale factors for block-scaled MMAs: 32x128b with warpx4).
    One thread issues it; complete it with tcgen05.commit."""
    require_arch("tcgen05.cp")
    if shape not in _CP_SHAPES:
        fail(f"tcgen05.cp shape {shape!r}: one of {', '.join(_CP_SHAPES)}", rule="tcgen05")
    if multicast not in _CP_MULTICAST:
        fail(f"tcgen05.cp multicast {multicast!r}: one of {', '.join(str(m) for m in _CP_MULTICAST)}",
             rule="tcgen05")
    need = _CP_NEEDS.get(shape, (None,))
    if multicast not in need:
        fail(f"tcgen05.cp.{shape} takes multicast {' or '.join(str(m) for m in need)}, got {multicast}",
             rule="tcgen05")
    if src_format not in _CP_FORMATS:
        fail(f"tcgen05.cp source format {src_format!r}: one of {', '.join(str(f) for f in _CP_FORMATS)}",
             rule="tcgen05")
    group = _cta_group(cta_group, "tcgen05.cp")
    dv = as_value(smem_desc.desc if isinstance(smem_desc, SmemDescriptor) else smem_desc, Uint64)
    kw = {"group": group, "multicast": getattr(nvvm.Tcgen05CpMulticast, _CP_MULTICAST[multicast])}
    if src_format is not None:
        kw["srcFormat"] = getattr(nvvm.Tcgen05CpSrcFormat, _CP_FORMATS[src_format])

    def body():
        nvvm.Tcgen05CpOp(getattr(nvvm.Tcgen05CpShape, _CP_SHAPES[shape]), _tmem_ptr(taddr), dv, **kw)
    _issue("tcgen05.cp", body, pred)


@user_op
def shift(taddr, *, cta_group=1, pred=None):
    """tcgen05.shift.down: rows 0-30 of the 32-byte-element matrix at taddr
    move one row down (an A operand's rows for the next MMA)."""
    require_arch("tcgen05.shift")
    group = _cta_group(cta_group, "tcgen05.shift")

    def body():
        nvvm.Tcgen05ShiftOp(_tmem_ptr(taddr), group=group)
    _issue("tcgen05.shift", body, pred)


# ----------------------------------------------------------------------------- TMEM operand layouts

class TmemLayout:
    """Where an operand lives in Tensor Memory: `lanes` ("all": row r in
    lane r; "half": 64 rows, rows 16q..16q+15 in lanes 32q..32q+15 of each
    sub-partition q (Layout F, M = 64); "2x2": 64 rows of an M = 128
    cta_group 2 accumulator (Layout B), row r of columns [0, N/2) in lane r
    and of columns [N/2, N) in lane 64 + r, column c % (N/2)) and `cols`
    32-bit columns per stage."""

    def __init__(self, lanes, cols, rows, stages=1, col_groups=1):
        self.lanes, self.cols, self.rows, self.stages, self.col_groups = lanes, cols, rows, stages, col_groups

    @property
    def total_cols(self):
        return self.cols * self.stages

    def __repr__(self):
        return (f"TmemLayout(lanes={self.lanes!r}, rows={self.rows}, cols={self.cols}, stages={self.stages}"
                f"{f', col_groups={self.col_groups}' if self.col_groups > 1 else ''})")


def _split_stages(shape, what):
    shape = tuple(int(d) for d in shape)
    if len(shape) not in (2, 3) or any(d <= 0 for d in shape):
        fail(f"{what} shape {shape}: (rows, cols) or (stages, rows, cols)", rule="tmem")
    return (shape[0], shape[1:]) if len(shape) == 3 else (1, shape)


def tmem_layout(role, shape, dtype, *, M=None, cta_group=1, sf_per_mma=None, sf_reuse=1):
    """The TMEM layout of an operand: role "D"/"C" (accumulator, M x N, one
    32-bit column per element), "A" (M x K, packed into 32-bit columns),
    "SF" (block scale factors, 4 per column), "plain" (rows x 32-bit cols).
    M is the instruction's M; a CTA holds M / cta_group rows: 128 rows take
    every lane, 64 rows half of each sub-partition's lanes (PTX ISA
    9.7.16.x data-path layouts)."""
    stages, (rows, cols) = _split_stages(shape, f"TMEM {role}")
    bits = _bits(dtype)
    if role in ("D", "C", "A"):
        if cta_group not in (1, 2):
            fail(f"cta_group {cta_group!r}: 1 or 2", rule="cta-group")
        ms = {1: (64, 128), 2: (128, 256)}[cta_group]
        if M not in ms:
            fail(f"TMEM {role} for M = {M!r} with cta_group {cta_group}: M is the instruction's M, one of {ms}",
                 rule="tmem")
        per_cta = M // cta_group
        if rows != per_cta:
            fail(f"TMEM {role} of shape {shape}: a CTA holds M / cta_group = {per_cta} rows, not {rows}", rule="tmem")
        # PTX ISA 9.7.16.10.5 (data path layouts): M = 64 with cta_group::1 is Layout F, "4x1 (1/2 datapath
        # utilized)"; M = 128 with cta_group::2 (dense) is Layout B, "2x2": all 128 lanes, the N columns
        # folded in two (CuTe's tmem_frg 2-SM M_MMA = 64 atom: rows in lanes 0-63 for columns [0, N/2),
        # in lanes 64-127 for [N/2, N))
        lanes = "all" if per_cta == 128 else "2x2" if cta_group == 2 and role != "A" else "half"
        if lanes == "2x2" and (cols % 2 or bits != 32):
            fail(f"TMEM {role} of shape {shape} for M = 128 with cta_group 2 (Layout B): N even, 32-bit", rule="tmem")
        if role == "A":
            if cols * bits % 32:
                fail(f"TMEM A of {cols} x {bits}-bit elements per row: whole 32-bit columns", rule="tmem")
            ncols = cols * bits // 32
        else:
            if bits != 32:
                fail(f"TMEM accumulators are 32-bit (f32/s32) here, got {_type_name(dtype)}", rule="tmem")
            ncols = cols // 2 if lanes == "2x2" else cols
        return TmemLayout(lanes, ncols, rows, stages)
    if role == "SF":
        if bits != 8:
            fail(f"scale factors are 8-bit (ue8m0/ue4m3), got {_type_name(dtype)}", rule="tmem")
        if sf_per_mma not in (1, 2, 4):
            fail(f"sf_per_mma {sf_per_mma!r}: 1, 2 or 4 scale factors per row per MMA", rule="tmem")
        groups = -(-rows // TMEM_LANES)
        # 4 one-byte factors per 32-bit column; 128-bit units, what tcgen05.cp 32x128b.warpx4 writes
        ncols = -(-(cols * max(sf_reuse, 1)) // 4)
        ncols = -(-ncols // 4) * 4 * groups
        return TmemLayout("all", ncols, min(rows, TMEM_LANES), stages, groups)
    if role == "plain":
        if rows > TMEM_LANES:
            fail(f"TMEM buffer of {rows} rows: at most 128 lanes", rule="tmem")
        if cols * bits % 32:
            fail(f"TMEM buffer rows of {cols} x {bits} bits: whole 32-bit columns", rule="tmem")
        return TmemLayout("all", cols * bits // 32, rows, stages)
    fail(f"TMEM operand role {role!r}: D, C, A, SF or plain", rule="tmem")


class TmemBuffer:
    """Columns [col, col + layout.total_cols) of a lang.TMEMPool: ``addr``
    (its run-time TMEM address), ``stage(s)``, ``at(lane, col)`` and
    ``load(col, n)`` (this thread's row of an accumulator)."""

    def __init__(self, pool, col, layout, dtype, role):
        self.pool, self.col, self.layout, self.dtype, self.role = pool, col, layout, dtype, role

    @property
    def addr(self):
        base = self.pool.base
        if base is None:
            fail("this TMEM buffer's pool has not allocated yet: call TMEMPool.commit() (or give it cols=)",
                 rule="tmem")
        return get_tmem_addr(base, 0, self.col) if isinstance(self.col, int) else base + self.col

    @property
    def cols(self):
        return self.layout.cols

    def stage(self, s):
        """Stage `s` (a Python int or run-time value) of a staged buffer."""
        if isinstance(s, int) and not 0 <= s < self.layout.stages:
            fail(f"stage {s} of a {self.layout.stages}-stage TMEM buffer", rule="tmem")
        one = TmemLayout(self.layout.lanes, self.layout.cols, self.layout.rows, 1, self.layout.col_groups)
        col = self.col + s * self.layout.cols if isinstance(s, int) else Uint32(self.col) + Uint32(s) * self.cols
        return TmemBuffer(self.pool, col, one, self.dtype, self.role)

    def at(self, lane=0, col=0):
        if isinstance(col, int) and col >= self.layout.total_cols:
            fail(f"column {col} of a {self.layout.total_cols}-column TMEM buffer", rule="tmem")
        return get_tmem_addr(self, lane, col)

    @user_op
    def load(self, col, n, dtype=None):
        """This thread's row of a 32-bit accumulator, columns [col, col + n)
        (tcgen05.ld.32x32b.x<n>, then wait::ld): warp w reads lanes 32·(w % 4)
        ... + 31, so the 4 warps of a warpgroup read 128 rows. A Vector of
        `dtype` (the buffer's)."""
        if self.layout.lanes != "all":
            fail(f"load() reads 128-lane accumulators, one row a lane; this one has 64 rows a CTA (lanes "
                 f"{self.layout.lanes!r}, see TmemLayout): use tcgen05.ld with the layout's lanes", rule="tmem")
        if isinstance(col, int) and col + n > self.layout.total_cols:
            fail(f"columns [{col}, {col + n}) of a {self.layout.total_cols}-column TMEM buffer", rule="tmem")
        lane = (dsl.warp_idx() % 4) * 32
        v = ld(self.at(0, 0) + (Uint32(lane) << 16) + col, shape="32x32b", num=n)
        wait_ld()
        cls = dsl.dtype(dtype or self.dtype)
        if cls.width != 32:
            fail(f"load() reads 32-bit columns, not {cls.__name__}", rule="tmem")
        if cls.is_float:
            return v.bitcast(cls)
        return v
