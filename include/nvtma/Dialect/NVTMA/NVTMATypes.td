//===- NVTMATypes.td - nvtma types -------------------------*- tablegen -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_TYPES
#define NVTMA_TYPES

include "mlir/IR/AttrTypeBase.td"
include "nvtma/Dialect/NVTMA/NVTMAEnums.td"

def NVTMA_TmaAtomType : TypeDef<NVTMA_Dialect, "TmaAtom"> {
  let mnemonic = "tma_atom";
  let summary = "a TMA copy atom: the static half of a tensor map";
  let description = [{
    Everything about a TMA copy that is known at compile time: the copy kind,
    the element type, and every static field of the descriptor the copy
    uses. At run time a value of this type is the descriptor itself (a
    128-byte `__grid_constant__` kernel parameter, or a descriptor in global
    memory); the global address, dims and strides are filled in from the
    tensor it was made from.

    ```mlir
    !nvtma.tma_atom<load, f16, box = [64, 64], swizzle = swizzle_128b, l2_promotion = l2_256b>
    !nvtma.tma_atom<load_multicast, bf16, box = [32, 64], tile = [64, 64], multicast = 2>
    !nvtma.tma_atom<reduce, f32, box = [32, 32], reduction = max>
    !nvtma.tma_atom<im2col_load, f16, box = [128, 64], lower_corner = [-1, -1], upper_corner = [-1, -1]>
    ```

    Fields and defaults (a field equal to its default is not printed):
    `tma_format` (the descriptor data type; defaults from the element type,
    may differ like CuTe's `internal_type`), `box` (elements per TMA
    instruction, outermost first), `tile` (the shared-memory tile one
    `nvtma.copy` fills, a multiple of `box`; default `box`), `swizzle`
    (`none`), `l2_promotion` (`l2_128b`, what CuTe, Triton and TileLang
    hard-code), `interleave` (`none`), `oob_fill` (`none`),
    `element_strides` (all 1), `multicast` (1), `cta_group` (1),
    `reduction` (`add`, reduce atoms only), and for im2col atoms
    `lower_corner` / `upper_corner` (W, H, D offsets) with `box` =
    [pixels per column, channels per pixel].
  }];
  let parameters = (ins
    "CopyKind":$kind,
    "Type":$elementType,
    "TmaFormat":$tmaFormat,
    ArrayRefParameter<"int64_t">:$box,
    ArrayRefParameter<"int64_t">:$tile,
    "Swizzle":$swizzle,
    "L2Promotion":$l2Promotion,
    "Interleave":$interleave,
    "OOBFill":$oobFill,
    ArrayRefParameter<"int64_t">:$elementStrides,
    "unsigned":$multicast,
    "unsigned":$ctaGroup,
    "ReductionKind":$reduction,
    ArrayRefParameter<"int64_t">:$lowerCorner,
    ArrayRefParameter<"int64_t">:$upperCorner
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True for atoms whose copies read global memory into shared memory.
    bool isLoad() const;
    /// True for im2col atoms.
    bool isIm2col() const;
    /// True for atoms copying with .multicast::cluster.
    bool isMulticast() const;
    /// Rank of the global tensor the descriptor describes.
    unsigned getTensorRank() const;
    /// Bytes one TMA instruction of this atom moves.
    int64_t getBoxBytes() const;
    /// Bytes one nvtma.copy with this atom moves (the whole tile).
    int64_t getTileBytes() const;
    /// The descriptor format an element type maps to by default.
    static ::std::optional<TmaFormat> getDefaultFormat(::mlir::Type elementType);
    /// Smallest sm version the atom needs (90 or 100).
    unsigned getRequiredSM() const;
  }];
}

#endif // NVTMA_TYPES
