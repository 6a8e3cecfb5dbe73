// The nvtma-to-ptx pipeline checks its options against the chips, PTX
// versions and opt levels LLVM's NVPTX backend takes before any pass runs:
// LLVM ends the process on what it cannot serve (issue 16).
// RUN: not nvtma-opt %s --nvtma-to-ptx="chip=sm_91a" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: nvtma-to-ptx: chip 'sm_91a' is not one LLVM's NVPTX backend can select; supported: {{.*}}sm_90, sm_90a, sm_100, sm_100a, sm_100f,
// RUN: not nvtma-opt %s --nvtma-to-ptx="chip=sm_100f features=+ptx86" 2>&1 | FileCheck %s --check-prefix=PTX
// PTX: error: nvtma-to-ptx: +ptx86 is too old for sm_100f, it needs +ptx88 or newer; supported: +ptx88, +ptx90
// RUN: not nvtma-opt %s --nvtma-to-ptx="O=4" 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: error: nvtma-to-ptx: opt level 4 is not one LLVM takes; supported: 0, 1, 2, 3
// RUN: not nvtma-opt %s --nvtma-to-ptx="O=-1" 2>&1 | FileCheck %s --check-prefix=NEG
// NEG: error: nvtma-to-ptx: opt level -1 is not one LLVM takes
// RUN: not nvtma-opt %s --nvtma-to-ptx="format=cubin" 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: nvtma-to-ptx: format 'cubin' is not one gpu-module-to-binary writes; supported: isa, bin, fatbin, llvm, offloading
// RUN: not nvtma-opt %s --nvtma-attach-missing-target="chip=sm_92" 2>&1 | FileCheck %s --check-prefix=ATTACH
// ATTACH: error: nvtma-attach-missing-target: chip 'sm_92' is not one LLVM's NVPTX backend can select

// A chip LLVM 22 selects gets the PTX version it needs by default.
// RUN: nvtma-opt %s --nvtma-to-ptx="chip=sm_100f" | FileCheck %s --check-prefix=FAMILY
// FAMILY: #nvvm.target<O = 3, chip = "sm_100f", features = "+ptx88">
// FAMILY-SAME: .version 8.8
// FAMILY-SAME: .target sm_100f
// RUN: nvtma-opt %s --nvtma-to-ptx="chip=sm_110a O=0" | FileCheck %s --check-prefix=THOR
// THOR: #nvvm.target<O = 0, chip = "sm_110a", features = "+ptx90">
// THOR-SAME: .target sm_110a
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}
