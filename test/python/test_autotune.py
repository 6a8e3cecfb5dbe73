"""nvtma.autotune without a GPU: key derivation, selection with an injected
timer, the winner file, reuse without timing, refusal of bad files."""

import json
import os

import pytest

import nvtma
from nvtma.autotune import Autotuner
from nvtma.runtime import LaunchError


class Fake:
    def __init__(self, shape=(256, 256), typestr="<f2", ptr=0x7F0000000000):
        self.__cuda_array_interface__ = dict(data=(ptr, False), shape=tuple(shape), typestr=typestr,
                                             strides=None, version=3)


CONFIGS = [dict(box=[64, 128], stages=4, l2_promotion="l2_256b", swizzle="swizzle_128b"),
           dict(box=[128, 64], stages=6, l2_promotion="l2_128b", swizzle="swizzle_128b"),
           dict(box=[32, 256], stages=4, l2_promotion="none", swizzle="swizzle_64b")]
SPEED = {64: 3.0, 128: 1.0, 32: 2.0}   # seconds by box rows: config 1 wins


def make(tmp_path, launched=None, **kw):
    launched = launched if launched is not None else []

    def build(cfg):
        def run(x, y, **launch):
            launched.append((cfg["box"][0], launch.get("grid")))
        return run

    def timer(run):
        before = len(launched)
        run()
        return SPEED[launched[before][0]]
    kw.setdefault("key", [0])
    return Autotuner(build, CONFIGS, timer=timer, name="copy", directory=tmp_path / "tune", **kw), launched


def test_selects_the_fastest_and_reuses_it_from_disk(tmp_path, monkeypatch):
    monkeypatch.setattr("nvtma.autotune._device_name", lambda args: "NVIDIA H200")
    t, launched = make(tmp_path)
    t(Fake(), Fake(), grid=(4,))
    assert t.trials == 3 and t.best_config(Fake(), Fake()) == CONFIGS[1]
    assert launched[-1][0] == 128   # the call itself ran the winner
    (f,) = (tmp_path / "tune").iterdir()
    saved = json.loads(f.read_text())
    assert saved["device"] == "NVIDIA H200" and saved["config"] == CONFIGS[1]
    assert saved["key"] == [["f16", [256, 256], [256, 1], 0]]  # dtype, shape, strides, address % 16
    assert oct(f.stat().st_mode & 0o777) == "0o600"
    # "another process": a fresh tuner, same identity -> no timing
    t2, launched2 = make(tmp_path)
    t2(Fake(), Fake(), grid=(4,))
    assert t2.trials == 0 and launched2 == [(128, (4,))]
    # another key (shape) tunes again; another device too
    t2(Fake((512, 256)), Fake((512, 256)), grid=(4,))
    assert t2.trials == 3
    monkeypatch.setattr("nvtma.autotune._device_name", lambda args: "NVIDIA B200")
    t3, _ = make(tmp_path)
    t3(Fake(), Fake(), grid=(4,))
    assert t3.trials == 3


def test_bad_or_foreign_winner_files_retune(tmp_path, monkeypatch):
    monkeypatch.setattr("nvtma.autotune._device_name", lambda args: "dev")
    t, _ = make(tmp_path)
    t(Fake(), Fake(), grid=(1,))
    (f,) = (tmp_path / "tune").iterdir()
    for content in ("[]", "null", "{", json.dumps({"config": {"box": [1, 1]}}), "[" * 10000):
        f.write_text(content)
        t2, _ = make(tmp_path)
        t2(Fake(), Fake(), grid=(1,))
        assert t2.trials == 3, content
    os.chmod(f, 0o666)   # writable by others: not trusted
    t3, _ = make(tmp_path)
    t3(Fake(), Fake(), grid=(1,))
    assert t3.trials == 3


def test_key_derivation(tmp_path):
    t, _ = make(tmp_path, key=[0, 2])
    assert t.key_of((Fake(typestr="<f4"), Fake(), 7)) == [["f32", [256, 256], [256, 1], 0], 7]
    t, _ = make(tmp_path, key=lambda x, y: [x.__cuda_array_interface__["shape"][1]])
    assert t.key_of((Fake(), Fake())) == [256]
    t, _ = make(tmp_path, key=["x"])
    with pytest.raises(LaunchError, match="names no argument"):
        t.key_of((Fake(), Fake()))


def test_grid_may_depend_on_the_config(tmp_path, monkeypatch):
    monkeypatch.setattr("nvtma.autotune._device_name", lambda args: "dev")
    t, launched = make(tmp_path)
    t(Fake(), Fake(), grid=lambda x, y, **cfg: (256 // cfg["box"][0],))
    assert launched[-1] == (128, (2,))


def test_failing_configs_lose_and_all_failing_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr("nvtma.autotune._device_name", lambda args: "dev")

    def build(cfg):
        def run(*a, **k):
            if cfg["stages"] == 4:
                raise LaunchError("too much smem", rule="launch-config")
        return run
    t = Autotuner(build, CONFIGS, key=[0], timer=lambda run: run() or 1.0, directory=tmp_path / "t")
    t(Fake())
    assert t.best_config(Fake()) == CONFIGS[1]
    t = Autotuner(lambda cfg: build(dict(cfg, stages=4)), CONFIGS, key=[0], timer=lambda run: run() or 1.0,
                  directory=tmp_path / "u")
    with pytest.raises(LaunchError, match="no config"):
        t(Fake())


def test_decorator_over_a_dsl_kernel_object(tmp_path, monkeypatch):
    """nvtma.autotune(...) decorates a DSL kernel; key names come from its signature."""
    import test_jit as J
    monkeypatch.setattr("nvtma.autotune._device_name", lambda args: "dev")
    tuned = nvtma.autotune(configs=[{"BOX": [64, 64]}, {"BOX": [32, 32]}], key=["x"], timer=lambda run: 1.0,
                           directory=tmp_path / "t")(J.FakeKernel())
    assert isinstance(tuned, Autotuner) and tuned.argnames == ["x", "y"]
    assert tuned.key_of((Fake(), Fake())) == [["f16", [256, 256], [256, 1], 0]]
    from nvtma import autotune as mod
    assert callable(mod) and mod.autotune is not None


def test_factories_of_one_name_in_two_modules_do_not_share_winners(tmp_path, monkeypatch):
    """(audit) identity() hashed a launcher factory's qualified name and the configs: mod_b.make read mod_a.make's
    winner from disk, untimed. A factory with no identity across processes keeps winners in memory."""
    import types as pytypes
    monkeypatch.setattr("nvtma.autotune._device_name", lambda args: "dev")
    mods = []
    for name in ("mod_a", "mod_b"):
        m = pytypes.ModuleType(name)
        exec("def make(cfg):\n    return lambda *a, **k: None\n", m.__dict__)
        mods.append(m)
    a, b = (Autotuner(m.make, CONFIGS, key=[0], timer=lambda run: run() or 1.0, directory=tmp_path / "t")
            for m in mods)
    assert a.identity() != b.identity()

    def opaque(cfg, _o=object()):
        return lambda *x, **k: None
    t = Autotuner(opaque, CONFIGS, key=[0], timer=lambda run: run() or 1.0, directory=tmp_path / "t2")
    t(Fake(), Fake())
    assert t.identity() is None and not list((tmp_path / "t2").glob("*.json"))


def test_restore_puts_in_place_arguments_back_before_each_trial_and_the_call():
    """(audit) Tuning ran an in-place kernel (y += x) on the caller's y once per trial: the first call's y
    held 13 x's where it should hold one."""
    import numpy as np

    def build(cfg):
        def run(x, y, **launch):
            y += x
        return run
    x, y = np.ones(4), np.zeros(4)
    t = Autotuner(build, CONFIGS[:2], key=[], timer=lambda run: [run() for _ in range(5)] and 1.0, restore=[1],
                  directory=None)
    t(x, y)
    assert y.tolist() == [1.0] * 4


def test_under_graph_capture_a_known_winner_runs_and_nothing_is_timed(tmp_path, monkeypatch):
    """Timing inside a CUDA graph capture (events, synchronization, the L2 flush) would end the capture with
    CUDA's error: under one, a key without a winner is a LaunchError asking for a call outside it first; once
    one is timed (or stored) it runs, untimed."""
    monkeypatch.setattr("nvtma.autotune._device_name", lambda args: "NVIDIA H200")
    monkeypatch.setattr("nvtma.autotune._capturing", lambda: True)
    t, launched = make(tmp_path)
    assert t.known_config(Fake(), Fake()) is None
    with pytest.raises(LaunchError, match="no winner yet for key .* a CUDA graph is being captured") as e:
        t(Fake(), Fake(), grid=(4,))
    assert e.value.rule == "autotune" and launched == [] and t.trials == 0
    monkeypatch.setattr("nvtma.autotune._capturing", lambda: False)
    t(Fake(), Fake(), grid=(4,))  # the warm-up call: timed
    monkeypatch.setattr("nvtma.autotune._capturing", lambda: True)
    del launched[:]
    t(Fake(), Fake(), grid=(4,))
    assert launched == [(128, (4,))] and t.trials == 3 and t.known_config(Fake(), Fake()) == CONFIGS[1]
    t2, launched2 = make(tmp_path)  # another process, under capture: the stored winner
    t2(Fake(), Fake(), grid=(4,))
    assert launched2 == [(128, (4,))] and t2.trials == 0
