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

// `[1, 2, 3]`: a list of ints in brackets, so that it can stand in a
// struct() of `key = value` fields.
class NVTMA_IntListParameter<string desc> : ArrayRefParameter<"int64_t", desc> {
  let parser = "::mlir::nvtma::parseIntList($_parser)";
  let printer = "::mlir::nvtma::printIntList($_printer, $_self)";
}
class NVTMA_OptionalIntListParameter<string desc>
    : OptionalArrayRefParameter<"int64_t", desc> {
  let parser = "::mlir::nvtma::parseIntList($_parser)";
  let printer = "::mlir::nvtma::printIntList($_printer, $_self)";
}

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
  // The storage holds the minimal spelling: a field equal to its default
  // (including the defaults that depend on other fields: tma_format from the
  // element type, tile = box, element strides all 1) is stored as absent, by
  // the one builder, so every spelling of an atom is one type.
  let parameters = (ins
    "CopyKind":$kind,
    "Type":$elementType,
    OptionalParameter<"std::optional<TmaFormat>">:$tma_format,
    NVTMA_IntListParameter<"elements per TMA instruction, outermost first">:$box,
    NVTMA_OptionalIntListParameter<"the tile one nvtma.copy fills (absent: box)">:$tile,
    DefaultValuedParameter<"Swizzle", "Swizzle::NONE">:$swizzle,
    DefaultValuedParameter<"L2Promotion", "L2Promotion::L2_128B">:$l2_promotion,
    DefaultValuedParameter<"Interleave", "Interleave::NONE">:$interleave,
    DefaultValuedParameter<"OOBFill", "OOBFill::NONE">:$oob_fill,
    NVTMA_OptionalIntListParameter<"element strides (absent: all 1)">:$element_strides,
    DefaultValuedParameter<"unsigned", "1">:$multicast,
    DefaultValuedParameter<"unsigned", "1">:$cta_group,
    DefaultValuedParameter<"ReductionKind", "ReductionKind::ADD">:$reduction,
    NVTMA_OptionalIntListParameter<"im2col W, H, D lower corner">:$lower_corner,
    NVTMA_OptionalIntListParameter<"im2col W, H, D upper corner">:$upper_corner
  );
  let assemblyFormat = [{
    `<` $kind `,` $elementType `,` struct($tma_format, $box, $tile, $swizzle,
        $l2_promotion, $interleave, $oob_fill, $element_strides, $multicast,
        $cta_group, $reduction, $lower_corner, $upper_corner) `>`
  }];
  let skipDefaultBuilders = 1;
  let builders = [
    TypeBuilder<(ins "CopyKind":$kind, "Type":$elementType,
        "std::optional<TmaFormat>":$tma_format, "ArrayRef<int64_t>":$box,
        "ArrayRef<int64_t>":$tile, "Swizzle":$swizzle,
        "L2Promotion":$l2_promotion, "Interleave":$interleave,
        "OOBFill":$oob_fill, "ArrayRef<int64_t>":$element_strides,
        "unsigned":$multicast, "unsigned":$cta_group,
        "ReductionKind":$reduction, "ArrayRef<int64_t>":$lower_corner,
        "ArrayRef<int64_t>":$upper_corner), [{
      // The canonical (minimal) spelling: defaults are stored as absent.
      if (tma_format && tma_format == getDefaultFormat(elementType))
        tma_format = std::nullopt;
      if (tile == box)
        tile = {};
      // (Only a list of the right length: the verifier names a wrong one.)
      size_t rank = lower_corner.empty() ? box.size() : lower_corner.size() + 2;
      if (element_strides.size() == rank &&
          llvm::all_of(element_strides, [](int64_t s) { return s == 1; }))
        element_strides = {};
      return $_get($_ctxt, kind, elementType, tma_format, box, tile, swizzle,
                   l2_promotion, interleave, oob_fill, element_strides,
                   multicast, cta_group, reduction, lower_corner, upper_corner);
    }]>
  ];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The descriptor's data type: tma_format, or the element type's default.
    TmaFormat getFormat() const;
    /// The shape one nvtma.copy fills: tile, or the box.
    ::llvm::ArrayRef<int64_t> getTileShape() const;
    /// The element strides, one per tensor dim (all 1 when absent).
    ::llvm::SmallVector<int64_t> getElementStridesOrOnes() const;
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
