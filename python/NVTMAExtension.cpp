//===- NVTMAExtension.cpp - nvtma Python extension ------------------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Registration only: the dialect's ops come from ODS-generated Python, and
// nvtma's `_site_initialize_0` hands `register_dialects` to MLIR's Python
// core, so every Context knows nvtma, gpu, nvvm, llvm and the rest.
//
//===----------------------------------------------------------------------===//

#include "nvtma-c/Dialects.h"

#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

namespace nb = nanobind;

NB_MODULE(_nvtmaDialects, m) {
  m.doc() = "nvtma dialect registration";
  // Passes and pipelines go into the global registry once, at import.
  nvtmaRegisterAllPasses();

  m.def(
      "register_dialects",
      [](MlirDialectRegistry registry) { nvtmaRegisterAllDialects(registry); },
      nb::arg("registry"),
      "Adds nvtma and the dialects, interfaces, NVVM target and LLVM IR "
      "translations its lowering needs to `registry`.");

  auto nvtma = m.def_submodule("nvtma");
  nvtma.def(
      "register_dialect",
      [](MlirContext context, bool load) {
        MlirDialectHandle handle = mlirGetDialectHandle__nvtma__();
        mlirDialectHandleRegisterDialect(handle, context);
        if (load)
          mlirDialectHandleLoadDialect(handle, context);
      },
      nb::arg("context").none() = nb::none(), nb::arg("load") = true);
}
