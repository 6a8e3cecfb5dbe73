"""Modules imported on first use, so that the DSL modules import (and kernels
defined with them stay loadable) where the MLIR extension is not installed,
e.g. on a GPU machine that only runs ahead-of-time builds."""

import importlib


class LazyModule:
    def __init__(self, name: str):
        self.__dict__["_name"] = name

    def __getattr__(self, attr):
        mod = importlib.import_module(self.__dict__["_name"])
        return getattr(mod, attr)

    def __repr__(self):
        return f"<lazy module {self.__dict__['_name']}>"


def lazy(name: str) -> LazyModule:
    return LazyModule(name)
