// RUN: nvtma-opt %s -nvtma-attach-missing-target="link=/lib/a.bc,/lib/b.bc" | FileCheck %s
// RUN: not nvtma-opt %s -nvtma-attach-missing-target 2>&1 | FileCheck %s --check-prefix=NOLINK
// RUN: not nvtma-opt %s -nvtma-to-ptx="link=/lib/a.bc format=llvm" --mlir-print-ir-after=nvtma-attach-missing-target 2>&1 | FileCheck %s --check-prefix=PIPE

// A gpu.module that asks for device libraries (nvtma.link) gets the link
// option's bitcode in its target, which gpu-module-to-binary then loads;
// one that does not ask gets the plain target.
// CHECK: gpu.module @wants [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86", link = ["/lib/a.bc", "/lib/b.bc"]>]
// NOLINK: error: asks for device libraries nvtma.link = ["nvshmem"], but no bitcode was given to link (the pipeline's link option)
// PIPE: gpu.module @wants [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86", link = ["/lib/a.bc"]>]
// PIPE: error: File path: "/lib/a.bc" does not exist or is not a file.
gpu.module @wants attributes {nvtma.link = ["nvshmem"]} {
}

// CHECK: gpu.module @plain [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86">]
gpu.module @plain {
}
