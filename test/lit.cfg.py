"""lit configuration for nvtma.

Works from a CMake build tree (lit.site.cfg.py sets the tool dirs) and from an
installed package (the pytest driver sets NVTMA_OPT / FILECHECK_DIR)."""

import os
import shutil

import lit.formats

config.name = "nvtma"
# PyPI's lit runs RUN lines with its internal shell.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = getattr(config, "nvtma_obj_root", None) and os.path.join(
    config.nvtma_obj_root, "test") or os.environ.get("NVTMA_LIT_EXEC_ROOT", config.test_source_root)


def _find(tool, env, dirs):
    path = os.environ.get(env)
    if path:
        return path
    for d in dirs:
        if d and os.path.exists(os.path.join(d, tool)):
            return os.path.join(d, tool)
    found = shutil.which(tool)
    if not found:
        lit_config.fatal(f"cannot find {tool}; set {env}")
    return found


tool_dirs = [getattr(config, "nvtma_tools_dir", None), getattr(config, "llvm_tools_dir", None),
             os.environ.get("FILECHECK_DIR")]
nvtma_opt = _find("nvtma-opt", "NVTMA_OPT", tool_dirs)
for tool in ("FileCheck", "not", "count"):
    config.substitutions.append((r"\b%s\b" % tool if tool != "not" else r"(?<![\w-])not(?=\s)",
                                 _find(tool, tool.upper() + "_BIN", tool_dirs)))
config.substitutions.append(("nvtma-opt", nvtma_opt))
ptxas = shutil.which("ptxas")
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
cuobjdump = shutil.which("cuobjdump") or os.environ.get("CUOBJDUMP")
if cuobjdump:
    config.available_features.add("cuobjdump")
    config.substitutions.append(("%cuobjdump", cuobjdump))
config.environment["PATH"] = os.pathsep.join(
    [d for d in tool_dirs if d] + [config.environment.get("PATH", os.environ.get("PATH", ""))])
