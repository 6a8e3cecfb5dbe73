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

    A gpu.module that asks for device libraries (`nvtma.link = ["nvshmem"]`,
    set by nvtma.nvshmem's helpers) gets `link = [...]`: the `link` option's
    LLVM bitcode, which gpu-module-to-binary links in before LLVM makes PTX.
    Such a module without `link` files, or with a target of its own, is an
    error.

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
    ListOption<"link", "link", "std::string",
               "LLVM bitcode for gpu.modules marked nvtma.link">,
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
      non-power-of-two `llvm.align`, shared memory allocated in a kernel body,
      a memref whose element count overflows int64; a vector, LLVM array or
      LLVM struct of more than 16384 scalars, an integer wider than 128 bits,
      f80 or f128, a conversion between a float and an integer wider than 64
      bits (instruction selection asserts or needs a library call);
      workgroup attributions past 48 KiB (static shared memory; a size that
      wraps at 2^32 bytes was taken by ptxas).
    - symbol names NVPTX cannot print ("Symbol name with unsupported
      characters"): ASCII letters, digits, `_`, `$` (and `.` but for kernels),
      not starting with a digit; no definition in the `llvm.` namespace;
    - function signatures (parameters and results of gpu.func, func.func and
      llvm.func in a gpu.module) of types convert-gpu-to-nvvm has no LLVM
      form for (a TMA atom, an mbarrier group, a tensor, a tuple), which it
      reported only as "failed to legalize operation".

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
  // The signature check's LLVMTypeConverter loads the LLVM dialect.
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def NVTMAMaterializeDescriptors
    : Pass<"nvtma-materialize-descriptors", "ModuleOp"> {
  let summary = "turn each nvtma.make_tiled_tma_atom into a kernel parameter";
  let description = [{
    A TMA descriptor is built on the host and passed by value. Each
    `nvtma.make_tiled_tma_atom` of a `gpu.func` kernel becomes a parameter
    appended to the kernel (one per distinct tensor argument and atom type)
    that carries a typed `#nvtma.descriptor<binds = N, atom = ...>`; the
    kernel lists them in `nvtma.descriptor_params`, which outlives
    convert-gpu-to-nvvm. Uses of the atom become uses of the parameter.

    ```mlir
    gpu.func @k(%A: memref<256x256xf16>,
                %arg1: !llvm.ptr {llvm.align = 64 : i64,
                  nvtma.descriptor = #nvtma.descriptor<binds = 0, atom = !nvtma.tma_atom<load, f16, box = [64, 64]>>})
        kernel attributes {nvtma.descriptor_params = [#nvtma.descriptor<binds = 0, atom = ...>]}
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def NVTMAWriteKernelRecords
    : Pass<"nvtma-write-kernel-records", "ModuleOp"> {
  let summary = "write the kernel records the runtime launches from";
  let description = [{
    Writes the module attribute `nvtma.kernels` (JSON; the runtime's
    kernels.json) from typed IR only: each `gpu.func` kernel's signature,
    the `#nvtma.descriptor` of each descriptor parameter (every static field
    of the atom, the argument it binds, and the bytes encoded with address 0
    when the tensor is fully static) and its launch configuration:

    ```json
    "launch": {"block": [128, 1, 1], "cluster": [2, 1, 1], "smem": 9216}
    ```

    from `known_block_size`, `known_cluster_size` (null when absent) and
    `nvtma.dynamic_smem` (0 when absent). A block of more than 1024 threads
    or a cluster of more than 16 CTAs is an error. Runs while the kernels
    are still `gpu.func`s: the records describe the signature the caller
    sees, which convert-gpu-to-nvvm expands.

    A memref parameter's record has `"align"` (bytes) when the kernel's
    accesses assume an alignment of its address and, being offsets of whole
    strides, of its dynamic strides in bytes: the largest `alignment` of an
    access through a view of it (`vector.load` / `vector.store`...), the
    size of a `nvtma.cp_async` from it, 16 for `nvtma.bulk_copy` or
    `nvtma.update_tma_descriptor` of it (32 for the atoms the driver asks
    32 of) and 64 for a descriptor kept in it (reached through
    `nvtma.address_of`). The launch checks it, as a misaligned access
    faults the context.

    A memref parameter that is the tensor of `nvtma.update_tma_descriptor`
    (as is or through `memref.cast`, `memref.assume_alignment`,
    `memref.memory_space_cast`, which keep its shape and strides) has
    `"tensormaps"`: the static fields of each atom it is written into, as a
    descriptor parameter lists them. tensormap.replace writes its address,
    dims and byte strides on the device, where no driver checks them: the
    launch runs the driver's rules on them. A view that computes other dims
    or strides is not followed.
  }];
}

def NVTMAFinalizeDescriptorParams
    : Pass<"nvtma-finalize-descriptor-params", "ModuleOp"> {
  let summary = "give descriptor parameters of llvm.func kernels their ABI";
  let description = [{
    convert-gpu-to-nvvm drops argument attributes it does not know, so after
    it the descriptor parameters (the trailing parameters a kernel's
    `nvtma.descriptor_params` lists, each an `!llvm.ptr` with
    `llvm.align = 64`) get `llvm.byval = !llvm.array<128 x i8>` and
    `nvvm.grid_constant` here. grid_constant makes PTX use them in place
    (`cvta.param`) instead of copying them to local memory, where TMA cannot
    read them.
  }];
}

def NVTMARequireBlockSize : Pass<"nvtma-require-block-size", "ModuleOp"> {
  let summary = "a kernel's known block size becomes .reqntid";
  let description = [{
    convert-gpu-to-nvvm turns `known_block_size` into `nvvm.maxntid`
    (`.maxntid`, an upper bound). nvtma kernels are built for exactly that
    block, the launch "block" of their record: this pass replaces it with
    `nvvm.reqntid` (`.reqntid`); ptxas refuses both on one kernel.
    (`known_cluster_size` already becomes `nvvm.cluster_dim`,
    `.reqnctapercluster`.)
  }];
}

def NVTMAExternDynamicSharedMemory
    : Pass<"nvtma-extern-dynamic-shared-memory", "ModuleOp"> {
  let summary = "make gpu.dynamic_shared_memory PTX's extern shared array";
  let description = [{
    convert-gpu-to-nvvm lowers `gpu.dynamic_shared_memory` to an internal
    zero-length shared global, which NVPTX demotes to a static `.shared`
    variable: the buffer then overlaps the kernel's static shared memory
    (its mbarriers) and runs past the allocation. This pass gives it
    external linkage (`.extern .shared .align 1024 .b8
    __dynamic_shmem__0[]`) and 1024-byte alignment, what a 128-byte-swizzled
    TMA tile needs.
  }];
}

#endif // NVTMA_DIALECT_NVTMA_TRANSFORMS_PASSES
