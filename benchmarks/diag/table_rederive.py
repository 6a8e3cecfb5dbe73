#!/usr/bin/env python3
"""Analysis (no GPU): gemm.MEASURED re-derived from full gemm_bench runs of the same kernels, by the rule the table
was built with: a candidate replaces an entry where it is faster than the entry at every M of the entry's tile
(the problems whose chosen config has that BM) in every run; of those, the one whose worst ratio is least.
Prints each entry that would change, with its worst and median ratio, and how many entries were compared.
    python3 benchmarks/diag/table_rederive.py RUN.jsonl [RUN.jsonl ...]
(the forty-seventh session: results/h200-2026-12-04-s36-gemm-final-1..3 and h200-2026-12-05-s44-gemm-1..3)
"""
import collections
import json
import statistics
import sys


def load(path, gemm):
    """{(N, K, M, mode): ({config: us}, the config Gemm() picked)} of one run."""
    out = {}
    for line in open(path):
        r = json.loads(line)
        if r.get("bench") != "gemm" or "candidates_us" not in r or not r.get("now_config"):
            continue
        times = {tuple(gemm.Config(*c)): us for c, us in r["candidates_us"] if us is not None}
        out[(r["N"], r["K"], r["M"], r["mode"])] = (times, tuple(gemm.Config(*r["now_config"])))
    return out


def main(paths):
    from nvtma.kernels import gemm
    runs = [load(p, gemm) for p in paths]
    tiles = collections.defaultdict(list)  # MEASURED's key -> the problems of its tile
    for (N, K, M, mode), (_, picked) in runs[0].items():
        if M <= gemm.MAX_ROWS:
            tiles[(N, K, picked[0], mode)].append((N, K, M, mode))
    compared = 0
    for key, problems in sorted(tiles.items()):
        entry = gemm.MEASURED.get(key)
        if entry is None or any(p not in run for run in runs for p in problems):
            continue
        compared += 1
        table = tuple(gemm.Config(key[2], *entry))
        shared = set.intersection(*(set(run[p][0]) for run in runs for p in problems))
        best = None
        for cand in shared - {table}:
            ratios = [run[p][0][cand] / run[p][0][table] for run in runs for p in problems if table in run[p][0]]
            if len(ratios) == len(runs) * len(problems) and max(ratios) < 1 and (best is None or max(ratios) < best[0]):
                best = (max(ratios), statistics.median(ratios), cand)
        if best:
            print(f"{key} M={[p[2] for p in problems]}: {gemm.Config(*table).short} -> {gemm.Config(*best[2]).short}"
                  f" (worst {best[0]:.3f}, median {best[1]:.3f})")
    print(f"{compared} entries compared over {len(runs)} runs")


if __name__ == "__main__":
    main(sys.argv[1:])
