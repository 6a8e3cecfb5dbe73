"""GPU tests of the runtime: streams, CUDA graphs, DLPack, devices, launch
configuration from the records, autotuning across processes, torch.compile.

Run on the H200 (skipped without a GPU):
    python -m pytest -m gpu test/python/test_gpu_runtime.py -rA
"""

import ctypes
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from conftest import build

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

HERE = Path(__file__).resolve().parent


SHAPE = (128, 128)


def copy_kernel(shape=SHAPE):
    """THE one helper that picks the kernel these tests launch: y = x for
    f16 tensors of SHAPE. Returns (launch(x, y, **kw), module, kernel name,
    launch configuration). (Points at nvtma.kernels.tile_copy today, a
    kernel test/python/build_gpu_artifacts.py already builds; the DSL kernel
    library replaces it.)"""
    from nvtma import kernels as K
    spec = K.tile_copy(shape, "f16", (64, 64), swizzle="none")
    mod = build(spec)
    k = mod.kernel(spec.name)
    cfg = dict(grid=spec.grid, block=spec.block)

    def launch(x, y, **kw):
        k(x, y, **{**cfg, **kw})
    return launch, mod, spec.name, cfg


def rand(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, generator=g, device="cuda", dtype=torch.float32).half()


# --------------------------------------------------------------------------- streams

def test_side_stream_ordering_20_trials():
    """Long op on s, write x on s, launch under torch.cuda.stream(s), check y
    on s: the launch must queue on s (PyTorch's current stream), after the write."""
    shape = SHAPE
    copy, *_ = copy_kernel(shape)
    s = torch.cuda.Stream()
    x = torch.zeros(shape, dtype=torch.float16, device="cuda")
    y = torch.zeros_like(x)
    torch.cuda.synchronize()
    wrong = 0
    for trial in range(20):
        with torch.cuda.stream(s):
            torch.cuda._sleep(2_000_000)   # ~1 ms of spinning on s
            x.fill_(trial + 1)
            copy(x, y)
            ok = bool((y == trial + 1).all())
        wrong += not ok
    s.synchronize()
    assert wrong == 0, f"{wrong} of 20 launches read stale input"


def test_explicit_stream_kinds():
    shape = SHAPE
    copy, *_ = copy_kernel(shape)
    s = torch.cuda.Stream()
    streams = [s, s.cuda_stream]
    try:
        from cuda.bindings import driver as d
        streams.append(d.CUstream(s.cuda_stream))
    except ImportError:
        pass

    class CoreLike:  # the __cuda_stream__ protocol (cuda.core streams)
        def __cuda_stream__(self):
            return (0, s.cuda_stream)
    streams.append(CoreLike())
    x = torch.zeros(shape, dtype=torch.float16, device="cuda")
    y = torch.zeros_like(x)
    torch.cuda.synchronize()
    for i, st in enumerate(streams):
        with torch.cuda.stream(s):
            torch.cuda._sleep(2_000_000)
            x.fill_(i + 1)          # written on s, late
        copy(x, y, stream=st)       # the current stream is the default one: st must send the launch to s
        s.synchronize()
        assert bool((y == i + 1).all()), f"stream kind {type(st).__name__} read stale input"


def test_cuda_graph_capture_and_replay():
    shape = SHAPE
    copy, *_ = copy_kernel(shape)
    x = rand(shape, 1)
    y = torch.zeros_like(x)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up off the capture (loads the module)
        copy(x, y)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with torch.cuda.graph(g):
            copy(x, y)
    assert not [m for m in w if "empty" in str(m.message).lower()], [str(m.message) for m in w]
    y.zero_()
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(x, y), "replay did not copy"
    x.copy_(rand(shape, 2))   # refill the captured input
    y.zero_()
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(x, y), "replay after refilling the input"


# --------------------------------------------------------------------------- tensors in

class DLPackOnly:
    """A non-torch producer: only __dlpack__ / __dlpack_device__ (delegating
    to a torch tensor's)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kw):
        return self.t.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_dlpack_producers():
    shape = SHAPE
    copy, *_ = copy_kernel(shape)
    x = rand(shape, 3)
    y = torch.zeros_like(x)
    copy(DLPackOnly(x), DLPackOnly(y))
    torch.cuda.synchronize()
    assert torch.equal(x, y)
    try:
        import cupy
    except ImportError:
        cupy = None
    if cupy is not None:
        cx = cupy.asarray(rand(shape, 4))
        cy = cupy.zeros(shape, dtype=cupy.float16)
        copy(cx, cy)                      # __cuda_array_interface__ (and its stream)
        cy.fill(0)
        copy(DLPackOnly(cx), DLPackOnly(cy))   # cupy through DLPack alone
        torch.cuda.synchronize()
        assert bool((cx == cy).all())


def test_hand_made_dlpack_capsule():
    """A __dlpack__ that builds its own legacy capsule over a torch tensor's memory."""
    from nvtma.runtime import args as A
    shape = SHAPE
    copy, *_ = copy_kernel(shape)
    x = rand(shape, 5)
    y = torch.zeros_like(x)

    class Hand:
        def __init__(self, t):
            self.t = t
            self.shape = (ctypes.c_int64 * 2)(*t.shape)
            self.m = A._DLManagedTensor()
            d = self.m.dl_tensor
            d.data = t.data_ptr()
            d.device.device_type, d.device.device_id = 2, t.device.index
            d.ndim = 2
            d.dtype.code, d.dtype.bits, d.dtype.lanes = 2, 16, 1
            d.shape = self.shape

        def __dlpack_device__(self):
            return (2, self.t.device.index)

        def __dlpack__(self, stream=None, max_version=None):
            mk = ctypes.pythonapi.PyCapsule_New
            mk.restype = ctypes.py_object
            mk.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
            return mk(ctypes.addressof(self.m), b"dltensor", None)
    copy(Hand(x), Hand(y))
    torch.cuda.synchronize()
    assert torch.equal(x, y)


def test_device_mismatch():
    from nvtma.runtime import LaunchError
    shape = SHAPE
    copy, *_ = copy_kernel(shape)
    x = rand(shape, 6)

    class OnDevice1:  # claims cuda:1 (checked before its memory is read)
        def __dlpack_device__(self):
            return (2, 1)

        def __dlpack__(self, **kw):
            raise AssertionError("the device check comes first")
    with pytest.raises(LaunchError) as e:
        copy(x, OnDevice1())
    assert e.value.rule == "device"
    if torch.cuda.device_count() >= 2:
        y1 = torch.zeros(shape, dtype=torch.float16, device="cuda:1")
        with pytest.raises(LaunchError, match="cuda:1") as e:
            copy(x, y1)
        assert e.value.rule == "device"
        x1 = x.to("cuda:1")
        copy(x1, y1)   # cuda:1 while cuda:0 is current
        torch.cuda.synchronize(1)
        assert torch.equal(x1, y1)


# --------------------------------------------------------------------------- launch configuration

def test_aot_launch_without_block_or_cluster(tmp_path):
    """Records carrying "launch" (as the C++ record writer adds them): no
    block/cluster/smem at the call; a contradicting block is an error."""
    from nvtma.runtime import LaunchError, load
    from nvtma.runtime.artifacts import CompiledArtifacts
    _, mod, name, cfg = copy_kernel()
    recs = {"kernels": {n: dict(r) for n, r in mod.records["kernels"].items()}}
    recs["kernels"][name].setdefault("launch", {"block": list(cfg["block"]) + [1] * (3 - len(cfg["block"])),
                                                "cluster": None, "smem": 0})
    art = CompiledArtifacts(ir=None, ptx=mod.ptx, cubin=mod.cubin, records=recs, arch=mod.arch)
    art.save(tmp_path / "aot")
    k = load(tmp_path / "aot").kernel(name)
    x = rand(SHAPE, 7)
    y = torch.zeros_like(x)
    k(x, y, grid=list(cfg["grid"]))
    torch.cuda.synchronize()
    assert torch.equal(x, y)
    with pytest.raises(LaunchError) as e:
        k(x, y, grid=cfg["grid"], block=(32,))
    assert e.value.rule == "launch-config"
    with pytest.raises(LaunchError):
        k(x, y, grid="64")


def test_changing_arguments_alternate_outputs():
    """The packing fast path (address-only rewrites) gives the right output
    for every launch when the output alternates."""
    shape = SHAPE
    copy, *_ = copy_kernel(shape)
    x = rand(shape, 8)
    ys = [torch.zeros_like(x), torch.zeros_like(x)]
    for i in range(6):
        x.add_(1)
        copy(x, ys[i % 2])
        torch.cuda.synchronize()
        assert torch.equal(x, ys[i % 2]), i


# --------------------------------------------------------------------------- autotune, torch.compile

AUTOTUNE_CHILD = """
import json, sys, torch
sys.path.insert(0, {here!r})
import test_gpu_runtime as T
from nvtma import autotune
shape = T.PIPELINED
x = T.rand(shape, 9); y = torch.zeros_like(x)
tuner = T.copy_autotuner()
tuner(x, y)
torch.cuda.synchronize()
print(json.dumps({{"trials": tuner.trials, "best": tuner.best_config(x, y), "ok": bool(torch.equal(x, y))}}))
"""


PIPELINED = (1024, 2048)


def copy_autotuner():
    """An autotuner over real build-time variants of the pipelined copy (its
    L2 cache hints; the GPU-test artifacts hold both), grid from the SM
    count. The DSL library's copy will tune box x stages x l2_promotion here."""
    from nvtma import autotune
    from nvtma import kernels as K

    def build_cfg(cfg):
        spec = K.pipelined_copy(*PIPELINED, "f16", (64, 128), 4, load_hint=cfg["load_hint"],
                                store_hint=cfg["store_hint"])
        k = build(spec).kernel(spec.name)
        sms = torch.cuda.get_device_properties(0).multi_processor_count

        def run(x, y, **kw):
            k(x, y, grid=(sms,), block=spec.block, **kw)
        return run
    return autotune.Autotuner(build_cfg, configs=[{"load_hint": None, "store_hint": None},
                                                  {"load_hint": "evict_first", "store_hint": "evict_last"}],
                              key=lambda x, y: [list(x.shape), str(x.dtype)], name="gpu-test-pipelined-copy",
                              rounds=3)


def test_autotune_winner_reused_by_a_second_process(tmp_path):
    env = dict(os.environ, NVTMA_AUTOTUNE_DIR=str(tmp_path / "tune"))
    code = AUTOTUNE_CHILD.format(here=str(HERE))
    outs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        import json
        outs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    assert outs[0]["trials"] > 0 and outs[0]["ok"]
    assert outs[1]["trials"] == 0 and outs[1]["ok"], outs
    assert outs[0]["best"] == outs[1]["best"]


def test_autotune_under_graph_capture_runs_a_known_winner(tmp_path, monkeypatch):
    """Under torch.cuda.graph a key without a winner is a LaunchError (timing there would end the capture with
    CUDA's error); after one call outside it the winner is captured, untimed, and the graph copies."""
    from nvtma.runtime import LaunchError
    monkeypatch.setenv("NVTMA_AUTOTUNE_DIR", str(tmp_path))
    tuner = copy_autotuner()
    x = rand(PIPELINED, 11)
    y = torch.zeros_like(x)
    with pytest.raises(LaunchError, match="no winner yet") as e:
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            tuner(x, y)
    assert e.value.rule == "autotune" and tuner.trials == 0
    tuner(x, y)  # the warm-up call: every config timed
    torch.cuda.synchronize()
    trials = tuner.trials
    assert trials > 0 and torch.equal(x, y)
    y.zero_()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tuner(x, y)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(x, y) and tuner.trials == trials


def test_torch_compile_custom_op():
    from nvtma import jit
    shape = SHAPE
    copy, *_ = copy_kernel(shape)
    op = jit.custom_op("nvtma_test::copy_gpu", lambda x, y: copy(x, y), mutates_args=("y",))

    def f(x):
        y = torch.empty_like(x)
        op(x, y)
        return y * 2
    fc = torch.compile(f, fullgraph=True)
    x = rand(shape, 10)
    assert torch.equal(fc(x), x * 2)
