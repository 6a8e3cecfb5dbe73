//===- NVTMAEnums.td - nvtma enums -------------------------*- tablegen -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Descriptor enums keep CUDA's CUtensorMap* case names and values (they
// come from the one schema, nvtma/TensorMap/Schema.def); their spellings
// are identifier-safe so they round-trip unquoted (`l2_256b`).
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_ENUMS
#define NVTMA_ENUMS

include "mlir/IR/EnumAttr.td"
include "nvtma/Dialect/NVTMA/NVTMADialect.td"

// TmaFormat, Interleave, Swizzle, L2Promotion, OOBFill: generated from
// nvtma/TensorMap/Schema.def (see NVTMASchemaEnums.td.in).
include "nvtma/Dialect/NVTMA/NVTMASchemaEnums.td"

def NVTMA_CopyKind : I32EnumAttr<"CopyKind", "what a TMA atom copies", [
  I32EnumAttrCase<"Load", 0, "load">,
  I32EnumAttrCase<"LoadMulticast", 1, "load_multicast">,
  I32EnumAttrCase<"Store", 2, "store">,
  I32EnumAttrCase<"Reduce", 3, "reduce">,
  I32EnumAttrCase<"Im2colLoad", 4, "im2col_load">,
  I32EnumAttrCase<"Im2colLoadMulticast", 5, "im2col_load_multicast">,
  I32EnumAttrCase<"Im2colStore", 6, "im2col_store">,
  I32EnumAttrCase<"Gather4Load", 7, "gather4_load">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

def NVTMA_ReductionKind : I32EnumAttr<"ReductionKind",
    "reduction of cp.reduce.async.bulk.tensor", [
  I32EnumAttrCase<"ADD", 0, "add">,
  I32EnumAttrCase<"MIN", 1, "min">,
  I32EnumAttrCase<"MAX", 2, "max">,
  I32EnumAttrCase<"INC", 3, "inc">,
  I32EnumAttrCase<"DEC", 4, "dec">,
  I32EnumAttrCase<"AND", 5, "and">,
  I32EnumAttrCase<"OR", 6, "or">,
  I32EnumAttrCase<"XOR", 7, "xor">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

def NVTMA_LoadCacheMode : I32EnumAttr<"LoadCacheMode",
    "cache mode of a non-bulk cp.async", [
  I32EnumAttrCase<"ALWAYS", 0, "always">,
  I32EnumAttrCase<"GLOBAL", 1, "cache_global">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

def NVTMA_BulkCopyKind : I32EnumAttr<"BulkCopyKind",
    "direction of a non-tensor bulk copy", [
  I32EnumAttrCase<"G2S", 0, "g2s">,
  I32EnumAttrCase<"G2SMulticast", 1, "g2s_multicast">,
  I32EnumAttrCase<"S2G", 2, "s2g">,
  I32EnumAttrCase<"S2GByteMask", 3, "s2g_bytemask">,
  I32EnumAttrCase<"S2SCluster", 4, "s2s_cluster">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

def NVTMA_SpecialRegister : I32EnumAttr<"SpecialRegister",
    "a special register nvtma.read_special_register reads where it stands", [
  I32EnumAttrCase<"TID_X", 0, "tid_x">,
  I32EnumAttrCase<"TID_Y", 1, "tid_y">,
  I32EnumAttrCase<"TID_Z", 2, "tid_z">,
  I32EnumAttrCase<"LANEID", 3, "laneid">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

def NVTMA_WgmmaType : I32EnumAttr<"WgmmaType",
    "an operand type of a wgmma with f32 accumulators", [
  I32EnumAttrCase<"F16", 0, "f16">,
  I32EnumAttrCase<"BF16", 1, "bf16">,
  I32EnumAttrCase<"TF32", 2, "tf32">,
  I32EnumAttrCase<"E4M3", 3, "e4m3">,
  I32EnumAttrCase<"E5M2", 4, "e5m2">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

def NVTMA_AtomicScope : I32EnumAttr<"AtomicScope",
    "the threads an atomic is atomic with respect to (PTX's .scope)", [
  I32EnumAttrCase<"CTA", 0, "cta">,
  I32EnumAttrCase<"CLUSTER", 1, "cluster">,
  I32EnumAttrCase<"GPU", 2, "gpu">,
  I32EnumAttrCase<"SYS", 3, "sys">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

def NVTMA_FloatFn : I32EnumAttr<"FloatFn",
    "a float function nvtma.float_fn computes as one PTX instruction", [
  I32EnumAttrCase<"EX2_APPROX", 0, "ex2_approx">,
  I32EnumAttrCase<"LG2_APPROX", 1, "lg2_approx">,
  I32EnumAttrCase<"RSQRT_APPROX", 2, "rsqrt_approx">,
  I32EnumAttrCase<"SIN_APPROX", 3, "sin_approx">,
  I32EnumAttrCase<"COS_APPROX", 4, "cos_approx">,
  I32EnumAttrCase<"DIV_APPROX", 5, "div_approx">,
  I32EnumAttrCase<"SQRT_RN", 6, "sqrt_rn">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

class NVTMA_EnumAttr<EnumAttrInfo info, string name>
    : EnumAttr<NVTMA_Dialect, info, name> {
  let assemblyFormat = "`<` $value `>`";
}

def NVTMA_LoadCacheModeAttr : NVTMA_EnumAttr<NVTMA_LoadCacheMode, "load_cache_mode">;
def NVTMA_BulkCopyKindAttr : NVTMA_EnumAttr<NVTMA_BulkCopyKind, "bulk_copy_kind">;
def NVTMA_ReductionKindAttr : NVTMA_EnumAttr<NVTMA_ReductionKind, "reduction_kind">;
def NVTMA_L2PromotionAttr : NVTMA_EnumAttr<NVTMA_L2Promotion, "l2_promotion">;
def NVTMA_SwizzleAttr : NVTMA_EnumAttr<NVTMA_Swizzle, "swizzle">;
def NVTMA_InterleaveAttr : NVTMA_EnumAttr<NVTMA_Interleave, "interleave">;
def NVTMA_OOBFillAttr : NVTMA_EnumAttr<NVTMA_OOBFill, "oob_fill">;
def NVTMA_TmaFormatAttr : NVTMA_EnumAttr<NVTMA_TmaFormat, "tma_format">;
def NVTMA_CopyKindAttr : NVTMA_EnumAttr<NVTMA_CopyKind, "copy_kind">;
def NVTMA_SpecialRegisterAttr : NVTMA_EnumAttr<NVTMA_SpecialRegister, "special_register">;
def NVTMA_WgmmaTypeAttr : NVTMA_EnumAttr<NVTMA_WgmmaType, "wgmma_type">;
def NVTMA_AtomicScopeAttr : NVTMA_EnumAttr<NVTMA_AtomicScope, "atomic_scope">;
def NVTMA_FloatFnAttr : NVTMA_EnumAttr<NVTMA_FloatFn, "float_fn">;

#endif // NVTMA_ENUMS
