// RUN: nvtma-opt %s -nvtma-attach-missing-target | FileCheck %s --check-prefix=DEFAULT
// RUN: nvtma-opt %s -nvtma-attach-missing-target="chip=sm_100f O=2" | FileCheck %s --check-prefix=FAMILY
// RUN: not nvtma-opt %s -nvtma-attach-missing-target="chip=sm_90a features=+ptx78" 2>&1 | FileCheck %s --check-prefix=OLD

// A gpu.module without an NVVM target gets the pass's; empty features mean
// +ptx86, or the chip's oldest PTX ISA where that is newer (sm_100f: +ptx88).
// DEFAULT: gpu.module @bare [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86">]
// FAMILY: gpu.module @bare [#nvvm.target<chip = "sm_100f", features = "+ptx88">]
gpu.module @bare {
}

// A target written in the IR wins.
// DEFAULT: gpu.module @own [#nvvm.target<chip = "sm_100a", features = "+ptx87">]
// FAMILY: gpu.module @own [#nvvm.target<chip = "sm_100a", features = "+ptx87">]
gpu.module @own [#nvvm.target<chip = "sm_100a", features = "+ptx87">] {
}

// OLD: error: nvtma-attach-missing-target: +ptx78 is too old for sm_90a, it needs +ptx80 or newer
