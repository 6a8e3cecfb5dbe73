// RUN: not nvtma-opt %s -nvtma-attach-missing-target="link=/lib/a.bc" 2>&1 | FileCheck %s

// A module with a target of its own and nvtma.link is refused: the link
// files belong in that target.
// CHECK: error: has its own #nvvm.target and nvtma.link = ["nvshmem"]: list the bitcode in that target's link parameter instead
gpu.module @own [#nvvm.target<chip = "sm_90a">] attributes {nvtma.link = ["nvshmem"]} {
}
