"""gemm.MEASURED's maker (benchmarks/gemm_bench.py `table`): the Ms that
share a tile of BM rows share an entry, so it takes the config whose worst
time against each M's fastest is least, not the fastest at one M."""

import ast
import json
from pathlib import Path

import pytest
from helpers import load_file

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "gemm_bench.py"


@pytest.fixture(scope="module")
def gemm_bench():
    return load_file("gemm_bench", BENCH)


def _line(M, config, cands, mode="row", correct=True):
    return {"bench": "gemm", "N": 7168, "K": 2048, "M": M, "mode": mode, "config": config,
            "us": min(us for _, us in cands) if cands else 1.0, "correct": correct,
            **({"candidates_us": cands} if cands else {})}


def _table(gemm_bench, tmp_path, capsys, *runs):
    paths = []
    for i, lines in enumerate(runs):
        p = tmp_path / f"run{i}.jsonl"
        p.write_text("".join(json.dumps(line) + "\n" for line in lines))
        paths.append(p)
    gemm_bench.table(*paths)
    out = capsys.readouterr().out
    return ast.literal_eval(out.split("=", 1)[1])


A, B, C = [8, 64, 1, 1, 1, 11], [8, 64, 1, 1, 1, 16], [8, 128, 2, 1, 1, 12]


def test_the_ms_of_a_tile_share_the_least_worst_config(gemm_bench, tmp_path, capsys):
    # A is fastest at M = 8 but 20% off at M = 1; C is 5% off at both; B 10% off at M = 8
    run = [_line(1, B, [[A, 6.0], [B, 5.0], [C, 5.25]]),
           _line(8, A, [[A, 5.0], [B, 5.5], [C, 5.25]])]
    assert _table(gemm_bench, tmp_path, capsys, run) == {(7168, 2048, 8, "row"): tuple(C[1:])}


def test_times_are_averaged_over_runs(gemm_bench, tmp_path, capsys):
    one = [_line(8, A, [[A, 5.0], [B, 5.2]])]
    two = [_line(8, B, [[A, 5.6], [B, 5.1]])]   # A: 5.3 on average, B: 5.15
    assert _table(gemm_bench, tmp_path, capsys, one, two) == {(7168, 2048, 8, "row"): tuple(B[1:])}


def test_older_lines_give_the_fastest_at_bm_itself(gemm_bench, tmp_path, capsys):
    run = [_line(1, B, None) | {"us": 4.0}, _line(8, A, None) | {"us": 5.0},
           _line(8, C, [[C, 3.0]], correct=False)]   # a wrong y is never a pick
    assert _table(gemm_bench, tmp_path, capsys, run) == {(7168, 2048, 8, "row"): tuple(A[1:])}


def test_an_m_split_config_keys_the_problem_tile(gemm_bench, tmp_path, capsys):
    split = [64, 128, 1, 1, 1, None, 2]   # two CTAs of 64 rows: the problem's tile is 128
    run = [_line(128, split, [[split, 7.0], [[128, 128, 1, 1], 8.0]])]
    assert _table(gemm_bench, tmp_path, capsys, run) == {(7168, 2048, 128, "row"): tuple(split[1:])}


def test_stages_of_several_k_steps_are_kept_in_the_table(gemm_bench, tmp_path, capsys):
    """A config of kc K steps a stage (Config's ninth value) is an entry of its
    own, written whole, and the README's tables name it "kc N"."""
    K4 = [8, 64, 1, 1, 1, 4, 1, False, 4]
    got = _table(gemm_bench, tmp_path, capsys, [_line(1, K4, [[K4, 4.4], [B, 4.9]]),
                                                _line(8, K4, [[K4, 4.5], [B, 4.8]])])
    assert got == {(7168, 2048, 8, "row"): (64, 1, 1, 1, 4, 1, False, 4)}
    assert gemm_bench.config_text(K4) == "8/64/1/1/1/4 kc 4"
    assert gemm_bench.config_text([64, 64, 2, 0, 1, None, 1, True]) == "64/64/2/sK kwg"
    assert gemm_bench.config_text([128, 64, 1, 1, 1, None, 2]) == "128/64/1/1/1/-/2"


def test_every_table_entry_plans_at_every_m_of_its_tile():
    """gemm.MEASURED's configs, keyed by a tile of BM rows, plan (gemm_spec
    accepts them) at every M that tile holds: x as the wgmmas' A takes x's
    tile M rounded up to 8 rows, whose pad rows may leave room for fewer
    stages than the table's tile (4096 x 7168, M = 41-48: 8 of 9)."""
    from nvtma.kernels import gemm
    g = gemm.Gemm()
    lowest = {8: 1, 16: 9, 32: 17, 64: 33, 128: 65, 256: 129}
    for (N, K, BM, mode), _ in gemm.MEASURED.items():
        wd, scale = ("bf16", None) if mode == "bf16" else (gemm.F8, mode)
        for M in range(lowest[BM], BM + 1):
            spec = g.plan(M, N, K, wd, scale)[0]
            assert spec.info["BM"] * spec.info["ms"] >= M


def _point(M, mode, tbps, base):
    return {"bench": "gemm", "N": 4096, "K": 7168, "M": M, "mode": mode, "config": [8, 64, 1, 1], "us": 1.0,
            "now_us": 4096 * 7168 / tbps / 1e6, "W_TBps": tbps, "base_W_TBps": base, "speedup": tbps / base,
            "correct": True}


@pytest.mark.parametrize("machine, judged", [("NVIDIA H200", True), ("NVIDIA H100 80GB HBM3", False), (None, True)])
def test_markdown_marks_the_h200s_targets_only_on_an_h200(gemm_bench, tmp_path, capsys, machine, judged):
    """#13's targets (x the baseline, capped at the H200's DRAM stream) are
    marked and counted for a run on an H200 (or lines naming no machine),
    not for one on another GPU, where the caps mean nothing."""
    head = [{"bench": "gemm", "machine": machine, "sms": 132}] if machine else []
    lines = head + [_point(1, "tensor", 3.0, 1.9), _point(8, "tensor", 2.0, 1.9)]
    p = tmp_path / "run.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    gemm_bench.markdown(p)
    out = capsys.readouterr().out
    assert ("3.00 / 1.90 (1.58×) ✓" in out) == judged and "2.00 / 1.90 (1.05×) |" in out
    if judged:
        assert "targets met (✓): 1 of 2; by the configs Gemm() picks: 1 of 2" in out
    else:
        assert "targets not marked" in out and machine in out and "✓" not in out.split("targets")[0]
