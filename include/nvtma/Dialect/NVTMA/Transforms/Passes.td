//===- Passes.td - nvtma transformation passes -------------*- tablegen -*-===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The passes of the nvtma-to-ptx pipeline that are not the lowering itself,
// one job each, in pipeline order.
//
//===----------------------------------------------------------------------===//

#ifndef NVTMA_DIALECT_NVTMA_TRANSFORMS_PASSES
#define NVTMA_DIALECT_NVTMA_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def NVTMAAttachMissingTarget
    : Pass<"nvtma-attach-missing-target", "ModuleOp"> {
  let summary = "give every gpu.module without an NVVM target one";
  let description = [{
    Unlike upstream `nvvm-attach-target`, leaves a gpu.module that already
    has an `#nvvm.target` alone, so a target written in the IR wins over the
    pipeline's default. The options are checked against the chips and PTX
    versions LLVM's NVPTX backend selects (`nvtma/Target/TargetInfo.h`);
    empty `features` mean `+ptx86`, or the chip's oldest PTX ISA where that
    is newer.

    ```mlir
    // nvtma-opt --nvtma-attach-missing-target="chip=sm_100a"
    gpu.module @k [#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">] { ... }
    ```
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"", "target chip">,
    Option<"features", "features", "std::string", "\"\"",
           "target features: one +ptxNN (empty: the default PTX ISA)">,
    Option<"optLevel", "O", "int", "3", "NVVM opt level (0..3)">,
  ];
}

def NVTMACheckTarget : Pass<"nvtma-check-target", "ModuleOp"> {
  let summary = "diagnose what LLVM's NVPTX backend cannot select";
  let description = [{
    LLVM does not fail politely on a target it cannot serve: an unknown chip,
    a PTX version older than the chip needs or an instruction the chip lacks
    ends the process ("LLVM ERROR", "Cannot select"). This pass checks, before
    any lowering:
    - every gpu.module's `#nvvm.target`: a chip LLVM selects, one known
      `+ptxNN` at least as new as the chip needs (`nvtma/Target/TargetInfo.h`);
    - every gpu.module using nvtma: sm_90 or newer and PTX ISA 8.0; each op's
      needs (sm_100 atoms, `tensormap.replace` on an `a` chip, the tensormap
      proxy fences on PTX 8.3);
    - constructs upstream lowerings assert on: a non-positive or
      non-power-of-two `llvm.align`, shared memory allocated in a kernel body.

    ```mlir
    // error: chip 'sm_91a' is not one LLVM's NVPTX backend can select; supported: ...
    gpu.module @k [#nvvm.target<chip = "sm_91a">] { ... }
    ```
  }];
  let options = [
    Option<"sm", "sm", "unsigned", "0",
           "SM version to check gpu.modules without a target against (0: "
           "such a module using nvtma is an error)">,
    Option<"ptx", "ptx", "unsigned", "0",
           "PTX ISA version times 10 to assume (0: the target's)">,
  ];
}

def NVTMAFinalizeDescriptorParams
    : Pass<"nvtma-finalize-descriptor-params", "ModuleOp"> {
  let summary = "give descriptor parameters of llvm.func kernels their ABI";
  let description = [{
    convert-gpu-to-nvvm keeps only some argument attributes, so after it the
    descriptor parameters get `llvm.byval = !llvm.array<128 x i8>`,
    `llvm.align = 64` and `nvvm.grid_constant` here. grid_constant makes PTX
    use them in place (`cvta.param`) instead of copying them to local
    memory, where TMA cannot read them.
  }];
}

#endif // NVTMA_DIALECT_NVTMA_TRANSFORMS_PASSES
