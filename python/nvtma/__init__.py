"""nvtma: an MLIR dialect, lowering and Python DSL for NVIDIA's Tensor Memory
Accelerator, with every field of the TMA descriptor first-class.

Importing nvtma is cheap: the MLIR extension, the compiler and the runtime
load on first use (``nvtma.compile``, ``nvtma.runtime``, ``nvtma.tensormap``,
``nvtma.ir`` ...).
"""

import importlib

__version__ = "0.1.0"

# name -> (module, attribute or None)
_LAZY = {
    "tensormap": ("nvtma.tensormap", None),
    "runtime": ("nvtma.runtime", None),
    "compiler": ("nvtma.compiler", None),
    "cpasync": ("nvtma.cpasync", None),
    "lang": ("nvtma.lang", None),
    "dsl": ("nvtma.dsl", None),
    "jit": ("nvtma.jit", None),
    "autotune": ("nvtma.autotune", None),  # a callable module: nvtma.autotune(configs=..., key=...)
    "compile": ("nvtma.compiler", "compile"),
    "CompiledModule": ("nvtma.compiler", "CompiledModule"),
    "CompileError": ("nvtma.compiler", "CompileError"),
    "kernel": ("nvtma.dsl", "kernel"),
    "Tensor": ("nvtma.dsl", "Tensor"),
    "TensorMapError": ("nvtma.tensormap", "TensorMapError"),
    "LaunchError": ("nvtma.runtime", "LaunchError"),
}

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'nvtma' has no attribute {name!r}") from None
    mod = importlib.import_module(module)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
