//===- NVTMAEnums.td - nvtma enums -------------------------*- tablegen -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Descriptor enums keep CUDA's CUtensorMap* case names and values; their
// spellings are identifier-safe so they round-trip unquoted (`l2_256b`).
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_ENUMS
#define NVTMA_ENUMS

include "mlir/IR/EnumAttr.td"
include "nvtma/Dialect/NVTMA/NVTMADialect.td"

def NVTMA_TmaFormat : I32EnumAttr<"TmaFormat",
    "CUtensorMapDataType: the descriptor's element format", [
  I32EnumAttrCase<"UINT8", 0, "uint8">,
  I32EnumAttrCase<"UINT16", 1, "uint16">,
  I32EnumAttrCase<"UINT32", 2, "uint32">,
  I32EnumAttrCase<"INT32", 3, "int32">,
  I32EnumAttrCase<"UINT64", 4, "uint64">,
  I32EnumAttrCase<"INT64", 5, "int64">,
  I32EnumAttrCase<"FLOAT16", 6, "float16">,
  I32EnumAttrCase<"FLOAT32", 7, "float32">,
  I32EnumAttrCase<"FLOAT64", 8, "float64">,
  I32EnumAttrCase<"BFLOAT16", 9, "bfloat16">,
  I32EnumAttrCase<"FLOAT32_FTZ", 10, "float32_ftz">,
  I32EnumAttrCase<"TFLOAT32", 11, "tfloat32">,
  I32EnumAttrCase<"TFLOAT32_FTZ", 12, "tfloat32_ftz">,
  I32EnumAttrCase<"U4X16_ALIGN8B", 13, "u4x16_align8b">,
  I32EnumAttrCase<"U4X16_ALIGN16B", 14, "u4x16_align16b">,
  I32EnumAttrCase<"U6X16_ALIGN16B", 15, "u6x16_align16b">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

def NVTMA_Swizzle : I32EnumAttr<"Swizzle",
    "CUtensorMapSwizzle: shared-memory bank swizzle", [
  I32EnumAttrCase<"NONE", 0, "none">,
  I32EnumAttrCase<"SWIZZLE_32B", 1, "swizzle_32b">,
  I32EnumAttrCase<"SWIZZLE_64B", 2, "swizzle_64b">,
  I32EnumAttrCase<"SWIZZLE_128B", 3, "swizzle_128b">,
  I32EnumAttrCase<"SWIZZLE_128B_ATOM_32B", 4, "swizzle_128b_atom_32b">,
  I32EnumAttrCase<"SWIZZLE_128B_ATOM_32B_FLIP_8B", 5, "swizzle_128b_atom_32b_flip_8b">,
  I32EnumAttrCase<"SWIZZLE_128B_ATOM_64B", 6, "swizzle_128b_atom_64b">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

def NVTMA_Interleave : I32EnumAttr<"Interleave",
    "CUtensorMapInterleave: interleaved global layout", [
  I32EnumAttrCase<"NONE", 0, "none">,
  I32EnumAttrCase<"INTERLEAVE_16B", 1, "interleave_16b">,
  I32EnumAttrCase<"INTERLEAVE_32B", 2, "interleave_32b">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

def NVTMA_L2Promotion : I32EnumAttr<"L2Promotion",
    "CUtensorMapL2promotion: granularity of L2 fills from DRAM", [
  I32EnumAttrCase<"NONE", 0, "none">,
  I32EnumAttrCase<"L2_64B", 1, "l2_64b">,
  I32EnumAttrCase<"L2_128B", 2, "l2_128b">,
  I32EnumAttrCase<"L2_256B", 3, "l2_256b">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

def NVTMA_OOBFill : I32EnumAttr<"OOBFill",
    "CUtensorMapFloatOOBfill: value read out of bounds", [
  I32EnumAttrCase<"NONE", 0, "none">,
  I32EnumAttrCase<"NAN_REQUEST_ZERO_FMA", 1, "nan_request_zero_fma">,
]> {
  let cppNamespace = "::mlir::nvtma";
  let genSpecializedAttr = 0;
}

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

#endif // NVTMA_ENUMS
