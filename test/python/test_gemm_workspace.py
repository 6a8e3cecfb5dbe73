"""Gemm's split-K workspaces (Gemm._workspace), with a stand-in for torch's
CUDA streams: one pair per device, shape and stream, made once, allocated
and zeroed on the Gemm's own stream by a thread of their own (torch.compile's
CUDA graph trees put every allocation of the warm-up's thread in the graph's
memory pool and refuse tensors there that outlive the call: the H100 runs of
test_gemm_as_a_torch_op_under_torch_compile failed so, the second with the
allocation on the Gemm's stream but the call's thread). Outside a capture
the call's stream waits for the zeroing; under one (its own pair, not an
eager stream's) the thread does, with the capture mode relaxed."""

import contextlib
import threading
import types

import pytest

import dsl_testing  # noqa: F401 (puts the build on the path)
from nvtma.kernels import gemm


class _Stream:
    def __init__(self, name, log):
        self.name, self.log = name, log

    def wait_stream(self, other):
        self.log.append(("wait", self.name, other.name))

    def synchronize(self):
        self.log.append(("synchronize", self.name))


class _Tensor:
    def __init__(self, shape, stream):
        self.shape, self.stream, self.recorded = shape, stream, []
        self.thread = threading.get_ident()

    def record_stream(self, s):
        self.recorded.append(s.name)


def _torch():
    log = []
    cuda = types.SimpleNamespace(capturing=False, streams=0)
    cuda.current = _Stream("call", log)
    cuda.is_current_stream_capturing = lambda: cuda.capturing
    cuda.current_stream = lambda device: cuda.current

    def new_stream(device):
        cuda.streams += 1
        return _Stream(f"side{cuda.streams}", log)

    @contextlib.contextmanager
    def stream(s):
        prev, cuda.current = cuda.current, s
        try:
            yield
        finally:
            cuda.current = prev
    cuda.Stream, cuda.stream = new_stream, stream
    torch = types.SimpleNamespace(cuda=cuda, float32="f32", int32="i32", log=log)
    torch.zeros = lambda *shape, device, dtype: _Tensor(shape, cuda.current.name)
    return torch


SPEC = types.SimpleNamespace(consts={"BN": 64}, info={"BM": 16, "ms": 1, "swap": True})


def test_a_streams_workspace_is_made_on_the_gemms_own_stream_once():
    torch, g = _torch(), gemm.Gemm()
    ws, counters = g._workspace(torch, "cuda:0", SPEC, 256, stream=0x100)
    assert ws.shape == (4, 64 * 16) and counters.shape == (4,)
    assert ws.stream == counters.stream == "side1"  # not the call's stream (a graph-trees warm-up's pool)
    assert ws.thread == counters.thread != threading.get_ident()  # nor its thread (the warm-up's pool too)
    assert torch.log == [("wait", "call", "side1")]  # the call's kernel runs after the zeroing
    assert ws.recorded == counters.recorded == ["call"]
    assert g._workspace(torch, "cuda:0", SPEC, 256, stream=0x100) == (ws, counters)  # made once
    other = g._workspace(torch, "cuda:0", SPEC, 256, stream=0x200)  # another stream: its own pair
    assert other[0] is not ws and other[0].stream == "side1" and torch.cuda.streams == 1
    g._workspace(torch, "cuda:1", SPEC, 256, stream=0x300)
    assert torch.cuda.streams == 2  # a stream of the Gemm's per device


def test_under_a_capture_the_workspace_is_its_own_and_outside_the_captures_pool(monkeypatch):
    torch, g = _torch(), gemm.Gemm()
    relaxed = []

    @contextlib.contextmanager
    def relax():
        relaxed.append("in")
        yield
        relaxed.append("out")
    monkeypatch.setattr(gemm, "_relaxed_capture", relax)
    eager = g._workspace(torch, "cuda:0", SPEC, 256, stream=0x100)
    assert relaxed == [] and torch.log == [("wait", "call", "side1")]
    torch.cuda.capturing = True
    ws, counters = g._workspace(torch, "cuda:0", SPEC, 256, stream=(0x100, "capture"))
    assert ws is not eager[0]  # a replay on another stream beside eager calls on 0x100 would mix partials
    assert ws.stream == counters.stream == "side1"  # not in the capture's pool
    assert ws.thread != threading.get_ident()
    assert torch.log[1:] == [("synchronize", "side1")]  # the thread waits: the capture cannot
    assert relaxed == ["in", "out"] and ws.recorded == counters.recorded == []
    assert g._workspace(torch, "cuda:0", SPEC, 256, stream=(0x100, "capture")) == (ws, counters)
    assert relaxed == ["in", "out"] and torch.cuda.streams == 1


def test_an_error_making_the_workspace_is_raised_in_the_calls_thread():
    torch, g = _torch(), gemm.Gemm()

    def oom(*shape, device, dtype):
        raise RuntimeError("CUDA out of memory")
    torch.zeros = oom
    with pytest.raises(RuntimeError, match="out of memory"):
        g._workspace(torch, "cuda:0", SPEC, 256, stream=0x100)
    assert not g._ws and not torch.log
