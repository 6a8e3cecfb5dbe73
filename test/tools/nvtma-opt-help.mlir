// RUN: nvtma-opt --help | FileCheck %s

// Every nvtma pass and the pipeline are registered.
// CHECK: --convert-nvtma-to-nvvm
// CHECK: --nvtma-attach-missing-target
// CHECK: --nvtma-check-target
// CHECK: --nvtma-extern-dynamic-shared-memory
// CHECK: --nvtma-finalize-descriptor-params
// CHECK: --nvtma-materialize-descriptors
// CHECK: --nvtma-require-block-size
// CHECK: --nvtma-write-kernel-records
// CHECK: --nvtma-to-ptx
