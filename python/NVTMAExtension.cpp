//===- NVTMAExtension.cpp - nvtma Python extension ------------------------===//
//
// Part of the nvtma project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Registration: the dialect's ops come from ODS-generated Python, and
// nvtma's `_site_initialize_0` hands `register_dialects` to MLIR's Python
// core, so every Context knows nvtma, gpu, nvvm, llvm and the rest.
// Plus `lower_to_ptx`, nvtma.compile's screen -> target check -> parse ->
// pipeline -> PTX in one call through the C API: going through the Python IR
// objects instead imports the generated op classes of every dialect met on
// the way (builtin, gpu, arith: ~150 ms of a cold compile, and numpy with
// them). Nothing it is given may end the process: the input screen and the
// target table (both shared with nvtma-opt) run before MLIR and LLVM do.
//
//===----------------------------------------------------------------------===//

#include "nvtma-c/Dialects.h"

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/Dialect/GPU.h"
#include "mlir-c/Dialect/LLVM.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <string_view>

namespace nb = nanobind;

namespace {

void appendTo(MlirStringRef s, void *out) {
  static_cast<std::string *>(out)->append(s.data, s.length);
}

/// Collects the context's diagnostics as "loc: error: message" lines while
/// alive (and keeps them off stderr).
class DiagnosticCollector {
public:
  /// `withLocations` = false: messages only (for diagnostics on an unknown
  /// location, like those of a type built from Python).
  explicit DiagnosticCollector(MlirContext ctx, bool withLocations = true)
      : ctx(ctx), withLocations(withLocations) {
    id = mlirContextAttachDiagnosticHandler(ctx, handle, this, nullptr);
  }
  ~DiagnosticCollector() { mlirContextDetachDiagnosticHandler(ctx, id); }
  std::string text;

private:
  static MlirLogicalResult handle(MlirDiagnostic d, void *self) {
    auto *c = static_cast<DiagnosticCollector *>(self);
    c->add(d, 0);
    return mlirLogicalResultSuccess();
  }
  void add(MlirDiagnostic d, int depth) {
    if (!text.empty())
      text += "\n";
    text.append(depth * 2, ' ');
    if (withLocations) {
      std::string loc;
      mlirLocationPrint(mlirDiagnosticGetLocation(d), appendTo, &loc);
      if (loc.size() > 5 && loc.compare(0, 4, "loc(") == 0 &&
          loc.back() == ')')
        loc = loc.substr(4, loc.size() - 5);
      text += loc;
      switch (mlirDiagnosticGetSeverity(d)) {
      case MlirDiagnosticError: text += ": error: "; break;
      case MlirDiagnosticWarning: text += ": warning: "; break;
      case MlirDiagnosticNote: text += ": note: "; break;
      default: text += ": remark: "; break;
      }
    }
    mlirDiagnosticPrint(d, appendTo, &text);
    for (intptr_t i = 0, e = mlirDiagnosticGetNumNotes(d); i < e; ++i)
      add(mlirDiagnosticGetNote(d, i), depth + 1);
  }
  MlirContext ctx;
  bool withLocations;
  MlirDiagnosticHandlerID id;
};

/// Reads the opt level argument: a Python int (not a bool), or None (3,
/// where a gpu.module's own target may ask for another: `open` is set).
/// Out-of-range values are passed on as out of range, for the target check
/// to name.
int64_t readOptLevel(nb::handle h, std::string &repr, bool &open) {
  open = h.is_none();
  if (open)
    return 3;
  repr = nb::cast<std::string>(nb::repr(h));
  if (!nb::isinstance<nb::int_>(h) || nb::isinstance<nb::bool_>(h))
    return -1;
  try {
    return nb::cast<int64_t>(h);
  } catch (const nb::cast_error &) {
    return -1;
  } catch (const std::exception &) {
    return -1;
  }
}

/// What nvtmaCheckGPUModules reports: the library names, the files own
/// targets link, the error. Its callbacks run inside code built without
/// exceptions, so they catch (`lost`: one could not keep what it was given).
struct ModuleReport {
  std::vector<std::string> names, files, error;
  bool lost = false;
  template <std::vector<std::string> ModuleReport::*To>
  static void add(MlirStringRef s, void *self) {
    auto *r = static_cast<ModuleReport *>(self);
    try {
      (r->*To).emplace_back(s.data, s.length);
    } catch (...) {
      r->lost = true;
    }
  }
};

/// Screens `text`, checks the target, parses, checks the gpu.modules' own
/// targets and resolves the device libraries they link (`resolveLink`:
/// name -> bitcode path; `linkedFile`: told each file an own target links),
/// runs nvtma-to-ptx and returns the `nvtma.kernels` record (JSON) and every
/// gpu.binary object.
nb::tuple lowerToPtx(MlirContext ctx, const std::string &text,
                     const std::string &chip, const std::string &features,
                     nb::handle optLevelArg, const std::string &format,
                     nb::handle resolveLink, nb::handle linkedFile) {
  DiagnosticCollector diags(ctx);
  auto fail = [&](const char *stage) {
    throw nb::value_error((std::string(stage) + "\n" + diags.text).c_str());
  };
  // Before MLIR's parser sees it: nesting, literal length, index arrays.
  if (mlirLogicalResultIsFailure(nvtmaScreenInput(
          mlirStringRefCreate(text.data(), text.size()), appendTo,
          &diags.text)))
    fail("parse:");
  // Before LLVM sees it: chip, PTX version, opt level, format.
  std::string optRepr;
  bool levelOpen = false;
  int64_t optLevel = readOptLevel(optLevelArg, optRepr, levelOpen);
  if (optLevel < 0 || optLevel > 3) {
    diags.text = "opt level " + optRepr +
                 " is not one LLVM takes; supported: 0, 1, 2, 3";
    fail("target:");
  }
  if (mlirLogicalResultIsFailure(nvtmaVerifyPipelineOptions(
          mlirStringRefCreate(chip.data(), chip.size()),
          mlirStringRefCreate(features.data(), features.size()),
          mlirStringRefCreate(format.data(), format.size()), int(optLevel),
          appendTo, &diags.text)))
    fail("target:");
  // (loaded, so the verifier checks nvtma's attributes on any op)
  mlirContextGetOrLoadDialect(ctx, mlirStringRefCreateFromCString("nvtma"));
  MlirModule module = mlirModuleCreateParse(
      ctx, mlirStringRefCreate(text.data(), text.size()));
  if (mlirModuleIsNull(module))
    fail("parse:");
  struct ModuleGuard {
    MlirModule m;
    ~ModuleGuard() { mlirModuleDestroy(m); }
  } guard{module};
  // A gpu.module's own #nvvm.target wins over the options: it must agree.
  ModuleReport report;
  MlirLogicalResult check = nvtmaCheckGPUModules(
      mlirModuleGetOperation(module),
      mlirStringRefCreate(chip.data(), chip.size()),
      levelOpen ? -1 : int(optLevel), ModuleReport::add<&ModuleReport::names>,
      ModuleReport::add<&ModuleReport::files>,
      ModuleReport::add<&ModuleReport::error>, &report);
  if (report.lost)
    throw std::bad_alloc();
  if (mlirLogicalResultIsFailure(check)) {
    for (const std::string &line : report.error)
      diags.text += (diags.text.empty() ? "" : "\n") + line;
    fail("module:");
  }
  // Each library's bitcode path, from the caller, before LLVM reads any;
  // and each file a module's own target links, shown to the caller (what
  // either raises propagates).
  std::vector<std::string> link;
  for (const std::string &name : report.names) {
    if (resolveLink.is_none()) {
      diags.text = "the IR asks to link device library '" + name +
                   "' and no resolver was given";
      fail("module:");
    }
    nb::object path = resolveLink(name);
    try {
      link.push_back(nb::cast<std::string>(path));
    } catch (const std::exception &) {
      diags.text = "the bitcode path for device library '" + name +
                   "' is not a str of UTF-8 text";
      fail("module:");
    }
  }
  if (!linkedFile.is_none())
    for (const std::string &file : report.files)
      linkedFile(file);
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  struct PassManagerGuard {
    MlirPassManager pm;
    ~PassManagerGuard() { mlirPassManagerDestroy(pm); }
  } pmGuard{pm};
  // The options were checked above; the link paths go in as they are.
  std::vector<MlirStringRef> linkRefs;
  for (const std::string &path : link)
    linkRefs.push_back(mlirStringRefCreate(path.data(), path.size()));
  nvtmaAddNVTMAToPTXPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreate(chip.data(), chip.size()),
      mlirStringRefCreate(features.data(), features.size()),
      mlirStringRefCreate(format.data(), format.size()), int(optLevel),
      intptr_t(linkRefs.size()), linkRefs.data());
  MlirOperation op = mlirModuleGetOperation(module);
  if (mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(pm, op)))
    fail("lower:");
  std::string records;
  MlirAttribute rec = mlirOperationGetAttributeByName(
      op, mlirStringRefCreateFromCString("nvtma.kernels"));
  if (!mlirAttributeIsNull(rec) && mlirAttributeIsAString(rec)) {
    MlirStringRef v = mlirStringAttrGetValue(rec);
    records.assign(v.data, v.length);
  }
  nb::list objects;
  for (MlirOperation o = mlirBlockGetFirstOperation(mlirModuleGetBody(module));
       !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o)) {
    MlirStringRef name = mlirIdentifierStr(mlirOperationGetName(o));
    if (std::string_view(name.data, name.length) != "gpu.binary")
      continue;
    MlirAttribute objs = mlirOperationGetAttributeByName(
        o, mlirStringRefCreateFromCString("objects"));
    if (mlirAttributeIsNull(objs) || !mlirAttributeIsAArray(objs))
      continue;
    for (intptr_t i = 0, e = mlirArrayAttrGetNumElements(objs); i < e; ++i) {
      MlirAttribute obj = mlirArrayAttrGetElement(objs, i);
      if (!mlirAttributeIsAGPUObjectAttr(obj))
        continue;
      MlirStringRef bytes = mlirGPUObjectAttrGetObject(obj);
      objects.append(nb::bytes(bytes.data, bytes.length));
    }
  }
  return nb::make_tuple(records, objects);
}

MlirStringRef ref(const std::string &s) {
  return mlirStringRefCreate(s.data(), s.size());
}

/// !nvtma.tma_atom from its fields (nvtma.dialects.nvtma.tma_atom_type);
/// ValueError with the diagnostics when they do not make an atom.
MlirType tmaAtomType(MlirContext ctx, const std::string &kind,
                     MlirType elementType, const std::string &tmaFormat,
                     const std::vector<int64_t> &box,
                     const std::vector<int64_t> &tile,
                     const std::string &swizzle, const std::string &l2Promotion,
                     const std::string &interleave, const std::string &oobFill,
                     const std::vector<int64_t> &elementStrides,
                     unsigned multicast, unsigned ctaGroup,
                     const std::string &reduction,
                     const std::vector<int64_t> &lowerCorner,
                     const std::vector<int64_t> &upperCorner) {
  std::string text;
  {
    DiagnosticCollector diags(ctx, /*withLocations=*/false);
    MlirType t = nvtmaTmaAtomTypeGet(
        ctx, ref(kind), elementType, ref(tmaFormat), box.size(), box.data(),
        tile.size(), tile.data(), ref(swizzle), ref(l2Promotion),
        ref(interleave), ref(oobFill), elementStrides.size(),
        elementStrides.data(), multicast, ctaGroup, ref(reduction),
        lowerCorner.size(), lowerCorner.data(), upperCorner.size(),
        upperCorner.data());
    if (!mlirTypeIsNull(t))
      return t;
    text = diags.text;
  }
  throw nb::value_error(text.c_str());
}

} // namespace

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

  // Upstream types and attributes the DSL builds that MLIR's Python
  // bindings do not construct (built here rather than parsed from text).
  m.def(
      "workgroup_address_space",
      [](MlirContext ctx) { return nvtmaGPUWorkgroupAddressSpaceGet(ctx); },
      nb::arg("context").none() = nb::none(), "#gpu.address_space<workgroup>");
  m.def(
      "mbarrier_group_type",
      [](unsigned n, MlirContext ctx) {
        return nvtmaNVGPUMBarrierGroupTypeGet(ctx, n);
      },
      nb::arg("num_barriers"), nb::arg("context").none() = nb::none(),
      "!nvgpu.mbarrier.group of `num_barriers` in workgroup memory");
  m.def(
      "mbarrier_token_type",
      [](MlirContext ctx) { return nvtmaNVGPUMBarrierTokenTypeGet(ctx); },
      nb::arg("context").none() = nb::none(), "!nvgpu.mbarrier.token");
  m.def(
      "mma_shape",
      [](int m, int n, int k, MlirContext ctx) {
        return nvtmaNVVMMMAShapeAttrGet(ctx, m, n, k);
      },
      nb::arg("m"), nb::arg("n"), nb::arg("k"),
      nb::arg("context").none() = nb::none(), "#nvvm.shape<m, n, k>");
  m.def(
      "ld_st_matrix_shape",
      [](int m, int n, MlirContext ctx) {
        return nvtmaNVVMLdStMatrixShapeAttrGet(ctx, m, n);
      },
      nb::arg("m"), nb::arg("n"), nb::arg("context").none() = nb::none(),
      "#nvvm.ld_st_matrix_shape<m, n>");
  m.def(
      "loop_unroll_annotation",
      [](int64_t count, MlirContext ctx) {
        return nvtmaLLVMLoopUnrollAnnotationGet(ctx, count);
      },
      nb::arg("count"), nb::arg("context").none() = nb::none(),
      "#llvm.loop_annotation<unroll = ...>: count 0 unrolls fully, 1 "
      "disables unrolling, n > 1 unrolls n times");
  m.def(
      "llvm_void_type",
      [](MlirContext ctx) { return mlirLLVMVoidTypeGet(ctx); },
      nb::arg("context").none() = nb::none(), "!llvm.void");
  m.def(
      "llvm_function_type",
      [](MlirType result, const std::vector<MlirType> &params, bool varArg) {
        return mlirLLVMFunctionTypeGet(result, intptr_t(params.size()),
                                       params.data(), varArg);
      },
      nb::arg("result"), nb::arg("params"), nb::arg("var_arg") = false,
      "!llvm.func<result (params...)>");

  m.def(
      "attribute_names",
      [](MlirContext ctx) {
        auto str = [](MlirStringRef s) { return std::string(s.data, s.length); };
        nb::dict names;
        names["container_module"] = str(nvtmaGPUContainerModuleAttrName());
        names["known_cluster_size"] = str(nvtmaGPUKnownClusterSizeAttrName(ctx));
        names["dynamic_smem"] = str(nvtmaDynamicSmemAttrName());
        names["pdl"] = str(nvtmaPdlAttrName());
        names["max_grid"] = str(nvtmaMaxGridAttrName());
        names["unsigned"] = str(nvtmaUnsignedArgAttrName());
        names["link"] = str(nvtmaLinkAttrName());
        names["loop_annotation"] = str(nvtmaLLVMLoopAnnotationAttrName(ctx));
        return names;
      },
      nb::arg("context").none() = nb::none(),
      "The attribute names the kernel language sets, from the dialects that "
      "define them: container_module, known_cluster_size, dynamic_smem, pdl, "
      "max_grid, unsigned, link (a gpu.module's), loop_annotation.");

  m.def("lower_to_ptx", &lowerToPtx, nb::arg("context"), nb::arg("text"),
        nb::arg("chip"), nb::arg("features") = "",
        nb::arg("opt_level").none() = 3, nb::arg("format") = "isa",
        nb::arg("resolve_link").none() = nb::none(),
        nb::arg("linked_file").none() = nb::none(),
        "Screens and parses `text`, checks its gpu.modules' own #nvvm.target "
        "against `chip` and `opt_level` (None: 3, or a module's own level), "
        "asks `resolve_link(name)` for the LLVM bitcode path (a str) of each "
        "device library a gpu.module's nvtma.link names and calls "
        "`linked_file(path)` for each file an own target's link lists, "
        "before LLVM reads any, runs nvtma-to-ptx for the target, returns "
        "(nvtma.kernels JSON, [gpu objects]). Raises ValueError whose first "
        "line is the stage: 'parse:' (also input over the nesting / literal "
        "bounds), 'target:' (a chip, PTX version, opt level or format LLVM "
        "cannot serve), 'module:' (a gpu.module refused: its own target "
        "disagrees, or a library cannot be resolved) or 'lower:'; the "
        "diagnostics "
        "follow. What the callbacks raise propagates.");

  m.def("tma_atom_type", &tmaAtomType, nb::arg("context"), nb::arg("kind"),
        nb::arg("element_type"), nb::arg("tma_format"), nb::arg("box"),
        nb::arg("tile"), nb::arg("swizzle"), nb::arg("l2_promotion"),
        nb::arg("interleave"), nb::arg("oob_fill"),
        nb::arg("element_strides"), nb::arg("multicast"),
        nb::arg("cta_group"), nb::arg("reduction"), nb::arg("lower_corner"),
        nb::arg("upper_corner"),
        "!nvtma.tma_atom from its fields (empty tma_format / tile / "
        "element_strides: the default); ValueError with the diagnostics.");
  m.def(
      "tma_atom_bytes",
      [](MlirType t) {
        if (!nvtmaTypeIsATmaAtom(t))
          throw nb::type_error("not an !nvtma.tma_atom");
        return nb::make_tuple(nvtmaTmaAtomTypeGetBoxBytes(t),
                              nvtmaTmaAtomTypeGetTileBytes(t));
      },
      nb::arg("type"),
      "(box bytes, tile bytes) of an !nvtma.tma_atom: what one TMA "
      "instruction and one nvtma.copy move.");

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
