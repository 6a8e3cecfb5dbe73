//===- NVTMAAttrs.td - nvtma attributes --------------------*- tablegen -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_ATTRS
#define NVTMA_ATTRS

include "mlir/IR/AttrTypeBase.td"
include "nvtma/Dialect/NVTMA/NVTMATypes.td"

def NVTMA_DescriptorAttr : AttrDef<NVTMA_Dialect, "Descriptor"> {
  let mnemonic = "descriptor";
  let summary = "a kernel parameter that is a TMA descriptor";
  let description = [{
    Marks a `gpu.func` parameter that `nvtma-materialize-descriptors` made
    from an `nvtma.make_tiled_tma_atom`: the launcher encodes the 128-byte
    descriptor of kernel argument `binds` (a global memref) with the static
    fields of `atom`, and passes it by value. `nvtma-write-kernel-records`
    and `nvtma-finalize-descriptor-params` read it.

    ```mlir
    gpu.func @k(%A: memref<256x256xf16>,
                %d: !llvm.ptr {llvm.align = 64 : i64,
                               nvtma.descriptor = #nvtma.descriptor<binds = 0, atom = !nvtma.tma_atom<load, f16, box = [64, 64]>>}) kernel
    ```
  }];
  let parameters = (ins "unsigned":$binds, "TmaAtomType":$atom);
  let assemblyFormat = "`<` `binds` `=` $binds `,` `atom` `=` qualified($atom) `>`";
}

#endif // NVTMA_ATTRS
