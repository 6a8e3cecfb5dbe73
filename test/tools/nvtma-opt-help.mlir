// RUN: nvtma-opt --help | FileCheck %s

// CHECK: --convert-nvtma-to-nvvm
// CHECK: --nvtma-finalize-descriptor-params
// CHECK: --nvtma-to-ptx
