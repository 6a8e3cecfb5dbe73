"""nvtma.jit: specialization, compile once, memo in memory and on disk,
launch; torch custom-op registration and its fake implementation.

The DSL kernel object is faked here after contracts.md item 2 (signature(),
constants(), build(param_types=..., **consts)), building the IR of
nvtma.kernels.tile_copy for the requested shape and element type."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from nvtma.runtime import LaunchError

HERE = Path(__file__).resolve().parent

HAVE_COMPILER = True
try:
    import nvtma._mlir_libs._nvtmaDialects  # noqa: F401
except Exception:
    HAVE_COMPILER = False
needs_compiler = pytest.mark.skipif(not HAVE_COMPILER, reason="needs the MLIR extension")


@dataclass(frozen=True)
class Tensor:  # dsl.Tensor
    dtype: str | None
    shape: tuple | None


class Int32:  # dsl.Int32
    pass


@dataclass
class Built:
    ir: str
    name: str
    block: tuple
    cluster: tuple | None
    smem_bytes: int


def copy_body(x, y, *, BOX=(64, 64)):
    """The 'function' of the fake kernel (its file is the identity on disk)."""


class FakeKernel:
    arch = "sm_90a"
    ptx = None

    def __init__(self, shape=(256, 256), dtype=None, name="tile_copy"):
        self.name = name
        self.fn = copy_body
        self.shape = shape
        self.dtype = dtype
        self.builds = []

    def signature(self):
        return [("x", Tensor(self.dtype, self.shape)), ("y", Tensor(self.dtype, self.shape))]

    def constants(self):
        return ["BOX"]

    def build(self, param_types=None, **consts):
        from nvtma import kernels as K
        self.builds.append((param_types, consts))
        t = param_types[0]
        spec = K.tile_copy(t.shape, t.dtype, tuple(consts.get("BOX", (64, 64))))
        return Built(spec.ir, spec.name, spec.block, None, 0)


class Fake:
    def __init__(self, shape=(256, 256), typestr="<f2", ptr=0x7F0000000000):
        self.__cuda_array_interface__ = dict(data=(ptr, False), shape=tuple(shape), typestr=typestr,
                                             strides=None, version=3)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(tmp_path / "cache"))
    from nvtma import jit
    jit._memo.clear()
    for k in jit.stats:
        jit.stats[k] = 0


def test_specialization_from_the_arguments():
    from nvtma import jit
    k = FakeKernel()
    types, key = jit.specialize(k, (Fake(), Fake()), {"BOX": [32, 32]})
    assert types[0] == Tensor("f16", (256, 256)) and key[1] == (("BOX", ("tuple", ("int", 32), ("int", 32))),)
    # constants by type and value: 0.0 and -0.0, 1 and 1.0 and True key apart (equal values shared a module)
    keys = {jit.specialize(k, (Fake(), Fake()), {"BOX": v})[1] for v in (0.0, -0.0, 1, 1.0, True, (1, 2), [1, 2])}
    assert len(keys) == 6
    _, key2 = jit.specialize(k, (Fake(typestr="<f4"), Fake(typestr="<f4")), {})
    assert key2 != key and key2[0][0] == ("tensor", "f32", (256, 256))
    with pytest.raises(LaunchError) as e:
        jit.specialize(k, (Fake((128, 256)), Fake()), {})
    assert e.value.rule == "shape" and e.value.arg == "x"
    with pytest.raises(LaunchError) as e:
        jit.specialize(k, (Fake(), Fake()), {"BM": 64})
    assert e.value.rule == "constant"
    with pytest.raises(LaunchError) as e:
        jit.specialize(k, (Fake(),), {})
    assert e.value.rule == "arg-count"
    anyshape = FakeKernel(shape=None)   # shape=None: the whole shape from the argument
    t, _ = jit.specialize(anyshape, (Fake((4, 8, 16)), Fake((4, 8, 16))), {})
    assert t[0].shape == (4, 8, 16)
    dyn = FakeKernel(shape=(None, 256))  # None entries: dynamic dims
    t, _ = jit.specialize(dyn, (Fake((100, 256)), Fake((100, 256))), {})
    assert t[0].shape == (None, 256)
    typed = FakeKernel(dtype="bf16")
    with pytest.raises(LaunchError) as e:
        jit.specialize(typed, (Fake(typestr="<f4"), Fake()), {})
    assert e.value.rule == "dtype"


@needs_compiler
def test_compiles_once_per_specialization():
    from nvtma import jit
    k = FakeKernel()
    args = (Fake(), Fake())
    for _ in range(3):
        types, key = jit.specialize(k, args, {})
        rk, mod = jit.compiled(k, types, key, {})
    assert len(k.builds) == 1 and jit.stats["memory_hits"] == 2
    assert rk.rec_block == (128, 1, 1), "the launch record is filled from the built kernel"
    types, key = jit.specialize(k, args, {"BOX": (32, 32)})
    jit.compiled(k, types, key, {"BOX": (32, 32)})
    assert len(k.builds) == 2


CHILD = """
import json, sys
sys.path.insert(0, {here!r})
import test_jit as T
from nvtma import jit
k = T.FakeKernel()
types, key = jit.specialize(k, (T.Fake(), T.Fake()), {{}})
rk, mod = jit.compiled(k, types, key, {{}})
print(json.dumps(dict(jit.stats, kernels=list(mod.kernels))))
"""


@needs_compiler
def test_disk_memo_across_processes(tmp_path):
    env = dict(os.environ, NVTMA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(HERE)] + [p for p in sys.path if p]))
    outs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", CHILD.format(here=str(HERE))], capture_output=True, text=True,
                           env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    assert outs[0]["builds"] == 1 and outs[0]["disk_hits"] == 0
    assert outs[1]["builds"] == 0 and outs[1]["disk_hits"] == 1, outs
    assert outs[1]["kernels"] == ["tile_copy"]


@needs_compiler
def test_launch_through_the_driver_stub(tmp_path, stub):
    import cuda_stub
    code = """
import cuda_stub, test_jit as T
from nvtma import jit
lib, last = cuda_stub.attach()
k = T.FakeKernel()
jit.launch(k, (T.Fake(), T.Fake(ptr=0x7F0000100000)), {}, {"grid": (4, 4)})
jit.launch(k, (T.Fake(), T.Fake(ptr=0x7F0000200000)), {}, {"grid": [4, 4]})
assert last.count == 2 and list(last.block) == [128, 1, 1] and list(last.grid) == [4, 4, 1]
assert len(k.builds) == 1
try:
    jit.launch(k, (T.Fake(), T.Fake()), {}, {"grid": (4,), "blocks": 1})
except jit.LaunchError as e:
    assert e.rule == "launch-config"
else:
    raise AssertionError
print("OK")
"""
    cuda_stub.run(stub, code, timeout=300, NVTMA_CACHE_DIR=str(tmp_path / "cache"))


# --------------------------------------------------------------------------- torch custom ops

def test_custom_op_registration_and_fake():
    torch = pytest.importorskip("torch")
    from nvtma import jit
    launched = []

    def copy(x: torch.Tensor, y: torch.Tensor) -> None:
        launched.append(1)

    op = jit.custom_op("nvtma_cpu_test::copy", copy, mutates_args=("y",))
    assert "Tensor(a1!) y" in str(op._opoverload._schema) or "Tensor(a!) y" in str(op._opoverload._schema)
    assert torch.ops.nvtma_cpu_test.copy.default is not None

    def f(x):
        y = torch.empty_like(x)
        op(x, y)
        return y + 1
    from torch.fx.experimental.proxy_tensor import make_fx
    g = make_fx(f, tracing_mode="fake")(torch.randn(8, 8))
    assert "nvtma_cpu_test.copy" in g.code and not launched, g.code


def test_custom_op_from_a_dsl_kernel_signature():
    torch = pytest.importorskip("torch")
    from nvtma import jit
    op = jit.custom_op("nvtma_cpu_test::dsl_copy", FakeKernel(), mutates_args="y", grid=(4, 4))
    schema = str(op._opoverload._schema)
    assert schema.startswith("nvtma_cpu_test::dsl_copy(Tensor x, Tensor(") and "-> ()" in schema, schema
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(x, y):
        op(x, y)
        return y
    g = make_fx(f, tracing_mode="fake")(torch.randn(4, 4), torch.randn(4, 4))
    assert "dsl_copy" in g.code


@needs_compiler
def test_a_kernel_of_the_dsl_library():
    """The real @dsl.kernel object (string annotations, DSL type classes,
    records that carry the launch configuration)."""
    from nvtma import jit
    from nvtma.kernels import copy as C
    k = C.tile_copy_kernel
    consts = dict(box=(64, 64), swizzle="none", l2_promotion="l2_128b", oob_fill="none", prefetch=False)
    types, key = jit.specialize(k, (Fake((128, 128)), Fake((128, 128))), consts)
    assert key[0][0] == ("tensor", "f16", (128, 128))
    rk, mod = jit.compiled(k, types, key, consts)
    assert rk.rec_block == (128, 1, 1) and rk.rec_cluster is None
    assert jit.compiled(k, types, key, consts)[0] is rk


FACTORY_CHILD = r"""
import json, re
from nvtma import dsl, jit

class Opaque:  # no identity across processes (the default repr)
    pass

def make(scale, extra=None):
    @dsl.kernel(block=(32,))
    def scaled(x: dsl.Tensor("f32", (32,))):
        i = dsl.thread_idx()
        x[i] = x[i] * scale if extra is None else x[i] * scale + 1.0
    return scaled

out = {}
for name, k in (("3", make(3.0)), ("5", make(5.0)), ("opaque", make(7.0, Opaque()))):
    types = [dsl.Tensor("f32", (32,))]
    _, mod = jit.compiled(k, types, (("tensor", "f32", (32,)),), {})
    out[name] = re.findall(r"0f[0-9A-F]{8}", mod.ptx)
out["stats"] = dict(jit.stats)
print(json.dumps(out))
"""


@needs_compiler
def test_factory_kernels_differing_in_a_closure_value_do_not_share_the_disk_cache(tmp_path):
    """make(3.0) and make(5.0) (same file, qualname, types) had one disk key: make(5.0) got make(3.0)'s cubin,
    in the same process and the next. A closure over an object with no identity across processes skips the
    disk cache."""
    env = dict(os.environ, NVTMA_CACHE="1", NVTMA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(HERE)] + [p for p in sys.path if p]))
    child = tmp_path / "factory.py"  # a file: a kernel typed into -c has no source to key the disk cache by
    child.write_text(FACTORY_CHILD)
    outs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, str(child)], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    for o in outs:
        assert "0f40400000" in o["3"] and "0f40A00000" not in o["3"]   # 3.0
        assert "0f40A00000" in o["5"] and "0f40400000" not in o["5"]   # 5.0
        assert "0f40E00000" in o["opaque"]                              # 7.0
    assert outs[0]["stats"]["builds"] == 3 and outs[0]["stats"]["disk_hits"] == 0
    assert outs[1]["stats"]["builds"] == 1 and outs[1]["stats"]["disk_hits"] == 2, outs


def test_closure_digest_reads_values_and_flags_opaque_ones():
    from nvtma.dsl.kernel import closure_digest

    def make(v):
        def f():
            return v
        return f

    assert closure_digest(make(3.0)) == closure_digest(make(3.0))
    assert closure_digest(make(3.0))[0] != closure_digest(make(5.0))[0]
    assert closure_digest(make((1, "a")))[1] and closure_digest(make(print))[1]
    assert not closure_digest(make(object()))[1]
    import numpy as np
    a, b = np.zeros(5000), np.zeros(5000)
    b[2500] = 1  # the same repr (its middle elided), other values
    assert closure_digest(make(a))[1] and closure_digest(make(a))[0] != closure_digest(make(b))[0]


@needs_compiler
def test_jit_keeps_a_tensors_strides_and_reads_dtype_aliases():
    """(audit) A JIT call dropped dsl.Tensor(strides=) (the launch then refused the strided view the
    annotation describes), and Tensor("u32") refused every tensor (its name compared with "ui32")."""
    from nvtma import dsl, jit
    from nvtma.runtime import args as A

    class Arr:  # a __cuda_array_interface__ array; specialize() does not launch
        def __init__(self, shape, strides, typestr="<f4"):
            self.__cuda_array_interface__ = {"shape": shape, "strides": strides, "typestr": typestr,
                                             "data": (0x7F0000000000, False), "version": 2}

    @dsl.kernel(block=(32,))
    def kview(y: dsl.Tensor("f32", (None, None, 128), strides=(128, None, 1))):
        y[0, 1, 2] = 1.0

    x = Arr((2, 4, 128), (128 * 4, 256 * 4, 4))  # the [K / 128, N, 128] view of a row-major [4, 256]
    types, key = jit.specialize(kview, (x,), {})
    assert types[0].strides == (128, None, 1) and key[0][0][3] == (128, None, 1)
    rec = kview.compile(param_types=types).kernels["kview"]["params"][0]
    A.check_memref(A.intake(x, "y"), rec, "y")

    @dsl.kernel(block=(32,))
    def ku(y: dsl.Tensor("u32", (None,))):
        y[0] = 1

    jit.specialize(ku, (Arr((4,), None, "<u4"),), {})
    with pytest.raises(LaunchError, match="element type f32"):
        jit.specialize(ku, (Arr((4,), None, "<f4"),), {})


@needs_compiler
def test_factory_kernels_differing_in_their_block_or_pdl_are_apart(tmp_path, monkeypatch):
    """(audit) make(256) got make(32)'s cubin from the disk cache (block and pdl were not in its key): a
    32-thread launch where 256 were meant. Kernel.build's memo kept C=-0.0 apart from C=0.0 neither."""
    monkeypatch.setenv("NVTMA_CACHE", "1")
    monkeypatch.setenv("NVTMA_CACHE_DIR", str(tmp_path / "cache"))
    from nvtma import dsl, jit

    def make(threads, pdl=False):
        @dsl.kernel(block=(threads,), pdl=pdl)
        def fill(x: dsl.Tensor("f32", (256,))):
            x[dsl.thread_idx()] = 1.0
        return fill

    types = [dsl.Tensor("f32", (256,))]
    key = ((("tensor", "f32", (256,)),), ())
    blocks = [jit.compiled(make(t, p), types, key, {})[0].rec_block for t, p in ((32, False), (256, False))]
    assert blocks == [(32, 1, 1), (256, 1, 1)]
    a, b = make(32), make(32, pdl=True)
    assert a.specialize(types).key != b.specialize(types).key != make(256).specialize(types).key

    @dsl.kernel(block=(32,))
    def const(y: dsl.Tensor("f32", (1,)), *, C):
        y[0] = C

    assert "-0.0" in str(const.build(C=-0.0).ir) and "-0.0" not in str(const.build(C=0.0).ir)
